"""One rule per cache kind: `kvplan compare`'s row for the model as it is and `kvplan estimate`
size one request with the same kind functions (kvplan.kv.kinds), so they agree to the byte.

One bundled real model per cache kind, each number worked out by hand from the model's
config.json. Every kind follows vLLM's ``vllm/v1/kv_cache_interface.py``: a spec per layer kind
whose ``page_size_bytes`` is one block of one layer (``FullAttentionSpec``:
block x 2 (K, V) x num_kv_heads x head_size x dtype bytes; ``MLAAttentionSpec``: block x one
latent row; ``SlidingWindowSpec`` / ``ChunkedLocalAttentionSpec``: the full-attention page;
``MambaSpec``: the state's bytes). In decode at context L a full-attention layer holds
cdiv(L, block) pages; a sliding layer of window W holds the last W tokens, which straddle at most
cdiv(W - 1, block) + 1 blocks (``SlidingWindowSpec``'s "window plus one block"); a chunked layer
of chunk C likewise at most cdiv(C - 1, block) + 1; a recurrent layer one state. bf16 throughout
(2 B). The issue's example (#25): compare said 12.00 GiB for llama-4-scout at 64k, estimate
4,431,544,320 B.

Recurrent hybrids: vLLM raises the attention block until one attention page holds a state page
(``vllm/platforms/interface.py`` ``_align_hybrid_block_size``: cdiv(state page, attention page per
token) rounded up to a multiple of 16), and estimate reports that block; compare is asked for the
same block (``--block-size``), so both page the same context the same way.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.sources.resolve import bundled_spec_ids

runner = CliRunner()
CONTEXT = 65536


def _json(*args: str) -> object:
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("kind", "model", "block", "bytes_per_request"),
    [
        # Full attention, GQA: Llama-3.1-8B, 32 layers, 8 KV heads x head_dim 128.
        # FullAttentionSpec page / block: 2 x 8 x 128 x 2 B = 4,096 B per token per layer;
        # 65,536 tokens = 4,096 pages of 16: 32 x 65,536 x 4,096 = 8,589,934,592.
        ("full/GQA", "llama-3.1-8b", 16, 32 * 65_536 * (2 * 8 * 128 * 2)),
        # MQA: falcon-7b, 32 layers, one KV head (multi_query) x head_dim 64 (4544 / 71):
        # 2 x 1 x 64 x 2 B = 256 B; 32 x 65,536 x 256 = 536,870,912.
        ("MQA", "falcon-7b", 16, 32 * 65_536 * (2 * 1 * 64 * 2)),
        # MLA: DeepSeek-V3, 61 layers, MLAAttentionSpec: one row of kv_lora_rank 512 +
        # qk_rope_head_dim 64 = 576 values x 2 B = 1,152 B, not split by heads;
        # 61 x 65,536 x 1,152 = 4,605,345,792.
        ("MLA", "deepseek-v3", 16, 61 * 65_536 * (512 + 64) * 2),
        # Sliding window: Mistral-7B-v0.1, 32 layers, all sliding_window 4096, 8 KV heads x 128:
        # 4,096 B per token per layer; SlidingWindowSpec: cdiv(4095, 16) + 1 = 257 pages of
        # 16 x 4,096 B = 65,536 B; 32 x 257 x 65,536 = 538,968,064.
        ("sliding window", "mistral-7b-v0.1", 16, 32 * 257 * 16 * (2 * 8 * 128 * 2)),
        # Chunked local: Llama-4-Scout, 48 layers, every 4th global (NoPE, no_rope_layers), the
        # other 36 chunked (attention_chunk_size 8192); 8 KV heads x 128 = 4,096 B per token per
        # layer. 12 full layers x 65,536 tokens x 4,096 B = 3,221,225,472;
        # ChunkedLocalAttentionSpec: the current chunk, cdiv(8191, 16) + 1 = 513 pages of 65,536 B
        # x 36 layers = 1,210,318,848. Total 4,431,544,320 (4.13 GiB; compare said 12.00 GiB).
        ("chunked local", "llama-4-scout", 16,
         12 * 65_536 * 4096 + 36 * 513 * 16 * 4096),
        # Recurrent (Gated DeltaNet): Qwen3-Next-80B-A3B, 48 layers, 36 linear_attention + 12
        # full_attention (2 KV heads x head_dim 256 = 2,048 B per token). MambaSpec state per
        # layer: conv (conv_kernel 4 - 1, 2 x 16 key heads x 128 + 32 value heads x 128 = 8,192)
        # = 3 x 8,192 x 2 B = 49,152 plus the recurrent state 32 x 128 x 128 x 2 B = 1,048,576:
        # 1,097,728 B. Block: cdiv(1,097,728, 2,048) = 536 -> 544. 65,536 tokens =
        # cdiv(65,536, 544) = 121 blocks = 65,824 tokens: 12 x 65,824 x 2,048 = 1,617,690,624;
        # plus 36 x 1,097,728 = 39,518,208. Total 1,657,208,832.
        ("recurrent", "qwen3-next-80b-a3b", 544,
         12 * 121 * 544 * 2048 + 36 * (3 * 8192 * 2 + 32 * 128 * 128 * 2)),
        # Hybrid attention: Gemma-3-27B, 62 layers, 5 sliding (window 1024) to 1 global: 10
        # global + 52 sliding; 16 KV heads x 128 = 8,192 B per token per layer.
        # 10 x 65,536 x 8,192 = 5,368,709,120; sliding cdiv(1023, 16) + 1 = 65 pages of
        # 16 x 8,192 B x 52 layers = 443,023,360. Total 5,811,732,480.
        ("hybrid (sliding + full)", "gemma-3-27b", 16,
         10 * 65_536 * 8192 + 52 * 65 * 16 * 8192),
        # Hybrid, attention and Mamba2 in every layer (parallel): Falcon-H1-34B, 72 layers, each
        # with 4 KV heads x 128 (2,048 B per token) and a Mamba2 state: conv (3, intermediate
        # 4096 + 2 x n_groups 2 x state 256 = 5,120) x 2 B = 30,720 plus ssm (32 heads, head_dim
        # 128, state 256) x 2 B = 2,097,152: 2,127,872 B. Block: cdiv(2,127,872, 2,048) = 1,039
        # -> 1,040. cdiv(65,536, 1,040) = 64 blocks = 66,560 tokens: 72 x 66,560 x 2,048 =
        # 9,814,671,360; plus 72 x 2,127,872 = 153,206,784. Total 9,967,878,144.
        ("hybrid (attention + Mamba2 per layer)", "falcon-h1-34b", 1040,
         72 * 64 * 1040 * 2048 + 72 * (3 * 5120 * 2 + 32 * 128 * 256 * 2)),
        # MLP-only layers: Nemotron-Nano-9B-v2, 56 layers = 27 Mamba2 + 25 MLP-only (no cache) +
        # 4 attention (8 KV heads x 128 = 4,096 B per token). Mamba2 state: conv (3, 10,240 +
        # 2 x 8 x 128 = 12,288) x 2 B = 73,728 plus ssm (128, 80, 128) in the config's ssm dtype
        # float32 (4 B) = 5,242,880: 5,316,608 B. Block: cdiv(5,316,608, 4,096) = 1,298 ->
        # 1,312; cdiv(65,536, 1,312) = 50 blocks = 65,600 tokens: 4 x 65,600 x 4,096 =
        # 1,074,790,400; plus 27 x 5,316,608 = 143,548,416. Total 1,218,338,816.
        ("MLP-only layers", "nemotron-nano-9b-v2", 1312,
         4 * 50 * 1312 * 4096 + 27 * (3 * 12288 * 2 + 128 * 80 * 128 * 4)),
        # Cross-layer sharing: Gemma-3n-E4B, 35 layers of which the last num_kv_shared_layers =
        # 15 reuse earlier layers' KV (no cache of their own); the 20 owners are 16 sliding
        # (window 512) + 4 full; 2 KV heads x 256 = 2,048 B per token per layer.
        # 4 x 65,536 x 2,048 = 536,870,912; sliding cdiv(511, 16) + 1 = 33 pages of
        # 16 x 2,048 B x 16 layers = 17,301,504. Total 554,172,416.
        ("cross-layer sharing", "gemma-3n-e4b", 16,
         4 * 65_536 * 2048 + 16 * 33 * 16 * 2048),
        # Indexer: DeepSeek-V3.2, 61 layers, each an MLA row (1,152 B, as DeepSeek-V3) and the
        # lightning indexer's keys (vLLM DeepseekV32IndexerCache, an MLAAttentionSpec in uint8):
        # index_head_dim 128 fp8 values + one fp32 scale per 128 = 132 B. vLLM's sparse MLA
        # (FlashMLA-sparse) runs block 64: 65,536 tokens = 1,024 blocks, no rounding.
        # 61 x 65,536 x (1,152 + 132) = 5,133,041,664.
        ("indexer", "deepseek-v3.2", 64, 61 * 65_536 * (1152 + 132)),
    ],
)
def test_compare_native_row_equals_estimate(kind: str, model: str, block: int,
                                            bytes_per_request: int) -> None:
    est = _json("estimate", model, "--context", str(CONTEXT))
    assert isinstance(est, dict)
    assert est["block_size"] == block
    assert est["bytes_per_sequence"] == bytes_per_request, kind
    rows = _json("compare", model, "--context", str(CONTEXT), "--block-size", str(block))
    assert isinstance(rows, list)
    (native,) = [row for row in rows if row["native"]]
    assert native["bytes_per_request"] == bytes_per_request, kind


def test_llama_4_scout_compare_equals_estimate_at_the_default_block() -> None:
    # The command, as typed: no --block-size (both default to 16).
    est = _json("estimate", "llama-4-scout", "--context", "65536")
    rows = _json("compare", "llama-4-scout", "--context", "65536")
    assert isinstance(est, dict) and isinstance(rows, list)
    (native,) = [row for row in rows if row["native"]]
    assert native["scheme"] == "GQA-8"
    assert native["bytes_per_request"] == est["bytes_per_sequence"] == 4_431_544_320



# vLLM caches MiniCPM3's MLA decompressed (kvplan.engines.vllm.alloc.vllm_cached_spec: its
# MiniCPM3Attention keeps per-head K and V), so estimate sizes that by default; compare compares
# the architecture's attention schemes, whose own row is the latent, as SGLang caches it
# (test_cache_golden holds both numbers).
ENGINE = {"minicpm3-4b": ["--engine", "sglang"]}


@pytest.mark.parametrize("model", bundled_spec_ids())
def test_every_bundled_model_compare_equals_estimate(model: str) -> None:
    est = _json("estimate", model, "--context", "10000", *ENGINE.get(model, []))
    assert isinstance(est, dict)
    rows = _json("compare", model, "--context", "10000", "--block-size", str(est["block_size"]))
    assert isinstance(rows, list)
    (native,) = [row for row in rows if row["native"]]
    assert native["bytes_per_request"] == est["bytes_per_sequence"]


def test_a_rewrite_keeps_the_layer_kinds_in_compare_and_sweep() -> None:
    # Gemma-2-9B rewritten as MLA (compare's default latent: kv_lora_rank 4 x head_dim 256 =
    # 1,024, qk_rope_head_dim 256 / 2 = 128): a row of 1,152 values x 2 B = 2,304 B per token per
    # layer. The 21 local layers keep their window of 4,096 (only the attention's cache row is
    # rewritten): at 8,192 tokens 21 global x 8,192 x 2,304 = 396,361,728 plus 21 local x
    # (cdiv(4095, 16) + 1 = 257) x 16 x 2,304 = 198,955,008: 595,316,736 -- in compare's row and
    # in sweep's "mla" scheme, which evaluates the same kinds.
    expected = 21 * 8192 * 2304 + 21 * 257 * 16 * 2304
    rows = _json("compare", "gemma-2-9b", "--context", "8192")
    assert isinstance(rows, list)
    (mla,) = [row for row in rows if row["scheme"] == "MLA (absorbed)"]
    assert mla["bytes_per_request"] == expected == 595_316_736
    points = _json("sweep", "gemma-2-9b", "--context", "8192", "--scheme", "mla")
    assert isinstance(points, list)
    assert [p["bytes_per_sequence"] for p in points] == [expected]
