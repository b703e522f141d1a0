"""The routed experts' fraction by rows per expert (kvplan.perf.moe_gemm_shape, MOE_GEMM_SHAPE,
fitted on aiconfigurator's H100 kernel tables only, moeshape59) judged OFF (kvplan's default,
the one fraction per format) against ON on HELD-OUT serving rows with MoE models (issue 30,
moeshape62). The table is not changed here; the efficiency override is
moe_gemm_bench.moe_fitted("shape") (every CUDA preset, fraction_counterfactual.patched_presets;
AMD presets unchanged), each mode in a process of its own (the benches cache their setups),
the off -> on table printed by trtllm_fp8_moe.print_off_on (rows in disagg_rows.BAND).

Sets, fixed before any row was replayed here (this module's first commit b1cfa617 took every
3rd agg row; a first start showed the shared host (load ~23 on 2 cores) could not replay 536
rows twice in the session, so before any result was read the sample was cut to every 9th,
a subset of it, and both sets made to stream row by row, held out first):
- prospective: the MoE runs (ModelSpec.moe set) of prospective30 (none), 31, 53, 53b, 57, 60,
  61, 62 and 58, replayed by prospective_runs.run_one; ratios kvplan / measured of the MEAN
  TTFT and MEAN TPOT (prospective_runs.PAIRS[0], [2]: every set measures both), as
  vllm_fp8_moe.py reads them. SHAPED: prospective58's and prospective61's MiniMax-M2.5 runs (the
  minimax61 forensic read them; its finding, prefill ~2x cheap, is part of the evidence that
  asked for this evaluation), replayed last. Every other run is held out for the table (no
  serving row set it). prospective31-57's were replayed with it once before (moeshape59's
  `--compare shape`, not the default); that did not change the table. prospective59 (MI300X
  only) is not replayed: the override sets CUDA presets only, so none of its runs can move.
- agg: aiconfigurator's aggregated MoE rows that the bench replays (aiconfig_agg_runs.why_not
  empty), a stratified sample: grouped by (backend, system, ISL) in aiconfig_agg_runs.rows()
  order, every AGG_EVERY-th row of each group from the group's AGG_OFFSET-th (so that each
  engine x GPU x ISL cell keeps its share), replayed round-robin over the cells (a prefix of
  the stream is stratified too). Split by the bench's own split_of (held out / shaped by
  earlier rules); in addition the vLLM rows at ISL 8,192 were READ by vllmlong62 (whose finding
  asked for this evaluation) and are reported apart as "read".

Decision rule (stated before any row was replayed): MOE_GEMM_SHAPE becomes the default only if
the held-out rows (prospective held out and agg held out, pooled) improve in aggregate on both
the TTFT and the TPOT median |error|, or one improves and the other is within 0.5 point;
otherwise it stays opt-in and this docstring records why.

Evaluation (the rule and samples committed at b1cfa617 / 981123f0 before any row was replayed;
both modes ran to the end: 127 prospective runs (one refused), 179 agg rows with ratios of the
187 sampled; median |error| of the MEAN TTFT / TPOT (prospective) or the bench's TTFT / TPOT
(agg), rows inside disagg_rows.BAND, off -> on):
- HELD OUT, pooled (prospective held + agg held; the decision's rows): 183 rows, 167 moved; TTFT
  45.2 % -> 38.2 % (median ratio 0.61 -> 0.85, in band 45 -> 60); TPOT 18.2 % -> 15.2 % (0.90
  -> 0.99, in band 114 -> 139); both inside 37 -> 51.
  - prospective held (31, 53, 53b, 57, 60, 61's gpt-oss, 62): 84 runs, 83 moved; TTFT 52.8 % ->
    35.3 %, TPOT 37.2 % -> 23.0 %, both inside 3 -> 23. Largest gains gpt-oss on H100 / A100
    (p31 gpt-oss-120b TTFT 49.6 -> 18.2 %, p60 A100 33.1 -> 16.8 %) and p60's SGLang
    DeepSeek-V3 H200 (TTFT 28.1 -> 9.7 %, TPOT 6.0 -> 12.0 %); p62 MiniMax-M2.5 TTFT 57.2 ->
    46.3 %; no group's TTFT error grows; TPOT grows in p60 DeepSeek-V3 and p62 MiniMax (18.1 ->
    18.9 %).
  - agg held: 99 rows, 84 moved; TTFT 39.0 % -> 41.5 % WORSE (median ratio 0.88 -> 1.19, in band
    39 -> 32), TPOT 13.1 % -> 13.1 % (88 -> 90); both inside 34 -> 28. By engine and GPU (TTFT):
    vLLM Hopper 24.5 -> 42.3 % (23 rows, already priced high), vLLM Blackwell 33.1 -> 35.7 %,
    SGLang Hopper 64.4 -> 53.4 %, SGLang Blackwell 59.4 -> 65.0 %; largest TTFT ratio 5.17 ->
    6.62 (SGLang H200 ISL 8192).
- READ (vllmlong62's vLLM ISL 8,192 agg rows): 35 rows; TTFT 34.8 % -> 27.9 % (0.69 -> 0.80),
  TPOT 13.6 % -> 13.4 %.
- SHAPED: prospective58 / 61 MiniMax-M2.5 (43): TTFT 36.3 % -> 25.2 %, TPOT 12.1 % -> 9.4 %,
  both inside 17 -> 21; agg shaped by earlier rules (45): TTFT 35.6 % -> 37.2 %, TPOT 27.2 % ->
  26.6 %.
- Not run: disagg 3a / 3b / 3j (time); prospective59 (MI300X, cannot move).

Decision: the stated rule is MET (pooled held-out TTFT -7.0 points, TPOT -3.0 points), so by it
the table should become the default. NOT flipped in this session (moeshape62 ran out of time:
the flip sets moe_gemm_shape on the CUDA presets, keeps AMD's None, revisits the
`--moe-gemm-by-rows` option and regenerates cost_bench / moe_op_bench / engine_bench /
readme_outputs / measured_error). Caveats for whoever flips it: the aggregated held-out rows
alone get worse on TTFT (vLLM on Hopper most); the pooled gain comes from the prospective runs,
whose TTFT kvplan already prices ~2x low; and moeshape59's Mixtral stages (moe_gemm_bench
--compare shape) get worse on ITL (1.7 -> 7.2 %) with five stages saturating.
Made the default by moedefault63 at 31973db4 (kvplan.perf.efficiency.CUDA_EFFICIENCY: every
CUDA device; AMD presets keep None; `--no-moe-gemm-by-rows` turns it off). Since then `--mode
off` takes the table off the CUDA presets (moe_gemm_bench MODES "flat") and `--mode on` sets
it, the default; the figures above were taken when off was the default.

Why the vLLM Hopper aggregated held-out rows got worse (moedefault63, a finding, no rule change:
`python -m tests.benches.moe_shape62 agg_vllm_hopper`, the sample's vLLM H100 / H200 rows but
the READ ones, each row's model and ratio read off -> on at 31973db4; 23 held out, the 24th
shaped). Re-run on today's tree: TTFT median |error| 24.5 -> 43.6 % (moeshape62: 24.5 -> 42.3;
merges since moved it a little), median ratio 0.79 -> 1.26, TPOT 14.6 -> 13.1 %. By model:
gpt-oss-120b (8 rows, MXFP4 experts, 128 experts top-4) TTFT ratio 1.07 -> 1.64 (|error| 24.5
-> 64.0 %), Qwen3-235B-A22B-FP8 (6, block FP8, 128 top-8) 0.78 -> 1.33 (37.6 -> 51.5 %); they
get worse. MiniMax-M2.5 FP8 (6) 0.68 -> 0.93 (32.1 -> 28.1 %) and Kimi-K2.5 int4 (3) 0.79 ->
1.06 (20.8 -> 16.5 %) get better. By ISL: the 17 ISL-1,024 rows 24.5 -> 43.6 %, ISL 1,000-4,000
(Qwen3, 4) worse (e.g. ISL 2,000 1.09 -> 2.01), ISL 8,000 (Qwen3, 2) better (0.35 -> 0.55).
Why: every one of these prefills gives each expert at most ~512 rows (a step of up to 8,192
tokens x top-k / 128-384 experts: gpt-oss 8,192 x 4 / 128 = 256 at most), at or below the
tables' first point, where the table holds its first value (bf16 0.34, FP8 0.18) in place of
the dense 0.70 (vLLM 0.12 / 0.19's block-FP8 kernels on H200 take no fitted FP8 fraction:
kvplan.perf.moe_kernel.fitted_fp8_experts false): the experts' compute time roughly doubles
(bf16) or quadruples (FP8). For gpt-oss and
Qwen3-235B-FP8 the dense price was already at or above the measured TTFT (0.78-1.07), so the
table pushes them past it; MiniMax and Kimi were priced low and come closer. gpt-oss's MXFP4
experts run weight-only (bf16 math: Marlin or triton_kernels) and take the bf16 table, fitted
on bf16 Triton / CUTLASS experts only; the first point is an edge held, not a measurement at
those rows. What would tell: aiconfigurator's H100 MXFP4 / low-rows MoE cases priced by the
table (not done here).

Run: python -m tests.benches.moe_shape62 [prospective] [agg] [agg_vllm_hopper]  (the two
     modes; default both evaluation sets)
     python -m tests.benches.moe_shape62 --mode off|on SET...  (one mode: a JSON line a row)
     python -m tests.benches.moe_shape62 --tables OFF.jsonl ON.jsonl  (two saved modes; the
     rows both have)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.benches.trtllm_fp8_moe import Ratios

PROSPECTIVE = ("30", "31", "53", "53b", "57", "60", "61", "62", "58")  # held out first
SHAPED_RUNS = {("58", "minimax-m2"), ("61", "minimax-m2")}  # (set, model config stem)
AGG_EVERY = 9
AGG_OFFSET = 1  # moeshape59 took every 4th in the bench's order from the first
READ_ISL = "8192"  # vllmlong62 read the vLLM rows at this ISL
Row = tuple[str, tuple[float, float]]  # key (split|group|model|id), (TTFT, TPOT) kvplan / measured


def _is_moe(spec: object) -> bool:
    return getattr(spec, "moe", None) is not None


def prospective() -> Iterator[Row]:
    from kvplan.sources.resolve import load_spec
    from tests.benches import prospective_runs as p

    runs = [(n, run) for n in PROSPECTIVE
            for run in p.load(p.DATA.parent / f"prospective{n}.json")["runs"]
            if _is_moe(load_spec(str(p.REPO / run["model"])))]
    shaped = [(n, run) for n, run in runs if (n, Path(run["model"]).stem) in SHAPED_RUNS]
    for n, run in [x for x in runs if x not in shaped] + shaped:
        r = p.run_one(run)
        if r.refused:
            continue
        (tk, tm, ts), (pk, pm, ps) = p.PAIRS[0], p.PAIRS[2]
        stem = Path(run["model"]).stem
        split = "SHAPED" if (n, stem) in SHAPED_RUNS else "held"
        yield (f"prospective {split}|p{n} {run['gpu']}|{stem}|{run['id']}",
               (r.simulated[f"{tm}.{ts}"] / r.measured[tk],
                r.simulated[f"{pm}.{ps}"] / r.measured[pk]))


def agg_sample() -> list[dict[str, str]]:
    """The stratified sample (module docstring): every AGG_EVERY-th replayable MoE row of each
    (backend, system, ISL) cell from its AGG_OFFSET-th, in aiconfig_agg_runs.rows() order,
    then taken round-robin over the cells (in the order each first appears)."""
    from tests.benches import aiconfig_agg_runs as g

    cells: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for row in g.rows():
        if g.why_not(row) or not _is_moe(
                g._spec(g.AGG_MODELS[(row["model_path"], row["precision"])][0])):
            continue
        cell = (row["backend"], row["system"], row["isl"])
        i = seen[cell] = seen.get(cell, -1) + 1
        if i % AGG_EVERY == AGG_OFFSET:
            cells.setdefault(cell, []).append(row)
    rounds = max((len(v) for v in cells.values()), default=0)
    return [v[k] for k in range(rounds) for v in cells.values() if k < len(v)]


def agg(rows: list[dict[str, str]] | None = None) -> Iterator[Row]:
    from tests.benches import aiconfig_agg_runs as g

    for row in agg_sample() if rows is None else rows:
        r = g.replay(row)
        if r.ratios is None:
            continue
        split = "held" if g.split_of(r).startswith("held out") else "shaped"
        if row["backend"] == "vllm" and row["isl"] == READ_ISL:
            split = "read vllmlong62"
        yield f"agg {split}|{row['backend']} {row['system']}|ISL {row['isl']}|{r.id}", r.ratios


def agg_vllm_hopper() -> Iterator[Row]:
    """The agg sample's vLLM H100 / H200 rows, but the READ ones (moedefault63's finding)."""
    return agg([r for r in agg_sample() if r["backend"] == "vllm"
                and r["system"] in ("h100_sxm", "h200_sxm") and r["isl"] != READ_ISL])


SETS = {"prospective": prospective, "agg": agg, "agg_vllm_hopper": agg_vllm_hopper}
DEFAULT_SETS = ["prospective", "agg"]  # the evaluation's (agg_vllm_hopper is a subset of agg)


def _stream(sets: list[str]) -> None:
    for s in sets:
        for key, ratios in SETS[s]():
            print(json.dumps({"set": s, "key": key, "ratios": ratios}), flush=True)


def _load(path: str) -> dict[str, Ratios]:
    out: dict[str, Ratios] = {}
    for text in Path(path).read_text().splitlines():
        d = json.loads(text)
        out.setdefault(d["set"], {})[d["key"]] = tuple(d["ratios"])  # type: ignore[assignment]
    return out


def tables(off: dict[str, Ratios], on: dict[str, Ratios]) -> None:
    """The off -> on table by group (trtllm_fp8_moe's), over the rows both modes replayed."""
    from tests.benches.trtllm_fp8_moe import groups, line

    print("| group | rows | moved | TTFT ratio median | TTFT median abs error | TTFT inside "
          "| TPOT ratio median | TPOT median abs error | TPOT inside | both inside |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in off:
        both = sorted(set(off[s]) & set(on.get(s, {})))
        for name, keys in groups(both):
            print(line(name, {k: off[s][k] for k in keys}, {k: on[s][k] for k in keys}))
    held = [{k: v for s in side for k, v in side[s].items() if k.split("|")[0].endswith(" held")}
            for side in (off, on)]
    keys = sorted(set(held[0]) & set(held[1]))
    print(line("held out, pooled", {k: held[0][k] for k in keys}, {k: held[1][k] for k in keys}))


def main(argv: list[str]) -> None:
    if argv[:1] == ["--mode"]:
        sets = argv[2:] or DEFAULT_SETS
        from tests.benches.moe_gemm_bench import moe_fitted

        # Both modes patched since moedefault63 made the table the CUDA presets' default: off
        # is the table taken off them ("flat"), on sets it (as the default does).
        with moe_fitted("shape" if argv[1] == "on" else "flat"):
            _stream(sets)
        return
    if argv[:1] == ["--tables"]:
        tables(_load(argv[1]), _load(argv[2]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("off", "on"):
            with open(Path(tmp) / mode, "w") as f:
                subprocess.run([sys.executable, "-m", "tests.benches.moe_shape62", "--mode",
                                mode, *(argv or DEFAULT_SETS)], check=True, stdout=f)
        print("off -> on (the experts' fraction by rows per expert, MOE_GEMM_SHAPE)")
        tables(_load(str(Path(tmp) / "off")), _load(str(Path(tmp) / "on")))


if __name__ == "__main__":
    main(sys.argv[1:])
