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
    token into its output row."""

    name: str
    small_block_rows: int
    block_rows: int
    source: str
