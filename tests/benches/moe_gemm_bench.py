"""The routed experts' fitted compute fractions (kvplan.perf.efficiency.MOE_GEMM_FIT /
FP8_MOE_GEMM_FIT, `Efficiency.moe_gemm` / `fp8_moe_gemm`) judged on serving rows with MoE
models: each set's median TTFT and TPOT ratio (kvplan / measured) and median |error| with
kvplan's default beside the same rows with the fitted fractions on every CUDA preset (AMD
presets unchanged: the fit is NVIDIA kernels'). Printed only, on no generated page:

    PYTHONPATH=. python -m tests.benches.moe_gemm_bench [--compare fitted|shape] [sets ...]

sets (default: all): s2r (the sim-to-real study's MoE runs, every stage of its main /
prospective / blind / offload sets), prospective (the MoE runs of prospective30-57), accelmark
(its MoE runs' QPS levels), agg (aiconfigurator's aggregated MoE rows, every AGG_EVERY-th
replayable one in the bench's order: a rule fixed before any was replayed), disagg
(disagg-bench's rows 3a-3b and the frozen prospective ones, 3j among them). The two modes run
in separate processes (the benches cache their engines' setups, built with the efficiency of
their first call). Sets (a) are other publishers' rows; agg and disagg are aiconfigurator's,
the publisher of the kernel tables the fractions were fitted on.

Measured at branch moefit58 (the constants committed at 025ca10b before any of these rows was
replayed with them; kvplan / measured medians and median |error|, default -> fitted):
- s2r, the Mixtral-8x7B / 8x22B stages (prospective, blind, offload; 20 stages): TTFT mean
  0.814 -> 0.982 (18.6 -> 14.3 %), ITL mean 1.005 -> 1.078 (1.7 -> 7.8 %): WORSE on ITL;
- prospective30-57's MoE runs (69, 50 moved), median TTFT 0.333 -> 0.566 (66.7 -> 44.6 %),
  median TPOT 0.633 -> 0.725 (36.9 -> 27.6 %); prospective54's 4 runs TTFT 14.9 -> 24.8 %;
- accelmark: no MoE run (its blind2 runs are Llama / Qwen2.5);
- agg (every 4th replayable MoE row, 362 with ratios, 283 moved): TTFT 0.807 -> 0.990 (35.0 ->
  33.8 %), TPOT 1.058 -> 1.065 (15.7 -> 15.7 %); its 266 held-out rows TTFT 0.741 -> 0.965
  (36.5 -> 32.4 %), TPOT 1.036 -> 1.045 (14.5 -> 14.9 %);
- disagg (229 rows with ratios, 120 moved): TTFT 0.627 -> 0.720 (70.0 -> 64.9 %), TPOT
  1.084 -> 1.084 (20.6 -> 21.2 %).
Not the default (the rule set before evaluating: other publishers' rows must not get worse):
the Mixtral stages' ITL does, and the kernel tables show why (examples/moe-op-bench.md, "rows
per expert": Mixtral's few wide experts run near the dense 0.70).

`--compare shape`: the fraction by rows per expert (kvplan.perf.moe_gemm_shape, moeshape59; the
tables committed at e846422e before any of these rows was replayed with them). Measured at
branch moeshape59 (default -> shape; the default's prospective medians moved a little since
moefit58, 66.7 -> 66.5 %):
- s2r (20 Mixtral stages): TTFT 0.814 -> 0.971 (18.6 -> 15.1 %), ITL 1.005 -> 1.072 (1.7 ->
  7.2 %): WORSE on ITL, and five stages saturate (Mixtral-8x7B TP 2 on H100 at the second
  rate: TTFT 94-109x the measured, ITL 1.27-1.28x; the largest TTFT ratio 0.96 -> 109.23),
  which the medians hide. The one fraction (`--compare fitted`, re-run here: its medians as at
  moefit58, 14.3 % and 7.8 %) saturates the same five stages, TTFT 158-183x, ITL 1.29-1.30x;
  its figures above hid that too;
- prospective (69, 50 moved): TTFT 0.335 -> 0.485 (66.5 -> 52.3 %), TPOT 0.639 -> 0.740 (36.4
  -> 28.0 %); prospective54's 4 runs TTFT 14.9 -> 25.1 % (GLM-4.6 on 8 H200s at concurrency
  512: 1.02 -> 1.33);
- agg (aiconfigurator's aggregated MoE rows, every 4th: the publisher of the kernel tables
  the tables were fitted on; 362 with ratios, 289 moved): TTFT 0.807 -> 1.008 (35.0 -> 32.8 %),
  TPOT 1.058 -> 1.065 (15.7 -> 15.8 %); its 266 held-out rows TTFT 0.741 -> 0.989 (36.5 ->
  32.6 %), TPOT 1.036 -> 1.047 (14.5 -> 14.8 %), as the one fraction did (32.4 %, 14.9 %);
- disagg: not run (two modes of 229 rows did not fit the session on 2 shared cores).
Not the default, by the rule above: (a) gets worse (the Mixtral stages' ITL, and prospective54's
TTFT), though (b) alone would pass (TTFT closer, TPOT 0.3 points worse). Mixtral's wide
experts under MoE TP run at 0.53-0.80 at 512-2,048 rows an expert in the H100 kernel tables,
where the table pooled over the narrower experts says 0.34-0.59 (examples/moe-op-bench.md).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from kvplan.perf import efficiency

AGG_EVERY = 4  # the agg set's subsample: every 4th replayable MoE row (fixed before replaying)
SETS = ("s2r", "prospective", "accelmark", "agg", "disagg")
Ratios = dict[str, tuple[float, float]]  # row id -> (TTFT, TPOT) kvplan / measured


# The modes beside kvplan's default: the one fraction per format (moefit58) and the fraction by
# rows per expert (moeshape59, kvplan.perf.moe_gemm_shape).
MODES = {"fitted": {"moe_gemm": efficiency.MOE_GEMM, "fp8_moe_gemm": efficiency.FP8_MOE_GEMM},
         "shape": {"moe_gemm_shape": efficiency.MOE_GEMM_SHAPE}}


@contextmanager
def moe_fitted(mode: str = "fitted") -> Iterator[None]:
    """Every CUDA preset's efficiency with the experts' fractions of `mode` (MODES; the rest
    unchanged)."""
    from kvplan.hardware.gpus import GPUS

    table = efficiency.DEVICE_EFFICIENCY
    saved = dict(table)
    for gpu in GPUS.values():
        if gpu.platform == "cuda":
            table[gpu.name] = replace(table.get(gpu.name, efficiency.DEFAULT_EFFICIENCY),
                                      **MODES[mode])
    try:
        yield
    finally:
        table.clear()
        table.update(saved)


def _s2r() -> Ratios:
    from tests.benches import sim_to_real as s

    records = s.load_records()
    out: Ratios = {}
    for which in ({}, {"prospective": True}, {"blind": True}, {"offload": True}):
        for run in s.load_runs(**which)[1]:
            if s.run_inputs(run)[0].moe is None:
                continue
            sim = s.simulate_run(run)
            for stage, fig in sim.stages.items():
                ttft, itl = (records.get((run.id, stage, k)) for k in ("ttft_mean", "itl_mean"))
                if stage >= 0 and ttft and itl and "ttft_mean" in fig and "itl_mean" in fig:
                    out[f"{run.folder}/{stage}"] = (fig["ttft_mean"] / ttft["measured"],
                                                    fig["itl_mean"] / itl["measured"])
    return out


def _prospective() -> Ratios:
    from kvplan.sources.resolve import load_spec
    from tests.benches import (
        prospective31_runs,
        prospective52_runs,
        prospective53_runs,
        prospective53b_runs,
        prospective54_runs,
        prospective56_runs,
        prospective57_runs,
    )
    from tests.benches import prospective_runs as p

    out: Ratios = {}
    for mod in (p, prospective31_runs, prospective52_runs, prospective53_runs,
                prospective53b_runs, prospective54_runs, prospective56_runs,
                prospective57_runs):
        for run in p.load(mod.DATA)["runs"]:
            if load_spec(str(p.REPO / run["model"])).moe is None:
                continue
            r = p.run_one(run)
            m = r.measured
            if r.refused or "median_ttft_ms" not in m or "median_tpot_ms" not in m:
                continue
            # keyed by its set (prospective30, ...) and checkpoint
            key = f"{mod.DATA.stem}|{Path(run['model']).stem}|{run['id']}"
            out[key] = (r.simulated["ttft_ms.p50"] / m["median_ttft_ms"],
                        r.simulated["tpot_ms.p50"] / m["median_tpot_ms"])
    return out


def _accelmark() -> Ratios:
    from kvplan.sources.resolve import load_spec
    from tests.benches import accelmark_runs as a

    doc, runs = a.load()
    out: Ratios = {}
    for run in runs:
        if load_spec(str(a.REPO / run["model"])).moe is None:
            continue
        for lv in a.simulate(run, doc):
            out[f"{run['id']}@{lv.qps}"] = (lv.simulated["ttft_p50"] / lv.measured["ttft_ms_p50"],
                                            lv.simulated["tpot_p50"] / lv.measured["tpot_ms_p50"])
    return out


def agg_rows() -> list[dict[str, str]]:
    """The agg set: every AGG_EVERY-th aggregated row with an MoE checkpoint that the bench
    replays (why_not empty), in aiconfig_agg_runs.rows() order."""
    from tests.benches import aiconfig_agg_runs as g

    moe = [r for r in g.rows() if not g.why_not(r)
           and g._spec(g.AGG_MODELS[(r["model_path"], r["precision"])][0]).moe is not None]
    return moe[::AGG_EVERY]


def _agg() -> Ratios:
    from tests.benches import aiconfig_agg_runs as g

    out: Ratios = {}
    for row in agg_rows():
        r = g.replay(row)
        if r.ratios is not None:  # keyed by the bench's split: held out or shaped
            out[f"{'held' if g.split_of(r).startswith('held out') else 'shaped'}|{r.id}"] = (
                r.ratios)
    return out


def _disagg() -> Ratios:
    from tests.benches import disagg_rows as d

    out: Ratios = {}
    for r in (*d.replays(), *d.prospective_replays()):
        if r.ratios is not None:
            out[r.id] = r.ratios
    return out


COLLECT = {"s2r": _s2r, "prospective": _prospective, "accelmark": _accelmark, "agg": _agg,
           "disagg": _disagg}


def collect(sets: list[str], mode: str) -> dict[str, Ratios]:
    if mode == "default":
        return {name: COLLECT[name]() for name in sets}
    with moe_fitted(mode):
        return {name: COLLECT[name]() for name in sets}


def _line(name: str, default: Ratios, fitted: Ratios) -> str:
    ids = sorted(set(default) & set(fitted))
    moved = sum(1 for i in ids if default[i] != fitted[i])
    if not ids:
        return f"| {name} | 0 | 0 | no MoE row | | | | |"
    cells = []
    for k in (0, 1):
        d, f = [default[i][k] for i in ids], [fitted[i][k] for i in ids]
        cells.append(f"{statistics.median(d):.3f} -> {statistics.median(f):.3f}")
        cells.append(f"{statistics.median(abs(x - 1) for x in d):.1%} -> "
                     f"{statistics.median(abs(x - 1) for x in f):.1%}")
    # A median hides a run the simulator saturates (its queue grows without bound): the
    # largest TTFT ratio.
    cells.append(f"{max(default[i][0] for i in ids):.2f} -> {max(fitted[i][0] for i in ids):.2f}")
    return f"| {name} | {len(ids)} | {moved} | " + " | ".join(cells) + " |"


def main(argv: list[str]) -> None:
    if argv[:1] == ["--mode"]:  # one mode, in its own process: JSON on stdout
        print(json.dumps(collect(argv[2:] or list(SETS), argv[1])))
        return
    other = "fitted"  # `--compare shape`: default against the fraction by rows per expert
    if argv[:1] == ["--compare"]:
        other, argv = argv[1], argv[2:]
    sets = argv or list(SETS)
    both = [json.loads(subprocess.run(
        [sys.executable, "-m", "tests.benches.moe_gemm_bench", "--mode", mode, *sets],
        check=True, capture_output=True, text=True).stdout) for mode in ("default", other)]
    print(f"default -> {other}")
    print("| set | rows | moved | TTFT ratio median | TTFT median abs error "
          "| TPOT ratio median | TPOT median abs error | TTFT ratio max |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in sets:
        print(_line(name, both[0][name], both[1][name]))
        if name == "agg":
            held = [{k: v for k, v in side[name].items() if k.startswith("held|")}
                    for side in both]
            print(_line("agg, held out", *held))
        if name == "prospective":
            for at in (0, 1):  # by set, then by checkpoint
                for part in sorted({k.split("|")[at] for k in both[0][name]}):
                    print(_line(f"  {part}", *({k: v for k, v in side[name].items()
                                                if k.split("|")[at] == part} for side in both)))


if __name__ == "__main__":
    main(sys.argv[1:])
