"""The prospective58 set (issue 30): Wentao274's public `vllm bench serve` runs of MiniMax-M2.5
(FP8, TP 8 with expert parallel) on 8 x H100, frozen before kvplan was run on them, replayed
with prospective30's machinery (tests.benches.prospective_runs.run_one: the engine `estimate`
sizes for the run's model, GPU, TP, vLLM release, max_model_len and memory fraction, with the
flags the run states (max_num_seqs 64, max_num_batched_tokens 8192, --enable-expert-parallel);
a closed loop at the client's --max-concurrency, every request at the run's fixed lengths plus
the 39 chat-template tokens its totals show, all sent at t = 0).

The runs, their settings, what the source does not state (and the replay assumes), each run's
URL and measured figures are in tests/data/sim_to_real/prospective58.json, committed (5154a824,
branch prosp58, base f517c36b) before any of them was simulated. The harness then learned to
pass the stated flags (93f50910: tests/benches only, no kvplan code) and the set was replayed
once there, with no change to any rule or constant: FIRST_EVALUATION and FIRST_ROWS are that
evaluation, typed in as the record; every other figure of the section is computed by the
replay, so the page follows later rule changes while the record stays. No row is fitted or
shaped.

Run: python -m tests.benches.prospective58_runs (the section of examples/simulate-bench.md).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from tests.benches.prospective_runs import (
    PAIRS,
    Result,
    _err,
    medians_line,
    open_section,
    print_first_rows,
    print_medians_head,
    print_run_table,
    print_sources,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective58.json"
FREEZE = "5154a824"  # the data file's commit
FIRST = "93f50910"  # the harness passing the stated flags; the first evaluation ran on it
SUITES = ("test_01", "test_02", "test_03", "test_04", "test_05")
MAX_NUM_SEQS = 64  # the server's --max-num-seqs (every run's `max_num_seqs`)

# The set's first evaluation, at 93f50910 (no kvplan code changed on the branch), as printed.
FIRST_EVALUATION = (
    "first evaluated at 93f50910, the freeze (5154a824) plus the harness passing the run's "
    "stated flags (no kvplan code changed on the branch), 33 of 33 runs simulated, none "
    "refused: median |error| TTFT mean / median 54.4 / 47.8 %, TPOT mean / median 14.2 / "
    "14.7 %, ITL 14.4 %; with --frontend TTFT mean 44.6 %, TPOT mean 14.2 %")

ID_PREFIX = "Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 "  # every run id begins so

# The first evaluation per run (93f50910): mean TTFT and mean TPOT error, predicted / measured
# - 1, keyed by the run id after ID_PREFIX.
FIRST_ROWS = {
    "test_01 10240/256 chat conc 1 (320 prompts)": (-0.619, 0.142),
    "test_01 10240/256 chat conc 2 (320 prompts)": (-0.565, 0.033),
    "test_01 10240/256 chat conc 4 (320 prompts)": (-0.640, -0.016),
    "test_01 10240/256 chat conc 8 (320 prompts)": (-0.742, -0.064),
    "test_01 10240/256 chat conc 10 (320 prompts)": (-0.700, 0.006),
    "test_01 10240/256 chat conc 16 (320 prompts)": (-0.716, -0.161),
    "test_01 10240/256 chat conc 32 (320 prompts)": (-0.689, -0.270),
    "test_01 10240/256 chat conc 64 (320 prompts)": (-0.632, -0.376),
    "test_01 10240/256 chat conc 80 (320 prompts)": (-0.492, -0.385),
    "test_01 10240/256 chat conc 128 (320 prompts)": (-0.447, -0.385),
    "test_02 194560/1024 chat conc 1 (100 prompts)": (-0.289, -0.068),
    "test_02 194560/1024 chat conc 2 (100 prompts)": (-0.476, 0.086),
    "test_02 194560/1024 chat conc 4 (100 prompts)": (-0.649, 0.142),
    "test_02 194560/1024 chat conc 8 (100 prompts)": (-0.239, -0.181),
    "test_02 194560/1024 chat conc 10 (100 prompts)": (-0.221, -0.188),
    "test_03 90000/2000 chat conc 32 (1000 prompts)": (-0.228, -0.099),
    "test_03 90000/2000 chat conc 64 (1000 prompts)": (-0.198, -0.100),
    "test_04 70000/1500 chat conc 1 (300 prompts)": (-0.445, 0.030),
    "test_04 70000/1500 chat conc 2 (300 prompts)": (-0.557, 0.025),
    "test_04 70000/1500 chat conc 4 (300 prompts)": (-0.702, 0.015),
    "test_04 70000/1500 chat conc 8 (300 prompts)": (-0.690, -0.075),
    "test_04 70000/1500 chat conc 16 (300 prompts)": (-0.652, -0.162),
    "test_04 70000/1500 chat conc 32 (300 prompts)": (-0.294, -0.175),
    "test_04 70000/1500 chat conc 64 (300 prompts)": (-0.258, -0.175),
    "test_04 70000/1500 chat conc 80 (300 prompts)": (-0.254, -0.175),
    "test_04 70000/1500 chat conc 128 (300 prompts)": (-0.248, -0.175),
    "test_05 1024/512 chat conc 1 (1000 prompts)": (-0.692, 0.174),
    "test_05 1024/512 chat conc 4 (1000 prompts)": (-0.711, 0.048),
    "test_05 1024/512 chat conc 8 (1000 prompts)": (-0.530, 0.083),
    "test_05 1024/512 chat conc 16 (1000 prompts)": (-0.544, 0.125),
    "test_05 1024/512 chat conc 32 (1000 prompts)": (-0.470, 0.158),
    "test_05 1024/512 chat conc 64 (1000 prompts)": (-0.604, 0.165),
    "test_05 1024/512 chat conc 128 (1000 prompts)": (0.114, 0.169),
}


def suite_of(run_id: str) -> str:
    """The run's suite (test_01 ... test_05), from its id."""
    return run_id.removeprefix(ID_PREFIX).split(" ")[0]


def suite(r: Result) -> str:
    """The result's suite (`suite_of` its id)."""
    return suite_of(r.run_id)


def concurrency(r: Result) -> int:
    """The client's --max-concurrency, from the run's id."""
    return int(r.run_id.split(" conc ")[1].split(" ")[0])


def prompt_len(r: Result) -> int:
    """Tokens a prompt (the requested length plus the chat template): input total / prompts."""
    prompts = int(r.run_id.split("(")[1].split(" ")[0])
    return int(r.measured["total_input_tokens"]) // prompts


def finding(part: list[Result]) -> str:
    """What the replay shows, computed from the results (no figure typed in)."""
    done = [r for r in part if not r.refused]
    if not done:
        return "Every run was refused (reasons in the table)."
    low = sum(_err(r, *PAIRS[0]) < 0 for r in done)
    lone = sorted((r for r in done if concurrency(r) == 1), key=prompt_len)
    gaps = "; ".join(f"{prompt_len(r):,} tokens: {r.measured['mean_ttft_ms']:,.1f} ms measured, "
                     f"{r.simulated['ttft_ms.mean']:,.1f} simulated" for r in lone)
    text = (f"What the replay shows (computed; no rule was changed). (1) TTFT: kvplan's mean TTFT "
            f"is below the measured on {low} of {len(done)} runs. One request at a time (no "
            f"queue), by prompt length: {gaps}.")
    if lone:
        errors = [_err(r, *PAIRS[2]) for r in lone]
        side = ("above" if min(errors) > 0 else "below" if max(errors) < 0
                else "on both sides of")
        text += (" (2) TPOT with one request at a time: "
                 + ", ".join(f"{suite(r)} {e:+.1%}" for r, e in zip(lone, errors, strict=True))
                 + f": kvplan's decode step for one request is {side} the measured one.")
    full = [r for r in done if suite(r) == "test_01" and concurrency(r) >= MAX_NUM_SEQS]
    if full:
        meas = statistics.median(r.measured["mean_tpot_ms"] for r in full)
        sim = statistics.median(r.simulated["tpot_ms.mean"] for r in full)
        text += (f" With {MAX_NUM_SEQS} requests running (the server's max_num_seqs; test_01 at "
                 f"concurrency {', '.join(str(concurrency(r)) for r in full)}, "
                 f"{prompt_len(full[0]):,}-token prompts) the median of the measured mean TPOTs "
                 f"is {meas:.2f} ms against kvplan's {sim:.2f} ms ({sim / meas - 1:+.1%}).")
    over = [r for r in done if _err(r, *PAIRS[0]) > 0]
    if over:
        text += (" (3) The runs whose mean TTFT kvplan puts above the measured: "
                 + ", ".join(f"{suite(r)} at concurrency {concurrency(r)} "
                             f"({_err(r, *PAIRS[0]):+.1%})" for r in over) + ".")
    return text


def print_section() -> None:
    """The prospective58 set as a Markdown section of examples/simulate-bench.md."""
    doc, part = open_section(DATA, "Prospective 58: Wentao274's vLLM runs of MiniMax-M2.5 on "
                                   "8 x H100 with expert parallel, frozen before kvplan was "
                                   "run on them")
    refused = [r for r in part if r.refused]
    print(f"{len(part)} runs, each evaluated once with no change to any rule ({FIRST_EVALUATION}) "
          "(tests/benches/prospective58_runs.py replays them with prospective30's machinery: a "
          "closed loop at the client's --max-concurrency, every request at the run's fixed "
          "lengths plus the 39 chat-template tokens the totals show, the server's stated "
          "max_num_seqs 64, max_num_batched_tokens 8192 and expert parallel). Errors are "
          "predicted / measured - 1; the medians are of their absolute values, this set alone, "
          f"over the runs kvplan simulated ({len(part) - len(refused)} of {len(part)}; "
          + (f"{len(refused)} refused, each with its reason in the tables" if refused
             else "none refused") + "). The issue's target: TTFT <= 15 %, TPOT / ITL <= 10 %; "
          "these runs printed no E2E. Every run is held out: no constant was fitted on and no "
          "rule shaped by a MiniMax row or an expert-parallel vLLM row "
          "(tests/benches/fitted_rows.py); the --frontend stage was fitted on another host's "
          "vLLM API server. The runs of one suite at several concurrencies share a "
          "configuration. One publisher, one model and one engine met the selection rule in "
          "this search (the issue asked for three publishers and SGLang / TensorRT-LLM runs); "
          "the 'skipped' list says what else was read and why it was left out.\n")
    print_medians_head()
    print(medians_line("prospective58", part))
    print(medians_line("prospective58, with --frontend", part, served=True))
    for name in SUITES:
        mine = [r for r in part if suite(r) == name]
        if mine:
            print(medians_line(f"prospective58, {name}", mine))
    print_run_table(part)
    print_first_rows(part, FIRST, FIRST_ROWS, ID_PREFIX)
    done = [r for r in part if not r.refused]
    if done:
        ratio = statistics.median(r.measured["mean_ttft_ms"] / r.simulated["ttft_ms.mean"]
                                  for r in done)
        print(f"\nMedian measured / simulated mean TTFT over the simulated runs: {ratio:.2f}x.")
    print(f"\n{finding(part)}")
    print_sources(doc, "prospective58.json")


if __name__ == "__main__":
    print_section()
