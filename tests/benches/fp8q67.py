"""fp8q67 (issue 30): the aggregated rows vLLM's FP8 query on SM 10.x moves
(kvplan.engines.vllm.fp8_query), before -> after on a few of them.

`moved`: the aggregated bench's rows (tests.benches.aiconfig_agg_runs.rows) whose simulated
engine prices attention in FP8 after the change (MixedStepCost's decode scale not 1: vLLM
0.16.0 on, B200 / B300, an fp8 cache, non-latent heads of a FlashInfer size), by model, GPU and
release. `main`: all of them replayed with the rule (after) and with vLLM's declaration taken out
(before): aiconfig_agg_runs.summary per arm, held out and shaped apart (split_of); then `n`
of them (default 4, one per GPU and ISL) row by row, TTFT / TPOT against measured.
The heavy page (examples/simulate-bench.md) is not regenerated here; its aggregated rows of
this kind move as these do. CPU time on stderr.

The record (one run, at fp8q67's rule commit c7f7780a; the rule was written from vLLM's code,
no constant set by a row; the replay ran once before that commit on the same code): 171 rows
move, all MiniMax-M2.5 on vLLM 0.19.0 (104 B200, 67 B300). Median |TTFT err| 29.3 -> 27.7 %,
|TPOT err| 13.5 -> 13.0 %, both inside 78 -> 82 (TTFT inside 86 -> 91), TTFT ratio 1.08 ->
1.06; held out (143) 30.2 -> 28.4 %, both inside 62 -> 66; shaped by earlier commits (28)
25.8 -> 25.6 %, 16 -> 16. ISL 1,024 rows barely move (B200 TP2 C 128: 178.8 ms either way);
ISL 8,192 rows do (B300 fp4 TP2 C 128: 501.7 -> 458.0 ms, measured 839.9; B200 fp8 TP2 C 128:
15,548 -> 15,242 ms, measured 11,604). 17 s wall for both arms. The disaggregated rows'
vLLM B200-class rows (Kimi-K2.5, GB200, MLA) do not move.

Run: python -m tests.benches.fp8q67 [n]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import replace
from unittest.mock import patch

from kvplan.engines.vllm.engine import VllmEngine
from tests.benches import aiconfig_agg_runs as agg


def _moves(row: dict[str, str]) -> bool:
    if row["backend"] != "vllm" or agg.GPUS.get(row["system"]) not in ("B200", "B300"):
        return False
    if agg.why_not(row) or agg.release(row) is None:
        return False
    try:
        sim = agg.row_setup(row, agg.release(row) or "")
    except Exception:  # noqa: BLE001 - a row the bench cannot set up does not move
        return False
    return sim.cost._decode_scale != 1.0  # noqa: SLF001 - the rule's own switch


def moved() -> list[dict[str, str]]:
    return [r for r in agg.rows() if _moves(r)]


def _before(fn, row):  # type: ignore[no-untyped-def]
    """`fn(row)` with vLLM's FP8-query declaration taken out (the tree before fp8q67)."""
    agg._setup.cache_clear()  # noqa: SLF001
    traits = replace(VllmEngine.cost_traits, kv_dtype_attention=())
    with patch.object(VllmEngine, "cost_traits", traits):
        out = fn(row)
    agg._setup.cache_clear()  # noqa: SLF001
    return out


def _ms(ttft: float | None, tpot: float | None) -> str:
    return " / ".join("saturated" if x is None else f"{x:.1f}" for x in (ttft, tpot))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    t0 = time.process_time()
    rows = moved()
    print(f"{len(rows)} aggregated rows move:")
    for key, count in sorted(Counter((r["model_path"], agg.GPUS[r["system"]],
                                      r["backend_version"]) for r in rows).items()):
        print(f"- {key[0]} {key[1]} vllm {key[2]}: {count}")
    before = [_before(agg.replay, r) for r in rows]
    after = [agg.replay(r) for r in rows]
    print("\n| part | rows | TTFT in | TPOT in | both in | median abs TTFT err | median abs TPOT "
          "err | TTFT ratio | TPOT ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    splits = [agg.split_of(r) for r in after]
    for part in ("all", "held out", "shaped"):
        keep = [i for i, sp in enumerate(splits)
                if part == "all" or sp.startswith(part)]
        for arm, reps in (("before", before), ("after", after)):
            cells = " | ".join(map(str, agg.summary([reps[i] for i in keep])))
            print(f"| {part}, {arm} | {cells} |")
    picked: list[int] = []
    for i, r in enumerate(rows):  # one per (GPU, ISL) first
        if (r["system"], r["isl"]) not in {(rows[j]["system"], rows[j]["isl"]) for j in picked}:
            picked.append(i)
    print("\n| row | measured TTFT / TPOT ms | before | after |")
    print("|---|---|---|---|")
    for i in picked[:n]:
        old, new = before[i], after[i]
        print(f"| {old.label} | {_ms(old.measured_ttft_ms, old.measured_tpot_ms)} | "
              f"{_ms(old.ttft_ms, old.tpot_ms)} | {_ms(new.ttft_ms, new.tpot_ms)} |")
    print(f"CPU {time.process_time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
