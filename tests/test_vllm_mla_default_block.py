"""vLLM 0.32's block for MLA models when no --block-size is given, by GPU, platform and KV dtype
(issue 26; kvplan.engines.vllm.block_size.default_block). Read from vLLM 0.32:
platforms/cuda.py _get_backend_priorities (the MLA lists by compute capability),
platforms/interface.py update_block_size_for_backend / _preferred_block_size_for_backends,
v1/attention/backend.py get_preferred_block_size (16 if the backend takes it, else its smallest
kernel block), and v1/attention/backends/mla/*.py (kernel blocks, KV dtypes, capabilities).
Older releases (0.10.0 to 0.31.0, each PyPI wheel read where the code changes): the rows of
block_size.MLA_BLOCK_RULES, cited line by line below.

By hand from DeepSeek-V3's config (tests/data/configs/deepseek-v3.json: 61 layers,
kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128): the latent row is 512 + 64 = 576
values, 1,152 B at bf16, 576 B at fp8; a request of 4,096 tokens.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvplan.engines.vllm.block_size import MLA_BLOCK_RULES, cuda_mla_backend, mla_block_rule
from kvplan.engines.vllm.engine import VllmEngine
from kvplan.hardware.gpus import get_gpu
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


# Older releases (issue 26), each row read in that release's PyPI wheel (block_size.py
# MLA_BLOCK_RULES gives every file and line). DeepSeek-V3 at --kv-budget-gib 10 (10,737,418,240
# B): a block of B tokens is 61 x B x 1,152 B at bf16 (576 B at fp8), num_blocks = budget // it:
# B 16: 1,124,352 B -> 9,549; 32: 2,248,704 B -> 4,774; 64: 4,497,408 B -> 2,387;
# 128: 8,994,816 B -> 1,193; 64 at fp8: 2,248,704 B -> 4,774.
@pytest.mark.parametrize(("version", "gpu", "extra", "block", "num_blocks"), [
    # 0.10.0 platforms/cuda.py:152-170: FlashMLA forced to 64 where is_flashmla_supported
    # (attention/ops/flashmla.py:29, SM 9.x only); nothing on B200 (TRITON_MLA, 16).
    ("0.10.0", "H100", (), 64, 2_387), ("0.10.0", "B200", (), 16, 9_549),
    # 0.10.1 cuda.py:152 is_device_capability(100) -> CUTLASS_MLA, :175 forced to 128; B300 is
    # SM 10.3, not 10.0: TRITON_MLA's 16.
    ("0.10.1", "B200", (), 128, 1_193), ("0.10.1", "B300", (), 16, 9_549),
    # Until 0.11.0 any other block is replaced (cuda.py:163 'block_size != 64'), even a given
    # one; from 0.11.1 only a non-multiple (cuda.py:207 'block_size % 64 != 0').
    ("0.11.0", "H100", ("--block-size", "128"), 64, 2_387),
    ("0.11.1", "H100", ("--block-size", "128"), 128, 1_193),
    ("0.12", "H100", ("--block-size", "16"), 64, 2_387),
    # 0.13.0 cuda.py:185 is_device_capability_family(100): B300 too.
    ("0.13", "B300", (), 128, 1_193),
    # 0.15.0 cuda.py:192 qk_nope_head_dim == 128 -> FLASHINFER_MLA, :234 forced to 64 (it
    # keeps 32 or a multiple of 64).
    ("0.15", "B200", (), 64, 2_387), ("0.17", "B200", ("--block-size", "32"), 32, 4_774),
    ("0.17", "A100-80GB", (), 16, 9_549),
    # 0.18.0: no forcing (platforms/interface.py:427 update_block_size_for_backend); the 0.32
    # priorities: FLASH_ATTN_MLA 16 on Hopper, FlashMLA 64 at fp8, FLASHINFER_MLA 32 on SM 10.x.
    ("0.18", "H100", (), 16, 9_549), ("0.18", "H100", ("--kv-dtype", "fp8"), 64, 4_774),
    ("0.19", "B200", (), 32, 4_774), ("0.25", "B300", (), 32, 4_774),
])
def test_older_releases_by_hand(version: str, gpu: str, extra: tuple[str, ...], block: int,
                                num_blocks: int) -> None:
    est = estimate(V3, "--gpu", gpu, "--engine-version", version, "--kv-budget-gib", "10",
                   *extra)
    assert est["block_size"] == block
    assert est["num_blocks"] == num_blocks
    assert est["num_blocks"] == 10 * 2**30 // est["bytes_per_block"]


def test_backend_by_release() -> None:
    att = load_config(CONFIGS / "deepseek-v3.json")[0].attention
    glm = load_config(CONFIGS / "glm-4.7-flash.json")[0].attention  # qk_nope_head_dim 192
    assert mla_block_rule("0.11").since == (0, 10, 2, 0)  # 0.11 is 0.11.0
    assert mla_block_rule("0.10.1.1").since == (0, 10, 1, 0)
    assert mla_block_rule(None) == MLA_BLOCK_RULES[-1]
    assert [r.since for r in MLA_BLOCK_RULES] == sorted(r.since for r in MLA_BLOCK_RULES)
    # 0.15-0.17 force FLASHINFER_MLA for qk_nope_head_dim 128 alone (cuda.py:192): GLM-4.7-Flash
    # gets CUTLASS_MLA; 0.18.x's FLASHINFER_MLA takes [64, 128] (flashinfer_mla.py:87), 0.19
    # [64, 128, 192].
    assert cuda_mla_backend(att, "bf16", (10, 0), "0.15") == "FLASHINFER_MLA"
    assert cuda_mla_backend(glm, "bf16", (10, 0), "0.15") == "CUTLASS_MLA"
    assert cuda_mla_backend(glm, "bf16", (10, 0), "0.18") == "CUTLASS_MLA"
    assert cuda_mla_backend(glm, "bf16", (10, 0), "0.19") == "FLASHINFER_MLA"
    # Head size 512 (kv_lora_rank 448): MLACommonBackend takes it from 0.30 (mla_attention.py
    # :1596), so before that only TRITON_MLA runs it on B200.
    odd = replace(att, kv_lora_rank=448)
    assert cuda_mla_backend(odd, "bf16", (10, 0), "0.29") == "TRITON_MLA"
    assert cuda_mla_backend(odd, "bf16", (10, 0), "0.30") == "FLASHINFER_MLA"


@pytest.mark.parametrize(("version", "gpu"), [
    ("0.10.1", "H100"), ("0.10.0", "B200"), ("0.10.1", "B200"), ("0.12", "B300"),
    ("0.17", "L40S"), ("0.17", "RTX-5090"), ("0.17", "MI300X"),
])
def test_fp8_without_an_fp8_backend_is_refused(version: str, gpu: str) -> None:
    # triton_mla.py:69 (0.10.x-0.11.0) 'TritonMLA V1 with FP8 KV cache not yet supported', then
    # kv dtypes ['auto'(, 'bfloat16')] until 0.18; flashmla.py:149/171 and cutlass_mla.py:113
    # likewise in 0.10.0-0.10.1.
    line = refused(V3, "--gpu", gpu, "--engine-version", version, "--kv-dtype", "fp8")
    assert "--kv-dtype fp8" in line and "takes no fp8 KV cache" in line


def test_fp8_where_a_backend_takes_it() -> None:
    # FlashMLA fp8 from 0.10.2 (64), CUTLASS_MLA fp8 from 0.10.2 (128), TRITON_MLA from 0.18.
    assert estimate(V3, "--gpu", "H100", "--engine-version", "0.10.2", "--kv-dtype",
                    "fp8")["block_size"] == 64
    assert estimate(V3, "--gpu", "B200", "--engine-version", "0.12", "--kv-dtype",
                    "fp8")["block_size"] == 128
    assert estimate(V3, "--gpu", "RTX-5090", "--engine-version", "0.18", "--kv-dtype",
                    "fp8")["block_size"] == 16


def test_plan_searches_bf16_alone_where_fp8_does_not_start() -> None:
    # `kvplan plan` asks runnable_kv_dtypes, so it neither refuses nor offers fp8 there.
    v3 = load_config(CONFIGS / "deepseek-v3.json")[0]
    rules = VllmEngine()
    assert rules.runnable_kv_dtypes(v3, "0.10.1", get_gpu("H100")) == ("bf16",)
    assert rules.runnable_kv_dtypes(v3, "0.17", get_gpu("L40S")) == ("bf16",)
    assert rules.runnable_kv_dtypes(v3, "0.11", get_gpu("H100")) is None
    assert rules.runnable_kv_dtypes(v3, "0.18", get_gpu("MI300X")) is None


def test_sparse_mla_by_release() -> None:
    # CUDA: 64 in every release; before 0.18 forced even when given (cuda.py:229 in 0.11.1,
    # :270 in 0.17.1: 'block_size != 64'); from 0.18 the indexer's [64] (built before the MLA
    # layer in deepseek_v2.py, so the first backend update_block_size_for_backend reads).
    assert estimate(V32, "--gpu", "H100", "--engine-version", "0.15", "--block-size",
                    "128")["block_size"] == 64
    assert estimate(V32, "--gpu", "B200", "--engine-version", "0.19")["block_size"] == 64
    # ROCm: not before 0.18 (rocm.py: 0.11.0 :201 'Sparse Attention is not supported on ROCm',
    # 0.12.0 :228 'assert block_size == 1'); 16 from 0.18 (rocm.py:707, indexer.py:40 [1]).
    assert "from 0.18" in refused(V32, "--gpu", "MI300X", "--engine-version", "0.17")
    assert estimate(V32, "--gpu", "MI300X", "--engine-version", "0.18")["block_size"] == 16


def test_mla_hybrid_before_020_starts_from_16() -> None:
    # Kimi-Linear (MLA + KDA) before 0.20: HybridAttentionMambaModelConfig raises CacheConfig's
    # 16 in steps of 64 for the state (read in every wheel since: tests/test_kimi_linear_blocks.py),
    # and the note says so.
    code, out, err = run("estimate", str(CONFIGS / "kimi-linear-48b-a3b.json"), "--gpu", "H100",
                         "--engine-version", "0.13", "-c", "4096", "-f", "json")
    assert code == 0, err
    assert json.loads(out)["requested_block_size"] == 16
    code, out, err = run("estimate", str(CONFIGS / "kimi-linear-48b-a3b.json"), "--gpu", "H100",
                         "--engine-version", "0.13", "-c", "4096")
    assert "aligned to 64 before vLLM 0.20" in " ".join((out + err).split())


def test_note_says_what_decides() -> None:
    code, out, err = run("estimate", V3, "--gpu", "B200", "-c", "4096")
    assert code == 0, err
    text = " ".join((out + err).split())
    assert "FLASHINFER_MLA 32 on SM 10.x" in text and "FlashMLA uses 64" not in text
    assert "Before 0.18" not in text
    code, out, err = run("estimate", V3, "--gpu", "B200", "-c", "4096", "--engine-version", "0.15")
    assert code == 0, err
    assert "Before 0.18 platforms/cuda.py forces the block" in " ".join((out + err).split())


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
