"""mxfp4tab65 (issue 30): gpt-oss's MXFP4 routed experts at thin per-rank widths, kvplan's
experts op against aiconfigurator's w4a16_mxfp4 fused-MoE kernel rows, and what the kernel rows
would do to aggfaith64's paired gpt-oss TTFT lines (a counterfactual, no rule changed here).

The kernel rows: tests/data/moe_mxfp4/ (SOURCES.md; tests.benches.mxfp4_extract), read as
tests.benches.moe_op_bench.read_rows reads the bf16 / FP8 ones (a case measured twice averaged).
kvplan's price of a row (`price_ms`): the roofline step's 'experts' op of one MoE layer of the
checkpoint with the row's shape (gpt-oss-120b: 128 experts, gpt-oss-20b: 32), the row's tokens
as one prefill, Layout(tp = moe_tp x moe_ep, ep = moe_ep), the engine's efficiency at the
row's release on the row's card (the MXFP4 kernel that release picks by default: the kernel
the collector ran, no env set), plus the fused MoE's small kernels at their floors as
moe_op_bench.moe_price_s adds them (top-k, align, sum).

FINDING 1, the kernel rows (`ratios`, read before any rule was written). Under MoE TP (no EP)
every engine's w4a16_mxfp4 time falls LESS than 1 / TP; kvplan's experts op falls as exactly
1 / TP. vLLM 0.24.0's Triton kernel (matmul_ogs, Hopper's default), gpt-oss-120b, 8,192 tokens,
TP 1 / 2 / 4 / 8: H100 2.93 / 1.68 / 0.95 / 0.61 ms (t1 / tN 1.75 / 3.09 / 4.84), kvplan / table
1.66 / 1.46 / 1.30 / 1.03; H200 1.67 / 1.49 / 1.33 / 1.09; at 1,024 tokens H200 0.74 / 0.67 /
0.61 / 0.53. TensorRT-LLM 1.2.0rc5 and SGLang 0.5.14 alike (H100 t1 / t8 4.79 at 8,192). B200
(vLLM 0.24.0, FlashInfer TRT-LLM w4a16): t1 / t8 4.70, kvplan / table 0.71 -> 0.44. The vLLM
0.18.0 / 0.19.x H200 and 0.19.0 B200 tables have EP rows only, flat in the EP degree (not a
rank's share: tests/data/moe_mxfp4/SOURCES.md), unusable here.

FINDING 2, the counterfactual (`lines`, on `run`'s replay of aggfaith64's 42 gpt-oss rows, read
before any rule was written): each request's prefill step with every MoE layer at the vLLM
0.24.0 table's time (its own card, MoE TP, the workload's mean prompt, tokens interpolated) in
place of kvplan's price. aggfaith64's paired slopes a (measured vs kvplan, ISL 1,024 -> 8,192)
by TP 1 / 2 / 4 / 8: H200 1.65 / 1.91 / 2.16 / 2.51 -> 2.61 / 2.73 / 2.77 / 2.83; H100 - / 1.95
/ 2.22 / 2.45 -> - / 2.70 / 2.78 / 2.67; B200 0.81 / 1.10 / 1.80 / 2.51 -> 0.70 / 0.93 / 1.48 /
1.79. So the table EXPLAINS the Hopper TP TREND (the slope goes flat in TP) but not the level:
at TP 1 the Triton table is cheaper than kvplan at 8,192 tokens, so the slope rises (H200 TP 1
kvplan's 1,024 -> 8,192 increase 196 -> 123 ms against 322 measured). Median TTFT kvplan /
measured: H200 0.44 -> 0.52, H100 0.50 -> 0.58, B200 0.53 -> 0.70 (most rows are ISL 1,024,
where the table is dearer than kvplan). Caveats: InferenceX's Hopper gpt-oss scripts run Marlin
(VLLM_MXFP4_USE_MARLIN=1; the replay prices the default Triton, as the bench does), the B200
rows ran 0.15.1 with FlashInfer's MXFP4 x MXFP8 kernel; no table holds either kernel.

THE RULE (written after FINDING 1 and 2, fitted on kernel rows only): kvplan.perf.mxfp4_experts,
MXFP4_EXPERTS_SHAPE (kvplan.perf.efficiency), `fit` below: per per-rank width 2,880 / MoE TP,
moe_shape_fit.fit_table's rule on the H100 rows of every engine (H200, B200 held out). OPT-IN:
`Efficiency(mxfp4_experts_shape=MXFP4_EXPERTS_SHAPE)`.

DECISION RULE (stated and committed before the replay): the table becomes the default (set in
CUDA_EFFICIENCY) only if, over the HELD-OUT gpt-oss rows both arms replay (`evaluate`: the 42
aggfaith64 rows, which asked for this change but set no constant, and prospective62's 5 Scicom
vLLM H100 runs, pooled), the median |TTFT error| falls AND the median |TPOT error| grows by at
most 1 point; otherwise it stays opt-in. prospective60's gpt-oss A100 rows (SHAPED, and Marlin:
the rule does not apply) and prospective61's Scicom SGLang gpt-oss runs (the warm-server harness
rule's shaped rows) are reported apart and never decide.

EVALUATION (the table frozen and the rule committed at bba72b6a before any row was replayed;
`eval before` / `eval after`, each arm in its own process, then `tables`; median |error|, TTFT
= mean TTFT, TPOT = median TPOT, kvplan / measured):
- HELD OUT, pooled (the decision's rows, 47, all moved): TTFT 49.9 % -> 50.3 % (median ratio
  0.50 -> 0.50), TPOT 7.9 % -> 8.3 %, both inside disagg_rows.BAND 2 -> 1.
  - aggfaith64's 42 gpt-oss rows: TTFT 49.8 % -> 49.5 %, TPOT 6.9 % -> 6.9 % (H100 ISL 8,192
    53.0 -> 51.0 %, H200 ISL 8,192 49.9 -> 51.8 %, B200 ISL 8,192 45.5 -> 44.0 %).
  - prospective62's 5 Scicom vLLM 0.15.0 H100 TP 8 runs: TTFT 73.3 % -> 69.1 % (0.27 -> 0.31),
    TPOT 10.1 % -> 10.1 %.
- SHAPED (25, none moved): prospective60's gpt-oss A100 runs (Marlin, mma.sync: the rule does
  not apply) and prospective61's SGLang gpt-oss runs (kvplan names no SGLang MoE kernel, so no
  expert format reaches the rule) TTFT 26.2 % and TPOT 43.4 % both arms.
- The paired slopes under the rule (`run` with the table patched in, aggfaith64.paired): H200
  TP 1 / 2 / 4 / 8 1.65 / 1.91 / 2.16 / 2.51 -> 1.91 / 2.00 / 2.08 / 2.13; H100 TP 2 / 4 / 8
  1.95 / 2.22 / 2.45 -> 2.04 / 2.12 / 2.06; B200 0.81 / 1.10 / 1.80 / 2.51 -> 0.96 / 1.15 /
  1.73 / 2.15: the TP trend mostly goes, the level (a ~2) stays.
- Kernel rows (`kernels`, >= 512 tokens, median kvplan / measured, bf16 table -> MXFP4 table):
  H200 (held out) vLLM 0.24.0 TP 1 / 2 / 4 / 8 1.41 / 1.29 / 1.06 / 0.91 -> 1.33 / 1.38 / 1.36
  / 1.34, TensorRT-LLM 1.19 / 1.06 / 0.92 / 0.74 -> 0.99 / 1.01 / 0.98 / 1.00; flat in TP, but
  vLLM's Triton kernel is faster than the pooled table (its own H100 rows imply 0.35 at TP 8,
  8,192 tokens, the pool 0.25: TensorRT-LLM and SGLang's slower kernels share it). B200 (held
  out, FlashInfer) 0.69 / 0.66 / 0.60 / 0.44 -> 0.58 / 0.63 / 0.64 / 0.57.

DECISION: NOT met (pooled held-out TTFT 49.9 -> 50.3 %, up 0.4 point, though each held-out set
alone comes closer; TPOT +0.4 point): MXFP4_EXPERTS_SHAPE stays OPT-IN
(`Efficiency(mxfp4_experts_shape=MXFP4_EXPERTS_SHAPE)`); no default changes, no page moves. What
it says: the thin-width MXFP4 kernels are what make the Hopper slope grow with TP (it goes
nearly flat), but they are not the level: kvplan's vLLM gpt-oss prefill is about half the
measured at every TP, which the experts' table does not move (and the served Hopper kernel,
Marlin, has no table).

Run: python -m tests.benches.mxfp4tab65 ratios | fit | kernels | run OUT.jsonl | lines OUT.jsonl |
eval before|after [agg prospective] > ARM.jsonl | tables BEFORE.jsonl AFTER.jsonl
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path

from kvplan.hardware.gpus import get_gpu
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.op_counts import MOE_EXTRA_KERNELS, topk_kernels
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_spec
from tests.benches.moe_op_bench import Row, moe_layer, read_rows

ROWS = Path(__file__).resolve().parents[1] / "data" / "moe_mxfp4" / "mxfp4_rows.csv.gz"
CHECKPOINT = {128: "gpt-oss-120b", 32: "gpt-oss-20b"}  # by the shape's expert count


def rows() -> list[Row]:
    return read_rows(ROWS)


@cache
def spec_of(experts: int) -> ModelSpec:
    spec = load_spec(CHECKPOINT[experts])
    moe = spec.moe
    assert moe is not None and moe.n_routed_experts == experts
    return spec


def price_ms(row: Row, **fields: object) -> float:
    """kvplan's price of the row's MoE call, ms (module docstring); `fields`: Efficiency
    fields set in place of the engine's."""
    spec = spec_of(row.shape[2])
    gpu = get_gpu(row.gpu)
    eff = engine_efficiency(row.engine, device_efficiency(gpu), version=row.version)
    if fields:
        eff = replace(eff, **fields)
    i = moe_layer(spec)
    st = step_time(spec, gpu, tokens=row.tokens, context=row.tokens, requests=1,
                   phase="prefill", layout=Layout(tp=row.moe_tp * row.moe_ep, ep=row.moe_ep),
                   eff=eff, layers=range(i, i + 1))
    small = 1 + MOE_EXTRA_KERNELS + topk_kernels(spec, gpu.platform)
    return (st.by_op["experts"] + small * eff.kernel_floor_s) * 1e3


def ranks(row: Row) -> int:
    return row.moe_tp * row.moe_ep


def ratio_lines(all_rows: list[Row], tokens: tuple[int, ...] = (1, 64, 1024, 2048, 8192, 16384)
                ) -> list[str]:
    """Per table (engine, release, GPU), shape and layout kind (TP / EP), at each of `tokens`:
    the measured ms by ranks, its fall from 1 rank (t1 / tN, 1 / TP falls as N), kvplan / table."""
    out = ["| table | model | split | tokens | measured ms at 1 / 2 / 4 / 8 ranks | t1 / tN "
           "(2 / 4 / 8) | kvplan ms 1 / 2 / 4 / 8 | kvplan / table 1 / 2 / 4 / 8 |",
           "|---|---|---|---:|---|---|---|---|"]
    by: dict[tuple, dict[int, Row]] = defaultdict(dict)
    for r in all_rows:
        split = "TP" if r.moe_ep == 1 else "EP"
        if ranks(r) == 1:
            for s in ("TP", "EP"):
                by[(r.engine, r.version, r.gpu, r.kernel_source, r.shape[2], s, r.tokens)][1] = r
        else:
            by[(r.engine, r.version, r.gpu, r.kernel_source, r.shape[2], split,
                r.tokens)][ranks(r)] = r
    for key in sorted(by):
        e, v, g, _k, experts, split, t = key
        cells = by[key]
        if t not in tokens or len(cells) < 2:
            continue
        ns = [n for n in (1, 2, 4, 8) if n in cells]
        meas = [cells[n].measured_ms for n in ns]
        kv = [price_ms(cells[n]) for n in ns]
        fall = " / ".join(f"{meas[0] / m:.2f}" for m in meas[1:]) if ns[0] == 1 else "-"
        out.append(f"| {e} {v} {g} | {CHECKPOINT[experts]} | {split} {'/'.join(map(str, ns))} "
                   f"| {t:,} | {' / '.join(f'{m:.3f}' for m in meas)} | {fall} | "
                   f"{' / '.join(f'{k:.3f}' for k in kv)} | "
                   f"{' / '.join(f'{k / m:.2f}' for k, m in zip(kv, meas, strict=True))} |")
    return out




# Part 2: the counterfactual on aggfaith64's rows (its pool: held-out InferenceX rows at
# concurrency <= 4, replayed under the client's workload), gpt-oss's alone.
def gptoss_pool() -> list[dict[str, str]]:
    from tests.benches import aggfaith64

    return [r for r in aggfaith64.pool() if "gpt-oss" in r["model_path"]]


def run(out: str) -> None:
    """Replay gptoss_pool's rows as aggfaith64.run does (CLIENT_WORKLOAD on) into `out`."""
    import json
    import time

    from tests.benches import aiconfig_agg_runs as agg

    agg.CLIENT_WORKLOAD = True
    with open(out, "w") as f:
        for row in gptoss_pool():
            t = time.process_time()
            r = agg.replay(row)
            f.write(json.dumps({"id": row["id"], "ttft": r.ttft_ms, "tpot": r.tpot_ms,
                                "m_ttft": r.measured_ttft_ms, "m_tpot": r.measured_tpot_ms,
                                "cpu_s": time.process_time() - t, "why": r.why_not}) + "\n")
            f.flush()


TABLE_VERSION = "0.24.0"  # the vLLM release whose table has TP rows on H100 / H200 / B200
CARD = {"h100_sxm": "H100", "h200_sxm": "H200", "b200_sxm": "B200"}
MEAN_PROMPT = 0.9  # CLIENT_WORKLOAD's lengths uniform in [0.8, 1] x ISL: their mean


def table_ms(table: list[Row], gpu: str, experts: int, tp: int, tokens: float) -> float:
    """The kernel rows' vLLM TABLE_VERSION MoE call at MoE TP `tp` (no EP), linear in the
    tokens between the powers of two on either side."""
    at = {r.tokens: r.measured_ms for r in table if r.engine == "vllm"
          and r.version == TABLE_VERSION and r.gpu == gpu and r.shape[2] == experts
          and (r.moe_tp, r.moe_ep) == (tp, 1)}
    lo = max(t for t in at if t <= tokens)
    hi = min(t for t in at if t >= tokens)
    return at[lo] if lo == hi else at[lo] + (at[hi] - at[lo]) * (tokens - lo) / (hi - lo)


def delta_ms(table: list[Row], row: dict[str, str]) -> float:
    """The counterfactual's change to one request's TTFT: its prompt's one prefill step with
    every MoE layer's call at the table's time in place of kvplan's price of it (the serving
    release's kernel and efficiency), at the workload's mean prompt length. A counterfactual,
    not a rule: one prefill step a request (low load), the table's release not the row's."""
    from tests.benches import aiconfig_agg_runs as agg

    tp, _, _, ep = agg.layout(row)
    assert ep <= 1, row["id"]
    experts = 128 if "120b" in row["model_path"] else 32
    spec = spec_of(experts)
    tokens = MEAN_PROMPT * int(row["isl"])
    gpu = CARD[row["system"]]
    mine = Row(engine="vllm", version=row["backend_version"], gpu=gpu, kernel_source="",
               quant="w4a16_mxfp4", tokens=round(tokens), shape=(2880, 2880, experts, 4),
               moe_tp=tp, moe_ep=1, measured_ms=0.0)
    moe = spec.moe
    assert moe is not None
    layers = spec.num_hidden_layers  # gpt-oss: every layer has routed experts
    return layers * (table_ms(table, gpu, experts, tp, tokens) - price_ms(mine))


def counterfactual_lines(path: str) -> list[str]:
    """aggfaith64's paired lines for the gpt-oss configs, kvplan's TTFT as replayed and with
    `delta_ms` added (the table's experts op), and the rows' median ratio both ways."""
    from tests.benches import aggfaith64

    table = rows()
    part = [p for p in aggfaith64.load(path) if "gpt-oss" in p["row"]["model_path"]]
    moved = [{**p, "ttft": p["ttft"] + delta_ms(table, p["row"])} for p in part]
    out = ["| config | kvplan / measured at 1,024 | at 8,192 | a | -> table's experts: "
           "kvplan at 1,024 | at 8,192 | a |", "|---|---|---|---:|---|---|---:|"]
    after = {k: (a, pts) for k, a, _, pts in aggfaith64.paired(moved)}
    for key, a, _, (x1, y1, x2, y2) in aggfaith64.paired(part):
        a2, (u1, _, u2, _) = after[key]
        out.append(f"| {key[1]} {key[2]} {key[5]} | {x1:,.0f} / {y1:,.0f} | {x2:,.0f} / "
                   f"{y2:,.0f} | {a:.2f} | {u1:,.0f} | {u2:,.0f} | {a2:.2f} |")
    for name, arm in (("as replayed", part), ("table's experts", moved)):
        by: dict[str, list[float]] = defaultdict(list)
        for p in arm:
            by[p["row"]["system"]].append(p["ttft"] / p["m_ttft"])
        out.append(f"\n{name}: median TTFT kvplan / measured " + ", ".join(
            f"{g} {statistics.median(v):.2f} ({len(v)})" for g, v in sorted(by.items())))
    return out


# Part 3: the MXFP4 experts' table (kvplan.perf.mxfp4_experts), by per-rank width: per MoE TP
# degree's width (2,880 / TP), moe_shape_fit.fit_table's rule on the FIT_GPU rows of that width
# (every engine together, TP layouts, both shapes), the implied fraction `implied` below.
FIT_GPU = "H100"
WIDTHS = (360, 720, 1440, 2880)  # gpt-oss's intermediate 2,880 at MoE TP 8 / 4 / 2 / 1


def width(row: Row) -> int:
    return row.shape[1] // row.moe_tp


def implied(row: Row) -> float | None:
    """The experts' fraction at which kvplan's price of `row` is its measured latency: as
    moe_op_bench.implied_fraction, with the bf16 experts' one fraction (`moe_gemm`, what
    Hopper's w4a16 experts compute at) set to 0.01 and 0.02 and no table in its way; None
    where the rest outlasts the measured op."""
    base = {"moe_gemm_shape": None, "mxfp4_experts_shape": None}
    p1 = price_ms(row, moe_gemm=0.01, **base) / 1e3
    p2 = price_ms(row, moe_gemm=0.02, **base) / 1e3
    compute = (p1 - p2) / 50
    need = row.measured_ms / 1e3 - (p1 - 100 * compute)
    return compute / need if need > 0 else None


def fit(all_rows: list[Row], gpu: str = FIT_GPU
        ) -> dict[int, list[tuple[int, int, int, float]]]:
    """width -> moe_shape_fit.fit_table's points on `gpu`'s TP rows of that width."""
    from tests.benches.moe_shape_fit import fit_table

    return {w: fit_table([r for r in all_rows if r.moe_ep == 1 and width(r) == w],
                         "w4a16_mxfp4", gpu, implied=implied) for w in WIDTHS}


# Part 4: the held-out replay (the decision rule: module docstring). Each arm in a process of
# its own; "after" patches every CUDA preset with MXFP4_EXPERTS_SHAPE (the rest unchanged).
Ratios = tuple[float, float]  # kvplan / measured: TTFT, TPOT
PROSPECTIVE = ("60", "61", "62")


def agg_arm() -> Iterator[tuple[str, Ratios]]:
    """gptoss_pool's rows under CLIENT_WORKLOAD (aggfaith64's replay): held out."""
    from tests.benches import aiconfig_agg_runs as agg

    agg.CLIENT_WORKLOAD = True
    for row in gptoss_pool():
        r = agg.replay(row)
        if r.ttft_ms is None or r.tpot_ms is None:
            continue
        yield (f"agg held|vllm {row['system']}|ISL {row['isl']}|{row['id']}",
               (r.ttft_ms / r.measured_ttft_ms, r.tpot_ms / r.measured_tpot_ms))


def _split(n: str, run: dict) -> str:  # type: ignore[type-arg]
    """p60's gpt-oss A100 rows shaped four rules (prospective60_runs.SHAPED); p61's SGLang
    runs the warm-server harness rule (prospective61_runs.WARM_SERVER_SHAPED); else held."""
    from tests.benches import prospective60_runs as p60
    from tests.benches import prospective61_runs as p61

    if n == "60" and any(g in run["id"] for g in p60.SHAPED):
        return "SHAPED"
    if n == "61" and run["id"] in p61.WARM_SERVER_SHAPED.rows:
        return "SHAPED"
    return "held"


def prospective_arm() -> Iterator[tuple[str, Ratios]]:
    """prospective60 / 61 / 62's gpt-oss runs (moe_shape62.prospective's ratios: mean TTFT,
    median TPOT)."""
    from tests.benches import prospective_runs as p

    for n in PROSPECTIVE:
        for run in p.load(p.DATA.parent / f"prospective{n}.json")["runs"]:
            if "gpt-oss" not in run["model"]:
                continue
            r = p.run_one(run)
            if r.refused:
                continue
            (tk, tm, ts), (pk, pm, ps) = p.PAIRS[0], p.PAIRS[2]
            yield (f"prospective {_split(n, run)}|p{n} {run['gpu']}|{Path(run['model']).stem}"
                   f"|{run['id']}", (r.simulated[f"{tm}.{ts}"] / r.measured[tk],
                                     r.simulated[f"{pm}.{ps}"] / r.measured[pk]))


ARMS = {"agg": agg_arm, "prospective": prospective_arm}


def evaluate(mode: str, sets: list[str]) -> None:
    """One arm ("before": as committed; "after": MXFP4_EXPERTS_SHAPE on every CUDA preset),
    a JSON line a row."""
    import json
    from contextlib import nullcontext

    from kvplan.perf.efficiency import MXFP4_EXPERTS_SHAPE
    from tests.benches.fraction_counterfactual import patched_presets

    ctx = (patched_presets(lambda gpu: gpu.platform == "cuda",
                           mxfp4_experts_shape=MXFP4_EXPERTS_SHAPE)
           if mode == "after" else nullcontext())
    with ctx:
        for s in sets:
            for key, ratios in ARMS[s]():
                print(json.dumps({"set": s, "key": key, "ratios": ratios}), flush=True)


def held_kernel_lines(all_rows: list[Row], least_tokens: int = 512) -> list[str]:
    """Per card, engine table and MoE TP (no EP), the rows of at least `least_tokens` tokens:
    median kvplan / measured without and with MXFP4_EXPERTS_SHAPE (H100's are the fit's rows,
    the others held out)."""
    from kvplan.perf.efficiency import MXFP4_EXPERTS_SHAPE

    out = ["| card | table | MoE TP | rows | kvplan / measured, bf16 table | MXFP4 table |",
           "|---|---|---:|---:|---:|---:|"]
    by: dict[tuple, list[Row]] = defaultdict(list)
    for r in all_rows:
        if r.moe_ep == 1 and r.tokens >= least_tokens:
            by[(r.gpu, f"{r.engine} {r.version}", r.moe_tp)].append(r)
    for (gpu, table, tp), rs in sorted(by.items()):
        off = statistics.median(price_ms(r) / r.measured_ms for r in rs)
        on = statistics.median(price_ms(r, mxfp4_experts_shape=MXFP4_EXPERTS_SHAPE)
                               / r.measured_ms for r in rs)
        out.append(f"| {gpu} | {table} | {tp} | {len(rs)} | {off:.2f} | {on:.2f} |")
    return out


def main() -> None:
    cmd = sys.argv[1]
    if cmd == "ratios":
        print("\n".join(ratio_lines(rows())))
    elif cmd == "lines":
        print("\n".join(counterfactual_lines(sys.argv[2])))
    elif cmd == "fit":
        for gpu in ("H100", "H200", "B200"):
            for w, pts in fit(rows(), gpu).items():
                print(f"{gpu} width {w}: " + ", ".join(
                    f"{m}: {f:.3f} ({n} of {every})" for m, n, every, f in pts))
    elif cmd == "eval":
        evaluate(sys.argv[2], sys.argv[3:] or list(ARMS))
    elif cmd == "tables":
        from tests.benches.moe_shape62 import _load, tables

        tables(_load(sys.argv[2]), _load(sys.argv[3]))
    elif cmd == "kernels":
        print("\n".join(held_kernel_lines(rows())))
    elif cmd == "run":
        run(sys.argv[2])


if __name__ == "__main__":
    main()
