"""What one rank of vLLM's expert-parallel MoE computes and writes for the tokens routed to
other ranks' experts, by expert format, release and GPU (issues 29 / 30). The layout is the one
kvplan replays for `--enable-expert-parallel` on TP ranks without DP: FusedMoEParallelConfig
flattens the TP group into EP (use_ep: tp_size 1, ep_size = TP), no all-to-all (`use_all2all_
kernels` needs dp_size > 1), so the prepare / finalize is MoEPrepareAndFinalizeNoEP: every rank
holds every token of the step, runs its own experts through an expert map (-1 for the others'),
and the layer's output partial sums are all-reduced over the TP group (FusedMoE
`reduce_results`), the TP all-reduce kvplan already prices (kvplan.perf.roofline). What
differs by kernel is whether the rank walks every (token, expert) pair or only its own.

Read in the wheels' code (vllm/model_executor/layers/fused_moe/ of 0.12.0, 0.17.0, 0.18.0,
0.19.0 and 0.20.0; flashinfer-python 0.6.8.post1, vLLM 0.20.0's pin, for its CUTLASS MoE):

- Triton (TritonExperts, the modular kernel; fused_experts_impl the functional path before it).
  0.20.0 fused_moe.py:2029-2042 `_prepare_expert_assignment(topk_ids, config, ..., expert_map)`
  with ignore_invalid_experts left False, so moe_align_block_size (moe_align_block_size.py:
  85-101) sorts and pads ALL T x top-k pairs by global expert, every expert to a multiple of
  BLOCK_SIZE_M, then maps the blocks' expert ids through the expert map: other ranks' blocks
  get -1. fused_moe_kernel (fused_moe.py:435-446) returns early for a -1 block after
  `write_zeros_to_output`: no weight read, no MMA, but its rows of the GEMM's output written as
  zeros. So the w13 GEMM writes all T x top-k rows of intermediate_cache1 (2 I wide), the
  activation reads and writes all of them, the w2 GEMM reads only its own pairs' rows but writes
  all T x top-k rows of intermediate_cache3 (H wide), and moe_sum reads them all: the
  activations are EP 1's, the FLOPs and weights the rank's own experts'. The same in 0.12.0
  (fused_moe.py:422-426, moe_align_block_size.py:82-83 `expert_ids = expert_map[expert_ids]`),
  the 16-bit path of every release read here (0.12-0.19: Triton by default,
  oracle/unquantized.py, FlashInfer only with VLLM_USE_FLASHINFER_MOE_FP16=1) and FP8 where the
  FP8 oracle picks TRITON. (0.20.0's functional fused_experts_impl, fused_moe.py:1805-1816,
  passes ignore_invalid_experts=True and zeroes cache 3 once instead; the modular TritonExperts
  above is what the oracles build.)
- FlashInfer CUTLASS (FlashInferExperts: TensorRT-LLM's CUTLASS MoE through
  flashinfer.cutlass_fused_moe, ep_size / ep_rank passed, flashinfer_cutlass_moe.py:380-390 in
  0.20.0). Its routing kernel sends other ranks' experts past the local ones (flashinfer
  csrc/fused_moe/cutlass_backend/cutlass_fused_moe_kernels.cuh:323-330: expert id
  num_experts_per_node), the grouped GEMMs run over the local experts' permuted rows only
  (expert_first_token_offset), and the finalize kernel skips the others' pairs (:1693-1697)
  while writing each token's output row: the rank computes and moves its own pairs only, the
  1 / EP kvplan charges (their activations priced since flashmoe60: kvplan.perf.moe_kernel.
  cutlass_traffic). Block-FP8 experts on SM 9.0 under EP run it from 0.17.0 (oracle/fp8.py
  0.17.0-0.20.0 `_get_priority_backends`: "On Hopper for Block Fp8, prefer Triton for TP and FI
  CUTLASS for EP", FLASHINFER_CUTLASS moved to the front when ep_size > 1; FlashInferExperts.
  _supports_quant_scheme takes (kFp8Static128BlockSym, kFp8Dynamic128Sym) on 9.0 only), where
  FlashInfer is usable (utils/flashinfer.py has_flashinfer: flashinfer-cubin installed, a
  dependency of the 0.19 / 0.20 wheels, or nvcc on the path). 0.12.0 had no such rule
  (quantization/fp8.py:126-203 get_fp8_moe_backend: FlashInfer only with
  VLLM_USE_FLASHINFER_MOE_FP8, DeepGEMM where deep_gemm is installed and TP < 8, else Triton).
- On SM 10.0 block-FP8 experts take FlashInfer's TRT-LLM-gen kernel first (oracle/fp8.py
  0.19.0 order AITER, FLASHINFER_TRTLLM, ...; TrtLlmFp8ExpertsModular takes block FP8 on the
  SM 10.x family), whose expert range is its own (`supports_expert_map` False, local experts
  given to the kernel); NVFP4 experts run FlashInfer's TRT-LLM, CuteDSL or CUTLASS kernels
  first (oracle/nvfp4.py 0.19.0:140-146), none taking an expert map. Not read to the line: they
  are left at kvplan's 1 / EP charge, which is what a kernel given only its local experts does.

16-bit experts from 0.20 (issue 30, vllmmoe59): 0.20.0's unquantized oracle
(oracle/unquantized.py:47-80 `_get_priority_backends`, :279-289) tries FLASHINFER_TRTLLM,
FLASHINFER_CUTLASS, TRITON in that order on CUDA with no environment variable, FLASHINFER_CUTLASS
moved behind TRITON where dp_size > 1 (:77-78). TrtLlmBf16Experts runs on the SM 10.x family only
(experts/trtllm_bf16_moe.py:46-53), FlashInferExperts on SM 9.0, 10.x, 11.x and 12.x
(flashinfer_cutlass_moe.py:125-136), taking unquantized experts on SM 9.0 and up (:150-159):
Hopper's 16-bit default is FlashInfer CUTLASS, Blackwell's TRT-LLM-gen, Ampere's and Ada's
Triton. 0.12-0.19 took FlashInfer only with VLLM_USE_FLASHINFER_MOE_FP16=1 (vllmep59's reading,
kvplan.engines.vllm.moe_kernel). `vllm_moe_experts` is the one choice, with and without EP.

Nor its workspace (kvplan.engines.vllm.moe sizes TritonExperts' buffers for FP8 experts too):
under FlashInfer CUTLASS the modular kernel's workspace manager holds only (M, K) (0.20.0
flashinfer_cutlass_moe.py:203-236 workspace_shapes, modular_kernel.py:1094-1100: one common
buffer of max(workspace13, output), workspace2 empty), and FlashInfer allocates its own
workspace on every call (flashinfer_cutlass_fused_moe_binding.cu:845-861 getWorkspaceInfo ->
alloc_tensor, freed after the call), sized by CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes
(cutlass_fused_moe_kernels.cuh:2474-2640) for all top-k x M pairs, not the rank's. MiniMax-M2.5
at 8,192 tokens, block FP8 (bf16 activations, T = bf16): permuted inputs and the block-scale
GEMM outputs 2 x 65,536 x 3,072 x 2 B = 0.75 GiB, the FP8 copy of the GEMM input the block-scale
runner makes (fp8_blockscale_gemm.cu:216-246) 65,536 x 3,072 B = 0.19 GiB: about 0.95 GiB a
call, in the profile forward's peak, against TritonExperts' 0.75 GiB kept through the sampler
warm-up; the persistent part 0.05 GiB. Whether that per-call allocation reaches torch's peak
statistics (tvm-ffi's allocator) was not checked and no log of the path is held: not modelled.
The same holds for 16-bit experts from 0.20 on Hopper (FlashInferExperts, the same
workspace_shapes): kvplan.engines.vllm.moe still sizes TritonExperts' buffers there (vllmmoe59;
the CPU oracle does not run FlashInfer's CUDA kernels, so it cannot check this path).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.versions import version_key

# The first release whose FP8 oracle puts FlashInfer CUTLASS first for block-FP8 experts under
# EP on SM 9.0, and Triton first without EP (oracle/fp8.py `_get_priority_backends`: 0.17.0:85,
# 0.19.0:85-95, 0.20.0:88; absent in 0.12.0).
FI_CUTLASS_EP_SINCE = "0.17.0"
# The first release whose unquantized oracle tries FlashInfer before Triton (above).
FI_BF16_SINCE = "0.20.0"


@dataclass(frozen=True, kw_only=True)
class VllmEpExperts:
    """The experts kernel a rank runs, and whether under EP it walks every (token, expert) pair
    of the step (writing zeros for other ranks' pairs) or only its own."""

    kernel: str
    all_pairs: bool
    source: str


TRITON_EP = VllmEpExperts(
    kernel="Triton fused_moe (TritonExperts)", all_pairs=True,
    source="vllm 0.20.0 fused_moe.py:2029-2042, :435-446 write_zeros_to_output; "
           "moe_align_block_size.py:85-101 (0.12.0: fused_moe.py:422-426)")
FI_CUTLASS_EP = VllmEpExperts(
    kernel="FlashInfer CUTLASS MoE (FlashInferExperts)", all_pairs=False,
    source="vllm 0.17.0-0.20.0 oracle/fp8.py _get_priority_backends; flashinfer 0.6.8.post1 "
           "cutlass_fused_moe_kernels.cuh:323-330, :1693-1697")
# Its expert range its own (`supports_expert_map` False: the local experts given to the kernel).
FI_TRTLLM_EP = VllmEpExperts(
    kernel="FlashInfer TRT-LLM-gen MoE (TrtLlmBf16Experts / TrtLlmFp8Experts)", all_pairs=False,
    source="vllm 0.20.0 oracle/unquantized.py:47-80, experts/trtllm_bf16_moe.py:46-53; "
           "0.19.0 oracle/fp8.py:68-80")


def vllm_moe_experts(fmt: str | None, *, version: str | None, platform: str = "cuda",
                     capability: tuple[int, int] | None, ep: int = 1, dp_ranks: int = 1
                     ) -> VllmEpExperts | None:
    """The kernel a rank of vLLM `version` (None: the newest) runs on a GPU of `platform` and
    `capability` for routed experts of format `fmt` ("16-bit" or "fp8-block") at expert
    parallelism `ep` over `dp_ranks` DP ranks, by the default selection (no --moe-backend, no
    VLLM_USE_* override); None where this module did not read the choice (another format, FP8
    on another generation, 0.13-0.16's FP8)."""
    key = version_key(version)
    if fmt == "16-bit":
        if platform != "cuda" or capability is None or capability < (9, 0):
            # Ampere / Ada run Triton in every release (FlashInfer wants SM 9.0+); ROCm and a GPU
            # of unknown capability keep the Triton kvplan priced before (not re-read).
            return TRITON_EP
        if key < version_key(FI_BF16_SINCE):
            return TRITON_EP
        if capability[0] == 10:
            return FI_TRTLLM_EP
        # FLASHINFER_CUTLASS behind TRITON with DP ranks (oracle/unquantized.py:77-78).
        return TRITON_EP if dp_ranks > 1 else FI_CUTLASS_EP
    if fmt == "fp8-block" and platform == "cuda" and capability == (9, 0):
        if key >= version_key(FI_CUTLASS_EP_SINCE):
            return FI_CUTLASS_EP if ep > 1 else TRITON_EP
        # 0.12.0 (quantization/fp8.py:126-203): Triton, the plain wheel's choice (no deep_gemm
        # in it, no VLLM_USE_FLASHINFER_MOE_FP8); 0.11.0 the same (quantization/fp8.py:440-466:
        # FlashInfer only with VLLM_USE_FLASHINFER_MOE_FP8, DeepGEMM only where deep_gemm
        # imports; :1069-1083 fused_experts -> Triton's fused_experts_impl); 0.13-0.16 not read.
        return TRITON_EP if key < (0, 13) else None
    return None


def vllm_ep_experts(fmt: str, *, version: str | None,
                    capability: tuple[int, int] | None) -> VllmEpExperts | None:
    """`vllm_moe_experts` of an EP rank on TP ranks (ep > 1, no DP ranks); None where the
    capability is not known."""
    if capability is None:
        return None
    return vllm_moe_experts(fmt, version=version, capability=capability, ep=2)
