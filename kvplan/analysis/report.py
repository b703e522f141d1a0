"""`kvplan report`: what the report shows, computed once: the plan (with a target concurrency)
or the estimate (without), the capacity of the chosen layout on one GPU, and the capacity curves
against context. Rendering is kvplan.present.report_view's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.units import GiB
from kvplan.engines.base import DEFAULT_ENGINE, Engine
from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from kvplan.analysis.estimate_run import EstimateAnswer
    from kvplan.analysis.offload_run import OffloadAsk
    from kvplan.analysis.planner import ServingPlan
    from kvplan.capacity.offload import OffloadPlan
    from kvplan.capacity.plan import CapacityPlan


@dataclass(frozen=True, kw_only=True)
class ReportData:
    spec: ModelSpec
    device: str  # "H100-80GB, 79.19 GiB driver-reported", as `estimate` says it
    capacity: CapacityPlan | None  # one GPU of the chosen layout (None: nothing to plan)
    plan: ServingPlan | None = None  # with --concurrency
    # `estimate`'s answer: without --concurrency at --tp on the GPU; with it, the KV sizes of
    # the chosen layout (no device: the capacity is the plan's own).
    answer: EstimateAnswer | None = None
    curves: pd.DataFrame | None = None  # None: not asked (markdown) or nothing to draw
    gpus_per_node: int = 8
    offload: OffloadPlan | None = None  # the offload tiers, when asked
    kv_dtype_note: str | None = None  # the line saying the checkpoint chose the KV dtype


def device_text(gpu: GPU) -> str:
    return (f"{gpu.name}, {gpu.total_bytes / GiB:.2f} GiB "
            + ("driver-reported" if gpu.reported_total_bytes else "nominal"))


def build_report(spec: ModelSpec, *, context: int, gpu: GPU, concurrency: int | None = None,
                 gpus_per_node: int = 8, nodes: int = 1, engine: Engine = DEFAULT_ENGINE,
                 engine_version: str | None = None, kv_dtype: str | None = None,
                 mem_fraction: float | None = None, tp: int = 1,
                 curves: bool = True, offload: OffloadAsk | None = None) -> ReportData:
    """With `concurrency`: `kvplan plan`'s answer (plan_serving) and its chosen candidate's
    capacity; without: `kvplan estimate --gpu`'s (run_estimate) at `tp`. `curves`: also the
    capacity against context (kvplan.analysis.curves; loads pandas). `kv_dtype` ENGINE_AUTO,
    and None for an estimate: the engine's own for the model, as `kvplan estimate` takes it
    (kvplan.engines.kv_dtype.run_kv_dtype); None for a plan: every dtype the engine runs."""
    from kvplan.analysis.curves import candidate_tps, capacity_curves, plan_curves
    from kvplan.analysis.estimate_run import run_estimate
    from kvplan.analysis.inputs import estimate_inputs

    if concurrency is not None:
        from kvplan.analysis.offload_run import plan_offload
        from kvplan.analysis.planner import PlanRequest, plan_serving

        req = PlanRequest(
            concurrency=concurrency, context=context, gpu=gpu, gpus_per_node=gpus_per_node,
            nodes=nodes, engine=engine, engine_version=engine_version,
            kv_dtypes=None if kv_dtype is None else (kv_dtype,), mem_fraction=mem_fraction)
        plan, tiers = plan_offload(spec, req, plan_serving(spec, req), offload)
        chosen = plan.chosen
        answer = None
        if chosen is not None:  # the KV sizes per layer of the chosen layout, as `estimate`
            answer = run_estimate(estimate_inputs(
                spec, context=chosen.context, kv_dtype=chosen.kv_dtype, engine=engine,
                tp=chosen.layout.tp, engine_version=engine_version))
        df = plan_curves(spec, plan.to_dict(), gpus=gpus_per_node) if curves else None
        return ReportData(spec=spec, device=device_text(gpu),
                          capacity=chosen.capacity if chosen is not None else None, plan=plan,
                          answer=answer, curves=df, gpus_per_node=gpus_per_node,
                          offload=tiers)

    inputs = estimate_inputs(spec, context=context, kv_dtype=kv_dtype, engine=engine,
                             gpu=gpu.name, tp=tp, mem_fraction=mem_fraction,
                             engine_version=engine_version)
    answer = run_estimate(inputs, offload=offload)
    df = None
    if curves:
        tps: Any = candidate_tps(inputs.spec, gpus_per_node, tp)
        df = capacity_curves(inputs.spec, context=context, gpu=gpu.name, engine=engine,
                             kv_dtype=inputs.sizing.kv_dtype, mem_fraction=mem_fraction,
                             tps=tps)
    return ReportData(spec=inputs.spec, device=inputs.device, capacity=answer.plan,
                      answer=answer, curves=df, gpus_per_node=gpus_per_node,
                      offload=answer.offload, kv_dtype_note=inputs.kv_dtype_note)
