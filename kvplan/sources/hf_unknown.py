"""Fail closed on a config.json of a ``model_type`` kvplan does not know by name.

Such a config is sized only from the standard fields vLLM's Llama-style decoders read (layers,
heads, KV heads, head size, and ``layer_types`` with ``sliding_window``), and only when every
other field whose name says it may shape the cache is on a list of fields known not to
(`IGNORED`, each with its reason). Anything else -- a per-layer-type head count, a pattern field,
a state size, a cross-layer share -- is refused with one line naming the file and the field,
rather than sized as if it were not there (issue 26: Cohere2's ``sliding_window_pattern`` read
that way came out 40 % too large).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError

# Parts of a field name that mark it as one that may shape the KV cache or a recurrent state.
CACHE_WORDS = (
    "window", "pattern", "layer", "chunk", "sparse", "index", "kv", "head", "group", "lora",
    "mamba", "ssm", "conv", "linear", "state", "share", "nope", "no_rope", "global", "local",
    "attn", "attention", "block", "hybrid", "recurrent", "cache", "mla", "latent", "compress",
    "topk", "stride", "query", "key_value", "swa", "full", "mem", "interleave", "skip",
)

# Fields of an unknown model_type that kvplan reads itself (kvplan.sources.hf_config and
# hf_families: the standard decoder fields, as vLLM's ModelArchConfigConvertorBase and
# models/llama.py read them).
READ = frozenset({
    "num_hidden_layers", "num_attention_heads", "head_dim", "num_key_value_heads",
    "num_kv_heads", "n_head_kv", "attention_bias", "sliding_window", "layer_types",
    "use_sliding_window", "num_nextn_predict_layers", "n_layer", "num_layers", "n_head",
    "multi_query_group_num", "num_attention_groups",
})

# MLA's fields: what vLLM caches for them depends on the family, so an unknown model_type that
# carries one is refused. DeepSeek-V2/V3 and their peers cache one latent row of kv_lora_rank +
# qk_rope_head_dim a token (models/deepseek_v2.py, MLAAttention); MiniCPM3 builds plain
# attention over num_attention_heads x (qk_nope_head_dim + qk_rope_head_dim) from the same
# fields (models/minicpm3.py MiniCPM3Attention), 26.7x the latent on MiniCPM3-4B's published
# config (62 x 15,360 B a token against 62 x 576), which a config naming no model_type was once
# sized as.
MLA_FIELDS = ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")

# Fields whose names match CACHE_WORDS but that change no cache size: why, field by field.
IGNORED: dict[str, str] = {
    "attention_dropout": "training-time dropout",
    "hidden_dropout": "training-time dropout",
    "attention_probs_dropout_prob": "training-time dropout (BERT's name, left in test configs "
                                    "such as hf-internal-testing's; vLLM 0.32 reads it only in "
                                    "blip2.py's Q-Former, transformers' Starcoder2 not at all)",
    "layer_norm_eps": "a norm's epsilon",
    "layer_norm_epsilon": "a norm's epsilon",
    "layernorm_epsilon": "a norm's epsilon",
    "use_cache": "transformers' generate() flag; vLLM always caches",
    "cache_implementation": "transformers' generate() cache class; vLLM builds its own",
    "num_beam_groups": "transformers' generate() beam search setting (no cache size)",
    "attn_implementation": "transformers' attention kernel choice; vLLM picks its own backend",
    "pruned_heads": "transformers' record of pruned heads; vLLM builds every head the config "
                    "counts",
    "cross_attention_hidden_size": "an encoder-decoder's cross-attention width, used only "
                                   "with add_cross_attention (refused where true)",
    "initializer_range": "training-time initialisation",
    "qk_layernorm": "a norm of q and k (weights only)",
    "use_qk_norm": "a norm of q and k (weights only)",
    "qk_norm": "a norm of q and k (weights only)",
    "norm_topk_prob": "MoE routing (weights and compute only)",
    "output_router_logits": "MoE training loss",
    "router_aux_loss_coef": "MoE training loss",
    "mlp_only_layers": "dense versus MoE MLP (weights only)",
    "decoder_sparse_step": "which layers are MoE (weights only)",
    "moe_layer_freq": "which layers are MoE (weights only)",
    "num_experts_per_tok": "MoE routing (weights and compute only)",
    "pretraining_tp": "a training-time tensor-parallel split of the MLP",
    "attention_multiplier": "a scalar on the attention scores",
    "attention_scale": "a scalar on the attention scores",
    "query_pre_attn_scalar": "a scalar on the attention scores",
    "attn_logit_softcapping": "a cap on the attention scores",
    "final_logit_softcapping": "a cap on the output logits",
    "rope_local_base_freq": "a rotary base (no cache size)",
    "head_dim_scaling": "a scalar (no cache size)",
    "global_rope_theta": "a rotary base (no cache size)",
    "local_rope_theta": "a rotary base (no cache size)",
    "layer_norm_type": "the norm's kind (weights only)",
    "residual_in_fp32": "the residual's dtype (activations only)",
    "attn_factor": "a YaRN scale on the attention scores (no cache size)",
    "attn_temperature_len": "a temperature on the attention scores by position (Grok)",
    "max_window_layers": "read with use_sliding_window only, which kvplan refuses when on",
    "num_local_experts": "the number of experts (weights only)",
    "n_shared_experts": "shared experts (weights only)",
    "num_shared_experts": "shared experts (weights only)",
    "shared_expert_intermediate_size": "shared experts (weights only)",
    "shared_intermediate_size": "shared experts (weights only)",
    "n_group": "MoE routing groups (compute only)",
    "topk_group": "MoE routing groups (compute only)",
    "topk_method": "MoE routing (compute only)",
    "layernorm_full_attention_beta": "MiniMax's residual scale after a full-attention block "
                                     "(vLLM 0.32 reads it nowhere; no cache size)",
    "layernorm_linear_attention_beta": "MiniMax's residual scale after a linear-attention block "
                                       "(vLLM 0.32 reads it nowhere; no cache size)",
    "layernorm_mlp_beta": "MiniMax's residual scale after an MLP (vLLM 0.32 reads it nowhere)",
    "shared_moe_mode": "MiniMax's shared-expert gating (vLLM 0.32 reads it nowhere; weights "
                       "only)",
    "qk_layer_norms": "a norm of q and k (weights only; vLLM 0.32 reads it nowhere)",
    "rope_interleaved": "a rotary layout flag (no cache size; vLLM 0.32 reads it nowhere)",
    "attention_softmax_in_fp32": "the dtype of the attention scores (activations only; "
                                 "StarCoder2's original code, not Starcoder2Config)",
    "scale_attention_softmax_in_fp32": "the dtype of the attention scores (activations only)",
    "scale_attn_weights": "a scalar on the attention scores (GPT-2's; vLLM 0.32 reads it "
                          "nowhere)",
    "pre_allocate_kv_cache": "the original GPTBigCode code's own cache switch; vLLM 0.32 "
                             "allocates its paged cache whatever it says",
}


# Fields that may shape the cache but whose value here means "off": (values, what they mean).
OFF_VALUES: dict[str, tuple[tuple[Any, ...], str]] = {
    "sliding_window_size": ((-1, 0, None), "no sliding window"),
    "global_attn_every_n": ((1,), "every layer global"),
}


def check_unknown_fields(config: Mapping[str, Any], path: str, model_type: str) -> None:
    """Refuse a config of unknown `model_type` carrying a field that may shape the cache and
    that kvplan neither reads nor knows to be harmless (one line: file, field, why)."""
    for key in config:
        name = str(key)
        if name in MLA_FIELDS and config[key] is not None:
            raise SpecError(path, name, f"model_type {model_type!r} is not a family kvplan "
                                        "reads field by field, and vLLM's families cache MLA "
                                        "fields differently (the latent: models/deepseek_v2.py; "
                                        "full heads: models/minicpm3.py); refused rather than "
                                        "guessed")
        if name.startswith("_") or name in READ or name in IGNORED:
            continue
        off = OFF_VALUES.get(name)
        if off is not None and config[key] in off[0] and not isinstance(config[key], bool):
            continue
        lower = name.lower()
        if any(word in lower for word in CACHE_WORDS):
            raise SpecError(path, name, f"model_type {model_type!r} is not a family kvplan "
                                        "reads field by field, and this field may change the "
                                        "cache kvplan would size from the standard fields; "
                                        "refused rather than guessed")
