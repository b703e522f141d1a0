"""The prospective65 set (issue 30), FROZEN AND NOT EVALUATED: 15 public serving runs no earlier
set has, committed (FREEZE) with their published figures before kvplan was run on any of them,
to be replayed at the next stop with prospective30's machinery
(tests.benches.prospective_runs.run_one: the engine `estimate` sizes for the run's model, GPU,
TP, release, context and memory fraction; the engine's scheduler; a closed loop at the run's
concurrency; every run on a fresh engine). Not wired into tests/benches/simulate_bench.py.

The runs (tests/data/sim_to_real/prospective65.json says where each was read and what it
assumes): 14 SGLang 0.5.16 runs of the SGLang cookbook's Qwen3.5 re-bench (dougyster,
sgl-project/sglang#32323), the bf16 high-throughput cells of the MoE checkpoints
Qwen3.5-35B-A3B (H200, B200, B300; TP 1), Qwen3.5-122B-A10B (H200 TP 4, B200 and B300 TP 2)
and Qwen3.5-397B-A17B (H200 TP 8), each at concurrency 1,024 and 4,096, random 8,192 / 1,024
at ratio 1.0, published as P50 (median) TTFT and TPOT; and one vLLM run (wenchen76,
vllm-project/vllm#23151, Qwen3-30B-A3B on one H100, 'before' block, kvplan's release 0.10.1.1),
published with mean and median TTFT and TPOT. Each run is compared on the statistic it
published only (its 'statistic'): a 'p50' run's median TTFT / TPOT against kvplan's
ttft_ms.p50 / tpot_ms.p50, a 'mean' run's mean TTFT / TPOT against kvplan's means.

At the first replay: set FIRST_EVALUATION and FIRST_ROWS to what it printed (the record), with
no rule, constant or harness changed between FREEZE and that replay unless the section says so.

Run (next stop): python -m tests.benches.prospective65_runs
"""

from __future__ import annotations

import functools
import re
import statistics
from pathlib import Path

from tests.benches.prospective_runs import (
    E2E,
    MEDIAN_TPOT,
    PAIRS,
    REPO,
    Result,
    _err,
    load,
    open_section,
    print_sources,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective65.json"
# The commit that adds the data file (and this runner): the freeze. Nothing was evaluated at it.
FREEZE = "4804138c"
# The record of the first evaluation: empty until the set is first replayed (next stop).
FIRST_EVALUATION: str | None = None
FIRST_ROWS: dict[str, tuple[float, float] | None] = {}

# The figures compared for each statistic a run may publish: (column, (measured key, kvplan's
# metric, kvplan's statistic)). A run is compared on those of its statistic it publishes.
COMPARED: dict[str, tuple[tuple[str, tuple[str, str, str]], ...]] = {
    "p50": (("TTFT", PAIRS[1]), ("TPOT", MEDIAN_TPOT), ("E2E", E2E[1])),
    "mean": (("TTFT", PAIRS[0]), ("TPOT", PAIRS[2]), ("ITL", PAIRS[3]), ("E2E", E2E[0])),
}
COLUMNS = ("TTFT", "TPOT", "ITL", "E2E")
# The keys a run of each statistic must publish (positive).
REQUIRED = {"p50": ("median_ttft_ms", "median_tpot_ms"), "mean": ("mean_ttft_ms", "mean_tpot_ms")}

COOKBOOK = "cookbook-qwen3.5-moe"
VLLM_PR = "vllm-pr-23151"
SOURCES = (COOKBOOK, VLLM_PR)
MODELS = ("Qwen3.5-35B-A3B", "Qwen3.5-122B-A10B", "Qwen3.5-397B-A17B", "Qwen3-30B-A3B")
GPUS = ("H100", "H200", "B200", "B300")
CONCURRENCIES = (10, 1024, 4096)
# A release kvplan can read: x.y.z, or x.y.z.w (vLLM 0.10.1.1), with an optional .postN.
RELEASE = re.compile(r"^\d+\.\d+\.\d+(\.\d+|\.post\d+)?$")


@functools.cache
def _statistics() -> dict[str, str]:
    return {run["id"]: run["statistic"] for run in load(DATA)["runs"]}


def statistic_of(run_id: str) -> str:
    """The statistic the run published ('p50' or 'mean'), as the frozen file says."""
    return str(_statistics()[run_id])


def incomplete(doc: dict) -> list[str]:  # type: ignore[type-arg]
    """What a run of the set lacks (empty: every run is complete): a source with a GitHub URL,
    its own GitHub URL, a model config in the stores, a GPU preset, its engine's release, a
    statistic ('p50' or 'mean') and, positive, the TTFT and TPOT of that statistic and every
    other measured figure it keeps."""
    from kvplan.hardware.gpus import get_gpu

    missing = []
    for run in doc["runs"]:
        keys = REQUIRED.get(run.get("statistic", ""), ())
        checks = {
            "source": run["source"] in doc["sources"] and doc["sources"][run["source"]][
                "url"].startswith("https://github.com/"),
            "url": str(run.get("url", "")).startswith("https://github.com/"),
            "model": (REPO / run["model"]).is_file(),
            "gpu": bool(get_gpu(run["gpu"]).name),
            "release": bool(RELEASE.match(str(run.get(run.get("engine", "vllm"), "")))),
            "statistic": bool(keys),
            "measured": all(run["measured"].get(k, 0) > 0 for k in keys)
            and all(v > 0 for v in run["measured"].values())}
        missing += [f"{run['id']}: {what}" for what, ok in checks.items() if not ok]
    return missing


def compared(r: Result) -> dict[str, float]:
    """The run's errors (predicted / measured - 1) by column, on the figures of its own
    statistic it published; empty for a refused run."""
    if r.refused:
        return {}
    return {column: _err(r, *pair) for column, pair in COMPARED[statistic_of(r.run_id)]
            if pair[0] in r.measured}


def of_model(part: list[Result], model: str) -> list[Result]:
    """The runs of `part` of `model` (one of MODELS)."""
    return [r for r in part if f" {model} " in r.run_id]


def on_gpu(part: list[Result], gpu: str) -> list[Result]:
    """The runs of `part` on `gpu` (one of GPUS)."""
    return [r for r in part if f" {gpu} TP" in r.run_id]


def at_concurrency(part: list[Result], c: int) -> list[Result]:
    """The runs of `part` at client concurrency `c`."""
    return [r for r in part if f" conc {c} " in r.run_id]


def medians_line(label: str, part: list[Result]) -> str:
    """A medians row: the runs simulated of `part`, then each column's median |error| over the
    runs that publish it ("-": none does)."""
    done = [r for r in part if not r.refused]
    cells = []
    for column in COLUMNS:
        errors = [abs(e[column]) for e in map(compared, done) if column in e]
        cells.append(f"{statistics.median(errors):.1%} ({len(errors)})" if errors else "-")
    return f"| {label} | {len(done)} of {len(part)} | " + " | ".join(cells) + " |"


def print_run_table(part: list[Result]) -> None:
    """Each run: its statistic, the measured and simulated TTFT / TPOT of it, the errors and
    the replay's preemptions."""
    print("\n| run | statistic | measured TTFT / TPOT ms | simulated | TTFT err | TPOT err | "
          "preemptions |")
    print("|---|---|---|---|---:|---:|---:|")
    for r in part:
        pairs = dict(COMPARED[statistic_of(r.run_id)])
        ttft, tpot = pairs["TTFT"], pairs["TPOT"]
        measured = f"{r.measured[ttft[0]]:,.0f} / {r.measured[tpot[0]]:.2f}"
        if r.refused:
            print(f"| {r.run_id} | {statistic_of(r.run_id)} | {measured} | refused: "
                  f"{r.refused} | | | |")
            continue
        simulated = (f"{r.simulated[f'{ttft[1]}.{ttft[2]}']:,.0f} / "
                     f"{r.simulated[f'{tpot[1]}.{tpot[2]}']:.2f}")
        e = compared(r)
        print(f"| {r.run_id} | {statistic_of(r.run_id)} | {measured} | {simulated} | "
              f"{e['TTFT']:+.1%} | {e['TPOT']:+.1%} | {r.preemptions:,} |")


def print_section() -> None:
    """The prospective65 set as a Markdown section (its first replay: the next stop)."""
    doc, part = open_section(DATA, "Prospective 65: the cookbook's Qwen3.5 MoE cells and a "
                                   "vLLM PR's base run, frozen before kvplan was run on them")
    record = (f"the record of their first evaluation: {FIRST_EVALUATION}" if FIRST_EVALUATION
              else f"frozen at {FREEZE}; this is the first replay (no record yet)")
    print(f"{len(part)} runs; {record}. Each run is compared on the statistic it published "
          "(its 'statistic'); errors are predicted / measured - 1, the medians are of their "
          "absolute values over the runs kvplan simulated, the number of runs each is over in "
          "parentheses.\n")
    print("| runs | simulated | TTFT (runs) | TPOT (runs) | ITL (runs) | E2E (runs) |")
    print("|---|---:|---:|---:|---:|---:|")
    print(medians_line("prospective65", part))
    for source in SOURCES:
        print(medians_line(f"prospective65, {source}", [r for r in part if r.source == source]))
    for model in MODELS:
        print(medians_line(f"prospective65, {model}", of_model(part, model)))
    for gpu in GPUS:
        print(medians_line(f"prospective65, {gpu}", on_gpu(part, gpu)))
    for c in CONCURRENCIES:
        print(medians_line(f"prospective65, concurrency {c:,}", at_concurrency(part, c)))
    print_run_table(part)
    print_sources(doc, "prospective65.json")


if __name__ == "__main__":
    print_section()
