"""vLLM's FP8 query with an fp8 KV cache on SM 10.x (kvplan.engines.vllm.fp8_query, priced by
kvplan.perf.attention_kernel.attention_math): worked by hand from Llama-3.1-70B's config."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan._util.dtypes import GemmMath
from kvplan.engines.attention_kernel import KvDtypeAttention
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_kernel import attention_math, kv_dtype_kernel
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

LLAMA_70B = "tests/data/configs/llama-3.1-70b.json"  # 80 layers, 64 q / 8 KV heads, head dim 128


def _vllm(gpu: str, version: str | None = "0.19.0"):
    return engine_efficiency("vllm", device_efficiency(get_gpu(gpu)), version=version)


def test_which_steps_run_the_fp8_query() -> None:
    spec = load_model(LLAMA_70B)[0]
    b200 = get_gpu("B200")
    eff = _vllm("B200")
    # flashinfer.py:614-625 (0.19.0): q_data_type = the fp8 cache's dtype where
    # can_use_trtllm_attention (SM 10.x family); then TRT-LLM runs prefill (utils/flashinfer.py:
    # 372-375) and decode (flashinfer.py:629) on the FP8 query.
    for phase in ("prefill", "decode"):
        assert attention_math(eff, spec, b200, "fp8", phase) is GemmMath.fp8
        assert kv_dtype_kernel(eff, spec, b200, "fp8", phase).casts == ()
        # B300 (SM 10.3): is_device_capability_family(100) is any 10.x.
        assert attention_math(_vllm("B300"), spec, get_gpu("B300"), "fp8",
                              phase) is GemmMath.fp8
        # Not: a bf16 cache, a Hopper (FLASH_ATTN first), a release before 0.16.0 (not read).
        assert attention_math(eff, spec, b200, "bf16", phase) is GemmMath.bf16
        assert attention_math(_vllm("H200"), spec, get_gpu("H200"), "fp8",
                              phase) is GemmMath.bf16
        assert attention_math(_vllm("B200", "0.15.1"), spec, b200, "fp8",
                              phase) is GemmMath.bf16
    assert attention_math(_vllm("B200", "0.16.0"), spec, b200, "fp8", "prefill") is GemmMath.fp8
    assert attention_math(_vllm("B200", None), spec, b200, "fp8", "prefill") is GemmMath.fp8
    # gpt-oss (head dim 64, sinks: TRT-LLM runs them) too; phi-2 (head dim 80: not a
    # FlashInfer size, get_supported_head_sizes [64, 128, 256]) not; DeepSeek-R1 (MLA: another
    # backend, vLLM's MLA prefill FP8 only opt-in) not.
    oss = load_model("tests/data/configs/gpt-oss-120b.json")[0]
    assert attention_math(eff, oss, b200, "fp8", "prefill") is GemmMath.fp8
    phi = load_model("tests/data/configs/phi-2.json")[0]
    assert phi.attention.head_dim == 80
    assert attention_math(eff, phi, b200, "fp8", "prefill") is GemmMath.bf16
    r1 = load_model("tests/data/disagg/deepseek-r1-nvfp4.json")[0]
    assert attention_math(eff, r1, b200, "fp8", "prefill") is GemmMath.bf16
    # Head size 512: FlashInfer's from 0.22.0 (flashinfer.py:405; 0.21.0 :406 has not).
    wide = replace(spec, attention=replace(spec.attention, head_dim=512, v_head_dim=512))
    assert attention_math(_vllm("B200", "0.21.0"), wide, b200, "fp8", "decode") is GemmMath.bf16
    assert attention_math(_vllm("B200", "0.22.0"), wide, b200, "fp8", "decode") is GemmMath.fp8
    # SGLang keeps bf16 for non-latent attention (its declaration is MLA's).
    sgl = engine_efficiency("sglang", device_efficiency(b200), version="0.5.8.post1")
    assert attention_math(sgl, spec, b200, "fp8", "prefill") is GemmMath.bf16


def test_a_non_latent_declaration_takes_no_casts() -> None:
    with pytest.raises(ValueError, match="latent attention only"):
        KvDtypeAttention(name="x", phases=("prefill",), compute_capability_majors=(10,),
                         kv_dtypes=("fp8",), since="0.16.0", casts=("q",), source="-",
                         latent=False, head_dims=(128,))


def test_b200_8k_prefill_attention_by_hand() -> None:
    spec = load_model(LLAMA_70B)[0]
    gpu = get_gpu("B200")
    kw = {"tokens": 8192, "context": 8192, "requests": 1, "phase": "prefill",
          "kv_dtype": "fp8", "layout": Layout(tp=8)}
    fp8 = step_time(spec, gpu, eff=_vllm("B200"), **kw)
    bf16 = step_time(spec, gpu, eff=_vllm("B200", "0.15.1"), **kw)
    # Llama-3.1-70B at TP 8: 8 query heads a rank; q.K over 128 dims and p.V over 128, 2 FLOPs
    # each, per key; a causal 8,192-token prompt attends (8192 + 1) / 2 keys a token on average.
    per_layer = 8192 * 2 * 8 * (128 + 128) * (8192 + 1) / 2
    assert per_layer == pytest.approx(1.37456e11, rel=1e-5)
    # B200: 4,500 dense FP8 TFLOPS x 0.45 = 2,025; bf16 2,250 x 0.60 = 1,350 TFLOPS.
    assert fp8.by_op["attention"] == pytest.approx(80 * per_layer / 2.025e15)  # 5.430 ms
    assert bf16.by_op["attention"] == pytest.approx(80 * per_layer / 1.35e15)  # 8.146 ms
    # No cast kernel (the query quant is compiled into the ops before it): nothing else moves.
    assert fp8.by_op["small_kernels"] == bf16.by_op["small_kernels"]
    assert fp8.seconds - bf16.seconds == pytest.approx(80 * per_layer * (1 / 2.025e15
                                                                         - 1 / 1.35e15))


def test_mixed_step_prices_prefill_and_decode_in_fp8() -> None:
    spec = load_model(LLAMA_70B)[0]
    gpu = get_gpu("B200")
    new, old = (MixedStepCost(spec, gpu, kv_dtype="fp8", layout=Layout(tp=8), eff=_vllm(
        "B200", v)) for v in ("0.19.0", "0.15.1"))
    per_layer = 8192 * 2 * 8 * (128 + 128) * (8192 + 1) / 2
    assert new.attention_seconds([], [(0, 8192)]) == pytest.approx(80 * per_layer / 2.025e15)
    assert old.attention_seconds([], [(0, 8192)]) == pytest.approx(80 * per_layer / 1.35e15)
    # A decode's FLOPs at the FP8 rate too: the chunk plus 64 decodes attending 8,193 keys
    # each: 64 x 8,193 x 2 x 8 heads x 256 dims = 2.147 GFLOPs a layer on top of the chunk's
    # 137.5. The cached rows read (64 x 8,193 + the chunk's, 256 B a row at fp8: one KV head of
    # 128 + 128 a rank) are ~0.13 GB a layer, ~19 us at 0.90 of 8 TB/s, under the FLOPs' 68.9 us
    # at FP8 (102 at bf16): the layer is compute-bound either way.
    dec = 64 * 8193 * 2 * 8 * 256
    assert new.decode_pair_flops * 64 * 8193 == pytest.approx(dec)
    assert new.attention_seconds([8193] * 64, [(0, 8192)]) == pytest.approx(
        80 * (per_layer + dec) / 2.025e15)  # 5.515 ms
    assert old.attention_seconds([8193] * 64, [(0, 8192)]) == pytest.approx(
        80 * (per_layer + dec) / 1.35e15)  # 8.272 ms
