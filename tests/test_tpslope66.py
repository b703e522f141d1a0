"""tpslope66's bench (tests/benches/tpslope66.py): its pool and the step split it reports."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.benches import tpslope66


def test_pool_is_aggfaith64s_hopper_moe_group_at_every_load() -> None:
    # 192 held-out InferenceX rows: gpt-oss-120b MXFP4 (vLLM 0.18.0, H200 TP 1-8, H100 TP 2-8)
    # and MiniMax-M2.5 FP8 (H200 0.16.0 TP 4 / 0.18.0 TP 8, H100 0.18.0 TP 4), 4 - 128 users.
    rows = tpslope66.pool()
    assert len(rows) == 192
    by_model = Counter(r["model_path"] for r in rows)
    assert by_model == {"openai/gpt-oss-120b": 108, "MiniMaxAI/MiniMax-M2.5": 84}
    assert {r["system"] for r in rows} == {"h100_sxm", "h200_sxm"}


def test_step_increase_splits_by_tp() -> None:
    # gpt-oss-120b H200 TP 8 (vLLM 0.18.0), 7,373 minus 922 prompt tokens: with the scripts'
    # Marlin kernel the experts op grows by Marlin's padded shapes over Triton's pricing, the
    # all-reduce (a whole-row op) is the same either way and is not in the split sum.
    key = ("h200_sxm", "openai/gpt-oss-120b", "0.18.0", 8)
    tri, mar = (tpslope66.step_increase(key, m) for m in (False, True))
    assert tri["tp_all_reduce"] == pytest.approx(mar["tp_all_reduce"])
    assert mar["experts"] > tri["experts"]
    split, whole = tpslope66._split(mar)
    assert split == pytest.approx(sum(mar[k] for k in tpslope66.SPLIT if k in mar))
    assert whole == pytest.approx(sum(mar.values()) - split)
    assert whole >= mar["tp_all_reduce"] > 0
