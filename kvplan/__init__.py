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
- ``plan(model, concurrency=..., context=..., gpu=...)`` -> ``ServingPlan``: what ``kvplan plan``
  answers (fits or not, the layout, the launch command; ``.to_dict()`` is its JSON);
- ``compare(spec, context=..., ...)`` -> MHA/GQA/MQA/MLA side by side (``compare_schemes``);
- ``sweep(spec, SweepGrid(...))`` -> a pandas DataFrame, one row per grid point (``evaluate``).

>>> p = kvplan.plan("llama-3.1-8b", concurrency=16, context=8192, gpu="H100")
>>> p.fits, p.to_dict()["layout"]["gpus"], p.command.split()[:3]
(True, 1, ['vllm', 'serve', 'meta-llama/Llama-3.1-8B'])

Errors are ``KvplanError`` subclasses (``SpecError`` for a bad file, ``InputError`` for a bad
argument), each one line. The packages below are the implementation (ARCHITECTURE.md); these
names are the API. No API name is a module name, so no module is shadowed by a function.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING
from typing import Any as _Any

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
    from kvplan.analysis.planner import ServingPlan
    from kvplan.analysis.sweep import SweepGrid
    from kvplan.capacity.plan import CapacityPlan, plan_capacity
    from kvplan.engines.base import PlanInputs

__all__ = [
    "DEFAULT_BLOCK_SIZE", "DTYPES", "SCHEMA_VERSION", "AttentionKind", "CapacityPlan", "DType",
    "Estimate", "HeadAttention", "InputError", "KvplanError", "LatentAttention", "ModelSpec",
    "PlanInputs", "RankCaches", "ServingPlan", "SpecError", "SweepGrid", "__version__", "compare",
    "estimate", "load_model", "load_spec", "parse_spec", "plan", "plan_capacity", "rank_caches",
    "sweep",
]


def load_model(model: str) -> ModelSpec:
    """A model by bundled id (``"llama-3.1-8b"``), spec YAML, HuggingFace config.json or a folder
    holding one; raises ``SpecError`` (one line, naming the file and field) on bad input."""
    return load_spec(model)


def compare(spec: ModelSpec, **kwargs: _Any) -> Comparison:
    """MHA/GQA/MQA/MLA side by side for one model (``kvplan.analysis.compare.compare_schemes``)."""
    return _lazy("compare_schemes")(spec, **kwargs)


def sweep(spec: ModelSpec, grid: SweepGrid) -> pandas.DataFrame:
    """One row per grid point (``kvplan.analysis.sweep.evaluate``); loads pandas."""
    return _lazy("evaluate")(spec, grid)


def plan(model: str | ModelSpec, *, concurrency: int = 1, context: int | str | None = None,
         gpu: str = "H100-80GB", gpus_per_node: int = 8, nodes: int = 1, engine: str = "vllm",
         engine_version: str | None = None, kv_dtype: str | None = None,
         mem_fraction: float | None = None) -> ServingPlan:
    """``kvplan plan`` as a call: can ``model`` (an id, a file, or a ``ModelSpec``) serve
    ``concurrency`` requests of ``context`` tokens (an int, or ``"32k"``; default the model's
    maximum as ``engine`` derives it) on ``gpu``? Searches layouts, KV dtypes (``kv_dtype`` pins
    one) and memory fractions (``mem_fraction`` pins one) like the command
    (``kvplan.analysis.planner.plan_serving``)."""
    from kvplan.analysis.planner import PlanRequest, plan_serving
    from kvplan.analysis.sweep import parse_size
    from kvplan.engines.base import Engine
    from kvplan.engines.context import default_context
    from kvplan.hardware.gpus import get_gpu

    spec = load_spec(model) if isinstance(model, str) else model
    try:
        engine_ = Engine(engine)
    except ValueError:
        raise InputError(f"engine: expected one of {', '.join(e.value for e in Engine)}, "
                         f"got {engine!r}") from None
    if context is None:
        context = default_context(spec, engine_)  # the engine's own maximum
        if context is None:
            raise InputError("context: the model's max length is unknown; give context=")
    elif isinstance(context, str):
        context = parse_size("context", context)
    dtypes = None
    if kv_dtype is not None:  # "auto": the engine's own for the model, as `kvplan estimate`
        from kvplan._util.dtypes import KV_DTYPE_ALIASES
        from kvplan.engines.kv_dtype import asked_kv_dtype

        asked = asked_kv_dtype(kv_dtype)
        if asked is None:
            raise InputError(f"kv_dtype: unknown KV dtype {kv_dtype!r}; expected one of "
                             f"{', '.join(sorted(set(KV_DTYPE_ALIASES.values())))}")
        dtypes = (asked,)
    return plan_serving(spec, PlanRequest(
        concurrency=concurrency, context=context, gpu=get_gpu(gpu), gpus_per_node=gpus_per_node,
        nodes=nodes, engine=engine_, engine_version=engine_version, kv_dtypes=dtypes,
        mem_fraction=mem_fraction))


# API name -> (module, attribute): the parts not on the path of `kvplan estimate`, imported on
# first use (PEP 562).
_LAZY = {
    "plan_capacity": ("kvplan.capacity.plan", "plan_capacity"),
    "PlanInputs": ("kvplan.engines.base", "PlanInputs"),
    "CapacityPlan": ("kvplan.capacity.plan", "CapacityPlan"),
    "ServingPlan": ("kvplan.analysis.planner", "ServingPlan"),
    "SweepGrid": ("kvplan.analysis.sweep", "SweepGrid"),
    "compare_schemes": ("kvplan.analysis.compare", "compare_schemes"),
    "evaluate": ("kvplan.analysis.sweep", "evaluate"),
}


def _lazy(name: str) -> _Any:
    module, attr = _LAZY[name]
    return getattr(_importlib.import_module(module), attr)


def __getattr__(name: str) -> _Any:
    if name in _LAZY and name not in ("compare_schemes", "evaluate"):
        value = _lazy(name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kvplan' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Only the API names (the subpackages, bound by the import system as it loads them, are the
    implementation, not the API)."""
    return sorted(__all__)


del TYPE_CHECKING, annotations
