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
