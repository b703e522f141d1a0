"""The prospective61 set (issue 30): serving runs that earlier sets read and left out for their
caps only, frozen before kvplan was run on them, replayed with prospective30's machinery
(tests.benches.prospective_runs.run_one: the engine `estimate` sizes for the run's model, GPU,
TP, engine release and context length; the engine's scheduler; a closed loop at the run's
concurrency).

Thirty-one runs, two publishers, eight groups (tests/data/sim_to_real/prospective61.json says
which and why each was kept): Scicom's llm-benchmaq SGLang bench_serving runs at 2,048, 4,096
and 8,192 input tokens (prospective56 kept the 1,024-token case): Llama-3.1-70B, Qwen3-14B,
Qwen3-8B and Qwen3.5-27B on 8 x H100 under SGLang 0.5.9, gpt-oss-120b on 8 x A100 80GB, H100
and H200 under 0.5.8, 100 prompts at concurrency 100, 128 out, each request at the length
bench_serving's seed-1 draw gives (21 runs); Wentao274's MiniMax-M2.5 vLLM 0.20.0 TP 8 EP 8
test_05 length cases other than prospective58's 1,024 / 512, at concurrency 64 and 128 (10
runs, each prompt its length plus the chat template's 39 tokens).

The data file was committed (c0053aa7, branch prosp61, base 461b879e) before any of them was
simulated; the set was replayed once on that commit with no rule, constant or harness changed:
FIRST_EVALUATION and FIRST_ROWS are that evaluation, typed in as the record; every other figure
of the section is computed by the replay, so the page follows later rule changes while the
record stays. No run shares a fitted row's configuration (model config, GPU, TP, engine: the
cost bench's fitted rows; tests/test_prospective61.py) and none shaped a cost-model rule; the 21
SGLang runs shaped sgllong61's warm-server replay (WARM_SERVER_SHAPED: each replayed after its
server's shorter runs, tests.benches.scicom_server), the 10 vLLM runs are held out; each
shares its model, GPU, layout, engine and release with runs earlier sets evaluated
(prospective56's SGLang 1,024-token rows, prospective58's MiniMax-M2.5 rows, whose four
concurrency-1 rows shaped lonepf60's opt-in prompt-host stage): the section says so.

After the sources, the gpt-oss-120b runs as their servers ran (tests/benches/
prospective61_served.py, sglgptoss64b: the bf16 checkpoint, context and fraction each run's
server_info records; read after the first evaluation, SHAPED).

Run: python -m tests.benches.prospective61_runs (the section of examples/simulate-bench.md).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from tests.benches import prospective56_runs
from tests.benches.fitted_rows import Shaped
from tests.benches.prospective_runs import (
    PAIRS,
    PAIRS52,
    Result,
    _err,
    medians_line,
    open_section,
    print_first_rows,
    print_medians_head,
    print_run_table,
    print_sources,
    run_one,
    runs_by_id,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective61.json"
FREEZE = "c0053aa7"  # the data file's commit, also the first evaluation's (no change between)

# The set's first evaluation, at c0053aa7 (no rule, constant or harness changed after the
# freeze), as printed.
FIRST_EVALUATION = (
    "first evaluated at c0053aa7 (the freeze; no rule, constant or harness changed), 31 of 31 "
    "runs simulated, none refused: median |error| TTFT mean / median 60.0 / 65.6 %, TPOT mean "
    "/ median 29.8 / 28.9 %, ITL 30.1 %; SGLang (21 runs) TTFT mean 78.8 %, TPOT mean 97.1 %, "
    "E2E mean / median 69.7 / 69.2 % (the four dense models on the H100 97.3 / 140.8 %, "
    "kvplan slow on all 12: TTFT +38 to +133 %, TPOT +72 to +246 %; gpt-oss-120b 40.7 / "
    "27.8 %, fast at 2,048 in, TPOT -64 to -76 %); vLLM (10 runs, MiniMax-M2.5) TTFT mean "
    "25.5 %, TPOT mean 14.8 % (with --frontend 23.4 / 14.7 %; concurrency 64 TTFT 60.3 %, "
    "kvplan fast by 39-67 %, concurrency 128 10.7 %)")

# The first evaluation per run (c0053aa7): mean TTFT and mean TPOT error, predicted / measured
# - 1, keyed by the run id; None: refused (none was).
FIRST_ROWS: dict[str, tuple[float, float] | None] = {
    "scicom SGLang Llama-3.1-70B H100 TP8 random 2048/128 conc 100": (0.848, 0.971),
    "scicom SGLang Llama-3.1-70B H100 TP8 random 4096/128 conc 100": (1.006, 1.377),
    "scicom SGLang Llama-3.1-70B H100 TP8 random 8192/128 conc 100": (1.196, 1.439),
    "scicom SGLang Qwen3-14B H100 TP8 random 2048/128 conc 100": (0.694, 1.054),
    "scicom SGLang Qwen3-14B H100 TP8 random 4096/128 conc 100": (0.939, 1.592),
    "scicom SGLang Qwen3-14B H100 TP8 random 8192/128 conc 100": (1.208, 1.829),
    "scicom SGLang Qwen3-8B H100 TP8 random 2048/128 conc 100": (0.377, 1.367),
    "scicom SGLang Qwen3-8B H100 TP8 random 4096/128 conc 100": (0.788, 2.079),
    "scicom SGLang Qwen3-8B H100 TP8 random 8192/128 conc 100": (1.119, 2.460),
    "scicom SGLang Qwen3.5-27B H100 TP8 random 2048/128 conc 100": (0.801, 0.717),
    "scicom SGLang Qwen3.5-27B H100 TP8 random 4096/128 conc 100": (1.139, 1.067),
    "scicom SGLang Qwen3.5-27B H100 TP8 random 8192/128 conc 100": (1.333, 1.537),
    "scicom SGLang gpt-oss-120b A100 TP8 random 2048/128 conc 100": (-0.325, -0.687),
    "scicom SGLang gpt-oss-120b A100 TP8 random 4096/128 conc 100": (0.030, -0.263),
    "scicom SGLang gpt-oss-120b A100 TP8 random 8192/128 conc 100": (0.216, -0.124),
    "scicom SGLang gpt-oss-120b H100 TP8 random 2048/128 conc 100": (-0.791, -0.643),
    "scicom SGLang gpt-oss-120b H100 TP8 random 4096/128 conc 100": (-0.439, -0.278),
    "scicom SGLang gpt-oss-120b H100 TP8 random 8192/128 conc 100": (0.592, 0.037),
    "scicom SGLang gpt-oss-120b H200 TP8 random 2048/128 conc 100": (-0.472, -0.757),
    "scicom SGLang gpt-oss-120b H200 TP8 random 4096/128 conc 100": (-0.007, -0.298),
    "scicom SGLang gpt-oss-120b H200 TP8 random 8192/128 conc 100": (0.407, -0.063),
    **{f"Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 test_05 {case} chat conc {c} (1000 prompts)":
       errors for (case, c), errors in (
           (("128/128", 64), (-0.600, 0.209)), (("128/128", 128), (0.117, 0.228)),
           (("512/256", 64), (-0.394, 0.180)), (("512/256", 128), (0.092, 0.189)),
           (("2048/1024", 64), (-0.673, 0.154)), (("2048/1024", 128), (0.107, 0.141)),
           (("4096/2048", 64), (-0.603, 0.141)), (("4096/2048", 128), (0.115, 0.137)),
           (("8192/1024", 64), (-0.617, -0.034)), (("8192/1024", 128), (-0.076, -0.041)))},
}

# sgllong61's replay of Scicom's SGLang length runs on a warm server (commit cd3399b6,
# tests.benches.scicom_server: each run after its server's shorter runs and bench_serving's
# warm-up, the radix cache kept), written after these 21 runs' first evaluation (the dense H100
# rows 1.7-2.4x slow on E2E) had been read: they shaped it, no blind test of it. A harness rule
# (what the server had served), not a cost-model one: apart from SHAPED_BY.
WARM_SERVER_SHAPED = Shaped(
    commit="cd3399b6",
    rule="Scicom's SGLang length runs replayed after their server's shorter runs and "
         "bench_serving's warm-up (one server per configuration, benchmaq/sglang/bench.py; "
         "flush_cache=False; seed 1: request i the same ShareGPT prompt at every length), "
         "written after these rows' TTFT / TPOT came out +38 to +246 % cold",
    rows=tuple(rid for rid in FIRST_ROWS if " SGLang " in rid))

# The set's groups (a model, GPU and layout under one engine release): their run ids' first
# words.
SGLANG_GROUPS = tuple(f"scicom SGLang {g} TP8" for g in (
    "Llama-3.1-70B H100", "Qwen3-14B H100", "Qwen3-8B H100", "Qwen3.5-27B H100",
    "gpt-oss-120b A100", "gpt-oss-120b H100", "gpt-oss-120b H200"))
VLLM_GROUP = "Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8"
GROUPS = (*SGLANG_GROUPS, VLLM_GROUP)
# The four dense models on the H100 (SGLang 0.5.9) apart from gpt-oss-120b (0.5.8).
DENSE = SGLANG_GROUPS[:4]
LENGTHS = (2048, 4096, 8192)  # the SGLang runs' --random-input-len
CONCURRENCIES = (64, 128)  # the vLLM runs' --max-concurrency
ENGINES = ("SGLang", "vLLM")


def engine_of(r: Result) -> str:
    """The run's engine, from its id."""
    return next(e for e in ENGINES if f" {e} " in r.run_id)


def in_group(r: Result, group: str) -> bool:
    """Whether the run is of `group` (one of GROUPS)."""
    return r.run_id.startswith(f"{group} ")


def _span(errors: list[float]) -> str:
    return f"{min(errors):+.1%} to {max(errors):+.1%}"


def itl_ratio(r: Result) -> float:
    """Measured over simulated mean ITL."""
    return r.measured["mean_itl_ms"] / r.simulated["itl_ms.mean"]


def _dense_1024() -> list[Result]:
    """prospective56's 1,024-token SGLang runs of the four dense models (the same server and
    client as this set's DENSE groups), replayed."""
    runs = runs_by_id(prospective56_runs.DATA)
    return [run_one(runs[f"{g} random 1024/128 conc 100"]) for g in DENSE]


def finding(part: list[Result]) -> str:
    """What the replay shows, computed from the results (no figure typed in)."""
    done = [r for r in part if not r.refused]
    if not done:
        return "Every run was refused (reasons in the tables)."
    text = "What the replay shows (computed)."
    for i, name in enumerate(GROUPS, start=1):
        ran = [r for r in done if in_group(r, name)]
        if not ran:
            text += f" ({i}) {name}: every run refused."
            continue
        ttft, tpot = ([_err(r, *PAIRS[0]) for r in ran], [_err(r, *PAIRS[2]) for r in ran])
        text += (f" ({i}) {name}: mean TTFT error {_span(ttft)}, mean TPOT error "
                 f"{_span(tpot)}; measured / simulated mean ITL "
                 + ", ".join(f"{itl_ratio(r):.2f}x" for r in ran) + ".")
    dense = [r for r in done if any(in_group(r, g) for g in DENSE)]
    if dense:
        by_len = {n: [itl_ratio(r) for r in dense if f" {n}/128 " in r.run_id]
                  for n in LENGTHS}
        text += (" The dense H100 SGLang rows by input length, median measured / simulated "
                 "mean ITL: " + ", ".join(f"{n:,} in {statistics.median(v):.2f}x"
                                          for n, v in by_len.items() if v)
                 + "; prospective56's 1,024-token rows of the same four models and server, "
                 "replayed here, mean TPOT error " + _span(
                     [_err(r, *PAIRS[2]) for r in _dense_1024()]) + ".")
    vllm = [r for r in done if engine_of(r) == "vLLM"]
    for c in CONCURRENCIES:
        mine = [_err(r, *PAIRS[0]) for r in vllm if f" conc {c} " in r.run_id]
        if mine:
            text += f" MiniMax-M2.5 at concurrency {c}: mean TTFT error {_span(mine)}."
    preempted = sum(r.preemptions > 0 for r in done)
    text += f" Runs with a preemption in the replay: {preempted} of {len(done)}."
    return text


def print_section() -> None:
    """The prospective61 set as a Markdown section of examples/simulate-bench.md."""
    doc, part = open_section(DATA, "Prospective 61: Scicom's SGLang runs at longer prompts and "
                                   "Wentao274's MiniMax-M2.5 length cases, frozen before "
                                   "kvplan was run on them")
    refused = [r for r in part if r.refused]
    print(f"{len(part)} runs; the record of their first evaluation: {FIRST_EVALUATION} "
          "(tests/benches/prospective61_runs.py replays them with prospective30's machinery: "
          "a closed loop at the run's concurrency; the SGLang runs at bench_serving's seed-1 "
          "lengths, the vLLM runs at the requested lengths plus the chat template's 39 "
          "tokens; each SGLang run after what its server served before it, the shorter "
          "length runs and bench_serving's warm-up, its radix cache kept: tests/benches/"
          "scicom_server.py, sgllong61, commit cd3399b6, written after the first evaluation "
          "was read). Errors are predicted / measured - 1; the medians are of their absolute "
          "values, this set alone, over the runs kvplan simulated "
          f"({len(part) - len(refused)} of {len(part)}; "
          + (f"{len(refused)} refused, each with its reason in the tables" if refused
             else "none refused") + "). The issue's target: TTFT <= 15 %, TPOT / ITL <= 10 %. "
          "No constant was fitted on any of these runs and none shares a fitted row's "
          "configuration; the 21 SGLang runs shaped the warm-server replay (WARM_SERVER_SHAPED: "
          "their figures since are no blind test of it), the 10 vLLM runs are held out. None "
          "is of a new publisher or "
          "a new server: each shares its model, GPU, layout, engine and release with runs "
          "prospective56 (Scicom's SGLang 1,024-token rows, which shaped no rule) or "
          "prospective58 (Wentao274's MiniMax-M2.5 rows, whose four concurrency-1 rows shaped "
          "lonepf60's opt-in prompt-host stage) evaluated, and Scicom's vLLM rows of the same "
          "repository shaped the opt-in --api-output and --generation-config stages. No "
          "TensorRT-LLM run and no new publisher met the selection rule in this search (the "
          "issue asked for both); the 'skipped' list says what else was read.\n")
    # The vLLM runs print no E2E: the set's, the engines' and the vLLM lines without it, then
    # the SGLang lines with it.
    vllm = [r for r in part if engine_of(r) == "vLLM"]
    print_medians_head()
    print(medians_line("prospective61", part))
    for engine in ENGINES:
        print(medians_line(f"prospective61, {engine}",
                           [r for r in part if engine_of(r) == engine]))
    print(medians_line("prospective61, vLLM runs with --frontend", vllm, served=True))
    print(medians_line(f"prospective61, {VLLM_GROUP}", vllm))
    for c in CONCURRENCIES:
        print(medians_line(f"prospective61, vLLM concurrency {c}",
                           [r for r in vllm if f" conc {c} " in r.run_id]))
    print()
    print_medians_head(e2e=True)
    sglang = [r for r in part if engine_of(r) == "SGLang"]
    print(medians_line("prospective61, SGLang", sglang, pairs=PAIRS52))
    print(medians_line("prospective61, SGLang dense models on the H100",
                       [r for r in sglang if any(in_group(r, g) for g in DENSE)], pairs=PAIRS52))
    for name in SGLANG_GROUPS:
        print(medians_line(f"prospective61, {name}", [r for r in sglang if in_group(r, name)],
                           pairs=PAIRS52))
    for n in LENGTHS:
        print(medians_line(f"prospective61, SGLang random {n}/128",
                           [r for r in sglang if f" {n}/128 " in r.run_id], pairs=PAIRS52))
    print_run_table(part)
    print_first_rows(part, FREEZE, FIRST_ROWS)
    print(f"\n{finding(part)}")
    print_sources(doc, "prospective61.json")
    from tests.benches import prospective61_served  # imports this module's DATA

    prospective61_served.print_section()


if __name__ == "__main__":
    print_section()
