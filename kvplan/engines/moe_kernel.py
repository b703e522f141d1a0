"""An engine's fused-MoE kernel as plain data (`FusedMoeKernel`), and the engine's choice of it by
expert format, release, GPU and layout (`MoeKernels`): the engines declare theirs in
CostTraits.moe_kernel (kvplan.engines.base), kvplan.perf.moe_kernel prices its padded rows and
the activations it writes and reads between its kernels."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kvplan.hardware.gpus import GPU

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


class MoeKernels(Protocol):
    """An engine's choice of fused-MoE kernel (CostTraits.moe_kernel)."""

    def kernel(self, fmt: str | None, *, version: str | None, gpu: GPU | None, ep: int,
               dp_ranks: int) -> FusedMoeKernel | None:
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

    by_format: tuple[tuple[str, FusedMoeKernel], ...] = field(default=())

    def kernel(self, fmt: str | None, *, version: str | None, gpu: GPU | None, ep: int,
               dp_ranks: int) -> FusedMoeKernel | None:
        return dict(self.by_format).get(fmt) if fmt is not None else None
