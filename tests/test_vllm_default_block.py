"""vLLM's block with no --block-size by release (kvplan.engines.vllm.default_block): 16 to 0.33,
CacheConfig.DEFAULT_BLOCK_SIZE 64 from 0.34.

Read in the PyPI wheels' sources: 0.32.0 config/cache.py:72 and 0.33.0 config/cache.py:185
`DEFAULT_BLOCK_SIZE: ClassVar[int] = 16`; 0.34.0 config/cache.py:185 `= 64`, offered to the
attention backends by platforms/interface.py:777-791 (update_block_size_for_backend, phase 1:
get_preferred_block_size(default), v1/attention/backend.py:158-166: the default where a kernel
block divides it, else the smallest kernel block). ROCm's ROCM_ATTN returns 16 whatever the
default (0.34.0 v1/attention/backends/rocm_attn.py:166-172). The hybrid alignment starts from
max(the backend's smallest kernel block, that block) (0.32.0 platforms/interface.py:1062-1068,
0.34.0 :1080-1086), so a recurrent hybrid's block moves too.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.vllm.default_block import (
    MLA_KERNEL_BLOCKS,
    cache_default_block,
    preferred_block,
)

GiB = 1 << 30


def estimate(*args: str) -> dict:
    result = CliRunner().invoke(app, ["estimate", *args, "-f", "json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_cache_default_by_release() -> None:
    # No version: the default release's (0.32), as every unversioned plan before.
    assert [cache_default_block(v) for v in (None, "0.10", "0.32", "0.33.0", "0.34", "0.35")] == [
        16, 16, 16, 16, 64, 64]


def test_mla_backends_take_the_default() -> None:
    # get_preferred_block_size over each dense MLA backend's kernel blocks: at 16 FLASHINFER_MLA
    # ([32, 64]) and CUTLASS_MLA ([128]) and FLASHMLA ([64]) take their smallest; at 64 every
    # one but CUTLASS_MLA takes 64.
    at = {d: {n: preferred_block(k, d) for n, k in MLA_KERNEL_BLOCKS.items()} for d in (16, 64)}
    assert at[16] == {"FLASHINFER_MLA": 32, "CUTLASS_MLA": 128, "FLASH_ATTN_MLA": 16,
                      "FLASHMLA": 64, "TRITON_MLA": 16}
    assert at[64] == {"FLASHINFER_MLA": 64, "CUTLASS_MLA": 128, "FLASH_ATTN_MLA": 64,
                      "FLASHMLA": 64, "TRITON_MLA": 64}


@pytest.mark.parametrize("gpu", ["H100", "B200", "A100-80GB"])
def test_llama_3_1_8b_blocks_of_64_from_0_34(gpu: str) -> None:
    # Llama-3.1-8B (model_specs/llama-3.1-8b.yaml, its config.json): 32 layers x 8 KV heads x 128
    # x 2 (K, V) x 2 B = 131,072 B a token. 40 GiB = 42,949,672,960 B.
    # 0.33: FLASH_ATTN (FLASHINFER on SM 10.x) at 16: a block of 32 layers is 16 x 131,072 =
    # 2,097,152 B: 20,480 blocks; 10,000 tokens: cdiv(10,000, 16) = 625 blocks: 32.768 requests.
    # 0.34: 64 (MultipleOf(16) and [16, 32, 64] take it): 8,388,608 B: 5,120 blocks;
    # cdiv(10,000, 64) = 157 blocks (10,048 tokens): 5,120 / 157 = 32.611 requests.
    old = estimate("llama-3.1-8b", "-c", "10000", "--gpu", gpu, "--engine-version", "0.33",
                   "--kv-budget-gib", "40")
    new = estimate("llama-3.1-8b", "-c", "10000", "--gpu", gpu, "--engine-version", "0.34",
                   "--kv-budget-gib", "40")
    assert (old["block_size"], old["num_blocks"]) == (16, 20_480)
    assert old["max_concurrency"] == pytest.approx(20_480 / 625)
    assert (new["block_size"], new["num_blocks"]) == (64, 5_120)
    assert new["kv_cache_groups"][0]["pages_per_request"] == 157
    assert new["max_concurrency"] == pytest.approx(5_120 / 157)
    # A --block-size given runs as given (phase 1 skipped): 0.34 at 16 is 0.33's answer.
    given = estimate("llama-3.1-8b", "-c", "10000", "--gpu", gpu, "--engine-version", "0.34",
                     "--kv-budget-gib", "40", "--block-size", "16")
    assert (given["block_size"], given["num_blocks"]) == (16, 20_480)


def test_rocm_attention_keeps_16() -> None:
    # ROCm on an Instinct GPU: ROCM_ATTN first (0.34.0 platforms/rocm.py:562), its preferred
    # block 16 whatever the default: Llama-3.1-8B as 0.33 on CUDA, 20,480 blocks of 16.
    out = estimate("llama-3.1-8b", "-c", "10000", "--gpu", "MI300X", "--platform", "rocm",
                   "--engine-version", "0.34", "--kv-budget-gib", "40")
    assert (out["block_size"], out["num_blocks"]) == (16, 20_480)


@pytest.mark.parametrize(("gpu", "platform", "block_0_33"), [
    ("H100", "cuda", 16),    # FLASH_ATTN_MLA, MultipleOf(16)
    ("B200", "cuda", 32),    # FLASHINFER_MLA (qk_nope_head_dim 128), [32, 64]
    ("MI300X", "rocm", 16),  # TRITON_MLA, % 16
])
def test_deepseek_v2_lite_mla_block_64_from_0_34(gpu: str, platform: str, block_0_33: int) -> None:
    # DeepSeek-V2-Lite (model_specs/deepseek-v2-lite.yaml): 27 layers of one latent, (512 + 64) x
    # 2 B = 1,152 B a token a layer. At 0.34 every backend takes 64: a block is 27 x 64 x 1,152 =
    # 1,990,656 B; 40 GiB // it = 21,575 blocks; 10,000 tokens: 157 blocks: 137.42 requests.
    # 0.33 at 16: 27 x 16 x 1,152 = 497,664 B: 86,302 blocks; at 32: 43,151.
    old = estimate("deepseek-v2-lite", "-c", "10000", "--gpu", gpu, "--platform", platform,
                   "--engine-version", "0.33", "--kv-budget-gib", "40")
    new = estimate("deepseek-v2-lite", "-c", "10000", "--gpu", gpu, "--platform", platform,
                   "--engine-version", "0.34", "--kv-budget-gib", "40")
    assert old["block_size"] == block_0_33
    assert old["num_blocks"] == 40 * GiB // (27 * block_0_33 * 1152)
    assert (new["block_size"], new["num_blocks"]) == (64, 21_575)
    assert new["max_concurrency"] == pytest.approx(21_575 / 157)


def test_qwen3_5_hybrid_aligned_from_64_at_0_34() -> None:
    # Qwen3.5-9B (see test_vllm_v034.py: attention 4,096 B a token a layer, 8 full layers; a
    # Gated DeltaNet state 2,146,304 B) on A100 (no FlashInfer GDN prefill: no checkpoint page).
    # The alignment is max(16, block): 0.33 16 x cdiv(2,146,304, 16 x 4,096) = 16 x 33 = 528;
    # 0.34 64 x cdiv(2,146,304, 64 x 4,096) = 64 x 9 = 576 (platforms/interface.py:1108-1115).
    # 20 GiB // (576 x 4,096 x 8 = 18,874,368) = 1,137 blocks; a request: 3 state groups x 2
    # pages + cdiv(8,192, 576) = 15: 21, so 1,137 / 21 = 54.14 (0.33: 1,241 / 22 = 56.41).
    old = estimate("qwen3.5-9b", "-c", "8192", "--gpu", "A100-80GB", "--engine-version", "0.33",
                   "--kv-budget-gib", "20")
    new = estimate("qwen3.5-9b", "-c", "8192", "--gpu", "A100-80GB", "--engine-version", "0.34",
                   "--kv-budget-gib", "20")
    assert (old["block_size"], old["num_blocks"]) == (528, 1_241)
    assert (new["block_size"], new["num_blocks"]) == (576, 1_137)
    assert new["max_concurrency"] == pytest.approx(1_137 / 21)


def test_rocm_sparse_mla_block_64_from_0_34() -> None:
    # DeepSeek-V3.2 on ROCm: ROCM_AITER_MLA_SPARSE and the ROCm indexer both take [1,
    # MultipleOf(16)] (mla/rocm_aiter_mla_sparse.py:361-362, mla/indexer.py:237-238), so the
    # default where both take it: 16 at 0.33, 64 at 0.34.
    args = ("deepseek-v3.2", "-c", "10000", "--gpu", "MI300X", "--platform", "rocm", "--tp", "8",
            "--kv-budget-gib", "40")
    assert estimate(*args, "--engine-version", "0.33")["block_size"] == 16
    assert estimate(*args, "--engine-version", "0.34")["block_size"] == 64


def test_sweep_and_estimate_agree_at_0_34() -> None:
    # One rule: `kvplan sweep` takes the release's block as `estimate` does. 10,000 tokens in
    # blocks of 64: 157 x 64 = 10,048 tokens x 131,072 B = 1,317,011,456 B a sequence (0.33's
    # 16: 625 x 16 = 10,000 tokens, 1,310,720,000 B).
    result = CliRunner().invoke(app, ["sweep", "llama-3.1-8b", "--context", "10000",
                                      "--engine-version", "0.34", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    row = json.loads(result.stdout)[0]
    one = estimate("llama-3.1-8b", "-c", "10000", "--engine-version", "0.34")
    assert row["block_size"] == one["block_size"] == 64
    assert row["bytes_per_sequence"] == one["bytes_per_sequence"] == 10_048 * 131_072


def test_pure_mamba_on_cpu_keeps_the_default_from_0_33() -> None:
    # A model with no attention backend (FalconMamba, the blind batch's shrunk config): 0.32's
    # CPU check_and_update_config set 128 for every model (platforms/cpu.py:292-293); 0.33 moved
    # it into update_block_size_for_backend, which returns first when no attention backend is
    # found (0.33.0 :550-565), so CacheConfig's default stands: 16, 64 at 0.34. With prefix
    # caching on, mamba_block_size is that block (models/config.py MambaModelConfig); the state
    # pages, and so the blocks, do not move.
    args = ("tests/data/blind26/shrunk/falcon-mamba-7b/config.json", "-c", "4096", "--platform",
            "cpu", "--gpu-mem-gib", "64", "--enable-prefix-caching")
    got = {v: estimate(*args, "--engine-version", v) for v in ("0.32", "0.33", "0.34")}
    assert [got[v]["block_size"] for v in got] == [128, 16, 64]
    assert len({got[v]["num_blocks"] for v in got}) == 1
    assert estimate(*args)["block_size"] == 128  # no version: the default release, 0.32
