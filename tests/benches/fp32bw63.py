"""fp32bw63: the float32 MoE router on B200 / B300 under vLLM (issue 30; aggmiss63's candidate 4)
and which kernel vLLM runs for block-FP8 experts on SM 10.x (its candidate 5).

THE DATA FIX (a, committed at 43467a54 before any row below was re-evaluated):
gpus.json's B200 and B300 now hold an FP32 (CUDA-core) peak, 75 TFLOPS a GPU: NVIDIA's HGX page
(https://www.nvidia.com/en-us/data-center/hgx/) gives HGX B200 and HGX B300 (8 GPUs) "FP32
600 TFLOPS", read through the table as reproduced at https://fibermall.com/blog/?p=17161 (not
on nvidia.com itself: the search corpus holds no copy of it); the same 75 in Verda's per-GPU
table (https://verda.com/blog/gb300-nvl72-architecture) and, for B200, 148 SMs x 128 FP32 lanes
x 2 x 1.98 GHz = 75.0. GB200 / GB300 stay None: no NVIDIA figure was found (third parties
disagree: 75, 80, 90). fp32router61's rule (kvplan.perf.router_cost) then prices the gate.
The code it follows (PyPI sdists):
- vLLM 0.16.0 / 0.17.0 / 0.18.1 / 0.19.0 minimax_m2.py:113-119, :132 (0.20.0 :115-121, :134):
  `ReplicatedLinear(hidden, experts, params_dtype=torch.float32, quant_config=None)` called on
  `hidden_states.to(torch.float32)`; UnquantizedLinearMethod.apply -> dispatch_unquantized_gemm
  (0.19.0 layers/linear.py:228, layers/utils.py:302-308) -> `torch.nn.functional.linear`
  (utils.py:92-98) on float32 operands; vLLM sets torch.set_float32_matmul_precision from
  VLLM_FLOAT32_MATMUL_PRECISION, default "highest" (0.19.0 envs.py:77, :495-500,
  v1/worker/gpu_worker.py:122-124): no TF32, so cuBLAS SGEMM on the CUDA cores.
- Tensor cores on SM 10.x only from the GateLinear bf16x3 tier: 0.32.0 (the installed wheel)
  minimax_m2.py:110-117 GateLinear(params_dtype / out_dtype float32), forward on the bf16 input
  (:129); gate_linear.py:64 is_blackwell, :122-129 allow_bf16x3_router_gemm, :273-280 the
  CuteDSL bf16x3 kernel. 0.20.0's gate_linear.py has no bf16x3 (0 matches): the first release
  with it is not read, so VLLM_ROUTER_GEMM keeps {10: "0.32.0"}. The nightly 5b8c30d6 rows
  print 0.18.1rc1.dev220 (aiconfig_nightly): before it.

THE ROWS IT REACHES (listed before running): in the aggregated frozen rows
(aiconfigurator_agg.csv.gz) only vLLM MiniMax-M2.5 on b200_sxm / b300_sxm: 409 rows (B200 FP8
0.17.0 40, 0.19.0 206 FP8 + NVFP4, nightly 53; B300 0.19.0 94, nightly 16), 330 replayed. No
other float32-router architecture (GLM-4.5/4.6/4.7, ERNIE-4.5, AFMoE, HY-V3, Step-3.5) has an
aggregated, disagg or prospective row on B200 / B300 under an engine whose table lists it: the
prospective sets' GLM-4.7-Flash B200 rows are SGLang 0.5.7 (Glm4MoeLite: not float32 there),
the MiniMax-M2.7 SGLang rows are on GB300 (no peak). So NO held-out row in the sense of the
brief: all 330 were read by aggmiss63 (SHAPED). The page's own split labels are kept apart below
("held out" 302 / "shaped by b8b24713" 28), both read. cost-bench.md's SGLang MiniMax-M2.5 0.5.8
and GLM-4.6 B200 rows (the page labels them held out; found from the page's diff after the
commit, not listed first) moved too: see the commit regenerating that page.

RESULT (python -m tests.benches.fp32bw63; TTFT / TPOT = kvplan / measured; inside [0.75, 1.33]):
    set                               rows  TTFT median   TTFT inside   both inside  TPOT median
    all replayed                       330  0.64 -> 0.84    93 -> 182    91 -> 176   1.12 -> 1.13
    page 'held out' (read: shaped)     302  0.62 -> 0.82    80 -> 163    78 -> 157   1.12 -> 1.13
    page 'shaped by b8b24713'           28  0.73 -> 0.99    13 ->  19    13 ->  19   1.13 -> 1.14
  By cohort (page 'held out'): B200 FP8 0.19.0 (112) 0.62 -> 0.80; B200 NVFP4 0.19.0 (34)
  0.68 -> 0.94; B200 NVFP4 nightly (46) 0.55 -> 0.76; B200 FP8 0.17.0 (32) 0.46 -> 0.58;
  B300 FP8 0.19.0 (27) 0.69 -> 0.90; B300 NVFP4 0.19.0 (35) 0.78 -> 1.05; B300 FP8 nightly (16)
  0.71 -> 0.90. TTFT above 1.33: 12 -> 22 rows; below 0.75: 225 -> 126. TPOT 1.12 -> 1.13.
  The lone 8,192-token step on B200: +15.2 ms (62 layers x 245 us, tests/test_router_cost.py).

THE EXPERTS' KERNEL (b, a finding; no rule): vLLM 0.19.0's FP8 MoE oracle
(layers/fused_moe/oracle/fp8.py:57-103) moves Triton / FlashInfer CUTLASS first on SM 9.0 only;
on SM 10.x the order is AITER, FLASHINFER_TRTLLM, FLASHINFER_CUTLASS, DEEPGEMM, ... (:68-80),
each tried by is_supported_config (:386-397). FLASHINFER_TRTLLM is two classes (:108-114):
the monolithic TrtLlmFp8ExpertsMonolithic refuses MiniMax-M2 (its block-FP8 routing list is
DeepSeekV3 / Simulated, experts/trtllm_fp8_moe.py:289-297, and float32 router logits only for
those, :253-271: MiniMax's sigmoid + bias without expert groups is Unspecified, fused_moe/
config.py:124-135, and minimax_m2.py:110 asks float32 logits); the modular
TrtLlmFp8ExpertsModular takes block FP8 (:103-112), inherits the permissive routing / dtype
defaults (modular_kernel.py:614-639), needs SM 10.x family and FlashInfer's TRT-LLM fused MoE
(:63-70) and no all2all kernels / EPLB (:83-88): so at TP (EP 1) the rows run FlashInfer's
TRT-LLM-gen `trtllm_fp8_block_scale_routed_moe` (:182). vLLM 0.17.0 has only the monolithic
class (0.17.0 experts/trtllm_fp8_moe.py:26, :106-152: the same refusal) and FlashInfer CUTLASS
takes block FP8 on SM 9.0 only (flashinfer_cutlass_moe.py:138-173), so DeepGEMM / Triton next
(not resolved further: its rows forced Triton, aggmiss63). kvplan prices SM 10.x block-FP8
experts at the dense FP8 fraction (kvplan.engines.vllm.moe_ep.vllm_moe_experts returns None
there); the TRT-LLM-gen kernel's rate was not measured, so no fraction is written. Left: that
rate, GB200 / GB300's FP32 peak, the 0.17.0 FP8 rows (0.58 after).
"""

from __future__ import annotations

import multiprocessing
import statistics
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

from tests.benches import aiconfig_agg_runs
from tests.benches.lone_prefill import without_fp32_router

SYSTEMS = ("b200_sxm", "b300_sxm")
LOW, HIGH = 0.75, 1.33


def reached_rows() -> list[dict[str, str]]:
    """The aggregated frozen rows the B200 / B300 FP32 peak reaches: vLLM (every release here
    before 0.32.0) serving MiniMax-M2.5, the only float32-router model among them."""
    return [r for r in aiconfig_agg_runs.rows()
            if r["backend"] == "vllm" and r["model_path"] == "MiniMaxAI/MiniMax-M2.5"
            and r["system"] in SYSTEMS]


def _ratios(with_router: bool) -> dict[str, tuple[tuple[float, float], str, str]]:
    """The reached rows' (TTFT, TPOT) ratios, split and cohort, with or without the float32
    router's price (run in a fresh process each: kvplan's step caches would carry one into the
    other)."""
    if not with_router:
        with without_fp32_router():
            return _ratios(True)
    out = {}
    for row in reached_rows():
        rep = aiconfig_agg_runs.replay(row)
        if rep.ratios is not None:
            split = aiconfig_agg_runs.split_of(rep).split(",")[0]
            cohort = f"{row['system']} {row['precision']} {row['backend_version'][:14]}"
            out[rep.id] = (rep.ratios, split, cohort)
    return out


def _inside(x: float) -> bool:
    return LOW <= x <= HIGH


def main() -> None:
    rows = reached_rows()
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
        before = pool.submit(_ratios, False).result()
    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
        after = pool.submit(_ratios, True).result()
    groups: dict[str, list[str]] = defaultdict(list)
    for rid, (_, split, cohort) in before.items():
        for key in ("all replayed", f"page '{split}'", f"page '{split}' {cohort}"):
            groups[key].append(rid)
    print(f"{len(rows)} rows reached, {len(before)} replayed")
    print("| set | rows | TTFT median | TTFT inside | both inside | TPOT median |")
    print("|---|---|---|---|---|---|")
    for key in sorted(groups):
        ids = groups[key]
        b = [before[i][0] for i in ids]
        a = [after[i][0] for i in ids]
        print(f"| {key} | {len(ids)} "
              f"| {statistics.median(t for t, _ in b):.2f} -> "
              f"{statistics.median(t for t, _ in a):.2f} "
              f"| {sum(_inside(t) for t, _ in b)} -> {sum(_inside(t) for t, _ in a)} "
              f"| {sum(_inside(t) and _inside(p) for t, p in b)} -> "
              f"{sum(_inside(t) and _inside(p) for t, p in a)} "
              f"| {statistics.median(p for _, p in b):.2f} -> "
              f"{statistics.median(p for _, p in a):.2f} |")


if __name__ == "__main__":
    main()
