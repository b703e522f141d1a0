"""The MXFP4 MoE kernel a vLLM user forces (--mxfp4-backend, as VLLM_MXFP4_USE_MARLIN=1 picks
it) reaches the time model (issue 30, gptosshopper62): kvplan.engines.vllm.engine
VllmRules.moe_kernels -> VllmMoeKernels.mxfp4_chosen. Read in vLLM 0.16.0 / 0.17.0 / 0.18.0
quantization/mxfp4.py get_mxfp4_backend (0.18.0:165-170 `if envs.VLLM_MXFP4_USE_MARLIN or not
triton_kernels_supported: ... MARLIN else TRITON`; 0.16.0:156, 0.17.0:164 the same) and 0.19.0
fused_moe/oracle/mxfp4.py select_mxfp4_moe_backend (:336-343, the explicit Marlin env before
the priority list whose TRITON comes first on SM 9.0, :169-184). InferenceX's gpt-oss H100 /
H200 scripts export VLLM_MXFP4_USE_MARLIN=1 (gptoss_fp4_h100.sh:29, gptoss_fp4_h200.sh:47 at
aiconfig_harness.INFERENCEX_COMMIT)."""

from __future__ import annotations

from dataclasses import replace
from dataclasses import replace as _replace

import pytest

from kvplan.engines.base import Engine
from kvplan.engines.moe_kernel import MXFP4_EXPERTS
from kvplan.engines.vllm.moe_kernel import VLLM_MARLIN_MXFP4_MOE, VLLM_MOE_KERNELS
from kvplan.engines.vllm.options import VllmOptions
from kvplan.hardware.gpus import GPU, get_gpu
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.efficiency import device_efficiency as _device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

CONFIG = "tests/data/configs/gpt-oss-120b.json"
RELEASES = ("0.15.1", "0.16.0", "0.17.0", "0.18.0", "0.19.0")

def device_efficiency(gpu: GPU) -> Efficiency:
    """The GPU's efficiency with the experts at the one fraction per format: these hand-worked
    prices are of the MoE kernels' rules, derived before moedefault63 made the experts' shape
    table the CUDA default (the table's own prices: tests/test_moe_gemm_shape.py,
    tests/test_cost_rules_cli.py), so the table is pinned off here."""
    return _replace(_device_efficiency(gpu), moe_gemm_shape=None)



def _kernel(gpu: str, version: str, chosen: str | None) -> object:
    kernels = Engine.vllm.rules.moe_kernels(VllmOptions(mxfp4_backend=chosen))
    assert kernels is not None
    return kernels.kernel(MXFP4_EXPERTS, version=version, gpu=get_gpu(gpu), ep=1, dp_ranks=1)


@pytest.mark.parametrize("version", RELEASES)
def test_marlin_forced_on_hopper_is_the_kernel_priced(version: str) -> None:
    for gpu in ("H100-80GB", "H200"):
        assert _kernel(gpu, version, None) is None  # the default: Triton's, not priced apart
        assert _kernel(gpu, version, "triton") is None
        assert _kernel(gpu, version, "marlin") is VLLM_MARLIN_MXFP4_MOE
    # SM 8.x runs Marlin whatever is asked (triton_kernels need 9.0 <= capability < 11.0).
    assert _kernel("A100-80GB", version, "triton") is VLLM_MARLIN_MXFP4_MOE
    # SM 10.x: FlashInfer's kernels, not priced apart, the user's pick not followed here.
    assert _kernel("B200", version, "marlin") is None


def test_no_option_keeps_the_declared_kernels() -> None:
    assert Engine.vllm.rules.moe_kernels(None) is VLLM_MOE_KERNELS
    assert Engine.vllm.rules.moe_kernels(VllmOptions()) is VLLM_MOE_KERNELS
    for engine in (Engine.sglang, Engine.trtllm):
        assert engine.rules.moe_kernels(None) is engine.rules.cost_traits.moe_kernel


def test_forced_marlin_prices_hoppers_prefill_step_by_hand() -> None:
    # gpt-oss-120b, a 2,048-token prefill step on one H100 under vLLM 0.18.0. Forced Marlin:
    # 36 layers x 2,048 tokens x 2 x 99,567,360 active parameters (4 experts x (2,880 x 5,760
    # + 5,760 + 2,880 x 2,880 + 2,880)) = 14.681 TFLOP, x 1.46682 padded rows (block 64 at 64
    # rows an expert; tests/test_marlin_moe.py) x 2,944 x 3,072 / 2,880^2 = 1.09037 (Marlin's
    # padded shapes, tpslope66: tests/test_marlin_padded_shapes.py) at the mma.sync rate,
    # 659.667 x 0.70 = 461.77 TFLOPS: 50.86 ms. Default (Triton's kernel, not priced apart):
    # the step with no kernel declared, as before this rule (tests/test_marlin_moe.py prices it
    # at the dense peak).
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("H100-80GB")
    kw = {"tokens": 2048, "context": 1, "requests": 1, "logits": 1}
    flops = 36 * 2048 * 2 * 99_567_360 * 1.46682 * 9_043_968 / 8_294_400
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.18.0")
    default = step_time(spec, gpu, eff=eff, **kw)
    marlin = step_time(spec, gpu, eff=engine_efficiency(
        "vllm", device_efficiency(gpu), version="0.18.0",
        options=VllmOptions(mxfp4_backend="marlin")), **kw)
    assert default.by_op == step_time(spec, gpu, eff=replace(eff, moe_kernel=None), **kw).by_op
    assert marlin.by_op["experts"] == pytest.approx(flops / (659.667e12 * 0.70), rel=1e-3)
    assert marlin.by_op["experts"] == pytest.approx(0.05086, rel=1e-3)
    assert marlin.by_op["experts"] > 2 * default.by_op["experts"]
