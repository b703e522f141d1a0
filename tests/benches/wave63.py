"""Scicom's April vLLM runs at 2,048-4,096-token prompts: why kvplan's mean E2E is close while its
mean TTFT is 32-69 % low and its mean TPOT 2-28 % high (issue 30, wave63). A forensic: no rule of
kvplan changes and no replay on a page moves; every figure is a frozen run's or the simulator's.

Every run tabled here is of prospective63 (held out when it was first evaluated) and was READ
for this: a rule later written from this would be SHAPED by them.

What a closed loop at C users with fixed lengths (random range ratio 0, --ignore-eos) spends a
request on: its E2E is one turn of the loop, C prompts' prefill plus (output - 1) decode steps.
The client splits it at the first token: TTFT (the prefills before and including its own) and
TPOT x (output - 1) (the decode steps plus the prefill work of the other users' prompts that
ran while it decoded, vLLM mixing prompt chunks and decodes in one step). So
`prefill_share` = TTFT / (TTFT + stall), stall = (mean TPOT - decode step) x (output - 1), is
the share of that prefill work a request waits for before its first token; the decode step is
the run's median ITL (its decode-only steps), kvplan's the median of its own ITLs. In a loop
where the C requests come back in bunches of B (their replacements queued together), a request
waits on average for (B + 1) / 2 prompts of C: `bunch` = 2 x C x share - 1.

Sections (`main`):
1. `decomposition`: each 2,048 / 4,096-token run at concurrency 25, 50 and 100, measured
   against kvplan's default replay and its opt-in --frontend: mean TTFT, mean TPOT, E2E, the
   decode step, the share and the bunch; and kvplan's mean TTFT of the first C requests (all
   sent at t = 0) apart from the rest.
2. `lag_lines`: a counterfactual: the default replay with a fixed delay between a request's
   send and the engine's first look at it (an ApiServerCost of `latency_s` = d, no CPU
   service), d = 0, 25, 50, 100 ms: how the split moves with the time a replacement takes to
   reach the engine.

Run: python -m tests.benches.wave63 (about 2 minutes of CPU). Not printed by
examples/simulate-bench.md's generator.

FINDING: see the constant below.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import SimSetup, setup, simulate
from kvplan.engines.base import Engine
from kvplan.engines.vllm.frontend import ApiServerCost
from tests.benches.prospective_runs import REPO, load, requests

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective63.json"
LENGTHS = (2047, 2048, 4095, 4096)  # Llama's prompts print one token fewer
LAGS_S = (0.0, 0.025, 0.05, 0.1)  # the counterfactual's send-to-engine delays
LAG_RUNS = (  # the counterfactual's runs: one a model at 4,096 / 25 and 2,048 / 50
    "scicom vLLM Llama-3.1-70B H100 TP8 random 4095/128 conc 25 (500 prompts)",
    "scicom vLLM Qwen3-14B H100 TP8 random 4096/128 conc 25 (500 prompts)",
    "scicom vLLM Qwen3-32B H100 TP8 random 2048/128 conc 50 (500 prompts)",
    "scicom vLLM Qwen3-8B H100 TP8 random 2048/128 conc 50 (500 prompts)",
)


def prefill_share(ttft_ms: float, tpot_ms: float, step_ms: float, output_len: int) -> float:
    """The share of a loop turn's prefill work before the first token: TTFT / (TTFT + stall),
    stall = (TPOT - the decode step) x (output - 1) (module docstring)."""
    stall = (tpot_ms - step_ms) * (output_len - 1)
    return ttft_ms / (ttft_ms + stall)


def bunch(share: float, concurrency: int) -> float:
    """The replacements queued together that `share` means in the wave model: a request waits
    for (B + 1) / 2 of the C prompts of a turn, so B = 2 C share - 1."""
    return 2 * concurrency * share - 1


@dataclass(frozen=True)
class Split:
    """One replay's (or the run's) split of a loop turn."""

    ttft_ms: float
    tpot_ms: float
    e2e_ms: float
    step_ms: float
    first_ttft_ms: float | None = None  # the first C requests' mean TTFT (kvplan's only)
    rest_ttft_ms: float | None = None  # the others'

    def share(self, output_len: int) -> float:
        return prefill_share(self.ttft_ms, self.tpot_ms, self.step_ms, output_len)


def runs() -> list[dict]:  # type: ignore[type-arg]
    """prospective63's runs at 2,048 and 4,096 tokens."""
    return [r for r in load(DATA)["runs"] if r["workload"]["input_len"] in LENGTHS]


def _setup(run: dict, *, frontend: bool) -> SimSetup:  # type: ignore[type-arg]
    spec = load_spec(str(REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine=Engine.vllm, engine_version=run["vllm"])
    return setup(spec, inputs, frontend=frontend)[0]


def replay(run: dict, sim: SimSetup) -> Split:  # type: ignore[type-arg]
    """`run` replayed on `sim`, split (a closed loop at the run's concurrency, fresh engine)."""
    c = run["workload"]["max_concurrency"]
    res = simulate(sim, requests(run), concurrency=c)
    done = sorted(res.finished, key=lambda r: (r.sent_s, r.rid))
    ttft = [(r.first_token_s - r.sent_s) * 1e3 for r in done]
    m = res.metrics
    step = m.itl_ms["p50"]
    assert m.ttft_ms["mean"] is not None and m.tpot_ms["mean"] is not None
    assert m.e2e_ms["mean"] is not None and step is not None
    return Split(ttft_ms=m.ttft_ms["mean"], tpot_ms=m.tpot_ms["mean"],
                 e2e_ms=m.e2e_ms["mean"], step_ms=step,
                 first_ttft_ms=statistics.mean(ttft[:c]), rest_ttft_ms=statistics.mean(ttft[c:]))


def measured(run: dict) -> Split:  # type: ignore[type-arg]
    m = run["measured"]
    return Split(ttft_ms=m["mean_ttft_ms"], tpot_ms=m["mean_tpot_ms"], e2e_ms=m["mean_e2e_ms"],
                 step_ms=m["median_itl_ms"])


def _short(run_id: str) -> str:
    return run_id.removeprefix("scicom vLLM ").replace(" H100 TP8 random", "").split(" (")[0]


def decomposition() -> None:
    print("| run | TTFT meas / kvplan / --frontend ms | kvplan TTFT first C / rest ms "
          "| TPOT meas / kvplan / --frontend ms | E2E meas / kvplan ms | decode step meas / "
          "kvplan ms | share meas / kvplan / --frontend | bunch meas / kvplan / --frontend |")
    print("|---|---|---|---|---|---|---|---|")
    for run in runs():
        out, c = run["workload"]["output_len"], run["workload"]["max_concurrency"]
        meas = measured(run)
        dflt = replay(run, _setup(run, frontend=False))
        front = replay(run, _setup(run, frontend=True))
        shares = [s.share(out) for s in (meas, dflt, front)]
        print(f"| {_short(run['id'])} | {meas.ttft_ms:,.0f} / {dflt.ttft_ms:,.0f} / "
              f"{front.ttft_ms:,.0f} | {dflt.first_ttft_ms:,.0f} / {dflt.rest_ttft_ms:,.0f} | "
              f"{meas.tpot_ms:.1f} / {dflt.tpot_ms:.1f} / {front.tpot_ms:.1f} | "
              f"{meas.e2e_ms:,.0f} / {dflt.e2e_ms:,.0f} | {meas.step_ms:.1f} / "
              f"{dflt.step_ms:.1f} | " + " / ".join(f"{s:.2f}" for s in shares) + " | "
              + " / ".join(f"{bunch(s, c):.1f}" for s in shares) + " |")


def lag_lines() -> None:
    print("\n| run | d ms | TTFT meas / kvplan ms | TPOT meas / kvplan ms | E2E meas / kvplan ms "
          "| share meas / kvplan |")
    print("|---|---|---|---|---|---|")
    by_id = {r["id"]: r for r in runs()}
    for run_id in LAG_RUNS:
        run = by_id[run_id]
        out = run["workload"]["output_len"]
        meas = measured(run)
        base = _setup(run, frontend=False)
        for d in LAGS_S:
            lag = ApiServerCost(s_per_request=0.0, s_per_prompt_token=0.0, latency_s=d,
                                source="wave63 counterfactual")
            sim = replace(base, scheduler=replace(base.scheduler, api_server=lag))
            got = replay(run, sim)
            print(f"| {_short(run_id)} | {d * 1e3:.0f} | {meas.ttft_ms:,.0f} / "
                  f"{got.ttft_ms:,.0f} | {meas.tpot_ms:.1f} / {got.tpot_ms:.1f} | "
                  f"{meas.e2e_ms:,.0f} / {got.e2e_ms:,.0f} | {meas.share(out):.2f} / "
                  f"{got.share(out):.2f} |")


# The held-out evaluation of the existing opt-in stage that carries this lag (`--frontend`,
# kvplan.engines.vllm.frontend VLLM_API_LOOP_COST), declared before it was run (this commit):
# every vLLM closed-loop run (max_concurrency set, engine vLLM) at >= 2,000 prompt tokens of the
# prospective sets before 62 (53b, 54, 56, 57, 58, 61: 46 runs; none of them read for this), its
# default replay against its --frontend replay (both from prospective_runs.run_one, as each set's
# page computes them): the median |error| of the mean TTFT and of the mean TPOT, over all of
# them and over those at concurrency >= 16. prospective62 and 63 are not in it (62's
# concurrency-200 runs shaped the stage's loop; 63 was read here).
HELD_OUT_SETS = ("prospective53b", "prospective54", "prospective56", "prospective57",
                 "prospective58", "prospective61")
HELD_OUT_MIN_PROMPT = 2000
HELD_OUT_LOADED = 16  # the subset's least concurrency

FINDING = "(written after the tables were first printed)"


def main() -> None:
    decomposition()
    lag_lines()
    print(f"\n{FINDING}")


if __name__ == "__main__":
    main()
