"""TensorRT-LLM's eager prefill step (kvplan.perf.trtllm_ops): the PyTorch backend replays CUDA
graphs for generation-only batches only (_torch/pyexecutor/model_engine.py
`_maybe_get_cuda_graph`), so a step holding a context request launches every op of the model's
forward from Python, each charged `prefill_launch_s` (the fitted 63.2 us, not refitted for it).
Counts worked by hand from the config.json files and the model code the module docstring names."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan.engines.base import PrefillOpCount
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import PREFILL_LAUNCH_FIT
from kvplan.perf.engine_traits import engine_efficiency, prefill_launch_ops
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.perf.trtllm_ops import trtllm_eager_prefill_ops

H100, H200, B200 = get_gpu("H100-80GB"), get_gpu("H200"), get_gpu("B200")
QWEN3_235B_FP8 = "tests/data/sim_to_real/aiconfig_configs/Qwen--Qwen3-235B-A22B-FP8.json"


def test_qwen3_235b_fp8_tp8_ep8() -> None:
    # Qwen3-235B-A22B-FP8 (config.json: 94 layers, all MoE, 128 experts, top-8, q/k norms;
    # FP8 block scales on attention and experts), H100, TP 8 EP 8 under TP attention.
    # A layer: qkv_proj (fp8_quantize_1x128 + GEMM: 2), fused_qk_norm_rope (1), attention (1),
    # o_proj (2); the all-reduce fused with the post-attention norm (1); the gate's cublas_mm
    # (1), renorm_moe_routing_op (1: 128 experts, top-8 are within its limits), fused_moe (1;
    # FP8 block scales quantize in the kernel); the all-reduce fused with the next layer's
    # norm (1): 11. 94 x 11 = 1,034, + layer 0's input norm (1) + embedding, last-token gather,
    # lm_head (3) + their two all-gathers under TP (2) = 1,040.
    spec = load_spec(QWEN3_235B_FP8)
    assert trtllm_eager_prefill_ops(spec, Layout(tp=8, ep=8), gpu=H100) == 1040
    # EP does not change the count (no all-to-all without attention DP).
    assert trtllm_eager_prefill_ops(spec, Layout(tp=4, ep=4), gpu=H100) == 1040
    # Above the fused routing kernel's 128 experts: torch.topk, .to(int32), .float(),
    # softmax (4 instead of 1) on each of the 94 layers.
    wide = replace(spec, moe=replace(spec.moe, n_routed_experts=256))
    assert trtllm_eager_prefill_ops(wide, Layout(tp=8, ep=8), gpu=H100) == 1040 + 94 * 3


def test_qwen3_32b_fp8_dense() -> None:
    # Qwen3-32B-FP8 (64 layers, dense, FP8 block scales), modeling_qwen3.py Qwen3DecoderLayer:
    # input_layernorm (1), qkv_proj (2), fused_qk_norm_rope (1), attention (1), o_proj (2),
    # post_attention_layernorm (1), gate_up_proj (2), SwiGLU (1), down_proj (2): 13 on one GPU,
    # + o_proj's and down_proj's all-reduces under TP: 15.
    spec = load_spec("tests/data/configs/qwen3-32b-fp8.json")
    # TP 1: 64 x 13 = 832 + the final norm (1) + embedding, gather, lm_head (3) = 836.
    assert trtllm_eager_prefill_ops(spec, Layout(tp=1), gpu=H100) == 836
    # TP 2: 64 x 15 = 960 + 1 + 3 + 2 all-gathers = 966.
    assert trtllm_eager_prefill_ops(spec, Layout(tp=2), gpu=H100) == 966


def test_deepseek_v3_fp8_and_nvfp4() -> None:
    # DeepSeek-V3 FP8 (61 layers: 3 dense, 58 MoE, one shared expert; MLA with q_lora), TP 8.
    # MLA context (forward_context_default): kv_a_proj_with_mqa (2), q_a / kv_a layernorms (2),
    # q_b_proj (2), latent-cache concat (1), kv_b_proj (2), k_nope copy (1), qkv concat (1),
    # attention (1), o_proj (2) = 14. MoE: dsv3_router_gemm_op (1), noaux_tc_op + .to(int32)
    # (2), fused_moe (1), shared expert gate_up (2) + SwiGLU (1) + down (2) + its add (1) = 10.
    # Dense MLP: 2 + 1 + 2 = 5. Two fused all-reduce + norms a layer.
    # 61 x 14 + 58 x 10 + 3 x 5 + 61 x 2 = 854 + 580 + 15 + 122 = 1,571, + 1 + 3 + 2 = 1,577.
    spec = load_spec("deepseek-v3")
    assert trtllm_eager_prefill_ops(spec, Layout(tp=8), gpu=H200) == 1577
    # NVIDIA's NVFP4 checkpoint (attention unquantized, MLPs NVFP4) on B200: the MLA's five
    # linears one op each: kv_a (1), norms (2), q_b (1), concat
    # (1), kv_b (1), k_nope copy (1), qkv concat (1), attention (1), o_proj (1) = 10; the MoE
    # adds the experts' fp4_quantize (1): 11; dense MLP 5 (NVFP4: quantize + GEMM each).
    # 61 x 10 + 58 x 11 + 3 x 5 + 122 + 6 = 610 + 638 + 15 + 122 + 6 = 1,391.
    nvfp4 = load_spec("tests/data/disagg/deepseek-r1-nvfp4.json")
    assert trtllm_eager_prefill_ops(nvfp4, Layout(tp=8), gpu=B200) == 1391


def test_gpt_oss_attention_dp() -> None:
    # gpt-oss-120b (36 layers, 128 experts, top-4, MXFP4 experts, bf16 attention) on B200,
    # attention DP 4 (EP 4): no TP all-reduce, so the norms stand alone (2 a layer) and the
    # MoE gathers its tokens before and reduce-scatters after (2). A layer: qkv (1), attention
    # (1), o_proj (1); the gate (1), routing (1), the input's op before the MXFP4 kernel (1),
    # fused_moe (1), all-gather + reduce-scatter (2); two norms: 11. 36 x 11 = 396 + layer
    # 0's input norm (1) + 3 (no TP all-gathers) = 400.
    spec = load_spec("gpt-oss-120b")
    assert trtllm_eager_prefill_ops(spec, Layout(tp=4, ep=4, dp_attention=True), gpu=B200) == 400
    # TP 4 without attention DP: 36 x 9 + 1 + 3 + 2 = 330.
    assert trtllm_eager_prefill_ops(spec, Layout(tp=4), gpu=B200) == 330


def test_engine_pays_the_launch_on_prefill_steps_only() -> None:
    eff = engine_efficiency("trtllm", version="1.0.0rc3")
    assert eff.prefill_op_count is PrefillOpCount.trtllm
    # the fitted 63.2 us, not refitted for it
    assert eff.prefill_launch_s == PREFILL_LAUNCH_FIT.value
    assert eff.prefill_graph is None  # no piecewise prefill graphs (torch_compile_config None)
    spec, layout = load_spec(QWEN3_235B_FP8), Layout(tp=8, ep=8)
    assert prefill_launch_ops(spec, H100, layout, 1024, eff) == 1040
    prefill = step_time(spec, H100, tokens=1024, context=1024, requests=1, phase="prefill",
                        layout=layout, eff=eff)
    assert prefill.by_op["prefill_launch"] == pytest.approx(1040 * 63.2e-6)  # 65.728 ms
    decode = step_time(spec, H100, tokens=8, context=1024, requests=8, layout=layout, eff=eff)
    assert "prefill_launch" not in decode.by_op  # generation-only steps replay CUDA graphs
    # vLLM still pays none (piecewise graphs / compiled code); SGLang keeps its own count.
    assert engine_efficiency("vllm", version="0.11.0").prefill_launch_s == 0.0
    assert engine_efficiency("sglang").prefill_op_count is PrefillOpCount.sglang
