"""gpt-oss's MXFP4 routed experts' fraction of the peak by rows per expert AND per-rank width
(mxfp4tab65, issue 30; OPT-IN: `Efficiency.mxfp4_experts_shape`).

Why a width: aiconfigurator's w4a16_mxfp4 fused-MoE kernel rows (tests/data/moe_mxfp4/
SOURCES.md) fall less than 1 / TP with the MoE TP degree at one token count: vLLM 0.24.0's
Triton kernel (matmul_ogs) for gpt-oss-120b on H100, 8,192 tokens, 2.93 / 1.68 / 0.95 / 0.61 ms
at MoE TP 1 / 2 / 4 / 8 (t1 / tN 1.75 / 3.09 / 4.84), where the roofline's experts op falls as
exactly 1 / TP (its FLOPs and bytes do; its fraction, by rows per expert, T x top-k / experts,
does not move with TP). The rows each expert computes are the same at every TP degree; what
narrows is the grouped GEMMs' N (the intermediate, 2 x 2,880 / TP and 2,880 / TP), so the
table is one kvplan.perf.moe_gemm_shape.ExpertsShapeFraction per per-rank width, linear in
log2(width) between the fitted widths and the edge's outside.

The fit (tests/benches/mxfp4tab65.py `fit`, its points in kvplan.perf.efficiency
MXFP4_EXPERTS_SHAPE_POINTS_FIT): per width 2,880 / TP for TP 1, 2, 4, 8, tests.benches.moe_shape_fit
.fit_table's rule (the kernel rows' compute-bound cases by the latency's growth from T / 2 to T,
a point per power of two of rows per expert where most of the bucket's cases are fit cases,
the median implied fraction there, adjacent violators pooled) on the H100 rows of that width
under MoE TP (no EP), every engine's table together (vLLM 0.24.0, SGLang 0.5.14, TensorRT-LLM
1.2.0rc5), gpt-oss-120b's and -20b's shapes. H200 and B200 rows held out; every serving row
held out. Where it applies: MXFP4 experts whose grouped GEMMs compute at bf16 (w4a16: Hopper,
and the Blackwell presets, which price them so) outside Marlin's mma.sync kernel (the table is
not Marlin's: InferenceX's Hopper gpt-oss scripts run Marlin, `--mxfp4-backend marlin`, and
keep the bf16 table); never above the dense fraction it replaces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan.perf.moe_gemm_shape import ExpertsShapeFraction


@dataclass(frozen=True, kw_only=True)
class Mxfp4ExpertsShape:
    """`tables[i]` at per-rank width `widths[i]` (the expert's intermediate / MoE TP)."""

    widths: tuple[int, ...]
    tables: tuple[ExpertsShapeFraction, ...]

    def __post_init__(self) -> None:
        if not self.widths or len(self.widths) != len(self.tables):
            raise InputError("MXFP4 experts table: widths and tables must pair up")
        if self.widths[0] <= 0 or any(b <= a for a, b in zip(self.widths, self.widths[1:],
                                                             strict=False)):
            raise InputError("MXFP4 experts table: widths must be positive and increasing")

    @staticmethod
    def of(points: tuple[tuple[int, tuple[tuple[int, float], ...]], ...]) -> Mxfp4ExpertsShape:
        """From (width, ((rows per expert, fraction), ...)) per width."""
        return Mxfp4ExpertsShape(
            widths=tuple(w for w, _ in points),
            tables=tuple(ExpertsShapeFraction(rows=tuple(m for m, _ in pts),
                                              fractions=tuple(f for _, f in pts))
                         for _, pts in points))

    def fraction(self, rows: float, width: float) -> float:
        """The fraction at `rows` rows per expert and per-rank width `width`."""
        ws = self.widths
        if width <= ws[0]:
            return self.tables[0].fraction(rows)
        if width >= ws[-1]:
            return self.tables[-1].fraction(rows)
        i = max(k for k in range(len(ws) - 1) if ws[k] <= width)
        u = (math.log2(width) - math.log2(ws[i])) / (math.log2(ws[i + 1]) - math.log2(ws[i]))
        return (1 - u) * self.tables[i].fraction(rows) + u * self.tables[i + 1].fraction(rows)
