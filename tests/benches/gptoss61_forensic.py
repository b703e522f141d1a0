"""Forensic of issue 30's gpt-oss misses on vLLM (task gptoss61): prospective60's sixteen
gpt-oss-20b / 120b runs on one A100 80GB (vLLM 0.11.0; shaped by gptossa100's three rules),
prospective31's gpt-oss runs on the H100 (0.11.0 / 0.10.2) and prospective57's gpt-oss-120b
runs (0.11.0 H100 TP 2-8, 0.15.1 H200 TP 8). Nothing here changes a rule, a constant or the
harness.

1. `replay_row`: each run replayed with prospective30's machinery (tests.benches.
   prospective_runs), its steps recorded (the simulator's timeline, one record a step):
   kvplan's mean TPOT and ITL beside the measured, the decode-only steps (their mean batch, mean
   time, share of the run's time) and the steps with a prefill chunk (mean tokens, mean time),
   and the measured prompt throughput (printed input tokens / duration) beside kvplan's.
2. `decode_parts`: kvplan's decode-only step at the run's mean decode-only batch and at its
   mean prompt plus half its mean output as the context, by part (kvplan.perf.roofline's
   by_op less the attention core, which MixedStepCost prices over the batch: the routed
   experts, the attention projections, the small kernels and the per-layer overhead at
   kvplan's CUDA-graph floor, the lm_head, the all-reduce; then the attention cores with the
   split-KV decode path where the release runs it, kvplan.perf.split_decode).
3. `implied_attention_rate`: for the A100 runs, the prompt attention's FLOPs (every prompt's
   causal pairs, kvplan.perf.attention_cost.causal_pairs, per layer kind, at the step cost's
   prefill FLOPs a pair) and the rate at which they would have to run for kvplan's replay to
   last the measured duration, all else as kvplan prices it: FLOPs / (FLOPs / kvplan's
   attention rate + measured duration - replayed duration). Meaningful only where the
   prompts' attention is a large part of the gap (the 32,000-token prompts); a lead, not a
   rule: no held-out row runs this kernel (prospective31's H100 rows run FlashAttention 3).
4. `batch_for_step`: the least decode batch whose kvplan decode-only step (at the run's mean
   prompt plus half its output as every decode's context) reaches the measured median ITL,
   beside the replay's mean decode-only batch and its pool's concurrency at --max-model-len:
   where the median ITL is a decode-only step, the batch the measured step implies under
   kvplan's step price (a step price or a concurrency miss: these rows alone cannot tell);
   beside it the requests decoding on average, measured by Little's law (`decoding_requests`:
   generated tokens / duration x mean TPOT) and in the replay (time-weighted). gptosspool61
   read it: 3.03 at gpt-oss-120b 32000/100, where a pool of three 32k requests decodes two
   while the third prefills; the lab's runner image installs FlashInfer, so vLLM 0.11.0's
   profile ran FlashInfer's sampler warm-up (prospective60.json 'amended', which `_inputs`
   passes): 7,932 blocks, not 6,163, about four such requests.
5. `CODE_READ`: what vLLM 0.11.0 runs for a gpt-oss decode step on SM 8.0 (the sdist from PyPI,
   line numbers its), and whether kvplan prices it.

Run: python -m tests.benches.gptoss61_forensic (prints Markdown; not a page of examples/).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.engines.base import Engine
from kvplan.perf.attention_cost import causal_pairs
from kvplan.perf.roofline import step_time
from tests.benches.prospective_runs import REPO, load, requests

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
SETS = ("prospective60", "prospective31", "prospective57")

# vLLM 0.11.0 (sdist), what a gpt-oss decode step runs on an A100, and kvplan's answer.
CODE_READ = (
    ("MXFP4 MoE kernel", "quantization/mxfp4.py:59-102 get_mxfp4_backend: Marlin below SM 9.0 "
     "(and on Hopper without triton_kernels or FlashInfer's opt-in env)", "priced "
     "(kvplan.engines.vllm.mxfp4_backend, moe_kernel MARLIN_MXFP4)"),
    ("Marlin block rows", "fused_moe/fused_marlin_moe.py:101-103: the first of 8, 16, 32, 48, "
     "64 with M x topk / E / block < 0.9; moe_align_block_size (:108) pads each expert's rows "
     "to it; every activated expert's whole weight is read (a decode of B tokens, top-4 of "
     "128: 128 (1 - (124/128)^B) distinct experts, 15.3 at B = 4)", "priced (a52829a4)"),
    ("Marlin reduce", "fused_marlin_moe.py:130-131: use_atomic_add only for fp16 or SM >= 9.0, "
     "so bf16 on SM 8.0 reduces split-K stripes through the fp32 workspace "
     "(use_fp32_reduce=True, :158, :200)", "not priced (the stripes' count is the kernel's "
     "scheduling, csrc/moe/marlin_moe_wna16, not read at this release)"),
    ("MoE intermediates", "fused_marlin_moe.py:114-127 caches 1/2/3, swigluoai_and_mul "
     "(:164-167), torch.sum over top-k (:204)", "priced as Triton's traffic (moe_kernel)"),
    ("attention with sinks", "platforms/cuda.py:358-362: TRITON_ATTN on SM 8.x",
     "priced (f8be70f3: 16-row tiles, 2x a decode's FLOPs)"),
    ("Triton decode split", "attention/ops/triton_unified_attention.py:741-753, 800-894: a "
     "decode-only call with (tokens // 2 + seqs) x KV heads <= 128 runs the 3D kernel over 16 "
     "segments and reduce_segments (fp32 partials written and read back); above it the 2D "
     "kernel, one program per (sequence, KV head) walking the whole context in 32-key tiles "
     "(TILE_SIZE_PREFILL, :746)", "priced from this task (kvplan.perf.split_decode); the 2D "
     "kernel's serial walk at small program counts is not"),
    ("prefill tiles", "triton_unified_attention.py:728-730, 751-753: a chunk's programs take "
     "2 query tokens x 8 heads each and re-read their whole prefix (1,024 programs a KV head "
     "for a 2,048-token chunk)", "not priced (counted as served by L2; attention_backend)"),
    ("CUDA graphs", "v1/attention/backends/triton_attn.py:64 cudagraph_support ALWAYS; "
     "config/compilation.py:233-248 FULL_AND_PIECEWISE the V1 default: decode batches up to "
     "the largest capture size replay full graphs", "priced (graph sizes, kernel floor)"),
)


def _inputs(run: dict):  # type: ignore[type-arg]
    spec = load_spec(str(REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine=Engine("vllm"), engine_version=run["vllm"],
                             mem_fraction=run.get("gpu_memory_utilization"),
                             max_num_seqs=run.get("max_num_seqs"),
                             max_num_batched_tokens=run.get("max_num_batched_tokens"),
                             expert_parallel=run.get("expert_parallel", False),
                             flashinfer_sampler=run.get("flashinfer_sampler"))
    return spec, inputs


def replay_row(run: dict) -> dict[str, float]:  # type: ignore[type-arg]
    """The run replayed step by step (module docstring, 1)."""
    spec, inputs = _inputs(run)
    sim, _ = setup(spec, inputs, frontend=False, async_scheduling=run.get("async_scheduling"))
    res = simulate(sim, requests(run), concurrency=run["workload"].get("max_concurrency"),
                   timeline=True, bulk_decode=False)
    steps = [rec for _, rec in res.timeline]
    dec = [r for r in steps if r.tokens == r.running]
    mix = [r for r in steps if r.tokens != r.running]
    total = sum(r.seconds for r in steps) or 1.0
    m = run["measured"]
    prompts = run["workload"]["num_prompts"] * run["workload"]["input_len"]
    return {
        "duration": res.metrics.duration_s, "attention_rate": _rate(sim.cost, run),
        "pool_concurrency": sim.plan.max_concurrency,
        "tpot": res.metrics.tpot_ms["mean"], "itl": res.metrics.itl_ms["mean"],
        "m_tpot": m["mean_tpot_ms"], "m_itl": m["mean_itl_ms"],
        "dec_batch": statistics.mean(r.running for r in dec) if dec else 0.0,
        # requests decoding, time-weighted: a chunk step's running less its one prefill
        "decoding": (sum(r.seconds * r.running for r in dec)
                     + sum(r.seconds * (r.running - 1) for r in mix)) / total,
        "dec_ms": 1e3 * statistics.mean(r.seconds for r in dec) if dec else 0.0,
        "dec_share": sum(r.seconds for r in dec) / total,
        "mix_tokens": statistics.mean(r.tokens for r in mix) if mix else 0.0,
        "mix_ms": 1e3 * statistics.mean(r.seconds for r in mix) if mix else 0.0,
        "m_prompt_tps": prompts / m["duration_s"] if m.get("duration_s") else 0.0,
        "prompt_tps": prompts / total,
    }


def _rate(cost, run: dict) -> tuple[float, float]:  # type: ignore[no-untyped-def, type-arg]
    """(the run's prompt-attention FLOPs, kvplan's attention FLOP rate) (module docstring, 3)."""
    w = run["workload"]
    prompt = w["input_len"] + run.get("chat_template_tokens", 0)
    flops = w["num_prompts"] * sum(
        kind.layers * causal_pairs(0, prompt, kind.window, kind.chunk) for kind in cost.kinds
    ) * cost.prefill_pair_flops
    return flops, cost._flops_rate


def implied_attention_rate(row: dict[str, float], run: dict) -> float | None:  # type: ignore[type-arg]
    """The prompt attention's rate (FLOP/s) that closes the run's duration gap, or None where
    the gap is negative or the run printed no duration (module docstring, 3)."""
    flops, rate = row["attention_rate"]
    measured = run["measured"].get("duration_s")
    if not measured or not flops:
        return None
    seconds = flops / rate + measured - row["duration"]
    return flops / seconds if seconds > 0 else None


def batch_for_step(run: dict, seconds: float, most: int = 256) -> int | None:  # type: ignore[type-arg]
    """The least decode batch whose decode-only step takes at least `seconds` (module
    docstring, 4), or None: none up to `most`."""
    spec, inputs = _inputs(run)
    sim, _ = setup(spec, inputs, frontend=False, async_scheduling=run.get("async_scheduling"))
    w = run["workload"]
    context = w["input_len"] + run.get("chat_template_tokens", 0) + w["output_len"] // 2
    for batch in range(1, most + 1):
        if sim.cost.seconds(decode_contexts=[context] * batch, chunks=[]) >= seconds:
            return batch
    return None


def decoding_requests(measured: dict[str, float]) -> float:
    """The mean number of requests decoding over a closed run, by Little's law (module
    docstring, 4): the output rate (generated tokens / duration) times each token's time
    (mean TPOT). gpt-oss-120b 32000/100 on the A100: 9,988 / 740.1 s x 0.22458 s = 3.03."""
    return measured["total_generated_tokens"] / measured["duration_s"] * (
        measured["mean_tpot_ms"] / 1e3)


def decode_parts(run: dict, batch: int) -> dict[str, float]:  # type: ignore[type-arg]
    """kvplan's decode-only step at `batch` decodes by part, ms (module docstring, 2)."""
    spec, inputs = _inputs(run)
    sim, _ = setup(spec, inputs, frontend=False, async_scheduling=run.get("async_scheduling"))
    cost = sim.cost
    w = run["workload"]
    context = w["input_len"] + run.get("chat_template_tokens", 0) + w["output_len"] // 2
    padded = cost._padded.get(batch, batch)
    st = step_time(spec, inputs.gpu, tokens=padded, context=1, requests=batch, logits=batch,
                   **cost._common)
    parts = {k: 1e3 * v for k, v in st.by_op.items() if k != "attention" and v > 0}
    parts["attention cores"] = 1e3 * cost.attention_seconds([context] * batch, [])
    parts["step"] = 1e3 * cost.seconds(decode_contexts=[context] * batch, chunks=[])
    return parts


def print_section() -> None:
    print("## gpt-oss on vLLM: the replay step by step\n")
    print("| run | TPOT ms measured / kvplan | ITL ms measured / kvplan | decode-only steps: "
          "mean batch, ms, share of time | chunk steps: tokens, ms | prompt tok/s measured / "
          "kvplan | decode step at that batch, ms (parts) |")
    print("|---|---|---|---|---|---|---|")
    rates: list[str] = []
    batches: list[str] = []
    for name in SETS:
        for run in load(DATA / f"{name}.json")["runs"]:
            if "gpt-oss" not in run["id"]:
                continue
            try:
                r = replay_row(run)
            except Exception as exc:  # noqa: BLE001 - a refused run prints its reason
                print(f"| {run['id']} | refused: {str(exc)[:80]} | | | | | |")
                continue
            implied = implied_attention_rate(r, run)
            if " A100 " in run["id"] and r["dec_batch"]:
                implied_b = batch_for_step(run, run["measured"]["median_itl_ms"] / 1e3)
                m = run["measured"]
                batches.append(f"| {run['id']} | {m['median_itl_ms']:.1f} | "
                               f"{implied_b if implied_b is not None else '> 256'} | "
                               f"{r['dec_batch']:.1f} | {r['pool_concurrency']:.2f} | "
                               f"{decoding_requests(m):.2f} / {r['decoding']:.2f} |")
            if implied is not None and " A100 " in run["id"]:
                flops, rate = r["attention_rate"]
                rates.append(f"| {run['id']} | {flops / 1e12:,.0f} | {rate / 1e12:.1f} | "
                             f"{run['measured']['duration_s']:.1f} / {r['duration']:.1f} | "
                             f"{implied / 1e12:.1f} |")
            b = max(1, round(r["dec_batch"]))
            parts = decode_parts(run, b)
            top = ", ".join(f"{k} {v:.2f}" for k, v in sorted(
                parts.items(), key=lambda kv: -kv[1]) if k != "step" and v >= 0.05)
            print(f"| {run['id']} | {r['m_tpot']:.1f} / {r['tpot']:.1f} | {r['m_itl']:.1f} / "
                  f"{r['itl']:.1f} | {r['dec_batch']:.1f}, {r['dec_ms']:.2f}, "
                  f"{r['dec_share']:.0%} | {r['mix_tokens']:.0f}, {r['mix_ms']:.1f} | "
                  f"{r['m_prompt_tps']:,.0f} / {r['prompt_tps']:,.0f} | B = {b}: "
                  f"{parts['step']:.2f} ({top}) |")
    print("\n## The prompt attention's rate that would close the A100 runs' duration gap\n")
    print("| run | prompt attention TFLOP | kvplan's rate, TFLOP/s | duration s measured / "
          "replayed | implied rate, TFLOP/s |")
    print("|---|---:|---:|---|---:|")
    print("\n".join(rates))
    print("\n## The decode batch at which kvplan's step reaches the measured median ITL (A100)\n")
    print("| run | median ITL ms measured | batch whose kvplan decode step reaches it | "
          "replay's mean decode-only batch | replay's pool: requests of --max-model-len | "
          "requests decoding, measured (Little's law) / replayed |")
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(batches))
    print("\n## What vLLM 0.11.0 runs for a gpt-oss decode step on SM 8.0\n")
    print("| item | code (vllm 0.11.0) | kvplan |")
    print("|---|---|---|")
    for item, code, priced in CODE_READ:
        print(f"| {item} | {code} | {priced} |")


if __name__ == "__main__":
    print_section()
