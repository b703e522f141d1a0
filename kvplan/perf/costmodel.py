"""Predicted decode and prefill time: a roofline summed over the operations of a step.

Every operation of a step (per layer: the attention projections, the attention over the cache,
the MLP or the experts, the collectives; then the lm_head) costs

    max(FLOPs / (peak of its dtype x gemm or attention efficiency),
        bytes / (HBM bandwidth x hbm efficiency),
        kernel floor)

and the step is the sum, plus a floor for each small kernel (norms, RoPE, activation, top-k)
that moves too little to register. This is not the old one-max-per-step roofline: a step whose
attention is compute-bound and whose weights are memory-bound pays for both.

Defaults and where they come from (all overridable with `Efficiency`):

- hbm 0.90: FlashMLA reaches 3,000 GB/s of the H800's 3.35 TB/s in its memory-bound
  configuration (https://github.com/deepseek-ai/FlashMLA, README);
- attention 0.60: the same kernel's compute-bound 580 TFLOPS (660 in the 2025-04 release) of the
  H800's 989 dense bf16 TFLOPS (0.59-0.67);
- gemm 0.70: DeepGEMM's FP8 GEMMs reach up to 1,550 of 1,979 TFLOPS on H800 at the best shapes
  and 0.5-0.75 of it at serving shapes (https://github.com/deepseek-ai/DeepGEMM, README);
  the same fraction is used for bf16 GEMMs;
- fp8_gemm_hbm 0.69: FP8 (block-scaled, w8a8) GEMMs at decode sizes stream their weights more
  slowly than a plain copy: DeepGEMM's README table (H800, the twelve DeepSeek-V3 shapes at
  M = 64 and 128) gives 1,509-2,668 GB/s, median 2,299 GB/s of the 3.35 TB/s HBM (0.69) -
  activation quantization, scale loads and the fp32 promotion of every 128-wide K block cost
  bandwidth. bf16 and weight-only GEMMs use `hbm`;
- kernel floor 4 us: the per-kernel time of short kernels launched from a CUDA graph (NVIDIA,
  "Getting Started with CUDA Graphs": 3.4 us per kernel,
  https://developer.nvidia.com/blog/cuda-graphs/), rounded up. The floor is per *kernel*: an
  operation that the engines run as k GEMM kernels costs at least k floors (with its bytes split
  evenly over them, exactly max(FLOPs / rate, bytes / bandwidth, k x floor)). Per layer: GQA/MHA
  projections are 2 kernels (the fused QKVParallelLinear and o_proj, vLLM
  model_executor/models/llama.py); MLA's are 3 (fused q_a + kv_a, q_b, o_proj: SGLang
  models/deepseek_v2.py `fused_qkv_a_proj_with_mqa`) plus the absorbed form's two batched
  matmuls (W_UK before attention, W_UV after) or the decompressed form's kv_b GEMM; a dense MLP
  and the routed experts are 2 each (merged gate_up, then down; fused_moe's w13 and w2). At
  decode sizes on TP 8 many of these GEMMs move less than a floor's worth of bytes (DeepSeek-V3's
  q_b_proj is 4.7 MB per rank, 1.4 us at 3.35 TB/s), so lumping them under one floor undercounts.
  The router's top-k is one kernel, except where SGLang has no fused kernel for the
  architecture's routing (GLM-4.5 / 4.6: a torch.compile'd biased grouped top-k of ~10 kernels,
  `topk_kernels`); GLM-4.5's one shared expert runs inside fused_moe on CUDA
  (`fused_shared_expert`), with no kernels or prefill ops of its own. Both read from SGLang
  0.5.6's code (COMPILED_GROUPED_TOPK_MODEL_TYPES, FUSED_SHARED_EXPERT_MODEL_TYPES), not fitted.
- FP8 (w8a8) GEMMs are two kernels each: the activations are quantized first
  (SGLang layers/quantization/fp8_utils.py `apply_w8a8_block_fp8_linear` runs
  `per_token_group_quant_fp8` before the block-FP8 GEMM; fused_moe quantizes before each of its
  two grouped GEMMs; vLLM's W8A8BlockFp8LinearOp likewise), so such an operation costs at least
  2k floors.
- prefill launch 70 us per launched op: FITTED. Engines replay decode steps from CUDA graphs,
  but SGLang runs every prefill (extend) batch eagerly (model_executor/cuda_graph_runner.py
  captures decode batch sizes only; server_args.py 0.5.x: enable_piecewise_cuda_graph = False,
  enable_mixed_chunk = False, so a prefill batch also runs apart from decode): each op is
  launched from Python (module call, PyTorch dispatch, custom-op wrapper). The step's CPU
  time is the ops SGLang's model code launches (`eager_prefill_ops`, counted per
  architecture from its model files, below) x `prefill_launch_s`, and it is ADDED to the
  step's GPU time at the graph floor. The sum, not the max, because the fit data say so:
  charging max(GPU, CPU) needs 79-93 us per op for the three short DeepSeek prefills and
  137 us for the GPU-heavy 16 x 512 one; the sum needs 59-77 us for all four. 70 us is the
  median, over the 4 engine-timed prefills of examples/cost-bench.md (SGLang
  `bench_one_batch` "Prefill. latency", DeepSeek-V3/R1 on 8x H200, Feb / Apr / Dec 2025:
  1 x 128, 1 x 1000 twice, 16 x 512 tokens), of the value that makes each exact. Every
  Qwen3 / Llama prefill and TTFT is held out from it. vLLM replays batches of up to
  max_cudagraph_capture_size tokens (default min(2 x max_num_seqs, 512): vllm/config/vllm.py
  `_set_cudagraph_sizes`) from piecewise CUDA graphs, and TensorRT-LLM runs its compiled
  engine: `Efficiency(prefill_launch_s=0)` (`engine_efficiency`). vLLM's longer prefills run
  its torch.compile'd code outside graphs, with fused ops; no measurement here times their
  launches, so they get none.
  A collective is a kernel too: at least one floor.
- layer overhead 35 us per decoder layer per step: FITTED, not read from a kernel table. It is
  the median, over the 8 dense single-GPU cases of examples/cost-bench.md (Qwen3-8B on an H100
  under vLLM 0.11, SGLang 0.5.3 and TensorRT-LLM 1.2.0rc1, Llama-2-7B under gpt-fast on an
  A100), of (measured TPOT - prediction without it) / layers: 29-43 us, median 35 us. It stands
  for per-layer work the operation list does not itemise (the router GEMM, q/k norms and
  residual adds counted as no kernel of their own, each GEMM's ramp-up and tail below its
  streaming rate, CPU gaps between graph replays). Every TP, MoE and EP case of the bench is
  held out (cost-bench.md reports both). `Efficiency(layer_overhead_s=0)` removes it.

Recurrent layers (Gated DeltaNet, Mamba2 and the other kinds of kvplan.model.spec.RECURRENT_FIELDS):
the mixer's projections are GEMMs over its weights (`RecurrentMixerOps.decode_gemm_kernels`
kernels in a decode step), and its state update reads and writes every request's conv and SSM
state once per step (kvplan.kv.cache.recurrent_state, in the dtypes the engine keeps: SGLang a
float32 SSM state by default, server_args.py --mamba-ssm-dtype; vLLM the model dtype unless
the config fixes it), with `recurrent_state_flops_per_token` (Gated DeltaNet's prefill in its
chunked form). An eager SGLang prefill launches `RecurrentMixerOps.extend_ops` per mixer,
counted from SGLang 0.5.6's code for Gated DeltaNet and Mamba2; the other kinds keep a
five-op placeholder (`counted_from_code` is False).

The fractions above are NVIDIA kernels' (FlashMLA, DeepGEMM, CUDA graphs) and are the defaults of
every CUDA preset. AMD Instinct presets get their own (`device_efficiency`, `DEVICE_EFFICIENCY`),
from ROCm kernel measurements; nothing in them is fitted to the bench, whose MI300X rows stay held
out. MI300X (CDNA 3, 304 CUs):

- hbm 0.80: STREAM on Azure ND MI300X v5 reaches Copy 4.11, Mul 4.26, Add 4.14, Triad 4.09 TB/s
  of 5.3 (0.78-0.80; the same harness on ND H100 v5: 2.90-2.97 of 3.35, 0.87-0.89), index file
  id 17849256347 (github.com/samuel-bohman/AI-benchmarking-guide, a fork of
  Azure/AI-benchmarking-guide, Azure_Results/ND_MI300X_v5_results.md); "MI300X achieves 81% of
  its theoretical peak memory bandwidth" with BabelStream (arXiv 2510.27583,
  https://arxiv.org/abs/2510.27583);
- gemm 0.54, fp8_gemm 0.49: AMD's Max-Achievable FLOPs, hipBLASLt at the best shape, MI300X
  "708 TFLOPs (1207 MHz)" bf16 and "1273 TFLOPs (1230 MHz)" FP8 of the 1,307.4 / 2,614.9 dense
  peaks (https://rocm.blogs.amd.com/software-tools-optimization/measuring-max-achievable-flops-
  part2/README.html, Table 1; the clock under dense GEMM load is 1.2 of the 2.1 GHz the peak
  assumes). A best-shape maximum, so at least as optimistic as NVIDIA's 0.70;
- fp8_gemm_hbm 0.77: aiter's fused block-FP8 MoE (the kernel that streams the FP8 expert weights
  on ROCm SGLang) in its own tuned table, ROCm/aiter
  aiter/configs/model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv at e4048607 (cu_num 304,
  model_dim 7168, inter_dim 2048, 33 experts, top-9): 4,102.9 / 4,091.9 / 4,002.3 GB/s at 16 /
  32 / 64 tokens, where every expert is touched (the table's `bw` counts all 33), median
  4,092 GB/s of 5.3 TB/s. aiter's dense block-FP8 GEMMs at DeepSeek-V3's TP-8 decode shapes
  (a8w8_blockscale_tuned_gemm_ds_v3.csv, gfx942, M = 64 and 128, 24 rows) are latency-bound
  instead: 3.9-31 us each, median 765 GB/s, 10-31 us at K = 7168 (not modelled: kvplan charges a
  w8a8 GEMM at least two 4 us floors). Its large dense ones stream more slowly than the MoE too
  (the gfx942 rows of all its block-FP8 GEMM tables with >= 40 MB of weights at M <= 128: median
  1,537 GB/s, best 3,258), so a dense FP8 model's decode on an MI300X is likely predicted faster
  than it runs: one fraction serves every w8a8 GEMM here, and the MoE's is the one the bench's
  MI300X rows stream most bytes through;
- moe floor 67.4 us: the least time of aiter's fused block-FP8 MoE (stage 1 + stage 2, the
  table's `us`) in its gfx942 tables, a8w8_blockscale_tuned_fmoe_glm5_1.csv (257 experts,
  inter_dim 256, top-9, the many-small-experts TP-8 shape: 67.4 / 71.1 us at 1 / 2 tokens) and
  _ds_v3.csv (33 experts, inter_dim 2048: 99.2 us at 1 token, bandwidth-bound); kvplan would
  otherwise charge the two grouped GEMMs and their quantizations 4 floors, 16 us. CUDA presets
  keep the floors (no NVIDIA fused-MoE table was read);
- attention 0.60 and the kernel floor 4 us are NVIDIA's: no ROCm measurement of an MLA decode
  kernel's compute fraction or of HIP-graph kernel spacing was found (aiter's smallest tuned
  GEMM kernels take 3.0-3.5 us, which a 4 us floor does not contradict).

MI325X (the MI300X die, HBM3E): gemm 0.645 / fp8_gemm 0.581 from the same AMD table ("843
TFLOPs", "1519 TFLOPs"); the rest carried over from the MI300X (aiter's cu_num-304 tables do not
say which of the two ran them). MI355X (CDNA 4): fp8_gemm_hbm 0.74 from the same aiter file's
gfx950 rows (cu_num 256, 257 experts, top-9, 128 tokens: 5,844 GB/s at inter_dim 256 and 6,001 at
512, of 8 TB/s) and the moe floor 56.8 us, the least `us` of those rows (inter_dim 512, 1 token;
77.5 us at inter_dim 256); no MI355X STREAM or MAF figure was found, so hbm and gemm are the
MI300X's.
The engine and fitted constants (prefill launch, layer overhead) are the same for every device.
An explicit `Efficiency` replaces the device's whole; `replace(device_efficiency(gpu), ...)`
changes one field.

FP8 peaks apply only to GEMMs whose weights are stored in FP8 (w8a8); attention runs in bf16
(DeepSeek runs MLA in bf16) unless `fp8_attention`. Weight-only int4/fp4 GEMMs compute in bf16.

Layouts: `tp` splits attention, dense MLP and (without `ep`) experts over ranks, with two
all-reduces per layer; `dp_attention` gives each rank its own requests, whole attention and dense
layers; `ep` spreads whole experts over ranks, with an all-to-all dispatch (FP8, as DeepEP's
low-latency kernels) and combine (bf16) per MoE layer. Collectives inside one NVLink
domain use the scale-up interconnect, beyond it the scale-out one; the domain is an 8-GPU node,
or a 72-GPU NVL72 rack for the GB200 / GB300 presets (kvplan.hardware.interconnect.scale_up_gpus). A TP
all-reduce on NVLink is the engines' custom one-shot / two-shot kernel (vLLM / SGLang dispatch
by world size and bytes; fixed parts measured in CUDA graphs per NVLink generation, one-shot /
two-shot: 5.7 / 13.1 us on H100, 7.0 / 19.0 us on B300, 10 / 20 us unmeasured on A100), beyond
8 MiB or off NVLink an NCCL ring (`Interconnect.all_reduce_s`).

Fused all-reduce + residual + RMSNorm: where an engine runs each TP all-reduce and the RMSNorm
after it as one kernel by default (`AllReduceNormFusion`; SGLang 0.5.6 for DeepseekV3ForCausalLM
on SM 10.x and GptOssForCausalLM on Blackwell, one node, up to 2,048 tokens a step:
kvplan.engines.sglang.engine.SGLANG_ALLREDUCE_NORM_FUSION, set by `engine_efficiency("sglang")`),
that norm costs no kernel floor in the step (and no op of an eager prefill): 2 x layers - 1 per
step, the first layer's input norm having no all-reduce before it. The all-reduce keeps its time.
Read from the engine's code, not fitted.

MTP / speculative decoding: a step verifies `1 + draft_tokens` tokens per request and runs the
draft module `draft_tokens` times (one decoder layer and the lm_head each); with a per-token
acceptance rate a it emits 1 + a + a^2 + ... + a^k tokens per request (DeepSeek-V3 report,
sec. 5.4.3: 85-90 % acceptance of the second token, the default 0.85).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from kvplan._util.errors import InputError
from kvplan.engines.base import AllReduceNormFusion, Engine
from kvplan.hardware.gpus import GPU
from kvplan.hardware.interconnect import (
    INTERCONNECTS,
    Interconnect,
    default_interconnect,
    scale_up_gpus,
)
from kvplan.kv.cache import activation_dtype, attention_token_bytes, recurrent_state
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec, RecurrentSpec
from kvplan.perf.flops import (
    MLAForm,
    attended_tokens,
    attention_flops,
    recurrent_state_flops_per_token,
)
from kvplan.weights.params import count_params, recurrent_params

US = 1e-6


def _fusion_applies(fusion: AllReduceNormFusion, spec: ModelSpec, gpu: GPU, layout: Layout,
                    tokens: int) -> bool:
    """Whether a step takes an engine's fused TP all-reduce + residual add + RMSNorm
    (kvplan.engines.base.AllReduceNormFusion: FlashInfer's trtllm_allreduce_fusion, pattern
    kARResidualRMSNorm, in place of the all-reduce and the fused_add_rmsnorm after it): on the
    engine's architectures and GPU presets, for steps of at most `max_tokens` tokens on a TP
    group of 2 to `max_ranks` GPUs (one node), without DP attention or expert-parallel
    all-to-all. That step's RMSNorm after each fused all-reduce costs no kernel of its own
    (`step_time`); the all-reduce keeps its time (the norm is the kernel's epilogue)."""
    return (spec.model_type in fusion.model_types and gpu.name in fusion.gpus
            and 1 < layout.tp <= fusion.max_ranks and not layout.dp_attention
            and layout.ep == 1 and 0 < tokens <= fusion.max_tokens)


def fuses_allreduce_norm(spec: ModelSpec, gpu: GPU, layout: Layout, tokens: int,
                         eff: Efficiency) -> bool:
    """Whether a step of `tokens` tokens runs `eff`'s fused all-reduce + RMSNorm."""
    fusion = eff.allreduce_norm_fusion
    return fusion is not None and _fusion_applies(fusion, spec, gpu, layout, tokens)


def _fused_norms(spec: ModelSpec, i: int, first: int) -> tuple[bool, bool]:
    """(input norm, post-attention norm) of layer `i` that a fused all-reduce absorbs, in a step
    whose first layer is `first`: the post-attention norm takes the attention's all-reduce; the
    input norm the previous layer's MLP all-reduce (none before the step's first layer)."""
    attn = spec.has_attention(i)
    return (attn and i != first and spec.has_mlp(i - 1), attn and spec.has_mlp(i))


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """Achievable fractions of the datasheet peaks (see the module docstring for sources)."""

    hbm: float = 0.90
    fp8_gemm_hbm: float = 0.69
    gemm: float = 0.70
    fp8_gemm: float | None = None  # FP8 (w8a8) GEMMs' fraction of the FP8 peak; None: `gemm`
    attention: float = 0.60
    kernel_floor_s: float = 4 * US
    # Least time of one fused-MoE call at decode sizes, measured; None: its kernels' floors.
    moe_floor_s: float | None = None
    # CPU time per op of a prefill step launched from Python (SGLang): FITTED (docstring).
    prefill_launch_s: float = 70 * US
    layer_overhead_s: float = 35 * US  # fitted on the dense 1-GPU bench cases (docstring)
    step_overhead_s: float = 0.0  # engine time per step outside the GPU (scheduling, sampling)
    # The engine's fused all-reduce + RMSNorm, where it has one (`engine_efficiency`); None: none.
    allreduce_norm_fusion: AllReduceNormFusion | None = None

    def __post_init__(self) -> None:
        for name in ("hbm", "fp8_gemm_hbm", "gemm", "attention"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise InputError(f"{name} efficiency must be in (0, 1], got {value}")
        if self.fp8_gemm is not None and not 0 < self.fp8_gemm <= 1:
            raise InputError(f"fp8_gemm efficiency must be in (0, 1], got {self.fp8_gemm}")
        if self.moe_floor_s is not None and self.moe_floor_s < 0:
            raise InputError(f"moe_floor_s must be >= 0, got {self.moe_floor_s}")
        for name in ("kernel_floor_s", "prefill_launch_s", "layer_overhead_s",
                     "step_overhead_s"):
            value = getattr(self, name)
            if value < 0:
                raise InputError(f"{name} must be >= 0, got {value}")


DEFAULT_EFFICIENCY = Efficiency()

# AMD Instinct presets: achievable fractions from ROCm kernel measurements (module docstring:
# sources, and which values are carried over from the MI300X). Every other preset (CUDA) gets
# DEFAULT_EFFICIENCY.
MI300X_EFFICIENCY = Efficiency(hbm=0.80, fp8_gemm_hbm=0.77, gemm=0.54, fp8_gemm=0.49,
                               moe_floor_s=67.4 * US)
DEVICE_EFFICIENCY: dict[str, Efficiency] = {
    "MI300X": MI300X_EFFICIENCY,
    "MI325X": replace(MI300X_EFFICIENCY, gemm=0.645, fp8_gemm=0.581),
    "MI355X": replace(MI300X_EFFICIENCY, fp8_gemm_hbm=0.74, moe_floor_s=56.8 * US),
}


def device_efficiency(gpu: GPU) -> Efficiency:
    """The achievable fractions kvplan assumes on `gpu` (its preset's, else the CUDA defaults)."""
    return DEVICE_EFFICIENCY.get(gpu.name, DEFAULT_EFFICIENCY)

def engine_efficiency(engine: str, eff: Efficiency = DEFAULT_EFFICIENCY) -> Efficiency:
    """`eff` as `engine` (an --engine name) launches its prefill kernels and fuses its
    all-reduces (kvplan.engines.base.CostTraits). Engines that launch prefill ops one by one
    from Python, outside CUDA graphs (SGLang), pay `prefill_launch_s` per launched prefill op
    (`eager_prefill_ops`); vLLM replays prefills of up to 512 tokens (by default) from piecewise
    CUDA graphs and TensorRT-LLM runs its engine: no launch time (vLLM's longer,
    torch.compile'd prefills are not measured here: none either)."""
    traits = Engine(engine).rules.cost_traits
    eff = replace(eff, allreduce_norm_fusion=traits.allreduce_norm_fusion)
    return eff if traits.eager_prefill else replace(eff, prefill_launch_s=0.0)
DEFAULT_MTP_ACCEPTANCE = 0.85

# Small kernels per layer besides the matmuls and attention (each costs the kernel floor):
# attention block: input norm, RoPE (+ q/k norm), KV-cache write, residual add;
# MLP: post-attention norm, activation; MoE: + permute, unpermute/reduce, and the router's
# top-k (`topk_kernels`); MLA: + q_a and kv_a norms; recurrent mixer (decode, CUDA graph): input
# norm, the split of the projections (Qwen3-Next's fused_qkvzba_split_reshape_cat), the
# conv-state update, the gated norm (Mamba2: the output copy instead of the split).
_ATTN_KERNELS, _MLA_EXTRA, _MLP_KERNELS, _MOE_EXTRA, _REC_KERNELS = 4, 2, 2, 2, 4

# Architectures whose SGLang MoE block routes with a biased grouped top-k that no fused kernel
# serves on CUDA, so that it runs a torch.compile'd graph of several kernels. SGLang 0.5.6 (pip
# wheel sglang==0.5.6; the bench's GLM-4.6 rows ran 0.5.6.post1) models/glm4_moe.py
# Glm4MoeSparseMoeBlock builds `TopK(use_grouped_topk=True, num_expert_group=config.n_group,
# correction_bias=self.gate.e_score_correction_bias, ...)`; layers/moe/topk.py
# biased_grouped_topk_gpu takes the fused `moe_fused_gate` only when
# `gating_output.shape[1] // num_expert_group <= 32` and `is_power_of_two(correction_bias.shape[0])`
# (DeepSeek-V3: 256 experts in 8 groups, 32 per group) and `kimi_k2_moe_fused_gate` only for 384
# experts in one group (Kimi-K2); GLM-4.5 / 4.6 (160 experts, n_group 1) and GLM-4.5-Air (128,
# n_group 1) have more than 32 experts per group, so they take `biased_grouped_topk_impl`,
# decorated `@torch.compile(dynamic=True)`. Qwen3-MoE (`fused_topk`: topk_softmax) and MiniMax-M2
# (`use_grouped_topk` off: topk_sigmoid) launch one kernel.
COMPILED_GROUPED_TOPK_MODEL_TYPES = frozenset({"glm4_moe"})
# Kernels of that compiled top-k per decode step: the three torch.topk calls of
# biased_grouped_topk_impl (top-2 per group, top-k_group groups unsorted, the top-k experts,
# sorted when the shared expert is fused) are aten fallbacks; PyTorch's CUDA topk
# (aten/src/ATen/native/cuda/TensorTopK.cpp, index file id 6394919336) runs one gatherTopK
# kernel for slices this small (TensorTopK.cu should_use_multiblock: single-block below 5,000
# elements, index file id 1580386956) "if (sorted && values.numel() > 1)" a sortKeyValueInplace
# after it: 2 + 1 + 2 = 5. Inductor fuses the rest into 4 kernels (sigmoid + bias; the group
# sums; the mask scatter and masked_fill; gather, the shared-expert slot and renormalisation:
# counted in its generated code for the function, torch 2.13 with the CPU backend, as no GPU
# was at hand), and its RNG seeds for `torch.randint` (the fused shared expert's slot) are one
# more: 10. An estimate of the CUDA code, not a profile. A profile agrees: when SGLang replaced
# the same PyTorch path with moe_fused_gate for DeepSeek-V3 (H200, TP 8, bench_serving with
# --profile), "Only one kernel now. 36us->8us." (https://github.com/sgl-project/sglang/pull/5371):
# 36 us for the PyTorch top-k, against 10 x 4 us here. Not fitted to it.
_COMPILED_GROUPED_TOPK_KERNELS = 10

# Architectures whose SGLang model folds its one shared expert into fused_moe as an extra
# expert that every token picks (top_k + 1): models/glm4_moe.py (0.5.6)
# `num_fused_shared_experts = 0 if disable_shared_experts_fusion else config.n_shared_experts`,
# kept by Glm4MoeForCausalLM.determine_num_fused_shared_experts on CUDA (SM 80 or newer) without
# expert parallelism or DeepEP; server_args.py sets --disable-shared-experts-fusion only with
# the flashinfer_trtllm MoE runner (FP8 / FP4). The shared MLP then launches nothing of its
# own and its add to the routed output goes (forward_normal, `shared_output` None); the
# dual-stream path is not taken. Not DeepSeek's (models/deepseek_v2.py decides apart; the
# bench's DeepSeek rows count the shared expert apart: `_moe_block_ops`).
FUSED_SHARED_EXPERT_MODEL_TYPES = frozenset({"glm4_moe"})


def topk_kernels(spec: ModelSpec, platform: str = "cuda") -> int:
    """Kernels the router's top-k launches in one decode step (CUDA graph) on `platform`.
    ROCm keeps one: its biased grouped top-k is aiter's kernel under SGLANG_USE_AITER, and no
    ROCm GLM row was read."""
    if platform == "cuda" and spec.model_type in COMPILED_GROUPED_TOPK_MODEL_TYPES:
        return _COMPILED_GROUPED_TOPK_KERNELS
    return 1


def fused_shared_expert(spec: ModelSpec, layout: Layout, platform: str = "cuda") -> bool:
    """Whether SGLang runs `spec`'s one shared expert inside fused_moe on `platform`
    (FUSED_SHARED_EXPERT_MODEL_TYPES)."""
    return (platform == "cuda" and layout.ep == 1
            and spec.model_type in FUSED_SHARED_EXPERT_MODEL_TYPES
            and spec.moe is not None and spec.moe.n_shared_experts == 1)

# Architectures whose q / k RMSNorm spans all heads (one weight vector over num_heads x head_dim;
# MiniMax-M2's config.json: "qk_norm_type": "per_layer"), so that under attention TP a rank's
# shard of the heads cannot be normalised alone: the sum of squares of the whole row is reduced
# over the ranks between two kernels. SGLang models/minimax_m2.py MiniMaxM2QKRMSNorm._forward_naive
# (the default; the fused kernel needs SGLANG_USE_FUSED_PARALLEL_QKNORM): `q, k = q.contiguous(),
# k.contiguous()`, `rms_sumsq_serial(q, k)`, `attn_tp_all_reduce(sum_sq)` (under TP),
# `rms_apply_serial(...)`; vLLM models/minimax_m2.py likewise all-reduces the variance
# (MiniMaxText01RMSNormTP). Read from the architecture, as the engines pick the model class by it.
FULL_WIDTH_QK_NORM_MODEL_TYPES = frozenset({"minimax_m2"})
# Its kernels per layer (the two copies, sum of squares, apply); the all-reduce comes on top.
_FULL_WIDTH_QK_NORM_KERNELS = 4


def _full_width_qk_norm(spec: ModelSpec) -> bool:
    return spec.model_type in FULL_WIDTH_QK_NORM_MODEL_TYPES


@dataclass(frozen=True, kw_only=True)
class Layout:
    tp: int = 1
    dp_attention: bool = False
    ep: int = 1
    interconnect: Interconnect | None = None  # None: the GPU's usual scale-up link
    scale_out: Interconnect = field(default_factory=lambda: INTERCONNECTS["ib-ndr"])

    @property
    def world(self) -> int:
        return max(self.tp, self.ep)

    @property
    def attention_tp(self) -> int:
        return 1 if self.dp_attention else self.tp

    @property
    def dp_ranks(self) -> int:
        """Ranks that each hold their own requests."""
        return self.world if self.dp_attention else max(1, self.world // self.tp)


@dataclass(frozen=True, kw_only=True)
class OpTime:
    name: str
    seconds: float
    bound: str  # "compute", "memory", "comm" or "latency"


@dataclass(frozen=True, kw_only=True)
class StepTime:
    """One step on one GPU: total seconds and the time by operation kind (summed over layers)."""

    seconds: float
    by_op: dict[str, float]
    flops: float
    bytes: float
    comm_seconds: float


@dataclass(frozen=True, kw_only=True)
class Prediction:
    """`compare` / `plan` predictions for one scheme. Field names are the JSON contract."""

    tpot_ms: float  # time per output token of one request (decode step / tokens per step)
    decode_step_ms: float  # one decode step for `batch` requests per rank
    ttft_ms: float  # prefill of one `context`-token prompt
    tokens_per_step: float  # per request (1 without speculative decoding)
    output_tokens_per_s_per_gpu: float
    gpus: int
    cost_per_million_tokens_usd: float | None
    decode_ms_by_op: dict[str, float]
    roofline_ms_per_step: float  # the old single max(FLOPs / peak, bytes / bandwidth), 100 %


def _bytes_per_param(spec: ModelSpec, tp: int, quantization: str | None = None
                     ) -> tuple[dict[str, float], dict[str, bool]]:
    """Per-rank bytes per (total) parameter of each weight group, and whether it is FP8."""
    from kvplan.capacity.weights import weights_breakdown

    wb = weights_breakdown(spec, tp=tp, quantization=quantization)
    counts = count_params(spec)
    attn = sum(x.attention for x in counts.layers) or 1
    dense = sum(x.mlp for x in counts.layers) or 1
    experts = sum(x.routed_experts + x.router for x in counts.layers) or 1
    head = counts.lm_head or counts.embedding
    scale = wb.quantization_scales - wb.expert_scales
    bpp = {
        "attention": (wb.attention + scale * wb.attention / max(1, wb.attention + wb.dense_mlp))
        / attn,
        "dense_mlp": (wb.dense_mlp + scale * wb.dense_mlp / max(1, wb.attention + wb.dense_mlp))
        / dense,
        "experts": (wb.experts + wb.expert_scales) / experts,
        "lm_head": (wb.lm_head or wb.embeddings) / head,
    }
    fp8_method = wb.method.lower().startswith("fp8") or spec.weight_dtype == "fp8"
    # A group stored at about one byte per parameter is an FP8 GEMM (w8a8); half a byte or less
    # is weight-only int4/fp4, computed in bf16. Judged on the whole model (one rank), not on
    # this rank's share: DeepSeek's q_a / kv_a projections are replicated on every TP rank
    # (SGLang models/deepseek_v2.py: ReplicatedLinear fused_qkv_a_proj_with_mqa), so at TP 8
    # the attention group holds 0.22 B per parameter, 1.75 x the 1/8 share, and read as bf16.
    whole = bpp if tp == 1 else _bytes_per_param(spec, 1, quantization)[0]
    fp8 = {g: fp8_method and 0.6 < v < 1.6 for g, v in whole.items()}
    return bpp, fp8


class _Step:
    """Accumulates operation times for one step. `floor_s` is the least time of one kernel
    (the CUDA-graph floor); an eager prefill's launch time is added apart (`prefill_launch`)."""

    def __init__(self, gpu: GPU, eff: Efficiency, floor_s: float) -> None:
        self.gpu, self.eff, self.floor_s = gpu, eff, floor_s
        self.by_op: dict[str, float] = {}
        self.flops = self.bytes = self.comm = 0.0

    def op(self, name: str, *, flops: float, nbytes: float, fp8: bool = False,
           attention: bool = False, kernels: int = 1, least_s: float | None = None) -> None:
        """`least_s`: the operation's measured least time, in place of its kernels' floors."""
        peak = self.gpu.peak_bf16_flops_per_s
        frac = self.eff.attention if attention else self.eff.gemm
        if fp8 and self.gpu.peak_fp8_flops_per_s:
            peak = self.gpu.peak_fp8_flops_per_s
            if not attention and self.eff.fp8_gemm is not None:
                frac = self.eff.fp8_gemm
        hbm = self.eff.fp8_gemm_hbm if fp8 and not attention else self.eff.hbm
        if fp8 and not attention:
            kernels *= 2  # each w8a8 GEMM quantizes its activations first (docstring)
        floor = kernels * self.floor_s if least_s is None else least_s
        t = max(flops / (peak * frac), nbytes / (self.gpu.hbm_bytes_per_s * hbm), floor)
        self.flops += flops
        self.bytes += nbytes
        self.by_op[name] = self.by_op.get(name, 0.0) + t

    def kernels(self, name: str, n: int) -> None:
        self.by_op[name] = self.by_op.get(name, 0.0) + n * self.floor_s

    def fixed(self, name: str, seconds: float) -> None:
        """Time that depends on neither FLOPs nor bytes (the per-layer overhead)."""
        self.by_op[name] = self.by_op.get(name, 0.0) + seconds

    def collective(self, name: str, seconds: float) -> None:
        if seconds > 0:  # a collective is a kernel too: at least one floor
            seconds = max(seconds, self.floor_s)
        self.comm += seconds
        self.by_op[name] = self.by_op.get(name, 0.0) + seconds

    def result(self) -> StepTime:
        total = sum(self.by_op.values()) + self.eff.step_overhead_s
        return StepTime(seconds=total, by_op=dict(self.by_op), flops=self.flops,
                        bytes=self.bytes, comm_seconds=self.comm)


def _link(layout: Layout, gpu: GPU, ranks: int) -> Interconnect:
    if ranks > scale_up_gpus(gpu.name):
        return layout.scale_out
    return layout.interconnect or default_interconnect(gpu.name)


def _projection_kernels(latent: bool, form: MLAForm, absorb: int) -> int:
    """GEMM kernels of one layer's attention projections (see the module docstring)."""
    if not latent:
        return 2  # fused qkv_proj, o_proj
    extra = 2 if absorb else 1 if form is MLAForm.decompressed else 0
    return 3 + extra  # fused q_a + kv_a, q_b, o_proj (+ W_UK / W_UV bmm, or kv_b)


# Ops SGLang launches per decoder layer in an eager prefill step (each costs
# `prefill_launch_s` of CPU), counted in its model code (CUDA, no DeepEP; the file named at
# each block), read at sgl-project/sglang 008af3a6 (models/qwen3_moe.py) and 00cc79fa
# (deepseek_common/attention_forward_methods/forward_mha.py). The bench's rows ran releases
# 0.4.x-0.5.7, not compared op by op; options that fuse ops (a fused q/k-norm + RoPE kernel,
# the KV write fused into RoPE, shared-expert fusion) are counted unfused. An "op" is a call
# that launches GPU work: a GEMM, a norm, a copy, a collective; a block-FP8 (w8a8) GEMM is two
# (per_token_group_quant_fp8, then the GEMM: layers/quantization/fp8_utils.py
# apply_w8a8_block_fp8_linear). Views and splits launch none.

def _gemm_ops(fp8: bool) -> int:
    return 2 if fp8 else 1


def _attention_block_ops(spec: ModelSpec, *, tp: int, fp8: bool) -> int:
    """Input norm to post-attention norm, one layer."""
    g = _gemm_ops(fp8)
    reduce = 1 if tp > 1 else 0  # communicator: tensor_model_parallel_all_reduce of o_proj
    att = spec.attention
    if isinstance(att, LatentAttention):
        # models/deepseek_v2.py + deepseek_common/attention_forward_methods/forward_mha.py
        # forward_normal_prepare (prefill without a prefix runs MHA): with q_lora,
        # fused_qkv_a_proj_with_mqa (g), q_a_layernorm (1), q_b_proj (g); without, q_proj and
        # kv_a_proj_with_mqa (2g); then kv_a_layernorm, rotary_emb, the q_pe copy into q,
        # _set_mla_kv_buffer, kv_b_proj (g), concat_mla_k, attn_mha, o_proj (g).
        q_side = 2 * g + 1 if att.q_lora_rank else 2 * g
        return 1 + q_side + 4 + g + 2 + g + reduce + 1
    # models/llama.py, qwen3.py, qwen3_moe.py: input_layernorm (fused add), qkv_proj,
    # [q_norm, k_norm: apply_qk_norm], rotary_emb, set_kv_buffer, attn, o_proj,
    # post_attention_layernorm.
    # models/qwen3_next.py Qwen3HybridAttentionDecoderLayer.self_attention: the same, plus
    # its output gate (`_output_gate_ops`).
    qk_norm = _qk_norm_ops(spec)
    if _full_width_qk_norm(spec):  # copies, sum of squares, (all-reduce,) apply
        qk_norm = _FULL_WIDTH_QK_NORM_KERNELS + reduce
    return 1 + g + qk_norm + 3 + _output_gate_ops(spec, tp) + g + reduce + 1


# Architectures whose SGLang attention applies RMSNorm to q and k per head (two ops):
# models/qwen3.py and qwen3_moe.py (Qwen3Attention.q_norm / k_norm, `_apply_qk_norm`),
# models/qwen3_next.py (Qwen3HybridAttentionDecoderLayer.q_norm / k_norm, GemmaRMSNorm). Read
# from the architecture, as SGLang picks its model class by it. Not counted (here as for
# Qwen3): the copy `q.reshape(-1, head_dim)` makes of the strided q (and of k with more than
# one KV head per rank) before the norm.
QK_NORM_MODEL_TYPES = frozenset({"qwen3", "qwen3_moe", "qwen3_next"})

# Architectures whose SGLang attention gates its output per head (Qwen3-Next's gated
# attention): models/qwen3_next.py (SGLang 0.5.6) builds qkv_proj with
# `total_num_heads * (1 + attn_output_gate)` query heads (attn_output_gate defaults to True),
# splits q from the gate with `torch.chunk(q_gate.view(T, heads, -1), 2, dim=-1)` and
# `reshape`s both back to (T, heads x head_dim) -- a copy each when a rank holds more than one
# head, as the halves are strided -- and after attention runs `gate = torch.sigmoid(gate)`
# and `attn_output = attn_output * gate` (two ops).
GATED_ATTENTION_MODEL_TYPES = frozenset({"qwen3_next"})


# Architectures whose SGLang attention applies that norm only when the config asks
# (`use_qk_norm`, ModelSpec.qk_norm): models/glm4_moe.py Glm4MoeAttention (0.5.6) builds q_norm /
# k_norm and runs `q, k = self._apply_qk_norm(q, k)` under `if self.use_qk_norm` (GLM-4.5 / 4.6:
# true; GLM-4.5-Air: false). Decode lumps the q / k norm with RoPE (`_ATTN_KERNELS`) for all.
CONFIG_QK_NORM_MODEL_TYPES = frozenset({"glm4_moe"})


def _qk_norm_ops(spec: ModelSpec) -> int:
    if spec.model_type in QK_NORM_MODEL_TYPES:
        return 2
    return 2 if spec.model_type in CONFIG_QK_NORM_MODEL_TYPES and spec.qk_norm else 0


def _output_gate_ops(spec: ModelSpec, tp: int) -> int:
    if spec.model_type not in GATED_ATTENTION_MODEL_TYPES:
        return 0
    heads = spec.attention.num_attention_heads // tp
    return (2 if heads > 1 else 0) + 2


def _dense_mlp_ops(*, tp: int, fp8: bool) -> int:
    """gate_up_proj, SiluAndMul, down_proj (+ the all-reduce): models/llama.py LlamaMLP."""
    return 2 * _gemm_ops(fp8) + 1 + (1 if tp > 1 else 0)


def _moe_block_ops(spec: ModelSpec, layout: Layout, *, fp8: bool, shared_fp8: bool,
                   platform: str = "cuda") -> int:
    """Router GEMM, top-k, fused_moe, shared experts, the reduction over ranks.

    fused_moe_triton (layers/moe/fused_moe_triton/fused_moe.py fused_experts_impl):
    moe_align_block_size and the zeroing of its counts (2), the w13 grouped GEMM, silu_and_mul,
    the w2 grouped GEMM, moe_sum_reduce (4), with FP8 a quantization before each grouped GEMM
    (2). Top-k is one fused kernel (layers/moe/topk.py: topk_softmax with renormalize for
    Qwen3-MoE, moe_fused_gate for DeepSeek's biased grouped top-k; GLM-4.5's torch.compile'd
    biased_grouped_topk_impl, COMPILED_GROUPED_TOPK_MODEL_TYPES, is one call from the model
    code too: its kernels are launched by Inductor's generated wrapper, not op by op through
    module calls, and are not charged apart). Shared experts
    (models/deepseek_v2.py DeepseekV2MoE.forward_normal; models/qwen2_moe.py
    Qwen2MoeSparseMoeBlock.forward for Qwen3-Next's one shared expert): an MLP plus the add to
    the routed output, and Qwen2-MoE's sigmoid gate on it (`_shared_expert_gate_ops`). Not
    modelled: later SGLang releases can fold DeepSeek's one shared expert into fused_moe
    (`num_fused_shared_experts`, off with --disable-shared-experts-fusion), which removes those
    ops (DeepSeek-V3 TP 8: 1,759 instead of 2,107); they are counted apart, as
    the early-2025 engines of three of the four fit rows ran them. GLM-4.5's is folded in
    (`fused_shared_expert`): no ops of its own."""
    assert spec.moe is not None
    experts = 6 + (2 if fp8 else 0)
    shared = 0
    if fused_shared_expert(spec, layout, platform):
        shared = 0
    elif spec.moe.n_shared_experts or spec.moe.shared_expert_intermediate_size:
        shared = 2 * _gemm_ops(shared_fp8) + 1 + 1 + _shared_expert_gate_ops(spec)
    if layout.ep > 1:
        reduce = 2  # dispatch and combine
    elif layout.dp_attention and layout.tp > 1:
        reduce = 2  # gather every rank's tokens, reduce-scatter after
    else:
        reduce = 1 if layout.tp > 1 else 0
    return 1 + 1 + experts + shared + reduce


# Architectures whose SGLang MoE block gates its shared expert: models/qwen2_moe.py
# Qwen2MoeSparseMoeBlock._forward_shared_experts (SGLang 0.5.6; models/qwen3_next.py builds
# its MoE layers from it): `F.sigmoid(self.shared_expert_gate(hidden_states)) * shared_output`
# -- a torch.nn.Linear of one output (unquantized), the sigmoid and the product: three ops
# beside the shared MLP and its add to the routed output.
GATED_SHARED_EXPERT_MODEL_TYPES = frozenset({"qwen2_moe", "qwen3_next"})


def _shared_expert_gate_ops(spec: ModelSpec) -> int:
    return 3 if spec.model_type in GATED_SHARED_EXPERT_MODEL_TYPES else 0


class RecurrentMixerOps:
    """What one recurrent mixer kind launches, as SGLang runs it: ops of an eager prefill
    (extend) step from its in_proj to its out_proj (`extend_ops`), and the GEMM kernels of a
    decode step besides the state update and the small kernels (`decode_gemm_kernels`). The
    base class is a kind not counted from SGLang's code (Mamba1, KDA, short conv, lightning
    attention): its itemised kernels in_proj, conv, scan, gated norm, out_proj."""

    counted_from_code = False
    decode_gemm_kernels = 1

    def extend_ops(self, spec: ModelSpec, *, tp: int, fp8: bool) -> int:
        return 5


class GatedDeltaNetOps(RecurrentMixerOps):
    """Qwen3-Next's Gated DeltaNet, read at SGLang 0.5.6 (the release of the bench's Qwen3-Next
    rows; pip wheel sglang==0.5.6): models/qwen3_next.py Qwen3GatedDeltaNet._forward and
    layers/attention/hybrid_linear_attn_backend.py GDNAttnBackend.forward_extend (CUDA,
    piecewise CUDA graphs off, the default)."""

    counted_from_code = True
    # Decode: in_proj_qkvz and out_proj; in_proj_ba runs beside in_proj_qkvz on the alt
    # stream while CUDA graphs capture (qwen3_next.py _forward_input_proj).
    decode_gemm_kernels = 2

    def extend_ops(self, spec: ModelSpec, *, tp: int, fp8: bool) -> int:
        rec = spec.recurrent
        assert rec is not None
        g = _gemm_ops(fp8)
        # _forward_input_proj: in_proj_qkvz (g) and in_proj_ba (built with quant_config=None:
        # one op); under 1,024 tokens the second runs on the alt stream, still one launch.
        proj = g + 1
        # fix_query_key_value_ordering (eager steps do not take the fused split kernel, which
        # runs only when forward_mode.is_cuda_graph()): q, k, v, z, b, a are torch.split
        # slices of the (T, key heads / tp, ...) view, and the reshapes that merge the key-head
        # dimension copy each of the six when a rank holds more than one key head (v, z, b, a
        # in fix_query_key_value_ordering, q and k in `x.reshape(x.shape[0], -1)`); then
        # torch.cat((q, k, v)).
        split = (6 if rec.num_key_heads // tp > 1 else 0) + 1
        # GDNAttnBackend.forward_extend: `extend_prefix_lens > 0` (1); causal_conv1d_fn
        # (mamba/causal_conv1d.py: `x.contiguous()` of the transposed (dim, T) input, then
        # sgl_kernel causal_conv1d_fwd: 2); fused_gdn_gating (fla/fused_gdn_gating.py, one
        # Triton kernel); `ssm_states[cache_indices]` (a gather, 1); chunk_gated_delta_rule
        # (below); `ssm_states[cache_indices] = last_recurrent_state` (1). The `.to(ssm dtype,
        # copy=False)` before it launches nothing at SGLang's default --mamba-ssm-dtype
        # float32 (server_args.py), the dtype fla returns the final state in.
        backend = 1 + 2 + 1 + 1 + self.chunk_ops() + 1
        # RMSNormGated (fla/layernorm_gated.py: one Triton kernel on contiguous inputs),
        # out_proj (g; reduce_results=False: the layer's communicator all-reduces).
        return proj + split + backend + 1 + g

    @staticmethod
    def chunk_ops() -> int:
        """fla/chunk.py ChunkGatedDeltaRuleFunction.forward: @input_guard makes every tensor
        argument contiguous, which copies q, k and v (strided torch.split slices of the conv
        output: 3); l2norm_fwd of q and of k (2); chunk_gated_delta_rule_fwd: chunk_local_cumsum
        (1), chunk_scaled_dot_kkt_fwd (1), solve_tril (solve_tril_16x16_kernel and
        merge_16x16_to_64x64_inverse_kernel: 2), recompute_w_u_fwd (1),
        chunk_gated_delta_rule_fwd_h (1), chunk_fwd_o (`torch.zeros_like(v)` and its kernel:
        2). Not counted: prepare_chunk_indices / prepare_chunk_offsets, which @tensor_cache
        computes once per step for all layers."""
        return 3 + 2 + 1 + 1 + 2 + 1 + 1 + 2


class Mamba2Ops(RecurrentMixerOps):
    """Mamba2 (Nemotron-H, Falcon-H1, granite-4.0-h), read at SGLang 0.5.6:
    layers/attention/mamba/mamba.py MambaMixer2.forward on a prefill-only batch without a
    cached prefix (no initial states). Not counted: Falcon-H1's muP multipliers around the
    mixer (models/falcon_h1.py)."""

    counted_from_code = True
    decode_gemm_kernels = 2  # in_proj, out_proj

    def extend_ops(self, spec: ModelSpec, *, tp: int, fp8: bool) -> int:
        rec = spec.recurrent
        assert rec is not None
        g = _gemm_ops(fp8)
        # in_proj (g); the causal conv: mamba/causal_conv1d.py causal_conv1d_fn
        # (`x.contiguous()` of the transposed input + the kernel: 2), or with
        # use_triton_causal_conv (models/nemotron_h.py passes True) causal_conv1d_triton.py's,
        # which reads the strided input as it is (1); mamba_chunk_scan_combined (ops/ssd_combined.py
        # _mamba_chunk_scan_combined_fwd: B and C are strided slices of the transposed conv
        # output and are made contiguous (2); _chunk_cumsum_fwd, _chunk_state_fwd,
        # _state_passing_fwd, _bmm_chunk_fwd, _chunk_scan_fwd, chunk_state_varlen (6));
        # `ssm_state[state_indices_tensor_p] = varlen_state` (1).
        conv = 1 if spec.model_type in TRITON_CONV_MODEL_TYPES else 2
        mixer = g + conv + 2 + 6 + 1
        # mixer2_rms_norm_gated.py Mixer2RMSNormGated.forward_cuda: one fused kernel
        # (rms_norm_gated) only with one group on one GPU (it returns forward_native when
        # `n_groups % tp_size != 0 or n_groups != 1`). forward_native: gate.to(float32), silu,
        # x * silu (3); with several groups [an all-gather when they do not split over the
        # ranks], pow, mean, + eps, rsqrt, x * (5); with one group over TP ranks pow, sum, the
        # all-reduce of the sums, / count, + eps, rsqrt, x * (7); then .to(dtype), weight * x.
        if rec.n_groups == 1:
            norm = 1 if tp == 1 else 3 + 7 + 2
        else:
            norm = 3 + 5 + 2 + (1 if rec.n_groups % tp else 0)
        # out_proj (g) and `output[:num_actual_tokens], _ = self.out_proj(...)`, a copy (1).
        return mixer + norm + g + 1


# Architectures whose SGLang Mamba2 layers run the Triton causal conv (models/nemotron_h.py
# NemotronHMambaDecoderLayer.forward: use_triton_causal_conv=True, 0.5.6).
TRITON_CONV_MODEL_TYPES = frozenset({"nemotron_h"})

# One entry per recurrent kind whose ops are counted from SGLang's code; other kinds
# (RECURRENT_FIELDS in kvplan/spec.py) get the base class.
RECURRENT_MIXER_OPS: dict[str, RecurrentMixerOps] = {
    "gated_delta_net": GatedDeltaNetOps(),
    "mamba2": Mamba2Ops(),
}


def recurrent_mixer_ops(rec: RecurrentSpec) -> RecurrentMixerOps:
    return RECURRENT_MIXER_OPS.get(rec.kind, RecurrentMixerOps())


def _recurrent_layer_ops(spec: ModelSpec, index: int, *, tp: int, fp8: bool) -> int:
    """A recurrent layer's ops, input norm to post-mixer norm. A layer whose only mixer is the
    recurrent one (Qwen3-Next's linear_attention layers: Qwen3HybridLinearDecoderLayer with
    its LayerCommunicator, as the attention layers; Nemotron-H's Mamba layers) adds its input
    norm, the all-reduce of the mixer output under TP and, when an MLP follows in the same
    layer, the post-mixer norm. Falcon-H1's parallel hybrid (attention and Mamba2 side by side)
    shares the attention block's."""
    assert spec.recurrent is not None
    ops = recurrent_mixer_ops(spec.recurrent).extend_ops(spec, tp=tp, fp8=fp8)
    if spec.has_attention(index):
        return ops
    return 1 + ops + (1 if tp > 1 else 0) + (1 if spec.has_mlp(index) else 0)


def eager_prefill_ops(spec: ModelSpec, layout: Layout = Layout(),
                      quantization: str | None = None, *, platform: str = "cuda",
                      fused_norms: bool = False) -> int:
    """Ops SGLang launches in one prefill step of `spec` on one rank of `layout` (on
    `platform`, GPU.platform: "cuda" or "rocm"): every decoder layer, plus embedding (+ its
    all-reduce under TP, layers/vocab_parallel_embedding.py),
    the final norm and the lm_head (+ its all-gather under TP, layers/logits_processor.py).
    `fused_norms`: the step runs the fused all-reduce + RMSNorm (`fuses_allreduce_norm`), one
    op (layernorm.py forward_with_allreduce_fusion) for each all-reduce and the norm after it."""
    _check_layout(spec, layout)
    att_tp = layout.attention_tp
    _, fp8 = _bytes_per_param(spec, att_tp, quantization)
    expert_ranks = layout.ep if layout.ep > 1 else layout.tp
    _, fp8_exp = _bytes_per_param(spec, expert_ranks, quantization)
    counts = count_params(spec)
    total = 0
    for i in range(spec.num_hidden_layers):
        if spec.has_attention(i):
            total += _attention_block_ops(spec, tp=att_tp, fp8=fp8["attention"])
        if spec.has_recurrent(i):
            total += _recurrent_layer_ops(spec, i, tp=att_tp, fp8=fp8["attention"])
        if not spec.has_mlp(i):
            continue
        lp = counts.layers[i]
        if lp.routed_experts and spec.moe is not None:
            total += _moe_block_ops(spec, layout, fp8=fp8_exp["experts"],
                                    shared_fp8=fp8["dense_mlp"], platform=platform)
        elif lp.mlp:
            total += _dense_mlp_ops(tp=att_tp, fp8=fp8["dense_mlp"])
        if fused_norms:
            total -= sum(_fused_norms(spec, i, 0))
    head = 3 + (2 if att_tp > 1 else 0)
    return total + head


def _check_layout(spec: ModelSpec, layout: Layout) -> None:
    if layout.ep > 1:
        if spec.moe is None:
            raise InputError("--ep: the model has no routed experts")
        if spec.moe.n_routed_experts < layout.ep:
            raise InputError(f"--ep: {layout.ep} ranks for {spec.moe.n_routed_experts} experts")
        if layout.tp > 1 and layout.ep % layout.tp and layout.tp % layout.ep:
            raise InputError(f"--ep {layout.ep} and --tp {layout.tp}: one must divide the other")


def step_time(spec: ModelSpec, gpu: GPU, *, tokens: int, context: int, requests: int,
              phase: str = "decode", kv_dtype: str = "bf16", mla_form: MLAForm = MLAForm.absorbed,
              layout: Layout = Layout(), eff: Efficiency | None = None,
              fp8_attention: bool = False, quantization: str | None = None,
              layers: range | None = None, logits: int | None = None,
              conv_dtype: str | None = None, ssm_dtype: str = "auto") -> StepTime:
    """One forward step on one GPU (rank) of `layout`.

    decode: `requests` requests per rank, `tokens` = requests x (1 + draft tokens) query tokens,
    each attending `context` cached tokens; prefill: one prompt of `tokens` = `context` tokens
    (causal). `layers`: only these decoder layers (the MTP draft module); `logits`: rows through
    the lm_head (default: one per request). `conv_dtype` / `ssm_dtype`: the recurrent state's
    dtypes as the engine keeps them (EngineRules.state_dtypes; None / "auto": vLLM's rule,
    kvplan.kv.cache.recurrent_state; SGLang keeps the SSM state in float32 by default). `eff`
    None: the device's (`device_efficiency`)."""
    _check_layout(spec, layout)
    if eff is None:
        eff = device_efficiency(gpu)
    s = _Step(gpu, eff, eff.kernel_floor_s)
    h = spec.hidden_size
    att_tp = layout.attention_tp
    counts = count_params(spec)
    bpp_attn, fp8 = _bytes_per_param(spec, att_tp, quantization)
    expert_ranks = layout.ep if layout.ep > 1 else layout.tp
    bpp_exp, fp8_exp = _bytes_per_param(spec, expert_ranks, quantization)
    att = spec.attention
    latent = isinstance(att, LatentAttention)
    form = mla_form if phase == "decode" else (
        MLAForm.naive if mla_form is MLAForm.absorbed else mla_form)
    # KV bytes one request reads per attended token per layer, on this rank.
    kv_layer = attention_token_bytes(spec, kv_dtype, att_tp)
    if latent and form is MLAForm.decompressed and not att.decompressed_cache:
        # (An engine that caches the model decompressed already says how: attention_token_bytes.)
        heads = att.num_attention_heads // att_tp
        kv_layer = heads * (att.qk_nope_head_dim + att.qk_rope_head_dim + att.v_head_dim) * (
            2 if kv_dtype in ("bf16", "fp16") else 1 if kv_dtype in ("fp8", "int8") else 4)
    attn_link = _link(layout, gpu, layout.tp)
    # Tokens entering a MoE layer across the ranks that share its experts.
    moe_tokens = tokens * (layout.world if layout.dp_attention else 1)
    act_bytes = 2  # bf16 activations
    chosen = layers if layers is not None else range(spec.num_hidden_layers)
    # The engine's fused all-reduce + residual + RMSNorm (AllReduceNormFusion): the norm after
    # each fused all-reduce costs no kernel of its own.
    fused = fuses_allreduce_norm(spec, gpu, layout, tokens, eff)
    state = None
    rec_weights = rec_proj_flops = rec_state_flops = 0
    if spec.recurrent is not None:
        # One request's recurrent state on this rank (kvplan.kv.cache.recurrent_state: vLLM's
        # shapes; SGLang's are the same, configs/mamba_utils.py).
        state = recurrent_state(spec.recurrent, tp=att_tp,
                                conv_dtype=conv_dtype or activation_dtype(spec),
                                ssm_dtype=ssm_dtype)
        rec_weights = recurrent_params(spec)
        rec_proj_flops = 2 * rec_weights
        rec_state_flops = recurrent_state_flops_per_token(spec, phase)
    for i in chosen:
        lp = counts.layers[i]
        s.fixed("layer_overhead", eff.layer_overhead_s)
        fused_input, fused_post = _fused_norms(spec, i, chosen.start) if fused else (False, False)
        if spec.has_attention(i):
            span = attended_tokens(spec, i, context)
            f = attention_flops(spec, context=span, phase=phase, mla_form=form)
            proj = f.q_proj + f.kv_proj + f.absorb + f.o_proj
            s.op("attention_proj", flops=tokens * proj / att_tp,
                 nbytes=(lp.attention - (rec_weights if spec.has_recurrent(i) else 0))
                 * bpp_attn["attention"], fp8=fp8["attention"],
                 kernels=_projection_kernels(latent, form, f.absorb))
            core = (f.scores + f.values) / att_tp
            if phase == "decode":
                kv_read = requests * span * kv_layer
            else:
                kv_read = tokens * kv_layer  # prefill writes the cache once
            if f.kv_up_proj:
                # Naive MLA: up-project every cached latent (a GEMM growing with the context),
                # write the per-head K/V and read them back in attention (bf16).
                up_tokens = requests * span if phase == "decode" else tokens
                up_bytes = up_tokens * att.num_attention_heads // att_tp * (
                    att.qk_nope_head_dim + att.v_head_dim) * act_bytes
                # Decode: once per request over its `span` latents (f.kv_up_proj already counts
                # them); prefill: once per prompt token.
                up_flops = (requests if phase == "decode" else tokens) * f.kv_up_proj / att_tp
                s.op("mla_up_proj", flops=up_flops, nbytes=up_bytes)
                kv_read += up_bytes
            s.op("attention", flops=tokens * core, nbytes=kv_read, fp8=fp8_attention,
                 attention=True)
            s.kernels("small_kernels", _ATTN_KERNELS + (_MLA_EXTRA if latent else 0)
                      + _output_gate_ops(spec, att_tp) - (1 if fused_input else 0))
            if _full_width_qk_norm(spec):
                s.kernels("small_kernels", _FULL_WIDTH_QK_NORM_KERNELS)
                # fp32 sums of squares of q and k, one each per token
                s.collective("qk_norm_all_reduce", attn_link.all_reduce_s(att_tp, tokens * 2 * 4))
            s.collective("tp_all_reduce", attn_link.all_reduce_s(att_tp, tokens * h * act_bytes))
        if spec.has_recurrent(i):
            assert spec.recurrent is not None and state is not None
            # The projections (in_proj .. out_proj: GEMMs over the mixer's weights), then the
            # state update: the conv state and the SSM / delta-rule state of every request are
            # read and written back once per step (decode: causal_conv1d_update and
            # fused_sigmoid_gating_delta_rule_update / selective_state_update update them in
            # place; prefill: the initial state gathered, the final one scattered back), in the
            # state dtypes the engine keeps (`conv_dtype`, `ssm_dtype`).
            s.op("recurrent", flops=tokens * rec_proj_flops / att_tp,
                 nbytes=rec_weights * bpp_attn["attention"],
                 kernels=recurrent_mixer_ops(spec.recurrent).decode_gemm_kernels)
            s.op("recurrent_state", flops=tokens * rec_state_flops / att_tp,
                 nbytes=requests * 2 * state.state_bytes, attention=True)
            s.kernels("small_kernels", _REC_KERNELS)
        if not spec.has_mlp(i):
            continue
        s.kernels("small_kernels", _MLP_KERNELS - (1 if fused_post else 0))
        # A shared expert folded into fused_moe (`fused_shared_expert`) is read by the routed
        # experts' two grouped GEMMs: its bytes and FLOPs join them, with no kernels of its own.
        folded = bool(lp.routed_experts) and fused_shared_expert(spec, layout, gpu.platform)
        if lp.mlp and not folded:
            s.op("mlp", flops=tokens * 2 * lp.mlp / att_tp,
                 nbytes=lp.mlp * bpp_attn["dense_mlp"], fp8=fp8["dense_mlp"], kernels=2)
        if lp.routed_experts and spec.moe is not None:
            moe = spec.moe
            n, k = moe.n_routed_experts, moe.num_experts_per_tok
            touched = 1 - (1 - k / n) ** moe_tokens
            shared_flops = moe_tokens * 2 * lp.mlp / expert_ranks if folded else 0.0
            shared_bytes = lp.mlp * bpp_attn["dense_mlp"] if folded else 0.0
            s.op("experts", flops=moe_tokens * 2 * lp.routed_active / expert_ranks + shared_flops,
                 nbytes=(lp.routed_experts + lp.router) * bpp_exp["experts"] * touched
                 + shared_bytes, fp8=fp8_exp["experts"], kernels=2, least_s=eff.moe_floor_s)
            # Not Qwen2-MoE's shared-expert gate (`_shared_expert_gate_ops`): a decode step
            # (CUDA-graph capture, <= 1,024 tokens) runs the shared expert and its gate on the
            # current stream while the router and the routed experts run on alt_stream
            # (models/qwen2_moe.py forward_normal_dual_stream), so its kernels overlap them.
            s.kernels("small_kernels", _MOE_EXTRA + topk_kernels(spec, gpu.platform))
            if layout.ep > 1:
                # Dispatch in FP8 (1 B/element) and combine in bf16, to the other ranks.
                link = _link(layout, gpu, layout.ep)
                sent = tokens * k * h * (1 + act_bytes) * (layout.ep - 1) / layout.ep
                s.collective("ep_all_to_all", 2 * link.latency_s + sent / link.bytes_per_s)
            elif layout.dp_attention and layout.tp > 1:
                # TP-MoE under DP attention: gather every rank's tokens, reduce-scatter after.
                s.collective("dp_gather_scatter", _link(layout, gpu, layout.tp).all_reduce_s(
                    layout.tp, moe_tokens * h * act_bytes))
        if (lp.mlp or lp.routed_experts) and not spec.has_attention(i):
            s.collective("tp_all_reduce", attn_link.all_reduce_s(att_tp, tokens * h * act_bytes))
        if spec.has_attention(i):
            s.collective("tp_all_reduce", attn_link.all_reduce_s(att_tp, tokens * h * act_bytes))
    rows = requests if logits is None else logits
    head = counts.lm_head or counts.embedding
    s.op("lm_head", flops=rows * 2 * head / att_tp, nbytes=head * bpp_attn["lm_head"],
         fp8=fp8["lm_head"])
    if phase == "prefill" and eff.prefill_launch_s and layers is None:
        # Launched eagerly (SGLang): the CPU time of every op, added to the GPU time (docstring).
        s.fixed("prefill_launch", eager_prefill_ops(spec, layout, quantization,
                                                    platform=gpu.platform, fused_norms=fused)
                * eff.prefill_launch_s)
    return s.result()


@dataclass(frozen=True, kw_only=True)
class CostInputs:
    context: int
    batch: int = 1  # requests per attention rank (per GPU with --dp-attention)
    kv_dtype: str = "bf16"
    mla_form: MLAForm = MLAForm.absorbed
    layout: Layout = Layout()
    efficiency: Efficiency | None = None  # None: the GPU's (`device_efficiency`)
    fp8_attention: bool = False
    draft_tokens: int = 0  # MTP / speculative tokens per step
    acceptance: float = DEFAULT_MTP_ACCEPTANCE
    gpu_hour_usd: float | None = None
    quantization: str | None = None
    # The recurrent state's dtypes as the engine keeps them (EngineRules.state_dtypes):
    # None / "auto" is vLLM's rule (the model dtype unless the config fixes the SSM dtype).
    conv_dtype: str | None = None
    ssm_dtype: str = "auto"


def tokens_per_step(draft_tokens: int, acceptance: float) -> float:
    """Expected tokens emitted per request per step: 1 + a + a^2 + ... + a^k."""
    if not 0 <= acceptance <= 1:
        raise InputError(f"acceptance must be in [0, 1], got {acceptance}")
    return sum(acceptance ** i for i in range(draft_tokens + 1))


def naive_roofline_seconds(spec: ModelSpec, gpu: GPU, *, context: int, batch: int,
                           kv_dtype: str, mla_form: MLAForm, tp: int) -> float:
    """The former one-max-per-step roofline at 100 % of the peaks (kept as roofline_ms_per_step)."""
    from kvplan.perf.flops import decode_cost

    cost = decode_cost(spec, context=context, batch=batch, kv_dtype=kv_dtype, mla_form=mla_form,
                       tp=tp, hbm_bytes_per_s=gpu.hbm_bytes_per_s,
                       peak_flops_per_s=gpu.peak_bf16_flops_per_s)
    assert cost.step_seconds is not None
    return cost.step_seconds


def predict(spec: ModelSpec, gpu: GPU, inputs: CostInputs) -> Prediction:
    """Decode (tpot) and prefill (ttft) time, throughput per GPU and cost per million output
    tokens, for one scheme on one layout. Pure: a `plan` command can call it as is."""
    if inputs.draft_tokens < 0:
        raise InputError("draft tokens must be >= 0")
    layout = inputs.layout
    eff = inputs.efficiency if inputs.efficiency is not None else device_efficiency(gpu)
    common = {"kv_dtype": inputs.kv_dtype, "mla_form": inputs.mla_form, "layout": layout,
              "eff": eff, "fp8_attention": inputs.fp8_attention,
              "quantization": inputs.quantization, "conv_dtype": inputs.conv_dtype,
              "ssm_dtype": inputs.ssm_dtype}
    q = inputs.batch * (1 + inputs.draft_tokens)
    decode = step_time(spec, gpu, tokens=q, context=inputs.context, requests=inputs.batch,
                       logits=q, **common)
    by_op = {k: v * 1e3 for k, v in decode.by_op.items()}
    seconds = decode.seconds
    if inputs.draft_tokens:
        # The draft module: one decoder layer (the last one's shape) and the lm_head, run once
        # per draft token on one token per request.
        last = range(spec.num_hidden_layers - 1, spec.num_hidden_layers)
        draft = step_time(spec, gpu, tokens=inputs.batch, context=inputs.context,
                          requests=inputs.batch, layers=last, **common)
        seconds += inputs.draft_tokens * draft.seconds
        by_op["mtp_draft"] = inputs.draft_tokens * draft.seconds * 1e3
    per_step = tokens_per_step(inputs.draft_tokens, inputs.acceptance)
    prefill = step_time(spec, gpu, tokens=inputs.context, context=inputs.context, requests=1,
                        phase="prefill", logits=1, **common)
    gpus = layout.world
    # Requests decoded at once by the `gpus` GPUs: `batch` per attention data-parallel rank.
    total_requests = inputs.batch * layout.dp_ranks
    per_gpu = total_requests * per_step / seconds / gpus
    cost = None
    if inputs.gpu_hour_usd is not None:
        cost = inputs.gpu_hour_usd / 3600 / per_gpu * 1e6
    roofline = naive_roofline_seconds(spec, gpu, context=inputs.context, batch=inputs.batch,
                                      kv_dtype=inputs.kv_dtype, mla_form=inputs.mla_form,
                                      tp=layout.attention_tp)
    return Prediction(
        tpot_ms=seconds / per_step * 1e3,
        decode_step_ms=seconds * 1e3,
        ttft_ms=prefill.seconds * 1e3,
        tokens_per_step=per_step,
        output_tokens_per_s_per_gpu=per_gpu,
        gpus=gpus,
        cost_per_million_tokens_usd=cost,
        decode_ms_by_op=by_op,
        roofline_ms_per_step=roofline * 1e3,
    )


def sglang_chunked_prefill_tokens(gpu: GPU) -> int:
    """Tokens one SGLang prefill step takes at most by default (`--chunked-prefill-size`):
    server_args.py (0.5.x, `_handle_gpu_memory_settings`; 0.4.x `__post_init__` the same
    tiers): GPU memory < 35 GiB 2,048; < 160 GiB (A100, H100, H200) 8,192; else (B200, MI300)
    16,384. `max_prefill_tokens` (default 16,384) bounds the step too; it binds only on the
    largest tier, where it is equal."""
    if gpu.memory_bytes < 35 * 2**30:
        return 2048
    return 8192 if gpu.memory_bytes < 160 * 2**30 else 16384


def _poisson(mean: float) -> list[float]:
    """P(K = k) for k = 0, 1, ... until the tail is below 1e-12."""
    probs, p, k = [], math.exp(-mean), 0
    total = 0.0
    while total < 1 - 1e-12 and k < 10_000:
        probs.append(p)
        total += p
        k += 1
        p *= mean / k
    return probs


def _steps(prompts: float, prompt_len: int, chunk_tokens: int | None) -> int:
    """Prefill steps SGLang's scheduler needs for `prompts` waiting prompts: one step takes
    every waiting prompt until `chunk_tokens` (managers/scheduler.py get_new_batch_prefill
    fills one PrefillAdder from the whole waiting queue; schedule_policy.py PrefillAdder stops
    at rem_chunk_tokens and chunks the prompt that crosses it)."""
    if prompts <= 0:
        return 0
    if not chunk_tokens:
        return 1
    return max(1, -(-round(prompts * prompt_len) // chunk_tokens))


def serving_tpot_ms(tpot_ms: float, prefill_ms: float, *, concurrency: int,
                    output_len: int, prefill_launch_ms: float = 0.0, prompt_len: int = 0,
                    requests: int | None = None, chunk_tokens: int | None = None) -> float:
    """Mean TPOT as a serving benchmark at fixed concurrency measures it (bench_serving /
    vllm bench serve --max-concurrency, request rate inf: the first `concurrency` requests
    start together, then each finished request is replaced until `requests` were sent).

    The scheduler runs the waiting prompts as prefill steps between decode steps (SGLang:
    scheduler.py get_next_batch_to_run tries get_new_batch_prefill first; mixed chunks are
    off by default), stopping the decoding batch meanwhile. `prefill_ms` is one prompt's
    prefill, of which `prefill_launch_ms` is launch time paid once per step however many
    prompts it holds (SGLang's eager launches, `prefill_launch_s`); the rest (GPU time) grows
    with the prompts of the step.

    Steady state: while a request decodes, each of the other `concurrency - 1` finishes with
    probability 1 / output_len per decode step and its replacement arrives before the next
    step, so the arrivals per decode step are Poisson with mean m = (concurrency - 1) /
    output_len, and one step takes all of them (`_steps`, up to `chunk_tokens` each). A decode
    step is followed on average by m prompts' GPU time and E[steps(K)] launches. With
    `requests`, only the (requests - concurrency) replacements run during others' decodes
    (the share of decode steps in the steady state), and the first wave (all `concurrency`
    prompts together, J = steps(concurrency) steps) stalls a first-wave request for
    (J - 1) / 2 of them after its first token on average. `requests=None`: steady state only.
    Not modelled: the clumping of finishes when output lengths barely vary (bench_serving
    --random-range-ratio near 1)."""
    if concurrency < 1 or output_len < 1:
        raise InputError("concurrency and output length must be >= 1")
    gpu_ms = max(0.0, prefill_ms - prefill_launch_ms)
    m = (concurrency - 1) / output_len
    launches = sum(p * _steps(k, prompt_len, chunk_tokens)
                   for k, p in enumerate(_poisson(m)))
    steady = m * gpu_ms + launches * prefill_launch_ms  # per decode step
    if requests is None:
        return tpot_ms + steady
    if requests < concurrency:
        raise InputError("requests must be >= concurrency")
    share = (requests - concurrency) / requests
    waves = _steps(concurrency, prompt_len, chunk_tokens)
    wave_step_ms = prefill_launch_ms + concurrency * gpu_ms / waves
    first = concurrency / requests * (waves - 1) / 2 * wave_step_ms / output_len
    return tpot_ms + share * steady + first


def serving_ttft_ms(prefill_ms: float, *, concurrency: int, output_len: int,
                    prefill_launch_ms: float = 0.0, prompt_len: int = 0,
                    requests: int | None = None, chunk_tokens: int | None = None) -> float:
    """Mean TTFT's prefill part in the run `serving_tpot_ms` describes: a first-wave request
    waits for the first-wave steps up to its own (on average (J + 1) / 2 of J steps of the
    `concurrency` prompts); a replacement shares its step with the Poisson((concurrency - 1)
    / output_len) others that arrive with it. Not included: the serving path (HTTP,
    tokenization, streaming) and the wait for the decode step running at arrival."""
    if concurrency < 1 or output_len < 1:
        raise InputError("concurrency and output length must be >= 1")
    gpu_ms = max(0.0, prefill_ms - prefill_launch_ms)
    waves = _steps(concurrency, prompt_len, chunk_tokens)
    first = (waves + 1) / 2 * (prefill_launch_ms + concurrency * gpu_ms / waves)
    m = (concurrency - 1) / output_len
    replaced = sum(p * (_steps(1 + k, prompt_len, chunk_tokens) * prefill_launch_ms
                        + (1 + k) * gpu_ms) for k, p in enumerate(_poisson(m)))
    if requests is None:
        return replaced
    if requests < concurrency:
        raise InputError("requests must be >= concurrency")
    return (concurrency * first + (requests - concurrency) * replaced) / requests


def prefill_launch_ms(spec: ModelSpec, layout: Layout = Layout(),
                      eff: Efficiency = DEFAULT_EFFICIENCY,
                      quantization: str | None = None, *, platform: str = "cuda",
                      gpu: GPU | None = None, tokens: int = 0) -> float:
    """The launch part of one eager prefill step (SGLang) of `tokens` tokens on `gpu` (on
    `platform` when no `gpu` is given): ops x `prefill_launch_s`, as `step_time` adds it
    (`gpu` None: no fused all-reduce + norm)."""
    fused = gpu is not None and fuses_allreduce_norm(spec, gpu, layout, tokens, eff)
    if gpu is not None:
        platform = gpu.platform
    return (eager_prefill_ops(spec, layout, quantization, platform=platform, fused_norms=fused)
            * eff.prefill_launch_s * 1e3)
