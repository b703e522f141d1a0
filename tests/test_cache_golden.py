"""Golden numbers, each worked out by hand from the model's published config.json."""

from __future__ import annotations

import pytest

from kvplan import estimate, load_spec, rank_caches
from kvplan._util.units import GiB


@pytest.mark.parametrize(
    ("model", "bytes_per_token"),
    [
        # DeepSeek-V2 MLA: (kv_lora_rank 512 + qk_rope_head_dim 64) x 60 layers x 2 B = 69,120
        ("deepseek-v2", (512 + 64) * 60 * 2),
        # DeepSeek-V2-Lite: same latent, 27 layers = 31,104
        ("deepseek-v2-lite", (512 + 64) * 27 * 2),
        # DeepSeek-V3 / Kimi-K2: 61 layers = 70,272
        ("deepseek-v3", (512 + 64) * 61 * 2),
        ("kimi-k2", (512 + 64) * 61 * 2),
        # MiniCPM3-4B MLA: (256 + 32) x 62 x 2 = 35,712
        ("minicpm3-4b", (256 + 32) * 62 * 2),
        # Llama-3-70B GQA: 2 (K,V) x 8 KV heads x 128 x 80 layers x 2 B = 327,680
        ("llama-3-70b", 2 * 8 * 128 * 80 * 2),
        # Llama-2-7B MHA: 2 x 32 x 128 x 32 x 2 = 524,288
        ("llama-2-7b", 2 * 32 * 128 * 32 * 2),
        # Llama-3.1-8B: 2 x 8 x 128 x 32 x 2 = 131,072
        ("llama-3.1-8b", 2 * 8 * 128 * 32 * 2),
        # Llama-3.1-405B: 2 x 8 x 128 x 126 x 2 = 516,096
        ("llama-3.1-405b", 2 * 8 * 128 * 126 * 2),
        # falcon-7b MQA: 2 x 1 x 64 x 32 x 2 = 8,192
        ("falcon-7b", 2 * 1 * 64 * 32 * 2),
        # gpt2 MHA: 2 x 12 x 64 x 12 x 2 = 36,864
        ("gpt2", 2 * 12 * 64 * 12 * 2),
        # Qwen3-8B: explicit head_dim 128 (hidden 4096 / 32 heads happens to agree), 8 KV heads,
        # 36 layers: 2 x 8 x 128 x 36 x 2 = 147,456
        ("qwen3-8b", 2 * 8 * 128 * 36 * 2),
        # Qwen3-235B-A22B: head_dim 128 (NOT 4096 / 64 = 64), 4 KV heads, 94 layers = 192,512
        ("qwen3-235b-a22b", 2 * 4 * 128 * 94 * 2),
        # Qwen2.5-7B: 4 KV heads x 128, 28 layers = 57,344
        ("qwen2.5-7b", 2 * 4 * 128 * 28 * 2),
        # gemma-2-9b: head_dim 256 (NOT 3584 / 16 = 224), 8 KV heads, 42 layers = 344,064
        ("gemma-2-9b", 2 * 8 * 256 * 42 * 2),
        # gemma-3-27b: head_dim 128, 16 KV heads, 62 layers = 507,904
        ("gemma-3-27b", 2 * 16 * 128 * 62 * 2),
    ],
)
def test_bytes_per_token_bf16(model: str, bytes_per_token: int) -> None:
    assert rank_caches(load_spec(model), kv_dtype="bf16").bytes_per_token == bytes_per_token


def test_deepseek_v2_blocks_and_sequence() -> None:
    est = estimate(load_spec("deepseek-v2"), context=4097, batch=3, block_size=16)
    assert est.bytes_per_token_per_layer == 576 * 2  # 1,152
    assert est.bytes_per_block_per_layer == 16 * 1152  # 18,432: vLLM's page
    assert est.bytes_per_block == 16 * 69_120  # 1,105,920
    # 4,097 tokens need ceil(4097 / 16) = 257 blocks per layer; 60 layers.
    assert est.blocks_per_sequence == 257 * 60
    assert est.bytes_per_sequence == 257 * 16 * 69_120
    assert est.bytes_per_sequence_unpaged == 4097 * 69_120
    assert est.bytes_per_batch == 3 * 257 * 16 * 69_120


@pytest.mark.parametrize(
    ("kv_dtype", "bytes_per_token_per_layer"),
    [
        ("fp32", 2 * 8 * 128 * 4),  # 8,192
        ("bf16", 2 * 8 * 128 * 2),  # 4,096
        ("fp16", 2 * 8 * 128 * 2),
        ("fp8", 2 * 8 * 128 * 1),  # 2,048
        ("int8", 2 * 8 * 128 * 1),
        ("int4", 2 * 8 * 128 // 2),  # 1,024: half a byte each, per-tensor scale not counted
        # nvfp4: 2,048 four-bit elements = 1,024 B, plus one 1-byte fp8 scale per 16 = 128 B
        ("nvfp4", 2 * 8 * 128 // 2 + 2 * 8 * 128 // 16),
    ],
)
def test_kv_dtypes_llama_3_8b(kv_dtype: str, bytes_per_token_per_layer: int) -> None:
    est = estimate(load_spec("llama-3-8b"), context=1, kv_dtype=kv_dtype)
    assert est.bytes_per_token_per_layer == bytes_per_token_per_layer
    assert est.bytes_per_token == 32 * bytes_per_token_per_layer


def test_kv_dtype_is_independent_of_weight_dtype() -> None:
    spec = load_spec("deepseek-v3")  # fp8 weights
    assert estimate(spec, context=1, kv_dtype="bf16").bytes_per_token_per_layer == 1152
    assert estimate(spec, context=1, kv_dtype="fp8").bytes_per_token_per_layer == 576


def test_gemma2_sliding_layers_hold_window_plus_one_block() -> None:
    # gemma-2-9b: 42 layers alternating local (window 4096) / global; 8 KV heads x 256 dims.
    spec = load_spec("gemma-2-9b")
    assert spec.layer_windows[:2] == (4096, None)
    est = estimate(spec, context=8192, block_size=16)
    per_layer = 2 * 8 * 256 * 2  # 8,192 B per token per layer
    # 21 global layers hold all 8,192 tokens = 512 blocks; 21 local layers hold at most
    # ceil((4096 - 1) / 16) + 1 = 257 blocks.
    assert est.blocks_per_sequence == 21 * 512 + 21 * 257
    assert est.bytes_per_sequence == (21 * 512 + 21 * 257) * 16 * per_layer
    # Below the window, sliding layers hold the whole (block-rounded) context.
    short = estimate(spec, context=1000, block_size=16)
    assert short.blocks_per_sequence == 42 * 63


def test_gemma3_five_local_to_one_global() -> None:
    spec = load_spec("gemma-3-27b")
    windows = spec.layer_windows
    assert len(windows) == 62
    assert windows[:6] == (1024, 1024, 1024, 1024, 1024, None)
    assert sum(w is None for w in windows) == 10  # layers 5, 11, ..., 59
    est = estimate(spec, context=32768, block_size=16)
    # 10 global layers x 2,048 blocks + 52 local x (ceil(1023 / 16) + 1 = 65) blocks
    assert est.blocks_per_sequence == 10 * 2048 + 52 * 65


def test_mistral_every_layer_slides() -> None:
    est = estimate(load_spec("mistral-7b-v0.1"), context=32768, block_size=16)
    assert est.num_sliding_layers == 32
    assert est.blocks_per_sequence == 32 * 257


def test_tensor_parallel_kv_heads() -> None:
    llama = load_spec("llama-3-70b")  # 8 KV heads
    assert rank_caches(llama, tp=2).bytes_per_token == 327_680 // 2
    assert rank_caches(llama, tp=8).bytes_per_token == 327_680 // 8
    # 16 ranks > 8 KV heads: each rank keeps one replicated head, max(1, 8 // 16) = 1.
    assert rank_caches(llama, tp=16).bytes_per_token == 327_680 // 8
    # MLA's latent is not sharded: every rank holds all of it.
    ds = load_spec("deepseek-v3")
    assert rank_caches(ds, tp=8).bytes_per_token == rank_caches(ds, tp=1).bytes_per_token


# --- MLA weights, a decompressed cache: MiniCPM3 in vLLM ------------------------------------------
# openbmb/MiniCPM3-4B config.json: 40 heads, kv_lora_rank 256, qk_nope_head_dim 64,
# qk_rope_head_dim 32, 62 layers; v_head_dim = hidden 2560 / 40 = 64. vLLM's MiniCPM3Attention
# (vllm/model_executor/models/minicpm3.py) up-projects the latent and caches through the plain
# Attention layer: num_kv_heads = 40, head size qk_nope + qk_rope = 96 for K and for V (V is
# zero-padded from 64 to 96). Per token per layer: 40 x (96 + 96) x 2 B = 15,360 B, x 62 layers
# = 952,320 B; the latent would be (256 + 32) x 2 = 576 B. At TP 4 each rank has 10 heads:
# 3,840 B. SGLang (MiniCPM3AttentionMLA, its default) caches the latent.


def test_minicpm3_is_cached_decompressed_by_vllm_and_as_mla_by_sglang() -> None:
    from kvplan.capacity.plan import plan_capacity
    from kvplan.engines.base import Engine, PlanInputs

    def served_spec(spec, engine):
        return engine.rules.served_spec(spec)

    spec = load_spec("minicpm3-4b")
    served = served_spec(spec, Engine.vllm)
    assert served.attention.elements_per_token() * 2 == 15_360
    assert served.attention.elements_per_token(tp=4) * 2 == 3_840
    assert served_spec(spec, Engine.sglang) is spec
    assert spec.attention.elements_per_token() * 2 == 576
    vllm = plan_capacity(spec, PlanInputs(context=8192, kv_budget_bytes=58 * GiB))
    assert vllm.per_gpu_bytes_per_token == 952_320
    # 58 GiB = 62,277,025,792 B // (16 x 15,360 B) = 253,406 pages, // 62 layers = 4,087
    # blocks; a FullAttention spec, so the CUDA default block 16 (no MLA backend's 64).
    assert vllm.num_blocks == 4_087
    assert vllm.block_size == 16
    sglang = plan_capacity(spec, PlanInputs(context=8192, kv_budget_bytes=58 * GiB,
                                            engine=Engine.sglang))
    assert sglang.per_gpu_bytes_per_token == 576 * 62
    # The weights are MLA's for both engines; vLLM's MLAAttention layers also hold four float32
    # scale buffers each (mla_attention.py:547, attention.py:133-139): 62 x 16 B.
    assert vllm.weights_bytes == sglang.weights_bytes + 62 * 16
