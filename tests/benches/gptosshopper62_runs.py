"""Re-evaluation of task gptosshopper62 (issue 30): aiconfigurator's aggregated vLLM rows of
gpt-oss-120b (tests.benches.aiconfig_agg_runs), replayed with the MXFP4 MoE kernel the rows'
servers ran. The rows are InferenceX's runs (aiconfig_harness.HARNESS); its H100 / H200 scripts
export VLLM_MXFP4_USE_MARLIN=1 (SemiAnalysisAI/InferenceX at aiconfig_harness.INFERENCEX_COMMIT,
benchmarks/single_node/gptoss_fp4_h100.sh:29 and gptoss_fp4_h200.sh:47; set since the
2026-01-02 v0.13.0 update, 4e52ed4c6, and still set at the v0.18.0 update of 2026-03-27,
cec542a9a), which vLLM 0.15.1-0.19.0 follow over their Triton default on SM 9.0
(kvplan.engines.vllm.mxfp4_backend). The frozen bench runs every flag at its default, so its
Hopper rows priced Triton's matmul_ogs (weights and exact FLOPs); the rule frozen at bfe50803
lets `--mxfp4-backend marlin` reach the time model (Marlin's padded rows at Hopper's mma.sync
rate, kvplan.engines.vllm.moe_kernel). The B200 rows (vLLM 0.15.1, FlashInfer's kernels:
gptoss_fp4_b200.sh sets no Marlin) are the controls: the rule must not move them.

Three replays of each row, the bench's closed loop and steady-state means otherwise as frozen:

- frozen: aiconfig_agg_runs.replay (every flag at its default: Triton on Hopper; since
  marlinrow66 the bench's own replay passes the scripts' Marlin, so this arm runs it under
  aiconfig_agg_env.kvplan_defaults);
- marlin: the same with --mxfp4-backend marlin (the scripts' environment, nothing else);
- script (H100 / H200; the B200 rows as `marlin`): marlin and the script's other serve flags
  (config.yaml: no prefix caching, --max-num-batched-tokens 8192, --max-model-len 10,240 on
  H100 and on H200 ISL + OSL + 20 at 1,024 / 1,024, + 200 where ISL or OSL is 8,192;
  --max-num-seqs the row's concurrency;
  --max-cudagraph-capture-size 2048, which kvplan's vLLM step time does not read).

Split: the H100 / H200 rows were read before the rule was written (the issue names two of them
and simulate-bench.md prints their errors): SHAPED, though nothing was fitted on them. The rule
does not move the frozen replay (every flag at its default), so the page's frozen table and
its split column stay as they were; the counterfactual below is what they say of the rule.

Results (first run at fba1d9cb, rule frozen at bfe50803; median predicted / measured TTFT /
TPOT, rows inside [0.75, 1.33] TTFT / TPOT; the record the page prints is
aiconfig_agg_text.GPTOSS_HOPPER_FINDING):

- H100 / H200, 108 rows, frozen -> marlin: 0.74 / 0.94 -> 1.05 / 0.95, inside 53 / 98 ->
  58 / 101; ISL 8,192 (42): 0.64 / 0.86 -> 0.87 / 0.88, inside 9 / 36 -> 28 / 39; ISL 1,024
  (66): 0.98 / 0.99 -> 1.34 / 0.99, inside 44 / 62 -> 30 / 62. `script` = `marlin` on every
  row (the scripts' other flags bind nowhere at these loads).
- B200 controls (6 of 63 replayed, then stopped for CPU): unchanged to the printed digit.
- --harness, 52 rows (ISL 1,024: 25, 8,192: 27): TTFT 0.43 -> 0.50 and 0.34 -> 0.46, TPOT
  1.00 -> 1.01 and 0.91 -> 0.94; no row's TTFT inside in either mode.

Run time: about 20 min for the 108 Hopper rows' three replays and 10 min for --harness, on
the shared 2-core host under load.

A second pass (`--harness`) replays the H100 / H200 rows with 1,024-token outputs at
concurrency <= HARNESS_MAX_CONC under InferenceX's own workload (aiconfig_harness_replay: the
fixed lengths keep the bench's users in step, so a round's prompts queue behind each other), on
the frozen and the marlin setups, every request measured.

Run: python -m tests.benches.gptosshopper62_runs [--json PATH] [--limit N] [--harness]
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import SimSetup, setup
from kvplan.engines.base import Engine
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.aiconfig_agg_env import kvplan_defaults
from tests.benches.aiconfig_agg_loop import row_run
from tests.benches.aiconfig_harness_replay import workload
from tests.benches.disagg_rows import BAND, Replay, stated_concurrency

HOPPER = ("h100_sxm", "h200_sxm")

# The record of its first run: tests.benches.aiconfig_agg_text.GPTOSS_HOPPER_FINDING.
MODES = ("frozen", "marlin", "script")


def rows() -> list[dict[str, str]]:
    """The vLLM gpt-oss-120b rows the frozen bench replays (why_not empty), in file order."""
    return [r for r in agg.rows() if r["backend"] == "vllm" and "gpt-oss" in r["model_path"]
            and not agg.why_not(r)]


def script_context(row: dict[str, str]) -> int:
    """--max-model-len as the row's script writes it (module docstring)."""
    isl, osl = int(row["isl"]), int(row["osl"])
    if row["system"] == "h100_sxm":
        return 10240
    if (isl, osl) == (1024, 1024):
        return isl + osl + 20
    if 8192 in (isl, osl):
        return isl + osl + 200
    return 10240


@cache
def _sim(row_id: str, mode: str) -> SimSetup:
    row = agg._by_id()[agg.PREFIX + row_id]
    config, kv_dtype, _ = agg.AGG_MODELS[(row["model_path"], row["precision"])]
    spec = agg._spec(config)
    tp = agg.layout(row)[0]
    extra: dict[str, object] = {"mxfp4_backend": "marlin"} if row["system"] in HOPPER else {}
    context = int(row["isl"]) + int(row["osl"]) + agg.CONTEXT_PAD
    if mode == "script" and row["system"] in HOPPER:
        conc = stated_concurrency(row)
        context = script_context(row)
        extra |= {"max_num_batched_tokens": 8192, "max_num_seqs": conc, "prefix_caching": False}
    inputs = estimate_inputs(spec, context=context, kv_dtype=kv_dtype, engine=Engine.vllm,
                             gpu=agg.GPUS[row["system"]], tp=tp, engine_version=agg.release(row),
                             **extra)  # type: ignore[arg-type]
    return setup(spec, inputs)[0]


def replay(row: dict[str, str], mode: str) -> Replay:
    if mode == "frozen":  # every flag at kvplan's default (marlinrow66 made Marlin the bench's)
        with kvplan_defaults():
            return agg.replay(row)
    sim: Callable[[], SimSetup] = lambda: _sim(row["id"], mode)  # noqa: E731
    return agg.replay_on(row, sim, f"gptosshopper62-{mode}")


def _err(r: Replay) -> tuple[float, float] | None:
    return (r.ratios[0], r.ratios[1]) if r.ratios else None


def summary(part: list[dict[str, object]], mode: str) -> str:
    got = [p[mode] for p in part if p[mode] is not None]
    if not got:
        return "- | - | - | - | -"
    ttft = [g[0] for g in got]  # type: ignore[index]
    tpot = [g[1] for g in got]  # type: ignore[index]

    def inside(xs: list[float]) -> int:
        return sum(BAND[0] <= x <= BAND[1] for x in xs)
    return (f"{len(got)} | {inside(ttft)} / {inside(tpot)} | "
            f"{statistics.median(abs(x - 1) for x in ttft):.1%} / "
            f"{statistics.median(abs(x - 1) for x in tpot):.1%} | "
            f"{statistics.median(ttft):.2f} / {statistics.median(tpot):.2f}")


HARNESS_MAX_CONC = 16  # the InferenceX-workload pass: 10 x C requests each, CPU-bound above


def harness(row: dict[str, str], mode: str) -> tuple[float, float] | None:
    """(mean TTFT ms, mean TPOT ms) over every request of InferenceX's own workload for the row
    (tests.benches.aiconfig_harness_replay.workload: 10 x C requests, lengths uniform in [0.8,
    1] x ISL / OSL, every request measured) on the `mode` setup; None where kvplan refuses."""
    conc = stated_concurrency(row)
    assert conc is not None
    if mode == "frozen":
        with kvplan_defaults():
            sim = agg.row_setup(row, agg.release(row) or "")
    else:
        sim = _sim(row["id"], mode)
    try:
        result = row_run(row, sim, workload(int(row["isl"]), int(row["osl"]), conc))
    except KvplanError:
        return None
    done = list(result.finished)
    return (statistics.fmean((r.first_token_s - r.sent_s) * 1e3 for r in done),
            statistics.fmean((r.finish_s - r.first_token_s) / (r.output_len - 1) * 1e3
                             for r in done if r.output_len > 1))


def main_harness() -> None:
    """The H100 / H200 rows with 1,024-token outputs at concurrency <= HARNESS_MAX_CONC under
    InferenceX's workload, frozen and marlin setups: predicted / measured."""
    part = [r for r in rows() if r["system"] in HOPPER and r["osl"] == "1024"
            and (stated_concurrency(r) or 0) <= HARNESS_MAX_CONC]
    print("| row | GPU | TP | ISL | conc | measured TTFT / TPOT | frozen | marlin |")
    print("|---|---|---:|---:|---:|---|---|---|")
    got: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for row in part:
        meas = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
        cells = []
        for mode in ("frozen", "marlin"):
            h = harness(row, mode)
            if h is None:
                cells.append("refused")
                continue
            ratio = h[0] / meas[0], h[1] / meas[1]
            got.setdefault((row["isl"], mode), []).append(ratio)
            cells.append(f"{ratio[0]:.2f} / {ratio[1]:.2f}")
        print(f"| {row['id'][-40:]} | {row['system']} | {agg.layout(row)[0]} | {row['isl']} | "
              f"{stated_concurrency(row)} | {meas[0]:.1f} / {meas[1]:.2f} | "
              + " | ".join(cells) + " |", flush=True)
    print("\n| ISL | mode | rows | median TTFT ratio | median TPOT ratio | TTFT inside |")
    print("|---:|---|---:|---:|---:|---:|")
    for (isl, mode), rs in sorted(got.items()):
        print(f"| {isl} | {mode} | {len(rs)} | {statistics.median(r[0] for r in rs):.2f} | "
              f"{statistics.median(r[1] for r in rs):.2f} | "
              f"{sum(BAND[0] <= r[0] <= BAND[1] for r in rs)} |")


def main() -> None:
    if "--harness" in sys.argv:
        main_harness()
        return
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
    # The Hopper rows first, then the B200 controls.
    part = sorted(rows(), key=lambda r: r["system"] not in HOPPER)[:limit]
    out: list[dict[str, object]] = []
    print("| row | GPU | TP | ISL/OSL | conc | measured TTFT / TPOT | " +
          " | ".join(f"{m} TTFT / TPOT ratio" for m in MODES) + " |")
    print("|---|---|---:|---|---:|---|" + "---|" * len(MODES))
    for row in part:
        rec: dict[str, object] = {"id": row["id"], "system": row["system"],
                                  "tp": agg.layout(row)[0], "isl": row["isl"],
                                  "osl": row["osl"], "conc": stated_concurrency(row),
                                  "measured": (float(row["silicon_ttft_ms"]),
                                               float(row["silicon_tpot_ms"]))}
        for mode in MODES:
            if mode == "script" and row["system"] not in HOPPER:  # the same setup as marlin
                rec[mode], rec[mode + "_ms"] = rec["marlin"], rec["marlin_ms"]
                continue
            r = replay(row, mode)
            rec[mode] = _err(r)
            rec[mode + "_ms"] = (r.ttft_ms, r.tpot_ms)
        out.append(rec)
        cells = " | ".join("-" if rec[m] is None else
                           f"{rec[m][0]:.2f} / {rec[m][1]:.2f}"  # type: ignore[index]
                           for m in MODES)
        meas = rec["measured"]
        print(f"| {row['id'][-40:]} | {row['system']} | {rec['tp']} | {row['isl']}/{row['osl']} "
              f"| {rec['conc']} | {meas[0]:.1f} / {meas[1]:.2f} | {cells} |",  # type: ignore[index]
              flush=True)
    print("\nPer group (rows replayed | TTFT / TPOT inside [0.75, 1.33] | median |err| TTFT / "
          "TPOT | median ratio TTFT / TPOT):\n")
    print("| group | split | " + " | ".join(
        f"{m}: rows | inside | median err | median ratio" for m in MODES) + " |")
    print("|---|---|" + "---|---|---|---|" * len(MODES))
    groups = [("H100 / H200, vLLM 0.18.0", "shaped", lambda p: p["system"] in HOPPER),
              ("  ISL 1,024", "shaped", lambda p: p["system"] in HOPPER and p["isl"] == "1024"),
              ("  ISL 8,192", "shaped", lambda p: p["system"] in HOPPER and p["isl"] == "8192"),
              ("B200, vLLM 0.15.1 (control)", "held out",
               lambda p: p["system"] not in HOPPER)]
    for name, split, pick in groups:
        sel = [p for p in out if pick(p)]
        print(f"| {name} | {split} | " + " | ".join(summary(sel, m) for m in MODES) + " |")
    if "--json" in sys.argv:
        Path(sys.argv[sys.argv.index("--json") + 1]).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
