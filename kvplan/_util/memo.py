"""`pure_cache`: functools.lru_cache for pure functions of frozen specs, which falls back to
an uncached call where an argument is not hashable (a spec built with a list field by a caller),
instead of the TypeError lru_cache raises."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def pure_cache(maxsize: int) -> Callable[[F], F]:
    """Cache a function whose result depends on its arguments alone (no globals, no I/O) and
    whose result is immutable: every caller then shares one object per key."""
    def decorate(fn: F) -> F:
        cached = lru_cache(maxsize=maxsize)(fn)

        @wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                hash((args, tuple(kwargs.items())))
            except TypeError:
                return fn(*args, **kwargs)
            return cached(*args, **kwargs)

        call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        call.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return decorate


def spec_cache(maxsize: int) -> Callable[[F], F]:
    """`pure_cache` for a function of a model spec (its first argument) that may read the
    spec's checkpoint headers (kvplan.capacity.weights.weights_breakdown measures them):
    `spec.checkpoint` is left out of a spec's equality, so a spec that carries one is computed
    each time, never answered from a cache keyed on another's."""
    def decorate(fn: F) -> F:
        cached = pure_cache(maxsize)(fn)

        @wraps(fn)
        def call(spec: Any, *args: Any, **kwargs: Any) -> Any:
            if getattr(spec, "checkpoint", None) is not None:
                return fn(spec, *args, **kwargs)
            return cached(spec, *args, **kwargs)

        call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        call.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return decorate
