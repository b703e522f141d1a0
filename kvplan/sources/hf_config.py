"""Import a HuggingFace ``config.json`` into kvplan's model-spec schema (``kvplan import``).

Pure and offline: the file is read with :mod:`json`, converted to a mapping in the YAML schema of
``model_specs/README.md`` and validated by :func:`kvplan.sources.spec_yaml.parse_spec`. Field names are the
ones transformers' config classes use; defaults that a config.json leaves out are those classes'
defaults, and every default or guess that matters is reported as a warning.

Families (``model_type``): llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma,
gemma2, gemma3 / gemma3_text, deepseek_v2, deepseek_v3, kimi_k2, minicpm3, falcon, gpt2, gpt_neox,
opt, phi3, granite. MLA is recognised by its fields (``kv_lora_rank``), never by the name. Other
model types are read best-effort from the standard fields, with a warning naming the assumptions.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvplan._util.dtypes import WEIGHT_DTYPE_ALIASES
from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_LAYERS, MAX_SIZE, checked_int, checked_int_list
from kvplan.model.spec import FULL, SLIDING, ModelSpec
from kvplan.sources.hf_hybrid import HYBRID_MODEL_TYPES, STATE_FIELDS, layer_plan
from kvplan.sources.resolve import path_kind, read_text, shown_path
from kvplan.sources.spec_yaml import parse_spec

MISSING = "missing: needed for KV sizing"

_LLAMA_LIKE = {"llama", "mistral", "mixtral", "granite", "phi3", "gpt_oss", "minimax_m2",
               "glm4_moe", "gemma3n"}
_QWEN = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}
_GEMMA = {"gemma", "gemma2", "gemma3", "gemma3_text"}
_MLA_FAMILY = {"deepseek_v2", "deepseek_v3", "kimi_k2", "minicpm3", "deepseek_v32",
               "glm_moe_dsa"}
_LAYERNORM_FAMILY = {"falcon", "gpt2", "gpt_neox", "opt"}
KNOWN_MODEL_TYPES = frozenset(_LLAMA_LIKE | _QWEN | _GEMMA | _MLA_FAMILY | _LAYERNORM_FAMILY
                              | HYBRID_MODEL_TYPES)
# MoE families whose intermediate_size is one routed expert's width (no moe_intermediate_size).
_EXPERT_WIDTH_IS_INTERMEDIATE = {"mixtral", "gpt_oss", "llama4", "granitemoehybrid",
                                 "minimax_m2"}
# The text model of a multimodal wrapper goes by the wrapper family's name.
_TEXT_ALIASES = {"llama4_text": "llama4", "qwen3_5_text": "qwen3_5",
                 "qwen3_5_moe_text": "qwen3_5_moe", "gemma3n_text": "gemma3n",
                 "qwen3_next_text": "qwen3_next"}

# tie_word_embeddings when config.json does not say (each config class's default).
_TIE_DEFAULT = {
    "gemma": True, "gemma2": True, "gemma3": True, "gemma3_text": True, "minicpm3": True,
    "falcon": True, "gpt2": True, "opt": True, "lfm2": True,
}

# transformers' Gemma3TextConfig defaults, used for keys text_config leaves out.
GEMMA3_TEXT_DEFAULTS: dict[str, Any] = {
    "vocab_size": 262208,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 131072,
    "sliding_window": 4096,
    "sliding_window_pattern": 6,
    "tie_word_embeddings": True,
}

_TOP_ORDER = (
    "name", "source", "model_type", "torch_dtype", "num_hidden_layers", "hidden_size",
    "vocab_size", "tie_word_embeddings", "position_embedding", "max_position_embeddings",
    "norm_type",
)


class _Config:
    """A config.json mapping plus the path (for errors) and the warnings gathered so far."""

    def __init__(self, data: Mapping[str, Any], path: str, model_type: str) -> None:
        self.data = data
        self.path = path
        self.model_type = model_type
        self.warnings: list[str] = []
        self.assumed: list[str] = []  # assumptions for an unknown model_type

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def first(self, *keys: str) -> tuple[str | None, Any]:
        for key in keys:
            if self.data.get(key) is not None:
                return key, self.data[key]
        return None, None

    def int(self, *keys: str, required: str | None = None, what: str = MISSING,
            minimum: int = 1, maximum: int = MAX_SIZE) -> int | None:
        """The first of `keys` present, as an integer in [minimum, maximum] (kvplan._util.validate:
        NaN, infinities, strings, floats, booleans and absurd sizes are refused, naming the
        key); `required` names the error field when none is present."""
        key, value = self.first(*keys)
        if key is None:
            if required is not None:
                raise SpecError(self.path, required, what)
            return None
        return checked_int(value, path=self.path, field=key, minimum=minimum, maximum=maximum)

    def int_or(self, key: str, default: int, *, minimum: int = 0) -> int:
        """`key` as an integer >= minimum, or `default` when absent (null, or a falsy 0 where
        the config classes treat 0 as unset is the caller's business)."""
        value = self.int(key, minimum=minimum)
        return default if value is None else value

    def int_list(self, key: str, *, minimum: int = 0) -> list[int]:
        """`key` as a list of integers (empty when absent)."""
        value = self.data.get(key)
        if value is None:
            return []
        return checked_int_list(value, path=self.path, field=key, minimum=minimum)

    def bool(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise SpecError(self.path, key, f"expected true or false, got {value!r}")
        return value

    def warn(self, message: str) -> None:
        self.warnings.append(message)


# ---------------------------------------------------------------------------------------------


def _text_config(config: Mapping[str, Any], model_type: str, cfg_warn: list[str]) -> dict:
    """Gemma-3 keeps the decoder's settings under text_config; fill gaps with the defaults."""
    if model_type not in ("gemma3", "gemma3_text"):
        return dict(config)
    text = config.get("text_config")
    merged = dict(config)
    if isinstance(text, Mapping):
        merged.update({k: v for k, v in text.items() if v is not None})
        # torch_dtype is a top-level field of the multimodal config; keep it when present.
        for key in ("torch_dtype", "dtype"):
            if config.get(key) is not None:
                merged[key] = config[key]
    used = []
    for key, value in GEMMA3_TEXT_DEFAULTS.items():
        if key == "sliding_window_pattern" and merged.get("_sliding_window_pattern") is not None:
            continue
        if merged.get(key) is None:
            merged[key] = value
            used.append(f"{key} {value}")
    if used:
        cfg_warn.append("not in config.json, taken from transformers' Gemma3TextConfig defaults: "
                        + ", ".join(used))
    return merged


def _model_type(config: Mapping[str, Any]) -> str:
    value = config.get("model_type")
    return value.strip() if isinstance(value, str) and value.strip() else "unknown"


# Sub-configs that hold a multimodal checkpoint's language model, as vLLM's get_hf_text_config
# looks for them (text_config, then llm_config / language_config of some wrappers).
_TEXT_KEYS = ("text_config", "llm_config", "language_config", "thinker_config")


def unwrap_text_config(config: Mapping[str, Any], warnings: list[str]) -> dict:
    """The language model's settings of a multimodal wrapper (Llama-4, Qwen3.5, Gemma-3n,
    Mistral-3, ...), with the wrapper's dtype and tie flag where the text part leaves them out.
    Vision and audio towers are not part of the KV cache; they are reported, not counted."""
    for key in _TEXT_KEYS:
        text = config.get(key)
        if isinstance(text, Mapping) and ("num_hidden_layers" in text or "model_type" in text):
            merged = {k: v for k, v in text.items() if v is not None}
            for outer in ("torch_dtype", "dtype", "tie_word_embeddings", "quantization_config",
                          "_name_or_path"):
                if outer not in merged and config.get(outer) is not None:
                    merged[outer] = config[outer]
            merged.setdefault("model_type", _model_type(config))
            merged["_wrapper_model_type"] = _model_type(config)
            towers = [k for k in ("vision_config", "audio_config") if isinstance(
                config.get(k), Mapping)]
            if towers:
                warnings.append(f"{key} of a {_model_type(config)} wrapper read as the language "
                                f"model; {', '.join(towers)} not counted (no KV cache)")
            return merged
    return dict(config)


def _name(config: Mapping[str, Any], path: str, model_type: str) -> str:
    value = config.get("_name_or_path")
    if isinstance(value, str) and value.strip() and len(value) <= 1024 and not any(
            ord(ch) < 32 or ord(ch) == 127 for ch in value):
        value = value.strip().rstrip("/")
        # A local path says little; keep its last component.
        return value.rsplit("/", 1)[-1] if value.startswith(("/", ".", "~")) else value
    return _id_from_path(path) or model_type


def _id_from_path(path: str) -> str:
    p = Path(path)
    if p.name == "config.json":
        return p.parent.name
    return p.stem if p.suffix == ".json" else p.name


def _dtype(c: _Config) -> str:
    """The checkpoint's dtype as config.json states it (the engines' compute dtype follows from
    it: float32 is served in bfloat16, see kvplan.weights.base.engine_dtype). Quantized formats are
    carried apart, in quantization_config."""
    key, value = c.first("torch_dtype", "dtype")
    if key is None:
        c.warn("torch_dtype absent: assumed float32 (transformers' default); the engines load "
               "bfloat16")
        return "float32"
    if not isinstance(value, str) or value not in WEIGHT_DTYPE_ALIASES:
        c.warn(f"{key} {value!r} is not a weight dtype kvplan knows: assumed bfloat16")
        return "bfloat16"
    return value


def _quantization(c: _Config) -> dict | None:
    quant = c.data.get("quantization_config")
    if quant is None:
        return None
    # The quantized formats load for a quantized config only (start-up).
    from kvplan.model.quant_config import parse_quantization_config

    parsed = parse_quantization_config(quant, c.path)
    c.warn(f"quantization_config: {parsed.description}")
    return dict(quant)


def _head_attention(c: _Config, heads: int, hidden: int, layers: int, *,
                    windows: bool = True) -> dict:
    mt = c.model_type
    head_dim = c.int("head_dim")
    if head_dim is None:
        if hidden % heads:
            raise SpecError(c.path, "head_dim",
                            f"missing, and hidden_size {hidden} is not a multiple of "
                            f"num_attention_heads {heads}")
        head_dim = hidden // heads
        if mt not in KNOWN_MODEL_TYPES:
            c.assumed.append("head_dim = hidden_size / num_attention_heads")

    if mt == "falcon":
        if c.bool("new_decoder_architecture", False):
            kv = c.int("num_kv_heads", "n_head_kv") or heads
        elif c.bool("multi_query", True):
            kv = 1
        else:
            kv = heads
    elif mt in ("gpt2", "opt", "gpt_neox"):
        kv = heads
    else:
        kv = c.int("num_key_value_heads", "num_kv_heads", "n_head_kv")
        if kv is None:
            kv = heads
            if mt not in KNOWN_MODEL_TYPES:
                c.assumed.append("num_key_value_heads = num_attention_heads")
    if heads % kv:
        raise SpecError(c.path, "num_key_value_heads",
                        f"{kv} does not divide num_attention_heads ({heads})")
    kind = "mha" if kv == heads else "mqa" if kv == 1 else "gqa"

    # Biases: qwen2 always biases q/k/v (not o); llama-style `attention_bias` covers q/k/v and o.
    if mt in ("qwen2", "qwen2_moe"):
        qkv_bias, o_bias = True, False
    elif mt == "gpt2":
        qkv_bias = o_bias = True
    elif mt == "gpt_neox":
        qkv_bias = o_bias = c.bool("attention_bias", True)
    elif mt == "opt":
        qkv_bias = o_bias = c.bool("enable_bias", True)
    elif mt == "falcon":
        qkv_bias = o_bias = c.bool("bias", False)
    elif mt == "phi3":
        qkv_bias = o_bias = False  # fused qkv_proj and o_proj carry no bias
    else:
        if not c.has("attention_bias") and mt not in KNOWN_MODEL_TYPES:
            c.assumed.append("no attention biases")
        qkv_bias = o_bias = c.bool("attention_bias", False)

    att: dict[str, Any] = {
        "kind": kind,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": head_dim,
        "attention_bias": qkv_bias,
        "o_proj_bias": o_bias,
    }
    if windows:
        att.update(_windows(c, layers))
    return att


def _windows(c: _Config, layers: int) -> dict:
    """Sliding-window fields: sliding_window plus sliding_window_pattern or layer_types."""
    mt = c.model_type
    window = c.data.get("sliding_window")
    if mt == "gemma2" and window is None:
        window = 4096  # Gemma2Config default
        c.warn("sliding_window absent: Gemma2Config default 4096")
    if window is not None:
        window = checked_int(window, path=c.path, field="sliding_window")
    if mt in _QWEN or "use_sliding_window" in c.data:
        # Qwen: sliding_window is only honoured with use_sliding_window, and then only by the
        # layers from max_window_layers on (transformers: i >= max_window_layers slides).
        if not c.bool("use_sliding_window", False):
            return {}
        if window is None:
            return {}
        if not isinstance(c.data.get("layer_types"), list):
            first_full = c.int_or("max_window_layers", layers)
            types = [SLIDING if i >= first_full else FULL for i in range(layers)]
            return _from_layer_types(c, window, types, layers)
    if window is None:
        return {}
    window = checked_int(window, path=c.path, field="sliding_window")
    types = c.data.get("layer_types")
    if isinstance(types, list):
        return _from_layer_types(c, window, types, layers)
    if mt == "gemma2":
        return {"sliding_window": window, "sliding_window_pattern": 2}
    if mt in ("gemma3", "gemma3_text"):
        pattern = c.int("sliding_window_pattern", "_sliding_window_pattern") or 6
        return {"sliding_window": window, "sliding_window_pattern": pattern}
    if mt not in ("mistral", "mixtral"):
        c.warn(f"sliding_window {window} applied to every layer (no layer_types or pattern given)")
    return {"sliding_window": window}


def _from_layer_types(c: _Config, window: int, types: list, layers: int) -> dict:
    if len(types) != layers:
        raise SpecError(c.path, "layer_types",
                        f"expected {layers} entries (one per layer), got {len(types)}")
    norm = []
    for t in types:
        if t not in (SLIDING, FULL):
            raise SpecError(c.path, "layer_types", f"layer type {t!r} declares a cache kvplan "
                                                   f"does not model for {c.model_type}")
        norm.append(t)
    if SLIDING not in norm:
        return {}
    if FULL not in norm:
        return {"sliding_window": window}
    return {"sliding_window": window, "layer_types": norm}


def _mla_attention(c: _Config, heads: int, hidden: int) -> dict:
    v_head_dim = c.int("v_head_dim")
    if v_head_dim is None:
        if hidden % heads:
            raise SpecError(c.path, "v_head_dim", MISSING)
        v_head_dim = hidden // heads
        c.warn(f"v_head_dim absent: hidden_size / num_attention_heads = {v_head_dim}"
               + (" (as MiniCPM3 derives it)" if c.model_type == "minicpm3" else " (assumed)"))
    att: dict[str, Any] = {
        "kind": "mla",
        "num_attention_heads": heads,
        "kv_lora_rank": c.int("kv_lora_rank", required="kv_lora_rank"),
        "qk_rope_head_dim": c.int("qk_rope_head_dim", required="qk_rope_head_dim"),
        "qk_nope_head_dim": c.int("qk_nope_head_dim", required="qk_nope_head_dim"),
        "v_head_dim": v_head_dim,
        "q_lora_rank": c.int("q_lora_rank"),
    }
    if c.bool("attention_bias", False):
        att["attention_bias"] = True
    if c.has("sliding_window"):
        c.warn("sliding_window ignored for MLA")
    return att


def _mlp(c: _Config, hidden: int) -> dict:
    mt = c.model_type
    if mt == "gpt2":
        width = c.int("n_inner") or 4 * hidden
        return {"intermediate_size": width, "gated": False, "bias": True}
    if mt == "falcon":
        width = c.int("ffn_hidden_size") or 4 * hidden
        if not c.has("ffn_hidden_size"):
            c.warn(f"ffn_hidden_size absent: FalconConfig default 4 * hidden_size = {width}")
        return {"intermediate_size": width, "gated": False, "bias": c.bool("bias", False)}
    if mt == "opt":
        width = c.int("ffn_dim", required="ffn_dim", what="missing: needed for the weight count")
        return {"intermediate_size": width, "gated": False, "bias": c.bool("enable_bias", True)}
    if mt == "gpt_neox":
        width = c.int("intermediate_size") or 4 * hidden
        return {"intermediate_size": width, "gated": False, "bias": True}
    if mt == "llama4" and c.has("intermediate_size_mlp"):
        # Llama-4: intermediate_size is one expert's width; dense layers use intermediate_size_mlp.
        return {"intermediate_size": c.int("intermediate_size_mlp"), "gated": True,
                "bias": False}
    if mt == "nemotron_h":
        # Nemotron-H's MLP layers are relu^2, two matrices (mlp_hidden_act relu2).
        return {"intermediate_size": c.int("intermediate_size", required="intermediate_size"),
                "gated": False, "bias": c.bool("mlp_bias", False)}
    raw = c.data.get("intermediate_size")
    if isinstance(raw, list) and raw:
        # gemma-3n lists one width per layer; kvplan keeps one dense width.
        checked_int_list(raw, path=c.path, field="intermediate_size", minimum=1)
        if len(set(raw)) > 1:
            c.warn(f"intermediate_size varies by layer ({min(raw)}-{max(raw)}): the largest "
                   "is counted for every layer")
        return {"intermediate_size": max(raw), "gated": True, "bias": c.bool("mlp_bias", False)}
    width = c.int("intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size")
    if width is None:
        width = 4 * hidden
        c.assumed.append(f"intermediate_size = 4 * hidden_size = {width}")
    if mt not in KNOWN_MODEL_TYPES:
        c.assumed.append("gated MLP")
    return {"intermediate_size": width, "gated": True, "bias": c.bool("mlp_bias", False)}


def _moe(c: _Config, layers: int, dense_width: int) -> dict | None:
    key, experts = c.first("n_routed_experts", "num_local_experts", "num_experts")
    if key is None or (experts == 0 and not isinstance(experts, bool)):
        return None
    experts = c.int(key)
    per_tok = c.int("num_experts_per_tok", "num_experts_per_token", "experts_per_token",
                    required="num_experts_per_tok",
                    what="missing: needed for MoE active parameters")
    width = c.int("moe_intermediate_size")
    if width is None and c.model_type in _EXPERT_WIDTH_IS_INTERMEDIATE:
        width = c.int("intermediate_size", required="intermediate_size")
    if width is None:
        width = dense_width  # mixtral: intermediate_size is the width of one expert
        if c.model_type != "mixtral":
            c.warn(f"moe_intermediate_size absent: experts assumed intermediate_size "
                   f"({width}) wide")
    moe: dict[str, Any] = {
        "n_routed_experts": experts,
        "num_experts_per_tok": per_tok,
        "moe_intermediate_size": width,
    }
    shared_key, _ = c.first("n_shared_experts", "num_shared_experts")
    shared = c.int(shared_key, minimum=0) if shared_key else 0
    if c.model_type == "llama4":
        shared = 1  # Llama-4 adds one shared expert of the experts' width to every MoE layer
    if shared:
        moe["n_shared_experts"] = shared
    width_key, _ = c.first("shared_expert_intermediate_size", "shared_intermediate_size")
    shared_width = c.int(width_key, minimum=0) if width_key else 0
    if shared_width:
        moe["shared_expert_intermediate_size"] = shared_width
    # 0 and null both mean "unset" in these config classes.
    first_k = c.int_or("first_k_dense_replace", 0)
    freq = c.int_or("moe_layer_freq", 1) or 1
    if c.model_type == "llama4":
        # moe_layers = every interleave_moe_layer_step-th layer (1-based).
        step = c.int_or("interleave_moe_layer_step", 1) or 1
        first_k, freq = step - 1, step
    if c.model_type == "jamba":
        # Layer i is MoE when i % expert_layer_period == expert_layer_offset.
        freq = c.int_or("expert_layer_period", 1) or 1
        first_k = c.int_or("expert_layer_offset", 0)
    step = c.int("decoder_sparse_step", minimum=0)
    if step is not None and step > 1:
        # qwen*_moe: layer i is MoE when (i + 1) % step == 0, i.e. layers step-1, 2*step-1, ...
        first_k, freq = step - 1, step
    mlp_only = c.int_list("mlp_only_layers")
    if mlp_only:
        if sorted(mlp_only) == list(range(len(mlp_only))) and freq == 1 and first_k == 0:
            first_k = len(mlp_only)
        else:
            shown = mlp_only if len(mlp_only) <= 16 else f"{mlp_only[:16]}..."
            c.warn(f"mlp_only_layers {shown} use the dense MLP, which kvplan cannot express "
                   "(it has first_k_dense_replace and moe_layer_freq only): counted as MoE layers")
    if first_k > layers:
        raise SpecError(c.path, "first_k_dense_replace", f"must be <= num_hidden_layers ({layers})")
    moe["first_k_dense_replace"] = first_k
    moe["moe_layer_freq"] = freq
    return moe


def spec_mapping_from_config(config: dict, *, path: str) -> tuple[dict, list[str]]:
    """Convert a config.json mapping into kvplan's YAML schema; returns (mapping, warnings)."""
    if not isinstance(config, Mapping):
        raise SpecError(path, None, "expected a JSON object")
    model_type = _model_type(config)
    pre_warnings: list[str] = []
    if model_type in ("gemma3", "gemma3_text"):
        data = _text_config(config, model_type, pre_warnings)
    else:
        data = unwrap_text_config(config, pre_warnings)
        model_type = _model_type(data)
    model_type = _TEXT_ALIASES.get(model_type, model_type)
    data["model_type"] = model_type
    c = _Config(data, path, model_type)
    c.warnings.extend(pre_warnings)
    mt = model_type
    known = mt in KNOWN_MODEL_TYPES

    layers = c.int("num_hidden_layers", "n_layer", "num_layers",
                   required="n_layer" if mt == "gpt2" else "num_hidden_layers",
                   maximum=MAX_LAYERS)
    heads = c.int("num_attention_heads", "n_head",
                  required="n_head" if mt == "gpt2" else "num_attention_heads")
    hidden = c.int("hidden_size", "n_embd", "d_model",
                   required="n_embd" if mt == "gpt2" else "hidden_size")
    vocab = c.int("vocab_size", "padded_vocab_size", required="vocab_size",
                  what="missing: needed for the weight count")

    if not known:
        declared = [k for k in STATE_FIELDS if k in c.data]
        if declared:
            raise SpecError(c.path, declared[0], f"declares a cache kvplan does not model for "
                                                 f"model_type {mt!r}; refused rather than sized "
                                                 "as attention")
    plan = layer_plan(c, layers, hidden)
    is_mla = c.has("kv_lora_rank")
    if is_mla:
        attention = _mla_attention(c, heads, hidden)
    elif plan is not None:
        attention = _head_attention(c, heads, hidden, layers, windows=False)
    else:
        attention = _head_attention(c, heads, hidden, layers)
    if plan is not None:
        attention.update(plan.attention)
    if isinstance(c.data.get("indexer_types"), list) and any(
            t != "full" for t in c.data["indexer_types"]):
        raise SpecError(c.path, "indexer_types", "layers that share another layer's indexer "
                                                 "are not modelled; refused rather than guessed")
    if c.has("index_head_dim") or (c.has("index_topk") and mt in _MLA_FAMILY):
        attention["indexer"] = {"index_head_dim": c.int("index_head_dim",
                                                        required="index_head_dim"),
                                "index_n_heads": c.int("index_n_heads", required="index_n_heads"),
                                "index_topk": c.int("index_topk", required="index_topk")}
    mlp = _mlp(c, hidden)
    if plan is not None and not plan.mlp_in_mixer_layers:
        mlp["in_mixer_layers"] = False
    moe = _moe(c, layers, mlp["intermediate_size"])

    # Embeddings, positions, norms.
    if c.has("tie_word_embeddings"):
        tie = c.bool("tie_word_embeddings", False)
    else:
        tie = _TIE_DEFAULT.get(mt, False)
        if known:
            c.warn(f"tie_word_embeddings absent: {mt} default ({str(tie).lower()})")
        else:
            c.assumed.append("untied embeddings")
    if mt == "gpt2":
        position, max_pos = "learned", c.int("n_positions", "max_position_embeddings",
                                             required="n_positions",
                                             what="missing: needed for learned positions")
    elif mt == "opt":
        # OPT's learned position table has max_position_embeddings + 2 rows (a fixed offset of
        # 2); the 2 extra rows (2 * hidden_size parameters) are ignored.
        position = "learned"
        max_pos = c.int("max_position_embeddings", required="max_position_embeddings",
                        what="missing: needed for learned positions")
    else:
        position = "alibi" if c.bool("alibi", False) else "rope"
        max_pos = c.int("max_position_embeddings", "n_positions", "seq_length")
        if mt == "falcon" and max_pos is None:
            max_pos = 2048
            c.warn("max_position_embeddings absent: FalconConfig default 2048")
        if not known and not c.has("alibi"):
            c.assumed.append("RoPE positions")
    norm = "layernorm" if mt in _LAYERNORM_FAMILY else "rmsnorm"
    if not known:
        c.assumed.append("rmsnorm")

    _family_notes(c)
    if not known:
        c.warn(f"model_type {mt!r} is not one kvplan knows; read best-effort from the standard "
               f"fields, assumed: {', '.join(dict.fromkeys(c.assumed))}")

    mapping: dict[str, Any] = {
        "name": _name(config, path, mt),
        "source": path,
        "model_type": mt,
        "torch_dtype": _dtype(c),
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "vocab_size": vocab,
        "tie_word_embeddings": tie,
        "position_embedding": position,
    }
    if max_pos is not None:
        mapping["max_position_embeddings"] = max_pos
    mapping["norm_type"] = norm
    mapping["attention"] = attention
    mapping["mlp"] = mlp
    if moe is not None:
        mapping["moe"] = moe
    quant = _quantization(c)
    if quant is not None:
        mapping["quantization_config"] = quant
    if plan is not None:
        mapping["layer_types"] = plan.layer_types
        if plan.recurrent is not None:
            mapping["recurrent"] = plan.recurrent
    nextn = _mtp_layers(c)
    if nextn:
        mapping["num_nextn_predict_layers"] = nextn
    if c.bool("use_qk_norm", False):
        mapping["qk_norm"] = True
    shared = c.int("num_kv_shared_layers", minimum=0, maximum=MAX_LAYERS)
    if shared:
        # gemma-3n: the last N layers reuse the KV cache of the last earlier layer of the same
        # attention type (transformers' Gemma3n attention), whatever the model_type is called.
        mapping["kv_sharing"] = {"num_kv_shared_layers": shared}
    if mt in ("gemma3", "gemma3_text") and max_pos is not None:
        mapping["rope_tables"] = _gemma3_rope_tables(c, max_pos)
        tower = _siglip_tower(config, path)
        if tower is not None:
            mapping["vision"] = tower
        mm_tokens = config.get("mm_tokens_per_image")
        if (tower is not None and isinstance(mm_tokens, int) and not isinstance(mm_tokens, bool)
                and mm_tokens != 256):  # 256: the spec's default
            tower["tokens_per_image"] = mm_tokens
    vit = _qwen_vit(config, path)
    if vit is not None:
        mapping["qwen_vit"] = vit
    if (isinstance(config.get("vision_config"), Mapping) and "vision" not in mapping
            and vit is None):
        c.warn(f"vision_config of a {_model_type(config)} checkpoint not read: vLLM's "
               "multimodal encoder profile is not in its reserve (give --reserve-gib, or "
               "--limit-mm-per-prompt image=0,video=0 as vLLM would be started)")
    return mapping, c.warnings


def _gemma3_rope_tables(c: _Config, max_pos: int) -> list[int]:
    """vLLM's rotary tables for Gemma-3 (vllm/model_executor/models/gemma3.py Gemma3Attention):
    sliding layers use rope_local_base_freq with no scaling (max_position_embeddings rows), global
    layers the config's rope_scaling; a linear one makes LinearScalingRotaryEmbedding
    (rotary_embedding/linear_scaling_rope.py) build max_position_embeddings x factor rows."""
    scaling = c.data.get("rope_scaling")
    rows = max_pos
    if isinstance(scaling, Mapping) and (scaling.get("rope_type") or scaling.get("type")) == (
            "linear"):
        factor = scaling.get("factor")
        if isinstance(factor, (int, float)) and not isinstance(factor, bool) and factor >= 1:
            rows = int(max_pos * factor)
    return [max_pos, rows]


def _siglip_tower(config: Mapping[str, Any], path: str) -> dict | None:
    """A Gemma-3 checkpoint's SigLIP vision_config as the spec's vision section (kvplan.weights.breakdown
    counts it as vLLM's siglip.py and gemma3_mm.py build it). None when there is none, or when it
    has a pooling head (vision_use_head), which Gemma-3 does not use and kvplan does not price."""
    vc = config.get("vision_config")
    if not isinstance(vc, Mapping) or vc.get("model_type") not in (None, "siglip_vision_model"):
        return None
    if vc.get("vision_use_head") is not False:
        return None
    r = _Config(dict(vc), path, "siglip_vision_model")
    return {
        "kind": "siglip",
        "hidden_size": r.int("hidden_size", required="vision_config.hidden_size"),
        "intermediate_size": r.int("intermediate_size",
                                   required="vision_config.intermediate_size"),
        "num_hidden_layers": r.int("num_hidden_layers",
                                   required="vision_config.num_hidden_layers",
                                   maximum=MAX_LAYERS),
        "num_attention_heads": r.int("num_attention_heads",
                                     required="vision_config.num_attention_heads"),
        "image_size": r.int("image_size", required="vision_config.image_size"),
        "patch_size": r.int("patch_size", required="vision_config.patch_size"),
        "num_channels": r.int("num_channels") or 3,
        "projector": "gemma3",
    }


# Wrappers whose vision_config is the Qwen3-VL vision transformer (vLLM qwen3_vl.py
# Qwen3_VisionTransformer; qwen3_vl_moe.py, qwen3_5.py reuse it).
_QWEN3_VIT_WRAPPERS = ("qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe")


def _qwen_vit(config: Mapping[str, Any], path: str) -> dict | None:
    """A Qwen3-VL / Qwen3.5 checkpoint's vision_config as the spec's qwen_vit section (vLLM's
    encoder profile sizes it, kvplan.engines.vllm.mm). None for other models; Qwen2-VL and
    Qwen2.5-VL (a different tower, profiled with a video in vLLM) are not described."""
    vc = config.get("vision_config")
    if _model_type(config) not in _QWEN3_VIT_WRAPPERS or not isinstance(vc, Mapping):
        return None
    r = _Config(dict(vc), path, "qwen3_vl_vision")
    deepstack = vc.get("deepstack_visual_indexes") or []
    if not isinstance(deepstack, list):
        raise SpecError(path, "vision_config.deepstack_visual_indexes", "expected a list")
    return {
        "kind": "qwen3_vl",
        "depth": r.int("depth", required="vision_config.depth", maximum=MAX_LAYERS),
        "hidden_size": r.int("hidden_size", required="vision_config.hidden_size"),
        "intermediate_size": r.int("intermediate_size",
                                   required="vision_config.intermediate_size"),
        "num_heads": r.int("num_heads", required="vision_config.num_heads"),
        "patch_size": r.int("patch_size", required="vision_config.patch_size"),
        "spatial_merge_size": r.int("spatial_merge_size") or 2,
        "temporal_patch_size": r.int("temporal_patch_size") or 2,
        "out_hidden_size": r.int("out_hidden_size", required="vision_config.out_hidden_size"),
        "in_channels": r.int("in_channels") or 3,
        "deepstack_layers": len(deepstack),
        "num_position_embeddings": r.int("num_position_embeddings") or 2304,
    }


def _mtp_layers(c: _Config) -> int:
    """Multi-token-prediction layers vLLM loads as the MTP drafter: num_nextn_predict_layers
    (DeepSeek, GLM-4.5; qwen3_next_mtp defaults it to 1), mtp_num_hidden_layers (Qwen3.5)."""
    value = c.data.get("num_nextn_predict_layers")
    if value is None:
        value = c.data.get("mtp_num_hidden_layers")
    if value is None and c.model_type == "qwen3_next":
        value = 1
    if value is None:
        return 0
    return checked_int(value, path=c.path, field="num_nextn_predict_layers", minimum=0,
                       maximum=MAX_LAYERS)


def _family_notes(c: _Config) -> None:
    """Things a config.json says that the schema does not hold, so the user knows."""
    mt = c.model_type
    if mt == "opt":
        proj = c.data.get("word_embed_proj_dim")
        hidden = c.data.get("hidden_size")
        if proj is not None and proj != hidden:
            c.warn(f"word_embed_proj_dim {proj} != hidden_size {hidden}: the project_in/out "
                   "matrices are not counted, and the embeddings are counted hidden_size wide")
    if mt == "gemma3n":
        c.warn("gemma-3n's per-layer embeddings (vocab_size_per_layer_input x "
               "hidden_size_per_layer_input per layer), AltUp and LAuReL weights are not "
               "counted: parameters and weights come out low")
    if mt == "gpt_neox" and c.data.get("rotary_pct") not in (None, 1, 1.0):
        c.warn(f"rotary_pct {c.data['rotary_pct']}: only part of each head rotates; "
               "KV size unchanged")
    nextn = c.data.get("num_nextn_predict_layers")
    if nextn:
        c.warn(f"num_nextn_predict_layers {nextn}: the multi-token-prediction module is not "
               "part of num_hidden_layers; its KV counts with --speculative-method mtp, its "
               "weights are not counted")
    moe_freq = c.data.get("moe_layer_freq")
    if moe_freq not in (None, 1) and c.has("first_k_dense_replace"):
        c.warn("moe_layer_freq > 1: kvplan counts every moe_layer_freq-th layer after "
               "first_k_dense_replace as MoE")


# ---------------------------------------------------------------------------------------------


def _config_path(path: Path) -> Path:
    return path / "config.json" if path_kind(path) == "dir" else path


def read_config(path: Path) -> tuple[dict, str]:
    """Read a config.json (or a folder holding one); returns (mapping, shown path). The file
    must be a regular file (kvplan.sources.resolve.read_text); JSON's NaN and Infinity are refused here,
    and a number no float or int can hold is a one-line error."""
    file = _config_path(Path(path))
    shown = shown_path(file)
    text = read_text(file)

    def constant(name: str) -> Any:
        raise _BadConstant(name)

    try:
        data = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise SpecError(shown, None,
                        f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
                        ) from None
    except _BadConstant as exc:
        raise SpecError(shown, None, f"{exc.args[0]} is not a JSON number (NaN and infinities "
                                     "have no place in a model config)") from None
    except (ValueError, RecursionError) as exc:
        # A 5,000-digit integer (Python's int-string limit), arrays nested too deep to parse.
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise SpecError(shown, None, f"malformed JSON: {reason.splitlines()[0][:200]}"
                        ) from None
    if not isinstance(data, dict):
        raise SpecError(shown, None, "expected a JSON object at the top level")
    return data, shown


class _BadConstant(Exception):
    pass


def load_config(path: Path) -> tuple[ModelSpec, list[str]]:
    """Load a config.json (file or folder) as a validated ModelSpec, plus the import warnings."""
    data, shown = read_config(Path(path))
    mapping, warnings = spec_mapping_from_config(data, path=shown)
    spec_id = _id_from_path(shown) or mapping["model_type"]
    return parse_spec(mapping, path=shown, spec_id=spec_id), warnings


def spec_yaml_text(mapping: dict, warnings: list[str] | tuple[str, ...] = ()) -> str:
    """Render a spec mapping as YAML in the schema's order, with a header and the warnings."""
    import yaml  # light, but only needed here

    lines = [
        f"# Imported from {mapping.get('source', '?')} by `kvplan import`.",
        "# Check the values against the model card; the schema is in model_specs/README.md.",
    ]
    if warnings:
        lines.append("# Warnings:")
        for w in warnings:
            lines.extend(textwrap.wrap(" ".join(str(w).split()), width=98,
                                       initial_indent="#   - ", subsequent_indent="#     "))
    top = {k: mapping[k] for k in _TOP_ORDER if k in mapping}
    top.update({k: v for k, v in mapping.items()
                if k not in top and k not in ("attention", "mlp", "moe", "kv_sharing",
                                              "recurrent", "layer_types",
                                              "quantization_config", "vision", "qwen_vit")})
    parts = ["\n".join(lines), yaml.safe_dump(top, sort_keys=False, default_flow_style=False)]
    if "layer_types" in mapping:
        parts.append("layer_types: [" + ", ".join(mapping["layer_types"]) + "]")
    for section in ("attention", "recurrent", "mlp", "moe", "kv_sharing", "vision",
                    "qwen_vit", "quantization_config"):
        if section in mapping:
            parts.append(yaml.safe_dump({section: mapping[section]}, sort_keys=False,
                                        default_flow_style=False))
    return "\n".join(p.rstrip("\n") + "\n" for p in parts)
