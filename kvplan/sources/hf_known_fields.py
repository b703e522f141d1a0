"""Fail closed on a config.json of a *known* family that carries a field kvplan's reader of that
family does not read and that may shape the cache (issue 26: exact or refused, never a guess).

kvplan.sources.hf_unknown scans the configs of unknown ``model_type`` s; a known family was read
field by field and anything else in the file went unseen, so a real sibling checkpoint with,
say, ``n_head_kv`` on Falcon (vLLM's falcon.py reads only num_kv_heads) or ``head_dim`` on Jamba
(vLLM's jamba.py takes hidden_size / heads) would have been sized silently wrong. Here each
family declares the fields, among those whose names carry a cache word
(`kvplan.sources.hf_unknown.CACHE_WORDS`), that its reader covers: read as vLLM 0.32 reads them,
or shown to change no cache size in vLLM's model file and config class (the reason is the
entry). Fields of `kvplan.sources.hf_unknown.IGNORED` hold for every family. Any other cache-word
field, or a covered field holding a value outside the one kvplan assumes, is refused with one
line naming the file and the field. Families not in `FAMILY_FIELDS` are not scanned here.

`CLASS_DEFAULTS`: what the family's transformers config class holds for a cache field that
config.json leaves out (vLLM loads the class, so it sizes that default).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kvplan._util.errors import SpecError
from kvplan.model.spec import FULL, SLIDING
from kvplan.sources.hf_unknown import CACHE_WORDS, IGNORED


@dataclass(frozen=True)
class Covered:
    """A field a family's reader covers: why, and (optionally) which values it covers."""

    why: str
    accepts: Callable[[Any], bool] | None = None  # None: every value
    expected: str = ""  # what `accepts` takes, said in the refusal


def only(*values: Any, why: str) -> Covered:
    """Covered only with one of `values` (booleans matched as booleans)."""
    def accepts(value: Any) -> bool:
        return any(value is v if isinstance(v, bool) or v is None else (
            value == v and not isinstance(value, bool)) for v in values)
    return Covered(why, accepts, " or ".join(repr(v) for v in values))


def _unmixed(value: Any) -> bool:
    return not (isinstance(value, list) and SLIDING in value and any(t != SLIDING for t in value))


# vLLM 0.32 engine/arg_utils.py create_engine_config keeps CacheConfig.sliding_window only when
# layer_types is absent or all sliding, and layers/attention/attention.py gives a layer the cache
# config's window when the model code passes no per-layer one. A family whose model code passes
# none slides every layer then, or none once layer_types mixes: the latter is refused, as
# kvplan.sources.hf_text.check_layer_types refuses it for its table's families.
_WINDOW_EVERY_LAYER = {
    "sliding_window": Covered("read: on every layer (the model code passes no per-layer window; "
                              "CacheConfig's window applies)"),
    "layer_types": Covered("the model code reads no layer_types: with sliding and full layers "
                           "CacheConfig keeps no window and vLLM slides no layer",
                           _unmixed, "all sliding or all full"),
}
# The model code reads layer_types and gives sliding_attention layers config.sliding_window.
_WINDOW_PER_LAYER = {
    "sliding_window": Covered("read: the window of layer_types' sliding layers"),
    "layer_types": Covered("read: which layers slide"),
}
_KV = {"num_key_value_heads": Covered("read: KV heads"), "head_dim": Covered("read: head size")}
# head size hidden_size / num_attention_heads in vLLM's code and in kvplan's reader alike.
_HEAD_DIM_UNREAD = {"head_dim": Covered("not read by vLLM's model code (hidden / heads), nor by "
                                        "kvplan's reader")}
_MLA = {k: Covered("read: MLA latent row") for k in (
    "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")} | {
    "qk_head_dim": Covered("qk_nope_head_dim + qk_rope_head_dim (the config class derives it)"),
    "rope_interleave": Covered("rotary layout (no cache size)"),
    "num_key_value_heads": Covered("not read for an MLA cache (one latent row per token)"),
    "head_dim": Covered("not read for an MLA cache (kv_lora_rank + qk_rope_head_dim)"),
    "sliding_window": Covered("not passed to MLAAttention by the model code (no window)"),
    "mlp_layer_types": Covered("dense versus MoE MLP (weights only)"),
}
_NO_WINDOW_HYBRID = {
    "sliding_window": only(None, why="a window on this hybrid's attention layers is not "
                                     "modelled"),
}
_MAMBA = {k: Covered("read: Mamba state") for k in (
    "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_d_head", "mamba_n_heads",
    "mamba_n_groups", "mamba_d_ssm")} | {k: Covered("Mamba weights or compute only") for k in (
        "mamba_conv_bias", "mamba_proj_bias", "mamba_chunk_size", "mamba_dt_rank",
        "mamba_norm_before_gate", "mamba_rms_norm", "mamba_use_mlp", "use_mamba_kernels",
        "use_mambapy")}
_GPT2 = {"attn_pdrop": Covered("training-time dropout"),
         "scale_attn_weights": Covered("a scalar on the attention scores")}
_NOT_BIDIRECTIONAL = {"use_bidirectional_attention": only(None, False, why="causal decoder")}


def _why(text: str, *fields: str) -> dict[str, Covered]:
    return {f: Covered(text) for f in fields}


# model_type (as kvplan names the family after unwrapping) -> covered cache-word fields.
# Every family also covers num_hidden_layers, num_attention_heads and their GPT-2 names.
FAMILY_FIELDS: dict[str, Mapping[str, Covered]] = {
    # models/apertus.py ApertusAttention: num_key_value_heads, head_dim, layer_types' windows.
    "apertus": _KV | _WINDOW_PER_LAYER,
    # Transformers backend (models/transformers/base.py): config num_key_value_heads, head_dim,
    # per-layer windows from layer_types.
    "arcee": _KV | _WINDOW_PER_LAYER,
    "cwm": _KV | _WINDOW_PER_LAYER,
    "glm": _KV | _WINDOW_PER_LAYER,
    "hunyuan_v1_dense": _KV | _WINDOW_PER_LAYER | _why(
        "not read by HunYuanDenseV1Config nor the backend (no KV shared across layers)",
        "attention_head_dim", "cla_share_factor", "use_cla") | _why(
        "a classification head (weights only)", "add_classification_head"),
    # models/bloom.py: MHA of hidden / n_head whatever the config says.
    "bloom": _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | {
        "num_key_value_heads": Covered("not read (BloomAttention is MHA)")} | _why(
        "weights or compute only", "apply_residual_connection_post_layernorm",
        "attention_softmax_in_fp32", "skip_bias_add", "skip_bias_add_qkv"),
    # models/chatglm.py GLMAttention: multi_query_group_num KV heads when multi_query_attention,
    # head size hidden / heads (kv_channels unread for the cache).
    "chatglm": _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | _why(
        "read: KV heads", "multi_query_attention", "multi_query_group_num") | {
        "num_key_value_heads": Covered("not read by chatglm.py (multi_query_group_num is)"),
        "kv_channels": Covered("not read for the cache (head size hidden / heads)")} | _why(
        "weights or compute only", "add_bias_linear", "add_qkv_bias",
        "apply_query_key_layer_scaling", "apply_residual_connection_post_layernorm",
        "attention_softmax_in_fp32", "post_layer_norm", "fp32_residual_connection"),
    # models/commandr.py, v1 (CohereConfig): no per-layer window.
    "cohere": _KV | _WINDOW_EVERY_LAYER,
    # models/commandr.py, v2: layer_types' sliding layers take sliding_window + 1; the
    # Cohere2Config builds layer_types from sliding_window_pattern.
    "cohere2": _KV | _WINDOW_PER_LAYER | {
        "sliding_window_pattern": Covered("read: layer_types when absent")} | _why(
        "not read by Cohere2Config nor commandr.py", "layer_switch",
        "order_of_interleaved_layers", "use_parallel_block"),
    # models/dbrx.py: attn_config.kv_n_heads (hf_config._dbrx_fields), head size d_model / n_heads.
    "dbrx": _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | {
        "attn_config": Covered("read: kv_n_heads (clip_qkv, rope_theta: no cache size)"),
        "n_heads": Covered("read: query heads"), "n_layers": Covered("read: layers"),
        "num_key_value_heads": Covered("set from attn_config.kv_n_heads")},
    # models/nemotron_nas.py: every layer's shape from block_configs.
    # (head size: config.head_dim or hidden / heads, as LlamaAttention takes it.)
    "nemotron-nas": {"block_configs": Covered("read: each layer's attention and FFN"),
                     "head_dim": Covered("read: head size"),
                     "num_key_value_heads": only(None, why="each layer's KV heads come from "
                                                           "block_configs")},
    # models/deepseek_v2.py DeepseekAttention (model_type deepseek): MHA/GQA of hidden / heads.
    "deepseek": _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | {
        "num_key_value_heads": Covered("read: KV heads")},
    "deepseek_v2": _MLA,
    "deepseek_v3": _MLA,
    "kimi_k2": _MLA,
    # DeepSeek-V3.2: the indexer's own cache (kvplan.sources.hf_config reads index_*).
    "deepseek_v32": _MLA | _why("read: the indexer cache", "index_head_dim", "index_n_heads",
                                "index_topk") | _why("rotary layout (no cache size)",
                                                     "indexer_rope_interleave"),
    "glm4_moe_lite": _MLA,
    # models/ernie45.py is models/llama.py (layer_types' windows).
    "ernie4_5": _KV | _WINDOW_PER_LAYER,
    # models/ernie45_moe.py: no per-layer window.
    "ernie4_5_moe": _KV | _WINDOW_EVERY_LAYER | _why(
        "which layers are MoE, shared experts (weights only)", "moe_layer_start_index",
        "moe_layer_end_index", "moe_layer_interval", "moe_num_shared_experts"),
    # models/exaone4.py: layer_types' windows; Exaone4Config builds them from the pattern.
    "exaone4": _KV | _WINDOW_PER_LAYER | {
        "sliding_window_pattern": Covered("read: layer_types when absent")},
    # models/exaone.py ExaoneBlockAttention: head_dim or hidden / heads, no per-layer window.
    "exaone": _KV | _WINDOW_EVERY_LAYER,
    # models/falcon.py: num_kv_heads (new_decoder_architecture) or multi_query, head size hidden
    # / heads; a config's n_head_kv is not read by FalconConfig (model_type falcon).
    "falcon": _WINDOW_EVERY_LAYER | _why("read: KV heads", "num_kv_heads", "multi_query") | _why(
        "weights or compute only", "parallel_attn", "num_ln_in_parallel_attn",
        "apply_residual_connection_post_layernorm"),
    # models/falcon_h1.py: attention and Mamba2 on every layer (attn_layer_indices unread).
    "falcon_h1": _KV | _MAMBA | _NO_WINDOW_HYBRID | {
        "attn_layer_indices": Covered("not read by falcon_h1.py (every layer has both)")} | _why(
        "a scalar multiplier (no cache size)", "attention_in_multiplier",
        "attention_out_multiplier", "ssm_in_multiplier", "ssm_multipliers",
        "ssm_out_multiplier", "lm_head_multiplier", "key_multiplier"),
    # models/mamba.py: the Mamba1 state.
    "falcon_mamba": _why("read: Mamba state", "state_size", "conv_kernel") | _why(
        "weights or compute only", "use_conv_bias", "use_mambapy", "use_falcon_mambapy"),
    # models/gpt2.py: MHA of hidden / n_head (head_dim not covered: kvplan's reader would take
    # it).
    "gpt2": _WINDOW_EVERY_LAYER | _GPT2 | _why(
        "a scalar or dtype of the attention scores", "reorder_and_upcast_attn",
        "scale_attn_by_inverse_layer_idx"),
    # Transformers backend; GPTBigCodeConfig: one KV head when multi_query.
    "gpt_bigcode": _WINDOW_PER_LAYER | _GPT2 | {
        "multi_query": Covered("read: KV heads"),
        "num_key_value_heads": Covered("overwritten by GPTBigCodeConfig from multi_query")} | _why(
        "the dtype of the attention scores", "attention_softmax_in_fp32",
        "scale_attention_softmax_in_fp32"),
    # models/gpt_j.py: MHA of hidden / n_head.
    "gptj": _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | _GPT2,
    # models/gpt_neox.py: MHA of hidden / heads (head_dim not covered: kvplan's reader would
    # take it).
    "gpt_neox": _WINDOW_EVERY_LAYER,
    # models/gemma.py: num_key_value_heads, head_dim; no per-layer window.
    "gemma": _KV | _WINDOW_EVERY_LAYER | _NOT_BIDIRECTIONAL,
    # models/gemma2.py: layer_types' windows (Gemma2Config builds them, alternating).
    "gemma2": _KV | _WINDOW_PER_LAYER | _NOT_BIDIRECTIONAL | {
        "sliding_window_size": Covered("not read by Gemma2Config nor gemma2.py "
                                       "(sliding_window is)")},
    # models/gemma3.py: layer_types' windows (Gemma3TextConfig builds them from the pattern).
    "gemma3": _KV | _WINDOW_PER_LAYER | _NOT_BIDIRECTIONAL | {
        "sliding_window_pattern": Covered("read: layer_types when absent")} | _why(
        "a special token's id", "boi_token_index", "eoi_token_index", "image_token_index"),
    "gemma3_text": _KV | _WINDOW_PER_LAYER | _NOT_BIDIRECTIONAL | {
        "sliding_window_pattern": Covered("read: layer_types when absent")},
    # models/gemma3n.py: layer_types' windows, the last num_kv_shared_layers share KV.
    "gemma3n": _KV | _WINDOW_PER_LAYER | {
        "num_kv_shared_layers": Covered("read: cross-layer KV sharing")} | _why(
        "weights or compute only", "activation_sparsity_pattern", "hidden_size_per_layer_input",
        "vocab_size_per_layer_input"),
    # models/gemma4.py: sliding and global layer shapes, KV sharing.
    "gemma4": _KV | _WINDOW_PER_LAYER | _why(
        "read: the global layers' shape", "global_head_dim", "num_global_key_value_heads",
        "attention_k_eq_v") | {
        "num_kv_shared_layers": Covered("read: cross-layer KV sharing"),
        "use_bidirectional_attention": Covered("read: 'all' refused; 'vision' touches image "
                                               "tokens only")} | _why(
        "weights or compute only", "enable_moe_block", "hidden_size_per_layer_input",
        "vocab_size_per_layer_input"),
    # models/glm4.py and glm4_moe.py: no per-layer window.
    "glm4": _KV | _WINDOW_EVERY_LAYER,
    "glm4_moe": _KV | _WINDOW_EVERY_LAYER,
    # models/gpt_oss.py: even layers take sliding_window whatever layer_types says
    # (kvplan.sources.hf_families._gpt_oss_windows).
    "gpt_oss": _KV | _why("read: as gpt_oss.py places the windows", "sliding_window",
                          "layer_types"),
    # models/granite.py, granitemoe.py (granite_layer_attn_params): layer_types' windows.
    "granite": _KV | _WINDOW_PER_LAYER | _why(
        "a rotary base or sink logits (no cache size)", "layer_rope_theta", "attention_sinks"),
    "granitemoe": _HEAD_DIM_UNREAD | _WINDOW_PER_LAYER | {
        "num_key_value_heads": Covered("read: KV heads")} | _why(
        "a rotary base or sink logits (no cache size)", "layer_rope_theta", "attention_sinks"),
    # models/granitemoehybrid.py: attention of hidden / heads (head_dim not covered: kvplan's
    # reader would take it), Mamba2 layers from layer_types.
    "granitemoehybrid": _MAMBA | _NO_WINDOW_HYBRID | {
        "num_key_value_heads": Covered("read: KV heads"),
        "layer_types": Covered("read: mamba or attention")},
    # models/internlm2.py: hidden / heads, no per-layer window.
    "internlm2": _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | {
        "num_key_value_heads": Covered("read: KV heads"),
        "attn_implementation": Covered("transformers' kernel choice")},
    # InternLM3ForCausalLM: models/llama.py.
    "internlm3": _KV | _WINDOW_PER_LAYER | {"qkv_bias": Covered("biases (weights only)")},
    # models/jamba.py: attention of hidden / heads every attn_layer_period-th layer from
    # attn_layer_offset (head_dim not covered: kvplan's reader would take it).
    "jamba": _MAMBA | _NO_WINDOW_HYBRID | _why(
        "read: which layers are attention", "attn_layer_offset", "attn_layer_period") | {
        "num_key_value_heads": Covered("read: KV heads")} | _why(
        "which layers are MoE (weights only)", "expert_layer_offset", "expert_layer_period"),
    # models/kimi_linear.py: MLA full layers, KDA layers from linear_attn_config.
    "kimi_linear": _MLA | {
        "linear_attn_config": Covered("read: KDA layers and state"),
        "mla_use_nope": Covered("rotary use of the MLA layers (the oracle case kimi-linear-48b-a3b "
                                "has it true: the latent row is unchanged)")} | _why(
        "MoE routing (compute only)", "num_expert_group", "use_grouped_topk"),
}

_BASE = frozenset({"num_hidden_layers", "num_attention_heads", "n_layer", "n_head",
                   "num_layers"})
# transformers' PretrainedConfig fields every config.json may carry: no cache size.
_COMMON: dict[str, Covered] = _why(
    "transformers' forward-pass output flags", "output_attentions", "output_hidden_states") | _why(
    "transformers' feed-forward chunking (compute only)", "chunk_size_feed_forward") | {
    "attention_bias": Covered("biases (weights only)"),
    "num_nextn_predict_layers": Covered("read: MTP layers, for every family "
                                        "(kvplan.sources.hf_families.mtp_layers)"),
    "add_cross_attention": only(False, why="a decoder without cross-attention")}


def check_family_fields(data: Mapping[str, Any], path: str, model_type: str) -> None:
    """Refuse a cache-word field of a `FAMILY_FIELDS` family that its reader does not cover,
    or a covered field holding a value it does not cover (one line: file, field, why)."""
    covered = FAMILY_FIELDS.get(model_type)
    if covered is None:
        return
    for key, value in data.items():
        name = str(key)
        if name.startswith("_") or name in _BASE or name in IGNORED:
            continue
        rule = covered.get(name) or _COMMON.get(name)
        if rule is None:
            if any(word in name.lower() for word in CACHE_WORDS):
                raise SpecError(path, name, f"not read by kvplan's {model_type} reader, and "
                                            "it may change the cache vLLM builds; refused "
                                            "rather than guessed")
            continue
        if rule.accepts is not None and not rule.accepts(value):
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            raise SpecError(path, name, f"{shown} on {model_type}: expected {rule.expected} "
                                        f"({rule.why}); refused rather than guessed")


# Config-class defaults of cache fields for families outside kvplan.sources.hf_text's table, used
# when config.json leaves the key out (vLLM loads the class, so it sizes the default; kvplan had
# taken hidden / heads and one KV head per query head). Values as transformers 5.19's classes
# hold them (`AutoConfig.for_model(model_type)`): Gemma2Config, GemmaConfig, Gemma4TextConfig
# head_dim 256; Ernie4_5Config and Glm4Config head_dim 128; GptOssConfig head_dim 64 and
# sliding_window 128; Gemma3nTextConfig sliding_window 512 and layer_types full every fifth
# layer (`(i + 1) % 5 == 0`).
_DEEPSEEK_MLA = {"kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
                 "qk_nope_head_dim": 128, "v_head_dim": 128}
CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "ernie4_5": {"head_dim": 128, "num_key_value_heads": 2},
    "ernie4_5_moe": {"num_key_value_heads": 4},
    "falcon_h1": {"num_key_value_heads": 8},
    "gemma": {"head_dim": 256, "num_key_value_heads": 16},
    "gemma2": {"head_dim": 256, "num_key_value_heads": 4},
    "gemma3n": {"head_dim": 256, "num_key_value_heads": 2, "sliding_window": 512},
    "gemma4": {"head_dim": 256, "num_key_value_heads": 4},
    "glm4": {"head_dim": 128, "num_key_value_heads": 2},
    "gpt_oss": {"head_dim": 64, "num_key_value_heads": 8, "sliding_window": 128},
    # JambaConfig: attention every 8th layer from layer 4 (kvplan had taken offset 0).
    "jamba": {"num_key_value_heads": 8, "attn_layer_period": 8, "attn_layer_offset": 4,
              "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2},
    # DeepseekV2Config, DeepseekV3Config, DeepseekV32Config, Glm4MoeLiteConfig: MLA ranks (a
    # config.json without kv_lora_rank is still MLA in vLLM; kvplan had sized it as GQA).
    "deepseek_v2": _DEEPSEEK_MLA,
    "deepseek_v3": _DEEPSEEK_MLA,
    "deepseek_v32": _DEEPSEEK_MLA,
    "glm4_moe_lite": {"kv_lora_rank": 512, "q_lora_rank": 768, "qk_rope_head_dim": 64,
                      "qk_nope_head_dim": 192, "v_head_dim": 256},
}
_CLASS_LAYER_TYPES: dict[str, Callable[[int], str]] = {
    "gemma3n": lambda i: FULL if (i + 1) % 5 == 0 else SLIDING,
}


def fill_class_defaults(data: dict, model_type: str, warnings: list[str]) -> dict:
    """`data` with the `CLASS_DEFAULTS` of its family for the keys config.json leaves out (an
    explicit null stays null, as the class keeps it), each default said in a warning."""
    defaults = CLASS_DEFAULTS.get(model_type, {})
    used = [f"{k} {v}" for k, v in defaults.items() if k not in data]
    data = {**defaults, **data} if used else data
    build = _CLASS_LAYER_TYPES.get(model_type)
    layers = data.get("num_hidden_layers")
    if (build is not None and data.get("layer_types") is None and isinstance(layers, int)
            and not isinstance(layers, bool) and 0 < layers <= 4096):
        data = {**data, "layer_types": [build(i) for i in range(layers)]}
        used.append("layer_types (the class's pattern)")
    if used:
        warnings.append(f"not in config.json, taken from the {model_type} config class's "
                        f"defaults: {', '.join(used)}")
    return data
