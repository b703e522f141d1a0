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

TensorRT-LLM's CUTLASS MoE (kvplan.engines.moe_kernel.CutlassMoeKernel: vLLM's FlashInferExperts
from 0.20 on Hopper for 16-bit experts, from 0.17 for block FP8 under EP) permutes the rank's
own pairs P_l (P / EP on average under EP, P without) and finalizes them:

    permute     reads P_l x H, writes P_l x H                  (expandInputRows)
    quantize    reads P_l x H (bf16), writes P_l x H (fp8) + scales     (block FP8 only)
    GEMM1       reads P_l x H (or its FP8 copy), writes P_l x 2I
    activation  reads P_l x 2I, writes P_l x I
    quantize    reads P_l x I (bf16), writes P_l x I (fp8) + scales     (block FP8 only)
    GEMM2       reads P_l x I (or its FP8 copy), writes P_l x H
    finalize    reads P_l x H, writes T x H

the permute, activation and finalize kernels of their bytes beside their floors (MLP_KERNELS,
MOE_EXTRA_KERNELS), the quantize kernels' bytes with the experts op, the FLOPs the exact rows'
(`cutlass_traffic`). Which kernel runs, by format, release, GPU and layout, is the engine's answer
(kvplan.engines.moe_kernel.MoeKernels; `priced_kernel`).

Padded shapes. A kernel whose weights are zero-padded (FusedMoeKernel.pad_width / pad_hidden:
vLLM's Marlin MXFP4 kernel, I' = I rounded up to 128 on each rank, H' = H rounded up to 256)
computes and reads the padded matrices and writes padded activations: its FLOPs and weight
bytes grow by I' H' / (I H) and the traffic above is taken at I' and H' (`kernel_shape`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache, singledispatch
from typing import Protocol

from kvplan._util.memo import spec_cache
from kvplan._util.units import cdiv
from kvplan.capacity.weights import loaded_formats, routed_expert_bits
from kvplan.engines.moe_kernel import (
    BF16_EXPERTS,
    FP8_BLOCK_EXPERTS,
    MXFP4_EXPERTS,
    CutlassMoeKernel,
    FusedMoeKernel,
    MoeKernel,
    MoeKernels,
)
from kvplan.hardware.gpus import GPU
from kvplan.model.quant import FP32_BYTES
from kvplan.model.quant_formats import Fp8Block, Mxfp4
from kvplan.model.spec import ModelSpec
from kvplan.perf.layout import Layout

FP8_BYTES = 1  # an FP8 e4m3 activation


def routed_expert_formats(spec: ModelSpec, layers: Iterable[int],
                          quantization: str | None = None) -> dict[int, str | None]:
    """Each layer's routed experts' format as a MoeKernels selection takes it: BF16_EXPERTS in
    a 16-bit compute dtype (capacity.weights.routed_expert_bits), FP8_BLOCK_EXPERTS under a
    128 x 128 block-FP8 scheme with float32 scales, MXFP4_EXPERTS under MXFP4 (gpt-oss),
    None otherwise."""
    return dict(_routed_expert_formats(spec, tuple(layers), quantization))


@spec_cache(maxsize=1024)  # the cost model asks it every step: one answer per key, copied
def _routed_expert_formats(spec: ModelSpec, layers: tuple[int, ...],
                           quantization: str | None) -> dict[int, str | None]:
    from kvplan.weights.base import experts_module

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
                  gpu: GPU | None, ep: int, dp_ranks: int) -> MoeKernel | None:
    """The engine's fused MoE where this module prices a layer: the kernel the engine runs for
    experts of format `fmt` (routed_expert_formats) at `version` on `gpu`
    (kvplan.engines.moe_kernel.MoeKernels), on TP ranks, or under EP on TP ranks alone (no DP
    ranks: every rank holding every token, no all-to-all) where the kernel says what it does
    there (`priced_under_tp_ep`: Triton's walk of every pair, CUTLASS's own pairs). EP over DP
    ranks is not priced here."""
    if kernels is None or fmt is None:
        return None
    kernel = kernels.kernel(fmt, version=version, gpu=gpu, ep=ep, dp_ranks=dp_ranks)
    if kernel is None or (isinstance(kernel, CutlassMoeKernel) and not kernel.prices_traffic):
        return None
    return kernel if priced_layout(kernel, ep=ep, dp_ranks=dp_ranks) else None


def priced_layout(kernel: MoeKernel, *, ep: int, dp_ranks: int) -> bool:
    """Whether this module prices `kernel`'s traffic at this layout (`priced_kernel`): TP ranks,
    or EP on TP ranks alone where the kernel says what it does there."""
    return ep == 1 or (kernel.priced_under_tp_ep and dp_ranks == 1)


def fitted_fp8_experts(kernels: MoeKernels | None, *, fmt: str | None, version: str | None,
                       gpu: GPU | None, ep: int, dp_ranks: int) -> bool:
    """Whether the engine's fused MoE for experts of format `fmt` computes its block-FP8 grouped
    GEMMs at the fitted FP8 MoE fraction (`fitted_fp8` of either kernel type: TensorRT-LLM's
    CUTLASS MoE on Hopper, kvplan.engines.trtllm.moe_kernel; vLLM's block-FP8 kernels behind
    VllmMoeKernels.fp8_fitted), whatever the layout."""
    if kernels is None or fmt != FP8_BLOCK_EXPERTS:
        return False
    kernel = kernels.kernel(fmt, version=version, gpu=gpu, ep=ep, dp_ranks=dp_ranks)
    return kernel is not None and kernel.fitted_fp8


def layer_kernel(kernels: MoeKernels | None, *, fmt: str | None, version: str | None,
                 gpu: GPU | None, layout: Layout) -> tuple[MoeKernel | None, bool]:
    """A MoE layer's fused MoE where this module prices its activations (`priced_kernel`), and
    whether its grouped GEMMs run at the fitted FP8 MoE fraction (`fitted_fp8_experts`)."""
    ep, dp = layout.ep, layout.dp_ranks
    return (priced_kernel(kernels, fmt=fmt, version=version, gpu=gpu, ep=ep, dp_ranks=dp),
            fitted_fp8_experts(kernels, fmt=fmt, version=version, gpu=gpu, ep=ep, dp_ranks=dp))


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


@dataclass(frozen=True)
class MoeTraffic:
    """What a fused MoE costs beyond its weights and exact FLOPs: the grouped GEMMs' FLOPs
    factor (`pad`) and their activation bytes (`gemm_bytes`, joining their weights), the bytes
    of its kernels counted at a floor each besides the experts op (`small_kernel_bytes`: the
    activation, the sum / finalize, the permute) and of those whose floors are the experts op's
    (`experts_kernel_bytes`: FP8's quantize kernels)."""

    pad: float
    gemm_bytes: float
    small_kernel_bytes: tuple[float, ...]
    experts_kernel_bytes: tuple[float, ...] = ()


@singledispatch
def moe_traffic(kernel: MoeKernel, *, tokens: int, experts: int, top_k: int, hidden: int,
                width: int, act_bytes: int, ep: int) -> MoeTraffic:
    """`kernel`'s traffic for `tokens` tokens routed to `top_k` of `experts` experts, hidden
    size `hidden`, the rank's intermediate columns `width`, at expert parallelism `ep` (module
    docstring), one rule per kernel type."""
    raise TypeError(f"no traffic rule for {type(kernel).__name__}")


@moe_traffic.register
def triton_traffic(kernel: FusedMoeKernel, *, tokens: int, experts: int, top_k: int,
                   hidden: int, width: int, act_bytes: int, ep: int) -> MoeTraffic:
    """The sort-and-pad kernel: padded rows, every pair's activations (module docstring)."""
    q = kernel.act_quant_group
    quant = () if q is None else tuple(
        float(b) for b in quantize_bytes(tokens, top_k, hidden, width, act_bytes, q))
    return MoeTraffic(
        pad=padded_rows_factor(kernel, tokens, experts, top_k),
        gemm_bytes=gemm_activation_bytes(tokens, top_k, hidden, width, act_bytes, ep, q),
        small_kernel_bytes=(activation_bytes(tokens, top_k, width, act_bytes),
                            sum_bytes(tokens, top_k, hidden, act_bytes)),
        experts_kernel_bytes=quant)


@moe_traffic.register
def cutlass_traffic(kernel: CutlassMoeKernel, *, tokens: int, experts: int, top_k: int,
                    hidden: int, width: int, act_bytes: int, ep: int) -> MoeTraffic:
    """TensorRT-LLM's CUTLASS MoE over the rank's own P_l = T x top-k / EP pairs (module
    docstring): permute, GEMM1, activation, GEMM2, finalize; block FP8's two quantize kernels
    over the permuted rows. No padding priced (CutlassMoeKernel: the tiles are the tuner's)."""
    own = tokens * top_k / ep
    q = kernel.act_quant_group
    quant: tuple[float, ...] = ()
    if q is not None:
        quant = tuple(own * (act_bytes * cols + input_row_bytes(cols, act_bytes, q))
                      for cols in (hidden, width))
    return MoeTraffic(
        pad=1.0,
        gemm_bytes=own * (input_row_bytes(hidden, act_bytes, q) + act_bytes * 2 * width
                          + input_row_bytes(width, act_bytes, q) + act_bytes * hidden),
        small_kernel_bytes=(act_bytes * own * 2 * hidden,  # permute
                            act_bytes * own * 3 * width,  # activation
                            act_bytes * (own * hidden + tokens * hidden)),  # finalize
        experts_kernel_bytes=quant)


def kernel_shape(kernel: MoeKernel | None, width: int, hidden: int) -> tuple[int, int, float]:
    """(width, hidden, their product over the exact one) a layer's experts run at on `kernel`:
    a kernel with padded weights (FusedMoeKernel.pad_width / pad_hidden: vLLM's Marlin MXFP4)
    computes, reads and writes its padded shapes; any other (or none) the exact ones."""
    if not isinstance(kernel, FusedMoeKernel):
        return width, hidden, 1.0
    w, h = kernel.padded(width, hidden)
    return w, h, w * h / (width * hidden)


class _Step(Protocol):
    def over_floor(self, name: str, nbytes: float) -> None: ...


def fused_moe_traffic(step: _Step, kernel: MoeKernel, *, tokens: int, experts: int,
                      top_k: int, hidden: int, width: int, act_bytes: int, ep: int
                      ) -> tuple[float, float]:
    """Charge `step` (kvplan.perf.roofline's) with the kernel's small kernels' bytes and its
    quantize kernels' beyond their floors, and return the GEMMs' padded-rows factor and their
    activation bytes (`moe_traffic`)."""
    t = moe_traffic(kernel, tokens=tokens, experts=experts, top_k=top_k, hidden=hidden,
                    width=width, act_bytes=act_bytes, ep=ep)
    for nbytes in t.small_kernel_bytes:
        step.over_floor("small_kernels", nbytes)
    for nbytes in t.experts_kernel_bytes:
        step.over_floor("experts", nbytes)
    return t.pad, t.gemm_bytes
