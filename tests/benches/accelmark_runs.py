"""AccelMark's published online results, replayed in `kvplan simulate` (issue 30): the blind2 set.

AccelMark (https://github.com/FreedomIntelligence/AccelMark) runs vLLM's AsyncLLMEngine in the
benchmark's own process and sends each suite's prompts at Poisson arrival times; its
`online/result.json` files publish p50 / p90 / p99 TTFT and p50 / p90 TPOT per QPS level. The
runs kept (tests/data/sim_to_real/runs.json "blind2_runs") were frozen there, with every setting
and every assumption spelled out ("blind2"), before kvplan was run on any of them.

The replay follows loadgen/loadgen.py `_run_online_async`: one `random.Random(42)` draws the
exponential gaps of every run of every level in order; each run sends the suite's first
`requests_per_run` prompts once; the next run starts when the previous one has drained, on the
same engine (so its prefix cache holds the earlier runs' prompts). Here each run starts
`_GAP_S` after the previous run's last arrival: an idle engine changes no state (its cache is
only evicted by new allocations), so any gap longer than the drain gives the same result as
back-to-back. The output lengths are not published (greedy answers, no ignore_eos): they are
drawn from the distribution runs.json states, one per prompt, the same in every run.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SimRequest, Simulator
from kvplan.analysis.simulate.workload import RequestSpec

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
REPO = Path(__file__).resolve().parents[2]
_GAP_S = 3600.0
# Seeds of the assumed length draws (not AccelMark's: its prompts are fixed, its outputs are
# the model's).
_OUTPUT_SEED = 1
_INPUT_SEED = 2
# The figures compared: measured key -> kvplan's.
PAIRS = (("ttft_ms_p50", "ttft_p50"), ("ttft_ms_p90", "ttft_p90"), ("tpot_ms_p50", "tpot_p50"))


@dataclass(frozen=True, kw_only=True)
class Level:
    run_id: str
    qps: float
    measured: dict[str, float]
    simulated: dict[str, float]
    preemptions: int


def load() -> tuple[dict, list[dict]]:  # type: ignore[type-arg]
    doc = json.loads((DATA / "runs.json").read_text())
    return doc, doc["blind2_runs"]


def _lengths(run: dict, doc: dict) -> list[tuple[int, int]]:  # type: ignore[type-arg]
    """(prompt, output) tokens of each prompt of a run, as runs.json "blind2" states them."""
    w = run["workload"]
    n = w["requests_per_run"]
    spec = w["input"]
    if spec["kind"] == "dataset":
        raw = doc["blind2_input_tokens"][spec["dataset"]][:n]
    else:  # normal, capped
        rng = random.Random(_INPUT_SEED)
        raw = [min(spec["max"], max(1, round(rng.gauss(spec["mean"], spec["sigma"]))))
               for _ in range(n)]
    out = w["output"]
    rng = random.Random(_OUTPUT_SEED)
    pairs = []
    for tokens in raw:
        prompt = tokens + w["template_tokens"]
        if out["kind"] == "fixed":
            o = out["tokens"]
        else:
            o = max(1, round(rng.lognormvariate(math.log(out["median"]), out["sigma"])))
        # vLLM stops a request at max_model_len (prompt + output).
        pairs.append((prompt, min(o, out["max"], run["max_model_len"] - prompt)))
    return pairs


def requests(run: dict, doc: dict) -> Iterator[tuple[int, RequestSpec]]:  # type: ignore[type-arg]
    """(level index, request) in arrival order."""
    w = run["workload"]
    lengths = _lengths(run, doc)
    rng = random.Random(w["seed"])
    base = 0.0
    for level, qps in enumerate(w["qps_levels"]):
        for _ in range(w["num_runs"]):
            gaps = [rng.expovariate(qps) for _ in range(len(lengths))]
            arrivals = list(itertools.accumulate(gaps))
            for i, ((prompt, output), t) in enumerate(zip(lengths, arrivals, strict=True)):
                yield level, RequestSpec(arrival_s=base + t, prompt_len=prompt, output_len=output,
                                         segments=((("prompt", i), prompt),))
            base += arrivals[-1] + _GAP_S


def _percentile(values: list[float], p: float) -> float:
    """numpy.percentile's default (linear) method, as loadgen.py computes."""
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _figures(done: list[SimRequest]) -> dict[str, float]:
    ttft = [(r.first_token_s - r.sent_s) * 1e3 for r in done]
    tpot = [(r.finish_s - r.first_token_s) * 1e3 / max(r.output_len - 1, 1) for r in done]
    return {"ttft_p50": _percentile(ttft, 50), "ttft_p90": _percentile(ttft, 90),
            "ttft_p99": _percentile(ttft, 99), "tpot_p50": _percentile(tpot, 50),
            "tpot_p90": _percentile(tpot, 90)}


def simulate(run: dict, doc: dict) -> list[Level]:  # type: ignore[type-arg]
    spec = load_spec(str(REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine_version=run["vllm"],
                             mem_fraction=run["gpu_memory_utilization"],
                             max_num_batched_tokens=run["max_num_batched_tokens"],
                             max_num_seqs=run["max_num_seqs"])
    sim, _ = setup(spec, inputs, api_server=False)  # in process: AsyncLLMEngine, no server
    engine = Simulator(KVPool(sim.plan.num_blocks, sim.groups, caching=sim.caching),
                       sim.scheduler, sim.cost)
    tagged = list(requests(run, doc))
    state = engine.run(spec for _, spec in tagged)
    level_of = {round(spec.arrival_s, 9): level for level, spec in tagged}
    out = []
    for level, qps in enumerate(run["workload"]["qps_levels"]):
        done = [r for r in state.finished if level_of[round(r.sent_s, 9)] == level]
        measured = next(m for m in run["measured"] if m["target_qps"] == qps)
        out.append(Level(run_id=run["id"], qps=qps, measured=measured, simulated=_figures(done),
                         preemptions=sum(r.preemptions for r in done)))
    return out


@functools.cache
def levels() -> tuple[Level, ...]:
    """Every blind2 run's QPS levels, simulated (once per process)."""
    doc, runs = load()
    return tuple(lv for run in runs for lv in simulate(run, doc))


def _err(lv: Level, measured: str, simulated: str) -> float:
    return lv.simulated[simulated] / lv.measured[measured] - 1


def _median(part: list[Level], measured: str, simulated: str) -> str:
    return f"{statistics.median(abs(_err(lv, measured, simulated)) for lv in part):.1%}"


def print_per_set() -> None:
    """blind2's rows of sim_to_real's 'kvplan per set' table: p50 TTFT and p50 TPOT (the
    figures AccelMark publishes) in its TTFT and ITL columns; no E2E is published."""
    part = list(levels())
    print(f"| blind2 (AccelMark, p50s) | all | {len(part)} | "
          f"{_median(part, 'ttft_ms_p50', 'ttft_p50')} | "
          f"{_median(part, 'tpot_ms_p50', 'tpot_p50')} | - |")
    for run_id in dict.fromkeys(lv.run_id for lv in part):
        mine = [lv for lv in part if lv.run_id == run_id]
        print(f"| blind2 (AccelMark, p50s) | {run_id} | {len(mine)} | "
              f"{_median(mine, 'ttft_ms_p50', 'ttft_p50')} | "
              f"{_median(mine, 'tpot_ms_p50', 'tpot_p50')} | - |")


def print_section() -> None:
    """The blind2 set as a Markdown section of examples/simulate-bench.md."""
    doc, runs = load()
    part = list(levels())
    print("\n## Blind 2: AccelMark's online results (vLLM V1 in process, A100-80GB and "
          "RTX-5090)\n")
    print(f"{doc['blind2']}\n")
    print(f"{len(runs)} runs, {len(part)} QPS levels, every one frozen before kvplan was run "
          "on it and evaluated once, with no change to any rule (tests/benches/"
          "accelmark_runs.py replays them). Errors are predicted / measured - 1; the set's "
          "medians of their absolute values are in 'kvplan per set' above.\n")
    print("| set | levels | TTFT p50 | TTFT p90 | TPOT p50 |")
    print("|---|---:|---:|---:|---:|")
    print(f"| blind2 | {len(part)} | " + " | ".join(_median(part, m, s) for m, s in PAIRS)
          + " |")
    for gpu in dict.fromkeys(r["gpu"] for r in runs):
        ids = {r["id"] for r in runs if r["gpu"] == gpu}
        mine = [lv for lv in part if lv.run_id in ids]
        print(f"| blind2, {gpu} | {len(mine)} | "
              + " | ".join(_median(mine, m, s) for m, s in PAIRS) + " |")
    print("\n| run | QPS | measured TTFT p50 / p90, TPOT p50 ms | simulated | TTFT p50 err | "
          "TTFT p90 err | TPOT p50 err | preemptions |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for lv in part:
        m, s = lv.measured, lv.simulated
        print(f"| {lv.run_id} | {lv.qps:g} | {m['ttft_ms_p50']:,.1f} / {m['ttft_ms_p90']:,.1f}"
              f" / {m['tpot_ms_p50']:.2f} | {s['ttft_p50']:,.1f} / {s['ttft_p90']:,.1f} / "
              f"{s['tpot_p50']:.2f} | "
              + " | ".join(f"{_err(lv, a, b):+.1%}" for a, b in PAIRS)
              + f" | {lv.preemptions:,} |")
    print("\nSources (result.json at AccelMark commit 5797fc4):\n")
    for r in runs:
        print(f"- {r['id']}: {r['result']} ({r['model_id']}, {r['gpu_reported']}, vLLM "
              f"{r['vllm_reported']}, TP {r['tp']}, gpu_memory_utilization "
              f"{r['gpu_memory_utilization']}, max_model_len {r['max_model_len']})")
    print("\nLeft out of blind2, and why (runs.json \"blind2_skipped\"):\n")
    print("| runs | why left out |")
    print("|---|---|")
    for skip in doc["blind2_skipped"]:
        print(f"| {skip['runs']} | {skip['why']} |")


if __name__ == "__main__":
    print_section()
