"""Kimi-Linear (KimiLinearForCausalLM: 7 MLA layers + 20 KDA layers) at every vLLM release kvplan
models: the block an MLA + recurrent hybrid runs at, read in each wheel (issue 26;
kvplan.engines.vllm.block_size MLA_HYBRID_ALIGNMENT, whose rows cite the files and lines).

The recurrent state of one KDA layer (tests/data/configs/kimi-linear-48b-a3b.json,
linear_attn_config: 32 heads of 128, short conv 4): q, k, v conv states 3 x (4 - 1) x 4096 x 2 B
= 73,728 + the fp32 state 32 x 128 x 128 x 4 B = 2,097,152 -> 2,170,880 B. One MLA token:
(512 + 64) x 2 B = 1,152 B. vLLM raises the block to align x cdiv(state, align x 1,152):
- 0.11.2-0.19.1 (model_executor/models/config.py HybridAttentionMambaModelConfig): align 64
  -> 64 x cdiv(2,170,880, 73,728) = 64 x 30 = 1,920, whatever the GPU;
- 0.20.2-0.26.0 (platforms/interface.py _align_hybrid_block_size): align = the MLA backend's
  block: FLASH_ATTN_MLA 16 on H100 (and with no --gpu) -> 16 x cdiv(2,170,880, 18,432)
  = 16 x 118 = 1,888; FLASHINFER_MLA 32 on B200 -> 32 x cdiv(2,170,880, 36,864) = 32 x 59
  = 1,888;
- 0.27.1 on: at least 128 -> 128 x cdiv(2,170,880, 147,456) = 128 x 15 = 1,920.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import UnmodelledError
from kvplan.cli import app
from kvplan.engines.vllm.block_size import mla_hybrid_alignment
from kvplan.sources.hf_config import load_config

CONFIG = Path(__file__).parent / "data" / "configs" / "kimi-linear-48b-a3b.json"
STATE_BYTES = 3 * 3 * 4096 * 2 + 32 * 128 * 128 * 4  # 2,170,880
MLA_TOKEN = (512 + 64) * 2


def run_cli(args: list[str]):
    return CliRunner().invoke(app, args)


def _estimate(version: str, *extra: str) -> dict:
    result = run_cli(["estimate", str(CONFIG), "-c", "8192", "--engine-version", version,
                      "-f", "json", *extra])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


# (release, GPU flags, block) -- one row per range and GPU.
BLOCKS = [
    ("0.11.2", ("--gpu", "H100"), 1920), ("0.11.2", ("--gpu", "B200"), 1920), ("0.11.2", (), 1920),
    ("0.15", ("--gpu", "B200"), 1920), ("0.19", ("--gpu", "H100"), 1920),
    ("0.19", ("--gpu", "B200"), 1920), ("0.19", (), 1920),
    ("0.20", ("--gpu", "H100"), 1888), ("0.25", ("--gpu", "B200"), 1888), ("0.26", (), 1888),
    ("0.27", ("--gpu", "H100"), 1920), ("0.31", ("--gpu", "B200"), 1920), ("0.31", (), 1920),
    ("0.32", ("--gpu", "B200"), 1920),
]


@pytest.mark.parametrize(("version", "gpu", "block"), BLOCKS)
def test_block_by_release_and_gpu(version: str, gpu: tuple[str, ...], block: int) -> None:
    out = _estimate(version, *gpu)
    assert out["block_size"] == block
    align = mla_hybrid_alignment(version) or {"B200": 32}.get(gpu[-1] if gpu else "", 16)
    assert block == align * -(-STATE_BYTES // (align * MLA_TOKEN))


# 40 GiB of KV on a B200: 7 MLA + 20 KDA layers -> groups of 7 (one MLA, three KDA, one slot
# padded), 7 pages per block; a request of 8,192 tokens takes cdiv(8192, block) MLA blocks + 3.
#   0.19: page 1,920 x 1,152 = 2,211,840 -> 42,949,672,960 // (7 x 2,211,840) = 2,774 blocks;
#         "GPU KV cache size" = 2,774 // 4 groups x 1,920 = 1,330,560 tokens (blocks x size);
#   0.25: page 1,888 x 1,152 = 2,174,976 -> 2,821 blocks; 2,821 / (5 + 3) = 352.625x;
#         int(352.625 x 8,192) = 2,888,704 tokens (0.21 on: concurrency x max_model_len);
#   0.27: 2,774 blocks / 8 = 346.75x -> 2,840,576 tokens.
#   0.31: prefix caching on for hybrids by default from 0.28 (engine/arg_utils.py:2650
#         `default_prefix_caching = is_prefix_caching_supported`; 0.27.1 :2605 left hybrids
#         out), so mamba cache mode 'align': each KDA group holds 2 pages, not 1 (kv_cache_
#         interface.py MambaSpec.max_memory_usage_bytes): 2,774 / (5 + 3 x 2) = 252.18x ->
#         int(2,774 / 11 x 8,192) = 2,065,873 tokens (kvplan said 2,840,576 before, mode 'none').
CAPACITY = [("0.19", 1920, 2774, 1_330_560), ("0.25", 1888, 2821, 2_888_704),
            ("0.27", 1920, 2774, 2_840_576), ("0.31", 1920, 2774, 2_065_873)]


@pytest.mark.parametrize(("version", "block", "blocks", "tokens"), CAPACITY)
def test_blocks_and_reported_tokens_by_hand(version: str, block: int, blocks: int,
                                            tokens: int) -> None:
    stage = _estimate(version, "--gpu", "B200", "--kv-budget-gib", "40")["stages"][0]
    assert (stage["block_size"], stage["num_blocks"]) == (block, blocks)
    assert stage["reported_kv_cache_tokens"] == tokens


def test_not_registered_in_0_10() -> None:
    from kvplan.engines.vllm.architectures import vllm_served_architecture

    spec, _ = load_config(CONFIG)
    # arrivals.json: first registered in the 0.11.2 wheel, named 0.11.1 (vllm issue #28228).
    with pytest.raises(UnmodelledError, match="served by vLLM from 0.11.1"):
        vllm_served_architecture(spec, "0.10", "0.32")


def test_block_size_before_0_20_refused() -> None:
    result = run_cli(["estimate", str(CONFIG), "-c", "8192", "--engine-version", "0.19",
                      "--gpu", "B200", "--block-size", "64"])
    assert result.exit_code == 2 and "takes another path" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("version", ["0.13", "0.19"])
def test_prefix_caching_takes_the_same_block(version: str) -> None:
    # 0.11.2-0.14 MambaModelConfig disables prefix caching (no SupportsMambaPrefixCaching on
    # KimiLinearForCausalLM); 0.15-0.19 set mamba cache mode 'align', and only 'all' takes the
    # chunk-aligned branch of HybridAttentionMambaModelConfig.
    on = _estimate(version, "--gpu", "B200", "--enable-prefix-caching")
    assert on["block_size"] == 1920


def test_tp2_block_on_b200_before_0_15_refused() -> None:
    # TP 2 halves the state (1,085,440 B): 64 x cdiv(1,085,440, 73,728) = 960, which 0.11.2-0.14's
    # platforms/cuda.py forces to CUTLASS_MLA's 128 on SM 10.x (960 % 128 != 0): the MLA page no
    # longer matches the padded state page. On H100 FlashMLA keeps 960 (a multiple of 64).
    result = run_cli(["estimate", str(CONFIG), "-c", "8192", "--engine-version", "0.13",
                      "--gpu", "B200", "--tp", "2"])
    assert result.exit_code == 2 and "CUTLASS_MLA" in result.stderr
    assert _estimate("0.13", "--gpu", "H100", "--tp", "2")["block_size"] == 960
