"""wave63's forensic (tests/benches/wave63.py): its formulas against hand-worked numbers, its
per-request data against the frozen set, and the mechanism it reports."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from kvplan.engines.vllm.frontend import ApiServerCost
from tests.benches import wave63


def test_prefill_share_by_hand() -> None:
    # TTFT 1,000 ms, TPOT 30 ms, decode step 10 ms, 101 tokens out: the decode stalled
    # (30 - 10) x 100 = 2,000 ms on other prompts, so 1,000 / (1,000 + 2,000) = 1/3.
    assert wave63.prefill_share(1000.0, 30.0, 10.0, 101) == pytest.approx(1 / 3)


def test_bunch_by_hand() -> None:
    # A share of 1/3 at 25 users: (B + 1) / 2 = 25 / 3, B = 50 / 3 - 1 = 15.667.
    assert wave63.bunch(1 / 3, 25) == pytest.approx(50 / 3 - 1)


def test_ahead_at_send_by_hand() -> None:
    # Sent at 0, 0, 10, 20 ms with TTFTs 5, 30, 15, 1 (first tokens at 5, 30, 25, 21); the
    # first two skipped. Sent at 10: request 1 (first token at 30) is ahead, request 0 (5) is
    # not: 1. Sent at 20: requests 1 (30) and 2 (25): 2. Mean 1.5.
    assert wave63.ahead_at_send((0.0, 0.0, 10.0, 20.0), (5.0, 30.0, 15.0, 1.0),
                                skip=2) == pytest.approx(1.5)


def test_percentile_is_numpys_linear() -> None:
    # 4 values: position 3 x 0.99 = 2.97 between the 3rd (3) and 4th (4): 3.97.
    assert wave63.percentile([4.0, 1.0, 3.0, 2.0], 99) == pytest.approx(3.97)
    assert wave63.percentile([4.0, 1.0, 3.0, 2.0], 50) == pytest.approx(2.5)


def test_requests_match_the_frozen_runs() -> None:
    """The per-request file is the runs' own: its means and p99 are the printed figures."""
    doc = wave63._requests_doc()
    runs = wave63.runs()
    assert len(runs) == 24 and set(doc["runs"]) == {r["id"] for r in runs}
    for run in runs:
        mine = doc["runs"][run["id"]]
        n, out = run["workload"]["num_prompts"], run["workload"]["output_len"]
        assert len(mine["ttft_ms"]) == len(mine["start_ms"]) == len(mine["decode_ms"]) == n
        assert mine["output_lens"] == [out]  # --ignore-eos: every request at its length
        assert statistics.mean(mine["ttft_ms"]) == pytest.approx(
            run["measured"]["mean_ttft_ms"], abs=0.01)
        assert statistics.median(mine["ttft_ms"]) == pytest.approx(
            run["measured"]["median_ttft_ms"], abs=0.01)
        assert statistics.mean(d / (out - 1) for d in mine["decode_ms"]) == pytest.approx(
            run["measured"]["mean_tpot_ms"], abs=0.01)
        assert wave63.percentile(mine["ttft_ms"], 99) == pytest.approx(
            mine["p99_ttft_ms"], abs=0.01)


def test_a_send_to_engine_lag_queues_replacements_together() -> None:
    """The mechanism of the FINDING: with replacements reaching the engine 50 ms after they
    are sent, more prompts wait ahead of each at send and a larger share of a turn's prompt
    work falls before the first token, for the same turn."""
    run = next(r for r in wave63.runs() if r["id"] == wave63.LAG_RUNS[3])
    run = {**run, "workload": {**run["workload"], "num_prompts": 200}}
    base = wave63._setup(run, frontend=False)
    lag = ApiServerCost(s_per_request=0.0, s_per_prompt_token=0.0, latency_s=0.05,
                        source="test")
    late = replace(base, scheduler=replace(base.scheduler, api_server=lag))
    c, out = run["workload"]["max_concurrency"], run["workload"]["output_len"]
    now, then = wave63.replay(run, base), wave63.replay(run, late)
    assert then.ahead(c) > now.ahead(c) + 2
    assert then.share(out) > now.share(out) + 0.1
    assert then.e2e_ms == pytest.approx(now.e2e_ms, rel=0.1)
