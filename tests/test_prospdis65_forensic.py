"""raypd66's reading of prospdis65's open misses (tests/benches/prospdis65_forensic.py): Little's
law over the frozen means and the concurrency-4 tail, worked by hand from the data file."""

from __future__ import annotations

import pytest

from tests.benches import prospdis65_forensic as forensic
from tests.benches.prospdis65_runs import load


def _point(run_tail: str, concurrency: int) -> tuple[dict, dict]:  # type: ignore[type-arg]
    run = next(r for r in load()["runs"] if r["id"].endswith(run_tail))
    return run, next(p for p in run["points"] if p["concurrency"] == concurrency)


def test_little_by_hand() -> None:
    # p1xtp2-d1xtp2 at 48 users: TTFT 904.8 ms, TPOT 22.26 ms, 250 tokens: a request's decode
    # 249 x 22.26 = 5,542.74 ms, its cycle 6,447.54 ms; 48 / 6.44754 s = 7.4447 requests/s,
    # in decode 7.4447 x 5.54274 = 41.264 requests.
    rate, batch = forensic.little(904.8, 22.26, 48, 250)
    assert rate == pytest.approx(7.4447, abs=1e-4)
    assert batch == pytest.approx(41.264, abs=1e-3)
    # Two decode workers share it: 20.632 each.
    assert forensic.little(904.8, 22.26, 48, 250, 2)[1] == pytest.approx(20.632, abs=1e-3)


def test_the_tp2_decode_step_is_bimodal_at_one_batch() -> None:
    # p2xtp2-d1xtp2 at 48: TTFT 504.78, TPOT 11.55: decode 249 x 11.55 = 2,875.95 ms, cycle
    # 3,380.73 ms, 14.198 requests/s, 40.833 in decode: the same batch as p1xtp2-d1xtp2's
    # 41.264 (1 %) and the same arrivals a step (14.198 x 11.55 ms = 0.164; 7.4447 x 22.26 ms
    # = 0.166), at half its TPOT (11.55 / 22.26 = 0.519).
    runs = {}
    for tail in ("p1xtp2-d1xtp2-5000x250", "p2xtp2-d1xtp2-5000x250"):
        run, p = _point(tail, 48)
        rate, batch = forensic.little(p["measured_ttft_ms"], p["measured_tpot_ms"], 48, 250)
        runs[tail] = (batch, rate * p["measured_tpot_ms"] / 1e3, p["measured_tpot_ms"])
    (b1, a1, t1), (b2, a2, t2) = runs.values()
    assert b2 == pytest.approx(40.833, abs=1e-3) and abs(b1 / b2 - 1) < 0.02
    assert a1 == pytest.approx(0.166, abs=1e-3) and a2 == pytest.approx(0.164, abs=1e-3)
    assert t2 / t1 == pytest.approx(0.519, abs=1e-3)


def test_the_concurrency_4_tail_by_hand() -> None:
    # p1xtp2-d3xtp2 at 4: mean 745.48, median 263.48 ms over 20 prompts: (745.48 - 263.48) x 20
    # = 9,640 ms above the median; 3 pairs, 2 left cold by the test prompt. p1xtp2-d1xtp2:
    # (312.59 - 254.51) x 20 = 1,161.6 ms, 1 pair.
    run, p = _point("p1xtp2-d3xtp2-5000x250", 4)
    assert forensic.tail_excess_s(p) == pytest.approx(9.64)
    assert forensic.pairs(run) == 3
    run, p = _point("h100-pack-p1xtp2-d1xtp2-5000x250", 4)
    assert forensic.tail_excess_s(p) == pytest.approx(1.1616)
    assert forensic.pairs(run) == 1
    # Every run of two or three pairs but the mixed-TP one carries >= 5.9 s, every one-pair
    # run <= 1.2 s (the frozen data, as the runner's docstring reads it).
    for run in load()["runs"]:
        p4 = next((q for q in run["points"] if q["concurrency"] == 4), None)
        if p4 is None or "d1xtp4" in run["id"] and "p2xtp2" in run["id"]:
            continue
        excess = forensic.tail_excess_s(p4)
        assert (excess >= 5.9) if forensic.pairs(run) > 1 else (excess <= 1.2), run["id"]


def test_the_prefill_capacity_bound_by_hand() -> None:
    # p1xtp2-d3xtp2 at 48: TTFT 1,502.56, TPOT 10.64 ms: cycle 1.50256 + 249 x 0.01064 = 4.15192 s,
    # 48 / 4.15196 = 11.561 requests/s through its one prefill worker (its three decode workers
    # at 10.2 requests each, not binding): the worker's capacity is at least that.
    run, p = _point("p1xtp2-d3xtp2-5000x250", 48)
    rate, batch = forensic.little(p["measured_ttft_ms"], p["measured_tpot_ms"], 48, 250, 3)
    assert rate == pytest.approx(11.561, abs=1e-3)
    assert batch == pytest.approx(10.21, abs=1e-2)
