"""aggflags67's evaluation (issue 30): the aggregated section's replay before -> after passing
the InferenceX scripts' flags (tests.benches.aiconfig_agg_scripts), on subsets chosen and
committed before either arm was run (never the whole page):

- FIXED: the replayable InferenceX rows with a known script, in file order, every STRIDE-th
  (from the first), at the page's fixed lengths (aiconfig_agg_runs.replay).
- CLIENT: the rows of the clientsec subsection (aiconfig_agg_client_rows.selection()) with a
  known script, every CLIENT_STRIDE-th, under InferenceX's client workload (CLIENT_WORKLOAD).

Before: SCRIPT_FLAGS off (the page at stop 66: the MXFP4 kernel of aiconfig_agg_env only);
after: on. Each line: rows replayed in both arms, both inside, TTFT inside, median |TTFT err|,
|TPOT err|, median TTFT / TPOT ratio, before -> after; split held out / shaped
(aiconfig_agg_runs.shaped_rows) and by backend. CPU time (this process and its workers) on
stderr.

The `balance` part (run after the first evaluation, once the attention-DP balance was added
to the options passed): every replayable row it moves, the flags without -> with it.

Run: python -m tests.benches.aggflags67_eval [fixed] [client] [balance]
"""

from __future__ import annotations

import sys
from functools import partial

from tests.benches import aiconfig_agg_client_rows as client_rows
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_agg_scripts as scripts
from tests.benches.agg_arms import cpu_s, fmt, print_table, replay_pairs, split
from tests.benches.disagg_rows import PREFIX, Replay

STRIDE = 12
CLIENT_STRIDE = 3


def fixed_rows() -> list[dict[str, str]]:
    return [r for r in scripts.replayable_inferencex() if scripts.scripts_of(r)][::STRIDE]


def client_subset() -> list[dict[str, str]]:
    return [r for r in client_rows.selection() if scripts.scripts_of(r)][::CLIENT_STRIDE]


def replay_arm(row: dict[str, str], flags: bool, client: bool, balance: bool = True
               ) -> Replay:
    """The row replayed with SCRIPT_FLAGS `flags`, CLIENT_WORKLOAD `client` and
    aiconfig_agg_scripts.ADP_BALANCE `balance` (restored)."""
    was = agg.SCRIPT_FLAGS, agg.CLIENT_WORKLOAD, scripts.ADP_BALANCE
    agg.SCRIPT_FLAGS, agg.CLIENT_WORKLOAD, scripts.ADP_BALANCE = flags, client, balance
    try:
        return agg.replay(row)
    finally:
        agg.SCRIPT_FLAGS, agg.CLIENT_WORKLOAD, scripts.ADP_BALANCE = was


def balance_rows() -> list[dict[str, str]]:
    """Every replayable row whose script sets attention_dp_config enable_balance under the
    row's attention DP (the `balance` part: the addition after the first evaluation)."""
    was = scripts.ADP_BALANCE
    scripts.ADP_BALANCE = True
    try:
        return [r for r in scripts.replayable_inferencex()
                if scripts.script_options(r).get("adp_balance") and agg.layout(r)[1] > 1]
    finally:
        scripts.ADP_BALANCE = was


def table(title: str, rows: list[dict[str, str]], client: bool, balance: bool = False
          ) -> None:
    """Before -> after: SCRIPT_FLAGS off -> on; `balance`: on without -> with the
    attention-DP balance."""
    first = (partial(replay_arm, flags=True, client=client, balance=False) if balance
             else partial(replay_arm, flags=False, client=client))
    pairs = replay_pairs(rows, first, partial(replay_arm, flags=True, client=client),
                         cpu_label=f"{title}: ")
    shaped = print_table(title, pairs)
    print("\nper row (TTFT / TPOT ms: measured | before | after):\n")
    for b, a in pairs:
        print(f"- {b.id.removeprefix(PREFIX)} ({split(b, shaped)}): "
              f"{b.measured_ttft_ms:,.1f} / {b.measured_tpot_ms:.2f} | {fmt(b)} | {fmt(a)}"
              + (f" ({a.why_not})" if not a.replayed else ""))


def main() -> None:
    parts = sys.argv[1:] or ["fixed", "client"]
    if "fixed" in parts:
        start = cpu_s()
        table("Fixed lengths (the page's replay)", fixed_rows(), client=False)
        print(f"fixed: {cpu_s() - start:.1f} s CPU", file=sys.stderr)
    if "balance" in parts:
        table("The attention-DP balance (flags without -> with it; fixed lengths)",
              balance_rows(), client=False, balance=True)
    if "client" in parts:
        start = cpu_s()
        table("InferenceX's client workload (CLIENT_WORKLOAD)", client_subset(), client=True)
        print(f"client: {cpu_s() - start:.1f} s CPU", file=sys.stderr)


if __name__ == "__main__":
    main()
