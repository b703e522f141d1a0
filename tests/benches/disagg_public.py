"""Public disaggregated TTFT / TPOT measurements from outside aiconfigurator (issue 29, logs29):
tests/data/disagg/public_disagg_runs.json, frozen (committed) before kvplan was run on it, held
out. Each run is written in aiconfigurator's field names, so it is replayed by the same code as
the disagg bench's sections 2 and 3 (`disagg_rows.predict`: `evaluate_xy`'s closed-loop
simulation of both roles at the stated concurrency); no rule is added here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.benches import disagg_client
from tests.benches.disagg_rows import BAND, predict

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "disagg"
FILE = "public_disagg_runs.json"


@dataclass(frozen=True, kw_only=True)
class Point:
    run: str
    concurrency: int
    measured_ttft_ms: float | None
    measured_tpot_ms: float | None
    approximate: bool
    ttft_ms: float | None  # None: kvplan's prefill saturated at this load
    tpot_ms: float | None

    @property
    def ttft_ratio(self) -> float | None:
        if self.ttft_ms is None or not self.measured_ttft_ms:
            return None
        return self.ttft_ms / self.measured_ttft_ms

    @property
    def tpot_ratio(self) -> float | None:
        if self.tpot_ms is None or not self.measured_tpot_ms:
            return None
        return self.tpot_ms / self.measured_tpot_ms


def runs() -> list[dict]:
    return json.loads((DATA / FILE).read_text())["runs"]


def replay_run(run: dict) -> list[Point]:
    """Every point of one run at its stated concurrency, with the row's own layout."""
    # An empty backend_version is unstated: kvplan's default release of the engine (what the
    # CLI takes without --engine-version), not a version the row ran.
    row = {**run["row"], "silicon_data_source": "",
           "backend_version": run["row"]["backend_version"] or None}
    out = []
    for p in run["points"]:
        ttft, tpot, _ = predict({**row, **client_fields(run, p)}, p["concurrency"])
        out.append(Point(run=run["id"], concurrency=p["concurrency"],
                         measured_ttft_ms=p["measured_ttft_ms"],
                         measured_tpot_ms=p["measured_tpot_ms"], approximate=p["approximate"],
                         ttft_ms=ttft, tpot_ms=tpot))
    return out


def client_fields(run: dict, point: dict) -> dict[str, str]:  # type: ignore[type-arg]
    """The row keys naming a point's benchmark client (tests.benches.disagg_client.client):
    `vllm bench serve` at the point's --num-prompts and --max-concurrency where the run states
    that client and the point its prompts (prospdis65's runs); genai-perf where the point states
    its request counts (prospdis66's runs); none otherwise (the logs29 runs state no prompt
    count: the simulation's default measurement)."""
    if point.get("request_count"):
        # dynnocon67: a point stating genai-perf's --request-count (prospdis66's, all run with
        # genai-perf: its data file's `about`): its warm-up and measured requests as one closed
        # loop (kvplan.analysis.simulate.bench_client.genai_perf).
        return {"bench_client": disagg_client.GENAI_PERF,
                "bench_num_prompts": str(point["request_count"]
                                         + point.get("warmup_request_count", 0)),
                "bench_concurrency": str(point["concurrency"])}
    if "vllm bench serve" not in run.get("stated", "") or not point.get("num_prompts"):
        return {}
    return {"bench_client": disagg_client.VLLM_BENCH_SERVE,
            "bench_num_prompts": str(point["num_prompts"]),
            "bench_concurrency": str(point["concurrency"])}


def _fmt(x: float | None, nd: int = 1) -> str:
    return "-" if x is None else f"{x:,.{nd}f}"


def _where(ratio: float | None) -> str:
    return ("-" if ratio is None else "in" if BAND[0] <= ratio <= BAND[1]
            else "below" if ratio < BAND[0] else "above")


def section() -> list[str]:
    """The bench page's section: every point, kvplan beside the measured, misses included."""
    data = json.loads((DATA / FILE).read_text())
    out = ["| run | conc. | measured TTFT / TPOT ms | kvplan TTFT / TPOT ms | ratio TTFT | | "
           "ratio TPOT | |", "|---|---|---|---|---|---|---|---|"]
    points: list[Point] = []
    for run in data["runs"]:
        for p in replay_run(run):
            points.append(p)
            r, rt = p.ttft_ratio, p.tpot_ratio
            approx = "~" if p.approximate else ""
            ttft = "prefill saturated" if p.ttft_ms is None else _fmt(p.ttft_ms)
            out.append(f"| {p.run} | {p.concurrency} | {approx}{_fmt(p.measured_ttft_ms)} / "
                       f"{_fmt(p.measured_tpot_ms, 2)} | {ttft} / {_fmt(p.tpot_ms, 2)} | "
                       f"{_fmt(r, 2)} | {_where(r)} | {_fmt(rt, 2)} | {_where(rt)} |")

    def inside(ratios: list[float | None]) -> str:
        stated = [x for x in ratios if x is not None]
        n_in = sum(BAND[0] <= x <= BAND[1] for x in stated)
        return f"{n_in} of {len(stated)} points that state it"

    out += ["", f"Inside [{BAND[0]}, {BAND[1]}]: TTFT {inside([p.ttft_ratio for p in points])}, "
            f"TPOT {inside([p.tpot_ratio for p in points])}. Held out and prospective: the "
            "file was committed before kvplan ran on it; nothing was changed after.", ""]
    for run in data["runs"]:
        per = [p["measured_ttft_ms"] / p["concurrency"] for p in run["points"]
               if p["measured_ttft_ms"]]
        mine = [p.ttft_ms for p in points if p.run == run["id"] and p.ttft_ms is not None]
        if len(per) > 1 and mine:  # a load curve (one point shows no growth)
            out += [f"{run['id']}: the measured TTFT over the requests in flight is "
                    + ", ".join(f"{x:,.0f}" for x in per) + " ms: it grows about linearly "
                    "with the load, as if the prompts were prefilled one at a time "
                    f"({min(per):,.0f}-{max(per):,.0f} ms each); kvplan's simulated prefill "
                    "batches the waiting prompts up to the engine's token budget per step, so "
                    f"its TTFT stays at or below {max(mine):,.0f} ms. The source does not say "
                    "why; the gap is reported, not fitted.", ""]
    for run in data["runs"]:
        out.append(f"- {run['id']} ({run['url']}): {run['stated']} Read as: {run['reading']} "
                   f"Caveat: {run['caveat']}")
    out += ["", "Found and not made rows (why):", ""]
    out += [f"- {f['what']}: {f['why']}" for f in data["found_not_rows"]]
    out += ["", f"Searched: {data['searched']}"]
    return out


if __name__ == "__main__":
    print("\n".join(section()))
