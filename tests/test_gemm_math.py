"""The type a quantized GEMM runs at (kvplan._util.dtypes.GemmMath): what a checkpoint's format
asks for (QuantScheme.math, kvplan.perf.weight_bytes.group_math) and what a card runs it at
(GPU.runs / GPU.peak_flops), and the cost model's charge for it (kvplan.perf.roofline)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvplan._util.dtypes import GemmMath
from kvplan.hardware.gpus import get_gpu
from kvplan.model.quant_config import parse_quantization_config
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.perf.weight_bytes import bytes_per_param, gemm_math, group_math
from kvplan.sources.resolve import load_model

ROOT = Path(__file__).resolve().parents[1]
KIMI_NVFP4 = ROOT / "tests" / "data" / "disagg" / "kimi-k2.5-nvfp4-text.json"
T = 10**12


def test_dense_peaks_per_gemm_type() -> None:
    # Dense tensor-core peaks (gpus.json, each with its datasheet): FP4 = 2 x FP8 = 4 x bf16
    # on B200 (HGX B200: 72 PF dense FP4, 9 PF sparse FP8, 4.5 PF sparse bf16 for 8 GPUs) and
    # GB200 (NVL72: 1,440 / 720 / 360 PF sparse for 72 GPUs); Blackwell Ultra raises FP4
    # only: B300 105 PF dense / 8 = 13,125, GB300 1,080 PF dense / 72 = 15,000 TFLOPS.
    expected = {"B200": (9000, 4500, 2250), "GB200": (10000, 5000, 2500),
                "B300": (13125, 4500, 2250), "GB300": (15000, 5000, 2500)}
    for name, (fp4, fp8, bf16) in expected.items():
        gpu = get_gpu(name)
        assert gpu.runs(GemmMath.fp4) is GemmMath.fp4
        assert [gpu.peak_flops(m) for m in GemmMath] == [bf16 * T, fp8 * T, fp4 * T]
    # Hopper has FP8 tensor cores (H100 / H200 datasheet: 3,958 TFLOPS* sparse -> 1,979 dense)
    # and no FP4 ones: a W4A4 NVFP4 GEMM runs weight-only (vLLM's FP4 Marlin kernel), at bf16.
    for name in ("H100", "H200"):
        gpu = get_gpu(name)
        assert gpu.peak_flops(GemmMath.fp8) == 1979 * T
        assert gpu.runs(GemmMath.fp4) is GemmMath.bf16
        assert gpu.peak_flops(GemmMath.fp4) == gpu.peak_bf16_flops_per_s == 989.5 * T
    # Ampere has neither: FP8 weights run weight-only too (FP8 Marlin), at 312 TFLOPS bf16.
    a100 = get_gpu("A100-80GB")
    assert a100.runs(GemmMath.fp8) is GemmMath.bf16
    assert a100.peak_flops(GemmMath.fp8) == 312 * T


def test_scheme_math_follows_the_activations() -> None:
    # modelopt NVFP4 is W4A4 (ModelOptNvFp4LinearMethod quantizes the input with
    # scaled_fp4_quant); compressed-tensors NVFP4 is W4A4 only when its group quantizes the
    # input activations to 4-bit floats too (NVFP4A16 otherwise: a Marlin kernel).
    modelopt = parse_quantization_config({"quant_method": "modelopt", "quant_algo": "NVFP4"},
                                         "x")
    assert modelopt.rules[0].scheme.math is GemmMath.fp4
    weights = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
    w4a4 = {"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "targets": ["Linear"], "weights": weights, "input_activations": dict(weights)}}}
    w4a16 = {"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "targets": ["Linear"], "weights": weights}}}
    assert parse_quantization_config(w4a4, "x").rules[0].scheme.math is GemmMath.fp4
    assert parse_quantization_config(w4a16, "x").rules[0].scheme.math is GemmMath.bf16
    fp8 = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    assert parse_quantization_config(fp8, "x").rules[0].scheme.math is GemmMath.fp8
    mxfp4 = {"quant_method": "mxfp4"}  # gpt-oss: MXFP4 experts, weight-only here
    assert parse_quantization_config(mxfp4, "x").rules[0].scheme.math is GemmMath.bf16


def test_group_math_by_bytes_per_parameter() -> None:
    fp4_fp8 = frozenset({GemmMath.fp4, GemmMath.fp8})
    assert group_math(1.0002, fp4_fp8) is GemmMath.fp8  # block FP8 + fp32 tile scales
    assert group_math(0.5627, fp4_fp8) is GemmMath.fp4  # NVFP4: 0.5 + 1/16 scale + swizzle pad
    assert group_math(2.0, fp4_fp8) is GemmMath.bf16  # an ignored (bf16) module
    assert group_math(0.5627, frozenset({GemmMath.bf16})) is GemmMath.bf16  # weight-only int4


def test_kimi_k25_nvfp4_groups() -> None:
    # nvidia/Kimi-K2.5-NVFP4's language model: quantization_config modelopt NVFP4 with every
    # self_attn and the lm_head ignored, so attention (and the lm_head) stay bf16 (2 B per
    # parameter) and the dense MLP and routed experts are W4A4 NVFP4 (about 0.51-0.56 B).
    spec, _ = load_model(str(KIMI_NVFP4))
    _, math = bytes_per_param(spec, 8)
    assert math == {"attention": GemmMath.bf16, "dense_mlp": GemmMath.fp4,
                    "experts": GemmMath.fp4, "lm_head": GemmMath.bf16}
    # On GB200 they run so; on an H200 the NVFP4 groups fall back to weight-only bf16.
    assert gemm_math(spec, 8, get_gpu("GB200"))["experts"] is GemmMath.fp4
    assert set(gemm_math(spec, 8, get_gpu("H200")).values()) == {GemmMath.bf16}


def test_nvfp4_experts_priced_at_the_fp4_peak() -> None:
    # A compute-bound prefill step of 32,768 tokens through Kimi-K2.5-NVFP4's routed experts on
    # one GB200 (EP 1: one rank holds every expert). Config: hidden 7168, moe_intermediate 2048,
    # 8 experts per token, gated (gate, up, down: 3 matrices of 7168 x 2048), 61 layers of which
    # the first (first_k_dense_replace 1) is dense: 60 MoE layers. FLOPs per MoE layer:
    # 32,768 tokens x 2 x 8 x 3 x 7168 x 2048 = 2.309e13; at 0.70 of GB200's dense FP4 10,000
    # TFLOPS: 3.299 ms a layer, 197.9 ms for 60. The weights (384 experts x 3 x 7168 x 2048 x
    # 0.56 B = 9.5 GB, all touched) take 1.32 ms a layer at 0.90 x 8 TB/s: compute-bound.
    spec, _ = load_model(str(KIMI_NVFP4))
    eff = Efficiency(kernel_floor_s=0.0, layer_overhead_s=0.0, prefill_launch_s=0.0)
    kw = {"tokens": 32768, "context": 32768, "requests": 1, "phase": "prefill", "eff": eff,
          "layout": Layout(tp=1)}
    flops = 60 * 32768 * 2 * 8 * 3 * 7168 * 2048
    gb200 = step_time(spec, get_gpu("GB200"), **kw).by_op["experts"]
    assert gb200 == pytest.approx(flops / (0.70 * 10000 * T))
    assert gb200 == pytest.approx(0.1979, rel=1e-3)
    # The same GEMMs at GB200's bf16 peak take 4 x as long (what kvplan charged before).
    bf16_card = replace(get_gpu("GB200"), peak_fp4_flops_per_s=None)
    assert step_time(spec, bf16_card, **kw).by_op["experts"] == pytest.approx(4 * gb200)
