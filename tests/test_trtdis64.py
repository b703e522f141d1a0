"""trtdis64: the recipes' KV-cache dtype (disagg_rows `_trt_recipe_kv`) and the 3j forensic's
Little's-law split (tests/benches/trtdis64.py), on numbers worked out by hand."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.benches import disagg_rows, srt_slurm_recipes
from tests.benches.trtdis64 import (
    PageRow,
    classes,
    decode_ranks,
    little_split,
    page_rows,
    seat_wait_ms,
)


def test_every_recipe_states_fp8_kv_on_both_roles() -> None:
    # Copied from each version's YAML (trtllm_config.<role>.kv_cache_config.dtype) at its commit.
    found = srt_slurm_recipes.recipes()
    assert len(found) == 141
    assert {(r.prefill.kv_cache_dtype, r.decode.kv_cache_dtype) for r in found} == {("fp8", "fp8")}
    raw = json.loads(srt_slurm_recipes.DATA.read_text())
    assert all(r[role]["kv_cache_dtype"] == "fp8" for r in raw["recipes"]
               for role in ("prefill", "decode"))


def _row(rid: str) -> dict[str, str]:
    return next(r for r in disagg_rows.prospective_rows() if r["id"] == rid)


def test_recipe_kv_dtype_doubles_a_bf16_pool() -> None:
    # gb200 fp8 cfg435 (DeepSeek-R1 FP8, 2 generation workers DP 16 EP 16, recipe batch 256 a
    # rank): MODELS keeps the checkpoint's bf16 KV (MLA: 61 layers x 576 elements x 2 B =
    # 70,272 B a token); the recipe's fp8 holds 35,136 B, so the same memory holds twice the
    # tokens and the pool's requests of I + O (1,024 + 8,192) a rank double (floor of the
    # doubled fraction): 161 -> 322 or 323. The seats then bind at the recipe's 256, not the pool.
    row = _row("dsr1_gb200_trtllm_fp8_disagg_1024x8192_c8192_cfg435")
    trt = disagg_rows.trt_context_recipe(row)
    assert trt is not None
    key = (trt.path, trt.commit)
    # At kvplan's 0.9 on both (trt_fraction False: the recipe's decode 0.8 since trtctx68 sizes
    # a smaller pool; the doubling is the same).
    bf16 = disagg_rows._setup(disagg_rows._setup_key(row), trt_context=key, trt_kv=False,
                              trt_fraction=False)
    fp8 = disagg_rows._setup(disagg_rows._setup_key(row), trt_context=key, trt_fraction=False)
    assert (bf16.req.kv_dtype, fp8.req.kv_dtype) == ("bf16", "fp8")
    per_rank = [st.decode.requests // st.req.decode.replicas for st in (bf16, fp8)]
    assert per_rank[0] == 161
    assert per_rank[1] in (322, 323)
    assert disagg_rows.decode_max_seqs(row, fp8) == 256


def test_recipe_kv_leaves_auto_and_same_dtype() -> None:
    row = _row("dsr1_gb200_trtllm_fp8_disagg_1024x8192_c8192_cfg435")
    trt = disagg_rows.trt_context_recipe(row)
    assert trt is not None
    req = disagg_rows._request(row, 8192)
    assert req.kv_dtype == "bf16"
    assert disagg_rows._trt_recipe_kv(req, replace(trt.decode, kv_cache_dtype="auto")) is req
    assert disagg_rows._trt_recipe_kv(req, replace(trt.decode, kv_cache_dtype=None)) is req
    assert disagg_rows._trt_recipe_kv(req, trt.decode).kv_dtype == "fp8"


def test_little_split_by_hand() -> None:
    # 100 users, TTFT 250 ms, TPOT 10 ms, O 101: a request is in flight 0.25 + 100 x 0.01 =
    # 1.25 s, so 80 requests / s; 80 x 1.0 s = 80 decoding over 4 ranks = 20 a rank. With 80
    # decoding seats the wait is 100 x 10 ms x (100 / 80 - 1) = 250 ms: the same TTFT back.
    rate, per_rank = little_split(100, 250.0, 10.0, 101, 4)
    assert rate == pytest.approx(80.0)
    assert per_rank == pytest.approx(20.0)
    assert seat_wait_ms(100, 80, 101, 10.0) == pytest.approx(250.0)


def test_decode_ranks_and_classes_by_hand() -> None:
    assert decode_ranks("1P DP4 EP4 : 5D TP8 EP8") == 5
    assert decode_ranks("1P DP4 EP4 : 2D DP8 EP8") == 16

    def r(ttft: float, users: int) -> PageRow:
        return PageRow(id="dsr1_b200_trtllm_fp8_x", layout="1P TP8 : 1D TP8", isl=1024,
                       osl=1024, users=users, measured_ttft=100.0, measured_tpot=10.0,
                       ttft=ttft, tpot=10.0)
    # Ratios 0.5 (low), 1.0 (in), 2.0 (high) at 8 users; 0.7 (low) at 2,000: medians 1.0, 0.7.
    got = classes([r(50, 8), r(100, 8), r(200, 8), r(70, 2000)], lambda x: x.users > 1024)
    assert got == [(False, 3, {"low": 1, "in": 1, "high": 1}, 1.0),
                   (True, 1, {"low": 1, "in": 0, "high": 0}, pytest.approx(0.7))]


def test_page_rows_parse_a_table_line() -> None:
    text = ("### 3j. x\n| dsr1_b200_trtllm_fp8_disagg_1024x1024_c4096_cfg549 | 1P DP8 EP8 : 1D DP8 "
            "EP8, 1024/1024, 4096 conc. | 4,268.3 / 74.25 | 6,142.0 / 49.95 | 1.44 / 0.67 | out |"
            "\n### 3m. y\n")
    (row,) = page_rows(text)
    assert (row.users, row.isl, row.osl, row.precision, row.gpu) == (4096, 1024, 1024, "fp8",
                                                                    "b200")
    assert row.ttft_ratio == pytest.approx(6142.0 / 4268.3)
    assert decode_ranks(row.layout) == 8
