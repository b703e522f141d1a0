"""AccelMark's published online results, replayed in `kvplan simulate` (issue 30): the blind2 set.

AccelMark (https://github.com/FreedomIntelligence/AccelMark) runs vLLM's AsyncLLMEngine in the
benchmark's own process and sends each suite's prompts at Poisson arrival times; its
`online/result.json` files publish p50 / p90 / p99 TTFT and p50 / p90 TPOT per QPS level. The
runs kept (tests/data/sim_to_real/runs.json "blind2_runs") were frozen there, with every setting
and every assumption spelled out ("blind2"), before kvplan was run on any of them.

The replay follows loadgen/loadgen.py `_run_online_async`: one `random.Random(42)` draws the
exponential gaps of every run of every level in order; each run sends the suite's first
`requests_per_run` prompts once; the next run starts when the previous one has drained, on the
same engine (so its prefix cache holds the earlier runs' prompts). Here each run starts
`_GAP_S` after the previous run's last arrival: an idle engine changes no state (its cache is
only evicted by new allocations), so any gap longer than the drain gives the same result as
back-to-back. The output lengths are not published (greedy answers, no ignore_eos): they are
drawn from the distribution runs.json states, one per prompt, the same in every run.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.run import replica_step_cost, setup
from kvplan.analysis.simulate.scheduler import SimRequest, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.mixed_step import MixedStepCost
from tests.benches.fitted_rows import SHAPED_BY

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
REPO = Path(__file__).resolve().parents[2]
_GAP_S = 3600.0
# Seeds of the assumed length draws (not AccelMark's: its prompts are fixed, its outputs are
# the model's).
_OUTPUT_SEED = 1
_INPUT_SEED = 2
# The figures compared: measured key -> kvplan's.
PAIRS = (("ttft_ms_p50", "ttft_p50"), ("ttft_ms_p90", "ttft_p90"), ("tpot_ms_p50", "tpot_p50"))
# Every fraction of the datasheet peaks at 1 and no overhead: the cost model as a lower bound on
# a step's time (`work_bound_s`).
PEAK = Efficiency(hbm=1.0, fp8_gemm_hbm=1.0, gemm=1.0, attention=1.0, kernel_floor_s=0.0,
                  prefill_launch_s=0.0, layer_overhead_s=0.0)
# A run's replayed prompts need more than this share of the measured elapsed time at the
# datasheet peak: its replay does not match what ran (`what_differs`). Prefill at long context
# reaches 0.6-0.7 of the peak at best (kvplan.perf.efficiency's GEMM and attention fractions).
_FALSIFIED_AT = 0.8


# Read after the set was first evaluated (the figures are the published ones, kvplan's as in the
# table above and the cost bench's, examples/cost-bench.md). Point (3) led to one rule
# (tests/benches/fitted_rows.py SHAPED_BY); the medians before it are those of commit ac6a996's
# page.
FINDING = (
    "What the misses are (read after the first evaluation; one rule was written after it, point "
    "(3), so every level of this set shaped it and none is a test of it). (1) Suite D's replay "
    "is not what ran: its assumed prompts (200 of about 28.7 K "
    "tokens, drawn from the suite's stated distribution because the dataset file is not in the "
    "stored snapshot) need more of the GPU than the measured run took, at every fraction of "
    "the datasheet peak equal to 1 (last column): the RTX-5090 run would have had to run "
    "faster than its peak, the A100 one at a share of it no long-context prefill reaches. "
    "Fewer or shorter prompts, or prompts sharing a prefix, ran; its six levels measure the "
    "assumption, and the set's medians less them are shown apart (a split made after the "
    "evaluation, by this bound alone). (2) At the lowest QPS kvplan's p50 TTFT is "
    "short by a near-constant time per host: 11-12 ms on the A100 host for the 8B models and "
    "4.6 ms for the 0.5B one, 23 ms on the RTX-5090 host for the 8B ones and 26.5 ms for "
    "the 0.5B one. On the RTX-5090 host the 0.5B model's batch-1 TPOT is 5.11 ms measured "
    "against 1.83 ms on the A100 host (the cost bench's AccelMark interactive rows, 2.26 ms "
    "predicted): that host spends several ms per step outside the GPU, which kvplan has no "
    "cost for, and with two to three steps inside a TTFT it shows as the offset; the A100 "
    "host's is smaller. Neither the runner (AsyncLLMEngine in the load generator's own "
    "process, tokenizing in its input processor and detokenizing every step in its output "
    "handler) nor vLLM's engine core gives a time for that work in code. (3) On the A100, "
    "the measured p50 TPOT grows 13.2 -> 17.6 -> 22.3 ms from QPS 5 to 10 to 25 and above "
    "(suites A and C), kvplan's was 10.7 -> 11.3 -> 13.0-14.4 ms. Read after that "
    "evaluation: vLLM 0.19.1 / 0.20.2 run FlashAttention 2 on SM 8.x and 12.x "
    "(vllm/v1/attention/backends/fa_utils.py `get_flash_attn_version`: FA3 on 9.x, FA4 on "
    "10.x, else 2; platforms/cuda.py `_get_backend_priorities`: FLASH_ATTN first but on 10.x) "
    "and call `flash_attn_varlen_func` with the block table and the step's longest query "
    "(flash_attn.py `FlashAttentionImpl.forward`). vllm-flash-attn's `mha_varlen_fwd` "
    "(csrc/flash_attn/flash_api.cpp at 04325b6) then always runs the split-KV kernel "
    "(`run_mha_fwd(params, stream, paged_KV)`), whose query tile is 64 rows "
    "(src/flash_fwd_launch_template.h `run_mha_fwd_splitkv_dispatch`, kBlockM = 64), one "
    "thread block per query head and sequence, and folds a KV head's query heads into one "
    "tile (`seqlenq_ngroups_swapped`) only when max_seqlen_q == 1 and the layer has no window: "
    "a decode token in a step with a prefill chunk computes 64 rows per query head, 64x its "
    "exact FLOPs (16x in a decode-only step for Llama-3-8B's 4 query heads per KV head). On "
    "the A100 that makes a mixed step's decode attention compute-bound at 2.5x its cache-read "
    "time. The rule (kvplan.perf.attention_kernel, declared in "
    "kvplan.engines.vllm.attention_backend; commit 297958c, nothing fitted) moves kvplan's "
    "A100 TPOT to 10.7 -> 11.5 -> 14.3-15.7 ms: about 1.3 ms of the 8-9 ms gap at "
    "saturation, the rest unexplained by code read here (not read: whether the query heads' "
    "re-reads of the same K/V in a mixed step hit L2, kvplan counts them once; per-request "
    "CPU work in the engine core on the EPYC 7742 host). The same rule puts the RTX-5090's "
    "saturated TPOT at 29.4-31.3 ms, 3.5-9.6 % above the measured 28.4-28.8 (0.3-5.5 % below "
    "before): those rows do not show the padded tiles costing more than the rule charges at "
    "attention efficiency 0.60. Suite D's A100 TPOT moves 166 -> 212 ms (232 measured), a "
    "falsified replay (point 1). FlashAttention 3 (SM 9.x: the sim-to-real and prospective30 "
    "H100 rows) packs GQA for every varlen call (hopper/heuristics.h `should_pack_gqa`), "
    "mixed or not, at 128 FLOPs per cache byte, below the H100's ratio: no rule, and those "
    "rows did not move. The set's medians before the rule: TTFT p50 45.9 %, p90 49.1 %, "
    "TPOT p50 21.3 % (A100 44.1 / 48.4 / 28.5 %, RTX-5090 71.0 / 94.4 / 16.9 %).")


@dataclass(frozen=True, kw_only=True)
class Level:
    run_id: str
    qps: float
    measured: dict[str, float]
    simulated: dict[str, float]
    preemptions: int


def load() -> tuple[dict, list[dict]]:  # type: ignore[type-arg]
    doc = json.loads((DATA / "runs.json").read_text())
    return doc, doc["blind2_runs"]


def _lengths(run: dict, doc: dict) -> list[tuple[int, int]]:  # type: ignore[type-arg]
    """(prompt, output) tokens of each prompt of a run, as runs.json "blind2" states them."""
    w = run["workload"]
    n = w["requests_per_run"]
    spec = w["input"]
    if spec["kind"] == "dataset":
        raw = doc["blind2_input_tokens"][spec["dataset"]][:n]
    else:  # normal, capped
        rng = random.Random(_INPUT_SEED)
        raw = [min(spec["max"], max(1, round(rng.gauss(spec["mean"], spec["sigma"]))))
               for _ in range(n)]
    out = w["output"]
    rng = random.Random(_OUTPUT_SEED)
    pairs = []
    for tokens in raw:
        prompt = tokens + w["template_tokens"]
        if out["kind"] == "fixed":
            o = out["tokens"]
        else:
            o = max(1, round(rng.lognormvariate(math.log(out["median"]), out["sigma"])))
        # vLLM stops a request at max_model_len (prompt + output).
        pairs.append((prompt, min(o, out["max"], run["max_model_len"] - prompt)))
    return pairs


def requests(run: dict, doc: dict) -> Iterator[tuple[int, RequestSpec]]:  # type: ignore[type-arg]
    """(level index, request) in arrival order."""
    w = run["workload"]
    lengths = _lengths(run, doc)
    rng = random.Random(w["seed"])
    base = 0.0
    for level, qps in enumerate(w["qps_levels"]):
        for _ in range(w["num_runs"]):
            gaps = [rng.expovariate(qps) for _ in range(len(lengths))]
            arrivals = list(itertools.accumulate(gaps))
            for i, ((prompt, output), t) in enumerate(zip(lengths, arrivals, strict=True)):
                yield level, RequestSpec(arrival_s=base + t, prompt_len=prompt, output_len=output,
                                         segments=((("prompt", i), prompt),))
            base += arrivals[-1] + _GAP_S


def _percentile(values: list[float], p: float) -> float:
    """numpy.percentile's default (linear) method, as loadgen.py computes."""
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _figures(done: list[SimRequest]) -> dict[str, float]:
    ttft = [(r.first_token_s - r.sent_s) * 1e3 for r in done]
    tpot = [(r.finish_s - r.first_token_s) * 1e3 / max(r.output_len - 1, 1) for r in done]
    return {"ttft_p50": _percentile(ttft, 50), "ttft_p90": _percentile(ttft, 90),
            "ttft_p99": _percentile(ttft, 99), "tpot_p50": _percentile(tpot, 50),
            "tpot_p90": _percentile(tpot, 90)}


def simulate(run: dict, doc: dict, *,  # type: ignore[type-arg]
             frontend: bool = False, engine_core_cpu: bool | None = None) -> list[Level]:
    spec = load_spec(str(REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine_version=run["vllm"],
                             mem_fraction=run["gpu_memory_utilization"],
                             max_num_batched_tokens=run["max_num_batched_tokens"],
                             max_num_seqs=run["max_num_seqs"])
    # In process: AsyncLLMEngine, no server. `frontend`: the API server's CPU stage all the same
    # (`simulate --frontend`, its constants fitted on an HTTP server's rows), for the bench's
    # with / without line.
    # `engine_core_cpu`: vLLM's engine-core host work per step (None: simulate's default, on;
    # tests/benches/engine_core_runs.py compares it off).
    sim, _ = setup(spec, inputs, api_server=False, frontend=frontend,
                   engine_core_cpu=engine_core_cpu)
    engine = Simulator(KVPool(sim.plan.num_blocks, sim.groups, caching=sim.caching),
                       sim.scheduler, replica_step_cost(sim))
    tagged = list(requests(run, doc))
    state = engine.run(spec for _, spec in tagged)
    level_of = {round(spec.arrival_s, 9): level for level, spec in tagged}
    out = []
    for level, qps in enumerate(run["workload"]["qps_levels"]):
        done = [r for r in state.finished if level_of[round(r.sent_s, 9)] == level]
        measured = next(m for m in run["measured"] if m["target_qps"] == qps)
        out.append(Level(run_id=run["id"], qps=qps, measured=measured, simulated=_figures(done),
                         preemptions=sum(r.preemptions for r in done)))
    return out


@functools.cache
def row_ids() -> list[str]:
    """The blind2 runs' ids (each stands for all its QPS levels)."""
    return [run["id"] for run in load()[1]]


@functools.cache
def levels(frontend: bool = False) -> tuple[Level, ...]:
    """Every blind2 run's QPS levels, simulated (once per process); `frontend`: with the API
    server's CPU stage (`simulate --frontend`)."""
    doc, runs = load()
    return tuple(lv for run in runs for lv in simulate(run, doc, frontend=frontend))


def work_bound_s(run: dict, doc: dict) -> float:  # type: ignore[type-arg]
    """Seconds to prefill one run's replayed prompts (`_lengths`) in chunks of the run's
    max_num_batched_tokens at the GPU's datasheet peaks (`PEAK`): a lower bound on the time
    the engine needs for one run of any QPS level, whatever the batching."""
    spec = load_spec(str(REPO / run["model"]))
    cost = MixedStepCost(spec, get_gpu(run["gpu"]), eff=PEAK)
    budget = run["max_num_batched_tokens"]
    total = 0.0
    for prompt, _ in _lengths(run, doc):
        for start in range(0, prompt, budget):
            total += cost.seconds(decode_contexts=[], chunks=[(start, min(budget, prompt - start))])
    return total


@functools.cache
def falsified() -> frozenset[str]:
    """The runs whose replayed prompts cannot have been what ran: at the datasheet peak they
    need more than `_FALSIFIED_AT` of the shortest measured elapsed time of a run."""
    doc, runs = load()
    return frozenset(r["id"] for r in runs if work_bound_s(r, doc) > _FALSIFIED_AT * min(
        m["elapsed_seconds_median"] for m in r["measured"]))


def _err(lv: Level, measured: str, simulated: str) -> float:
    return lv.simulated[simulated] / lv.measured[measured] - 1


def _median(part: list[Level], measured: str, simulated: str) -> str:
    return f"{statistics.median(abs(_err(lv, measured, simulated)) for lv in part):.1%}"


def what_differs(runs: list[dict], doc: dict, part: list[Level]) -> None:  # type: ignore[type-arg]
    """Per run: the p50 TTFT kvplan misses at its lowest QPS (a near-constant offset points
    to a per-request cost), the p50 TPOT ratio at its lowest and highest QPS (a growth with
    load to the step time), and the replayed prompts' prefill at the datasheet peak over the
    shortest measured elapsed time of a run (above 1: the replay cannot be what ran)."""
    print("\nWhat differs, per run: the lowest QPS level's p50 TTFT gap (measured - simulated, "
          "and that over the measured p50 TPOT), the p50 TPOT measured / simulated at the "
          "lowest and the highest level, and the replayed prompts' prefill time at the "
          "datasheet peaks (kvplan's cost model with every efficiency 1, no overhead; "
          "chunks of max_num_batched_tokens) over the shortest measured elapsed time of one "
          "run of a level.\n")
    print("| run | lowest QPS | TTFT p50 gap ms | in measured TPOTs | TPOT measured / "
          "simulated, lowest QPS | same, highest QPS | prefill at peak / elapsed |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for run in runs:
        mine = [lv for lv in part if lv.run_id == run["id"]]
        low, high = mine[0], mine[-1]
        gap = low.measured["ttft_ms_p50"] - low.simulated["ttft_p50"]
        elapsed = min(m["elapsed_seconds_median"] for m in run["measured"])
        print(f"| {run['id']} | {low.qps:g} | {gap:+,.1f} | "
              f"{gap / low.measured['tpot_ms_p50']:+.2f} | "
              f"{low.measured['tpot_ms_p50'] / low.simulated['tpot_p50']:.2f} | "
              f"{high.measured['tpot_ms_p50'] / high.simulated['tpot_p50']:.2f} | "
              f"{work_bound_s(run, doc) / elapsed:.2f} |")
    print(f"\n{FINDING}")


def print_per_set() -> None:
    """blind2's rows of sim_to_real's 'kvplan per set' table: p50 TTFT and p50 TPOT (the
    figures AccelMark publishes) in its TTFT and ITL columns; no E2E is published."""
    part = list(levels())
    print(f"| blind2 (AccelMark, p50s) | all | {len(part)} | "
          f"{_median(part, 'ttft_ms_p50', 'ttft_p50')} | "
          f"{_median(part, 'tpot_ms_p50', 'tpot_p50')} | - |")
    kept = [lv for lv in part if lv.run_id not in falsified()]
    print(f"| blind2 (AccelMark, p50s), less the replays the work bound falsifies | all | "
          f"{len(kept)} | {_median(kept, 'ttft_ms_p50', 'ttft_p50')} | "
          f"{_median(kept, 'tpot_ms_p50', 'tpot_p50')} | - |")
    served = list(levels(frontend=True))
    print(f"| blind2 (AccelMark, p50s), --frontend | all | {len(served)} | "
          f"{_median(served, 'ttft_ms_p50', 'ttft_p50')} | "
          f"{_median(served, 'tpot_ms_p50', 'tpot_p50')} | - |")
    for run_id in dict.fromkeys(lv.run_id for lv in part):
        mine = [lv for lv in part if lv.run_id == run_id]
        print(f"| blind2 (AccelMark, p50s) | {run_id} | {len(mine)} | "
              f"{_median(mine, 'ttft_ms_p50', 'ttft_p50')} | "
              f"{_median(mine, 'tpot_ms_p50', 'tpot_p50')} | - |")


def print_section() -> None:
    """The blind2 set as a Markdown section of examples/simulate-bench.md."""
    doc, runs = load()
    part = list(levels())
    print("\n## Blind 2: AccelMark's online results (vLLM V1 in process, A100-80GB and "
          "RTX-5090)\n")
    print(f"{doc['blind2']}\n")
    rules = "; ".join(f"{s.rule} (commit {s.commit})" for s in SHAPED_BY
                      if any(r["id"] in s.rows for r in runs))
    print(f"{len(runs)} runs, {len(part)} QPS levels, every one frozen before kvplan was run "
          "on it and first evaluated with no change to any rule (tests/benches/"
          "accelmark_runs.py replays them). Shaped since, so no blind test of it: "
          f"{rules}. Errors are predicted / measured - 1; the set's medians of their absolute "
          "values are in 'kvplan per set' above.\n")
    print("| set | levels | TTFT p50 | TTFT p90 | TPOT p50 |")
    print("|---|---:|---:|---:|---:|")
    print(f"| blind2 | {len(part)} | " + " | ".join(_median(part, m, s) for m, s in PAIRS)
          + " |")
    kept = [lv for lv in part if lv.run_id not in falsified()]
    print(f"| blind2, less the falsified replays | {len(kept)} | "
          + " | ".join(_median(kept, m, s) for m, s in PAIRS) + " |")
    served = list(levels(frontend=True))
    print(f"| blind2, --frontend | {len(served)} | "
          + " | ".join(_median(served, m, s) for m, s in PAIRS) + " |")
    print(f"| blind2, less the falsified replays, --frontend | {len(kept)} | "
          + " | ".join(_median([lv for lv in served if lv.run_id not in falsified()], m, s)
                       for m, s in PAIRS) + " |")
    for gpu in dict.fromkeys(r["gpu"] for r in runs):
        ids = {r["id"] for r in runs if r["gpu"] == gpu}
        for label, levels_of in (("", part), (", --frontend", served)):
            mine = [lv for lv in levels_of if lv.run_id in ids]
            print(f"| blind2, {gpu}{label} | {len(mine)} | "
                  + " | ".join(_median(mine, m, s) for m, s in PAIRS) + " |")
    print("\n| run | QPS | measured TTFT p50 / p90, TPOT p50 ms | simulated | TTFT p50 err | "
          "TTFT p90 err | TPOT p50 err | preemptions |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for lv in part:
        m, s = lv.measured, lv.simulated
        print(f"| {lv.run_id} | {lv.qps:g} | {m['ttft_ms_p50']:,.1f} / {m['ttft_ms_p90']:,.1f}"
              f" / {m['tpot_ms_p50']:.2f} | {s['ttft_p50']:,.1f} / {s['ttft_p90']:,.1f} / "
              f"{s['tpot_p50']:.2f} | "
              + " | ".join(f"{_err(lv, a, b):+.1%}" for a, b in PAIRS)
              + f" | {lv.preemptions:,} |")
    what_differs(runs, doc, part)
    print("\nSources (result.json at AccelMark commit 5797fc4):\n")
    for r in runs:
        print(f"- {r['id']}: {r['result']} ({r['model_id']}, {r['gpu_reported']}, vLLM "
              f"{r['vllm_reported']}, TP {r['tp']}, gpu_memory_utilization "
              f"{r['gpu_memory_utilization']}, max_model_len {r['max_model_len']})")
    print("\nLeft out of blind2, and why (runs.json \"blind2_skipped\"):\n")
    print("| runs | why left out |")
    print("|---|---|")
    for skip in doc["blind2_skipped"]:
        print(f"| {skip['runs']} | {skip['why']} |")


if __name__ == "__main__":
    print_section()
