"""An engine's fused-MoE kernel as plain data (`FusedMoeKernel`): the engines declare theirs in
CostTraits.moe_kernel (kvplan.engines.base), kvplan.perf.moe_kernel prices its padded rows and
the activations it writes and reads between its kernels."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class FusedMoeKernel:
    """A Triton-style fused MoE, as plain data: the routed (token, expert) pairs are sorted by
    expert and each expert's list padded to a multiple of its grouped GEMMs' BLOCK_SIZE_M
    (`small_block_rows` for a call of at most as many tokens as experts, else `block_rows`),
    whose MMAs run over whole blocks; the w13 GEMM writes its output for every pair, an
    activation kernel reads it and writes the half-width gated product, the w2 GEMM reads that
    and writes one hidden-size row per pair, and a sum kernel reduces the top-k rows of each
    token into its output row.

    `ep_all_pairs`: under expert parallelism on TP ranks (no DP, every rank holding every
    token) the kernel still walks every (token, expert) pair of the step, computing only its own
    experts' and writing zeros for the others' rows of both GEMMs' outputs, so the activations
    between its kernels are EP 1's while the FLOPs and weights are the rank's (vLLM's Triton
    fused_moe: kvplan.engines.vllm.moe_ep). False: not priced under EP."""

    name: str
    small_block_rows: int
    block_rows: int
    source: str
    ep_all_pairs: bool = False
