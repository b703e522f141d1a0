"""The cost bench's cases: public decode, engine-timed prefill and serving TTFT timings, each
with its URL (tests/benches/cost_bench.py predicts and prints them)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kvplan.analysis.simulate.range_ratio import client_lengths
from kvplan.engines.base import Engine
from kvplan.perf.layout import Layout

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
    # `python -m sglang.bench_serving --dataset-name random` at its default range ratio (0.0) and
    # seed (1): (--random-input-len, --random-output-len). The simulator replays the lengths that
    # run drew (tests.benches.simulate_bench.bench_serving_random), not the mean lengths.
    bench_random: tuple[int, int] | None = None
    # The MXFP4 MoE kernel the run's launch script picked (kvplan's --mxfp4-backend, as vLLM's
    # VLLM_MXFP4_USE_MARLIN=1 picks it: kvplan.engines.vllm.mxfp4_backend); None: the newest
    # release's default on the GPU (Triton on Hopper).
    mxfp4_backend: str | None = None
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
                requests=n, bench_random=(isl, 1000))


def _cookbook_run(label: str, kind: str, model: str, gpu: str, layout: Layout, page: str,
                  c: int, n: int, tin: int, tout: int, tpot: float, **extra) -> Case:
    """One bench_serving row of an SGLang cookbook page (docs/autoregressive/`page`): mean TPOT
    `tpot` at max concurrency `c` over `n` requests of `tin` / `tout` total input / output
    tokens (the run's own mean lengths); SGLang prefills eagerly. A label naming "1k/1k",
    "1k/8k" or "8k/1k" is the page's bench_serving random 1000/1000, 1000/8000 or 8000/1000
    run (`Case.bench_random`)."""
    nominal = re.search(r", (\d)k/(\d)k,", label)
    lengths = None if nominal is None else (int(nominal[1]) * 1000, int(nominal[2]) * 1000)
    return Case(label=label, kind=kind, model=model, gpu=gpu, layout=layout, batch=c,
                input_len=round(tin / n), output_len=round(tout / n), measured_tpot_ms=tpot,
                url=COOKBOOK + page, eager_prefill=True, requests=n, bench_random=lengths,
                **extra)


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
    utils/bench_serving/benchmark_serving.py at InferenceX commit 1c5c8b45c): the bounds of
    kvplan.analysis.simulate.range_ratio's vllm-legacy convention, the same [int(L R), L]."""
    low, high = client_lengths("vllm-legacy", range_ratio).input_bounds(length)
    return round((low + high) / 2)


def _eager(engine: str) -> bool:
    """Whether `engine` ("SGLang 0.5.6", "vLLM 0.20.1") launches prefill ops eagerly
    (kvplan.engines.base.CostTraits.eager_prefill)."""
    eager = {e.value for e in Engine if e.rules.cost_traits.eager_prefill}
    return engine.split()[0].lower() in eager


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
    # (DGX Cloud: the analysis comment, "Model: gpt-oss-120b FP4 on H100 DGXC"; the
    # workflow's runs-on: h100), TP 2 / 4 / 8, the "1K/1K" and "1K/8K" tables, column
    # "TPOT (ms)"
    # (the statistic is not named there; InferenceX's utils/summarize.py prints its "TPOT (ms)"
    # column from median_tpot, so it may be the median, which at fixed-ish lengths under
    # --ignore-eos sits near the mean). Lengths: the sweep's workflow (branch
    # claude/issue-828-20260301-0603, .github/workflows/experimental-gptoss-power-sweep.yml)
    # sets RANDOM_RANGE_RATIO: "0.8", and InferenceX's utils/bench_serving/benchmark_serving.py
    # draws each length as `np.random.randint(int(seq_len * range_ratio), seq_len + 1)`: means
    # of 922 (1024) and 7,372 (8192) tokens (_inferencex_mean_len). Audit (issue #17): these rows
    # used 1024 / 1024 and 1024 / 8192 before. Kernel (harness fidelity fix, task gptossgraph62):
    # the script's `export VLLM_MXFP4_USE_MARLIN=1` (gptoss_fp4_h100.sh:28 at 1c5c8b45c; set
    # from the 2026-01-02 update through the v0.18.0 one) is `mxfp4_backend="marlin"` here;
    # before, the rows carried no option and were priced at Triton's default (weights and exact
    # FLOPs only, kvplan.engines.vllm.moe_kernel).
    *(Case(label=f"gpt-oss-120b TP{tp}, vLLM 0.15.1, {name}, conc. {c}",
           kind=f"TP{tp} MoE", model="gpt-oss-120b", gpu="H100-80GB", layout=Layout(tp=tp),
           batch=c, input_len=_inferencex_mean_len(1024), output_len=_inferencex_mean_len(osl),
           measured_tpot_ms=t,
           url="https://github.com/SemiAnalysisAI/InferenceX/issues/828", requests=10 * c,
           mxfp4_backend="marlin")
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
           url=KIMI_K2_COOKBOOK, eager_prefill=True, requests=n, bench_random=(1000, 1000))
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
