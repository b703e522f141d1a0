"""The dense FP8 GEMMs' fitted fraction (kvplan.perf.efficiency.FP8_DENSE_GEMM, opt-in
`Efficiency.fp8_dense_gemm`): reproduced from aiconfigurator's H100 tables
(tests/benches/fp8_gemm_fit.py), its fit rows compute-bound by kvplan's own price, and one GEMM
priced by hand with it."""

from __future__ import annotations

import pytest

from kvplan._util.dtypes import GemmMath
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import (
    DEFAULT_EFFICIENCY,
    FP8_DENSE_GEMM,
    FP8_DENSE_GEMM_FIT,
    Efficiency,
)
from kvplan.perf.roofline import _Step
from tests.benches.dense_op_bench import read_gemm_rows
from tests.benches.fp8_gemm_fit import compute_bound, fit_fp8_dense_gemm, fit_rows, price_s


def test_the_fraction_is_the_h100_tables_fit() -> None:
    rows = read_gemm_rows()
    cases = fit_rows(rows)
    # 29 weight shapes x M 4,096 / 8,192 / 16,384 x per-tensor and block FP8 x 3 engines.
    assert len(cases) == 29 * 3 * 2 * 3 == 522
    assert all(compute_bound(r, FP8_DENSE_GEMM) for r in cases)
    fit = fit_fp8_dense_gemm(rows)
    assert fit == pytest.approx(0.483, abs=5e-4)
    assert round(fit, 2) == FP8_DENSE_GEMM == FP8_DENSE_GEMM_FIT.value
    # Held out: no H200 or B200 row is a fit row; all three engines' tables are.
    assert {r.gpu for r in cases} == {"H100-80GB"}
    assert {(r.engine, r.version) for r in cases} == {
        ("vllm", "0.19.0"), ("sglang", "0.5.9"), ("trtllm", "1.2.0rc5")}


def test_one_block_fp8_gemm_by_hand() -> None:
    # vLLM 0.19.0's block-FP8 linear on H100, M = N = K = 8,192: 2 x 8,192^3 = 1.0995e12 FLOPs
    # at 0.48 of the dense FP8 peak (1,979 TFLOPS: 949.92 TFLOPS) = 1.1575 ms; its bytes
    # (67.1 MB of e4m3 weights + 64 x 64 fp32 block scales) at 0.69 x 3.35 TB/s take 29 us
    # and the two kernels' floors 8 us, so the FLOPs term is the price. Default (0.70 of the
    # peak): 1.0995e12 / 1,385.3e12 = 0.7937 ms.
    row = next(r for r in read_gemm_rows() if r.gpu == "H100-80GB" and r.engine == "vllm"
               and r.dtype == "fp8_block" and r.m == r.n == r.k == 8192)
    assert price_s(row, FP8_DENSE_GEMM) == pytest.approx(1.1575e-3, rel=1e-4)
    assert price_s(row, None) == pytest.approx(0.7937e-3, rel=1e-4)


def test_only_dense_fp8_gemms_move() -> None:
    gpu = get_gpu("H100-80GB")
    eff = Efficiency(fp8_dense_gemm=FP8_DENSE_GEMM)
    flops = 1e12  # compute-bound at either fraction: 1e12 / (1,979e12 x f) >> bytes, floors

    def price(e: Efficiency, **kw: object) -> float:
        s = _Step(gpu, e, e.kernel_floor_s)
        s.op("x", flops=flops, nbytes=1e6, **kw)  # type: ignore[arg-type]
        return s.by_op["x"]

    assert price(eff, math=GemmMath.fp8) == pytest.approx(flops / (1979e12 * 0.48))
    # The routed experts, attention and bf16 GEMMs keep their fractions.
    for kw in ({"math": GemmMath.fp8, "expert_rows": 512.0},
               {"math": GemmMath.fp8, "attention": True}, {"math": GemmMath.bf16}):
        assert price(eff, **kw) == price(DEFAULT_EFFICIENCY, **kw)
    with pytest.raises(Exception, match="fp8_dense_gemm"):
        Efficiency(fp8_dense_gemm=1.5)


def test_the_serving_bench_selects_fp8_checkpoints_and_hopper_presets() -> None:
    from kvplan.hardware.gpus import get_gpu as gpu_of
    from kvplan.perf.efficiency import device_efficiency
    from kvplan.sources.resolve import load_spec
    from tests.benches.fp8_gemm_bench import dense_fp8, fp8_fitted

    # MiniMax-M2's block-FP8 checkpoint quantizes its attention projections; Qwen3-8B is bf16.
    assert dense_fp8(load_spec("tests/data/configs/minimax-m2.json"))
    assert not dense_fp8(load_spec("tests/data/configs/qwen3-8b.json"))
    with fp8_fitted():
        assert device_efficiency(gpu_of("H100-80GB")).fp8_dense_gemm == FP8_DENSE_GEMM
        assert device_efficiency(gpu_of("H200")).fp8_dense_gemm == FP8_DENSE_GEMM
        b200 = device_efficiency(gpu_of("B200"))
        assert b200.fp8_dense_gemm is None and b200.fp8_gemm == 0.55
    assert device_efficiency(gpu_of("H100-80GB")).fp8_dense_gemm is None
