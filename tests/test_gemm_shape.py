"""The shape-aware GEMM fraction (kvplan.perf.gemm_shape), an opt-in counterfactual: its grid
against the rows of OpenXLA's published sm_90 bf16 table, its interpolation and clamping, and
kvplan.perf.roofline's charge with it (the default, None, is today's one fraction)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan._util.errors import InputError
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import (
    CUDA_EFFICIENCY,
    DEFAULT_EFFICIENCY,
    Efficiency,
    device_efficiency,
)
from kvplan.perf.gemm_shape import (
    DEVICE_GEMM_SHAPE,
    H100_BF16_GEMM_SHAPE,
    GemmShapeEfficiency,
)
from kvplan.perf.roofline import step_time

PEAK = 989.5e12  # H100 SXM dense bf16 (gpus.json H100-80GB)
G = H100_BF16_GEMM_SHAPE


def test_the_peak_is_the_h100_preset_read_on_first_use(presets_read) -> None:
    # The fractions' denominator is gpus.json's H100-80GB bf16_dense (989.5 TFLOPS), written once
    # there; the table is built from it on first use, so importing the time model's efficiencies
    # (kvplan.perf.efficiency, which imports GemmShapeEfficiency) reads no preset.
    assert get_gpu("H100-80GB").peak_bf16_flops_per_s == PEAK
    assert presets_read("import kvplan.perf.efficiency, kvplan.perf.gemm_shape",
                        "from kvplan.perf.gemm_shape import H100_BF16_GEMM_SHAPE") == [0, 1]


def test_grid_points_are_the_table_rows() -> None:
    # default_matmul_perf_table.txtpb, key "sm_90", b: 1, "bf16xbf16->bf16" (flops / s):
    # m 4096 n 4096 k 4096: 780.2 TFLOPS, the only shape of N x K = 2^24 -> 780.2 / 989.5.
    assert G.fraction(4096, 2**24) == pytest.approx(780.2e12 / PEAK)
    assert G.fraction(4096, 2**24) == pytest.approx(0.7885, abs=1e-4)
    # m 256 n 256 k 256: 6.7 TFLOPS (2 x 256^3 / 6.7e12 = 5.0 us of kernel time).
    assert G.fraction(256, 2**16) == pytest.approx(6.7e12 / PEAK)
    # m 1024, N x K = 2^20: five aspects (n, k) = (256, 4096) 187.2, (512, 2048) 235.5,
    # (1024, 1024) 252.8, (2048, 512) 244.0, (4096, 256) 219.7 TFLOPS, merged as the mean of
    # their kernel times: 5 / (1/187.2 + 1/235.5 + 1/252.8 + 1/244.0 + 1/219.7) = 225.3 TFLOPS.
    merged = 5 / (1 / 187.2 + 1 / 235.5 + 1 / 252.8 + 1 / 244.0 + 1 / 219.7) * 1e12
    assert merged == pytest.approx(225.3e12, rel=1e-3)
    assert G.fraction(1024, 2**20) == pytest.approx(merged / PEAK)
    assert G.rows == (256, 512, 1024, 2048, 4096)
    assert G.weights == tuple(2**e for e in range(16, 25))


def test_interpolates_in_log2_and_clamps() -> None:
    # Halfway (in log2) between m 256 and m 512 at N x K = 2^16 (256 x 256): the mean of
    # 6.7 and 12.3 TFLOPS' fractions.
    assert G.fraction(math.sqrt(256 * 512), 2**16) == pytest.approx((6.7 + 12.3) / 2e-12 / PEAK)
    # Halfway between N x K 2^23 and 2^24 at m 4096: 2^23's aspects are (2048, 4096) 759.4 and
    # (4096, 2048) 735.6 TFLOPS, merged 2 / (1/759.4 + 1/735.6) = 747.3; 2^24 is 780.2.
    at_23 = 2 / (1 / 759.4 + 1 / 735.6) * 1e12 / PEAK
    assert G.fraction(4096, 2**23.5) == pytest.approx((at_23 + 780.2e12 / PEAK) / 2)
    # No extrapolation: fewer than 256 rows take the 256-row fraction, more than 4096 rows or
    # 2^24 weight elements the edge's (hidden 8,192's GEMMs: 0.788 at the most).
    assert G.fraction(1, 2**20) == G.fraction(256, 2**20)
    assert G.fraction(16384, 8192 * 28672) == G.fraction(4096, 2**24)


def test_bad_tables_are_refused() -> None:
    with pytest.raises(InputError, match="increasing"):
        GemmShapeEfficiency(rows=(2, 1), weights=(1, 2), fractions=((0.5, 0.5), (0.5, 0.5)))
    with pytest.raises(InputError, match="rows x weights"):
        GemmShapeEfficiency(rows=(1, 2), weights=(1, 2), fractions=((0.5, 0.5),))
    with pytest.raises(InputError, match=r"\(0, 1\]"):
        GemmShapeEfficiency(rows=(1, 2), weights=(1, 2), fractions=((0.5, 1.5), (0.5, 0.5)))


def test_off_by_default() -> None:
    # Opt-in: no preset carries the table; the H100 preset owns one in DEVICE_GEMM_SHAPE.
    assert DEFAULT_EFFICIENCY.gemm_shape is None
    assert device_efficiency(get_gpu("H100")).gemm_shape is None
    assert DEVICE_GEMM_SHAPE == {"H100-80GB": G}


def test_roofline_charges_the_dense_mlp_by_shape() -> None:
    # Qwen3-8B (config.json: hidden 4096, intermediate 12288), one H100, a 4,096-token prefill.
    # The MLP's weights: 3 x 4096 x 12288 = 150,994,944 elements in 2 kernels (gate_up, down):
    # 75,497,472 each, beyond the table's 2^24, so the edge's fraction at m 4096: 780.2 / 989.5.
    # FLOPs 2 x 4096 x 150,994,944 = 1.2369e12 -> 1.2369e12 / (989.5e12 x 0.7885) = 1.585 ms,
    # against 1.2369e12 / (989.5e12 x 0.70) = 1.786 ms by default; both above the weights'
    # 302 MB / (3.35 TB/s x 0.90) = 0.100 ms.
    spec, gpu = load_spec("qwen3-8b"), get_gpu("H100")
    flops = 2 * 4096 * 3 * 4096 * 12288
    base = Efficiency(layer_overhead_s=0.0)
    shaped = replace(base, gemm_shape=G)
    layers = spec.num_hidden_layers
    default = step_time(spec, gpu, tokens=4096, context=4096, requests=1, phase="prefill",
                        eff=base)
    by_shape = step_time(spec, gpu, tokens=4096, context=4096, requests=1, phase="prefill",
                         eff=shaped)
    assert default.by_op["mlp"] == pytest.approx(layers * flops / (PEAK * 0.70))
    assert by_shape.by_op["mlp"] == pytest.approx(layers * flops / (780.2e12))
    assert by_shape.by_op["mlp"] / layers * 1e3 == pytest.approx(1.585, abs=1e-3)
    # The attention core keeps `attention`; a decode of 8 requests stays on its weight bytes.
    assert by_shape.by_op["attention"] == default.by_op["attention"]
    d8 = step_time(spec, gpu, tokens=8, context=1000, requests=8, eff=base)
    s8 = step_time(spec, gpu, tokens=8, context=1000, requests=8, eff=shaped)
    assert s8.seconds == d8.seconds


def test_fp8_gemms_keep_their_fraction() -> None:
    # The table's FP8 column exceeds the 1,979 TFLOPS dense FP8 peak (2,425 at 4096^3), so it
    # is not used: a w8a8 checkpoint's GEMMs are charged as without the table.
    fp8 = json.dumps({"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                      "weight_block_size": [128, 128]})
    spec = replace(load_spec("qwen3-8b"), quantization_json=fp8)
    gpu = get_gpu("H100")
    base = Efficiency()
    a = step_time(spec, gpu, tokens=4096, context=4096, requests=1, phase="prefill", eff=base)
    b = step_time(spec, gpu, tokens=4096, context=4096, requests=1, phase="prefill",
                  eff=replace(base, gemm_shape=G))
    assert a.by_op["mlp"] == b.by_op["mlp"]


def test_the_bench_opts_in_for_the_h100_only_and_restores() -> None:
    # tests/benches/gemm_shape_bench.py's counterfactual switch: inside it every caller of
    # device_efficiency on the H100 gets the table; other presets and, after it, the H100 don't.
    from tests.benches.gemm_shape_bench import shape_aware

    with shape_aware():
        assert device_efficiency(get_gpu("H100")).gemm_shape is G
        assert device_efficiency(get_gpu("H200")).gemm_shape is None
        assert device_efficiency(get_gpu("MI300X")).gemm == 0.54  # its own preset kept
    assert device_efficiency(get_gpu("H100")).gemm_shape is None
    assert device_efficiency(get_gpu("H100")) is CUDA_EFFICIENCY
