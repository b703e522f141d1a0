"""The fit of vLLM's API-server stage (kvplan.engines.vllm.frontend: VLLM_API_SERVER_S_PER_REQUEST
and VLLM_API_SERVER_LATENCY_S) on two named rows of the prospective30 set, nothing else.

The rows: kvcached's H100 runs of `vllm serve Qwen/Qwen3-0.6B` (vLLM 0.19.0), 500 random prompts
of 512 tokens in and 128 out, seed 42, sent all at once (rate inf) and at 16 req/s. The stage's
latency shifts every request's whole life by the same time (the engine is idle before the first
arrival), so a run's mean TTFT is f(S) + latency, f the simulated mean TTFT with service time S
and no latency. Two equations, two unknowns: S solves f_inf(S) - f_16(S) = measured_inf -
measured_16 (f_inf - f_16 grows with S: bisection), then latency = measured_16 - f_16(S).
Every other row of every bench is held out of it; the kvcached rows of the other seeds share the
fitted rows' configuration (same server, model and workload) and are no test of it.

`fit_latency` (vllmhost62): the latency alone, on the rate-16 row, behind the measured stages
that `--frontend` now charges (kvplan.engines.vllm.frontend.VLLM_API_LOOP_COST: the loop's
measured work per request and per output): the latency L solving f_16(L) = measured_16, f_16
the simulated mean TTFT with those stages (by bisection: with the output stage on the loop a
later arrival meets other output work, and f_16 does not grow one for one with L). The rate-inf
row is then no part of the fit: the script prints its mean TTFT behind the measured stages
beside the measured one, as a check.

Run: python -m tests.benches.frontend_fit (prints the constants; kvplan's are set from it).
"""

from __future__ import annotations

from dataclasses import replace

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.engines.vllm.frontend import VLLM_API_LOOP_COST, ApiServerCost
from tests.benches import prospective_runs

RATE_INF = "kvcached-h100 Qwen3-0.6B rate inf seed 42"
RATE_16 = "kvcached-h100 Qwen3-0.6B rate 16 seed 42"


def mean_ttft_ms(run: dict, cost: ApiServerCost,  # type: ignore[type-arg]
                 api_output: bool = False) -> float:
    """kvplan's mean TTFT of `run` (prospective_runs' replay) behind the stage `cost` (and the
    output stage on the same loop with `api_output`)."""
    spec = load_spec(str(prospective_runs.REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine_version=run["vllm"],
                             mem_fraction=run["gpu_memory_utilization"])
    sim, _ = setup(spec, inputs, api_output=api_output)
    sim = replace(sim, scheduler=replace(sim.scheduler, api_server=cost))
    value = simulate(sim, prospective_runs.requests(run)).metrics.ttft_ms["mean"]
    assert value is not None
    return value


def fit() -> tuple[float, float]:
    """(seconds per request, latency seconds) from the two rows."""
    runs = {r["id"]: r for r in prospective_runs.load()["runs"]}
    inf, r16 = runs[RATE_INF], runs[RATE_16]
    gap = inf["measured"]["mean_ttft_ms"] - r16["measured"]["mean_ttft_ms"]

    def f(run: dict, s: float) -> float:  # type: ignore[type-arg]
        return mean_ttft_ms(run, ApiServerCost(s_per_request=s, s_per_prompt_token=0.0,
                                               latency_s=0.0, source="fit"))

    lo, hi = 0.0, 0.05
    for _ in range(30):
        mid = (lo + hi) / 2
        if f(inf, mid) - f(r16, mid) < gap:
            lo = mid
        else:
            hi = mid
    s = (lo + hi) / 2
    latency = (r16["measured"]["mean_ttft_ms"] - f(r16, s)) / 1e3
    return s, latency


def fit_latency() -> tuple[float, float, float]:
    """(latency seconds fitted on the rate-16 row, the rate-inf row's mean TTFT behind the
    measured stages with that latency, its measured mean TTFT) in ms for the last two."""
    runs = {r["id"]: r for r in prospective_runs.load()["runs"]}
    inf, r16 = runs[RATE_INF], runs[RATE_16]
    target = r16["measured"]["mean_ttft_ms"]
    lo, hi = 0.0, 0.05  # f_16 grows with the latency (not one for one: bisection)
    for _ in range(30):
        mid = (lo + hi) / 2
        if mean_ttft_ms(r16, replace(VLLM_API_LOOP_COST, latency_s=mid), api_output=True) < target:
            lo = mid
        else:
            hi = mid
    latency = (lo + hi) / 2
    check = mean_ttft_ms(inf, replace(VLLM_API_LOOP_COST, latency_s=latency), api_output=True)
    return latency, check, inf["measured"]["mean_ttft_ms"]


if __name__ == "__main__":
    s, latency = fit()
    print(f"VLLM_API_SERVER_S_PER_REQUEST = {s:.6f}  # s")
    print(f"VLLM_API_SERVER_LATENCY_S = {latency:.6f}  # s")
    loop_latency, check, measured = fit_latency()
    print(f"VLLM_API_LOOP_LATENCY_S = {loop_latency:.6f}  # s")
    print(f"rate inf behind the measured stages: mean TTFT {check:,.1f} ms, measured "
          f"{measured:,.1f} ms")
