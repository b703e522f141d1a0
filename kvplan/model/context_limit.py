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

Other engines derive the maximum their own way from the same config fields: the spec keeps
them as `PositionFields` (config.json's position keys and rope_scaling, engine-neutral; YAML
`position_fields`), and each engine's rules compose the helpers below (`PositionFields.first_of`,
`RopeScaling.scaled`, `scaled_limit`) into its own `max_context` (kvplan.engines.<name>.context).

A config.json that states no position key: `context_limit_from_config` answers None and the
spec's own max_position_embeddings (a class default kvplan read, e.g. Falcon's 2048) stands, else
there is no limit (BLOOM, Mamba: the recorded oracle runs start at 8,192).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# derive_max_model_len_and_key's possible_keys, in vLLM's order.
POSITION_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                 "model_max_length", "max_target_positions", "max_sequence_length",
                 "max_seq_length", "seq_len")
# _get_and_verify_max_len: rope types whose factor does not multiply the stated maximum.
UNSCALED_ROPE_TYPES = ("su", "longrope", "llama3", "yarn", "deepseek_yarn",
                       "deepseek_llama_scaling")


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


# The neutral record the engines' own rules read (kvplan.engines.<name>.context: each composes
# these helpers into its `max_context`); built from config.json in kvplan.sources.spec_context.


@dataclass(frozen=True, kw_only=True)
class RopeScaling:
    """config.json's top-level `rope_scaling`, the fields a maximum-context rule reads; None
    where it states none (or not of the right type)."""

    factor: int | float | None = None
    rope_type: str | None = None  # its "rope_type" key
    type: str | None = None  # its legacy "type" key
    original_max_position_embeddings: int | float | None = None

    def scaled(self, *, unless_types: tuple[str, ...] = (),
               legacy_type_first: bool = False) -> int | float:
        """The factor that multiplies the stated maximum: 1 where none is stated or the rope
        type (the legacy "type" before "rope_type" when `legacy_type_first`, else "rope_type"
        only) is one of `unless_types`."""
        rope = (self.type if self.type is not None else self.rope_type) if legacy_type_first \
            else self.rope_type
        if rope in unless_types or self.factor is None:
            return 1
        return self.factor


@dataclass(frozen=True, kw_only=True)
class PositionFields:
    """The position keys a model's config holds (`POSITION_KEYS`, as stated; max_position_embeddings
    also as its config class defaults it) and its rope_scaling: what each engine derives its own
    maximum context from."""

    keys: tuple[tuple[str, int | float], ...] = ()
    rope_scaling: RopeScaling | None = None

    def stated(self, key: str) -> tuple[str, int | float] | None:
        """(the name it is stated under, its value): max_position_embeddings also through its
        n_positions alias (transformers' GPT2Config attribute_map); None when not stated."""
        keys = dict(self.keys)
        if key in keys:
            return key, keys[key]
        if key == "max_position_embeddings" and "n_positions" in keys:
            return "n_positions", keys["n_positions"]
        return None

    def first_of(self, keys: tuple[str, ...]) -> tuple[str, int | float] | None:
        """The first of `keys`, in that order, the config states."""
        return next((found for key in keys if (found := self.stated(key)) is not None), None)


def scaled_limit(key: str, value: int | float, factor: int | float, *,
                 round_up: bool = False) -> ContextLimit:
    """`value` of config key `key` times `factor` (truncated, or rounded up), worded as the
    refusals say it: "config.json max_position_embeddings x rope_scaling.factor 8"."""
    source = f"config.json {key}"
    if factor == 1:
        return ContextLimit(tokens=int(value), source=source)
    tokens = math.ceil(value * factor) if round_up else int(factor * value)
    return ContextLimit(tokens=tokens, source=f"{source} x rope_scaling.factor {_shown(factor)}")
