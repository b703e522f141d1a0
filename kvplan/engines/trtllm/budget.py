"""TensorRT-LLM's KV budget, PyTorch backend (``_torch/pyexecutor/_util.py: KvCacheCreator``,
0.20-1.3):

    kv = (total - peak of the estimation run + its temporary KV pool) x free_gpu_memory_fraction
       = (total - weights - activation - non-torch) x fraction; max_tokens = kv // per-token
    bytes, capped by the user's max_tokens; blocks rounded up to 1.1 (C++ manager), down from
    1.2 (``resource_manager.py``). The engine path rounds up and needs --reserve-gib.

The non-torch memory is an estimate from public logs, each part with its sources below; every
reserve part is reported with the rule that set it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.fitted import Fitted
from kvplan._util.units import GiB, MiB
from kvplan._util.versions import version_key
from kvplan.engines.base import total_bytes_of
from kvplan.engines.reserve import (
    Reserve,
    ReservePart,
    activation_bytes,
    compute_element_bytes,
    moe_workspace_bytes,
    trunc,
)
from kvplan.engines.trtllm.moe_alltoall import (
    alltoall_method,
    alltoall_modelled,
    one_sided_workspace_bytes,
)
from kvplan.engines.trtllm.options import trtllm_options
from kvplan.engines.vllm.budget import vllm_layers_per_stage

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec


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
        raise UnmodelledError(
            f"--engine-version {version}: kvplan models TensorRT-LLM's PyTorch backend from "
            f"{TRTLLM_PROFILES[0].version} (earlier releases size the pool without adding back "
            "the estimation run's KV cache)")
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
# (its `..._FIT` record's fitted_on) and checked on the others (tests/data/engine_logs/
# trtllm_budget_logs.json and trtllm_capacity_points.json). Of those others the benches hold out
# only the logs that share no fitted log's model, GPU, TP and EP (tests/benches/honest.py;
# examples/engine-bench.md: 9 of the 28 replayed logs not marked `fitted`). The fitted parts
# also absorb kvplan's activation error (they are fitted on peak - weights - temporary KV -
# kvplan's activation estimate).

# TP-1 base: CUDA context, kernel modules, cuBLAS / attention workspaces outside torch, without
# the decode CUDA graphs (their own part below). 1.81 GiB: gpt-oss-120b on a B200, 1.3.0rc10
# (peak 70.44, weights 65.40, temporary KV 2.25, activation estimate 0.83: 1.95 GiB left, less
# 0.14 for its 11 graphs of 36 layers). Held out: gpt-oss-120b on a B300 (5 logs, outside torch
# before the run less the temporary pool 1.87-2.05 GiB, with 1-11 graphs) and on a GB200
# (NVIDIA's CI, 1.97); Llama-3.1-8B bf16 on an H100 (aiconfigurator's TRT-LLM capacity points,
# TP 1: within one sequence); not a dense TinyLlama-1.1B on an RTX 6000 Ada (1.1.0: 1.11 GiB with
# 34 graphs, budget -2.2 %).
TRTLLM_NON_TORCH_TP1_GIB = 1.81
TRTLLM_NON_TORCH_TP1_GIB_FIT = Fitted(
    value=TRTLLM_NON_TORCH_TP1_GIB, source="gpt-oss-120b on a B200, 1.3.0rc10",
    fitted_on=("zufayu-b200-gptoss120b-tp1-ep1-1.3.0rc10-fp4_throughput_chat_ep1_c64",))

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
# unit of the largest batch and layer. Checked outside this fit: DeepSeek-R1 NVFP4 TP 4
# 1.3.0rc10 to 4 / 64 (+0.19 logged, +0.19 by this rule; not held out: the MoE EP step below
# was fitted on the run to 4), and, held out, gpt-oss-120b on a B300 to 1 / 16 / 64 (+0.05 and
# +0.13 logged; +0.05, +0.13) and, with the CUTLASS MoE, to 1 / 64 (+0.08; +0.13). A per-graph cost
# alone (0.36 MiB) misses the graph at 256 (0.02 vs 0.15 GiB).
# Fitted on (bench row ids, trtllm_budget_logs.json):
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
TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER = 0.255
TRTLLM_CUDA_GRAPH_MIB_PER_BATCH_LAYER = 0.0179
TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER_FIT = Fitted(
    value=TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER,
    source="growth of the outside-torch memory between logs of one configuration: DeepSeek-R1 "
           "FP8 TP 8 (graphs to 1-32) and NVFP4 TP 8 / EP 8 (to 128 / 256); commit 3bd4ba2",
    fitted_on=_TRTLLM_CUDA_GRAPHS)
TRTLLM_CUDA_GRAPH_MIB_PER_BATCH_LAYER_FIT = Fitted(
    value=TRTLLM_CUDA_GRAPH_MIB_PER_BATCH_LAYER,
    source="the same fit as TRTLLM_CUDA_GRAPH_MIB_PER_GRAPH_LAYER", fitted_on=_TRTLLM_CUDA_GRAPHS)


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
TRTLLM_NCCL_GIB_FIT = Fitted(
    value=TRTLLM_NCCL_GIB,
    source="aiconfigurator's Llama-3.1-8B bf16 H100 points at TP 2 and TP 4, ISL = OSL = 2048, "
           "fraction 0.8",
    fitted_on=("aiconfigurator-h100_sxm-llama-3.1-8b-tp2-isl2048-osl2048-f0.8",
               "aiconfigurator-h100_sxm-llama-3.1-8b-tp4-isl2048-osl2048-f0.8"))

# MoE models at TP >= 2 hold more outside torch than the dense ones (6.8-7.9 GiB at TP 4 and
# 7.2-12.4 at TP 8 for DeepSeek-R1, 4.4-5.3 at TP 2 for gpt-oss-120b, against 3.3-4.4 for
# Llama-3.1-8B at TP 2-4), with no formula in the source. It is not the MoE all-to-all
# workspace (MNNVL / DeepEP): ``select_alltoall_method_type`` (``_torch/modules/fused_moe/``)
# returns NotEnabled without attention DP, at TP 1, or with moe_ep_size <= top_k, and every log
# here runs without attention DP (the 1.2.0rc6.post2 TP-8 / EP-8 log prints "TRTLLMGenFusedMoE
# selects alltoall_method_type <AlltoallMethodType.NotEnabled: 0>"); with attention DP the
# all-to-all's own workspace is a part of its own (kvplan.engines.trtllm.moe_alltoall; before 1.2
# refused, TrtllmBudget.reserve). Every MoE log is on
# Blackwell and every dense TP >= 2 point on H100, so what is MoE here may partly be the GPU.
# What the fitted DeepSeek-R1 logs leave beyond the parts above grows with TP and jumps with
# expert parallelism: 3.35 GiB at TP 8 / EP 1 (FP8, 1.2.0rc6.post3, CUDA graphs to batch 1),
# 4.90 at TP 4 / EP 4 (NVFP4, 1.3.0rc10) and 6.26 at TP 8 / EP 8 (NVFP4, 1.2.0rc6.post2):
#     MoE extra = 0.48 GiB x (TP - 1) + [EP > 1] 3.19 GiB
# (the per-rank slope from the EP-1 log, 3.35 / 7; the EP step the mean of the other two less
# their slope, 3.47 and 2.92). Held out, other configurations: DeepSeek-R1 NVFP4 at TP 2 / EP 1
# on a B300 (1.3.0rc10: budget -1.4 % under the former TP-only points, +0.1 % by this rule) and
# at TP 8 / EP 1 on B200s (1.2.0rc6.post2: -1.1 %, +0.1 %); the 27 replayed logs then not
# marked `fitted`: median |error| 0.99 % -> 0.37 % (most of them share a fitted log's
# configuration: the benches' held-out split is examples/engine-bench.md's). Not held: NVIDIA's
# GB200 CI, whose CUDA-graph settings are unknown (Qwen3-235B-A22B and Kimi-K2 at TP 4 / EP 4
# hold 7.34 / 6.85 GiB outside torch, this rule with TRT-LLM's default graphs more; Qwen3-235B
# at TP 1 7.84).
TRTLLM_MOE_GIB_PER_TP_RANK = 0.48
TRTLLM_MOE_EP_GIB = 3.19
TRTLLM_MOE_GIB_PER_TP_RANK_FIT = Fitted(
    value=TRTLLM_MOE_GIB_PER_TP_RANK,
    source="DeepSeek-R1 FP8 TP 8 / EP 1 (graphs to batch 1): 3.35 GiB / 7",
    fitted_on=("zufayu-b200-dsr1-fp8-tp8-ep1-1.2.0rc6.post3-fp8_throughput_chat_ep1_c1",))
TRTLLM_MOE_EP_GIB_FIT = Fitted(
    value=TRTLLM_MOE_EP_GIB,
    source="DeepSeek-R1 NVFP4 TP 4 / EP 4 (1.3.0rc10) and TP 8 / EP 8 (1.2.0rc6.post2), less the "
           "per-rank slope",
    fitted_on=("zufayu-b200-dsr1-fp4-tp4-ep4-1.3.0rc10-fp4_throughput_chat_ep4_c4",
               "zufayu-b200-dsr1-fp4-tp8-ep8-1.2.0rc6.post2-fp4_throughput_chat_ep8_c4"))


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
    moe_alltoall: int = 0  # NVLinkOneSided's workspace (kvplan.engines.trtllm.moe_alltoall)

    @property
    def total(self) -> int:
        return (self.base + self.allreduce_workspace + self.nccl + self.moe_extra
                + self.cuda_graphs + self.moe_alltoall)

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
        if self.moe_alltoall:
            parts.append(f"MoE all-to-all workspace {self.moe_alltoall / GiB:.2f} (attention DP: "
                         "NVLinkOneSided, moe_alltoall.py calculate_required_workspace_size)")
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
        if trtllm_options(inputs).trtllm_backend == "engine":
            raise UnmodelledError(
                "--engine trtllm: the engine path's build-time buffers (activation "
                "and runtime buffers of the TensorRT engine) are not in the "
                "checkpoint; give --reserve-gib (memory in use after the engine "
                "loads, less its weights) or --kv-budget-gib")
        if inputs.unified_memory:
            raise UnmodelledError(
                "--engine trtllm on a unified-memory GPU: TensorRT-LLM counts what "
                "the OS, page cache and other processes hold as used (49.8 GiB in "
                "a DGX Spark log), which kvplan cannot know; give --reserve-gib "
                "(the logged peak - weights - temporary KV) or --kv-budget-gib")

    def reserve(self, spec: ModelSpec, inputs: PlanInputs) -> Reserve:
        given = inputs.reserve_bytes is not None or inputs.kv_budget_bytes is not None
        if inputs.dp_attention and spec.moe is not None and not given \
                and not alltoall_modelled(inputs.engine_version):
            raise InputError(f"--engine trtllm --engine-version {inputs.engine_version} "
                             "--dp-attention with an MoE model: before 1.2 the MoE all-to-all "
                             "workspaces (MNNVL two-sided, enabled only with attention DP) are "
                             "not modelled; give --reserve-gib or --kv-budget-gib")
        opts = trtllm_options(inputs)
        tokens = inputs.max_num_batched_tokens
        width = compute_element_bytes(inputs.dtype)
        forward = activation_bytes(spec, max_num_batched_tokens=tokens, tp=inputs.tp,
                                   element_bytes=width)
        moe = moe_workspace_bytes(spec, max_num_batched_tokens=tokens, tp=inputs.tp,
                                  element_bytes=width)
        graphs = () if inputs.enforce_eager else trtllm_cuda_graph_batch_sizes(
            opts.cuda_graph_max_batch_size, opts.cuda_graph_padding)
        non_torch = trtllm_non_torch(
            inputs.tp, inputs.engine_version, moe=spec.moe is not None, ep=inputs.ep,
            layers=vllm_layers_per_stage(spec.num_hidden_layers, inputs.pp),
            cuda_graph_batch_sizes=graphs)
        if spec.moe is not None and alltoall_method(
                dp_attention=inputs.dp_attention, tp=inputs.tp, ep=inputs.ep,
                capability=inputs.compute_capability, nvlink=inputs.nvlink) == "NVLinkOneSided":
            non_torch = replace(non_torch, moe_alltoall=one_sided_workspace_bytes(
                ep=inputs.ep, top_k=spec.moe.num_experts_per_tok, max_num_tokens=tokens,
                hidden=spec.hidden_size, element_bytes=width))
        return Reserve(parts=(
            ReservePart(name="activation", bytes=forward + moe,
                        rule=f"estimation run over max_num_tokens {tokens:,} (estimate"
                             + (f"; fused-MoE buffers {moe / GiB:.2f} GiB)" if moe else ")")),
            ReservePart(name="non_torch", bytes=non_torch.total, rule=non_torch.rule(inputs.tp)),
        ))

    formula: str = "(total - weights - reserve) x free_gpu_memory_fraction"

    @staticmethod
    def kv_bytes(total: int, fraction: Any, weights: int, reserve: int) -> Any:
        return trunc((total - weights - reserve) * fraction)

    def fraction_for(self, inputs: PlanInputs, need: int, weights: int, reserve: int) -> float:
        room = total_bytes_of(inputs) - weights - reserve
        return need / room if room > 0 else float("inf")

    def default_fraction(self, inputs: PlanInputs) -> tuple[float, str]:
        return TRTLLM_DEFAULT_FRACTION, "TRT-LLM KvCacheConfig.free_gpu_memory_fraction default"

    @staticmethod
    def num_blocks(inputs: PlanInputs, budget: int, bytes_per_token: int,
                   block_size: int) -> int:
        """Blocks in the primary pool: max_tokens = budget // bytes per token (capped by the
        user's max_tokens), then whole blocks, rounded by version (PyTorch backend) or up (the
        engine path, calculateMaxNumBlocks)."""
        opts = trtllm_options(inputs)
        tokens = max(0, budget) // bytes_per_token
        if opts.max_total_tokens is not None:
            tokens = min(tokens, opts.max_total_tokens)
        up = (opts.trtllm_backend == "engine"
              or trtllm_profile(inputs.engine_version).blocks_rounding == "up")
        return -(-tokens // block_size) if up else tokens // block_size


BUDGET = TrtllmBudget()
