"""Fail closed on a config.json of a *known* family carrying a field that may shape the cache
and that kvplan's reader for that family does not cover (issue 26: exact or refused, never a
guess that looks like an answer).

kvplan.sources.hf_unknown refuses such fields on an unknown ``model_type``; this module does the
same, family by family, for the families listed in `FAMILY_FIELDS`. Each row names, for one
``model_type`` (the text model's, after the wrappers are unwrapped), the vLLM 0.32 file that
builds its layers and every field whose name says it may shape the cache (hf_unknown.CACHE_WORDS)
that kvplan covers: read the way that file reads it, or known to change no cache size there.
Any other such field -- an alias the model code never reads (``num_kv_heads`` on Llama, where
vLLM's llama.py reads ``num_key_value_heads`` only), a field another family reads
(``use_sliding_window`` or ``kv_lora_rank`` on Llama) -- is refused with one line naming the
file and the field. Fields on hf_unknown.IGNORED (dropout, norm epsilons, MoE routing, ...) are
harmless everywhere.

A row's `defaults` are the transformers 5.19 config class's defaults of cache fields a
config.json may leave out, where kvplan's readers would assume another value (MistralConfig's
sliding_window 4096: left out, vLLM slides every layer over 4096 tokens; Qwen3Config's head_dim
128, not hidden / heads); `fill_class_defaults` applies them. `head_dim_is_hidden` and
`required` refuse two layouts vLLM itself handles inconsistently or not at all.

Families not listed here (the A-K half of vLLM's registry is audited apart) are unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kvplan._util.errors import SpecError
from kvplan.sources.hf_unknown import CACHE_WORDS, IGNORED


@dataclass(frozen=True, kw_only=True)
class FamilyFields:
    """One family's covered cache fields (see the module docstring)."""

    source: str  # the vLLM 0.32 model file whose reads the row follows
    covered: frozenset[str]  # cache-word fields kvplan reads as `source` does, or harmless there
    # transformers 5.19 config-class defaults of cache fields, taken when config.json leaves the
    # key out (an explicit null stays null, as the config class keeps it).
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # The model_type of the config class `defaults` come from, when not the row's own (a text
    # model_type kvplan reads under its wrapper family's name).
    config_class: str | None = None
    # A hybrid whose attention layers take hidden / heads while vLLM's page-size unification
    # (0.32 platforms/interface.py, the "Padding mamba page size" step) takes
    # ModelConfig.get_head_size(), i.e. config.head_dim: a head_dim other than hidden / heads
    # pads the states to a page no layer has (LFM2-1.2B with head_dim 32: vLLM pads by 1500 %,
    # not 3100 %). Refused rather than modelled.
    head_dim_is_hidden: bool = False
    # Fields the config class leaves null when config.json does, which vLLM 0.32 then fails to
    # load (its ModelConfig wants an int): refused when absent or null rather than answered.
    required: tuple[str, ...] = ()


def _fields(*groups: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    return frozenset(name for group in groups for name in group)


# Every decoder's layer and head counts; transformers' PretrainedConfig's own output switches
# (a config.json written with to_dict carries them; no model code sizes a cache from them).
_BASE = ("num_hidden_layers", "num_attention_heads", "attention_bias",
         "chunk_size_feed_forward", "output_attentions", "output_hidden_states")
# KV heads as config.num_key_value_heads and head size config.head_dim (else hidden / heads).
_GQA = ("num_key_value_heads", "head_dim")
# A window from sliding_window, per layer from layer_types (models/llama.py LlamaAttention:
# `per_layer_sliding_window` from layer_types, else CacheConfig's window on every layer).
_WINDOWS = ("sliding_window", "layer_types")
# The Qwen config classes' window switch (kvplan.sources.hf_families._qwen_windows).
_QWEN_WINDOWS = ("sliding_window", "use_sliding_window", "max_window_layers", "layer_types")
# Families of kvplan.sources.hf_text take sliding_window as it is whatever use_sliding_window
# says, as their vLLM code and config classes do (tests/test_support_text.py).
_TEXT_WINDOW = ("sliding_window", "use_sliding_window")
# Weights-only fields with cache words in their names.
_WEIGHTS = ("qkv_bias", "mlp_only_layers", "decoder_sparse_step", "use_qkv_bias",
            "num_experts_per_tok", "interleave_moe_layer_step", "moe_layer_freq",
            "shared_expert_intermediate_size", "first_k_dense_replace")
# Gated delta-net (linear attention) layers (kvplan.sources.hf_hybrid).
_HYBRID_LINEAR = ("layer_types", "full_attention_interval", "linear_conv_kernel_dim",
                  "linear_key_head_dim", "linear_num_key_heads", "linear_num_value_heads",
                  "linear_value_head_dim", "attn_output_gate", "mamba_ssm_dtype")
# Qwen3NextConfig, Qwen3_5TextConfig, Qwen3_5MoeTextConfig (transformers 5.19): head_dim 256 (not
# hidden / heads), the gated delta-net's shapes, and layer_types full every 4th layer when
# neither layer_types nor full_attention_interval is given.
_QWEN_LINEAR_DEFAULTS = {"head_dim": 256, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
                         "linear_value_head_dim": 128, "linear_num_key_heads": 16,
                         "linear_num_value_heads": 32, "full_attention_interval": 4}
# MTP layers (kvplan.sources.hf_families.mtp_layers): vLLM builds them only for speculative
# decoding, which kvplan's vLLM plan does not model.
_MTP = ("num_nextn_predict_layers", "mtp_num_hidden_layers")
# MLA (kvplan.sources.hf_families.mla_attention).
_MLA = ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")


FAMILY_FIELDS: dict[str, FamilyFields] = {
    # models/llama.py LlamaAttention (also LLaMAForCausalLM, the text model of llava and
    # llava_next): num_key_value_heads (default the heads), head_dim or hidden / heads,
    # sliding_window per layer_types' sliding layers, else CacheConfig's on every layer
    # (oracle cases llama-3.1-8b-sliding, llama-3.1-8b-layer-types). `use_sliding_window` is a
    # Qwen switch llama.py never reads: refused (kvplan would drop the window).
    "llama": FamilyFields(source="models/llama.py",
                          covered=_fields(_BASE, _GQA, _WINDOWS, ("qkv_bias",))),
    # models/mistral.py MistralAttention is LlamaAttention. MistralConfig defaults
    # num_key_value_heads 8 and sliding_window 4096 (null: none).
    "mistral": FamilyFields(source="models/mistral.py (LlamaAttention)",
                            covered=_fields(_BASE, _GQA, _WINDOWS),
                            defaults={"num_key_value_heads": 8, "sliding_window": 4096}),
    # models/phi3.py is LlamaForCausalLM; Phi3Config's sliding_window defaults to null.
    # Phi-4-mini's remote-config fields full_attn_mod (1: every layer full) and lm_head_bias
    # are read by neither (oracle case phi-4-mini).
    "phi3": FamilyFields(source="models/phi3.py (models/llama.py)",
                         covered=_fields(_BASE, _GQA, _WINDOWS, ("full_attn_mod",
                                                                 "lm_head_bias"))),
    # models/mixtral.py MixtralAttention: num_key_value_heads, head_dim or hidden / heads, no
    # per-layer window (CacheConfig's sliding_window on every layer). layer_types is not read:
    # refused. MixtralConfig defaults num_key_value_heads 8.
    "mixtral": FamilyFields(source="models/mixtral.py",
                            covered=_fields(_BASE, _GQA, ("sliding_window",), _WEIGHTS),
                            defaults={"num_key_value_heads": 8}),
    # models/qwen2.py Qwen2Attention: head_dim = hidden / heads (config.head_dim unread),
    # num_key_value_heads (Qwen2Config default 32), windows as _qwen_windows. Also the text
    # model of qwen2_audio and qwen2_5_vl.
    "qwen2": FamilyFields(source="models/qwen2.py",
                          covered=_fields(_BASE, ("num_key_value_heads", "head_dim"),
                                          _QWEN_WINDOWS),
                          defaults={"num_key_value_heads": 32}),
    # models/mimo.py: Qwen2Model plus MTP layers.
    "mimo": FamilyFields(source="models/mimo.py (models/qwen2.py)",
                         covered=_fields(_BASE, ("num_key_value_heads", "head_dim"),
                                         _QWEN_WINDOWS, _MTP),
                         defaults={"num_key_value_heads": 32}),
    # models/qwen2_moe.py Qwen2MoeAttention: head_dim = hidden / heads, num_key_value_heads
    # (Qwen2MoeConfig default 16).
    "qwen2_moe": FamilyFields(source="models/qwen2_moe.py",
                              covered=_fields(_BASE, ("num_key_value_heads", "head_dim"),
                                              _QWEN_WINDOWS, _WEIGHTS),
                              defaults={"num_key_value_heads": 16}),
    # models/qwen3.py Qwen3Attention: head_dim (Qwen3Config default 128, not hidden / heads),
    # num_key_value_heads (default 32). Also the text model of qwen3_vl.
    "qwen3": FamilyFields(source="models/qwen3.py",
                          covered=_fields(_BASE, _GQA, _QWEN_WINDOWS),
                          defaults={"num_key_value_heads": 32, "head_dim": 128}),
    # models/qwen3_moe.py Qwen3MoeAttention: head_dim or hidden / heads (Qwen3MoeConfig has
    # none), num_key_value_heads (default 4). Also the text model of qwen3_vl_moe.
    "qwen3_moe": FamilyFields(source="models/qwen3_moe.py",
                              covered=_fields(_BASE, _GQA, _QWEN_WINDOWS, _WEIGHTS),
                              defaults={"num_key_value_heads": 4}),
    # models/minicpm.py, models/orion.py: head_dim = hidden / heads (head_dim unread),
    # num_key_value_heads, no per-layer window (CacheConfig's window on every layer).
    "minicpm": FamilyFields(source="models/minicpm.py",
                            covered=_fields(_BASE, ("num_key_value_heads", "head_dim"),
                                            _TEXT_WINDOW)),
    "orion": FamilyFields(source="models/orion.py",
                          covered=_fields(_BASE, ("num_key_value_heads", "head_dim"),
                                          _TEXT_WINDOW)),
    # models/minicpm3.py MiniCPM3Attention: MLA from kv_lora_rank, q_lora_rank,
    # qk_nope_head_dim, qk_rope_head_dim, v_head_dim; num_key_value_heads and head_dim unread.
    "minicpm3": FamilyFields(source="models/minicpm3.py",
                             covered=_fields(_BASE, _MLA, ("num_key_value_heads", "head_dim",
                                                           # MiniCPM3Config's nope + rope
                                                           "qk_head_dim"))),
    # models/nemotron.py NemotronAttention: num_key_value_heads, head_dim or hidden / heads, no
    # per-layer window. NemotronConfig leaves num_key_value_heads null when absent, and vLLM
    # 0.32 then fails its ModelConfig validation (transformers' default NemotronConfig, run).
    "nemotron": FamilyFields(source="models/nemotron.py", required=("num_key_value_heads",),
                             covered=_fields(_BASE, _GQA, _TEXT_WINDOW,
                                             # Megatron's name; nemotron.py reads head_dim.
                                             ("kv_channels",))),
    # models/phimoe.py PhiMoEAttention: num_key_value_heads, head_dim or hidden / heads, no
    # per-layer window.
    "phimoe": FamilyFields(source="models/phimoe.py",
                           covered=_fields(_BASE, _GQA, _TEXT_WINDOW, ("lm_head_bias",),
                                           _WEIGHTS)),
    # models/olmoe.py, models/stablelm.py: head_dim = hidden / heads, num_key_value_heads, no
    # window.
    "olmoe": FamilyFields(source="models/olmoe.py",
                          covered=_fields(_BASE, ("num_key_value_heads", "head_dim",
                                                  "clip_qkv"), _WEIGHTS)),
    "stablelm": FamilyFields(source="models/stablelm.py",
                             covered=_fields(_BASE, ("num_key_value_heads", "head_dim"),
                                             _WEIGHTS)),
    # models/minimax_m2.py MiniMaxM2Attention: head_dim (MiniMaxM2Config default 128),
    # num_key_value_heads (default 8); no window; MTP modules only for speculative decoding.
    "minimax_m2": FamilyFields(source="models/minimax_m2.py",
                               covered=_fields(_BASE, _GQA, _WEIGHTS, _MTP, (
                                   "num_mtp_modules", "mtp_transformer_layers", "use_mtp",
                                   # MiniMax-M1's lightning-attention switch per layer;
                                   # minimax_m2.py never reads it (every layer full).
                                   "attn_type_list")),
                               defaults={"num_key_value_heads": 8, "head_dim": 128}),
    # models/opt.py OPTAttention: one KV head per query head of hidden / heads; no window.
    "opt": FamilyFields(source="models/opt.py",
                        covered=_fields(_BASE, ("do_layer_norm_before", "layerdrop",
                                                "layer_norm_elementwise_affine"))),
    # Served by the Transformers backend (models/transformers/base.py): KV heads and head size
    # from ModelConfig (model_arch_config_convertor.py get_total_num_kv_heads: n_head_kv,
    # num_kv_heads, num_key_value_heads, the first present -- the aliases are refused here;
    # get_head_size: head_dim, else hidden_size_per_head, else hidden / heads), a window on
    # layer_types' sliding layers. SeedOssConfig defaults num_key_value_heads 8 and head_dim
    # 128 (not hidden / heads).
    "olmo": FamilyFields(source="models/transformers/base.py (OlmoConfig)",
                         covered=_fields(_BASE, _GQA, _WINDOWS, ("clip_qkv",))),
    "olmo3": FamilyFields(source="models/transformers/base.py (Olmo3Config)",
                          covered=_fields(_BASE, _GQA, _WINDOWS)),
    "seed_oss": FamilyFields(source="models/transformers/base.py (SeedOssConfig)",
                             covered=_fields(_BASE, _GQA, _WINDOWS, ("attention_out_bias",)),
                             defaults={"num_key_value_heads": 8, "head_dim": 128}),
    "smollm3": FamilyFields(source="models/transformers/base.py (SmolLM3Config)",
                            covered=_fields(_BASE, _GQA, _WINDOWS, (
                                "use_sliding_window", "no_rope_layers",
                                "no_rope_layer_interval"))),
    # Olmo2, Phi, Starcoder2: the Transformers backend as above; kvplan reads them through
    # kvplan.sources.hf_text (use_sliding_window unread by either).
    "olmo2": FamilyFields(source="models/transformers/base.py (Olmo2Config)",
                          covered=_fields(_BASE, _GQA, _WINDOWS, _TEXT_WINDOW)),
    "phi": FamilyFields(source="models/transformers/base.py (PhiConfig)",
                        covered=_fields(_BASE, _GQA, _WINDOWS, _TEXT_WINDOW)),
    "starcoder2": FamilyFields(source="models/transformers/base.py (Starcoder2Config)",
                               covered=_fields(_BASE, _GQA, _WINDOWS, _TEXT_WINDOW)),
    "vaultgemma": FamilyFields(source="models/transformers/base.py (VaultGemmaConfig)",
                               covered=_fields(_BASE, _GQA, _WINDOWS, _TEXT_WINDOW)),
    # models/qwen3_next.py, qwen3_5.py: attention layers of num_key_value_heads x head_dim on
    # layer_types' full layers (the config class builds them from full_attention_interval),
    # gated delta-net states from linear_*; no window (use_sliding_window unread; a
    # sliding_window is refused). MTP layers only for speculative decoding.
    "qwen3_next": FamilyFields(source="models/qwen3_next.py",
                               covered=_fields(_BASE, _GQA, _HYBRID_LINEAR, _WEIGHTS, _MTP,
                                               ("use_sliding_window",)),
                               defaults={"num_key_value_heads": 2, **_QWEN_LINEAR_DEFAULTS}),
    "qwen3_5": FamilyFields(source="models/qwen3_5.py",
                            covered=_fields(_BASE, _GQA, _HYBRID_LINEAR, _WEIGHTS, _MTP),
                            defaults={"num_key_value_heads": 4, **_QWEN_LINEAR_DEFAULTS},
                            config_class="qwen3_5_text"),
    "qwen3_5_moe": FamilyFields(source="models/qwen3_5.py",
                                covered=_fields(_BASE, _GQA, _HYBRID_LINEAR, _WEIGHTS, _MTP),
                                defaults={"num_key_value_heads": 2, **_QWEN_LINEAR_DEFAULTS},
                                config_class="qwen3_5_moe_text"),
    # models/olmo_hybrid.py: head size hidden / heads (head_dim unread), num_key_value_heads,
    # gated delta-net layers from layer_types and linear_*.
    "olmo_hybrid": FamilyFields(source="models/olmo_hybrid.py", head_dim_is_hidden=True,
                                covered=_fields(_BASE, _GQA, _HYBRID_LINEAR, (
                                    # the delta rule's sign, A_log and dt ranges (compute)
                                    "linear_allow_neg_eigval", "linear_a_log_min",
                                    "linear_a_log_max", "linear_dt_min", "linear_dt_max",
                                    "linear_dt_init_floor"))),
    # models/nemotron_h.py: attention layers of num_key_value_heads x head_dim where
    # hybrid_override_pattern says "*", Mamba-2 states from ssm_state_size, mamba_num_heads,
    # mamba_head_dim, n_groups, conv_kernel. NemotronHAttention passes config.sliding_window as
    # every attention layer's window, which kvplan does not read: refused when set.
    "nemotron_h": FamilyFields(source="models/nemotron_h.py",
                               covered=_fields(_BASE, _GQA, _WEIGHTS, _MTP, (
                                   "hybrid_override_pattern", "ssm_state_size",
                                   "mamba_num_heads", "mamba_head_dim", "n_groups",
                                   "conv_kernel", "chunk_size", "use_conv_bias",
                                   "mamba_hidden_act", "mamba_proj_bias", "use_mamba_kernels",
                                   "mamba_ssm_cache_dtype", "moe_shared_expert_intermediate_size",
                                   "moe_latent_size", "moe_shared_expert_overlap",
                                   "mtp_hybrid_override_pattern", "mtp_layers_block_type")),
                               defaults={"num_key_value_heads": 8, "head_dim": 128}),
    # models/llama4.py Llama4Attention: num_key_value_heads x config.head_dim; chunked local
    # attention over attention_chunk_size on the layers no_rope_layers marks 1 (RoPE), global
    # on the others (kvplan.sources.hf_hybrid._llama4). layer_types is read by neither.
    # Llama4TextConfig defaults head_dim 128, num_key_value_heads 8, attention_chunk_size 8192.
    "llama4": FamilyFields(source="models/llama4.py",
                           covered=_fields(_BASE, _GQA, _WEIGHTS, (
                               "attention_chunk_size", "no_rope_layers", "no_rope_layer_interval",
                               "layer_types", "attn_scale", "attn_temperature_tuning",
                               "moe_layers", "for_llm_compressor")),
                           defaults={"num_key_value_heads": 8, "head_dim": 128,
                                     "attention_chunk_size": 8192},
                           config_class="llama4_text"),
    # models/lfm2.py, lfm2_moe.py: attention layers of num_key_value_heads x hidden / heads
    # (head_dim unread) where layer_types says full_attention (Lfm2Config builds them from
    # full_attn_idxs), short-conv states of conv_L_cache (kvplan.sources.hf_hybrid._lfm2);
    # block_* and conv_* the rest are the MLP's and the conv's weights.
    "lfm2": FamilyFields(source="models/lfm2.py", head_dim_is_hidden=True,
                         covered=_fields(_BASE, ("num_key_value_heads", "head_dim", "num_heads",
                                                 "layer_types", "full_attn_idxs",
                                                 "conv_L_cache", "conv_bias", "conv_dim",
                                                 "conv_dim_out", "conv_use_xavier_init",
                                                 "block_auto_adjust_ff_dim", "block_dim",
                                                 "block_ff_dim", "block_ffn_dim_multiplier",
                                                 "block_multiple_of", "block_norm_eps",
                                                 "block_mlp_init_scale", "block_out_init_scale",
                                                 "block_use_swiglu", "block_use_xavier_init"))),
    "lfm2_moe": FamilyFields(source="models/lfm2_moe.py", head_dim_is_hidden=True,
                             covered=_fields(_BASE, _WEIGHTS, (
                                 "num_key_value_heads", "head_dim", "layer_types",
                                 "conv_L_cache", "conv_bias", "num_dense_layers"))),
    # models/zamba2.py (kvplan.sources.hf_hybrid._zamba2): one MHA cache of
    # num_attention_heads x attention_head_dim per "hybrid" layer of layers_block_type (KV
    # heads and num_key_value_heads unread; hybrid_layer_ids rebuilt from layers_block_type
    # by Zamba2Config), Mamba-2 states from the mamba_* fields; adapters and the shared
    # blocks' count are weights.
    "zamba2": FamilyFields(source="models/zamba2.py",
                           covered=_fields(_BASE, (
                               "num_key_value_heads", "attention_head_dim",
                               "attention_hidden_size", "layers_block_type", "hybrid_layer_ids",
                               "mamba_d_conv", "mamba_d_state", "mamba_expand", "mamba_headdim",
                               "mamba_ngroups", "n_mamba_heads", "chunk_size", "use_conv_bias",
                               "add_bias_linear", "num_mem_blocks", "use_mem_rope",
                               "use_shared_attention_adapter", "adapter_rank", "kv_channels",
                               "num_query_groups", "use_mamba_kernels", "use_mem_eff_path",
                               # Zamba2Config's alias of layers_block_type, read as such
                               # (its other alias, head_dim -> attention_head_dim, is not:
                               # refused).
                               "layer_types"))),
    # models/mamba.py, mamba2.py: no attention; states from state_size and conv_kernel (Mamba-2:
    # num_heads x head_dim, n_groups); chunk_size is the scan's (compute only).
    "mamba": FamilyFields(source="models/mamba.py",
                          covered=_fields(_BASE, ("state_size", "conv_kernel", "use_conv_bias",
                                                  "use_mambapy", "n_layer"))),
    "mamba2": FamilyFields(source="models/mamba2.py",
                           covered=_fields(_BASE, ("state_size", "conv_kernel", "use_conv_bias",
                                                   "num_heads", "head_dim", "n_groups",
                                                   "chunk_size"))),
}


# Fields kvplan's readers take as present even when null (hf_families._windows tests
# `"use_sliding_window" in config`): a null there is not the same as absent.
_NULL_IS_READ = frozenset({"use_sliding_window"})


def fill_class_defaults(data: dict, model_type: str, warnings: list[str]) -> dict:
    """`data` with the family's config-class defaults of cache fields config.json leaves out
    (each said in a warning). A wrapper's text sub-config (Mistral-3's MistralConfig) is filled
    too, unless it named another class (qwen2_5_vl_text is not Qwen2Config) or stated the field
    as null (the unwrapping records those in `_null_keys`, having dropped them)."""
    family = FAMILY_FIELDS.get(model_type)
    if family is None or data.get("model_type", model_type) != (
            family.config_class or model_type):
        return data
    nulls = data.get("_null_keys", ())
    used = {k: v for k, v in family.defaults.items() if k not in data and k not in nulls}
    if not used:
        return data
    warnings.append(f"not in config.json, taken from the {model_type} config class's defaults "
                    "as vLLM loads them: " + ", ".join(f"{k} {v}" for k, v in used.items()))
    return {**data, **used}


def check_family_fields(data: Mapping[str, Any], path: str, model_type: str) -> None:
    """Refuse a field that may shape the cache (by its name) which the family's reader does not
    cover (`FAMILY_FIELDS`); one line naming the file, the field and the vLLM file."""
    family = FAMILY_FIELDS.get(model_type)
    if family is None:
        return
    for key in family.required:
        if data.get(key) is None:
            raise SpecError(path, key, f"missing: the {model_type} config class leaves it null "
                                       "and vLLM 0.32 does not load the model without it")
    head_dim, hidden, heads = (data.get(k) for k in ("head_dim", "hidden_size",
                                                     "num_attention_heads"))
    if family.head_dim_is_hidden and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                         for v in (head_dim, hidden, heads)) and (
            head_dim * heads != hidden):
        raise SpecError(path, "head_dim", f"{head_dim} is not hidden_size / num_attention_heads "
                                          f"({hidden} / {heads}): {family.source} sizes its "
                                          "attention by the quotient while vLLM pads the "
                                          "recurrent state pages by head_dim; refused")
    for key, value in data.items():
        name = str(key)
        if name.startswith("_") or name in family.covered or name in IGNORED:
            continue
        if value is None and name not in _NULL_IS_READ:
            continue  # unset, as vLLM's getattr(config, name, None) reads it
        lower = name.lower()
        if any(word in lower for word in CACHE_WORDS):
            raise SpecError(path, name, f"not read by kvplan for model_type {model_type!r} "
                                        f"({family.source}), and it may change the cache; "
                                        "refused rather than guessed")
