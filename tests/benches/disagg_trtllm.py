"""Section 3j of examples/disagg-bench.md: the frozen TensorRT-LLM rows of the prospective set,
first replayed at trtdis54 (disagg_rows.BACKEND_COHORTS) with TensorRT-LLM's disaggregated flow
(kvplan.engines.trtllm.disagg_flow), a blind test: the rule and the choice of rows were
committed before any of them was replayed. `python -m tests.benches.disagg_trtllm` prints it
alone (the merge regenerates the page).

The first evaluation (blind; the rules frozen at f9d32f28, run once after): 156 rows with full
layouts and a stated concurrency, 10 replayed (9 H200 FP8 DeepSeek-R1, 1 B200 FP8), 113 refused
by kvplan's TensorRT-LLM sizing (attention DP with an MoE model: the all-to-all workspaces are
not modelled), 30 whose image's TensorRT-LLM release is not stated, 3 Qwen3-32B-NVFP4 not sized.
Inside [0.75, 1.33] on both: 0 of 10; TTFT alone 0 of 10; TPOT alone 9 of 10; median ratio
TTFT 0.28, TPOT 1.07 (H200: TPOT 9 of 9, median 1.05; B200 c1: TPOT 1.41). No code error was
found after it; nothing changed (SHAPED_BY holds no record from these rows). Measured beside
it, not used: at TensorRT-LLM's default context seats (2,048 prompts, 8,192 tokens a step)
instead of the generator's max_batch_size 1, still 0 of 10 on TTFT (the ISL 1,024 H200 rows'
TTFT ratios 0.08-0.11 -> 0.13-0.44; ISL 8,192 unchanged). Where it misses: TTFT is 0.6-1.3 s
above kvplan's at 28-288 requests in flight (Little's law gives every prefill worker there a
load kvplan's one-prompt time, 69.5 ms at ISL 1,024 and 365 ms at 8,192, serves with room),
and at 576 in flight the measured worker served 17.2 prompts/s (58 ms each), above kvplan's
14.4/s at one prompt a step: kvplan saturates (TTFT 3.68 x).

Shaped since (trtgap54, dc15ac9; SHAPED_BY): the generation server's polled transfer
(kvplan.engines.trtllm.disagg_flow (b)): a request is taken in at a decode step boundary, its
transfer started there, and seen done at a later boundary; an idle server waits for the
transfer. About one decode step more on the H200 rows (c36 76.7 -> 89.4 ms, c72 78.5 -> 94.2,
c144 82.9 -> 103.7, c288 84.9 -> 113.2, 8,192 c48 cfg347 408.9 -> 425.9; c28 cfg297 388.7
unchanged: its arrivals fall just before a boundary), the c1 B200 row 106.6 -> 98.9 (prefill
86.1 + the 12.8 ms transfer the idle server waits for, not two empty 10.3 ms steps): TTFT
still 0 of 10, median 0.28. Read and ruled out in the same pass (trtgap54's report): the
context server does not hold a seat or wait for the send (a context-only request leaves
active_requests for ctx_in_transmission_requests after its step; the send is checked
non-blocking); Dynamo's frontend routes round-robin by default (--router-mode), measured
beside it in the simulation, not used: the closed loop at the rows' equal prompt and output
lengths keeps it balanced (ISL 1,024 rows within 0.2 ms of the least-loaded pick; ISL 8,192
lower, cfg301 c48 1,145.1 -> 1,035.4 ms, cfg347 408.9 -> 391.4, cfg305 c160 1,475.0 ->
1,465.1): no part of the gap."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from tests.benches.disagg_rows import (
    BACKEND_COHORTS,
    BAND,
    PREFIX,
    Replay,
    prospective_rows,
    replay,
    stated_concurrency,
)

COHORT = BACKEND_COHORTS["trtllm"]
# Since the first evaluation (trtgap54; tests/benches/fitted_rows.py SHAPED_BY), and that
# evaluation's figures (trtdis54, b3e22112, the rules frozen at f9d32f28), kept beside them.
SHAPED_TEXT = (
    "Shaped since (trtgap54, dc15ac9): the generation server's polled transfer "
    "(kvplan.engines.trtllm.disagg_flow (b): a request taken in at a decode step boundary, its "
    "transfer started there and seen done at a later boundary, an idle server waiting for it), "
    "read after the first evaluation; all the rows above shaped it.",
    "",
    "The first (blind) evaluation, before it: both 0 of 10 (0%); TTFT alone 0 of 10 (0%); TPOT "
    "alone 9 of 10 (90%); median ratio TTFT 0.28, TPOT 1.07 (dsr1 b200 fp8 TTFT 0.28, TPOT "
    "1.41; dsr1 h200 fp8 TTFT 0.28, TPOT 1.05).",
    "")


def _share(rows: list[Replay], test: Callable[[Replay], bool]) -> str:
    n = sum(test(r) for r in rows)
    return f"{n} of {len(rows)}" + (f" ({n / len(rows):.0%})" if rows else "")


def _inside(i: int) -> Callable[[Replay], bool]:
    return lambda r: r.ratios is not None and BAND[0] <= r.ratios[i] <= BAND[1]


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _group(r: Replay) -> str:
    """Card and precision as the row's id spells them (dsr1_h200_trtllm_fp8_... -> h200 fp8)."""
    parts = r.id.removeprefix(PREFIX).split("_disagg_")[0].split("_")
    return " ".join(p for p in parts if p not in ("trtllm", "sxm") and not p.isdigit())


def _medians(rows: list[Replay]) -> str:
    ratios = [r.ratios for r in rows if r.ratios is not None]
    if not ratios:
        return "no ratio"
    return (f"median ratio TTFT {_median([x[0] for x in ratios]):.2f}, TPOT "
            f"{_median([x[1] for x in ratios]):.2f}")


def full_rows() -> list[str]:
    """Ids of the frozen TensorRT-LLM rows with both worker counts and a stated concurrency."""
    return [PREFIX + r["id"] for r in prospective_rows()
            if r["backend"] == "trtllm" and r["prefill_num_workers"].strip()
            and r["decode_num_workers"].strip() and stated_concurrency(r) is not None]


def section(all_rows: list[Replay] | None = None) -> list[str]:
    """The section over the bench's replays (`all_rows`), or these rows replayed alone."""
    full = set(full_rows())
    if all_rows is None:
        all_rows = [replay(r, prospective=True) for r in prospective_rows()
                    if PREFIX + r["id"] in full]
    mine = [r for r in all_rows if r.id in full]
    done = [r for r in mine if r.replayed and r.cohort == COHORT]
    why = Counter(r.why_not for r in mine if not r.replayed)
    out = [f"### 3j. Prospective: TensorRT-LLM rows ({COHORT}, blind)", "",
           f"The frozen set's TensorRT-LLM rows with both worker counts and a stated concurrency: "
           f"{len(mine)}. Replayed with TensorRT-LLM's disaggregated flow "
           "(kvplan.engines.trtllm.disagg_flow, read from tensorrt_llm/_torch/pyexecutor/"
           "py_executor.py and llmapi/llm_args.py, the 1.2 line): the context server steps one "
           "row-stated max_batch_size of whole prompts per rank (the generator's 1; no chunked "
           "prefill; overlap scheduler off), the generation server returns the context "
           "server's first token when it first schedules the request after the KV is there (0 "
           "steps past that boundary) and seats it under its max_batch_size (the row's decode "
           "batch size) and its pool's I + O reservation. The image's TensorRT-LLM release "
           "from aiconfigurator's dynamo matrix (disagg_rows.DYNAMO_TRTLLM). The rule and the "
           "choice of rows were committed before any row was replayed; the first "
           f"evaluation's figures follow the current ones. Replayed {len(done)}; the rest "
           "counted with why (below).", "",
           f"Inside [{BAND[0]}, {BAND[1]}] on both TTFT and TPOT: "
           f"{_share(done, lambda r: r.inside)}; TTFT alone {_share(done, _inside(0))}; TPOT "
           f"alone {_share(done, _inside(1))}; {_medians(done)}.", ""]
    groups: dict[str, list[Replay]] = {}
    for r in done:
        groups.setdefault(_group(r), []).append(r)
    for name, group in sorted(groups.items()):
        out.append(f"- {name}: both {_share(group, lambda r: r.inside)}; TTFT "
                   f"{_share(group, _inside(0))}; TPOT {_share(group, _inside(1))}; "
                   f"{_medians(group)}")
    out += ["", *SHAPED_TEXT, "| not replayed: why | rows |", "|---|---|"]
    out += [f"| {reason} | {n} |" for reason, n in sorted(why.items(), key=lambda x: -x[1])]
    out += ["", "| row | layout and load | measured TTFT / TPOT ms | kvplan TTFT / TPOT ms | "
            "ratio TTFT / TPOT | |", "|---|---|---|---|---|---|"]
    for r in done:
        assert r.tpot_ms is not None
        rt = "prefill saturated" if r.ttft_ms is None else f"{r.ttft_ms:,.1f}"
        ratio = ("- / " + f"{r.tpot_ms / r.measured_tpot_ms:.2f}" if r.ratios is None
                 else " / ".join(f"{x:.2f}" for x in r.ratios))
        out.append(f"| {r.id.removeprefix(PREFIX)} | {r.label} | {r.measured_ttft_ms:,.1f} / "
                   f"{r.measured_tpot_ms:,.2f} | {rt} / {r.tpot_ms:,.2f} | {ratio} | "
                   f"{'in' if r.inside else 'out'} |")
    return out


if __name__ == "__main__":
    print("\n".join(section()))
