"""B200 (SM 10.0) rates read from aiconfigurator's measured vLLM 0.19.0 kernel tables (issue 30,
b200rule65): an OPT-IN rule, `Efficiency.sm100_tables`, for three ops where kvplan's roofline
prices a vLLM prefill step on a B200 well below the kernels it runs (tests.benches.aggfaith64
`ops`: block-FP8 GEMMs at 0.35 - 0.45 of the table, the TP all-reduce at 0.39 - 0.79, context
attention at 0.17 - 0.19 at 1,024 tokens). None (the default everywhere) is today's pricing.

The tables (tests/data/dense_op, tests/data/attention_op: aiconfigurator 095f58a51,
aic-core/src/aiconfigurator_core/systems/data/b200_sxm/{gemm,comm,attention}/vllm/0.19.0, their
SOURCES.md says how each was timed); the numbers are in sm100_tables.json beside this module,
written by `python -m tests.benches.b200rule65 fit` from the table rows alone (no serving row).
Each op is the one vLLM's own layer runs at 0.19.0, because the collectors time vLLM's layer,
not a chosen kernel:

(a) `gemm`: a dense w8a8 FP8 GEMM's fraction of the FP8 peak by rows (M) and weight elements
  (N x K), a kvplan.perf.gemm_shape.GemmShapeEfficiency read as that module reads OpenXLA's
  table: every block-FP8 row of the B200 vLLM table with M >= `least_rows` (512 .. 16,384, all
  29 weight shapes it holds), each (M, N x K) cell's aspects merged as the harmonic mean of
  their throughputs, fraction = 2 M N K / (measured s x 4,500 TFLOPS); bilinear in log2 between
  the points, the edge's outside. The table times vLLM's RowParallelLinear with Fp8Config
  (weight_block_size [128, 128], dynamic activations: collector/vllm/collect_gemm.py), i.e.
  what vLLM 0.19.0's Fp8LinearMethod dispatches on SM 10.0 in the collector's image. Which
  backend that was is NOT recorded for 0.19.0 (`kernel_source` vllm_default; the table's
  collection_meta.yaml says provenance: legacy). Read: vLLM's CUDA block-FP8 dispatcher as
  stored in the code index (CudaFp8BlockScaledMMKernel, model_executor/kernels/linear/
  scaled_mm; its release not pinned here) takes FlashInfer's DeepGEMM wrapper, then DeepGEMM
  where deep_gemm is installed, then CUTLASS's SM100 blockwise GEMM or Triton; aiconfigurator's
  collector as it stands (095f58a51 collector/vllm/collect_gemm.py:217-231, written for vLLM
  0.24.0) labels SM 10.x rows by that choice, DeepGEMM at M >= 32. So the table is vLLM's op at
  that release, most likely DeepGEMM at these M, not established. Rows below `least_rows`
  keep the preset's fraction: vLLM replays steps of up to 512 tokens from CUDA graphs, and
  the table's block-FP8 rows were timed without one (SOURCES.md), so its small-M rows hold
  launches a graph does not pay. Applied to every w8a8 FP8 dense GEMM (the op knows its math,
  not its scale layout); the same table's per-tensor FP8 rows reach a like fraction at prefill
  sizes (0.30 median against block's 0.33, examples/dense-op-bench.md). The routed experts
  keep theirs.
(b) `all_reduce`: vLLM's TP all-reduce as measured eagerly (`vllm eager` rows: custom
  all-reduce, or its fallback above the custom kernel's size, as vLLM's
  tensor_model_parallel_all_reduce dispatches), seconds by message bytes for 2, 4 and 8 ranks,
  linear between the table's sizes (256 B - 1 GiB), proportional to the bytes above the largest,
  the smallest's below. Only in steps of at least `least_rows` tokens (above vLLM's largest
  default CUDA graph, min(2 x max_num_seqs, 512) tokens: vllm/config/vllm.py
  `_set_cudagraph_sizes`, as kvplan.perf.efficiency's docstring reads it), which run eagerly;
  other rank counts and smaller steps keep kvplan's price.
(c) `context_floor`: a prefill attention layer's least time by the step's prompt tokens, the
  fastest of the table's eleven GQA head layouts (4 - 64 query heads, 1 - 8 KV heads, head dim
  128, bf16 cache, one sequence; kernel_source vllm_flashinfer: FlashInfer, vLLM's attention
  backend on SM 10.0 there) at each length, linear between lengths, the last one's above. The
  table's kernel takes 6.6 - 7.0 us at 1 token and 14.9 - 17.1 at 512 whatever the heads (a
  launch and per-tile term kvplan's 4 us floor lacks); with it kvplan's price is
  max(its FLOPs / bytes / floor price, the floor). GQA / MHA attention with a bf16 cache only
  (no MLA or FP8-cache row in the table).

The rule is the kernel tables'; whether it is a vLLM rule is the caller's choice (the bench sets
it on vLLM's B200 rows; `b200_tables()` builds it).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from kvplan._util.errors import InputError
from kvplan.perf.gemm_shape import GemmShapeEfficiency

DATA_FILE = Path(__file__).with_name("sm100_tables.json")
# The presets the tables were timed on (aiconfigurator's b200_sxm): where `--kernel-tables`
# applies (kvplan.perf.cost_rules).
DEVICES = frozenset({"B200"})
# Steps below this many tokens run from vLLM's CUDA graphs (module docstring).
LEAST_ROWS = 512


def _interp(points: tuple[tuple[int, float], ...], x: float) -> float:
    """Linear between `points` ((x, y), x increasing); the first y below, the last y above."""
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[-1][1]


@dataclass(frozen=True, kw_only=True)
class Sm100KernelRates:
    """The three ops' rates (module docstring): the FP8 GEMM fraction table, the all-reduce's
    (bytes, seconds) points by ranks, the prefill attention floor's (tokens, seconds) points."""

    gemm: GemmShapeEfficiency
    all_reduce: dict[int, tuple[tuple[int, float], ...]]
    context_floor: tuple[tuple[int, float], ...]
    least_rows: int = LEAST_ROWS
    source: str = ""

    def __post_init__(self) -> None:
        for name, pts in [("context_floor", self.context_floor),
                          *((f"all_reduce[{n}]", p) for n, p in self.all_reduce.items())]:
            if len(pts) < 2 or any(b[0] <= a[0] for a, b in zip(pts, pts[1:], strict=False)):
                raise InputError(f"sm100 tables: {name} needs 2+ points, x increasing")
            if any(y <= 0 for _, y in pts):
                raise InputError(f"sm100 tables: {name} times must be positive")

    def gemm_fraction(self, rows: float, weights: float) -> float | None:
        """The FP8 dense GEMM's fraction at `rows` x `weights` (N x K) elements; None below
        `least_rows` (the preset's)."""
        if rows < self.least_rows:
            return None
        return self.gemm.fraction(rows, weights)

    def all_reduce_s(self, ranks: int, nbytes: float, tokens: int) -> float | None:
        """vLLM's eager all-reduce of `nbytes` over `ranks` in a step of `tokens` tokens; None
        where the table has no such ranks or the step is graph-sized (kvplan's price)."""
        pts = self.all_reduce.get(ranks)
        if pts is None or tokens < self.least_rows or nbytes <= 0:
            return None
        if nbytes > pts[-1][0]:
            return pts[-1][1] * nbytes / pts[-1][0]
        return _interp(pts, nbytes)

    def context_floor_s(self, tokens: int) -> float:
        """A prefill attention layer's least time with `tokens` prompt tokens in the step."""
        return _interp(self.context_floor, tokens)


@functools.cache
def b200_tables() -> Sm100KernelRates:
    """The B200 rates from sm100_tables.json (fractions of the FP8 peak, seconds)."""
    data = json.loads(DATA_FILE.read_text())
    g = data["gemm"]
    gemm = GemmShapeEfficiency(rows=tuple(g["rows"]), weights=tuple(g["weights"]),
                               fractions=tuple(tuple(f) for f in g["fractions"]),
                               source=data["source"])
    ar = {int(n): tuple((int(b), us * 1e-6) for b, us in pts)
          for n, pts in data["all_reduce_us"].items()}
    floor = tuple((int(t), us * 1e-6) for t, us in data["context_floor_us"])
    return Sm100KernelRates(gemm=gemm, all_reduce=ar, context_floor=floor,
                            least_rows=data["least_rows"], source=data["source"])
