"""Each command's one-line answer, as numbers (issue 28, "answer first"): what the table output
states first, before the derivation that `--explain` adds. Pure: the figures are picked from
the command's own result, never recomputed, so the answer and the tables cannot disagree;
`kvplan.present.answers` words them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan.engines.base import Engine

if TYPE_CHECKING:  # pragma: no cover - the results are only read here
    import pandas as pd

    from kvplan.analysis.check import CheckResult
    from kvplan.analysis.compare import Comparison
    from kvplan.analysis.device.verify import VerifyResult
    from kvplan.analysis.estimate_run import EstimateAnswer
    from kvplan.analysis.plan_types import ServingPlan
    from kvplan.analysis.rate_plan import RatePlan
    from kvplan.analysis.simulate.run import SimResult


@dataclass(frozen=True, kw_only=True)
class EstimateHeadline:
    """`estimate`: with a device, how many requests of `context` tokens fit; else the bytes."""

    context: int
    batch: int
    kv_dtype: str
    bytes_per_token: int | None  # None: no whole bytes per token (DeepSeek-V4)
    bytes_per_sequence: int
    bytes_per_batch: int
    max_requests: int | None = None  # None: no device or KV budget was given
    max_concurrency: float | None = None
    device: str | None = None
    engine: str | None = None
    engine_version: str | None = None


def estimate_headline(answer: EstimateAnswer, *, device: str | None = None) -> EstimateHeadline:
    est, plan = answer.estimate, answer.plan
    sizes = {"context": est.context, "batch": est.batch, "kv_dtype": est.kv_dtype,
             "bytes_per_token": est.bytes_per_token,
             "bytes_per_sequence": est.bytes_per_sequence,
             "bytes_per_batch": est.bytes_per_batch}
    if plan is None:
        return EstimateHeadline(**sizes)
    return EstimateHeadline(**{**sizes, "context": plan.context, "kv_dtype": plan.kv_dtype},
                            max_requests=plan.max_requests,
                            max_concurrency=plan.max_concurrency, device=device,
                            engine=Engine(plan.engine).rules.display_name,
                            engine_version=plan.engine_version)


@dataclass(frozen=True, kw_only=True)
class PlanHeadline:
    """`plan`: the verdict for the target, on which GPUs and layout, and what the layout holds."""

    verdict: str
    concurrency: int
    context: int
    gpu: str
    gpus: int | None = None  # None: no candidate at all
    layout: str = ""  # "tp 4, dp 2": as the launch command runs it (the engine's words)
    requests: int | None = None  # whole requests the chosen (or closest) layout holds
    max_concurrency: float | None = None
    reason: str = ""  # the plan's reason: why a layout that holds the target still does not fit


def plan_headline(result: ServingPlan) -> PlanHeadline:
    c = result.chosen
    base = {"verdict": result.verdict, "concurrency": result.concurrency,
            "context": result.context, "gpu": result.gpu, "reason": result.reason}
    if c is None:
        return PlanHeadline(**base)
    # The plan's own layout row (EngineRules.layout_text), never worded a second time here.
    return PlanHeadline(**base, gpus=c.layout.gpus, layout=result.layout_text,
                        requests=c.requests, max_concurrency=c.max_concurrency)


@dataclass(frozen=True, kw_only=True)
class RatePlanHeadline:
    """`plan --rate`: the fewest GPUs that serve the rate within the SLOs (None: none do)."""

    rate: float
    gpu: str
    max_gpus: int
    gpus: int | None = None
    tp: int | None = None
    replicas: int | None = None
    # With attention DP: the layout in the engine's words (RatePlan.layout_text); None without.
    dp_attention_layout: str | None = None
    pp: int = 1  # pipeline stages of each replica


def rate_plan_headline(plan: RatePlan) -> RatePlanHeadline:
    best = plan.best
    base = {"rate": plan.rate, "gpu": plan.gpu, "max_gpus": plan.max_gpus}
    if best is None:
        return RatePlanHeadline(**base)
    return RatePlanHeadline(**base, gpus=best.gpus, tp=best.tp, replicas=best.dp, pp=best.pp,
                            dp_attention_layout=plan.layout_text(best) if best.dp_attention
                            else None)


@dataclass(frozen=True, kw_only=True)
class CompareHeadline:
    """`compare`: the scheme(s) caching the fewest bytes per token, and the native scheme."""

    cheapest: tuple[str, ...]
    bytes_per_token: int
    ratio_vs_mha: float
    native: str
    native_bytes_per_token: int
    native_ratio_vs_mha: float


def compare_headline(comparison: Comparison) -> CompareHeadline:
    rows = comparison.rows
    least = min(r.bytes_per_token for r in rows)
    cheapest = [r for r in rows if r.bytes_per_token == least]
    # MLA's absorbed and naive forms cache the same latent: named once, as the family.
    names = tuple(dict.fromkeys("MLA" if r.scheme.startswith("MLA") and sum(
        s.scheme.startswith("MLA") for s in cheapest) > 1 else r.scheme for r in cheapest))
    native = next((r for r in rows if r.native), cheapest[0])
    return CompareHeadline(cheapest=names, bytes_per_token=least,
                           ratio_vs_mha=cheapest[0].ratio_vs_mha, native=native.scheme,
                           native_bytes_per_token=native.bytes_per_token,
                           native_ratio_vs_mha=native.ratio_vs_mha)


@dataclass(frozen=True, kw_only=True)
class SweepHeadline:
    """`sweep`: the point where the most requests fit (with a GPU), else the extremes of the
    KV bytes per sequence; `where` names the point by the dimensions that vary."""

    points: int
    max_requests: int | None = None
    context: int | None = None
    where: tuple[str, ...] = ()
    least_bytes_per_sequence: int | None = None
    most_bytes_per_sequence: int | None = None


_SWEEP_DIMS = ("model", "scheme", "kv_dtype", "gpu", "tp", "mem_fraction")


def sweep_headline(df: pd.DataFrame) -> SweepHeadline:
    points = len(df)
    if not points:
        return SweepHeadline(points=0)
    varying = [d for d in _SWEEP_DIMS if df[d].nunique(dropna=False) > 1]
    if df["max_requests"].notna().any():
        best = df.loc[df["max_requests"].astype("float64").idxmax()]
        where = tuple(_dim(d, _plain(best[d])) for d in varying)
        return SweepHeadline(points=points, max_requests=int(best["max_requests"]),
                             context=int(best["context"]), where=where)
    sizes = [int(v) for v in df["bytes_per_sequence"].tolist()]
    return SweepHeadline(points=points, least_bytes_per_sequence=min(sizes),
                         most_bytes_per_sequence=max(sizes))


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _dim(name: str, value: Any) -> str:
    if name == "tp":
        return f"tp {value}"
    if name == "mem_fraction":
        return f"fraction {value:.3g}"
    return str(value)


@dataclass(frozen=True, kw_only=True)
class SimulateHeadline:
    """`simulate`: the rate served, its percentile latencies, and the goodput under SLOs."""

    num_requests: int
    request_throughput: float
    ttft_p90_ms: float | None
    tpot_p90_ms: float | None
    goodput: float | None
    preemptions: int


def simulate_headline(result: SimResult) -> SimulateHeadline:
    m = result.metrics
    return SimulateHeadline(num_requests=m.num_requests,
                            request_throughput=m.request_throughput,
                            ttft_p90_ms=m.ttft_ms.get("p90"), tpot_p90_ms=m.tpot_ms.get("p90"),
                            goodput=m.goodput, preemptions=m.preemptions)


@dataclass(frozen=True, kw_only=True)
class CheckHeadline:
    """`check`: whether the server agrees with the plan, over how many quantities."""

    agree: bool
    compared: int  # quantities held against the plan (given ones excluded)
    disagreeing: tuple[str, ...]
    engine: str
    version: str | None


def check_headline(result: CheckResult) -> CheckHeadline:
    held = [d for d in result.differences if not d.given]
    live = result.live_deployment
    return CheckHeadline(agree=result.agree, compared=len(held),
                         disagreeing=tuple(d.quantity for d in result.disagreements),
                         engine=live.engine.rules.display_name, version=live.version)


@dataclass(frozen=True, kw_only=True)
class VerifyHeadline:
    """`verify`: the blocks kvplan planned against those the device held, and the checks."""

    planned_num_blocks: int
    measured_num_blocks: int
    difference_bytes: int
    difference_pct: float
    peak_ok: bool
    freed_ok: bool
    decode_ok: bool


def verify_headline(result: VerifyResult) -> VerifyHeadline:
    return VerifyHeadline(planned_num_blocks=result.predicted_num_blocks,
                          measured_num_blocks=result.measured_num_blocks,
                          difference_bytes=result.difference_bytes,
                          difference_pct=result.difference_pct, peak_ok=result.peak_ok,
                          freed_ok=result.freed_ok, decode_ok=result.decode_output_finite)

