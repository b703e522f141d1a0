"""The prospective66 set (issue 30): 2 public serving runs no earlier set has, committed
(FREEZE, 25ffba0f) with their published figures before kvplan was run on either, replayed with
prospective30's machinery (tests.benches.prospective_runs.run_one: the engine `estimate` sizes
for the run's model, GPU, TP, release, context, memory fraction and --max-num-seqs; vLLM's
scheduler; a closed loop at the run's concurrency; every run on a fresh engine).

The runs (tests/data/sim_to_real/prospective66.json says where each was read and what it
assumes): kubesimplify's post 'Running a big LLM across multiple GPUs with vLLM'
(kubesimplify/website@08b151ee), vLLM 0.27.1 serving Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 at
TP 4 on 4 RTX PRO 6000 Blackwell Server Edition cards joined by PCIe only, --max-model-len
32,768, --max-num-seqs 32, gpu-memory-utilization 0.90; `vllm bench serve` random 1,024 in /
256 out --ignore-eos --seed 42 at concurrency 1 (12 prompts) and 32 (640 prompts). Both blocks
print mean, median and P99 TTFT / TPOT / ITL (the conc-32 one E2E too); each run is compared on
its means (the 'statistic' 'mean', as prospective65's vLLM run), the medians shown beside them.

Assumptions, stated in the data file before any evaluation: the model config is a stand-in
(tests/data/configs/qwen3-235b-a22b-fp8.json, the predecessor Qwen3-235B-A22B-FP8's, copied
from aiconfigurator; SOURCES-prosp66.md: it differs from the 2507 checkpoint in
max_position_embeddings and rope_theta, neither of which reaches a replay at --max-model-len
32,768); kvplan's RTX-PRO-6000 preset (both editions' 96 GiB and 1,792 GB/s, the Workstation
Edition's 2.617 GHz boost) stands for the Server Edition, whose power limit is configurable;
the client's single-prompt test run and the prefix cache the two runs may share (same server,
same --seed 42: the conc-32 run's first 12 prompts are likely the conc-1 run's) are not
replayed.

Held out: no constant was fitted on these runs and none shares a fitted row's configuration
(tests/test_prospective66.py). One rule they exercise was read from the same publisher's other
post on the same machine: kvplan's vLLM non-torch memory for TP over PCIe
(kvplan/engines/vllm/budget.py vllm_non_torch_gib; its Qwen3-32B TP 2 startup log), and the
preset's reported total (95.01 GiB) from that log; the runs' own figures (startup or result
blocks) were read for no rule.

The set was first replayed at 9f0e1d77 (2026-12-07; between the freeze and it only this runner
was added): FIRST_EVALUATION and FIRST_ROWS are what it printed, typed in as the record; every
other figure of the section is computed by the replay, so the page follows later rule changes
while the record stays. The section also prints kvplan's capacity plan for the runs' one server
beside its startup log (weights, KV memory, KV pool tokens), read, not part of the medians.

Run: python -m tests.benches.prospective66_runs (the section of examples/simulate-bench.md).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import Engine
from tests.benches.prospective_runs import (
    MEDIAN_TPOT,
    PAIRS,
    REPO,
    Result,
    _err,
    open_section,
    print_first_rows,
    print_sources,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective66.json"
# The commit that adds the data file: the freeze. Nothing was evaluated at it.
FREEZE = "25ffba0f"
FIRST = "9f0e1d77"  # the branch's commit of the first evaluation (nothing changed since FREEZE)

# The set's first evaluation, at 9f0e1d77 (2026-12-07), as printed (median |error| over the
# runs simulated; each run on its means).
FIRST_EVALUATION = (
    "first evaluated at 9f0e1d77 on 2026-12-07 (frozen at 25ffba0f; between them only this "
    "runner was added: no rule, constant or harness changed), 2 of 2 runs simulated, none "
    "refused: median |error| mean TTFT 39.8 % (-54.2 % at concurrency 1, -25.4 % at 32: kvplan "
    "fast on both), mean TPOT 24.4 % (-9.6 % at 1, +39.2 % at 32), mean ITL 24.4 %, mean E2E "
    "29.0 % (the conc-32 run only, +29.0 %); the medians, shown not compared: TTFT -53.5 % / "
    "+222.1 %, TPOT -9.8 % / +48.1 %; no preemption in either replay")

# The first evaluation per run (9f0e1d77): the mean TTFT and mean TPOT errors, predicted /
# measured - 1, keyed by the run id; None: refused (neither was).
FIRST_ROWS: dict[str, tuple[float, float] | None] = {
    "kubesimplify vLLM Qwen3-235B-A22B-Instruct-2507-FP8 RTX-PRO-6000 TP4 random 1024/256 "
    "conc 1 (12 prompts)": (-0.542, -0.096),
    "kubesimplify vLLM Qwen3-235B-A22B-Instruct-2507-FP8 RTX-PRO-6000 TP4 random 1024/256 "
    "conc 32 (640 prompts)": (-0.254, 0.392),
}

# The figures compared (the runs' statistic, 'mean'): (column, (measured key, kvplan's metric,
# kvplan's statistic)); E2E only where the block prints it (the conc-32 run: 'Mean E2EL').
COMPARED: tuple[tuple[str, tuple[str, str, str]], ...] = (
    ("TTFT", PAIRS[0]), ("TPOT", PAIRS[2]), ("ITL", PAIRS[3]),
    ("E2E", ("mean_e2el_ms", "e2e_ms", "mean")))
# Shown beside the compared means, not part of the set's medians: the blocks' medians.
MEDIANS: tuple[tuple[str, tuple[str, str, str]], ...] = (
    ("TTFT p50", PAIRS[1]), ("TPOT p50", MEDIAN_TPOT))
COLUMNS = tuple(column for column, _ in COMPARED)
CONCURRENCIES = (1, 32)


def compared(r: Result) -> dict[str, float]:
    """The run's errors (predicted / measured - 1) by column, on the means its block printed;
    empty for a refused run."""
    if r.refused:
        return {}
    return {column: _err(r, *pair) for column, pair in COMPARED if pair[0] in r.measured}


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


def planned_server(run: dict) -> dict[str, float]:  # type: ignore[type-arg]
    """kvplan's capacity plan for the run's server (the estimate run_one sizes from: model,
    GPU, TP, release, --max-model-len, the memory fraction, --max-num-seqs): weights and KV
    budget per GPU in GiB and the KV pool in tokens, beside the startup log's 'Model loading
    took', 'Current kv cache memory in use' and 'GPU KV cache size' (the run's
    published.startup)."""
    spec = load_spec(str(REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine=Engine.vllm, engine_version=run["vllm"],
                             mem_fraction=run["gpu_memory_utilization"],
                             max_num_seqs=run["max_num_seqs"])
    assert inputs.capacity is not None
    cap = plan_capacity(inputs.spec, inputs.capacity)
    return {"weights_gib": cap.weights_bytes / 2**30, "kv_budget_gib": cap.kv_budget_bytes / 2**30,
            "kv_tokens": float(cap.token_capacity)}


def print_planned_server(doc: dict) -> None:  # type: ignore[type-arg]
    """kvplan's plan of the runs' one server beside its startup log (read, not compared in the
    medians: the log is the same for both runs)."""
    run = doc["runs"][0]
    log, plan = run["published"]["startup"], planned_server(run)
    print(f"\nThe server's startup log (the same for both runs) beside kvplan's plan at its "
          f"flags: weights per GPU {log['model_loading_gib']:.2f} GiB logged, "
          f"{plan['weights_gib']:.2f} planned; KV cache memory "
          f"{log['kv_cache_memory_in_use_gib']:.2f} GiB logged, "
          f"{plan['kv_budget_gib']:.2f} planned; KV pool "
          f"{log['gpu_kv_cache_tokens']:,} tokens logged, {plan['kv_tokens']:,.0f} planned "
          f"({plan['kv_tokens'] / log['gpu_kv_cache_tokens'] - 1:+.1%}).")


def print_run_table(part: list[Result]) -> None:
    """Each run: its measured and simulated mean TTFT / TPOT, their errors, the medians' errors
    (shown, not compared), the replay's preemptions."""
    print("\n| run | measured mean TTFT / TPOT ms | simulated | TTFT err | TPOT err | "
          "median TTFT err | median TPOT err | preemptions |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for r in part:
        measured = f"{r.measured['mean_ttft_ms']:,.1f} / {r.measured['mean_tpot_ms']:.2f}"
        if r.refused:
            print(f"| {r.run_id} | {measured} | refused: {r.refused} | | | | | |")
            continue
        simulated = f"{r.simulated['ttft_ms.mean']:,.1f} / {r.simulated['tpot_ms.mean']:.2f}"
        e = compared(r)
        ttft_p50, tpot_p50 = (_err(r, *pair) for _, pair in MEDIANS)
        print(f"| {r.run_id} | {measured} | {simulated} | {e['TTFT']:+.1%} | {e['TPOT']:+.1%} "
              f"| {ttft_p50:+.1%} | {tpot_p50:+.1%} | {r.preemptions:,} |")


def print_section() -> None:
    """The prospective66 set as a Markdown section of examples/simulate-bench.md."""
    doc, part = open_section(DATA, "Prospective 66: kubesimplify's Qwen3-235B FP8 runs on 4 x "
                                   "RTX PRO 6000, frozen before kvplan was run on them")
    print(f"{len(part)} runs; the record of their first evaluation: {FIRST_EVALUATION} (the "
          "'what' above is the data file as frozen; "
          "tests/benches/prospective66_runs.py replays them with prospective30's machinery: a "
          "closed loop at the run's concurrency, every run on a fresh engine, the client's "
          "single-prompt test run not replayed). Each run is compared on its means (mean TTFT, "
          "TPOT, ITL and, for the conc-32 run, E2E); errors are predicted / measured - 1, the "
          "medians are of their absolute values over the runs kvplan simulated, the number of "
          "runs each is over in parentheses. Assumed, and said in the data file before the "
          "replay: the model config is a stand-in (the predecessor Qwen3-235B-A22B-FP8's, "
          "differing from the 2507 checkpoint's in max_position_embeddings and rope_theta, "
          "neither reaching a replay at --max-model-len 32,768); kvplan's RTX-PRO-6000 preset "
          "(both editions' memory and bandwidth, the Workstation Edition's boost clock) stands "
          "for the Server Edition, whose power limit is configurable; the prefix cache the two "
          "runs may share (same server, same --seed 42: the conc-32 run's first 12 prompts are "
          "likely the conc-1 run's) is not replayed. No constant was fitted on these runs and "
          "none shares a fitted row's configuration: the replay is held out. kvplan's vLLM "
          "non-torch memory for TP over PCIe was read from the same publisher's Qwen3-32B TP 2 "
          "post on the same machine (kvplan/engines/vllm/budget.py).\n")
    print("| runs | simulated | TTFT mean (runs) | TPOT mean (runs) | ITL mean (runs) | "
          "E2E mean (runs) |")
    print("|---|---:|---:|---:|---:|---:|")
    print(medians_line("prospective66", part))
    for c in CONCURRENCIES:
        print(medians_line(f"prospective66, concurrency {c}", at_concurrency(part, c)))
    print_run_table(part)
    print_planned_server(doc)
    print_first_rows(part, FIRST, FIRST_ROWS)
    print_sources(doc, "prospective66.json")


if __name__ == "__main__":
    print_section()
