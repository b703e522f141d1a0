"""SGLang's dual-stream shared experts in a captured decode step (kvplan.engines.sglang.
shared_stream; kvplan.perf.roofline.step_time `captured`)."""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan.engines.decode_graphs import DecodeGraphs
from kvplan.engines.sglang.shared_stream import SGLANG_SHARED_EXPERT_STREAM
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency, shared_expert_overlap
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time

US = 1e-6


def test_unfused_follows_sglang_code() -> None:
    """DeepSeek-V3's block-FP8 checkpoint: flashinfer_trtllm on SM 10.x keeps the shared expert
    out of the fused MoE; on Hopper at EP 1 it is folded in; EP > 1 keeps it out anywhere."""
    ds = load_spec("deepseek-v3")
    unfused = SGLANG_SHARED_EXPERT_STREAM.unfused
    assert unfused(ds, get_gpu("B200"), 1)
    assert not unfused(ds, get_gpu("H200"), 1)
    assert unfused(ds, get_gpu("H200"), 8)
    assert not unfused(load_spec("qwen3-235b-a22b"), get_gpu("B200"), 1)  # no shared expert


def test_shared_expert_hidden_by_routed_experts_in_a_captured_decode() -> None:
    """DeepSeek-V3 FP8 on B200 TP 8, SGLang, 4 decodes. The shared expert (3 x 7,168 x 2,048 =
    44,040,192 FP8 parameters, / 8 ranks = 5,505,024, with a float32 scale per 128 x 128 block
    5,505,024 x (1 + 4 / 16,384) = 5,506,368 bytes) is 2 block-FP8 GEMMs = 4 kernels at the
    4 us floor = 16 us a layer (its bytes stream in 5,506,368 / (8e12 x 0.69) = 0.998 us);
    the routed experts of a layer take longer at 4 tokens (~30 us), so the second stream hides
    16 - max(16 - 30, 0.998) = 15.002 us of each of the 58 MoE layers: 0.870 ms a step. Not in
    an uncaptured step, under vLLM, or on H200 (the shared expert folded into the fused MoE)."""
    ds, b200 = load_spec("deepseek-v3"), get_gpu("B200")
    sglang = engine_efficiency("sglang", device_efficiency(b200), version="0.5.9")
    tp8 = Layout(tp=8)

    def mlp(eff, captured, gpu=b200, layout=tp8, tokens=4) -> float:
        return step_time(ds, gpu, tokens=tokens, context=1536, requests=tokens, layout=layout,
                         eff=eff, captured=captured).by_op["mlp"]

    stream = 5_506_368 / (b200.hbm_bytes_per_s * sglang.fp8_gemm_hbm)
    assert stream == pytest.approx(0.998 * US, rel=1e-3)
    hidden = 58 * (4 * sglang.kernel_floor_s - stream)
    # rel 1e-5: the block scales' bytes as kvplan rounds them (~100 bytes a layer)
    assert mlp(sglang, False) - mlp(sglang, True) == pytest.approx(hidden, rel=1e-5)
    assert hidden == pytest.approx(0.870e-3, rel=1e-3)
    vllm = engine_efficiency("vllm", device_efficiency(b200))
    assert mlp(vllm, True) == mlp(vllm, False)
    h200 = get_gpu("H200")
    h_eff = engine_efficiency("sglang", device_efficiency(h200), version="0.5.9")
    assert not shared_expert_overlap(ds, h200, tp8, h_eff)
    assert mlp(h_eff, True, gpu=h200) == mlp(h_eff, False, gpu=h200)
    old = engine_efficiency("sglang", device_efficiency(b200), version="0.5.5")
    assert mlp(old, True) == mlp(old, False)  # before the first release read
    assert not shared_expert_overlap(ds, b200, Layout(tp=8, dp_attention=True), sglang)


def test_mixed_step_captures_decode_only_steps() -> None:
    """The simulator's step takes the overlap in a decode-only step of at most the graphs'
    max_requests, not in a step holding a prefill chunk nor above the capture size."""
    ds, b200 = load_spec("deepseek-v3"), get_gpu("B200")
    eff = engine_efficiency("sglang", device_efficiency(b200), version="0.5.9")
    kw = {"kv_dtype": "bf16", "layout": Layout(tp=8), "eff": eff}
    graphs = MixedStepCost(ds, b200, graphs=DecodeGraphs(max_requests=8), **kw)
    none = MixedStepCost(ds, b200, **kw)
    assert graphs.seconds(decode_contexts=[1536] * 4, chunks=[]) < none.seconds(
        decode_contexts=[1536] * 4, chunks=[])
    assert graphs.seconds(decode_contexts=[1536] * 16, chunks=[]) == none.seconds(
        decode_contexts=[1536] * 16, chunks=[])
    assert graphs.seconds(decode_contexts=[1536] * 3, chunks=[(0, 1)]) == none.seconds(
        decode_contexts=[1536] * 3, chunks=[(0, 1)])
