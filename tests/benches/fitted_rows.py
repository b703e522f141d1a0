"""The bench rows each fitted constant was fitted on, and the rules shaped by held-out rows.

Issue 25 ("honest figures"): every fitted constant declares the rows it was fitted on
(`kvplan._util.fitted.Fitted`: value, source, fitted_on). The constants live in
kvplan/engines/budgets.py and kvplan/perf/costmodel.py, which are being split while this is
written; so, FOR NOW, their declarations live here, keyed by the constant's dotted name (a
`[...]` suffix names one point of a table). WHEN THOSE MODULES SETTLE, EACH ENTRY MOVES BESIDE ITS
CONSTANT (the constant becomes a `Fitted`, or gains a `..._FIT` beside it) and this module goes;
tests/test_fitted_rows.py fails when a name here no longer resolves, or its value changed.

What each constant was fitted on is read from the comment beside it and the commit that set it
(`git log -S`). Row ids: the `id` of a log in tests/data/engine_logs/*.json, or a cost-bench case's
label. `fitted_on=()`: fitted on data that is no bench row (the source says which).

The benches (tests/benches/honest.py) count a row as held out only when it is in no entry's
`fitted_on` and shares no fitted row's (model, GPU, TP, EP) configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.fitted import Fitted

_VLLM_0_19_NON_TORCH = (
    "codellama-codellama-7b-h--h100-80gb--tp1pp1dp1--8192",
    "deepseek-ai-deepseek-v2---h100-80gb--tp1pp1dp1--8192",
    "fp8dyn-llama-3-3-70b--h100-80gb--tp2pp1dp1--8192",
    "fp8dyn-llama-3-3-70b--h100-80gb--tp4pp1dp1--8192",
    "fp8dyn-redhatai-qwen2-5---h100-80gb--tp1pp1dp1--8192",
    "google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192",
    "google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192",
    "google-gemma-7b--h100-80gb--tp1pp1dp1--8192",
    "meta-llama---h100-80gb--tp1pp1dp1--8192-dtbf16-kvfp8",
    "meta-llama-llama---h100-80gb--tp1pp1dp1--8192-dtbf16",
    "meta-llama-llama-3---h100-80gb--tp1pp1dp1--8192-qfp8",
    "meta-llama-llama-3--h100-80gb--tp1pp1dp1--8192-dtf32",
    "meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--2048",
    "meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--4096",
    "meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192",
    "meta-llama-llama-3-1-8b---h100-80gb--tp4pp1dp1--8192",
    "meta-llama-llama-3-1-8b--h100-80gb--tp1pp1dp1--16384",
    "meta-llama-llama-3-1-8b--h100-80gb--tp1pp1dp1--32768",
    "meta-llama-llama-4-scout--h100-80gb--tp4pp1dp1--8192",
    "mistralai-mixtral-8x7b-i--h100-80gb--tp2pp1dp1--8192",
    "moonshotai-kimi-dev-72b--h100-80gb--tp2pp1dp1--8192",
    "moonshotai-kimi-dev-72b--h100-80gb--tp4pp1dp1--8192",
    "openai-gpt-oss-20b--h100-80gb--tp2pp1dp1--8192",
    "qwen-qwen1-5-moe-a2-7b--h100-80gb--tp1pp1dp1--8192",
    "qwen-qwen2---h100-80gb--tp1pp1dp1--8192-dtbf16-kvfp8",
    "qwen-qwen2-5-72b-instruc--h100-80gb--tp2pp1dp1--8192",
    "qwen-qwen2-5-7b-i--h100-80gb--tp1pp1dp1--8192-dtbf16",
    "qwen-qwen2-5-7b-instruc--h100-80gb--tp1pp1dp1--16384",
    "qwen-qwen2-5-7b-instruc--h100-80gb--tp1pp1dp1--32768",
    "qwen-qwen2-5-7b-instruct--h100-80gb--tp1pp1dp1--2048",
    "qwen-qwen2-5-7b-instruct--h100-80gb--tp1pp1dp1--4096",
    "qwen-qwen2-5-7b-instruct--h100-80gb--tp2pp1dp1--8192",
    "qwen-qwen2-5-7b-instruct--h100-80gb--tp4pp1dp1--8192",
    "qwen-qwen3-30b-a3b--h100-80gb--tp1pp1dp1--8192",
    "qwen-qwen3-8b--h100-80gb--tp1pp1dp1--8192",
    "redhatai-llama-3-3-70b-i--h100-80gb--tp2pp1dp1--8192",
    "w4a16-redhatai-lla--h100-80gb--tp1pp1dp1--8192-dtf16",
    "w8a8-redhatai-llam--h100-80gb--tp1pp1dp1--8192-dtf16",
    "w8a8-redhatai-qwen2-5-7b--h100-80gb--tp1pp1dp1--8192",
    "google-gemma-3-12b-it--h100-80gb--tp1pp1dp1--8192",
    "google-gemma-3-4b-it--h100-80gb--tp1pp1dp1--8192",
)


_VLLM_0_19_PP = (
    "meta-llama-llama-3-1-8b---h100-80gb--tp1pp2dp1--8192",
    "meta-llama-llama-3-1-8b---h100-80gb--tp1pp4dp1--8192",
)


_VLLM_0_19_SAMPLER = (
    "google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192",
    "google-gemma-7b--h100-80gb--tp1pp1dp1--8192",
    "meta-llama-llama---h100-80gb--tp1pp1dp1--8192-dtbf16",
    "meta-llama-llama-3---h100-80gb--tp1pp1dp1--8192-qfp8",
    "meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--2048",
    "meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--4096",
    "meta-llama-llama-3-1-8b---h100-80gb--tp1pp2dp1--8192",
    "meta-llama-llama-3-1-8b---h100-80gb--tp1pp4dp1--8192",
    "meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192",
    "meta-llama-llama-3-1-8b---h100-80gb--tp4pp1dp1--8192",
    "meta-llama-llama-3-1-8b--h100-80gb--tp1pp1dp1--16384",
    "meta-llama-llama-3-1-8b--h100-80gb--tp1pp1dp1--32768",
    "qwen-qwen2-5-7b-i--h100-80gb--tp1pp1dp1--8192-dtbf16",
    "qwen-qwen2-5-7b-instruc--h100-80gb--tp1pp1dp1--16384",
    "qwen-qwen2-5-7b-instruc--h100-80gb--tp1pp1dp1--32768",
    "qwen-qwen2-5-7b-instruct--h100-80gb--tp1pp1dp1--2048",
    "qwen-qwen2-5-7b-instruct--h100-80gb--tp1pp1dp1--4096",
    "qwen-qwen2-5-7b-instruct--h100-80gb--tp2pp1dp1--8192",
    "qwen-qwen2-5-7b-instruct--h100-80gb--tp4pp1dp1--8192",
    "qwen-qwen3-8b--h100-80gb--tp1pp1dp1--8192",
)


_TRTLLM_CUDA_GRAPHS = (
    "zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_chat_ep1_c1",
    "zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_reasoning_ep1_c256",
    "zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_summarize_ep1_c1",
    "zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_chat_ep1_c4",
    "zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_chat_ep1_c8",
    "zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_chat_ep1_c16",
    "zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_chat_ep1_c32",
    "zufayu-b200-dsr1-fp4-tp8-ep8-1.2.0rc6.post2-fp4_throughput_reasoning_ep8_c128",
    "zufayu-b200-dsr1-fp4-tp8-ep8-1.2.0rc6.post2-fp4_throughput_reasoning_ep8_c256",
)


_COST_LAYER_OVERHEAD = (
    "Qwen3-8B bf16, vLLM 0.11, conc. 1",
    "Qwen3-8B bf16, vLLM 0.11, conc. 2",
    "Qwen3-8B bf16, vLLM 0.11, conc. 4",
    "Qwen3-8B bf16, vLLM 0.11, conc. 8",
    "Qwen3-8B bf16, SGLang 0.5.3, conc. 4",
    "Qwen3-8B bf16, TensorRT-LLM 1.2.0rc1, conc. 4",
    "Qwen3-8B-FP8, SGLang 0.5.3, conc. 4",
    "Llama-2-7B fp16, gpt-fast, batch 1",
)


_COST_PREFILL_LAUNCH = (
    "DeepSeek-R1 FP8 TP8, SGLang (Feb 2025, --enable-torch-compile), 1 x 128",
    "DeepSeek-V3 FP8 TP8, SGLang (Apr 2025), 1 x 1000",
    "DeepSeek-V3 FP8 TP8, SGLang (Apr 2025, DeepGEMM bmm), 1 x 1000",
    "DeepSeek-V3.1 FP8 TP8, SGLang (Dec 2025), 16 x 512",
)


FITTED: dict[str, Fitted] = {
    # vLLM (engine-bench.md, vLLM section)
    "kvplan.engines.vllm.budget.VLLM_NON_TORCH_GIB[0.19]": Fitted(
        value=((1, 0.25), (2, 2.07), (4, 2.17)),
        source="medians of the H100 0.19.0 logs of llm-d-planner PR #205 (TP1 / TP2 / TP4); "
               "commit c01c767",
        fitted_on=_VLLM_0_19_NON_TORCH),
    "kvplan.engines.vllm.budget.VLLM_NON_TORCH_GIB[0.10]": Fitted(
        value=((1, 0.13), (2, 0.55), (4, 1.84)),
        source="vllm issue #50722 (TP1), llm-d-benchmark (TP2), vllm issue #24881 (TP4): "
               "logs that are no bench row",
        fitted_on=()),
    "kvplan.engines.vllm.budget.VLLM_NON_TORCH_PP_ONLY_GIB": Fitted(
        value=0.07, source="the PP 2 / PP 4 H100 0.19.0 logs of llm-d-planner PR #205",
        fitted_on=_VLLM_0_19_PP),
    "kvplan.engines.vllm.budget.VLLM_LIGHT_BYTES_PER_LOGIT": Fitted(
        value=14.37, source="Triton sampler warm-up, the `fitted` H100 0.19.0 logs of "
                            "llm-d-planner PR #205",
        fitted_on=_VLLM_0_19_SAMPLER),
    "kvplan.engines.vllm.budget.VLLM_SAMPLER_BASE_GIB": Fitted(
        value=0.13, source="the same fit as VLLM_LIGHT_BYTES_PER_LOGIT",
        fitted_on=_VLLM_0_19_SAMPLER),
    "kvplan.engines.vllm.budget.VLLM_SORT_SAMPLER": Fitted(
        value=34.64, source="PyTorch sort top-k/top-p: the one log naming this path with its "
                            "torch peak, Qwen3-Next-80B-A3B on H200, 0.10.2",
        fitted_on=("index-7292846353",)),
    "kvplan.engines.vllm.budget.VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB": Fitted(
        value=0.35, source="least squares over the 12 configurations of the `fitted` 0.19.0 "
                           "H100 logs (their printed CUDA-graph estimate)",
        fitted_on=_VLLM_0_19_SAMPLER),
    "kvplan.engines.vllm.budget.VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB": Fitted(
        value=0.157, source="the same fit as VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB",
        fitted_on=_VLLM_0_19_SAMPLER),
    # SGLang (engine-bench.md, SGLang section): memory in use before the weights load
    "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB[cuda][TP1]": Fitted(
        value=0.71, source="median of the seven TP1 Linux logs on cards whose total a log line "
                           "gives; commit e7b6b40",
        fitted_on=("llama-3.1-8b-h100-docs-2025-01", "llama-3.1-8b-h100-pr4760",
                   "qwen3-30b-a3b-fp8-h100-kt-smoke", "qwen3-reranker-0.6b-h100",
                   "qwen3-32b-h100-gke-snapshot", "qwen3-8b-b200-sglang-skill",
                   "llama-3.2-3b-l40s-hicache")),
    "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB[cuda][TP8]": Fitted(
        value=2.14, source="mean of 8 x H100 (grok-2 log) and 8 x H200 (sglang PR #11716, no "
                           "bench row)",
        fitted_on=("grok-2-8xh100",)),
    "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB[rocm][TP8]": Fitted(
        value=4.5, source="MI355X TP8, GLM-5 bring-up notes", fitted_on=("glm-5-fp8-8xmi355x",)),
    "kvplan.engines.sglang.budget.SGLANG_PCIE_PRELOAD_GIB": Fitted(
        value=0.72, source="median of the three TP >= 2 logs on cards under 60 GiB",
        fitted_on=("qwen3.5-9b-2xrtx4090", "qwen3-14b-4xrtx4090", "qwq-32b-4xl4")),
    # TensorRT-LLM (engine-bench.md, TensorRT-LLM sections)
    "kvplan.engines.trtllm.budget.TRTLLM_NON_TORCH_TP1_GIB": Fitted(
        value=1.81, source="gpt-oss-120b on a B200, 1.3.0rc10",
        fitted_on=("zufayu-b200-gptoss120b-tp1-ep1-1.3.0rc10-fp4_throughput_chat_ep1_c64",)),
    "kvplan.engines.trtllm.budget.TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER": Fitted(
        value=0.255, source="growth of the outside-torch memory between logs of one "
                            "configuration: DeepSeek-R1 FP8 TP 8 (graphs to 1-32) and NVFP4 "
                            "TP 8 / EP 8 (to 128 / 256); commit 3bd4ba2",
        fitted_on=_TRTLLM_CUDA_GRAPHS),
    "kvplan.engines.trtllm.budget.TRTLLM_CUDA_GRAPH_MIB_PER_BATCH_LAYER": Fitted(
        value=0.0179, source="the same fit as TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER",
        fitted_on=_TRTLLM_CUDA_GRAPHS),
    "kvplan.engines.trtllm.budget.TRTLLM_NCCL_GIB": Fitted(
        value=1.05, source="aiconfigurator's Llama-3.1-8B bf16 H100 points at TP 2 and TP 4, "
                           "ISL = OSL = 2048, fraction 0.8",
        fitted_on=("aiconfigurator-h100_sxm-llama-3.1-8b-tp2-isl2048-osl2048-f0.8",
                   "aiconfigurator-h100_sxm-llama-3.1-8b-tp4-isl2048-osl2048-f0.8")),
    "kvplan.engines.trtllm.budget.TRTLLM_MOE_GIB_PER_TP_RANK": Fitted(
        value=0.48, source="DeepSeek-R1 FP8 TP 8 / EP 1 (graphs to batch 1): 3.35 GiB / 7",
        fitted_on=("zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_chat_ep1_c1",)),
    "kvplan.engines.trtllm.budget.TRTLLM_MOE_EP_GIB": Fitted(
        value=3.19, source="DeepSeek-R1 NVFP4 TP 4 / EP 4 (1.3.0rc10) and TP 8 / EP 8 "
                           "(1.2.0rc6.post2), less the per-rank slope",
        fitted_on=("zufayu-b200-dsr1-fp4-tp4-ep4-1.3.0rc10-fp4_throughput_chat_ep4_c4",
                   "zufayu-b200-dsr1-fp4-tp8-ep8-1.2.0rc6.post2-fp4_throughput_chat_ep8_c4")),
    # The cost model (cost-bench.md)
    "kvplan.perf.efficiency.Efficiency.layer_overhead_s": Fitted(
        value=35e-6, source="median per-layer residual of the dense 1-GPU decode cases "
                            "(cost_bench.fitted_layer_overhead_s); commit 4927b82",
        fitted_on=_COST_LAYER_OVERHEAD),
    "kvplan.perf.efficiency.Efficiency.prefill_launch_s": Fitted(
        value=70e-6, source="median launch time that makes each engine-timed SGLang prefill "
                            "marked fit exact (cost_bench.fitted_prefill_launch_s); commit "
                            "458205f",
        fitted_on=_COST_PREFILL_LAUNCH),
}


@dataclass(frozen=True, kw_only=True)
class Shaped:
    """A rule written after these rows were in a bench, to fix them: the commit message says
    which rows it moved (the rows were in the bench at that commit: `git merge-base
    --is-ancestor`). Such rows stay out of the fit but are no test of the rule."""

    commit: str
    rule: str
    rows: tuple[str, ...]


SHAPED_BY: tuple[Shaped, ...] = (
    Shaped(commit="4201d1b",
           rule='vLLM V1 sampler by top-k/top-p path (PyTorch sort 34.64 B per logit before 0.17)',
           rows=(
        "vllm-gce-readme",
        "demo_env_l4-vllm",
        "index-34681159919",)),
    Shaped(commit="b3a3321",
           rule="vLLM's multimodal encoder profile in the reserve (mm_encoder)",
           rows=(
        "google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192",
        "index-51781852921",
        "google-gemma-3-12b-it--h100-80gb--tp1pp1dp1--8192",)),
    Shaped(commit="ab109d0",
           rule='vLLM model runner V2 penalty state counted from 0.27',
           rows=(
        "index-69421856836",)),
    Shaped(commit="d5c63ef",
           rule='vLLM model runner V2 dummy sampler and CUDA-graph estimate',
           rows=(
        "index-61918553602",
        "index-61815222665",
        "index-67109588529",)),
    Shaped(commit="3bd4ba2",
           rule='TensorRT-LLM decode CUDA graphs priced; MoE extra per TP rank + EP step',
           rows=(
        "zufayu-b200-dsr1-fp4-tp8-ep1-1.2.0rc6.post2-fp4_throughput_chat_ep1_c64",
        "zufayu-b300-gptoss120b-tp1-ep1-1.3.0rc10-fwbringup-fp4_throughput_chat_ep1_c1",
        "zufayu-b300-gptoss120b-tp1-ep1-1.3.0rc10-fwbringup-fp4_throughput_chat_ep1_c16",
        "zufayu-b300-gptoss120b-tp1-ep1-1.3.0rc10-fwbringup-fp4_throughput_chat_ep1_c64",
        "zufayu-b300-dsr1-fp4-tp2-ep1-1.3.0rc10-fp4_throughput_chat_ep1_c1",
        "zufayu-b200-dsr1-fp4-tp4-ep4-1.3.0rc10-fp4_throughput_chat_ep4_c64",)),
    Shaped(commit="a0bff23",
           rule="GLM-4.5/4.6's SGLang router and shared expert",
           rows=(
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 1",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 16",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 100",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 1",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 16",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 64",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 1",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 16",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 64",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 1000/1000",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 1000/8000",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 8000/1000",)),
    Shaped(commit="6eedbe4",
           rule="SGLang 0.5.6's fused all-reduce + RMSNorm",
           rows=(
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 1",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 16",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 100",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 1",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 16",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 64",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 1",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 16",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 64",
        "gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT, conc. 1",
        "gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT, conc. 100",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 1000/1000",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 1000/8000",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 8000/1000",
        "gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT",)),
    Shaped(commit="37e807c",
           rule="GLM-4.5's q/k RMSNorm in the eager prefill",
           rows=(
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 1",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 16",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 100",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 1",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 16",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 64",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 1",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 16",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 64",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 1000/1000",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 1000/8000",
        "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, random 8000/1000",)),
    Shaped(commit="0d4004c",
           rule="aiter's fused-MoE least time per call on ROCm",
           rows=(
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 1",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 16",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 100",
        "DeepSeek-V3 FP8 TP8, SGLang ROCm (Feb 2025), bench_one_batch, batch 4",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, random 1000/1000",)),
    Shaped(commit="f715c1e",
           rule='per-device efficiencies for AMD Instinct, the xGMI mesh',
           rows=(
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 1",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 16",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 100",
        "DeepSeek-V3 FP8 TP8, SGLang ROCm (Feb 2025), bench_one_batch, batch 4",
        "Llama-3-8B bf16, SGLang ROCm (Oct 2024), bench_latency, batch 32",
        "Llama-3-8B bf16, SGLang ROCm (Oct 2024), 32 x 256",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, random 1000/1000",)),
    Shaped(commit="d71a63e",
           rule="MiniMax-M2's full-width q/k RMSNorm under attention TP",
           rows=(
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 1k/1k, conc. 1",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 1k/1k, conc. 16",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 1k/1k, conc. 100",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 8k/1k, conc. 1",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 8k/1k, conc. 16",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 8k/1k, conc. 64",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, 1k/1k, conc. 1",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, 1k/1k, conc. 16",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, 1k/1k, conc. 100",
        "MiniMax-M2.5 FP8 TP4, vLLM 0.12.0, 2k/512, conc. 1",
        "MiniMax-M2.5 FP8 TP4, vLLM 0.12.0, 2k/512, conc. 8",
        "MiniMax-M2.5 FP8 TP4, vLLM 0.12.0, 2k/512, conc. 16",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, random 1000/1000",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, random 8000/1000",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, random 1000/1000",)),
    Shaped(commit="63b9f8f",
           rule="recurrent layers' real work (Qwen3-Next's eager ops, state traffic)",
           rows=(
        "Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT, conc. 1",
        "Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT, conc. 100",
        "Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT",)),
    Shaped(commit="f8fac66",
           rule="TP all-reduce by the engines' custom one-shot / two-shot dispatch",
           rows=(
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 1000 in, conc. 1",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 1000 in, conc. 16",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 1000 in, conc. 100",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 8000 in, conc. 1",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 8000 in, conc. 16",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 8000 in, conc. 64",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 5000/500, conc. 1",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 5000/500, conc. 5",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 5000/500, conc. 25",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 5000/500, conc. 50",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 500/2000, conc. 1",)),
    Shaped(commit="8e5e849",
           rule="SGLang's prefill batching in serving TPOT / TTFT",
           rows=(
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 1000 in, conc. 16",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 8000 in, conc. 16",
        "Qwen3-235B-A22B bf16 TP8, SGLang 0.5.6, 1k/1k, conc. 100",)),
)


@dataclass(frozen=True, kw_only=True)
class RuleChange:
    """The last commit, before issue 25's restructure, that changed a rule the bench's rows are
    predicted by (the first-parent commit on main that last touched `paths`), and its commit
    time: rows committed after it are prospective (no rule saw them)."""

    commit: str
    time: str
    paths: str


LAST_RULE_CHANGE = {
    "engine": RuleChange(commit="d54f35b66830", time="2026-12-02T01:15:56+00:00",
                         paths="kvplan/engines/"),
    "cost": RuleChange(commit="685ac4f982d3", time="2026-12-02T04:53:06+00:00",
                       paths="kvplan/costmodel.py, kvplan/flops.py (now kvplan/perf/)"),
}
