"""The prospdis66 set (issue 29): public disaggregated (prefill / decode) serving runs from a
publisher no earlier data file used, FROZEN (tests/data/disagg/public_disagg_runs66.json, its
model config llama-3.1-70b-fp8-static.json and MODELS entry, this runner and
tests/test_prospdis66.py committed before kvplan was run on any of them), then replayed once and
that first evaluation recorded here (FIRST_EVALUATION, FIRST_ROWS, FIRST_REFUSED).

The runs: ankdeshm/dynamo_disaag_serving_gke, NVIDIA Dynamo on GKE B200 nodes through the
nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.1 image (vLLM 0.20.1, NIXL 0.10.1), NixlConnector,
genai-perf closed loops at concurrency 16 and 32 (150 output tokens forced; 500-1,000 on the
two-node runs, whose measured mean is taken): neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8 with
FP8 KV on one node (4 prefill workers of TP 1 : 1 decode worker of TP 4 at 3,000 and 8,000 / 150;
3 x TP 1 : 1 x TP 1 at 3,000 / 150) and on two nodes (3 x TP 4 : 1 x TP 4 at 26,000 / ~984), and
deepseek-ai/DeepSeek-R1 on two nodes (1 x TP 8 EP 8 : 1 x TP 8 EP 8 at 3,000, 8,000 and 16,000
/ ~999). The search that found them and what it left out: tests/data/disagg/
prospdis66_search.json; what each run states, how it is read and what was assumed: the data
file.

Held out, with one qualification: the runs share GPU (B200) and engine (vLLM) with collocated
sets that shaped kvplan's vLLM B200 step (tests/benches/fitted_rows.py); their layouts, the
disaggregated flow, the models on B200 disaggregated and the publisher are new.

Replayed by the machinery of the disagg bench's sections 4 / 4b (tests.benches.disagg_public.
replay_run: disagg_rows.predict, `evaluate_xy`'s closed-loop simulation of both roles at the
point's concurrency, the simulation's default measurement: kvplan has no genai-perf client),
each point compared on the doc's mean TTFT and mean inter-token latency against disagg_rows.BAND.
No rule is added here.

Run: python -m tests.benches.prospdis66_runs
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from tests.benches.disagg_public import Point
from tests.benches.disagg_rows import BAND
from tests.benches.prospdis65_runs import counts, key, replay

DATA = (Path(__file__).resolve().parents[2] / "tests" / "data" / "disagg"
        / "public_disagg_runs66.json")
# The commit that adds the data file, its config, this runner and its test: the freeze (set
# with the record of the first evaluation, which is run on that commit's tree).
FREEZE: str | None = None
# The record of the first evaluation (run once on the FREEZE tree, unchanged).
FIRST_EVALUATION: str | None = None
# "run id @ concurrency" -> (TTFT ratio, TPOT ratio), kvplan / measured, as first printed
# (None: kvplan's prefill saturated at that load, no TTFT).
FIRST_ROWS: dict[str, tuple[float | None, float | None]] = {}
# Run id -> the refusal's first line, as first printed.
FIRST_REFUSED: dict[str, str] = {}

__all__ = ["DATA", "FIRST_EVALUATION", "FIRST_REFUSED", "FIRST_ROWS", "FREEZE", "key", "load",
           "replay_all", "section"]


def load() -> dict:  # type: ignore[type-arg]
    return json.loads(DATA.read_text())


def replay_all(runs: list[dict] | None = None  # type: ignore[type-arg]
               ) -> tuple[list[Point], dict[str, str]]:
    """Every point of every run (or of `runs`) replayed, and the runs kvplan refused (id ->
    why)."""
    points, refused = [], {}
    for run in load()["runs"] if runs is None else runs:
        got, why = replay(run)
        points += got
        if why:
            refused[run["id"]] = why
    return points, refused


def _median(xs: list[float | None]) -> str:
    got = [x for x in xs if x is not None]
    return f"{statistics.median(got):.2f}" if got else "-"


def _num(x: float | None, nd: int = 1) -> str:
    return "-" if x is None else f"{x:,.{nd}f}"


def section(points: list[Point], refused: dict[str, str],
            runs: list[dict] | None = None) -> list[str]:  # type: ignore[type-arg]
    """The set as a Markdown section: every point, the counts against the band (a refused
    point counted outside), per run, and the runs kvplan refused."""
    runs = load()["runs"] if runs is None else runs
    record = (f"the record of their first evaluation: {FIRST_EVALUATION}" if FIRST_EVALUATION
              else "not yet evaluated: this is the first replay (no record yet)")
    out = [f"{len(runs)} runs, {sum(len(r['points']) for r in runs)} points "
           f"(tests/data/disagg/public_disagg_runs66.json, frozen at "
           f"{FREEZE or 'the commit adding it'}); {record}. Ratios are kvplan / measured "
           f"(mean TTFT, mean TPOT against genai-perf's mean inter-token latency); the band is "
           f"[{BAND[0]}, {BAND[1]}].", "",
           "| run | conc. | measured TTFT / ITL ms | kvplan TTFT / TPOT ms | ratio TTFT | "
           "ratio TPOT |", "|---|---|---|---|---|---|"]
    for p in points:
        ttft = "prefill saturated" if p.ttft_ms is None else _num(p.ttft_ms)
        out.append(f"| {p.run} | {p.concurrency} | {_num(p.measured_ttft_ms)} / "
                   f"{_num(p.measured_tpot_ms, 2)} | {ttft} / {_num(p.tpot_ms, 2)} | "
                   f"{_num(p.ttft_ratio, 2)} | {_num(p.tpot_ratio, 2)} |")
    pairs = [(p.ttft_ratio, p.tpot_ratio) for p in points]
    pairs += [(None, None)] * sum(len(r["points"]) for r in runs if r["id"] in refused)
    out += ["", f"Inside the band (refused points counted outside): {counts(pairs)}; median "
            f"ratio TTFT {_median([t for t, _ in pairs])}, TPOT "
            f"{_median([o for _, o in pairs])}.", ""]
    for run in runs:
        if run["id"] in refused:
            out.append(f"- {run['id']}: refused ({len(run['points'])} points): "
                       f"{refused[run['id']]}")
            continue
        mine = [(p.ttft_ratio, p.tpot_ratio) for p in points if p.run == run["id"]]
        out.append(f"- {run['id']}: {counts(mine)}; median ratio TTFT "
                   f"{_median([t for t, _ in mine])}, TPOT {_median([o for _, o in mine])}")
    return out


if __name__ == "__main__":
    print("\n".join(section(*replay_all())))
