"""vLLM's FlashAttention 2 query tiles (kvplan.engines.vllm.attention_backend, priced by
kvplan.perf.attention_kernel): worked by hand from real configs."""

from __future__ import annotations

import pytest

from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_kernel import decode_flop_factor, varlen_kernel
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model


def _vllm(gpu: str):
    return engine_efficiency("vllm", device_efficiency(get_gpu(gpu)))


def test_which_gpus_run_flash_attention_2() -> None:
    # vLLM 0.19.1 / 0.20.2 fa_utils.get_flash_attn_version: FA3 on SM 9.x, FA4 on 10.x, FA2 on
    # the rest; FLASH_ATTN first in platforms/cuda.py but on SM 10.x. FA2 takes no FP8 cache.
    spec = load_model("llama-3-8b")[0]
    for gpu in ("A100-80GB", "RTX-5090"):
        kernel = varlen_kernel(_vllm(gpu), spec, get_gpu(gpu), "bf16")
        assert kernel is not None and kernel.tile_rows == 64
        assert varlen_kernel(_vllm(gpu), spec, get_gpu(gpu), "fp8") is None
    assert varlen_kernel(_vllm("H100-80GB"), spec, get_gpu("H100-80GB"), "bf16") is None
    sglang = engine_efficiency("sglang", device_efficiency(get_gpu("A100-80GB")))
    assert varlen_kernel(sglang, spec, get_gpu("A100-80GB"), "bf16") is None
    deepseek = load_model("deepseek-v2-lite")[0]  # MLA: other backends
    assert varlen_kernel(_vllm("A100-80GB"), deepseek, get_gpu("A100-80GB"), "bf16") is None


def test_decode_factors_by_hand() -> None:
    gpu = get_gpu("A100-80GB")
    llama = load_model("llama-3-8b")[0]  # config.json: 32 heads, 8 KV heads: g = 4
    k = varlen_kernel(_vllm("A100-80GB"), llama, gpu, "bf16")
    # Mixed step: each query head of a decode has a 64-row tile of its own: 64 / 1.
    assert decode_flop_factor(k, llama, 1, query_len=1, single_token_call=False,
                              windowed=False) == 64
    # Decode-only (seqlenq_ngroups_swapped): 4 query heads in one 64-row tile: 64 / 4.
    assert decode_flop_factor(k, llama, 1, query_len=1, single_token_call=True,
                              windowed=False) == 16
    # TP 8: 4 heads and 1 KV head per rank: still g = 4.
    assert decode_flop_factor(k, llama, 8, query_len=1, single_token_call=True,
                              windowed=False) == 16
    # Two query tokens per request (a draft): not single-token, 64 rows for 2 tokens.
    assert decode_flop_factor(k, llama, 1, query_len=2, single_token_call=False,
                              windowed=False) == 32
    # Falcon-7B (config.json: 71 heads, multi_query: 1 KV head): swapped, 71 rows in two
    # 64-row tiles: 128 / 71.
    falcon = load_model("falcon-7b")[0]
    kf = varlen_kernel(_vllm("A100-80GB"), falcon, gpu, "bf16")
    assert decode_flop_factor(kf, falcon, 1, query_len=1, single_token_call=True,
                              windowed=False) == pytest.approx(128 / 71)
    # A sliding-window layer (window_size_left >= 0) is never swapped: 64 per token.
    assert decode_flop_factor(k, llama, 1, query_len=1, single_token_call=True,
                              windowed=True) == 64
    assert decode_flop_factor(None, llama, 1, query_len=1, single_token_call=False,
                              windowed=False) == 1


def test_mixed_step_attention_by_hand() -> None:
    """Llama-3-8B (32 layers, 32 heads x 128, 8 KV heads) on an A100-80GB under vLLM: one decode
    attending 4,096 keys beside a 64-token chunk from position 0, one layer:
    FLOPs = 4,096 keys x 32 heads x (2 x 128 + 2 x 128) x 64 rows = 4,294,967,296
          + 64 x 65 / 2 = 2,080 pairs x 16,384 = 34,078,720  -> 4,329,046,016
    / (312e12 x 0.60) = 23.125 us; bytes 4,160 rows x 8 x 2 x 128 x 2 = 17,039,360
    / (2,039e9 x 0.90) = 9.285 us: compute-bound, 23.125 us x 32 layers = 740.0 us.
    Without the kernel (SGLang's efficiency: exact pairs): 67.7 MFLOPs, memory-bound at
    9.285 us x 32 = 297.1 us."""
    spec = load_model("llama-3-8b")[0]
    gpu = get_gpu("A100-80GB")
    vllm = MixedStepCost(spec, gpu, eff=_vllm("A100-80GB"))
    assert vllm.attention_seconds([4096], [(0, 64)]) == pytest.approx(740.0e-6, rel=1e-4)
    plain = MixedStepCost(spec, gpu, eff=engine_efficiency(
        "sglang", device_efficiency(gpu)))
    assert plain.attention_seconds([4096], [(0, 64)]) == pytest.approx(297.1e-6, rel=1e-3)


def test_decode_only_step_agrees_with_roofline_under_the_kernel() -> None:
    spec = load_model("llama-3-8b")[0]
    gpu = get_gpu("A100-80GB")
    eff = _vllm("A100-80GB")
    cost = MixedStepCost(spec, gpu, eff=eff)
    decode = step_time(spec, gpu, tokens=32, context=1000, requests=32, eff=eff)
    assert cost.seconds(decode_contexts=[1000] * 32, chunks=[]) == pytest.approx(
        decode.seconds, rel=1e-12)


def test_triton_prefill_kv_reads_by_hand() -> None:
    # vLLM 0.11.0 Triton unified attention, a 2,048-token chunk of gpt-oss-20b after 32,768
    # cached tokens on an A100 (config.json: 64 heads, 8 KV heads, head_dim 64: g = 8,
    # BLOCK_M 16, BLOCK_Q 2; TILE_SIZE_PREFILL 32; bf16 cache, 2 B).
    from kvplan.perf.attention_kernel import prefill_kv_reads
    gpu = get_gpu("A100-80GB")
    spec = load_model("gpt-oss-20b")[0]
    k = varlen_kernel(_vllm("A100-80GB"), spec, gpu, "bf16")
    assert k is not None and k.prefill_key_tile == 32
    # Full layer: program b (0..1023) covers tokens 2b, 2b + 1: cdiv(32,768 + 2b + 2, 32) =
    # 1,024 + ceil((b + 1) / 16) tiles; sum = 1,024 x 1,024 + 16 x (1 + .. + 64) = 1,048,576
    # + 33,280 = 1,081,856 tiles of 32 keys x (64 + 64) x 2 B = 8,192 B, x 8 KV heads:
    # 70,900,514,816 B a layer (the chunk's own K/V once would be 2,048 x 8 x 128 x 2 =
    # 4,194,304 B: 16,904x fewer).
    full = prefill_kv_reads(k, spec, 1, context=32768, count=2048, window=None, kv_bytes=2)
    assert full == 1_081_856 * 8192 * 8 == 70_900_514_816
    # Window 128: tiles (32,768 + 2b - 127) // 32 .. (32,768 + 2b + 1) // 32, the ends 128
    # keys (4 tiles) apart: 5 tiles a program, 5,120 x 8,192 x 8 = 335,544,320 B.
    win = prefill_kv_reads(k, spec, 1, context=32768, count=2048, window=128, kv_bytes=2)
    assert win == 5 * 1024 * 8192 * 8
    # A 3-token chunk from 0: blocks {0, 1} -> cdiv(2, 32) = 1 tile, {2} -> 1 tile.
    assert prefill_kv_reads(k, spec, 1, context=0, count=3, window=None, kv_bytes=2) == \
        2 * 32 * 8 * 128 * 2
    # Seconds, if every load came from HBM at kvplan's A100 80GB rate (2,039 GB/s x 0.90,
    # kvplan.perf.efficiency): 12 full + 12 window layers = 12 x (70.90 + 0.336) GB =
    # 854.8 GB, 0.466 s; the chunk's exact attention FLOPs (12 x 2,048 x 33,792.5 mean keys
    # x 64 heads x 4 x 64, plus the window layers' 12 x 2,048 x 128 x 64 x 256) = 13.66 TFLOP
    # at 312 x 0.60 = 187 TFLOP/s: 0.073 s. That bound is 29 TFLOP/s.
    total = 12 * (full + win)
    assert total == pytest.approx(854.8e9, rel=1e-3)
    assert total / (2039e9 * 0.90) == pytest.approx(0.466, abs=1e-3)
    llama = load_model("llama-3-8b")[0]
    fa2 = varlen_kernel(_vllm("A100-80GB"), llama, gpu, "bf16")  # no prefill_key_tile read
    with pytest.raises(ValueError, match="not read"):
        prefill_kv_reads(fa2, llama, 1, context=0, count=4, window=None, kv_bytes=2)
