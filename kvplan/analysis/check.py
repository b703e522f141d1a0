"""`kvplan check`: a running server's KV capacity against kvplan's plan for the same settings.
Pure: the server is read by kvplan.analysis.server_read; this module only compares.

The plan is built the way `kvplan estimate` builds it (analysis.inputs.estimate_inputs,
analysis.estimate_run.run_estimate), from the settings the user stated (what the deployment was
meant to be) over the settings the server states (what it is), plus what the server cannot say
(the GPU, the platform, the chunked-prefill budget). Each quantity both sides have is compared
within the engine's measured error (`MeasuredError`, from kvplan's benches); a disagreement
names the quantity, by how much, and the likely cause.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan._util.versions import version_key
from kvplan.analysis.estimate_run import run_estimate
from kvplan.analysis.inputs import estimate_inputs
from kvplan.engines.context import default_context
from kvplan.engines.kv_dtype import ENGINE_AUTO, run_kv_dtype
from kvplan.engines.live import EXACT, QUANTITIES, LiveDeployment, MeasuredError, live_reader

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.capacity.plan import CapacityPlan
    from kvplan.model.spec import ModelSpec

# Settings a disagreement is traced back to, in the order a cause is named, with the word the
# verdict uses for each.
CAUSES = {"kv_dtype": "dtype", "mem_fraction": "fraction", "engine_version": "version",
          "block_size": "block size", "context": "max_model_len", "tp": "TP",
          "prefix_caching": "prefix caching", "ssm_dtype": "state dtype",
          "kv_cache_memory": "KV budget", "kv_budget_gib": "KV budget"}
FLOAT_EPS = 1e-9  # a float label printed with str(): equal to the plan's up to rounding


@dataclass(frozen=True, kw_only=True)
class SettingRow:
    """One setting: as the user stated it, as the server states it, and what the plan used."""

    name: str
    stated: Any
    server: str | None
    used: Any
    differs: bool


@dataclass(frozen=True, kw_only=True)
class Difference:
    quantity: str
    live: float
    predicted: float
    difference: float
    """live - predicted."""
    percent: float | None
    allowed: float
    """The largest |difference| that still agrees (the measured error plus print rounding)."""
    agree: bool
    given: bool = False
    """The quantity was an input of the plan (a KV budget the deployment states): shown, never
    counted for or against agreement."""
    cause: str | None = None


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    url: str
    live_deployment: LiveDeployment
    model: str
    plan: CapacityPlan
    live: dict[str, float]
    predicted: dict[str, float]
    differences: tuple[Difference, ...]
    settings: tuple[SettingRow, ...]
    error: MeasuredError
    budget_given: bool
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def agree(self) -> bool:
        return all(d.agree for d in self.differences)

    @property
    def disagreements(self) -> tuple[Difference, ...]:
        return tuple(d for d in self.differences if not d.agree)


def _same(name: str, a: Any, b: Any) -> bool:
    if name == "engine_version":
        ka, kb = list(version_key(str(a))), list(version_key(str(b)))
        while len(ka) > 1 and ka[-1] == 0:
            ka.pop()
        while len(kb) > 1 and kb[-1] == 0:
            kb.pop()
        return ka == kb
    if isinstance(a, float) or isinstance(b, float):
        try:
            return abs(float(a) - float(b)) <= FLOAT_EPS * max(1.0, abs(float(b)))
        except (TypeError, ValueError):
            return False
    return bool(a == b)


def used_settings(live: LiveDeployment, stated: Mapping[str, Any]
                  ) -> tuple[dict[str, Any], tuple[SettingRow, ...]]:
    """The plan's settings: each stated one over the server's; and the rows that show them."""
    stated = dict(stated)
    if stated.get("kv_budget_gib") is not None and "kv_cache_memory" not in stated:
        # One budget setting, in bytes, so that it meets the server's kv_cache_memory_bytes.
        stated["kv_cache_memory"] = round(stated.pop("kv_budget_gib") * GiB)
    used = {**live.settings, **stated}
    rows = []
    for name in dict.fromkeys([*live.shown, *stated]):
        server = live.settings.get(name)
        given = stated.get(name)
        differs = name in stated and server is not None and not _same(name, given, server)
        rows.append(SettingRow(name=name, stated=given, server=live.shown.get(name),
                               used=used.get(name), differs=differs))
    return used, tuple(rows)


def _power_of_two_ratio(live: float, predicted: float) -> int | None:
    """2, 4, 1/2, 1/4 when live / predicted is that within 3 % (a KV element of another
    width), else None."""
    if live <= 0 or predicted <= 0:
        return None
    ratio = live / predicted
    for factor in (2, 4):
        for r in (factor, 1 / factor):
            if abs(ratio / r - 1) <= 0.03:
                return factor if r > 1 else -factor
    return None


def likely_cause(quantity: str, live: float, predicted: float, rows: tuple[SettingRow, ...],
                 *, budget_given: bool, version: str | None, plan: CapacityPlan) -> str:
    """Why the server and the plan differ on `quantity`: a setting stated one way and run
    another, else what the size of the gap points to."""
    differing = [r for r in rows if r.differs and r.name in CAUSES]
    if differing:
        return "; ".join(f"{CAUSES[r.name]}: the plan used {r.stated}, the server runs "
                         f"{r.server}" for r in differing)
    factor = _power_of_two_ratio(live, predicted)
    if factor is not None and quantity != "block_size":
        times = f"{abs(factor)}x {'more' if factor > 0 else 'less'}"
        return (f"dtype: the server holds {times} than planned, as a KV element "
                f"{abs(factor)}x {'narrower' if factor > 0 else 'wider'} would (state the "
                "server's --kv-dtype)")
    if quantity == "block_size":
        return (f"version: the server resolved a {int(live)}-token block, kvplan's rules for "
                f"{version or 'the newest release'} a {int(predicted)}-token one")
    if budget_given:
        return (f"version: with the KV budget given, the page layout kvplan models for "
                f"{version or 'the newest release'} differs from the server's (a layer kind or "
                "rule kvplan does not model)")
    return (f"an unmodelled reserve: kvplan's KV budget for this GPU is "
            f"{plan.kv_budget_bytes / GiB:.2f} GiB (reserve {plan.reserve_bytes / GiB:.2f} GiB, "
            f"fraction {plan.mem_fraction:g}); state the server's with --kv-budget-gib to check "
            "the layout alone, or --weights-gib / --reserve-gib")


def compare(live_q: Mapping[str, float], predicted: Mapping[str, float], *,
            error: MeasuredError, resolution: Mapping[str, float], predicted_kv_bytes: int,
            given: frozenset[str] = frozenset()) -> list[Difference]:
    """Every quantity both sides have, in `QUANTITIES` order, within the measured error."""
    out = []
    for key in QUANTITIES:
        if key not in live_q or key not in predicted:
            continue
        lv, pv = float(live_q[key]), float(predicted[key])
        if key in EXACT:
            allowed = 0.0
        else:
            allowed = error.slack(pv, predicted_kv_bytes) + resolution.get(key, 0.0)
            if isinstance(predicted[key], float):  # a float label, printed with str()
                allowed += FLOAT_EPS * abs(pv)
        diff = lv - pv
        out.append(Difference(
            quantity=key, live=live_q[key], predicted=predicted[key], difference=diff,
            percent=None if pv == 0 else 100.0 * diff / pv, allowed=allowed,
            agree=key in given or abs(diff) <= allowed, given=key in given))
    return out


def _auto_resolved(spec: ModelSpec, live: LiveDeployment, stated: Mapping[str, Any],
                   options: Mapping[str, Any]) -> LiveDeployment:
    """`live` with a server's cache dtype ``auto`` as its engine runs it for `spec`
    (kvplan.engines.kv_dtype.run_kv_dtype: fp16 for a float16 checkpoint, the declared dtype where
    one is), so that a stated --kv-dtype is compared with what the server runs; left ``auto``
    where that is refused (the estimate then refuses it in one line)."""
    if live.settings.get("kv_dtype") != ENGINE_AUTO:
        return live
    from dataclasses import replace

    from kvplan.hardware.gpus import get_gpu

    gpu = get_gpu(str(options["gpu"])) if options.get("gpu") else None
    version = stated.get("engine_version") or live.settings.get("engine_version")
    try:
        kv, _ = run_kv_dtype(live.engine, spec, ENGINE_AUTO, version, gpu)
    except InputError:
        return live
    return replace(live, settings={**live.settings, "kv_dtype": kv})


def check_deployment(spec: ModelSpec, live: LiveDeployment, *, url: str,
                     stated: Mapping[str, Any], options: Mapping[str, Any]) -> CheckResult:
    """The plan for the deployment's settings (`stated` over the server's), compared with what
    the server allocated. `options` are further estimate_inputs keywords the server cannot
    state (gpu, gpu_mem_gib, platform, max_num_batched_tokens, weights_gib, ...)."""
    reader = live_reader(live.engine)
    used, rows = used_settings(_auto_resolved(spec, live, stated, options), stated)
    if live.settings.get("kv_dtype") == ENGINE_AUTO and "kv_dtype" not in stated:
        used["kv_dtype"] = ENGINE_AUTO  # the estimate resolves it again, with its note
    budget_given = any(used.get(k) is not None for k in ("kv_cache_memory", "kv_budget_gib"))
    if not budget_given and options.get("gpu") is None and options.get("gpu_mem_gib") is None:
        raise InputError("--gpu: the server does not say its device; give --gpu or "
                         "--gpu-mem-gib (or --kv-budget-gib)")
    extra_notes = []
    if used.get("context") is None:
        # Unset on the server (SGLang's context_length None): the model's own length, as the
        # engines default it.
        own = default_context(spec, live.engine)
        if own is None:
            raise InputError("--context: neither the server nor the model states the max "
                             "length; give --context")
        used["context"] = own
        extra_notes.append(f"max_model_len: the server leaves it unset; the model's "
                           f"{own:,} tokens used")
    kwargs = {**options, **used}
    inputs = estimate_inputs(spec, engine=live.engine, **kwargs)
    answer = run_estimate(inputs)
    plan = answer.plan
    if plan is None:  # pragma: no cover - a device or budget is always given above
        raise InputError("--gpu: no capacity plan")
    predicted_all = reader.predicted(plan)
    live_q = {k: v for k, v in live.capacity.items() if k in predicted_all}
    predicted = {k: predicted_all[k] for k in live_q}
    given = frozenset({"kv_cache_memory_bytes"} if budget_given else ())
    error = reader.measured_error(budget_given=budget_given)
    diffs = compare(live_q, predicted, error=error, resolution=reader.resolution(),
                    predicted_kv_bytes=plan.kv_budget_bytes, given=given)
    version = used.get("engine_version")
    diffs = [d if d.agree else _with_cause(d, rows, budget_given, version, plan) for d in diffs]
    notes = [*live.notes, *extra_notes]
    if not diffs:
        raise InputError(f"{url}: the server exposes no KV capacity kvplan predicts (num_gpu_"
                         "blocks, KV tokens or memory); nothing to check")
    return CheckResult(url=url, live_deployment=live, model=spec.id, plan=plan, live=live_q,
                       predicted=predicted, differences=tuple(diffs), settings=rows,
                       error=error, budget_given=budget_given, notes=tuple(notes))


def _with_cause(d: Difference, rows: tuple[SettingRow, ...], budget_given: bool,
                version: str | None, plan: CapacityPlan) -> Difference:
    from dataclasses import replace

    return replace(d, cause=likely_cause(d.quantity, float(d.live), float(d.predicted), rows,
                                         budget_given=budget_given, version=version, plan=plan))


# --- --watch: the load against the plan ---------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class LoadPoint:
    """One reading of the server's load, at `t_s` seconds (a monotonic clock)."""

    t_s: float
    kv_usage: float | None
    running: int | None
    waiting: int | None
    prefix_cache_hits: float | None = None
    prefix_cache_queries: float | None = None
    prefix_hit_rate: float | None = None


@dataclass(frozen=True, kw_only=True)
class LoadView:
    """The load against the plan's capacity, for the watch view and `--once`."""

    kv_usage: float | None
    kv_tokens_used: int | None
    kv_tokens_capacity: int
    running: int | None
    waiting: int | None
    planned_max_requests: int
    prefix_hit_rate: float | None
    kv_usage_growth_per_s: float | None
    seconds_to_kv_exhaustion: float | None
    """At the growth between the last two readings; None when flat, shrinking or unknown."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def load_view(result: CheckResult, now: LoadPoint, before: LoadPoint | None = None) -> LoadView:
    """`now` against the plan; with `before`, the KV growth and the time left at that growth."""
    capacity = int(result.live.get("kv_cache_tokens", result.plan.reported_kv_cache_tokens))
    growth = exhaustion = None
    if before is not None and now.kv_usage is not None and before.kv_usage is not None and \
            now.t_s > before.t_s:
        growth = (now.kv_usage - before.kv_usage) / (now.t_s - before.t_s)
        if growth > 0:
            exhaustion = max(0.0, (1.0 - now.kv_usage) / growth)
    rate = now.prefix_hit_rate
    hits, queries = now.prefix_cache_hits, now.prefix_cache_queries
    if before is not None and None not in (hits, queries, before.prefix_cache_hits,
                                           before.prefix_cache_queries):
        dq = queries - before.prefix_cache_queries  # type: ignore[operator]
        if dq > 0:
            rate = (hits - before.prefix_cache_hits) / dq  # type: ignore[operator]
    if rate is None and hits is not None and queries:
        rate = hits / queries
    return LoadView(
        kv_usage=now.kv_usage,
        kv_tokens_used=None if now.kv_usage is None else round(now.kv_usage * capacity),
        kv_tokens_capacity=capacity, running=now.running, waiting=now.waiting,
        planned_max_requests=result.plan.max_requests, prefix_hit_rate=rate,
        kv_usage_growth_per_s=growth, seconds_to_kv_exhaustion=exhaustion)
