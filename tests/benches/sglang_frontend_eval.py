"""The SGLang TokenizerManager stage (`simulate --frontend`, kvplan.engines.sglang.frontend) on
the prospective sets' SGLang runs, without and with it (sglfront61). prospective61's SGLang runs
motivated the stage (shaped: the Qwen3-8B 8,192-token runs' first tokens); 52, 54, 56, 59 and
60's are held-out checks (the stage's constant is measured on a CPU, fitted to no row).

Run: python -m tests.benches.sglang_frontend_eval [SET ...]   (default: all six)

The record (the rule frozen at 49771528, rebased unchanged as 229275b1 onto merge 32deeb06,
where the whole printout was rerun and came out identical, before any of these runs was
simulated with it; "before" is the merge branch's replay, sgllong61's warm server included),
median |error|
of the mean TTFT / mean TPOT, without -> with the stage:
- prospective61, 21 runs (shaped: they motivated the stage, no constant set on them): TTFT
  31.0 -> 25.8 % (better on 12), TPOT 55.6 -> 50.6 % (better on 10); Qwen3-8B 8,192 in: TTFT
  +4.8 -> +11.0 %, TPOT +61.7 -> +61.1 % (the stage tokenizes its 389,505 prompt tokens in
  0.42 s, about half of the 0.87 s at which its first 50 requests got their first tokens).
- held out, 40 runs: TTFT 34.7 -> 44.2 % (better on 22, but kvplan already slow on most of the
  rest), TPOT 13.0 -> 13.2 %; per set TTFT: 52 (15 runs, 9 refused both ways) 25.0 -> 49.6 %,
  54 (2) 33.9 -> 26.2 %, 56 (7) 45.9 -> 37.9 %, 59 (12) 56.1 -> 46.5 %, 60 (4) 28.1 -> 27.5 %.
- the cost bench's 24 SGLang serving TTFT cases (analytic, not simulated: each prediction plus
  one prompt's tokenizing, L x 1.075 us, a lower bound at concurrency 4): 20.3 -> 22.1 %
  (better on 8).
So the stage stays opt-in.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from tests.benches.prospective_runs import REPO, _served

SETS = {"61": "shaped", "52": "held out", "54": "held out", "56": "held out",
        "59": "held out", "60": "held out"}
DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"


def errors(run: dict, frontend: bool) -> tuple[float, float] | str:  # type: ignore[type-arg]
    """Mean TTFT and mean TPOT error (predicted / measured - 1), or why it was refused."""
    spec = load_model(str(REPO / run["model"]))[0]
    try:
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=Engine.sglang,
                                 engine_version=run["sglang"],
                                 mem_fraction=run.get("gpu_memory_utilization"),
                                 max_num_seqs=run.get("max_num_seqs"),
                                 max_num_batched_tokens=run.get("max_num_batched_tokens"))
        sim, _ = setup(spec, inputs, frontend=frontend,
                       async_scheduling=run.get("async_scheduling"))
        m = _served(sim, run)
    except KvplanError as exc:
        return f"refused: {exc}"
    measured = run["measured"]
    return (m.ttft_ms["mean"] / measured["mean_ttft_ms"] - 1,
            m.tpot_ms["mean"] / measured["mean_tpot_ms"] - 1)


def main(names: list[str]) -> None:
    import json
    for name in names:
        runs = [r for r in json.loads((DATA / f"prospective{name}.json").read_text())["runs"]
                if r.get("engine") == "sglang"]
        print(f"\n### prospective{name} ({SETS[name]}): {len(runs)} SGLang runs\n")
        print("| run | TTFT mean err | with --frontend | TPOT mean err | with --frontend |")
        print("|---|---:|---:|---:|---:|")
        got: list[tuple[tuple[float, float], tuple[float, float]]] = []
        for run in runs:
            before, after = errors(run, False), errors(run, True)
            if isinstance(before, str) or isinstance(after, str):
                print(f"| {run['id']} | {before if isinstance(before, str) else after} ||||")
                continue
            got.append((before, after))
            print(f"| {run['id']} | {before[0]:+.1%} | {after[0]:+.1%} | {before[1]:+.1%} | "
                  f"{after[1]:+.1%} |", flush=True)
        if got:
            med = [statistics.median(abs(g[i][k]) for g in got) for i in (0, 1) for k in (0, 1)]
            print(f"\nmedian |error| over {len(got)}: TTFT mean {med[0]:.1%} -> {med[2]:.1%}, "
                  f"TPOT mean {med[1]:.1%} -> {med[3]:.1%}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or list(SETS))
