"""A spec's `engine_max_model_len` -> the engines' own maximum contexts
(kvplan.model.context_limit: sglang_context_limit, trtllm_context_limit), where they differ
from vLLM's `max_model_len`:

    engine_max_model_len:
      sglang: {max_model_len: 1048576, source: config.json max_position_embeddings x ...}
      trtllm: {max_model_len: 8192}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_SIZE, checked_int, checked_text
from kvplan.model.context_limit import ENGINE_RULES, ContextLimit

FIELD = "engine_max_model_len"


def engine_context_limits(value: Any, path: str) -> tuple[tuple[str, ContextLimit], ...]:
    """The (engine, maximum) pairs `value` (the field's mapping, or None) states."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise SpecError(path, FIELD, "expected a mapping of engine: {max_model_len, source}")
    out = []
    for engine, entry in value.items():
        where = f"{FIELD}.{engine}"
        if engine not in ENGINE_RULES:
            raise SpecError(path, where, f"expected one of {', '.join(ENGINE_RULES)}")
        if not isinstance(entry, Mapping) or set(entry) - {"max_model_len", "source"}:
            raise SpecError(path, where, "expected a mapping of max_model_len and source")
        tokens = checked_int(entry.get("max_model_len"), path=path,
                             field=f"{where}.max_model_len", minimum=1, maximum=MAX_SIZE)
        source = entry.get("source", f"spec {engine} max_model_len")
        checked_text(source, path=path, field=f"{where}.source")
        out.append((str(engine), ContextLimit(tokens=tokens, source=source)))
    return tuple(out)
