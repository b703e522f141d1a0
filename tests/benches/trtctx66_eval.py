"""`python -m tests.benches.trtctx66_eval {3j | agg | agg-client} OUT.json [SYSTEM ...]`: the
TensorRT-LLM rows trtctx66 re-evaluates (SYSTEM: the aggregated rows of those systems only),
replayed with the tree's rules, one record a row (id, group, ratios) written to OUT.json.
`python -m tests.benches.trtctx66_eval compare A.json B.json` prints before -> after (rows
inside [0.75, 1.33] on both / TTFT / TPOT, median ratios), whole and by group. Section 3j:
tests.benches.disagg_trtllm's replays of its full rows; the aggregated page's: every
TensorRT-LLM row (aiconfig_agg_parts --trt-prefill's), in the page's fixed mode or with
aiconfig_agg_runs.CLIENT_WORKLOAD on. Opt-in, on no page."""

from __future__ import annotations

import json
import sys

from tests.benches.disagg_rows import BAND, Replay


def _record(r: Replay, group: str) -> dict[str, object]:
    return {"id": r.id, "group": group, "replayed": r.replayed, "why": r.why_not,
            "ratios": list(r.ratios) if r.ratios is not None else None}


def run_3j() -> list[dict[str, object]]:
    from tests.benches import disagg_trtllm as d
    full = set(d.full_rows())
    out = []
    for row in d.prospective_rows():
        if d.PREFIX + row["id"] not in full:
            continue
        r = d.replay(row, prospective=True)
        if r.replayed and r.cohort == d.COHORT:
            out.append(_record(r, d._group(r)))
    return out


def run_agg(client: bool, systems: tuple[str, ...] = ()) -> list[dict[str, object]]:
    """The aggregated rows (`systems`: only those systems, e.g. h200_sxm)."""
    from tests.benches import aiconfig_agg_runs as agg
    agg.CLIENT_WORKLOAD = client
    out = []
    for row in agg.rows():
        if row["backend"] != "trtllm" or (systems and row["system"] not in systems):
            continue
        r = agg.replay(row)
        if r.replayed:
            out.append(_record(r, f"{row['system']} {row['precision']}"))
    return out


def _inside(x: float) -> bool:
    return BAND[0] <= x <= BAND[1]


def _median(v: list[float]) -> float:
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def summary(recs: list[dict]) -> str:
    rat = [r["ratios"] for r in recs if r["ratios"] is not None]
    both = sum(_inside(a) and _inside(b) for a, b in rat)
    ttft = sum(_inside(a) for a, _ in rat)
    tpot = sum(_inside(b) for _, b in rat)
    med = (f"{_median([a for a, _ in rat]):.2f} / {_median([b for _, b in rat]):.2f}"
           if rat else "-")
    return f"{len(recs)} rows: both {both}, TTFT {ttft}, TPOT {tpot}; medians {med}"


def compare(a: list[dict], b: list[dict]) -> None:
    print(f"all: {summary(a)}  ->  {summary(b)}")
    for g in sorted({r["group"] for r in a} | {r["group"] for r in b}):
        print(f"  {g}: {summary([r for r in a if r['group'] == g])}  ->  "
              f"{summary([r for r in b if r['group'] == g])}")


def main(argv: list[str]) -> None:
    if argv[0] == "compare":
        with open(argv[1]) as f, open(argv[2]) as g:
            compare(json.load(f), json.load(g))
        return
    systems = tuple(argv[2:])
    recs = {"3j": run_3j, "agg": lambda: run_agg(False, systems),
            "agg-client": lambda: run_agg(True, systems)}[argv[0]]()
    with open(argv[1], "w") as f:
        json.dump(recs, f)
    print(summary(recs))


if __name__ == "__main__":
    main(sys.argv[1:])
