"""The closed loop that aiconfigurator's aggregated bench and its counterfactuals run on a row
(tests.benches.aiconfig_agg_runs, module docstring): the row's concurrency of users, ROUNDS
requests each at the row's fixed ISL / OSL unless a study gives its own, and the steady-state
mean TTFT and TPOT the bench reads from it. Written once here for the frozen bench and the
generator-flags counterfactual (aiconfig_agg_runs.replay_on), the TTFT breakdown's `--frontend`
replay (aiconfig_agg_ttft) and the harness counterfactual (aiconfig_harness_replay)."""

from __future__ import annotations

import statistics

from kvplan.analysis.simulate.run import SimResult, SimSetup, simulate
from kvplan.analysis.simulate.workload import RequestSpec
from tests.benches.disagg_rows import stated_concurrency

ROUNDS = 3  # requests per user in the closed loop: the second is measured


def row_run(row: dict[str, str], sim: SimSetup,
            requests: list[RequestSpec] | None = None) -> SimResult:
    """A closed loop of the row's concurrency on `sim`: `requests` in send order, or the
    bench's ROUNDS x concurrency requests of the row's ISL / OSL, all sent at t = 0. Raises
    KvplanError where kvplan refuses."""
    conc = stated_concurrency(row)
    assert conc is not None  # the selection rules keep only rows that state it
    if requests is None:
        requests = [RequestSpec(arrival_s=0.0, prompt_len=int(row["isl"]),
                                output_len=int(row["osl"])) for _ in range(ROUNDS * conc)]
    return simulate(sim, requests, concurrency=conc)


def steady(finished: list, concurrency: int) -> tuple[float, float, int]:  # type: ignore[type-arg]
    """(mean TTFT ms, mean TPOT ms, requests measured): the requests in send order less the
    first and the last `concurrency` (each user's first and last)."""
    order = sorted(finished, key=lambda r: (r.sent_s, r.rid))
    part = order[concurrency:len(order) - concurrency] or order
    ttft = statistics.fmean(r.first_token_s - r.sent_s for r in part) * 1e3
    tpot = statistics.fmean((r.finish_s - r.first_token_s) / (r.output_len - 1)
                            for r in part if r.output_len > 1) * 1e3
    return ttft, tpot, len(part)
