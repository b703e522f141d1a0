"""trtpad67's evaluation (issues 29/30): the aggregated section's TensorRT-LLM rows whose script
sets cuda_graph_config.enable_padding, replayed before -> after padding a generation-only step
to the next captured batch size (kvplan.engines.trtllm.engine `decode_graph_sizes`), on a
subset chosen and committed before either arm was run (never the whole page):

- ROWS: the replayable InferenceX rows with a known script (aiconfig_agg_scripts), backend
  trtllm, whose script options set cuda_graph_padding, in file order, every STRIDE-th (from
  the first), at the page's fixed lengths (aiconfig_agg_runs.replay, SCRIPT_FLAGS on).

Before: the rule as it was (`decode_graph_sizes` returning no sizes: no step padded; the
pool and everything else as after); after: the committed rule. Output: aggflags67_eval's
table (both inside, TTFT inside, median errors and ratios), split held out / shaped, and per
row. CPU time on stderr.

- WAIT (the `wait` part, added with the batch-wait rule, subset fixed before its run): every
  replayable InferenceX row with a known script whose batch_wait_timeout_iters /
  batch_wait_max_tokens_ratio lines hold for it (dsr1_fp8_b200_trt.sh's DELAY_BATCHING,
  1,024 / 1,024 from C 64: 8 rows), replayed without -> with the script's values
  (TrtllmOptionsSim.batch_wait; the page's replay does not pass them: the `kvplan` column of
  the flags table is empty for them, so this part patches the set-up's default options).

The disaggregated section's TensorRT-LLM rows (3j, tests.benches.disagg_trtllm) pass no
enable_padding (TrtllmOptions' default, off), so the rule moves none of them.

Run: python -m tests.benches.trtpad67_eval [pad] [wait]

Record (one run each, rules frozen at 54ded530 (padding) and 121cd507 (batch wait), subsets
committed before their runs; medians over the rows replayed in both arms):
- pad, 11 rows (10 replayed, 1 refused in both: MoE TP x EP at 1.1.0rc2.post2; 10 shaped, the
  1 held out refused): both inside 1 -> 1, TTFT inside 3 -> 3, |TTFT err| 40.2 -> 40.2 %,
  |TPOT err| 43.5 -> 43.5 %, TTFT ratio 1.40 -> 1.40, TPOT 1.44 -> 1.44; no row's TTFT moves
  more than 0.3 ms, no TPOT 0.01 ms: the rows' concurrencies (4 - 128) are captured sizes, so
  only the ramp and drain steps pad. CPU 2.8 + 2.6 s.
- wait, 8 rows (all shaped, two configurations: DeepSeek-R1 FP8 B200 TP8 1k/1k at C 64 and
  C 128, each four times): both inside 4 -> 4, TTFT inside 6 -> 6, |TTFT err| 20.3 -> 19.6 %,
  |TPOT err| 32.0 -> 32.0 %, TTFT ratio 0.90 -> 0.92, TPOT 1.32 -> 1.32 (TTFT +5.4 ms at C 128,
  +15.1 ms at C 64). CPU 3.5 + 3.6 s.
"""

from __future__ import annotations

import sys
from functools import partial

from kvplan.analysis.simulate import engine_setups
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmOptionsSim
from kvplan.engines.trtllm.batch_wait import BatchWait
from kvplan.engines.trtllm.engine import TrtllmEngine
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_agg_scripts as scripts
from tests.benches.agg_arms import Arm, fmt, print_table, replay_pairs, split
from tests.benches.disagg_rows import PREFIX, Replay

STRIDE = 20


def rows() -> list[dict[str, str]]:
    return [r for r in scripts.replayable_inferencex()
            if r["backend"] == "trtllm" and scripts.scripts_of(r)
            and scripts.script_options(r).get("cuda_graph_padding")][::STRIDE]


def _unpadded(self: TrtllmEngine, spec: object, inputs: object) -> tuple[int, ...]:
    return ()  # the rule before trtpad67: no step padded


def replay_arm(row: dict[str, str], padded: bool) -> Replay:
    """The row replayed with the scripts' flags, its generation-only steps padded or not
    (the class's rule patched in this worker; the set-up cache cleared around it)."""
    was = agg.SCRIPT_FLAGS, TrtllmEngine.decode_graph_sizes
    agg.SCRIPT_FLAGS = True
    if not padded:
        TrtllmEngine.decode_graph_sizes = _unpadded  # type: ignore[method-assign,assignment]
    agg._setup.cache_clear()
    try:
        return agg.replay(row)
    finally:
        agg.SCRIPT_FLAGS, TrtllmEngine.decode_graph_sizes = was  # type: ignore[method-assign]
        agg._setup.cache_clear()


def batch_wait(row: dict[str, str]) -> BatchWait | None:
    """The script's batch_wait values where their lines hold for the row (None: none)."""
    got = {t["name"]: t["value"] for t in scripts.flags_of(row)
           if t["name"] in ("batch_wait_timeout_iters", "batch_wait_max_tokens_ratio")
           and (not t["when"] or scripts._holds(t["when"], scripts.variables(row, t))
                is not False)}
    if not got:
        return None
    return BatchWait(timeout_iters=int(got.get("batch_wait_timeout_iters", 0)),
                     max_tokens_ratio=float(got.get("batch_wait_max_tokens_ratio", 0.0)))


def wait_rows() -> list[dict[str, str]]:
    return [r for r in scripts.replayable_inferencex()
            if scripts.scripts_of(r) and batch_wait(r) is not None]


def wait_arm(row: dict[str, str], waits: bool) -> Replay:
    """The row replayed (the scripts' flags, padding as committed) with its script's batch
    waiting or without (the set-up's default TrtllmOptionsSim patched in this worker)."""
    was = agg.SCRIPT_FLAGS, engine_setups.TrtllmOptionsSim
    agg.SCRIPT_FLAGS = True
    if waits:
        engine_setups.TrtllmOptionsSim = partial(  # type: ignore[misc]
            TrtllmOptionsSim, batch_wait=batch_wait(row))
    agg._setup.cache_clear()
    try:
        return agg.replay(row)
    finally:
        agg.SCRIPT_FLAGS, engine_setups.TrtllmOptionsSim = was  # type: ignore[misc]
        agg._setup.cache_clear()


def main() -> None:
    parts = sys.argv[1:] or ["pad"]
    if "pad" in parts:
        table(f"TensorRT-LLM rows with enable_padding (every {STRIDE}th)", rows(),
              partial(replay_arm, padded=False), partial(replay_arm, padded=True))
    if "wait" in parts:
        table("TensorRT-LLM rows whose script sets batch waiting (all)", wait_rows(),
              partial(wait_arm, waits=False), partial(wait_arm, waits=True))


def table(title: str, part: list[dict[str, str]], first: Arm, second: Arm) -> None:
    pairs = replay_pairs(part, first, second, cpu_label="")
    shaped = print_table(title, pairs, by_backend=False)
    print("\nper row (TTFT / TPOT ms: measured | before | after):\n")
    for b, a in pairs:
        r = agg.row_of(b)
        print(f"- {b.id.removeprefix(PREFIX)} ({split(b, shaped)}; "
              f"{r['model_path']} {r['system']} conc {r.get('batch_size', '?')}): "
              f"{b.measured_ttft_ms:,.1f} / {b.measured_tpot_ms:.2f} | {fmt(b)} | {fmt(a)}"
              + (f" ({a.why_not})" if not a.replayed else ""))


if __name__ == "__main__":
    main()
