"""The fused-MoE kernel vLLM runs for bf16 / fp16 experts on CUDA, as the time model needs it
(kvplan.engines.moe_kernel.FusedMoeKernel, priced by kvplan.perf.moe_kernel). Read in the
0.15.1 wheel, vllm/model_executor/layers/fused_moe/:

- which backend: oracle/unquantized.py:50-104 `select_unquantized_moe_backend` picks
  FLASHINFER_CUTLASS only with VLLM_USE_FLASHINFER_MOE_FP16=1 (default 0, envs.py:1241) and
  expert parallelism without DP; every other CUDA case (Mixtral on TP ranks) runs TRITON, the
  modular kernel of oracle/unquantized.py:160-169 with TritonExperts.
- TritonExperts.apply (fused_moe.py:1984-2125): moe_align_block_size (2060) sorts the
  (token, expert) pairs by expert and pads each expert's list to a multiple of BLOCK_SIZE_M;
  the w13 grouped GEMM writes intermediate_cache1 (tokens, top_k, 2 x I per rank: 2053);
  self.activation (2087, silu_and_mul) reads it and writes intermediate_cache2 (tokens x
  top_k, I: 2055); the w2 grouped GEMM reads that and writes intermediate_cache3 (tokens,
  top_k, hidden: 2058); moe_sum (2125) reduces it into the output.
- fused_moe_kernel (fused_moe.py:315-572): one program per BLOCK_SIZE_M x BLOCK_SIZE_N tile of
  one expert's sorted rows, its fp32 accumulator the whole tile (499) and `tl.dot` over it
  (529) whether the rows are tokens or padding (masked on load and store: 431, 571): padded
  rows cost MMA work, not bytes. Programs walk the M blocks of one N column before the next
  ("grouped ordering to promote L2 data reuse", 400-409), so an expert's weight tile read by
  its first M block is served from L2 to the others: its weights cross HBM once a step.
- BLOCK_SIZE_M: try_get_optimal_moe_config (1289-1318) takes the tuned table for (E, N, device)
  (configs/, the entry nearest the call's tokens) and else get_default_config (1223-1287): 16
  when the call has at most as many tokens as experts (1270), 64 otherwise. The default is what
  is declared here; the tables shipped for Mixtral's shapes on H100 (E=8, N=7168 / 3584 / 2048,
  i.e. 8x7B at TP 2 / TP 4 and 8x22B at TP 8) agree with it at the sizes of a chunked prefill
  step (64 at their 256 / 512 entries but N=3584's 256: 128) and pick 128 from 1,024 tokens
  (N=3584: from 1,536), 16 or 32 at decode sizes.
- Under expert parallelism on TP ranks (kvplan.engines.vllm.moe_ep, read in 0.12.0-0.20.0):
  the same kernels over every pair of the step, other ranks' experts' blocks writing zeros.

Block-FP8 experts on the same TritonExperts (issue 30, vllmmoe59; read in 0.12.0, 0.17.0,
0.19.0 and 0.20.0, the lines below 0.19.0's): the prepare step quantizes the layer's input
(prepare_finalize/no_dp_ep.py:14-36, :76 `_quantize_input` -> utils.py:241-270
moe_kernel_quantize_input -> :125-148 `_fp8_quantize` -> per_token_group_quant_fp8 with group
block_shape[1] = 128: quantization/utils/fp8_utils.py:905-932, an FP8 copy of the tensor and one
float32 scale per 128 elements); the w13 GEMM reads the FP8 rows and their scales and writes
intermediate_cache1 in bf16 (compute_type bfloat16 for FP8 inputs, fused_moe.py:2053-2057, 2073);
the activation as for 16-bit experts; then moe_kernel_quantize_input over all T x top-k rows of
intermediate_cache2 (2102-2108, every pair's, other ranks' zeros included under EP), the w2 GEMM
reading that FP8 copy (2110-2131) and writing intermediate_cache3 in bf16; moe_sum as before.
BLOCK_SIZE_M by get_default_config's block-FP8 branch (1244-1257): 16 for a call of at most 64
tokens, else 64 (0.17.0-0.20.0; 0.12.0: 64 always, fused_moe.py:996-1002). The kernel is the
one vLLM runs for block FP8 on Hopper without EP from 0.17.0, and in 0.12.0 (moe_ep).

MXFP4 experts (gpt-oss) where vLLM runs Marlin (kvplan.engines.vllm.mxfp4_backend: SM 8.x and
12.x in the releases read, Hopper before 0.11.1 or where the user forces it with
VLLM_MXFP4_USE_MARLIN=1, `--mxfp4-backend marlin`, as InferenceX's H100 / H200 scripts do:
`VllmMoeKernels.mxfp4_chosen`, read in 0.15.1-0.19.0, task gptosshopper62; not SM 10.x,
FlashInfer's; issue 30, gptossa100, read in 0.11.0):
Mxfp4MoEMethod.apply calls torch.ops.vllm.fused_marlin_moe (quantization/mxfp4.py:785-799), whose
fused_marlin_moe.py picks its block by the mean rows per expert, not the tokens: the first
block_size_m of [8, 16, 32, 48, 64] with M x topk / E / block_size_m < 0.9, else 64 (:99-103),
then moe_align_block_size pads each expert's sorted rows to that block (:107-109); the w13 GEMM
(ops.moe_wna16_marlin_gemm, 16-bit activations, 4-bit weights dequantized in the kernel) writes
intermediate_cache1 (M x topk, 2N: :114-135), swigluoai_and_mul writes intermediate_cache2
(M x topk, N: :161-167), the w2 GEMM writes intermediate_cache3 (M x topk, K: :175-200) and
torch.sum over the top-k reduces it (:204): the Triton kernel's traffic. Its MMAs are Ampere's
warp-level mma.sync.aligned.m16n8k16 (csrc/moe/marlin_moe_wna16/marlin_template.h:89-141; no
wgmma in the directory), so on Hopper its GEMMs run at the card's mma.sync rate, about 2/3 of
the wgmma peak (FusedMoeKernel.mma_sync, kvplan.hardware.gpus.GPU.peak_flops; task
marlinhopper61). The Marlin MoE kernel
(csrc/moe/marlin_moe_wna16/marlin_template.h, read in the code index, release not pinned) runs a
thread block's MMAs over its whole 16 x thread_m_blocks-row A tile and masks rows past
`block_num_valid_tokens` on load and store only: padded rows cost MMA work, as Triton's do. At a
2,048-token step gpt-oss-120b's 128 experts average 64 rows (block 64), gpt-oss-20b's 32 average
256 (block 64). Its weights are zero-padded (per-rank intermediate to 128, hidden to 256) and
its GEMMs, activation and sum run at the padded shapes (task tpslope66, read in 0.18.0:
VLLM_MARLIN_MXFP4_MOE pad_width / pad_hidden below, kvplan.perf.moe_kernel.kernel_shape).

FlashInfer's CUTLASS MoE (issue 30, flashmoe60; FlashInferExperts, 0.20.0
flashinfer_cutlass_moe.py:244-394, over flashinfer-python 0.6.8.post1's cutlass_fused_moe, the
0.20.0 pin): TensorRT-LLM's CutlassMoeFCRunner (kvplan.engines.moe_kernel.CutlassMoeKernel
says what it reads and writes, kvplan.perf.moe_kernel.cutlass_traffic prices it). vLLM hands it
the layer's bf16 input, the top-k ids and weights and the rank's ep_size / ep_rank (369-394),
its output buffer the modular kernel's (workspace_shapes 206-242). 16-bit experts: no scales
(the `else` branch, 363-367); block FP8: use_deepseek_fp8_block_scale with the weights' block
scales and no input scale (`expects_unquantized_inputs`, 121-123; 354-362): the block-scale
runner quantizes the permuted rows itself, per 128 elements.

Which kernel a release runs (`VllmMoeKernels`, from kvplan.engines.vllm.moe_ep.vllm_moe_experts):
Triton for 16-bit experts before 0.20 and on GPUs below SM 9.0; FlashInfer CUTLASS for 16-bit
experts from 0.20 on Hopper (SM 9.0) without DP ranks and for block FP8 on Hopper under EP from
0.17.0; Triton for block FP8 on Hopper without EP (0.12.0, 0.17.0+); FlashInfer's TRT-LLM-gen
kernel for 16-bit experts from 0.20 on Blackwell (TrtLlmBf16Experts: not read to the byte, not
priced: weights and exact FLOPs only). Unchanged through 0.32.0 (vllmfp8moe61, read in the
0.32.0 wheel): model_executor/layers/fused_moe/oracle/fp8.py:120-130 still puts TRITON first
for block FP8 on SM 9.0 without EP and FLASHINFER_CUTLASS first with it; DeepGEMM
(`VLLM_USE_DEEP_GEMM`, default "1", envs.py:1619) is chosen ahead of that order only where
VLLM_USE_DEEP_GEMM or VLLM_MOE_USE_DEEP_GEMM is SET in the environment (`envs.is_set`,
oracle/fp8.py:478-491), so a default launch on Hopper does not run DeepGEMM's MoE.

How fast their block-FP8 grouped GEMMs run (vllmfp8moe61): kvplan prices them at the dense
FP8 GEMMs' fraction unless `VllmMoeKernels.fp8_fitted` (the switch) has them declare
`fitted_fp8`, the fitted FP8 MoE fraction (kvplan.perf.efficiency.FP8_MOE_GEMM_FIT: 0.20 of
the FP8 peak, fitted on aiconfigurator's H100 fused-MoE tables, vLLM 0.19.0's Triton among
them). tests/benches/vllm_fp8_moe.py evaluates it on vLLM serving rows (its docstring: the
numbers, and why the switch stays where it is).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kvplan._util.versions import version_key
from kvplan.engines.moe_kernel import (
    BF16_EXPERTS,
    FP8_BLOCK_EXPERTS,
    MXFP4_EXPERTS,
    CutlassMoeKernel,
    FixedMoeKernels,
    FusedMoeKernel,
    MoeKernel,
)
from kvplan.engines.vllm.moe_ep import (
    FI_CUTLASS_EP,
    FI_CUTLASS_EP_SINCE,
    TRITON_EP,
    vllm_moe_experts,
)
from kvplan.engines.vllm.mxfp4_backend import vllm_mxfp4_backend
from kvplan.hardware.gpus import GPU

VLLM_TRITON_MOE = FusedMoeKernel(
    name="vLLM fused_moe (Triton, TritonExperts)",
    small_block_rows=16,
    block_rows=64,
    source="vllm 0.15.1 model_executor/layers/fused_moe/fused_moe.py get_default_config "
           "(1223-1287), fused_moe_kernel (315-572), TritonExperts.apply (1984-2125); "
           "oracle/unquantized.py select_unquantized_moe_backend (50-104)",
    # Under TP-attention EP: every pair walked, zeros for other ranks' (moe_ep.TRITON_EP).
    ep_all_pairs=TRITON_EP.all_pairs,
)
# Block FP8 (0.17.0-0.20.0): activations quantized per 128-element group before each GEMM.
VLLM_TRITON_FP8_BLOCK_MOE = replace(
    VLLM_TRITON_MOE, name="vLLM fused_moe (Triton, TritonExperts), block FP8",
    small_up_to_tokens=64, act_quant_group=128,
    source="vllm 0.19.0 fused_moe.py get_default_config (1244-1257), TritonExperts.apply "
           "(2062-2134); prepare_finalize/no_dp_ep.py:14-36; utils.py:125-148; "
           "quantization/utils/fp8_utils.py:905-932")
# 0.12.0: BLOCK_SIZE_M 64 at every size (fused_moe.py:996-1002), the same quantization; 0.11.0
# the same (fused_moe.py:883; its functional fused_experts_impl quantizes the chunk's input at
# :1621 and the gated product at :1674 alike, moe_sum :1703).
VLLM_TRITON_FP8_BLOCK_MOE_0_12 = replace(
    VLLM_TRITON_FP8_BLOCK_MOE, small_block_rows=64,
    source="vllm 0.12.0 fused_moe.py:996-1002; 0.11.0 fused_moe.py:883, 1621-1703")

# MXFP4 experts on Marlin (module docstring): the block by the mean rows per expert.
VLLM_MARLIN_MXFP4_MOE = FusedMoeKernel(
    name="vLLM fused_marlin_moe (Marlin w4a16), MXFP4 experts",
    small_block_rows=64,
    block_rows=64,
    load_block_rows=(8, 16, 32, 48, 64),
    load_below=0.9,
    # Its MMAs are Ampere's mma.sync.aligned.m16n8k16 (fp16 / bf16 inputs, fp32 accumulate):
    # vllm 0.11.0 csrc/moe/marlin_moe_wna16/marlin_template.h:89-141 (`mma`, `mma_trans`), the
    # directory issuing no wgmma (grep); on Hopper they run at the card's mma.sync rate.
    mma_sync=True,
    # Its weights and GEMMs at padded shapes (tpslope66, read in vLLM 0.18.0): create_weights
    # rounds the per-rank intermediate size up to 128 and the hidden size up to 256 ("the moe
    # marlin kernel requires that for each linear n % 256 == 0 and k % 128 == 0",
    # quantization/mxfp4.py:321-342); FusedMoE pads gpt-oss's hidden size alike
    # (fused_moe/layer.py:245-269 maybe_roundup_hidden_size, MARLIN -> round_up(h, 256)) and its
    # runner zero-pads the layer's input to it (runner/default_moe_runner.py:418-424);
    # fused_marlin_moe runs the w13 GEMM at size_n = 2 N, size_k = K and the w2 GEMM at size_n
    # = K, size_k = N, N read from the padded w2 (marlin_utils.py:249-255), K the padded input's
    # (fused_marlin_moe.py:88-199). gpt-oss-120b (I 2,880, H 2,880): TP 1 2,944 x 3,072, TP 2 /
    # 4 / 8 1,536 / 768 / 384 x 3,072.
    pad_width=128,
    pad_hidden=256,
    source="vllm 0.11.0 model_executor/layers/fused_moe/fused_marlin_moe.py:99-204; "
           "quantization/mxfp4.py:59-102 (get_mxfp4_backend), :785-799; "
           "csrc/moe/marlin_moe_wna16/marlin_template.h (block_num_valid_tokens; mma.sync "
           "89-141); vllm 0.18.0 quantization/mxfp4.py:321-342, fused_moe/layer.py:245-269, "
           "runner/default_moe_runner.py:418-424, fused_marlin_moe.py:88-199 (padded shapes)",
)

# FlashInfer's CUTLASS MoE (module docstring): 16-bit experts, and block FP8 (its block-scale
# runner quantizing each GEMM's permuted input per 128 elements).
VLLM_FI_CUTLASS_MOE = CutlassMoeKernel(
    name="FlashInfer CUTLASS MoE (FlashInferExperts)",
    source="vllm 0.20.0 flashinfer_cutlass_moe.py:244-394; flashinfer 0.6.8.post1 "
           "cutlass_fused_moe_kernels.cuh runMoe (3489-3830), gemm1 (2953-3010), gemm2 "
           "(3203-3262)")
VLLM_FI_CUTLASS_FP8_BLOCK_MOE = replace(
    VLLM_FI_CUTLASS_MOE, name="FlashInfer CUTLASS MoE (FlashInferExperts), block FP8",
    act_quant_group=128,
    source="vllm 0.17.0-0.20.0 flashinfer_cutlass_moe.py (0.20.0:354-362, 0.17.0:353); flashinfer "
           "0.6.8.post1 cutlass_fused_moe_kernels.cuh BlockScaleFC1 / FC2 (2815-2872); "
           "fp8_blockscale_gemm.cu moeGemm (95-166), fp8_blockscale_gemm_kernel.cuh "
           "fp8_grouped_gemm_run (1504-1562)")


@dataclass(frozen=True)
class VllmMoeKernels:
    """vLLM's default choice of fused-MoE kernel (kvplan.engines.moe_kernel.MoeKernels): the
    Triton or FlashInfer CUTLASS kernels above as vllm_moe_experts answers, Marlin for MXFP4
    experts on a CUDA GPU where the release runs it (vllm_mxfp4_backend), None (weights and
    exact FLOPs only) where it answers FlashInfer's TRT-LLM-gen kernel or was not read.

    `fp8_fitted` (the switch, vllmfp8moe61; module docstring): the block-FP8 kernels it
    answers (Triton's or FlashInfer CUTLASS's) declare `fitted_fp8`, their grouped GEMMs at
    the fitted FP8 MoE fraction (kvplan.perf.efficiency.FP8_MOE_GEMM_FIT) in place of the dense
    FP8 GEMMs'. False: the dense fraction, kvplan's rule before it."""

    fp8_fitted: bool = False
    # The user's MXFP4 kernel (VllmOptions.mxfp4_backend: --mxfp4-backend, as vLLM's
    # VLLM_MXFP4_USE_MARLIN=1 or --moe-backend picks it); None: the release's default on the GPU.
    mxfp4_chosen: str | None = None

    def kernel(self, fmt: str | None, *, version: str | None, gpu: GPU | None, ep: int,
               dp_ranks: int) -> MoeKernel | None:
        chosen = self._kernel(fmt, version=version, gpu=gpu, ep=ep, dp_ranks=dp_ranks)
        if self.fp8_fitted and fmt == FP8_BLOCK_EXPERTS and chosen is not None:
            return replace(chosen, fitted_fp8=True)
        return chosen

    def _kernel(self, fmt: str | None, *, version: str | None, gpu: GPU | None, ep: int,
                dp_ranks: int) -> MoeKernel | None:
        if fmt == MXFP4_EXPERTS:
            # Marlin runs on SM 8.x and 12.x in every release read (0.11.0 mxfp4.py:94-99;
            # Triton needs SM 9.0-10.x from 0.11.1, 0.32 puts Marlin first on 12.x) and on
            # Hopper where the release's default says so (vllm_mxfp4_backend: before 0.11.1)
            # or the user picks it (`mxfp4_chosen`, module docstring: VLLM_MXFP4_USE_MARLIN=1
            # wins over Triton on SM 9.0 in 0.15.1-0.19.0); SM 10.x runs FlashInfer's kernels
            # (mxfp4.py:66-85), whose layout only is Marlin's, whatever the user picks.
            if gpu is None or gpu.platform != "cuda" or gpu.compute_capability is None:
                return None
            major = gpu.compute_capability[0]
            hopper = major == 9 and vllm_mxfp4_backend(
                version, gpu.compute_capability, chosen=self.mxfp4_chosen)[0] == "marlin"
            return VLLM_MARLIN_MXFP4_MOE if major in (8, 12) or hopper else None
        chosen = vllm_moe_experts(fmt, version=version,
                                  platform=gpu.platform if gpu is not None else "cuda",
                                  capability=gpu.compute_capability if gpu is not None else None,
                                  ep=ep, dp_ranks=dp_ranks)
        if chosen is FI_CUTLASS_EP:
            return VLLM_FI_CUTLASS_MOE if fmt == BF16_EXPERTS else VLLM_FI_CUTLASS_FP8_BLOCK_MOE
        if chosen is not TRITON_EP:
            return None
        if fmt == BF16_EXPERTS:
            return VLLM_TRITON_MOE
        if version_key(version) >= version_key(FI_CUTLASS_EP_SINCE):
            return VLLM_TRITON_FP8_BLOCK_MOE
        return VLLM_TRITON_FP8_BLOCK_MOE_0_12


VLLM_MOE_KERNELS = VllmMoeKernels()
# `--moe-backend triton`, or a benchmark that calls fused_moe itself (aiconfigurator's vLLM
# collector: tests/data/moe_op/SOURCES.md), on 0.17.0+.
VLLM_TRITON_ONLY = FixedMoeKernels(((BF16_EXPERTS, VLLM_TRITON_MOE),
                                    (FP8_BLOCK_EXPERTS, VLLM_TRITON_FP8_BLOCK_MOE)))
