"""Why vLLM 0.12.0's Qwen3-235B-A22B-FP8 rows on H200 decode a third slower than kvplan prices
(issue 30, q235h200_63; the TPOT-low class tests.benches.aggmiss63's FINDING names): the rows
(aiconfigurator's gap-analysis file h200_sxm/vllm/0.12.0/Qwen_Qwen3-235B-A22B-FP8.csv, in
tests/data/sim_to_real/aiconfigurator_agg.csv.gz) beside the same model's SGLang 0.5.6.post2
rows on the same GPU, read from examples/simulate-bench.md (no replay), and a sensitivity:
the decode step with the routed experts priced as the DeepGEMM path vLLM 0.12.0 takes where
deep_gemm is installed (`deepgemm_rows`, `deepgemm_experts_s`). Forensic only: no rule or
constant of kvplan changes here.

FINDING (read at the merge branch e1dcbb7f, page as committed; every row below was read
before the sensitivity was written, so none of it is held out: shaped, and no rule was made):
- The class: 38 replayed vLLM 0.12.0 rows (TP 2 / TP 4 as kvplan reads tp_size; ISL 1,000 -
  8,000, concurrency 4 - 48), TPOT ratio median 0.65. Measured TPOT is FLAT in the concurrency
  within a layout: the rows of MoE TP 2 (moe_tp_size 2 or EP 2) 51.4 - 58.7 ms from concurrency
  4 to 20, the rows of MoE TP 4 33.7 - 38.3 ms from 14 to 48 (46.0 at concurrency 8), where
  kvplan's decode step grows with the experts the batch touches (TP 2: 17.95 ms at concurrency
  4, 32.41 ms at 16, of it experts 7.8 -> 22.2 ms).
- Engine, not GPU: the same model, GPU and TP under SGLang 0.5.6.post2 (24 rows, all replayed)
  decodes in 15.1 - 18.2 ms at TP 2 concurrency 2 - 4 and 15.1 - 28.7 ms at TP 4, TPOT ratio
  median 1.00 (kvplan 13.9 - 18.2 ms); vLLM's TP 2 concurrency-4 rows take 55.8 ms for kvplan's
  23.9 (0.43). aiconfigurator's own Triton fused-MoE tables on H200
  (tests/data/moe_op/moe_perf_rows.csv.gz: vLLM 0.19.0 and SGLang 0.5.9, fp8_block, this shape,
  MoE TP 2) take 0.10 ms a layer at 4 tokens and 0.32 ms at 16 - 64 (9.5 / 30 ms over 94 layers,
  balanced routing): a Triton MoE does not make 50 ms.
- The code (vLLM v0.12.0 sdist): quantization/fp8.py:169-188 get_fp8_moe_backend returns
  DEEPGEMM for block-FP8 experts where `deep_gemm` imports and the MoE TP is below 8
  (VLLM_USE_DEEP_GEMM and VLLM_MOE_USE_DEEP_GEMM default 1, envs.py:157-158 / 1171-1175);
  without all2all kernels (TP, or TP + EP without DP) no modular kernel is built
  (fused_moe/all2all_utils.py:72-73, layer.py:662-670), so Fp8MoEMethod.apply (fp8.py:1311-1326)
  calls fused_experts, and fused_moe/fused_moe.py:1597-1619 calls deep_gemm_moe_fp8 for EVERY
  call where `is_deep_gemm_e8m0_used()` (utils/deep_gemm.py:59-79: VLLM_USE_DEEP_GEMM_E8M0
  default 1, envs.py:1177-1179, and deep_gemm's fp8_gemm_nt present), skipping the M >= 128
  check (deep_gemm_moe.py:39-41 _valid_deep_gemm_shape) that sends small calls to Triton
  otherwise. DeepGemmExperts.apply (deep_gemm_moe.py:256-297) sizes its grouped GEMMs at
  compute_aligned_M (fused_moe/deep_gemm_utils.py:26-44): with no per-expert counts on the host
  (MoEPrepareAndFinalizeNoEP, TP without all2all) M_sum = round_up(T x top-k + E_local x 127,
  128), and deepgemm_moe_permute (:369-374) zero-fills the block -> expert map, the scatter
  (:61-91) writing only the used experts' blocks: the rest map to expert 0, and
  m_grouped_fp8_gemm_nt_contiguous runs both GEMMs, the SiLU-and-mul and the FP8 quantize over
  all M_sum rows (DeepGEMM's SM90 scheduler skips a block only where its grouped_layout entry is
  < 0: deep_gemm/include/deep_gemm/common/scheduler.cuh is_computation_valid, read in the code
  index, not at the image's pin). Qwen3-235B (128 experts, top 8): 16,384 rows a layer at 4 - 16
  tokens, 16,640 at 48, whatever the batch: a compute-bound GEMM of 6 x M_sum x H x I / TP FLOPs
  a layer (29.1 TFLOP a step on TP 2, 14.7 ms at H200's 1,979 TFLOPS dense FP8 peak). Whether
  deep_gemm is installed is the environment's: vLLM's image builds it
  (docker/Dockerfile:236-243, 419-421), the plain wheel does not (kvplan assumes the wheel:
  kvplan.engines.vllm.moe_ep; the rows name no image). TP >= 8 turns the DeepGEMM MoE off by
  default (fp8.py:172-179).
- Sensitivity (`report`, kvplan's own H200 figures: dense FP8 peak 1,979 TFLOPS at the 0.70 GEMM
  fraction, HBM 4.8 TB/s at 0.90; nothing fitted): the experts priced as that path (29.1 TFLOP
  and 34.3 GB of activations a step on MoE TP 2 at concurrency 16: 28.9 ms where kvplan's
  experts op is 22.2) and each row's TPOT moved by the difference at its concurrency takes the
  class's median TPOT ratio from 0.65 to 0.82 (MoE TP 2: 0.63 -> 0.81, 15 rows; EP 2: 0.51 ->
  0.77, 5; MoE TP 4: 0.76 -> 0.85, 11): the right shape (flat in the batch), not the whole size
  at kvplan's dense fraction. (Those figures are from the page at e1dcbb7f, before the experts'
  shape table became the default (moedefault63): with it, kvplan's experts at these few rows an
  expert already cost more, the page's class median is 0.76 and the what-if 0.87 (MoE TP 2
  0.73 -> 0.83, EP 2 0.58 -> 0.84, MoE TP 4 0.86 -> 0.91); at the largest batches (MoE TP 2 at
  20, MoE TP 4 at 28-48: 6 of 38 rows) the table now prices the experts above the path.) The
  FP8-peak fraction the measured TPOTs imply for those GEMMs
  (measured less kvplan's TPOT without its experts op and less the path's activations, against
  the path's FLOPs; a diagnostic applied to nothing) is the same whatever the layout: 0.47 on
  MoE TP 2, 0.47 on MoE TP 4, 0.44 on EP 2, 0.42 on EP 4, as a compute cost over M_sum rows
  would be (below kvplan's 0.70; why is not read: the w2 GEMM's K is 768 / 384 a rank); the six
  rows frozen as tp_size 2 with moe_tp_size 4 imply 0.81 priced at TP 2, i.e. about 0.4 at the
  MoE TP 4 their measured TPOT (37 - 46 ms, the MoE TP 4 rows' level) says they ran: vLLM builds
  the MoE group as TP x DP, so they ran two ranks the frozen row does not name (kvplan replays
  them as TP 2). A Triton MoE that read all 128 experts' weights every step would also be flat,
  at about 60 % of HBM, but no code read here does that (fused_moe's grid walks the used
  experts' blocks only).
- Releases (sdists in the same store): vLLM 0.13.0 fixes the zero fill:
  fused_moe/deep_gemm_utils.py:375-385 fills expert_ids with -1 'so any row that is not
  explicitly written by the scatter kernel will be treated as invalid and skipped by DeepGEMM's
  scheduler', which is vLLM's own word that 0.12.0's padded blocks were computed (0.13.0 still
  sizes M_sum alike and still takes the path for every call, fused_moe.py:1644,
  envs.py:1177-1179). 0.10.2 took it on Hopper only with VLLM_USE_DEEP_GEMM_E8M0_HOPPER (default
  0: envs.py:982-983, utils/deep_gemm.py:54-56), small calls going to Triton. 0.11.x was not
  read, nor 0.12's patch releases. So the flat cost is 0.12.0's where deep_gemm is installed.
- Left: the deep_gemm install is an environment fact the rows do not record, so this is no
  default rule; a rule (0.12.0, block-FP8 experts, MoE TP < 8, SM 9.0; 10.0 by the same lines)
  would be opt-in (the image, not the wheel) or wait for a held-out set stating its image.
  DeepGEMM at the image's pin (tools/install_deepgemm.sh: 594953ac) was not read, nor its rate
  at these shapes (the 0.42 - 0.47 above is read off these rows).

Run: python -m tests.benches.q235h200_63 (reads the page, prices 38 steps; a few s of CPU).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from kvplan._util.dtypes import GemmMath
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.roofline import step_time
from tests.benches import aiconfig_agg_runs
from tests.benches.aggmiss63 import PAGE, PageRow, frozen_rows, page_rows

MODEL = "Qwen3-235B-A22B-FP8"
SYSTEM = "h200_sxm"
# vLLM v0.12.0 fused_moe/deep_gemm_utils.py get_mk_alignment_for_contiguous_layout: 128-row
# blocks (ep_scatter BLOCK_E = 128, :171).
ALIGN = 128


def deepgemm_rows(tokens: int, topk: int, local_experts: int, align: int = ALIGN) -> int:
    """The rows vLLM 0.12.0's DeepGEMM MoE runs its grouped GEMMs over with no per-expert
    counts on the host (compute_aligned_M, deep_gemm_utils.py:40-44):
    round_up(tokens x topk + local_experts x (align - 1), align)."""
    m = tokens * topk + local_experts * (align - 1)
    return -(-m // align) * align


@dataclass(frozen=True)
class MoeShape:
    """One rank's routed experts: hidden size, intermediate columns on the rank, layers."""

    hidden: int
    inter_rank: int
    layers: int
    experts: int
    topk: int


def deepgemm_flops(shape: MoeShape, tokens: int) -> float:
    """Both grouped GEMMs over all `deepgemm_rows`, every MoE layer: w13 2 x R x H x 2I, w2
    2 x R x I x H (I the rank's columns): 6 x R x H x I a layer."""
    rows = deepgemm_rows(tokens, shape.topk, shape.experts)
    return 6.0 * rows * shape.hidden * shape.inter_rank * shape.layers


def deepgemm_act_bytes(shape: MoeShape, tokens: int) -> float:
    """The activations DeepGemmExperts.apply (deep_gemm_moe.py:264-297) moves over all R
    rows, every MoE layer: GEMM1 writes R x 2I (bf16), SiLU-and-mul reads it and writes R x I
    (bf16), the FP8 quantize reads R x I and writes R x I (1 B), GEMM2 writes R x H (bf16);
    plus the permuted FP8 input, R x H (1 B): R x (13 I + 3 H) bytes a layer (the scatter and
    the gather touch only the used rows: not counted)."""
    rows = deepgemm_rows(tokens, shape.topk, shape.experts)
    i, h = shape.inter_rank, shape.hidden
    return float(rows * (4 * i + 4 * i + 2 * i + 2 * i + i + 2 * h + h)) * shape.layers


def deepgemm_experts_s(shape: MoeShape, tokens: int, *, peak_fp8: float, hbm: float,
                       gemm_frac: float, hbm_frac: float) -> float:
    """The sensitivity's price of the routed experts of one step: FLOPs at the dense FP8
    fraction plus the activations at HBM's (the weights, a few experts' a block, hide under
    the FLOPs)."""
    return (deepgemm_flops(shape, tokens) / (peak_fp8 * gemm_frac)
            + deepgemm_act_bytes(shape, tokens) / (hbm * hbm_frac))


@dataclass(frozen=True)
class Line:
    row: PageRow
    measured: float
    kvplan: float
    layout: str
    shifted: float  # kvplan's TPOT with the experts priced as DeepGEMM's path
    # The FP8-peak fraction the measured TPOT implies for the DeepGEMM GEMMs: (measured -
    # kvplan's TPOT less its experts op - the path's activations) against its FLOPs. A
    # diagnostic read off the rows, applied to nothing.
    implied: float


def _rows(backend: str) -> list[PageRow]:
    return [r for r in page_rows(PAGE.read_text(), frozen_rows())
            if r.backend == backend and r.model == MODEL and r.system == SYSTEM]


def lines() -> list[Line]:
    """Each replayed vLLM 0.12.0 row with the sensitivity's TPOT."""
    frozen = frozen_rows()
    out = []
    for r in _rows("vllm"):
        row = frozen[r.id]
        sim = aiconfig_agg_runs.row_setup(row, aiconfig_agg_runs.release(row))
        c, spec = sim.cost, sim.cost.spec
        tp, _, moe_tp, ep = aiconfig_agg_runs.layout(row)
        conc = r.concurrency
        ctx = r.isl + int(row["osl"]) // 2
        st = step_time(spec, c.gpu, tokens=conc, context=ctx, requests=conc, logits=conc,
                       **c._common)
        moe = spec.moe
        assert moe is not None
        shape = MoeShape(hidden=spec.hidden_size, layers=spec.num_hidden_layers,
                         inter_rank=moe.moe_intermediate_size // (tp // ep),
                         experts=moe.n_routed_experts // ep, topk=moe.num_experts_per_tok)
        eff = device_efficiency(c.gpu)
        peak = c.gpu.peak_flops(GemmMath.fp8)
        dg = deepgemm_experts_s(shape, conc, peak_fp8=peak, hbm=c.gpu.hbm_bytes_per_s,
                                gemm_frac=eff.gemm, hbm_frac=eff.hbm)
        measured = float(row["silicon_tpot_ms"])
        kv = measured * r.tpot_ratio
        shifted = kv + (dg - st.by_op["experts"]) * 1e3
        act_s = deepgemm_act_bytes(shape, conc) / (c.gpu.hbm_bytes_per_s * eff.hbm)
        gemm_s = (measured - kv) * 1e-3 + st.by_op["experts"] - act_s
        implied = deepgemm_flops(shape, conc) / (gemm_s * peak) if gemm_s > 0 else float("nan")
        out.append(Line(r, measured, kv, f"TP {tp} (MoE TP {moe_tp}, EP {ep})", shifted,
                        implied))
    return out


def report(ls: Sequence[Line], sglang: Sequence[PageRow]) -> None:
    print("| layout (frozen row) | rows | concurrency | measured TPOT ms | kvplan | median "
          "ratio | DeepGEMM-path sensitivity: median ratio | implied FP8-peak fraction |")
    print("|---|---:|---|---|---|---:|---:|---:|")
    groups: dict[str, list[Line]] = defaultdict(list)
    for ln in ls:
        groups[ln.layout].append(ln)
    for key in sorted(groups):
        g = groups[key]
        cs = sorted(ln.row.concurrency for ln in g)
        ms = sorted(ln.measured for ln in g)
        ks = sorted(ln.kvplan for ln in g)
        print(f"| {key} | {len(g)} | {cs[0]}-{cs[-1]} | {ms[0]:.1f}-{ms[-1]:.1f} | "
              f"{ks[0]:.1f}-{ks[-1]:.1f} | {statistics.median(ln.row.tpot_ratio for ln in g):.2f}"
              f" | {statistics.median(ln.shifted / ln.measured for ln in g):.2f} | "
              f"{statistics.median(ln.implied for ln in g):.2f} |")
    print(f"| all vLLM 0.12.0 | {len(ls)} | | | | "
          f"{statistics.median(ln.row.tpot_ratio for ln in ls):.2f} | "
          f"{statistics.median(ln.shifted / ln.measured for ln in ls):.2f} | "
          f"{statistics.median(ln.implied for ln in ls):.2f} |")
    if sglang:
        print(f"\nSGLang 0.5.6.post2, same model and GPU: {len(sglang)} rows, TPOT ratio median "
              f"{statistics.median(r.tpot_ratio for r in sglang):.2f}")


def main() -> None:
    report(lines(), _rows("sglang"))


if __name__ == "__main__":
    main()
