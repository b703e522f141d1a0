"""The prospective60 set (issue 30): gpustack performance-lab runs on NVIDIA GPUs that no earlier
set replayed, frozen before kvplan was run on them, replayed with prospective30's machinery
(tests.benches.prospective_runs.run_one: the engine `estimate` sizes for the run's model, GPU,
TP, engine release and context length; the engine's scheduler; every request at the run's mean
lengths plus the chat template's tokens, all sent at t = 0, as the client did).

Thirty-two runs, one publisher, three groups (tests/data/sim_to_real/prospective60.json says
which and why each was kept): the A100 80GB pages prospective31 left for an unstated memory size,
which their 2026-01-06 version states (Qwen3-32B under vLLM 0.11.0 and TensorRT-LLM 1.2.0rc1,
gpt-oss-20b and gpt-oss-120b under vLLM 0.11.0, each at the page's default and tuned launch
line); the H100 Qwen3-32B page's TensorRT-LLM rows (Qwen3-32B-FP8), which prospective31 left when
kvplan had no TensorRT-LLM scheduler; the H200 DeepSeek-R1-0528 page's SGLang 0.5.3 rows, which
prospective53 left for --enable-dp-attention (off at SGLang's --dp 1, so TP 8).

The data file was committed (746e0556, branch prosp60, base 89130f56) before any of them was
simulated; then one harness change, before the replay (2cff61ed: run_one passes a TensorRT-LLM
run's enable_chunked_prefill to the simulator; no earlier run names it). The set was replayed
once on 2cff61ed with no rule or constant changed: FIRST_EVALUATION and FIRST_ROWS are that
evaluation, typed in as the record; every other figure of the section is computed by the
replay, so the page follows later rule changes while the record stays. No row is fitted; the
DeepSeek-R1-0528 rows share a fitted row's configuration (SAME_CONFIGURATION); the sixteen
gpt-oss rows shaped four rules after the first evaluation (SHAPED: a52829a4, vLLM's Marlin MoE
for MXFP4 experts; f8be70f3, Triton unified attention for models with attention sinks on SM 8.x;
a013bb35, vLLM to 0.15.1 admitting a request on its first chunk; 9a8d3183, that attention's
split-KV decode path in 0.11.0; tests/benches/fitted_rows.py SHAPED_BY) and a recorded setting
(5e7e9cdb: the vLLM runs ran FlashInfer's sampler, the data file's 'amended'); the other 12 are held
out; the lab's other rows shaped rules and fit cost-model constants (the section says so).

Run: python -m tests.benches.prospective60_runs (the section of examples/simulate-bench.md).
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
    run_one,
    runs_by_id,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective60.json"
FREEZE = "746e0556"  # the data file's commit
FIRST = "2cff61ed"  # the first evaluation's commit: the freeze plus run_one's chunked-prefill flag
# The workload shapes the pages ran (the run id's last word).
CASES = ("32000/100", "4000/200", "2000/100", "128/4")
ID_PREFIX = "gpustack "  # every run id begins so

# The set's first evaluation, at 2cff61ed (no rule or constant changed after the freeze), as
# printed.
FIRST_EVALUATION = (
    "first evaluated at 2cff61ed (the freeze 746e0556 plus run_one passing trtllm-serve's "
    "--enable_chunked_prefill; no rule or constant changed), 28 of 32 runs simulated, 4 refused "
    "(the Qwen3-32B vLLM A100 runs: 'one request of --max-model-len 40,960 tokens needs 2,560 "
    "blocks, the pool has 2,223 (vLLM refuses to start)'): median |error| TTFT mean / median "
    "36.9 / 39.2 %, TPOT mean / median 41.2 / 38.3 %, ITL 46.5 %; held out (24 of 28 "
    "simulated, all but the DeepSeek-R1-0528 rows) TTFT mean 38.3 %, TPOT mean 45.1 %, ITL "
    "48.9 %; vLLM (16 of 20) TTFT mean "
    "38.3 %, TPOT mean 47.5 % (with --frontend 39.6 / 58.5 %); TensorRT-LLM (8 of 8) TTFT mean "
    "30.3 %, TPOT mean 28.5 % (Qwen3-32B bf16 on the A100 5.8 / 10.4 %, Qwen3-32B-FP8 on the "
    "H100 56.2 / 52.4 %); SGLang (4 of 4) TTFT mean 28.1 %, TPOT mean 6.0 %")

# The first evaluation per run (2cff61ed): mean TTFT and mean TPOT error, predicted / measured
# - 1, keyed by the run id after ID_PREFIX; None: refused.
FIRST_ROWS: dict[str, tuple[float, float] | None] = {
    "Qwen3-32B A100 vLLM random 32000/100": None,
    "Qwen3-32B A100 vLLM random 4000/200": None,
    "Qwen3-32B A100 vLLM random 2000/100": None,
    "Qwen3-32B A100 vLLM random 128/4": None,
    "Qwen3-32B A100 TensorRT-LLM --enable_chunked_prefill random 32000/100": (-0.109, -0.088),
    "Qwen3-32B A100 TensorRT-LLM --enable_chunked_prefill random 4000/200": (-0.027, 0.069),
    "Qwen3-32B A100 TensorRT-LLM --enable_chunked_prefill random 2000/100": (0.032, 0.122),
    "Qwen3-32B A100 TensorRT-LLM --enable_chunked_prefill random 128/4": (0.083, 0.120),
    "gpt-oss-20b A100 vLLM random 32000/100": (-0.617, -0.614),
    "gpt-oss-20b A100 vLLM random 4000/200": (-0.372, -0.389),
    "gpt-oss-20b A100 vLLM random 2000/100": (-0.391, -0.305),
    "gpt-oss-20b A100 vLLM random 128/4": (0.058, -0.040),
    "gpt-oss-20b A100 vLLM --async-scheduling random 32000/100": (-0.614, -0.611),
    "gpt-oss-20b A100 vLLM --async-scheduling random 4000/200": (-0.354, -0.376),
    "gpt-oss-20b A100 vLLM --async-scheduling random 2000/100": (-0.366, -0.283),
    "gpt-oss-20b A100 vLLM --async-scheduling random 128/4": (0.084, 0.068),
    "gpt-oss-120b A100 vLLM random 32000/100": (-0.648, -0.870),
    "gpt-oss-120b A100 vLLM random 4000/200": (-0.411, -0.559),
    "gpt-oss-120b A100 vLLM random 2000/100": (-0.404, -0.530),
    "gpt-oss-120b A100 vLLM random 128/4": (-0.440, -0.513),
    "gpt-oss-120b A100 vLLM --async-scheduling --max-num-batched-tokens 4096 random 32000/100":
        (-0.630, -0.853),
    "gpt-oss-120b A100 vLLM --async-scheduling --max-num-batched-tokens 4096 random 4000/200":
        (-0.332, -0.497),
    "gpt-oss-120b A100 vLLM --async-scheduling --max-num-batched-tokens 4096 random 2000/100":
        (-0.304, -0.453),
    "gpt-oss-120b A100 vLLM --async-scheduling --max-num-batched-tokens 4096 random 128/4":
        (-0.375, -0.435),
    "Qwen3-32B-FP8 H100 TensorRT-LLM --enable_chunked_prefill random 32000/100": (-0.496, -0.448),
    "Qwen3-32B-FP8 H100 TensorRT-LLM --enable_chunked_prefill random 4000/200": (-0.539, -0.502),
    "Qwen3-32B-FP8 H100 TensorRT-LLM --enable_chunked_prefill random 2000/100": (-0.585, -0.547),
    "Qwen3-32B-FP8 H100 TensorRT-LLM --enable_chunked_prefill random 128/4": (-0.637, -0.568),
    "DeepSeek-R1-0528 H200 TP8 SGLang --enable-dp-attention random 32000/100": (-0.096, -0.051),
    "DeepSeek-R1-0528 H200 TP8 SGLang --enable-dp-attention random 4000/200": (-0.268, -0.053),
    "DeepSeek-R1-0528 H200 TP8 SGLang --enable-dp-attention random 2000/100": (-0.294, -0.067),
    "DeepSeek-R1-0528 H200 TP8 SGLang --enable-dp-attention random 128/4": (-0.357, -0.082),
}

# The set's groups (a page's launch line on a GPU): the words after ID_PREFIX of their run ids.
GROUPS = ("Qwen3-32B A100 vLLM", "Qwen3-32B A100 TensorRT-LLM", "gpt-oss-20b A100 vLLM",
          "gpt-oss-120b A100 vLLM", "Qwen3-32B-FP8 H100 TensorRT-LLM",
          "DeepSeek-R1-0528 H200 TP8 SGLang")
ENGINES = ("vLLM", "TensorRT-LLM", "SGLang")
# The runs that share a fitted row's configuration (model config, GPU, TP, engine): the
# DeepSeek-R1-0528 SGLang TP 8 H200 rows and the cost bench's DeepSeek-V3 / R1 FP8 SGLang TP 8
# 8 x H200 prefill rows that kvplan.perf.efficiency.PREFILL_LAUNCH_FIT is fitted on
# (tests/benches/cost_bench.py PREFILL_CASES). Every other run is held out.
SAME_CONFIGURATION = "DeepSeek-R1-0528 H200 TP8 SGLang"
# The groups whose first evaluation shaped rules (tests/benches/fitted_rows.py SHAPED_BY,
# _PROSPECTIVE60_GPT_OSS): read after it, vLLM's Marlin MoE for MXFP4 experts (a52829a4), its
# Triton unified attention for models with sinks on SM 8.x (f8be70f3), its first-chunk
# admission to 0.15.1 (a013bb35) and that attention's split-KV decode path in 0.11.0
# (9a8d3183); and a recorded setting, the vLLM runs' FlashInfer sampler (5e7e9cdb: the data
# file's 'amended').
SHAPED = ("gpt-oss-20b A100 vLLM", "gpt-oss-120b A100 vLLM")
# The refused group's context as the same page's other line for the same server sets it
# (prospective60.json, the source's "refused_why", read after the first evaluation: section 1
# 'Choosing the Inference Engine' runs `vllm serve Qwen/Qwen3-32B --max-model-len 32768`, and
# vLLM 0.11.0 cannot start at the bare line's 40,960 on an A100 80GB at 0.9). The section
# replays the group at it apart, in no median: the launch line is the page's, read after the
# refusal; no rule or constant changed.
PAGE_CONTEXT = {"Qwen3-32B A100 vLLM": 32_768}


def engine_of(r: Result) -> str:
    """The run's engine, from its id."""
    return next(e for e in ENGINES if f" {e} " in r.run_id)


def case_of(r: Result) -> str:
    """The run's workload shape (its id's last word)."""
    return r.run_id.rsplit(" ", 1)[1]


def _span(errors: list[float]) -> str:
    return f"{min(errors):+.1%} to {max(errors):+.1%}"


def in_group(r: Result, group: str) -> bool:
    """Whether the run is of `group` (one of GROUPS)."""
    return r.run_id.startswith(f"{ID_PREFIX}{group} ")


def label(r: Result, group: str) -> str:
    """The run within its group: its id after the group's words, less 'random'."""
    return r.run_id.removeprefix(ID_PREFIX + group).replace("random ", "").strip()


def itl_ratio(r: Result) -> float:
    """Measured over simulated mean ITL."""
    return r.measured["mean_itl_ms"] / r.simulated["itl_ms.mean"]


def finding(part: list[Result]) -> str:
    """What the replay shows, computed from the results (no figure typed in)."""
    done = [r for r in part if not r.refused]
    if not done:
        return "Every run was refused (reasons in the tables)."
    text = ("What the replay shows (computed; the gpt-oss rows under the four rules they "
            "shaped).")
    for i, name in enumerate(GROUPS, start=1):
        mine = [r for r in part if in_group(r, name)]
        ran = [r for r in mine if not r.refused]
        if not ran:
            text += (f" ({i}) {name}: all {len(mine)} refused ('{mine[0].refused}'), though the "
                     f"page prints {len(mine)} runs of that launch line.")
            continue
        ttft, tpot = ([_err(r, *PAIRS[0]) for r in ran], [_err(r, *PAIRS[2]) for r in ran])
        fast = sum(e < 0 for e in tpot)
        text += (f" ({i}) {name}: mean TTFT error {_span(ttft)}, mean TPOT error "
                 f"{_span(tpot)} (kvplan's TPOT below the measured on {fast} of {len(ran)}); "
                 "measured / simulated mean ITL "
                 + ", ".join(f"{label(r, name)} {itl_ratio(r):.2f}x" for r in ran) + ".")
    trt = [r for r in done if engine_of(r) == "TensorRT-LLM" and case_of(r) != "128/4"]
    a100 = [itl_ratio(r) for r in trt if " A100 " in r.run_id]
    h100 = [itl_ratio(r) for r in trt if " H100 " in r.run_id]
    if a100 and h100:
        text += (" The lab's TensorRT-LLM launch line (--max_seq_len=40960 "
                 "--enable_chunked_prefill) on its two GPUs, Qwen3-32B bf16 on the A100 and "
                 "Qwen3-32B-FP8 on the H100: the measured mean ITL is "
                 f"{statistics.median(a100):.2f}x kvplan's on the A100 and "
                 f"{statistics.median(h100):.2f}x on the H100 (medians over the three "
                 "long-prompt cases); prospective53 found this lab's H100 and H200 vLLM rows "
                 "1.6x to 5.6x slower than kvplan's steps.")
    preempted = sum(r.preemptions > 0 for r in done)
    text += f" Runs with a preemption in the replay: {preempted} of {len(done)}."
    return text


def at_page_context(part: list[Result]) -> list[tuple[str, Result]]:
    """The refused runs of a PAGE_CONTEXT group replayed at that context: (group, result)."""
    runs = runs_by_id(DATA)
    out = []
    for name, context in PAGE_CONTEXT.items():
        for r in part:
            if in_group(r, name) and r.refused:
                out.append((name, run_one({**runs[r.run_id], "max_model_len": context})))
    return out


def page_context_line(part: list[Result]) -> str:
    """What the replay gives at the page's other launch line (PAGE_CONTEXT), apart."""
    text = ""
    for name, context in PAGE_CONTEXT.items():
        rows = [r for group, r in at_page_context(part) if group == name]
        if not rows:
            continue
        text += (f" {name} at the same page's section-1 line (--max-model-len {context:,}; "
                 "tests/data/sim_to_real/prospective60.json says why the bare line cannot have "
                 "run; read after the first evaluation, in no median above): ")
        text += "; ".join(
            f"{label(r, name)} refused ('{r.refused}')" if r.refused else
            f"{label(r, name)} mean TTFT {_err(r, *PAIRS[0]):+.1%}, mean TPOT "
            f"{_err(r, *PAIRS[2]):+.1%}, mean ITL {_err(r, *PAIRS[3]):+.1%}" for r in rows) + "."
    return text


def print_section() -> None:
    """The prospective60 set as a Markdown section of examples/simulate-bench.md."""
    doc, part = open_section(DATA, "Prospective 60: gpustack's A100 pages and its TensorRT-LLM "
                                   "and SGLang rows, frozen before kvplan was run on them")
    refused = [r for r in part if r.refused]
    print(f"{len(part)} runs; the record of their first evaluation: {FIRST_EVALUATION} "
          "(tests/benches/prospective60_runs.py replays them with prospective30's machinery: "
          "every request of a run sent at t = 0 at the case's mean lengths plus the chat "
          "template's tokens). Errors are predicted / measured - 1; the medians are of their "
          "absolute values, this set alone, over the runs kvplan simulated "
          f"({len(part) - len(refused)} of {len(part)}; "
          + (f"{len(refused)} refused, each with its reason in the tables" if refused
             else "none refused") + "). The issue's target: TTFT <= 15 %, TPOT / ITL <= 10 %; "
          "no E2E was printed by these runs. No constant was fitted on any of them; the sixteen "
          "gpt-oss A100 rows shaped four rules and a setting after the first evaluation "
          "(tests/benches/fitted_rows.py SHAPED_BY: vLLM's Marlin fused MoE for MXFP4 experts, "
          "its block by the mean rows per expert, a52829a4; vLLM's Triton unified attention, not "
          "FlashAttention 2, for a model with attention sinks on SM 8.x, f8be70f3; vLLM to "
          "0.15.1 admitting a waiting request on its first chunk's blocks, a013bb35; that "
          "Triton attention's split-KV decode path in 0.11.0, 9a8d3183) and a recorded "
          "setting (the vLLM runs ran FlashInfer's sampler warm-up, gpustack's runner image "
          "installing FlashInfer: the data file's 'amended', 5e7e9cdb): the "
          "table's first-evaluation column is their record, the replay's column is no test of "
          "those rules. The four DeepSeek-R1-0528 SGLang rows "
          "share a fitted row's configuration (DeepSeek-V3 / R1 FP8, SGLang, TP 8 on 8 x H200: "
          "the cost bench's prefill rows that PREFILL_LAUNCH_FIT is fitted on), and rows of the "
          "same model and GPU shaped rules (aiconfigurator's DeepSeek-R1 H200 SGLang "
          "disaggregated rows); the other 12 are held out, though AccelMark's A100 vLLM rows "
          "shaped the FlashAttention 2 query-tile rule the A100 vLLM rows run under. All are "
          "one publisher's, whose other rows shaped rules (prospective30's Qwen3-14B H100 rows "
          "the --frontend stage, prospective53's DeepSeek-V3.2 H200 rows the sparse-attention "
          "rules) and fit cost-model constants (the cost bench's gpustack Qwen3-8B H100 rows, "
          "TensorRT-LLM 1.2.0rc1 among them), and the H100 and H200 rows come from pages "
          "prospective31 / 53 replayed (other engines' rows of them). NVIDIA only, dense and "
          "MoE, vLLM, TensorRT-LLM and SGLang, "
          "one publisher: no other publisher's SGLang or TensorRT-LLM run on an NVIDIA GPU met "
          "the selection rule in this search (the issue asked for two); the 'skipped' list says "
          "what else was read and why it was left out.\n")
    print_medians_head()
    print(medians_line("prospective60", part))
    print(medians_line("prospective60, held out (all but the DeepSeek-R1-0528 and gpt-oss "
                       "rows)", [r for r in part if not in_group(r, SAME_CONFIGURATION)
                                 and not any(in_group(r, g) for g in SHAPED)]))
    print(medians_line("prospective60, gpt-oss (shaped four rules and a setting after the first "
                       "evaluation)",
                       [r for r in part if any(in_group(r, g) for g in SHAPED)]))
    vllm = [r for r in part if engine_of(r) == "vLLM"]
    print(medians_line("prospective60, vLLM runs with --frontend", vllm, served=True))
    for engine in ENGINES:
        print(medians_line(f"prospective60, {engine}",
                           [r for r in part if engine_of(r) == engine]))
    for name in GROUPS:
        print(medians_line(f"prospective60, {name}", [r for r in part if in_group(r, name)]))
    for case in CASES:
        print(medians_line(f"prospective60, random {case} (all groups)",
                           [r for r in part if case_of(r) == case]))
    print_run_table(part)
    print_first_rows(part, FIRST, FIRST_ROWS, ID_PREFIX)
    print(f"\n{finding(part)}{page_context_line(part)}")
    print_sources(doc, "prospective60.json")


if __name__ == "__main__":
    print_section()
