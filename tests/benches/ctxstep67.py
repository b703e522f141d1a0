"""`python -m tests.benches.ctxstep67`: kvplan's full context step at 8-16 prompts a rank, op by
op, against aiconfigurator's MEASURED kernel tables at the same shape or the nearest (issue
29 / 30, dis3j67's largest class: TTFT too low above 32 users, where the measured request rate
says the prefill role serves 1.2-3.2x fewer prompts a second than kvplan's full step allows).
Printed only, on no generated page; no rule, constant or default moves (FINDING below).

For each row of ROWS: the context step disagg_trtllm_load.role_rates prices (the prompts a
rank's step takes within its token budget, PrefillBatching.step_ms at the row's default replay
setup, disagg_rows.replay_setup), its ops as kvplan.perf.roofline.step_time splits them, and,
per op a measured table holds, kvplan's price of the TABLE's case (the same GPU, engine, dtype
and layout, at the row's shape or the nearest) over the table's measured time: the op's
kvplan / measured. An op's "implied" ms is the row's op over that ratio (the ratio assumed to
hold at the row's shape); ops no table holds stay at kvplan's price. `need` is the measured
rate's shortfall: kvplan's prefill capacity (every context rank's prompts a step over the full
step) over the measured request rate (Little's law over the row's measured TTFT and TPOT,
disagg_trtllm_load.little_rps): the factor the step would have to grow by were the measured
system prefill-bound.

The tables (aiconfigurator 095f58a51, kernel tables, not serving rows):
- experts: the fused-MoE op (tests/data/moe_op/moe_perf_rows.csv.gz: block-FP8 on H200 / B200;
  moe_nvfp4_rows.csv.gz, tests/benches/ctxstep67_extract.py: NVFP4 on B200 and GB200, GB200's
  block FP8, and B200's TensorRT-LLM per-tensor FP8 for its block-FP8 rows, which hold no
  DeepSeek shape) at moe_tp 1, the row's EP, the largest token count the table holds at or below the
  row's (16,384: the rows' rank MoE calls hold 16k-131k tokens: every EP rank's tokens, under
  SGLang's gather or the all-to-all alike; compute-bound there on both sides). kvplan's price of
  that case is the experts op of one MoE layer of the row's served spec, at the row's
  efficiency, on the table's GPU (moe_op_bench.moe_price_s's form, less its few small kernels).
  TensorRT-LLM's NVFP4 case: the CUTLASS flow (`moe_torch_flow_cutlass`), not min-latency.
- attention: the context MLA table (tests/data/attention_op/mla_perf_rows.csv.gz) at 128 heads
  a rank (attention DP), the row's ISL and prompts, a bf16 cache; attention_op_bench.ratio.
- attention_proj / mla_up_proj / mlp: the dense GEMM table (tests/data/dense_op/
  gemm_perf_rows.csv.gz) at M = the rank's tokens (a power of two, at most 16,384) and the grid's
  nearest (N, K) in log2 to each projection (PROJECTIONS), in the dtype the checkpoint holds
  them (NVFP4 DeepSeek-R1: attention bf16 (its exclude_modules), MLPs NVFP4; FP8: block FP8);
  dense_op_bench.gemm_price_s over the measured, summed over the op's GEMMs.
- dp_gather_all_reduce: NCCL's all_reduce (tests/data/dense_op/allreduce_perf_rows.csv.gz) on
  the row's attention-DP ranks at the nearest size to the gathered tokens' bf16 hidden states;
  dense_op_bench.ar_price_s over the measured (kvplan's ring price; the row's own gather is
  priced by the same link model).
- No table: ep_all_to_all (TensorRT-LLM's own NVLink all-to-all; the tables keep none),
  prefill_launch (host), small_kernels, layer_overhead, lm_head, logits_gather.
A GB200 / GB300 row's ops are set against B200's tables (the same chip at other clocks) except
SGLang's experts, where a GB200 table exists; kvplan prices the case on that table's GPU.

FINDING (ctxstep67; every row here was read before, by dis3j67 and the sections that print
them: shaped, none held out; the op ratios come from kernel tables, no serving row)

kvplan / measured per op at the tables' cases (8 rows: SGLang B200 / GB200 / GB300 NVFP4
cfg527 c512, cfg483 c8192, cfg576 c8192; SGLang B200 FP8 cfg459 c256; TensorRT-LLM GB200
NVFP4 cfg239 c8192, GB200 / B200 FP8 cfg416 c6144 / cfg549 c4096, H200 FP8 cfg291 c128):
- experts: NVFP4 0.23 (TensorRT-LLM B200 CUTLASS, EP 4) and 0.38-0.40 (SGLang B200 / GB200
  CuTe DSL, EP 4) at 16,384 tokens: kvplan prices W4A4 experts at the dense 0.70 of the FP4
  peak; block FP8 0.66 (SGLang B200 EP 8), and over the measured on TensorRT-LLM: 1.25 (H200
  block FP8, EP 8) and 1.29 (B200, per-tensor FP8, the nearest format).
- attention (context MLA, 128 heads a rank): 0.33-0.34 (SGLang) and 0.47 (TensorRT-LLM) at
  1,024-token prompts x 4-16; 0.86 / 0.92 at one 8,192-token prompt (SGLang B200 / TRT H200).
- attention_proj (q_a + kv_a, q_b, o_proj): bf16 (the NVFP4 checkpoint's attention) 0.90-1.04;
  block FP8 0.91 (SGLang B200), 0.62 (TRT B200), 0.71 (TRT H200). mlp (shared expert, dense
  layers): NVFP4 0.52-0.66, block FP8 0.38-0.82. mla_up_proj: 0.85-0.93, but TRT block FP8
  0.27 (B200) / 0.60 (H200) (its K = 512 case read at the grid's 1,024).
- dp_gather_all_reduce (SGLang, NCCL at 256-512 MiB): 1.05-1.20 (kvplan a little over).
- No table: ep_all_to_all (200-244 ms on the TensorRT-LLM rows), prefill_launch (95-133 ms),
  small_kernels (11-119 ms).
With every tabled op at the table's rate the full step grows x1.18 / 1.24 / 1.19 / 1.09 (SGLang
rows above), x1.46 / 1.14 / 1.14 / 1.01 (TensorRT-LLM): median x1.16; the measured rates need
x3.27 / 1.86 / 1.85 / 3.03 and x3.21 / 1.78 / 2.21 / 2.09 (median x2.15). No op carries the
1.7x: the largest single term is the NVFP4 experts (+40 ms on cfg527, +154 on cfg483, +315 on
cfg239: most of the FP4 rows' growth); on the TensorRT-LLM FP8 rows the GEMMs' under-pricing
(+220 ms on cfg549) and the experts' over-pricing (-94) nearly cancel, and H200 cfg291 moves
x1.01. What is left (x1.5-2.8 a row, need over implied) is in no kernel table: the untabled ops
would have to grow 2-5x, or the measured steps are not the full steps the load lens assumes
(fewer prompts a step pay the same launch and all-to-all floors), or time between steps.
The NVFP4 experts' fraction fitted on the tables alone, and what it moves: ctxstep67_fp4.
"""

from __future__ import annotations

import csv
import gzip
import math
import statistics
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from unittest.mock import patch

from kvplan.hardware.gpus import get_gpu
from kvplan.perf import costmodel
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from tests.benches import attention_op_bench as aob
from tests.benches import dense_op_bench as dob
from tests.benches import moe_op_bench as mob
from tests.benches.disagg_rows import prospective_rows, replay_setup, stated_concurrency
from tests.benches.disagg_trtllm_load import little_rps, prefill_role_rps

ROOT = Path(__file__).resolve().parents[2]
NVFP4_ROWS = ROOT / "tests" / "data" / "moe_op" / "moe_nvfp4_rows.csv.gz"
# Section 3's TTFT-low rows above 32 users, one or two per (engine, GPU, precision) of the class
# (disagg_miss67), every one read before: shaped, none held out.
ROWS = (
    "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527",
    "dsr1_gb200_sglang_fp4_disagg_1024x1024_c8192_cfg483",
    "dsr1_gb300_sglang_fp4_disagg_1024x1024_c8192_cfg576",
    "dsr1_b200_sglang_fp8_disagg_8192x1024_c256_cfg459",
    "dsr1_gb200_trtllm_fp4_disagg_1024x8192_c8192_cfg239",
    "dsr1_gb200_trtllm_fp8_disagg_1024x1024_c6144_cfg416",
    "dsr1_b200_trtllm_fp8_disagg_1024x1024_c4096_cfg549",
    "dsr1_h200_trtllm_fp8_disagg_8192x1024_c128_cfg291",
)
# DeepSeek-V3 / R1's projections a rank computes whole under attention DP, as (N, K): the
# fused q_a + kv_a (1,536 + 576 outputs of 7,168), q_b (128 heads x 192 of 1,536), o_proj
# (7,168 of 128 x 128); kv_b (128 x (128 + 128) of the 512 latent); the shared expert's and
# the dense layers' gate_up (2 x 2,048 of 7,168) and down (7,168 of 2,048).
PROJECTIONS = {"attention_proj": ((2112, 7168), (24576, 1536), (7168, 16384)),
               "mla_up_proj": ((32768, 512),),
               "mlp": ((4096, 7168), (7168, 2048))}
GRID_DTYPE = {("fp4", "attention_proj"): "bfloat16", ("fp4", "mla_up_proj"): "bfloat16",
              ("fp4", "mlp"): "nvfp4"}  # else the FP8 checkpoint's block FP8


@dataclass(frozen=True, kw_only=True)
class Step:
    """One row's full context step as kvplan prices it."""

    row_id: str
    engine: str
    version: str
    gpu: str  # kvplan preset of the row
    precision: str  # fp4 | fp8
    label: str
    isl: int
    prompts: int  # a rank's step
    ranks: int  # every context server's attention ranks
    dp: int  # attention-DP ranks a server (1: TP attention)
    ep: int
    step_ms: float
    by_op: dict[str, float]  # ms
    spec: Any
    eff: Any
    need: float  # kvplan's prefill capacity over the measured rate

    @property
    def tokens(self) -> int:
        return self.prompts * self.isl


@cache
def _row(row_id: str) -> dict[str, str]:
    return next(r for r in prospective_rows() if r["id"] == row_id)


@cache
def context_step(row_id: str) -> Step:
    """The row's full context step (module docstring) and its ops."""
    row = _row(row_id)
    st = replay_setup(row)
    b = st.batching
    assert b is not None
    isl = st.req.input_len
    prompts = max(1, min(b.max_seqs, b.token_budget // isl))
    got: list[tuple[tuple, dict, Any]] = []
    real = costmodel.step_time

    def capture(*a: Any, **k: Any) -> Any:
        res = real(*a, **k)
        got.append((a, k, res))
        return res

    with patch.object(costmodel, "step_time", capture):
        ms = b.step_ms.__wrapped__(prompts * isl, prompts)
    (spec, _gpu), kw, res = got[-1][0][:2], got[-1][1], got[-1][2]
    lay = st.prefill.layout
    ranks = int(row["prefill_num_workers"]) * lay.replicas
    conc = stated_concurrency(row)
    assert conc is not None and ms is not None
    measured = little_rps(conc, float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"]),
                          st.req.output_len)
    return Step(row_id=row_id, engine=row["backend"], version=st.req.engine_version,
                gpu=row["system"].removesuffix("_sxm"), precision=row["precision"],
                label=f"{row['prefill_num_workers']}P {'DP' if lay.dp_attention else 'TP'}"
                      f"{lay.tp}{f' EP{lay.ep}' if lay.ep > 1 else ''}",
                isl=isl, prompts=prompts, ranks=ranks,
                dp=lay.dp if lay.dp_attention else 1, ep=lay.ep, step_ms=ms,
                by_op={k: v * 1e3 for k, v in res.by_op.items()}, spec=spec, eff=kw["eff"],
                need=prefill_role_rps(ranks * prompts, ms) / measured)


def _table_gpu(gpu: str) -> str:
    return "H200" if gpu == "h200" else "B200"


@cache
def _nvfp4_rows() -> tuple[mob.Row, ...]:
    with gzip.open(NVFP4_ROWS, "rt", encoding="utf-8", newline="") as f:
        raw = list(csv.DictReader(f))
    gpus = {**mob.GPUS, "NVIDIA GB200": "GB200"}
    return tuple(mob.Row(engine=mob.ENGINES[r["framework"]], version=r["version"],
                         gpu=gpus[r["device"]], kernel_source=r["kernel_source"],
                         quant=r["moe_dtype"], tokens=int(r["num_tokens"]),
                         shape=(7168, 2048, 256, 8), moe_tp=1, moe_ep=int(r["moe_ep_size"]),
                         measured_ms=float(r["latency"])) for r in raw)


@cache
def _fp8_rows() -> tuple[mob.Row, ...]:
    return tuple(r for r in mob.read_rows() if r.shape == (7168, 2048, 256, 8)
                 and r.quant == "fp8_block" and r.moe_tp == 1)


@dataclass(frozen=True)
class OpRatio:
    """kvplan / measured of one op at a table's case, and the case."""

    ratio: float
    case: str


def experts_ratio(s: Step) -> OpRatio:
    """The experts op (module docstring)."""
    quant = "nvfp4" if s.precision == "fp4" else "fp8_block"
    gpu = ("GB200" if s.engine == "sglang" and s.gpu in ("gb200", "gb300")
           else _table_gpu(s.gpu))
    if s.engine == "trtllm" and gpu == "B200" and quant == "fp8_block":
        quant = "fp8"  # B200's TensorRT-LLM table: per-tensor FP8, the nearest (the extract)
    pool = _fp8_rows() if quant == "fp8_block" and gpu != "GB200" else _nvfp4_rows()
    cands = [r for r in pool if r.engine == s.engine and r.gpu == gpu and r.quant == quant
             and r.moe_ep == s.ep and r.kernel_source != "moe_torch_flow_min_latency"]
    row = max(cands, key=lambda r: r.tokens)  # 16,384: every row's rank call holds more
    g = get_gpu(gpu)
    i = mob.moe_layer(s.spec)
    priced = step_time(s.spec, g, tokens=row.tokens, context=row.tokens, requests=1,
                       phase="prefill", layout=Layout(tp=s.ep, ep=s.ep), eff=s.eff,
                       layers=range(i, i + 1)).by_op["experts"] * 1e3
    return OpRatio(priced / row.measured_ms,
                   f"{row.engine} {row.version} {gpu} {quant} EP{row.moe_ep} {row.tokens:,} "
                   f"tok: {priced:.2f} / {row.measured_ms:.2f} ms")


@cache
def _mla_rows() -> tuple[aob.Row, ...]:
    return tuple(r for r in aob.read_mla_rows() if r.phase == "context" and r.tp == 1)


def attention_ratio(s: Step) -> OpRatio:
    gpu = _table_gpu(s.gpu)
    cands = [r for r in _mla_rows() if r.engine == s.engine and r.gpu == gpu]
    row = min(cands, key=lambda r: (abs(math.log2(r.isl / s.isl)),
                                    abs(math.log2(r.batch / s.prompts))))
    priced = aob.price_s(row) * 1e3
    return OpRatio(priced / row.measured_ms,
                   f"{row.engine} {gpu} MLA ISL {row.isl:,} x {row.batch}: {priced:.2f} / "
                   f"{row.measured_ms:.2f} ms")


@cache
def _gemm_rows() -> tuple[dob.GemmRow, ...]:
    return tuple(dob.read_gemm_rows())


def gemm_ratio(s: Step, op: str) -> OpRatio:
    gpu = _table_gpu(s.gpu)
    dtype = GRID_DTYPE.get((s.precision, op), "fp8_block")
    m = min(16384, 2 ** round(math.log2(s.tokens)))
    pool = [r for r in _gemm_rows() if r.engine == s.engine and r.gpu == gpu
            and r.dtype == dtype and r.m == m]
    priced = measured = 0.0
    shapes = []
    for n, k in PROJECTIONS[op]:
        row = min(pool, key=lambda r: abs(math.log2(r.n / n)) + abs(math.log2(r.k / k)))
        priced += dob.gemm_price_s(row) * 1e3
        measured += row.measured_ms
        shapes.append(f"{row.n}x{row.k}")
    return OpRatio(priced / measured, f"{s.engine} {gpu} {dtype} M {m:,} "
                   f"({', '.join(shapes)}): {priced:.2f} / {measured:.2f} ms")


@cache
def _ar_rows() -> tuple[dob.ArRow, ...]:
    return tuple(r for r in dob.read_ar_rows() if r.source == "nccl")


def gather_ratio(s: Step) -> OpRatio:
    gpu = {"H200": "H200", "B200": "B200"}[_table_gpu(s.gpu)]
    nbytes = s.tokens * s.dp * s.spec.hidden_size * 2
    cands = [r for r in _ar_rows() if r.gpu == gpu and r.ranks == s.dp]
    row = min(cands, key=lambda r: abs(math.log2(r.nbytes / nbytes)))
    priced = dob.ar_price_s(row) * 1e3
    return OpRatio(priced / row.measured_ms, f"NCCL {gpu} x{row.ranks} "
                   f"{row.nbytes / 2**20:,.0f} MiB (row {nbytes / 2**20:,.0f}): {priced:.2f} / "
                   f"{row.measured_ms:.2f} ms")


def op_ratios(s: Step) -> dict[str, OpRatio]:
    """Each op of `s` a measured table holds, kvplan / measured at its case."""
    out = {"experts": experts_ratio(s), "attention": attention_ratio(s)}
    for op in PROJECTIONS:
        if s.by_op.get(op, 0.0) > 0:
            out[op] = gemm_ratio(s, op)
    if s.by_op.get("dp_gather_all_reduce", 0.0) > 0:
        out["dp_gather_all_reduce"] = gather_ratio(s)
    return out


def implied_ms(s: Step, ratios: dict[str, OpRatio]) -> dict[str, float]:
    """The step's ops with each tabled op at kvplan's over its ratio."""
    return {op: ms / ratios[op].ratio if op in ratios else ms for op, ms in s.by_op.items()}


def lines() -> list[str]:
    out = []
    for rid in ROWS:
        s = context_step(rid)
        rat = op_ratios(s)
        imp = implied_ms(s, rat)
        host = s.step_ms - sum(s.by_op.values())
        total = sum(imp.values()) + host
        out += ["", f"### {rid.removeprefix('dsr1_')}", "",
                f"{s.engine} {s.version}, {s.gpu}, {s.label}, {s.prompts} prompt(s) of "
                f"{s.isl:,} a rank ({s.tokens:,} tokens), {s.ranks} context ranks: kvplan's "
                f"full step {s.step_ms:,.1f} ms (host {host:.1f}); with every tabled op at the "
                f"table's rate {total:,.1f} ms (x{total / s.step_ms:.2f}); the measured rate "
                f"needs x{s.need:.2f}", "",
                "| op | kvplan ms | kvplan / measured | implied ms | table case (kvplan / "
                "measured) |", "|---|---:|---:|---:|---|"]
        for op, ms in sorted(s.by_op.items(), key=lambda kv: -kv[1]):
            if ms < 0.05:
                continue
            r = rat.get(op)
            out.append(f"| {op} | {ms:,.1f} | {f'{r.ratio:.2f}' if r else '-'} | "
                       f"{imp[op]:,.1f} | {r.case if r else 'no table'} |")
    return out


def summary() -> list[tuple[str, float, float, float, float]]:
    """Per row: (id, kvplan step ms, implied step ms, need, the experts' ratio)."""
    out = []
    for rid in ROWS:
        s = context_step(rid)
        rat = op_ratios(s)
        host = s.step_ms - sum(s.by_op.values())
        out.append((rid, s.step_ms, sum(implied_ms(s, rat).values()) + host, s.need,
                    rat["experts"].ratio))
    return out


def main() -> None:
    print("\n".join(lines()))
    print("\n| row | kvplan step ms | implied ms | x | need x |\n|---|---:|---:|---:|---:|")
    for rid, k, i, need, _e in summary():
        print(f"| {rid.removeprefix('dsr1_')} | {k:,.1f} | {i:,.1f} | {i / k:.2f} | "
              f"{need:.2f} |")
    med = statistics.median(i / k for _, k, i, _, _ in summary())
    print(f"\nmedian implied / kvplan {med:.2f}")


if __name__ == "__main__":
    main()
