"""vLLM's Triton unified attention for models with attention sinks on SM 8.x / 12.x
(kvplan.engines.vllm.attention_backend TRITON_UNIFIED_ATTENTION, priced by
kvplan.perf.attention_kernel): worked by hand from gpt-oss-120b's config.json
(tests/data/configs/gpt-oss-120b.json: 64 query heads, 8 KV heads, head_dim 64, 36 layers
alternating a 128-token window and full attention, attention sinks; issue 30, gptossa100)."""

from __future__ import annotations

import pytest

from kvplan.engines.vllm.attention_backend import FLASH_ATTENTION_2, TRITON_UNIFIED_ATTENTION
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_kernel import decode_flop_factor, varlen_kernel
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.sources.resolve import load_model

CONFIG = "tests/data/configs/gpt-oss-120b.json"


def _vllm(gpu: str):
    return engine_efficiency("vllm", device_efficiency(get_gpu(gpu)), version="0.11.0")


def test_models_with_sinks_run_triton_on_sm8x() -> None:
    # vllm 0.11.0 platforms/cuda.py:358-362: TRITON_ATTN on SM 8.0+ but 9.0 for a layer with
    # sinks; a model without them keeps FlashAttention 2 there; SM 9.x runs FA3 (exact pairs).
    spec = load_model(CONFIG)[0]
    assert spec.attention_sinks
    for gpu in ("A100-80GB", "RTX-5090"):
        assert varlen_kernel(_vllm(gpu), spec, get_gpu(gpu), "bf16") is TRITON_UNIFIED_ATTENTION
    assert varlen_kernel(_vllm("H100-80GB"), spec, get_gpu("H100-80GB"), "bf16") is None
    llama = load_model("llama-3-8b")[0]
    assert varlen_kernel(_vllm("A100-80GB"), llama, get_gpu("A100-80GB"),
                         "bf16") is FLASH_ATTENTION_2


def test_triton_decode_factor_by_hand() -> None:
    # g = 64 / 8 = 8 query heads a KV head: BLOCK_M 16, BLOCK_Q 2 (triton_unified_attention.py
    # :728-730). A decode token fills 8 of its tile's 16 rows: 2x its exact FLOPs, in a mixed
    # or decode-only call, windowed layer or not (FlashAttention 2 would charge 64x in a mixed
    # step). A 2-token query (a draft) fills the tile: 1x.
    spec = load_model(CONFIG)[0]
    k = varlen_kernel(_vllm("A100-80GB"), spec, get_gpu("A100-80GB"), "bf16")
    for single in (True, False):
        for windowed in (True, False):
            assert decode_flop_factor(k, spec, 1, query_len=1, single_token_call=single,
                                      windowed=windowed) == 2
    assert decode_flop_factor(k, spec, 1, query_len=2, single_token_call=False,
                              windowed=False) == 1


def test_mixed_step_attention_by_hand() -> None:
    # 50 decodes at 32,000 keys and a 2-token chunk at position 0 on one A100 (312 bf16
    # TFLOPS x 0.60 for attention, 2.039 TB/s x 0.90), bf16 cache: a KV row 8 x 64 x 2 x 2 B =
    # 2,048 B a layer; 4 x 64 x 64 = 16,384 FLOPs a key a layer.
    # Full layers (18): 1,600,000 decode keys + 2 rows written: 3,276,804,096 B take
    # 1.785627 ms; the FLOPs 1.6e6 x 16,384 x 2 (the Triton tile) = 52.4 GFLOP, 0.280 ms: bytes
    # win. Sliding layers (18): 50 x 128 keys + 2 rows: 13,111,296 B, 7.145 us (over the 4 us
    # floor). 18 x (1.785627 ms + 7.145 us) = 32.27 ms; under FlashAttention 2's 64-row tiles
    # the full layers were compute-bound at 1.6e6 x 16,384 x 64 / 187.2e12 = 8.962 ms each and
    # the sliding ones 35.85 us: 161.96 ms.
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("A100-80GB")
    cost = MixedStepCost(spec, gpu, eff=_vllm("A100-80GB"))
    bw = 2.039e12 * 0.90
    expected = 18 * (1_600_002 * 2048 / bw + 6_402 * 2048 / bw)
    got = cost.attention_seconds([32_000] * 50, [(0, 2)])
    assert got == pytest.approx(expected, rel=1e-6)
    assert got == pytest.approx(32.27e-3, rel=1e-3)
