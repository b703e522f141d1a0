"""admission61: the aggregated aiconfigurator vLLM rows (tests.benches.aiconfig_agg_runs) whose
admission rule the release boundary read at 2784378e moved (kvplan.engines.vllm.admission:
first-chunk admission to 0.18.1, was to 0.15.1), replayed under the rule before and after.

The rows moved: the releases 0.16.0, 0.17.0 and 0.18.0 (0.19.0 and later, and 0.15.1 and
earlier, keep their rule), and the vLLM nightly 5b8c30d62 (tests.benches.aiconfig_nightly),
replayed at 0.18.0, 0.18.1, 0.19.0 and 0.19.1 and kept where the four agree: it now straddles
the boundary. No other set with vLLM rows has a replayed row in 0.16.0-0.18.1 (prospective53b's
0.16.0 run is refused for its architecture; sim-to-real's runs are 0.15.1, 0.19.1, 0.20.1;
prospective58's 0.20.0; prospective30's 0.19.0).

Run: python -m tests.benches.admission61_runs before > before.jsonl (main's rule: first chunk
to 0.15.1), ... after > after.jsonl (this branch's), then ... compare before.jsonl after.jsonl.
One process each, the rows in file order. Run time (admission61): some 13 min wall each, the
two in parallel on the shared 2-core host (477 rows; the nightly's 69 four times).

Result (admission61, rule frozen at 2784378e before any of these rows was replayed; written
from vLLM's code alone, no row looked at): 10 of the 353 replayed release rows changed, none
by more than 1 % (TTFT 0.990-0.999 x, TPOT 1.002-1.005 x): four configurations at 8,192 /
1,024 and concurrency 32-64 (Kimi-K2.5 NVFP4 B200 TP4 EP4, MiniMax-M2.5 FP8 B200 TP2, MiniMax-
M2.5 FP8 H100 TP4 EP4 at 32 and 64 users), the pool tight enough that a first chunk is admitted
before the whole prompt would fit. Every release's and split's summary (rows inside the band,
median |error|, median ratio) is the same before and after to the printed digit; the nightly's
62 rows replay the same at 0.18.0, 0.18.1, 0.19.0 and 0.19.1 (admission binds at none of them),
so none is newly refused.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Iterator
from dataclasses import asdict

from kvplan.engines.vllm import admission
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.disagg_rows import Replay

MOVED = ("0.16.0", "0.17.0", "0.18.0")  # the rows' releases whose admission 2784378e changed
BEFORE_UNTIL = "0.15.1"  # main's FIRST_CHUNK_ADMISSION_UNTIL before 2784378e


def moved_rows() -> list[dict[str, str]]:
    """The vLLM rows of a release in MOVED or of a nightly build, in file order."""
    return [r for r in agg.rows() if r["backend"] == "vllm"
            and (agg.release(r) in MOVED or agg.release(r) is None)]


def run(rule: str) -> Iterator[dict[str, object]]:
    """Each moved row replayed (aiconfig_agg_runs.replay) under `rule`: "before" (first chunk
    to BEFORE_UNTIL) or "after" (the module's rule)."""
    if rule == "before":
        admission.FIRST_CHUNK_ADMISSION_UNTIL = BEFORE_UNTIL
    elif rule != "after":
        raise SystemExit(f"rule: before or after, got {rule!r}")
    for row in moved_rows():
        rep = agg.replay(row)
        yield {**asdict(rep), "version": row["backend_version"], "split": agg.split_of(rep)}


def _load(path: str) -> dict[str, tuple[Replay, str, str]]:
    """id -> (replay, release, split) from a `run` file."""
    out = {}
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            version, split = d.pop("version"), d.pop("split")
            out[d["id"]] = (Replay(**d), version, split)
    return out


def _line(part: list[Replay]) -> str:
    n, t_in, p_in, both, t_err, p_err, t_ratio, p_ratio = agg.summary(part)
    return (f"{n} replayed, TTFT inside {t_in}, TPOT inside {p_in}, both {both}; median "
            f"|err| TTFT {t_err}, TPOT {p_err}; median ratio TTFT {t_ratio}, TPOT {p_ratio}")


def _key(r: Replay) -> tuple[float | None, float | None, str]:
    return r.ttft_ms, r.tpot_ms, r.why_not


def compare(before_path: str, after_path: str) -> None:
    """Per release and split (held out / shaped): the rows, how many replays changed, the
    bench's summary (aiconfig_agg_runs.summary) before and after, the changed rows' after /
    before ratio and the rows now refused."""
    before, after = _load(before_path), _load(after_path)
    assert before.keys() == after.keys()
    groups: dict[tuple[str, str], list[str]] = {}
    for rid, (_, version, split) in after.items():
        kind = "held out" if split.startswith("held out") else "shaped"
        groups.setdefault((version, kind), []).append(rid)
    for (version, kind), ids in sorted(groups.items()):
        b = [before[i][0] for i in ids]
        a = [after[i][0] for i in ids]
        moved = [(x, y) for x, y in zip(b, a, strict=True) if _key(x) != _key(y)]
        print(f"\n### vLLM {version}, {kind}: {len(ids)} rows, {len(moved)} replays changed")
        print("before: " + _line(b))
        print("after:  " + _line(a))
        both = [(x.ratios, y.ratios) for x, y in moved if x.ratios and y.ratios]
        if both:
            ttft = [y[0] / x[0] for x, y in both]
            tpot = [y[1] / x[1] for x, y in both]
            print(f"changed rows: TTFT after / before median {statistics.median(ttft):.3f} "
                  f"({min(ttft):.3f}-{max(ttft):.3f}); TPOT median "
                  f"{statistics.median(tpot):.3f} ({min(tpot):.3f}-{max(tpot):.3f})")
        for x, y in moved:
            if x.replayed and not y.replayed:
                print(f"  now refused: {y.id}: {y.why_not[:150]}")


if __name__ == "__main__":
    if sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        for rec in run(sys.argv[1]):
            print(json.dumps(rec), flush=True)
