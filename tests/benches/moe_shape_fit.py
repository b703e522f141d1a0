"""The fit of the routed experts' fraction by rows per expert (kvplan.perf.moe_gemm_shape,
MOE_GEMM_SHAPE in kvplan.perf.efficiency) on aiconfigurator's H100 fused-MoE tables:

    PYTHONPATH=. python -m tests.benches.moe_shape_fit

prints each table's points (rows per expert, fit cases, bucket cases, fraction) and the held-out
H200 / B200 medians. The rule that picks the fit cases and the points: the module docstring of
kvplan.perf.moe_gemm_shape.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable

from tests.benches.moe_op_bench import FIT_GPU, Row, implied_fraction, read_rows

GROWTH = 1.6  # least latency ratio at 2T over T of a compute-bound case (module docstring)


def rows_per_expert(row: Row) -> float:
    """The grouped GEMM's M under balanced routing: T x top-k / experts."""
    _, _, experts, topk = row.shape
    return row.tokens * topk / experts


def bucket_of(row: Row) -> int:
    """The power of two nearest the row's rows per expert (in log2)."""
    return 2 ** round(math.log2(rows_per_expert(row)))


def _key(row: Row) -> tuple:
    return (row.engine, row.version, row.gpu, row.kernel_source, row.quant, row.shape,
            row.moe_tp, row.moe_ep)


def compute_bound(rows: list[Row]) -> list[Row]:
    """The rows whose measured latency is at least GROWTH x the same case's at half the
    tokens, every expert receiving a row at that half."""
    by = {(_key(r), r.tokens): r for r in rows}
    out = []
    for r in rows:
        half = by.get((_key(r), r.tokens // 2))
        if (half is not None and rows_per_expert(half) >= 1
                and r.measured_ms >= GROWTH * half.measured_ms):
            out.append(r)
    return out


def fit_table(rows: list[Row], quant: str, gpu: str = FIT_GPU,
              implied: Callable[[Row], float | None] = implied_fraction
              ) -> list[tuple[int, int, int, float]]:
    """The `quant` experts' table on `gpu`'s rows: (rows per expert, fit cases, cases in the
    bucket, fraction) per point, adjacent points pooled where the fraction would fall.
    `implied`: a case's implied fraction (moe_op_bench's; mxfp4tab65 passes its own)."""
    mine = [r for r in rows if r.gpu == gpu and r.quant == quant]
    everyone: dict[int, int] = defaultdict(int)
    for r in mine:
        if rows_per_expert(r) >= 1:
            everyone[bucket_of(r)] += 1
    fit: dict[int, list[float]] = defaultdict(list)
    for r in compute_bound(mine):
        f = implied(r)
        if f is not None:
            fit[bucket_of(r)].append(f)
    points = [(m, fit[m]) for m in sorted(fit) if 2 * len(fit[m]) > everyone[m]]
    # Pool adjacent violators: a point below the one before merges with it (both get the
    # median of their cases together), until none falls.
    pooled: list[tuple[list[int], list[float]]] = []
    for m, fs in points:
        pooled.append(([m], list(fs)))
        while len(pooled) > 1 and (statistics.median(pooled[-1][1])
                                   < statistics.median(pooled[-2][1])):
            ms, vs = pooled.pop()
            pooled[-1][0].extend(ms)
            pooled[-1][1].extend(vs)
    return [(m, len(fit[m]), everyone[m], statistics.median(vs))
            for ms, vs in pooled for m in ms]


ENGINES = ("vllm", "sglang", "trtllm")  # the --engine names of the tables' three backends


def pooled_points(quant: str) -> tuple[tuple[int, float], ...]:
    """The pooled table as committed (kvplan.perf.efficiency.MOE_GEMM_SHAPE_BF16 / _FP8)."""
    from kvplan.perf.efficiency import MOE_GEMM_SHAPE_BF16, MOE_GEMM_SHAPE_FP8

    return MOE_GEMM_SHAPE_BF16 if quant == "bfloat16" else MOE_GEMM_SHAPE_FP8


def engine_table(rows: list[Row], quant: str, engine: str, gpu: str = FIT_GPU
                 ) -> list[tuple[int, float, str]]:
    """`engine`'s own `quant` table (moeeng64): fit_table on that engine's rows alone (the
    same rule: compute-bound cases, a point where most of the bucket's cases are fit cases,
    adjacent violators pooled); a point the pooled table has and the engine's rows do not
    (too few of its cases there are compute-bound) takes the pooled table's value, marked
    "pooled". (rows per expert, fraction, "engine" | "pooled"), by rows; the fractions must
    not fall with more rows (checked: the merge pools nothing). On a held-out card (H200,
    B200) the engine's own points only (the pooled table is H100's)."""
    own = {m: f for m, _, _, f in fit_table([r for r in rows if r.engine == engine], quant, gpu)}
    merged = {m: (f, "engine") for m, f in own.items()}
    for m, f in pooled_points(quant) if gpu == FIT_GPU else ():  # held-out cards: own points
        merged.setdefault(m, (f, "pooled"))
    out = [(m, f, how) for m, (f, how) in sorted(merged.items())]
    if any(b[1] < a[1] for a, b in zip(out, out[1:], strict=False)):
        raise ValueError(f"{engine} {quant}: the merged table falls with more rows: {out}")
    return out


def low_rows_lines(rows: list[Row], below: int = 512) -> list[str]:
    """Per format, GPU and engine, the buckets under `below` rows per expert: compute-bound
    cases (the fit's criterion) of the bucket's cases, and whether the rule makes a point."""
    out = []
    for quant in ("bfloat16", "fp8_block"):
        for gpu in ("H100", "H200", "B200"):
            for engine in ENGINES:
                mine = [r for r in rows if r.gpu == gpu and r.quant == quant
                        and r.engine == engine and 1 <= rows_per_expert(r)]
                every: dict[int, int] = defaultdict(int)
                for r in mine:
                    every[bucket_of(r)] += 1
                bound: dict[int, int] = defaultdict(int)
                for r in compute_bound(mine):
                    bound[bucket_of(r)] += 1
                cells = [f"{b}: {bound[b]}/{every[b]}{' point' if 2 * bound[b] > every[b] else ''}"
                         for b in sorted(every) if b < below and bound[b]]
                out.append(f"{quant} {gpu} {engine}: " + (", ".join(cells) or "none"))
    return out


def engine_vs_pooled_lines(rows: list[Row], least_tokens: int = 512) -> list[str]:
    """Per card, engine and format, the kernel rows of at least `least_tokens` tokens priced
    with the pooled table and with the engine's own (kvplan.engines.moe_shape): median ratio
    kvplan / measured and median |error|. H100's are the fit's rows; H200's held out."""
    from kvplan.engines.base import Engine
    from kvplan.perf.efficiency import MOE_GEMM_SHAPE
    from kvplan.perf.moe_gemm_shape import engine_shape
    from tests.benches.moe_op_bench import moe_price_s

    out = []
    for gpu in ("H100", "H200"):
        for engine in ENGINES:
            tables = Engine(engine).rules.cost_traits.experts_shape
            assert tables is not None
            for quant in ("bfloat16", "fp8_block"):
                mine = [r for r in rows if r.gpu == gpu and r.engine == engine
                        and r.quant == quant and r.tokens >= least_tokens]
                cells = []
                for shape in (MOE_GEMM_SHAPE, engine_shape(tables)):
                    ratios = [moe_price_s(r, moe_gemm_shape=shape) * 1e3 / r.measured_ms
                              for r in mine]
                    cells.append(f"{statistics.median(ratios):.2f} "
                                 f"({statistics.median(abs(x - 1) for x in ratios):.1%})")
                out.append(f"{gpu} {engine} {quant} ({len(mine)} rows): pooled {cells[0]}, "
                           f"engine {cells[1]}")
    return out


def main() -> None:
    rows = read_rows()
    for quant in ("bfloat16", "fp8_block"):
        for gpu in ("H100", "H200", "B200"):
            table = fit_table(rows, quant, gpu)
            print(f"{quant} {gpu}{' (fit)' if gpu == FIT_GPU else ' (held out, same rule)'}: "
                  + ", ".join(f"{m}: {f:.3f} ({n} of {every})" for m, n, every, f in table))
            for engine in ENGINES:
                print(f"  {engine}: " + ", ".join(
                    f"{m}: {f:.3f}{' (pooled)' if how == 'pooled' else ''}"
                    for m, f, how in engine_table(rows, quant, engine, gpu)))
    print("compute-bound cases below 512 rows per expert (of the bucket's cases):")
    for line in low_rows_lines(rows):
        print("  " + line)
    print("kernel rows of 512+ tokens, median ratio (median |error|), pooled -> engine table:")
    for line in engine_vs_pooled_lines(rows):
        print("  " + line)


if __name__ == "__main__":
    main()
