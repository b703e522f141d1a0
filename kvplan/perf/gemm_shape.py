"""A GEMM's achievable fraction of the bf16 peak by its shape, read from a published table of
measured H100 GEMMs (issue 30): an OPT-IN counterfactual to the one `Efficiency.gemm` fraction.

kvplan charges every GEMM at one fraction of the datasheet peak (kvplan.perf.efficiency: gemm
0.70, DeepGEMM's best H800 shapes). A GEMM's throughput grows with its size: more rows (M) and a
larger weight (N x K) fill more of the 132 SMs' tiles and amortise each tile's prologue and tail.
`GemmShapeEfficiency` gives the fraction of a GEMM of M rows and N x K weight elements,
interpolated in a published sweep; `Efficiency(gemm_shape=...)` makes kvplan.perf.roofline charge
the bf16 weight GEMMs (attention projections, dense MLP, recurrent projections, lm_head) with
it. None (the default everywhere) is today's behaviour, so every output is unchanged unless a
caller opts in (tests/benches/gemm_shape_bench.py does, as a counterfactual).

The table (`H100_BF16_GEMM_SHAPE`, its numbers in gemm_shape.json beside this module): OpenXLA's
default matmul performance table, key "sm_90", entries b = 1, "bf16xbf16->bf16"
(xla/service/gpu/model/default_matmul_perf_table.txtpb at ROCm/xla dc66032216, 2026-08-19; the sm_90
rows unchanged since openxla/xla 71feeddf7c, 2025-10-21, "Update latency hiding scheduler cost
models for B200/H100 FP8 matmul", and before it the bf16 ones of b2766086ec, 2025-08-12). Each value
is flops / s = 2 M N K / the median CUPTI kernel time of 5 runs of the XLA-compiled (autotuned
cuBLAS / Triton) dot, launch time excluded (xla/tools/matmul_perf_table_gen.cc: kNumProfilingRuns =
5, KernelTracer::getMedianKernelTimeNs). M, N, K each 256 .. 4096 in powers of 2, 125 shapes; the
card is "sm_90" (Google's H100 machines, A3, are H100 SXM 80GB: an assumption, the table does not
name the SKU). Its fractions of the H100 SXM's 989.5 dense bf16 TFLOPS run from 0.007 (256^3, 5.0
us) to 0.788 (4096^3: 780.2 TFLOPS). Its FP8 column ("f8e4m3fnxf8e4m3fn->bf16") reaches 2,425 TFLOPS
at 4096^3, 1.23 x the 1,979 dense FP8 peak, which no kernel can: it is not used, and FP8 (w8a8)
GEMMs keep `Efficiency.fp8_gemm` / `gemm`.

Reading it by (M, N x K): for each M, the shapes with the same N x K (up to five N : K aspects)
are merged as the mean of their kernel times (the harmonic mean of their throughputs), a grid of
5 M x 9 N x K points (2^16 .. 2^24 elements); between them, bilinear in log2 M and log2 (N x K).
The aspects of one N x K differ by up to 1.4x (M = 1024, N x K = 2^20: 0.19 at 256 x 4096,
0.26 at 1024 x 1024), so the merge is the table's resolution at a known weight, not finer.
Outside the grid the fraction is the edge's (no extrapolation): below 256 rows, the 256-row
fraction (a decode GEMM is then charged its weight bytes: the roofline's max); above 4096 rows or
2^24 weight elements (hidden 8,192's GEMMs: 5,120 x 8,192 and more per TP-2 rank), the largest
measured, 0.760-0.788. An operation of several kernels (kvplan.perf.roofline: fused QKV and
o_proj; gate_up and down) is charged at the fraction of its mean kernel, N x K = its weight
elements / kernels.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kvplan._util.errors import InputError
from kvplan._util.lazy import LazyMapping

# OpenXLA's sm_90 "bf16xbf16->bf16" entries with b = 1, in TFLOPS (the table's flops / s / 1e12,
# rounded to 0.1): `tflops[m][n][k]` over `sizes` (256 .. 4096) in the data file beside this
# module, with its source (module docstring); read on first use.
DATA_FILE = Path(__file__).with_name("gemm_shape.json")

# The preset the table was measured on (an assumption: the module docstring); its dense bf16 peak
# (gpus.json H100-80GB bf16_dense, 989.5 TFLOPS) is the fractions' denominator.
_H100 = "H100-80GB"


@dataclass(frozen=True, kw_only=True)
class GemmShapeEfficiency:
    """A GEMM's fraction of the peak by rows (M) and weight elements (N x K): `fractions[i][j]`
    at `rows[i]` and `weights[j]`, bilinear in log2 of both between them, the edge's outside."""

    rows: tuple[int, ...]
    weights: tuple[int, ...]
    fractions: tuple[tuple[float, ...], ...]
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.rows) < 2 or len(self.weights) < 2:
            raise InputError("gemm shape table: needs at least 2 rows and 2 weight points")
        for name in ("rows", "weights"):
            points = getattr(self, name)
            if any(b <= a for a, b in zip(points, points[1:], strict=False)) or points[0] <= 0:
                raise InputError(f"gemm shape table: {name} must be positive and increasing")
        if len(self.fractions) != len(self.rows) or any(
                len(line) != len(self.weights) for line in self.fractions):
            raise InputError("gemm shape table: fractions must be rows x weights")
        if any(not 0 < f <= 1 for line in self.fractions for f in line):
            raise InputError("gemm shape table: every fraction must be in (0, 1]")

    def fraction(self, rows: float, weights: float) -> float:
        """The fraction of the peak of a GEMM of `rows` x `weights` (N x K) elements."""
        i, u = _locate(self.rows, rows)
        j, v = _locate(self.weights, weights)
        f = self.fractions
        return ((1 - u) * (1 - v) * f[i][j] + u * (1 - v) * f[i + 1][j]
                + (1 - u) * v * f[i][j + 1] + u * v * f[i + 1][j + 1])


def _locate(points: tuple[int, ...], x: float) -> tuple[int, float]:
    """The cell of `points` holding x and x's place in it (0 .. 1, in log2), clamped."""
    if x <= points[0]:
        return 0, 0.0
    if x >= points[-1]:
        return len(points) - 2, 1.0
    i = max(k for k in range(len(points) - 1) if points[k] <= x)
    lo, hi = math.log2(points[i]), math.log2(points[i + 1])
    return i, (math.log2(x) - lo) / (hi - lo)


def _by_weight(tflops: list[list[list[float]]], sizes: tuple[int, ...], peak_flops: float,
               source: str) -> GemmShapeEfficiency:
    """The (M, N x K) grid of a [m][n][k] table: each N x K's aspects merged as the mean of
    their kernel times (module docstring)."""
    weights = tuple(sorted({n * k for n in sizes for k in sizes}))
    fractions = []
    for a in range(len(sizes)):
        line = []
        for w in weights:
            # One GEMM of m x w elements: 2 m w FLOPs whatever its aspect; time = that / rate.
            times = [1 / (tflops[a][b][c] * 1e12) for b, n in enumerate(sizes)
                     for c, k in enumerate(sizes) if n * k == w]
            line.append(len(times) / sum(times) / peak_flops)
        fractions.append(tuple(line))
    return GemmShapeEfficiency(rows=sizes, weights=weights, fractions=tuple(fractions),
                               source=source)


@functools.cache
def h100_bf16_gemm_shape() -> GemmShapeEfficiency:
    """OpenXLA's sm_90 bf16 table as fractions of the H100-80GB preset's dense bf16 peak, built
    on first use (also as `H100_BF16_GEMM_SHAPE`): the table is opt-in, so importing
    kvplan.perf.efficiency reads neither gpus.json nor the table."""
    from kvplan.hardware.gpus import get_gpu

    table = json.loads(DATA_FILE.read_text())
    return _by_weight(table["tflops"], tuple(table["sizes"]),
                      get_gpu(_H100).peak_bf16_flops_per_s, table["source"])


@functools.cache
def _device_gemm_shape() -> dict[str, GemmShapeEfficiency]:
    return {_H100: h100_bf16_gemm_shape()}


# The device presets that own a shape table (kvplan.hardware gpus.json names). Only the H100 SXM
# is measured here; no other preset gets one.
DEVICE_GEMM_SHAPE: Mapping[str, GemmShapeEfficiency] = LazyMapping(_device_gemm_shape,
                                                                   "DEVICE_GEMM_SHAPE")


def __getattr__(name: str) -> GemmShapeEfficiency:
    if name == "H100_BF16_GEMM_SHAPE":  # the table, built on first use (h100_bf16_gemm_shape)
        return h100_bf16_gemm_shape()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
