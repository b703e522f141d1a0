"""The float32 MoE router GEMM (kvplan.engines.router_gemm, kvplan.perf.router_cost): which
routers run in float32 by engine and release, and their time at the card's FP32 peak."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan.engines.sglang.router_gemm import SGLANG_ROUTER_GEMM
from kvplan.engines.vllm.router_gemm import VLLM_ROUTER_GEMM
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.roofline import step_time
from kvplan.perf.router_cost import fp32_router_runs, fp32_router_s

CONFIGS = "tests/data/configs"
AGG_CONFIGS = "tests/data/sim_to_real/aiconfig_configs"
H100 = get_gpu("H100-80GB")
PREFILL = {"tokens": 8192, "context": 8192, "requests": 1, "phase": "prefill"}


def _eff(engine: str, version: str, gpu=H100, spec=None):  # type: ignore[no-untyped-def]
    return engine_efficiency(engine, device_efficiency(gpu), version=version, spec=spec)


def test_gpu_fp32_peaks_read_from_the_datasheets() -> None:
    # H100 SXM: "FP32 67 teraFLOPS", "TF32 Tensor Core 989 teraFLOPS" with sparsity -> 494.5.
    assert H100.peak_fp32_flops_per_s == 67 * 10**12
    assert H100.peak_tf32_flops_per_s == 494_500 * 10**9
    assert get_gpu("A100-80GB").peak_fp32_flops_per_s == 19_500 * 10**9
    # HGX B200 / HGX B300 (8 GPUs): "FP32 600 TFLOPS" -> 75 per GPU (fp32bw63).
    assert get_gpu("B200").peak_fp32_flops_per_s == 75 * 10**12
    assert get_gpu("B300").peak_fp32_flops_per_s == 75 * 10**12
    # No NVIDIA figure read: None, and the router is not priced there.
    assert get_gpu("GB200").peak_fp32_flops_per_s is None
    assert get_gpu("GB300").peak_fp32_flops_per_s is None


def test_minimax_m2_router_on_h100_by_hand() -> None:
    spec = load_spec(f"{CONFIGS}/minimax-m2.json")
    eff = _eff("vllm", "0.20.0", spec=spec)
    assert fp32_router_runs(spec, H100, eff)
    # One MoE layer, 8,192 tokens: 2 x 8,192 x hidden 3,072 x 256 experts = 12,884,901,888
    # FLOPs at 67e12 (H100 SXM FP32) x 0.70 (kvplan's dense GEMM fraction) = 46.9e12 FLOP/s:
    # 274.73 us.
    one = fp32_router_s(spec, H100, eff, router_params=3072 * 256, tokens=8192)
    assert one == pytest.approx(12_884_901_888 / 46.9e12)
    assert one == pytest.approx(274.73e-6, rel=1e-4)
    # The step: 62 MoE layers, 62 x 274.73 us = 17.03 ms, on top of what it cost before, and
    # the float32 copy of the router's input (kvplan.perf.norm_traffic): 62 x 8,192 x 3,072 x 4
    # = 6,241,124,352 bytes at 3.35e12 x 0.9 (H100 HBM x hbm) = 2.0700 ms; 19.103 ms in all.
    with_router = step_time(spec, H100, eff=eff, **PREFILL)
    without = step_time(spec, H100, eff=replace(eff, router_gemm=None), **PREFILL)
    assert with_router.by_op["router_fp32"] == pytest.approx(62 * 274.73e-6, rel=1e-4)
    assert with_router.seconds - without.seconds == pytest.approx(0.017033 + 0.0020700,
                                                                  rel=1e-4)
    assert "router_fp32" not in without.by_op


def test_minimax_m25_router_on_b200_by_hand() -> None:
    # MiniMax-M2.5 (the aggregated rows' checkpoint: MiniMax-M2's shapes) on B200 under vLLM
    # 0.19.0, where minimax_m2.py:113-119, :132 runs the gate as a float32 ReplicatedLinear
    # (F.linear, layers/utils.py:92-98, :302-308) and 0.32.0's bf16x3 tensor-core tier
    # (gate_linear.py:122-129, :273-280) does not exist yet.
    spec = load_spec(f"{AGG_CONFIGS}/MiniMaxAI--MiniMax-M2.5.json")
    b200 = get_gpu("B200")
    eff = _eff("vllm", "0.19.0", b200, spec)
    assert fp32_router_runs(spec, b200, eff)
    # One MoE layer, 8,192 tokens: 2 x 8,192 x hidden 3,072 x 256 experts = 12,884,901,888
    # FLOPs at 75e12 (HGX B200 FP32 600 TFLOPS / 8) x 0.70 (the dense GEMM fraction) =
    # 52.5e12 FLOP/s: 245.43 us.
    one = fp32_router_s(spec, b200, eff, router_params=3072 * 256, tokens=8192)
    assert one == pytest.approx(245.43e-6, rel=1e-4)
    # 62 MoE layers: 62 x 245.43 us = 15.217 ms added to the lone 8,192-token step, and the
    # float32 copy of the router's input (kvplan.perf.norm_traffic): 6,241,124,352 bytes (62 x
    # 8,192 x 3,072 x 4) at 8e12 x 0.9 (B200 HBM x hbm) = 0.86682 ms; 16.084 ms in all.
    with_router = step_time(spec, b200, eff=eff, **PREFILL)
    without = step_time(spec, b200, eff=replace(eff, router_gemm=None), **PREFILL)
    assert with_router.by_op["router_fp32"] == pytest.approx(0.015217, rel=1e-4)
    assert with_router.seconds - without.seconds == pytest.approx(0.015217 + 0.00086682,
                                                                  rel=1e-4)
    # 0.32.0 runs it on the tensor cores on SM 10.x: no FP32 term.
    assert not fp32_router_runs(spec, b200, _eff("vllm", "0.32.0", b200, spec))


def test_a_compute_dtype_router_is_unchanged() -> None:
    # Qwen3-30B-A3B's and DeepSeek-V3's routers run in the compute dtype on vLLM: no FP32 term,
    # the step exactly as without the rule.
    for name in ("qwen3-30b-a3b", "deepseek-v3"):
        spec = load_spec(f"{CONFIGS}/{name}.json")
        eff = _eff("vllm", "0.20.0", spec=spec)
        assert not fp32_router_runs(spec, H100, eff)
        st = step_time(spec, H100, eff=eff, **PREFILL)
        assert "router_fp32" not in st.by_op
        assert st.seconds == step_time(spec, H100, eff=replace(eff, router_gemm=None),
                                       **PREFILL).seconds


@pytest.mark.parametrize(("rule", "arch", "version", "capability", "fp32"), [
    # vLLM: GLM-4.5's gate float32 from 0.10.1 (0.10.0 a ReplicatedLinear in the compute dtype).
    (VLLM_ROUTER_GEMM, "Glm4MoeForCausalLM", "0.10.0", (9, 0), False),
    (VLLM_ROUTER_GEMM, "Glm4MoeForCausalLM", "0.10.1", (9, 0), True),
    (VLLM_ROUTER_GEMM, "Glm4MoeForCausalLM", "0.32.0", (9, 0), True),
    # Blackwell: 0.32.0's bf16x3 tensor-core router GEMM; 0.20.0 has none.
    (VLLM_ROUTER_GEMM, "MiniMaxM2ForCausalLM", "0.20.0", (10, 0), True),
    (VLLM_ROUTER_GEMM, "MiniMaxM2ForCausalLM", "0.32.0", (10, 0), False),
    (VLLM_ROUTER_GEMM, "MiniMaxM2ForCausalLM", None, (10, 0), False),
    (VLLM_ROUTER_GEMM, "Ernie4_5_MoeForCausalLM", "0.11.0", (9, 0), False),
    (VLLM_ROUTER_GEMM, "GptOssForCausalLM", "0.20.0", (9, 0), False),
    (VLLM_ROUTER_GEMM, "DeepseekV3ForCausalLM", "0.20.0", (9, 0), False),
    # SGLang: MiniMax-M2 float32 in 0.5.7 and 0.5.10; GLM-4.5 from 0.5.10.
    (SGLANG_ROUTER_GEMM, "MiniMaxM2ForCausalLM", "0.5.7", (9, 0), True),
    (SGLANG_ROUTER_GEMM, "Glm4MoeForCausalLM", "0.5.9", (9, 0), False),
    (SGLANG_ROUTER_GEMM, "Glm4MoeForCausalLM", "0.5.10", (9, 0), True),
])
def test_which_routers_run_in_float32(rule, arch, version, capability, fp32) -> None:  # type: ignore[no-untyped-def]
    assert rule.fp32((arch,), version, capability) is fp32


def test_no_rule_no_peak_no_price() -> None:
    spec = load_spec(f"{CONFIGS}/minimax-m2.json")
    # TensorRT-LLM declares no float32 router; a GPU without an FP32 peak prices none either.
    assert not fp32_router_runs(spec, H100, _eff("trtllm", "1.2.0", spec=spec))
    gb200 = get_gpu("GB200")
    assert fp32_router_s(spec, gb200, _eff("vllm", "0.20.0", gb200, spec), router_params=1,
                         tokens=1) == 0.0
