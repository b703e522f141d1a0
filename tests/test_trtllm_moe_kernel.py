"""TensorRT-LLM's CUTLASS block-FP8 MoE at the fitted FP8 MoE fraction (kvplan.engines.trtllm.
moe_kernel, trtfp8moe61): where it runs (block-FP8 experts on SM 9.x only), that kvplan prices
only its fraction (not its activations), and one MoE layer of DeepSeek-V3 worked by hand."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from kvplan.engines.moe_kernel import BF16_EXPERTS, FP8_BLOCK_EXPERTS, MXFP4_EXPERTS
from kvplan.engines.trtllm.moe_kernel import (
    TRTLLM_CUTLASS_FP8_BLOCK_MOE,
    TRTLLM_MOE_KERNELS,
    TrtllmMoeKernels,
)
from kvplan.hardware.gpus import get_gpu
from kvplan.model.quant import GemmMath
from kvplan.perf.efficiency import DEFAULT_EFFICIENCY, FP8_MOE_GEMM
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.moe_kernel import fitted_fp8_experts, layer_kernel, priced_kernel
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_spec

ON = TrtllmMoeKernels(cutlass_fp8_fitted=True)


@contextmanager
def switch(on: bool) -> Iterator[None]:
    saved = TRTLLM_MOE_KERNELS.cutlass_fp8_fitted
    object.__setattr__(TRTLLM_MOE_KERNELS, "cutlass_fp8_fitted", on)
    try:
        yield
    finally:
        object.__setattr__(TRTLLM_MOE_KERNELS, "cutlass_fp8_fitted", saved)


def test_runs_for_block_fp8_on_hopper_only() -> None:
    kw = {"version": "1.2.0", "ep": 8, "dp_ranks": 1}
    for name in ("H100", "H200"):  # SM 9.0: CutlassFusedMoE's block-scale path
        assert ON.kernel(FP8_BLOCK_EXPERTS, gpu=get_gpu(name), **kw) is TRTLLM_CUTLASS_FP8_BLOCK_MOE
    # SM 10.0 runs DeepGEMM for block FP8; SM 8.0 has no FP8; other formats are not this kernel.
    for name in ("B200", "A100"):
        assert ON.kernel(FP8_BLOCK_EXPERTS, gpu=get_gpu(name), **kw) is None
    for fmt in (BF16_EXPERTS, MXFP4_EXPERTS, None):
        assert ON.kernel(fmt, gpu=get_gpu("H200"), **kw) is None
    assert ON.kernel(FP8_BLOCK_EXPERTS, gpu=None, **kw) is None
    off = TrtllmMoeKernels(cutlass_fp8_fitted=False)
    assert off.kernel(FP8_BLOCK_EXPERTS, gpu=get_gpu("H200"), **kw) is None
    assert engine_efficiency("trtllm").moe_kernel is TRTLLM_MOE_KERNELS


def test_fraction_only_whatever_the_layout() -> None:
    h200 = get_gpu("H200")
    # Its activations are not priced (priced_kernel: None), its fraction is, under EP over DP
    # ranks too (attention DP: TensorRT-LLM's DeepSeek serving layout).
    for ep, dp in ((1, 1), (8, 1), (8, 8)):
        kw = {"fmt": FP8_BLOCK_EXPERTS, "version": None, "gpu": h200, "ep": ep, "dp_ranks": dp}
        assert priced_kernel(ON, **kw) is None
        assert fitted_fp8_experts(ON, **kw)
    assert layer_kernel(ON, fmt=FP8_BLOCK_EXPERTS, version=None, gpu=h200,
                        layout=Layout(tp=8, ep=8)) == (None, True)
    assert not fitted_fp8_experts(ON, fmt=BF16_EXPERTS, version=None, gpu=h200, ep=1,
                                  dp_ranks=1)
    assert not fitted_fp8_experts(None, fmt=FP8_BLOCK_EXPERTS, version=None, gpu=h200, ep=1,
                                  dp_ranks=1)


def test_experts_fraction_order() -> None:
    eff = DEFAULT_EFFICIENCY
    assert FP8_MOE_GEMM == 0.20
    assert eff.experts_fraction(GemmMath.fp8, 512, 0.70, True) == 0.20
    assert eff.experts_fraction(GemmMath.fp8, 512, 0.70, False) == 0.70
    assert eff.experts_fraction(GemmMath.bf16, 512, 0.70, True) == 0.70  # FP8 math only
    # An explicit --fp8-moe-gemm value wins over the kernel's.
    assert replace(eff, fp8_moe_gemm=0.5).experts_fraction(GemmMath.fp8, 512, 0.70, True) == 0.5


def test_deepseek_v3_moe_layer_by_hand() -> None:
    # DeepSeek-V3 (tests/data/configs/deepseek-v3.json: hidden 7168, moe_intermediate_size
    # 2048, 256 routed experts, top-8, block-FP8 weights [128, 128]); layer 3, its first MoE
    # layer, one 8,192-token prefill on one H200 under TensorRT-LLM 1.2.0. The routed experts'
    # FLOPs: 8192 x 2 x 8 x 3 x 7168 x 2048 = 5,772,436,045,824 (the shared expert is an op of
    # its own). H200's FP8 peak 1,979 TFLOPS (dense). At the fitted 0.20 the op is
    # compute-bound: 5.772436e12 / (1.979e15 x 0.20) = 14.5842 ms; off, at the dense 0.70:
    # 4.1669 ms (3.5x less). Its FP8 weights, 256 x 3 x 7168 x 2048 B = 11.27 GB (every expert
    # touched), take 11.27e9 / (4.8e12 B/s x 0.69) = 3.40 ms < 4.17 ms: compute-bound either way.
    spec = load_spec("tests/data/configs/deepseek-v3.json")
    kw = {"tokens": 8192, "context": 8192, "requests": 1, "phase": "prefill",
          "layers": range(3, 4)}
    times = []
    for on in (False, True):
        with switch(on):
            eff = engine_efficiency("trtllm", version="1.2.0")
            times.append(step_time(spec, get_gpu("H200"), eff=eff, **kw).by_op["experts"])
    flops = 8192 * 2 * 8 * 3 * 7168 * 2048
    assert flops == 5_772_436_045_824
    # Either way the prefill (TensorRT-LLM's context step, trtctx66: kvplan.perf.trtllm_bytes
    # context_moe_kernel) charges the CUTLASS kernel's two 1 x 128 quantize kernels to the op
    # beyond their floors: 65,536 pairs x (2 x 7,168 + 7,168 + 56 x 4) = 1,423,966,208 B and
    # 65,536 x (2 x 2,048 + 2,048 + 16 x 4) = 406,847,488 B at 4.8e12 x 0.90 B/s, less 2 x 4 us
    # (0.4158 ms); its GEMMs' activations (65,536 x 32,032 B = 2.10 GB) join the weights' bytes:
    # 13.37e9 / (4.8e12 x 0.69) = 4.04 ms, still under the FLOPs' time.
    eff = engine_efficiency("trtllm", version="1.2.0")
    quant = (1_423_966_208 + 406_847_488) / (4.8e12 * eff.hbm) - 2 * eff.kernel_floor_s
    assert times[1] == pytest.approx(flops / (1979e12 * 0.20) + quant, rel=1e-9)  # 15.000 ms
    assert times[0] == pytest.approx(flops / (1979e12 * 0.70) + quant, rel=1e-9)  # 4.583 ms
    # B200 runs DeepGEMM for block FP8: unchanged.
    b200 = []
    for on in (False, True):
        with switch(on):
            eff = engine_efficiency("trtllm", version="1.2.0")
            b200.append(step_time(spec, get_gpu("B200"), eff=eff, **kw).by_op["experts"])
    assert b200[0] == b200[1]
