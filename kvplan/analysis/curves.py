"""Capacity against context for `plan --plot`, `compare --plot` and `kvplan report`: sweep grids
(kvplan.analysis.sweep) built from a plan or a comparison's settings, so the curves are the
sweep's numbers, and the sweep's numbers are `estimate`'s. Loads pandas (only these call it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import KvplanError
from kvplan.analysis.sweep import SweepGrid, evaluate
from kvplan.engines.base import Engine
from kvplan.engines.context import max_context_tokens

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from kvplan.model.spec import ModelSpec

FIRST_CONTEXT = 1024


def context_axis(context: int, max_context: int | None = None) -> tuple[int, ...]:
    """Powers of two from 1k up to the larger of `context` and the model's maximum, with both
    of those themselves: the x axis of every curve here."""
    top = max(context, max_context or 0, FIRST_CONTEXT)
    points = {context}
    if max_context:
        points.add(max_context)
    n = FIRST_CONTEXT
    while n <= top:
        points.add(n)
        n *= 2
    return tuple(sorted(points))


def candidate_tps(spec: ModelSpec, gpus: int, chosen: int | None = None) -> tuple[int, ...]:
    """The tensor-parallel degrees to draw: powers of two up to `gpus` (and the plan's own)
    that the engines accept for this model (kvplan.kv.cache.check_tp)."""
    from kvplan.kv.cache import check_tp

    tps = {chosen} if chosen else set()
    t = 1
    while t <= gpus:
        tps.add(t)
        t *= 2
    ok = []
    for tp in sorted(tps):
        try:
            check_tp(spec, tp)
        except KvplanError:
            continue
        ok.append(tp)
    return tuple(ok)


def capacity_curves(spec: ModelSpec, *, context: int, gpu: str, engine: Engine, kv_dtype: str,
                    mem_fraction: float | None, tps: tuple[int, ...],
                    platform: str | None = None, cpu_amx: bool | None = None) -> pd.DataFrame:
    """Max concurrency of one replica against context, one line per TP degree (`platform`,
    `cpu_amx`: estimate's --platform and --cpu-amx)."""
    grid = SweepGrid(contexts=context_axis(context, max_context_tokens(spec, engine)),
                     kv_dtypes=(kv_dtype,), gpus=(gpu,), tps=tps, engine=engine,
                     mem_fractions=() if mem_fraction is None else (mem_fraction,),
                     platform=platform, cpu_amx=cpu_amx)
    return evaluate(spec, grid)


def plan_curves(spec: ModelSpec, plan: dict[str, object], *, gpus: int,
                platform: str | None = None, cpu_amx: bool | None = None) -> pd.DataFrame:
    """Max concurrency of one replica against context, one line per candidate TP degree, at the
    plan's KV dtype, memory fraction, GPU and engine (`plan` is `ServingPlan.to_dict()`)."""
    layout = plan.get("layout") or {}
    assert isinstance(layout, dict)
    fraction = plan.get("mem_fraction")
    return capacity_curves(
        spec, context=int(str(plan["context"])), gpu=str(plan["gpu"]),
        engine=Engine(str(plan["engine"])), kv_dtype=str(plan.get("kv_dtype") or "bf16"),
        mem_fraction=None if fraction is None else float(str(fraction)),
        tps=candidate_tps(spec, gpus, layout.get("tp")), platform=platform, cpu_amx=cpu_amx)


def compare_curves(spec: ModelSpec, *, context: int, kv_dtype: str, tp: int, gpu: str | None,
                   groups: int, block_size: int | None, platform: str | None = None,
                   cpu_amx: bool | None = None) -> pd.DataFrame:
    """`kvplan compare`'s schemes against context: max concurrency on `gpu`, else bytes per
    sequence (the sweep's `--scheme native,mha,gqa,mqa,mla`)."""
    from kvplan.analysis.sweep import scheme_spec

    schemes = ["native"]
    for scheme in ("mha", "gqa", "mqa", "mla"):
        try:
            scheme_spec(spec, scheme, groups=groups)
        except KvplanError:
            continue
        schemes.append(scheme)
    grid = SweepGrid(contexts=context_axis(context, spec.max_context_tokens),
                     kv_dtypes=(kv_dtype,), schemes=tuple(schemes),
                     gpus=() if gpu is None else (gpu,), tps=(tp,), block_size=block_size,
                     groups=groups, platform=platform, cpu_amx=cpu_amx)
    return evaluate(spec, grid)
