"""vLLM's KV budget (``vllm/v1/worker/gpu_worker.py: determine_available_memory``,
``engine/arg_utils.py: get_batch_defaults``, ``v1/worker/gpu_model_runner.py:
_dummy_sampler_run, profile_cudagraph_memory``), by version:

    kv = ceil(total x gpu_memory_utilization) - weights - activation peak - non-torch memory
         [- CUDA-graph estimate: model runner V1 from 0.20, V2 from 0.29; --enforce-eager: none]

The sampler warm-up of the profile run holds min(max_num_seqs, max_num_batched_tokens) rows of
logits over the vocabulary on every TP rank (gathered, not split): model runner V1 with its fp32
and sort temporaries; model runner V2 (``v1/worker/gpu/model_runner.py``, the default for a list
of architectures from 0.22, for dense text models from 0.25, for all from 0.29) the logits alone,
plus its persistent penalty state of max_num_seqs x vocab int32 (counted from 0.27).

Constants that are not in any source (the activation peak's width, the non-torch growth with TP,
the CUDA-graph estimate) are estimates from public start-up logs, each with its sources below;
every reserve part is reported with the rule that set it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import UnmodelledError
from kvplan._util.fitted import Fitted
from kvplan._util.units import GiB, MiB
from kvplan._util.versions import version_key
from kvplan.engines.base import total_bytes_of
from kvplan.engines.reserve import (
    ACTIVATION_BYTES,
    Reserve,
    ReservePart,
    activation_bytes,
    compute_element_bytes,
    interpolate,
    trunc,
)
from kvplan.engines.vllm.alloc import vllm_batch_defaults
from kvplan.engines.vllm.compressed import refuse_v4_profile_peaks
from kvplan.engines.vllm.graph_sizes import vllm_model_max_capture_size
from kvplan.engines.vllm.moe import vllm_moe_workspace
from kvplan.engines.vllm.options import vllm_options
from kvplan.engines.vllm.runner import vllm_runs_v2
from kvplan.engines.vllm.spec_graph_sizes import vllm_cuda_graph_count
from kvplan.engines.vllm.spec_graph_sizes import (  # re-exported: the rule's former home
    vllm_cuda_graph_sizes as vllm_cuda_graph_sizes,
)
from kvplan.engines.vllm.towers import ple_buffer_bytes
from kvplan.engines.vllm.unsized import refuse_unsized_budget, vllm_extensible_kv_cache

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec


# Non-torch memory (NCCL buffers, custom all-reduce IPC buffers, cuBLAS workspaces) per GPU by
# TP over NVLink (H100; PCIe GPUs hold the TP 1 figure, see vllm_non_torch_gib), from vLLM's
# "non_torch_memory takes X GiB" / "non-torch memory X GiB", by version:
# - before 0.19: TP1 0.13 GiB (vllm issue #50722, H100), TP2 0.55 GiB (llm-d-benchmark, H100,
#   ~0.11), TP4 1.84 GiB (vllm issue #24881, H100, 0.10.2);
# - from 0.19: TP1 0.25 GiB, TP2 2.07 GiB, TP4 2.17 GiB (medians of the H100 0.19.0 logs of
#   llm-d-planner PR #205: 0.24-0.27 over 40 TP1 runs, 2.06-2.11 over 8 TP2 runs, 2.13-2.21 over
#   4 TP4 runs; the all-reduce buffers are allocated whole from TP2 on).
# Beyond the largest measured TP (4) the TP 4 figure is held: no log measures TP 8 on NVLink, and
# what grows is NCCL's communicator memory (its buffers are per channel and per ring/tree peer,
# not per rank; 0.19 adds 0.10 GiB from TP 2 to TP 4), which the former "last slope continues"
# turned into 4.42 GiB at TP 8 for 0.10-0.18 (DeepSeek-R1 FP8 on 8 x H200, vLLM 0.11: kvplan
# 13 % short of the logged budget, issue #26). The Qwen3-235B-A22B-FP8 TP 8 log over PCIe (0.10.2,
# custom all-reduce off) holds 0.17-0.21 GiB, near the TP 1 figure. Pipeline stages without TP
# hold no all-reduce buffers: 0.07 GiB (the same logs, PP2 and PP4).
# Fitted on (bench row ids, tests/data/engine_logs/vllm_startup_logs.json):
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
VLLM_NON_TORCH_GIB_0_10_FIT = Fitted(
    value=((1, 0.13), (2, 0.55), (4, 1.84)),
    source="vllm issue #50722 (TP1), llm-d-benchmark (TP2: its Llama-3.3-70B FP8 TP 2 run's "
           "0.55 GiB), vllm issue #24881 (TP4); the TP2 run is a bench row since it was added "
           "with its source's other runs",
    fitted_on=("llm-d-benchmark-llama-3-3-70b-fp8-tp2-16000",))
VLLM_NON_TORCH_GIB_0_19_FIT = Fitted(
    value=((1, 0.25), (2, 2.07), (4, 2.17)),
    source="medians of the H100 0.19.0 logs of llm-d-planner PR #205 (TP1 / TP2 / TP4); commit "
           "c01c767", fitted_on=_VLLM_0_19_NON_TORCH)
VLLM_NON_TORCH_GIB: tuple[tuple[tuple[int, ...], tuple[tuple[int, float], ...]], ...] = (
    ((0, 10), VLLM_NON_TORCH_GIB_0_10_FIT.value),
    ((0, 19), VLLM_NON_TORCH_GIB_0_19_FIT.value),
)
VLLM_NON_TORCH_PP_ONLY_GIB = 0.07
VLLM_NON_TORCH_PP_ONLY_GIB_FIT = Fitted(
    value=VLLM_NON_TORCH_PP_ONLY_GIB,
    source="the PP 2 / PP 4 H100 0.19.0 logs of llm-d-planner PR #205", fitted_on=_VLLM_0_19_PP)


def vllm_non_torch_gib(version: str | None, *, tp: int, pp: int = 1,
                       custom_all_reduce: bool = True) -> float:
    """Non-torch memory per GPU. The growth beyond TP 1 was measured only on NVLink H100s and
    is not the custom all-reduce's IPC buffers (8 MiB each, `distributed/device_communicators/
    custom_all_reduce.py: max_size=8192 * 1024`); it comes with the NVLink collectives, so
    `custom_all_reduce` (the caller's "NVLink, not disabled") False gives the TP 1 figure. PCIe
    GPUs hold the TP 1 figure: Qwen3-32B at TP 2 on two RTX PRO 6000 over PCIe with P2P (custom
    all-reduce running; vLLM 0.27.1, index id 57905766703) leaves 1.66 GiB of reserve, which
    the TP 1 figure matches within 0.01 GiB and the NVLink one (2.07 GiB alone) cannot; so do
    Qwen3-Next at TP 2 on L40S (0.13, custom all-reduce off) and Qwen2.5-72B at TP 4 on four
    L40S (0.19) (examples/engine-bench.md). With --disable-custom-all-reduce on NVLink the TP 1
    figure is assumed (no log)."""
    if tp == 1 and pp > 1:
        return VLLM_NON_TORCH_PP_ONLY_GIB
    key = version_key(version)
    points = [p for since, p in VLLM_NON_TORCH_GIB if key >= since] or [VLLM_NON_TORCH_GIB[0][1]]
    last = points[-1]
    return interpolate(last, min(tp if custom_all_reduce else 1, last[-1][0]))


# CUDA-graph memory subtracted from the budget (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, default
# "1" from the 0.20 wheels, envs.py; 0.19 prints the estimate but does not subtract it). vLLM
# measures it (v1/worker/gpu_model_runner.py: profile_cudagraph_memory, 0.19-0.32): for each
# mode it captures the two largest sizes into a scratch pool and returns
#     max over modes (first capture) + sum over modes ((graphs - 1) x second capture),
# reading each capture off torch.cuda.mem_get_info (device memory, so the graph pool's segments
# and the driver's memory for the instantiated graph alike). The graph count is fixed by the
# source (vllm_cuda_graph_count). What one more captured size costs grows with what a graph
# holds: a PIECEWISE size is one CUDA graph per piece, torch.compile splitting the forward at
# every attention / mixer op (compilation/backends.py: split_graph on `splitting_ops`, one
# piece per layer), a FULL size one graph over every layer (compilation/cuda_graph.py:
# CUDAGraphWrapper); both hold a fixed set of kernels per layer, and the pool's buffers at a
# size already captured are reused (captures run largest first into one pool), so kvplan takes
# the second capture as proportional to the layers on the pipeline stage:
# - per captured graph and layer 0.157 MiB, first capture 0.35 GiB: least squares over the 12
#   configurations of the 0.19.0 H100 logs of llm-d-planner PR #205 marked `fitted` (Llama-3.1-
#   8B at PP 1/2/4, TP 1/2/4 and fp8, Qwen2.5-7B at TP 1/2/4, Qwen3-8B, Gemma-7B, Gemma-2-9B:
#   8-42 layers on a stage, 51 + 51 graphs; 0.346 GiB and 0.157 MiB), the intercept near the
#   former 0.36 GiB floor (the median of nine logs with few graphs, mostly 1-5 per mode);
# - outside this fit: the other 25 configurations of vllm_startup_logs.json (7B-80-layer dense,
#   MoE, multimodal Gemma-3 and Qwen3.5; 0.18-0.24; H100, A100, L40S, RTX 5090, a 48-GB card):
#   median |error| 0.081 GiB, 21 of 25 within 0.25 GiB, against 0.18 GiB and 15 for the former
#   8.43 MiB per graph (read off most of these same logs). Not held out: 20 of them are 0.19.0
#   H100 logs the non-torch medians were fitted on (the benches' split, tests/benches/honest.py,
#   holds out the other 5: an A100-40GB, three L40S, an RTX 5090). Also outside it: the 6 logs
#   of vllm_cudagraph_estimates.json (0.20-0.27) whose model is known: median 0.18 GiB (mean
#   0.19) against 0.21 (0.29); the 27B hybrid's 1.56 GiB: 1.17 predicted, formerly 0.71;
#   28-layer models at 86 graphs predict 0.71 GiB either way.
# Not modelled: MoE layers' extra kernels (router, top-k, align, experts: DeepSeek-V2-Lite 1.39
#   GiB logged vs 0.76, gpt-oss-20b 1.09 vs 0.95 (0.72 at 51 + 51 graphs, before its 1,024
#   ceiling, graph_sizes); the six MoE logs would want 0.9-2.5x a dense
#   layer's cost, too spread to fit one factor); the attention backend (Qwen3.5-9B on an L40S
#   at 51 + 35 graphs: 0.78 GiB with FLASH_ATTN, 1.58 with FLASHINFER and fp8 KV; kvplan does
#   not know which backend vLLM picks); the device (Qwen3-8B at 86 graphs: 2.35 GiB on an
#   A100-40GB, 0.19.1, against 0.84 at 102 graphs on H100s); speculative decoding's
#   drafter graphs; 0.32 adding max_num_seqs itself as a size when the list lacks it.
# Model runner V2 subtracts nothing before 0.29 (v1/worker/gpu/model_runner.py:
# profile_cudagraph_memory returns 0 in the 0.25-0.28 wheels). From 0.29 it captures every
# PIECEWISE graph and extrapolates the FULL ones from the largest two (v1/worker/gpu/
# cudagraph_utils.py: profile_cudagraph_memory, _extrapolate_full_graph_memory: first + (n - 1)
# x second), the same sum as V1's, priced by the same rule (not checked on a V2 log: none in
# the data prints its estimate).
# --enforce-eager removes it.
# The `fitted` 0.19.0 H100 logs of llm-d-planner PR #205 (this fit and the light sampler's):
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
VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB = 0.35
VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB = 0.157
VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB_FIT = Fitted(
    value=VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB,
    source="least squares over the 12 configurations of the `fitted` 0.19.0 H100 logs (their "
           "printed CUDA-graph estimate)", fitted_on=_VLLM_0_19_SAMPLER)
VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB_FIT = Fitted(
    value=VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB,
    source="the same fit as VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB", fitted_on=_VLLM_0_19_SAMPLER)


def vllm_cuda_graph_estimate_bytes(*, piecewise: int, full: int, layers_per_stage: int) -> int:
    """profile_cudagraph_memory's total: the first capture, then every further graph of each
    mode at its second capture's cost, 0.156 MiB per layer on the stage (fitted, see above)."""
    further = max(piecewise - 1, 0) + max(full - 1, 0)
    return int(VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB * GiB
               + further * layers_per_stage * VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB * MiB)


def vllm_layers_per_stage(num_hidden_layers: int, pp: int) -> int:
    """The largest pipeline stage (distributed/utils.py get_pp_indices: layers split evenly,
    the remainder spread over stages): ceil(layers / pp)."""
    return -(-num_hidden_layers // pp)


def vllm_cuda_graph_bytes(*, max_num_seqs: int, max_num_batched_tokens: int,
                          layers_per_stage: int) -> int:
    piecewise, full = vllm_cuda_graph_count(max_num_seqs=max_num_seqs,
                                            max_num_batched_tokens=max_num_batched_tokens)
    return vllm_cuda_graph_estimate_bytes(piecewise=piecewise, full=full,
                                          layers_per_stage=layers_per_stage)


@dataclass(frozen=True, kw_only=True)
class SamplerRule:
    """The profile run's sampler warm-up (``_dummy_sampler_run``): ``rows`` requests of logits
    over the whole vocabulary on every TP rank (gathered, not split), with the fp32 copy and
    top-k/top-p temporaries: ``base`` + rows x vocab x ``bytes_per_logit``."""

    since: tuple[int, ...]
    bytes_per_logit: float
    base_gib: float
    source: str


# Which top-k/top-p path the V1 warm-up runs (v1/sample/ops/topk_topp_sampler.py, read in the
# 0.10.1.1, 0.10.2, 0.11.0, 0.11.1, 0.15.1, 0.16.0, 0.17.0-1, 0.18.0, 0.19.0 and 0.22.0 wheels; the
# dummy batch has top_k = vocab - 1 and top_p = 0.9, so forward_cuda does not fall back):
# - 0.10-0.11.0: FlashInfer whenever `flashinfer` imports (VLLM_USE_FLASHINFER_SAMPLER unset reads
#   as on), else PyTorch's sort. The wheel lists flashinfer-python only as an extra
#   ("vllm[flashinfer]"); the vllm-openai image ships it. kvplan assumes the plain wheel.
# - 0.11.1-0.16: FlashInfer opt-in (vllm PR #26859, "Disable FlashInfer sampler by default");
#   flashinfer-python is a hard dependency from 0.11.1 but unused here: PyTorch's sort.
# - 0.17-0.21: the Triton top-k/top-p kernel (vllm PR #33538, topk_topp_triton.py, first in the
#   0.17.0 wheel, absent from 0.16.0) for >= 8 rows (fewer rows still sort: a few MiB);
#   FlashInfer still opt-in.
# - from 0.22: FlashInfer by default (envs.py: VLLM_USE_FLASHINFER_SAMPLER defaults to True).
# `--flashinfer-sampler` / `--no-flashinfer-sampler` says what ran (VLLM_USE_FLASHINFER_SAMPLER and
# whether flashinfer is installed); unset, each release's default above.
#
# The light paths (FlashInfer, Triton) hold the 16-bit logits, their fp32 copy (sampler.py), and
# two more fp32 rows x vocab tensors: FlashInfer's top_k_mask_logits output and its softmax
# (flashinfer/sampling.py: top_k_top_p_sampling_from_logits, "top_k_first"), or Triton's probs
# and the exponential noise of random_sample: 2 + 4 + 4 + 4 = 14 B per logit. Fitted: 14.4 B per
# logit + 0.13 GiB, from the H100 0.19.0 logs of llm-d-planner PR #205 (Triton path; 1,024 rows:
# Llama-3.1-8B 1.89 GiB at 128,256 logits, Qwen2.5-7B and Qwen3-8B 2.21 GiB at 152,064 / 151,936,
# gemma-2-9b 3.65 and gemma-7b 3.63 GiB at 256,000). Held out: the dennislee22 vLLM 0.10.1.1 A100
# logs, which print "Using FlashInfer for top-p & top-k sampling" (FlashInfer path), and 0.17.1
# (RTX 3090) start-up budgets, within 0.3 GiB (examples/engine-bench.md). The 39.8 B per logit
# once read off gemma-3-4b on a B200 (vllm PR #21489) includes the vision encoder's profile, and
# a 24 B rule off Qwen3.5-35B-A3B (vllm issue #50722) a multimodal GDN hybrid's: not used.
# No dense 0.22-0.24 V1 log (FlashInfer by default) was found to check the light rule there.
VLLM_LIGHT_BYTES_PER_LOGIT = 14.37
VLLM_SAMPLER_BASE_GIB = 0.13
VLLM_LIGHT_BYTES_PER_LOGIT_FIT = Fitted(
    value=VLLM_LIGHT_BYTES_PER_LOGIT,
    source="Triton sampler warm-up, the `fitted` H100 0.19.0 logs of llm-d-planner PR #205",
    fitted_on=_VLLM_0_19_SAMPLER)
VLLM_SAMPLER_BASE_GIB_FIT = Fitted(
    value=VLLM_SAMPLER_BASE_GIB, source="the same fit as VLLM_LIGHT_BYTES_PER_LOGIT",
    fitted_on=_VLLM_0_19_SAMPLER)
# PyTorch's sort (apply_top_k_top_p) adds sorted fp32 logits and int64 indices (12 B) and the sort's
# own scratch, then a softmax and a scatter. Fitted on the one log that names this path and logs
# its torch peak: Qwen3-Next-80B-A3B, H200 TP 2, 0.10.2 ("FlashInfer is not available. Falling
# back to the PyTorch-native implementation"), 5.58 GiB = 0.43 GiB fused-MoE buffers + 0.13 +
# 1,024 x 151,936 x 34.6 B. (Those 0.43 GiB were read as the fused-MoE buffers; 0.10.2's
# fused_experts_impl frees its caches before the warm-up (kvplan.engines.vllm.moe), so they are now
# unexplained and this log predicts 0.43 GiB more KV; the Qwen3-235B-A22B-FP8 TP 8 log of the same
# release and path peaks at 1.40 GiB, this rule alone 1.38.) Held out: Qwen3-8B-FP8 0.10.2 (256
# rows: 1.40 GiB logged, 1.38 by this rule), Llama-3.1-8B L4 0.11.0 (the native fallback logged:
# +10.0 % -> +3.5 %), gpt-oss-120b on one H100 (vllm issues #23278, 0.10.1: -2.14 GiB logged, -2.3
# by this rule; #27508, 0.11: 1.71 logged, 2.3; the light rule: +1.6 and 6.2; both conda installs of
# the plain wheel, the sampler line not in the excerpts, not in the test data) - see
# tests/test_engine_logs.py.
VLLM_SORT_SAMPLER = SamplerRule(since=(0, 10), bytes_per_logit=34.64,
                                base_gib=VLLM_SAMPLER_BASE_GIB,
                                source="PyTorch sort top-k/top-p; Qwen3-Next-80B-A3B H200 log, "
                                       "vLLM 0.10.2")
VLLM_SORT_SAMPLER_FIT = Fitted(
    value=VLLM_SORT_SAMPLER.bytes_per_logit,
    source="PyTorch sort top-k/top-p: the one log naming this path with its torch peak, "
           "Qwen3-Next-80B-A3B on H200, 0.10.2", fitted_on=("index-7292846353",))
VLLM_TRITON_SAMPLER = SamplerRule(since=(0, 17), bytes_per_logit=VLLM_LIGHT_BYTES_PER_LOGIT,
                                  base_gib=VLLM_SAMPLER_BASE_GIB,
                                  source="Triton top-k/top-p; llm-d-planner PR #205 logs, "
                                         "vLLM 0.19.0")
# The warm-up without FlashInfer, by release, oldest first.
VLLM_SAMPLER_RULES = (VLLM_SORT_SAMPLER, VLLM_TRITON_SAMPLER)
VLLM_FLASHINFER_SAMPLER = SamplerRule(since=(0, 10), bytes_per_logit=VLLM_LIGHT_BYTES_PER_LOGIT,
                                      base_gib=VLLM_SAMPLER_BASE_GIB,
                                      source="FlashInfer top-k/top-p; rule of llm-d-planner "
                                             "PR #205 logs, vLLM 0.19.0")
# The release from which V1 uses FlashInfer's sampler unless told not to (0.10-0.11.0: only
# if installed, which the plain wheel is not).
VLLM_FLASHINFER_SAMPLER_DEFAULT_SINCE = (0, 22)

# Model runner V2 (v1/worker/gpu/model_runner.py: _dummy_sampler_run) samples a dummy batch made
# by InputBatch.make_dummy: greedy, no top-k/top-p, no penalties, so Sampler.sample
# (v1/worker/gpu/sample/sampler.py) skips the float32 copy and runs gumbel_sample on the logits
# themselves: the warm-up holds rows x vocab logits in the compute dtype and nothing else.
VLLM_V2_SAMPLER = SamplerRule(since=(0, 25), bytes_per_logit=2.0,  # 16-bit logits
                              base_gib=0.0, source="model runner V2: the dummy batch is greedy")


@dataclass(frozen=True, kw_only=True)
class VllmModelRunner:
    """One of vLLM's GPU model runners, with the profile-run rules that differ between them."""

    name: str
    sampler_rules: tuple[SamplerRule, ...]  # by release, oldest first (FlashInfer's not run)
    cuda_graphs_since: tuple[int, ...]  # CUDA-graph estimate subtracted from this release
    sampler_state_since: tuple[int, ...] | None  # persistent sampler state counted from here
    # FlashInfer's top-k/top-p path, and the release it runs by default from (None: never used).
    flashinfer_rule: SamplerRule | None = None
    flashinfer_default_since: tuple[int, ...] | None = None
    # The multimodal encoder profile (kvplan.engines.vllm.mm) runs from this release.
    encoder_profile_since: tuple[int, ...] = (0, 10)

    def sampler_rule(self, version: str | None,
                     flashinfer_sampler: bool | None = None) -> SamplerRule:
        """The warm-up's rule at `version`; `flashinfer_sampler` None: that release's default."""
        key = version_key(version)
        if self.flashinfer_rule is not None:
            use = flashinfer_sampler if flashinfer_sampler is not None else (
                self.flashinfer_default_since is not None
                and key >= self.flashinfer_default_since)
            if use:
                return self.flashinfer_rule
        return next((r for r in reversed(self.sampler_rules) if key >= r.since),
                    self.sampler_rules[0])

    def profiles_encoder(self, version: str | None) -> bool:
        return version_key(version) >= self.encoder_profile_since

    def subtracts_cuda_graphs(self, version: str | None) -> bool:
        return version_key(version) >= self.cuda_graphs_since

    def sampler_state_bytes(self, spec: ModelSpec, *, version: str | None,
                            max_num_seqs: int) -> int:
        """Model runner V2's persistent sampler state (v1/worker/gpu/sample/penalties.py,
        allocated in load_model after the weights are measured): output_bin_counts of
        max_num_seqs x vocab int32 and prompt_bin_mask of max_num_seqs x ceil(vocab / 32)
        int32. 0.25-0.26 count neither it nor anything else allocated between the weights and
        the profile (weights + torch peak increase + non-torch growth); from 0.27 the
        profile's free-memory delta does (utils/mem_utils.py: total_consumed)."""
        if self.sampler_state_since is None or version_key(version) < self.sampler_state_since:
            return 0
        return max_num_seqs * (spec.vocab_size * 4 + -(-spec.vocab_size // 32) * 4)


# v1/worker/gpu_model_runner.py; the estimate from the 0.20 default of
# VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS.
VLLM_RUNNER_V1 = VllmModelRunner(name="model runner V1", sampler_rules=VLLM_SAMPLER_RULES,
                                 cuda_graphs_since=(0, 20), sampler_state_since=None,
                                 flashinfer_rule=VLLM_FLASHINFER_SAMPLER,
                                 flashinfer_default_since=VLLM_FLASHINFER_SAMPLER_DEFAULT_SINCE)
# v1/worker/gpu/model_runner.py; profile_cudagraph_memory returns 0 before 0.29; profile_run
# runs the multimodal encoder from 0.27 (gpu/mm/encoder_runner.py: profile_encoder_cache; the
# 0.25 and 0.26 wheels profile the language model only).
VLLM_RUNNER_V2 = VllmModelRunner(name="model runner V2", sampler_rules=(VLLM_V2_SAMPLER,),
                                 cuda_graphs_since=(0, 29), sampler_state_since=(0, 27),
                                 encoder_profile_since=(0, 27))


def vllm_model_runner(version: str | None, spec: ModelSpec) -> VllmModelRunner:
    """The runner vLLM uses for `spec` by default (kvplan.engines.vllm.runner.vllm_runs_v2)."""
    return VLLM_RUNNER_V2 if vllm_runs_v2(version, spec) else VLLM_RUNNER_V1


def vllm_sampler_rule(version: str | None, flashinfer_sampler: bool | None = None
                      ) -> SamplerRule:
    """Model runner V1's sampler rule at `version`."""
    return VLLM_RUNNER_V1.sampler_rule(version, flashinfer_sampler)


def vllm_sampler_bytes_per_logit(version: str | None,
                                 flashinfer_sampler: bool | None = None) -> float:
    return vllm_sampler_rule(version, flashinfer_sampler).bytes_per_logit


VLLM_UTILIZATION_092_SINCE = (0, 20)


@dataclass(frozen=True)
class VllmBudget:
    name: str = "vllm"

    def check_reserve_known(self, inputs: PlanInputs) -> None:
        """Refuse, in one line, a budget kvplan cannot derive without a given reserve."""
        refuse_unsized_budget(inputs.engine_version, inputs.platform)  # 0.33 on (unsized.py)
        if inputs.unified_memory:
            # utils/mem_utils.py MemorySnapshot.measure (0.19.0-0.32.0 wheels): on the
            # shared-memory SoCs (compute capability 8.7 Orin, 11.0 Thor, 12.1 Spark) free
            # memory is psutil.virtual_memory().available, so the profile's free-memory delta
            # (non-torch growth; from 0.27 total_consumed) takes in whatever the host and the
            # other processes allocate in RAM during start-up. Public GB10 logs: one config run
            # three times gives 16.93 / 17.59 / 18.13 GiB (MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-
            # Sparks issue #204); Qwen2.5-14B-FP8 at 0.13.0 (index file id 55435188222) holds
            # 1.5 GiB more than a discrete GPU's reserve.
            raise UnmodelledError(
                "--engine vllm on a unified-memory GPU: vLLM reads free memory as "
                "the host's available RAM there, so its budget takes in what the "
                "OS and other processes allocate during start-up (one DGX Spark "
                "config: 16.93-18.13 GiB over three runs), which kvplan cannot "
                "know; give --reserve-gib (the logged total x fraction - weights - "
                "available KV) or --kv-budget-gib")

    def reserve(self, spec: ModelSpec, inputs: PlanInputs) -> Reserve:
        refuse_v4_profile_peaks(spec, inputs)
        seqs = inputs.max_num_seqs or vllm_batch_defaults(
            inputs.total_bytes, is_a100=inputs.is_a100, version=inputs.engine_version,
            capability=inputs.compute_capability)[0]
        rows = min(seqs, inputs.max_num_batched_tokens)
        tokens = inputs.max_num_batched_tokens
        # The non-torch growth with TP is an NVLink one (vllm_non_torch_gib): PCIe GPUs, with
        # or without vLLM's custom all-reduce, and --disable-custom-all-reduce hold TP 1's.
        opts = vllm_options(inputs)
        custom_ar = not opts.disable_custom_all_reduce and inputs.nvlink
        width = compute_element_bytes(inputs.dtype)
        forward = activation_bytes(spec, max_num_batched_tokens=tokens, tp=inputs.tp,
                                   element_bytes=width)
        workspace = vllm_moe_workspace(spec, version=inputs.engine_version,
                                       max_num_batched_tokens=tokens, tp=inputs.tp,
                                       ep=inputs.ep, element_bytes=width)
        moe = workspace.bytes if workspace is not None else 0
        runner = vllm_model_runner(inputs.engine_version, spec)
        rule = runner.sampler_rule(inputs.engine_version, opts.flashinfer_sampler)
        # The rule's logits are 16-bit; float32 logits take 2 B more each.
        per_logit = rule.bytes_per_logit + width - ACTIVATION_BYTES
        sampler = int(rule.base_gib * GiB + rows * spec.vocab_size * per_logit)
        # The forward pass and the sampler warm-up run one after the other; the fused-MoE
        # buffers stay through both only where vLLM keeps them (kvplan.engines.vllm.moe). The
        # profile's peak is the larger phase: "activation" is the forward's, "sampler" what the
        # warm-up adds beyond it.
        if workspace is None or workspace.persistent:
            peak = moe + max(forward, sampler)
        else:
            peak = max(moe + forward, sampler)
        parts = [
            ReservePart(name="activation", bytes=moe + forward,
                        rule=f"profile forward over {tokens:,} tokens (estimate"
                             + (f"; {workspace.rule})" if workspace else ")")),
            ReservePart(name="sampler", bytes=peak - moe - forward,
                        rule=f"{runner.name} warm-up of {rows:,} rows x {spec.vocab_size:,} "
                             f"logits x {per_logit:g} B + {rule.base_gib:g} GiB on every TP "
                             f"rank ({rule.source}), beyond the forward peak"),
            ReservePart(name="non_torch", bytes=int(vllm_non_torch_gib(
                inputs.engine_version, tp=inputs.tp, pp=inputs.pp,
                custom_all_reduce=custom_ar) * GiB),
                        rule=f"NCCL/all-reduce/cuBLAS at TP {inputs.tp}"
                             + (f" x PP {inputs.pp}" if inputs.pp > 1 else "")
                             + ("" if custom_ar or inputs.tp == 1 else
                                ", no NVLink growth (PCIe GPUs, or custom all-reduce disabled)")
                             + " (public logs, by version)"),
        ]
        # Made while the model loads: inside a --weights-gib read from "Model loading took".
        ple = ple_buffer_bytes(spec, max_num_batched_tokens=tokens, element_bytes=width)
        if ple and inputs.weights_bytes is None:
            parts.append(ReservePart(
                name="ple_buffer", bytes=ple,
                rule=f"the Gemma wrapper's per-layer-embedding buffer: {tokens:,} tokens x "
                     f"{spec.num_hidden_layers} layers x hidden_size_per_layer_input x {width} B "
                     "(kvplan.engines.vllm.towers)"))
        encoder = None
        has_tower = spec.qwen_vit is not None or spec.vision is not None
        if (has_tower and runner.profiles_encoder(inputs.engine_version)
                and not opts.skip_mm_profiling):
            # Loaded for a multimodal spec only (start-up: examples/startup-bench.md).
            from kvplan.engines.vllm.mm import vllm_encoder_profile

            encoder = vllm_encoder_profile(
                spec, max_num_batched_tokens=tokens, max_num_seqs=seqs,
                max_model_len=inputs.context, limits=dict(opts.limit_mm_per_prompt), tp=inputs.tp,
                element_bytes=width, encoder_data_parallel=opts.mm_encoder_tp_mode == "data")
        if encoder is not None:
            # profile_run: the encoder runs first and its outputs stay in the encoder cache
            # through the language model's forward and sampler, so the peak is the larger of
            # the encoder's and the outputs + the language model's (kvplan.engines.vllm.mm).
            with_encoder = max(encoder.peak_bytes, encoder.output_bytes + peak)
            parts.append(ReservePart(name="mm_encoder", bytes=with_encoder - peak,
                                     rule=encoder.rule + ", beyond the language model's peak"))
        state = runner.sampler_state_bytes(spec, version=inputs.engine_version,
                                           max_num_seqs=seqs)
        if state:
            parts.append(ReservePart(
                name="sampler_state", bytes=state,
                rule=f"{runner.name}'s penalty state: {seqs:,} requests x {spec.vocab_size:,} "
                     "int32 counts + bit mask (v1/worker/gpu/sample/penalties.py)"))
        if runner.subtracts_cuda_graphs(inputs.engine_version) and not inputs.enforce_eager:
            since = ".".join(map(str, runner.cuda_graphs_since))
            piecewise, full = vllm_cuda_graph_count(
                max_num_seqs=seqs, max_num_batched_tokens=tokens,
                model_max_capture=vllm_model_max_capture_size(spec.architectures,
                                                              inputs.engine_version),
                num_speculative_tokens=inputs.num_speculative_tokens,
                version=inputs.engine_version)
            layers = vllm_layers_per_stage(spec.num_hidden_layers, inputs.pp)
            parts.append(ReservePart(
                name="cuda_graphs",
                bytes=vllm_cuda_graph_estimate_bytes(piecewise=piecewise, full=full,
                                                     layers_per_stage=layers),
                rule=f"CUDA-graph estimate subtracted ({runner.name} from {since}): first "
                     f"capture {VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB:g} GiB + ({piecewise} - 1 "
                     f"PIECEWISE + {full} - 1 FULL graphs) x {layers} layers x "
                     f"{VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB:g} MiB (public logs); "
                     "--enforce-eager removes it"))
        return Reserve(parts=tuple(parts))

    formula: str = "total x gpu_memory_utilization - weights - reserve"

    @staticmethod
    def kv_bytes(total: int, fraction: Any, weights: int, reserve: int) -> Any:
        """int(total x f) - weights - reserve; `fraction` may be a numpy array (the sweep)."""
        return trunc(total * fraction) - weights - reserve

    def fraction_for(self, inputs: PlanInputs, need: int, weights: int, reserve: int) -> float:
        return (need + weights + reserve) / total_bytes_of(inputs)

    def default_fraction(self, inputs: PlanInputs) -> tuple[float, str]:
        # config/cache.py CacheConfig.gpu_memory_utilization and entrypoints/llm.py LLM(): 0.9 in
        # the 0.10.2 and 0.19.0 wheels, 0.92 from 0.20.0 to 0.33.0 (serve and LLM alike).
        if vllm_extensible_kv_cache(inputs.engine_version, inputs.platform):
            return 1.0, "vLLM gpu_memory_utilization default with the extensible KV cache (0.34)"
        if version_key(inputs.engine_version) >= VLLM_UTILIZATION_092_SINCE:
            return 0.92, "vLLM gpu_memory_utilization default from 0.20"
        return 0.9, "vLLM gpu_memory_utilization default to 0.19"


BUDGET = VllmBudget()
