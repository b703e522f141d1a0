"""Predicted vs measured decode and prefill time on public serving numbers (kvplan.perf).

Run:  python -m tests.benches.cost_bench > examples/cost-bench.md

Every measurement is quoted with its URL (or, where the index knows no URL, its index file id).
kvplan predicts with its documented defaults (kvplan.perf.efficiency.Efficiency). One of them, the
per-layer overhead, is fitted here: the median per-layer residual of the dense single-GPU cases
(`fitted_layer_overhead_s`); every other case is outside that fit (the held-out split below
each section's header also leaves out a fitted row's configuration), and a test keeps the
default equal to this fit. Serving TPOT adds the prefills that chunked prefill runs inside decode
steps (`serving_tpot_ms`); disaggregated decode nodes run none. Where a benchmark drew random
lengths (SGLang's `--random-range-ratio`, ShareGPT) the lengths used are the run's own means
(total input or output tokens / requests).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from dataclasses import replace
from functools import cache
from statistics import median
from typing import TypeVar

from kvplan import load_spec
from kvplan.engines.base import Engine, PlanInputs, gpu_inputs
from kvplan.engines.decode_graphs import NO_DECODE_GRAPHS, DecodeGraphs
from kvplan.engines.sglang.pools import sglang_state_dtypes
from kvplan.engines.vllm.options import VllmOptions
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import INTERCONNECTS, default_interconnect
from kvplan.model.spec import ModelSpec
from kvplan.perf.costmodel import CostInputs, predict
from kvplan.perf.efficiency import (
    DEFAULT_EFFICIENCY,
    DEVICE_EFFICIENCY,
    Efficiency,
    device_efficiency,
)
from kvplan.perf.engine_traits import engine_efficiency, fuses_allreduce_norm
from kvplan.perf.layout import Layout
from kvplan.perf.op_counts import eager_prefill_ops
from kvplan.perf.roofline import step_time
from kvplan.perf.serving import (
    prefill_launch_ms,
    serving_tpot_ms,
    serving_ttft_ms,
    sglang_chunked_prefill_tokens,
)
from tests.benches import honest
from tests.benches.cost_cases import (
    A100_NOTE,
    CASES,
    DATACRUNCH_R1,
    FP8_BLOCK,
    FP8_TENSOR,
    GLM_45_CONFIG,
    INFERENCEX,
    KIMI_K2_COOKBOOK,
    LLAMA_70B_A100,
    MI300X_NOTES,
    NIM_LLAMA_70B,
    QWEN3_8B,
    QWEN3_235B_B200,
    QWEN3_NEXT_COOKBOOK,
    SERVING_FIT,
    SGLANG_5432,
    SGLANG_14764,
    Case,
    PrefillCase,
    TtftCase,
    _inferencex_mean_len,
)
from tests.benches.cost_notes import NOTES
from tests.benches.row_commits import ADDED_IN

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
# (kvplan.perf.efficiency.device_efficiency), so an MI300X row keeps its ROCm fractions.
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


# Every case of a model asks for its bundled spec, many times over a fit
# (`prefill_fit_floors_s`: 240 loads, two thirds of the fit's time in YAML parsing): a bundled
# file does not change within a run and the spec is frozen, so each (model, fp8) is loaded once.
@cache
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


def launch_path(eff: Efficiency, eager_prefill: bool, mxfp4_backend: str | None = None
                ) -> Efficiency:
    """The efficiencies of the run's engine (kvplan.perf.engine_traits.engine_efficiency): SGLang
    launches prefill kernels one by one from Python, so each costs the launch time; vLLM,
    TensorRT-LLM and gpt-fast launch them from CUDA graphs or a compiled engine. SGLang also
    fuses all-reduce + RMSNorm where its defaults do (kvplan.engines.sglang.allreduce_fusion;
    no release named: the undated declaration, engine_traits.release_fusion).
    `mxfp4_backend`: the MXFP4 MoE kernel the run's script picked (Case.mxfp4_backend)."""
    options = None if mxfp4_backend is None else VllmOptions(mxfp4_backend=mxfp4_backend)
    return engine_efficiency("sglang" if eager_prefill else "vllm", eff, options=options)


def state_dtypes(spec: ModelSpec, eager_prefill: bool) -> dict[str, str]:
    """The recurrent state's dtypes as the run's engine keeps them (the engine's state_dtypes,
    kvplan.engines.base.EngineRules): SGLang (the eager-prefill engine here) a bfloat16 conv
    state and, by default, a float32 SSM state (kvplan.engines.sglang.pools.sglang_state_dtypes);
    vLLM's rule otherwise (no recurrent model runs on another engine here)."""
    if not eager_prefill or spec.recurrent is None:
        return {}
    conv, ssm = sglang_state_dtypes(spec, "auto")
    return {"conv_dtype": conv, "ssm_dtype": ssm}


def decode_graphs(case: Case) -> DecodeGraphs:
    """The decode steps the run's engine replays from captured CUDA graphs, in its unit, as
    `estimate` and `simulate` take them (EngineRules.decode_graphs; capest67, mtpcap68): SGLang's
    (the eager-prefill engine here) up to --cuda-graph-max-bs requests by the GPU's memory and
    TP; vLLM's none."""
    if not case.eager_prefill:
        return NO_DECODE_GRAPHS
    gpu = get_gpu(case.gpu)
    sglang = Engine("sglang")
    return sglang.rules.decode_graphs(
        PlanInputs(context=case.input_len, tp=case.layout.tp, engine=sglang, **gpu_inputs(gpu)))


def predicted_tpot_ms(case: Case, tweak: Tweak | None = None) -> float:
    spec, gpu, eff = case_spec(case), get_gpu(case.gpu), case_efficiency(case.gpu, tweak)
    context = case.input_len + case.output_len // 2
    state = state_dtypes(spec, case.eager_prefill)
    # the engine's (its fused all-reduce + norm; the script's MXFP4 kernel)
    path = launch_path(eff, case.eager_prefill, case.mxfp4_backend)
    decode = predict(spec, gpu, CostInputs(context=context, batch=case.batch,
                                           layout=case.layout, efficiency=path,
                                           graphs=decode_graphs(case), **state))
    if case.disaggregated or case.engine_timed:
        return decode.tpot_ms
    prefill = predict(spec, gpu, CostInputs(context=case.input_len, batch=1,
                                            layout=case.layout, efficiency=path,
                                            **state)).ttft_ms
    return serving_tpot_ms(decode.tpot_ms, prefill, concurrency=case.batch,
                           output_len=case.output_len, **_batching(case, spec, path))


def _batching(case: Case | TtftCase, spec: ModelSpec, path: Efficiency) -> dict:
    """How the engine's scheduler batches waiting prompts (kvplan.perf.serving.serving_tpot_ms):
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


# The model PREFILL_LAUNCH_FIT was fitted with (mlaproj62's refit, c0381f09): the routed
# experts at the one fraction per format, before moedefault63 made the shape table the CUDA
# presets' default. On today's default the same fit gives less (the page's launch table shows
# each row's value today); the constant is not refitted with the flip (see
# kvplan.perf.efficiency, PREFILL_LAUNCH_FIT).
AS_FITTED: Tweak = {"moe_gemm_shape": None}


def prefill_fit_floors_s(tweak: Tweak | None = None) -> dict[str, float]:
    """Per fit case, the eager floor that makes it exact (engine-timed prefills, and the
    serving TTFTs marked fit), with `tweak` (None: today's model)."""
    def with_(e: Tweak) -> Tweak:
        return {**(tweak or {}), **e}

    floors = {c.label: _floor_that_fits(lambda e, c=c: predicted_prefill_ms(c, with_(e)),
                                        c.measured_ms)
              for c in PREFILL_CASES if c.fit}
    floors.update({c.label: _floor_that_fits(lambda e, c=c: predicted_ttft_ms(c, with_(e)),
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


def fitted_prefill_launch_s(tweak: Tweak | None = None) -> float:
    """Median over the fit cases of the launch time that makes each exact (`tweak`: as
    prefill_fit_floors_s; AS_FITTED, the model the constant was fitted with)."""
    return median(prefill_fit_floors_s(tweak).values())


def implied_launch_us(predict_ms: Callable[[Tweak], float], measured_ms: float) -> float:
    """The launch time per op (us) at which an SGLang prefill row is exact."""
    return _floor_that_fits(predict_ms, measured_ms) * 1e6


def print_launch_table() -> None:
    """Per SGLang prefill row: the ops its model code launches and the launch time per op
    that makes the row exact. For client TTFTs it is an upper bound (the serving path's time
    is in the measurement), and 0 where the GPU time alone exceeds the measurement."""
    print("\n## Launch time per op implied by each SGLang prefill\n")
    print("Ops: `kvplan.perf.op_counts.eager_prefill_ops`, counted per architecture in SGLang's "
          "model code (kvplan/perf/op_counts.py names the files). The launch time that makes each "
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
           if get_gpu(name).platform == "rocm"
           and any(c.gpu == name for c in (*CASES, *PREFILL_CASES, *TTFT_CASES))}
    print("\n## AMD Instinct rows: ROCm efficiencies against the CUDA ones (held out)\n")
    print("kvplan.perf.efficiency.device_efficiency gives the AMD presets the fractions measured "
          "on ROCm kernels (kvplan/perf/efficiency.py names each source; nothing here is fitted to "
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
    for c, what, band, measured, predict_ms in _rows_on(groups, amd):
        own, cuda = measured / predict_ms(c), measured / predict_ms(c, CUDA_FRACTIONS)
        pcie_cuda = measured / predict_ms(over_pcie(c), CUDA_FRACTIONS)
        print(f"| {c.label} ({what}) | {c.gpu} | {own:.2f} | {cuda:.2f} | "
              f"{pcie_cuda:.2f} | {'yes' if in_band(own, band) else 'no'} |")
    print_blackwell_table(groups)


def _rows_on(groups: tuple, gpus: Collection[str]) -> Iterator[tuple]:
    """Each case of `groups` (cases, measured field, predictor, what is timed, band kind) on one
    of `gpus`: the case, what is timed, its band's kind, its measured ms and its predictor."""
    for cases, measured_field, predict_ms, what, band_kind in groups:
        for c in cases:
            if c.gpu in gpus:
                yield c, what, band_kind or c.kind, getattr(c, measured_field), predict_ms


def print_blackwell_table(groups: tuple) -> None:
    """The B200 / GB200 rows that their measured FP8 GEMM fraction (DEVICE_EFFICIENCY, SGLang's
    GB200 DeepGEMM benchmark) moves, against the CUDA default's."""
    names = [n for n in DEVICE_EFFICIENCY
             if get_gpu(n).platform == "cuda" and DEVICE_EFFICIENCY[n].fp8_gemm is not None]
    fp8 = sorted({DEVICE_EFFICIENCY[n].fp8_gemm or 0.0 for n in names})
    print(f"\n{' / '.join(names)}: FP8 (w8a8) GEMMs at {', '.join(f'{f:.2f}' for f in fp8)} of "
          "the FP8 peak, SGLang's DeepGEMM on a GB200 (kvplan/perf/efficiency.py; nothing here "
          "is fitted to these rows), against the CUDA default "
          f"{DEFAULT_EFFICIENCY.gemm:.2f} (before). The rows it moves by 0.005 or more:\n")
    print("| row | GPU | measured / predicted | with the CUDA fractions (before) | in band |")
    print("|---|---|---:|---:|---|")
    for c, what, band, measured, predict_ms in _rows_on(groups, names):
        own, cuda = measured / predict_ms(c), measured / predict_ms(c, CUDA_FRACTIONS)
        if abs(own - cuda) >= 0.005:
            print(f"| {c.label} ({what}) | {c.gpu} | {own:.2f} | {cuda:.2f} | "
                  f"{'yes' if in_band(own, band) else 'no'} |")


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
          "each op its model code launches (`kvplan.perf.op_counts.eager_prefill_ops`) to their "
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
    floors, today = prefill_fit_floors_s(AS_FITTED), prefill_fit_floors_s()
    print(f"\n## Prefill timed by the engine: {pre_hits} of {len(pre)} cases in band; held out "
          f"{sum(in_band(c.measured_ms / p, 'prefill') for c, p in pre_held)} of "
          f"{len(pre_held)}\n")
    print_split(split, [(c, c.measured_ms / p, "prefill") for c, p in pre])
    print("Measured: one prefill (extend) step as the engine's own benchmark times it, without "
          "a serving path (SGLang `bench_one_batch`, the run after its warm-up). Predicted: "
          "that step (`kvplan.perf.roofline.step_time`, phase prefill) for `prompts` prompts of "
          "`prompt` tokens. SGLang launches prefill ops eagerly from Python: the step adds "
          "the ops its model code launches x the eager prefill launch time, "
          f"{DEFAULT_EFFICIENCY.prefill_launch_s * 1e6:.0f}"
          " us, to its GPU time, fitted on the rows marked fit (the median of the launch time "
          "that makes each exact: "
          + ", ".join(f"{v * 1e6:.0f}" for v in sorted(floors.values()))
          + f" us, median {median(floors.values()) * 1e6:.1f}, with the routed experts at the "
          "one fraction per format it was fitted with; on today's default, the experts' shape "
          "table (moedefault63), the same rows give "
          + ", ".join(f"{v * 1e6:.0f}" for v in sorted(today.values()))
          + f" us, median {median(today.values()) * 1e6:.1f}: not refitted). "
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
          "(`kvplan.perf.serving.serving_ttft_ms`): the prefill of a prompt of the mean "
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


if __name__ == "__main__":
    main()
