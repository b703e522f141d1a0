"""DeepSeek Sparse Attention's indexer section of a config.json (DeepSeek-V3.2, GLM-5), with
IndexCache (GLM-5.2/5.3, https://arxiv.org/abs/2603.12201): the main-stack layers that build no
indexer, hence keep no indexer cache, and reuse the top-k of an earlier layer.

Read as vLLM 0.32 builds the layers (models/deepseek_v32/attention.py:166-190, the CUDA and ROCm
path; model_executor/models/deepseek_v2.py:1141-1168, the generic one, the same rule):

- ``index_topk_pattern`` absent or null: layer ``i`` skips when
  ``max(i - index_skip_topk_offset + 1, 0) % index_topk_freq != 0``, with
  ``index_topk_freq`` 1 and ``index_skip_topk_offset`` **2** when absent (getattr defaults);
- else layer ``i < len(pattern)`` skips when ``pattern[i] == "S"``; later layers keep theirs;
- MTP layers (``i >= num_hidden_layers``) always build theirs (kvplan.kv.cache gives every draft
  layer its indexer).

``indexer_types`` (NVIDIA's GLM-5.x NVFP4 exports: "full" or "shared" per layer) is read by no
vLLM 0.32 DSA code; from 0.34 it replaces the rule above (model_executor/models/utils.py
compute_skip_topk_layers), so a list that disagrees with the rule is refused rather than one of
the two guessed.
"""

from __future__ import annotations

from typing import Any

from kvplan._util.errors import SpecError, UnmodelledError
from kvplan._util.validate import checked_int_list
from kvplan.model.attention import Attention, LatentAttention
from kvplan.model.spec import IndexerSpec
from kvplan.sources.hf_reader import ConfigReader


def _int(data: dict[str, Any], path: str, key: str, default: int, minimum: int) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SpecError(path, key, f"expected an integer >= {minimum}, got {value!r}")
    return value


def skipped_indexer_layers(data: dict[str, Any], path: str, num_layers: int) -> frozenset[int]:
    """The main-stack layers (0-based) that vLLM builds without an indexer (see the module)."""
    pattern = data.get("index_topk_pattern")
    if pattern is None:
        freq = _int(data, path, "index_topk_freq", 1, 1)
        offset = _int(data, path, "index_skip_topk_offset", 2, 0)
        skipped = frozenset(i for i in range(num_layers) if max(i - offset + 1, 0) % freq)
    elif isinstance(pattern, (str, list)) and all(isinstance(p, str) for p in pattern):
        skipped = frozenset(i for i in range(min(num_layers, len(pattern))) if pattern[i] == "S")
    else:
        raise SpecError(path, "index_topk_pattern",
                        f"expected a string or a list of strings ('S': skip), got {pattern!r}")
    types = data.get("indexer_types")
    if types is not None:
        if not isinstance(types, list) or any(t not in ("full", "shared") for t in types):
            raise SpecError(path, "indexer_types", "expected a list of 'full' / 'shared'")
        for i, kind in enumerate(types[:num_layers]):
            if (kind == "shared") != (i in skipped):
                raise SpecError(
                    path, "indexer_types",
                    f"layer {i} is {kind!r} but index_topk_freq / index_skip_topk_offset / "
                    f"index_topk_pattern {'skip' if i in skipped else 'keep'} its indexer; "
                    "vLLM 0.32 reads only those, 0.34 only indexer_types: refused rather "
                    "than guessed")
    return skipped


def check_index_kpool(data: dict[str, Any], path: str) -> None:
    """Refuse ``index_kpool`` > 1 (the indexer keys pooled k tokens to one slot): both engines
    read it and kvplan's indexer cache does not. SGLang 0.5.22+ pages such a model by
    64 x index_kpool (configs/model_config.py:452 get_dsa_index_kpool) and sizes the index-K
    cell ceil((d + d / 128 x 4) / index_kpool) B per layer (model_executor/
    pool_configurator.py:540-543); vLLM 0.32 pools it as a compressed indexer
    (v1/attention/backends/mla/indexer.py:301-306, 617-623). 1 or absent: the plain cache."""
    kpool = _int(data, path, "index_kpool", 1, 1)
    if kpool > 1:
        raise UnmodelledError(
            f"{path}: index_kpool {kpool}: kvplan does not model the pooled indexer keys "
            f"(SGLang 0.5.22+ pages them by 64 x {kpool}, vLLM 0.32 compresses them)")


def indexer_mapping(c: ConfigReader, num_layers: int) -> dict[str, Any]:
    """The spec's ``attention.indexer`` section (``skipped_layers`` only where IndexCache skips
    some)."""
    section: dict[str, Any] = {key: c.int(key, required=key) for key in
                               ("index_head_dim", "index_n_heads", "index_topk")}
    check_index_kpool(dict(c.data), c.path)
    skipped = skipped_indexer_layers(dict(c.data), c.path, num_layers)
    if skipped:
        section["skipped_layers"] = sorted(skipped)
        types = c.data.get("indexer_types")  # checked against `skipped` above
        if isinstance(types, list):
            section["indexer_types_length"] = len(types)
    return section


def parse_indexer(r: Any, attention: Attention) -> IndexerSpec:
    """A spec's ``attention.indexer`` section (`r`: kvplan.sources.spec_yaml's reader of it)."""
    if not isinstance(attention, LatentAttention):
        raise SpecError(r.path, r.prefix.rstrip("."), "the sparse-attention indexer is only "
                                                      "modelled for kind mla")
    skipped = r._get("skipped_layers", False)  # IndexCache: main-stack layers with no indexer
    spec = IndexerSpec(index_head_dim=r.int("index_head_dim"), index_n_heads=r.int("index_n_heads"),
                       index_topk=r.int("index_topk"), skipped_layers=frozenset(checked_int_list(
                           [] if skipped is None else skipped, path=r.path,
                           field=r.field("skipped_layers"))),
                       indexer_types_length=r.int("indexer_types_length", required=False))
    r.finish()
    return spec
