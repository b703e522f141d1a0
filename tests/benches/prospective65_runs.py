"""The prospective65 set (issue 30): 15 public serving runs no earlier set has, committed
(FREEZE, 4804138c) with their published figures before kvplan was run on any of them, replayed
with prospective30's machinery (tests.benches.prospective_runs.run_one: the engine `estimate`
sizes for the run's model, GPU, TP, release, context and memory fraction; the engine's
scheduler; a closed loop at the run's concurrency; every run on a fresh engine).

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

The set was first replayed once, at 38738b15 on main (2026-12-07): FIRST_EVALUATION and
FIRST_ROWS are what it printed, typed in as the record; every other figure of the section is
computed by the replay, so the page follows later rule changes while the record stays. Between
the freeze and that replay, the commits on main touching kvplan/ or the harness
(tests/benches/prospective_runs.py; `git log 4804138c..38738b15`) were: d804531b (sglmamba64,
merged by 199bae43: SGLang's mamba slots per running request follow the radix-cache strategy,
'auto' -> extra_buffer from 0.5.14 for the architectures SGLang lists), 4dcaf921 (a
docstring's place), 5cceb0ba (simulate --ignore-eos, off by default), 8a07753a and 3215290e
(simulate --frontend-latency-ms, opt-in, and its docstring; merged by 7fdb0932). Only
d804531b reaches these runs' defaults, and the set tests it prospectively (no run of this set
shaped it; its hand test is Qwen3.5-27B on one B200, prospective64's config): the three
checkpoints are Qwen3_5MoeForConditionalGeneration, in SGLang's extra_buffer list from 0.5.14
(kvplan.engines.sglang.mamba_strategy), so at 0.5.16 each of the 14 SGLang runs reserves 5
state slots per running request, not 3, and its running cap is slots // 5: checked with
`estimate`'s plan, with the rule and with the slots per request forced to no_buffer's 3, the
cap falls on every SGLang cell (slots, tokens unchanged): 35B-A3B H200 362 slots, running 120 ->
72; B200 605, 201 -> 121; B300 1,170, 390 -> 234; 122B-A10B H200 TP 4 887, 295 -> 177; B200
TP 2 183, 61 -> 36; B300 TP 2 836, 278 -> 167; 397B-A17B H200 TP 8 369, 123 -> 73 (there the
token pool, 643,690 tokens, holds 69 requests of 9,216 anyway). The vLLM run is not touched.
The replay's figures without the rule were not simulated. No constant was fitted on any of these
runs and none shares a fitted row's configuration (tests/test_prospective65.py): the replay is
held out.

Run: python -m tests.benches.prospective65_runs (the section of examples/simulate-bench.md).
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
FIRST = "38738b15"  # main's commit of the first evaluation (the module docstring: what changed)

# The set's first evaluation, at 38738b15 (2026-12-07), as printed (median |error| over the
# runs simulated, then the span; each run on its own statistic).
FIRST_EVALUATION: str | None = (
    "first evaluated at 38738b15 on 2026-12-07 (frozen at 4804138c; the one rule change "
    "between that reaches these runs: sglmamba64's d804531b, 5 SGLang mamba slots per running "
    "request from 0.5.14, which lowers the running cap of the 14 SGLang runs; no constant or "
    "harness changed), 15 of 15 runs simulated, none refused: median |error| TTFT 22.0 % (-19 "
    "to +37 %, kvplan slow on the 14 SGLang runs), TPOT 19.5 % (+6 to +35 %, kvplan slow on "
    "all 15); cookbook-qwen3.5-moe (14, P50) TTFT 22.5 % / TPOT 18.2 %; vllm-pr-23151 (1, "
    "mean) TTFT 19.0 % / TPOT 34.7 %; H200 (6) 7.8 % / 14.6 %, B200 (4) 25.7 % / 23.7 %, B300 "
    "(4) 27.8 % / 24.5 % (kvplan slow on every Blackwell run, TTFT and TPOT), H100 (1) 19.0 % / "
    "34.7 %; Qwen3.5-35B-A3B (6) 29.6 % / 16.7 %, Qwen3.5-122B-A10B (6) 22.5 % / 27.8 %, "
    "Qwen3.5-397B-A17B (2) 12.9 % / 17.8 %; concurrency 1,024 (7) 23.0 % / 16.5 %, 4,096 (7) "
    "22.0 % / 19.5 %; preempted in the replay: the two Qwen3.5-397B-A17B runs (58 and 246)")

# The first evaluation per run (38738b15): the TTFT and TPOT error of the run's own statistic,
# predicted / measured - 1, keyed by the run id; None: refused (none was).
FIRST_ROWS: dict[str, tuple[float, float] | None] = {
    "dougyster SGLang Qwen3.5-35B-A3B H200 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (0.086, 0.068),
    "dougyster SGLang Qwen3.5-35B-A3B H200 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.070, 0.063),
    "dougyster SGLang Qwen3.5-35B-A3B B200 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (0.315, 0.198),
    "dougyster SGLang Qwen3.5-35B-A3B B200 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.277, 0.195),
    "dougyster SGLang Qwen3.5-35B-A3B B300 TP1 random 8192/1024 conc 1024 (2048 prompts)":
        (0.365, 0.165),
    "dougyster SGLang Qwen3.5-35B-A3B B300 TP1 random 8192/1024 conc 4096 (8192 prompts)":
        (0.326, 0.169),
    "dougyster SGLang Qwen3.5-122B-A10B H200 TP4 random 8192/1024 conc 1024 (2048 prompts)":
        (0.040, 0.142),
    "dougyster SGLang Qwen3.5-122B-A10B H200 TP4 random 8192/1024 conc 4096 (8192 prompts)":
        (0.048, 0.150),
    "dougyster SGLang Qwen3.5-122B-A10B B200 TP2 random 8192/1024 conc 1024 (2048 prompts)":
        (0.232, 0.279),
    "dougyster SGLang Qwen3.5-122B-A10B B200 TP2 random 8192/1024 conc 4096 (8192 prompts)":
        (0.237, 0.277),
    "dougyster SGLang Qwen3.5-122B-A10B B300 TP2 random 8192/1024 conc 1024 (2048 prompts)":
        (0.230, 0.322),
    "dougyster SGLang Qwen3.5-122B-A10B B300 TP2 random 8192/1024 conc 4096 (8192 prompts)":
        (0.220, 0.321),
    "dougyster SGLang Qwen3.5-397B-A17B H200 TP8 random 8192/1024 conc 1024 (2048 prompts)":
        (0.134, 0.157),
    "dougyster SGLang Qwen3.5-397B-A17B H200 TP8 random 8192/1024 conc 4096 (8192 prompts)":
        (0.124, 0.198),
    "wenchen76 vLLM Qwen3-30B-A3B H100 TP1 random 2048/1024 conc 10 (100 prompts, before)":
        (-0.190, 0.347),
}

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


def print_first_rows(part: list[Result]) -> None:
    """Each run's first-evaluation errors (FIRST_ROWS, at FIRST) beside the replay's."""
    print(f"\nThe first evaluation per run ({FIRST}, the record) beside this replay:\n")
    print("| run | first evaluation: TTFT err | TPOT err | now: TTFT err | TPOT err |")
    print("|---|---:|---:|---:|---:|")
    for r in part:
        first = FIRST_ROWS[r.run_id]
        then = "refused | refused" if first is None else f"{first[0]:+.1%} | {first[1]:+.1%}"
        e = compared(r)
        now = "refused | refused" if r.refused else f"{e['TTFT']:+.1%} | {e['TPOT']:+.1%}"
        print(f"| {r.run_id} | {then} | {now} |")


def print_section() -> None:
    """The prospective65 set as a Markdown section of examples/simulate-bench.md."""
    doc, part = open_section(DATA, "Prospective 65: the cookbook's Qwen3.5 MoE cells and a "
                                   "vLLM PR's base run, frozen before kvplan was run on them")
    record = (f"the record of their first evaluation: {FIRST_EVALUATION}" if FIRST_EVALUATION
              else f"frozen at {FREEZE}; this is the first replay (no record yet)")
    print(f"{len(part)} runs; {record} (the 'what' above is the data file as frozen; "
          "tests/benches/prospective65_runs.py replays them with prospective30's machinery: a "
          "closed loop at the run's concurrency, every run on a fresh engine, the cookbook's "
          "64 warm-up requests and flushed cache not replayed). Each run is compared on the "
          "statistic it published (its 'statistic'); errors are predicted / measured - 1, the "
          "medians are of their absolute values over the runs kvplan simulated, the number of "
          "runs each is over in parentheses. No constant was fitted on any of these runs and "
          "none shares a fitted row's configuration: the replay is held out.\n")
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
    if FIRST_ROWS:
        print_first_rows(part)
    print_sources(doc, "prospective65.json")

if __name__ == "__main__":
    print_section()
