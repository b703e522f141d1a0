"""Types and shared field groups of kvplan.sources.hf_fields_table (its rows, one per
``model_type``): a covered field (`Covered`, `only`), the two audits' rules (`AK`, `LZ`), a row's
shape (`FamilyFields`) and the groups of fields several rows cover alike, each with why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kvplan.model.spec import FULL, SLIDING


@dataclass(frozen=True)
class Covered:
    """A field a family's reader covers: why, and (optionally) which values it covers."""

    why: str
    accepts: Callable[[Any], bool] | None = None  # None: every value
    expected: str = ""  # what `accepts` takes, said in the refusal
    same_as: str = ""  # covered only when equal to this field's value (after class defaults)


def only(*values: Any, why: str) -> Covered:
    """Covered only with one of `values` (booleans matched as booleans)."""
    def accepts(value: Any) -> bool:
        return any(value is v if isinstance(v, bool) or v is None else (
            value == v and not isinstance(value, bool)) for v in values)
    return Covered(why, accepts, " or ".join(repr(v) for v in values))


def _why(text: str, *fields: str) -> dict[str, Covered]:
    return {f: Covered(text) for f in fields}


@dataclass(frozen=True, kw_only=True)
class Audit:
    """The rules one audit of vLLM's registry held its families to (model_types A-K, L-Z);
    where they differ, both are kept explicit until settled (kvplan.sources.hf_fields)."""

    name: str
    # Fields covered on every family of the audit.
    common: Mapping[str, Covered]
    # An uncovered field stated null is unset (vLLM's getattr(config, name, None)), not refused;
    # `null_is_read` fields excepted (hf_families._windows tests `"use_sliding_window" in
    # config`: a null there is not the same as absent).
    skips_null: bool
    null_is_read: frozenset[str] = frozenset()
    # The refusal of an unread field, formatted with model_type and the row's source.
    unread: str
    # Class defaults: only when config.json's model_type is the row's config class (else any
    # model_type kvplan reads as the family), a wrapper text sub-config's stated nulls kept
    # (`_null_keys`; else filled), and the warning's words after "defaults".
    same_class_only: bool
    keeps_stated_nulls: bool
    fill_words: str


# Every decoder's layer and head counts; transformers' PretrainedConfig's own fields (a
# config.json written with to_dict carries them; no model code sizes a cache from them).
_COUNTS = _why("read: layers and heads", "num_hidden_layers", "num_attention_heads")
_OUTPUTS = _why("transformers' forward-pass output flags", "output_attentions",
                "output_hidden_states") | _why(
    "transformers' feed-forward chunking (compute only)", "chunk_size_feed_forward") | {
    "attention_bias": Covered("biases (weights only)")} | _why(
    # UbiquitousLearning/mllm's on-device export keys (its QNN KV length and linear kernels;
    # blind batch 15): no code under vLLM 0.32's vllm/ reads any of them, nor does a
    # transformers 5.19 config class, so vLLM sizes the cache from the standard fields.
    "mllm's export keys, read by no vLLM 0.32 code", "max_cache_length", "linear_impl_type",
    "linear_block_size")
# MTP layers: kvplan.sources.hf_families.mtp_layers reads them for every family, and sizes them
# only with --speculative-method mtp (vLLM builds them only for MTP speculative decoding).
_MTP_LAYERS = {"num_nextn_predict_layers": Covered("read: MTP layers, for every family "
                                            "(kvplan.sources.hf_families.mtp_layers)")}
# transformers' add_cross_attention (to_dict writes it, false): a decoder without
# cross-attention; true is refused (vLLM's decoders build none; gpt2.py asserts it false).
_NO_CROSS = {"add_cross_attention": only(False, why="a decoder without cross-attention")}
# Other names of the counts, only where the config class takes them (attribute_map of GPT-2,
# GPT-J, GPTBigCode, BLOOM; remote ChatGLM / EXAONE 3 num_layers): elsewhere vLLM ignores them.
_LAYER_NAMES = _why("read: the counts under the config class's names", "n_layer", "n_head")
_NUM_LAYERS = _why("read: the layer count under the remote config's name", "num_layers")
# Model types A-K (audit-ak): a stated null is refused like any value (both keep a wrapper
# text sub-config's stated null, as its config class does).
AK = Audit(
    name="A-K", skips_null=False, same_class_only=False, keeps_stated_nulls=True,
    fill_words="", common=_COUNTS | _OUTPUTS | _MTP_LAYERS | _NO_CROSS,
    unread="not read by kvplan's {model_type} reader, and it may change the cache vLLM builds; "
           "refused rather than guessed")
# Model types L-Z (audit-lz): a stated null is unset.
LZ = Audit(
    name="L-Z", skips_null=True, null_is_read=frozenset({"use_sliding_window"}),
    same_class_only=True, keeps_stated_nulls=True, fill_words=" as vLLM loads them",
    common=_COUNTS | _OUTPUTS | _MTP_LAYERS | _NO_CROSS,
    unread="not read by kvplan for model_type {model_type!r} ({source}), and it may change the "
           "cache; refused rather than guessed")


@dataclass(frozen=True, kw_only=True)
class FamilyFields:
    """One family's covered cache fields (see kvplan.sources.hf_fields)."""

    source: str  # the vLLM 0.32 model file whose reads the row follows
    covered: Mapping[str, Covered]  # besides `audit.common`
    audit: Audit
    # The model_type of the config class whose defaults (hf_defaults.field_defaults) apply,
    # when not the row's own (a text model_type kvplan reads under its wrapper family's name).
    config_class: str | None = None
    # Defaults of the class the other readers fill too, filled here for a top-level config.
    shared_defaults: tuple[str, ...] = ()
    # The class's layer_types when config.json has none (layer index -> kind).
    default_layer_types: Callable[[int], str] | None = None
    # A hybrid whose attention layers take hidden / heads while vLLM's page-size unification
    # (0.32 platforms/interface.py, the "Padding mamba page size" step) takes
    # ModelConfig.get_head_size(), i.e. config.head_dim: a head_dim other than hidden / heads
    # pads the states to a page no layer has (LFM2-1.2B with head_dim 32: vLLM pads by 1500 %,
    # not 3100 %). Refused rather than modelled.
    head_dim_is_hidden: bool = False
    # Fields the config class leaves null when config.json does, which vLLM 0.32 then fails to
    # load (its ModelConfig wants an int): refused when absent or null rather than answered.
    required: tuple[str, ...] = ()


def _ak(source: str, covered: Mapping[str, Covered], **row: Any) -> FamilyFields:
    return FamilyFields(source=source, covered=covered, audit=AK, **row)


def _lz(*, covered: Mapping[str, Covered], **row: Any) -> FamilyFields:
    return FamilyFields(covered=covered, audit=LZ, **row)


_ROW_SAYS = Covered("covered: the row's comment says how its vLLM file reads it")


def _fields(*groups: tuple[str, ...] | Mapping[str, Covered]) -> dict[str, Covered]:
    """The covered fields of groups: a shared group's own reasons, else the row's comment."""
    return {name: group[name] if isinstance(group, Mapping) else _ROW_SAYS
            for group in groups for name in group}


# -- Groups of the A-K rows.

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
                           _unmixed, "all sliding or all full")}
# The model code reads layer_types and gives sliding_attention layers config.sliding_window.
_WINDOW_PER_LAYER = {"sliding_window": Covered("read: the window of layer_types' sliding layers"),
                     "layer_types": Covered("read: which layers slide")}
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
_NO_WINDOW_HYBRID = {"sliding_window": only(None, why="a window on this hybrid's attention "
                                                      "layers is not modelled")}
_MAMBA = {k: Covered("read: Mamba state") for k in (
    "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_d_head", "mamba_n_heads",
    "mamba_n_groups", "mamba_d_ssm")} | {k: Covered("Mamba weights or compute only") for k in (
        "mamba_conv_bias", "mamba_proj_bias", "mamba_chunk_size", "mamba_dt_rank",
        "mamba_norm_before_gate", "mamba_rms_norm", "mamba_use_mlp", "use_mamba_kernels",
        "use_mambapy")}
_GPT2 = {"attn_pdrop": Covered("training-time dropout"),
         "scale_attn_weights": Covered("a scalar on the attention scores")} | _LAYER_NAMES
_NOT_BIDIRECTIONAL = {"use_bidirectional_attention": only(None, False, why="causal decoder")}


def _gemma3n_layers(i: int) -> str:
    """Gemma3nTextConfig's layer_types: full every fifth layer (`(i + 1) % 5 == 0`)."""
    return FULL if (i + 1) % 5 == 0 else SLIDING


# -- Groups of the L-Z rows.

# _KV: KV heads as config.num_key_value_heads, head size config.head_dim (else hidden / heads).
# _WINDOW_PER_LAYER: a window from sliding_window, per layer from layer_types (models/llama.py
# LlamaAttention: per_layer_sliding_window from layer_types, else CacheConfig's window everywhere).
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
# MTP layers (kvplan.sources.hf_families.mtp_layers): vLLM builds them only for speculative
# decoding, which kvplan's vLLM plan does not model.
_MTP = ("num_nextn_predict_layers", "mtp_num_hidden_layers")
# nemotron_h.py NemotronHAttention takes config.head_dim (NemotronHConfig's default 128), never
# attention_head_dim (no attribute_map entry); its Mamba mixer and state shapes take
# config.ssm_state_size (nemotron_h.py:393, 809), never mamba_d_state (transformers 5.19
# NemotronHConfig has no such field: an older export's name, kept as an extra attribute).
# Either is covered only when equal to what vLLM reads. mamba: ssm_cfg {} or null only.
_NEMOTRON_H_UNREAD = {
    "attention_head_dim": Covered("unread; equal to head_dim", same_as="head_dim"),
    "mamba_d_state": Covered("unread; equal to ssm_state_size", same_as="ssm_state_size"),
    # Megatron export leftovers (blind batch 11's nemotron-h-micro-test03: 8 beside n_groups 8,
    # 128 beside ssm_state_size 256, 8 beside num_key_value_heads 4): NemotronHConfig (5.19)
    # neither declares nor renames them (__post_init__ renames mamba_n_groups only) and
    # nemotron_h.py reads n_groups, ssm_state_size, num_key_value_heads (:398, :443, :806-816),
    # so any value: vLLM's CPU build ran that file sized by the read fields.
    **{k: Covered("unread by NemotronHConfig and nemotron_h.py (a Megatron export's name)")
       for k in ("mamba_num_groups", "mamba_state_dim", "num_query_groups")}}
_SSM_CFG = {"ssm_cfg": only({}, None, why="mamba_ssm's options: MambaConfig, mamba.py read none")}
# MLA (kvplan.sources.hf_families.mla_attention).
_MLA_RANKS = ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
