"""`python -m tests.benches.disagg_miss63 [--max-users C] [--all]`: where the misses of
examples/disagg-bench.md sections 3a / 3b / 3j come from (disagg63, issue 29). A forensic: it
replays the prospective SGLang / TensorRT-LLM rows through disagg_rows.replay (the page's own
row function, default switches) and classifies the rows outside [0.75, 1.33] by engine, GPU,
precision, ISL / OSL, concurrency band, prefill attention DP, TTFT and TPOT direction. By default
only the rows of at most --max-users users (16: a few CPU minutes); --all replays all 217 (about
25 CPU minutes here; the page's full bench is longer).

FINDING (disagg63; every row below was read before: shaped, none held out)

The classification of the 217 replayed rows, before disagg63's rule (main at 687cee37; the same
figures as the page at 671849b1): both inside 71 (3a 16 of 42, 3b 14 of 52, 3j 41 of 123). Of
the 146 misses, by (TTFT, TPOT) class: TTFT low / TPOT in 82 (median TTFT ratio 0.52), TTFT low
/ TPOT high 17, TTFT high / TPOT low 13, TTFT in / TPOT high 10, TTFT high / TPOT in 9, TTFT in
/ TPOT low 7, both low 6, both high 2. TTFT low is the miss on 105 of 146, on both engines
(SGLang 48, TensorRT-LLM 57), every GPU and every concurrency band (<= 16 users 21, 17-128 37,
129-1,024 23, > 1,024 24): kvplan's TTFT about half the measured. Within it the largest class
one mechanism could explain is the FP8 (W8A8 block-scale) checkpoint at ISL 8,192 (the table
after disagg63's rule, which moves 17 SGLang rows of it, below):

| ISL, precision, engine | rows | TTFT low / in / high | median TTFT ratio | median TPOT ratio |
|---|---|---|---|---|
| 1,024 fp4 sglang | 21 | 15 / 6 / 0 | 0.63 | 0.98 |
| 1,024 fp4 trtllm | 32 | 11 / 17 / 4 | 0.96 | 1.24 |
| 1,024 fp8 sglang | 20 | 8 / 10 / 2 | 0.83 | 0.80 |
| 1,024 fp8 trtllm | 36 | 21 / 10 / 5 | 0.61 | 0.90 |
| 8,192 fp4 sglang | 21 | 4 / 16 / 1 | 0.89 | 1.12 |
| 8,192 fp4 trtllm | 16 | 1 / 10 / 5 | 1.19 | 1.18 |
| 8,192 fp8 sglang | 32 | 17 / 11 / 4 | 0.70 | 0.97 |
| 8,192 fp8 trtllm | 39 | 24 / 12 / 3 | 0.68 | 1.02 |

TTFT low with TPOT in, after it: 37 rows at 8,192 FP8 (TensorRT-LLM 21, SGLang 16; B200 19,
H200 12, GB200 3, GB300 3; median TTFT ratio 0.53) against 4 at 8,192 FP4 (median 0.36;
SGLang 3, TensorRT-LLM 1): where the prompt's compute dominates the TTFT, the FP4 rows sit in
the band and the FP8 rows of both engines at about half. Read in code for it:

- Both engines run the same kernel family on these FP8 rows. TensorRT-LLM: trtctx62's reading
  (tests/benches/trtllm_context62.py: DeepGEMM-class block-scale GEMMs and CUTLASS / TRTLLM
  MoE; FP8 context MLA with the recipes' FP8 KV makes the engine faster, not slower). SGLang
  0.5.8.post1 at the B200 FP8 recipes (srt-slurm recipes/b200-fp8/8k1k/stp/*.yaml at 5063eb43:
  SGLANG_ENABLE_JIT_DEEPGEMM "false", moe-runner-backend flashinfer_trtllm, no fp8-gemm-backend):
  layers/quantization/fp8_utils.py:239-257 `_dispatch_auto_backend`, DeepGEMM off, Blackwell
  with FlashInfer -> flashinfer_gemm_w8a8_block_fp8_linear (TensorRT-LLM's block-FP8 GEMM as
  FlashInfer ships it), and the experts through FlashInfer's TensorRT-LLM FP8 block-scale MoE.
  No rule in either engine's code sets these kernels' rate, so the code does not decide it:
  the one evidence is measured, aiconfigurator's kernel tables (kvplan at 0.35 of TensorRT-LLM's
  block-FP8 MoE op and 0.64 of its block-FP8 GEMMs at 4k-16k rows on H200: examples/
  moe-op-bench.md, dense-op-bench.md), whose fitted fractions stay opt-in (trtctx62's
  --fitted-kernels: H200 FP8 TTFT median 0.54 -> 0.87, B200 FP8 0.55 -> 0.93 on 3j; held-out
  aggregated Qwen3-235B-FP8 H100 rows worse with the experts' fraction, trtfp8moe61). Not a rule.
- aiconfigurator's own disaggregated model (ai-dynamo/aiconfigurator at 095f58a5) does not
  simulate the TTFT either: cli/api.py:46-48, :1914-1917 scale the prefill and decode latencies
  by 1.1 and 1.08 (DEFAULT_*_LATENCY_CORRECTION_SCALE, handed to the roles' static runs), and
  sdk/inference_session.py:279 (`_get_disagg_summary_df`) multiplies the prefill's TTFT by
  picking.py:36-38's _AUTOSCALE_TTFT_CORRECTION_FACTOR 1.8 ("TTFT correction for concurrent
  prefill queueing: with N=10 batches and local concurrency lc=15-20, formula lc/20+0.95 gives
  ~1.8"); its TTFT is one static prefill x 1.98, with no KV transfer, decode step or router
  term. A fitted factor, the size of kvplan's miss (1 / 0.52 = 1.9): the tables' publisher
  corrects its own TTFT by about what kvplan lacks, and says queueing; kvplan's simulation has
  the queue (its TTFT phases: disagg_forensic), so that word does not name a missing rule here.
- The client: sa-bench's TTFT is the first streamed chunk of /v1/completions, empty text
  included (srt-slurm src/srtctl/benchmarks/scripts/sa-bench/backend_request_func.py:318-405 at
  cc158081, `async_request_dynamo_completions`): no reasoning parser splits the text, so the
  reasoning-text reading of ttftdef57 (aiperf, chat) does not apply to these sa-bench rows.

The rule found (harness fidelity plus engine code; kvplan.engines.sglang.decode_admission,
"Taking requests in"): the gb200-fp4 / gb200-fp8 / gb300-fp4 low-latency SGLang recipes set
--scheduler-recv-interval 10 on their TP decode servers (gb300-fp8's sets 1 there, 10 on the
prefill, where it costs nothing: a prefill step has weight 1,000), and SGLang's decode loop then
takes new requests every 10 decode steps while it only decodes, so a prompt waits before its
preallocation, hence before its prefill. Frozen at f704b035 before any replay with it. Its set,
stated before the run: the 17 SGLang rows matched to such a recipe (gb200 fp4 cfg486 c4 / c8 /
c32, cfg481 c4 / c8; gb200 fp8 cfg502 c4 / c8, cfg536 c4 / c8 / c16; gb300 fp4 cfg571 c4 / c8
/ c32, cfg569 c4 / c8 / c32 / c64), all shaped (read before, in this forensic's table of the
rows at <= 16 users too). Before -> after on them: both inside 6 -> 7 of 17 (gb200 fp8 cfg502
c8 in), TTFT inside 7 -> 11, median TTFT ratio 0.68 -> 0.84, TPOT unchanged; 15 rows move (up
by 23-60 ms), the two at 8,192 / 4 users do not (4 users over 4
decode workers: the resent prompt finds its worker idle, taken at once). Section figures: 3a
both 16 -> 16, TTFT 19 -> 22; 3b both 14 -> 15, TTFT 20 -> 21; 3j unchanged (TensorRT-LLM has
no such flag); all both 71 -> 72 of 217. No held-out row: no other replayed row's recipe sets it.
Still low after it: gb200 fp8 cfg536 8,192 (0.47-0.59, the FP8 class above) and the 1,024
rows at 32 users (0.63-0.65) and gb300 fp4 cfg571 c8 (0.67); the additive part of the gap at
few users (before it, the measured TTFT a median 82-228 ms above kvplan's at <= 16 users by
engine and ISL) is not in any code read here.

The next class, apart from TTFT: TPOT by load (after the rule; the rule moves no TPOT). At <= 16
users 23 of 48 rows have TPOT high (median TPOT ratio 1.32 over the 48), at 17-128 users 6 of
68 (1.16), at 129-1,024 none of 51 (0.90), above 1,024 none of 50 and 19 low (0.81): kvplan's
decode step grows too little with the batch on both engines. At 1-4 requests a rank its step
is about half launch / host time (disagg_forensic's split of the rows at <= 16 users: its
layer_overhead and small_kernels terms 4.3-4.8 ms of a step of 8.6-16.4), above the whole
measured step on the FP4 rows there (5.8-9.9 ms). Those terms are fitted constants, not rules
read in code; not changed here.

Left: the recipes' FP8 KV cache on the 3j rows (trtctx62's --kv-fp8 counterfactual: 3j H100 /
H200 / B200 FP8 TTFT inside 6 / 3 / 1 -> 5 / 3 / 0) and on the SGLang FP8 recipes
(kv-cache-dtype fp8_e4m3, not read into SglangRole) is harness fidelity not applied here.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tests.benches.disagg_rows import (
    BAND,
    PREFIX,
    Replay,
    layout,
    prospective_rows,
    replay,
    stated_concurrency,
)


@dataclass(frozen=True, kw_only=True)
class Row:
    """A replayed row with the fields the classes read."""

    rep: Replay
    engine: str
    gpu: str
    precision: str
    prefill_dp: bool  # the prefill role runs attention DP

    @property
    def ttft_ratio(self) -> float | None:
        r = self.rep.ratios
        return r[0] if r is not None else None

    @property
    def tpot_ratio(self) -> float:
        assert self.rep.tpot_ms is not None
        return self.rep.tpot_ms / self.rep.measured_tpot_ms


def direction(ratio: float | None) -> str:
    """'low' / 'in' / 'high' against [0.75, 1.33]; None (prefill saturated) is 'high'."""
    if ratio is None or ratio > BAND[1]:
        return "high"
    return "low" if ratio < BAND[0] else "in"


def band(users: int) -> str:
    for hi, name in ((16, "<=16"), (128, "17-128"), (1024, "129-1024")):
        if users <= hi:
            return name
    return ">1024"


KEYS: dict[str, Callable[[Row], tuple[object, ...]]] = {
    "TTFT x TPOT": lambda r: (direction(r.ttft_ratio), direction(r.tpot_ratio)),
    "engine x TTFT": lambda r: (r.engine, direction(r.ttft_ratio)),
    "engine x GPU x precision x TTFT": lambda r: (r.engine, r.gpu, r.precision,
                                                  direction(r.ttft_ratio)),
    "ISL x precision x engine x TTFT": lambda r: (r.rep.input_len, r.precision, r.engine,
                                                  direction(r.ttft_ratio)),
    "engine x users x TTFT": lambda r: (r.engine, band(r.rep.concurrency or 0),
                                        direction(r.ttft_ratio)),
    "engine x prefill DP x TTFT": lambda r: (r.engine, "DP" if r.prefill_dp else "TP",
                                             direction(r.ttft_ratio)),
}


def classes(rows: Iterable[Row], key: Callable[[Row], tuple[object, ...]]
            ) -> list[tuple[tuple[object, ...], int, float | None, float]]:
    """The misses (a row outside the band on TTFT or TPOT) grouped by `key`, largest first:
    (key, rows, median TTFT ratio over those with one, median TPOT ratio)."""
    groups: dict[tuple[object, ...], list[Row]] = defaultdict(list)
    for r in rows:
        if not r.rep.inside:
            groups[key(r)].append(r)
    out = []
    for k, g in groups.items():
        tt = [x.ttft_ratio for x in g if x.ttft_ratio is not None]
        out.append((k, len(g), statistics.median(tt) if tt else None,
                    statistics.median(x.tpot_ratio for x in g)))
    return sorted(out, key=lambda x: (-x[1], str(x[0])))


def collect(max_users: int | None) -> list[Row]:
    out = []
    for row in prospective_rows():
        users = stated_concurrency(row)
        if row["backend"] not in ("sglang", "trtllm") or (
                max_users is not None and (users is None or users > max_users)):
            continue
        rep = replay(row, prospective=True)
        if not rep.replayed or rep.tpot_ms is None:
            continue
        out.append(Row(rep=rep, engine=row["backend"], gpu=row["system"].removesuffix("_sxm"),
                       precision=row["precision"],
                       prefill_dp=layout(row, "prefill").dp_attention))
    return out


def lines(rows: list[Row]) -> list[str]:
    out = [f"Replayed {len(rows)}; both inside {sum(r.rep.inside for r in rows)}"]
    for name, key in KEYS.items():
        out += ["", f"Misses by {name}:"]
        for k, n, tt, tp in classes(rows, key):
            med = "-" if tt is None else f"{tt:.2f}"
            out.append(f"- {' / '.join(map(str, k))}: {n} (median TTFT {med}, TPOT {tp:.2f})")
    out += ["", "Rows:"] + [
        f"- {r.rep.id.removeprefix(PREFIX)} {r.rep.concurrency} users: "
        f"TTFT {'-' if r.ttft_ratio is None else f'{r.ttft_ratio:.2f}'}, "
        f"TPOT {r.tpot_ratio:.2f}" for r in rows]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-users", type=int, default=16)
    ap.add_argument("--all", action="store_true", help="every replayed row (slow)")
    args = ap.parse_args()
    print("\n".join(lines(collect(None if args.all else args.max_users))))


if __name__ == "__main__":
    main()
