"""A context above the model's maximum (kvplan.model.context_limit): what each engine does with
it and the environment variable that lets it start anyway.

- vLLM 0.32 raises ValueError at start-up (vllm/config/model.py `_get_and_verify_max_len`,
  lines 2639-2665: "User-specified max_model_len (...) is greater than the derived
  max_model_len") unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1;
- SGLang raises in ModelConfig._derive_context_length (python/sglang/srt/configs/model_config.py)
  unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1;
- TensorRT-LLM: kvplan does not hold its rule; the same limit is applied, with no variable.

One rule for every command: `check_context` refuses (one line, exit 2) unless the user allowed
it (--allow-long-context), and `long_context_env` is what a launch line then carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan.model.context_limit import SGLANG_OVERRIDE_ENV, VLLM_OVERRIDE_ENV

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec

# engine -> (its name in words, the variable that lifts the refusal)
_OVERRIDES: dict[str, tuple[str, str | None]] = {
    "vllm": ("vLLM", VLLM_OVERRIDE_ENV),
    "sglang": ("SGLang", SGLANG_OVERRIDE_ENV),
    "trtllm": ("TensorRT-LLM", None),
}


def _engine_key(engine: object) -> str:
    return str(getattr(engine, "value", engine))


def above_max_context(spec: ModelSpec, context: int) -> bool:
    """Whether `context` is above the model's maximum (False when the spec states none)."""
    limit = spec.max_context
    return limit is not None and not limit.allows(context)


def context_refusal(spec: ModelSpec, context: int, engine: object = "vllm",
                    option: str = "--context") -> str:
    """One line: `context` is above the model's maximum, which engine refuses it, the override.
    Call only where `above_max_context` holds."""
    limit = spec.max_context
    assert limit is not None
    name, env = _OVERRIDES.get(_engine_key(engine), ("the engine", None))
    override = f"{env}=1 overrides" if env else "kvplan does not know its override"
    return (f"{option} {context}: above {spec.name}'s maximum of {limit.tokens:,} tokens "
            f"({limit.source}); {name} refuses to start with it ({override}; "
            "kvplan: --allow-long-context)")


def check_context(spec: ModelSpec, context: int, *, engine: object = "vllm",
                  allow_long: bool = False, option: str = "--context") -> None:
    """Refuse a context the engine refuses to start with, unless `allow_long`."""
    if not allow_long and above_max_context(spec, context):
        raise InputError(context_refusal(spec, context, engine, option))


def long_context_env(spec: ModelSpec, context: int, engine: object) -> tuple[tuple[str, str], ...]:
    """The environment a launch line needs to start at `context`: the engine's override when
    the context is above the model's maximum, else none."""
    env = _OVERRIDES.get(_engine_key(engine), ("", None))[1]
    return ((env, "1"),) if env and above_max_context(spec, context) else ()


def above_max_record(spec: ModelSpec, context: int, engine: object) -> dict[str, object] | None:
    """What `estimate`'s JSON says of a context above the model's maximum (None: within it):
    the maximum, where it comes from, and the variable the engine needs to start at all."""
    limit = spec.max_context
    if limit is None or limit.allows(context):
        return None
    env = _OVERRIDES.get(_engine_key(engine), ("", None))[1]
    return {"max_context": limit.tokens, "source": limit.source, "engine_refuses": True,
            "override_env": None if env is None else f"{env}=1"}
