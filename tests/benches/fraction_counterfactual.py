"""A fitted fraction judged on serving rows: each set's rows (those whose checkpoint `keep`
selects) replayed with kvplan's default and with a counterfactual efficiency (a context manager
that patches the presets), each set's median TTFT and TPOT ratio (kvplan / measured) and median
|error| side by side. Shared by tests/benches/moe_gemm_bench.py (the routed experts' fractions)
and tests/benches/fp8_gemm_bench.py (the dense FP8 GEMMs' fraction).

Sets: s2r (the sim-to-real study's runs, every stage of its main / prospective / blind /
offload sets), prospective (the prospective sets' runs), accelmark (its runs' QPS levels), agg
(aiconfigurator's aggregated rows, every `every`-th replayable one in the bench's order: a rule
fixed before any was replayed), disagg (disagg-bench's rows and the frozen prospective ones,
every row: no model filter). The two modes run in separate processes (the benches cache their
engines' setups, built with the efficiency of their first call): `main` re-runs the calling
module with `--mode default|fitted`.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.hardware.gpus import GPU
    from kvplan.model.spec import ModelSpec

SETS = ("s2r", "prospective", "accelmark", "agg", "disagg")
Ratios = dict[str, tuple[float, float]]  # row id -> (TTFT, TPOT) kvplan / measured
Keep = Callable[["ModelSpec"], bool]


@contextmanager
def patched_presets(which: Callable[[GPU], bool], **fields: object) -> Iterator[None]:
    """Every preset `which` picks with its efficiency's `fields` replaced (the rest unchanged),
    restored after: a counterfactual's context."""
    from kvplan.hardware.gpus import GPUS
    from kvplan.perf import efficiency

    table = efficiency.DEVICE_EFFICIENCY
    saved = dict(table)
    for gpu in GPUS.values():
        if which(gpu):
            # the preset's own (device_efficiency: CUDA_EFFICIENCY for an unlisted CUDA one)
            table[gpu.name] = replace(efficiency.device_efficiency(gpu), **fields)
    try:
        yield
    finally:
        table.clear()
        table.update(saved)


def s2r(keep: Keep) -> Ratios:
    from tests.benches import sim_to_real as s

    records = s.load_records()
    out: Ratios = {}
    for which in ({}, {"prospective": True}, {"blind": True}, {"offload": True}):
        for run in s.load_runs(**which)[1]:
            if not keep(s.run_inputs(run)[0]):
                continue
            sim = s.simulate_run(run)
            for stage, fig in sim.stages.items():
                ttft, itl = (records.get((run.id, stage, k)) for k in ("ttft_mean", "itl_mean"))
                if stage >= 0 and ttft and itl and "ttft_mean" in fig and "itl_mean" in fig:
                    out[f"{run.folder}/{stage}"] = (fig["ttft_mean"] / ttft["measured"],
                                                    fig["itl_mean"] / itl["measured"])
    return out


def prospective(keep: Keep, modules: tuple[ModuleType, ...]) -> Ratios:
    """`modules`: the prospective sets' bench modules (their DATA files)."""
    from kvplan.sources.resolve import load_spec
    from tests.benches import prospective_runs as p

    out: Ratios = {}
    for mod in modules:
        for run in p.load(mod.DATA)["runs"]:
            if not keep(load_spec(str(p.REPO / run["model"]))):
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


def accelmark(keep: Keep) -> Ratios:
    from kvplan.sources.resolve import load_spec
    from tests.benches import accelmark_runs as a

    doc, runs = a.load()
    out: Ratios = {}
    for run in runs:
        if not keep(load_spec(str(a.REPO / run["model"]))):
            continue
        for lv in a.simulate(run, doc):
            out[f"{run['id']}@{lv.qps}"] = (lv.simulated["ttft_p50"] / lv.measured["ttft_ms_p50"],
                                            lv.simulated["tpot_p50"] / lv.measured["tpot_ms_p50"])
    return out


def agg_rows(keep: Keep, every: int) -> list[dict[str, str]]:
    """Every `every`-th aggregated row whose checkpoint `keep` selects and that the bench
    replays (why_not empty), in aiconfig_agg_runs.rows() order."""
    from tests.benches import aiconfig_agg_runs as g

    kept = [r for r in g.rows() if not g.why_not(r)
            and keep(g._spec(g.AGG_MODELS[(r["model_path"], r["precision"])][0]))]
    return kept[::every]


def agg(keep: Keep, every: int) -> Ratios:
    from tests.benches import aiconfig_agg_runs as g

    out: Ratios = {}
    for row in agg_rows(keep, every):
        r = g.replay(row)
        if r.ratios is not None:  # keyed by the bench's split: held out or shaped
            out[f"{'held' if g.split_of(r).startswith('held out') else 'shaped'}|{r.id}"] = (
                r.ratios)
    return out


def disagg() -> Ratios:
    from tests.benches import disagg_rows as d

    out: Ratios = {}
    for r in (*d.replays(), *d.prospective_replays()):
        if r.ratios is not None:
            out[r.id] = r.ratios
    return out


def collect(name: str, keep: Keep, every: int, prospective_sets: tuple[str, ...]) -> Ratios:
    """One set's ratios by name (SETS): `prospective_sets` the prospective bench modules to
    read (tests.benches.<name>; prospective_runs is prospective30's), `every` the agg subsample."""
    import importlib

    if name == "prospective":
        return prospective(keep, tuple(importlib.import_module(f"tests.benches.{m}")
                                       for m in prospective_sets))
    if name == "agg":
        return agg(keep, every)
    if name == "disagg":
        return disagg()
    return {"s2r": s2r, "accelmark": accelmark}[name](keep)


def line(name: str, default: Ratios, fitted: Ratios, none: str = "no row") -> str:
    ids = sorted(set(default) & set(fitted))
    moved = sum(1 for i in ids if default[i] != fitted[i])
    if not ids:
        return f"| {name} | 0 | 0 | {none} | | | | |"
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


def main(argv: list[str], *, module: str, collect: Callable[[str], Ratios],
         fitted: Callable[..., AbstractContextManager[None]], none: str = "no row",
         modes: tuple[str, ...] = ("fitted",)) -> None:
    """`module`: the calling bench (re-run per mode); `collect`: one set's ratios by name;
    `fitted`: the counterfactual's context, given the mode's name where `modes` names more
    than one (`--compare MODE`, the first by default)."""
    if argv[:1] == ["--mode"]:  # one mode, in its own process: JSON on stdout
        sets = argv[2:] or list(SETS)
        if argv[1] != "default":
            with fitted(argv[1]) if len(modes) > 1 else fitted():
                print(json.dumps({name: collect(name) for name in sets}))
        else:
            print(json.dumps({name: collect(name) for name in sets}))
        return
    other = modes[0]
    if argv[:1] == ["--compare"]:
        other, argv = argv[1], argv[2:]
    sets = argv or list(SETS)
    both = [json.loads(subprocess.run(
        [sys.executable, "-m", module, "--mode", mode, *sets],
        check=True, capture_output=True, text=True).stdout) for mode in ("default", other)]
    print(f"default -> {other}")
    print("| set | rows | moved | TTFT ratio median | TTFT median abs error "
          "| TPOT ratio median | TPOT median abs error | TTFT ratio max |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in sets:
        print(line(name, both[0][name], both[1][name], none))
        if name == "agg":
            held = [{k: v for k, v in side[name].items() if k.startswith("held|")}
                    for side in both]
            print(line("agg, held out", *held, none))
        if name == "prospective":
            for at in (0, 1):  # by set, then by checkpoint
                for part in sorted({k.split("|")[at] for k in both[0][name]}):
                    print(line(f"  {part}", *({k: v for k, v in side[name].items()
                                               if k.split("|")[at] == part} for side in both),
                               none))
