"""mtprows67's evaluation (issue 30): the aggregated replay before -> after refusing the rows
two InferenceX configs could have produced and the speculative-decoding configs' rows
(tests.benches.aiconfig_agg_configs, REFUSE_AMBIGUOUS; rule frozen at 164007f0 before this
ran), on aggflags67's subsets (tests.benches.aggflags67_eval: FIXED, every 12th replayable
InferenceX row with a known script at the page's fixed lengths; CLIENT, every 3rd of
clientsec's under InferenceX's client workload), both arms with the scripts' flags (the page).

`counts`: every replayable InferenceX row by engine / GPU: how many the rule refuses
(ambiguous; one speculative config), how many no config's space holds (not refused), held out
and shaped apart (aiconfig_agg_runs.shaped_rows). No replay.

A refusal comes before the run, so the rows kept replay the same in both arms: the figures
move only by the rows that leave. Each line: rows replayed, both inside, TTFT inside, median
|TTFT err|, |TPOT err|, median TTFT / TPOT ratio, refusals, before -> after (each arm over the
rows it replays), and the left rows' own figures before.

Run: python -m tests.benches.mtprows67_eval [counts] [fixed] [client]
"""

from __future__ import annotations

import sys
from collections import Counter
from functools import partial

from tests.benches import aggflags67_eval as flags_eval
from tests.benches import aiconfig_agg_configs as configs
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_agg_scripts as scripts
from tests.benches.agg_arms import Pair, print_table, ratio_cells, replay_pairs, split
from tests.benches.disagg_rows import Replay


def replay_arm(row: dict[str, str], refuse: bool, client: bool) -> Replay:
    """The row replayed with REFUSE_AMBIGUOUS `refuse` (the page's flags; restored)."""
    was = configs.REFUSE_AMBIGUOUS
    configs.REFUSE_AMBIGUOUS = refuse
    try:
        return flags_eval.replay_arm(row, flags=True, client=client)
    finally:
        configs.REFUSE_AMBIGUOUS = was


def cells(part: list[Replay]) -> list[str]:
    ratios = [x for r in part if (x := r.ratios)]
    if not ratios:
        return ["0", "-", "-", "-", "-", "-", "-"]
    return [str(len(ratios)), *ratio_cells(ratios)]


def line(name: str, pairs: list[Pair]) -> str:
    before = [b for b, _ in pairs]
    after = [a for _, a in pairs]
    left = [b for b, a in pairs if b.replayed and not a.replayed]
    moved = [f"{x} -> {y}" for x, y in zip(cells(before), cells(after), strict=True)]
    refused = (sum(not r.replayed for r in before), sum(not r.replayed for r in after))
    return (f"| {name} | " + " | ".join(moved) + f" | {refused[0]} -> {refused[1]} | "
            + " / ".join(cells(left)) + " |")


HEAD = ("| rows | replayed | both inside | TTFT inside | median TTFT err | median TPOT err | "
        "median TTFT ratio | median TPOT ratio | refusals | left rows before (n / both / "
        "TTFT in / TTFT err / TPOT err / TTFT ratio / TPOT ratio) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|")


def table(title: str, rows: list[dict[str, str]], client: bool) -> None:
    pairs = replay_pairs(rows, partial(replay_arm, refuse=False, client=client),
                         partial(replay_arm, refuse=True, client=client))
    shaped = print_table(title, pairs, line, head=HEAD)
    print("\nrows refused after:\n")
    for b, a in pairs:
        if b.replayed and not a.replayed:
            print(f"- {b.id.removeprefix(agg.PREFIX)} ({split(b, shaped)}): measured "
                  f"{b.measured_ttft_ms:,.1f} / {b.measured_tpot_ms:.2f}, before "
                  f"{b.ttft_ms:,.1f} / {b.tpot_ms:.2f}: {a.why_not[:90]}")


def counts() -> None:
    shaped = agg.shaped_rows()
    c: Counter[tuple[str, str, str, str]] = Counter()
    for r in scripts.replayable_inferencex():
        kind = ("ambiguous" if configs.why_ambiguous(r) else "speculative"
                if configs.why_speculative(r) else "no config" if not configs.candidates(r)
                else "kept")
        where = "shaped" if agg.PREFIX + r["id"] in shaped else "held out"
        c[(r["backend"], r["system"], where, kind)] += 1
        c[(r["backend"], r["system"], where, "rows")] += 1
    print("| engine | GPU | split | rows | ambiguous | speculative | no config (kept) |")
    print("|---|---|---|---:|---:|---:|---:|")
    for key in sorted({k[:3] for k in c}):
        print(f"| {' | '.join(key)} | " + " | ".join(
            str(c[(*key, k)]) for k in ("rows", "ambiguous", "speculative", "no config")) + " |")
    total = {k: sum(v for kk, v in c.items() if kk[3] == k)
             for k in ("rows", "ambiguous", "speculative", "no config")}
    print(f"| all | | | {total['rows']} | {total['ambiguous']} | {total['speculative']} | "
          f"{total['no config']} |")


def main() -> None:
    parts = sys.argv[1:] or ["counts", "fixed", "client"]
    if "counts" in parts:
        counts()
    if "fixed" in parts:
        table("Fixed lengths (the page's replay)", flags_eval.fixed_rows(), client=False)
    if "client" in parts:
        table("InferenceX's client workload (CLIENT_WORKLOAD)", flags_eval.client_subset(),
              client=True)


if __name__ == "__main__":
    main()
