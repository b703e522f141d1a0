"""Attention shapes by layer type, read as vLLM's model code reads them (issue 26: "per-layer-type
attention shapes (KV heads, head size, window ...)").

Some families give their sliding layers another attention shape than their full layers, under
names of their own. One row per family (``model_type``) says where its config.json puts:

- which layers slide (a per-layer list, and the entry that marks a sliding layer);
- the sliding layers' window;
- each layer type's KV heads, K head size and V head size (and query heads, for the weights).

`layer_type_windows` turns a row into the attention section's ``sliding_window`` /
``layer_types``, and `sliding_layer_shape` into its ``sliding_layers`` section (kvplan.sources.
spec_yaml reads it into ModelSpec.layer_attention); each cache kind then answers its own size
(kvplan.kv.cache: one page of num_kv_heads x (head_dim + v_head_dim) per token, as vLLM's
AttentionSpec.page_size_bytes). A field the model code reads without a default is required
here: vLLM does not build the model without it, so kvplan refuses the config in one line.
kvplan.sources.hf_families.layer_type_shapes is the one entry point, for these rows and for
Gemma-4's global layers (its gemma4_global_shape).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import checked_int
from kvplan.model.spec import FULL, SLIDING
from kvplan.sources.hf_reader import ConfigReader


@dataclass(frozen=True, kw_only=True)
class LayerTypeFields:
    """Where one family's config.json gives each layer type's attention shape."""

    source: str  # the vLLM 0.32 model file and class that reads these fields
    pattern: str  # the per-layer list saying which layers slide
    sliding_mark: Any  # the entry of `pattern` that marks a sliding layer
    window: str  # the sliding layers' window
    # spec field -> config key of the sliding layers' shape, read without a default
    sliding: Mapping[str, str]
    # the sliding layers' V head size (absent or null: their K head size)
    sliding_v_head_dim: str | None = None
    # the full layers' V head size (absent or null: head_dim)
    v_head_dim: str | None = None


# vLLM 0.32 models/mimo_v2.py MiMoV2FlashDecoderLayer (MiMoV2FlashForCausalLM and
# MiMoV2ForCausalLM): `hybrid_layer_pattern[layer_id] == 1` builds MiMoV2Attention of
# swa_num_attention_heads, swa_num_key_value_heads, swa_head_dim and
# getattr(config, "swa_v_head_dim", None) over `sliding_window_size`, with attention sinks
# (a per-head bias: no cache); every other layer num_attention_heads,
# num_key_value_heads, head_dim and getattr(config, "v_head_dim", None), no window
# (`cache_config.sliding_window = None`, so config.sliding_window reaches no layer). A None
# V size is the K size (MiMoV2Attention.__init__); Attention(head_size_v=v_head_dim)
# caches K and V of their own sizes (kv_cache_interface.py AttentionSpec:
# (head_size + head_size_v) x dtype per head and token).
_MIMO_V2 = LayerTypeFields(
    source="models/mimo_v2.py MiMoV2FlashDecoderLayer", pattern="hybrid_layer_pattern",
    sliding_mark=1, window="sliding_window_size",
    sliding={"num_attention_heads": "swa_num_attention_heads",
             "num_key_value_heads": "swa_num_key_value_heads",
             "head_dim": "swa_head_dim"},
    sliding_v_head_dim="swa_v_head_dim", v_head_dim="v_head_dim")

LAYER_TYPE_FIELDS: dict[str, LayerTypeFields] = {
    "mimo_v2_flash": _MIMO_V2,
    # MiMoV2ForCausalLM (MiMo-V2.5-Pro, model_type mimo_v2): a subclass of
    # MiMoV2FlashForCausalLM that only maps the checkpoint's fused qkv_proj
    # (packed_modules_mapping); the same decoder layers read the same fields (0.32 to 0.34).
    "mimo_v2": _MIMO_V2,
    # vLLM 0.32 models/step3p5.py Step3p5DecoderLayer (kvplan.sources.hf_step3p5): a layer whose
    # layer_types entry is attention_other_setting's attention_type ("sliding_attention", the
    # only one read) takes that section's num_attention_heads, num_attention_groups and
    # head_dim, and Step3p5Attention gives it `config.sliding_window` (every other layer: no
    # window; `cache_config.sliding_window = None`). K and V of head_dim each. The reader
    # refuses a section whose KV heads or head size differ from the top-level ones (vLLM 0.33
    # reads only its query heads), so only the query heads (the weights) differ here.
    "step3p5": LayerTypeFields(
        source="models/step3p5.py Step3p5DecoderLayer", pattern="layer_types",
        sliding_mark="sliding_attention", window="sliding_window",
        sliding={"num_attention_heads": "attention_other_setting.num_attention_heads",
                 "num_key_value_heads": "attention_other_setting.num_attention_groups",
                 "head_dim": "attention_other_setting.head_dim"}),
}


def _required(c: ConfigReader, key: str, source: str) -> int:
    """`key` of config.json, read without a default; ``section.key``: a key of a nested section
    (Step-3.5's attention_other_setting)."""
    what = (f"missing: vLLM's {source} reads it without a default and does not build the model "
            "without it")
    section, _, inner = key.rpartition(".")
    if section:
        part = c.data.get(section)
        value = part.get(inner) if isinstance(part, Mapping) else None
        if value is None:
            raise SpecError(c.path, key, what)
        return checked_int(value, path=c.path, field=key, minimum=1)
    value = c.int(key, required=key, what=what)
    assert value is not None
    return value


def layer_type_windows(c: ConfigReader, layers: int) -> dict:
    """The attention section's window fields for a family of `LAYER_TYPE_FIELDS`:
    ``sliding_window`` and, when some layers do not slide, ``layer_types``."""
    row = LAYER_TYPE_FIELDS[c.model_type]
    pattern = c.data.get(row.pattern)
    if not isinstance(pattern, list):
        raise SpecError(c.path, row.pattern, f"missing or not a list: vLLM's {row.source} "
                                             "indexes it per layer and does not build the "
                                             "model without it")
    if len(pattern) < layers:
        raise SpecError(c.path, row.pattern, f"{len(pattern)} entries for {layers} layers: "
                                             f"vLLM's {row.source} indexes one per layer")
    types = [SLIDING if v == row.sliding_mark else FULL for v in pattern[:layers]]
    if SLIDING not in types:
        return {}
    window = _required(c, row.window, row.source)
    window = checked_int(window, path=c.path, field=row.window)
    if FULL not in types:
        return {"sliding_window": window}
    return {"sliding_window": window, "layer_types": types}


def sliding_layer_shape(c: ConfigReader, attention: dict) -> None:
    """Add to the attention section (in place) the sliding layers' own shape
    (``sliding_layers``) of a family of `LAYER_TYPE_FIELDS`, and the full layers' V head size
    on the section itself."""
    row = LAYER_TYPE_FIELDS[c.model_type]
    head_dim = attention["head_dim"]
    if row.v_head_dim is not None:
        attention["v_head_dim"] = c.int(row.v_head_dim) or head_dim
    if "sliding_window" not in attention:
        return  # no layer slides: the sliding shape is never built
    shape = {key: _required(c, name, row.source) for key, name in row.sliding.items()}
    v_head_dim = c.int(row.sliding_v_head_dim) if row.sliding_v_head_dim else None
    shape["v_head_dim"] = v_head_dim or shape["head_dim"]
    if "layer_types" not in attention:
        # Every layer slides: the sliding shape is the model's.
        heads, kv = shape["num_attention_heads"], shape["num_key_value_heads"]
        attention.update(shape, kind="mha" if kv == heads else "mqa" if kv == 1 else "gqa")
        return
    attention["sliding_layers"] = shape
