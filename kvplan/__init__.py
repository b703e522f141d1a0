"""kvplan: plan LLM inference KV-cache memory.

The public API is pure (no typer, rich or torch; pandas only when a sweep runs) and imports its
heavier parts lazily, on first use:

>>> import kvplan
>>> spec = kvplan.load_model("deepseek-v2")
>>> kvplan.estimate(spec, context=4096).bytes_per_token
69120

- ``load_model(model)``: a bundled id, a spec YAML, a config.json or a folder holding one ->
  ``ModelSpec`` (``kvplan.sources.resolve.load_model`` also returns the import warnings);
- ``estimate(spec, context=..., batch=..., kv_dtype=..., block_size=..., tp=...)`` -> ``Estimate``;
- ``rank_caches(spec, kv_dtype=..., tp=...)`` -> ``RankCaches``: every layer's caches on one rank,
  one type per cache kind (``kvplan.kv.kinds``), with bytes per token and per request;
- ``plan_capacity(spec, PlanInputs(...))`` -> ``CapacityPlan`` (how many requests fit);
- ``compare(spec, context=..., ...)`` -> MHA/GQA/MQA/MLA side by side (``compare_schemes``);
- ``sweep(spec, SweepGrid(...))`` -> a pandas DataFrame, one row per grid point (``evaluate``).

Errors are ``KvplanError`` subclasses (``SpecError`` for a bad file, ``InputError`` for a bad
argument), each one line. The packages below are the implementation (ARCHITECTURE.md); these
names are the API. No API name is a module name, so no module is shadowed by a function.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kvplan._util.dtypes import DTYPES, DType
from kvplan._util.errors import InputError, KvplanError, SpecError
from kvplan._util.version import SCHEMA_VERSION, __version__
from kvplan.kv.cache import DEFAULT_BLOCK_SIZE, Estimate, estimate, rank_caches
from kvplan.kv.kinds import RankCaches
from kvplan.model.attention import AttentionKind, HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.sources.resolve import load_spec
from kvplan.sources.spec_yaml import parse_spec

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from kvplan.analysis.compare import Comparison
    from kvplan.analysis.sweep import SweepGrid
    from kvplan.capacity.plan import CapacityPlan, plan_capacity
    from kvplan.engines.base import PlanInputs

__all__ = [
    "DEFAULT_BLOCK_SIZE", "DTYPES", "SCHEMA_VERSION", "AttentionKind", "CapacityPlan", "DType",
    "Estimate", "HeadAttention", "InputError", "KvplanError", "LatentAttention", "ModelSpec",
    "PlanInputs", "RankCaches", "SpecError", "SweepGrid", "__version__", "compare", "estimate",
    "load_model", "load_spec", "parse_spec", "plan_capacity", "rank_caches", "sweep",
]


def load_model(model: str) -> ModelSpec:
    """A model by bundled id (``"llama-3.1-8b"``), spec YAML, HuggingFace config.json or a folder
    holding one; raises ``SpecError`` (one line, naming the file and field) on bad input."""
    return load_spec(model)


def compare(spec: ModelSpec, **kwargs: Any) -> Comparison:
    """MHA/GQA/MQA/MLA side by side for one model (``kvplan.analysis.compare.compare_schemes``)."""
    return _lazy("compare_schemes")(spec, **kwargs)


def sweep(spec: ModelSpec, grid: SweepGrid) -> pandas.DataFrame:
    """One row per grid point (``kvplan.analysis.sweep.evaluate``); loads pandas."""
    return _lazy("evaluate")(spec, grid)


# API name -> (module, attribute): the parts not on the path of `kvplan estimate`, imported on
# first use (PEP 562).
_LAZY = {
    "plan_capacity": ("kvplan.capacity.plan", "plan_capacity"),
    "PlanInputs": ("kvplan.engines.base", "PlanInputs"),
    "CapacityPlan": ("kvplan.capacity.plan", "CapacityPlan"),
    "SweepGrid": ("kvplan.analysis.sweep", "SweepGrid"),
    "compare_schemes": ("kvplan.analysis.compare", "compare_schemes"),
    "evaluate": ("kvplan.analysis.sweep", "evaluate"),
}


def _lazy(name: str) -> Any:
    module, attr = _LAZY[name]
    return getattr(importlib.import_module(module), attr)


def __getattr__(name: str) -> Any:
    if name in _LAZY and name not in ("compare_schemes", "evaluate"):
        value = _lazy(name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kvplan' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
