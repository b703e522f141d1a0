"""What the cost model takes from an engine's defaults: its fused TP all-reduce + RMSNorm
(`AllReduceNormFusion`, `ALLREDUCE_NORM_FUSION`) and whether it launches prefill ops eagerly
(`EAGER_PREFILL_ENGINES`); `engine_efficiency` applies both to an `Efficiency`
(kvplan.perf.efficiency). Read from the engines' code, not fitted."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import DEFAULT_EFFICIENCY, Efficiency
from kvplan.perf.layout import Layout


@dataclass(frozen=True, kw_only=True)
class AllReduceNormFusion:
    """An engine's fused TP all-reduce + residual add + RMSNorm: one kernel (FlashInfer's
    trtllm_allreduce_fusion, pattern kARResidualRMSNorm) in place of the all-reduce and the
    fused_add_rmsnorm after it, on the architectures (`model_types`, as kvplan reads a config's
    model_type) and GPU presets where the engine turns it on by default, for steps of at most
    `max_tokens` tokens on a TP group of 2 to `max_ranks` GPUs (one node), without DP attention
    or expert-parallel all-to-all. `applies` says whether a step takes it: that step's RMSNorm
    after each fused all-reduce costs no kernel of its own (kvplan.perf.roofline.step_time); the
    all-reduce keeps its time (the norm is the kernel's epilogue)."""

    model_types: frozenset[str]
    gpus: frozenset[str]
    max_tokens: int
    max_ranks: int

    def applies(self, spec: ModelSpec, gpu: GPU, layout: Layout, tokens: int) -> bool:
        return (spec.model_type in self.model_types and gpu.name in self.gpus
                and 1 < layout.tp <= self.max_ranks and not layout.dp_attention
                and layout.ep == 1 and 0 < tokens <= self.max_tokens)


# SGLang 0.5.6 (pip wheels sglang==0.5.6, the release of the bench's gpt-oss-120b B200 rows, and
# 0.5.6.post1, its DeepSeek-R1 B200 rows', read alike):
# - server_args.py _handle_model_specific_adjustments: for "DeepseekV3ForCausalLM" ("common to
#   all Deepseek MoE models") `if is_cuda() and is_sm100_supported():` and for
#   "GptOssForCausalLM" `if is_blackwell_supported():`, then "# workaround for
#   https://github.com/flashinfer-ai/flashinfer/issues/2006 / if not self.enable_dp_attention
#   and self.nnodes == 1: self.enable_flashinfer_allreduce_fusion = True" ("Enable FlashInfer
#   AllReduce Fusion on sm100 for GptOssForCausalLM"); no other architecture turns it on, and
#   the flag defaults to False. Kimi-K2's config names DeepseekV3ForCausalLM (model_type
#   kimi_k2); DeepSeek-V3.2 (DeepseekV32ForCausalLM) is another architecture.
# - layers/communicator.py: LayerCommunicator.prepare_mlp (`_gather_hidden_states_and_residual`)
#   runs `layernorm.forward_with_allreduce_fusion(hidden_states, residual)` in place of
#   `tensor_model_parallel_all_reduce` + `layernorm(hidden_states, residual)` when
#   "(_is_sm100_supported or _is_sm90_supported) ... and enable_flashinfer_allreduce_fusion and
#   hidden_states.shape[0] <= 2048"; `should_fuse_mlp_allreduce_with_next_layer` (batch_size <=
#   FUSE_ALLREDUCE_MAX_BATCH_SIZE = 2048, not the last layer, tp_size > 1, no DP attention) lets
#   models/gpt_oss.py GptOssDecoderLayer.forward (and deepseek_v2.py's) skip the MLP / MoE
#   output's all-reduce and mark it `_sglang_needs_allreduce_fusion`, so that the next layer's
#   `prepare_attn` fuses it into its input_layernorm. Per step: every layer's post-attention
#   norm and every input norm but the first layer's.
# - is_sm100_supported is compute capability 10.x (utils/common.py); is_blackwell_supported also
#   admits 12.x, which the communicator's sm90 / sm100 test then refuses: the SM 10.x presets.
#   HGX B200 / B300 nodes hold 8 GPUs (nnodes == 1 up to TP 8); GB200 / GB300 are left out
#   (their node size is not in kvplan's presets).
# Measured, B200 (SGLang PR 7621, https://github.com/sgl-project/sglang/pull/7621, "[b200]
# support trt-llm allreduce fuse rms_norm_add kernel", DeepSeek-R1-FP4 TP 8: "13.5us->8.7us"):
# the fused kernel saves 4.8 us over the all-reduce and the norm, about the one 4-us kernel floor
# kvplan drops per fused all-reduce.
SGLANG_ALLREDUCE_NORM_FUSION = AllReduceNormFusion(
    model_types=frozenset({"gpt_oss", "deepseek_v3", "kimi_k2"}),
    gpus=frozenset({"B200", "B300"}), max_tokens=2048, max_ranks=8)
# The engines whose defaults fuse it (`engine_efficiency`); vLLM's compilation pass
# (fuse_allreduce_rms) is not modelled.
ALLREDUCE_NORM_FUSION: dict[str, AllReduceNormFusion] = {"sglang": SGLANG_ALLREDUCE_NORM_FUSION}


def fuses_allreduce_norm(spec: ModelSpec, gpu: GPU, layout: Layout, tokens: int,
                         eff: Efficiency) -> bool:
    """Whether a step of `tokens` tokens runs `eff`'s fused all-reduce + RMSNorm."""
    fusion = eff.allreduce_norm_fusion
    return fusion is not None and fusion.applies(spec, gpu, layout, tokens)


# Engines that launch prefill ops one by one from Python, outside CUDA graphs (SGLang:
# model_executor/cuda_graph_runner.py captures decode batches only), and so pay
# `prefill_launch_s` per launched prefill op (kvplan.perf.op_counts.eager_prefill_ops). vLLM
# replays prefills of up to 512 tokens (by default) from piecewise CUDA graphs and TensorRT-LLM
# runs its engine: no launch time (vLLM's longer, torch.compile'd prefills are not measured
# here: none either).
EAGER_PREFILL_ENGINES = frozenset({"sglang"})


def engine_efficiency(engine: str, eff: Efficiency = DEFAULT_EFFICIENCY) -> Efficiency:
    """`eff` as `engine` ("vllm", "sglang", "trtllm") launches its prefill kernels and fuses its
    all-reduces (`ALLREDUCE_NORM_FUSION`)."""
    eff = replace(eff, allreduce_norm_fusion=ALLREDUCE_NORM_FUSION.get(engine))
    return eff if engine in EAGER_PREFILL_ENGINES else replace(eff, prefill_launch_s=0.0)
