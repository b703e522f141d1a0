"""The prospective64 set (issue 30): the SGLang cookbook's P50 re-benches, a publisher no earlier
set used, frozen before kvplan was run on them, replayed with prospective30's machinery
(tests.benches.prospective_runs.run_one: the engine `estimate` sizes for the run's model, GPU,
TP, SGLang release, context and --mem-fraction-static; SGLang's scheduler; a closed loop at the
run's concurrency; every run on a fresh engine).

Twenty SGLang runs, one publisher (dougyster), two sources (tests/data/sim_to_real/
prospective64.json says which and why each was kept): the cookbook's 'cache-cold, pinned
release' high-throughput (MTP off) single-GPU bf16 cells of Qwen3.6-35B-A3B (B200 0.5.15, B300
and H200 0.5.16) and of Qwen3.5-9B (H100, H200, B200, B300) and Qwen3.5-27B (H200, B200, B300)
on 0.5.16, each at concurrency 1,024 (2,048 prompts) and 4,096 (8,192 prompts), random 8,192
in / 1,024 out at --random-range-ratio 1.0. Stop 62's search (sglsearch63.json) found all but
the two H200 Qwen3.6 cells and left them out only because the cells are P50 (median) TTFT and
TPOT; the set's selection rule, decided before it was read, keeps a P50 row and compares it
P50 to P50: each run's 'statistic' names what it published, and only that is compared (a
'p50' run: median TTFT against kvplan's ttft_ms.p50, median TPOT against tpot_ms.p50; a 'mean'
run: mean TTFT / TPOT / ITL / E2E against kvplan's means).

The data file and this runner were committed (FREEZE, f22d9a12) before any run was simulated;
the set was replayed once on that commit with no rule, constant or harness changed:
FIRST_EVALUATION and FIRST_ROWS are that evaluation, typed in as the record; every other figure
of the section is computed by the replay, so the page follows later rule changes while the
record stays. No run shares a fitted row's configuration or shaped a rule
(tests/test_prospective64.py): the replay is held out. Two checkpoints were replayed before on
other servers (Qwen3.5-27B: Scicom's SGLang TP 8 H100 rows, prospective56 / 61; Qwen3.6-35B-A3B's
text config: cloudrift's vLLM RTX PRO 6000 TP 2 row, prospective54); the publisher, the TP 1
SGLang servers and Qwen3.5-9B are new to the prospective sets.

Run: python -m tests.benches.prospective64_runs (the section of examples/simulate-bench.md).
"""

from __future__ import annotations

import functools
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

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective64.json"
FREEZE = "f22d9a12"  # the data file's commit, also the first evaluation's (no change between)

# The set's first evaluation, at f22d9a12 (no rule, constant or harness changed after the
# freeze), as printed (P50 against kvplan's p50; median |error| over the runs, then the span).
FIRST_EVALUATION = (
    "first evaluated at f22d9a12 (the freeze; no rule, constant or harness changed), 20 of 20 "
    "runs simulated, none refused: median |error| P50 TTFT 11.3 % (-28 to +18 %), P50 TPOT "
    "38.7 % (+3 to +73 %, kvplan slow on all 20); Qwen3.5-9B (8 runs) TTFT 3.9 % (+1 to "
    "+18 %), TPOT 8.7 % (+3 to +15 %); Qwen3.5-27B (6) TTFT 15.7 % (-17 to -11 %), TPOT 43.9 % "
    "(+36 to +54 %); Qwen3.6-35B-A3B (6) TTFT 11.8 % (-28 to +17 %), TPOT 65.3 % (+58 to "
    "+73 %); concurrency 1,024 TTFT 11.2 % / TPOT 37.2 %, 4,096 TTFT 11.3 % / TPOT 50.8 %; "
    "preempted in the replay: the 14 Qwen3.5 runs (59 to 283 each), no Qwen3.6 run")

# The first evaluation per run (f22d9a12): the TTFT and TPOT error of the run's own statistic
# (P50), predicted / measured - 1, keyed by the run id; None: refused (none was).
FIRST_ROWS: dict[str, tuple[float, float] | None] = {
    "dougyster SGLang Qwen3.6-35B-A3B B200 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (0.039, 0.584),
    "dougyster SGLang Qwen3.6-35B-A3B B200 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.064, 0.589),
    "dougyster SGLang Qwen3.6-35B-A3B B300 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (-0.008, 0.707),
    "dougyster SGLang Qwen3.6-35B-A3B B300 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.172, 0.727),
    "dougyster SGLang Qwen3.6-35B-A3B H200 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (-0.278, 0.651),
    "dougyster SGLang Qwen3.6-35B-A3B H200 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (-0.219, 0.655),
    "dougyster SGLang Qwen3.5-9B H100 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (0.024, 0.092),
    "dougyster SGLang Qwen3.5-9B H100 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.010, 0.103),
    "dougyster SGLang Qwen3.5-9B H200 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (0.026, 0.028),
    "dougyster SGLang Qwen3.5-9B H200 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.011, 0.077),
    "dougyster SGLang Qwen3.5-9B B200 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (0.089, 0.056),
    "dougyster SGLang Qwen3.5-9B B200 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.053, 0.123),
    "dougyster SGLang Qwen3.5-9B B300 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (0.181, 0.081),
    "dougyster SGLang Qwen3.5-9B B300 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.114, 0.154),
    "dougyster SGLang Qwen3.5-27B H200 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (-0.173, 0.364),
    "dougyster SGLang Qwen3.5-27B H200 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (-0.173, 0.483),
    "dougyster SGLang Qwen3.5-27B B200 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (-0.166, 0.379),
    "dougyster SGLang Qwen3.5-27B B200 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (-0.147, 0.534),
    "dougyster SGLang Qwen3.5-27B B300 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (-0.135, 0.394),
    "dougyster SGLang Qwen3.5-27B B300 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (-0.113, 0.537),
}

# The figures compared for each statistic a run may publish: (column, (measured key, kvplan's
# metric, kvplan's statistic)). A run is compared on those of its statistic it publishes.
COMPARED: dict[str, tuple[tuple[str, tuple[str, str, str]], ...]] = {
    "p50": (("TTFT", PAIRS[1]), ("TPOT", MEDIAN_TPOT), ("E2E", E2E[1])),
    "mean": (("TTFT", PAIRS[0]), ("TPOT", PAIRS[2]), ("ITL", PAIRS[3]), ("E2E", E2E[0])),
}
COLUMNS = ("TTFT", "TPOT", "ITL", "E2E")

QWEN36 = "cookbook-qwen3.6"
QWEN35 = "cookbook-qwen3.5"
SOURCES = (QWEN36, QWEN35)
MODELS = ("Qwen3.6-35B-A3B", "Qwen3.5-9B", "Qwen3.5-27B")
GPUS = ("H100", "H200", "B200", "B300")
CONCURRENCIES = (1024, 4096)


def statistic_of(run_id: str) -> str:
    """The statistic the run published ('p50' or 'mean'), as the frozen file says."""
    return str(_statistics()[run_id])


@functools.cache
def _statistics() -> dict[str, str]:
    return {run["id"]: run["statistic"] for run in load(DATA)["runs"]}


def incomplete(doc: dict) -> list[str]:  # type: ignore[type-arg]
    """What a run of the set lacks (empty: every run is complete): a source with a GitHub URL,
    its own GitHub URL, a model config in the stores, a GPU preset, its engine's release
    (x.y.z), a statistic ('p50' or 'mean') and, positive, the TTFT and TPOT of that statistic
    and every other measured figure it keeps."""
    from kvplan.hardware.gpus import get_gpu

    missing = []
    for run in doc["runs"]:
        stat = run.get("statistic")
        keys = {"p50": ("median_ttft_ms", "median_tpot_ms"),
                "mean": ("mean_ttft_ms", "mean_tpot_ms")}.get(stat, ())
        checks = {
            "source": run["source"] in doc["sources"] and doc["sources"][run["source"]][
                "url"].startswith("https://github.com/"),
            "url": str(run.get("url", "")).startswith("https://github.com/"),
            "model": (REPO / run["model"]).is_file(),
            "gpu": bool(get_gpu(run["gpu"]).name),
            "release": run.get(run.get("engine", "vllm"), "").count(".") == 2,
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
    return [r for r in part if f" SGLang {model} " in r.run_id]


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


def print_medians_head() -> None:
    print("| runs | simulated | TTFT (runs) | TPOT (runs) | ITL (runs) | E2E (runs) |")
    print("|---|---:|---:|---:|---:|---:|")


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


def print_first_rows(part: list[Result]) -> None:
    """Each run's first-evaluation errors (FIRST_ROWS, at FREEZE) beside the replay's."""
    print(f"\nThe first evaluation per run ({FREEZE}, the record) beside this replay:\n")
    print("| run | first evaluation: TTFT err | TPOT err | now: TTFT err | TPOT err |")
    print("|---|---:|---:|---:|---:|")
    for r in part:
        first = FIRST_ROWS[r.run_id]
        then = "refused | refused" if first is None else f"{first[0]:+.1%} | {first[1]:+.1%}"
        e = compared(r)
        now = "refused | refused" if r.refused else f"{e['TTFT']:+.1%} | {e['TPOT']:+.1%}"
        print(f"| {r.run_id} | {then} | {now} |")


def _span(errors: list[float]) -> str:
    return f"{min(errors):+.1%} to {max(errors):+.1%}"


def finding(part: list[Result]) -> str:
    """What the replay shows, computed from the results (no figure typed in)."""
    done = [r for r in part if not r.refused]
    if not done:
        return "Every run was refused (reasons in the table)."
    text = "What the replay shows (computed)."
    for model in MODELS:
        for c in CONCURRENCIES:
            ran = at_concurrency(of_model(done, model), c)
            if ran:
                text += (f" {model} at concurrency {c:,}: TTFT error "
                         f"{_span([compared(r)['TTFT'] for r in ran])}, TPOT error "
                         f"{_span([compared(r)['TPOT'] for r in ran])}.")
    preempted = sum(r.preemptions > 0 for r in done)
    text += f" Runs with a preemption in the replay: {preempted} of {len(done)}."
    refused = [r for r in part if r.refused]
    if refused:
        text += f" Refused: {len(refused)} (reasons in the table)."
    return text


def print_section() -> None:
    """The prospective64 set as a Markdown section of examples/simulate-bench.md."""
    from tests.benches.prospective_runs import publisher

    doc, part = open_section(DATA, "Prospective 64: the SGLang cookbook's P50 re-benches "
                                   "(a new publisher), frozen before kvplan was run on them")
    refused = [r for r in part if r.refused]
    record = f"the record of their first evaluation: {FIRST_EVALUATION}"
    groups = sorted({f"{publisher(doc, r)} / SGLang" for r in part})
    print(f"{len(part)} runs ({', '.join(groups)}); {record} (tests/benches/"
          "prospective64_runs.py replays them with prospective30's machinery: a closed loop "
          "at the run's concurrency, every run on a fresh engine, the 64 warm-up requests and "
          "the flushed cache before it not replayed). Each run is compared on the statistic "
          "it published (its 'statistic': every run of this set publishes P50 only, so its "
          "median TTFT and median TPOT against kvplan's p50s). Errors are predicted / "
          "measured - 1; the medians are of their absolute values over the runs kvplan "
          f"simulated ({len(part) - len(refused)} of {len(part)}; "
          + (f"{len(refused)} refused, each with its reason in the table" if refused
             else "none refused") + "), the number of runs each is over in parentheses. "
          "The issue's target: TTFT <= 15 %, TPOT / ITL <= 10 %. No constant was fitted on "
          "any of these runs and none shares a fitted row's configuration: the replay is held "
          "out. The Qwen3.5 runs' --num-prompts is assumed (the source's 'assumed'); at these "
          "queue-bound operating points the median TTFT moves with it.\n")
    print_medians_head()
    print(medians_line("prospective64", part))
    for source in SOURCES:
        print(medians_line(f"prospective64, {source}", [r for r in part if r.source == source]))
    for model in MODELS:
        print(medians_line(f"prospective64, {model}", of_model(part, model)))
    for gpu in GPUS:
        print(medians_line(f"prospective64, {gpu}", on_gpu(part, gpu)))
    for c in CONCURRENCIES:
        print(medians_line(f"prospective64, concurrency {c:,}", at_concurrency(part, c)))
    print_run_table(part)
    if FIRST_ROWS:
        print_first_rows(part)
    print(f"\n{finding(part)}")
    print_sources(doc, "prospective64.json")


if __name__ == "__main__":
    print_section()
