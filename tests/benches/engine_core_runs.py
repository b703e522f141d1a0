"""vLLM's engine-core host work per step (`kvplan simulate --engine-core-cpu`,
kvplan.engines.vllm.engine_core.EngineCoreCost: 71.1 us + 11.98 us per scheduled request,
measured by tests/benches/engine_core_cost.py with vLLM's own Scheduler and shm MessageQueue on
this repository's build host, no serving row fitted), frozen at 2d9ccc00 as an opt-in stage
before any row below was replayed with it: serial with the GPU step without async scheduling
(vLLM before 0.14, or --no-async-scheduling), the longer of the two with it. Its first
evaluation (FIRST_EVALUATION) improved every held-out set's medians or left them unchanged, so
it became `simulate`'s default for vLLM; the tables compare it off (--no-engine-core-cpu) and on.

prospective57's Anyscale runs (vLLM 0.11.0, synchronous) shaped the stage: their TPOT sat an
almost constant 1.7-2.4 ms a step above kvplan's from concurrency 4 to 64, which led to reading
the engine core (tests/benches/fitted_rows.py SHAPED_BY): they are no test of it. Held out: the
other prospective sets' vLLM runs (prospective30 / 31 / 53 / 53b / 54: vLLM 0.10.2 - 0.20.1,
the releases before 0.14 synchronous unless the run set --async-scheduling), the sim-to-real
study's stages (vLLM 0.15.1, async scheduling: the stage binds only where the host time is
longer than the GPU step) and AccelMark's blind2 levels (0.19.1 / 0.20.1, async).

Each vLLM run is replayed as prospective30's machinery does (tests.benches.prospective_runs),
without and with the stage. Errors are predicted / measured - 1; medians of their absolute
values over the runs kvplan simulates (refused runs counted apart).

What the stage does not explain: on prospective57's TP8 sweep it adds 0.12 ms a step at
concurrency 4 and 0.84 ms at 64, against 1.7-2.4 ms missing at every concurrency. Not in the
constants (kvplan.engines.vllm.engine_core): the worker's input preparation (timed apart in the
CPU runner by `engine_core_cost.py --worker`, not charged), the sampler's host side, the
device-to-host wait, and Ray's executor, which Anyscale's Ray Serve runs use.

Run: python -m tests.benches.engine_core_runs [SET ... | sim-to-real | blind2]
(default: every prospective set, then the sim-to-real stages and blind2).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from kvplan import load_spec
from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.engines.base import Engine
from kvplan.engines.vllm.alloc import vllm_async_scheduling_default
from tests.benches.prospective_runs import PAIRS, REPO, load, requests

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
FREEZE = "2d9ccc00"
# The first evaluation at the freeze (the stage opt-in, off -> on), as printed then: median
# |error| of TTFT mean / TPOT mean (E2E mean where measured), per set.
FIRST_EVALUATION = (
    "first evaluated at 2d9ccc00 (the stage opt-in, before it was made the default), off -> on, "
    "median |error|: prospective57 (shaped; 11 runs, 10 synchronous) TTFT mean 72.0 -> 72.0 %, "
    "TPOT mean 26.5 -> 23.1 %; held out: prospective30 (10 runs, 4 synchronous) TTFT 79.4 -> "
    "79.4 %, TPOT 49.0 -> 48.3 %; prospective31 (16 simulated, 8 synchronous) 69.3 -> 68.8 %, "
    "63.3 -> 62.8 %; prospective53 (13, all synchronous) 46.3 -> 45.7 %, 46.6 -> 45.2 %; "
    "prospective53b (1) 83.7 -> 82.7 %, 53.9 -> 43.5 %; prospective54 (2) 56.1 -> 55.4 %, 19.9 "
    "-> 16.5 %, E2E 20.4 -> 17.2 %; the sim-to-real study's stages (vLLM 0.15.1, async: 30 + 9 + "
    "11 + 24 stages) and AccelMark blind2 (24 levels, async) unchanged to the 0.1 %")
SHAPED = ("prospective57",)
SETS = ("prospective57", "prospective30", "prospective31", "prospective53", "prospective53b",
        "prospective54")
TTFT, TPOT = PAIRS[0], PAIRS[2]
E2E = ("mean_e2e_ms", "e2e_ms", "mean")
_NAMES = ("TTFT mean", "TPOT mean", "E2E mean")


def synchronous(run: dict) -> bool:  # type: ignore[type-arg]
    """Whether the run's engine core steps without async scheduling (its flag, else the
    release's default as kvplan reads it)."""
    flag = run.get("async_scheduling")
    return not (vllm_async_scheduling_default(run["vllm"]) if flag is None else flag)


def replay(run: dict) -> tuple[list[float | None], list[float | None]] | str:  # type: ignore[type-arg]
    """The run's (TTFT mean, TPOT mean, E2E mean) errors without and with the stage (None
    where the run measured no E2E), or kvplan's refusal."""
    spec = load_spec(str(REPO / run["model"]))
    out = []
    try:
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=Engine.vllm, engine_version=run["vllm"],
                                 mem_fraction=run.get("gpu_memory_utilization"))
        for on in (False, None):  # off; simulate's default (on)
            sim, _ = setup(spec, inputs, async_scheduling=run.get("async_scheduling"),
                           engine_core_cpu=on)
            m = simulate(sim, requests(run),
                         concurrency=run["workload"].get("max_concurrency")).metrics
            out.append([getattr(m, metric)[stat] / run["measured"][measured] - 1
                        if measured in run["measured"] else None
                        for measured, metric, stat in (TTFT, TPOT, E2E)])
    except KvplanError as exc:
        return str(exc).replace(f"{REPO}/", "")
    return out[0], out[1]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def _medians(done: list[tuple[list[float | None], list[float | None]]]) -> str:
    cells = []
    for k in range(3):
        pairs = [(a[k], b[k]) for a, b in done if a[k] is not None and b[k] is not None]
        cells.append("-" if not pairs else
                     f"{statistics.median(abs(a) for a, _ in pairs):.1%} -> "  # type: ignore[arg-type]
                     f"{statistics.median(abs(b) for _, b in pairs):.1%}")  # type: ignore[arg-type]
    return " | ".join(cells)


def print_set(name: str, *, rows: bool = False) -> None:
    doc = load(DATA / f"{name}.json")
    runs = [r for r in doc["runs"] if r.get("engine", "vllm") == "vllm"]
    kind = "shaped the stage" if name in SHAPED else "held out"
    print(f"\n### {name} ({kind}): {len(runs)} vLLM runs, --no-engine-core-cpu -> default\n")
    results = [(run, replay(run)) for run in runs]
    if rows:
        print("| run | vLLM | scheduling | " + " | ".join(_NAMES) + " |")
        print("|---|---|---|" + "---:|" * 3)
        for run, res in results:
            sched = "sync" if synchronous(run) else "async"
            if isinstance(res, str):
                print(f"| {run['id']} | {run['vllm']} | {sched} | refused: {res} | | |")
                continue
            a, b = res
            print(f"| {run['id']} | {run['vllm']} | {sched} | " + " | ".join(
                f"{_pct(a[k])} -> {_pct(b[k])}" for k in range(3)) + " |")
        print()
    print("| runs | n | " + " | ".join(f"{n} median abs" for n in _NAMES) + " |")
    print("|---|---:|" + "---:|" * 3)
    done = [(run, res) for run, res in results if not isinstance(res, str)]
    for label, part in (("all", done), ("synchronous", [x for x in done if synchronous(x[0])]),
                        ("async", [x for x in done if not synchronous(x[0])])):
        if part:
            print(f"| {label} | {len(part)} | {_medians([res for _, res in part])} |")
    refused = len(results) - len(done)
    if refused:
        print(f"\n{refused} vLLM runs refused by kvplan (either way).")


def print_sim_to_real() -> None:
    """The sim-to-real study's stage medians (|error| per metric the study reports), without ->
    with the stage, per set."""
    from tests.benches.sim_to_real import print_stages_beside, simulate_run

    print_stages_beside(
        "sim-to-real study stages (held out; vLLM 0.15.1, async scheduling): "
        "--no-engine-core-cpu -> default",
        lambda run: (simulate_run(run, engine_core_cpu=False), simulate_run(run)),
        sets=("study runs", "prospective", "blind", "offload"))


def print_blind2() -> None:
    """AccelMark's blind2 levels (p50 / p90 TTFT, p50 TPOT), without -> with the stage."""
    from tests.benches.accelmark_runs import PAIRS as AM_PAIRS
    from tests.benches.accelmark_runs import falsified, levels, load, simulate

    doc, runs = load()
    base = [lv for run in runs for lv in simulate(run, doc, engine_core_cpu=False)]
    with_host = list(levels())
    print("\n### AccelMark blind2 (held out; vLLM 0.19.1 / 0.20.1 in process, async scheduling): "
          "--no-engine-core-cpu -> default\n")
    print("| levels | n | " + " | ".join(f"{m} / {s}" for m, s in AM_PAIRS) + " |")
    print("|---|---:|" + "---:|" * len(AM_PAIRS))
    bad = falsified()
    for label, keep in (("all", lambda lv: True),
                        ("less the falsified replays", lambda lv: lv.run_id not in bad)):
        a = [lv for lv in base if keep(lv)]
        b = [lv for lv in with_host if keep(lv)]
        cells = []
        for m, s in AM_PAIRS:
            e0 = statistics.median(abs(lv.simulated[s] / lv.measured[m] - 1) for lv in a)
            e1 = statistics.median(abs(lv.simulated[s] / lv.measured[m] - 1) for lv in b)
            cells.append(f"{e0:.1%} -> {e1:.1%}")
        print(f"| {label} | {len(a)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    print(f"{FIRST_EVALUATION}.")
    args = sys.argv[1:] or [*SETS, "sim-to-real", "blind2"]
    for arg in args:
        if arg == "sim-to-real":
            print_sim_to_real()
        elif arg == "blind2":
            print_blind2()
        else:
            print_set(arg, rows=arg in SHAPED)
