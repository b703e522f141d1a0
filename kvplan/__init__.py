"""kvplan: plan LLM inference KV-cache memory.

The public API is pure (no typer, rich or torch; pandas only when a sweep runs) and imports its
heavier parts lazily, on first use:

>>> import kvplan
>>> spec = kvplan.load_model("deepseek-v2")
>>> kvplan.estimate(spec, context=4096).bytes_per_token
69120

- ``load_model(model)``: a bundled id, a spec YAML, a config.json or a folder holding one ->
  ``ModelSpec`` (``kvplan.spec.load_model`` also returns the import warnings);
- ``estimate(spec, context=..., batch=..., kv_dtype=..., block_size=..., tp=...)`` -> ``Estimate``;
- ``plan_capacity(spec, PlanInputs(...))`` -> ``CapacityPlan`` (how many requests fit);
- ``compare(spec, context=..., ...)`` -> MHA/GQA/MQA/MLA side by side (``compare_schemes``);
- ``sweep(spec, SweepGrid(...))`` -> a pandas DataFrame, one row per grid point (``evaluate``).

Errors are ``KvplanError`` subclasses (``SpecError`` for a bad file, ``InputError`` for a bad
argument), each one line.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from .attention import AttentionKind, HeadAttention, LatentAttention
from .cache import DEFAULT_BLOCK_SIZE, Estimate, KVLayout, estimate, kv_layout
from .dtypes import DTYPES, DType
from .errors import InputError, KvplanError, SpecError
from .spec import ModelSpec, load_spec, parse_spec

if TYPE_CHECKING:  # pragma: no cover
    from .capacity import CapacityPlan, PlanInputs, plan_capacity
    from .sweep import SweepGrid

__version__ = "0.1.0"

# The JSON envelope version every command's --format json carries (kvplan.render).
SCHEMA_VERSION = 1

__all__ = [
    "DEFAULT_BLOCK_SIZE", "DTYPES", "SCHEMA_VERSION", "AttentionKind", "CapacityPlan", "DType",
    "Estimate", "HeadAttention", "InputError", "KVLayout", "KvplanError", "LatentAttention",
    "ModelSpec", "PlanInputs", "SpecError", "SweepGrid", "compare", "estimate", "kv_layout",
    "load_model", "load_spec", "parse_spec", "plan_capacity", "sweep",
]


def load_model(model: str) -> ModelSpec:
    """A model by bundled id (``"llama-3.1-8b"``), spec YAML, HuggingFace config.json or a folder
    holding one; raises ``SpecError`` (one line, naming the file and field) on bad input."""
    return load_spec(model)


class _CallableModule(types.ModuleType):
    """``kvplan.sweep`` and ``kvplan.compare`` are both a submodule and an API function: Python
    binds a package's submodule as its attribute on import, which would shadow a function of the
    same name. So the submodule itself is made callable; ``kvplan.sweep(spec, grid)`` calls
    ``kvplan.sweep.evaluate`` and ``kvplan.sweep.evaluate`` still works."""

    _api_function: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, self._api_function)(*args, **kwargs)


def _callable(module: types.ModuleType, function: str) -> types.ModuleType:
    module.__class__ = _CallableModule
    module._api_function = function  # type: ignore[attr-defined]
    return module


# `compare` and `sweep` load on first use (they and the cost model are not on the path of
# `kvplan estimate`); each module makes itself callable when it is imported, however it is.
_CALLABLE = {"compare": "compare_schemes", "sweep": "evaluate"}

# name -> (module, attribute): imported on first access (PEP 562).
_LAZY = {
    "plan_capacity": (".capacity", "plan_capacity"),
    "PlanInputs": (".capacity", "PlanInputs"),
    "CapacityPlan": (".capacity", "CapacityPlan"),
    "SweepGrid": (".sweep", "SweepGrid"),
}


def __getattr__(name: str) -> Any:
    if name in _CALLABLE:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module, __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kvplan' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_CALLABLE))
