"""How many values of each head rotate: the width of the rotary cos/sin table vLLM builds
(ModelSpec.rotary_dim, priced by kvplan.weights.base.rope_cache_elements), read from a text
config.json as vLLM 0.32 reads it.

vLLM 0.32 layers/rotary_embedding/__init__.py `get_rope`: ``rotary_dim`` is
``rope_parameters["rope_dim"]`` if set, else ``int(head_size * partial_rotary_factor)`` with the
factor from ``rope_parameters`` (default 1.0). transformers_utils/config.py:629-637
`patch_rope_parameters` takes the factor from config.json's ``partial_rotary_factor``,
``rotary_pct`` or ``rotary_emb_fraction`` (first present), and transformers 5.19's
``standardize_rope_params`` moves it into ``rope_parameters`` unless that already has one; a
config class that sets a default (``kwargs.setdefault("partial_rotary_factor", 0.25)`` in
Qwen3NextConfig) fills it when the file is silent. Families whose vLLM model builds its own
rope parameters are in `_OWN_RULE`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError

# The config keys vLLM's patch_rope_parameters reads the factor from, in its order.
FACTOR_KEYS = ("partial_rotary_factor", "rotary_pct", "rotary_emb_fraction")

# transformers 5.19 config classes' default factor (`kwargs.setdefault("partial_rotary_factor",
# x)` in models/<family>/configuration_<family>.py; GPTNeoXConfig: rotary_pct 0.25), by kvplan
# model_type. A family not listed defaults to 1.0 (every value rotates).
CLASS_DEFAULT_FACTOR: dict[str, float] = {
    "qwen3_next": 0.25, "qwen3_5": 0.25, "qwen3_5_moe": 0.25, "stablelm": 0.25,
    "gpt_neox": 0.25, "nemotron": 0.5, "glm": 0.5, "glm4": 0.5, "glm4_moe": 0.5,
    "phi": 0.5, "persimmon": 0.5,
}

# vLLM models that do not take the factor from the config's rope parameters:
# - chatglm.py:98-103 ChatGLMAttention: `"partial_rotary_factor": 0.5` whatever the config says;
# - gpt_j.py:94-96 GPTJAttention: `config.rotary_dim / head_size` (GPTJConfig default 64);
# - minimax_m2.py:193-198: `rotary_dim / head_dim` unless rope_parameters has a factor;
# - falcon_h1.py:246-247: `getattr(config, "attn_rotary_emb", head_dim) / head_dim`;
# - bailing_moe.py:132-137: config `rotary_dim`, else head_dim x partial_rotary_factor.
# Each entry: a fixed factor, or (the config key holding a rotary dim, what its absence means:
# a default width, "head_dim", or "factor" for the factor rule below).
_OWN_RULE: dict[str, tuple[str, int | str] | float] = {
    "chatglm": 0.5,
    "gptj": ("rotary_dim", 64),
    "minimax_m2": ("rotary_dim", "factor"),
    "falcon_h1": ("attn_rotary_emb", "head_dim"),
    "bailing_moe": ("rotary_dim", "factor"),
}


def _factor(data: Mapping[str, Any], model_type: str, path: str) -> tuple[str, float]:
    """(the key it was read from, the partial rotary factor), as get_rope sees it."""
    params = data.get("rope_parameters")
    if isinstance(params, Mapping) and params.get("partial_rotary_factor") is not None:
        key, value = "rope_parameters.partial_rotary_factor", params["partial_rotary_factor"]
    else:
        key, value = next(((k, data[k]) for k in FACTOR_KEYS if data.get(k) is not None),
                          ("", CLASS_DEFAULT_FACTOR.get(model_type, 1.0)))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise SpecError(path, key, f"{value!r}: expected a number in (0, 1] (vLLM get_rope "
                                   "raises outside it)")
    return key, float(value)


def rotary_dim(data: Mapping[str, Any], model_type: str, head_dim: int, path: str) -> int | None:
    """The rotary table's width for a text config of `model_type` whose heads are `head_dim`
    wide; None when every value rotates (the table is head_dim wide: nothing to record)."""
    params = data.get("rope_parameters")
    rule = _OWN_RULE.get(model_type)
    if isinstance(rule, float):
        return _or_none(int(head_dim * rule), head_dim)
    if rule is not None and not (model_type == "minimax_m2" and _factor_given(data)):
        key, absent = rule
        value = data.get(key)
        if value is None and absent == "head_dim":
            return None
        if value is None and isinstance(absent, int):
            value = absent
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= head_dim:
                raise SpecError(path, key, f"{value!r}: expected a rotary width in [1, head_dim "
                                           f"{head_dim}]")
            return _or_none(value, head_dim)
    if isinstance(params, Mapping) and isinstance(params.get("rope_dim"), int):
        return _or_none(params["rope_dim"], head_dim)
    return _or_none(int(head_dim * _factor(data, model_type, path)[1]), head_dim)


def _or_none(dim: int, head_dim: int) -> int | None:
    return None if dim == head_dim else dim


def _factor_given(data: Mapping[str, Any]) -> bool:
    params = data.get("rope_parameters")
    return (isinstance(params, Mapping) and params.get("partial_rotary_factor") is not None) or \
        any(data.get(k) is not None for k in FACTOR_KEYS)


# Families whose sliding layers build a rotary table of their own base: vLLM 0.32
# models/mimo_v2.py:394 MiMoV2DecoderLayer passes `rope_theta=getattr(config, "swa_rope_theta",
# rope_theta)` to the sliding layers' attention and `rope_theta` to the full ones, both with
# max_position_embeddings rows; get_rope's `_ROPE_DICT` keys on the rope parameters, so two
# different bases are two tables (the oracle shrink mimo-v2-flash: two cos_sin_cache buffers).
SWA_ROPE_THETA_FAMILIES = frozenset({"mimo_v2", "mimo_v2_flash"})


# Families whose config nests rope_parameters by layer type, each type's head width under its
# own key: vLLM 0.32 models/gemma4.py:455-462 Gemma4Attention takes
# `config.rope_parameters[layer_type]` and its layer's head_dim (global_head_dim on full
# attention layers), one get_rope per distinct set. A "proportional" table (the full layers':
# layers/rotary_embedding/gemma4_rope.py:44-50) is head_size wide whatever its partial factor.
NESTED_ROPE_HEAD_DIMS = {"gemma4": {"full_attention": "global_head_dim",
                                    "sliding_attention": "head_dim"}}


def _nested_tables(data: Mapping[str, Any], model_type: str, max_pos: int,
                   path: str) -> list[int] | None:
    """One table per layer type that has layers, in rows of head_dim values (the spec's
    `rope_tables` unit: kvplan.weights.base.rope_cache_elements)."""
    params, keys = data.get("rope_parameters"), NESTED_ROPE_HEAD_DIMS[model_type]
    head_dim = data.get("head_dim")
    if not isinstance(params, Mapping) or not isinstance(head_dim, int) or not all(
            isinstance(params.get(t), Mapping) for t in keys):
        return None
    tables: dict[tuple, int] = {}
    for layer_type in sorted(set(data.get("layer_types") or ()) & set(keys)):
        own = params[layer_type]
        width = data.get(keys[layer_type]) or head_dim
        if own.get("rope_type", "default") != "proportional":
            width = int(width * _factor(own, model_type, path)[1])
        if (max_pos * width) % head_dim:
            raise SpecError(path, f"rope_parameters.{layer_type}", f"a rotary table {width} "
                                                                   "wide is not sized")
        tables[(width, tuple(sorted(own.items())))] = max_pos * width // head_dim
    return list(tables.values()) if len(tables) > 1 else None


# Wrappers whose language model (models/qwen2.py, built by qwen2_vl.py / qwen2_5_vl.py) gets its
# MRoPE table from get_rope with the default mrope_positions_factor 4 (vLLM 0.32
# layers/rotary_embedding/__init__.py:112-123, mrope.py:347-351: "we enlarge
# max_position_embeddings to 4 times"): one table of 4 x max_position_embeddings rows. The
# oracle shrinks qwen2.5-vl-7b and olmocr-7b-0225-preview hold [512000, 128] and [131072, 128]
# (tests/data/oracle/weight-bytes.json, lm_rotary). Other MRoPE families are not read here.
MROPE_X4_WRAPPERS = ("qwen2_vl", "qwen2_5_vl", "Qwen2VLForConditionalGeneration",
                     "Qwen2_5_VLForConditionalGeneration")


def rope_table_rows(data: Mapping[str, Any], model_type: str, max_pos: int,
                    path: str) -> list[int] | None:
    """Rows of each distinct rotary table (ModelSpec.rope_tables) where a family builds more
    than one of max_position_embeddings rows, or one of another size; None: one table of
    max_position_embeddings rows."""
    # A flat Qwen2-VL file reads as qwen2: its architectures name the wrapper.
    names = data.get("architectures")
    wrapper = {data.get("_wrapper_model_type") or data.get("model_type"),
               names[0] if isinstance(names, list) and names else None}
    rope = data.get("rope_parameters") or data.get("rope_scaling")
    if (wrapper & set(MROPE_X4_WRAPPERS) and isinstance(rope, Mapping)
            and "mrope_section" in rope):
        return [4 * max_pos]
    if model_type in NESTED_ROPE_HEAD_DIMS:
        return _nested_tables(data, model_type, max_pos, path)
    # Cohere / Cohere2 size the table by the config's model_max_length where it is set (vLLM
    # 0.32 models/commandr.py:202-204: `getattr(config, "model_max_length", None) or
    # getattr(config, "max_position_embeddings", 8192)`, then get_rope(max_position=...)):
    # c4ai-command-r-plus's 131,072 rows, not its max_position_embeddings 8,192 (the
    # command-r-plus shrink's probe, wgap26b: 33,554,432 B of cos_sin_cache in float16).
    stated = data.get("model_max_length")
    if (model_type in ("cohere", "cohere2") and isinstance(stated, int)
            and not isinstance(stated, bool) and stated > 0):
        return [stated]
    if model_type not in SWA_ROPE_THETA_FAMILIES or data.get("swa_rope_theta") is None:
        return None
    params = data.get("rope_parameters")
    theta = data.get("rope_theta", params.get("rope_theta") if isinstance(params, Mapping)
                     else None)
    if data["swa_rope_theta"] == theta:
        return None
    swa_head_dim = data.get("swa_head_dim", data.get("head_dim"))
    if swa_head_dim != data.get("head_dim"):
        raise SpecError(path, "swa_head_dim", f"{swa_head_dim!r}, not head_dim: the sliding "
                                              "layers' rotary table width is not sized")
    return [max_pos, max_pos]


# Families whose vLLM attention builds no rotary table, or one only where a config key holds a
# value (key, value): vLLM 0.32 models/nemotron_h.py NemotronHAttention and jamba.py
# JambaAttentionDecoderLayer call no get_rope (no position signal in attention);
# granitemoehybrid.py:277-285 builds one only `if config.position_embedding_type == "rope"`
# (GraniteMoeHybridConfig default None; Granite-4.0-H configs say "nope"); zamba2.py:245
# only `if config.use_mem_rope` (Zamba2Config default False). The oracle shrinks
# nemotron-nano-9b-v2 and granite-4.0-h-small hold no cos_sin_cache.
NO_ROTARY_TABLE: dict[str, tuple[str, object] | None] = {
    "nemotron_h": None, "jamba": None,
    "granitemoehybrid": ("position_embedding_type", "rope"), "zamba2": ("use_mem_rope", True),
}


def builds_rotary_table(data: Mapping[str, Any], model_type: str) -> bool:
    """Whether vLLM's attention layers of `model_type` build a rotary table."""
    if model_type not in NO_ROTARY_TABLE:
        return True
    switch = NO_ROTARY_TABLE[model_type]
    return switch is not None and data.get(switch[0]) == switch[1]
