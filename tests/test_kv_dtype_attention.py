"""SGLang's MLA prefill in the KV cache's dtype (kvplan.engines.sglang.mla_prefill, priced by
kvplan.perf.attention_kernel.attention_math) and the SM 10.x FP8 attention fraction
(kvplan.perf.efficiency): worked by hand from DeepSeek-R1's config."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan._util.dtypes import GemmMath
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_kernel import attention_math, kv_dtype_kernel
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

R1_NVFP4 = "tests/data/disagg/deepseek-r1-nvfp4.json"  # DeepseekV3ForCausalLM, bf16 MLA


def _sglang(gpu: str, version: str | None = "0.5.8.post1"):
    return engine_efficiency("sglang", device_efficiency(get_gpu(gpu)), version=version)


def test_which_steps_compute_in_the_kv_dtype() -> None:
    spec = load_model(R1_NVFP4)[0]
    gb200 = get_gpu("GB200")
    eff = _sglang("GB200")
    # trtllm_mla_backend.py:1133-1134 (0.5.8.post1): an fp8_e4m3 cache casts q, k, v to FP8.
    assert attention_math(eff, spec, gb200, "fp8", "prefill") is GemmMath.fp8
    assert kv_dtype_kernel(eff, spec, gb200, "fp8", "prefill").casts == ("q", "k", "v")
    # Not: a bf16 cache, a decode step (not declared), a Hopper (no trtllm_mla), vLLM (FP8
    # prefill queries opt-in, mla_attention.py:2323-2360, vLLM 0.32), SGLang before 0.5.7
    # (0.5.6.post2 passes the bf16 q, k, v), DeepSeek-V3.2 (sparse: the nsa backend).
    assert attention_math(eff, spec, gb200, "bf16", "prefill") is GemmMath.bf16
    assert attention_math(eff, spec, gb200, "fp8", "decode") is GemmMath.bf16
    h200 = get_gpu("H200")
    assert attention_math(_sglang("H200"), spec, h200, "fp8", "prefill") is GemmMath.bf16
    vllm = engine_efficiency("vllm", device_efficiency(gb200))
    assert attention_math(vllm, spec, gb200, "fp8", "prefill") is GemmMath.bf16
    assert attention_math(_sglang("GB200", "0.5.6.post2"), spec, gb200, "fp8",
                          "prefill") is GemmMath.bf16
    assert attention_math(_sglang("GB200", "0.5.7"), spec, gb200, "fp8",
                          "prefill") is GemmMath.fp8
    assert attention_math(_sglang("GB200", None), spec, gb200, "fp8", "prefill") is GemmMath.fp8
    v32 = load_model("tests/data/configs/deepseek-v3.2.json")[0]
    assert attention_math(eff, v32, gb200, "fp8", "prefill") is GemmMath.bf16
    qwen = load_model("qwen3-8b")[0]  # no MLA: other backends
    assert attention_math(eff, qwen, gb200, "fp8", "prefill") is GemmMath.bf16
    # GB300 (SM 10.3): is_sm100_supported() is major 10 (utils/common.py:247-251).
    assert attention_math(_sglang("GB300"), spec, get_gpu("GB300"), "fp8",
                          "prefill") is GemmMath.fp8


def test_sm100_fp8_attention_fraction_from_vllm_pr_31195() -> None:
    # TRT-LLM's FP8 FMHA for the MLA prefill: "kernel level performance is about ~1.5x better"
    # than its BF16 one (vllm PR 31195). BF16 at `attention` 0.60 of the bf16 peak; FP8 at
    # 1.5 x 0.60 = 0.90 of it, over the FP8 peak (2x bf16 on every SM 10.x preset): 0.45.
    for name in ("B200", "GB200", "B300", "GB300"):
        gpu = get_gpu(name)
        eff = device_efficiency(gpu)
        assert gpu.peak_fp8_flops_per_s == 2 * gpu.peak_bf16_flops_per_s
        assert eff.fp8_attention == pytest.approx(0.60 * 1.5 / 2) == 0.45
        assert eff.attention == 0.60
    assert device_efficiency(get_gpu("H200")).fp8_attention is None


def test_gb200_8k_prefill_attention_by_hand() -> None:
    spec = load_model(R1_NVFP4)[0]
    gpu = get_gpu("GB200")
    tp8 = Layout(tp=8)
    kw = {"tokens": 8192, "context": 8192, "requests": 1, "phase": "prefill",
          "kv_dtype": "fp8", "layout": tp8}
    fp8 = step_time(spec, gpu, eff=_sglang("GB200"), **kw)
    bf16 = step_time(spec, gpu, eff=_sglang("GB200", "0.5.6.post2"), **kw)
    # DeepSeek-R1: 61 layers, 128 heads (16 a rank at TP 8), MHA form in prefill (trtllm_mla:
    # MHA_CHUNKED_KV): q.K over 128 + 64 dims, p.V over 128, 2 FLOPs each, per key; a causal
    # 8,192-token prompt attends (8192 + 1) / 2 keys a token on average.
    per_layer = 8192 * 2 * 16 * (192 + 128) * (8192 + 1) / 2
    assert per_layer == pytest.approx(3.4364e11, rel=1e-4)
    # GB200: 5,000 dense FP8 TFLOPS x 0.45 = 2,250; bf16 2,500 x 0.60 = 1,500 TFLOPS.
    assert fp8.by_op["attention"] == pytest.approx(61 * per_layer / 2.25e15)  # 9.317 ms
    assert bf16.by_op["attention"] == pytest.approx(61 * per_layer / 1.5e15)  # 13.975 ms
    # The three casts a layer (q, k, v), a kernel each: bf16 read + FP8 written, 3 bytes a
    # value, 16 heads x 8,192 tokens: q and k of 192 values (75.5 MB: 10.49 us at 0.90 of
    # 8 TB/s), v of 128 (50.3 MB: 6.99 us), each above the 4 us floor.
    cast_s = sum(8192 * 16 * width * 3 / (8e12 * 0.90) for width in (192, 192, 128))
    assert cast_s == pytest.approx(27.96e-6, abs=0.01e-6)
    assert gpu.hbm_bytes_per_s == 8e12
    assert fp8.by_op["small_kernels"] - bf16.by_op["small_kernels"] == pytest.approx(61 * cast_s)
    # Launched eagerly too: 3 x 61 ops x the 63.2 us launch time (67 before hopperops65).
    assert fp8.by_op["prefill_launch"] - bf16.by_op["prefill_launch"] == pytest.approx(
        3 * 61 * 63.2e-6)
    # --fp8-attention on a GB200 runs at the same fraction.
    forced = step_time(spec, gpu, eff=_sglang("GB200", "0.5.6.post2"), fp8_attention=True, **kw)
    assert forced.by_op["attention"] == pytest.approx(fp8.by_op["attention"])


def test_mixed_step_prices_a_prefill_chunk_as_the_step_does() -> None:
    spec = load_model(R1_NVFP4)[0]
    gpu = get_gpu("GB200")
    new, old = (MixedStepCost(spec, gpu, kv_dtype="fp8", layout=Layout(tp=8), eff=_sglang(
        "GB200", v), eager_prefill=True) for v in ("0.5.8.post1", "0.5.6.post2"))
    per_layer = 8192 * 2 * 16 * (192 + 128) * (8192 + 1) / 2
    chunk = [(0, 8192)]
    assert new.attention_seconds([], chunk) == pytest.approx(61 * per_layer / 2.25e15)
    assert old.attention_seconds([], chunk) == pytest.approx(61 * per_layer / 1.5e15)
    # Decodes keep bf16 (decode is not declared): a decode-only step is unchanged.
    assert new.attention_seconds([4096] * 8, []) == old.attention_seconds([4096] * 8, [])
    # The casts: a floor and a launch each, 3 a layer, in a step with a chunk.
    assert new.seconds(decode_contexts=[], chunks=chunk) - old.seconds(
        decode_contexts=[], chunks=chunk) == pytest.approx(
        61 * per_layer * (1 / 2.25e15 - 1 / 1.5e15) + 3 * 61 * (4e-6 + 63.2e-6))
    # (The newest release also takes SGLang's gfx942 MLA decode kernels and its ROCm
    # shared-expert fusion, from 0.5.7: kvplan.engines.sglang.mla_decode, shared_fusion; not
    # charged on a GB200; and its all-reduce + RMSNorm fusion's 0.5.7 declaration,
    # kvplan.engines.sglang.allreduce_fusion, which names no GB200 either.)
    old_eff = _sglang("GB200", "0.5.6.post2")
    assert replace(_sglang("GB200"), kv_dtype_attention=(), mla_decode_launches=(),
                   shared_expert_fusion=(), allreduce_norm_fusion=old_eff.allreduce_norm_fusion,
                   engine_version="0.5.6.post2") == old_eff


def test_a_short_prefills_casts_sit_on_the_floor() -> None:
    spec = load_model(R1_NVFP4)[0]
    gpu = get_gpu("GB200")
    kw = {"tokens": 64, "context": 64, "requests": 1, "phase": "prefill", "kv_dtype": "fp8",
          "layout": Layout(tp=8)}
    fp8 = step_time(spec, gpu, eff=_sglang("GB200"), **kw)
    bf16 = step_time(spec, gpu, eff=_sglang("GB200", "0.5.6.post2"), **kw)
    # q: 64 tokens x 16 heads x 192 values x 3 bytes = 590 kB, 0.08 us: below the 4 us floor.
    assert 64 * 16 * 192 * 3 / (8e12 * 0.90) < 4e-6
    assert fp8.by_op["small_kernels"] - bf16.by_op["small_kernels"] == pytest.approx(
        61 * 3 * 4e-6)
