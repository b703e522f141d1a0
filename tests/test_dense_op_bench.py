"""The dense op bench (tests/benches/dense_op_bench.py): its extracted rows, kvplan's price of a
GEMM row and of an all-reduce row worked by hand, and examples/dense-op-bench.md printed as
committed."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.benches.dense_op_bench import (
    ar_price_s,
    gemm_price_s,
    read_ar_rows,
    read_gemm_rows,
    table_gemm_ms,
)
from tests.benches.dense_op_extract import AR_COLUMNS, GEMM_COLUMNS, GEMM_M, GEMM_SHAPES

ROOT = Path(__file__).resolve().parent.parent


def _csv(path: Path) -> list[dict[str, str]]:
    import csv
    import gzip

    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_extracted_gemm_rows_are_the_kept_ones() -> None:
    from tests.benches.dense_op_bench import GEMM_ROWS

    rows = _csv(GEMM_ROWS)
    assert tuple(rows[0]) == GEMM_COLUMNS
    # tests/data/dense_op/SOURCES.md: rows kept per table, as the extraction printed them.
    per_table = Counter((r["device"], r["framework"]) for r in rows)
    assert per_table == {
        ("NVIDIA H100 80GB HBM3", "VLLM"): 1305, ("NVIDIA H100 80GB HBM3", "SGLang"): 1305,
        ("NVIDIA H100 80GB HBM3", "TRTLLM"): 1305, ("NVIDIA H200", "VLLM"): 1305,
        ("NVIDIA H200", "SGLang"): 1305, ("NVIDIA H200", "TRTLLM"): 1218,
        ("NVIDIA B200", "VLLM"): 1682, ("NVIDIA B200", "SGLang"): 1740,
        ("NVIDIA B200", "TRTLLM"): 1740}
    assert len(GEMM_SHAPES) == 29 and len(GEMM_M) == 15
    assert {(int(r["n"]), int(r["k"])) for r in rows} == set(GEMM_SHAPES)
    assert {int(r["m"]) for r in rows} == set(GEMM_M)
    assert {r["gemm_dtype"] for r in rows if r["device"] != "NVIDIA B200"} == {
        "bfloat16", "fp8", "fp8_block"}
    assert len(read_gemm_rows()) == 12_905


def test_extracted_allreduce_rows_are_the_kept_ones() -> None:
    from tests.benches.dense_op_bench import AR_ROWS

    rows = _csv(AR_ROWS)
    assert tuple(rows[0]) == AR_COLUMNS
    sources = Counter((r["device"], r["framework"], r["kernel_source"]) for r in rows)
    for device in ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA B200"):
        assert sources[(device, "TRTLLM", "NCCL")] == 63  # all_reduce, half: 21 sizes x 3
        assert sources[(device, "TRTLLM", "TRTLLM")] == 69  # 23 sizes x 2 / 4 / 8 GPUs
        assert sources[(device, "vLLM", "vLLM_custom_graph")] == 69
        assert sources[(device, "SGLang", "SGLang_CustomAllReduce_eager")] == 69
    assert len(rows) == 1224
    assert {r["op_name"] for r in rows} == {"all_reduce"}


def test_one_gemm_row_by_hand() -> None:
    # h100_sxm/gemm/vllm/0.19.0/gemm_perf.parquet at 095f58a51, read with pyarrow: bf16,
    # m 8,192, n 8,192, k 8,192: 1.4598 ms (vllm_default), 0.761 of the bf16 peak.
    row = next(r for r in read_gemm_rows() if r.engine == "vllm" and r.gpu == "H100-80GB"
               and r.dtype == "bfloat16" and (r.m, r.n, r.k) == (8192, 8192, 8192))
    assert row.kernel_source == "vllm_default"
    assert row.measured_ms == 1.459779527452257
    # kvplan: 2 x 8192^3 = 1.0995e12 FLOPs at 0.70 x 989.5e12 (H100-80GB dense bf16) =
    # 1.5874 ms, against 8192^2 x 2 B = 134.2 MB at 0.90 x 3.35e12 B/s = 44.5 us: compute-bound.
    assert gemm_price_s(row) == pytest.approx(2 * 8192 ** 3 / (0.70 * 989.5e12), rel=1e-3)
    # A decode-sized block-FP8 row: m 1, 8,192 x 8,192 FP8 weights (1 B) and their 64 x 64
    # fp32 block scales (16,384 B) stream at 0.69 (fp8_gemm_hbm) of 3.35 TB/s: 29.04 us, over
    # the two kernels' floors (GEMM and activation quantization, 2 x 4 us).
    fp8 = next(r for r in read_gemm_rows() if r.engine == "sglang" and r.gpu == "H100-80GB"
               and r.dtype == "fp8_block" and (r.m, r.n, r.k) == (1, 8192, 8192))
    assert gemm_price_s(fp8) == pytest.approx((8192 ** 2 + 16384) / (0.69 * 3.35e12), rel=1e-3)


def test_one_allreduce_row_by_hand() -> None:
    rows = read_ar_rows()
    # vLLM 0.19.0, H100, 8 GPUs, CUDA graph, 524,288 elements = 1 MiB: 14.82 us measured.
    row = next(r for r in rows if r.source == "vllm graph" and r.gpu == "H100-80GB"
               and r.ranks == 8 and r.nbytes == 1 << 20)
    assert row.measured_ms == 0.014823360443115236
    # kvplan at 8 ranks and >= 256 KiB: two-shot, 13.1 us fixed (nvlink4's measured t2) +
    # 2 x 7 / 8 x 1 MiB / 360 GB/s = 5.10 us.
    from kvplan.hardware.interconnect import INTERCONNECTS

    t2 = INTERCONNECTS["nvlink4"].two_shot_latency_s
    assert t2 == pytest.approx(13.1e-6, abs=0.1e-6)
    assert ar_price_s(row) == pytest.approx(t2 + 1.75 * (1 << 20) / 360e9, rel=1e-6)
    # NCCL, 8 GPUs, 128 MiB: 578.74 us measured; kvplan's ring: 10 us + 1.75 x 128 MiB /
    # 360 GB/s = 662.4 us.
    nccl = next(r for r in rows if r.source == "nccl" and r.gpu == "H100-80GB" and r.ranks == 8
                and r.nbytes == 128 << 20)
    assert nccl.measured_ms == 0.57874
    assert ar_price_s(nccl) == pytest.approx(10e-6 + 1.75 * (128 << 20) / 360e9, rel=1e-6)


def test_a_shape_off_the_grid_is_interpolated_in_n() -> None:
    rows = read_gemm_rows()
    kw: dict = {"gpu": "H100-80GB", "engine": "vllm", "dtype": "bfloat16", "m": 8192, "k": 8192}
    lo, hi = table_gemm_ms(rows, n=8192, **kw), table_gemm_ms(rows, n=16384, **kw)
    # 14,336 is 6 / 8 of the way from 8,192 to 16,384.
    assert table_gemm_ms(rows, n=14336, **kw) == pytest.approx(lo + 0.75 * (hi - lo))


def test_page_is_current() -> None:
    out = subprocess.run([sys.executable, "-m", "tests.benches.dense_op_bench"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "examples" / "dense-op-bench.md").read_text()


def test_custom_ar_fit_reproduces_its_constants() -> None:
    from kvplan.hardware.interconnect import INTERCONNECTS
    from tests.benches.allreduce_fit import (
        FIT_T1_S,
        FIT_T2_S,
        fit_custom_ar,
        fitted_custom_ar,
        one_shot,
    )

    t1, t2, n1, n2 = fit_custom_ar(read_ar_rows())
    assert (n1, n2) == (68, 10)  # 2 engines x (13 + 11 + 10 one-shot, 0 + 2 + 3 two-shot)
    assert t1 == pytest.approx(FIT_T1_S, abs=0.005e-6)
    assert t2 == pytest.approx(FIT_T2_S, abs=0.005e-6)
    # The dispatch, by hand: 2 ranks always one-shot; 4 ranks from 512 KiB, 8 from 256 KiB
    # two-shot.
    assert one_shot(2, 1 << 20) and one_shot(4, 256 << 10) and not one_shot(4, 512 << 10)
    assert one_shot(8, 128 << 10) and not one_shot(8, 256 << 10)
    # One fit row by hand: vLLM, H100, 8 GPUs, 1 MiB (two-shot), 14.823 us measured less
    # 2 x 7 / 8 x 1 MiB / 360 GB/s = 5.097 us: 9.73 us, above the median.
    assert 0.014823360443115236e-3 - 1.75 * (1 << 20) / 360e9 == pytest.approx(9.726e-6,
                                                                                abs=1e-9)
    nv4 = INTERCONNECTS["nvlink4"]
    with fitted_custom_ar():
        assert INTERCONNECTS["nvlink4"].custom_all_reduce_latency_s == FIT_T1_S
        assert INTERCONNECTS["nvlink4"].two_shot_latency_s == FIT_T2_S
    assert INTERCONNECTS["nvlink4"] is nv4
