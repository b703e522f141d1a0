"""vLLM's block-FP8 fused MoE at the fitted FP8 MoE fraction behind VllmMoeKernels.fp8_fitted
(vllmfp8moe61; kvplan.engines.vllm.moe_kernel)."""

from __future__ import annotations

from dataclasses import replace
from dataclasses import replace as _replace

import pytest

from kvplan._util.dtypes import GemmMath
from kvplan.engines.moe_kernel import BF16_EXPERTS, FP8_BLOCK_EXPERTS
from kvplan.engines.vllm.moe_kernel import (
    VLLM_FI_CUTLASS_FP8_BLOCK_MOE,
    VLLM_MOE_KERNELS,
    VLLM_TRITON_FP8_BLOCK_MOE,
    VLLM_TRITON_MOE,
    VllmMoeKernels,
)
from kvplan.hardware.gpus import GPU, get_gpu
from kvplan.perf.efficiency import FP8_MOE_GEMM, Efficiency
from kvplan.perf.efficiency import device_efficiency as _device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.moe_kernel import fitted_fp8_experts
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

CONFIG = "tests/data/configs/minimax-m2.json"
ON = VllmMoeKernels(fp8_fitted=True)

def device_efficiency(gpu: GPU) -> Efficiency:
    """The GPU's efficiency with the experts at the one fraction per format: these hand-worked
    prices are of the MoE kernels' rules, derived before moedefault63 made the experts' shape
    table the CUDA default (the table's own prices: tests/test_moe_gemm_shape.py,
    tests/test_cost_rules_cli.py), so the table is pinned off here."""
    return _replace(_device_efficiency(gpu), moe_gemm_shape=None)



def test_the_switch_marks_only_block_fp8_kernels() -> None:
    h100 = get_gpu("H100-80GB")
    kw = {"version": "0.20.0", "gpu": h100, "dp_ranks": 1}
    # Default (the frozen rule): vLLM's kernels as before, no fitted fraction.
    assert VLLM_MOE_KERNELS.fp8_fitted is False
    assert VLLM_MOE_KERNELS.kernel(FP8_BLOCK_EXPERTS, ep=1, **kw) is VLLM_TRITON_FP8_BLOCK_MOE
    assert not VLLM_TRITON_FP8_BLOCK_MOE.fitted_fp8
    # On: Triton without EP, FlashInfer CUTLASS under EP (oracle/fp8.py 0.20.0 / 0.32.0
    # priority), each marked; 16-bit experts unchanged.
    assert ON.kernel(FP8_BLOCK_EXPERTS, ep=1, **kw) == replace(VLLM_TRITON_FP8_BLOCK_MOE,
                                                               fitted_fp8=True)
    assert ON.kernel(FP8_BLOCK_EXPERTS, ep=8, **kw) == replace(VLLM_FI_CUTLASS_FP8_BLOCK_MOE,
                                                               fitted_fp8=True)
    assert ON.kernel(BF16_EXPERTS, ep=1, version="0.19.0", gpu=h100, dp_ranks=1) \
        is VLLM_TRITON_MOE
    assert fitted_fp8_experts(ON, fmt=FP8_BLOCK_EXPERTS, ep=1, **kw)
    assert not fitted_fp8_experts(ON, fmt=BF16_EXPERTS, ep=1, **kw)
    assert not fitted_fp8_experts(VLLM_MOE_KERNELS, fmt=FP8_BLOCK_EXPERTS, ep=1, **kw)
    # The fraction: FP8 math of a marked kernel at FP8_MOE_GEMM (0.20), else the dense one;
    # an explicit fp8_moe_gemm still wins.
    assert Efficiency().experts_fraction(GemmMath.fp8, 512.0, 0.70, True) == FP8_MOE_GEMM == 0.20
    assert Efficiency().experts_fraction(GemmMath.fp8, 512.0, 0.70, False) == 0.70
    assert Efficiency(fp8_moe_gemm=0.3).experts_fraction(GemmMath.fp8, 512.0, 0.70, True) == 0.3


def test_compute_bound_experts_slow_by_the_fraction_by_hand() -> None:
    # MiniMax-M2 (block-FP8 experts, hidden 3,072, experts 1,536 wide, 256 of them, top 8, 62
    # layers) on one H100 under vLLM 0.20.0 (Triton, no EP), a 32,768-token prefill step:
    # 62 x 32,768 tokens x 8 experts x 3 x 3,072 x 1,536 weights x 2 FLOPs = 460.1 TFLOP, times
    # Triton's padded rows (1,024 rows an expert in blocks of 64: 1.03073) = 474.3 TFLOP,
    # against ~3.6 GB of FP8 experts a layer: compute-bound at 0.70 and at 0.20 of the FP8
    # peak (1,979 TFLOPS). The experts op's quantize bytes are the same both ways, so it takes
    # 474.3e12 / 1,979e12 x (1 / 0.20 - 1 / 0.70) = 0.8559 s longer with the switch on.
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("H100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.20.0")
    assert eff.moe_kernel is VLLM_MOE_KERNELS
    kw = {"tokens": 32768, "context": 1, "requests": 1, "logits": 1}
    off = step_time(spec, gpu, eff=eff, **kw)
    on = step_time(spec, gpu, eff=replace(eff, moe_kernel=ON), **kw)
    flops = 62 * 32768 * 8 * 3 * 3072 * 1536 * 2 * 1.0307291
    assert on.by_op["experts"] - off.by_op["experts"] == pytest.approx(
        flops / 1979e12 * (1 / 0.20 - 1 / 0.70), rel=1e-6)
    assert on.by_op["experts"] - off.by_op["experts"] == pytest.approx(0.8559, rel=1e-4)
    assert on.by_op["attention"] == off.by_op["attention"]
