"""tests/benches/dis3trt68.py (issue 29): the context-server reading's formulas by hand, its row
list against the frozen rows, and one row's measured rate and held prompts worked out from the
row's own measured numbers."""

from __future__ import annotations

import pytest

from tests.benches.dis3trt68 import (
    LOW_ROWS,
    Reading,
    capping_transfer_s,
    held_prompts_bound,
    pool_prompts,
    reading,
    serial_load,
)
from tests.benches.disagg_rows import prospective_rows, stated_concurrency


def test_serial_transfers_by_hand() -> None:
    # 8 prompts/s over 4 one-at-a-time ends, 50 ms a prompt: each end gets 2 prompts/s and is
    # busy 2 x 0.05 = 0.1 of the time; it saturates at a transfer of 4 / 8 = 0.5 s.
    assert serial_load(8.0, 0.05, 4) == pytest.approx(0.1)
    assert capping_transfer_s(8.0, 4) == pytest.approx(0.5)
    assert serial_load(8.0, capping_transfer_s(8.0, 4), 4) == pytest.approx(1.0)


def test_held_prompts_by_hand() -> None:
    # Little's law: 10 prompts/s each held at most 2 s is at most 20 prompts over 4 ranks: 5.
    assert held_prompts_bound(10.0, 2.0, 4) == pytest.approx(5.0)


def test_pool_prompts_by_hand() -> None:
    # 1,000,000 tokens at 0.9 scale to 1e6 x 0.3 / 0.9 = 333,333 tokens at 0.3; prompts of
    # 1,025 tokens (ISL 1,024 + the one token a context-only request asks for): 333,333 //
    # 1,025 = 325 (325 x 1,025 = 333,125).
    assert pool_prompts(1_000_000, 0.9, 0.3, 1025) == 325
    r = Reading(row_id="r", rate_rps=1.0, transfer_ms=1.0, send_load=0.0, recv_load=0.0,
                send_cap_x=1.0, recv_cap_x=1.0, held=5.0, pool=None)
    assert r.held_share is None


def test_low_rows_are_the_classes_rows() -> None:
    rows = {r["id"]: r for r in prospective_rows()}
    assert len(set(LOW_ROWS)) == len(LOW_ROWS) == 30
    for rid in LOW_ROWS:
        row = rows[rid]
        users = stated_concurrency(row)
        assert row["backend"] == "trtllm" and users is not None and users > 32


def test_one_row_by_hand() -> None:
    # dsr1_gb200_trtllm_fp4_disagg_1024x8192_c8192_cfg239 measured TTFT 35,515.67 ms and TPOT
    # 34.3687 ms (the frozen row's silicon_ttft_ms / silicon_tpot_ms): X = 8,192 / ((35,515.67
    # + 8,191 x 34.3687) / 1,000) = 8,192 / 317.03 s = 25.84 requests/s; its one context server
    # runs 4 attention-DP ranks, so each holds at most 25.84 x 35.516 / 4 = 229.4 prompts.
    rows = {r["id"]: r for r in prospective_rows()}
    r = reading(rows["dsr1_gb200_trtllm_fp4_disagg_1024x8192_c8192_cfg239"])
    assert r.rate_rps == pytest.approx(25.84, rel=1e-3)
    assert r.held == pytest.approx(229.4, rel=1e-3)
