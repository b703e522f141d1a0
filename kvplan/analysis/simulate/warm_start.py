"""A run on a server that served other requests before it: its prefix cache warm.

A benchmark client that runs several benches against one server without flushing its cache
(SGLang's radix cache keeps every finished request's tokens until the pool needs them) starts
each run with the earlier runs' prompts cached: a prompt that shares its leading tokens with an
earlier one (RequestSpec.segments) computes only the rest. `simulate_after` serves the earlier
batches on the engine first, each after the one before has finished and the engine has idled,
then the run, and reports the run's figures alone (kvplan.analysis.simulate.metrics over its
requests, its steps and its gaps; the KV usage maximum is the whole engine's)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.gc_scope import collector_paused
from kvplan.analysis.simulate.metrics import SimMetrics, metrics
from kvplan.analysis.simulate.run import SimSetup, _engine, let_go
from kvplan.analysis.simulate.sim_types import SimState
from kvplan.analysis.simulate.workload import RequestSpec

# Seconds the engine idles between two batches (any positive gap: an idle engine resets SGLang's
# new-token ratio; nothing else reads the clock across batches).
IDLE_GAP_S = 1.0


@collector_paused()  # speed only (kvplan.analysis.simulate.gc_scope)
def simulate_after(sim: SimSetup, earlier: Sequence[Sequence[RequestSpec]],
                   requests: Sequence[RequestSpec], *, concurrency: int | None = None,
                   earlier_concurrency: Sequence[int | None] | None = None) -> SimMetrics:
    """`requests` served on one engine of `sim` after the batches `earlier`, in order, each at
    `concurrency` (arrival times within a batch as given, from its start), or each earlier
    batch at its own entry of `earlier_concurrency` (a client that swept its concurrency on
    one server): the figures of `requests` alone. One replica without attention-DP lockstep
    only."""
    if sim.dp != 1 or sim.dp_balance is not None:
        raise InputError("a warm start is simulated on one replica only (dp 1)")
    if earlier_concurrency is not None and len(earlier_concurrency) != len(earlier):
        raise InputError(f"{len(earlier_concurrency)} concurrencies for {len(earlier)} "
                         "earlier batches: one each expected")
    limits = [*(earlier_concurrency if earlier_concurrency is not None
                else [concurrency] * len(earlier)), concurrency]
    engine = _engine(sim, sim.pool_blocks or sim.plan.num_blocks, timeline=False,
                     bulk_decode=True)
    st = engine.state
    sent = 0
    for batch, limit in zip((*earlier, requests), limits, strict=True):
        start = st.clock_s + IDLE_GAP_S if sent else 0.0
        mark = (len(st.finished), len(st.itl_values), st.steps, st.preemptions, st.usage_sum,
                st.prefix_queries, st.prefix_hits)
        engine.run([replace(r, arrival_s=r.arrival_s + start) for r in batch],
                   concurrency=limit, first_id=sent)
        sent += len(batch)
    done, gaps, steps, preempted, usage, queries, hits = mark
    part = SimState(finished=st.finished[done:], itl_values=st.itl_values[gaps:],
                    itl_weights=st.itl_weights[gaps:], steps=st.steps - steps,
                    preemptions=st.preemptions - preempted, usage_sum=st.usage_sum - usage,
                    usage_max=st.usage_max, prefix_queries=st.prefix_queries - queries,
                    prefix_hits=st.prefix_hits - hits, clock_s=st.clock_s,
                    first_arrival_s=st.first_arrival_s)
    let_go([engine], st.finished)
    return metrics([part])
