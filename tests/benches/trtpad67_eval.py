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

The disaggregated section's TensorRT-LLM rows (3j, tests.benches.disagg_trtllm) pass no
enable_padding (TrtllmOptions' default, off), so the rule moves none of them.

Run: python -m tests.benches.trtpad67_eval
"""

from __future__ import annotations

import sys
from functools import partial

from kvplan.engines.trtllm.engine import TrtllmEngine
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_agg_scripts as scripts
from tests.benches.aggflags67_eval import _cpu, fmt, line
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


def main() -> None:
    part = rows()
    start = _cpu()
    before = list(agg.replay_all(partial(replay_arm, padded=False), part))
    middle = _cpu()
    after = list(agg.replay_all(partial(replay_arm, padded=True), part))
    print(f"before {middle - start:.1f} s CPU, after {_cpu() - middle:.1f} s", file=sys.stderr)
    pairs = list(zip(before, after, strict=True))
    shaped = agg.shaped_rows()
    print(f"\n### TensorRT-LLM rows with enable_padding (every {STRIDE}th): {len(part)} rows\n")
    print("| rows | both replayed | both inside | TTFT inside | median TTFT err | "
          "median TPOT err | median TTFT ratio | median TPOT ratio | refusals |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    print(line("all", pairs))
    for split, keep in (("held out", lambda p: p[0].id not in shaped),
                        ("shaped", lambda p: p[0].id in shaped)):
        print(line(f"split {split}", [p for p in pairs if keep(p)]))
    print("\nper row (TTFT / TPOT ms: measured | before | after):\n")
    for b, a in pairs:
        r = agg.row_of(b)
        print(f"- {b.id.removeprefix(PREFIX)} ({'shaped' if b.id in shaped else 'held out'}; "
              f"{r['model_path']} {r['system']} conc {r.get('batch_size', '?')}): "
              f"{b.measured_ttft_ms:,.1f} / {b.measured_tpot_ms:.2f} | {fmt(b)} | {fmt(a)}"
              + (f" ({a.why_not})" if not a.replayed else ""))


if __name__ == "__main__":
    main()
