"""Why Dynamo's measured TTFT on prospdis66 is ~10x kvplan's (prospdis67, issue 29): read from
the deployment's files and the code of the releases its image carries; a forensic, not a
kvplan rule (nothing in kvplan changes, section 4c of the disagg bench does not move).

What the code says (Dynamo 1.2.1 = the ai-dynamo 1.2.1 wheel, vLLM 0.20.1 = its sdist):
- The decode workers run without a KV connector. Every decode worker in the publisher's YAMLs
  (e.g. llama31_70b_dynamo_a4_spot_4xtp1_1xtp4.yaml at e7afca30, workato_deepseekr1_dynamo_
  2nodes.yaml at 58596e3f) is `python3 -m dynamo.vllm ... --disaggregation-mode decode` with no
  --kv-transfer-config; Dynamo 1.2.1 dynamo/vllm/args.py:189-207 ("--connector is deprecated
  and the default is no longer nixl") demands a --kv-transfer-config of a PREFILL worker only
  and nothing in dynamo/vllm sets one (grep kv_transfer_config: args.py:193-199, 353, 373
  only). vLLM 0.20.1 counts a request's remotely computed tokens only through a connector
  (v1/core/sched/scheduler.py:620-636, `if self.connector is not None`): the decode engine
  ignores the kv_transfer_params Dynamo's DecodeWorkerHandler puts in extra_args
  (dynamo/vllm/handlers.py:2371-2377) and prefills the whole prompt itself.
- So no decode engine ever reads a prefill worker's blocks, and the prefill worker keeps them:
  vLLM 0.20.1 distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py:463-488 (a
  do_remote_decode request finished by length: its blocks' free is delayed until the decode
  side reads them or VLLM_NIXL_ABORT_REQUEST_TIMEOUT passes), envs.py:1463-1465 (480 s
  default; the YAMLs do not set it), nixl/worker.py:1711-1728 (the expiry frees them). Each
  prefill worker's pool thus holds every prompt it prefilled in the last 480 s, and vLLM's
  FCFS scheduler (v1/core/sched/scheduler.py:769-776: a waiting request that gets no blocks
  ends the step's admissions, the queue's head waits) admits
  the next prompt only when the expiry has freed room: at most floor(pool blocks / blocks per
  prompt) prompts per prefill worker per 480 s once the pool is full.
- The first token the client sees: Dynamo's PrefillRouter sends the prefill with max_tokens 1
  and then the decode request (dynamo/vllm/handlers.py:2626-2641; the frontend's Rust
  PrefillRouter, as GitHub's index stores it, lib/llm/src/kv_router/prefill_router/mod.rs).
  The docs' own Time To Second Token grows with the prompt (doc 13: 126 / 133 ms at 3,000
  tokens, 181 / 195 ms at 8,000; doc 14: 758 / 831 ms at 26,000 on a TP 4 decode worker,
  kvplan's one 26,000-token prefill on TP 4: 748 ms as first read, 693 ms since vLLM's FP8
  query on SM 10.x is priced (fp8q67); `tt2t_rows`): genai-perf's first token
  arrives when
  the prefill worker is done, its second after the decode worker's own prefill. The forensic
  takes TTFT = send -> prefill worker done (not read in the Rust at 1.2.1: the stored file is a
  later version).
- Dynamo 1.2.1's frontend routes round-robin by default (dynamo/frontend/main.py:10, :229-231;
  no --router-mode in the YAMLs); it has no conditional-disaggregation option (no local prefill
  on the decode worker chosen by load: grep of the wheel), and --router-queue-threshold is a
  KV-router option (common/configuration/groups/kv_router_args.py:331-347), off here.

The model (`simulate`): C users in genai-perf's closed loop (warm-up then the measured count,
both stated per point), each prompt sent round-robin to a prefill worker, each worker one
prompt at a time (kvplan's one-prompt prefill time on the prefill layout) in FIFO order, a
prompt admitted only when the worker's pool (kvplan's vLLM pool at the YAML's flags: --block-size
128, --gpu-memory-utilization, --max-num-batched-tokens, KV dtype, TP / EP) has its blocks
free; its blocks freed `hold_s` after its prefill ends (480 s: the code; 0: what kvplan's replay
assumes, a read freeing them at once). The user's next request follows the decode worker's own
prefill of the prompt plus (O - 1) decode steps (kvplan's prefill on the decode layout and its
TPOT from the frozen replay). Assumed, not stated: each run starts on empty pools (the docs do
not give the order or spacing of their runs; a run started within 480 s of the last one starts
with that one's blocks still held); the chat template's tokens are not counted.

What it gives (`lines`, `tt2t_rows`; kvplan's replay of section 4c beside it):
- The four points whose runs fill their prefill pools from empty (Llama-3.1-70B FP8 8,000 /
  150 on 4 x TP 1 prefill, 630 prompts of 63 blocks against 4 x 78; DeepSeek-R1 16,000 / 999
  on 1 x TP 8, 116 / 132 prompts of 125 blocks against 76): 16.50 / 30.27 / 63.13 / 134.35 s
  (30.2 for the second since fp8q67)
  against 16.31 / 29.15 / 65.19 / 137.14 s measured (1.01, 1.04, 0.97, 0.98), request rates
  0.62 / 0.62 / 0.19 / 0.20 against the stated 0.63 / 0.63 / 0.18 / 0.19; the same model with
  blocks freed at once, 0.52 / 2.42 / 0.28 / 0.28 s (kvplan's replay: 0.55 / 2.71 / 0.37 /
  0.39 s). No constant is fitted: 480 s is the code's default, the pools and times kvplan's.
  How sensitive (kvplan's pool x 0.95 / x 1.05, not committed as a lens): DeepSeek-R1 16,000
  63.7 / 62.4 s (C 16) and 135.1 / 133.3 s (C 32), robust; Llama 8,000 23.9 / 12.1 s (C 16)
  and 49.6 / 25.8 s (C 32): its mean TTFT rests on when in the 630-request run the pools
  fill, its rate (0.65 /s full-pool against 0.63 stated) on the pool alone.
- Doc 11 (3 x TP 1, 630 prompts of 24 blocks against 3 x 209: it just fills): 1.97 / 2.27 s
  against 1.34 / 3.41 s (1.47, 0.67); with the pool x 0.95 9.9 / 22.6 s, x 1.05 0.18 / 0.19 s:
  not a reading either way.
- Not explained (the pools do not fill from empty): the 3,000-token points (1.08-2.18 s
  measured, 0.05-0.24 s here), doc 14 (7.51 / 13.14 s, 0.75 s here; C 32 stalls only with
  >= 106 prompts held from before it, its C 16 run left 316 if within 480 s) and DeepSeek-R1
  8,000 / C 16 and C 32 (2.32 / 89.87 s, 0.14 s here; C 32 stalls with >= 20 prompts held
  from before it, e.g. its C 16 run's 116; its stated 0.27 req/s is near the full-pool rate,
  0.32). Whether runs followed each other within 480 s is not stated.
- Ruled out by the code, not by fitting: KV transfer time or bandwidth (NIXL over TCP without
  RDMA, UCX_TLS): no decode worker reads any KV; Dynamo's conditional disaggregation or local
  prefill by queue length: not in 1.2.1. The decode's own prefill is in the second token
  (stated TT2T 181 / 195 ms at 8,000 tokens and 758 / 831 ms at 26,000 against kvplan's
  199 / 748 ms on the decode's TP 4; 126 / 133 against 74 ms at 3,000; since fp8q67's FP8
  query, 193 / 693 and 73 ms).

Run: python -m tests.benches.prospdis67_forensic
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import cache

from kvplan.analysis.inputs import build_inputs
from kvplan.capacity.plan import plan_capacity
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.resolve import load_model
from tests.benches import disagg_rows
from tests.benches.disagg_public import Point
from tests.benches.prospdis66_runs import load

HOLD_S = 480.0  # vLLM 0.20.1 envs.py:1463-1465, VLLM_NIXL_ABORT_REQUEST_TIMEOUT's default
BLOCK = 128  # every YAML of the set: --block-size 128

# Per run id: (prefill --gpu-memory-utilization, prefill --max-num-batched-tokens), read from
# the YAML each run's `stated` names: doc 09's and doc 11's prefill workers 0.95 / 8,192, doc
# 13's 0.95 / 16,384, docs 14's and 15's 0.95 / 32,768. Since dynpool67 the data file's rows
# state them (prefill_gpu_memory_utilization, prefill_max_num_batched_tokens; its
# `engine_flags` record), read from there.
PREFILL_FLAGS: dict[str, tuple[float, int]] = {
    run["id"]: (float(run["row"]["prefill_gpu_memory_utilization"]),
                int(run["row"]["prefill_max_num_batched_tokens"]))
    for run in load()["runs"]}

# Request throughput (req/s) and mean request latency (s) where the doc's table states them:
# 13_master.md section 4 (the 4P:1D tables), 14_...llama70b.md section 4, 15_...deepseekr1.md
# section 4. Docs 09 and 11 are not read for them here.
STATED_THROUGHPUT: dict[tuple[str, int], tuple[float, float]] = {
    ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4-3000x150-doc13", 16): (5.71, 2.77233),
    ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4-3000x150-doc13", 32): (7.42, 4.18248),
    ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4-8000x150-doc13", 16): (0.63, 19.14677),
    ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4-8000x150-doc13", 32): (0.63, 33.79557),
    ("dynamo-2xb200-llama70b-fp8-p3xtp4-d1xtp4-26000x984-doc14", 16): (0.70, 22.61173),
    ("dynamo-2xb200-llama70b-fp8-p3xtp4-d1xtp4-26000x984-doc14", 32): (0.85, 36.45778),
    ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8-3000x999-doc15", 16): (0.84, 17.55),
    ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8-3000x999-doc15", 32): (1.31, 21.37),
    ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8-8000x999-doc15", 16): (0.73, 20.25),
    ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8-8000x999-doc15", 32): (0.27, 110.37),
    ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8-16000x999-doc15", 16): (0.18, 84.24),
    ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8-16000x999-doc15", 32): (0.19, 162.56),
}


@dataclass(frozen=True, kw_only=True)
class Deployment:
    prefill_workers: int
    pool_blocks: int  # one prefill worker's vLLM pool, blocks of BLOCK tokens
    prefill_s: float  # one prompt's prefill on a prefill worker
    decode_s: float  # the decode worker's own prefill of the prompt + (O - 1) steps

    def blocks(self, isl: int) -> int:
        return math.ceil(isl / BLOCK)

    def full_pool_rate(self, isl: int, hold_s: float = HOLD_S) -> float:
        """Requests a second the prefill workers sustain once their pools are full: each frees
        floor(pool / prompt blocks) prompts' blocks per `hold_s`."""
        return self.prefill_workers * (self.pool_blocks // self.blocks(isl)) / hold_s

    def slack_prompts(self, isl: int, requests: int) -> int:
        """Prompts of `isl` tokens the pools still hold after every one of `requests` prompts
        (warm-up included) took its blocks, all within one hold: < 0, a run from empty pools
        fills them; >= 0, it stalls only if at least this many earlier prompts' blocks (or
        as many blocks of other lengths) are still held when it starts."""
        per_worker = self.pool_blocks // self.blocks(isl)
        return self.prefill_workers * per_worker - requests


def simulate(dep: Deployment, isl: int, conc: int, warmup: int, count: int,
             hold_s: float = HOLD_S) -> tuple[float, float]:
    """(mean TTFT s over the `count` measured requests, their request throughput /s: count over
    the time from the first measured send to the last measured completion) of genai-perf's
    closed loop over the deployment (module docstring), pools empty at the start."""
    need, total = dep.blocks(isl), warmup + count
    if need > dep.pool_blocks:
        raise ValueError(f"a prompt of {isl} tokens needs {need} blocks, the pool has "
                         f"{dep.pool_blocks}")
    free = [dep.pool_blocks] * dep.prefill_workers
    busy = [False] * dep.prefill_workers
    queues: list[list[tuple[int, float]]] = [[] for _ in range(dep.prefill_workers)]
    events: list[tuple[float, int, str, int, int]] = []  # (t, seq, kind, worker, request)
    seq = 0
    sent: list[float] = []
    ttft: dict[int, float] = {}
    done: dict[int, float] = {}

    def push(t: float, kind: str, worker: int, req: int) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, seq, kind, worker, req))

    def send(t: float) -> None:
        req = len(sent)
        sent.append(t)
        w = req % dep.prefill_workers  # Dynamo 1.2.1's default round-robin, by count
        queues[w].append((req, t))
        start(w, t)

    def start(w: int, t: float) -> None:
        if busy[w] or not queues[w] or free[w] < need:
            return
        req, _ = queues[w].pop(0)
        free[w] -= need
        busy[w] = True
        push(t + dep.prefill_s, "prefilled", w, req)

    for _ in range(min(conc, total)):
        send(0.0)
    while events:
        t, _, kind, w, req = heapq.heappop(events)
        if kind == "prefilled":
            busy[w] = False
            ttft[req] = t - sent[req]
            push(t + hold_s, "expired", w, req)
            push(t + dep.decode_s, "done", w, req)
            start(w, t)
        elif kind == "expired":
            free[w] += need
            start(w, t)
        else:
            done[req] = t
            if len(sent) < total:
                send(t)
    measured = range(warmup, total)
    span = max(done[r] for r in measured) - min(sent[r] for r in measured)
    return sum(ttft[r] for r in measured) / count, count / span


@cache
def deployment(run_id: str, tpot_ms: float) -> Deployment:
    """The run's deployment as kvplan sizes and times it (module docstring)."""
    run = next(r for r in load()["runs"] if r["id"] == run_id)
    row = {**run["row"], "silicon_data_source": ""}
    spec, _ = load_model(str(disagg_rows.ROOT / disagg_rows.MODELS[
        (row["model_path"], row["precision"])][0]))
    kv_dtype = disagg_rows.MODELS[(row["model_path"], row["precision"])][1]
    fraction, mnbt = PREFILL_FLAGS[run_id]
    tp, ep = int(row["prefill_tp_size"]), int(row["prefill_moe_ep_size"])
    pool = plan_capacity(spec, build_inputs(
        context=int(row["isl"]) + int(row["osl"]), gpu=get_gpu("b200"),
        engine_version=row["backend_version"], max_num_batched_tokens=mnbt, kv_dtype=kv_dtype,
        tp=tp, ep=ep, mem_fraction=fraction, block_size=BLOCK))
    prefill_s = disagg_rows.replay_setup(row).prefill_ms / 1e3
    as_decode = {**row, **{f"prefill_{k}": row[f"decode_{k}"]
                           for k in ("tp_size", "pp_size", "attention_dp_size", "moe_ep_size")}}
    decode_prefill_s = disagg_rows.replay_setup(as_decode).prefill_ms / 1e3
    osl = int(row["osl"])
    return Deployment(prefill_workers=int(row["prefill_num_workers"]),
                      pool_blocks=pool.num_blocks, prefill_s=prefill_s,
                      decode_s=decode_prefill_s + (osl - 1) * tpot_ms / 1e3)


@dataclass(frozen=True, kw_only=True)
class Row:
    run: str
    concurrency: int
    measured_ttft_s: float
    kvplan_ttft_s: float | None  # the frozen replay's (section 4c)
    held_ttft_s: float  # the forensic with the 480 s hold
    freed_ttft_s: float  # the same model with blocks freed at once
    held_rate: float  # its measured requests per second (480 s hold)
    full_pool_rate: float  # prompts per second once every pool is full
    slack_prompts: int  # Deployment.slack_prompts at the point's warm-up + measured count
    stated: tuple[float, float] | None  # the doc's (request throughput, mean latency s)


def frozen_replay() -> list[Point]:
    """Section 4c's replay as the first evaluation and this forensic ran it (dynnocon67 since
    replays the decode workers without a connector behind a genai-perf client): the decode
    workers pulling the KV, the simulation's default measurement (disagg_rows.predict's
    `no_connector` and `client` off), every role at kvplan's defaults (`engine_flags` off:
    dynpool67 since sizes each role at its YAML's flags)."""
    out = []
    for run in load()["runs"]:
        row = {**run["row"], "silicon_data_source": ""}
        for p in run["points"]:
            ttft, tpot, _ = disagg_rows.predict(row, p["concurrency"], client=False,
                                                no_connector=False, engine_flags=False)
            out.append(Point(run=run["id"], concurrency=p["concurrency"],
                             measured_ttft_ms=p["measured_ttft_ms"],
                             measured_tpot_ms=p["measured_tpot_ms"],
                             approximate=p["approximate"], ttft_ms=ttft, tpot_ms=tpot))
    return out


def rows() -> list[Row]:
    points = frozen_replay()
    out = []
    for run in load()["runs"]:
        isl = int(run["row"]["isl"])
        for p in run["points"]:
            got = next(q for q in points if q.run == run["id"]
                       and q.concurrency == p["concurrency"])
            assert got.tpot_ms is not None
            dep = deployment(run["id"], round(got.tpot_ms, 6))
            args = (dep, isl, p["concurrency"], p["warmup_request_count"], p["request_count"])
            held, rate = simulate(*args)
            freed, _ = simulate(*args, hold_s=0.0)
            out.append(Row(run=run["id"], concurrency=p["concurrency"],
                           measured_ttft_s=p["measured_ttft_ms"] / 1e3,
                           kvplan_ttft_s=None if got.ttft_ms is None else got.ttft_ms / 1e3,
                           held_ttft_s=held, freed_ttft_s=freed, held_rate=rate,
                           full_pool_rate=dep.full_pool_rate(isl),
                           slack_prompts=dep.slack_prompts(
                               isl, p["warmup_request_count"] + p["request_count"]),
                           stated=STATED_THROUGHPUT.get((run["id"], p["concurrency"]))))
    return out


# The docs' mean Time To Second Token (ms) per (run, concurrency): 13_master.md section 4 (the
# 4P:1D tables), 14_...llama70b.md section 4.
STATED_TT2T_MS: dict[tuple[str, int], float] = {
    ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4-3000x150-doc13", 16): 126.45,
    ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4-3000x150-doc13", 32): 132.98,
    ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4-8000x150-doc13", 16): 181.30,
    ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4-8000x150-doc13", 32): 194.80,
    ("dynamo-2xb200-llama70b-fp8-p3xtp4-d1xtp4-26000x984-doc14", 16): 758.48,
    ("dynamo-2xb200-llama70b-fp8-p3xtp4-d1xtp4-26000x984-doc14", 32): 830.53,
}


def tt2t_rows() -> list[tuple[str, int, float, float, float]]:
    """(run, concurrency, stated TT2T ms, kvplan's one-prompt prefill ms on the decode worker's
    layout, the stated mean ITL ms): the second token follows the decode worker's own prefill
    of the prompt (module docstring)."""
    out = []
    for run in load()["runs"]:
        for p in run["points"]:
            key = (run["id"], p["concurrency"])
            if key not in STATED_TT2T_MS:
                continue
            # At a TPOT of 0 the deployment's decode_s is the decode worker's prefill alone.
            decode_prefill_ms = deployment(run["id"], 0.0).decode_s * 1e3
            out.append((run["id"], p["concurrency"], STATED_TT2T_MS[key], decode_prefill_ms,
                        p["measured_tpot_ms"]))
    return out


def _ratio(a: float | None, b: float) -> str:
    return "-" if a is None else f"{a / b:.2f}"


def lines() -> list[str]:
    got = rows()
    out = ["| run | conc. | measured TTFT s | replay (4c) s | forensic, freed at once s | "
           "forensic, 480 s hold s | ratio 4c | ratio 480 s | forensic req/s | stated req/s | "
           "full-pool req/s | slack prompts |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in got:
        stated = "-" if r.stated is None else f"{r.stated[0]:.2f}"
        kv = "-" if r.kvplan_ttft_s is None else f"{r.kvplan_ttft_s:.2f}"
        out.append(f"| {r.run} | {r.concurrency} | {r.measured_ttft_s:.2f} | {kv} | "
                   f"{r.freed_ttft_s:.2f} | {r.held_ttft_s:.2f} | "
                   f"{_ratio(r.kvplan_ttft_s, r.measured_ttft_s)} | "
                   f"{_ratio(r.held_ttft_s, r.measured_ttft_s)} | {r.held_rate:.2f} | {stated} | "
                   f"{r.full_pool_rate:.2f} | {r.slack_prompts} |")
    return out


if __name__ == "__main__":
    print("\n".join(lines()))
    print("\n| run | conc. | stated TT2T ms | kvplan's prefill on the decode layout ms | "
          "stated ITL ms |\n|---|---|---|---|---|")
    for run_id, conc, tt2t, dp, itl in tt2t_rows():
        print(f"| {run_id} | {conc} | {tt2t:.1f} | {dp:.1f} | {itl:.2f} |")
