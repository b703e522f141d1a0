"""vLLM 0.12.0's DeepGEMM MoE rows and FLOPs (tests.benches.q235h200_63, issue 30)."""

from __future__ import annotations

import statistics

import pytest

from tests.benches import q235h200_63 as m

# Qwen3-235B-A22B on MoE TP 2: hidden 4,096, moe_intermediate 1,536 / 2 = 768 a rank, 94
# layers, 128 experts, top 8.
_QWEN_TP2 = m.MoeShape(hidden=4096, inter_rank=768, layers=94, experts=128, topk=8)


def test_deepgemm_rows_hand_worked() -> None:
    # compute_aligned_M: round_up(T x k + E x 127, 128).
    # T 4: 32 + 16,256 = 16,288 -> 16,384; T 16: 128 + 16,256 = 16,384 (already aligned);
    # T 48: 384 + 16,256 = 16,640 = 130 x 128 (aligned); T 0: 16,256 = 127 x 128.
    assert [m.deepgemm_rows(t, 8, 128) for t in (4, 16, 48, 0)] == [16384, 16384, 16640, 16256]
    # EP 2 (64 local experts): 16 x 8 + 64 x 127 = 128 + 8,128 = 8,256 -> 8,320.
    assert m.deepgemm_rows(16, 8, 64) == 8320
    # A layer's rows do not grow with the batch until T x k passes the alignment's slack.
    assert m.deepgemm_rows(1, 8, 128) == m.deepgemm_rows(16, 8, 128)


def test_deepgemm_flops_and_bytes_hand_worked() -> None:
    # FLOPs: 6 x 16,384 x 4,096 x 768 x 94 = 6 x 16,384 = 98,304; x 4,096 = 402,653,184;
    # x 768 = 309,237,645,312; x 94 = 29,068,338,659,328.
    assert m.deepgemm_flops(_QWEN_TP2, 16) == 29_068_338_659_328
    # Bytes: 16,384 x (13 x 768 + 3 x 4,096) x 94 = 16,384 x (9,984 + 12,288) = 16,384 x
    # 22,272 = 364,904,448; x 94 = 34,301,018,112.
    assert m.deepgemm_act_bytes(_QWEN_TP2, 16) == 34_301_018_112
    # Priced at 1,979e12 x 0.7 FLOP/s and 4.8e12 x 0.9 B/s: 29.0683e12 / 1.3853e15 =
    # 20.984 ms + 34.301e9 / 4.32e12 = 7.940 ms -> 28.92 ms.
    s = m.deepgemm_experts_s(_QWEN_TP2, 16, peak_fp8=1979e12, hbm=4.8e12, gemm_frac=0.7,
                             hbm_frac=0.9)
    assert s == pytest.approx(29_068_338_659_328 / (1979e12 * 0.7)
                              + 34_301_018_112 / (4.8e12 * 0.9))
    assert s * 1e3 == pytest.approx(28.92, abs=0.01)


def test_the_class_on_the_page() -> None:
    # The page's replayed rows of the class (38 vLLM 0.12.0, 24 SGLang 0.5.6.post2): every
    # vLLM one is 0.12.0, and its sensitivity moves the class's TPOT up: the DeepGEMM path's
    # experts cost more than kvplan's at every concurrency up to 16, where the shape table
    # (the default since moedefault63) prices a few rows an expert below the path; above it
    # (MoE TP 2 at 20, MoE TP 4 at 28-48) the table's price is the higher.
    vllm, sglang = m._rows("vllm"), m._rows("sglang")
    assert (len(vllm), len(sglang)) == (38, 24)
    assert {r.version for r in vllm} == {"0.12.0"}
    lines = m.lines()
    assert all(ln.shifted > ln.kvplan for ln in lines if ln.row.concurrency <= 16)
    assert statistics.median(ln.shifted / ln.measured for ln in lines) > statistics.median(
        ln.kvplan / ln.measured for ln in lines)
