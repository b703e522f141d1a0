"""What a simulated run reports, as `vllm bench serve` computes it (vllm/benchmarks/serve.py
`calculate_metrics`): TTFT from sending to the first token; TPOT per request, (e2e - TTFT) /
(output tokens - 1), over requests with more than one output token; ITL, every gap between two
tokens of a request; E2E, sending to the last token; percentiles as numpy's (linear
interpolation); throughputs over the run's duration (first request sent to last one done);
goodput, the requests per second that meet every SLO given. KV usage (vLLM's
BlockPool.get_usage after each step) is averaged over steps, not over time; the prefix hit rate
is vLLM's (hit tokens / looked-up tokens, first admissions only)."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from kvplan.analysis.simulate.sim_types import SimState

PERCENTILES = (50, 90, 99)


def weighted_percentile(values: Sequence[float], weights: Sequence[int], p: float) -> float:
    """numpy.percentile(p) (linear) of the multiset holding each value `weight` times."""
    return _Sorted(values, weights).percentile(p)


class _Sorted:
    """The (value, weight) pairs sorted once, with their running weight: each percentile a
    bisection, not a sort and a scan (summary_ms asks three of one list)."""

    def __init__(self, values: Sequence[float], weights: Sequence[int]) -> None:
        self.pairs = sorted(zip(values, weights, strict=True))
        self.seen = list(itertools.accumulate(w for _, w in self.pairs))
        self.n = self.seen[-1] if self.seen else 0

    def at(self, index: int) -> float:
        """The value at `index` of the multiset in order: the first pair whose running weight
        passes it (the last value past the end)."""
        k = bisect.bisect_right(self.seen, index)
        return self.pairs[k][0] if k < len(self.pairs) else self.pairs[-1][0]

    def percentile(self, p: float) -> float:
        if self.n == 0:
            return math.nan
        pos = p / 100 * (self.n - 1)
        lo_index, frac = int(math.floor(pos)), pos - math.floor(pos)
        lo = self.at(lo_index)
        if frac == 0:
            return lo
        return lo + (self.at(lo_index + 1) - lo) * frac


def summary_ms(values: Sequence[float], weights: Sequence[int] | None = None
               ) -> dict[str, float | None]:
    """{mean, p50, p90, p99} in milliseconds of seconds `values` (None when empty)."""
    w = [1] * len(values) if weights is None else list(weights)
    n = sum(w)
    if n == 0:
        return {"mean": None, **{f"p{p}": None for p in PERCENTILES}}
    mean = sum(v * k for v, k in zip(values, w, strict=True)) / n
    ordered = _Sorted(values, w)
    return {"mean": mean * 1e3, **{f"p{p}": ordered.percentile(p) * 1e3 for p in PERCENTILES}}


@dataclass(frozen=True, kw_only=True)
class SimMetrics:
    """The JSON contract of `kvplan simulate` (issue 30): these keys are kept."""

    num_requests: int
    duration_s: float
    ttft_ms: dict[str, float | None]
    tpot_ms: dict[str, float | None]
    itl_ms: dict[str, float | None]
    e2e_ms: dict[str, float | None]
    request_throughput: float
    output_throughput: float
    preemptions: int
    kv_usage: dict[str, float]
    prefix_hit_rate: float | None
    goodput: float | None
    steps: int
    input_tokens: int
    output_tokens: int
    slo: dict[str, float | None] = field(default_factory=dict)
    # SGLang's hybrid pools (None for the others): the sliding-window pool's use per step
    # (held / its tokens) and the mamba slots the running requests hold, mean and max.
    swa_usage: dict[str, float] | None = None
    mamba_slots_used: dict[str, float] | None = None
    # The SWA radix cache's prefix hits simulated (SGLang 0.5.8 - 0.5.11): the sliding-layer
    # tokens its eviction took from cached pages (tombstones), over the replicas.
    swa_tombstoned_tokens: int | None = None
    # The mamba radix cache's prefix hits simulated (SGLang 0.5.7 - 0.5.12): the recurrent
    # states its eviction took from the tree for slots (evict_mamba), over the replicas.
    mamba_states_evicted: int | None = None
    # Speculative decoding (vLLM): the drafter, its acceptance as given and as the run drew it
    # (kvplan.analysis.simulate.spec_sim.spec_metrics); None without it.
    spec_decode: dict[str, object] | None = None


def metrics(states: Sequence[SimState], *, slo_ttft_ms: float | None = None,
            slo_tpot_ms: float | None = None) -> SimMetrics:
    """The run's figures over one or more replicas (data parallelism)."""
    finished = [r for st in states for r in st.finished]
    start = min((st.first_arrival_s for st in states), default=0.0)
    end = max((st.clock_s for st in states), default=0.0)
    duration = end - start
    ttft = [r.first_token_s - r.sent_s for r in finished]
    e2e = [r.finish_s - r.sent_s for r in finished]
    tpot = [(r.finish_s - r.first_token_s) / (r.output_len - 1) for r in finished
            if r.output_len > 1]
    itl_v = [v for st in states for v in st.itl_values]
    itl_w = [w for st in states for w in st.itl_weights]
    out_tokens = sum(r.output_len for r in finished)
    in_tokens = sum(r.prompt_len for r in finished)
    steps = sum(st.steps for st in states)
    queries = sum(st.prefix_queries for st in states)
    goodput = None
    if slo_ttft_ms is not None or slo_tpot_ms is not None:
        good = 0
        for r in finished:
            ok = slo_ttft_ms is None or (r.first_token_s - r.sent_s) * 1e3 <= slo_ttft_ms
            if ok and slo_tpot_ms is not None and r.output_len > 1:
                ok = (r.finish_s - r.first_token_s) / (r.output_len - 1) * 1e3 <= slo_tpot_ms
            good += ok
        goodput = good / duration if duration > 0 else 0.0
    return SimMetrics(
        num_requests=len(finished),
        duration_s=duration,
        ttft_ms=summary_ms(ttft),
        tpot_ms=summary_ms(tpot),
        itl_ms=summary_ms(itl_v, itl_w),
        e2e_ms=summary_ms(e2e),
        request_throughput=len(finished) / duration if duration > 0 else 0.0,
        output_throughput=out_tokens / duration if duration > 0 else 0.0,
        preemptions=sum(st.preemptions for st in states),
        kv_usage={"mean": sum(st.usage_sum for st in states) / steps if steps else 0.0,
                  "max": max((st.usage_max for st in states), default=0.0)},
        prefix_hit_rate=(sum(st.prefix_hits for st in states) / queries) if queries else None,
        goodput=goodput,
        steps=steps,
        input_tokens=in_tokens,
        output_tokens=out_tokens,
        slo={"ttft_ms": slo_ttft_ms, "tpot_ms": slo_tpot_ms},
    )
