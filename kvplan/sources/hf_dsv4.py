"""DeepSeek-V4's config.json (model_type deepseek_v4): the compressed-sparse-attention fields.

Reads what vLLM's DeepseekV4Attention reads (vllm/models/deepseek_v4/attention.py, 0.32:
head_dim, qk_rope_head_dim, sliding_window, compress_ratios[layer_id], o_groups, o_lora_rank,
q_lora_rank, index_*), each checked here and refused in one line naming the file and field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan.model.attention import CompressedSparseAttention

CSA_MODEL_TYPE = "deepseek_v4"
_INTS = ("num_attention_heads", "head_dim", "qk_rope_head_dim", "sliding_window", "q_lora_rank",
         "o_lora_rank", "o_groups", "index_head_dim", "index_n_heads", "index_topk")
# The block's fields its weights read (kvplan.weights.csa): vLLM 0.32 nvidia/model.py
# DeepseekV4DecoderLayer (hc_mult), DeepseekV4MoE (num_hash_layers, may be 0) and
# quant_config.py DeepseekV4FP8Config (expert_dtype, "fp4" when absent).
_BLOCK_INTS = ("hc_mult", "num_hash_layers")
EXPERT_DTYPES = ("fp4", "fp8")
_SECTION_NAMES = {"sliding_window": "window"}  # config.json field -> spec section key
_CONFIG_NAMES = {v: k for k, v in _SECTION_NAMES.items()}
# vllm/models/deepseek_v4/compressor.py CompressorStateCache: "assert compress_ratio in
# [4, 128]"; 0 (and 1) keep the sliding window only.
RATIOS = frozenset({0, 1, 4, 128})


def _int(config: Mapping[str, Any], path: str, field: str, prefix: str = "") -> int:
    value = config.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SpecError(path, prefix + field, f"expected a positive integer, got {value!r}")
    return value


def read_compressed_sparse_attention(config: Mapping[str, Any], path: str, *,
                                     prefix: str = "", num_hidden_layers: int | None = None
                                     ) -> CompressedSparseAttention:
    """The attention of a deepseek_v4 config.json (or of a spec's `attention` section, its
    fields named `prefix` + field), or a one-line SpecError. `num_hidden_layers` None: the
    config's own."""
    values = {f: _int(config, path, f, prefix) for f in _INTS}
    for f in _BLOCK_INTS:
        value = config.get(f)
        if isinstance(value, bool) or not isinstance(value, int) or value < (f == "hc_mult"):
            kind = "positive" if f == "hc_mult" else "non-negative"
            raise SpecError(path, prefix + f, f"expected a {kind} integer, got {value!r}")
        values[f] = value
    expert_dtype = config.get("expert_dtype", "fp4")
    if expert_dtype not in EXPERT_DTYPES:
        raise SpecError(path, prefix + "expert_dtype", f"expected one of {EXPERT_DTYPES} "
                        f"(vLLM's DeepseekV4FP8Config), got {expert_dtype!r}")
    if config.get("num_key_value_heads", 1) != 1:
        raise SpecError(path, prefix + "num_key_value_heads", "DeepSeek-V4 caches one KV head; "
                        f"got {config.get('num_key_value_heads')!r}")
    ratios = config.get("compress_ratios")
    field = prefix + "compress_ratios"
    if ratios is None:
        raise SpecError(path, field, "missing (a per-layer list of 0, 4 and 128; the "
                        "layer_types / compress_rates form is not read)")
    if not isinstance(ratios, list) or any(isinstance(r, bool) or r not in RATIOS
                                           for r in ratios):
        raise SpecError(path, field, f"expected a list of 0, 1, 4 and 128, got {ratios!r}")
    layers = (_int(config, path, "num_hidden_layers") if num_hidden_layers is None
              else num_hidden_layers)
    if len(ratios) < layers:
        raise SpecError(path, field, f"{len(ratios)} entries for {layers} layers")
    return CompressedSparseAttention(compress_ratios=tuple(ratios), expert_dtype=expert_dtype,
                                     **values)


def csa_attention_mapping(config: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The spec's `attention` section (kind csa) for a deepseek_v4 config.json, checked here:
    the fields vLLM's DeepseekV4Attention reads, nothing else."""
    att = read_compressed_sparse_attention(config, path)
    # The window as `window`: a spec's attention.sliding_window means sliding-window layers
    # (kvplan.kv.kinds.SlidingWindowCache), which V4's layers are not.
    return {"kind": "csa", **{_SECTION_NAMES.get(f, f): getattr(att, f)
                              for f in _INTS + _BLOCK_INTS},
            "expert_dtype": att.expert_dtype, "compress_ratios": list(att.compress_ratios)}


def csa_section(section: Mapping[str, Any], path: str, prefix: str, seen: set[str]
                ) -> CompressedSparseAttention:
    """A spec's `attention` section of kind csa (as `csa_attention_mapping` writes it): every
    key consumed (`seen`), its fields checked as in config.json, errors naming `prefix` + field
    (the layer count is checked where the config.json is read)."""
    seen.update(section)
    if "sliding_window" in section:
        raise SpecError(path, prefix + "sliding_window", "not with kind csa (its window is "
                        "`window`)")
    config = {_CONFIG_NAMES.get(k, k): v for k, v in section.items()}
    return read_compressed_sparse_attention(config, path, prefix=prefix, num_hidden_layers=0)
