"""`python -m tests.benches.disagg_trtllm_hopper [--moe fitted|shape]`: why section 3j's
TensorRT-LLM DeepSeek-R1 FP8 rows on Hopper (H100, H200) and B200 miss on TTFT (trtttft61, a
forensic: nothing here changes a prediction; printed only, on no generated page).

Per row, with the bench's own functions (disagg_forensic.forensic, the default replay):
measured vs kvplan TTFT and TPOT, kvplan's TTFT by phase (kvplan.analysis.simulate.disagg_sim
.TtftPhases: prefill queue, prefill steps, transfer, the generation side), the gap in the row's
own decode steps, the recipe the run is matched to (its decode seats, stream_interval), and
kvplan's one-prompt context step by term (kvplan.perf.roofline.step_time's `by_op`, captured from
the replay's own calls: launch, all-reduce, attention, experts, all-to-all, GEMMs). `--moe`
replays the same rows with the opt-in experts' fractions (tests.benches.moe_gemm_bench's modes:
kvplan.perf.efficiency FP8_MOE_GEMM / MOE_GEMM_SHAPE, fitted on aiconfigurator's H100 kernel
tables, opt-in), a counterfactual of the one term the kernel tables say kvplan prices far
under TensorRT-LLM's block-FP8 MoE on Hopper (examples/moe-op-bench.md: TensorRT-LLM 1.2.0rc5,
fp8 block, EP 8, 0.19 of the measured op at the dense fraction).

What it showed (trtttft61's report; the figures at its parent 461b879e):
- H100 (8 rows): the measured TTFT falls as users are added at 1,024 tokens (12,345 ms at 6
  users, 7,137 at 9, 5,052 at 30) and is 500-900 of the row's own decode steps: a wait for a
  decode seat, not a prefill. The runs' recipes (InferenceX named them on 2026-02-07, the day
  before the measurement; srt_slurm_recipes.NAMED_BEFORE) seat 1, 2, 8, 16 and 64 a generation
  server below 2, 3, 10, 20 and 77 users a server; with them (since trtttft61) the replay's
  seat wait is the gap.
- H200 (25 rows) and B200 FP8 (18): kvplan's queue and prefill are most of its TTFT; the
  measured context servers where saturated serve fewer prompts a second than kvplan's (H200
  TP 8 EP 8 at 8,192 tokens: 2.85 a second a server measured, 5.06 kvplan's at the recipe's
  two prompts a step), and the expert GEMMs are the term the kernel tables put furthest under.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import kvplan.perf.costmodel as costmodel
from tests.benches.disagg_forensic import Forensic, forensic
from tests.benches.disagg_rows import PREFIX, layout, prospective_rows, stated_concurrency
from tests.benches.disagg_trtllm import full_rows
from tests.benches.srt_slurm_recipes import for_row

# The rows: card and precision as 3j groups them (disagg_trtllm._group).
GROUPS = ("dsr1_h100_trtllm_fp8", "dsr1_h200_trtllm_fp8", "dsr1_b200_trtllm_fp8")
TERMS = ("prefill_launch", "tp_all_reduce", "ep_all_to_all", "attention", "experts",
         "attention_proj", "mlp")


@contextmanager
def _prefill_steps() -> Iterator[list[tuple[int, int, dict[str, float]]]]:
    """The context steps the replay prices inside (tokens, prompts, ms by term)."""
    seen: list[tuple[int, int, dict[str, float]]] = []
    real = costmodel.step_time

    def wrapped(*args: Any, **kw: Any) -> Any:
        res = real(*args, **kw)
        if kw.get("phase") == "prefill":
            seen.append((kw["tokens"], kw["requests"],
                         {k: v * 1e3 for k, v in res.by_op.items()}))
        return res

    costmodel.step_time = wrapped  # type: ignore[assignment]
    try:
        yield seen
    finally:
        costmodel.step_time = real


def rows() -> list[dict[str, str]]:
    full = set(full_rows())
    return sorted((r for r in prospective_rows() if PREFIX + r["id"] in full
                   and r["id"].startswith(GROUPS)), key=lambda r: r["id"])


def line(row: dict[str, str], f: Forensic, step: dict[str, float] | None) -> str:
    r, ph = f.rep, f.phases
    assert r.ttft_ms is not None
    rec = for_row(row, stated_concurrency(row), layout(row, "prefill"), layout(row, "decode"))
    seats = (f"{rec.decode.max_batch_size} (si {rec.decode.stream_interval})"
             if rec is not None else "-")
    phase = ("-" if ph is None else " / ".join(f"{x:,.0f}" for x in (
        ph.prefill_queue_ms, ph.prefill_ms, ph.transfer_ms, ph.decode_side_ms)))
    gap = (r.measured_ttft_ms - r.ttft_ms) / r.measured_tpot_ms
    terms = ("-" if step is None else " / ".join(f"{step.get(k, 0.0):.0f}" for k in TERMS))
    return (f"| {r.id.removeprefix(PREFIX)} | {f.prefill} : {f.decode} | {r.concurrency} | "
            f"{r.measured_ttft_ms:,.0f} / {r.ttft_ms:,.0f} | {f.ttft_ratio:.2f} / "
            f"{f.tpot_ratio:.2f} | {phase} | {gap:,.0f} | {seats} | {terms} |")


def table() -> tuple[list[str], list[Forensic]]:
    out = ["| row | P : D | C | TTFT ms meas / kvplan | ratio TTFT / TPOT | kvplan TTFT "
           "phases ms (queue / prefill / transfer / decode side) | gap in decode steps | "
           "recipe decode seats a rank | kvplan one-prompt step ms (" + " / ".join(TERMS) + ") |",
           "|" + "---|" * 9]
    done: list[Forensic] = []
    for row in rows():
        with _prefill_steps() as seen:
            f = forensic(row)
        if f is None:
            continue
        done.append(f)
        one = next((ms for tokens, prompts, ms in seen
                    if prompts == 1 and tokens == int(row["isl"])), None)
        out.append(line(row, f, one))
    return out, done


def summary(done: list[Forensic]) -> list[str]:
    out = []
    for g in GROUPS:
        sub = [f for f in done if f.rep.id.removeprefix(PREFIX).startswith(g)]
        if sub:
            out.append(f"- {g.removeprefix('dsr1_')}: {len(sub)} rows; median ratio TTFT "
                       f"{statistics.median(f.ttft_ratio for f in sub):.2f}, TPOT "
                       f"{statistics.median(f.tpot_ratio for f in sub):.2f}; TTFT inside "
                       f"{sum(0.75 <= f.ttft_ratio <= 1.33 for f in sub)}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--moe", choices=("fitted", "shape"),
                    help="replay with the opt-in experts' fractions (a counterfactual)")
    args = ap.parse_args()
    with ExitStack() as stack:
        if args.moe:
            from tests.benches.moe_gemm_bench import moe_fitted
            stack.enter_context(moe_fitted(args.moe))
        lines, done = table()
    print("\n".join([*summary(done), "", *lines]))


if __name__ == "__main__":
    main()
