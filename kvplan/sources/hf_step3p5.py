"""Step-3.5-Flash (model_type ``step3p5``, Step3p5ForCausalLM) read as vLLM's models/step3p5.py
builds it, mapped onto the standard names the rest of the reader takes
(kvplan.sources.hf_renamed calls `step3p5_fields`).

vLLM 0.32 models/step3p5.py, with its own config class (transformers_utils/configs/step3p5.py
Step3p5Config, registered for model_type step3p5, so no remote code runs):

- Step3p5DecoderLayer: `num_attention_groups` KV heads of `head_dim` on every layer; a layer whose
  `layer_types` entry equals `attention_other_setting["attention_type"]` takes that section's
  num_attention_heads, num_attention_groups and head_dim instead; Step3p5Attention gives
  `layer_types`' sliding_attention layers `config.sliding_window` (per_layer_sliding_window) and
  clears CacheConfig's window. Step3p5Config truncates `layer_types` to num_hidden_layers (the
  checkpoint lists the MTP layers too). vLLM 0.33 and 0.34 (the file rewritten:
  `_get_num_attention_heads`) take only the query heads from attention_other_setting and keep
  num_attention_groups and head_dim on every layer, over transformers' Step3p7TextConfig
  (kvplan.engines.vllm.architectures.SIZED_UNTIL refuses them); a config whose sliding section
  states other KV heads or head size than the top level is refused here (no such config was
  compared with vLLM).
- The MoE layers are `moe_layers_enum` (comma-separated indices; absent: 1 .. L - 1); each holds
  FusedMoEBlock: moe_num_experts experts of moe_intermediate_size, moe_top_k per token, a shared
  expert `share_expert` = Step3p5MLP of share_expert_dim (Step3p5Config: moe_intermediate_size x
  moe_top_k when null), the router `gate` = GateLinear(hidden, experts, params_dtype=float32)
  and `router_bias` (float32, one per expert); the other layers hold Step3p5MLP of
  intermediate_size.
- Step3p5Attention: q/k/v fused (QKVParallelLinear), o_proj, q_norm / k_norm (GemmaRMSNorm of
  head_dim), and with use_head_wise_attn_gate a g_proj (ColumnParallelLinear hidden ->
  num_heads): one sigmoid logit per query head.
- Step3p5ForCausalLM builds its own lm_head (ParallelLMHead), never tied to the embeddings.
- Rotary tables: get_rope per layer with head_dim, rotary_dim = head_dim x the layer's
  partial_rotary_factors entry, the layer's rope_theta (a list: per layer), and rope_scaling
  only on `yarn_only_types` layers; one cos/sin cache of max_position_embeddings rows of
  rotary_dim per distinct set (rotary_embedding/__init__.py `_ROPE_DICT`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import checked_int

SOURCE = "vLLM's models/step3p5.py"
SLIDING = "sliding_attention"
# rope_scaling types whose cos/sin cache has max_position_embeddings rows (Llama3RotaryEmbedding
# and the default RotaryEmbedding); others (YaRN: x factor) are not read here.
_ROPE_TYPES = {None, "default", "llama3"}


def _need(config: Mapping[str, Any], key: str, path: str, minimum: int = 1) -> int:
    if config.get(key) is None:
        raise SpecError(path, key, f"missing: {SOURCE} reads it (kvplan does not take "
                                   "Step3p5Config's defaults for the model's shape)")
    return checked_int(config[key], path=path, field=key, minimum=minimum)


def _moe_layers(config: Mapping[str, Any], layers: int, path: str) -> int:
    """first_k_dense_replace for the MoE layers moe_layers_enum names (Step3p5DecoderLayer:
    `[int(i) for i in moe_layers_enum.strip().split(",")]`, absent: layers 1 .. L - 1)."""
    value = config.get("moe_layers_enum")
    if value is None:
        return 1
    try:
        idx = sorted({int(i) for i in str(value).strip().split(",")} & set(range(layers)))
    except ValueError:
        raise SpecError(path, "moe_layers_enum", f"{value!r}: expected comma-separated layer "
                                                 "indices") from None
    if not idx or idx != list(range(idx[0], layers)):
        raise SpecError(path, "moe_layers_enum", "MoE layers other than every layer from the "
                                                 "first MoE one on: not expressible in kvplan's "
                                                 "MoE section; refused")
    return idx[0]


def _rope_tables(config: Mapping[str, Any], layers: int, head_dim: int, path: str) -> list[int]:
    """One entry per distinct rotary table, in rows of head_dim values: kvplan prices
    rope_tables x head_dim elements (kvplan.weights.base.rope_cache_elements), so a table of
    max_position_embeddings rows of rotary_dim = head_dim x factor is written as
    max_position_embeddings x factor rows."""
    max_pos = _need(config, "max_position_embeddings", path)
    scaling = config.get("rope_scaling")
    kind = scaling.get("rope_type", scaling.get("type")) if isinstance(scaling, Mapping) else None
    if kind not in _ROPE_TYPES:
        raise SpecError(path, "rope_scaling.rope_type", f"{kind!r}: only llama3 and default "
                                                        "rotary tables (max_position_embeddings "
                                                        "rows) are sized for step3p5")
    types = config.get("layer_types") or []
    yarn_only = config.get("yarn_only_types") or []
    thetas, factors = config.get("rope_theta"), config.get("partial_rotary_factors") or []
    tables: dict[tuple, int] = {}
    for i in range(layers):
        layer_type = types[i] if i < len(types) else None
        theta = thetas[i] if isinstance(thetas, list) else thetas
        factor = factors[i] if factors else 1.0
        if factor not in (0.5, 1, 1.0):  # Step3p5Attention asserts 1 or 0.5
            raise SpecError(path, "partial_rotary_factors", f"{factor!r} on layer {i}: "
                                                            f"{SOURCE} asserts 1 or 0.5")
        scaled = bool(scaling) and (not yarn_only or layer_type in yarn_only)
        rotary_dim = int(head_dim * factor)
        tables[(rotary_dim, theta, scaled)] = max_pos * rotary_dim // head_dim
    return list(tables.values())


def step3p5_fields(config: Mapping[str, Any], path: str) -> tuple[dict, dict[str, Any]]:
    """Step-3.5 under the standard names, and the spec keys it adds (its rotary tables)."""
    layers = _need(config, "num_hidden_layers", path)
    if config.get("att_impl_type", "GQA") != "GQA":
        raise SpecError(path, "att_impl_type", f"{config['att_impl_type']!r}: {SOURCE} builds "
                                               "GQA only")
    for key in ("need_fp32_gate", "use_moe_router_bias"):
        if config.get(key) is False:
            raise SpecError(path, key, f"false: {SOURCE} asserts it true")
    if config.get("tie_word_embeddings"):
        raise SpecError(path, "tie_word_embeddings", f"true: {SOURCE} builds its own lm_head "
                                                     "whatever it says; not checked")
    if config.get("use_head_wise_attn_gate") is not True:
        raise SpecError(path, "use_head_wise_attn_gate", "not true: only Step-3.5-Flash's "
                                                         "gated attention (g_proj) is checked")
    kv, head_dim = _need(config, "num_attention_groups", path), _need(config, "head_dim", path)
    other = config.get("attention_other_setting")
    if other is not None:
        if not isinstance(other, Mapping) or other.get("attention_type") != SLIDING:
            raise SpecError(path, "attention_other_setting.attention_type",
                            f"not {SLIDING!r}: only a sliding layers' section is read")
        for key, top in (("num_attention_groups", kv), ("head_dim", head_dim)):
            if other.get(key) != top:
                raise SpecError(path, f"attention_other_setting.{key}",
                                f"{other.get(key)!r}, not the top-level {top}: sliding "
                                "layers of their own KV shape are not compared with vLLM "
                                "(0.32 caches them with it, 0.33 with the top-level value)")
    experts = _need(config, "moe_num_experts", path)
    width = _need(config, "moe_intermediate_size", path)
    top_k = _need(config, "moe_top_k", path)
    shared = config.get("share_expert_dim")
    shared = width * top_k if shared is None else checked_int(
        shared, path=path, field="share_expert_dim", minimum=1)
    if shared % width:
        raise SpecError(path, "share_expert_dim", f"{shared}: kvplan counts the shared expert "
                                                  f"as experts of moe_intermediate_size "
                                                  f"({width}); another width is not modelled")
    data = dict(config)
    types = config.get("layer_types")
    if isinstance(types, list):
        data["layer_types"] = types[:layers]  # Step3p5Config's truncation
    data.update(num_key_value_heads=kv, n_routed_experts=experts, num_experts_per_tok=top_k,
                first_k_dense_replace=_moe_layers(config, layers, path), moe_layer_freq=1,
                n_shared_experts=shared // width)
    return data, {"rope_tables": _rope_tables(config, layers, head_dim, path)}
