"""`python -m tests.benches.trtctx68`: section 3j's TensorRT-LLM rows replayed with each role's
pool at its recipe's free_gpu_memory_fraction and with the cache transceiver's one-at-a-time
transfers per rank on each end (issue 29; dis3trt68's FINDING items 1 and 3-4), before -> after,
by row class. Every 3j row was read before (dis3j67, dis3trt68, trtctx62, trtttft61, trtdis57):
all SHAPED, none held out; section 4 has no TensorRT-LLM row.

DECISION (committed before any row was replayed with the rules)

The two rules follow TensorRT-LLM's code and the recipes, so they land whichever way the figures
move. What is expected, from dis3trt68's measured-rate reading (not from a replay):
(a) Each role's pool at its recipe's fraction (context 0.1-0.85, generation 0.7-0.9 in the
    recipe file; the generator's template 0.80 on both roles of the unmatched rows). The context
    pool bounds admission only through the prompts it holds until their sends end, a bound
    dis3trt68 put at most 0.45 of the pool on 23 of 24 matched low rows: expected to move no
    TTFT but h100 cfg503 c154's (1.77 of the pool: up). The generation pool bounds the seats at
    the I + O reservation: rows whose recipe fraction is below 0.9 may lose seats (TTFT up
    where users per rank exceed them); no TPOT change elsewhere.
(b) One transfer at a time per context rank and per generation rank (or TP server): at the
    measured rates the ends are at most a sixth busy (dis3trt68 item 1), so the wait is a few
    per cent of a transfer; expected: TTFT up by under 5 % on every row but the 8k-prompt B200 /
    H200 rows with TP generation servers (cfg553-class: up to ~20 %), TPOT unchanged.
So the 3j TTFT ratios are expected to rise slightly, the low class (TTFT ratio below 0.75) to
stay low: these rules are not its cause.

RESULT (measured after the decision above; `--rows low` replays each rule alone on dis3trt68's
30 rows, 8.7 min; `--rows all --after-only` the 123 replayed rows with both rules, before read
from the page's 3j table at this branch's base, the same figures as the row function's, 9 min).
All SHAPED.

- Section 3j, 123 rows: inside [0.75, 1.33] both 62 -> 62, TTFT 68 -> 68, TPOT 97 -> 97;
  median ratio TTFT 0.93 -> 0.93, TPOT 1.06 -> 1.06. Recipe-matched 106: unchanged counts
  (56 / 62 / 84), medians 0.93 / 1.12 both; generator (unmatched) 17: unchanged (6 / 6 / 13),
  0.84 / 0.91. ISL 1,024 (68): median TTFT 0.86 -> 0.87; ISL 8,192 (55): 1.02 -> 1.02.
- dis3trt68's 30 low rows: none enters the band; median TTFT 0.59 -> 0.60, TPOT 0.92 -> 0.92.
  The fractions alone move none of the 30 (h100 cfg503 c154 included: the context pool at 0.3
  holds two 8,192-token prompts, and the simulation holds a prompt only from its step to its
  send's end, never two at once there; the prompts dis3trt68 item 4 counted wait for a
  generation seat, which the simulation grants after the transfer: disagg_flow (c)). The
  serial transfers alone move 8 of them up 0.9-3.0 % of the ratio (b200 cfg553 c128 0.560 ->
  0.576, h200 cfg590 c288 0.560 -> 0.577).
- 33 rows move by 0.005 or more in a ratio (the table `--rows all --after-only` prints). TTFT
  up on 30, by 0.1-5.6 % (b200 fp4 cfg320 8k c50 1.202 -> 1.269, h100 cfg494 c9 0.815 ->
  0.856, b200 fp8 cfg661 c32 0.875 -> 0.915; b200 fp8 8k cfg553 / cfg554 / cfg669, h200 cfg590,
  gb200 cfg388, gb300 cfg392 / cfg417 / cfg412, h100 cfg494, h200 cfg301); down on two (gb200 fp4
  cfg388 c44 1.700 -> 1.661, h200 cfg347 c48 1.030 -> 1.019). Split by rule where replayed
  (the 30 low rows, cfg320 c50, cfg392 c24, cfg494 c9, cfg388 c44, cfg347 c48): every one of
  these moves from the serial transfers alone, the fractions alone moving none; the transfers
  are 13-100 ms, so the larger moves are the closed loop re-phased (a resend missing a
  lockstep context step), not queueing alone. The one large move: h200 fp8 8k cfg334 c512, an
  unmatched row at the generator's 0.80 (the fraction alone: checked): its generation pool's
  I + O seats fall to 42 a rank (336 over 8 DP ranks for 512 users), TTFT ratio 4.116 ->
  5.660, TPOT 0.842 -> 0.820. No other TPOT ratio moves more than 0.002.
As expected: small, mostly upward TTFT moves, none into or out of the band; the one large move
is the generator's 0.80 on an unmatched row, whose recipe (and so whose real fraction) is
unknown.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path

from tests.benches import dis3trt68
from tests.benches.disagg_rows import (
    BAND,
    PREFIX,
    Replay,
    prospective_rows,
    replay,
    trt_context_recipe,
)
from tests.benches.disagg_trtllm import full_rows

ROOT = Path(__file__).resolve().parents[2]
# The replays compared, as `replay`'s switches: the page's (before trtctx68), each rule alone,
# both (the default since trtctx68).
SETTINGS = {
    "before": {"recipe_fraction": False, "serial_transfers": False},
    "fraction": {"serial_transfers": False},
    "serial": {"recipe_fraction": False},
    "after": {},
}


def _in(x: float | None) -> bool:
    return x is not None and BAND[0] <= x <= BAND[1]


def summary(rows: list[Replay]) -> str:
    """Inside the band (both, TTFT, TPOT) and the median ratios of the replayed `rows`."""
    done = [r for r in rows if r.ratios is not None]
    if not done:
        return "none replayed"
    tt = [r.ratios[0] for r in done if r.ratios]
    tp = [r.ratios[1] for r in done if r.ratios]
    return (f"{len(done)} rows: both {sum(r.inside for r in done)}, TTFT "
            f"{sum(_in(x) for x in tt)}, TPOT {sum(_in(x) for x in tp)} inside; median TTFT "
            f"{statistics.median(tt):.2f}, TPOT {statistics.median(tp):.2f}")


CLASSES: dict[str, Callable[[dict[str, str], Replay], bool]] = {
    "all": lambda row, rep: True,
    "recipe matched": lambda row, rep: trt_context_recipe(row) is not None,
    "generator (unmatched)": lambda row, rep: trt_context_recipe(row) is None,
    "dis3trt68's low rows": lambda row, rep: row["id"] in dis3trt68.LOW_ROWS,
    "ISL 8,192": lambda row, rep: row["isl"] == "8192",
    "ISL 1,024": lambda row, rep: row["isl"] == "1024",
}


def page_replays(rows: list[dict[str, str]]) -> list[Replay]:
    """The page's replay (before trtctx68) of `rows`, read from examples/disagg-bench.md's 3j
    table (`| row | layout and load | measured TTFT / TPOT ms | kvplan TTFT / TPOT ms | ...`):
    the row function with both switches off gives the same figures (checked on the 30 low
    rows), at no replay's cost."""
    text = (ROOT / "examples" / "disagg-bench.md").read_text()
    start = text.index("### 3j.")
    found: dict[str, tuple[float, float]] = {}
    for line in text[start:text.index("\n## 4.", start)].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and " / " in cells[3] and cells[0].startswith(("dsr1", "kimi")):
            ttft, tpot = (float(x.replace(",", "")) for x in cells[3].split(" / "))
            found[cells[0]] = (ttft, tpot)
    out = []
    for r in rows:
        ttft, tpot = found.get(r["id"], (None, None))
        out.append(Replay(id=PREFIX + r["id"], label="", measured_ttft_ms=float(
            r["silicon_ttft_ms"]), measured_tpot_ms=float(r["silicon_tpot_ms"]),
            concurrency=None, input_len=int(r["isl"]), output_len=int(r["osl"]), ttft_ms=ttft,
            tpot_ms=tpot, why_not="" if ttft is not None else "not on the page's 3j table"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", choices=("low", "rest", "all"), default="low",
                    help="dis3trt68's 30 low rows, the others of section 3j, or all")
    ap.add_argument("--both-only", action="store_true",
                    help="replay before and after only (each rule alone: not run)")
    ap.add_argument("--after-only", action="store_true",
                    help="replay after only, before read from the page's 3j table")
    args = ap.parse_args()
    full = set(full_rows())
    low = set(dis3trt68.LOW_ROWS)
    rows = [r for r in prospective_rows() if PREFIX + r["id"] in full
            and (args.rows == "all" or (r["id"] in low) == (args.rows == "low"))]
    names = ("before", "after") if args.both_only or args.after_only else tuple(SETTINGS)
    runs = {name: [replay(r, prospective=True, **SETTINGS[name]) for r in rows]
            for name in names if not (args.after_only and name == "before")}
    if args.after_only:
        runs["before"] = page_replays(rows)
    split = "fraction" in runs  # each rule alone was replayed
    print(f"rows: {len(rows)} (section 3j, all SHAPED)")
    for cls, keep in CLASSES.items():
        idx = [i for i, r in enumerate(rows) if keep(r, runs["before"][i])]
        if not idx:
            continue
        print(f"\n{cls}:")
        for name in names:
            print(f"  {name}: {summary([runs[name][i] for i in idx])}")
    alone = " -> fraction / serial" if split else ""
    print(f"\nRows whose TTFT or TPOT ratio moved by 0.005 or more:\n\n| row | TTFT ratio "
          f"before{alone} -> after | TPOT ratio before -> after |\n|---|---|---|")
    for i, r in enumerate(rows):
        b, a = runs["before"][i].ratios, runs["after"][i].ratios
        if b is None or a is None:
            continue
        if abs(a[0] - b[0]) < 0.005 and abs(a[1] - b[1]) < 0.005:
            continue
        mid = "".join(f" -> {x[0]:.3f}" if x else " -> -" for x in (
            (runs["fraction"][i].ratios, runs["serial"][i].ratios) if split else ()))
        print(f"| {r['id']} | {b[0]:.3f}{mid} -> {a[0]:.3f} | {b[1]:.3f} -> {a[1]:.3f} |")


if __name__ == "__main__":
    main()
