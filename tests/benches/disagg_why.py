"""`python -m tests.benches.disagg_why`: disagg-bench section 3m, the client rule (disaggwhy59):
the prospective SGLang / TensorRT-LLM rows replayed as sa-bench measured them
(tests.benches.disagg_client), beside the same rows without it (the simulation's own
measurement) and with srt-slurm's Dynamo frontends' draw of the worker too (the frozen rule).
Every row here shaped the rule (tests/benches/fitted_rows.py SHAPED_BY, 4121cdc6): no blind
test of it."""

from __future__ import annotations

import math
import statistics

from tests.benches.disagg_rows import (
    BACKEND_COHORTS,
    BAND,
    FIRST_COHORT,
    PREFIX,
    Replay,
    prospective_replays,
    replayed_with,
)
from tests.benches.fitted_rows import SHAPED_BY

RULE_COMMIT = "4121cdc6"


def _inside(r: Replay, i: int) -> bool:
    return r.ratios is not None and BAND[0] <= r.ratios[i] <= BAND[1]


def line(rows: list[Replay]) -> str:
    """Both / TTFT / TPOT inside the band and the median ratios of `rows`."""
    n = len(rows)
    ttft = [r.ratios[0] for r in rows if r.ratios]
    tpot = [r.ratios[1] for r in rows if r.ratios]
    med = (f"{statistics.median(ttft):.2f}, {statistics.median(tpot):.2f}" if ttft
           else f"{math.nan}, {math.nan}")
    return (f"both {sum(r.inside for r in rows)} of {n}; TTFT {sum(_inside(r, 0) for r in rows)}"
            f"; TPOT {sum(_inside(r, 1) for r in rows)}; median ratio TTFT, TPOT {med}")


def _groups(rows: list[Replay]) -> dict[str, list[Replay]]:
    trt = BACKEND_COHORTS["trtllm"]
    return {"3a (SGLang, first replayed after bc725f6)":
            [r for r in rows if r.cohort not in (FIRST_COHORT, trt)],
            "3b (SGLang, first replayed after bc0cfec)":
            [r for r in rows if r.cohort == FIRST_COHORT],
            "3j (TensorRT-LLM)": [r for r in rows if r.cohort == trt]}


def section(all_rows: list[Replay] | None = None, before: list[Replay] | None = None,
            routed: list[Replay] | None = None) -> list[str]:
    """`all_rows`: the prospective replays (the client on, the default); `before` / `routed`:
    the same rows replayed without the client / with the frontend routing too, where already
    computed (else replayed here)."""
    rows = [r for r in (all_rows if all_rows is not None else prospective_replays())
            if r.replayed]
    rule = next(s for s in SHAPED_BY if s.commit == RULE_COMMIT)
    before = [r for r in (before if before is not None else
                          replayed_with(rows, client=False)) if r.replayed]
    routed = [r for r in (routed if routed is not None else
                          replayed_with(rows, routing=True)) if r.replayed]
    ids = {r.id for r in before}
    out = [f"### 3m. Shaped: the client's measurement ({RULE_COMMIT}), both engines", "",
           "Read after disaggwhy59's forensic (tests/benches/disagg_forensic.py: every replayed "
           "row's TTFT by phase, its decode step by part, and Little's law on the measured "
           "numbers) classified the 159 of 217 rows outside the band: TTFT below it was the "
           "largest class (103 rows; 83 with TPOT inside), kvplan's TTFT there 88% one prefill "
           "step (median share) and its prefill queue empty, while the measured request rate "
           "was a median 0.35 of kvplan's prefill capacity (no saturated prefill) and the "
           "measured TTFT a median 117 of the row's own decode steps. The rows are InferenceX "
           "runs that srt-slurm launches: the client is its sa-bench and the frontend "
           "srt-slurm's Dynamo frontends (tests/benches/disagg_client.py), neither of which "
           "kvplan modelled.", "",
           "- sa-bench (NVIDIA/srt-slurm src/srtctl/benchmarks/scripts/sa-bench/bench.sh and "
           "benchmark_serving.py, kvplan.analysis.simulate.bench_client): a warm-up invocation "
           "of 2 x C prompts, then the measured invocation of k x C prompts at "
           "--max-concurrency C, request rate inf: all C users' first requests are sent at once "
           "to an idle deployment, and the reported TTFT and TPOT are the means over all k x C "
           "requests, the first burst and the last round's drain included; k is 5 from "
           "2025-12-20, 8 from 2026-01-21, 10 from 2026-01-23 (bench.sh's history). kvplan's "
           "simulation averaged rounds 1-2 of 4 (the burst and the drain left out). On by "
           "default.",
           "- Dynamo's frontend routes round-robin by default (--router-mode, "
           "components/src/dynamo/frontend/main.py), and srt-slurm puts nginx (round-robin, one "
           "cycle per worker process) in front of up to 10 frontends "
           "(src/srtctl/cli/mixins/frontend_stage.py, core/schema.py FrontendConfig; the "
           "recipes' `frontend: type: dynamo`), each with its own count: a request's worker is "
           "not chosen by load (kvplan.engines.dynamo_frontend; drawn uniformly in the "
           "simulation, seeded). The rule was frozen with it on (4121cdc6); its evaluation "
           "(below) refuted the uniform draw: at one seat a worker and as many users as "
           "workers, gb200 fp8 cfg378 c4 / cfg386 c3 measured 5,126 / 669 decode steps of TTFT "
           "(the draw brings them into or near the band), but gb300 fp8 cfg392 c4 measured 32 "
           "/ 136 (1,024 / 8,192 output tokens) on the same shape, where the draw puts kvplan "
           "at 24-43x: the frontends balanced some runs and not others, by counter states "
           "kvplan cannot know. So it is off by default (disagg_rows.predict `routing`), its "
           "figures beside.",
           "- The lengths: sa-bench's --random-range-ratio 0.8 (InferenceX's "
           "RANDOM_RANGE_RATIO: input and output lengths uniform in [int(0.8 L), L]), each "
           "request at its own draw since rangeratio60 (0a047bfb, section 3n), so the figures "
           "with it here include the spread; without it, every request at L as before.", "",
           f"Rows: {len(rows)} replayed with it, {len(before)} without it "
           f"({sum(r.id not in ids for r in rows)} made replayable by it). Shaped: "
           f"{sum(r.id in rule.rows for r in rows)} of them (all were read first): no blind test "
           "of it; the default (the client alone) was chosen after the frozen rule's figures "
           "were seen.", ""]
    for name, group in _groups(rows).items():
        g_ids = {r.id for r in group}
        out += [f"- {name}: with it {line(group)}",
                f"  - without it (computed beside it): "
                f"{line([r for r in before if r.id in g_ids])}",
                f"  - the frozen rule (the frontend's draw too): "
                f"{line([r for r in routed if r.id in g_ids])}"]
    pairs = {r.id: r.ratios for r in before if r.ratios is not None}
    draws = {r.id: r.ratios for r in routed if r.ratios is not None}
    out += ["", "The rows named in 3j's text and cfg392 c4, without -> with it -> with the "
            "frontend's draw too (TTFT / TPOT ratio):"]
    for key in ("1024x8192_c4_cfg378", "1024x1024_c3_cfg386", "1024x1024_c192_cfg388",
                "1024x1024_c192_cfg417", "8192x1024_c12_cfg417", "8192x1024_c6_cfg386",
                "1024x1024_c4_cfg392", "1024x8192_c4_cfg392"):
        for r in rows:
            if r.id.endswith(key) and r.ratios and r.id in pairs and r.id in draws:
                b, d = pairs[r.id], draws[r.id]
                out.append(f"- {r.id.removeprefix(PREFIX)}: {b[0]:.2f} / {b[1]:.2f} -> "
                           f"{r.ratios[0]:.2f} / {r.ratios[1]:.2f} -> {d[0]:.2f} / {d[1]:.2f}")
    return out


if __name__ == "__main__":
    print("\n".join(section()))
