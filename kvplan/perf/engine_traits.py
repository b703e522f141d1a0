"""What the cost model takes from an engine (kvplan.engines.base.CostTraits, declared by each
engine): its fused TP all-reduce + RMSNorm, whether it launches prefill ops eagerly, its varlen
attention kernels; `engine_efficiency` applies them to an `Efficiency` (kvplan.perf.efficiency).
Read from the engines' code, not fitted."""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.versions import version_key
from kvplan.engines.base import AllReduceNormFusion, Engine, EngineOptions, PrefillOpCount
from kvplan.hardware.gpus import GPU
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import DEFAULT_EFFICIENCY, Efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.moe_gemm_shape import engine_shape
from kvplan.perf.op_counts import eager_prefill_ops, graph_prefill_ops, recurrent_mixer_ops
from kvplan.perf.shared_fusion import engine_folds_shared_expert
from kvplan.perf.trtllm_ops import trtllm_eager_prefill_ops


def fusion_applies(fusion: AllReduceNormFusion, spec: ModelSpec, gpu: GPU, layout: Layout,
                   tokens: int) -> bool:
    """Whether a step takes an engine's fused TP all-reduce + residual add + RMSNorm (FlashInfer's
    trtllm_allreduce_fusion, pattern kARResidualRMSNorm, in place of the all-reduce and the
    fused_add_rmsnorm after it): on the engine's architectures and GPU presets, for steps of at
    most `max_tokens` tokens on a TP group of 2 to `max_ranks` GPUs (one node), without DP
    attention or expert-parallel all-to-all. That step's RMSNorm after each fused all-reduce
    costs no kernel of its own (kvplan.perf.roofline.step_time); the all-reduce keeps its time
    (the norm is the kernel's epilogue)."""
    return (spec.model_type in fusion.model_types and gpu.name in fusion.gpus
            and 1 < layout.tp <= fusion.max_ranks and not layout.dp_attention
            and layout.ep == 1 and 0 < tokens <= fusion.max_tokens)


def release_fusion(fusions: tuple[AllReduceNormFusion, ...], version: str | None
                   ) -> AllReduceNormFusion | None:
    """The fused all-reduce + RMSNorm declaration release `version` runs: the last of `fusions`
    (CostTraits.allreduce_norm_fusions, oldest first) whose `since` it has reached, one without
    a `since` holding for every release; None where none has. Where no release is named
    (`version` None) only the declarations without a `since`, as the prefill graphs are off
    there: the launch time's fit rows name no release (PREFILL_LAUNCH_FIT, SGLang of early 2025
    on H200, which the SM 9.0 fusion of 0.5.7 would move: 63.2 -> 65.5 us)."""
    have = [f for f in fusions if f.since is None
            or (version is not None and version_key(version) >= version_key(f.since))]
    return have[-1] if have else None


def fuses_allreduce_norm(spec: ModelSpec, gpu: GPU, layout: Layout, tokens: int,
                         eff: Efficiency) -> bool:
    """Whether a step of `tokens` tokens runs `eff`'s fused all-reduce + RMSNorm."""
    fusion = eff.allreduce_norm_fusion
    return fusion is not None and fusion_applies(fusion, spec, gpu, layout, tokens)


def shared_expert_overlap(spec: ModelSpec, gpu: GPU, layout: Layout, eff: Efficiency) -> bool:
    """Whether a decode step replayed from a CUDA graph runs `spec`'s shared experts on a
    second stream beside the routed experts (`eff.shared_expert_stream`, which
    engine_efficiency keeps from its release on; kvplan.engines.sglang.shared_stream names
    the lines): on CUDA, its model types, without DP attention or an expert all-to-all (whose
    MoE path is another), where the engine keeps the shared experts out of its fused MoE
    (`unfused`)."""
    rule = eff.shared_expert_stream
    if rule is None or gpu.platform != "cuda" or layout.dp_attention or eff.moe_a2a is not None:
        return False
    return spec.model_type in rule.model_types and rule.unfused(spec, gpu, layout.ep)


def graph_prefill_applies(eff: Efficiency, spec: ModelSpec, gpu: GPU, layout: Layout,
                          tokens: int) -> bool:
    """Whether a prefill step of `tokens` tokens replays `eff`'s piecewise CUDA graphs
    (kvplan.engines.sglang.prefill_graph names the lines): on a CUDA GPU, without DP attention
    or an expert-parallel all-to-all, for an architecture not turned off (by name, or by the
    engine's `turned_off` rule for the model on this GPU at `eff`'s release), not multimodal
    and with no recurrent layers (their split ops are not counted: the eager count stays)
    unless the release validated the architecture (PrefillGraph.validated: a multimodal one's
    decoder, its recurrent layers too where their mixer's backend ops are counted,
    kvplan.perf.op_counts.RecurrentMixerOps.backend_ops), and for steps of 1 to
    `mla_max_tokens` tokens on an MLA model (others: any step of at least one token, each at
    most the chunked prefill size the graphs are captured up to)."""
    graph = eff.prefill_graph
    if graph is None or gpu.platform != "cuda" or layout.dp_attention or layout.ep > 1:
        return False
    if graph.disabled_architectures.intersection(spec.architectures):
        return False
    validated = graph.validated(spec, eff.engine_version)
    if spec.vision is not None and not validated:
        return False
    if spec.recurrent is not None and not (
            validated and recurrent_mixer_ops(spec.recurrent).backend_ops() is not None):
        return False
    if graph.is_turned_off(spec, gpu, eff.engine_version):
        return False
    mla = isinstance(spec.attention, LatentAttention)
    return 0 < tokens and (not mla or tokens <= graph.mla_max_tokens)


def prefill_launch_ops(spec: ModelSpec, gpu: GPU, layout: Layout, tokens: int, eff: Efficiency,
                       quantization: str | None = None, *, fused_norms: bool = False) -> int:
    """Ops a prefill step of `tokens` tokens launches from Python, each paying
    `eff.prefill_launch_s`: a captured step's (`graph_prefill_applies`,
    kvplan.perf.op_counts.graph_prefill_ops), else every op (eager_prefill_ops)."""
    if graph_prefill_applies(eff, spec, gpu, layout, tokens):
        assert eff.prefill_graph is not None
        return graph_prefill_ops(spec, layout, eff.prefill_graph)
    return eager_ops(spec, layout, eff, quantization, platform=gpu.platform,
                     fused_norms=fused_norms, gpu=gpu)


def eager_ops(spec: ModelSpec, layout: Layout, eff: Efficiency, quantization: str | None = None,
              *, platform: str = "cuda", fused_norms: bool = False, gpu: GPU | None = None
              ) -> int:
    """Every op an eager prefill step launches, counted from the code `eff.prefill_op_count`
    names: SGLang's (kvplan.perf.op_counts.eager_prefill_ops, with its fused all-reduce +
    RMSNorm where `fused_norms`) or TensorRT-LLM's PyTorch backend's
    (kvplan.perf.trtllm_ops.trtllm_eager_prefill_ops, whose own fusions are in its count)."""
    if eff.prefill_op_count is PrefillOpCount.trtllm:
        return trtllm_eager_prefill_ops(spec, layout, quantization, gpu=gpu)
    folded = gpu is not None and engine_folds_shared_expert(eff, spec, gpu, layout, quantization)
    return eager_prefill_ops(spec, layout, quantization, platform=platform,
                             fused_norms=fused_norms, gpu=gpu, shared_folded=folded)


def engine_efficiency(engine: str, eff: Efficiency = DEFAULT_EFFICIENCY, *,
                      enforce_eager: bool = False, version: str | None = None,
                      prefill_graph: bool | None = None, options: EngineOptions | None = None,
                      spec: ModelSpec | None = None) -> Efficiency:
    """`eff` as `engine` (an --engine name) launches its prefill kernels and fuses its
    all-reduces (kvplan.engines.base.CostTraits). Engines that launch prefill ops one by one
    from Python, outside CUDA graphs, pay `prefill_launch_s` per launched prefill op, counted
    from the code CostTraits.prefill_op_count names (`eager_ops`): SGLang
    (kvplan.perf.op_counts.eager_prefill_ops) and TensorRT-LLM's PyTorch backend, which replays
    CUDA graphs for generation-only steps only (kvplan.perf.trtllm_ops names the lines); vLLM
    replays prefills of up to 512 tokens (by default) from piecewise CUDA graphs: no launch time
    (vLLM's longer, torch.compile'd prefills are not measured here: none either).
    `enforce_eager` (vLLM's / TensorRT-LLM's --enforce-eager, PlanInputs.enforce_eager): no
    graphs and no compiled code, every prefill op launched from Python, so the launch time
    applies; vLLM's ops are counted from SGLang's model code (kvplan.perf.op_counts), which
    stands in for vLLM's. `version`: the engine release (None: the newest), which picks its fused
    all-reduce + RMSNorm (CostTraits.allreduce_norm_fusions, `release_fusion`), the
    attention kernels that compute in the KV cache's dtype (CostTraits.kv_dtype_attention) and
    its MLA decode's extra kernels (CostTraits.mla_decode_launches) and where it folds a shared
    expert into its fused MoE (CostTraits.shared_expert_fusion, only where a release is named),
    each from its `since` on.
    `prefill_graph`: whether the engine's piecewise prefill CUDA graphs (CostTraits.
    prefill_graph) are on: None, the release's default -- on from its `default_since` release,
    and off where no release is named, as the launch time's fit rows name none
    (PREFILL_LAUNCH_FIT); True, turned on (SGLang's --enable-piecewise-cuda-graph,
    from `since`); False, off (a disaggregated prefill server, DP attention, its
    --disable-piecewise-cuda-graph). `options` / `spec`: the launch's engine options and the
    model, from which the engine answers where it keeps its dense MLPs and lm_head under DP
    attention (EngineRules.dp_attention_weights) and the MoE all-to-all it runs
    (CostTraits.moe_all_to_all; None, either: its defaults). Where `eff` prices the experts by
    the pooled shape table and `moe_gemm_by_engine` is set, the engine's own table
    (CostTraits.experts_shape) takes its place."""
    rules = Engine(engine).rules
    traits = rules.cost_traits
    eff = replace(eff, allreduce_norm_fusion=release_fusion(
                      traits.allreduce_norm_fusions, version),
                  ep_all_to_all_needs_dp=traits.ep_all_to_all_needs_dp,
                  prefill_mlp_all_reduce=traits.prefill_mlp_all_reduce,
                  decode_mlp_gather=traits.decode_mlp_gather,
                  attention_kernels=traits.attention_kernels, moe_kernel=rules.moe_kernels(options),
                  engine_version=version, router_gemm=traits.router_gemm,
                  kv_dtype_attention=tuple(
                      k for k in traits.kv_dtype_attention
                      if version_key(version) >= version_key(k.since)),
                  mla_decode_launches=tuple(
                      k for k in traits.mla_decode_launches
                      if version_key(version) >= version_key(k.since)),
                  # Not where no release is named: the launch time's fit rows name none and
                  # ran early-2025 engines with the shared expert apart (PREFILL_LAUNCH_FIT;
                  # kvplan.engines.sglang.shared_fusion), as the undated all-reduce fusion.
                  shared_expert_fusion=tuple(
                      k for k in traits.shared_expert_fusion
                      if version is not None and version_key(version) >= version_key(k.since)),
                  dp_attention_weights=rules.dp_attention_weights(options),
                  moe_a2a=(traits.moe_all_to_all(options, spec)
                           if traits.moe_all_to_all is not None and spec is not None else None),
                  prefill_op_count=traits.prefill_op_count,
                  shared_expert_stream=(
                      traits.shared_expert_stream if traits.shared_expert_stream is not None
                      and version_key(version) >= version_key(traits.shared_expert_stream.since)
                      else None))
    if eff.moe_gemm_by_engine and eff.moe_gemm_shape is not None and traits.experts_shape:
        # The engine's own experts' table for the pooled one (kvplan.engines.moe_shape).
        eff = replace(eff, moe_gemm_shape=engine_shape(traits.experts_shape))
    eager = traits.eager_prefill or enforce_eager
    if not eager:
        return replace(eff, prefill_launch_s=0.0)
    graph = traits.prefill_graph
    if graph is None or enforce_eager or prefill_graph is False:
        return eff
    if prefill_graph is None:
        on = version is not None and version_key(version) >= version_key(graph.default_since)
    else:
        on = version_key(version) >= version_key(graph.since)
    return replace(eff, prefill_graph=graph) if on else eff
