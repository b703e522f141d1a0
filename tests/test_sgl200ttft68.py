"""The sgl200ttft68 forensic's pure parts (tests.benches.sgl200ttft68): the sets' medians and the
C 64 / C 4 quotient on rows worked by hand, and the split of the rows into shaped / held out."""

from __future__ import annotations

import pytest

from tests.benches import sgl200ttft68 as s


def _row(conc: int, isl: int, meas_ttft: float, fixed_ttft: float, client_ttft: float,
         meas_tpot: float, fixed_tpot: float, client_tpot: float) -> s.Row:
    row = {"id": f"x_{isl}x1024_c{conc}", "isl": str(isl), "osl": "1024",
           "silicon_data_source": f"silicon_concurrency={conc}", "silicon_ttft_ms": str(meas_ttft),
           "silicon_tpot_ms": str(meas_tpot)}
    return s.Row(row=row, fixed_ttft_ms=fixed_ttft, fixed_tpot_ms=fixed_tpot,
                 client_ttft_ms=client_ttft, client_tpot_ms=client_tpot, parts_ms={},
                 lone_ms=0.0, co_prompts=0.0)


# ISL 1,024 at C 4: measured TTFT 200 ms, fixed 300 (+50 %), client 150 (-25 %); TPOT 10 ms,
# fixed 11 (+10 %), client 12 (+20 %). At C 64: measured 400, fixed 1,600 (+300 %), client 360
# (-10 %); TPOT 20, fixed 19 (-5 %), client 26 (+30 %).
ROWS = [_row(4, 1024, 200.0, 300.0, 150.0, 10.0, 11.0, 12.0),
        _row(64, 1024, 400.0, 1600.0, 360.0, 20.0, 19.0, 26.0)]


def test_summary_by_hand() -> None:
    got = s.summary(ROWS)
    # Median of |+50 %|, |+300 %| = 175 %; of |-25 %|, |-10 %| = 17.5 %.
    assert got["ttft_fixed"] == pytest.approx(175.0)
    assert got["ttft_client"] == pytest.approx(17.5)
    # TPOT: |+10 %|, |-5 %| -> 7.5 %; |+20 %|, |+30 %| -> 25 %.
    assert got["tpot_fixed"] == pytest.approx(7.5)
    assert got["tpot_client"] == pytest.approx(25.0)


def test_slope_by_hand() -> None:
    # Fixed: ratio 1,600 / 400 = 4.0 at C 64 over 300 / 200 = 1.5 at C 4: 2.667. Client: 0.9
    # over 0.75 = 1.2. A set without both points gives none.
    assert s.slope(ROWS, "fixed")[("1024", "1024")] == pytest.approx(4.0 / 1.5)
    assert s.slope(ROWS, "client")[("1024", "1024")] == pytest.approx(0.9 / 0.75)
    assert s.slope(ROWS[:1], "fixed") == {}


def test_split_names_the_read_rows() -> None:
    deepseek = "deepseek-ai/DeepSeek-R1"
    for rid in sorted(s.READ_8K | s.sglh200_68.SHAPED):
        assert s.split_name({"id": rid, "model_path": deepseek}) == "DeepSeek H200 shaped"
    # The copies of sglh200_68's shaped rows stay in the held-out set the decision rule named.
    for rid in sorted(s.SHAPED_COPIES):
        assert s.split_name({"id": rid, "model_path": deepseek}) == "DeepSeek H200 held out"
    assert len(s.READ_8K) == 3 and len(s.SHAPED_COPIES) == 6


def test_read_rows_are_in_the_bench() -> None:
    # Every row named read (or a copy of one) is a row the aggregated replay takes, with the
    # shaped rows' point: ISL / OSL and C in its id, the same measured figures as the original.
    by_id = {r["id"]: r for r in s.sglh200_68.agg_rows()}
    assert s.READ_8K | s.SHAPED_COPIES <= by_id.keys()
    first = by_id["2026_03_25_deepseek_r1_h200_sxm_sglang_fp8_agg_8192x1024_c4_tp8_0_ep1_0_268"]
    for rid in s.READ_8K:
        assert float(by_id[rid]["silicon_ttft_ms"]) == pytest.approx(
            float(first["silicon_ttft_ms"]))
