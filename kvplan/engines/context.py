"""A context above the model's maximum: each engine's own maximum (its rules' `max_context`:
kvplan.model.context_limit for vLLM, kvplan.engines.<name>.context for the others), what it does
with a longer context (its `long_context`) and the environment variable that lets it take it
anyway.

- vLLM 0.32 raises ValueError at start-up (vllm/config/model.py `_get_and_verify_max_len`,
  lines 2639-2665: "User-specified max_model_len (...) is greater than the derived
  max_model_len") unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1;
- SGLang 0.5.1 on raises in ModelConfig (python/sglang/srt/configs/model_config.py) unless
  SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (0.4.x and 0.5.0 default it to true: they warn);
- TensorRT-LLM (PyTorch backend) lowers max_seq_len to the model's maximum with a warning
  (tensorrt_llm/_torch/pyexecutor/model_engine.py `_init_max_seq_len`) unless
  TLLM_ALLOW_LONG_MAX_MODEL_LEN=1: it starts, but no request longer than that is served.

One rule for every command: `check_context` refuses (one line, exit 2) unless the user allowed
it (--allow-long-context), and `long_context_env` is what a launch line then carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan.engines.base import DEFAULT_ENGINE, Engine

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import EngineRules
    from kvplan.model.context_limit import ContextLimit
    from kvplan.model.spec import ModelSpec


def _rules(engine: object) -> EngineRules:
    """The rules of `engine` (an Engine or its --engine value); vLLM's for any other."""
    try:
        return Engine(str(getattr(engine, "value", engine))).rules
    except ValueError:
        return DEFAULT_ENGINE.rules


def _above(spec: ModelSpec, context: int, engine: object) -> ContextLimit | None:
    limit = _rules(engine).max_context(spec)
    return None if limit is None or limit.allows(context) else limit


def above_max_context(spec: ModelSpec, context: int, engine: object = DEFAULT_ENGINE) -> bool:
    """Whether `context` is above the model's maximum as `engine` derives it (False when it
    derives none)."""
    return _above(spec, context, engine) is not None


def max_context_tokens(spec: ModelSpec, engine: object = DEFAULT_ENGINE) -> int | None:
    """The model's maximum context in tokens as `engine` derives it; None: it derives none."""
    limit = _rules(engine).max_context(spec)
    return None if limit is None else limit.tokens


def default_context(spec: ModelSpec, engine: object = DEFAULT_ENGINE) -> int | None:
    """The context `engine` starts with when none is given: its own maximum (vLLM's
    max_model_len, SGLang's --context-length and TensorRT-LLM's max_seq_len each default to the
    maximum it derives), so a default never refuses itself; None where it derives none."""
    return max_context_tokens(spec, engine)


def context_refusal(spec: ModelSpec, context: int, engine: object = DEFAULT_ENGINE,
                    option: str = "--context") -> str:
    """One line: `context` is above the model's maximum, what the engine does with it, the
    override. Call only where `above_max_context` holds."""
    rules = _rules(engine)
    limit = rules.max_context(spec)
    assert limit is not None
    env = rules.long_context.override_env
    override = f"{env}=1 overrides" if env else "kvplan does not know its override"
    return (f"{option} {context}: above {spec.name}'s maximum of {limit.tokens:,} tokens "
            f"({limit.source}); {rules.display_name} {rules.long_context.action} ({override}; "
            "kvplan: --allow-long-context)")


def check_context(spec: ModelSpec, context: int, *, engine: object = DEFAULT_ENGINE,
                  allow_long: bool = False, option: str = "--context") -> None:
    """Refuse a context the engine does not start with, unless `allow_long`."""
    if not allow_long and above_max_context(spec, context, engine):
        raise InputError(context_refusal(spec, context, engine, option))


def long_context_env(spec: ModelSpec, context: int, engine: object) -> tuple[tuple[str, str], ...]:
    """The environment a launch line needs to start at `context`: the engine's override when
    the context is above the model's maximum, else none."""
    env = _rules(engine).long_context.override_env
    return ((env, "1"),) if env and above_max_context(spec, context, engine) else ()


def above_max_record(spec: ModelSpec, context: int, engine: object) -> dict[str, object] | None:
    """What `estimate`'s JSON says of a context above the model's maximum (None: within it):
    the maximum, where it comes from, whether the engine refuses to start (else it starts with
    its maximum) and the variable it needs to take the context anyway."""
    limit = _above(spec, context, engine)
    if limit is None:
        return None
    rules = _rules(engine)
    env = rules.long_context.override_env
    return {"max_context": limit.tokens, "source": limit.source,
            "engine_refuses": rules.long_context.refuses,
            "override_env": None if env is None else f"{env}=1"}
