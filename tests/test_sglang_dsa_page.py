"""SGLang pages DeepSeek's sparse attention (DSA: DeepSeek-V3.2, GLM-5) by 64 tokens whatever
--page-size says (kvplan/engines/sglang/dsa_page.py; read from the sglang==X wheels):
server_args.py _handle_model_specific_adjustments ``self.page_size = 64`` under
is_deepseek_nsa (0.5.3 lines 806-821; 0.5.9 lines 1205-1259, with ``if is_hip(): page_size = 1``
from 0.5.8), the override declarations from 0.5.15 (0.5.23 arg_groups/model_overrides/
deepseek_v2.py lines 151-174). The pool is then floored to whole 64-token pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import InputError
from kvplan.engines.base import Engine
from kvplan.engines.caches import stage_caches
from kvplan.engines.sglang.dsa_page import sglang_page_size
from kvplan.engines.sglang.pools import SglangPool, sglang_pool
from kvplan.sources.resolve import load_spec
from tests.test_sglang_pools import sglang
from tests.test_vllm_architectures import _one_line_refusal, _run

V32 = str(Path(__file__).parent / "data" / "configs" / "deepseek-v3.2.json")


@pytest.mark.parametrize(("version", "platform", "block", "page"), [
    ("0.5.3", "cuda", None, 64),   # 0.5.3 server_args.py:820 under `if not is_npu():`
    ("0.5.3", "rocm", None, 64),   # no is_hip() branch yet (0.5.7:1058 the same)
    ("0.5.7", "rocm", 1, 64),      # --page-size 1 is overwritten
    ("0.5.8", "rocm", None, 1),    # 0.5.8 server_args.py: `if is_hip(): self.page_size = 1`
    ("0.5.11", "rocm", 64, 1),
    ("0.5.9", "cuda", 16, 64),     # 0.5.9:1258, whatever --page-size says
    ("0.5.12", "rocm", 64, 64),    # aiter preshuffle paged-MQA kernel: 64 (0.5.12:1862-1874)
    ("0.5.12", "rocm", 1, 1),      # the legacy ROCm path
    ("0.5.23", "cuda", 32, 64),    # 0.5.23 model_overrides/deepseek_v2.py:171, index_kpool 1
    (None, "cuda", None, 64),      # the newest modelled
])
def test_the_dsa_page_by_release(version: str | None, platform: str, block: int | None,
                                 page: int) -> None:
    spec = load_spec("deepseek-v3.2")
    inputs = sglang(engine_version=version, platform=platform, block_size=block)
    assert sglang_page_size(spec, inputs) == page


def test_rocm_needs_the_block_size_from_0_5_12() -> None:
    # aiter_can_use_preshuffle_paged_mqa() depends on the Triton and aiter found at start-up.
    spec = load_spec("deepseek-v3.2")
    with pytest.raises(InputError, match="give --block-size 64 or 1"):
        sglang_page_size(spec, sglang(engine_version="0.5.14", platform="rocm"))


def test_other_models_keep_the_page_given() -> None:
    # No indexer: --page-size as given, default 1 (DeepSeek-V3's dense MLA included).
    for model in ("deepseek-v3", "llama-3.1-8b"):
        spec = load_spec(model)
        assert sglang_page_size(spec, sglang()) == 1
        assert sglang_page_size(spec, sglang(block_size=16)) == 16


def test_the_pool_floors_to_whole_pages() -> None:
    # DeepSeek-V3.2 in bf16: 61 x ((512 + 64) x 2 + 132) = 78,324 B/token. A rest of 10^9 B:
    # 10^9 // 78,324 = 12,767 tokens (78,324 x 12,767 = 999,962,508; x 12,768 > 10^9); at page
    # 64: 12,767 // 64 = 199 pages = 12,736 tokens; at page 1 it was 12,767.
    spec = load_spec("deepseek-v3.2")
    inputs = sglang(tp=8, engine_version="0.5.9")
    pool = sglang_pool(spec, inputs, stage_caches(spec, inputs))
    assert isinstance(pool, SglangPool) and (pool.page_size, pool.cell) == (64, 78_324)
    assert pool.size(10**9).max_total_num_tokens == 12_736
    # A 4,000-token request holds ceil(4000 / 64) = 63 pages = 4,032 tokens: the inverse needs
    # 2 x 4,032 x 78,324 B for two of them.
    assert pool.rest_needed(2, 4000) == 2 * 4032 * 78_324


def test_estimate_on_an_h200() -> None:
    # DeepSeek-V3.2, TP 8 on H200s: kvplan's page-1 pool was 600,474 tokens (0.5.9) and 581,601
    # (0.5.23); SGLang floors them to 64: 9,382 pages = 600,448 and 9,087 pages = 581,568.
    for version, tokens in (("0.5.9", 600_448), ("0.5.23", 581_568)):
        result = _run("estimate", V32, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                      "--engine-version", version, "-f", "json")
        assert result.exit_code == 0, result.output
        answer = json.loads(result.stdout)
        assert (answer["block_size"], answer["token_capacity"]) == (64, tokens)
        assert answer["num_blocks"] == tokens // 64
    line = _one_line_refusal(_run("estimate", V32, "--engine", "sglang", "--gpu", "MI300X",
                                  "--tp", "8", "--engine-version", "0.5.14"))
    assert "give --block-size 64 or 1" in line
    assert Engine.sglang.rules.default_block_size(sglang()) == 1  # the default stays page 1


# Every command pages a sequence as SGLang does (EngineRules.sequence_block_size): DeepSeek-V3.2
# in bf16 caches 61 x ((512 + 64) x 2 + 132) = 78,324 B/token (the MLA latent 1,152 B and the
# indexer's 128 fp8 keys + a 4 B scale per layer). 8,001 tokens take ceil(8001 / 64) = 126 pages
# of 64 tokens (125 x 64 = 8,000) = 8,064 tokens, where page 1 held 8,001.
PAGE_BYTES = 64 * 78_324  # 5,012,736 B: one 64-token page, all 61 layers
PER_SEQUENCE = 126 * PAGE_BYTES  # 631,604,736 B (page 1: 8,001 x 78,324 = 626,670,324)


def _json(*args: str) -> dict | list:
    result = _run(*args, "-f", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_estimate_pages_a_sequence_by_64() -> None:
    answer = _json("estimate", V32, "--engine", "sglang", "--kv-dtype", "bf16", "--tp", "8",
                   "--context", "8001")
    assert isinstance(answer, dict)
    assert (answer["block_size"], answer["requested_block_size"]) == (64, 1)
    assert answer["bytes_per_token"] == 78_324
    assert answer["bytes_per_block_per_layer"] == 64 * 1_152  # 73,728: the latent's row
    assert answer["bytes_per_block"] == PAGE_BYTES
    # 61 latent and 61 indexer layer caches, 126 pages each: 122 x 126 = 15,372 layer-blocks.
    assert answer["blocks_per_sequence"] == 15_372
    assert answer["bytes_per_sequence"] == answer["bytes_per_batch"] == PER_SEQUENCE
    assert answer["bytes_per_sequence_unpaged"] == 8001 * 78_324
    # With a device: the same figures as the pool's (126 pages of 5,012,736 B).
    answer = _json("estimate", V32, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                   "--context", "8001")
    assert isinstance(answer, dict)
    assert (answer["block_size"], answer["blocks_per_request"]) == (64, 126)
    assert answer["stages"][0]["page_bytes"] == answer["bytes_per_block"] == PAGE_BYTES
    assert answer["bytes_per_sequence"] == 126 * answer["stages"][0]["page_bytes"]


def test_estimate_keeps_the_page_given_where_sglang_does() -> None:
    # 0.5.8-0.5.11 on ROCm: page_size 1 (0.5.9 server_args.py `if is_hip()`): 8,001 x 78,324.
    answer = _json("estimate", V32, "--engine", "sglang", "--engine-version", "0.5.9",
                   "--platform", "rocm", "--kv-dtype", "bf16", "--tp", "8", "--context", "8001")
    assert isinstance(answer, dict)
    assert (answer["block_size"], answer["bytes_per_block"]) == (1, 78_324)
    assert answer["bytes_per_sequence"] == 8001 * 78_324
    # ROCm from 0.5.12 without --block-size: refused in one line, as the pool is.
    line = _one_line_refusal(_run("estimate", V32, "--engine", "sglang", "--engine-version",
                                  "0.5.14", "--platform", "rocm", "--kv-dtype", "bf16"))
    assert "give --block-size 64 or 1" in line


def test_sweep_agrees_with_estimate() -> None:
    # 1,000 tokens: ceil(1000 / 64) = 16 pages = 80,203,776 B; 8,001: 126 pages.
    for gpu in ((), ("--gpu", "H200")):
        rows = _json("sweep", V32, "--engine", "sglang", "--kv-dtype", "bf16", "--tp", "8",
                     "-c", "1000,8001", "-n", "1", *gpu)
        assert isinstance(rows, list)
        assert [(r["block_size"], r["bytes_per_sequence"]) for r in rows] == [
            (64, 16 * PAGE_BYTES), (64, PER_SEQUENCE)]
        if gpu:
            assert [r["blocks_per_request"] for r in rows] == [16, 126]
