"""The aggregated held-out misses' classification (tests.benches.aggmiss63, issue 30)."""

from __future__ import annotations

import re

import pytest

from tests.benches import aggmiss63 as m

_ROW_A = "2026_03_25_deepseek_r1_b200_sxm_sglang_fp4_agg_1024x1024_c128_tp4_0_ep4_0_291"
_ROW_B = "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c4_tp2_0_ep1_0_1305"


def test_direction_band_and_kind() -> None:
    # The page's inside band is [0.75, 1.33], both ends inside.
    assert [m.direction(x) for x in (0.7499, 0.75, 1.0, 1.33, 1.3301)] == \
        ["low", "in", "in", "in", "high"]
    assert [m.band(c) for c in (1, 4, 8, 16, 32, 64, 128)] == \
        ["<=4", "<=4", "8-16", "8-16", "32-64", "32-64", ">=128"]


_HOST = "held out, host of shaped disagg rows"
_HEAD = ("| row | layout and load | measured TTFT / TPOT ms | kvplan | TTFT ratio | TPOT ratio "
         "| split |")
_PAGE = f"""# x

## aiconfigurator's measured aggregated rows (held out)

{_HEAD}
|---|---|---|---|---:|---:|---|
| {_ROW_A} | sglang ... | 759.9 / 25.29 | 1,463.1 / 24.56 | 1.93 | 0.97 | {_HOST} |
| {_ROW_B} | vllm ... | 82.1 / 9.35 | 39.3 / 10.45 | 0.48 | 1.12 | held out |
| not_a_frozen_row | vllm ... | 1.0 / 1.00 | 1.0 / 1.00 | 1.00 | 1.00 | held out |

## The next section

| {_ROW_B} | vllm ... | 1.0 / 1.00 | 9.0 / 9.00 | 9.00 | 9.00 | held out |
"""


def test_page_rows_parse_the_section_only() -> None:
    rows = m.page_rows(_PAGE, m.frozen_rows())
    # The unknown id and the next section's line are not read.
    assert [r.id for r in rows] == [_ROW_A, _ROW_B]
    a, b = rows
    # Ratios from the printed ms: 1,463.1 / 759.9 = 1.92538..., 24.56 / 25.29 = 0.97113...;
    # 39.3 / 82.1 = 0.47868..., 10.45 / 9.35 = 1.11765...
    assert a.ttft_ratio == pytest.approx(1463.1 / 759.9)
    assert a.tpot_ratio == pytest.approx(24.56 / 25.29)
    assert (a.ttft, a.tpot, a.kind) == ("high", "in", "TTFT high")
    assert (b.ttft, b.tpot, b.kind) == ("low", "in", "TTFT low")
    assert (a.backend, a.model, a.precision, a.system, a.isl, a.concurrency) == \
        ("sglang", "DeepSeek-R1", "fp4", "b200_sxm", 1024, 128)
    assert (b.backend, b.version, b.model, b.concurrency) == ("vllm", "0.19.0", "MiniMax-M2.5", 4)
    assert b.split == m.HELD_OUT and a.split != m.HELD_OUT
    lines = m.classify(rows, lambda r: (r.backend,))
    assert [(c.key, c.n, c.misses, c.ttft_low, c.ttft_high) for c in lines] == \
        [(("sglang",), 1, 1, 0, 1), (("vllm",), 1, 1, 1, 0)]


def test_the_page_held_out_summary_is_reproduced() -> None:
    # The page's own summary line for the held-out split, against the rows parsed here: the
    # same count, TTFT / TPOT / both inside, and median |error| (to the page's 0.1 %).
    text = m.PAGE.read_text()
    line = next(x for x in text.splitlines() if x.startswith("| split: held out |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    n, ttft_in, tpot_in, both_in = (int(cells[i].replace(",", "")) for i in (2, 3, 4, 5))
    ttft_err, tpot_err = (float(re.sub("%", "", cells[i])) for i in (6, 7))
    held = [r for r in m.page_rows(text, m.frozen_rows()) if r.split == m.HELD_OUT]
    assert len(held) == n
    # The ratios parsed here come from the page's rounded ms figures (0.1 ms TTFT, 0.01 ms
    # TPOT), so a row within rounding of a band edge may fall either side: the page's count
    # lies between the rows surely inside and those plus the ones at an edge.
    def near_edge(ratio: float) -> bool:
        return min(abs(ratio - m.LOW), abs(ratio - m.HIGH)) < 2e-3

    def between(inside: list[bool], edge: list[bool], count: int) -> bool:
        sure = sum(i and not e for i, e in zip(inside, edge, strict=True))
        return sure <= count <= sure + sum(edge)

    t_in, t_edge = [r.ttft == "in" for r in held], [near_edge(r.ttft_ratio) for r in held]
    p_in, p_edge = [r.tpot == "in" for r in held], [near_edge(r.tpot_ratio) for r in held]
    assert between(t_in, t_edge, ttft_in)
    assert between(p_in, p_edge, tpot_in)
    assert between([not r.miss for r in held], [a or b for a, b in zip(t_edge, p_edge,
                                                                          strict=True)], both_in)
    # The medians from the same rounded figures: within one step of the page's 0.1 % (a
    # median of ratios of rounded ms can land either side of a rounding edge: 13.44 -> 13.5).
    assert 100 * m.median_error([r.ttft_ratio for r in held]) == pytest.approx(ttft_err, abs=0.1)
    assert 100 * m.median_error([r.tpot_ratio for r in held]) == pytest.approx(tpot_err, abs=0.1)
    kinds = m.classify(held, lambda r: (r.kind,))
    assert sum(c.n for c in kinds) == n
