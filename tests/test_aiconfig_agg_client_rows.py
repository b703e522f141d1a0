"""clientsec66: the section of examples/simulate-bench.md that replays a pre-chosen subset of the
aggregated InferenceX rows under the client's workload (tests.benches.aiconfig_agg_client_rows):
its selection is the stated rule, its replay leaves CLIENT_WORKLOAD as it found it, and its
summary's figures by hand."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import pytest

from tests.benches import aggwork64_eval
from tests.benches import aiconfig_agg_client_rows as sec
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.disagg_rows import PREFIX, Replay


def test_selection_is_the_first_half_of_aggwork64s_shuffle() -> None:
    rows = sec.selection()
    assert sec.ROWS == 60 and aggwork64_eval.N == 120
    assert len(rows) == 60
    ids = [r["id"] for r in rows]
    assert ids == sorted(ids)  # shown in file order
    assert set(ids) == {r["id"] for r in aggwork64_eval.order()[:60]}
    # The rule pinned (aggwork64's subset, its seed-64 shuffle): the shuffle's first two rows
    # and the selection's first two in file order, as committed before the section first ran.
    assert [r["id"] for r in aggwork64_eval.order()[:2]] == [
        "qwen3_5_b200_sglang_fp4_agg_1024x1024_c32_cfg708",
        "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_8192x1024_c128_tp2_0_ep1_0_85"]
    assert ids[:2] == [
        "2026_03_25_deepseek_r1_b200_sxm_sglang_fp8_agg_1024x1024_c64_tp8_0_ep1_0_288",
        "2026_03_25_deepseek_r1_b200_sxm_sglang_fp8_agg_8192x1024_c8_tp4_0_ep1_0_277"]
    # Every row was a held-out InferenceX row when drawn (none that SHAPED_BY named then); 8
    # Hopper gpt-oss rows are named shaped since (marlinrow66: gptosshopper62's and tpslope66's
    # MXFP4 rules were written after they were read), and one SGLang B200 row (288: sgldec67's
    # shared-expert stream rule was read on it); the page's split column says so.
    before = agg.shaped_rows(without=agg.NAMED_AFTER_AGGWORK64)
    assert not any(PREFIX + i in before for i in ids)
    assert sum(PREFIX + i in agg.shaped_rows() for i in ids) == 9


def _replay(row: dict[str, str], ttft: float = 50.0) -> Replay:
    return Replay(id=PREFIX + row["id"], label="", measured_ttft_ms=100.0,
                  measured_tpot_ms=10.0, concurrency=1, input_len=1, output_len=1,
                  ttft_ms=ttft, tpot_ms=10.0)


def test_client_workload_is_set_for_the_section_and_restored(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def fake_replay(row: dict[str, str]) -> Replay:
        seen.append(agg.CLIENT_WORKLOAD)
        if len(seen) == 2:
            raise RuntimeError("a replay that fails")
        return _replay(row)

    monkeypatch.setattr(agg, "replay", fake_replay)
    assert agg.CLIENT_WORKLOAD is False  # the page's replay (fixed lengths)
    rows = sec.selection()[:3]
    fixed = {PREFIX + r["id"]: _replay(r, 120.0) for r in rows}
    got = sec.pair(rows[:1], map, fixed)  # in this process: the flag is this module's global
    assert seen == [True] and agg.CLIENT_WORKLOAD is False
    assert [(f.ttft_ms, c.ttft_ms) for f, c in got] == [(120.0, 50.0)]
    with pytest.raises(RuntimeError):
        sec.pair(rows[1:3], map, fixed)
    assert seen == [True, True] and agg.CLIENT_WORKLOAD is False  # restored on an error too


def test_pair_keeps_the_rows_order() -> None:
    rows = sec.selection()[:3]
    fixed = {PREFIX + r["id"]: _replay(r, 120.0) for r in rows}

    def backwards(fn: Callable[[dict[str, str]], Replay], part: Iterable[dict[str, str]]
                  ) -> Iterator[Replay]:
        return iter([_replay(r, float(i)) for i, r in enumerate(part)])

    got = sec.pair(rows, backwards, fixed)
    assert [f.id for f, _ in got] == [PREFIX + r["id"] for r in rows]
    assert [c.ttft_ms for _, c in got] == [0.0, 1.0, 2.0]


def _r(ttft: float, tpot: float) -> Replay:
    return Replay(id="x", label="", measured_ttft_ms=100.0, measured_tpot_ms=10.0,
                  concurrency=1, input_len=1, output_len=1, ttft_ms=ttft, tpot_ms=tpot)


def test_stats_by_hand() -> None:
    # TTFT ratios 0.5, 0.8, 1.4 (measured 100 ms); TPOT ratios 1.1, 0.7, 1.0 (measured 10 ms).
    # |TTFT err| 0.5, 0.2, 0.4 -> median 0.4; |TPOT err| 0.1, 0.3, 0.0 -> median 0.1; median
    # TTFT ratio 0.8, TPOT ratio 1.0; both inside [0.75, 1.33]: only the second? Its TPOT 0.7
    # is out; the first's TTFT 0.5 out; the third's TTFT 1.4 out: 0. A row not replayed
    # (ttft None) is left out of every figure.
    part = [_r(50.0, 11.0), _r(80.0, 7.0), _r(140.0, 10.0),
            Replay(id="y", label="", measured_ttft_ms=1.0, measured_tpot_ms=1.0,
                   concurrency=1, input_len=1, output_len=1, why_not="refused")]
    n, ttft, tpot, ratio, tpot_ratio, both = sec.stats(part) or (0, 0, 0, 0, 0, -1)
    assert (n, both) == (3, 0)
    assert (ttft, tpot, ratio, tpot_ratio) == pytest.approx((0.4, 0.1, 0.8, 1.0))
    # One inside: TTFT 0.9, TPOT 1.2 -> both in the band.
    assert (sec.stats([_r(90.0, 12.0)]) or ())[5] == 1
    assert sec.stats(part[3:]) is None
