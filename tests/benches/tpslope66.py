"""tpslope66 (issue 30): why vLLM's measured prefill on Hopper grows ~2 x kvplan's as TP grows.

The rows: aggfaith64's held-out vLLM Hopper MoE group (InferenceX rows of aiconfigurator's
aggregated table the bench replays, not shaped) at EVERY stated concurrency (aggfaith64 stops
at 4), replayed by the bench's own `replay` under CLIENT_WORKLOAD (10 x C requests, lengths
uniform in [0.8, 1] x ISL / OSL). 192 rows: gpt-oss-120b MXFP4 (H200 TP 1 / 2 / 4 / 8, H100
TP 2 / 4 / 8, vLLM 0.18.0) and MiniMax-M2.5 FP8 (H200 0.16.0 TP 4, 0.18.0 TP 8; H100 0.18.0
TP 4). No DeepSeek FP8 Hopper vLLM row is in the pool (its class is MLA: none replayed).

1. STEP OR QUEUE (`concurrency_lines`): measured / kvplan mean TTFT per server and prompt
   length, at each concurrency. 2. THE PREFILL'S INCREASE BY OP (`increase_lines`): one
   server's ISL 8,192 minus ISL 1,024 mean TTFT (the per-request offsets cancel), measured and
   kvplan's replay, against kvplan's roofline prefill step of the workload's mean prompts (922
   and 7,373 tokens: 0.9 x ISL) by op, the ops split over TP (experts, attention projections,
   attention, lm_head) apart from those every TP rank runs whole (all-reduce, small kernels,
   layer overhead, fp32 router), priced with the replay's Triton MXFP4 kernel and with the
   Marlin kernel InferenceX's Hopper gpt-oss scripts run (VLLM_MXFP4_USE_MARLIN=1,
   kvplan.engines.vllm.mxfp4_backend). 3. THE TREND (`trend_lines`): measured increase =
   x x kvplan's split ops + c, least squares over one GPU's TP degrees.

THE RULE (from code only; written after reading 1-3 above on the pool, so the pool's rows are
SHAPED by it, though no constant was fitted): vLLM's Marlin MXFP4 MoE computes, reads and writes
its zero-padded shapes, the per-rank intermediate width rounded up to 128 and the hidden size to
256 (vLLM 0.18.0 quantization/mxfp4.py:321-342, fused_moe/layer.py:245-269,
runner/default_moe_runner.py:418-424, fused_marlin_moe.py:88-199): FusedMoeKernel.pad_width /
pad_hidden on VLLM_MARLIN_MXFP4_MOE, kvplan.perf.moe_kernel.kernel_shape. gpt-oss-120b's experts
FLOPs and weight bytes x 1.090 at TP 1, x 1.138 (256 / 225) at TP 2 / 4 / 8. It moves only
where kvplan prices Marlin (Ampere / Ada / SM 12.x by default, Hopper before vLLM 0.11.1 or
with --mxfp4-backend marlin); the default replay of the pool (Triton on Hopper) does not move.

EVALUATION (rule and decision frozen at f2738442; `p57 before|after`, `marlin` then
`evaluate`; median |error| of mean TTFT / TPOT):
- HELD OUT, DECIDING: prospective57's 10 Marlin runs (vLLM 0.11.0, H100 TP 2 - 8): TTFT 44.9
  -> 39.8 %, TPOT 14.5 -> 8.9 % (ITL alike); TTFT closer on all 10, TPOT worse on 4 (TP 8 at 32
  / 48 / 64 users +2.2 -> +8.0, +21.2 -> +28.5, +30.9 -> +39.1 %; TP 2 5000/250 +0.1 -> +9.8
  %). Controls (no Marlin: prospective56's 4 runs, prospective57's H200 0.15.1 run): unchanged.
- SHAPED: prospective31's 12 Marlin runs: TTFT 25.6 -> 20.4 %, TPOT 21.3 -> 15.6 %. The pool's
  59 gpt-oss rows at <= 8 users (11 more at 16 - 64 users were replayed before the cut) with
  --mxfp4-backend marlin under CLIENT_WORKLOAD: TTFT 31.9 -> 25.7 % (ratio 0.68 -> 0.74), TPOT
  4.1 -> 5.7 % (WORSE: kvplan's Marlin decode was already at or above the measured on H100;
  H100 2.7 - 6.0 -> 6.5 - 9.0 %, H200 TP 1 / 2 better); paired a at <= 4 users H200 TP 1 / 2 /
  4 / 8 1.06 / 1.25 / 1.44 / 1.74 -> 0.98 / 1.13 / 1.31 / 1.61, H100 TP 2 / 4 / 8 1.23 / 1.43
  / 1.62 -> 1.11 / 1.30 / 1.50: the level at TP 1 is met, the TP trend stays (item 3's fixed
  part).
- cost-bench.md (held out decode rows, InferenceX issue 828, vLLM 0.15.1 H100 Marlin): measured /
  predicted TPOT 0.94 - 0.98 -> 0.86 - 0.95, every row still in band (108 of 122 unchanged).
DECISION: met (held-out TTFT -5.1 points, TPOT -5.6): the padded shapes are the default.

DECISION RULE (committed with the rule, before any replay with it): the padded shapes stay
the DEFAULT only if, over the HELD-OUT Hopper Marlin runs of tests.benches.marlinhopper61_runs
(prospective56 / prospective57's vLLM gpt-oss runs that price Marlin; nobody looked at them
for this rule), the median |TTFT mean error| falls AND the median |TPOT mean error| rises by
at most 0.5 point; otherwise the padding becomes opt-in. Reported apart, never deciding: the
pool's gpt-oss rows with the scripts' --mxfp4-backend marlin under CLIENT_WORKLOAD (`marlin`:
SHAPED), prospective31's Marlin runs (SHAPED, marlinhopper61) and that bench's controls.

FINDING (the default replay of the 192 rows, `run` then `report OUT before`: kvplan's steps as
they stood before the rule; read before the rule was written).
1. STEP, NOT QUEUE. gpt-oss-120b's measured / kvplan TTFT is flat in the load at every TP and
   both prompt lengths (H200 ISL 8,192 TP 1 / 2 / 4 / 8 at 4 users 1.70 / 1.95 / 2.11 / 2.30,
   at 16 users 1.67 / 1.92 / 2.14 / 2.32; ISL 1,024 2.0 - 2.3 at every TP and load; H100 alike):
   the gap is the prefill step's own time, and at 8,192 tokens it grows with TP. MiniMax-M2.5
   FP8 differs: H200 0.18.0 TP 8 ISL 1,024 falls with the load (2.46 at 4 users -> 1.51 at
   128: a per-request cost at low load, not the step), ISL 8,192 1.3 - 1.5 flat; H200 0.16.0
   TP 4 1.55 - 1.82 flat.
2. THE INCREASE BY OP (4 users, ISL 8,192 minus 1,024, ms; kvplan's step for 7,373 minus 922
   tokens, split / whole). gpt-oss H200 TP 1 / 2 / 4 / 8: measured 318 / 205 / 134 / 99,
   kvplan's replay 198 / 110 / 65 / 42; kvplan's step with the replay's Triton kernel 171 /
   95 / 56 / 36 (split 169 / 84 / 42 / 21, whole 3 / 10 / 13 / 15), with the Marlin kernel the
   scripts ran 254 / 137 / 77 / 48 (split 246 / 123 / 62 / 31: experts 215 / 108 / 54 / 27;
   whole 8 / 14 / 16 / 17: the all-reduce 0 / 8 / 11 / 13, small kernels 8 / 6 / 5 / 4). H100
   TP 2 / 4 / 8: measured 206 / 134 / 95, Marlin step 139 / 80 / 50. The measured beyond
   kvplan's Marlin step: 10.0 / 10.5 / 8.7 / 8.0 us a prompt token on H200, 10.4 / 8.4 / 7.0 on
   H100, at EVERY TP (TP 1 too) and the same on both cards (so neither HBM- nor NVLink-bound).
   MiniMax FP8: H200 0.18.0 TP 8 measured 89 against kvplan's step 91 (-0.4 us a token),
   H200 0.16.0 TP 4 223 against 136 (13.4), H100 0.18.0 TP 4 375 against 138 (one row at 4
   users; 241 at 8).
3. THE TREND: measured increase = x x kvplan's split ops + c over one card's TP degrees:
   H200 Triton 1.48 x + 72 ms, Marlin 1.01 x + 72 ms; H100 Triton 1.78 x + 59, Marlin 1.20 x
   + 59. So the share that grows with TP is not in any op kvplan splits over TP: priced with
   the kernel the rows ran, the split ops (the experts above all) are about right (x 1.0 -
   1.2) and a fixed 59 - 72 ms for 6,451 more prompt tokens (9 - 11 us a token) is not, of
   which kvplan's whole-row ops (all-reduce, small kernels) give 8 - 19 ms rising with TP. As
   TP shrinks the split ops this fixed part becomes the larger share: the slope grows with TP.
   Not found in the code read here (gpt_oss.py, fused_marlin_moe.py, mxfp4.py, layer.py and
   default_moe_runner.py at 0.18.0): the moe_align / top-k / pad / sum kernels kvplan already
   charges move 1 - 3 ms. The same fixed part shows on B200 with FlashInfer's kernels
   (aggfaith64's B200 gpt-oss increases, vLLM 0.15.1, TP 1 / 2 / 4 / 8: measured 70 / 53 / 52 /
   49 ms, nearly flat in TP), so it is neither the card nor the MoE kernel: a per-prompt-token
   cost outside the GPU step fits it (vLLM's API server tokenizing the prompt: kvplan's
   --frontend stage has s_per_prompt_token 0, its fit rows all 512-token prompts,
   kvplan.engines.vllm.frontend), but MiniMax's H200 0.18.0 rows show none (-0.4 us a token)
   while its 0.16.0 TP 4 rows show 13.4. Left open: a measured tokenizer time per prompt token
   for vLLM's server would settle it; no rule written for it.

Run: python -m tests.benches.tpslope66 run OUT.jsonl [SHARD SHARDS] (the default replay, about
15 min of CPU) | report OUT.jsonl | marlin OUT.jsonl before|after [SHARD SHARDS] (the pool's
gpt-oss rows with the scripts' --mxfp4-backend marlin) | evaluate BEFORE.jsonl AFTER.jsonl |
p57 before|after OUT.json (marlinhopper61_runs' replay, the padding undone in 'before')
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from functools import cache

from tests.benches import aggfaith64 as af
from tests.benches import aiconfig_agg_client as client
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.b200ttft64 import fit  # least squares y = a x + c
from tests.benches.disagg_rows import PREFIX, stated_concurrency

GPT_OSS = ("openai/gpt-oss-120b", "fp4")
LENGTHS = (922, 7373)  # the workload's mean prompts at ISL 1,024 / 8,192 (0.9 x ISL)
SPLIT = ("experts", "attention_proj", "attention", "lm_head")  # per-rank work / TP


# SHAPED_BY entries added after this pool was drawn (marlinrow66 named its gpt-oss rows shaped
# by gptosshopper62's and this bench's rules): the pool stays the one the record was made on.
NAMED_LATER = agg.NAMED_BY_MARLINROW66


def pool() -> list[dict[str, str]]:
    """Every held-out InferenceX row of aggfaith64's vLLM Hopper MoE group at every stated
    concurrency, file order (held out as when drawn: NAMED_LATER not counted)."""
    shaped = agg.shaped_rows(without=NAMED_LATER)
    return [r for r in agg.rows() if client.inferencex(r) and not agg.why_not(r)
            and PREFIX + r["id"] not in shaped and stated_concurrency(r) is not None
            and af.group(r) == ("vllm", "Hopper", "MoE")]


def _write(out: str, rows: list[dict[str, str]], replay) -> None:  # type: ignore[no-untyped-def]
    try:
        done = {json.loads(line)["id"] for line in open(out)}
    except FileNotFoundError:
        done = set()
    with open(out, "a") as f:
        for row in rows:
            if row["id"] in done:
                continue
            t = time.process_time()
            r = replay(row)
            f.write(json.dumps({"id": row["id"], "ttft": r.ttft_ms, "tpot": r.tpot_ms,
                                "m_ttft": r.measured_ttft_ms, "m_tpot": r.measured_tpot_ms,
                                "cpu_s": time.process_time() - t, "why": r.why_not}) + "\n")
            f.flush()


def run(out: str, shard: int = 0, shards: int = 1) -> None:
    """aggfaith64.run's replay (CLIENT_WORKLOAD on, every flag at its default) over `pool`."""
    agg.CLIENT_WORKLOAD = True
    agg.SCRIPT_ENV = False  # the default replay recorded here (Triton); marlinrow66 made Marlin
    _write(out, pool()[shard::shards], agg.replay)


def exact_shapes() -> None:
    """Undo the rule in this process: every MoE kernel at the experts' exact shapes."""
    import kvplan.perf.roofline as rl
    rl.kernel_shape = lambda kernel, width, hidden: (width, hidden, 1.0)  # type: ignore


MARLIN_MAX_USERS = 8  # the `marlin` replay's rows: CPU on a shared host (12:17 load 18 on 2)


def run_marlin(out: str, arm: str, shard: int = 0, shards: int = 1) -> None:
    """The pool's gpt-oss rows with the scripts' Marlin kernel (gptosshopper62_runs' `marlin`
    setup) under CLIENT_WORKLOAD, at most MARLIN_MAX_USERS users. `arm` 'before': the experts
    at their exact shapes (the padded shapes of moe_kernel.kernel_shape undone in this
    process); 'after': as the code stands."""
    from tests.benches import gptosshopper62_runs as g62

    if arm == "before":
        exact_shapes()
    agg.CLIENT_WORKLOAD = True
    rows = [r for r in pool() if (r["model_path"], r["precision"]) == GPT_OSS
            and (stated_concurrency(r) or 0) <= MARLIN_MAX_USERS]
    _write(out, rows[shard::shards], lambda row: g62.replay(row, "marlin"))


def _key(row: dict[str, str]) -> tuple[str, str, str, int]:
    return (row["system"], row["model_path"], row["backend_version"], agg.layout(row)[0])


def concurrency_lines(part: list[dict]) -> list[str]:  # type: ignore[type-arg]
    """Measured / kvplan mean TTFT (means over the cell's rows) by server, ISL, concurrency."""
    cells: dict[tuple, dict[int, list]] = defaultdict(lambda: defaultdict(list))  # type: ignore
    for p in part:
        cells[(*_key(p["row"]), int(p["row"]["isl"]))][stated_concurrency(p["row"])].append(p)
    concs = sorted({c for v in cells.values() for c in v})
    lines = ["| GPU | model | vLLM | TP | ISL | " + " | ".join(f"{c} users" for c in concs)
             + " |", "|---|---|---|---:|---:|" + "---:|" * len(concs)]
    for key in sorted(cells):
        out = []
        for c in concs:
            ps = cells[key].get(c)
            if not ps:
                out.append("-")
                continue
            k = statistics.fmean(p["ttft"] for p in ps)
            m = statistics.fmean(p["m_ttft"] for p in ps)
            out.append(f"{m / k:.2f} ({m:,.0f} / {k:,.0f})")
        system, model, version, tp, isl = key
        lines.append(f"| {system} | {model.split('/')[1]} | {version} | {tp} | {isl:,} | "
                     + " | ".join(out) + " |")
    return lines


@cache
def _sim(system: str, model: str, precision: str, version: str, tp: int, marlin: bool
         ) -> object:
    from kvplan.analysis.inputs import estimate_inputs
    from kvplan.analysis.simulate.run import setup
    from kvplan.engines.base import Engine

    config, kv_dtype, _ = agg.AGG_MODELS[(model, precision)]
    spec = agg._spec(config)
    extra = {"mxfp4_backend": "marlin"} if marlin else {}
    inputs = estimate_inputs(spec, context=8192 + 1024 + agg.CONTEXT_PAD, kv_dtype=kv_dtype,
                             engine=Engine.vllm, gpu=agg.GPUS[system], tp=tp,
                             engine_version=version, **extra)  # type: ignore[arg-type]
    return setup(spec, inputs)[0]


def step_ops(system: str, model: str, precision: str, version: str, tp: int, tokens: int,
             marlin: bool = False) -> dict[str, float]:
    """kvplan's roofline prefill step of one `tokens`-token prompt, by op (ms), on the replay's
    engine (its cost's spec, GPU, layout and efficiency; `marlin`: --mxfp4-backend marlin)."""
    from kvplan.perf.roofline import step_time

    c = _sim(system, model, precision, version, tp, marlin).cost  # type: ignore[attr-defined]
    common = {k: v for k, v in c._common.items() if k not in ("layout", "eff")}
    st = step_time(c.spec, c.gpu, tokens=tokens, context=tokens, requests=1, phase="prefill",
                   layout=c.layout, eff=c.eff, **common)
    return {k: v * 1e3 for k, v in st.by_op.items()}


def step_increase(key: tuple[str, str, str, int], marlin: bool) -> dict[str, float]:
    """op -> kvplan's step at LENGTHS[1] minus at LENGTHS[0], ms."""
    system, model, version, tp = key
    precision = dict(agg.AGG_MODELS.keys())[model]
    a, b = (step_ops(system, model, precision, version, tp, n, marlin) for n in LENGTHS)
    return {k: b.get(k, 0.0) - a.get(k, 0.0) for k in b}


def _split(d: dict[str, float]) -> tuple[float, float]:
    return (sum(v for k, v in d.items() if k in SPLIT),
            sum(v for k, v in d.items() if k not in SPLIT))


def increases(part: list[dict], users: int = 4  # type: ignore[type-arg]
              ) -> dict[tuple[str, str, str, int], tuple[float, float]]:
    """server -> (measured, kvplan replay) mean TTFT at ISL 8,192 minus at 1,024, `users`."""
    by: dict[tuple, dict[int, list]] = defaultdict(lambda: defaultdict(list))  # type: ignore
    for p in part:
        if stated_concurrency(p["row"]) == users:
            by[_key(p["row"])][int(p["row"]["isl"])].append(p)
    out = {}
    for key, isl in by.items():
        if {1024, 8192} <= set(isl):
            m, k = ((statistics.fmean(p[f] for p in isl[8192])
                     - statistics.fmean(p[f] for p in isl[1024])) for f in ("m_ttft", "ttft"))
            out[key] = (m, k)
    return out


def increase_lines(part: list[dict]) -> list[str]:  # type: ignore[type-arg]
    lines = ["| GPU | model | vLLM | TP | users | measured increase ms | kvplan replay | "
             "kvplan step: Triton (split / whole) | Marlin (split / whole) | Marlin's ops | "
             "measured - Marlin step, us a token |", "|---|---|---|---:|---:|" + "---:|" * 6]
    for users in (4, 8, 16):
        for key, (m, k) in sorted(increases(part, users).items()):
            tri, mar = step_increase(key, False), step_increase(key, True)
            (ts, tw), (ms_, mw) = _split(tri), _split(mar)
            ops = ", ".join(f"{op} {v:.1f}" for op, v in sorted(mar.items(), key=lambda kv:
                                                                 -kv[1]) if abs(v) >= 0.5)
            gap = (m - ms_ - mw) / (LENGTHS[1] - LENGTHS[0]) * 1e3
            lines.append(f"| {key[0]} | {key[1].split('/')[1]} | {key[2]} | {key[3]} | {users} "
                         f"| {m:,.0f} | {k:,.0f} | {ts + tw:,.1f} ({ts:,.1f} / {tw:,.1f}) | "
                         f"{ms_ + mw:,.1f} ({ms_:,.1f} / {mw:,.1f}) | {ops} | {gap:.1f} |")
    return lines


def trend_lines(part: list[dict]) -> list[str]:  # type: ignore[type-arg]
    """Per GPU, over its gpt-oss TP degrees at 4 users: measured increase = x x kvplan's split
    ops (Marlin) + c, and the same against the Triton pricing."""
    lines = []
    inc = increases(part, 4)
    for system in ("h200_sxm", "h100_sxm"):
        keys = sorted(k for k in inc if k[0] == system and k[1] == GPT_OSS[0])
        ys = [inc[k][0] for k in keys]
        for marlin in (False, True):
            xs = [_split(step_increase(k, marlin))[0] for k in keys]
            x, c = fit(xs, ys)
            lines.append(f"{system} gpt-oss-120b TP {', '.join(str(k[3]) for k in keys)} "
                         f"({'Marlin' if marlin else 'Triton'}): measured increase "
                         f"{' / '.join(f'{y:.0f}' for y in ys)} ms = {x:.2f} x split "
                         f"({' / '.join(f'{v:.0f}' for v in xs)}) + {c:.0f} ms")
    return lines


def _abs_err(p: dict, f: str) -> float:  # type: ignore[type-arg]
    return abs(p[f] / p["m_" + f] - 1)


def evaluate_lines(before: str, after: str) -> list[str]:
    """The rows both `marlin` arms replayed: median |error| of mean TTFT and TPOT by GPU x ISL
    and pooled, and the paired slopes (aggfaith64.paired, at <= 4 users) by server."""
    arms = [{p["id"]: p for p in af.load(path)} for path in (before, after)]
    ids = sorted(set(arms[0]) & set(arms[1]))
    groups: dict[str, list[str]] = defaultdict(list)
    for i in ids:
        row = arms[0][i]["row"]
        groups["all"].append(i)
        groups[f"{row['system']} ISL {row['isl']}"].append(i)
        groups[f"{row['system']} TP {agg.layout(row)[0]}"].append(i)
    lines = ["| rows | n | TTFT median abs err | after | TPOT median abs err | after | "
             "TTFT ratio (median) | after |", "|---|---:|" + "---:|" * 6]
    for g in sorted(groups, key=lambda g: (g != "all", g)):
        cells = []
        for fn in (lambda p: _abs_err(p, "ttft"), lambda p: _abs_err(p, "tpot"),
                   lambda p: p["ttft"] / p["m_ttft"]):
            cells += [statistics.median(fn(a[i]) for i in groups[g]) for a in arms]
        lines.append(f"| {g} | {len(groups[g])} | {cells[0]:.1%} | {cells[1]:.1%} | "
                     f"{cells[2]:.1%} | {cells[3]:.1%} | {cells[4]:.2f} | {cells[5]:.2f} |")
    low = [[a[i] for i in ids if stated_concurrency(a[i]["row"]) <= af.LOW_LOAD] for a in arms]
    lines += ["", "| server (paired, <= 4 users) | a before | a after | b before ms | b after |",
              "|---|---:|---:|---:|---:|"]
    for (k0, a0, b0, _), (k1, a1, b1, _) in zip(af.paired(low[0]), af.paired(low[1]),
                                                strict=True):
        assert k0 == k1
        lines.append(f"| {k0[2]} TP {k0[5]} | {a0:.2f} | {a1:.2f} | {b0:,.0f} | {b1:,.0f} |")
    return lines


def report(path: str, rule: str = "after") -> None:
    """The three tables; `rule` 'before': kvplan's steps with the padded shapes undone."""
    if rule == "before":
        exact_shapes()
    part = af.load(path)
    print("\n".join(concurrency_lines(part)))
    print()
    print("\n".join(increase_lines(part)))
    print()
    print("\n".join(trend_lines(part)))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "run":
        run(sys.argv[2], *map(int, sys.argv[3:5]))
    elif cmd == "marlin":
        run_marlin(sys.argv[2], sys.argv[3], *map(int, sys.argv[4:6]))
    elif cmd == "p57":
        if sys.argv[2] == "before":
            exact_shapes()
        from tests.benches import marlinhopper61_runs
        sys.argv = [sys.argv[0], "--json", sys.argv[3]]
        marlinhopper61_runs.main()
    elif cmd == "report":
        report(*sys.argv[2:4])
    elif cmd == "evaluate":
        print("\n".join(evaluate_lines(sys.argv[2], sys.argv[3])))
