"""SGLang's decode step for DeepSeek-R1 FP8 on B200 / H200 TP 8: where kvplan stands above the
measured TPOT (issue 30, sgldec67)

sglextend67 found kvplan's DECODE share of the TPOT alone at or above the measured TPOT on 13
of 30 SGLang rows of aggwork64's subset (DeepSeek-R1 B200 TP 8 C 16 15.04 vs 13.18 ms, C 64
24.08 vs 22.53; H200 C 16 19.62 vs 16.63; row 303, 1,024 / 8,192 C 4, 10.70 vs 5.76). This
bench asks two things, by arithmetic and reading (nothing fitted; the one rule it led to, at
the end, was read on three rows, which it shaped):

1. WHICH RUN each B200 FP8 row is (`runs`). InferenceX ran DeepSeek-R1 FP8 on B200 under
   SGLang v0.5.9-cu130 from two configs at once (SemiAnalysisAI/InferenceX at 12ba0ae07,
   2026-03-25 16:34:10Z, "Update DSR1 h200 & b200 sglang image to v0.5.9-cu130", the commit
   whose time every such row states as `measured=`; .github/configs/nvidia-master.yaml):
   `dsr1-fp8-b200-sglang` (benchmarks/single_node/dsr1_fp8_b200.sh, no speculative decoding;
   search space 1,024 / 1,024 and 1,024 / 8,192 TP 8 C 4-64, 8,192 / 1,024 TP 8 C 4 and TP 4
   C 4-32) and `dsr1-fp8-b200-sglang-mtp` (dsr1_fp8_b200_mtp.sh: --speculative-algorithm EAGLE
   --speculative-num-steps 2 --speculative-num-draft-tokens 3 --speculative-eagle-topk 1,
   SGLANG_ENABLE_SPEC_V2=1, --fp8-gemm-backend flashinfer_trtllm, --cuda-graph-max-bs 512,
   --max-running-requests 512, chunk and input budget 16,384; the client with
   --use-chat-template; TP 8 only, C 4-512 at all three lengths). The rows state no
   speculative decoding (aiconfig_harness says so), but the rows of 2026-03-25 (file
   2026-03-25.csv) come in PAIRS at every point both configs ran (two rows, same ISL / OSL /
   C / TP, same `measured=`) and ALONE at every point only the MTP config ran (1,024-token
   prompts at C 128-512; 8,192 / 1,024 TP 8 at C 8-512): so at a pair one row is the MTP run,
   and every lone TP 8 row past the plain config's space is one. Which row of a pair: the one
   with the lower TPOT and the higher TTFT in every pair of the 1,024-token prompts (MTP's
   extend also runs the draft module and its verify steps take 4 tokens a request), named so
   here, an inference from the numbers that the data do not state. Row 303 (1,024 / 8,192 C 4,
   5.76 ms) is the lower of its pair (306: 8.64 ms): an MTP run, replayed without speculative
   decoding -- its "nearly 2x" is that, not the decode step's price.

2. The DECODE STEP (`decompose`): kvplan's roofline step (kvplan.perf.roofline.step_time, on
   the aggregated bench's engine for the row, aiconfig_agg_runs.row_setup: its layout,
   efficiency and KV dtype) at batch 4 / 16 / 64 and context ISL + OSL / 2, by op, beside the
   measured TPOT of the plain (non-MTP) row at that concurrency, and against SGLang 0.5.9's
   B200 path read in its code (sdist sglang-0.5.9; server_args.py and models/deepseek_v2.py):
   - attention: trtllm_mla on SM 10.0 for DeepseekV3ForCausalLM (server_args.py:1277-1286;
     the script passes it too); the MoE runner flashinfer_trtllm for fp8 / modelopt_fp8 /
     modelopt_fp4 without an all-to-all backend (:1288-1310; the script passes it);
     flashinfer all-reduce + RMSNorm fusion on by default for DeepseekV3 on SM 9.0 / 10.0, TP
     without DP attention on one node (:1680-1697; the script passes it). kvplan prices the
     fused all-reduce (Efficiency.allreduce_norm_fusion: deepseek_v3 on B200 / B300, <= 2,048
     tokens, <= 8 ranks): same.
   - shared experts: flashinfer_trtllm sets --disable-shared-experts-fusion (server_args.py:
     2147-2158), so DeepseekV2MoE.num_fused_shared_experts is 0 (deepseek_v2.py:383-387) and a
     decode batch under CUDA-graph capture takes `forward_normal_dual_stream` (:568-580): the
     shared experts on the current stream while the router GEMM, top-k and routed experts run
     on `alt_stream` (:591-613; the stream is made on CUDA, :2539-2543). kvplan charges the
     shared expert's `mlp` op (2 block-FP8 GEMMs, 4 kernel floors = 16 us a layer) in series
     with `experts`: the column `overlap` is what the two streams would hide, min(shared,
     routed) a MoE layer x 58 MoE layers -- a COUNTERFACTUAL, not a rule (its HBM sharing and
     the streams' join are not priced; see below). On H200 (SM 9.0, no flashinfer_trtllm) the
     shared expert is fused into fused_moe as a 257th expert every token picks
     (deepseek_v2.py:2853-2895: 256 routed, 1 shared, CUDA SM >= 8.0, no EP, no DeepEP), which
     kvplan's `fused_shared_expert` (kvplan.perf.op_counts) applies to GLM-4.5 only.
   - KV cache: both scripts pass --kv-cache-dtype fp8_e4m3 on B200; the aggregated bench
     replays kvplan's default (bf16 here, `common` below), so its attention bytes are doubled
     (aggflags67 tabulates the flags). The H200 script passes none.

FINDING (python -m tests.benches.sgldec67, ~4 s on the shared host; the numbers below are
the series step, before the rule at the end):
- B200 TP 8, 1,024 / 1,024, plain rows (the higher-TPOT of each pair): kvplan's step at B 4 /
  16 / 64 is 10.71 / 15.11 / 24.30 ms against a measured TPOT of 8.76 / 13.18 / 22.53 (rows
  284, 263, 288): a nearly constant excess of 1.95 / 1.93 / 1.77 ms, where the experts' op
  grows 1.77 -> 5.92 -> 12.90 ms. The excess is batch-independent, so it is in the fixed
  per-layer part, not the experts' streaming: attention_proj 2.44 ms (5 block-FP8 GEMMs x 2
  kernels at the 4 us floor, 61 layers), small_kernels 2.16, layer_overhead 2.14 (the fitted
  35 us a layer, efficiency.LAYER_OVERHEAD_FIT, fitted on dense single-GPU H100 / A100 cases,
  no MoE, no TP, no B200), mlp 0.98 (the shared expert's 4 floors, and the 3 dense layers), tp
  all-reduce 0.93: 8.6 ms of the 10.7 at B 4 are floors and fixed time. The dual-stream shared
  expert (code, above) would hide ~0.9 ms of it (`overlap`); the rest (~1 ms) is not located
  by a code rule here: the fitted layer overhead is the candidate (it stands for "the router
  GEMM, q/k norms and residual adds ... CPU gaps between graph replays", which SGLang's B200
  path fuses or hides: the router GEMM is dsv3_router_gemm, the q / kv norms overlap on
  alt_stream under capture, deepseek_v2.py:1548-1556), but changing it needs a measured B200
  per-layer table, which kvplan has none of (examples/moe-op-bench.md has SGLang 0.5.9's B200
  fused-MoE op, aiconfigurator's tables: kvplan / measured 0.76 - 0.77 at 1-256 tokens, so the
  experts' op is not overpriced there; its backend is not stated as flashinfer_trtllm).
- H200 TP 8 (no MTP config: the rows are single): +2.01 / +3.15 / +0.57 ms at B 4 / 16 / 64.
  Two code rules kvplan does not have yet, read, not written here: (a) SGLang 0.5.7 and 0.5.9
  turn the flashinfer all-reduce + RMSNorm fusion on for DeepseekV3 (also GptOss, Glm4Moe,
  Qwen3Moe; 0.5.9 Glm4MoeLite, KimiK25) on SM 9.0 too (server_args.py 0.5.7:1478-1492
  `is_sm90_supported() or is_blackwell_supported()`, 0.5.9:1680-1697 `... or
  is_sm100_supported()`; not on H20), where kvplan's
  SGLANG_ALLREDUCE_NORM_FUSION (read at 0.5.6: SM 10.x only) names B200 / B300: about one 4 us
  norm floor per fused all-reduce, 2 x 61 - 1 a step, ~0.48 ms; (b) on Hopper at EP 1 the
  shared expert is the fused MoE's 257th expert (no kernels of its own: 4 floors, ~0.93 ms a
  step less), which kvplan.perf.op_counts.fused_shared_expert applies to GLM-4.5 only.
- So of sglextend67's 13 rows: the B200 FP8 rows at C 4 - 8 with a measured TPOT of 5.76 -
  8.81 ms (303, 265, 304, 258) are MTP runs by the pairing above, and the rows it named (263,
  288, 284) are the plain runs of their pairs, 1.8 - 2.0 ms above at every batch. Of the 38
  rows: 23 MTP by the pairing (14 the aggregated bench replays -- 265, 304, 290, 308, 312,
  300, 303, 258, 274, 281, 254, 272, 301, 280 -- and 9 it refuses), 14 plain (12 replayed),
  and the 8,192 / 1,024 TP 8 C 4 row (250, 6.77 ms) '?': its pair's plain run is in the
  2026-04-06 file only (9.61 ms, measured=2026-03-25), so 250 is the MTP one by the same rule.
  None of the 23 is in aiconfig_agg_runs.shaped_rows().

RULE (commit de3a6eac, frozen before the re-evaluation below; kvplan.engines.sglang.
shared_stream, kvplan.perf.roofline `captured`): SGLang 0.5.6+ runs DeepSeek's shared experts on
a second stream where they stay out of the fused MoE (flashinfer_trtllm on SM 10.x for an FP8 /
ModelOpt checkpoint, EP > 1, experts other than 256 + 1, DeepSeek-V2), in a decode-only step of
at most --cuda-graph-max-bs tokens (SGLang's default by GPU memory and TP,
budget.sglang_cuda_graph_max_bs): kvplan charges the shared expert's op only beyond the routed
experts' op and at least its weights' streaming. Read on rows 284, 263, 288 (shaped:
fitted_rows.SHAPED_BY de3a6eac). The table's `captured step` column: B200 10.71 / 15.11 / 24.29
-> 9.84 / 14.24 / 23.42 ms (excess +1.95 / +1.93 / +1.77 -> +1.08 / +1.06 / +0.90); H200
unchanged (the shared expert is folded there, which kvplan does not price: next).

RE-EVALUATION (subset chosen before running: every SGLang DeepSeek row of aiconfig_agg_runs on
B200 / H200 that the fixed-length bench replays, 112 rows; kvplan at 391fd0aa -> de3a6eac; the
2026-04-06 copies of a 2026-03-25 row take its split): TPOT median |error|, median ratio --
B200 plain, held out (not read; they share the 3 shaped rows' engine, model and GPU), 33 rows:
13.4 -> 7.1 %, 1.134 -> 1.063; B200 shaped, 4 (284, 263, 288 and 288's 2026-04-06 copy): 13.3
-> 8.1 %, 1.133 -> 1.081; B200 MTP runs (by the pairing; replayed without speculative
decoding), 26: 32.1 -> 24.1 %, 1.321 -> 1.241; H200, 39: 20.0 % unchanged (0 rows move). TTFT
unchanged on every row (the rule touches decode-only steps). prospective64 / 65 (Qwen3.5 / 3.6
and Qwen3-30B-A3B: model types the rule does not name) do not move by construction, not re-run.

Run: python -m tests.benches.sgldec67
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from kvplan.perf.roofline import step_time
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.disagg_rows import stated_concurrency

BATCHES = (4, 16, 64)
MOE_LAYERS = range(3, 4)  # one MoE layer of DeepSeek-V3 (first_k_dense_replace 3)
# The InferenceX configs' search spaces at 12ba0ae07 (module docstring): (ISL, OSL, TP) ->
# the concurrencies each config ran.
PLAIN = {(1024, 1024, 8): range(4, 65), (1024, 8192, 8): range(4, 65),
         (8192, 1024, 8): range(4, 5), (8192, 1024, 4): range(4, 33)}
MTP = {(isl, osl, 8): range(4, 513) for isl, osl in ((1024, 1024), (1024, 8192), (8192, 1024))}
MEASURED = "measured=2026-03-25T16:34:14Z"  # the commit's time, every row of the pair's file


def _b200_fp8(row: dict[str, str]) -> bool:
    return (row["backend"] == "sglang" and row["model_path"] == "deepseek-ai/DeepSeek-R1"
            and row["precision"] == "fp8" and row["system"] == "b200_sxm"
            and MEASURED in row["silicon_data_source"] and row["id"].startswith("2026_03_25"))


def _point(row: dict[str, str]) -> tuple[int, int, int, int]:
    return (int(row["isl"]), int(row["osl"]), int(row["tp_size"]), stated_concurrency(row) or 0)


def label(point: tuple[int, int, int, int], tpots: list[float], tpot: float) -> str:
    """Which config's run a row at `point` is, given the TPOTs of every row at that point: a
    point both configs ran holds two rows, the lower TPOT the MTP one (module docstring); a
    point only the MTP config ran, MTP; only the plain config, plain."""
    isl, osl, tp, c = point
    plain = c in PLAIN.get((isl, osl, tp), ())
    mtp = c in MTP.get((isl, osl, tp), ())
    if plain and mtp:
        if len(tpots) != 2:
            return f"? ({len(tpots)} rows where both configs ran)"
        return "MTP (lower of pair)" if tpot == min(tpots) else "plain (higher of pair)"
    if mtp:
        return "MTP (only the MTP config ran it)" if len(tpots) == 1 else "? (several)"
    if plain:
        return "plain (only the plain config ran it)" if len(tpots) == 1 else "? (several)"
    return "? (neither config's space)"


def runs() -> list[tuple[dict[str, str], str]]:
    """Every B200 FP8 DeepSeek-R1 SGLang row of 2026-03-25 with its `label`."""
    part = [r for r in agg.rows() if _b200_fp8(r)]
    by: dict[tuple[int, int, int, int], list[float]] = defaultdict(list)
    for r in part:
        by[_point(r)].append(float(r["silicon_tpot_ms"]))
    return [(r, label(_point(r), by[_point(r)], float(r["silicon_tpot_ms"])))
            for r in sorted(part, key=_point)]


def decompose(row: dict[str, str], batch: int) -> tuple[float, dict[str, float], float]:
    """kvplan's decode step (ms) for `row`'s engine at `batch` requests of ISL + OSL / 2
    context, by op (ms), and the counterfactual overlap (ms): min(shared `mlp`, `experts`) of
    one MoE layer x the MoE layers."""
    c = agg.row_setup(row, agg.release(row) or "").cost
    common = {k: v for k, v in c._common.items() if k not in ("layout", "eff")}
    ctx = int(row["isl"]) + int(row["osl"]) // 2
    st = step_time(c.spec, c.gpu, tokens=batch, context=ctx, requests=batch, layout=c.layout,
                   eff=c.eff, **common)
    one = step_time(c.spec, c.gpu, tokens=batch, context=ctx, requests=batch, layout=c.layout,
                    eff=c.eff, layers=MOE_LAYERS, **common).by_op
    moe = c.spec.moe
    moe_layers = sum(1 for i in range(c.spec.num_hidden_layers)
                     if moe is not None and moe.is_moe_layer(i))
    overlap = min(one.get("mlp", 0.0), one.get("experts", 0.0)) * moe_layers
    return st.seconds * 1e3, {k: v * 1e3 for k, v in st.by_op.items()}, overlap * 1e3


def simulated_step(row: dict[str, str], batch: int) -> float:
    """The simulator's decode-only step (ms) for `row`'s engine at `batch` requests of ISL +
    OSL / 2 context: the captured step, with the shared experts' second stream where the rule
    applies (kvplan.engines.sglang.shared_stream)."""
    c = agg.row_setup(row, agg.release(row) or "").cost
    ctx = int(row["isl"]) + int(row["osl"]) // 2
    return c.seconds(decode_contexts=[ctx] * batch, chunks=[]) * 1e3


def _plain_rows(system: str) -> dict[int, dict[str, str]]:
    """Concurrency -> the plain 1,024 / 1,024 TP 8 row on `system` (B200: the plain run of a
    pair; H200: the one 2026-03-25 row)."""
    if system == "b200_sxm":
        return {_point(r)[3]: r for r, lab in runs()
                if lab.startswith("plain") and _point(r)[:3] == (1024, 1024, 8)}
    return {_point(r)[3]: r for r in agg.rows()
            if r["backend"] == "sglang" and r["model_path"] == "deepseek-ai/DeepSeek-R1"
            and r["precision"] == "fp8" and r["system"] == system
            and r["id"].startswith("2026_03_25") and _point(r)[:3] == (1024, 1024, 8)}


def main() -> None:
    print("## Which run each B200 FP8 row of 2026-03-25 is\n")
    print("| row | ISL / OSL | TP | C | measured TTFT / TPOT ms | run |")
    print("|---|---|---:|---:|---:|---|")
    for r, lab in runs():
        isl, osl, tp, c = _point(r)
        print(f"| {r['id'].rsplit('_', 1)[1]} | {isl:,} / {osl:,} | {tp} | {c} | "
              f"{float(r['silicon_ttft_ms']):.0f} / {float(r['silicon_tpot_ms']):.2f} | {lab} |")
    print("\n## kvplan's decode step against the plain rows' TPOT (1,024 / 1,024, TP 8)\n")
    ops: list[str] = []
    table = []
    for system in ("b200_sxm", "h200_sxm"):
        rows = _plain_rows(system)
        for b in BATCHES:
            row = rows.get(b)
            if row is None:
                continue
            total, by_op, overlap = decompose(row, b)
            ops += [k for k in by_op if k not in ops]
            table.append((system, b, row, total, by_op, overlap, simulated_step(row, b)))
    print("| GPU | B | row | measured TPOT | kvplan step (series) | excess | overlap | "
          "captured step (rule) | excess | " + " | ".join(ops) + " |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(ops))
    excess, after = [], []
    for system, b, row, total, by_op, overlap, sim in table:
        meas = float(row["silicon_tpot_ms"])
        excess.append(total - meas)
        after.append(sim - meas)
        print(f"| {agg.GPUS[system]} | {b} | {row['id'].rsplit('_', 1)[1]} | {meas:.2f} | "
              f"{total:.2f} | {total - meas:+.2f} | {overlap:.2f} | {sim:.2f} | "
              f"{sim - meas:+.2f} | " + " | ".join(f"{by_op.get(k, 0.0):.2f}" for k in ops)
              + " |")
    if excess:
        print(f"\nmedian excess {statistics.median(excess):+.2f} ms (series) -> "
              f"{statistics.median(after):+.2f} ms (captured, the rule)")


if __name__ == "__main__":
    main()
