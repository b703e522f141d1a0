"""The time model's weights under SGLang's --enable-dp-attention (kvplan.perf.roofline, module
docstring; Efficiency.dp_attention_weights, set by engine_efficiency from the engine's
EngineRules.dp_attention_weights): SGLang keeps the dense MLPs, the shared experts and the
lm_head split over the whole TP group (0.5.4 models/deepseek_v2.py DeepseekV2MLP:391-424 for the
dense layers, :601-615 the shared experts, ParallelLMHead :2862-2868), so a decode step streams
1 / tp of their weights on each rank and runs them on the tokens gathered from every DP rank
(the gather: communicator.py `_gather_hidden_states_and_residual`; the lm_head's rows:
layers/logits_processor.py:576-582 `dp_gather_replicate`, 0.5.4): per rank gathered tokens x 2 x
params / tp FLOPs. vLLM and TensorRT-LLM keep them whole on every DP rank (unchanged)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvplan import load_spec
from kvplan.capacity.weights import weights_breakdown
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time

H200 = get_gpu("H200")  # 4.8 TB/s; 989.5 / 1,979 dense bf16 / FP8 TFLOPS
GLM_45 = Path(__file__).resolve().parent / "data" / "configs" / "glm-4.5.json"
US = 1e-6


def _steps(spec, layout: Layout, engine: str = "sglang", **kw):
    """(before, after): the step with the engine's placement taken as whole (the time model
    before this rule) and as the engine answers."""
    eff = engine_efficiency(engine, device_efficiency(H200))
    after = step_time(spec, H200, layout=layout, eff=eff, **kw)
    before = step_time(spec, H200, layout=layout, eff=replace(eff, dp_attention_weights=None),
                       **kw)
    return before, after


def test_deepseek_v3_h200_dp8_decode_streams_an_eighth_by_hand() -> None:
    # DeepSeek-V3 (config.json: hidden 7,168, intermediate 18,432 on the first 3 dense layers,
    # one shared expert of 2,048 on the other 58, vocabulary 129,280; FP8 e4m3 weights, the
    # lm_head bf16) on H200 DP8 attention + EP8 (TP group 8), one decode step at 64 requests a
    # rank and 2,048 cached tokens: 8 x 64 = 512 tokens gathered into every MLP.
    spec = load_spec("deepseek-v3")
    before, after = _steps(spec, Layout(tp=8, ep=8, dp_attention=True), tokens=64,
                           context=2048, requests=64)
    hbm_fp8 = 4.8e12 * 0.69  # FP8 (w8a8) GEMMs stream at fp8_gemm_hbm
    fp8_rate = 1979e12 * 0.70
    floor = 2 * 2 * 4 * US  # gate_up + down, each with its activation quantization: 4 kernels
    # The dense-MLP group's block scales (4 B per 128 x 128 block) ride with it in proportion
    # to the weights they share the non-expert scales with (kvplan.perf.weight_bytes): whole,
    # 3,707,232 B of scales over 13,460,492,288 + 3,743,416,320 B; a TP-8 rank 666,656 over
    # 2,490,814,464 + 467,927,040.
    whole, rank = weights_breakdown(spec, tp=1), weights_breakdown(spec, tp=8)
    assert (whole.attention, whole.dense_mlp) == (13_460_492_288, 3_743_416_320)
    assert (rank.attention, rank.dense_mlp) == (2_490_814_464, 467_927_040)
    scale_1 = 1 + 3_707_232 / (13_460_492_288 + 3_743_416_320)
    scale_8 = 666_656 / (2_490_814_464 + 467_927_040)  # per byte of a rank's weights
    assert whole.quantization_scales - whole.expert_scales == 3_707_232
    assert rank.quantization_scales - rank.expert_scales == 666_656
    # One dense layer: 3 x 18,432 x 7,168 = 396,361,728 FP8 weights. Before, whole on the rank:
    # 396.45 MB / 3.312 TB/s = 119.70 us (its 64 tokens' 50.7 GFLOPs: 36.62 us). After, 1 / 8:
    # 49.55 MB = 14.96 us, the 512 gathered tokens x 2 x 396,361,728 / 8 = 50.7 GFLOPs the same
    # 36.62 us: compute-bound. The shared expert, 3 x 2,048 x 7,168 = 44,040,192 weights: 13.30
    # us whole, 1.66 us split, 16 us of kernel floors either way.
    dense = 3 * 18432 * 7168
    flops_s = 512 * 2 * dense / 8 / fp8_rate
    assert 64 * 2 * dense == 512 * 2 * dense / 8  # DP8 over TP 8: the FLOPs do not move
    assert dense * scale_1 / hbm_fp8 == pytest.approx(119.70 * US, abs=0.01 * US)
    assert flops_s == pytest.approx(36.62 * US, abs=0.01 * US)
    assert before.by_op["mlp"] == pytest.approx(3 * dense * scale_1 / hbm_fp8 + 58 * floor)
    assert after.by_op["mlp"] == pytest.approx(3 * flops_s + 58 * floor)
    assert (before.by_op["mlp"], after.by_op["mlp"]) == (
        pytest.approx(1287.10 * US, abs=0.01 * US), pytest.approx(1037.87 * US, abs=0.01 * US))
    # The lm_head, 129,280 x 7,168 = 926,679,040 bf16 weights: whole 1,853,358,080 B / (4.8 TB/s
    # x 0.9) = 429.02 us; split 231,669,760 B = 53.63 us, but its 512 gathered rows x 2 x
    # 926,679,040 / 8 = 118.6 GFLOPs at 0.7 x 989.5 TFLOPS = 171.25 us.
    head = 129280 * 7168
    assert before.by_op["lm_head"] == pytest.approx(head * 2 / (4.8e12 * 0.9))
    assert after.by_op["lm_head"] == pytest.approx(512 * 2 * head / 8 / (989.5e12 * 0.7))
    assert (before.by_op["lm_head"], after.by_op["lm_head"]) == (
        pytest.approx(429.02 * US, abs=0.01 * US), pytest.approx(171.25 * US, abs=0.01 * US))
    # Bytes a rank streams a step: 7 / 8 of the dense MLPs and shared experts (3,743,416,320 ->
    # 467,927,040, with their scales) and of the lm_head (1,853,358,080 -> 231,669,760) fewer:
    # 4.898 GB of 110.24; the FLOPs the same. The step: 42.46 -> 41.95 ms. (The split lm_head's
    # logits gather, priced since (tests/test_logits_gather.py), copies the gathered [512,
    # 129,280] bf16 logits once, 2 x 132,382,720 B, and adds its collectives: left out here.)
    copy = 2 * 512 * 129280 * 2
    dense_bytes = 3_743_416_320 * scale_1 - 467_927_040 * (1 + scale_8)
    assert before.bytes - (after.bytes - copy) == pytest.approx(
        dense_bytes + 1_853_358_080 - 231_669_760, rel=1e-12)
    assert before.bytes - (after.bytes - copy) == pytest.approx(4_897_878_828, abs=1)
    assert after.flops == pytest.approx(before.flops, rel=1e-12)
    assert (before.seconds, after.seconds - after.by_op["logits_gather"]) == (
        pytest.approx(42.4615e-3, abs=1e-7), pytest.approx(41.9545e-3, abs=1e-7))
    # The same without EP (routed experts TP over the 8): the same two groups move alike.
    b2, a2 = _steps(spec, Layout(tp=8, dp_attention=True), tokens=64, context=2048,
                    requests=64)
    assert b2.bytes - a2.bytes == pytest.approx(before.bytes - after.bytes)


def test_glm_45_folded_shared_expert_and_lm_head_split_by_hand() -> None:
    # GLM-4.5 (bf16: hidden 5,120, intermediate 12,288 on the first 3 layers, one shared expert
    # of 1,536 on the other 89, vocabulary 151,552, lm_head untied) on H200 DP8 attention, the
    # routed experts TP 8: SGLang runs its shared expert inside fused_moe on CUDA
    # (op_counts.fused_shared_expert), with the experts' split, so its bytes join the experts'
    # op at 1 / 8 now. A rank streams 7 / 8 fewer of each group, bf16 (2 B, no scales):
    # dense 3 x 3 x 12,288 x 5,120 x 2 x 7/8 = 990,904,320; shared 89 x 3 x 1,536 x 5,120 x 2 x
    # 7/8 = 3,674,603,520; lm_head 151,552 x 5,120 x 2 x 7/8 = 1,357,905,920; 6,023,413,760 B.
    spec = load_spec(str(GLM_45))
    lay = Layout(tp=8, dp_attention=True)
    saved = (3 * 3 * 12288 * 5120 + 89 * 3 * 1536 * 5120 + 151552 * 5120) * 2 * 7 // 8
    assert saved == 990_904_320 + 3_674_603_520 + 1_357_905_920 == 6_023_413_760
    for phase, tokens, requests, context in (("decode", 32, 32, 4096),
                                             ("prefill", 2048, 1, 2048)):
        before, after = _steps(spec, lay, tokens=tokens, context=context, requests=requests,
                               phase=phase)
        # The logits gather (tests/test_logits_gather.py) copies the gathered [8 x rows,
        # 151,552] bf16 logits once, left out here: decode 32 rows a rank, 2 x 77,594,624 B;
        # prefill (sgldp64) one row, its prompt's last, 2 x 2,424,832 B.
        copy = 2 * 8 * requests * 151552 * 2
        assert before.bytes - (after.bytes - copy) == pytest.approx(saved, abs=1e-3)
        assert after.flops == pytest.approx(before.flops, rel=1e-12)  # DP8 over TP 8
    # The folded shared expert's bytes left the decode step's experts op: 89 x 47,185,920 x
    # 7 / 8 B fewer (the op memory-bound: 20,481.9 -> 19,631.3 us over the 89 layers).
    before, after = _steps(spec, lay, tokens=32, context=4096, requests=32)
    assert "mlp" in after.by_op  # the 3 dense layers; the shared experts have no op of their own
    assert before.by_op["experts"] - after.by_op["experts"] == pytest.approx(
        89 * 3 * 1536 * 5120 * 2 * 7 / 8 / (4.8e12 * 0.9))


@pytest.mark.parametrize("engine", ["vllm", "trtllm"])
def test_vllm_and_trtllm_keep_them_whole(engine: str) -> None:
    # vLLM's DP + EP builds every DP rank as a replica of all but the routed experts;
    # TensorRT-LLM's placement under enable_attention_dp is not read, held whole as before
    # (DpAttentionWeights(): both whole): their steps keep today's price.
    spec = load_spec("deepseek-v3")
    before, after = _steps(spec, Layout(tp=8, ep=8, dp_attention=True), engine=engine,
                           tokens=64, context=2048, requests=64)
    assert after == before
    assert after.by_op["lm_head"] == pytest.approx(429.02 * US, abs=0.01 * US)


def test_sglang_without_dp_attention_unchanged() -> None:
    spec = load_spec("deepseek-v3")
    before, after = _steps(spec, Layout(tp=8), tokens=64, context=2048, requests=64)
    assert after == before
