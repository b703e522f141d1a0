"""vLLM 0.32's block for MLA models when no --block-size is given, by GPU, platform and KV dtype
(issue 26; kvplan.engines.vllm.block_size.default_block). Read from vLLM 0.32:
platforms/cuda.py _get_backend_priorities (the MLA lists by compute capability),
platforms/interface.py update_block_size_for_backend / _preferred_block_size_for_backends,
v1/attention/backend.py get_preferred_block_size (16 if the backend takes it, else its smallest
kernel block), and v1/attention/backends/mla/*.py (kernel blocks, KV dtypes, capabilities).

By hand from DeepSeek-V3's config (tests/data/configs/deepseek-v3.json: 61 layers,
kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128): the latent row is 512 + 64 = 576
values, 1,152 B at bf16, 576 B at fp8; a request of 4,096 tokens.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvplan.engines.vllm.block_size import cuda_mla_backend
from kvplan.sources.hf_config import load_config
from tests.test_vllm_block_size import estimate, refused, run

CONFIGS = Path(__file__).parent / "data" / "configs"
V3 = str(CONFIGS / "deepseek-v3.json")
V32 = str(CONFIGS / "deepseek-v3.2.json")  # V3's MLA + the indexer (128 + 4 B a token)
LAYERS = 61




@pytest.mark.parametrize(("gpu", "kv_dtype", "block", "row_bytes"), [
    # SM 10.x: FLASHINFER_MLA first (flashinfer_mla.py: kernel blocks [32, 64], auto/bf16/fp8,
    # qk_nope_head_dim 128 in [64, 128, 192]); 16 is not a multiple of 32 or 64: min = 32.
    ("B200", "bf16", 32, 1152), ("B200", "fp8", 32, 576),
    # SM 9.x: FLASH_ATTN_MLA (flashattn_mla.py: MultipleOf(16), no fp8 KV) takes 16; at fp8
    # FLASHMLA (flashmla.py: [64], fp8 taken; ops/flashmla.py dense on Hopper only) -> 64.
    ("H100", "bf16", 16, 1152), ("H100", "fp8", 64, 576),
    # SM 8.x and 12.x: only TRITON_MLA (triton_mla.py: block_size % 16 == 0) -> 16.
    ("A100-80GB", "bf16", 16, 1152), ("RTX-5090", "fp8", 16, 576),
    # ROCm: TRITON_MLA (platforms/rocm.py, AITER off) -> 16.
    ("MI300X", "bf16", 16, 1152),
])
def test_dense_mla_default_block(gpu: str, kv_dtype: str, block: int, row_bytes: int) -> None:
    # B200 bf16: 32 x 1,152 = 36,864 B a layer, x 61 = 2,248,704 B a block, 4,096 / 32 = 128
    # blocks a request; H100 fp8: 64 x 576 = 36,864 B a layer, 64 blocks.
    est = estimate(V3, "--gpu", gpu, "--kv-dtype", kv_dtype)
    assert est["block_size"] == est["requested_block_size"] == block
    assert est["bytes_per_block"] == LAYERS * block * row_bytes
    assert est["blocks_per_request"] == 4096 // block
    if (gpu, kv_dtype) == ("B200", "bf16"):
        assert est["bytes_per_block"] == 2_248_704 and est["blocks_per_request"] == 128


def test_no_gpu_is_hoppers() -> None:
    # No compute capability: SM 9.0 assumed (block_size.HOPPER), as before at bf16.
    assert estimate(V3)["block_size"] == 16
    assert estimate(V3, "--kv-dtype", "fp8")["block_size"] == 64


def test_backend_choice_by_hand() -> None:
    att = load_config(CONFIGS / "deepseek-v3.json")[0].attention
    assert cuda_mla_backend(att, "bf16", (10, 0)) == "FLASHINFER_MLA"
    assert cuda_mla_backend(att, "bf16", (9, 0)) == "FLASH_ATTN_MLA"
    assert cuda_mla_backend(att, "fp8", (9, 0)) == "FLASHMLA"
    assert cuda_mla_backend(att, "bf16", (8, 0)) == "TRITON_MLA"
    assert cuda_mla_backend(att, "fp8", (12, 0)) == "TRITON_MLA"
    # qk_nope_head_dim outside [64, 128, 192]: FLASHINFER_MLA's supports_combination refuses;
    # TOKENSPEED_MLA needs 128; CUTLASS_MLA ([128]) is next on SM 10.x.
    assert cuda_mla_backend(replace(att, qk_nope_head_dim=256), "bf16", (10, 0)) == "CUTLASS_MLA"
    # A latent head size outside MLACommonBackend's [320, 512, 576]: TRITON_MLA (any) alone.
    assert cuda_mla_backend(replace(att, kv_lora_rank=128), "bf16", (10, 0)) == "TRITON_MLA"


def test_sparse_mla_on_rocm_is_16() -> None:
    # ROCM_AITER_MLA_SPARSE and the ROCm indexer take [1, MultipleOf(16)]
    # (rocm_aiter_mla_sparse.py, mla/indexer.py): both take 16, so it stays. 16 x (1,152 +
    # 132) = 20,544 B a layer, x 61 = 1,253,184 B a block; 256 blocks a request.
    est = estimate(V32, "--gpu", "MI300X")
    assert est["block_size"] == 16 and est["bytes_per_block"] == 1_253_184
    assert est["blocks_per_request"] == 256
    # CUDA keeps the indexer's 64 (DeepseekV32IndexerBackend [64]).
    assert estimate(V32, "--gpu", "B200")["block_size"] == 64


def test_sparse_mla_on_cpu_is_refused_without_block() -> None:
    # platforms/cpu.py get_attn_backend_cls: "Sparse Attention is not supported on CPU".
    line = refused(V32, "--platform", "cpu")
    assert "runs no sparse MLA" in line and "--platform cpu" in line


def test_older_versions_keep_16() -> None:
    # Read in 0.32 only: an older version keeps kvplan's earlier 16 (see block_size.py).
    assert estimate(V3, "--gpu", "B200", "--engine-version", "0.11")["block_size"] == 16
    assert estimate(V3, "--gpu", "H100", "--engine-version", "0.11")["block_size"] == 16


def test_note_says_what_decides() -> None:
    code, out, err = run("estimate", V3, "--gpu", "B200", "-c", "4096")
    assert code == 0, err
    text = " ".join((out + err).split())
    assert "FLASHINFER_MLA 32 on SM 10.x" in text and "FlashMLA uses 64" not in text


def compare(*extra: str) -> dict[str, dict]:
    code, out, err = run("compare", *extra, "-f", "json")
    assert code == 0, err
    return {r["scheme"]: r for r in json.loads(out)}


def test_compare_takes_each_variants_default_block() -> None:
    # DeepSeek-V3.2 on an H100: the indexer's 64 (compare passed 16 before and was refused).
    rows = compare(V32, "--gpu", "H100", "-c", "4096")
    assert rows["MLA (absorbed)"]["native"]
    # DeepSeek-V3 at 4,100 tokens: B200's 32 rounds up to 129 x 32 = 4,128 tokens x 70,272 B
    # (61 x 1,152) = 290,082,816 B; --block-size 16: 257 x 16 = 4,112 tokens, 288,958,464 B.
    b200 = compare(V3, "--gpu", "B200", "--tp", "8", "-c", "4100")
    assert b200["MLA (absorbed)"]["bytes_per_request"] == 4128 * 70_272 == 290_082_816
    given = compare(V3, "--gpu", "B200", "--tp", "8", "-c", "4100", "--block-size", "16")
    assert given["MLA (absorbed)"]["bytes_per_request"] == 4112 * 70_272 == 288_958_464
    # Standard-attention rows keep vLLM's 16: MHA's bytes are the same in both.
    assert b200["MHA"]["bytes_per_request"] == given["MHA"]["bytes_per_request"]
    # Without --gpu: Hopper's 16 for MLA, as `kvplan estimate`.
    bare = compare(V3, "-c", "4100")
    assert bare["MLA (absorbed)"]["bytes_per_request"] == 288_958_464
