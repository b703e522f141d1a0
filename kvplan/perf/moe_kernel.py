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

Block-FP8 experts (a kernel with `act_quant_group`, q = 128: vLLM's TritonExperts on block FP8,
kvplan.engines.vllm.moe_kernel): each GEMM reads an FP8 copy of its activations, 1 B an element
and a 4-B float32 scale a group of q, made by a quantize kernel of its own that reads the bf16
tensor and writes the copy (`quantize_bytes`):

    quantize a1  reads T x H (bf16), writes T x H (fp8) + T x H / q scales
    w13 GEMM     reads the T x H FP8 input and scales once, writes P x 2I (bf16)
    activation   as above (bf16)
    quantize a2  reads P x I (bf16), writes P x I (fp8) + P x I / q scales (every pair's)
    w2 GEMM      reads P x I FP8 and scales (the rank's own pairs under EP), writes P x H
    moe_sum      as above

The two quantize kernels' floors are the experts op's (a w8a8 GEMM counts two kernels:
kvplan.perf.roofline); their bytes beyond a floor each join the experts op (`fused_moe_traffic`).
Which kernel runs, by format, release, GPU and layout, is the engine's answer
(kvplan.engines.moe_kernel.MoeKernels; `priced_kernel`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache
from typing import Protocol

from kvplan._util.units import cdiv
from kvplan.capacity.weights import loaded_formats, routed_expert_bits
from kvplan.engines.moe_kernel import (
    BF16_EXPERTS,
    FP8_BLOCK_EXPERTS,
    MXFP4_EXPERTS,
    FusedMoeKernel,
    MoeKernels,
)
from kvplan.hardware.gpus import GPU
from kvplan.model.quant import FP32_BYTES
from kvplan.model.quant_formats import Fp8Block, Mxfp4
from kvplan.model.spec import ModelSpec

FP8_BYTES = 1  # an FP8 e4m3 activation


def routed_expert_formats(spec: ModelSpec, layers: Iterable[int],
                          quantization: str | None = None) -> dict[int, str | None]:
    """Each layer's routed experts' format as a MoeKernels selection takes it: BF16_EXPERTS in
    a 16-bit compute dtype (capacity.weights.routed_expert_bits), FP8_BLOCK_EXPERTS under a
    128 x 128 block-FP8 scheme with float32 scales, MXFP4_EXPERTS under MXFP4 (gpt-oss),
    None otherwise."""
    from kvplan.weights.base import experts_module

    layers = list(layers)
    bits = routed_expert_bits(spec, layers, quantization)
    quant = loaded_formats(spec, quantization)[0] if None in bits.values() else None
    out: dict[int, str | None] = {}
    for i in layers:
        scheme = quant.scheme_for(experts_module(spec, i)) if quant and bits[i] is None else None
        block = isinstance(scheme, Fp8Block) and (
            scheme.block_n, scheme.block_k, scheme.scale_bytes) == (128, 128, FP32_BYTES)
        out[i] = (BF16_EXPERTS if bits[i] == 16 else FP8_BLOCK_EXPERTS if block
                  else MXFP4_EXPERTS if isinstance(scheme, Mxfp4) else None)
    return out


def priced_kernel(kernels: MoeKernels | None, *, fmt: str | None, version: str | None,
                  gpu: GPU | None, ep: int, dp_ranks: int) -> FusedMoeKernel | None:
    """The engine's fused MoE where this module prices a layer: the kernel the engine runs for
    experts of format `fmt` (routed_expert_formats) at `version` on `gpu`
    (kvplan.engines.moe_kernel.MoeKernels), on TP ranks, or under EP on TP ranks alone (no DP
    ranks: every rank holding every token, no all-to-all) where the kernel walks every pair
    (`ep_all_pairs`). EP over DP ranks is not priced here."""
    if kernels is None or fmt is None:
        return None
    kernel = kernels.kernel(fmt, version=version, gpu=gpu, ep=ep, dp_ranks=dp_ranks)
    if kernel is None:
        return None
    if ep == 1 or (kernel.ep_all_pairs and dp_ranks == 1):
        return kernel
    return None


def block_rows(kernel: FusedMoeKernel, tokens: int, experts: int, top_k: int = 1) -> int:
    """The BLOCK_SIZE_M of a call of `tokens` tokens over `experts` routed experts, `top_k` a
    token (used only by a kernel that sizes its block by the rows per expert,
    FusedMoeKernel.load_block_rows)."""
    if kernel.load_block_rows:
        per_expert = tokens * top_k / experts
        return next((b for b in kernel.load_block_rows if per_expert / b < kernel.load_below),
                    kernel.load_block_rows[-1])
    limit = experts if kernel.small_up_to_tokens is None else kernel.small_up_to_tokens
    return kernel.small_block_rows if tokens <= limit else kernel.block_rows


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
    block = block_rows(kernel, tokens, experts, top_k)
    p = top_k / experts
    return block * expected_blocks(tokens, p, block) / (tokens * p)


def input_row_bytes(cols: int, act_bytes: int, quant_group: int | None) -> float:
    """One row of a GEMM's activation input as the GEMM reads it: `cols` elements of
    `act_bytes`, or (`quant_group`) their FP8 copy and a float32 scale a group."""
    if quant_group is None:
        return act_bytes * cols
    return FP8_BYTES * cols + cdiv(cols, quant_group) * FP32_BYTES


def gemm_activation_bytes(tokens: int, top_k: int, hidden: int, width: int,
                          act_bytes: int = 2, ep: int = 1,
                          quant_group: int | None = None) -> float:
    """Activation bytes the two grouped GEMMs move besides their weights, `width` the experts'
    intermediate columns on the rank: the input read once, P x 2I written, P x I read (the
    rank's own pairs, P / `ep`, under EP), P x H written (zeros for other ranks' pairs); the
    reads of an FP8 copy where the kernel quantizes (`quant_group`)."""
    pairs = tokens * top_k
    return (tokens * input_row_bytes(hidden, act_bytes, quant_group)
            + act_bytes * pairs * 2 * width
            + pairs / ep * input_row_bytes(width, act_bytes, quant_group)
            + act_bytes * pairs * hidden)


def quantize_bytes(tokens: int, top_k: int, hidden: int, width: int, act_bytes: int,
                   quant_group: int) -> tuple[int, int]:
    """The two quantize kernels' bytes: the layer's input (T x H) and the gated product of
    every pair (P x I), each read in bf16 and written as FP8 with its scales."""
    def one(rows: int, cols: int) -> int:
        return rows * (act_bytes * cols + FP8_BYTES * cols + cdiv(cols, quant_group) * FP32_BYTES)

    return one(tokens, hidden), one(tokens * top_k, width)


def activation_bytes(tokens: int, top_k: int, width: int, act_bytes: int = 2) -> int:
    """The gated activation: P x 2I read, P x I written."""
    return act_bytes * tokens * top_k * 3 * width


def sum_bytes(tokens: int, top_k: int, hidden: int, act_bytes: int = 2) -> int:
    """moe_sum: P x H read, T x H written."""
    return act_bytes * (tokens * top_k * hidden + tokens * hidden)


class _Step(Protocol):
    def over_floor(self, name: str, nbytes: float) -> None: ...


def fused_moe_traffic(step: _Step, kernel: FusedMoeKernel, *, tokens: int, experts: int,
                      top_k: int, hidden: int, width: int, act_bytes: int, ep: int
                      ) -> tuple[float, float]:
    """Charge `step` (kvplan.perf.roofline's) with the kernel's activation, sum and quantize
    kernels' bytes beyond their floors, and return the GEMMs' padded-rows factor and their
    activation bytes (module docstring)."""
    step.over_floor("small_kernels", activation_bytes(tokens, top_k, width, act_bytes))
    step.over_floor("small_kernels", sum_bytes(tokens, top_k, hidden, act_bytes))
    q = kernel.act_quant_group
    if q is not None:
        for nbytes in quantize_bytes(tokens, top_k, hidden, width, act_bytes, q):
            step.over_floor("experts", nbytes)
    return (padded_rows_factor(kernel, tokens, experts, top_k),
            gemm_activation_bytes(tokens, top_k, hidden, width, act_bytes, ep, q))
