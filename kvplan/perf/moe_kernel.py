"""What an engine's fused MoE costs beyond its experts' weights and exact FLOPs
(kvplan.engines.moe_kernel.FusedMoeKernel, declared by the engine: vLLM's Triton fused_moe,
kvplan.engines.vllm.moe_kernel, which names the code).

Padded rows. Each of the n routed experts receives X ~ Binomial(T, k / n) of a step's T tokens
(uniform routing, k distinct experts a token); the kernel pads each expert's rows to a multiple
of its block of B rows and its MMAs run over whole blocks, so the grouped GEMMs compute

    B x E[ceil(X / B)]   rows per expert, against   E[X] = T k / n,

and their FLOPs are the exact ones times `padded_rows_factor`. Experts no token chose get no
block. The factor is near 1 where each expert holds many blocks' worth of rows and large where
it holds a few rows (a decode step, or many small experts), but only a compute-bound call feels
it: the weights cross HBM once whatever the padding.

Activations between the kernels (bf16, `act_bytes` each), for P = T k (token, expert) pairs on a
rank whose experts are I columns wide (the intermediate size over the TP ranks, whole under
EP), hidden size H:

    w13 GEMM    reads the T x H input once, writes P x 2I      (intermediate_cache1)
    activation  reads P x 2I, writes P x I                     (intermediate_cache2)
    w2 GEMM     reads P x I, writes P x H                      (intermediate_cache3)
    moe_sum     reads P x H, writes T x H                      (the layer's output)

Under vLLM's TP-attention EP every rank holds every token and its GEMMs write zeros for the
pairs of other ranks' experts (fused_moe.py write_zeros_to_output; kvplan.engines.vllm.moe_ep,
read in 0.12.0-0.20.0), so P is all T k pairs either way (a kernel that declares it,
FusedMoeKernel.ep_all_pairs; `priced_kernel`): only the w2 GEMM's read of the gated product is
the rank's own pairs', P / EP of them on average (every expert equally likely), and the FLOPs
are the rank's experts' padded rows (the same factor: every expert's list is padded alike).
The two GEMMs' bytes join their weights (`gemm_activation_bytes`); the activation and the sum
are kernels of their own (`activation_bytes`, `sum_bytes`), each at least a floor.
"""

from __future__ import annotations

import math
from functools import lru_cache

from kvplan.engines.moe_kernel import FusedMoeKernel


def priced_kernel(kernel: FusedMoeKernel | None, *, bits: int | None, ep: int,
                  dp_ranks: int) -> FusedMoeKernel | None:
    """The engine's fused MoE where this module prices a layer: 16-bit experts (`bits`, the
    layer's routed experts' weight bits: capacity.weights.routed_expert_bits), on TP ranks, or
    under EP on TP ranks alone (no DP ranks: every rank holds every token, no all-to-all) where
    the kernel walks every pair (`ep_all_pairs`). EP over DP ranks is not priced here."""
    if kernel is None or bits != 16:
        return None
    if ep == 1 or (kernel.ep_all_pairs and dp_ranks == 1):
        return kernel
    return None


def block_rows(kernel: FusedMoeKernel, tokens: int, experts: int) -> int:
    """The BLOCK_SIZE_M of a call of `tokens` tokens over `experts` routed experts."""
    return kernel.small_block_rows if tokens <= experts else kernel.block_rows


@lru_cache(maxsize=4096)
def expected_blocks(tokens: int, p: float, block: int) -> float:
    """E[ceil(X / block)] for X ~ Binomial(tokens, p): the sum over j >= 0 of P(X > j x block),
    from the pmf in log space (exact to float rounding; terms beyond 12 standard deviations of
    the mean, below 1e-30, are left out)."""
    if tokens <= 0 or p <= 0:
        return 0.0
    if p >= 1:
        return float(math.ceil(tokens / block))
    mean, sd = tokens * p, math.sqrt(tokens * p * (1 - p))
    lo, hi = max(0, int(mean - 12 * sd) - 1), min(tokens, int(mean + 12 * sd) + 2)
    base = math.lgamma(tokens + 1)
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for x in range(max(lo, 1), hi + 1):
        pmf = math.exp(base - math.lgamma(x + 1) - math.lgamma(tokens - x + 1)
                       + x * lp + (tokens - x) * lq)
        total += pmf * math.ceil(x / block)
    return total


def padded_rows_factor(kernel: FusedMoeKernel, tokens: int, experts: int, top_k: int) -> float:
    """The grouped GEMMs' rows over the exact (token, expert) pairs, for `tokens` tokens routed
    to `top_k` of `experts` experts (module docstring)."""
    if tokens <= 0:
        return 1.0
    block = block_rows(kernel, tokens, experts)
    p = top_k / experts
    return block * expected_blocks(tokens, p, block) / (tokens * p)


def gemm_activation_bytes(tokens: int, top_k: int, hidden: int, width: int,
                          act_bytes: int = 2, ep: int = 1) -> float:
    """Activation bytes the two grouped GEMMs move besides their weights, `width` the experts'
    intermediate columns on the rank: the input read once, P x 2I written, P x I read (the
    rank's own pairs, P / `ep`, under EP), P x H written (zeros for other ranks' pairs)."""
    pairs = tokens * top_k
    return act_bytes * (tokens * hidden + pairs * 2 * width + pairs * width / ep
                        + pairs * hidden)


def activation_bytes(tokens: int, top_k: int, width: int, act_bytes: int = 2) -> int:
    """The gated activation: P x 2I read, P x I written."""
    return act_bytes * tokens * top_k * 3 * width


def sum_bytes(tokens: int, top_k: int, hidden: int, act_bytes: int = 2) -> int:
    """moe_sum: P x H read, T x H written."""
    return act_bytes * (tokens * top_k * hidden + tokens * hidden)
