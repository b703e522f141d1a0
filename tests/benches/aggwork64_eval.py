"""aggwork64's before -> after of the aggregated bench's InferenceX rows (issue 30): the frozen
fixed-length replay (before: ROUNDS x C requests of the row's ISL / OSL, each user's first and
last not measured, no ignore-EOS) against InferenceX's client workload (after:
tests.benches.aiconfig_agg_client, committed at af45ad02 before any row below was replayed).

The subset (`subset`), chosen before either arm was run: the InferenceX-provenance rows the
bench replays (why_not empty) and no rule names (not in aiconfig_agg_runs.shaped_rows), split in
strata engine x ISL x concurrency band (<= 4, 8 - 16, 32 - 64, >= 128); N rows allotted in
proportion to the strata's sizes (largest remainders), each stratum's picked evenly spaced in
file order. Every row replays through the bench's own `replay` (its release, or a nightly's
candidates), each arm in one process.

The arms replay the subset in `order` (a seeded shuffle), so a run stopped early reports the
rows both arms finished.

Run: python -m tests.benches.aggwork64_eval select | run before|after OUT.jsonl [SHARD SHARDS]
| report BEFORE.jsonl AFTER.jsonl (several files joined by commas)
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections import defaultdict

from tests.benches import aiconfig_agg_client as client
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.aiconfig_agg_loop import steady
from tests.benches.disagg_rows import BAND, PREFIX, stated_concurrency

N = 120


def band(conc: int) -> str:
    return "<=4" if conc <= 4 else "8-16" if conc <= 16 else "32-64" if conc <= 64 else ">=128"


def stratum(row: dict[str, str]) -> tuple[str, int, str]:
    return row["backend"], int(row["isl"]), band(stated_concurrency(row) or 0)


def subset(n: int = N) -> list[dict[str, str]]:
    shaped = agg.shaped_rows(without=agg.NAMED_AFTER_AGGWORK64)  # the subset as drawn
    pool = [r for r in agg.rows() if client.inferencex(r) and not agg.why_not(r)
            and PREFIX + r["id"] not in shaped]
    strata: dict[tuple[str, int, str], list[dict[str, str]]] = defaultdict(list)
    for r in pool:
        strata[stratum(r)].append(r)
    quota = {k: n * len(v) / len(pool) for k, v in strata.items()}
    take = {k: int(q) for k, q in quota.items()}
    for k in sorted(quota, key=lambda k: (-(quota[k] - take[k]), k))[:n - sum(take.values())]:
        take[k] += 1
    out = []
    for k, v in strata.items():
        m = take[k]
        out += [v[int((i + 0.5) * len(v) / m)] for i in range(m)]
    return sorted(out, key=lambda r: r["id"])


def _before() -> None:
    """The frozen harness: fixed lengths, the steady state, no ignore-EOS."""
    client.requests = lambda row: None  # type: ignore[assignment]
    client.measure = lambda row, done: steady(done, stated_concurrency(row) or 0)  # type: ignore[assignment]
    client.ignore_eos = lambda row: False  # type: ignore[assignment]


def order() -> list[dict[str, str]]:
    """The subset in a seeded shuffle (seed 64): the order the arms replay it in, so that a run
    stopped early (the shared host's CPU) leaves a like mix of strata."""
    rows = subset()
    random.Random(64).shuffle(rows)
    return rows


def run(arm: str, out: str, shard: int = 0, shards: int = 1) -> None:
    if arm == "before":
        _before()
    else:
        agg.CLIENT_WORKLOAD = True  # off on the page (aiconfig_agg_runs' docstring)
    with open(out, "a") as f:
        for row in order()[shard::shards]:
            t = time.process_time()
            r = agg.replay(row)
            f.write(json.dumps({"id": row["id"], "stratum": stratum(row),
                                "ttft": r.ttft_ms, "tpot": r.tpot_ms,
                                "m_ttft": r.measured_ttft_ms, "m_tpot": r.measured_tpot_ms,
                                "cpu_s": time.process_time() - t, "why": r.why_not}) + "\n")
            f.flush()


def _stats(part: list[dict]) -> str:  # type: ignore[type-arg]
    done = [p for p in part if p["ttft"] is not None]
    if not done:
        return "0 | - | - | - | -"
    a = [p["ttft"] / p["m_ttft"] for p in done]
    b = [p["tpot"] / p["m_tpot"] for p in done]
    inside = sum(BAND[0] <= x <= BAND[1] and BAND[0] <= y <= BAND[1]
                 for x, y in zip(a, b, strict=True))
    return (f"{len(done)} | {statistics.median(abs(x - 1) for x in a):.1%} | "
            f"{statistics.median(abs(y - 1) for y in b):.1%} | {statistics.median(a):.2f} | "
            f"{inside}")


def report(before: str, after: str) -> None:
    arms = [{d["id"]: d for p in paths.split(",") for d in map(json.loads, open(p))}
            for paths in (before, after)]
    ids = sorted(set(arms[0]) & set(arms[1]))
    groups: dict[str, list[str]] = defaultdict(list)
    rows = agg._by_id()
    for i in ids:
        e, isl, _ = arms[1][i]["stratum"]
        host = agg._host(rows[PREFIX + i]) in agg.shaped_hosts()
        split = "held out, host of shaped disagg rows" if host else "held out"
        for g in ("all", e, f"{e} ISL {isl}", split):
            groups[g].append(i)
    print("| rows | n before | TTFT err | TPOT err | TTFT ratio | both inside | n after | "
          "TTFT err | TPOT err | TTFT ratio | both inside |")
    print("|---|" + "---:|" * 10)
    for g in sorted(groups, key=lambda g: (g != "all", g)):
        print(f"| {g} | " + " | ".join(_stats([a[i] for i in groups[g]]) for a in arms) + " |")
    for k, a in zip(("before", "after"), arms, strict=True):
        print(f"{k}: CPU {sum(a[i]['cpu_s'] for i in ids):.0f} s over {len(ids)} rows")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "select":
        rows = subset()
        counts: dict[tuple[str, int, str], int] = defaultdict(int)
        for r in rows:
            counts[stratum(r)] += 1
        for k, v in sorted(counts.items()):
            print(k, v)
        print(len(rows), sum((stated_concurrency(r) or 0) * int(r["osl"]) for r in rows))
    elif cmd == "run":
        run(sys.argv[2], sys.argv[3], *map(int, sys.argv[4:6]))
    else:
        report(sys.argv[2], sys.argv[3])
