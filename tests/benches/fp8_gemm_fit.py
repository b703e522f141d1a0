"""The dense FP8 GEMMs' compute-bound fraction (kvplan.perf.efficiency.FP8_DENSE_GEMM_FIT,
`Efficiency.fp8_dense_gemm`) FITTED on aiconfigurator's H100 GEMM tables (tests/data/dense_op:
vLLM 0.19.0, SGLang 0.5.9 and TensorRT-LLM 1.2.0rc5's own linear layer, per-tensor and block
FP8 weights, activation quantization included), H200's and B200's held out; judged on serving
rows by tests/benches/fp8_gemm_bench.py.

The fit rows (`fit_rows`): the H100 FP8 rows of M 4,096-16,384 (the prefill bucket of
examples/dense-op-bench.md), 522 of them; the rule that they are compute-bound is kvplan's own
price (`compute_bound`: the FLOPs term at the fitted fraction outlasts the weight bytes at
`fp8_gemm_hbm` and the two kernel floors), and every one is (tests/test_fp8_gemm_fit.py). The
fraction is the one at which the median kvplan / measured over them is 1, by bisection
(`fit_fp8_dense_gemm`, as tests.benches.moe_op_bench.fit_moe_gemm): 0.483, kept to two places
(`FP8_DENSE_GEMM`, committed before any serving row was run with it).

Measured on the tables (kvplan / measured, median by GPU and format, M 4,096-16,384, every
engine; default -> fitted 0.48 on the Hopper cards, B200 shown with 0.48 in place of its preset's
0.55 though the opt-in leaves it there), `python -m tests.benches.fp8_gemm_fit`:
- H100 (fitted): per-tensor 0.74 -> 1.08, block 0.67 -> 0.98 (522 rows);
- H200 (held out): per-tensor 0.79 -> 1.16, block 0.68 -> 0.99 (464 rows; its own fit: 0.512);
- B200 (held out, not fitted: no held-out card): per-tensor 0.61 -> 0.69, block 0.51 -> 0.59;
  its tables' own fraction is 0.307 (per-tensor 0.333, block 0.281) of the 0.55 its preset
  charges: reported, not changed here.
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tests.benches.dense_op_bench import GemmRow

FIT_GPU = "H100-80GB"
FIT_DTYPES = ("fp8", "fp8_block")
FIT_LEAST_M = 4096


def fit_rows(rows: list[GemmRow], gpu: str = FIT_GPU) -> list[GemmRow]:
    return [r for r in rows if r.gpu == gpu and r.dtype in FIT_DTYPES and r.m >= FIT_LEAST_M]


def price_s(row: GemmRow, fraction: float | None) -> float:
    """kvplan's price of the row (dense_op_bench.gemm_price_s) with `fp8_dense_gemm` set."""
    from tests.benches import dense_op_bench as d

    eff = replace(d.efficiency(row.engine, row.version, row.gpu), fp8_dense_gemm=fraction)
    return d.gemm_price_s(row, eff)


def compute_bound(row: GemmRow, fraction: float) -> bool:
    """The FLOPs term of kvplan's price at `fraction` outlasts its bytes term and floors."""
    from tests.benches import dense_op_bench as d

    gpu, eff = d._gpu(row.gpu), d.efficiency(row.engine, row.version, row.gpu)
    nbytes, math = d.weight_format(row.dtype, row.n, row.k)
    compute = 2.0 * row.m * row.n * row.k / (gpu.peak_flops(gpu.runs(math)) * fraction)
    return compute > max(nbytes / (gpu.hbm_bytes_per_s * eff.fp8_gemm_hbm),
                         2 * eff.kernel_floor_s)


def median_ratio(rows: list[GemmRow], fraction: float | None) -> float:
    return statistics.median(price_s(r, fraction) * 1e3 / r.measured_ms for r in rows)


def fit_fp8_dense_gemm(rows: list[GemmRow], gpu: str = FIT_GPU) -> float:
    """The fraction at which the median ratio over `gpu`'s fit rows is 1 (bisection: the
    median ratio falls as the fraction rises)."""
    cases = fit_rows(rows, gpu)
    lo, hi = 0.01, 1.0
    for _ in range(20):  # to 1e-6
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if median_ratio(cases, mid) > 1 else (lo, mid)
    return (lo + hi) / 2


def lines(rows: list[GemmRow]) -> list[str]:
    """By GPU and format, M 4,096-16,384: rows, median ratio default -> FP8_DENSE_GEMM, and
    the GPU's own fit."""
    from kvplan.perf.efficiency import FP8_DENSE_GEMM

    out = []
    for gpu in ("H100-80GB", "H200", "B200"):
        for dtype in FIT_DTYPES:
            part = [r for r in fit_rows(rows, gpu) if r.dtype == dtype]
            out.append(f"| {gpu} | {dtype} | {len(part)} | {median_ratio(part, None):.2f} -> "
                       f"{median_ratio(part, FP8_DENSE_GEMM):.2f} |")
        out.append(f"| {gpu} | own fit | {len(fit_rows(rows, gpu))} | "
                   f"{fit_fp8_dense_gemm(rows, gpu):.3f} |")
    return out


def main() -> None:
    from tests.benches.dense_op_bench import read_gemm_rows

    print("| GPU | format | rows | kvplan / measured, median: default -> fitted |")
    print("|---|---|---:|---:|")
    print("\n".join(lines(read_gemm_rows())))


if __name__ == "__main__":
    main()
