"""SGLang's Hopper decode rules (sglh200_68, kvplan.engines.sglang.allreduce_fusion and
.shared_fusion): the flashinfer all-reduce + RMSNorm fusion on SM 9.0 from 0.5.7, and
DeepSeek-V3's shared expert inside the fused MoE on CUDA at EP 1 from 0.5.7, each priced by hand
and absent before its release, under EP, on the H20 and off the architectures the code names."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvplan import load_spec
from kvplan.engines.sglang.allreduce_fusion import (
    SGLANG_ALLREDUCE_NORM_FUSION_056,
    SGLANG_ALLREDUCE_NORM_FUSION_057,
    SGLANG_ALLREDUCE_NORM_FUSION_059,
)
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency, fuses_allreduce_norm
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.perf.shared_fusion import engine_folds_shared_expert

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
DEEPSEEK = load_spec(str(CONFIGS / "deepseek-v3.json"))  # 61 layers: 3 dense + 58 MoE, 256 + 1
QWEN3_MOE = load_spec(str(CONFIGS / "qwen3-30b-a3b.json"))  # qwen3_moe, 48 layers
GLM_LITE = load_spec(str(CONFIGS / "glm-4.7-flash.json"))  # glm4_moe_lite
US = 1e-6
TP8 = Layout(tp=8)


def _eff(gpu: str, version: str | None):
    return engine_efficiency("sglang", device_efficiency(get_gpu(gpu)), version=version)


def _step(gpu: str, version: str | None, *, spec=DEEPSEEK, layout=TP8, eff=None):
    return step_time(spec, get_gpu(gpu), tokens=1, context=1000, requests=1, layout=layout,
                     eff=eff if eff is not None else _eff(gpu, version), quantization="fp8")


def test_each_release_keeps_its_own_declaration():
    # server_args.py 0.5.6 (SM 10.x only), 0.5.7:1470-1492, 0.5.9:1672-1697.
    assert _eff("H200", "0.5.6").allreduce_norm_fusion is SGLANG_ALLREDUCE_NORM_FUSION_056
    assert _eff("H200", "0.5.6.post2").allreduce_norm_fusion is SGLANG_ALLREDUCE_NORM_FUSION_056
    assert _eff("H200", "0.5.8").allreduce_norm_fusion is SGLANG_ALLREDUCE_NORM_FUSION_057
    assert _eff("H200", "0.5.9").allreduce_norm_fusion is SGLANG_ALLREDUCE_NORM_FUSION_059
    # No release named: the undated declaration only (the launch time's fit rows name none).
    assert _eff("H200", None).allreduce_norm_fusion is SGLANG_ALLREDUCE_NORM_FUSION_056
    assert engine_efficiency("vllm", version="0.19.0").allreduce_norm_fusion is None


def test_deepseek_h200_tp8_decode_drops_both_sets_of_kernels_at_057():
    # One decode token, DeepSeek-V3 FP8, H200 TP 8, 4 us kernel floor (device_efficiency):
    # - the fusion: 2 x 61 - 1 = 121 fused all-reduces a step (every layer's post-attention norm,
    #   every input norm but layer 0's), each norm's floor gone: 121 x 4 us = 484 us off
    #   small_kernels (sgldec67's ~0.48 ms);
    # - the shared expert in fused_moe: 58 MoE layers x (2 w8a8 GEMMs x (quantize + GEMM)) = 58
    #   x 4 x 4 us = 928 us off the mlp op (its 5.5 MB a layer join the experts' op, still at the
    #   one-token floor); the 3 dense layers' MLPs stay (3 x 16 = 48 us).
    before, after = _step("H200", "0.5.6"), _step("H200", "0.5.7")
    assert before.by_op["small_kernels"] - after.by_op["small_kernels"] == pytest.approx(484 * US)
    assert before.by_op["mlp"] - after.by_op["mlp"] == pytest.approx(928 * US)
    assert after.by_op["mlp"] == pytest.approx(48 * US)
    assert after.by_op["experts"] == pytest.approx(before.by_op["experts"])
    assert before.seconds - after.seconds == pytest.approx((484 + 928) * US)


def test_the_fusion_follows_the_gpu_model_and_release():
    # 0.5.7: qwen3_moe on SM 9.0 (Qwen3MoeForCausalLM is named) but not on the H20 (flashinfer
    # issue 2204) nor at TP 1 or under DP attention; glm4_moe_lite only from 0.5.9.
    h100, h20, b200 = get_gpu("H100-80GB"), get_gpu("H20"), get_gpu("B200")
    e057, e056 = _eff("H100-80GB", "0.5.7"), _eff("H100-80GB", "0.5.6")
    assert fuses_allreduce_norm(QWEN3_MOE, h100, TP8, 16, e057)
    assert fuses_allreduce_norm(QWEN3_MOE, b200, TP8, 16, e057)
    assert not fuses_allreduce_norm(QWEN3_MOE, b200, TP8, 16, e056)  # 0.5.6: not named
    assert not fuses_allreduce_norm(QWEN3_MOE, h100, TP8, 16, e056)
    assert not fuses_allreduce_norm(QWEN3_MOE, h20, TP8, 16, e057)
    assert not fuses_allreduce_norm(QWEN3_MOE, h100, Layout(tp=1), 16, e057)
    assert not fuses_allreduce_norm(QWEN3_MOE, h100, TP8, 4096, e057)  # > 2,048 tokens
    assert not fuses_allreduce_norm(GLM_LITE, h100, TP8, 16, e057)
    assert fuses_allreduce_norm(GLM_LITE, h100, TP8, 16, _eff("H100-80GB", "0.5.9"))
    # Qwen3-30B-A3B's 48 layers at TP 8 on the H100: 2 x 48 - 1 = 95 norms x 4 us = 380 us.
    assert (_step("H100-80GB", "0.5.6", spec=QWEN3_MOE).by_op["small_kernels"]
            - _step("H100-80GB", "0.5.7", spec=QWEN3_MOE).by_op["small_kernels"]
            == pytest.approx(95 * 4 * US))


@pytest.mark.parametrize(("gpu", "version", "layout", "folded"), [
    ("H200", "0.5.7", TP8, True),
    ("H100-80GB", "0.5.9", TP8, True),
    ("A100-80GB", "0.5.7", TP8, True),  # CUDA capability (8, 0) is enough (:3363-3369)
    ("H200", "0.5.6", TP8, False),  # before the release read
    ("H200", "0.5.7", Layout(tp=8, ep=8), False),  # EP > 1 keeps it on HIP only (:3370-3373)
    ("MI300X", "0.5.7", Layout(tp=8, ep=8), True),  # ... which ROCm's declaration keeps
    ("B200", "0.5.9", TP8, False),  # flashinfer_trtllm sets --disable-shared-experts-fusion
])
def test_the_cuda_fold_follows_determine_num_fused_shared_experts(gpu, version, layout, folded):
    eff = _eff(gpu, version)
    assert engine_folds_shared_expert(eff, DEEPSEEK, get_gpu(gpu), layout, "fp8") is folded


def test_w4afp8_and_other_expert_counts_stay_apart():
    # :3357-3362 (256 routed + 1 shared, DeepseekV3ForCausalLM) and :3376-3377 (w4afp8).
    eff, h200 = _eff("H200", "0.5.9"), get_gpu("H200")
    assert not engine_folds_shared_expert(eff, DEEPSEEK, h200, TP8, "w4afp8")
    kimi = load_spec(str(CONFIGS / "kimi-k2.json"))  # 384 routed experts
    assert not engine_folds_shared_expert(eff, kimi, h200, TP8, "fp8")


def test_no_second_stream_where_the_expert_is_folded():
    # The two rules split CUDA (shared_stream's `unfused` is False on Hopper at EP 1): the
    # captured decode step on the H200 hides nothing more than the folded one.
    eff = _eff("H200", "0.5.9")
    folded = _step("H200", "0.5.9", eff=eff)
    captured = step_time(DEEPSEEK, get_gpu("H200"), tokens=1, context=1000, requests=1,
                         layout=TP8, eff=eff, quantization="fp8", captured=True)
    assert captured.seconds == pytest.approx(folded.seconds)
    apart = _step("H200", "0.5.9", eff=replace(eff, shared_expert_fusion=()))
    assert apart.seconds - folded.seconds == pytest.approx(928 * US)


def test_estimate_and_simulate_price_the_h200_decode_step_alike():
    """`estimate` / `plan` (plan_search's CostInputs) and `simulate` (MixedStepCost) take both
    rules from the one Efficiency engine_efficiency builds: DeepSeek-V3 (its config.json, which
    names DeepseekV3ForCausalLM) on H200 TP 8 under SGLang 0.5.9, 16 decodes at 2,048 keys, the
    same decode step (to the bit at 0.5.9; 0.5.6's differ in the last bit, summation order);
    under 0.5.6 both are slower by the fused norms and the shared MLP's kernels (2 x 61 - 1 =
    121 norm floors x 4 us = 484 us; 58 x 4 floors x 4 us = 928 us), less what the shared
    expert's weights add to the routed experts' op at 16 tokens, where that op streams its
    bytes: 7168 x (2 x 2048 / 8 + 2048 / 8) = 5,505,024 FP8 bytes a rank at 0.69 (fp8_gemm_hbm)
    x 4.8 TB/s = 1.662 us a layer, 58 x 1.662 = 96.4 us: 484 + 928 - 96.4 = 1,315.6 us."""
    from kvplan.analysis.inputs import estimate_inputs
    from kvplan.analysis.plan_search import _cost_setup, evaluate
    from kvplan.analysis.plan_types import Layout as PlanLayout
    from kvplan.analysis.plan_types import PlanRequest
    from kvplan.analysis.simulate.run import setup
    from kvplan.engines.base import Engine
    from kvplan.perf.costmodel import predict

    gpu, sglang = get_gpu("H200"), Engine("sglang")

    def steps(version: str) -> tuple[float, float]:
        inputs = estimate_inputs(DEEPSEEK, context=8192, kv_dtype="bf16", engine=sglang,
                                 gpu="H200", tp=8, engine_version=version)
        sim, _ = setup(DEEPSEEK, inputs)
        req = PlanRequest(concurrency=16, context=8192, gpu=gpu, engine=sglang,
                          engine_version=version)
        cand = evaluate(DEEPSEEK, req, gpu, PlanLayout(tp=8), "bf16", None, 8192)
        assert cand is not None
        served, g, ci = _cost_setup(DEEPSEEK, req, cand)
        est = predict(served, g, replace(ci, context=2048, batch=16)).decode_step_ms
        return est, sim.cost.seconds(decode_contexts=[2048] * 16, chunks=[]) * 1e3

    new, old = steps("0.5.9"), steps("0.5.6")
    assert new[0] == new[1] and old[0] == pytest.approx(old[1], rel=1e-12)
    shared_bytes_s = 58 * 7168 * 768 / (0.69 * 4.8e12)
    assert old[0] - new[0] == pytest.approx(0.484 + 0.928 - shared_bytes_s * 1e3, rel=1e-4)
