"""The routed experts' compute fraction by shape: the rows each expert computes (issue 30).

The engines' fused MoE kernels run their grouped GEMMs at a fraction of the peak that grows with
the rows each expert receives, the grouped GEMM's M (T x top-k / experts under balanced routing:
vLLM's Triton fused_moe, SGLang's Triton kernel and TensorRT-LLM's CUTLASS MoE tile each expert's
rows apart, and an expert with few rows fills few of a tile's rows). One fraction per format
(kvplan.perf.efficiency.MOE_GEMM / FP8_MOE_GEMM, moefit58) is too low for few wide experts
(Mixtral-8x7B's 8 experts: thousands of rows each in a prefill) and too high for many small ones
at the same tokens (examples/moe-op-bench.md, "rows per expert").

`ExpertsShapeFraction` is a small table: the fraction at powers of two of the rows per expert,
linear in log2(rows) between them and the edge's value outside (no extrapolation, as
kvplan.perf.gemm_shape): below its first point the first point's fraction, where the experts'
weight bytes outlast their FLOPs in every measured case, so that a decode step stays priced by
its bytes. `MoeGemmShape` holds one table per math the experts run at (bf16 and FP8, w8a8 block
experts); FP4 experts keep the dense fraction. `Efficiency.experts_fraction`
(kvplan.perf.efficiency) is the roofline's choice for the routed experts' operation, never above
the dense GEMMs' fraction it replaces.

The tables (kvplan.perf.efficiency.MOE_GEMM_SHAPE, FITTED: MOE_GEMM_SHAPE_BF16_FIT and
_FP8_FIT) are fitted on aiconfigurator's H100
fused-MoE kernel tables only (github.com/ai-dynamo/aiconfigurator at 095f58a51,
systems/data/h100_sxm/moe/{vllm/0.19.0, sglang/0.5.9, trtllm/1.2.0rc5}/moe_perf.parquet, balanced
routing; tests/data/moe_op/SOURCES.md), every engine together, by tests.benches.moe_shape_fit:

- the fit cases are the ones the measured op is compute-bound in, read in the measurements
  alone: doubling the tokens (same engine, shape, layout, dtype) at least 1.6x the measured
  latency (time = B + C at T, B + C / 2 at T / 2: C >= 3 B, the FLOPs' time at least three
  quarters of it), every expert receiving at least one row at half the tokens (so the weights
  read are the same at both);
- a point of a table is a power of two of rows per expert (each case's rows rounded in log2)
  at which most of the bucket's H100 cases are fit cases; its value is the median over the fit
  cases of the fraction at which kvplan's price of the case is its measured latency
  (moe_op_bench.implied_fraction), adjacent points pooled (the median of their cases together)
  where the later one would fall below the earlier (the fraction does not fall with more
  rows);
- H200 and B200 tables held out (examples/moe-op-bench.md gives their ratios with it).

One table for every engine: the engines' kernels differ (at 1,024 rows, bf16: SGLang 0.24,
vLLM 0.46, TensorRT-LLM 0.62 of the peak), and the rule leaves that as spread, as the
one-fraction fit did. The expert's width (N = its intermediate / MoE TP, K = hidden) is not a
dimension: over the fit cases, a least-squares line of log2(fraction) on log2(rows) leaves an
rms residual of 0.65 (bf16) and 0.64 (block FP8), with log2 N and log2 K added 0.64 and 0.53;
FP8's gain is no one pattern across engines (fitted per engine, the N slope is TensorRT-LLM's,
whose MoE TP narrows its GEMMs, the K slope SGLang's and vLLM's), so one width rule for all
would carry one engine's kernel onto the others.

History: OPT-IN at first (`Efficiency(moe_gemm_shape=...)`, no preset setting it): judged on
serving rows after the tables were committed (tests/benches/moe_gemm_bench.py --compare shape),
it makes the sim-to-real study's Mixtral stages' ITL worse (1.7 -> 7.2 %), five stages
saturating: Mixtral's wide experts under MoE TP run at 0.53-0.80 at 512-2,048 rows in the same
H100 tables, above this table pooled over narrower experts. Judged again on held-out serving
rows (moeshape62, tests/benches/moe_shape62.py): pooled held-out median |error| TTFT 45.2 ->
38.2 %, TPOT 18.2 -> 15.2 % (its decision rule, stated before the replay, met; the aggregated
held-out rows alone TTFT 39.0 -> 41.5 %, vLLM on Hopper 24.5 -> 42.3 %).
THE DEFAULT since moedefault63, as that rule says: every CUDA device's efficiency sets it
(kvplan.perf.efficiency.CUDA_EFFICIENCY); AMD presets do not (the tables are NVIDIA H100
kernels'). `--no-moe-gemm-by-rows` (kvplan.perf.cost_rules) or `Efficiency(moe_gemm_shape=None)`
gives the one fraction per format back.

Per engine (moeeng64): each engine's own tables, fitted by the same rule on that engine's H100
rows alone (kvplan.engines.moe_shape, declared in CostTraits.experts_shape; `engine_shape`
builds them), take the pooled table's place where `Efficiency.moe_gemm_by_engine` is set
(kvplan.perf.engine_traits.engine_efficiency); OPT-IN: judged on held-out serving rows by
tests/benches/moe_engine64.py, its rule not met (pooled held-out TTFT 37.2 -> 38.6 %, both
inside 35 -> 26), though the H200 kernel rows (held out) come closer in 5 of 6 engine x format
cells. The low-rows edge: the rule makes a point below 512 rows an
expert wherever most of a bucket's cases are compute-bound (pooled FP8 at 256; per engine
SGLang bf16, vLLM and TensorRT-LLM FP8 at 256; moe_shape_fit.low_rows_lines lists the
compute-bound cases below 512 on every card); below a table's first point its first value holds.
MXFP4 experts (gpt-oss) keep the bf16 table: aiconfigurator 095f58a51 does ship H100 w4a16_mxfp4
fused-MoE tables with gpt-oss's shapes (vLLM 0.24.0 triton_kernels / Marlin, TensorRT-LLM
1.2.0rc5, SGLang 0.5.14; H200 vLLM 0.19.0), not extracted or fitted here; mxfp4tab65 fits
them by per-rank width (kvplan.perf.mxfp4_experts, opt-in).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from kvplan._util.errors import InputError
from kvplan.engines.moe_shape import ExpertsShapeTables


@dataclass(frozen=True, kw_only=True)
class ExpertsShapeFraction:
    """The experts' fraction of the peak by rows per expert: `fractions[i]` at `rows[i]`, linear
    in log2(rows) between points, the edge's outside."""

    rows: tuple[int, ...]
    fractions: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.rows or len(self.rows) != len(self.fractions):
            raise InputError("experts shape table: rows and fractions must pair up, at least one")
        if self.rows[0] <= 0 or any(b <= a for a, b in zip(self.rows, self.rows[1:],
                                                             strict=False)):
            raise InputError("experts shape table: rows must be positive and increasing")
        if any(not 0 < f <= 1 for f in self.fractions):
            raise InputError("experts shape table: every fraction must be in (0, 1]")
        if any(b < a for a, b in zip(self.fractions, self.fractions[1:], strict=False)):
            raise InputError("experts shape table: fractions must not fall with more rows")

    def fraction(self, rows: float) -> float:
        """The fraction of the peak at `rows` rows per expert."""
        if rows <= self.rows[0]:
            return self.fractions[0]
        if rows >= self.rows[-1]:
            return self.fractions[-1]
        i = max(k for k in range(len(self.rows) - 1) if self.rows[k] <= rows)
        lo, hi = math.log2(self.rows[i]), math.log2(self.rows[i + 1])
        u = (math.log2(rows) - lo) / (hi - lo)
        return (1 - u) * self.fractions[i] + u * self.fractions[i + 1]


@dataclass(frozen=True, kw_only=True)
class MoeGemmShape:
    """One table per math the routed experts run at (bf16, FP8)."""

    bf16: ExpertsShapeFraction
    fp8: ExpertsShapeFraction

    @staticmethod
    def of(bf16: tuple[tuple[int, float], ...], fp8: tuple[tuple[int, float], ...]
           ) -> MoeGemmShape:
        """The tables from their (rows per expert, fraction) points."""
        return MoeGemmShape(bf16=ExpertsShapeFraction(rows=tuple(m for m, _ in bf16),
                                                      fractions=tuple(f for _, f in bf16)),
                            fp8=ExpertsShapeFraction(rows=tuple(m for m, _ in fp8),
                                                     fractions=tuple(f for _, f in fp8)))


@cache
def engine_shape(tables: ExpertsShapeTables) -> MoeGemmShape:
    """An engine's own tables (kvplan.engines.moe_shape, CostTraits.experts_shape)."""
    return MoeGemmShape.of(tables.bf16, tables.fp8)

