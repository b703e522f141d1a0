"""The longest context an engine starts with for a model, as vLLM 0.32 derives it from the
model's config (vllm/transformers_utils/model_arch_config_convertor.py
``derive_max_model_len_and_key``, lines 394-427, and vllm/config/model.py
``_get_and_verify_max_len``, lines 2527-2668). Pure: the rule reads a config mapping already
loaded, and `ContextLimit` answers whether a context is above it.

vLLM's rule, in order:
- the smallest of the position keys the (text) config states: max_position_embeddings,
  n_positions, max_seq_len, seq_length, model_max_length, max_target_positions,
  max_sequence_length, max_seq_length, seq_len (`POSITION_KEYS`); a truthy model_max_length
  then overrides the minimum, larger or not (Command-R / Cohere2);
- none stated (and no config-class default): no check at all, any max_model_len given is taken
  (lines 2561-2565; vLLM starts only its default at 2048): no limit;
- times the RoPE scaling factor of rope types that stretch positions (linear, dynamic, ...),
  read from rope_scaling or else rope_parameters (transformers 5.19's convert_rope_params_to_dict
  takes rope_scaling first), per layer type when nested, the last stated factor winning; the
  YaRN family (yarn, deepseek_yarn, deepseek_llama_scaling), llama3 and longrope (su) leave the
  stated maximum as it is (their max_position_embeddings is already the scaled one), and so does
  any model_type containing "gemma3" (Gemma-3's 128K is already scaled); a null factor is 1;
- a user's max_model_len above that raises ValueError unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.
The sliding-window cap (only with --disable-sliding-window), the tokenizer's model_max_length
(pooling models only) and an encoder's max_seq_length (sentence-transformers) do not apply to
the generative models kvplan plans.

SGLang and TensorRT-LLM derive the maximum their own way (`sglang_context_limit`,
`trtllm_context_limit` below; each engine's rules answer with its own:
kvplan.engines.<name>.engine `max_context`); where their number or its source differs from vLLM's,
the spec keeps it under `engine_max_model_len`.

A config.json that states no position key: `context_limit_from_config` answers None and the
spec's own max_position_embeddings (a class default kvplan read, e.g. Falcon's 2048) stands, else
there is no limit (BLOOM, Mamba: the recorded oracle runs start at 8,192).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

# derive_max_model_len_and_key's possible_keys, in vLLM's order.
POSITION_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                 "model_max_length", "max_target_positions", "max_sequence_length",
                 "max_seq_length", "seq_len")
# _get_and_verify_max_len: rope types whose factor does not multiply the stated maximum.
UNSCALED_ROPE_TYPES = ("su", "longrope", "llama3", "yarn", "deepseek_yarn",
                       "deepseek_llama_scaling")
VLLM_OVERRIDE_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
SGLANG_OVERRIDE_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
TRTLLM_OVERRIDE_ENV = "TLLM_ALLOW_LONG_MAX_MODEL_LEN"
# SGLang's get_context_length: CONTEXT_LENGTH_KEYS, in its order (the first stated one wins).
SGLANG_CONTEXT_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                       "max_position_embeddings")
# TensorRT-LLM's infer_max_seq_len: rope types whose factor does not multiply.
TRTLLM_UNSCALED_ROPE_TYPES = ("su", "longrope", "llama3", "yarn")


@dataclass(frozen=True, kw_only=True)
class ContextLimit:
    """The model's maximum context in tokens and the config field(s) it comes from."""

    tokens: int
    # Where it was read, as a user finds it: "config.json max_position_embeddings",
    # "config.json seq_length x rope_scaling.factor 4", "spec max_model_len".
    source: str

    def allows(self, context: int) -> bool:
        return context <= self.tokens


def _rope_parameter_sets(config: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The config's RoPE parameter dicts: rope_scaling, else rope_parameters; one per layer type
    when nested (vllm/transformers_utils/config.py iter_rope_parameters)."""
    params = config.get("rope_scaling") or config.get("rope_parameters")
    if not isinstance(params, Mapping) or not params:
        return []
    if all(isinstance(v, Mapping) or v is None for v in params.values()):
        return [v for v in params.values() if isinstance(v, Mapping) and v]
    return [params]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def context_limit_from_config(config: Mapping[str, Any], model_type: str) -> ContextLimit | None:
    """vLLM 0.32's derived max_model_len of a (text) config mapping and where it came from; None
    when the config states no position key."""
    tokens: float = float("inf")
    key = None
    for name in POSITION_KEYS:
        value = config.get(name)
        if _number(value):
            if value < tokens:
                key = name
            tokens = min(tokens, value)
    override = config.get("model_max_length")
    if _number(override) and override:
        tokens, key = override, "model_max_length"
    if key is None:
        return None
    source = f"config.json {key}"
    if "gemma3" not in model_type:
        factor: Any = 1.0
        for params in _rope_parameter_sets(config):
            if params.get("rope_type", params.get("type", "default")) not in UNSCALED_ROPE_TYPES:
                factor = params.get("factor", factor)
        factor = factor if _number(factor) else 1.0
        if factor != 1.0:
            tokens *= factor
            shown = int(factor) if float(factor).is_integer() else factor
            source += f" x rope_scaling.factor {shown}"
    return ContextLimit(tokens=int(tokens), source=source)


def _shown(factor: float) -> int | float:
    return int(factor) if float(factor).is_integer() else factor


def sglang_context_limit(config: Mapping[str, Any]) -> ContextLimit | None:
    """SGLang's derived context_len of a (text) config mapping; None when it states no key.

    python/sglang/srt/hf_transformers_utils.py `get_context_length` (0.4.8 lines 159-185,
    0.4.10 179-205, 0.5.2 236-262; moved to srt/utils/hf_transformers_utils.py in 0.5.3:
    0.5.6 lines 327-353, 0.5.10 680-706, the same code in each):
    - rope_scaling (only that attribute) truthy: factor = rope_scaling.get("factor", 1), set
      back to 1 when rope_scaling names original_max_position_embeddings or its "rope_type"
      (not "type") is llama3; so YaRN WITH original_max_position_embeddings keeps the stated
      maximum, YaRN without it, linear, dynamic (and Gemma-3's linear 8) multiply;
    - the FIRST stated of CONTEXT_LENGTH_KEYS (max_sequence_length, seq_length, max_seq_len,
      model_max_length, max_position_embeddings), not the smallest: int(factor * value);
    - none stated: 2048. SGLang reads the transformers config object, so a config class's own
      default stands before that; kvplan does not hold those defaults and answers None (no
      limit), as for vLLM.
    """
    factor: Any = 1
    params = config.get("rope_scaling")
    if isinstance(params, Mapping) and params:
        factor = params.get("factor", 1)
        if "original_max_position_embeddings" in params or params.get("rope_type") == "llama3":
            factor = 1
    factor = factor if _number(factor) else 1
    for key in SGLANG_CONTEXT_KEYS:
        value = config.get(key)
        if _number(value):
            source = f"config.json {key}"
            if factor != 1:
                source += f" x rope_scaling.factor {_shown(factor)}"
            return ContextLimit(tokens=int(factor * value), source=source)
    return None


def trtllm_context_limit(config: Mapping[str, Any]) -> ContextLimit | None:
    """TensorRT-LLM's (PyTorch backend) inferred max_seq_len of a (text) config mapping; None
    when it states no max_position_embeddings.

    tensorrt_llm/_torch/models/modeling_utils.py `DecoderModelForCausalLM.infer_max_seq_len`
    ("Modified from tensorrt_llm/builder.py _init_max_seq_len"):
    - rope_scaling not None: its type is rope_scaling.get("type", rope_scaling.get("rope_type"));
      unless that is su, longrope, llama3 or yarn, factor = rope_scaling.get("factor", 1.0);
    - max_position_embeddings only (no other key; 2048 when the config class has none: kvplan
      answers None there, as for vLLM), times the factor, rounded up (math.ceil).
    """
    factor: Any = 1
    params = config.get("rope_scaling")
    if isinstance(params, Mapping):
        rope_type = params.get("type", params.get("rope_type"))
        if rope_type not in TRTLLM_UNSCALED_ROPE_TYPES:
            factor = params.get("factor", 1.0)
    factor = factor if _number(factor) else 1
    value = config.get("max_position_embeddings")
    if not _number(value):
        return None
    source = "config.json max_position_embeddings"
    if factor != 1:
        source += f" x rope_scaling.factor {_shown(factor)}"
        return ContextLimit(tokens=math.ceil(value * factor), source=source)
    return ContextLimit(tokens=int(value), source=source)


# Each engine's own rule, by --engine value (vLLM's is `context_limit_from_config`).
ENGINE_RULES = {"sglang": sglang_context_limit, "trtllm": trtllm_context_limit}


def engine_context_limits(config: Mapping[str, Any], max_position: int | None,
                          vllm: ContextLimit | None) -> dict[str, dict[str, Any]]:
    """`engine_max_model_len` of a spec: per engine whose own maximum (number or source) differs
    from vLLM's `vllm`, its max_model_len and source; where its rule finds no key, vLLM's stands.
    `max_position` is the max_position_embeddings kvplan read: the engines read the config
    object, where a config-class default (Falcon's 2048, Gemma-3's 131,072) or the n_positions
    alias (GPT-2's attribute_map) answers to max_position_embeddings; a seq_length does not."""
    seen = dict(config)
    if (not _number(seen.get("max_position_embeddings")) and max_position is not None
            and (_number(seen.get("n_positions")) or not _number(seen.get("seq_length")))):
        seen["max_position_embeddings"] = max_position
    alias = "n_positions" if "max_position_embeddings" not in config and _number(
        config.get("n_positions")) else None
    out: dict[str, dict[str, Any]] = {}
    for engine, rule in ENGINE_RULES.items():
        limit = rule(seen)
        if limit is not None and alias:
            limit = replace(limit, source=limit.source.replace("max_position_embeddings", alias))
        if limit is not None and limit != vllm:
            out[engine] = {"max_model_len": limit.tokens, "source": limit.source}
    return out
