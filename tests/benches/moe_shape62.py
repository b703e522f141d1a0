"""The routed experts' fraction by rows per expert (kvplan.perf.moe_gemm_shape, MOE_GEMM_SHAPE,
fitted on aiconfigurator's H100 kernel tables only, moeshape59) judged OFF (kvplan's default,
the one fraction per format) against ON on HELD-OUT serving rows with MoE models (issue 30,
moeshape62). The table is not changed here; the efficiency override is
moe_gemm_bench.moe_fitted("shape") (every CUDA preset, fraction_counterfactual.patched_presets;
AMD presets unchanged), each mode in a process of its own (the benches cache their setups),
the off -> on table printed by trtllm_fp8_moe.print_off_on (rows in disagg_rows.BAND).

Sets, fixed before any row was replayed here (commit of this module):
- prospective: the MoE runs (ModelSpec.moe set) of prospective30 (none), 31, 53, 53b, 57, 58,
  59, 60, 61 and 62, replayed by prospective_runs.run_one; ratios kvplan / measured of the MEAN
  TTFT and MEAN TPOT (prospective_runs.PAIRS[0], [2]: every set measures both), as
  vllm_fp8_moe.py reads them. SHAPED: prospective58's and prospective61's MiniMax-M2.5 runs (the
  minimax61 forensic read them; its finding, prefill ~2x cheap, is part of the evidence that
  asked for this evaluation). Every other run is held out for the table (no serving row set
  it). prospective31-57's were replayed with it once before (moeshape59's `--compare shape`,
  not the default); that did not change the table.
- agg: aiconfigurator's aggregated MoE rows that the bench replays (aiconfig_agg_runs.why_not
  empty), a stratified sample: grouped by (backend, system, ISL) in aiconfig_agg_runs.rows()
  order, every AGG_EVERY-th row of each group from the group's AGG_OFFSET-th (so that each
  engine x GPU x ISL cell keeps its share). Split by the bench's own split_of (held out /
  shaped by earlier rules); in addition the vLLM rows at ISL 8,192 were READ by vllmlong62
  (whose finding asked for this evaluation) and are reported apart as "read".

Decision rule (stated before any row was replayed): MOE_GEMM_SHAPE becomes the default only if
the held-out rows (prospective held out and agg held out, pooled) improve in aggregate on both
the TTFT and the TPOT median |error|, or one improves and the other is within 0.5 point;
otherwise it stays opt-in and this docstring records why.

Run: python -m tests.benches.moe_shape62 [prospective] [agg]   (the two modes, both sets)
     python -m tests.benches.moe_shape62 --mode off|on SET...  (one mode, JSON on stdout)
     python -m tests.benches.moe_shape62 --tables OFF.json ON.json  (two saved modes' table)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.benches.trtllm_fp8_moe import Ratios, print_off_on

PROSPECTIVE = ("30", "31", "53", "53b", "57", "58", "59", "60", "61", "62")
SHAPED_RUNS = {("58", "minimax-m2"), ("61", "minimax-m2")}  # (set, model config stem)
AGG_EVERY = 3
AGG_OFFSET = 1  # moeshape59 took every 4th in the bench's order from the first
READ_ISL = "8192"  # vllmlong62 read the vLLM rows at this ISL


def _is_moe(spec: object) -> bool:
    return getattr(spec, "moe", None) is not None


def prospective() -> Ratios:
    from kvplan.sources.resolve import load_spec
    from tests.benches import prospective_runs as p

    out: Ratios = {}
    for n in PROSPECTIVE:
        for run in p.load(p.DATA.parent / f"prospective{n}.json")["runs"]:
            if not _is_moe(load_spec(str(p.REPO / run["model"]))):
                continue
            r = p.run_one(run)
            if r.refused:
                continue
            (tk, tm, ts), (pk, pm, ps) = p.PAIRS[0], p.PAIRS[2]
            stem = Path(run["model"]).stem
            split = "SHAPED" if (n, stem) in SHAPED_RUNS else "held"
            out[f"prospective {split}|p{n} {run['gpu']}|{stem}|{run['id']}"] = (
                r.simulated[f"{tm}.{ts}"] / r.measured[tk],
                r.simulated[f"{pm}.{ps}"] / r.measured[pk])
    return out


def agg_sample() -> list[dict[str, str]]:
    """The stratified sample (module docstring): every AGG_EVERY-th replayable MoE row of each
    (backend, system, ISL) group from its AGG_OFFSET-th, in aiconfig_agg_runs.rows() order."""
    from tests.benches import aiconfig_agg_runs as g

    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for row in g.rows():
        if g.why_not(row) or not _is_moe(
                g._spec(g.AGG_MODELS[(row["model_path"], row["precision"])][0])):
            continue
        cell = (row["backend"], row["system"], row["isl"])
        i = seen[cell] = seen.get(cell, -1) + 1
        if i % AGG_EVERY == AGG_OFFSET:
            out.append(row)
    return out


def agg() -> Ratios:
    from tests.benches import aiconfig_agg_runs as g

    out: Ratios = {}
    for row in agg_sample():
        r = g.replay(row)
        if r.ratios is None:
            continue
        split = "held" if g.split_of(r).startswith("held out") else "shaped"
        if row["backend"] == "vllm" and row["isl"] == READ_ISL:
            split = "read vllmlong62"
        out[f"agg {split}|{row['backend']} {row['system']}|ISL {row['isl']}|{r.id}"] = r.ratios
    return out


SETS = {"prospective": prospective, "agg": agg}


def main(argv: list[str]) -> None:
    if argv[:1] == ["--mode"]:
        sets = argv[2:] or list(SETS)
        if argv[1] == "on":
            from tests.benches.moe_gemm_bench import moe_fitted

            with moe_fitted("shape"):
                print(json.dumps({s: SETS[s]() for s in sets}))
        else:
            print(json.dumps({s: SETS[s]() for s in sets}))
        return
    if argv[:1] == ["--tables"]:  # two saved `--mode` outputs (off, on): the modes run apart
        from tests.benches.trtllm_fp8_moe import groups, line

        off, on = (json.loads(Path(f).read_text()) for f in argv[1:3])
        for s in off:
            for name, keys in groups(sorted(off[s])):
                print(line(name, {k: tuple(off[s][k]) for k in keys},
                           {k: tuple(on[s][k]) for k in keys if k in on[s]}))
        return
    print_off_on("tests.benches.moe_shape62", argv or list(SETS),
                 "the experts' fraction by rows per expert, MOE_GEMM_SHAPE")


if __name__ == "__main__":
    main(sys.argv[1:])
