"""Predicted vs measured decode and prefill time on public serving numbers (kvplan.perf.costmodel).

Run:  python -m tests.benches.cost_bench > examples/cost-bench.md

Every measurement is quoted with its URL (or, where the index knows no URL, its index file id).
kvplan predicts with its documented defaults (kvplan.perf.costmodel.Efficiency). One of them, the
per-layer overhead, is fitted here: the median per-layer residual of the dense single-GPU cases
(`fitted_layer_overhead_s`); every other case is held out, and a test keeps the default equal to
this fit. Serving TPOT adds the prefills that chunked prefill runs inside decode
steps (`serving_tpot_ms`); disaggregated decode nodes run none. Where a benchmark drew random
lengths (SGLang's `--random-range-ratio`, ShareGPT) the lengths used are the run's own means
(total input or output tokens / requests).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import median
from typing import TypeVar

from kvplan import load_spec
from kvplan.engines.sglang.pools import sglang_state_dtypes
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import INTERCONNECTS, default_interconnect
from kvplan.model.spec import ModelSpec
from kvplan.perf.costmodel import (
    DEFAULT_EFFICIENCY,
    DEVICE_EFFICIENCY,
    EAGER_PREFILL_ENGINES,
    CostInputs,
    Efficiency,
    Layout,
    device_efficiency,
    eager_prefill_ops,
    engine_efficiency,
    fuses_allreduce_norm,
    predict,
    prefill_launch_ms,
    serving_tpot_ms,
    serving_ttft_ms,
    sglang_chunked_prefill_tokens,
    step_time,
)
from tests.benches import honest
from tests.benches.row_commits import ADDED_IN

QWEN3_8B = ("https://github.com/gpustack/gpustack/blob/main/docs/performance-lab/qwen3-8b/"
            "h100-latency.md")
INFERENCEX = "https://github.com/SemiAnalysisAI/InferenceX/issues/870"
SGLANG_041 = "https://github.com/sgl-project/sglang/pull/2643"
LMSYS_EP = "https://lmsys.org/blog/2025-05-05-large-scale-ep/"
LMSYS_EP_CMD = "https://github.com/sgl-project/sglang/issues/6017"
LMSYS_GB200 = "https://lmsys.org/blog/2025-09-25-gb200-part-2"
GB200_CMD = ("https://github.com/shifangx/Scripts-SGLang/blob/main/z.blog2_High-prec_decode.sh "
             "(copied from https://github.com/sgl-project/sglang/issues/10903)")
LLAMA_70B_A100 = ("https://github.com/sgl-project/sgl-cookbook/blob/main/docs/autoregressive/"
                  "Llama/Llama3.1.md")
GPT_FAST = "https://github.com/pytorch-labs/gpt-fast/blob/main/README.md"
QWEN3_NEXT_COOKBOOK = ("https://github.com/sgl-project/sgl-cookbook/blob/main/docs/"
                       "autoregressive/Qwen/Qwen3-Next.md")
KIMI_K2_COOKBOOK = ("https://github.com/sgl-project/sgl-cookbook/blob/main/docs/autoregressive/"
                    "Moonshotai/Kimi-K2.md")
QWEN3_235B_B200 = ("https://github.com/sgl-project/sgl-cookbook/blob/main/docs/autoregressive/"
                   "Qwen/Qwen3.md")

VLLM_COMPILE_DOC = ("https://github.com/vllm-project/vllm/blob/"
                    "06642567fb75efff46bd51e07dd7437b6b3b8d96/docs/source/usage/torch_compile.rst")
NIM_LLAMA_70B = "https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance"
SGLANG_5432 = "https://github.com/sgl-project/sglang/pull/5432"
SGLANG_14764 = "https://github.com/sgl-project/sglang/pull/14764"
DATACRUNCH_R1 = ("index file id 49041160351 (\"Deploy DeepSeek-R1 671B on 8x NVIDIA H200 with "
                 "DataCrunch\", SGLang bench_one_batch)")
MI300X_NOTES = "index file id 43425326930 (MI300X inference notes, hotaisle, Oct 2024)"
INFERENCEX_PROMPTS = ("InferenceX benchmark scripts, `--num-prompts $((CONC * 10))`, index file "
                      "id 54910052592")
# AccelMark (FreedomIntelligence/AccelMark), results committed at 5797fc4 (May 2026): the
# "interactive" scenario sends its suite's first `interactive_request_count` requests one at a time
# (loadgen/loadgen.py: "Send one request, await completion before next - true serial") to an
# in-process engine (runners/nvidia_vllm020_0f6c56e4/runner.py: vLLM AsyncLLMEngine, CUDA graphs
# on; runners/nvidia_sglang_c43a8309/runner.py: sglang Engine, cuda graph on), greedy, and reports
# percentiles of tpot = (total - ttft) / (output_tokens - 1) per request ("tpot_ms_p50").
ACCELMARK = "https://github.com/FreedomIntelligence/AccelMark/blob/5797fc42745be2494e6213938d9e5afa0c6c5bef/"
# LMSYS, "NVIDIA DGX Spark In-Depth Review" (Oct 13, 2025): SGLang (lmsysorg/sglang:spark),
# `--quantization fp8` on the bf16 checkpoints, decode tokens/s at batch 1 ("Llama 3.1 8B ... at
# batch 1, ... 20.5 tps decode"; "Llama 3.1 70B (FP8) at 803 tps prefill / 2.7 tps decode").
LMSYS_SPARK = "https://lmsys.org/blog/2025-10-13-nvidia-dgx-spark/"
# Tenstorrent's GPU reference run of Qwen2.5-72B-Instruct on 2x H100 (comment of 2025-04-01):
# fixed ISL / OSL, concurrency 1, N Req 8 (4 at 128 / 1024), "TPOT (ms)". The same author's GPU
# runs use `vllm/vllm-openai:latest` (tenstorrent/tt-inference-server issues 131 and 235); the
# report prints no vLLM version ("vllm_commit": "n/a"): v0.8.x by the date, not stated.
TT_QWEN72B_H100 = "https://github.com/tenstorrent/tt-inference-server/issues/143"
QWEN25_05B_CONFIG = str(Path(__file__).resolve().parents[2] / "tests" / "data" / "configs"
                        / "qwen2.5-0.5b.json")
SERVING_FIT = False  # fit the eager prefill floor on the engine-timed prefills only

FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
             "weight_block_size": [128, 128]}
# Per-tensor FP8 (ModelOpt / TensorRT-LLM checkpoints such as NIM's Llama-3.3-70B fp8 profile).
FP8_TENSOR = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "static"}

COOKBOOK = "https://github.com/sgl-project/sgl-cookbook/blob/main/docs/autoregressive/"

A100_NOTE = "the page says 8x A100 without the memory size: the 80GB preset"
# GLM-4.5's architecture (zai-org/GLM-4.5, also served for GLM-4.6): tests/data/configs/glm-4.5.json
# (provenance: tests/data/configs/SOURCES-attention.md).
GLM_45_CONFIG = str(Path(__file__).resolve().parents[2] / "tests" / "data" / "configs"
                    / "glm-4.5.json")


@dataclass(frozen=True, kw_only=True)
class Case:
    label: str
    kind: str  # dense 1-GPU | dense TP2 | dense TP8 | TP8 MoE | large EP | TP8 MoE (2024 engine)
    model: str
    gpu: str
    layout: Layout
    batch: int  # requests per attention rank
    input_len: int
    output_len: int
    measured_tpot_ms: float
    url: str
    fp8: bool = False  # block-scaled FP8 weights (FP8_BLOCK)
    fp8_tensor: bool = False  # per-tensor FP8 weights (FP8_TENSOR)
    disaggregated: bool = False  # a PD decode node: no prefill inside decode steps
    eager_prefill: bool = False  # the engine runs prefill outside CUDA graphs (SGLang)
    engine_timed: bool = False  # decode steps timed alone by the engine (bench_one_batch)
    requests: int | None = None  # requests of the run (--num-prompts); None: not published
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class TtftCase:
    """A client's mean TTFT at low concurrency through the HTTP serving path: the prefill of one
    prompt plus what the path adds (HTTP, tokenization, scheduling, streaming the first token,
    and at concurrency > 1 the wait for a running decode step), which kvplan does not model."""

    label: str
    model: str
    gpu: str
    layout: Layout
    concurrency: int
    prompt_len: int
    measured_ttft_ms: float
    url: str
    fp8: bool = False
    fp8_tensor: bool = False
    eager_prefill: bool = False  # SGLang: prefill outside CUDA graphs
    fit: bool = False  # one of the cases the eager prefill launch time is fitted on
    output_len: int = 1  # mean output length (arrivals of replacements, `serving_ttft_ms`)
    requests: int | None = None  # requests of the run; None: not published
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class PrefillCase:
    """One prefill step timed by the engine itself, no serving path: SGLang's
    `bench_one_batch` ("Prefill. latency: X s") runs `prompts` prompts of `prompt_len` tokens
    as one extend batch (the benchmark run, after its warm-up)."""

    label: str
    model: str
    gpu: str
    layout: Layout
    prompts: int
    prompt_len: int
    measured_ms: float
    url: str
    fp8: bool = False
    eager_prefill: bool = True
    fit: bool = False
    note: str = ""


def _sglang_random(c: int, n: int, tin: int, tout: int, tpot: float, isl: int) -> Case:
    """One row of the SGLang cookbook's Llama-3.1-70B TP8 run (random dataset, SGLang 0.5.6):
    n requests, tin / tout total input / output tokens."""
    return Case(label=f"Llama-3.1-70B bf16 TP8, SGLang 0.5.6, {isl} in, conc. {c}",
                kind="dense TP8", model="llama-3.1-70b", gpu="A100-80GB", layout=Layout(tp=8),
                batch=c, input_len=round(tin / n), output_len=round(tout / n),
                measured_tpot_ms=tpot, url=LLAMA_70B_A100, note=A100_NOTE, eager_prefill=True,
                requests=n)


def _cookbook_run(label: str, kind: str, model: str, gpu: str, layout: Layout, page: str,
                  c: int, n: int, tin: int, tout: int, tpot: float, **extra) -> Case:
    """One bench_serving row of an SGLang cookbook page (docs/autoregressive/`page`): mean TPOT
    `tpot` at max concurrency `c` over `n` requests of `tin` / `tout` total input / output
    tokens (the run's own mean lengths); SGLang prefills eagerly."""
    return Case(label=label, kind=kind, model=model, gpu=gpu, layout=layout, batch=c,
                input_len=round(tin / n), output_len=round(tout / n), measured_tpot_ms=tpot,
                url=COOKBOOK + page, eager_prefill=True, requests=n, **extra)


def _qwen3_235b(c: int, n: int, tin: int, tout: int, tpot: float, name: str) -> Case:
    """One row of the SGLang cookbook's Qwen3-235B-A22B-Instruct-2507 (bf16) run on 8x B200,
    TP 8, SGLang 0.5.6 (random dataset): n requests, tin / tout total input / output tokens."""
    return _cookbook_run(f"Qwen3-235B-A22B bf16 TP8, SGLang 0.5.6, {name}, conc. {c}", "TP8 MoE",
                         "qwen3-235b-a22b", "B200", Layout(tp=8), "Qwen/Qwen3.md",
                         c, n, tin, tout, tpot)


def _inferencex_mean_len(length: int, range_ratio: float = 0.8) -> int:
    """The mean length InferenceX's benchmark_serving.py draws for `--random-{input,output}-len
    length` at `--random-range-ratio range_ratio` (uniform integers from int(length x ratio) to
    length: `lower = int(seq_len * range_ratio)`, `np.random.randint(lower, upper+1, ...)`,
    utils/bench_serving/benchmark_serving.py at InferenceX commit 1c5c8b45c)."""
    return round((int(length * range_ratio) + length) / 2)


def _eager(engine: str) -> bool:
    """Whether `engine` ("SGLang 0.5.6", "vLLM 0.20.1") launches prefill ops eagerly
    (kvplan.perf.costmodel.EAGER_PREFILL_ENGINES)."""
    return engine.split()[0].lower() in EAGER_PREFILL_ENGINES


def _accelmark(kind: str, gpu: str, engine: str, suite: str, result: str, tpot_ms: float,
               ttft_ms: float, elapsed_s: float) -> Case:
    """One AccelMark "interactive" row (ACCELMARK): `tpot_ms` / `ttft_ms` are its tpot_ms_p50 /
    ttft_ms_p50, `elapsed_s` its elapsed_seconds_median (one serial pass over the suite's
    requests). The suite fixes the model, the requests and the output cap (suites/suite_X/
    suite.json); the mean output, not published, is what one pass's time implies:
    (elapsed / requests - ttft) / tpot + 1, capped at output_tokens_max."""
    model, requests, input_len, cap = _ACCELMARK_SUITES[suite]
    output = min(cap, round((elapsed_s / requests - ttft_ms * 1e-3) / (tpot_ms * 1e-3)) + 1)
    name = {"A": "Llama-3-8B", "D": "Llama-3.1-8B", "F": "Qwen2.5-0.5B"}[suite]
    return Case(label=f"{name} bf16, {engine}, AccelMark suite {suite} interactive, batch 1",
                kind=kind, model=model, gpu=gpu, layout=Layout(), batch=1, input_len=input_len,
                output_len=output, measured_tpot_ms=tpot_ms, url=ACCELMARK + result,
                eager_prefill=_eager(engine), requests=requests)


def _accelmark_sustained(kind: str, gpu: str, engine: str, suite: str, result: str,
                         requests_done: int, tokens_out: int, minutes: int, ttft_ms: float) -> Case:
    """One AccelMark "sustained" row (ACCELMARK): `sustained_concurrency` requests kept in flight
    for the suite's `duration_minutes` (30 for suite A, 15 for F; loadgen.py run_sustained: a
    semaphore of that size, refilled as each request ends; the suite's first `request_count`
    requests, cycled). Its per-minute samples print requests_completed, tokens_out and
    ttft_ms_p50; summed over the minutes after the suite's `warmup_minutes`, a
    request takes concurrency x 60 s x minutes / requests_done and emits tokens_out /
    requests_done tokens, so its time per output token after the first is
    (that time - ttft) / (tokens - 1), ttft the median of the minutes' ttft_ms_p50. DERIVED from
    published throughput, not printed as a TPOT (like the SGLang 0.4.1.post2 rows)."""
    model, concurrency, input_len = _ACCELMARK_SUSTAINED[suite]
    request_s = concurrency * 60.0 * minutes / requests_done
    tokens = tokens_out / requests_done
    tpot_ms = (request_s - ttft_ms * 1e-3) / (tokens - 1) * 1e3
    name = {"A": "Llama-3-8B", "F": "Qwen2.5-0.5B"}[suite]
    return Case(label=f"{name} bf16, {engine}, AccelMark suite {suite} sustained, "
                      f"conc. {concurrency}",
                kind=kind, model=model, gpu=gpu, layout=Layout(), batch=concurrency,
                input_len=input_len, output_len=round(tokens), measured_tpot_ms=tpot_ms,
                url=ACCELMARK + result, eager_prefill=_eager(engine),
                note="TPOT derived from the per-minute throughput")


# Sustained: model, sustained_concurrency, mean input of the suite's first request_count requests
# (A: 100 of sharegpt_standard_v1, 245.4; F: 200 of sharegpt_edge_v1, 74.2).
_ACCELMARK_SUSTAINED = {"A": ("llama-3-8b", 8, 245), "F": (QWEN25_05B_CONFIG, 32, 74)}


# AccelMark suites (suites/suite_{A,D,F}/suite.json): model, interactive_request_count, mean input
# of those first requests (datasets/*/requests.jsonl "input_tokens": 236.1 over the first 150 of
# sharegpt_standard_v1, 72.6 over the first 150 of sharegpt_edge_v1; suite D's
# request_distribution "input_tokens_p50": 28650, its dataset file not stored), output cap.
_ACCELMARK_SUITES = {"A": ("llama-3-8b", 150, 236, 512), "D": ("llama-3.1-8b", 100, 28650, 256),
                     "F": (QWEN25_05B_CONFIG, 150, 73, 256)}
# Each run's merged result.json (metrics.interactive and metrics.sustained).
_AM_A100 = ("results/verified/nvidia_a100_sxm4_80gbx1_suite_{}_nvidia_vllm020_0f6c56e4_{}/"
            "result.json")
_AM_A100_40 = ("results/community/nvidia_a100_sxm4_40gbx1_suite_{}_nvidia_sglang_c43a8309_{}/"
               "result.json")
_AM_5090 = "results/verified/nvidia_geforce_rtx_5090x1_suite_{}_nvidia_vllm_47f5d58e_{}/result.json"
DENSE_HELD = "dense 1-GPU (held out)"
DESKTOP = "dense 1-GPU (desktop GPU)"


CASES: tuple[Case, ...] = (
    # vllm bench serve, ShareGPT, 100 prompts, 23,260 input / 22,061 output tokens, concurrency
    # 1 / 2 / 4 / 8 (the page's "Baseline benchmark results" and engine comparison).
    *(Case(label=f"Qwen3-8B bf16, vLLM 0.11, conc. {c}", kind="dense 1-GPU", model="qwen3-8b",
           gpu="H100-80GB", layout=Layout(), batch=c, input_len=233, output_len=221,
           measured_tpot_ms=t, url=QWEN3_8B, requests=100)
      for c, t in ((1, 7.28), (2, 7.37), (4, 7.38), (8, 7.71))),
    Case(label="Qwen3-8B bf16, SGLang 0.5.3, conc. 4", kind="dense 1-GPU", model="qwen3-8b",
         gpu="H100-80GB", layout=Layout(), batch=4, input_len=233, output_len=221,
         measured_tpot_ms=7.19, url=QWEN3_8B, eager_prefill=True, requests=100),
    Case(label="Qwen3-8B bf16, TensorRT-LLM 1.2.0rc1, conc. 4", kind="dense 1-GPU",
         model="qwen3-8b", gpu="H100-80GB", layout=Layout(), batch=4, input_len=233,
         output_len=221, measured_tpot_ms=7.67, url=QWEN3_8B, requests=100),
    Case(label="Qwen3-8B-FP8, SGLang 0.5.3, conc. 4", kind="dense 1-GPU", model="qwen3-8b",
         gpu="H100-80GB", layout=Layout(), batch=4, input_len=233, output_len=221,
         measured_tpot_ms=5.65, url=QWEN3_8B, fp8=True, eager_prefill=True,
         requests=100),
    # gpt-fast (torch.compile + CUDA graphs), batch 1, 5-token prompt, generate.py's default 200
    # new tokens: 104.9 tokens/s.
    Case(label="Llama-2-7B fp16, gpt-fast, batch 1", kind="dense 1-GPU", model="llama-2-7b",
         gpu="A100-80GB", layout=Layout(), batch=1, input_len=5, output_len=200,
         measured_tpot_ms=1e3 / 104.9, url=GPT_FAST,
         note="A100 power-limited to 330 W (the page: ~1,700 GB/s reachable)"),
    # vLLM's torch.compile guide (Dec 2024, V0 engine, CUDA graphs): `benchmark_latency.py
    # --model meta-llama/Meta-Llama-3-8B --batch-size 1 --load-format dummy` at the script's
    # defaults (--input-len 32, --output-len 128): "Avg latency" 0.9704 s on an H100, 7.816 s
    # on an L4. One generate call of a prefill (32 tokens, a memory-bound step like a decode
    # step) and 127 decode steps: latency / 128 per token. Held out (kind apart from FIT_KIND).
    *(Case(label=f"Llama-3-8B bf16, vLLM benchmark_latency (Dec 2024), batch 1, {gpu}",
           kind="dense 1-GPU (vLLM latency bench)", model="llama-3-8b", gpu=gpu,
           layout=Layout(), batch=1, input_len=32, output_len=128,
           measured_tpot_ms=seconds * 1e3 / 128, url=VLLM_COMPILE_DOC, engine_timed=True)
      for gpu, seconds in (("H100-80GB", 0.9704469823899369), ("L4", 7.81603614680001))),
    # ---- Held-out dense rows (helper B): AccelMark, LMSYS DGX Spark, Tenstorrent 2x H100 ----
    # AccelMark interactive (batch 1, in-process engine, ACCELMARK): vLLM 0.20.1 on one A100-SXM4-
    # 80GB (verified, 2026-05-18), SGLang 0.5.6 on one A100-SXM4-40GB (community, 2026-05-06/07),
    # vLLM 0.19.1rc1.dev339 on one GeForce RTX 5090 (verified, 2026-04-16). (tpot p50, ttft p50,
    # elapsed_seconds_median) as result.json prints them. Audit (issue #17): all nine re-read
    # from the result.json files at 5797fc4 (model_id, precision BF16, tensor_parallel_size 1,
    # framework_version, accelerator name and memory_gb match). Flag: the SGLang runner counts
    # output tokens by re-encoding the text (`len(self.tokenizer.encode(output_text))`, which for
    # the Llama-3 tokenizers adds a BOS), vLLM's by `len(output.outputs[0].token_ids)`: about
    # one token in ~190, not corrected.
    *(_accelmark(DENSE_HELD, "A100-80GB", "vLLM 0.20.1", suite, _AM_A100.format(suite, run), *m)
      for suite, run, m in (("A", "8f83bfab", (10.77, 27.78, 570.0)),
                            ("D", "43e96189", (13.10, 3178.55, 651.9)),
                            ("F", "a4e6a6e4", (1.83, 11.24, 59.1)))),
    *(_accelmark(DENSE_HELD, "A100-40GB", "SGLang 0.5.6", suite, _AM_A100_40.format(suite, run),
                 *m)
      for suite, run, m in (("A", "958afbbd", (12.93, 32.52, 381.4)),
                            ("D", "99c43b97", (15.65, 2987.93, 650.6)),
                            ("F", "435424a8", (1.89, 16.46, 56.5)))),
    *(_accelmark(DESKTOP, "RTX-5090", "vLLM 0.19.1", suite, _AM_5090.format(suite, run), *m)
      for suite, run, m in (("A", "b8f8ed0f", (10.22, 30.3, 544.9)),
                            ("D", "e87e6c36", (12.34, 3483.1, 679.9)),
                            ("F", "776d2702", (5.11, 22.5, 166.9)))),
    # AccelMark sustained (closed loop at the suite's concurrency, 27 / 13 minutes after the
    # warm-up): (requests_completed, tokens_out, minutes, median ttft_ms_p50) summed from each
    # result.json's metrics.sustained.samples after the suite's declared warm-up window
    # (suite.json "warmup_minutes": 2 for A, 1 for F; "sustained: `warmup_minutes` = time window
    # discarded", loadgen.py). The samples' own is_warmup flag is `elapsed < warmup_minutes *
    # 60` taken at each sample's end (~60.05 s, ~120.05 s), so it leaves the last warm-up minute
    # unflagged (suite F: none flagged); that minute is dropped here. Audit (issue #17): with it,
    # the RTX 5090 suite F row read 7.99 ms, its minute 1 holding a ~49 s stall ("tokens_out":
    # 41002 against ~246,000 a minute after it, "ttft_ms_p99": 49096.4); without it 7.50 ms. The
    # other five move by at most 0.5 % (11.16 / 2.72 / 14.06 / 4.43 / 11.24 -> 11.16 / 2.72 /
    # 14.07 / 4.41 / 11.24). Suite D's sustained run (28k-token prompts at concurrency 8)
    # queues for seconds before each first token and is left out.
    # Flag: the prompts repeat every request_count (100 / 200) requests and neither runner turns
    # off the engine's prefix cache (vLLM V1's enable_prefix_caching default, SGLang's radix
    # cache), so after the first pass most prefills are cache hits; the rows still charge each
    # request's whole prefill (an SGLang hit still launches an eager extend step). Charged as
    # decode alone (in the order below) they read 1.08 / 1.24 / 1.09 / 1.88 / 0.98 / 3.32
    # instead of 1.05 / 1.08 / 0.98 / 0.82 / 0.94 / 2.89; the truth lies between.
    *(_accelmark_sustained(kind, gpu, engine, suite, path.format(suite, run), *m)
      for kind, gpu, engine, path, suite, run, m in (
          (DENSE_HELD, "A100-80GB", "vLLM 0.20.1", _AM_A100, "A", "8f83bfab",
           (3336, 1154220, 27, 34.5)),
          (DENSE_HELD, "A100-80GB", "vLLM 0.20.1", _AM_A100, "F", "a4e6a6e4",
           (42856, 9031281, 13, 12.8)),
          (DENSE_HELD, "A100-40GB", "SGLang 0.5.6", _AM_A100_40, "A", "958afbbd",
           (4827, 910937, 27, 44.5)),
          (DENSE_HELD, "A100-40GB", "SGLang 0.5.6", _AM_A100_40, "F", "435424a8",
           (29872, 5563321, 13, 19.3)),
          (DESKTOP, "RTX-5090", "vLLM 0.19.1", _AM_5090, "A", "b8f8ed0f",
           (3300, 1146584, 27, 34.9)),
          (DESKTOP, "RTX-5090", "vLLM 0.19.1", _AM_5090, "F", "776d2702",
           (15602, 3269506, 13, 35.7)))),
    # LMSYS DGX Spark review (LMSYS_SPARK): SGLang, online FP8, `--quantization fp8` on the bf16
    # checkpoints (SGLang layers/quantization/fp8.py Fp8LinearMethod, stored copy of 2026:
    # "FP16/BF16 checkpoint. In this case, the weights will be quantized to FP8 during the weight
    # loading"; "On NV platforms, the per-channel weight quantization is used by default";
    # activations quantized dynamically): a w8a8 FP8 GEMM, charged as FP8_TENSOR (whose static
    # per-tensor scales differ only in scale bytes). Decode rate at batch 1 reported apart from
    # prefill (engine-timed; the post does not name the tool that timed it). The post gives no
    # lengths:
    # input 2,048 / output 128 assumed (NVIDIA's DGX Spark benchmarks use ISL/OSL 2048/128); at
    # batch 1, context 0 -> 4k moves the predictions by 4.8 % (8B) and 1.4 % (70B).
    *(Case(label=f"Llama-3.1-{size} FP8, SGLang (spark image, Oct 2025), batch 1",
           kind=DESKTOP, model=f"llama-3.1-{size.lower()}", gpu="GB10", layout=Layout(),
           batch=1, input_len=2048, output_len=128, measured_tpot_ms=1e3 / tps,
           url=LMSYS_SPARK, fp8_tensor=True, engine_timed=True,
           note="lengths not published: 2048 / 128 assumed")
      for size, tps in (("8B", 20.5), ("70B", 2.7))),
    # Tenstorrent's GPU reference (TT_QWEN72B_H100): Qwen2.5-72B-Instruct (bf16) TP 2 on 2x H100,
    # vLLM, fixed lengths, concurrency 1. The post says "2xH100" without the form factor: the SXM
    # preset (a PCIe H100's 2.0 TB/s cannot stream its 72 GB share of the weights in 31 ms).
    # Audit (issue #17): TPOT, N Req and lengths as the comment's table prints them; flagged, not
    # pinned by the source: the form factor (an H100 NVL, 3.9 TB/s, is not excluded) and the
    # vLLM release.
    *(Case(label=f"Qwen2.5-72B bf16 TP2, vLLM (early 2025), {isl}/{osl}, conc. 1",
           kind="dense TP2 (vLLM, version not printed)", model="qwen2.5-72b", gpu="H100-80GB",
           layout=Layout(tp=2), batch=1, input_len=isl, output_len=osl, measured_tpot_ms=t,
           url=TT_QWEN72B_H100, requests=n, note="vllm/vllm-openai:latest, 2025-04-01")
      for isl, osl, n, t in ((128, 1024, 4, 30.9), (2048, 128, 8, 31.0), (8192, 128, 8, 31.3))),
    # SGLang cookbook, Llama-3.1-70B, 8x A100, TP 8, bench_serving random 1000/1000 and
    # 8000/1000 at max concurrency 1 / 16 / 100 (64): Mean TPOT.
    _sglang_random(1, 10, 6101, 4220, 18.63, 1000),
    _sglang_random(16, 80, 39668, 40805, 26.09, 1000),
    _sglang_random(100, 500, 249831, 252662, 47.19, 1000),
    _sglang_random(1, 10, 41941, 4220, 18.80, 8000),
    _sglang_random(16, 80, 300020, 41669, 36.94, 8000),
    _sglang_random(64, 320, 1273893, 170000, 74.95, 8000),
    # NVIDIA NIM 1.8.0, Llama-3.3-70B-Instruct (the Llama-3.1-70B architecture), fp8 TP2 on
    # 2x H100 80G, AIPerf at fixed lengths 5000 / 500 (concurrency 1-50; at 100+ the server
    # queues) and 500 / 2000 (concurrency 1): ITL (ms).
    *(Case(label=f"Llama-3.3-70B fp8 TP2, NIM 1.8.0, {isl}/{osl}, conc. {c}", kind="dense TP2",
           model="llama-3.1-70b", gpu="H100-80GB", layout=Layout(tp=2), batch=c,
           input_len=isl, output_len=osl, measured_tpot_ms=t, url=NIM_LLAMA_70B,
           fp8_tensor=True)
      for c, isl, osl, t in ((1, 5000, 500, 18.58), (5, 5000, 500, 21.83),
                             (25, 5000, 500, 38.75), (50, 5000, 500, 59.73),
                             (1, 500, 2000, 18.91))),
    # DeepSeek-R1-0528 FP8 (DeepSeek-V3 architecture), SGLang 0.5.7, TP 8, 1k in / 1k out.
    # InferenceX's harness runs --num-prompts $((CONC * 10)) at --max-concurrency CONC
    # (INFERENCEX_PROMPTS) and --random-range-ratio 0.8: mean lengths 922 for 1k, 7,372 for 8k
    # (_inferencex_mean_len; these rows used the nominal 1,024 / 8,192 before the audit).
    *(Case(label=f"DeepSeek-R1 FP8 TP8, SGLang 0.5.7, 1k/1k, conc. {c}", kind="TP8 MoE",
           model="deepseek-v3", gpu="H200", layout=Layout(tp=8), batch=c,
           input_len=_inferencex_mean_len(1024), output_len=_inferencex_mean_len(1024),
           measured_tpot_ms=t, url=INFERENCEX, eager_prefill=True,
           requests=10 * c)
      for c, t in ((8, 12.8), (16, 17.2), (32, 25.6), (64, 34.6))),
    # The same issue's concurrency-4 table (three runners): 1k/1k, 1k/8k, 8k/1k Mean TPOT.
    *(Case(label=f"DeepSeek-R1 FP8 TP8, SGLang 0.5.7, {name}, conc. 4", kind="TP8 MoE",
           model="deepseek-v3", gpu="H200", layout=Layout(tp=8), batch=4,
           input_len=_inferencex_mean_len(isl), output_len=_inferencex_mean_len(osl),
           measured_tpot_ms=t, url=INFERENCEX, note=note, eager_prefill=True,
           requests=40)
      for name, isl, osl, t, note in (
          ("1k/1k", 1024, 1024, 22.73, "runner h200-nv_0: slower than the same issue's "
           "concurrency 8 (12.8 ms), not a property of the model"),
          ("1k/8k", 1024, 8192, 10.93, ""), ("8k/1k", 8192, 1024, 12.05, ""))),
    # SGLang cookbook, Qwen3-235B-A22B-Instruct-2507 on 8x B200, TP 8, SGLang 0.5.6, random
    # 1000/1000, 1000/8000 and 8000/1000 at max concurrency 1 / 16 / 100 (64): Mean TPOT.
    _qwen3_235b(1, 10, 6101, 4210, 10.12, "1k/1k"),
    _qwen3_235b(16, 80, 39668, 40725, 16.36, "1k/1k"),
    _qwen3_235b(100, 500, 249831, 252162, 32.94, "1k/1k"),
    _qwen3_235b(1, 10, 6101, 44452, 10.23, "1k/8k"),
    _qwen3_235b(16, 80, 39668, 318226, 14.82, "1k/8k"),
    _qwen3_235b(64, 320, 158939, 1300705, 23.66, "1k/8k"),
    _qwen3_235b(1, 10, 41941, 4210, 10.31, "8k/1k"),
    _qwen3_235b(16, 80, 300020, 41589, 16.81, "8k/1k"),
    _qwen3_235b(64, 320, 1273893, 169680, 32.50, "8k/1k"),
    # Step time = batch / output tokens per second (input 128, output 256), Dec 2024.
    *(Case(label=f"DeepSeek-V3 TP8, SGLang 0.4.1.post2, batch {b}",
           kind="TP8 MoE (2024 engine)", model="deepseek-v3", gpu="H200", layout=Layout(tp=8),
           batch=b, input_len=128, output_len=256, measured_tpot_ms=b / tps * 1e3,
           url=SGLANG_041, note="first DeepSeek-V3 release: Triton MoE, no DeepGEMM/FlashMLA",
           eager_prefill=True)
      for b, tps in ((1, 30.29), (8, 206.32), (32, 760.52))),
    # SGLang cookbook, Qwen3-Next-80B-A3B-Instruct (bf16; Gated DeltaNet + gated attention, 512
    # experts) on 8x B200, TP 8, SGLang 0.5.6, bench_serving ShareGPT (its default dataset) at
    # max concurrency 1 (100 prompts, 33,839 in / 21,640 out) and 100 (1,000 prompts,
    # 302,118 / 195,775): Mean TPOT. Held out.
    *(_cookbook_run(f"Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT, conc. {c}",
                    "TP8 MoE", "qwen3-next-80b-a3b", "B200", Layout(tp=8),
                    "Qwen/Qwen3-Next.md", c, n, tin, tout, t)
      for c, n, tin, tout, t in ((1, 100, 33839, 21640, 6.19),
                                 (100, 1000, 302118, 195775, 50.87))),
    # --- Held-out MoE rows on NVIDIA GPUs, 2025 H2 / 2026 engines (issue #17). ---
    # Audit (issue #17): every Mean TPOT, Mean TTFT, successful-request count, total input /
    # generated tokens, max concurrency, GPU, --tp / --ep, checkpoint and release of the SGLang
    # cookbook rows below re-read at sgl-cookbook 7b5bd9c (no launch command there enables
    # speculative decoding); the InferenceX issue 828 and Vultr values re-read from the pages.
    # SGLang cookbook, DeepSeek-R1-0528 (FP8 block-scaled, DeepSeek-V3 architecture) on 8x B200,
    # TP 8 (`--tp 8`, nothing else), SGLang 0.5.6.post1, bench_serving random 1000/1000,
    # 1000/8000, 8000/1000 at max concurrency 1 / 16 / 100 (64), --num-prompts 10 at
    # concurrency 1 and 5 x concurrency above it (80 / 500 / 320; the page's "Recommended:
    # num_prompts = concurrency x 5"): Mean TPOT, with the run's "Total input tokens" / "Total
    # generated tokens".
    *(_cookbook_run(f"DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, {name}, conc. {c}", "TP8 MoE",
                    "deepseek-v3", "B200", Layout(tp=8), "DeepSeek/DeepSeek-R1.md",
                    c, n, tin, tout, t)
      for name, c, n, tin, tout, t in (
          ("1k/1k", 1, 10, 6101, 4210, 9.16), ("1k/1k", 16, 80, 39668, 40725, 17.56),
          ("1k/1k", 100, 500, 249831, 252162, 40.11), ("1k/8k", 1, 10, 6101, 44452, 9.21),
          ("1k/8k", 16, 80, 39668, 318226, 15.42), ("1k/8k", 64, 320, 158939, 1300705, 25.94),
          ("8k/1k", 1, 10, 41941, 4210, 9.26), ("8k/1k", 16, 80, 300020, 41589, 19.06),
          ("8k/1k", 64, 320, 1273893, 169680, 39.93))),
    # SGLang cookbook, GLM-4.6 (zai-org/GLM-4.6, bf16; the GLM-4.5 architecture: 92 layers, 160
    # routed experts top-8, GLM_45_CONFIG) on 8x B200, TP 8, SGLang 0.5.6.post1 ("Hardware:
    # NVIDIA B200 GPU (8x)" before AMD rows were added to the page in sgl-cookbook d59f9e0),
    # the same random 1000/1000, 1000/8000, 8000/1000 runs: Mean TPOT.
    *(_cookbook_run(f"GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, {name}, conc. {c}", "TP8 MoE",
                    GLM_45_CONFIG, "B200", Layout(tp=8), "GLM/GLM-4.6.md", c, n, tin, tout, t)
      for name, c, n, tin, tout, t in (
          ("1k/1k", 1, 10, 6101, 4210, 14.81), ("1k/1k", 16, 80, 39668, 40725, 24.24),
          ("1k/1k", 100, 500, 249831, 252162, 49.97), ("1k/8k", 1, 10, 6101, 44452, 14.92),
          ("1k/8k", 16, 80, 39668, 318226, 21.97), ("1k/8k", 64, 320, 158939, 1300705, 33.47),
          ("8k/1k", 1, 10, 41941, 4210, 15.02), ("8k/1k", 16, 80, 300020, 41589, 25.37),
          ("8k/1k", 64, 320, 1273893, 169680, 46.62))),
    # SGLang cookbook, gpt-oss-120b (mxfp4 experts) on 8x B200, TP 8, SGLang 0.5.6,
    # bench_serving ShareGPT (its default dataset) at max concurrency 1 (100 prompts, 33,178 in
    # / 21,251 out) and 100 (1,000 prompts, 297,156 / 192,432): Mean TPOT.
    *(_cookbook_run(f"gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT, conc. {c}", "TP8 MoE",
                    "gpt-oss-120b", "B200", Layout(tp=8), "OpenAI/GPT-OSS.md", c, n, tin, tout, t)
      for c, n, tin, tout, t in ((1, 100, 33178, 21251, 2.31),
                                 (100, 1000, 297156, 192432, 14.31))),
    # SGLang cookbook, Qwen3-Coder-Next (bf16; the page: "48-layer hybrid layout combining Gated
    # DeltaNet and Gated Attention with Mixture-of-Experts (512 total experts, 10 activated, 1
    # shared)", 80B total / 3B active: the Qwen3-Next-80B-A3B architecture, so its spec) on
    # 2x B200, TP 2, SGLang "0.5.8+", random 1000/1000, 1000/8000, 8000/1000: Mean TPOT.
    *(_cookbook_run(f"Qwen3-Coder-Next bf16 TP2, SGLang 0.5.8, {name}, conc. {c}", "TP2 MoE",
                    "qwen3-next-80b-a3b", "B200", Layout(tp=2), "Qwen/Qwen3-Coder-Next.md",
                    c, n, tin, tout, t)
      for name, c, n, tin, tout, t in (
          ("1k/1k", 1, 10, 6101, 4220, 6.19), ("1k/1k", 16, 80, 39668, 40805, 13.61),
          ("1k/1k", 100, 500, 249831, 252662, 38.57), ("1k/8k", 1, 10, 6101, 44462, 6.24),
          ("1k/8k", 16, 80, 39668, 318306, 10.32), ("1k/8k", 64, 320, 158939, 1301025, 16.76),
          ("8k/1k", 1, 10, 41941, 4220, 6.56), ("8k/1k", 16, 80, 300020, 41669, 14.13),
          ("8k/1k", 64, 320, 1273893, 170000, 29.81))),
    # SGLang cookbook, MiniMax-M2.5 (FP8 block-scaled; the MiniMax-M2 architecture: vLLM's
    # "MiniMax-M2 Series Usage Guide" applies to M2.5, M2.1 and M2, "You only need to update
    # the model name", https://github.com/vllm-project/recipes/blob/
    # 41560e28184723e68bc1c5e3960f9acfca7259c3/MiniMax/MiniMax-M2.md), `--tp 8 --ep 8`, on
    # 8x B200 (SGLang 0.5.8) and 8x H100 80GB (SGLang 0.5.9), random 1000/1000 and 8000/1000:
    # Mean TPOT. SGLang's EP without `--moe-a2a-backend` (default `none`) "Uses All-Reduce or
    # All-Gather for token dispatch" (sglang docs/advanced_features/expert_parallelism.md): the
    # all-reduce of the TP layout, not the all-to-all kvplan charges for `ep`; kvplan has no
    # layout for whole experts per rank with all-reduce, so these run as Layout(tp=8) (the same
    # expert bytes per rank on average). With Layout(tp=8, ep=8) they read 0.71-1.31.
    *(_cookbook_run(f"MiniMax-M2.5 FP8 TP8 EP8, SGLang {ver}, {name}, conc. {c}", "TP8 MoE",
                    "minimax-m2", gpu, Layout(tp=8), "MiniMax/MiniMax-M2.5.md",
                    c, n, tin, tout, t,
                    note="--ep 8 with the default all-reduce dispatch, run as TP 8")
      for gpu, ver, name, c, n, tin, tout, t in (
          ("B200", "0.5.8", "1k/1k", 1, 10, 6091, 4220, 9.89),
          ("B200", "0.5.8", "1k/1k", 16, 80, 39588, 40805, 16.20),
          ("B200", "0.5.8", "1k/1k", 100, 500, 249331, 252662, 33.04),
          ("B200", "0.5.8", "8k/1k", 1, 10, 41941, 4220, 10.00),
          ("B200", "0.5.8", "8k/1k", 16, 80, 300020, 41669, 16.60),
          ("B200", "0.5.8", "8k/1k", 64, 320, 1273893, 170000, 32.19),
          ("H100-80GB", "0.5.9", "1k/1k", 1, 10, 6101, 4220, 8.05),
          ("H100-80GB", "0.5.9", "1k/1k", 16, 80, 39668, 40805, 14.81),
          ("H100-80GB", "0.5.9", "1k/1k", 100, 500, 249831, 252662, 28.92))),
    # SemiAnalysis InferenceX issue 828 (Mar 2026, a sweep of its gptoss-fp4-h100-vllm config:
    # image vllm/vllm-openai:v0.15.1, VLLM_MXFP4_USE_MARLIN=1, --max-num-seqs CONC,
    # --num-prompts $((CONC * 10)), InferenceX .github/configs/nvidia-master.yaml and
    # benchmarks/single_node/gptoss_fp4_h100.sh at commit 1c5c8b45c): gpt-oss-120b on H100
    # (DGX Cloud: the issue's analysis comment, "Model: gpt-oss-120b FP4 on H100 DGXC"; the
    # workflow's runs-on: h100), TP 2 / 4 / 8, the issue's "1K/1K" and "1K/8K" tables, column
    # "TPOT (ms)"
    # (the statistic is not named there; InferenceX's utils/summarize.py prints its "TPOT (ms)"
    # column from median_tpot, so it may be the median, which at fixed-ish lengths under
    # --ignore-eos sits near the mean). Lengths: the sweep's workflow (branch
    # claude/issue-828-20260301-0603, .github/workflows/experimental-gptoss-power-sweep.yml)
    # sets RANDOM_RANGE_RATIO: "0.8", and InferenceX's utils/bench_serving/benchmark_serving.py
    # draws each length as `np.random.randint(int(seq_len * range_ratio), seq_len + 1)`: means
    # of 922 (1024) and 7,372 (8192) tokens (_inferencex_mean_len). Audit (issue #17): these rows
    # used 1024 / 1024 and 1024 / 8192 before.
    *(Case(label=f"gpt-oss-120b TP{tp}, vLLM 0.15.1, {name}, conc. {c}",
           kind=f"TP{tp} MoE", model="gpt-oss-120b", gpu="H100-80GB", layout=Layout(tp=tp),
           batch=c, input_len=_inferencex_mean_len(1024), output_len=_inferencex_mean_len(osl),
           measured_tpot_ms=t,
           url="https://github.com/SemiAnalysisAI/InferenceX/issues/828", requests=10 * c)
      for tp, name, osl, c, t in (
          (8, "1k/1k", 1024, 4, 3.72), (8, "1k/1k", 1024, 8, 4.05), (8, "1k/1k", 1024, 16, 4.83),
          (8, "1k/1k", 1024, 32, 5.82), (8, "1k/1k", 1024, 64, 7.36),
          (4, "1k/1k", 1024, 64, 9.89), (2, "1k/1k", 1024, 64, 15.21),
          (8, "1k/8k", 8192, 4, 3.68), (8, "1k/8k", 8192, 8, 4.00))),
    # Vultr's NVIDIA HGX B200 vLLM cookbook (Mar 2026): MiniMax-M2.5 (FP8) TP 4 on 4 B200,
    # vLLM 0.12.0 ("MiniMax M2.5 was benchmarked on vLLM 0.12.0 because vLLM 0.16.0 crashes
    # with MiniMax's MoE routing", https://docs.vultr.com/inference-cookbook/cuda/benchmarks/
    # methodology), `vllm bench serve` random 2,048 in / 512 out, 50 prompts at concurrency 1
    # and 400 above: "TPOT (ms)" of its "MiniMax M2.5 (FP8, TP=4, 4 GPUs)" table.
    *(Case(label=f"MiniMax-M2.5 FP8 TP4, vLLM 0.12.0, 2k/512, conc. {c}", kind="TP4 MoE",
           model="minimax-m2", gpu="B200", layout=Layout(tp=4), batch=c, input_len=2048,
           output_len=512, measured_tpot_ms=t,
           url="https://docs.vultr.com/inference-cookbook/cuda/optimization/concurrency-tuning",
           requests=n)
      for c, n, t in ((1, 50, 11.40), (8, 400, 13.37), (16, 400, 15.01))),
    # SGLang cookbook, Kimi-K2-Instruct (FP8 block-scaled, the DeepSeek-V3 architecture with 384
    # experts and 64 heads) on 8x MI300X, TP 8, SGLang 0.5.7 ROCm
    # (SGLANG_ROCM_FUSED_DECODE_MLA=0), bench_serving random 1000/1000 at max concurrency
    # 1 / 16 / 100 (10 / 80 / 500 prompts): Mean TPOT. Held out, kind apart (ROCm).
    *(Case(label=f"Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. {c}",
           kind="TP8 MoE (ROCm 2025)", model="kimi-k2", gpu="MI300X", layout=Layout(tp=8),
           batch=c, input_len=round(tin / n), output_len=round(tout / n), measured_tpot_ms=t,
           url=KIMI_K2_COOKBOOK, eager_prefill=True, requests=n)
      for c, n, tin, tout, t in ((1, 10, 6101, 4220, 40.41), (16, 80, 49668, 40805, 46.85),
                                 (100, 500, 249841, 252662, 74.58))),
    # Decode steps timed by SGLang's bench_one_batch alone ("Decode.  median latency", the run
    # after the warm-up; no prefill between them), from the same logs as PREFILL_CASES.
    Case(label="DeepSeek-V3 FP8 TP8, SGLang (Apr 2025, DeepGEMM), bench_one_batch, batch 1",
         kind="TP8 MoE", model="deepseek-v3", gpu="H200", layout=Layout(tp=8), batch=1,
         input_len=1000, output_len=100, measured_tpot_ms=17.20, url=SGLANG_5432,
         engine_timed=True, note="SGL_ENABLE_JIT_DEEPGEMM=1, DEEPGEMM_BMM=0"),
    Case(label="DeepSeek-R1 FP8 TP8, SGLang (Feb 2025, torch.compile), bench_one_batch, batch 1",
         kind="TP8 MoE", model="deepseek-v3", gpu="H200", layout=Layout(tp=8), batch=1,
         input_len=128, output_len=256, measured_tpot_ms=20.98, url=DATACRUNCH_R1,
         engine_timed=True, note="8x H200 (DataCrunch)"),
    Case(label="DeepSeek-V3.1 FP8 TP8, SGLang (Dec 2025), bench_one_batch, batch 16",
         kind="TP8 MoE", model="deepseek-v3", gpu="H200", layout=Layout(tp=8), batch=16,
         input_len=512, output_len=512, measured_tpot_ms=16.20, url=SGLANG_14764,
         engine_timed=True, note="--enable-flashinfer-allreduce-fusion"),
    Case(label="DeepSeek-V3 FP8 TP8, SGLang ROCm (Feb 2025), bench_one_batch, batch 4",
         kind="TP8 MoE (ROCm 2025)", model="deepseek-v3", gpu="MI300X", layout=Layout(tp=8),
         batch=4, input_len=2048, output_len=256, measured_tpot_ms=38.50,
         url="https://github.com/sgl-project/sglang/pull/3237", engine_timed=True,
         note="without the PR's fused MLA decode kernel (35.81 ms with it)"),
    Case(label="Llama-3-8B bf16, SGLang ROCm (Oct 2024), bench_latency, batch 32",
         kind="dense 1-GPU (ROCm 2024)", model="llama-3-8b", gpu="MI300X", layout=Layout(),
         batch=32, input_len=256, output_len=32, measured_tpot_ms=9.73, url=MI300X_NOTES,
         engine_timed=True),
    # 22,282 output tokens/s per 8-GPU decode node, 2,000-token inputs; decode on 9 nodes with
    # DP attention + EP 72 and --max-running-requests 18432 (= 256 per GPU), two-batch overlap.
    Case(label="DeepSeek-V3 DP-attn + EP72, SGLang PD, 256/GPU", kind="large EP",
         model="deepseek-v3", gpu="H100-80GB",
         layout=Layout(tp=72, ep=72, dp_attention=True), batch=256, input_len=2000,
         output_len=100, measured_tpot_ms=256 / (22282 / 8) * 1e3, url=LMSYS_EP,
         disaggregated=True, note="batch from " + LMSYS_EP_CMD),
    # 9,087 output tokens/s per GB200 GPU at 2,000-token inputs with "BF16 for attention and FP8
    # for GEMM"; decode on 12 GB200 nodes (48 GPUs, one NVL72 NVLink domain) with DP attention +
    # EP 48, --max-running-requests 36864 and --cuda-graph-bs 768 (= 768 per GPU), single-batch
    # overlap. Output length 100 as in the H100 run (--context-length 2176 bounds it at 176).
    Case(label="DeepSeek-R1 DP-attn + EP48, SGLang PD, 768/GPU", kind="large EP",
         model="deepseek-v3", gpu="GB200", layout=Layout(tp=48, ep=48, dp_attention=True),
         batch=768, input_len=2000, output_len=100, measured_tpot_ms=768 / 9087 * 1e3,
         url=LMSYS_GB200, disaggregated=True, note="batch from " + GB200_CMD),
)

# SGLang's own prefill timer (bench_one_batch), DeepSeek-V3/R1 (FP8) on 8x H200, TP 8: the
# "Benchmark ..." run's "Prefill. latency" line (its first, warm-up run compiles kernels).
PREFILL_CASES: tuple[PrefillCase, ...] = (
    PrefillCase(label="DeepSeek-R1 FP8 TP8, SGLang (Feb 2025, --enable-torch-compile), 1 x 128",
                model="deepseek-v3", gpu="H200", layout=Layout(tp=8), prompts=1,
                prompt_len=128, measured_ms=196.35, url=DATACRUNCH_R1, fit=True,
                note="8x H200 (DataCrunch)"),
    PrefillCase(label="DeepSeek-V3 FP8 TP8, SGLang (Apr 2025), 1 x 1000", model="deepseek-v3",
                gpu="H200", layout=Layout(tp=8), prompts=1, prompt_len=1000, measured_ms=179.55,
                url=SGLANG_5432, fit=True, note="SGL_ENABLE_JIT_DEEPGEMM_BMM=0"),
    PrefillCase(label="DeepSeek-V3 FP8 TP8, SGLang (Apr 2025, DeepGEMM bmm), 1 x 1000",
                model="deepseek-v3", gpu="H200", layout=Layout(tp=8), prompts=1,
                prompt_len=1000, measured_ms=166.62, url=SGLANG_5432, fit=True,
                note="SGL_ENABLE_JIT_DEEPGEMM_BMM=1"),
    PrefillCase(label="DeepSeek-V3.1 FP8 TP8, SGLang (Dec 2025), 16 x 512", model="deepseek-v3",
                gpu="H200", layout=Layout(tp=8), prompts=16, prompt_len=512, measured_ms=288.94,
                url=SGLANG_14764, fit=True,
                note="--enable-flashinfer-allreduce-fusion"),
    # ROCm SGLang (Oct 2024), Llama-3-8B on one MI300X: `bench_latency --batch 32 --input-len
    # 256` (the benchmark run; avail mem 191 GB at start).
    PrefillCase(label="Llama-3-8B bf16, SGLang ROCm (Oct 2024), 32 x 256", model="llama-3-8b",
                gpu="MI300X", layout=Layout(), prompts=32, prompt_len=256, measured_ms=250.74,
                url=MI300X_NOTES, note="ROCm 6.2 nightly, Triton attention backend"),
)

TTFT_CASES: tuple[TtftCase, ...] = (
    TtftCase(label="Qwen3-8B bf16, vLLM 0.11, ShareGPT", model="qwen3-8b", gpu="H100-80GB",
             layout=Layout(), concurrency=1, prompt_len=233, measured_ttft_ms=59.01,
             url=QWEN3_8B),
    TtftCase(label="Qwen3-8B bf16, SGLang 0.5.3, ShareGPT", model="qwen3-8b", gpu="H100-80GB",
             layout=Layout(), concurrency=4, prompt_len=233, measured_ttft_ms=27.70,
             url=QWEN3_8B, eager_prefill=True, output_len=221, requests=100),
    TtftCase(label="Llama-3.1-70B bf16 TP8, SGLang 0.5.6, random 1000", model="llama-3.1-70b",
             gpu="A100-80GB", layout=Layout(tp=8), concurrency=1, prompt_len=round(6101 / 10),
             measured_ttft_ms=131.61, url=LLAMA_70B_A100, note=A100_NOTE, eager_prefill=True,
             fit=SERVING_FIT),
    TtftCase(label="Llama-3.1-70B bf16 TP8, SGLang 0.5.6, random 8000", model="llama-3.1-70b",
             gpu="A100-80GB", layout=Layout(tp=8), concurrency=1,
             prompt_len=round(41941 / 10), measured_ttft_ms=395.25, url=LLAMA_70B_A100,
             note=A100_NOTE, eager_prefill=True),
    *(TtftCase(label=f"Llama-3.3-70B fp8 TP2, NIM 1.8.0, {isl} in", model="llama-3.1-70b",
               gpu="H100-80GB", layout=Layout(tp=2), concurrency=1, prompt_len=isl,
               measured_ttft_ms=t, url=NIM_LLAMA_70B, fp8_tensor=True)
      for isl, t in ((5000, 406.77), (500, 47.77))),
    *(TtftCase(label=f"Qwen3-235B-A22B bf16 TP8, SGLang 0.5.6, {name}",
               model="qwen3-235b-a22b", gpu="B200", layout=Layout(tp=8), concurrency=1,
               prompt_len=round(tin / 10), measured_ttft_ms=t, url=QWEN3_235B_B200,
               eager_prefill=True, fit=SERVING_FIT)
      for name, tin, t in (("random 1000/1000", 6101, 99.03), ("random 1000/8000", 6101, 110.60),
                           ("random 8000/1000", 41941, 139.90))),
    TtftCase(label="Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT",
             model="qwen3-next-80b-a3b", gpu="B200", layout=Layout(tp=8), concurrency=1,
             prompt_len=round(33839 / 100), measured_ttft_ms=127.88, url=QWEN3_NEXT_COOKBOOK,
             eager_prefill=True, output_len=round(21640 / 100), requests=100),
    # Held-out MoE TTFTs at concurrency 1 (the same runs as the new decode rows): Mean TTFT.
    *(TtftCase(label=label, model=model, gpu=gpu, layout=layout, concurrency=1,
               prompt_len=round(tin / n), measured_ttft_ms=t,
               url="https://github.com/sgl-project/sgl-cookbook/blob/main/docs/autoregressive/"
               + page, eager_prefill=True, output_len=round(tout / n), requests=n)
      for label, model, gpu, layout, page, n, tin, tout, t in (
          ("DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 1000/1000", "deepseek-v3", "B200",
           Layout(tp=8), "DeepSeek/DeepSeek-R1.md", 10, 6101, 4210, 153.00),
          ("DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 1000/8000", "deepseek-v3", "B200",
           Layout(tp=8), "DeepSeek/DeepSeek-R1.md", 10, 6101, 44452, 125.76),
          ("DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 8000/1000", "deepseek-v3", "B200",
           Layout(tp=8), "DeepSeek/DeepSeek-R1.md", 10, 41941, 4210, 165.91),
          ("GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 1000/1000", GLM_45_CONFIG, "B200",
           Layout(tp=8), "GLM/GLM-4.6.md", 10, 6101, 4210, 155.57),
          ("GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 1000/8000", GLM_45_CONFIG, "B200",
           Layout(tp=8), "GLM/GLM-4.6.md", 10, 6101, 44452, 160.21),
          ("GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 8000/1000", GLM_45_CONFIG, "B200",
           Layout(tp=8), "GLM/GLM-4.6.md", 10, 41941, 4210, 189.48),
          ("gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT", "gpt-oss-120b", "B200", Layout(tp=8),
           "OpenAI/GPT-OSS.md", 100, 33178, 21251, 33.71),
          ("Qwen3-Coder-Next bf16 TP2, SGLang 0.5.8, random 1000/1000", "qwen3-next-80b-a3b",
           "B200", Layout(tp=2), "Qwen/Qwen3-Coder-Next.md", 10, 6101, 4220, 161.68),
          ("Qwen3-Coder-Next bf16 TP2, SGLang 0.5.8, random 1000/8000", "qwen3-next-80b-a3b",
           "B200", Layout(tp=2), "Qwen/Qwen3-Coder-Next.md", 10, 6101, 44462, 95.51),
          ("Qwen3-Coder-Next bf16 TP2, SGLang 0.5.8, random 8000/1000", "qwen3-next-80b-a3b",
           "B200", Layout(tp=2), "Qwen/Qwen3-Coder-Next.md", 10, 41941, 4220, 139.46),
          ("MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, random 1000/1000", "minimax-m2", "B200",
           Layout(tp=8), "MiniMax/MiniMax-M2.5.md", 10, 6091, 4220, 130.57),
          ("MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, random 8000/1000", "minimax-m2", "B200",
           Layout(tp=8), "MiniMax/MiniMax-M2.5.md", 10, 41941, 4220, 131.50),
          ("MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, random 1000/1000", "minimax-m2",
           "H100-80GB", Layout(tp=8), "MiniMax/MiniMax-M2.5.md", 10, 6101, 4220, 145.20))),
    TtftCase(label="Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, random 1000/1000", model="kimi-k2",
             gpu="MI300X", layout=Layout(tp=8), concurrency=1, prompt_len=round(6101 / 10),
             measured_ttft_ms=159.67, url=KIMI_K2_COOKBOOK, eager_prefill=True,
             output_len=round(4220 / 10), requests=10),
    *(TtftCase(label=f"DeepSeek-R1 FP8 TP8, SGLang 0.5.7, {name}", model="deepseek-v3",
               gpu="H200", layout=Layout(tp=8), concurrency=4,
               prompt_len=_inferencex_mean_len(isl), measured_ttft_ms=t, url=INFERENCEX,
               eager_prefill=True, output_len=_inferencex_mean_len(osl),
               requests=40)
      for name, isl, osl, t in (("1k/1k", 1024, 1024, 267.3), ("1k/8k", 1024, 8192, 204.1),
                                ("8k/1k", 8192, 1024, 474.3))),
)

BANDS = {"large EP": (0.5, 2.0)}
FIT_KIND = "dense 1-GPU"  # the cases the per-layer overhead is fitted on
# A variant of the model: Efficiency fields replaced on each case's GPU's own efficiencies
# (kvplan.perf.costmodel.device_efficiency), so an MI300X row keeps its ROCm fractions.
Tweak = dict[str, float | None]
NO_LAYER_OVERHEAD: Tweak = {"layer_overhead_s": 0.0}
# Every prefill at the graph floor: the model before the eager prefill floor (for comparison).
GRAPH_ONLY: Tweak = {"prefill_launch_s": 0.0}
# The CUDA presets' fractions on every GPU (what the AMD rows read before device efficiencies).
CUDA_FRACTIONS: Tweak = {"hbm": DEFAULT_EFFICIENCY.hbm,
                         "fp8_gemm_hbm": DEFAULT_EFFICIENCY.fp8_gemm_hbm,
                         "gemm": DEFAULT_EFFICIENCY.gemm, "fp8_gemm": None,
                         "attention": DEFAULT_EFFICIENCY.attention,
                         "kernel_floor_s": DEFAULT_EFFICIENCY.kernel_floor_s,
                         "moe_floor_s": None}
DEFAULT_BAND = (0.75, 1.33)


def all_cases() -> tuple[Case | PrefillCase | TtftCase, ...]:
    """Every row of the bench: decode, engine-timed prefill, serving TTFT (ids: their labels)."""
    return (*CASES, *PREFILL_CASES, *TTFT_CASES)


def measured_text(case: Case | PrefillCase | TtftCase) -> str:
    """The measured figure as the table prints it."""
    if isinstance(case, Case):
        return f"{case.measured_tpot_ms:.2f}"
    if isinstance(case, PrefillCase):
        return f"{case.measured_ms:.1f}"
    return f"{case.measured_ttft_ms:.1f}"


def band(kind: str) -> tuple[float, float]:
    return BANDS.get(kind, DEFAULT_BAND)


def _spec(model: str, fp8: bool, fp8_tensor: bool = False) -> ModelSpec:
    spec = load_spec(model)
    if fp8 or fp8_tensor:
        spec = replace(spec, quantization_json=json.dumps(FP8_BLOCK if fp8 else FP8_TENSOR))
    return spec


def case_spec(case: Case) -> ModelSpec:
    return _spec(case.model, case.fp8, case.fp8_tensor)


def case_efficiency(gpu: str, tweak: Tweak | None = None) -> Efficiency:
    """The efficiencies kvplan uses on `gpu` (its own, `device_efficiency`), with `tweak`."""
    return replace(device_efficiency(get_gpu(gpu)), **(tweak or {}))


def launch_path(eff: Efficiency, eager_prefill: bool) -> Efficiency:
    """The efficiencies of the run's engine (kvplan.perf.costmodel.engine_efficiency): SGLang
    launches prefill kernels one by one from Python, so each costs the launch time; vLLM,
    TensorRT-LLM and gpt-fast launch them from CUDA graphs or a compiled engine. SGLang also
    fuses all-reduce + RMSNorm where its defaults do (SGLANG_ALLREDUCE_NORM_FUSION)."""
    return engine_efficiency("sglang" if eager_prefill else "vllm", eff)


def state_dtypes(spec: ModelSpec, eager_prefill: bool) -> dict[str, str]:
    """The recurrent state's dtypes as the run's engine keeps them (kvplan.capacity.plan's
    STATE_DTYPES): SGLang (the eager-prefill engine here) a bfloat16 conv state and, by default,
    a float32 SSM state (kvplan.engines.sglang.pools.sglang_state_dtypes); vLLM's rule
    otherwise (no recurrent model runs on another engine here)."""
    if not eager_prefill or spec.recurrent is None:
        return {}
    conv, ssm = sglang_state_dtypes(spec, "auto")
    return {"conv_dtype": conv, "ssm_dtype": ssm}


def predicted_tpot_ms(case: Case, tweak: Tweak | None = None) -> float:
    spec, gpu, eff = case_spec(case), get_gpu(case.gpu), case_efficiency(case.gpu, tweak)
    context = case.input_len + case.output_len // 2
    state = state_dtypes(spec, case.eager_prefill)
    path = launch_path(eff, case.eager_prefill)  # the engine's (its fused all-reduce + norm)
    decode = predict(spec, gpu, CostInputs(context=context, batch=case.batch,
                                           layout=case.layout, efficiency=path, **state))
    if case.disaggregated or case.engine_timed:
        return decode.tpot_ms
    prefill = predict(spec, gpu, CostInputs(context=case.input_len, batch=1,
                                            layout=case.layout, efficiency=path,
                                            **state)).ttft_ms
    return serving_tpot_ms(decode.tpot_ms, prefill, concurrency=case.batch,
                           output_len=case.output_len, **_batching(case, spec, path))


def _batching(case: Case | TtftCase, spec: ModelSpec, path: Efficiency) -> dict:
    """How the engine's scheduler batches waiting prompts (kvplan.perf.costmodel.serving_tpot_ms):
    SGLang takes them into one eager step up to its default chunk and pays the launch time
    once per step; vLLM / TensorRT-LLM prefills launch nothing (the GPU time, linear in the
    prompts, is all they add)."""
    if not case.eager_prefill:
        return {"requests": case.requests}
    prompt = case.input_len if isinstance(case, Case) else case.prompt_len
    return {"prefill_launch_ms": prefill_launch_ms(spec, case.layout, path,
                                                   gpu=get_gpu(case.gpu), tokens=prompt),
            "prompt_len": prompt, "requests": case.requests,
            "chunk_tokens": sglang_chunked_prefill_tokens(get_gpu(case.gpu))}


def fitted_layer_overhead_s() -> float:
    """Median over the FIT_KIND cases of (measured - predicted without the overhead) / layers."""
    return median((c.measured_tpot_ms - predicted_tpot_ms(c, NO_LAYER_OVERHEAD)) * 1e-3
                  / case_spec(c).num_hidden_layers for c in CASES if c.kind == FIT_KIND)


def predicted_ttft_ms(case: TtftCase, tweak: Tweak | None = None) -> float:
    """One prompt's prefill, batched as the run's scheduler batches it (`serving_ttft_ms`)."""
    spec = _spec(case.model, case.fp8, case.fp8_tensor)
    path = launch_path(case_efficiency(case.gpu, tweak), case.eager_prefill)
    one = predict(spec, get_gpu(case.gpu), CostInputs(
        context=case.prompt_len, layout=case.layout, efficiency=path,
        **state_dtypes(spec, case.eager_prefill))).ttft_ms
    return serving_ttft_ms(one, concurrency=case.concurrency, output_len=case.output_len,
                           **_batching(case, spec, path))


def predicted_prefill_ms(case: PrefillCase, tweak: Tweak | None = None) -> float:
    """One extend step of `prompts` causal prompts of `prompt_len` tokens (one logit row each)."""
    spec = _spec(case.model, case.fp8)
    step = step_time(spec, get_gpu(case.gpu),
                     tokens=case.prompts * case.prompt_len, context=case.prompt_len,
                     requests=case.prompts, phase="prefill", layout=case.layout,
                     eff=launch_path(case_efficiency(case.gpu, tweak), case.eager_prefill),
                     logits=case.prompts, **state_dtypes(spec, case.eager_prefill))
    return step.seconds * 1e3


def _floor_that_fits(predict_ms: Callable[[Tweak], float], measured_ms: float) -> float:
    """The eager prefill launch time at which the prediction equals the measurement
    (bisection; the prediction grows with the floor)."""
    lo, hi = 0.0, 1e-3
    for _ in range(60):
        mid = (lo + hi) / 2
        if predict_ms({"prefill_launch_s": mid}) < measured_ms:
            lo = mid
        else:
            hi = mid
    return lo


def prefill_fit_floors_s() -> dict[str, float]:
    """Per fit case, the eager floor that makes it exact (engine-timed prefills, and the
    serving TTFTs marked fit)."""
    floors = {c.label: _floor_that_fits(lambda e, c=c: predicted_prefill_ms(c, e), c.measured_ms)
              for c in PREFILL_CASES if c.fit}
    floors.update({c.label: _floor_that_fits(lambda e, c=c: predicted_ttft_ms(c, e),
                                             c.measured_ttft_ms)
                   for c in TTFT_CASES if c.fit})
    return floors


def leave_one_out_ratios() -> dict[str, float]:
    """Each engine-timed fit case, measured / predicted with the launch time fitted on the
    other fit cases (median of their exact values): a held-out check inside the fit set."""
    floors = prefill_fit_floors_s()
    out = {}
    for case in PREFILL_CASES:
        if not case.fit:
            continue
        others = median(v for k, v in floors.items() if k != case.label)
        out[case.label] = case.measured_ms / predicted_prefill_ms(
            case, {"prefill_launch_s": others})
    return out


def fitted_prefill_launch_s() -> float:
    """Median over the fit cases of the launch time that makes each exact."""
    return median(prefill_fit_floors_s().values())


def implied_launch_us(predict_ms: Callable[[Tweak], float], measured_ms: float) -> float:
    """The launch time per op (us) at which an SGLang prefill row is exact."""
    return _floor_that_fits(predict_ms, measured_ms) * 1e6


def print_launch_table() -> None:
    """Per SGLang prefill row: the ops its model code launches and the launch time per op
    that makes the row exact. For client TTFTs it is an upper bound (the serving path's time
    is in the measurement), and 0 where the GPU time alone exceeds the measurement."""
    print("\n## Launch time per op implied by each SGLang prefill\n")
    print("Ops: `kvplan.perf.costmodel.eager_prefill_ops`, counted per architecture in SGLang's "
          "model code (kvplan/costmodel.py names the files). The launch time that makes each "
          "row exact; client TTFTs hold the serving path too, so theirs are upper bounds. "
          "Before the per-architecture counts, kvplan charged max(GPU time, launch time) per "
          "itemised kernel and these rows implied 105-147 us (DeepSeek, fit) against 64-91 us "
          "(Qwen3, held out).\n")
    print("| row | GPU | ops per step | implied us per op | role |")
    print("|---|---|---:|---:|---|")
    for c in PREFILL_CASES:
        if not c.eager_prefill or c.gpu.startswith("MI"):
            continue
        ops = eager_prefill_ops(_spec(c.model, c.fp8), c.layout)
        us = implied_launch_us(lambda e, c=c: predicted_prefill_ms(c, e), c.measured_ms)
        print(f"| {c.label} (engine-timed prefill) | {c.gpu} | {ops} | {us:.0f} | "
              f"{'fit' if c.fit else 'held out'} |")
    for c in TTFT_CASES:
        if not c.eager_prefill:
            continue
        spec = _spec(c.model, c.fp8, c.fp8_tensor)
        fused = fuses_allreduce_norm(spec, get_gpu(c.gpu), c.layout, c.prompt_len,
                                     launch_path(case_efficiency(c.gpu), True))
        ops = eager_prefill_ops(spec, c.layout, fused_norms=fused)
        us = implied_launch_us(lambda e, c=c: predicted_ttft_ms(c, e), c.measured_ttft_ms)
        print(f"| {c.label} (client TTFT, concurrency {c.concurrency}) | {c.gpu} | {ops} | "
              f"<= {us:.0f} | held out |")


def in_band(ratio: float, kind: str) -> bool:
    lo, hi = band(kind)
    return lo <= ratio <= hi


AnyCase = TypeVar("AnyCase", Case, PrefillCase, TtftCase)


def print_device_table() -> None:
    """The AMD Instinct rows under their own (ROCm) efficiencies, under the CUDA presets'
    fractions, and under those over PCIe 5 (what the bench charged before the xGMI preset)."""
    amd = {name: eff for name, eff in DEVICE_EFFICIENCY.items()
           if any(c.gpu == name for c in (*CASES, *PREFILL_CASES, *TTFT_CASES))}
    print("\n## AMD Instinct rows: ROCm efficiencies against the CUDA ones (held out)\n")
    print("kvplan.perf.costmodel.device_efficiency gives the AMD presets the fractions measured on "
          "ROCm kernels (kvplan/costmodel.py names each source; nothing here is fitted to "
          "these rows): " + "; ".join(
              f"{name} HBM {e.hbm:.2f}, FP8 GEMM weight streaming {e.fp8_gemm_hbm:.2f} (aiter "
              f"fused MoE), GEMM {e.gemm:.2f} bf16 / {e.fp8_gemm:.2f} FP8 (AMD max-achievable "
              f"FLOPs), fused-MoE floor {e.moe_floor_s * 1e6:.1f} us (aiter's tuned table), "
              f"attention {e.attention:.2f} and {e.kernel_floor_s * 1e6:.0f} us kernel floor "
              "(no ROCm measurement: the CUDA values)" for name, e in amd.items())
          + f"; collectives over {default_interconnect('MI300X').name} (RCCL bus bandwidth "
          f"{default_interconnect('MI300X').bytes_per_s / 1e9:.0f} GB/s, custom all-reduce "
          f"{default_interconnect('MI300X').latency_s * 1e6:.0f} us) where PCIe 5 was charged "
          "before. The last column is the bench before device efficiencies.\n")
    print("| row | GPU | measured / predicted | with the CUDA fractions | with the CUDA fractions "
          "over PCIe 5 (before) | in band |")
    print("|---|---|---:|---:|---:|---|")
    pcie = INTERCONNECTS["pcie5"]

    def over_pcie(case: AnyCase) -> AnyCase:
        return replace(case, layout=replace(case.layout, interconnect=pcie))

    groups = ((CASES, "measured_tpot_ms", predicted_tpot_ms, "TPOT", None),
              (PREFILL_CASES, "measured_ms", predicted_prefill_ms, "engine-timed prefill",
               "prefill"),
              (TTFT_CASES, "measured_ttft_ms", predicted_ttft_ms, "client TTFT", "ttft"))
    for cases, measured_field, predict_ms, what, band_kind in groups:
        for c in cases:
            if c.gpu not in amd:
                continue
            measured = getattr(c, measured_field)
            own = measured / predict_ms(c)
            cuda = measured / predict_ms(c, CUDA_FRACTIONS)
            pcie_cuda = measured / predict_ms(over_pcie(c), CUDA_FRACTIONS)
            band_ok = in_band(own, band_kind or c.kind)
            print(f"| {c.label} ({what}) | {c.gpu} | {own:.2f} | {cuda:.2f} | "
                  f"{pcie_cuda:.2f} | {'yes' if band_ok else 'no'} |")


def _model_key(case: Case | PrefillCase | TtftCase) -> str:
    """The checkpoint: the model and its weight format (a FP8 checkpoint is another model)."""
    return case.model + ("/fp8" if case.fp8 else "") + (
        "/fp8-tensor" if getattr(case, "fp8_tensor", False) else "")


def cost_split() -> honest.Split:
    """The honest split over every case (decode, prefill, TTFT alike: one configuration)."""
    return honest.split((honest.Row(id=c.label, model=_model_key(c), gpu=c.gpu, tp=c.layout.tp,
                                    ep=c.layout.ep, added_in=ADDED_IN[c.label])
                         for c in all_cases()), "cost")


def print_split(split: honest.Split, table: list[tuple[Case | PrefillCase | TtftCase, float, str]]
                ) -> None:
    """The section's held-out count (in band), less the shaped rows, and the prospective ones."""
    def count(ids: tuple[str, ...]) -> str:
        mine = [(ratio, kind) for c, ratio, kind in table if c.label in ids]
        return f"{sum(in_band(r, k) for r, k in mine)} of {len(mine)}"

    labels = {c.label for c, _, _ in table}
    fitted = sum(r in labels for r in split.fitted)
    same = sum(r in labels for r in split.same_config)
    print(f"{honest.HELD_OUT[0].upper()}{honest.HELD_OUT[1:]}: {count(split.held_out)} in band "
          f"({fitted} fitted, {same} of a fitted row's configuration); less the rows a rule was "
          f"later written for: {count(split.unshaped)}; "
          f"{honest.prospective_line(split, 'cases')}.\n")


def main() -> None:
    rows = [(c, predicted_tpot_ms(c)) for c in CASES]
    bare = {c.label: predicted_tpot_ms(c, NO_LAYER_OVERHEAD) for c in CASES}
    held = [(c, p) for c, p in rows if c.kind != FIT_KIND]
    hits = sum(in_band(c.measured_tpot_ms / p, c.kind) for c, p in rows)
    held_hits = sum(in_band(c.measured_tpot_ms / p, c.kind) for c, p in held)
    held_bare = sum(in_band(c.measured_tpot_ms / bare[c.label], c.kind) for c, _ in held)
    print("# Predicted vs measured decode and prefill time\n")
    graph = {c.label: predicted_tpot_ms(c, GRAPH_ONLY) for c in CASES}
    held_graph = sum(in_band(c.measured_tpot_ms / graph[c.label], c.kind) for c, _ in held)
    print("Generated by `python -m tests.benches.cost_bench > examples/cost-bench.md` from "
          "kvplan.perf.costmodel with its documented "
          "default efficiencies (HBM 0.90, FP8 GEMM weight streaming 0.69, GEMM 0.70, "
          "attention 0.60, 4 us floor per kernel: from published kernel measurements; the AMD "
          "Instinct presets' own from ROCm kernel measurements, table below) and two "
          "fitted constants: a per-layer overhead of "
          f"{DEFAULT_EFFICIENCY.layer_overhead_s * 1e6:.0f} us, fitted on the {FIT_KIND} "
          f"decode cases (the median per-layer residual is {fitted_layer_overhead_s() * 1e6:.1f}"
          " us), and SGLang's eager prefill launch time, "
          f"{DEFAULT_EFFICIENCY.prefill_launch_s * 1e6:.0f} us per launched op, fitted on the "
          "engine-timed prefills marked fit; every other case is outside the fit (held out "
          "below each section's header: also not of a fitted row's model, GPU, TP and EP). "
          "Decode at the mean context "
          "(input + output / 2); serving TPOT adds "
          "the prefills run inside decode steps (concurrency x prefill / output length), except "
          "on disaggregated decode nodes; SGLang's prefills (eager) add the launch time of "
          "each op its model code launches (`kvplan.perf.costmodel.eager_prefill_ops`) to their "
          "GPU time, vLLM's, TensorRT-LLM's and gpt-fast's (CUDA graphs or a compiled engine) "
          "run at the graph floor. Lengths drawn at random are the run's own means. "
          "Band: [0.75, 1.33], [0.5, 2] for large EP. Do not edit by hand.\n")
    split = cost_split()
    print(f"## Decode (TPOT): {hits} of {len(rows)} cases in band; outside the fit kind "
          f"{held_hits} of "
          f"{len(held)} ({held_bare} of {len(held)} without the layer overhead, {held_graph} of "
          f"{len(held)} with every prefill at the graph floor)\n")
    print_split(split, [(c, c.measured_tpot_ms / p, c.kind) for c, p in rows])
    print("| case | kind | GPU | in / out | measured ms | predicted ms | measured / predicted "
          "| without layer overhead | prefill at the graph floor | in band | source |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---|---|")
    for case, pred in rows:
        ratio = case.measured_tpot_ms / pred
        ok = "yes" if in_band(ratio, case.kind) else "no"
        note = f" ({case.note})" if case.note else ""
        print(f"| {case.label}{note} | {case.kind} | {case.gpu} | {case.input_len} / "
              f"{case.output_len} | {case.measured_tpot_ms:.2f} | {pred:.2f} | {ratio:.2f} | "
              f"{case.measured_tpot_ms / bare[case.label]:.2f} | "
              f"{case.measured_tpot_ms / graph[case.label]:.2f} | {ok} | {case.url} |")
    print()
    kinds = sorted({c.kind for c in CASES})
    print("| kind | role | cases | in band | median measured / predicted | range | in band "
          "without layer overhead |")
    print("|---|---|---:|---:|---:|---|---:|")
    for kind in kinds:
        ratios = [c.measured_tpot_ms / p for c, p in rows if c.kind == kind]
        inside = sum(in_band(r, kind) for r in ratios)
        inside_bare = sum(in_band(c.measured_tpot_ms / bare[c.label], kind)
                          for c in CASES if c.kind == kind)
        role = "fit" if kind == FIT_KIND else "held out"
        print(f"| {kind} | {role} | {len(ratios)} | {inside} | {median(ratios):.2f} | "
              f"{min(ratios):.2f}-{max(ratios):.2f} | {inside_bare} |")

    pre = [(c, predicted_prefill_ms(c)) for c in PREFILL_CASES]
    pre_hits = sum(in_band(c.measured_ms / p, "prefill") for c, p in pre)
    pre_held = [(c, p) for c, p in pre if not c.fit]
    floors = prefill_fit_floors_s()
    print(f"\n## Prefill timed by the engine: {pre_hits} of {len(pre)} cases in band; held out "
          f"{sum(in_band(c.measured_ms / p, 'prefill') for c, p in pre_held)} of "
          f"{len(pre_held)}\n")
    print_split(split, [(c, c.measured_ms / p, "prefill") for c, p in pre])
    print("Measured: one prefill (extend) step as the engine's own benchmark times it, without "
          "a serving path (SGLang `bench_one_batch`, the run after its warm-up). Predicted: "
          "that step (`kvplan.perf.costmodel.step_time`, phase prefill) for `prompts` prompts of "
          "`prompt` tokens. SGLang launches prefill ops eagerly from Python: the step adds "
          "the ops its model code launches x the eager prefill launch time, "
          f"{DEFAULT_EFFICIENCY.prefill_launch_s * 1e6:.0f}"
          " us, to its GPU time, fitted on the rows marked fit (the median of the launch time "
          "that makes each exact: "
          + ", ".join(f"{v * 1e6:.0f}" for v in sorted(floors.values()))
          + f" us, median {fitted_prefill_launch_s() * 1e6:.1f}). "
          "Every other prefill and TTFT row is held out.\n")
    print("| case | GPU | prompts x prompt | measured ms | predicted ms | measured / predicted "
          "| with the graph floor (4 us) | role | in band | source |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|---|")
    for case, pred in pre:
        ratio = case.measured_ms / pred
        graph = case.measured_ms / predicted_prefill_ms(replace(case, eager_prefill=False))
        ok = "yes" if in_band(ratio, "prefill") else "no"
        note = f" ({case.note})" if case.note else ""
        print(f"| {case.label}{note} | {case.gpu} | {case.prompts} x {case.prompt_len} | "
              f"{case.measured_ms:.1f} | {pred:.1f} | {ratio:.2f} | {graph:.2f} | "
              f"{'fit' if case.fit else 'held out'} | {ok} | {case.url} |")

    loo = leave_one_out_ratios()
    print(f"\nLeave one out: each fit row predicted with the launch time fitted on the other "
          f"{len(loo) - 1} reads " + ", ".join(f"{r:.2f}" for r in loo.values())
          + f" ({sum(in_band(r, 'prefill') for r in loo.values())} of {len(loo)} in band).")

    ttft = [(c, predicted_ttft_ms(c)) for c in TTFT_CASES]
    ttft_hits = sum(in_band(c.measured_ttft_ms / p, "ttft") for c, p in ttft)
    old_hits = sum(in_band(c.measured_ttft_ms / predicted_ttft_ms(c, GRAPH_ONLY), "ttft")
                   for c in TTFT_CASES)
    print(f"\n## Serving-path TTFT (client, held out): {ttft_hits} of {len(ttft)} cases in band "
          f"({old_hits} with every prefill at the graph floor)\n")
    print_split(split, [(c, c.measured_ttft_ms / p, "ttft") for c, p in ttft])
    print("Predicted: the prefill part of the run's mean TTFT "
          "(`kvplan.perf.costmodel.serving_ttft_ms`): the prefill of a prompt of the mean "
          "length, with SGLang's launch time for SGLang "
          "and at the graph floor for vLLM and TensorRT-LLM (NIM), batched as the scheduler "
          "batches it (the first wave of `concurrency` prompts in shared steps, a replacement "
          "with the prompts arriving with it). Measured: the "
          "client's mean TTFT at low concurrency through the HTTP serving path, which also holds "
          "tokenization, scheduling and streaming the first token and, at concurrency 4, the "
          "wait for a running decode step: these rows do not measure the prefill alone, and "
          "`measured - predicted` is what kvplan does not model.\n")
    print("| case | GPU | concurrency | prompt | measured ms | predicted ms | measured - "
          "predicted ms | measured / predicted | with the graph floor | in band | source |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for case, pred in ttft:
        ratio = case.measured_ttft_ms / pred
        ok = "yes" if in_band(ratio, "ttft") else "no"
        note = f" ({case.note})" if case.note else ""
        graph = case.measured_ttft_ms / predicted_ttft_ms(case, GRAPH_ONLY)
        print(f"| {case.label}{note} | {case.gpu} | {case.concurrency} | {case.prompt_len} | "
              f"{case.measured_ttft_ms:.1f} | {pred:.1f} | {case.measured_ttft_ms - pred:.1f} | "
              f"{ratio:.2f} | {graph:.2f} | {ok} | {case.url} |")
    shaped = honest.shaped_lines(split)
    if shaped:
        print("\nHeld-out rows a rule was written for after they were in the bench (so no blind "
              "test of it; tests/benches/fitted_rows.py SHAPED_BY):\n")
        print("\n".join(shaped))
    print_launch_table()
    print_device_table()
    print(NOTES)


NOTES = """
## Notes

The FP8 GEMM weight-streaming fraction (0.69) is the median of DeepGEMM's published decode-size
measurements (README, H800), not fitted to these cases. The kernel floor (4 us, NVIDIA's CUDA
Graphs post) applies per GEMM kernel, as the engines launch them (kvplan/costmodel.py): at TP 8
DeepSeek's projections are five kernels of 2-15 MB per rank, each under a floor, and a block-FP8
(w8a8) GEMM is two kernels, the activation quantization and the GEMM (SGLang
`apply_w8a8_block_fp8_linear`). Dense bf16 models are unchanged by these rules (their GEMMs
move more than a floor's worth of bytes). DeepSeek's attention projections are FP8 GEMMs:
kvplan judges a group's format on the whole model, so the q_a / kv_a projections that SGLang
replicates on every TP rank (1.75 x an even 1/8 share of the bytes) no longer read as bf16.
That moved DeepSeek-R1 TP8 decode at concurrency 4-64 from 0.79-0.94 to 0.75-0.85 (the
quantization kernels and the FP8 streaming fraction now apply to attention too) and the
Feb / Apr 2025 batch-1 decode timers from 2.22 / 1.82 to 1.97 / 1.61.

**Two fitted constants.** The layer overhead (35 us per layer per step) is fitted on the 8 dense
single-GPU decode cases; without it the held-out cases read 69 of 114 in band, with it 100 of
114 (25 / 34 of the first 44) (Qwen3-235B-A22B on 8x B200 at concurrency 1: 1.53-1.56 ->
1.02-1.04; Llama-3.1-70B TP8 at concurrency 1: 1.39-1.40 -> 1.15-1.16). With the serving rule
below its median residual is 35.9 us; the default stays 35 us (within the 1 us the drift test
allows). The eager prefill launch time (70 us per launched op) is fitted on the 4 engine-timed
SGLang prefills of DeepSeek-V3/R1 on 8x H200 (three sources, Feb / Apr / Dec 2025); left out one
at a time, each reads 0.83-1.15 with the other three's fit.
Every client TTFT, every Qwen3 / Llama prefill and every decode row is held out from it. Two
vLLM `benchmark_latency` runs of Llama-3-8B (vLLM's torch.compile guide, Dec 2024: one H100,
one L4) are held out under a kind of their own and read 1.08 / 1.06.

**Why prefill needed a launch time, and why per op.** SGLang's `bench_one_batch` times one
prefill step: DeepSeek-V3 on 8x H200 takes 196 ms for 128 tokens, 167-180 ms for 1,000 and
289 ms for 16 x 512, nearly flat in the prompt; at the 4 us graph floor kvplan predicts
34-43 ms for the short ones (3.9-5.7x too fast). SGLang captures CUDA graphs for decode batches
only (cuda_graph_runner.py; piecewise prefill graphs are opt-in), so a prefill's ops are
launched one by one from Python and a short prompt's step is the CPU's. kvplan counts the ops
SGLang's model code launches per layer (`eager_prefill_ops`: DeepSeek-V3 TP 8 FP8 2,107 per
step, Qwen3-235B TP 8 1,791, Llama-3.1-70B TP 8 965, Qwen3-8B 435) and adds ops x 70 us to the
GPU time. The previous rule, max(GPU time, 119 us) per itemised kernel, charged every model the
DeepSeek ratio of launched ops to itemised kernels; the implied launch time per op was 105-147
us on DeepSeek (fit) against 64-91 us on Qwen3 (held out). With the counted ops it is 59-77 us
on DeepSeek and at most 43-56 us on Qwen3-235B and 47 us on Qwen3-8B (client TTFTs, serving
path included): the gap narrowed from about 1.6x to about 1.3x but did not close (the table
above). What remains is the CPU time of an op itself, which differs by host CPU (the Qwen3 runs
are on B200 hosts and SGLang 0.5.3-0.5.6, the DeepSeek ones on H200 hosts, three of four on
early-2025 SGLang) and by op (a block-FP8 quantization wrapper is not a fused norm); kvplan
does not know the host, and `--prefill-launch-us` sets it. The release is not what separates
them on the evidence here: the one fit row from a 0.5.x-era SGLang (DeepSeek-V3.1, Dec 2025,
PR 14764) implies 74 us, inside the early-2025 rows' 59-77 us, so the launch time stays one
constant, not a table by release. A search of sgl-project/sglang PRs and issues for more
`bench_one_batch` "Prefill. latency" lines from 0.4.6 on found none that name the model, the
GPU and the TP together (https://github.com/sgl-project/sglang/pull/12160's "forward
cost-82.6406478881836 ms" for a 1-new-token DeepSeek-V3 prefill, Oct 2025, is a private timer
on an unnamed GPU), so none were added. The same term moves the
high-concurrency decode rows, whose serving TPOT holds the prefills run between decode steps:
Llama-3.1-70B TP8 at concurrency 16 / 100 reads 1.25 / 1.16 (1.35 / 1.53 at the graph floor),
Qwen3-235B 8k/1k at 64 0.91 (1.35), 1k/8k at 64 1.13 (1.22). SGLang (`--enable-mixed-chunk`
off by default) runs each prefill batch alone, stopping the decoding batch for its whole
duration, which is what `serving_tpot_ms` charges.

**Prefill batching in a serving run (no new constant).** The benchmarks here start
`concurrency` requests together and replace each finished one until `--num-prompts` were sent.
SGLang's scheduler takes every waiting prompt into one prefill step, up to its chunk
(scheduler.py `get_new_batch_prefill`, schedule_policy.py `PrefillAdder`; 8,192 tokens on
A100 / H100 / H200 and 16,384 on B200 by server_args.py's defaults), and launches that step's
ops once. `serving_tpot_ms` now prices that: while a request decodes, the other
`concurrency - 1` finish at 1 / output length per decode step (Poisson arrivals), each decode
step is followed by their GPU time and by E[steps] launches (1 - e^-m for m arrivals per
step, m = 0.2 at concurrency 100 over 504 tokens); only the `requests - concurrency`
replacements fall inside others' decodes, and the first wave (all prompts together, in
chunk-sized steps) stalls the first-wave requests. At concurrency 1 no other prefill runs
during a request's decode (the old rule charged one). Before -> after: Qwen3-235B 1k/1k at
concurrency 100 0.71 -> 0.85 (now in band), 1k/1k at 16 0.86 -> 0.92, 8k/1k at 16 / 64
0.86 / 0.84 -> 0.91 / 0.94, DeepSeek-R1 at concurrency 8-64 0.75-0.79 -> 0.77-0.81, while
Llama-3.1-70B TP8 at concurrency 16 moves out (1.29 -> 1.35) and at 100 1.08 -> 1.22: its
measured TPOT is above the decode step plus the prefills in both rules. On the 47 rows the
bench held before this change decode stays 39 of 47 in band (held out 31 of 39: one in, one
out). `serving_ttft_ms` prices the TTFT the same
way: DeepSeek-R1 at concurrency 4 (40 requests: InferenceX runs `--num-prompts $((CONC *
10))`) reads 1.31 / 1.00 / 1.32 (was 1.40 / 1.07 / 1.52): its first four prompts share one
step (1k) or four chunk-sized steps (8k); TTFT in band 6 -> 8 of 12. The rows whose run size
is not published (NIM's AIPerf runs, SGLang 0.4.1.post2) use the steady state alone.

**Held-out cases added with it** (SGLang cookbook pages, not used for any fit): Qwen3-Next-80B-A3B
bf16 TP8 on 8x B200 (SGLang 0.5.6, ShareGPT) read 1.25 at concurrency 1 and 1.74 at 100, its
TTFT 2.13; Kimi-K2 FP8 TP8 on 8x MI300X (SGLang 0.5.7 ROCm, random 1000/1000) reads 3.37 / 1.72
/ 0.90 at concurrency 1 / 16 / 100 and its TTFT 0.69.

**AMD Instinct efficiencies (no new constant, nothing fitted).** The AMD rows were charged
NVIDIA's kernel fractions (FlashMLA's HBM 0.90, DeepGEMM's 0.69 / 0.70) and, as the MI300X had no
scale-up preset, PCIe 5 (50 GB/s, 20 us) for every all-reduce. They now get the fractions measured
on ROCm kernels (`kvplan.perf.costmodel.device_efficiency`, the table above) and the xGMI mesh
(`kvplan.hardware.interconnect`, xgmi3: RCCL bus bandwidth 314 GB/s, 8 us custom all-reduce). \
Before ->
after: Kimi-K2 TP8 3.37 / 1.72 / 0.90 -> 2.98 / 2.03 / 1.10 at concurrency 1 / 16 / 100,
DeepSeek-V3 TP8 2.78 -> 2.87, Llama-3-8B decode 1.84 -> 1.71 (STREAM's 0.80) and prefill 1.67 ->
1.34 (AMD's max-achievable bf16 GEMM, 0.54 of the peak), Kimi-K2's TTFT 0.69 -> 0.82 (now in
band: TTFT 9 of 14). No NVIDIA row moved. By term: the xGMI link alone makes every TP8 row faster
(Kimi-K2 3.37 / 1.72 / 0.90 -> 3.86 / 1.93 / 1.04, DeepSeek-V3 2.78 -> 3.16); aiter's fused MoE
streams FP8 experts at 0.77 of the HBM peak, above DeepGEMM's 0.69 (concurrency 16 / 100: 1.93 /
1.04 -> 2.03 / 1.10); its least time per call, 67 us at 1-2 tokens, where the kernel floors gave
16 us, slows the small-batch steps (Kimi-K2 at concurrency 1 3.86 -> 2.98, DeepSeek-V3 at batch 4
3.23 -> 2.87). The published ROCm kernel numbers explain the prefill / TTFT rows; on the decode
rows they move some closer and some further, and what remains is not the kernels' bandwidth,
FLOPs or least times (below).

**Recurrent layers counted from SGLang's code (no new constant).** Qwen3-Next's 36 Gated
DeltaNet layers were charged five placeholder launched ops each, without their norms, and its
gated attention and gated shared expert were charged as Qwen3's. Read at SGLang 0.5.6 (the
rows' release; kvplan/costmodel.py `GatedDeltaNetOps`, `_output_gate_ops`,
`_shared_expert_gate_ops` quote the code), an eager extend step launches 30 ops per GDN mixer
at TP 8 (in_proj_qkvz and in_proj_ba, six reshape copies of the split q / k / v / z / b / a and
their cat, the conv and its input copy, the gating kernel, the state gather and scatter, 13 in
fla's chunk_gated_delta_rule, the gated norm, out_proj), 33 with the layer's norms and
all-reduce; its attention layers add the q / gate split copies, the sigmoid and the product
(14 per layer) and its MoE layers the shared expert's MLP, gate, sigmoid, product and add (16):
2,129 ops per step instead of 749. Decode now reads and writes each request's recurrent state
every step (conv state bf16, the 4 x 128 x 128 GDN state per rank in SGLang's default float32:
0.54 MB per request per layer) and charges the state update and the two GEMM kernels of the
mixer; the attention gate's four kernels are charged in decode too, the shared expert's gate is
not (it runs beside the routed experts on SGLang's second stream). Before -> after, all held
out: TTFT 2.13 -> 0.81 (now in band; it implies at most 56 us per op, as Qwen3-235B's 44-56 on
the same B200 hosts and release, against 161 before), decode at concurrency 1 1.25 -> 1.14, at
concurrency 100 1.74 -> 0.79 (now in band). No other row moves. Decode 42 of 52 in band, held
out 34 of 44; TTFT 9 of 14.

**TP all-reduce from measured custom all-reduce timings (no new constant).** Every NVLink
all-reduce was one ring formula with a preset 10 us (8 us on NVLink 5) that no measurement set.
vLLM and SGLang run decode-size all-reduces as their custom kernel (the same dispatch in both:
one-shot for 2 ranks, for <= 4 ranks under 512 KiB and <= 8 ranks under 256 KiB, else two-shot;
in SGLang NCCL above 8 MiB), and kvplan now charges that (kvplan/interconnect.py): one-shot
t1 + (n - 1) x bytes / bandwidth (each rank reads every peer's buffer), two-shot t2 + 2 (n - 1)
/ n x bytes / bandwidth. t1 and t2 are read from published CUDA-graph timings, after the bytes
term: on H100 5.7 / 13.1 us (the medians of vLLM PR 24111's ca_1stage / ca_2stage rows up to
1 MB at 2-6 ranks; no trend with the rank count), on B300 for NVLink 5 7.0 / 19.0 us (vLLM PR
37756, 16 KiB); no A100 timing in a graph was found, so NVLink 3 keeps 10 us (two-shot: two
rounds, 20 us). The bandwidths stay (360 GB/s on H100 is what NCCL's maintainer and nccl-tests
give, and what the one-shot slopes give). Before -> after: dense TP2 (NIM, H100) 0.85-0.89 ->
0.88-0.90; dense TP8 (Llama-3.1-70B, 8x A100) 1.16 / 1.35 / 1.22 at concurrency 1 / 16 / 100
(1000 in) -> 1.15 / 1.25 / 1.16 and 1.17 / 1.27 / 1.03 (8000 in, 1 / 16 / 64) -> 1.16 / 1.21
/ 1.00, now 6 of 6 in band: from batch 16 on (256 KiB per all-reduce, not under the 256 KiB
threshold) the engine's two-shot pays 21.9 us against the ring's 11.9 (at batch 15, 240 KiB, it
would be one-shot, 17.6 us), so the concurrency-16 row rides on that threshold; TP8 MoE on H200
(DeepSeek-R1, SGLang 0.5.7) 0.77-0.87 -> 0.77-0.89, the batch-1 engine timers (Feb / Apr 2025)
1.97 / 1.61 -> 2.07 / 1.69 (further out); Qwen3-235B on 8x B200 1.00-1.02 -> 1.02-1.04 at
concurrency 1, 1k/8k at 64 1.19 -> 1.08, 8k/1k at 64 0.94 -> 0.89, 1k/1k at 100 0.85 -> 0.80
(worse: two-shot at 800 KiB, 21 us against 10); Qwen3-Next at 100 1.74 -> 1.69; large EP
unchanged (its all-to-all keeps `latency_s`). Decode 42 of 52 in band, held out 34 of 44 (TP8
MoE without the layer overhead 12 -> 13 of 21); the prefill fit (59, 65, 74, 77 us, median
69.6) and the 1-GPU layer-overhead fit do not move. Not modelled: SGLang's FlashInfer fused
all-reduce + residual + RMSNorm, which recent releases turn on by default for DeepSeek-V3 and
Qwen3-MoE on SM 90 / SM 100 single-node TP (server_args.py, index file id 271536807; for
DeepSeek on SM 100 earlier, id 8356329): the bench's SGLang 0.5.6 / 0.5.7 MoE rows may run it,
with its own one-shot / two-shot switch and without the separate norm kernels kvplan charges.

**Held-out dense rows from three more sources (no new constant, the fit unchanged).**
AccelMark's committed results (an in-process engine, so no HTTP path): its "interactive"
scenario (one request at a time) and its "sustained" scenario (8 or 32 requests kept in flight
for 30 minutes; TPOT derived from the per-minute throughput) for vLLM 0.20.1 on an A100-80GB,
SGLang 0.5.6 on an A100-40GB and vLLM 0.19.1 on an RTX 5090, on Llama-3-8B (236-token ShareGPT
prompts), Llama-3.1-8B at 28,650-token prompts and Qwen2.5-0.5B; the LMSYS DGX Spark review
(SGLang FP8 on GB10, batch 1: Llama-3.1-8B 1.10, 70B 0.98); Tenstorrent's GPU reference run of
Qwen2.5-72B TP2 on 2x H100 under vLLM (1.02-1.03 from 128 to 8,192 tokens of context, flat as
measured). 18 of the 20 are in band: the A100 rows read 0.81-1.08 (the 28k-context rows 1.02 /
1.08, so the attention term holds at long context), the RTX 5090 8B rows 0.90-0.94. Held out,
decode is 51 of 64 in band (40 of 64 without the layer overhead). Two patterns, neither fixed:

- **Qwen2.5-0.5B on the A100s at batch 1, 0.83 (vLLM) / 0.81 (SGLang)**, and 0.82 for SGLang
  at concurrency 32 (vLLM's concurrency-32 row reads 1.08): an 896-wide model whose step is
  almost all kernel floors (24 layers x 11 kernels x 4 us = 1.06 of the 1.35 ms predicted
  without the layer overhead); its batch-1 residual over that is 16-20 us per layer, against
  29-43 us on the 8B fit rows. Part of what the fitted 35 us stands for grows with the layer
  (each GEMM's ramp-up and tail), which one constant per layer cannot follow; no published
  per-kernel time separates the two, so it stays one constant.
- **Qwen2.5-0.5B on the RTX 5090 host, 2.26 (batch 1) and 2.89 (concurrency 32)**: 5.1 ms per
  token where the A100 hosts take 1.8 ms, while the same runner's 8B rows on that GPU read
  0.90-0.94: a per-step floor of about 5 ms on that host (vLLM 0.19.1rc1.dev339 on a PyTorch
  2.12 nightly, Xeon Gold 6530), not a GPU term. kvplan does not model the host.

Left out: Gemma-4-31B TP2 on 2x H200 (SGLang cookbook; kvplan parses no gemma4 config), the
gpustack throughput pages (1,000 requests released at once: a queue, not a decode step), NIM's
Llama-3.1-8B table (the stored copy of the page lost its GPU / precision / length headings),
AccelMark's H100 / H200 / 8-GPU runs (vLLM 0.7.3, before 0.8), and blog tables whose own
numbers are impossible (a 70B FP8 model at 8 ms per token on one H100).

**More held-out MoE rows on NVIDIA GPUs (2025 H2-2026 engines, none used for a fit)**, from
three independent publishers: the SGLang cookbook (DeepSeek-R1-0528 FP8 and GLM-4.6 bf16 on 8x
B200, SGLang 0.5.6.post1; gpt-oss-120b on 8x B200, 0.5.6; Qwen3-Coder-Next bf16 TP 2 on 2x B200,
0.5.8; MiniMax-M2.5 FP8 `--tp 8 --ep 8` on 8x B200, 0.5.8, and 8x H100, 0.5.9), SemiAnalysis
InferenceX issue 828 (gpt-oss-120b, vLLM 0.15.1 with Marlin MXFP4, TP 2 / 4 / 8 on H100) and
Vultr's HGX B200 cookbook (MiniMax-M2.5 FP8 TP 4, vLLM 0.12.0): 50 decode rows and 13
concurrency-1 TTFTs. When added (the moe25 merge) 39 of the 50 and 8 of the 13 were in band;
with the later rules (recurrent layers, custom all-reduce, device efficiencies) 44 of 50 and 10
of 13; with the GLM rule 47 of 50. By group, as now generated: DeepSeek-R1 on B200 0.78-0.95 (9
of 9); gpt-oss-120b under vLLM on H100 0.96-1.02 (9 of 9, TP 2, 4 and 8); MiniMax-M2.5 0.99-1.27
on B200 (SGLang and vLLM, 9 of 9) and 0.92 / 0.93 / 0.70 on H100 at concurrency 1 / 16 / 100;
GLM-4.6 1.02-1.17 (9 of 9, since the GLM rule below; 1.05-1.45, 6 of 9, before it); Qwen3-Coder-
Next TP 2 0.98-1.22 (9 of 9); gpt-oss-120b under SGLang on B200 0.61 / 0.59 (0 of 2). TTFT:
GLM-4.6 1.03-1.07 (0.97-1.02 before the GLM rule), MiniMax-M2.5 0.97-1.07, DeepSeek-R1 on B200
0.72-0.88, gpt-oss-120b 0.69, Qwen3-Coder-Next 0.58-0.98. Decode 108 of 122 in band, held out
100 of 114 (TP8 MoE 51 of 57, TP4 MoE 4 of 4, TP2 MoE 10 of 10); TTFT 19 of 27.

**Audit of the 70 rows added in issue #17 (and their 13 TTFTs) against their sources.** Every
measured value, statistic, length, request count, concurrency, GPU, TP / EP layout, dtype,
engine release and speculative setting was re-read: the SGLang cookbook pages at sgl-cookbook
7b5bd9c (38 rows, 13 TTFTs), the AccelMark result.json files and suite.json / loadgen.py at
5797fc4 (15 rows; the sustained TPOTs recomputed), the LMSYS DGX Spark post (2), Tenstorrent's
issue 143 table (3), InferenceX issue 828 with its sweep workflow and harness (9) and Vultr's
concurrency-tuning and methodology pages (3). Two errors fixed: gpt-oss-120b on H100
(InferenceX 828) ran at `--random-range-ratio 0.8`, so its mean lengths are 922 / 922 and 922
/ 7,372, not 1024 / 1024 and 1024 / 8192 (ratios 0.96-1.03 -> 0.96-1.02, all 9 in band before
and after); AccelMark's sustained sums took the last warm-up minute, which the result's
is_warmup flag leaves unflagged (RTX 5090 suite F 7.99 -> 7.50 ms, 3.07 -> 2.89, still out of
band; the other five within 0.5 %, A100-40GB suite F 0.83 -> 0.82). Flagged, not pinned by
the source: the lengths of the LMSYS rows (assumed 2048 / 128) and the tool that timed them;
the form factor (SXM taken; an H100 NVL is not excluded) and vLLM release of Tenstorrent's 2x
H100 rows; whether InferenceX 828's "TPOT (ms)" is the mean or the median; AccelMark's
sustained rows repeat their prompts with the prefix cache on (their prefills mostly cache hits,
charged in full). The older InferenceX rows (issue 870, DeepSeek-R1 on H200) ran the same
harness at ratio 0.8 and now use its mean lengths too (922 / 7,372): decode unchanged in band
(0.76-0.90), the 8k/1k TTFT 1.32 -> 1.40 (out of band).

One rule came with them, read from the engines' model code and not fitted: MiniMax-M2 normalises
q and k with one RMSNorm weight over all heads (config "qk_norm_type": "per_layer"), so under
attention TP the sum of squares is all-reduced between two kernels (SGLang models/minimax_m2.py
MiniMaxM2QKRMSNorm._forward_naive: two `.contiguous()` copies, `rms_sumsq_serial`,
`attn_tp_all_reduce`, `rms_apply_serial`; vLLM's MiniMaxText01RMSNormTP all-reduces the variance
too). kvplan now charges those 4 kernels and the all-reduce per layer (decode) and the same ops
in an eager prefill. It moved the MiniMax rows from 7 of 12 in band to 11 of 12 (B200
1.22-1.46 -> 1.03-1.24, vLLM TP 4 1.31-1.49 -> 1.16-1.24) and the H100 rows down (1.02 / 1.02 /
0.80 -> 0.84 / 0.89 / 0.70: the concurrency-100 row left the band); its TTFTs 1.17-1.29 ->
0.97-1.07. SGLang's `--ep 8` without `--moe-a2a-backend` (default `none`) "Uses All-Reduce or
All-Gather for token dispatch" (docs/advanced_features/expert_parallelism.md), which is the TP
layout's all-reduce, not the all-to-all kvplan charges for `ep`: those rows run as TP 8.

**SGLang's fused all-reduce + residual + RMSNorm (read from SGLang 0.5.6, not fitted).** For
DeepseekV3ForCausalLM (also Kimi-K2's config) on SM 10.x and GptOssForCausalLM on Blackwell,
single node without DP attention, SGLang 0.5.6 turns on `enable_flashinfer_allreduce_fusion`
(server_args.py; no other architecture does in that release), and its LayerCommunicator then
runs each TP all-reduce of a step of at most 2,048 tokens as one FlashInfer kernel with the
residual add and the RMSNorm after it (the post-attention norm; the MLP output's all-reduce is
deferred into the next layer's input norm). kvplan now drops the norm's kernel floor (decode)
or eager op (prefill) after each fused all-reduce, 2 x layers - 1 per step, for those
architectures on the B200 / B300 presets up to TP 8 (`AllReduceNormFusion`, SGLang's engine
efficiency); the all-reduce keeps its time. SGLang PR 7621 measured the fused kernel on B200 at
8.7 us against 13.5 us for the all-reduce and the norm. Rows that moved, all held out: gpt-oss-
120b on B200 0.61 / 0.59 -> 0.66 / 0.65 (still out), its TTFT 0.69 -> 0.77 (into the band);
DeepSeek-R1 on B200 (0.5.6.post1) 0.78-0.95 -> 0.80-0.98 (9 of 9 before and after), TTFT
0.88 / 0.72 -> 0.93 / 0.76 at 1000 in (into the band), 8000 in unchanged (over 2,048 tokens). No
row left the band; the layer-overhead and prefill-launch fits (1-GPU and H200 rows) do not move.
Decode 105 of 122 in band either way; TTFT 20 -> 22 of 27. Not modelled: the two DeepSeek-V3.1
rows on 8x H200 run with `--enable-flashinfer-allreduce-fusion` set by hand (SM 90 takes it
too; one is a prefill-fit row), later releases that turn it on for more architectures (0.5.9,
server_args.py: DeepseekV3, GptOss, Glm4Moe, Glm4MoeLite, Qwen3Moe, KimiK25 on SM 90 or SM 100,
`moe_a2a_backend == "none"`; not MiniMaxM2, so it does not explain the MiniMax-M2.5 H100 row's
0.70 under 0.5.9), vLLM's
fuse_allreduce_rms pass, and the RoPE kernel's KV-cache write (models/utils.py
enable_fused_set_kv_buffer for gpt_oss and qwen3_moe on CUDA with a bf16 cache: one floor per
layer less, which would also move every Qwen3-MoE SGLang row).

Why the new misses miss:

- **gpt-oss-120b under SGLang on 8x B200: 0.66 / 0.65** (0.61 / 0.59 before the fused
  all-reduce + RMSNorm rule below; 2.31 ms for 36 layers, 64 us per layer, against kvplan's 98:
  35 us layer overhead, seven 4-us small-kernel floors, four GEMM floors and the attention's, two
  7-us all-reduces). The cookbook's runs are plain `--tp 8` servers (no speculative decoding,
  no backend flags; bench_serving's default ShareGPT). What SGLang 0.5.6 launches per decode
  layer there (models/gpt_oss.py, server_args.py, layers/quantization/mxfp4.py): the fused
  all-reduce + residual + input RMSNorm; qkv_proj; RoPE, which also writes K and V into the
  cache (models/utils.py enable_fused_set_kv_buffer: CUDA and a bf16 cache); trtllm_mha
  attention with sinks; o_proj; the fused all-reduce + post-attention RMSNorm; the router GEMM;
  FlashInfer's mxfp8_quantize of the activations and trtllm_fp4_block_scale_moe (the
  flashinfer_mxfp4 runner SGLang picks on Blackwell for mxfp4 checkpoints; top-k is BYPASSED
  into it, routing and the final reduction run inside). kvplan still charges a separate KV
  write, residual add, top-k, permute and unpermute (about one floor more than that list, with
  the MoE kernel's internals unread), and the 35 us fitted on 1-GPU rows: without the layer
  overhead the rows read 1.02 / 0.71. The same model under vLLM on H100 reads 0.89-1.06, so the
  rest of the miss is the B200 + SGLang path's per-layer fixed time, not the model's bytes. Not
  refitted.
- **GLM-4.6 on 8x B200 at concurrency 1: 1.15-1.17, was 1.43-1.45** (14.8-15.0 ms, 161 us per
  layer), while Qwen3-235B-A22B on the same GPUs and a near release (0.5.6; both `--tp 8` alone,
  bf16, default backends) reads 1.02-1.04 (10.1-10.3 ms, 108 us per layer). kvplan predicted both
  alike (113 / 105 us per layer). A second rule read from the engine's code, not fitted, explains
  most of it. SGLang 0.5.6 (pip wheel) routes GLM-4.5 / 4.6 with a biased grouped top-k over 160
  experts in one group, which `moe_fused_gate` does not serve (at most 32 experts per group, a
  power of two: layers/moe/topk.py biased_grouped_topk_gpu), so it runs the torch.compile'd
  `biased_grouped_topk_impl`: three aten topk calls (five CUDA kernels: gatherTopK, and
  sortKeyValueInplace when sorted) and about five Inductor kernels, ~10 kernels where Qwen3-MoE's
  topk_softmax is one (`kvplan.perf.costmodel.topk_kernels`; the Inductor count is read from its
  generated code for the function on the CPU backend, no GPU being at hand: an estimate, not a
  profile; SGLang's own profile of the same PyTorch path for DeepSeek-V3 on H200 read "Only one
  kernel now. 36us->8us." when moe_fused_gate replaced it,
  https://github.com/sgl-project/sglang/pull/5371, against 10 x 4 us here). And on CUDA without
  EP it folds GLM's one shared expert into fused_moe as a 161st expert every token picks
  (models/glm4_moe.py determine_num_fused_shared_experts; off only with
  --disable-shared-experts-fusion, which server_args.py sets for the flashinfer_trtllm runner
  alone), so the shared MLP launches no GEMMs of its own (`fused_shared_expert`). Decode per MoE
  layer: Qwen3-MoE top-k 1 kernel, GLM 10; shared expert Qwen3 none, GLM 0 (kvplan had charged 2
  GEMM floors). Both models: qkv_proj, q/k RMSNorm on two streams after the reshape copies, RoPE,
  attention, o_proj, the all-reduces, the same fused_moe (Triton runner for bf16 on SM100).
  Not counted: Qwen3-MoE writes the KV cache inside its RoPE kernel (enable_fused_set_kv_buffer
  with a bf16 cache), GLM in a separate index copy (one more kernel for GLM on the critical path;
  kvplan charges both one), and GLM's QKV bias at one row, where PyTorch's addmm skips the
  cuBLASLt bias epilogue (`mat1_sizes[0] > 1`, aten/src/ATen/native/cuda/Blas.cpp, index file id
  4587928413) and copies the bias first (one more kernel at concurrency 1). Net +7 kernels, +28
  us per MoE layer: predicted 12.87 ms (140 us per layer), 1.15-1.17; at concurrency 16-100 the
  rows went 1.05-1.30 -> 1.02-1.17. The dense fit rows have no such layers, so neither fitted
  constant moves. The same rules apply to the eager prefill: no shared-expert ops (-4 per MoE
  layer); the compiled top-k is one call from the model code, counted as one op; and GLM's
  q_norm / k_norm, which Glm4MoeAttention runs when the config's use_qk_norm is true (GLM-4.5 /
  4.6; not GLM-4.5-Air), were not counted before (+2 per layer; decode lumps them with RoPE for
  every model): 1,910 -> 1,738 ops, GLM's TTFTs 0.97-1.02 -> 1.03-1.07 (1.13-1.16 with the
  shared-expert rule alone).
- **Qwen3-Coder-Next TP 2 (the Qwen3-Next architecture): in band since the recurrent-layer
  rule** (1.23-1.59, 5 of 9, when added with the five placeholder ops per Gated DeltaNet layer;
  1.00-1.22, 9 of 9, with the ops counted from SGLang 0.5.6's qwen3_next.py and every request's
  recurrent state read and written per decode step). Its TTFTs read 0.98 / 0.58 / 0.82 (1000 /
  1000, 1000 / 8000, 8000 / 1000; 1.40-2.37 before): the 1000 / 8000 run's 0.58 against the
  same prompts' 0.98 in the 1000 / 1000 run (95.5 against 161.7 ms measured) is the run-to-run
  spread of a client TTFT, as DeepSeek-R1's below.
- **MiniMax-M2.5 on 8x H100 at concurrency 100: 0.70** (SGLang 0.5.9): the H100 run is faster
  than the B200 run of 0.5.8 at concurrency 1 (8.05 against 9.89 ms), which no GPU-side term can
  produce; the releases differ.
- **DeepSeek-R1 TTFT on 8x B200, 1000 in / 8000 out: 0.76** (0.72 before the fused all-reduce
  + RMSNorm rule): the same prompts read 0.93 in the 1000/1000 run of the same page (153 against
  126 ms measured): run-to-run spread of the serving path, inside what the launch-time fit can
  say.

Why the remaining misses miss, as far as the public numbers show:

- **Qwen3-235B's concurrency-1 TTFT at 610 tokens, 0.67**: the launch time fitted on
  DeepSeek still overstates Qwen3-MoE's on those hosts (above: at most 43-56 us per op), and
  Kimi-K2's on an MI300X host under SGLang 0.5.7 (0.82: at most 53 us per op). All three
  newer-SGLang rows sit below the early-2025-weighted fit; not refitted here (one release
  family, client TTFTs with the serving path inside).
- **Qwen3-Next-80B-A3B at concurrency 100: 0.79, TTFT 0.81** (in band, predicted slower than
  measured): the same over-statement of the launch time per op on the B200 hosts; its prefill
  term holds 2,129 ops x 70 us per step, and at the 56 us its TTFT implies they would read
  0.94 / 1.01 (not refitted: one held-out row would set it). Its concurrency-1 decode reads
  1.14: SGLang 0.5.6 turns the overlap scheduler off for Qwen3-Next while the radix cache is
  on (server_args.py: "Disabling overlap schedule since MambaRadixCache is not compatible"),
  so each decode step's CPU scheduling is not hidden, which kvplan does not model
  (`step_overhead_s` is 0).
- **Kimi-K2 on 8x MI300X (ROCm SGLang 0.5.7) at concurrency 1 / 16: 2.98 / 2.03**, like
  DeepSeek-V3 on the same GPUs (2.87). The measured step barely grows with the batch (40.4 ms
  at concurrency 1, 46.9 at 16): a fixed ~40 ms per step, ~660 us per layer, against 13.6 ms
  predicted. aiter's own tuned-kernel tables (ROCm/aiter at e4048607,
  aiter/configs/model_configs, gfx942, 304 CUs) do not hold the rest: its fused MoE's least
  time (67 us) is now charged; its dense block-FP8 GEMMs at DeepSeek-V3's TP-8 decode shapes
  take 3.9-31 us (a8w8_blockscale_tuned_gemm_ds_v3.csv; 10-31 us at K = 7168) where kvplan
  charges two 4 us floors (quantization + GEMM), under ~1 ms per step more. That leaves
  ~26 ms per step (~430 us per layer) that no published ROCm kernel time explains; the run's
  trace is not public (the one MI300X DeepSeek-R1 breakdown found, SemiAnalysisAI/InferenceX
  issue 863, is an estimate made while its MI300X runners were down), so it is not modelled.
  The concurrency-100 row (1.10) is in band through the prefill term.
- **Llama-3.1-70B TP8 on 8x A100 (in band since the all-reduce rule, 1.15-1.25 at 1000 in)**:
  the decode step at concurrency 1 still reads 1.15 on this host; its collectives use the
  unmeasured 10 us (no A100 timing in a CUDA graph was found), and the page does not say
  whether the GPUs are SXM (NVSwitch) or PCIe.
- **Llama-3-8B on MI300X (ROCm SGLang, Oct 2024), 32 x 256 prefill: 1.34** (1.67 with the CUDA
  GEMM fraction): GPU-bound (8,192 tokens); AMD's max-achievable bf16 GEMM (708 of 1,307 TFLOPS,
  the clock falling to 1.2 GHz under dense load) brings it to the band's edge; that ROCm 6.2
  nightly stack's GEMMs reached about 0.39 of the peak where hipBLASLt's best is 0.54. Its
  decode at batch 32 (1.71) is bandwidth-bound, well below STREAM's 0.80.
- **Qwen3-8B TTFT, vLLM 0.11 at concurrency 1: 8.02**: vLLM runs a 233-token prefill in its
  piecewise CUDA graphs (7.4 ms predicted); the other 52 ms are the serving path (chat template,
  tokenization, scheduling, detokenizing and streaming the first token). **SGLang 0.5.3 at
  concurrency 4: 0.71**, the same over-statement as Qwen3-235B's. **NIM (TensorRT-LLM) 500
  tokens: 1.38**, 13 ms of serving path. No engine publishes both a client TTFT and its own
  prefill timer for one model and GPU here, so the serving path is not modelled as a term:
  one vLLM row (52 ms) and two NIM rows (12 / 89 ms) cannot fit a constant and check it.
- **SGLang's own decode timer, DeepSeek-V3/R1 at batch 1 on 8x H200, Feb / Apr 2025: 2.07 /
  1.69** (21.0 / 17.2 ms per step against 10.2 predicted), while the same timer in Dec 2025
  (DeepSeek-V3.1, batch 16) reads 0.83 and the Dec-2025 serving runs at concurrency 8-64
  0.77-0.81: the early-2025 engine's batch-1 step was slower than its kernels' bytes and floors
  (the Apr-2025 PR itself profiles several-microsecond quant and bmm kernels per layer). kvplan
  models today's kernels. The ROCm rows (DeepSeek-V3 TP8 on MI300X, Feb 2025: 2.87; Llama-3-8B
  on one MI300X, Oct 2024: 1.71) are held out under their own kinds: of the MI300X rows only
  Kimi-K2's concurrency-100 TPOT and its TTFT are in band.
- **DeepSeek-R1 1k/1k at concurrency 4 (runner h200-nv_0)**: the same issue measures 12.8 ms
  at concurrency 8 on another runner; 22.7 ms at half the load is that runner, not the model.
- **SGLang 0.4.1.post2 (Dec 2024), 0.89-3.25**: the release notes say "Using CUDA Graph and
  FP8 GEMM Tuning", so CUDA graphs were on and launch overhead does not explain a batch-1 step
  of 33 ms. That engine ran DeepSeek's MoE on Triton fused_moe with block-FP8 Triton GEMMs,
  before FlashMLA, DeepGEMM and the rewritten `moe_align_block_size`
  (https://github.com/sgl-project/sglang/pull/2735, Jan 2025;
  https://github.com/vllm-project/vllm/pull/12036 says the kernel was not yet CUDA-graph
  capturable there). No per-kernel time of those kernels was published, so kvplan does not
  model them. Its batch-32 row enters the band through the prefill term (32 eager 128-token
  prefills over 256 output tokens), not through a better decode step.

The GB200 large-EP run (EP 48) sits in one NVL72 NVLink domain: its all-to-all runs over NVLink
5, not InfiniBand (kvplan.hardware.interconnect.scale_up_gpus). Charged at InfiniBand it \
would read 0.40;
over NVLink it reads 1.68, inside the large-EP band but slower than predicted: its
single-batch overlap is not modelled, and 768 requests per GPU at 2,050 tokens make it the most
attention-heavy case here. NVIDIA NIM's Llama-3.3-70B fp8 TP2 (0.88-0.90) runs per-tensor FP8
GEMMs, charged DeepGEMM's block-scaled weight-streaming fraction (0.69); at 0.90 they read
0.95-1.07, but no published per-tensor FP8 GEMM bandwidth was found, so the default stays.

Not modelled: two-batch overlap of communication with compute, the serving path of a request
(HTTP, tokenization, scheduling, streaming), chunked prefill of prompts longer than the chunk
(no prompt here is longer than 8,192 tokens), vLLM's mixing of prefill chunks into decode
steps (its prefills are charged as steps of their own), finishes clumped in time when output
lengths barely vary (InferenceX's `--random-range-ratio 0.8`: the arrivals are taken as
Poisson), load imbalance between experts or ranks, the host CPU's speed (the launch time per
op is one constant).
"""


if __name__ == "__main__":
    main()
