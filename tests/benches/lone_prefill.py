"""Why kvplan prices a lone prompt short (issue 30, lonepf60): every concurrency-1 run of the
prospective sets (tests/benches/prospective*_runs.py, replayed as tests.benches.ttft_forensic
replays them), its measured TTFT against kvplan's, kvplan's own prefill split by operation, and
the hypotheses as counterfactuals, one at a time and together.

The hypotheses (the brief's a-d):
a. The routed experts' prefill GEMMs: moefit58's fractions (`moe_gemm fitted`: 0.33 bf16 / 0.20
   block FP8 of the peak) and moeshape59's by rows per expert, both opt-in, both fitted on
   aiconfigurator's H100 kernel tables (no serving row).
b. Chunking: the budget the replay schedules the lone prompt with and the steps it took (the
   `budget` and `steps` columns): vLLM's `max_num_batched_tokens` as kvplan resolves it (the
   run's flag where it states one, else the release's default) and
   ceil(prompt / budget) prefill steps.
c. The prompt's host work per token, measured through vLLM's own code on this host's CPU
   (kvplan.engines.vllm.frontend.VLLM_PROMPT_HOST_COST, tests/benches/prompt_host_cost.py:
   2.32 us a prompt token); beside it, the GPUs' idle time per request that the publisher's
   nvidia-smi logs imply where they are committed (`monitor`: Wentao274's 10 s samples of
   utilization.gpu on all eight GPUs; idle = (1 - mean utilization over the run's active
   samples) x the run's duration / prompts; at concurrency 1 the GPUs idle while the server
   tokenizes).
d. Read in vLLM's model code: the MoE router of MiniMax-M2 and GLM-4-MoE is an FP32 GEMM
   (vLLM 0.15.0 vllm/model_executor/models/minimax_m2.py:112-131 `self.gate = ReplicatedLinear(
   ..., params_dtype=torch.float32)`, `self.gate(hidden_states.to(torch.float32))`;
   glm4_moe.py:143-148, :208 `nn.Linear(..., dtype=torch.float32)`; the 0.32 wheel's
   minimax_m2.py:110-131 `GateLinear(params_dtype=torch.float32)`, whose fp32 kernel serves
   M <= 32 only and falls back to F.linear, gate_linear.py:261-293, :389-400), run at
   torch's "highest" float32 matmul precision (0.15.0 envs.py:76, v1/worker/gpu_worker.py:86-87:
   no TF32), so on CUDA cores, replicated on every rank: 2 x experts x hidden FLOPs a token a
   MoE layer at the FP32 peak x kvplan's dense GEMM fraction. kvplan's roofline charged the
   router's bytes, not these FLOPs. (A bench-only `Fp32Router` at 64300fdb; since fp32router61
   kvplan's default rule, kvplan.engines.router_gemm / kvplan.perf.router_cost, read per engine
   and release: this bench's "d off" replays kvplan without it, `without_fp32_router`.)

First evaluation (kvplan at 64300fdb: c and d frozen before any all-set run; both read after
prospective54's GLM-4.6 and prospective58's four concurrency-1 rows, which shaped them:
tests/benches/fitted_rows.py SHAPED_BY). Measured / kvplan mean TTFT at concurrency 1:
- Dense or MoE: all five vLLM concurrency-1 rows are MoE (GLM-4.6 bf16 H200 TP8, vLLM 0.11.0;
  MiniMax-M2.5 FP8 H100 TP8 EP8, 0.20.0); the sets hold no dense vLLM row at concurrency 1. Over
  every load (tests.benches.ttft_forensic's regimes) dense runs miss less: median TTFT error
  -41.0 % (36 runs, TTFT ratio / TPOT ratio 0.71) against MoE -63.5 % (102, 0.59). SGLang's
  concurrency-1 MoE rows without a cold first request sit at 0.64-1.09x (ERNIE-4.5 MI300X,
  MiniMax-M2.7 GB300): the miss is vLLM's.
- b, chunking: every lone prompt is chunked at its budget, 8,192 (GLM-4.6: kvplan's rule for
  vLLM 0.11.0's OpenAI server on H200, kvplan.engines.vllm.alloc.vllm_batch_defaults: >= 70 GiB,
  not an A100; MiniMax: the run's flag): 1 / 1 / 2 / 9 / 24 steps for
  998 / 1,063 / 10,279 / 70,039 / 194,599 tokens (tests/test_lone_prefill.py holds the last at
  23 x 8,192 + 6,183). No row runs at a 2,048 budget. Not the miss.
- c, host: 3.82 -> 3.66x (GLM-4.6), 3.25 -> 2.97 / 2.62 -> 2.12 / 1.80 -> 1.60 / 1.41 -> 1.32x
  (MiniMax 1,063 / 10,279 / 70,039 / 194,599 tokens). The publisher's nvidia-smi logs put the
  GPUs' idle time per request at 19.5 / 62.6 / 207.3 / 598.8 ms for those four: 2.7-3.0 us a
  prompt token beyond a fixed ~20 ms (4.7 at 10,279), against 2.32 measured here; the GPUs
  were busy (a kernel running) for the rest of each request, so what stays missing is time
  with a kernel running, not host time before the engine.
- a, experts' fractions: fitted 2.62 -> 2.12 / 1.80 -> 1.55 / 1.41 -> 1.30x on MiniMax's long
  prompts (by rows: 2.05 / 1.52 / 1.29x); GLM-4.6's and the 1,063-token steps (~50 rows an
  expert, the weights' bytes bound) do not move.
- d, FP32 router: 3.82 -> 3.61x, 3.25 -> 3.00 / 2.62 -> 2.16 / 1.80 -> 1.62 / 1.41 -> 1.33x.
- a + c + d: 3.46x and 2.77 / 1.55 / 1.28 / 1.18x, TPOT unchanged (-1, +17, +14, +3, -7 %).
  The gap left, 139.6 ms and 55.7 / 94.1 / 499.7 / 1,558.4 ms, is per prefill step rather
  than per token: 140 and 56 / 47 / 56 / 65 ms a step (7-52 us a token). Every one of these
  steps is above vLLM's largest CUDA graph (512 and 128 tokens), where kvplan charges no
  launch (kvplan.perf.vllm_ungraphed's 4.4 us a kernel adds ~6 ms a MiniMax step); SGLang's
  eager price of the same steps (tests.benches.ttft_forensic.AboveGraphs: 70 us x SGLang's op
  count) adds 121 ms (GLM-4.6) and 118 ms (MiniMax, 1,063 tokens). What the ~50-140 ms a step
  is was not settled without a GPU: no rule is written from it (it would be fitted on these
  rows).

All sets (`--all`, vLLM runs, median |error| of mean TTFT / mean TPOT, before -> after; 52 and
59 hold no vLLM run). d alone moves only MiniMax-M2 / GLM-4-MoE runs on H100 / H200: held out,
prospective31's four GLM-4.5-Air TP4 runs (TTFT -78.2 / -79.3 / -83.4 / -93.7 % -> -77.5 /
-78.5 / -82.5 / -93.2 %, TPOT closer on all four) and prospective56's two MiniMax-M2 runs
(-60.4 / -53.3 % -> -52.9 / -44.4 %, TPOT -22.2 / -19.6 -> -21.9 / -19.3 %): every moved
held-out run closer on both, no set median moved (31: 68.8 / 62.8 %, 56: 39.8 / 7.4 %); shaped:
54 55.4 -> 51.0 / 16.5 -> 14.9 %, 58 54.4 -> 44.8 / 14.2 -> 13.0 %. a + c + d: held out 30
79.4 -> 76.4 / 48.3 -> 48.3 %, 31 68.8 -> 44.5 / 62.8 -> 38.9, 53 45.6 -> 34.5 / 44.3 -> 27.8,
53b 82.7 -> 79.7 / 43.5 -> 43.2, 56 39.8 -> 40.0 / 7.4 -> 8.7 (worse), 57 72.0 -> 56.8 / 23.1
-> 19.3; shaped 54 55.4 -> 40.7 / 16.5 -> 12.6, 58 54.4 -> 27.9 / 14.2 -> 9.2. Not a default
(56's TPOT worse; a is moefit58's opt-in, whose own bench keeps it off).
c alone (tests.benches.ttft_forensic's counterfactual "prompt host work per token (measured)",
every vLLM run): held out 30 79.4 -> 76.4 / 48.3 -> 48.3 %, 31 68.8 -> 68.8 / 62.8 -> 62.8, 53
45.6 -> 45.6 / 44.3 -> 44.3, 53b 82.7 -> 80.9 / 43.5 -> 43.5, 56 39.8 -> 40.4 / 7.4 -> 10.1, 57
72.0 -> 68.0 / 23.1 -> 24.6 (the serial stage spaces the admissions: smaller decode batches,
TPOT lower); shaped 54 55.4 -> 54.7 / 16.5 -> 16.5. TPOT worse on 56 and 57: opt-in. As
--frontend's per-token term ("--frontend with the measured per-token term", against no stage):
30 79.4 -> 4.8 % (its fit rows; held out of the fit 50.6 -> 50.5), 31 68.8 -> 68.6, 53 45.6 ->
45.2, 53b 82.7 -> 59.5, 56 39.8 -> 25.1 / 7.4 -> 8.1, 57 72.0 -> 57.9 / 23.1 -> 26.1; shaped
54 55.4 -> 47.6. c + a: 31 68.8 -> 44.5 / 62.8 -> 38.9, 53 45.6 -> 34.5 / 44.3 -> 30.7, 57
72.0 -> 56.8 / 23.1 -> 19.3, 56 39.8 -> 40.4 / 7.4 -> 8.7.

The rule as kvplan's default (fp32router61, frozen at 63b9be7c before any row below was
replayed with it; `--all`, every engine's runs, median |error| of mean TTFT / mean TPOT before ->
after). Held out: prospective31 4 runs moved (GLM-4.5-Air H100 TP4, vLLM 0.11.0), each closer on
both, the set's medians unchanged (65.4 / 58.6 %); prospective53 4 moved (GLM-4.5 H200 TP8,
0.11.0), each closer on both, 45.7 -> 44.4 / 44.3 -> 39.7 %; prospective56 2 moved (MiniMax-M2
H100 TP8): TTFT -60.4 / -53.3 -> -52.9 / -44.4 %, TPOT -22.2 / -19.6 -> -21.9 / -19.2 %, the
set's medians unchanged (39.8 / 8.4 %); prospective53b's Step-3.5-Flash run would move but kvplan
refuses it; 30, 52, 57, 59 move nothing (no priced architecture on a GPU with an FP32 peak; the
SGLang MiniMax / GLM rows are on GB300 / B200). Shaped (read before the rule): prospective54
(GLM-4.6, 2 runs) 48.4 -> 44.7 / 6.6 -> 6.6 %; prospective58 (MiniMax-M2.5 H100, 33 runs) 47.4 ->
41.9 / 14.1 -> 11.9 %, TTFT closer on 32 of 33, TPOT closer on 17, worse on 12. `--agg`, the
aggregated aiconfigurator rows it moves (MiniMax-M2.5 under vLLM 0.16 / 0.18 on H100 / H200; the
B200 / B300 rows have no FP32 peak), median |error| of TTFT / TPOT and rows with both in the band:
held out, H100 0.18.0 (13) 31.9 -> 28.4 / 8.6 -> 9.4 %, 7 -> 6; H200 0.16.0 (26) 36.4 -> 20.2 /
14.6 -> 14.5 %, 8 -> 16; H200 0.18.0 (45) 35.9 -> 29.3 / 7.8 -> 6.4 %, 22 -> 25; shaped by
b8b24713, H100 0.18.0 (13) 31.9 -> 50.9 % (worse) / 8.8 -> 8.6 %, 6 -> 6. The cost bench's three
MiniMax-M2.5 SGLang 0.5.9 H100 rows (held out): TPOT measured / predicted 0.92 -> 0.92 and 0.70
-> 0.69 (predicted 16.02 -> 16.08 and 41.52 -> 41.90 ms), TTFT at concurrency 1 136.4 -> 137.6 ms
against 145.2 measured; no band count moved. It follows the engines' code: the default, also
where a set got worse.

Run: python -m tests.benches.lone_prefill [SET ...] (Markdown to stdout; default every set);
`--all`: instead, every set's runs (ALL_SETS, every engine) without the FP32 router (kvplan
before fp32router61) -> with it (the default), the set medians and each moved run's errors;
`--agg`: the aggregated aiconfigurator rows it moves (tests.benches.aiconfig_agg_runs), before
-> after by split and host.
"""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf import router_cost
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from kvplan.perf.router_cost import fp32_router_runs, fp32_router_s
from kvplan.weights.params import count_params
from tests.benches import ttft_forensic as tf
from tests.benches.prospective_runs import REPO, load

# The sets of the all-set evaluation: the forensic's and prospective59's.
ALL_SETS = (*tf.SETS, "prospective59")
MIRROR = Path("/work/.mirror/Wentao274+vllm-benchmark-test/repo")
# by_op keys of roofline.step_time, grouped for the split.
GROUPS = {"experts": ("experts",), "FP32 router": ("router_fp32",),
          "all-reduce": ("tp_all_reduce", "qk_norm_all_reduce"),
          "GEMMs": ("attention_proj", "mlp", "lm_head"),
          "small kernels + layer overhead": ("small_kernels", "layer_overhead")}


def router_s_per_token(spec: Any, gpu: str, engine: str, version: str) -> float | None:
    """The FP32 router's seconds a token (every MoE layer) as kvplan prices it since
    fp32router61 (kvplan.perf.router_cost, the engine's kvplan.engines.router_gemm table), or
    None where not priced (another architecture, release or GPU)."""
    g = get_gpu(gpu)
    eff = engine_efficiency(engine, device_efficiency(g), version=version, spec=spec)
    if not fp32_router_runs(spec, g, eff):
        return None
    return sum(fp32_router_s(spec, g, eff, router_params=layer.router, tokens=1)
               for layer in count_params(spec).layers)


def _mixed(cost: Any) -> MixedStepCost:
    while not isinstance(cost, MixedStepCost):
        cost = cost.inner
    return cost


@contextmanager
def without_fp32_router() -> Iterator[None]:
    """kvplan before fp32router61: the router's bytes only (kvplan.perf.router_cost's price
    turned to zero)."""
    inner = router_cost.fp32_router_s
    router_cost.fp32_router_s = lambda *a, **k: 0.0  # type: ignore[assignment]
    try:
        yield
    finally:
        router_cost.fp32_router_s = inner  # type: ignore[assignment]


# The counterfactuals: (name, ttft_forensic options, with the FP32 router). The FP32 router is
# kvplan's default since fp32router61: "d off" is kvplan before it.
CASES: tuple[tuple[str, tf.Options, bool], ...] = (
    ("d off: no FP32 router (before)", tf.Options(), False),
    ("a: moe_gemm fitted", tf.Options(moe_gemm=True), True),
    ("a: moe_gemm by rows", tf.Options(moe_gemm_shape=True), True),
    ("c: prompt host per token", tf.Options(prompt_host=True), True),
    ("a + c + d", tf.Options(prompt_host=True, moe_gemm=True), True),
)


def replay(set_name: str, run: dict, opts: tf.Options, router: bool) -> tf.Row:  # type: ignore[type-arg]
    if not router:
        with without_fp32_router():
            return tf.replay(set_name, run, opts)
    return tf.replay(set_name, run, opts)


def lone_runs(names: list[str]) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    return [(name, run) for name in names for run in load(tf.DATA / f"{name}.json")["runs"]
            if run["workload"].get("max_concurrency") == 1]


def prefill_split(run: dict) -> tuple[int, int, dict[str, float]]:  # type: ignore[type-arg]
    """kvplan's lone prompt as the replay prices it: the budget, its chunks and their seconds
    by group (GROUPS, the attention cores over the chunks, the rest)."""
    spec = load_spec(str(REPO / run["model"]))
    engine = tf.engine_of(run)
    inputs = tf.estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                                engine=engine, engine_version=run[engine.value],
                                mem_fraction=run.get("gpu_memory_utilization"),
                                max_num_seqs=run.get("max_num_seqs"),
                                max_num_batched_tokens=run.get("max_num_batched_tokens"),
                                expert_parallel=run.get("expert_parallel", False))
    sim, _ = tf.setup(spec, inputs, async_scheduling=run.get("async_scheduling"))
    mixed = _mixed(sim.cost)
    sched = sim.sglang if sim.sglang is not None else sim.scheduler
    budget = int(getattr(sched, "chunked_prefill_size", None)
                 or sim.scheduler.max_num_batched_tokens)
    prompt = round(tf.prompt_tokens(run))
    split = dict.fromkeys((*GROUPS, "attention cores", "rest"), 0.0)
    start = 0
    while start < prompt:
        n = min(budget, prompt - start)
        total = mixed.seconds(decode_contexts=[], chunks=[(start, n)])
        attention = mixed.attention_seconds([], [(start, n)])
        ops = step_time(spec, mixed.gpu, tokens=n, context=1, requests=1, logits=1,
                        **mixed._common).by_op
        for group, keys in GROUPS.items():
            split[group] += sum(ops.get(k, 0.0) for k in keys)
        split["attention cores"] += attention
        split["rest"] += total - attention - sum(
            ops.get(k, 0.0) for keys in GROUPS.values() for k in keys)
        start += n
    return budget, math.ceil(prompt / budget), split


def monitor_idle_ms(run: dict) -> float | None:  # type: ignore[type-arg]
    """The GPUs' idle ms per request by the publisher's nvidia-smi log (module docstring, c),
    where the run's log is in the local mirror; else None."""
    url = run.get("url", "")
    if "Wentao274/vllm-benchmark-test" not in url or not MIRROR.exists():
        return None
    case = url.split("/reports/benchmark/")[1].rsplit("/", 1)[0]
    listing = subprocess.run(["git", "-C", str(MIRROR), "ls-tree", "-r", "--name-only", "HEAD",
                              f"monitor/logs/{case}/"], capture_output=True, text=True).stdout
    logs = listing.split()
    if not logs:
        return None
    text = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{logs[0]}"],
                          capture_output=True, text=True).stdout
    by_gpu: dict[str, list[int]] = {}
    for line in text.splitlines():
        cells = line.split(",")
        if len(cells) == 8 and cells[5].isdigit():
            by_gpu.setdefault(cells[1], []).append(int(cells[5]))
    idle = []
    for util in by_gpu.values():
        busy = [i for i, u in enumerate(util) if u > 0]
        active = util[busy[0]:busy[-1] + 1]
        idle.append(1 - sum(active) / (100 * len(active)))
    m, w = run["measured"], run["workload"]
    return sum(idle) / len(idle) * m["duration_s"] / w["num_prompts"] * 1e3


def router_priced(run: dict) -> bool:  # type: ignore[type-arg]
    """Whether kvplan's FP32 router rule moves `run` (its architecture, engine release and
    GPU priced)."""
    spec = load_spec(str(REPO / run["model"]))
    engine = tf.engine_of(run).value
    return router_s_per_token(spec, run["gpu"], engine, run[engine]) is not None


def all_sets() -> None:
    """Every set's runs (every engine): the median |error| of mean TTFT and mean TPOT without
    the FP32 router (kvplan before fp32router61) -> with it, over the same runs; only the runs
    it moves are replayed twice."""
    print("| set | runs moved / simulated | TTFT mean median abs err | "
          "TPOT mean median abs err | moved runs: TTFT err, TPOT err before -> after |")
    print("|---|---:|---:|---:|---|")
    for name in ALL_SETS:
        runs = load(tf.DATA / f"{name}.json")["runs"]
        after = [tf.replay(name, run) for run in runs]
        moved = {run["id"] for run in runs if router_priced(run)}
        before = [replay(name, run, tf.Options(), False) if run["id"] in moved else row
                  for run, row in zip(runs, after, strict=True)]
        b, a = tf.set_medians(before), tf.set_medians(after)
        cells = "; ".join(
            f"{x.ttft_err:+.1%} / {x.tpot_err:+.1%} -> {y.ttft_err:+.1%} / {y.tpot_err:+.1%}"
            for x, y in zip(before, after, strict=True)
            if x.run["id"] in moved and not x.refused)
        print(f"| {name} | {len(moved)} / {a[2]} | {b[0]:.1%} -> {a[0]:.1%} | "
              f"{b[1]:.1%} -> {a[1]:.1%} | {cells or '-'} |", flush=True)


def agg_rows() -> None:
    """The aggregated aiconfigurator rows (tests.benches.aiconfig_agg_runs) the FP32 router
    moves, replayed one by one without it (kvplan before fp32router61) and with it: by split
    (held out / shaped), the median |error| of TTFT and TPOT before -> after and the rows in
    the bench's band."""
    from tests.benches import aiconfig_agg_runs as agg

    def moved(row: dict[str, str]) -> bool:
        if agg.why_not(row) or agg.release(row) is None:
            return False
        spec = agg._spec(agg.AGG_MODELS[(row["model_path"], row["precision"])][0])
        return router_s_per_token(spec, agg.GPUS[row["system"]], row["backend"],
                                  agg.release(row) or "") is not None

    rows = [row for row in agg.rows() if moved(row)]
    after = [agg.replay(row) for row in rows]
    agg._setup.cache_clear()
    with without_fp32_router():
        before = [agg.replay(row) for row in rows]
    agg._setup.cache_clear()
    print("| split | rows | backend / model / GPU / release | TTFT median abs err | "
          "TPOT median abs err | both in band |")
    print("|---|---:|---|---:|---:|---:|")
    groups: dict[tuple[str, str], list[tuple[Any, Any]]] = {}
    for row, b, a in zip(rows, before, after, strict=True):
        if a.ratios is None or b.ratios is None:
            continue
        key = (agg.split_of(a), f"{row['backend']} / {row['model_path']} / {row['system']} / "
               f"{agg.release(row)}")
        groups.setdefault(key, []).append((b, a))

    def med(pairs: list[tuple[Any, Any]], i: int, side: int) -> str:
        return f"{statistics.median(abs(p[side].ratios[i] - 1) for p in pairs):.1%}"

    for (split, what), pairs in sorted(groups.items()):
        band = [sum(p[side].inside for p in pairs) for side in (0, 1)]
        print(f"| {split} | {len(pairs)} | {what} | {med(pairs, 0, 0)} -> {med(pairs, 0, 1)} | "
              f"{med(pairs, 1, 0)} -> {med(pairs, 1, 1)} | {band[0]} -> {band[1]} |", flush=True)
    every = [pair for pairs in groups.values() for pair in pairs]
    if every:
        band = [sum(p[side].inside for p in every) for side in (0, 1)]
        print(f"| all | {len(every)} | every moved row | {med(every, 0, 0)} -> {med(every, 0, 1)}"
              f" | {med(every, 1, 0)} -> {med(every, 1, 1)} | {band[0]} -> {band[1]} |")


def main(argv: list[str]) -> None:
    if "--all" in argv:
        all_sets()
        return
    if "--agg" in argv:
        agg_rows()
        return
    names = argv or list(tf.SETS)
    runs = lone_runs(names)
    print("## Concurrency 1: kvplan's lone prompt against the measured TTFT\n")
    print("| set | run | engine | model | prompt tokens | budget | steps | measured TTFT ms | "
          "kvplan ms | measured / kvplan | TPOT err | kvplan's prefill ms: "
          + " / ".join((*GROUPS, "attention cores", "rest")) + " | GPU idle / request ms "
          "(nvidia-smi) | measured host term ms |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    base = {}
    for name, run in runs:
        row = base[run["id"]] = tf.replay(name, run)
        if row.refused:
            print(f"| {name} | {run['id']} | refused: {row.refused} |" + " |" * 11)
            continue
        budget, steps, split = prefill_split(run)
        idle = monitor_idle_ms(run)
        tokens = tf.prompt_tokens(run)
        host = (f"{tokens * tf.VLLM_PROMPT_HOST_S_PER_TOKEN * 1e3:,.1f}"
                if tf.engine_of(run).value == "vllm" else "-")
        print(f"| {name} | {run['id']} | {tf.engine_of(run).value} {run[tf.engine_of(run).value]}"
              f" | {'dense' if row.dense else 'MoE'} | {tokens:,.0f} | {budget:,} | {steps} | "
              f"{row.measured['mean_ttft_ms']:,.1f} | {row.ttft_mean_ms:,.1f} | "
              f"{row.measured['mean_ttft_ms'] / row.ttft_mean_ms:.2f}x | {row.tpot_err:+.1%} | "
              + " / ".join(f"{v * 1e3:,.1f}" for v in split.values())
              + f" | {'-' if idle is None else f'{idle:,.1f}'} | {host} |")
    print("\n| set | run | prompt tokens | base | " + " | ".join(c for c, _, _ in CASES)
          + " | gap left (a + c + d) ms | per prompt token us |")
    print("|---|---|---:|---:|" + "---:|" * len(CASES) + "---:|---:|")
    for name, run in runs:
        row = base[run["id"]]
        if row.refused or tf.engine_of(run).value != "vllm":
            continue
        cells, last = [], row
        for _, opts, router in CASES:
            last = replay(name, run, opts, router)
            cells.append(f"{last.measured['mean_ttft_ms'] / last.ttft_mean_ms:.2f}x / "
                         f"{last.tpot_err:+.0%}")
        tokens = tf.prompt_tokens(run)
        print(f"| {name} | {run['id']} | {tokens:,.0f} | "
              f"{row.measured['mean_ttft_ms'] / row.ttft_mean_ms:.2f}x / {row.tpot_err:+.0%} | "
              + " | ".join(cells) + f" | {last.gap_ms:,.1f} | {last.gap_ms / tokens * 1e3:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
