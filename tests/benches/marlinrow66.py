"""marlinrow66 (issue 30): the aggregated bench's replay of InferenceX's Hopper gpt-oss-120b vLLM
0.18.0 rows before and after it passes the MXFP4 MoE kernel their scripts export
(VLLM_MXFP4_USE_MARLIN=1 -> --mxfp4-backend marlin: tests.benches.aiconfig_agg_env, whose
docstring states the decision from the code), in both replays: the page's fixed lengths
(aiconfig_agg_runs.CLIENT_WORKLOAD off) and InferenceX's client workload (on).

before: aiconfig_agg_runs.SCRIPT_ENV False (every flag at kvplan's default: Triton's MXFP4 MoE on
SM 9.0 from vLLM 0.11.1); after: True (Marlin, at its padded shapes since tpslope66). Nothing
else differs; the rows are the 108 the frozen bench replays (why_not empty, the override set).

SPLIT: none of these rows is held out for this change. gptosshopper62 read them (the same
frozen -> Marlin comparison at fixed lengths, and 52 under the client workload) and tpslope66's
pool holds them (read under CLIENT_WORKLOAD with and without Marlin before its padded-shape rule):
SHAPED by those readings, though no constant was fitted here and this change follows the
scripts, not the errors.

Order (committed before any run): the rows by the client replay's decode work, 10 x C x OSL,
then id, so an interrupted client run holds the cheapest rows; each row's two arms run back to
back (paired). Results are appended, one JSON line a row, so a run can be read as it goes.

RESULTS (first run, bench frozen at 8dc362ac; all 108 rows in both arms of both replays, none
refused; median |err| TTFT / TPOT, median ratio TTFT / TPOT, both inside [0.75, 1.33]):
- fixed lengths (the page): 30.8 / 5.7 % -> 93.5 / 5.4 %, 1.17 / 0.96 -> 1.94 / 1.02, 44 -> 17.
  H100 ISL 1,024 (32) 1.45 -> 2.30, 8,192 (18) 0.99 -> 1.47; H200 1,024 (34) 1.50 -> 2.34,
  8,192 (24) 0.94 -> 1.52 (TTFT ratio).
- client workload: 50.1 / 5.5 % -> 23.8 / 5.5 %, 0.50 / 0.96 -> 0.76 / 1.03, 0 -> 57. TTFT
  ratio H100 1,024 0.51 -> 0.73, 8,192 0.51 -> 0.79; H200 0.46 -> 0.69, 0.51 -> 0.85. TPOT
  |err| H100 5.4 -> 8.8 % and 2.9 -> 7.3 % (worse), H200 5.4 -> 3.5 % and 15.1 -> 2.1 %.
Run time: fixed about 10 min (one process), client about 25 min (three shards) on the shared
2-core host under load 10.

Run: python -m tests.benches.marlinrow66 run fixed|client OUT.jsonl [--skip N] [--limit N];
     python -m tests.benches.marlinrow66 report OUT.jsonl [OUT2.jsonl ...]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from tests.benches import aiconfig_agg_env as env
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.disagg_rows import BAND, stated_concurrency

ARMS = ("before", "after")


def rows() -> list[dict[str, str]]:
    """The replayed rows the override touches, cheapest client replay first."""
    part = [r for r in agg.rows() if env.mxfp4_backend(r) is not None and not agg.why_not(r)]
    return sorted(part, key=lambda r: (10 * (stated_concurrency(r) or 0) * int(r["osl"]),
                                       r["id"]))


def replay(row: dict[str, str], arm: str, client: bool) -> tuple[float, float] | None:
    """(TTFT, TPOT) predicted / measured for `arm`, None where kvplan refuses."""
    agg.SCRIPT_ENV = arm == "after"
    agg.CLIENT_WORKLOAD = client
    try:
        return agg.replay(row).ratios
    finally:
        agg.SCRIPT_ENV, agg.CLIENT_WORKLOAD = True, False


def run(mode: str, out: Path, skip: int, limit: int | None) -> None:
    part = rows()[skip:None if limit is None else skip + limit]
    with out.open("a") as f:
        for row in part:
            rec = {"id": row["id"], "system": row["system"], "tp": agg.layout(row)[0],
                   "isl": int(row["isl"]), "osl": int(row["osl"]),
                   "conc": stated_concurrency(row), "mode": mode}
            for arm in ARMS:
                rec[arm] = replay(row, arm, mode == "client")
            f.write(json.dumps(rec) + "\n")
            f.flush()
            print(rec, flush=True)


def _inside(x: float) -> bool:
    return BAND[0] <= x <= BAND[1]


def line(name: str, recs: list[dict[str, object]], arm: str) -> str:
    got = [r[arm] for r in recs if r[arm] is not None]
    if not got:
        return f"| {name} | {arm} | 0 | - | - | - | - | - |"
    a = [g[0] for g in got]  # type: ignore[index]
    b = [g[1] for g in got]  # type: ignore[index]
    return (f"| {name} | {arm} | {len(got)} | {statistics.median(abs(x - 1) for x in a):.1%} | "
            f"{statistics.median(abs(x - 1) for x in b):.1%} | {statistics.median(a):.2f} | "
            f"{statistics.median(b):.2f} | {sum(_inside(x) for x in a)} / "
            f"{sum(_inside(y) for y in b)} / "
            f"{sum(_inside(x) and _inside(y) for x, y in zip(a, b, strict=True))} |")


def report(paths: list[Path]) -> None:
    recs = list({(r["id"], r["mode"]): r for r in reversed(
        [json.loads(x) for p in paths for x in p.read_text().splitlines() if x.strip()])
    }.values())  # one record a row and mode (shards may overlap): the first written
    print("| group | arm | rows | median TTFT err | median TPOT err | median TTFT ratio | "
          "median TPOT ratio | inside TTFT / TPOT / both |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for mode in ("fixed", "client"):
        mine = [r for r in recs if r["mode"] == mode]
        if not mine:
            continue
        groups = [(f"{mode}: all (shaped)", mine)]
        for system in ("h100_sxm", "h200_sxm"):
            for isl in (1024, 8192):
                groups.append((f"{mode}: {system} ISL {isl:,}", [
                    r for r in mine if r["system"] == system and r["isl"] == isl]))
        for name, part in groups:
            for arm in ARMS:
                print(line(name, part, arm))


def main(argv: list[str]) -> None:
    if argv[0] == "run":
        skip = int(argv[argv.index("--skip") + 1]) if "--skip" in argv else 0
        limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else None
        run(argv[1], Path(argv[2]), skip, limit)
    else:
        report([Path(p) for p in argv[1:]])


if __name__ == "__main__":
    main(sys.argv[1:])
