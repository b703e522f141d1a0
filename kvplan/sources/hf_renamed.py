"""Families whose config.json names its fields its own way, mapped onto the standard names the
rest of the reader (kvplan.sources.hf_config) takes: DBRX, LongCat-Flash and Step-3.5
(kvplan.sources.hf_step3p5).

`renamed_fields` returns the mapped config and the spec keys the mapping adds (empty for every
other family)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_LAYERS, checked_int
from kvplan.sources.hf_step3p5 import step3p5_fields


def renamed_fields(config: Mapping[str, Any], model_type: str, path: str
                   ) -> tuple[dict, dict[str, Any]]:
    """`config` under the standard field names, and the spec keys its family adds."""
    if model_type == "dbrx":
        return _dbrx_fields(config, path), {}
    if model_type == "longcat_flash":
        return _longcat_fields(config, path), {"layers_per_block": LONGCAT_ATTENTIONS_PER_LAYER}
    if model_type == "step3p5":
        return step3p5_fields(config, path)
    return dict(config), {}


def _dbrx_fields(config: Mapping[str, Any], path: str) -> dict:
    """DBRX names its fields its own way; vLLM 0.32 models/dbrx.py reads d_model, n_heads,
    n_layers, attn_config.kv_n_heads (KV heads; head size d_model / n_heads) and ffn_config's
    moe_num_experts, moe_top_k and ffn_hidden_size (one expert's width). Mapped here onto the
    standard names. attn_config.clip_qkv and rope_theta, ffn_config's moe_jitter_eps and
    moe_loss_weight change neither the cache nor the weights' size."""
    data = dict(config)
    attn, ffn = config.get("attn_config"), config.get("ffn_config")
    for name, part, keys in (("attn_config", attn, ("kv_n_heads",)),
                             ("ffn_config", ffn, ("moe_num_experts", "moe_top_k",
                                                  "ffn_hidden_size"))):
        if not isinstance(part, Mapping):
            raise SpecError(path, name, "missing: DBRX keeps " + ", ".join(keys) + " there")
        for key in keys:
            if part.get(key) is None:
                raise SpecError(path, f"{name}.{key}", "missing: vLLM's dbrx.py reads it")
    for ours, theirs in (("num_hidden_layers", "n_layers"), ("num_attention_heads", "n_heads"),
                         ("hidden_size", "d_model"), ("max_position_embeddings", "max_seq_len")):
        if theirs in config:
            data[ours] = config[theirs]
    data.update(num_key_value_heads=attn["kv_n_heads"], num_local_experts=ffn["moe_num_experts"],
                num_experts_per_tok=ffn["moe_top_k"], intermediate_size=ffn["ffn_hidden_size"])
    return data


# vLLM 0.32 models/longcat_flash.py FlashDecoderLayer (lines 258-330): every decoder layer holds
#   self_attn = ModuleList of 2 DeepseekV2MLAAttention (prefixes layers.{i}.self_attn.0 and .1,
#     each registering its own MLA cache layer: kv_lora_rank + qk_rope_head_dim per token),
#   input_layernorm / post_attention_layernorm = 2 RMSNorms each,
#   mlps = 2 FlashMLP of config.intermediate_size (ffn_hidden_size), and
#   mlp = one LongcatMoe: n_routed_experts experts of moe_intermediate_size
#     (expert_ffn_hidden_size), top moe_topk, and a router over n_routed_experts +
#     zero_expert_num outputs (the zero experts are identities: no weights).
# FlashModel builds config.num_layers decoder layers (make_layers, line 396 of 0.34.0's file,
# the same in 0.32); transformers 5.19's LongcatFlashConfig maps ffn_hidden_size ->
# intermediate_size, expert_ffn_hidden_size -> moe_intermediate_size, moe_topk ->
# num_experts_per_tok (attribute_map) and derives num_hidden_layers = 2 * num_layers.
LONGCAT_ATTENTIONS_PER_LAYER = 2


def _longcat_fields(config: Mapping[str, Any], path: str) -> dict:
    """LongCat-Flash read as 2 x num_layers kvplan layers, one MLA attention each: the even one
    (self_attn.0) with the layer's MoE and mlps[0] as its shared expert, the odd one
    (self_attn.1) with mlps[1] as its dense MLP. KV: one latent cache per attention, as vLLM
    registers them; weights: the same tensors, two dense MLPs and one MoE per decoder layer."""
    def need(key: str, minimum: int = 1) -> int:
        if config.get(key) is None:
            raise SpecError(path, key, "missing: vLLM's models/longcat_flash.py reads it")
        return checked_int(config[key], path=path, field=key, minimum=minimum)

    num_layers = need("num_layers")
    layers = LONGCAT_ATTENTIONS_PER_LAYER * num_layers
    if layers > MAX_LAYERS:
        raise SpecError(path, "num_layers", f"{num_layers} decoder layers of 2 attentions: at "
                                            f"most {MAX_LAYERS // 2}")
    stated = config.get("num_hidden_layers")
    if stated is not None and stated != layers:
        raise SpecError(path, "num_hidden_layers", f"{stated}: transformers' LongcatFlashConfig "
                        f"derives it as 2 x num_layers ({layers}), and vLLM builds num_layers "
                        "decoder layers; a config that disagrees is refused rather than guessed")
    dense, expert = need("ffn_hidden_size"), need("expert_ffn_hidden_size")
    if dense % expert:
        raise SpecError(path, "ffn_hidden_size", f"{dense}: kvplan counts mlps[0] beside the MoE "
                        f"as shared experts of expert_ffn_hidden_size ({expert}); a width that is "
                        "not a multiple of it is not modelled")
    if config.get("zero_expert_type", "identity") != "identity":
        raise SpecError(path, "zero_expert_type", f"{config['zero_expert_type']!r}: only "
                        "'identity' zero experts (no weights) are modelled")
    data = dict(config)
    data.update(num_hidden_layers=layers, intermediate_size=dense, moe_intermediate_size=expert,
                num_experts_per_tok=need("moe_topk"), n_routed_experts=need("n_routed_experts"),
                zero_expert_num=need("zero_expert_num", minimum=0),
                # the even layer of each pair holds the MoE, with mlps[0] as dense experts
                moe_layer_freq=LONGCAT_ATTENTIONS_PER_LAYER, first_k_dense_replace=0,
                n_shared_experts=dense // expert)
    return data
