"""An engine's fused-MoE kernel as plain data, one type per kernel family (`FusedMoeKernel`:
a Triton-style sort-and-pad kernel; `CutlassMoeKernel`: TensorRT-LLM's CUTLASS MoE, which
permutes the rows and finalizes them), and the engine's choice of it by expert format,
release, GPU and layout (`MoeKernels`): the engines declare theirs in CostTraits.moe_kernel
(kvplan.engines.base), kvplan.perf.moe_kernel prices its padded rows and the activations it
writes and reads between its kernels."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kvplan.hardware.gpus import GPU
from kvplan.model.quant import round_up

# The routed experts' formats a selection answers for (kvplan.perf.moe_kernel.
# routed_expert_formats): held in a 16-bit compute dtype, no quantization scheme over them; or
# FP8 e4m3 in 128 x 128 blocks with dynamic per-token-group FP8 activations (w8a8 block FP8,
# DeepSeek-V3's / MiniMax-M2's weight_block_size [128, 128]).
BF16_EXPERTS = "16-bit"
FP8_BLOCK_EXPERTS = "fp8-block"
# OCP MXFP4 experts (gpt-oss: kvplan.model.quant_formats.Mxfp4), 16-bit activations.
MXFP4_EXPERTS = "mxfp4"


@dataclass(frozen=True, kw_only=True)
class FusedMoeKernel:
    """A Triton-style fused MoE, as plain data: the routed (token, expert) pairs are sorted by
    expert and each expert's list padded to a multiple of its grouped GEMMs' BLOCK_SIZE_M
    (`small_block_rows` for a call of at most `small_up_to_tokens` tokens, None: as many tokens
    as experts; else `block_rows`), whose MMAs run over whole blocks; the w13 GEMM writes its
    output for every pair, an activation kernel reads it and writes the half-width gated
    product, the w2 GEMM reads that and writes one hidden-size row per pair, and a sum kernel
    reduces the top-k rows of each token into its output row.

    `act_quant_group`: None, the GEMMs read 16-bit activations; else the activations are
    quantized to FP8 (1 B an element) in groups of this many elements, an fp32 scale a group,
    by a kernel of their own before each GEMM (the layer's input, and the gated product of
    every pair), and each GEMM reads the FP8 copy and its scales.

    `ep_all_pairs`: under expert parallelism on TP ranks (no DP, every rank holding every
    token) the kernel still walks every (token, expert) pair of the step, computing only its own
    experts' and writing zeros for the others' rows of both GEMMs' outputs, so the activations
    between its kernels are EP 1's while the FLOPs and weights are the rank's (vLLM's Triton
    fused_moe: kvplan.engines.vllm.moe_ep). False: not priced under EP.
    `load_block_rows`: where set, BLOCK_SIZE_M follows the mean rows per expert instead of
    the tokens: the first b of these with T x top-k / n / b < `load_below`, else the last
    (vLLM's fused_marlin_moe: kvplan.engines.vllm.moe_kernel)."""

    name: str
    small_block_rows: int
    block_rows: int
    source: str
    ep_all_pairs: bool = False
    small_up_to_tokens: int | None = None
    act_quant_group: int | None = None
    load_block_rows: tuple[int, ...] = ()
    load_below: float = 0.0
    mma_sync: bool = False
    # Whether its block-FP8 grouped GEMMs run at the fitted FP8 MoE fraction
    # (kvplan.perf.efficiency.FP8_MOE_GEMM_FIT, whose H100 tables include vLLM's Triton
    # fused_moe) in place of the dense FP8 GEMMs' (Efficiency.experts_fraction; as
    # CutlassMoeKernel.fitted_fp8). vLLM's behind VllmMoeKernels.fp8_fitted (vllmfp8moe61).
    fitted_fp8: bool = False
    # The multiples its weights' per-rank intermediate width and hidden size are zero-padded to,
    # its grouped GEMMs computing (and reading) the padded shapes (1: not padded): vLLM's Marlin
    # MXFP4 kernel (kvplan.engines.vllm.moe_kernel VLLM_MARLIN_MXFP4_MOE; tpslope66).
    pad_width: int = 1
    pad_hidden: int = 1

    @property
    def priced_under_tp_ep(self) -> bool:
        """Whether kvplan prices it under EP on TP ranks (every rank holding every token)."""
        return self.ep_all_pairs

    def padded(self, width: int, hidden: int) -> tuple[int, int]:
        """The (per-rank intermediate width, hidden size) its GEMMs run at for experts of
        `width` x `hidden` (`pad_width`, `pad_hidden`)."""
        return round_up(width, self.pad_width), round_up(hidden, self.pad_hidden)


@dataclass(frozen=True, kw_only=True)
class CutlassMoeKernel:
    """TensorRT-LLM's CUTLASS fused MoE (CutlassMoeFCRunner::runMoe; FlashInfer ships it as
    cutlass_fused_moe, vLLM runs it as FlashInferExperts), as plain data. Non-min-latency path
    (flashinfer 0.6.8.post1 csrc/fused_moe/cutlass_backend/cutlass_fused_moe_kernels.cuh):
    a prologue sorts the rank's (token, expert) pairs by expert (fusedBuildExpertMapsSortFirst
    Token, 3723; other ranks' experts sorted past the local ones, 323-330);
    expandInputRowsKernelLauncher (3761; the kernel, 1363-1420, walks the permuted rows up to
    expert_first_token_offset[num_experts_per_node]) copies each local pair's input row into
    permuted_data_ (P_l x H read and written); GEMM1 (3801) reads those rows and writes the
    gated GEMM's P_l x 2I output, which doActivation reads, writing P_l x I (gemm1, 2953-3010:
    the TMA warp-specialized path; BlockScaleFC1 2815-2843 likewise); GEMM2 (3821) reads
    P_l x I and writes P_l x H (3203-3227), and finalizeMoeRoutingKernelLauncher reads them and
    writes each token's output row, T x H, skipping other ranks' experts (3249-3262, the kernel
    1690-1697; BlockScaleFC2 2848-2872). P_l: the rank's own pairs
    (T x top-k / EP on average): under EP it neither walks nor writes other ranks' pairs.

    `act_quant_group`: None, the GEMMs read the 16-bit rows; else the block-scale runner
    (DeepSeek FP8 blocks) quantizes each GEMM's input rows, the permuted P_l x H and the gated
    P_l x I, to FP8 with a float32 scale a group of this many elements, by a kernel of its own
    (fp8_blockscale_gemm_kernel.cuh fp8_grouped_gemm_run: scale_1x128_kernel, then the GEMM
    over the FP8 copy).

    Its grouped GEMMs' tiles: block FP8 not tuned (flashinfer_cutlass_fused_moe_binding.cu
    setRunnerProfiles 797-804 sets one tactic; the block-scale runner's GEMM picks its own tiles,
    fp8_grouped_gemm_run's DeepGEMM dispatch or Fp8Gemm), 16-bit the tactic FlashInfer's autotuner
    measured fastest (among TMA warp-specialized tiles, their finalize-fused twins, which drop
    GEMM2's P_l x H round trip, and Ampere tiles with a fused gated activation, which drop
    GEMM1's P_l x 2I one: moe_gemm_template_dispatch.h getConfigs 540-545, 635-650, 706-721).
    vLLM 0.20.0 tunes it at its default optimization level (config/vllm.py:336 O2, whose table
    sets enable_flashinfer_autotune). The bytes above are the first, untuned tactic's
    (setRunnerProfiles 807-812: the first TMA warp-specialized configuration, no fusion), the
    most any tactic moves; the FLOPs are the exact rows' (no padding: the tiles' M is the
    tuner's, not read). Its per-call workspace (kvplan.engines.vllm.moe_ep) is not sized, and
    vLLM's CPU build (the oracle) does not run this CUDA path, so no oracle checks it."""

    name: str
    source: str
    act_quant_group: int | None = None
    # Under EP on TP ranks every rank holds every token and computes its own pairs only.
    priced_under_tp_ep: bool = True
    ep_all_pairs: bool = False
    # Its first, untuned tactic on Hopper is a TMA warp-specialized (wgmma) tile (docstring);
    # the tuner's Ampere tiles, mma.sync, are not priced apart.
    mma_sync: bool = False
    # Whether kvplan prices the activations it moves (kvplan.perf.moe_kernel.priced_kernel);
    # False: its weights and exact FLOPs only, as for an engine that declares no kernel.
    prices_traffic: bool = True
    # Whether its block-FP8 grouped GEMMs run at the fitted FP8 MoE fraction
    # (kvplan.perf.efficiency.FP8_MOE_GEMM_FIT, aiconfigurator's H100 fused-MoE tables, whose
    # TensorRT-LLM rows are this kernel's) in place of the dense FP8 GEMMs' (Efficiency.
    # experts_fraction), wherever the engine runs it, whatever the layout.
    fitted_fp8: bool = False


MoeKernel = FusedMoeKernel | CutlassMoeKernel


class MoeKernels(Protocol):
    """An engine's choice of fused-MoE kernel (CostTraits.moe_kernel)."""

    def kernel(self, fmt: str | None, *, version: str | None, gpu: GPU | None, ep: int,
               dp_ranks: int) -> MoeKernel | None:
        """The kernel the engine `version` (None: the newest) runs for routed experts of format
        `fmt` (BF16_EXPERTS, FP8_BLOCK_EXPERTS; None: another) on `gpu` (None: not known) at
        expert parallelism `ep` over `dp_ranks` DP ranks; None where it runs a kernel kvplan
        does not price (the experts' weights and exact FLOPs only)."""
        ...


@dataclass(frozen=True)
class FixedMoeKernels:
    """One kernel per format whatever the release, GPU or layout: a backend forced by the
    caller (vLLM's --moe-backend, or a benchmark that calls the kernel itself, as
    aiconfigurator's vLLM collector calls fused_moe: tests/data/moe_op/SOURCES.md)."""

    by_format: tuple[tuple[str, MoeKernel], ...] = field(default=())

    def kernel(self, fmt: str | None, *, version: str | None, gpu: GPU | None, ep: int,
               dp_ranks: int) -> MoeKernel | None:
        return dict(self.by_format).get(fmt) if fmt is not None else None
