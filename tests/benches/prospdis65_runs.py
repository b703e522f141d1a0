"""The prospdis65 set (issue 29): public disaggregated (prefill / decode) serving runs that no
earlier disagg data file has, FROZEN (tests/data/disagg/public_disagg_runs65.json, this runner
and tests/test_prospdis65.py committed before kvplan was run on any of them), then replayed once
and that first evaluation recorded here (FIRST_EVALUATION, FIRST_ROWS).

The runs: Anyscale's Ray Serve LLM PD study (anyscale/ray-serve-llm-perf-examples at 04ba8ab4):
openai/gpt-oss-120b (MXFP4) on vLLM 0.11.0 with NixlConnector over UCX, 5,000 / 250 tokens at
concurrency 4-64 (5 x C prompts each), on AWS p5.48xlarge (8 x H100) with prefill and decode on
one node (P:D = 1x2:1x2, 1x2:2x2, 1x2:3x2, 1x4:1x4, 2x2:1x2, 2x2:1x4, 3x2:1x2, workers x TP) or
across nodes over EFA (1x4:1x4), on 8 x H200 nodes with InfiniBand (1x4:1x4 packed and spread),
and one 1P1D TP4 run over EFA at 8,000 / 1,000, concurrency 64. The data file says what each
source states, how it is read and what was found and left out.

Replayed by the machinery of the disagg bench's section 4 (tests.benches.disagg_public.
replay_run: disagg_rows.predict, `evaluate_xy`'s closed-loop simulation of both roles at the
point's concurrency), each point compared on the saved result's mean TTFT and mean TPOT against
section 3's band (disagg_rows.BAND). No rule is added here.

Run: python -m tests.benches.prospdis65_runs
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from tests.benches.disagg_public import Point, replay_run
from tests.benches.disagg_rows import BAND

DATA = (Path(__file__).resolve().parents[2] / "tests" / "data" / "disagg"
        / "public_disagg_runs65.json")
# The commit that adds the data file, this runner and its test: the freeze (set with the record
# of the first evaluation, which was run on that commit's tree).
FREEZE: str | None = None
# The record of the first evaluation: empty until the set is first replayed.
FIRST_EVALUATION: str | None = None
# "run id @ concurrency" -> (TTFT ratio, TPOT ratio), kvplan / measured, as first printed
# (None: kvplan's prefill saturated at that load, no TTFT).
FIRST_ROWS: dict[str, tuple[float | None, float | None]] = {}


def load() -> dict:  # type: ignore[type-arg]
    return json.loads(DATA.read_text())


def key(p: Point) -> str:
    return f"{p.run} @ {p.concurrency}"


def inside(ratio: float | None) -> bool:
    return ratio is not None and BAND[0] <= ratio <= BAND[1]


def replay_all() -> list[Point]:
    """Every point of every run, replayed (the first evaluation's and any later one's)."""
    return [p for run in load()["runs"] for p in replay_run(run)]


def counts(ratios: list[tuple[float | None, float | None]]) -> str:
    """Both inside the band, TTFT alone, TPOT alone, over `ratios` (TTFT, TPOT) pairs."""
    n = len(ratios)

    def share(k: int) -> str:
        return f"{k} of {n} ({k / n:.0%})" if n else "0 of 0"
    both = sum(inside(t) and inside(o) for t, o in ratios)
    return (f"both {share(both)}; TTFT {share(sum(inside(t) for t, _ in ratios))}; "
            f"TPOT {share(sum(inside(o) for _, o in ratios))}")


def _median(xs: list[float | None]) -> str:
    got = [x for x in xs if x is not None]
    return f"{statistics.median(got):.2f}" if got else "-"


def _fmt(x: float | None, nd: int = 1) -> str:
    return "-" if x is None else f"{x:,.{nd}f}"


def section(points: list[Point]) -> list[str]:
    """The set as a Markdown section: every point, the counts against the band, per run."""
    record = (f"the record of their first evaluation: {FIRST_EVALUATION}" if FIRST_EVALUATION
              else "not yet evaluated: this is the first replay (no record yet)")
    runs = load()["runs"]
    out = [f"{len(runs)} runs, {len(points)} points (tests/data/disagg/public_disagg_runs65.json, "
           f"frozen at {FREEZE or 'the commit adding it'}); {record}. Ratios are kvplan / "
           f"measured (mean TTFT, mean TPOT); the band is [{BAND[0]}, {BAND[1]}].", "",
           "| run | conc. | measured TTFT / TPOT ms | kvplan TTFT / TPOT ms | ratio TTFT | "
           "ratio TPOT |", "|---|---|---|---|---|---|"]
    for p in points:
        ttft = "prefill saturated" if p.ttft_ms is None else _fmt(p.ttft_ms)
        out.append(f"| {p.run} | {p.concurrency} | {_fmt(p.measured_ttft_ms)} / "
                   f"{_fmt(p.measured_tpot_ms, 2)} | {ttft} / {_fmt(p.tpot_ms, 2)} | "
                   f"{_fmt(p.ttft_ratio, 2)} | {_fmt(p.tpot_ratio, 2)} |")
    pairs = [(p.ttft_ratio, p.tpot_ratio) for p in points]
    out += ["", f"Inside the band: {counts(pairs)}; median ratio TTFT "
            f"{_median([t for t, _ in pairs])}, TPOT {_median([o for _, o in pairs])}.", ""]
    for run in runs:
        mine = [(p.ttft_ratio, p.tpot_ratio) for p in points if p.run == run["id"]]
        out.append(f"- {run['id']}: {counts(mine)}; median ratio TTFT "
                   f"{_median([t for t, _ in mine])}, TPOT {_median([o for _, o in mine])}")
    return out


if __name__ == "__main__":
    print("\n".join(section(replay_all())))
