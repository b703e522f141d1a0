"""The section-3 miss table of tests/benches/disagg_miss67.py (dis3j67): its sides, directions and
groups on rows made by hand, its fields from the frozen rows, and its counts against the counts
examples/disagg-bench.md prints for the same replayed rows (read from the page's own tables: no
replay here)."""

from __future__ import annotations

import re

from tests.benches.disagg_miss67 import MissRow, groups, lens, lines, section_of, table
from tests.benches.disagg_rows import (
    BACKEND_COHORTS,
    FIRST_COHORT,
    PREFIX,
    ROOT,
    Replay,
)


def _miss(ttft: float | None, tpot: float, *, engine: str = "sglang", gpu: str = "b200"
          ) -> MissRow:
    return MissRow(section="3a", row_id="r", engine=engine, release="x", gpu=gpu, model="m",
                   precision="fp8", isl=1024, osl=1024, users=8, connector="c", ttft_ratio=ttft,
                   tpot_ratio=tpot)


def test_side_and_direction_by_hand() -> None:
    # The band is [0.75, 1.33] on each ratio; a saturated TTFT (None) counts high.
    assert (_miss(0.75, 1.33).side, _miss(0.75, 1.33).way) == ("", "")
    assert (_miss(0.74, 1.0).side, _miss(0.74, 1.0).way) == ("TTFT", "low")
    assert (_miss(1.0, 1.34).side, _miss(1.0, 1.34).way) == ("TPOT", "high")
    assert (_miss(None, 0.5).side, _miss(None, 0.5).way) == ("both", "TTFT high / TPOT low")


def test_groups_by_hand() -> None:
    # Three SGLang B200 TTFT-low rows (0.5, 0.4, 0.6: median 0.5), one SGLang H200 TTFT-low
    # row, one TensorRT-LLM B200 TPOT-high row, one inside: by GPU the 3-row group first, the
    # two single rows by key; without the GPU the four SGLang rows join (median 0.5 of
    # 0.4, 0.5, 0.6, 0.7 = 0.55). The row inside both is in no group.
    rows = [_miss(0.5, 1.0), _miss(0.4, 1.1), _miss(0.6, 0.9), _miss(0.7, 1.0, gpu="h200"),
            _miss(1.0, 1.5, engine="trtllm"), _miss(1.0, 1.0)]
    got = groups(rows)
    assert [(g.key, len(g.rows)) for g in got] == [
        (("sglang", "b200", "TTFT", "low"), 3), (("sglang", "h200", "TTFT", "low"), 1),
        (("trtllm", "b200", "TPOT", "high"), 1)]
    assert got[0].median_ttft == 0.5 and got[0].median_tpot == 1.0
    merged = groups(rows, by_gpu=False)
    assert [(g.key, len(g.rows)) for g in merged] == [
        (("sglang", "TTFT", "low"), 4), (("trtllm", "TPOT", "high"), 1)]
    assert merged[0].median_ttft == 0.55


def _page_replays() -> list[Replay]:
    """The replayed rows of the page's 3a, 3b and 3j tables (measured and kvplan's times)."""
    text = (ROOT / "examples" / "disagg-bench.md").read_text().splitlines()
    cohort = {"3a": "dis29", "3b": FIRST_COHORT, "3j": BACKEND_COHORTS["trtllm"]}
    out, sec = [], None
    for i, line in enumerate(text):
        for mark, name in (("Prospective rows (3a):", "3a"), ("Shaped rows (3b):", "3b"),
                           ("### 3j.", "3j")):
            sec = name if line.startswith(mark) else sec
        if sec is None or not line.startswith("| row | layout and load |"):
            continue
        for row in text[i + 2:]:
            if not row.startswith("|"):
                break
            c = [x.strip() for x in row.strip("|").split("|")]
            (mt, mp), (kt, kp) = c[2].split(" / "), c[3].split(" / ")
            isl, osl = map(int, re.search(r"_(\d+)x(\d+)_", c[0]).groups())  # type: ignore[union-attr]
            conc = int(re.search(r"_c(\d+)_", c[0]).group(1))  # type: ignore[union-attr]
            out.append(Replay(
                id=PREFIX + c[0], label=c[1], measured_ttft_ms=float(mt.replace(",", "")),
                measured_tpot_ms=float(mp.replace(",", "")), concurrency=conc, input_len=isl,
                output_len=osl, tpot_ms=float(kp.replace(",", "")), cohort=cohort[sec],
                ttft_ms=None if kt.startswith("prefill") else float(kt.replace(",", ""))))
        sec = None
    return out


def test_counts_match_the_page() -> None:
    # The table's rows inside both bands, by section, are the counts the page prints for the
    # same rows (each subsection's "Inside [0.75, 1.33] on both TTFT and TPOT: N of M"),
    # and every miss is in exactly one group of each grouping.
    reps = _page_replays()
    rows = table(reps)
    assert len(rows) == len(reps) and {section_of(r) for r in reps} == {"3a", "3b", "3j"}
    page = (ROOT / "examples" / "disagg-bench.md").read_text()
    printed = {sec: re.search(rf"### {sec}\..*?on both TTFT and TPOT: (\d+) of (\d+)", page,
                              re.S) for sec in ("3a", "3b", "3j")}
    for sec, m in printed.items():
        assert m is not None, sec
        s = [r for r in rows if r.section == sec]
        assert (sum(not r.side for r in s), len(s)) == (int(m.group(1)), int(m.group(2))), sec
    misses = sum(bool(r.side) for r in rows)
    assert sum(len(g.rows) for g in groups(rows)) == misses
    assert sum(len(g.rows) for g in groups(rows, by_gpu=False)) == misses
    # The fields come from the frozen row: engine, release, GPU, connector.
    one = next(r for r in rows if r.row_id == "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527")
    assert (one.engine, one.release, one.gpu, one.connector, one.users, one.isl) == (
        "sglang", "0.5.8.post1", "b200", "sglang-mooncake", 512, 1024)
    assert any(line.startswith("| 3j | ") for line in lines(rows))


def test_lens_by_hand() -> None:
    # cfg527 at the page's times: measured 7,816.5 / 24.49 ms, kvplan 1,144.0 ms TTFT; the gap
    # 6,672.5 ms = 272.5 of the measured decode steps; 512 users over one DP8 decode worker, 64
    # a rank, within SGLang's default seats (4,096 there): not at seats. Load: 512 users over
    # 7.8165 + 1,023 x 0.02449 s = 32.87 s in flight, 15.58 requests a second (Little's law),
    # below kvplan's prefill role's most prompts a second (the page's 51.0): in (0.25, 0.35).
    rep = next(r for r in _page_replays() if r.id.endswith("_c512_cfg527"))
    got = lens(rep)
    assert got is not None
    assert abs(got.gap_ms - 6672.5) < 0.05 and abs(got.gap_steps - 6672.5 / 24.49) < 1e-6
    assert not got.seats_full and 0.25 < got.load < 0.35
