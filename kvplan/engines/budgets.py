"""What each engine leaves for the KV cache, by version: one type per engine with its budget
formula, its inverse (the memory fraction a KV need takes) and its reserve, side by side.

Rules read from the engines' source (version ranges from the wheels' own files):

vLLM (``vllm/v1/worker/gpu_worker.py: determine_available_memory``, ``engine/arg_utils.py:
get_batch_defaults``, ``v1/worker/gpu_model_runner.py: _dummy_sampler_run,
profile_cudagraph_memory``)
    kv = ceil(total x gpu_memory_utilization) - weights - activation peak - non-torch memory
         [- CUDA-graph estimate: model runner V1 from 0.20, V2 from 0.29; --enforce-eager: none]
    The sampler warm-up of the profile run holds min(max_num_seqs, max_num_batched_tokens) rows
    of logits over the vocabulary on every TP rank (gathered, not split): model runner V1 with
    its fp32 and sort temporaries; model runner V2 (``v1/worker/gpu/model_runner.py``, the
    default for a list of architectures from 0.22, for dense text models from 0.25, for all
    from 0.29) the logits alone, plus its persistent penalty state of max_num_seqs x vocab
    int32 (counted from 0.27).
SGLang (``srt/server_args.py``: the default mem_fraction_static; ``model_executor/
model_runner.py: profile_max_num_token``)
    rest = free_before_weights x mem_fraction_static - weights; tokens = rest // cell, floored
    to the page size. free_before_weights = total - memory in use before the weights load.
TensorRT-LLM, PyTorch backend (``_torch/pyexecutor/_util.py: KvCacheCreator``, 0.20-1.3)
    kv = (total - peak of the estimation run + its temporary KV pool) x free_gpu_memory_fraction
       = (total - weights - activation - non-torch) x fraction; max_tokens = kv // per-token
    bytes, capped by the user's max_tokens; blocks rounded up to 1.1 (C++ manager), down from
    1.2 (``resource_manager.py``). The engine path rounds up and needs --reserve-gib.

Constants that are not in any source (the activation peak's width, vLLM's non-torch growth with
TP, its CUDA-graph estimate, SGLang's pre-load memory, TRT-LLM's non-torch memory) are estimates
from public start-up logs, each with its sources below; every reserve part is reported with the
rule that set it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError
from kvplan._util.units import GiB, MiB
from kvplan._util.versions import version_key
from kvplan.engines.vllm.alloc import vllm_batch_defaults  # noqa: F401  (kept importable here)

if TYPE_CHECKING:
    from kvplan.capacity.plan import PlanInputs
    from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class ReservePart:
    name: str  # activation, sampler, mm_encoder, non_torch, cuda_graphs, preloaded
    bytes: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class Reserve:
    parts: tuple[ReservePart, ...] = field(default_factory=tuple)

    @property
    def total(self) -> int:
        return sum(p.bytes for p in self.parts)

    def to_dict(self) -> dict[str, dict[str, object]]:
        return {p.name: {"bytes": p.bytes, "rule": p.rule} for p in self.parts}


def _interpolate(points: tuple[tuple[int, float], ...], x: int) -> float:
    """Piecewise-linear through the (tp, GiB) points, extended with the last slope."""
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    (x0, y0), (x1, y1) = points[-2], points[-1]
    return y1 + (y1 - y0) * (x - x1) / (x1 - x0)


# --- vLLM ---------------------------------------------------------------------------------------

# Non-torch memory (NCCL buffers, custom all-reduce IPC buffers, cuBLAS workspaces) per GPU by
# TP over NVLink (H100; PCIe GPUs hold the TP 1 figure, see vllm_non_torch_gib), from vLLM's
# "non_torch_memory takes X GiB" / "non-torch memory X GiB", by version:
# - before 0.19: TP1 0.13 GiB (vllm issue #50722, H100), TP2 0.55 GiB (llm-d-benchmark, H100,
#   ~0.11), TP4 1.84 GiB (vllm issue #24881, H100, 0.10.2);
# - from 0.19: TP1 0.25 GiB, TP2 2.07 GiB, TP4 2.17 GiB (medians of the H100 0.19.0 logs of
#   llm-d-planner PR #205: 0.24-0.27 over 40 TP1 runs, 2.06-2.11 over 8 TP2 runs, 2.13-2.21 over
#   4 TP4 runs; the all-reduce buffers are allocated whole from TP2 on).
# Beyond the last point the last slope continues. Pipeline stages without TP hold no all-reduce
# buffers: 0.07 GiB (the same logs, PP2 and PP4).
VLLM_NON_TORCH_GIB: tuple[tuple[tuple[int, ...], tuple[tuple[int, float], ...]], ...] = (
    ((0, 10), ((1, 0.13), (2, 0.55), (4, 1.84))),
    ((0, 19), ((1, 0.25), (2, 2.07), (4, 2.17))),
)
VLLM_NON_TORCH_PP_ONLY_GIB = 0.07


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
    return _interpolate(points[-1], tp if custom_all_reduce else 1)


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
# - held out: the other 25 configurations of vllm_startup_logs.json (7B-80-layer dense, MoE,
#   multimodal Gemma-3 and Qwen3.5; 0.18-0.24; H100, A100, L40S, RTX 5090, a 48-GB card): median
#   |error| 0.081 GiB, 20 of 25 within 0.25 GiB, against 0.18 GiB and 15 for the former 8.43 MiB
#   per graph (read off most of these same logs); and the 6 logs of vllm_cudagraph_estimates.json
#   (0.20-0.27) whose model is known: median 0.18 GiB (mean 0.19) against 0.21 (0.29); the 27B
#   hybrid's 1.56 GiB: 1.17 predicted, formerly 0.71; 28-layer models at 86 graphs predict
#   0.71 GiB either way.
# Not modelled: MoE layers' extra kernels (router, top-k, align, experts: DeepSeek-V2-Lite 1.39
#   GiB logged vs 0.76, gpt-oss-20b 1.09 vs 0.72; the six MoE logs would want 0.9-2.5x a dense
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
VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB = 0.35
VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB = 0.157


def vllm_cuda_graph_count(*, max_num_seqs: int, max_num_batched_tokens: int) -> tuple[int, int]:
    """(PIECEWISE, FULL) graphs of vLLM's default FULL_AND_PIECEWISE mode. config/vllm.py
    _set_cudagraph_sizes: capture sizes [1, 2, 4] + range(8, 256, 8) + range(256, 513, 16) up
    to min(2 x max_num_seqs, 512, max_num_batched_tokens), each a PIECEWISE graph;
    v1/cudagraph_dispatcher.py: a FULL decode graph for each size <= max_num_seqs."""
    largest = min(2 * max_num_seqs, 512, max_num_batched_tokens)
    sizes = [s for s in (1, 2, 4, *range(8, 256, 8), *range(256, 513, 16)) if s <= largest]
    return len(sizes), sum(s <= max_num_seqs for s in sizes)


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
# PyTorch's sort (apply_top_k_top_p) adds sorted fp32 logits and int64 indices (12 B) and the sort's
# own scratch, then a softmax and a scatter. Fitted on the one log that names this path and logs
# its torch peak: Qwen3-Next-80B-A3B, H200 TP 2, 0.10.2 ("FlashInfer is not available. Falling
# back to the PyTorch-native implementation"), 5.58 GiB = 0.43 GiB fused-MoE buffers + 0.13 +
# 1,024 x 151,936 x 34.6 B. Held out: Qwen3-8B-FP8 0.10.2 (256 rows: 1.40 GiB logged, 1.38 by
# this rule), Llama-3.1-8B L4 0.11.0 (the native fallback logged: +10.0 % -> +3.5 %), gpt-oss-120b
# on one H100 (vllm issues #23278, 0.10.1: -2.14 GiB logged, -2.3 by this rule; #27508, 0.11:
# 1.71 logged, 2.3; the light rule: +1.6 and 6.2; both conda installs of the plain wheel, the
# sampler line not in the excerpts, not in the test data) - see tests/test_engine_logs.py.
VLLM_SORT_SAMPLER = SamplerRule(since=(0, 10), bytes_per_logit=34.64,
                                base_gib=VLLM_SAMPLER_BASE_GIB,
                                source="PyTorch sort top-k/top-p; Qwen3-Next-80B-A3B H200 log, "
                                       "vLLM 0.10.2")
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


# config/vllm.py DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES by release, as Hugging Face model_type
# (Qwen3ForCausalLM: qwen3, LlamaForCausalLM: llama, MistralForCausalLM: mistral,
# DeepseekV2ForCausalLM: deepseek_v2, Qwen2MoeForCausalLM: qwen2_moe, GraniteMoeForCausalLM:
# granitemoe); 0.22-0.23 take them only unquantized and not MoE.
VLLM_V2_MODEL_TYPES: tuple[tuple[tuple[int, ...], frozenset[str], bool], ...] = (
    ((0, 22), frozenset({"qwen3"}), True),
    ((0, 23), frozenset({"qwen3", "llama", "mistral"}), True),
    ((0, 24), frozenset({"qwen3", "llama", "mistral", "deepseek_v2", "qwen2_moe",
                         "granitemoe"}), False),
    ((0, 25), frozenset({"deepseek_v2", "qwen2_moe", "granitemoe"}), False),
)


def vllm_model_runner(version: str | None, spec: ModelSpec) -> VllmModelRunner:
    """The runner vLLM uses for `spec` by default (config/vllm.py: use_v2_model_runner and
    _is_default_v2_model_runner_model, read in each wheel): V2 for the listed architectures
    from 0.22 (VLLM_V2_MODEL_TYPES); from 0.25 also for every text-generation model that is
    neither MoE nor hybrid (`not model_config.is_moe`, hybrids excluded); from 0.29 for every
    model unless a feature V2 lacks is on (ngram speculation, dual batch overlap, ...: not
    modelled); else V1. VLLM_USE_V2_MODEL_RUNNER overrides all (not modelled)."""
    key = version_key(version)
    if key >= (0, 29):
        return VLLM_RUNNER_V2
    hybrid = spec.recurrent is not None or any(m in ("recurrent", "hybrid")
                                               for m in spec.layer_mixers)
    if key >= (0, 25) and spec.moe is None and not hybrid:
        return VLLM_RUNNER_V2
    listed = [(types, plain) for since, types, plain in VLLM_V2_MODEL_TYPES if key >= since]
    if listed:
        types, plain_only = listed[-1]
        quantized = spec.quantization_json is not None or spec.weight_dtype not in (
            "bf16", "fp16", "fp32")
        if spec.model_type in types and not (plain_only and (quantized or spec.moe)):
            return VLLM_RUNNER_V2
    return VLLM_RUNNER_V1


def vllm_sampler_rule(version: str | None, flashinfer_sampler: bool | None = None
                      ) -> SamplerRule:
    """Model runner V1's sampler rule at `version`."""
    return VLLM_RUNNER_V1.sampler_rule(version, flashinfer_sampler)


def vllm_sampler_bytes_per_logit(version: str | None,
                                 flashinfer_sampler: bool | None = None) -> float:
    return vllm_sampler_rule(version, flashinfer_sampler).bytes_per_logit


# Activation peak of the profile forward pass, in 16-bit: per token, the residual stream, its
# normed copy and the layer output (3 x hidden), and the dense MLP's gate/up output, activation
# and down input (3 x intermediate / TP). llm-d-planner PR #205's PP runs (no sampler on the first
# stage) log 1.05-1.10 GiB for Llama-3.1-8B at 8,192 tokens: this rule gives 0.86 GiB.
ACTIVATION_BYTES = 2


def compute_element_bytes(dtype: str | None) -> int:
    """Bytes per activation and logit element: 4 under ``--dtype float32``, else 2 (the engines
    serve float32 checkpoints in bfloat16 under auto)."""
    return 4 if dtype in ("fp32", "float32") else ACTIVATION_BYTES


def activation_bytes(spec: ModelSpec, *, max_num_batched_tokens: int, tp: int,
                     element_bytes: int = ACTIVATION_BYTES) -> int:
    """The profile forward pass's peak over `max_num_batched_tokens` tokens (an estimate: the
    widest dense layer; MoE layers' buffers are `moe_workspace_bytes`)."""
    dense = spec.mlp.intermediate_size if spec.moe is None or spec.moe.first_k_dense_replace \
        else 0
    per_token = 3 * spec.hidden_size + 3 * dense // tp
    return max_num_batched_tokens * per_token * element_bytes


def moe_workspace_bytes(spec: ModelSpec, *, max_num_batched_tokens: int, tp: int,
                        element_bytes: int = ACTIVATION_BYTES) -> int:
    """vLLM's fused-MoE intermediate buffers (``fused_moe.py``: intermediate_cache1 of
    tokens x top-k x 2 x moe_intermediate / TP, cache2 of half that, cache3 of tokens x top-k x
    hidden, in 16-bit). They stay allocated through the sampler warm-up, so they add to its peak:
    Qwen3-30B-A3B logs 2.68 GiB where the sampler alone is 2.21 GiB and these buffers 0.53 GiB
    (llm-d-planner PR #205, H100, 0.19.0); Qwen1.5-MoE-A2.7B 2.47 vs 2.21 + 0.38."""
    if spec.moe is None:
        return 0
    moe = spec.moe
    per_token = moe.num_experts_per_tok * (3 * moe.moe_intermediate_size // tp + spec.hidden_size)
    return max_num_batched_tokens * per_token * element_bytes


VLLM_UTILIZATION_092_SINCE = (0, 20)


@dataclass(frozen=True)
class VllmBudget:
    name: str = "vllm"

    def check_reserve_known(self, inputs: PlanInputs) -> None:
        """Refuse, in one line, a budget kvplan cannot derive without a given reserve."""
        if inputs.unified_memory:
            # utils/mem_utils.py MemorySnapshot.measure (0.19.0-0.32.0 wheels): on the
            # shared-memory SoCs (compute capability 8.7 Orin, 11.0 Thor, 12.1 Spark) free
            # memory is psutil.virtual_memory().available, so the profile's free-memory delta
            # (non-torch growth; from 0.27 total_consumed) takes in whatever the host and the
            # other processes allocate in RAM during start-up. Public GB10 logs: one config run
            # three times gives 16.93 / 17.59 / 18.13 GiB (MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-
            # Sparks issue #204); Qwen2.5-14B-FP8 at 0.13.0 (index file id 55435188222) holds
            # 1.5 GiB more than a discrete GPU's reserve.
            raise InputError("--engine vllm on a unified-memory GPU: vLLM reads free memory as "
                             "the host's available RAM there, so its budget takes in what the "
                             "OS and other processes allocate during start-up (one DGX Spark "
                             "config: 16.93-18.13 GiB over three runs), which kvplan cannot "
                             "know; give --reserve-gib (the logged total x fraction - weights - "
                             "available KV) or --kv-budget-gib")

    def reserve(self, spec: ModelSpec, inputs: PlanInputs) -> Reserve:
        seqs = inputs.max_num_seqs or vllm_batch_defaults(
            inputs.total_bytes, is_a100=inputs.is_a100, version=inputs.engine_version)[0]
        rows = min(seqs, inputs.max_num_batched_tokens)
        tokens = inputs.max_num_batched_tokens
        # The non-torch growth with TP is an NVLink one (vllm_non_torch_gib): PCIe GPUs, with
        # or without vLLM's custom all-reduce, and --disable-custom-all-reduce hold TP 1's.
        custom_ar = not inputs.disable_custom_all_reduce and inputs.nvlink
        width = compute_element_bytes(inputs.dtype)
        forward = activation_bytes(spec, max_num_batched_tokens=tokens, tp=inputs.tp,
                                   element_bytes=width)
        moe = moe_workspace_bytes(spec, max_num_batched_tokens=tokens, tp=inputs.tp,
                                  element_bytes=width)
        runner = vllm_model_runner(inputs.engine_version, spec)
        rule = runner.sampler_rule(inputs.engine_version, inputs.flashinfer_sampler)
        # The rule's logits are 16-bit; float32 logits take 2 B more each.
        per_logit = rule.bytes_per_logit + width - ACTIVATION_BYTES
        sampler = int(rule.base_gib * GiB + rows * spec.vocab_size * per_logit)
        # The forward pass and the sampler warm-up run one after the other; the fused-MoE
        # buffers stay through both. The profile's peak is the larger phase: "activation" is the
        # forward's, "sampler" what the warm-up adds beyond it.
        peak = moe + max(forward, sampler)
        parts = [
            ReservePart(name="activation", bytes=moe + forward,
                        rule=f"profile forward over {tokens:,} tokens (estimate"
                             + (f"; fused-MoE buffers {moe / GiB:.2f} GiB)" if moe else ")")),
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
        encoder = None
        has_tower = spec.qwen_vit is not None or spec.vision is not None
        if (has_tower and runner.profiles_encoder(inputs.engine_version)
                and not inputs.skip_mm_profiling):
            # Loaded for a multimodal spec only (start-up: examples/startup-bench.md).
            from kvplan.engines.vllm.mm import vllm_encoder_profile

            encoder = vllm_encoder_profile(
                spec, max_num_batched_tokens=tokens, max_num_seqs=seqs,
                max_model_len=inputs.context, limits=dict(inputs.limit_mm_per_prompt), tp=inputs.tp,
                element_bytes=width, encoder_data_parallel=inputs.mm_encoder_tp_mode == "data")
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
            piecewise, full = vllm_cuda_graph_count(max_num_seqs=seqs,
                                                    max_num_batched_tokens=tokens)
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
        return _trunc(total * fraction) - weights - reserve

    def fraction_for(self, inputs: PlanInputs, need: int, weights: int, reserve: int) -> float:
        return (need + weights + reserve) / _total(inputs)

    def default_fraction(self, inputs: PlanInputs) -> tuple[float, str]:
        # config/cache.py CacheConfig.gpu_memory_utilization and entrypoints/llm.py LLM(): 0.9 in
        # the 0.10.2 and 0.19.0 wheels, 0.92 in every wheel read from 0.20.0 to 0.32.0 (`vllm
        # serve` and the offline LLM class alike).
        if version_key(inputs.engine_version) >= VLLM_UTILIZATION_092_SINCE:
            return 0.92, "vLLM gpu_memory_utilization default from 0.20"
        return 0.9, "vLLM gpu_memory_utilization default to 0.19"


# --- SGLang -------------------------------------------------------------------------------------

# Memory in use before the weights load, per GPU: the device total less "Load weight begin. avail
# mem" (SGLang's "GB" are GiB: the logged K sizes are #tokens x cell / 2^30). It is the CUDA
# context and torch init (0.4-0.7 GiB) plus what "Init torch distributed" adds: 0.09-0.19 GiB
# without NVSwitch, 1.25 GiB on 8 x H100 (NCCL's NVLink buffers). Public logs
# (tests/data/engine_logs/sglang_startup_logs.json):
# - TP1: 0.71 GiB, the median of the seven TP1 Linux logs on cards whose total a log line gives
#   (fitted in the sglang-logs session; the former 0.38 was the one early-2025 log): H100 0.38
#   (0.4.1.post7), 0.60 (0.4.4, sglang PR #4760), 0.71 (2026 main), 0.72 (0.5.18), 0.72 (0.5.19,
#   gVisor); B200 0.78 (2026 main); L40S 0.28 (0.5.7). Held out (not fitted): H100 0.70
#   (sglang-kt 0.7.0) and MI300X 0.65 (ROCm, a 2024-10 build): both within 0.06 of the point.
#   The ROCm TP1 point is the same value (no ROCm TP1 log was fitted).
# - TP8 on NVSwitch: 1.76 GiB (79.19 - 77.43, 8 x H100, v0.5.2rc2, grok-2 blog log) and 2.52
#   (139.81 - 137.29, 8 x H200, sglang PR #11716): their mean, 2.14, is the TP8 point.
# - AMD TP8: 4.5 GiB (288 - 283.50, MI355X, v0.5.8.post1, GLM-5 bring-up notes).
# - Cards under 60 GiB (GeForce, L4, L40S, A10G: PCIe, no NVSwitch) do not grow with TP: 0.72
#   GiB at TP2 (23.65 - 22.93, 2 x RTX 4090, 2026 build), 0.57 at TP4 (23.65 - 23.08, 4 x RTX
#   4090, 2026 build), 0.86 at TP4 (22.49 - 21.63, 4 x L4, 0.4.3.post4); from TP2 their median,
#   0.72 GiB, is used (the former TP1-TP8 line gave 0.69 at TP2 and 1.30 at TP4: 5-13 % fewer
#   tokens than logged at TP4).
# Memory is the proxy for the interconnect here: the planner is not told whether GPUs share an
# NVSwitch.
SGLANG_PRELOAD_GIB = {"cuda": ((1, 0.71), (8, 2.14)), "rocm": ((1, 0.71), (8, 4.5))}
SGLANG_PCIE_PRELOAD_GIB = 0.72
SGLANG_PCIE_BELOW_BYTES = 60 * GiB


def sglang_preload_gib(*, tp: int, platform: str = "cuda", total_bytes: int | None = None
                       ) -> tuple[float, str]:
    """Memory in use before the weights load on each GPU (GiB) and the rule that set it."""
    if (platform == "cuda" and tp > 1 and total_bytes is not None
            and total_bytes < SGLANG_PCIE_BELOW_BYTES):
        return SGLANG_PCIE_PRELOAD_GIB, (
            f"in use before weights load at TP {tp} on a card under 60 GiB (no NVSwitch: "
            "flat from TP2, public logs)")
    points = SGLANG_PRELOAD_GIB.get(platform, SGLANG_PRELOAD_GIB["cuda"])
    return _interpolate(points, tp), f"in use before weights load at TP {tp} (public logs)"


def sglang_graph_defaults(gpu_mem_mib: int, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) by GPU memory and TP (server_args.py 0.5.5+)."""
    gib = gpu_mem_mib / 1024
    if gib < 20:
        return 2048, 8
    if gib < 35:
        return 2048, 80 if tp >= 4 else 24
    if gib < 60:
        return 4096, 160 if tp >= 4 else 32
    if gib < 160:
        return 8192, 512 if tp >= 4 else 256
    return 16384, 512


# Multimodal checkpoints (server_args.py, the default fraction only; vision_config's
# num_hidden_layers / hidden_size, SGLang's defaults 24 / 1024 where absent): 0.4.9 multiplies it
# by 0.90; from 0.4.10 ``adjust_mem_fraction_for_vlm`` (``arg_groups/memory_hook.py`` from 0.5.19)
# by 0.95 x clamp(1 - 0.1 x (layers x hidden^2 / (24 x 1024^2) - 1), 0.8, 1.05), unrounded.
# Checked: Kimi-K2.5 (MoonViT, configs/kimi_k25.py KimiK25VisionConfig: 27 layers, 1152) on 8 x
# MI355X, 0.5.8.post1: 0.908 x 0.95 x 0.957617 = 0.8260405859375, the logged value to the digit.
SGLANG_VLM_SINCE = (0, 4, 9)
SGLANG_VLM_VIT_SINCE = (0, 4, 10)
SGLANG_VIT_BASELINE = (24, 1024)  # ViT-L/14


def sglang_vlm_factor(version: str | None, vision_tower: tuple[int, int] | None) -> float:
    """The factor SGLang applies to its default fraction for a multimodal checkpoint whose
    vision tower has (num_hidden_layers, hidden_size); 1.0 for a text model or an older
    release."""
    v = version_key(version)
    if vision_tower is None or v < SGLANG_VLM_SINCE:
        return 1.0
    if v < SGLANG_VLM_VIT_SINCE:
        return 0.90
    layers, hidden = vision_tower
    base_layers, base_hidden = SGLANG_VIT_BASELINE
    ratio = layers * hidden**2 / (base_layers * base_hidden**2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def sglang_default_fraction(*, version: str | None, gpu_mem_bytes: int, tp: int, pp: int = 1,
                            dp_attention: bool = False, speculative: bool = False,
                            is_mla: bool = False, vision_tower: tuple[int, int] | None = None,
                            ) -> tuple[float, str]:
    """SGLang's default mem_fraction_static (srt/server_args.py), by version; a multimodal
    checkpoint's (`vision_tower`: its encoder's layers, hidden size) scaled by
    `sglang_vlm_factor`."""
    f, rule = _sglang_text_fraction(version=version, gpu_mem_bytes=gpu_mem_bytes, tp=tp, pp=pp,
                                    dp_attention=dp_attention, speculative=speculative,
                                    is_mla=is_mla)
    factor = sglang_vlm_factor(version, vision_tower)
    if factor != 1.0:
        return f * factor, (f"{rule}; x {factor:.6g} for the vision tower "
                            "(adjust_mem_fraction_for_vlm)")
    return f, rule


def _sglang_text_fraction(*, version: str | None, gpu_mem_bytes: int, tp: int, pp: int,
                          dp_attention: bool, speculative: bool, is_mla: bool
                          ) -> tuple[float, str]:
    v = version_key(version)
    mem = gpu_mem_bytes // MiB  # nvidia-smi memory.total, MiB
    ranks = tp * pp
    if v <= (0, 4, 5) or (v < (0, 4, 8) and mem <= 81920):
        table = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
        f = next(frac for limit, frac in table if (ranks if v > (0, 4, 5) else tp) >= limit)
        return f, "TP table 0.88/0.87/0.85/0.81/0.79 (<= 0.4.7)"
    if v < (0, 4, 8):
        f = next(frac for limit, frac in ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87),
                                          (1, 0.88)) if ranks >= limit)
        if mem > 96 * 1024:
            f = min(f + 48 * 1024 * (1 - f) / mem, (mem - 18 * 1024) / mem)
        return round(f, 3), "0.4.6-0.4.7: TP table raised above 96 GiB"
    if v < (0, 5, 3):
        gib = mem / 1024
        if gib < 35:
            reserved = (2.8 + ranks / 10) * 1024
        elif gib < 90:
            reserved = (9.5 + ranks / 2) * 1024
        elif gib < 160:
            reserved = (12 + ranks / 2) * 1024
        else:
            reserved = 32 * 1024
        reserved += (2048 if speculative else 0) + (4096 if dp_attention else 0)
        return round((mem - reserved) / mem, 3), "0.4.8-0.5.2: (gpu_mem - reserved) / gpu_mem"
    chunked, bs = sglang_graph_defaults(mem, tp)
    reserved = 512 + 1.5 * max(chunked, 2048) + 2 * bs + ranks * 128
    if dp_attention:
        reserved += 3 * bs * tp + (1.5 * bs * tp if bs > 300 else 0)
    if v >= (0, 5, 10):
        reserved += 1536 if is_mla else 8 * 58  # prefill CUDA graphs, on by default
    if mem > 60 * 1024:
        reserved = max(reserved, 10240)
    if speculative and v < (0, 5, 14):
        reserved += 2048 if v < (0, 5, 10) else 4096
    return round((mem - reserved) / mem, 3), (
        "0.5.3+: (gpu_mem - reserved) / gpu_mem, reserved from chunked prefill and CUDA graphs")


@dataclass(frozen=True)
class SglangBudget:
    name: str = "sglang"

    def check_reserve_known(self, inputs: PlanInputs) -> None:
        """Every setting this engine runs is derivable (TRT-LLM refuses some)."""

    def reserve(self, spec: ModelSpec, inputs: PlanInputs) -> Reserve:
        gib, rule = sglang_preload_gib(tp=inputs.tp, platform=inputs.platform,
                                       total_bytes=inputs.total_bytes)
        return Reserve(parts=(ReservePart(name="preloaded", bytes=int(gib * GiB), rule=rule),))

    formula: str = "(total - preloaded) x mem_fraction_static - weights"

    @staticmethod
    def kv_bytes(total: int, fraction: Any, weights: int, reserve: int) -> Any:
        return _trunc((total - reserve) * fraction) - weights

    def fraction_for(self, inputs: PlanInputs, need: int, weights: int, reserve: int) -> float:
        return (need + weights) / (_total(inputs) - reserve)

    def default_fraction(self, inputs: PlanInputs) -> tuple[float, str]:
        mem = inputs.smi_total_bytes or inputs.total_bytes
        if mem is None:
            return 0.88, "SGLang default without a known GPU memory"
        return sglang_default_fraction(
            version=inputs.engine_version, gpu_mem_bytes=mem, tp=inputs.tp, pp=inputs.pp,
            dp_attention=inputs.dp_attention, speculative=inputs.speculative_method is not None,
            is_mla=inputs.is_mla, vision_tower=inputs.vision_tower)


# --- TensorRT-LLM -------------------------------------------------------------------------------

# TensorRT-LLM's PyTorch backend (``tensorrt_llm/_torch/pyexecutor/_util.py: KvCacheCreator``, the
# same arithmetic from 0.20 to 1.3) sizes the pool from a dummy run of ``max_num_tokens`` tokens:
#   torch.cuda.empty_cache(); reset_peak_memory_stats()
#   model_bytes = allocated_bytes.all.current     "Memory used after loading model weights
#                                                  (inside torch) in memory usage profiling"
#   run the dummy requests (a temporary KV pool holds them), then empty_cache() again
#   peak = torch peak + max(used - torch current, 0)     "Peak memory during memory usage
#                                                         profiling (torch + non-torch)"
#   available = (total - peak + temporary KV bytes) x free_gpu_memory_fraction
#   max_tokens = min(available // kv bytes per token, user max_tokens)  "Estimated max memory
#                                                                        in KV cache"
# The temporary pool (the log's "tmp kv_mem" / "temporary kv cache memory during profiling") is
# added back, so what the pool loses is weights + the torch activation peak + everything outside
# torch (CUDA context, NCCL and all-reduce workspaces, MoE communication buffers, CUDA graphs
# captured in the warm-up before the estimate). Checked on the raw logs: 1.3.0rc10, DeepSeek-R1
# NVFP4 at TP 4 on B200: (178.35 - 106.46 + 2.14) x 0.8 = 59.23 GiB, logged 59.23.
# Blocks from max_tokens, by version (TrtllmProfile). The engine path (TensorRT engines, C++
# ``kvCacheManager.cpp: calculateMaxNumBlocks``) takes free memory after the engine loads x the
# fraction and rounds up; what the engine holds beyond its weights (its build-time activation
# size, runtime and decoder buffers: "Allocated 1.14 GB GPU memory for runtime buffers" and
# "4.35 GB GPU memory for decoder" for Llama-2-7B in a 0.12 trtllm-bench log) is not in the
# checkpoint, so the engine path is sized only with --reserve-gib.


@dataclass(frozen=True, kw_only=True)
class TrtllmProfile:
    """What changes between TensorRT-LLM releases in the PyTorch backend's pool sizing."""

    version: str
    blocks_rounding: str  # "up" | "down": max_tokens to whole blocks of tokens_per_block
    rounding_source: str

    @property
    def key(self) -> tuple[int, ...]:
        return version_key(self.version)


TRTLLM_PROFILES = (
    # Up to 1.1 the C++ KVCacheManager made the pool: blocks = ceilDiv(max_tokens,
    # tokens_per_block). Logs: 0.20.0, Llama-3.1-8B-FP8 on an H100, max_tokens 860,308 ->
    # "Allocated 52.51 GiB for max tokens in paged KV cache (860320)" (NVIDIA/TensorRT-LLM issue
    # #6294); 1.1.0rc3, gpt-oss-120b on a DGX Spark, 86,711 -> 86,720.
    TrtllmProfile(version="0.20", blocks_rounding="up",
                  rounding_source="C++ KVCacheManager (ceilDiv); logs 0.20.0, 1.1.0rc3"),
    # From 1.2 the Python KVCacheManager does (``_torch/pyexecutor/resource_manager.py:
    # calculate_max_num_blocks``): blocks_in_primary_pool = int(max_tokens // tokens_per_block).
    # Logs: 1.2.0rc6.post2, 2,851,669 -> "primary blocks=89114"; 1.3.0rc10, 1,809,966 ->
    # 1,809,952 tokens (zufayu/ClaudeSkillsE2EPerf, B200).
    TrtllmProfile(version="1.2", blocks_rounding="down",
                  rounding_source="resource_manager.py calculate_max_num_blocks (floor); logs "
                                  "1.2.0rc6.post2, 1.3.0rc10"),
)

# llm_args.py: KvCacheConfig.free_gpu_memory_fraction 0.9 (logged "fraction is set
# 0.8999999761581421" where unset, 1.1.0rc3); BaseLlmArgs.max_num_tokens 8192 (the dummy run's
# size; logged "max_num_tokens=8192").
TRTLLM_DEFAULT_FRACTION = 0.9
TRTLLM_MAX_NUM_TOKENS = 8192


def trtllm_profile(version: str | None) -> TrtllmProfile:
    """The newest profile at or below `version` (None: the newest); refuses older releases."""
    key = version_key(version)
    found = [p for p in TRTLLM_PROFILES if key >= p.key]
    if not found:
        raise InputError(f"--engine-version {version}: kvplan models TensorRT-LLM's PyTorch "
                         f"backend from {TRTLLM_PROFILES[0].version} (earlier releases size the "
                         "pool without adding back the estimation run's KV cache)")
    return found[-1]


# Memory outside the torch allocator per GPU, beyond the weights and the estimation run's KV pool.
# What it is, from the source (``_torch/pyexecutor/_util.py: KvCacheCreator``, 1.0-1.3): after
# the dummy run, ``torch.cuda.empty_cache()``, then extra = (total - free) - torch
# allocated_bytes.current, logged "Memory used outside torch (e.g., NCCL and CUDA graphs)"; the
# same difference before the run is "Memory used after loading model weights (outside torch)".
# It holds whatever torch cannot hand back or never saw: the CUDA context and loaded kernel
# modules, NCCL communicators, the IPC all-reduce workspaces, the C++ KV pool of the estimation
# run (cudaMalloc'd by the KV cache manager, "[MemUsageChange] Allocated 2.14 GiB for max tokens
# in paged KV cache (65536)"; added back to the budget, so not a part here) and the cached blocks
# of the CUDA-graph pool (captured in the warm-up before the estimate). kvplan sizes it as
#     non_torch = TP-1 base + [TP >= 2] (all-reduce workspace + NCCL) + [MoE] MoE extra(TP)
# with one part read from the source and three read from public logs, each fitted on some logs
# and checked on held-out ones (tests/data/engine_logs/trtllm_budget_logs.json and
# trtllm_capacity_points.json, `fitted`); the fitted parts also absorb kvplan's activation error
# (they are fitted on peak - weights - temporary KV - kvplan's activation estimate).

# TP-1 base: CUDA context, kernel modules, cuBLAS / attention workspaces outside torch, without
# the decode CUDA graphs (their own part below). 1.81 GiB: gpt-oss-120b on a B200, 1.3.0rc10
# (peak 70.44, weights 65.40, temporary KV 2.25, activation estimate 0.83: 1.95 GiB left, less
# 0.14 for its 11 graphs of 36 layers). Held out: gpt-oss-120b on a B300 (5 logs, outside torch
# before the run less the temporary pool 1.87-2.05 GiB, with 1-11 graphs) and on a GB200
# (NVIDIA's CI, 1.97); Llama-3.1-8B bf16 on an H100 (aiconfigurator's TRT-LLM capacity points,
# TP 1: within one sequence); not a dense TinyLlama-1.1B on an RTX 6000 Ada (1.1.0: 1.11 GiB with
# 34 graphs, budget -2.2 %).
TRTLLM_NON_TORCH_TP1_GIB = 1.81

# Decode CUDA graphs, captured in the warm-up before the estimation run (PyExecutor's warm-up;
# the raw 1.2.0rc6.post2 DeepSeek-R1 log prints "Creating CUDA graph instances for 11 batch
# sizes" / "Run generation-only CUDA graph warmup for batch size=64 ... 1" before "Memory used
# after loading model weights", as do the 1.1.0 and 1.1.0rc3 logs; no 0.20-1.0 log shows the
# order), so the graph pool's cached blocks are outside torch when the budget is taken.
# Batch sizes (llm_args.py: CudaGraphConfig._generate_cuda_graph_batch_sizes, the lists
# printed by the 1.2 / 1.3 logs): max_batch_size 0 means 128; with enable_padding [1, 2, 4, 8,
# 16, 24, ..., 128], without it 1..31, 32, 64, 128; either then powers of two from 256 below
# max_batch_size; sizes above max_batch_size dropped, max_batch_size itself added (max 256 ->
# ..., 128, 256: 20 sizes). A later revision of the source extends the padded list by 64s
# instead (not in any logged release here). Defaults (CudaGraphConfig): max_batch_size 0,
# enable_padding False -> 34 sizes
# ("Creating CUDA graph instances for 34 batch sizes", TinyLlama 1.1.0 with every default).
TRTLLM_CUDA_GRAPH_DEFAULT_MAX_BATCH = 128


def trtllm_cuda_graph_batch_sizes(max_batch_size: int | None, padding: bool) -> tuple[int, ...]:
    """The decode batch sizes TRT-LLM captures (CudaGraphConfig, 1.0-1.3)."""
    top = max_batch_size or TRTLLM_CUDA_GRAPH_DEFAULT_MAX_BATCH
    sizes = [1, 2, 4, *range(8, 129, 8)] if padding else [*range(1, 32), 32, 64, 128]
    power = 256
    while power < top:
        sizes.append(power)
        power *= 2
    kept = sorted({s for s in sizes if s <= top} | {top})
    return tuple(kept)


# What the graphs hold outside torch: a fixed cost per captured graph and layer (the instantiated
# graph, its static inputs / outputs) plus a pool that grows with the largest batch (captures run
# largest first into one pool, cuda_graph_runner.py). Fitted on the growth of the outside-torch
# memory between logs of one configuration (the base cancels): DeepSeek-R1 FP8 at TP 8 on B200s
# (1.2.0rc6.post3, CUDA graphs to 1 / 4 / 8 / 16 / 32: 7.46 -> 7.60 GiB) and DeepSeek-R1 NVFP4 at
# TP 8 / EP 8 (to 128 / 256: 10.32 -> 10.47): 0.255 MiB per graph and layer + 0.0179 MiB per
# unit of the largest batch and layer. Held out: DeepSeek-R1 NVFP4 TP 4 1.3.0rc10 to 4 / 64
# (+0.19 logged, +0.19 by this rule), gpt-oss-120b on a B300 to 1 / 16 / 64 (+0.05 and +0.13
# logged; +0.05, +0.13) and, with the CUTLASS MoE, to 1 / 64 (+0.08; +0.13). A per-graph cost
# alone (0.36 MiB) misses the graph at 256 (0.02 vs 0.15 GiB).
TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER = 0.255
TRTLLM_CUDA_GRAPH_MIB_PER_BATCH_LAYER = 0.0179


def trtllm_cuda_graph_bytes(*, layers: int, batch_sizes: tuple[int, ...]) -> int:
    """Decode CUDA graphs' memory outside torch per GPU (rule above); none without graphs."""
    if not batch_sizes:
        return 0
    mib = layers * (TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER * len(batch_sizes)
                    + TRTLLM_CUDA_GRAPH_MIB_PER_BATCH_LAYER * max(batch_sizes))
    return int(mib * MiB)


def trtllm_allreduce_workspace_bytes(tp: int, version: str | None) -> int:
    """The fused all-reduce's IPC workspace per GPU at TP >= 2, from the source:
    ``get_allreduce_workspace`` (``_torch/distributed/ops.py``) allocates it once per process with
    ``CustomAllReduceHelper.allocate_allreduce_fusion_workspace(mapping, size)``: IpcMemory of
    size x TP (data), 256 x TP (barriers) and 3 x size x TP (the lamport triple buffer), each
    cudaMalloc'd on every rank (outside torch): 4 x size x TP + 256 x TP bytes. ``size`` is
    ``max_workspace_size_auto``: 16,000,000 at TP <= 2 and 8,000,000 above (``plugin/plugin.py``,
    up to 1.1), 64 MiB at any TP since NVIDIA/TensorRT-LLM PR #9145 ("Enlarged the AllReduce
    workspace size to 64MB", merged 2025-11; ``_torch/distributed/allreduce_helper.py``), taken
    here from 1.2. E.g. TP 8 from 1.2: 4 x 64 MiB x 8 = 2 GiB (+ 2 KiB); TP 2 in 1.1: 128 MB.
    Counted with or without peer access (whether IpcMemory allocates when P2P is off was not
    read; every TP >= 2 point here is NVLink)."""
    if tp <= 1:
        return 0
    if version_key(version) >= (1, 2):
        size = 64 * MiB
    else:
        size = 16_000_000 if tp <= 2 else 8_000_000
    return 4 * size * tp + 256 * tp


# NCCL at TP >= 2 (communicators' channel buffers; no formula in TRT-LLM's source), one constant:
# fitted on Llama-3.1-8B bf16 on H100 SXM at TP 2 and TP 4 (aiconfigurator's TRT-LLM capacity
# points, ISL = OSL = 2048, fraction 0.8: the reserve their max concurrency implies, 3.91 and
# 4.42 GiB, less the TP-1 base, the all-reduce workspace and kvplan's activation estimate), held
# out on the other 18 H100 points (Llama-3.1-8B and Qwen3-32B-FP8, TP 1 / 2 / 4).
TRTLLM_NCCL_GIB = 1.05

# MoE models at TP >= 2 hold more outside torch than the dense ones (6.8-7.9 GiB at TP 4 and
# 7.2-12.4 at TP 8 for DeepSeek-R1, 4.4-5.3 at TP 2 for gpt-oss-120b, against 3.3-4.4 for
# Llama-3.1-8B at TP 2-4), with no formula in the source. It is not the MoE all-to-all
# workspace (MNNVL / DeepEP): ``select_alltoall_method_type`` (``_torch/modules/fused_moe/``)
# returns NotEnabled without attention DP, at TP 1, or with moe_ep_size <= top_k, and every log
# here runs without attention DP (the 1.2.0rc6.post2 TP-8 / EP-8 log prints "TRTLLMGenFusedMoE
# selects alltoall_method_type <AlltoallMethodType.NotEnabled: 0>"); kvplan refuses attention DP
# for TRT-LLM MoE models without a given reserve (TrtllmBudget.reserve). Every MoE log is on
# Blackwell and every dense TP >= 2 point on H100, so what is MoE here may partly be the GPU.
# What the fitted DeepSeek-R1 logs leave beyond the parts above grows with TP and jumps with
# expert parallelism: 3.35 GiB at TP 8 / EP 1 (FP8, 1.2.0rc6.post3, CUDA graphs to batch 1),
# 4.90 at TP 4 / EP 4 (NVFP4, 1.3.0rc10) and 6.26 at TP 8 / EP 8 (NVFP4, 1.2.0rc6.post2):
#     MoE extra = 0.48 GiB x (TP - 1) + [EP > 1] 3.19 GiB
# (the per-rank slope from the EP-1 log, 3.35 / 7; the EP step the mean of the other two less
# their slope, 3.47 and 2.92). Held out, other configurations: DeepSeek-R1 NVFP4 at TP 2 / EP 1
# on a B300 (1.3.0rc10: budget -1.4 % under the former TP-only points, +0.1 % by this rule) and
# at TP 8 / EP 1 on B200s (1.2.0rc6.post2: -1.1 %, +0.1 %); the 27 held-out replayed logs'
# median |error| 0.99 % -> 0.37 % (examples/engine-bench.md). Not held: NVIDIA's GB200 CI, whose
# CUDA-graph settings are unknown (Qwen3-235B-A22B and Kimi-K2 at TP 4 / EP 4 hold 7.34 / 6.85
# GiB outside torch, this rule with TRT-LLM's default graphs more; Qwen3-235B at TP 1 7.84).
TRTLLM_MOE_GIB_PER_TP_RANK = 0.48
TRTLLM_MOE_EP_GIB = 3.19


def trtllm_moe_extra_bytes(tp: int, ep: int) -> int:
    """The MoE models' outside-torch memory beyond the dense parts (rule above)."""
    gib = TRTLLM_MOE_GIB_PER_TP_RANK * (tp - 1) + (TRTLLM_MOE_EP_GIB if ep > 1 else 0.0)
    return int(gib * GiB)


# Not modelled: piecewise CUDA graphs (torch_compile_config.enable_piecewise_cuda_graph, off by
# default; captured for every capture_num_tokens before the estimation run, the log's "Run
# piecewise CUDA graph warmup for num tokens=8192 ... 1"). Their pool holds the context
# forward's activations, so the estimation run's torch peak falls by what the outside-torch
# memory grows: DeepSeek-R1 NVFP4 TP 8 / EP 8 peaks 12.85 / 13.03 GiB above its weights with them
# and 12.92 / 13.06 without; DeepSeek-R1 FP8 TP 8 / EP 1 at max_num_tokens 8192 +0.8-1.0 GiB
# (10.78-11.10 vs 9.90-10.05), and at 8384 / 8512 (max_seq_len 10240) +4.8 / +5.1 GiB, the
# estimation run's activation then outside the graphs (the misses of examples/engine-bench.md).



@dataclass(frozen=True, kw_only=True)
class TrtllmNonTorch:
    """The non-torch reserve by part (bytes), each with the rule that set it."""

    base: int
    allreduce_workspace: int
    nccl: int
    moe_extra: int
    cuda_graphs: int = 0
    cuda_graph_count: int = 0

    @property
    def total(self) -> int:
        return (self.base + self.allreduce_workspace + self.nccl + self.moe_extra
                + self.cuda_graphs)

    def rule(self, tp: int) -> str:
        parts = [f"TP-1 base {self.base / GiB:.2f} GiB (CUDA context, kernels; public logs)"]
        if self.cuda_graphs:
            parts.append(f"{self.cuda_graph_count} decode CUDA graphs "
                         f"{self.cuda_graphs / GiB:.2f} (per graph and layer + largest batch)")
        if self.allreduce_workspace:
            parts.append(f"all-reduce workspace {self.allreduce_workspace / GiB:.2f} "
                         "(allreduce_helper.py: 4 x size x TP)")
        if self.nccl:
            parts.append(f"NCCL {self.nccl / GiB:.2f} (dense H100 points)")
        if self.moe_extra:
            parts.append(f"MoE extra {self.moe_extra / GiB:.2f} (per TP rank + EP; "
                         "DeepSeek-R1 logs, Blackwell)")
        return f"outside torch at TP {tp}: " + " + ".join(parts)


def trtllm_non_torch(tp: int, version: str | None, *, moe: bool, ep: int = 1, layers: int = 0,
                     cuda_graph_batch_sizes: tuple[int, ...] = ()) -> TrtllmNonTorch:
    """Memory outside torch per GPU (PyTorch backend), by part; `layers` on this GPU's pipeline
    stage and the captured decode batch sizes price the CUDA graphs (none without them)."""
    return TrtllmNonTorch(
        base=int(TRTLLM_NON_TORCH_TP1_GIB * GiB),
        allreduce_workspace=trtllm_allreduce_workspace_bytes(tp, version),
        nccl=int(TRTLLM_NCCL_GIB * GiB) if tp > 1 else 0,
        moe_extra=trtllm_moe_extra_bytes(tp, ep) if moe else 0,
        cuda_graphs=trtllm_cuda_graph_bytes(layers=layers, batch_sizes=cuda_graph_batch_sizes),
        cuda_graph_count=len(cuda_graph_batch_sizes),
    )


def trtllm_non_torch_gib(tp: int, version: str | None = None, *, moe: bool = False,
                         ep: int = 1) -> float:
    return trtllm_non_torch(tp, version, moe=moe, ep=ep).total / GiB


@dataclass(frozen=True)
class TrtllmBudget:
    name: str = "trtllm"

    def check_reserve_known(self, inputs: PlanInputs) -> None:
        """Refuse, in one line, a budget kvplan cannot derive without a given reserve."""
        if inputs.trtllm_backend == "engine":
            raise InputError("--engine trtllm: the engine path's build-time buffers (activation "
                             "and runtime buffers of the TensorRT engine) are not in the "
                             "checkpoint; give --reserve-gib (memory in use after the engine "
                             "loads, less its weights) or --kv-budget-gib")
        if inputs.unified_memory:
            raise InputError("--engine trtllm on a unified-memory GPU: TensorRT-LLM counts what "
                             "the OS, page cache and other processes hold as used (49.8 GiB in "
                             "a DGX Spark log), which kvplan cannot know; give --reserve-gib "
                             "(the logged peak - weights - temporary KV) or --kv-budget-gib")

    def reserve(self, spec: ModelSpec, inputs: PlanInputs) -> Reserve:
        given = inputs.reserve_bytes is not None or inputs.kv_budget_bytes is not None
        if inputs.dp_attention and spec.moe is not None and not given:
            raise InputError("--engine trtllm --dp-attention with an MoE model: the MoE "
                             "all-to-all workspaces (MNNVL / DeepEP, enabled only with "
                             "attention DP) are not modelled; give --reserve-gib or "
                             "--kv-budget-gib")
        tokens = inputs.max_num_batched_tokens
        width = compute_element_bytes(inputs.dtype)
        forward = activation_bytes(spec, max_num_batched_tokens=tokens, tp=inputs.tp,
                                   element_bytes=width)
        moe = moe_workspace_bytes(spec, max_num_batched_tokens=tokens, tp=inputs.tp,
                                  element_bytes=width)
        graphs = () if inputs.enforce_eager else trtllm_cuda_graph_batch_sizes(
            inputs.cuda_graph_max_batch_size, inputs.cuda_graph_padding)
        non_torch = trtllm_non_torch(
            inputs.tp, inputs.engine_version, moe=spec.moe is not None, ep=inputs.ep,
            layers=vllm_layers_per_stage(spec.num_hidden_layers, inputs.pp),
            cuda_graph_batch_sizes=graphs)
        return Reserve(parts=(
            ReservePart(name="activation", bytes=forward + moe,
                        rule=f"estimation run over max_num_tokens {tokens:,} (estimate"
                             + (f"; fused-MoE buffers {moe / GiB:.2f} GiB)" if moe else ")")),
            ReservePart(name="non_torch", bytes=non_torch.total, rule=non_torch.rule(inputs.tp)),
        ))

    formula: str = "(total - weights - reserve) x free_gpu_memory_fraction"

    @staticmethod
    def kv_bytes(total: int, fraction: Any, weights: int, reserve: int) -> Any:
        return _trunc((total - weights - reserve) * fraction)

    def fraction_for(self, inputs: PlanInputs, need: int, weights: int, reserve: int) -> float:
        room = _total(inputs) - weights - reserve
        return need / room if room > 0 else float("inf")

    def default_fraction(self, inputs: PlanInputs) -> tuple[float, str]:
        return TRTLLM_DEFAULT_FRACTION, "TRT-LLM KvCacheConfig.free_gpu_memory_fraction default"

    @staticmethod
    def num_blocks(inputs: PlanInputs, budget: int, bytes_per_token: int,
                   block_size: int) -> int:
        """Blocks in the primary pool: max_tokens = budget // bytes per token (capped by the
        user's max_tokens), then whole blocks, rounded by version (PyTorch backend) or up (the
        engine path, calculateMaxNumBlocks)."""
        tokens = max(0, budget) // bytes_per_token
        if inputs.max_total_tokens is not None:
            tokens = min(tokens, inputs.max_total_tokens)
        up = (inputs.trtllm_backend == "engine"
              or trtllm_profile(inputs.engine_version).blocks_rounding == "up")
        return -(-tokens // block_size) if up else tokens // block_size


def _trunc(x: Any) -> Any:
    """int() for a float, astype(int64) (also toward zero) for a numpy array."""
    if isinstance(x, (int, float)):
        return int(x)
    import numpy as np

    return np.asarray(x, dtype=np.float64).astype(np.int64)


def _total(inputs: PlanInputs) -> int:
    if inputs.total_bytes is None:
        raise InputError("give --gpu, --gpu-mem-gib or --kv-budget-gib to plan capacity")
    return inputs.total_bytes


BUDGETS = {"vllm": VllmBudget(), "sglang": SglangBudget(), "trtllm": TrtllmBudget()}
