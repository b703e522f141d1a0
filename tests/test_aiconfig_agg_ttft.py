"""The TTFT breakdown of aiconfigurator's aggregated vLLM rows (tests.benches.aiconfig_agg_ttft,
issue 30): its subset by the stated load rule, its buckets and medians worked by hand (the
replay itself is the bench's, tests/test_aiconfig_agg.py)."""

from __future__ import annotations

import collections

import pytest

from tests.benches import aiconfig_agg_runs
from tests.benches import aiconfig_agg_ttft as ttft
from tests.benches.disagg_rows import stated_concurrency


def test_subset_follows_its_load_rule() -> None:
    rows = ttft.studied()
    # Every row is a vLLM row of the bench's first cohort (aggmeas54's checkpoints); 304 of its
    # 540 (275 by the load cut, 29 more as the
    # cheapest row of each (model, release, GPU, concurrency capped at 64) stratum).
    assert all(r["backend"] == "vllm" and aiconfig_agg_runs.why_not(r) == "" for r in rows)
    assert len(rows) == 304
    assert sum(ttft.load(r) <= ttft.SUBSET_BOUND for r in rows) == 275
    # Every stratum of the bench's vLLM rows keeps a row.
    def stratum(r: dict[str, str]) -> tuple[str, str, str, int]:
        return (r["model_path"], r["backend_version"], r["system"],
                min(stated_concurrency(r) or 0, 64))
    bench = [r for r in aiconfig_agg_runs.rows()
             if r["backend"] == "vllm" and aiconfig_agg_runs.why_not(r) == ""
             and aiconfig_agg_runs.release(r) is not None
             and (r["model_path"], r["precision"]) not in aiconfig_agg_runs.COHORTS]
    assert {stratum(r) for r in bench} == {stratum(r) for r in rows}
    # The load: ROUNDS (3) users' requests x concurrency x OSL, 3 x 16 x 1,024 = 49,152.
    row = {**rows[0], "osl": "1024", "silicon_data_source": "silicon_concurrency=16"}
    assert ttft.load(row) == 49_152
    assert collections.Counter(r["model_path"] for r in rows)["openai/gpt-oss-120b"] > 0


@pytest.mark.parametrize(("conc", "bucket"), [(1, 4), (4, 4), (5, 8), (9, 16), (64, 64),
                                              (65, 128), (2048, 128)])
def test_conc_bucket(conc: int, bucket: int) -> None:
    assert ttft.conc_bucket(conc) == bucket


def test_summary_by_hand() -> None:
    def pair(measured: float, kvplan: float, frontend: float) -> ttft.Pair:
        return ttft.Pair(id="x", measured_ttft_ms=measured, measured_tpot_ms=10.0,
                         ttft_ms=kvplan, tpot_ms=11.0, frontend_ttft_ms=frontend,
                         frontend_tpot_ms=11.0)
    # Ratios 0.5 and 0.8 (median 0.65, |err| 0.5 and 0.2: 0.35), measured - kvplan 50 and 40
    # ms (45); --frontend 1.2 and 1.0 (1.1, |err| 0.2 and 0: 0.1), -20 and 0 ms (-10); TPOT
    # 11 / 10 = 1.1. A refused row (no kvplan TTFT) is left out.
    refused = ttft.Pair(id="y", measured_ttft_ms=1.0, measured_tpot_ms=1.0, ttft_ms=None,
                        tpot_ms=None, frontend_ttft_ms=None, frontend_tpot_ms=None)
    n, r, e, d, fr, fe, fd, t = ttft.summary([pair(100, 50, 120), pair(200, 160, 200), refused])
    assert n == 2
    assert (r, e, d, fr, fe, fd, t) == pytest.approx((0.65, 0.35, 45.0, 1.1, 0.1, -10.0, 1.1))
