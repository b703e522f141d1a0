"""The misses' classifier of tests/benches/disagg_miss63.py (disagg63), on rows made by hand."""

from __future__ import annotations

from tests.benches.disagg_miss63 import KEYS, Row, band, classes, direction
from tests.benches.disagg_rows import Replay


def _row(ttft: float | None, tpot: float, *, engine: str = "sglang", users: int = 8) -> Row:
    rep = Replay(id="r", label="", measured_ttft_ms=100.0, measured_tpot_ms=10.0,
                 concurrency=users, input_len=1024, output_len=1024, ttft_ms=ttft, tpot_ms=tpot)
    return Row(rep=rep, engine=engine, gpu="b200", precision="fp8", prefill_dp=False)


def test_direction_and_band_by_hand() -> None:
    assert [direction(x) for x in (0.74, 0.75, 1.33, 1.34, None)] == [
        "low", "in", "in", "high", "high"]  # None: prefill saturated, kvplan's TTFT unbounded
    assert [band(u) for u in (16, 17, 128, 1024, 1025)] == [
        "<=16", "17-128", "17-128", "129-1024", ">1024"]


def test_classes_by_hand() -> None:
    # Measured 100 ms / 10 ms each. kvplan 50 / 10 and 40 / 10: TTFT low (0.50, 0.40), TPOT in;
    # 100 / 20: TTFT in, TPOT high (2.0); 90 / 10: inside both (not a miss); TTFT saturated
    # with TPOT 5: TTFT high, TPOT low (0.5), no TTFT ratio. Largest first: (low, in) 2 rows,
    # median TTFT 0.45, TPOT 1.0; then the two single rows by name.
    rows = [_row(50, 10), _row(40, 10), _row(100, 20), _row(90, 10), _row(None, 5)]
    got = classes(rows, KEYS["TTFT x TPOT"])
    assert got[0] == (("low", "in"), 2, 0.45, 1.0)
    assert sorted(got[1:], key=str) == sorted([
        (("in", "high"), 1, 1.0, 2.0), (("high", "low"), 1, None, 0.5)], key=str)
    by_users = classes([_row(50, 10, users=4), _row(50, 10, users=400)],
                       KEYS["engine x users x TTFT"])
    assert {k for k, *_ in by_users} == {("sglang", "<=16", "low"), ("sglang", "129-1024", "low")}
