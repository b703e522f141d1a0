"""vLLM as kvplan asks it (kvplan.engines.base.EngineRules): its KV-cache groups per pipeline
stage (kvplan.engines.vllm.alloc), its dtypes and block size, how it is launched, what the time
model and the views need to know of it. Its budget is kvplan.engines.vllm.budget."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import kvplan.engines.vllm.alloc as alloc
import kvplan.engines.vllm.profiles as profiles
from kvplan.engines.base import (
    CostTraits,
    EngineOptions,
    GridPages,
    Launch,
    LongContext,
    PlanFacts,
    PlanInputs,
    Scheduler,
    StageFacts,
    StagePool,
    block_pool_kv_bytes,
    flag_unread_version,
)
from kvplan.engines.caches import stage_caches
from kvplan.engines.decode_graphs import NO_DECODE_GRAPHS, DecodeGraphs
from kvplan.engines.handover import KvConnector
from kvplan.engines.launch import (
    Command,
    LaunchLayout,
    LaunchPlan,
    LaunchSettings,
    layout_text,
)
from kvplan.engines.moe_shape import VLLM_EXPERTS_SHAPE
from kvplan.engines.vllm.architectures import (
    transformers_backend_rotary,
    vllm_served_architecture,
)
from kvplan.engines.vllm.attention_backend import VLLM_ATTENTION_KERNELS
from kvplan.engines.vllm.block_size import (
    check_block_size,
    check_hybrid_mla_block,
    mla_block_note,
    mla_fp8_missing,
    mla_hybrid_alignment,
    vllm_block,
)
from kvplan.engines.vllm.compressed import vllm_v4_stage_config
from kvplan.engines.vllm.connectors import vllm_connector
from kvplan.engines.vllm.default_block import attention_default_block
from kvplan.engines.vllm.fp8_query import VLLM_KV_DTYPE_ATTENTION
from kvplan.engines.vllm.graph_sizes import vllm_model_max_capture_size
from kvplan.engines.vllm.in_flight import in_flight_span, in_flight_text
from kvplan.engines.vllm.index_cache import index_cache_served
from kvplan.engines.vllm.kv_dtype import (
    check_cpu_mla_kv_dtype,
    check_sparse_mla_backend,
    sparse_mla_served,
    vllm_auto_kv_dtype,
    vllm_model_dtype,
    vllm_runnable_kv_dtypes,
)
from kvplan.engines.vllm.launch import (
    vllm_copy_on_node,
    vllm_launch,
    vllm_running_cap,
    vllm_running_flag,
)
from kvplan.engines.vllm.moe_kernel import VLLM_MOE_KERNELS
from kvplan.engines.vllm.mxfp4_backend import vllm_mxfp4_backend
from kvplan.engines.vllm.options import VllmOptions, vllm_options
from kvplan.engines.vllm.quant_methods import check_quantization_loadable
from kvplan.engines.vllm.router_gemm import VLLM_ROUTER_GEMM
from kvplan.engines.vllm.runner import vllm_runs_v2
from kvplan.engines.vllm.spec_graph_sizes import vllm_cuda_graph_sizes
from kvplan.engines.vllm.stage_weights import check_vllm_pipeline, vllm_stage_outer
from kvplan.engines.vllm.towers import without_skipped_towers
from kvplan.model.attention import CompressedSparseAttention, LatentAttention
from kvplan.model.recurrent import GatedDeltaNet
from kvplan.weights.base import DpAttentionWeights

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.moe_kernel import MoeKernels
    from kvplan.hardware.gpus import GPU
    from kvplan.kv.kinds import LayerCaches
    from kvplan.model.context_limit import ContextLimit
    from kvplan.model.spec import ModelSpec
    from kvplan.weights.base import StageOuter


def resolved_ssm_dtype(spec: ModelSpec, inputs: PlanInputs) -> str:
    """vLLM's CPU backend keeps the SSM state in float32 unless a Gated-DeltaNet model is given
    bf16/fp16 explicitly (vllm/platforms/cpu.py, AVX512-BF16 hosts)."""
    platform = alloc.get_platform(inputs.platform)
    if platform.fp32_ssm_state and spec.recurrent is not None:
        explicit_half = inputs.ssm_dtype in ("bfloat16", "float16")
        if not (explicit_half and isinstance(spec.recurrent, GatedDeltaNet)):
            return "float32"
    return inputs.ssm_dtype


def vllm_stage_config(spec: ModelSpec, inputs: PlanInputs, layers: range | None = None,
                      context: int | None = None, *,
                      caches: tuple[LayerCaches, ...] | None = None) -> alloc.VllmKVConfig:
    """vLLM's KV-cache groups for one pipeline stage (default: the whole model)."""
    vllm_served_architecture(spec, inputs.engine_version, profiles.DEFAULT_VLLM_VERSION)
    check_quantization_loadable(spec, inputs.quantization, inputs.engine_version,
                                profiles.DEFAULT_VLLM_VERSION)
    if isinstance(spec.attention, CompressedSparseAttention):
        # DeepSeek-V4's caches take vLLM's packed groups, with its own releases, KV dtype and
        # block (kvplan.engines.vllm.compressed); pipeline stages are refused there.
        return vllm_v4_stage_config(spec, spec.attention, inputs,
                                    inputs.context if context is None else context)
    check_sparse_mla_backend(spec, inputs)
    check_cpu_mla_kv_dtype(spec, inputs)
    if caches is None:
        caches = stage_caches(spec, inputs, layers)
    platform = alloc.get_platform(inputs.platform)
    block = vllm_block(caches, spec, inputs, platform)
    profile = profiles.vllm_profile(inputs.engine_version)
    profiles.check_mamba_prefix_caching(spec, inputs.engine_version, inputs.prefix_caching,
                                        drafter=inputs.speculative_method is not None)
    config = alloc.vllm_kv_config(
        caches, context=inputs.context if context is None else context,
        profile=profile,
        platform=platform, block_size=block,
        hybrid_manager=vllm_options(inputs).hybrid_kv_cache_manager,
        prefix_caching=inputs.prefix_caching,
        max_num_batched_tokens=inputs.max_num_batched_tokens,
        num_spec_tokens=inputs.num_speculative_tokens, pp=inputs.pp,
        gdn_checkpoint=alloc.vllm_gdn_checkpoints(spec, profile, inputs.platform,
                                                  inputs.compute_capability),
        mla_hybrid_alignment=mla_hybrid_alignment(inputs.engine_version),
        async_scheduling=vllm_options(inputs).async_scheduling, version=inputs.engine_version,
        v2_runner=vllm_runs_v2(inputs.engine_version, spec, pp=inputs.pp,
                               speculative_method=inputs.speculative_method),
        eagle_drafter=inputs.speculative_method is not None,
        kv_transfer=vllm_options(inputs).kv_transfer)
    check_block_size(caches, inputs, config)
    check_hybrid_mla_block(caches, spec, inputs, config)
    return config


CUDA_MLA_BLOCK_TEXT = " (no --gpu, 0.18 on; by GPU, KV dtype and release: block_size.py)"


class VllmEngine:
    name = "vllm"
    display_name = "vLLM"
    newest_read = profiles.NEWEST_READ_VLLM
    fraction_name = "gpu_memory_utilization"
    # --kv-cache-dtype choices: auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc
    # (vllm/config/cache.py CacheDType): no int4/nvfp4 KV cache.
    kv_dtypes = ("bf16", "fp8")
    # The default: the budget's, by version (0.9 to 0.19, 0.92 from 0.20: VllmBudget.
    # default_fraction), as `kvplan estimate` takes it; up to 0.95 as in vLLM's examples.
    # EP = TP x DP: the MoE layers flatten TP across the DP ranks and, with
    # --enable-expert-parallel, hold ceil(E / (TP x DP)) experts whole per rank
    # (vllm/model_executor/layers/fused_moe/config.py: FusedMoEParallelConfig.make).
    launch = Launch(fractions=(None, 0.95), context_flag="max-model-len", ep_over_dp=True)
    # Prefills of up to 512 tokens (by default) replay piecewise CUDA graphs; its fused
    # all-reduce + RMSNorm compilation pass (fuse_allreduce_rms) is not modelled.
    # vllm/model_executor/layers/fused_moe/config.py, FusedMoEParallelConfig: the all-to-all
    # kernels (DeepEP, pplx, FlashInfer, naive) run when `use_all2all_kernels`, i.e. `use_ep and
    # dp_size > 1` (0.11-0.18; later also with prefill-context or sequence parallelism, off by
    # default); with --enable-expert-parallel on TP ranks alone, FusedMoE reduces the experts'
    # output with the TP all-reduce (`reduce_results`), as without EP.
    # Its attention kernel by GPU: FlashAttention 2's 64-row query tiles on SM 8.x / 12.x
    # (kvplan.engines.vllm.attention_backend); with an fp8 cache on SM 10.x, FP8 attention math
    # (kvplan.engines.vllm.fp8_query, 0.16.0 on). Its experts: the Triton fused_moe where the
    # release runs it for the format and GPU (kvplan.engines.vllm.moe_kernel.VllmMoeKernels).
    cost_traits = CostTraits(ep_all_to_all_needs_dp=True, attention_kernels=VLLM_ATTENTION_KERNELS,
                             kv_dtype_attention=VLLM_KV_DTYPE_ATTENTION,
                             moe_kernel=VLLM_MOE_KERNELS, router_gemm=VLLM_ROUTER_GEMM,
                             experts_shape=VLLM_EXPERTS_SHAPE, sm100_kernel_tables=True)
    scheduler = Scheduler.mixed_token_budget  # vllm/v1/core/sched/scheduler.py
    # vllm/config/model.py _get_and_verify_max_len, lines 2639-2665: ValueError "User-specified
    # max_model_len (...) is greater than the derived max_model_len" unless the variable is 1.
    long_context = LongContext(refuses=True, action="refuses to start with it",
                               override_env="VLLM_ALLOW_LONG_MAX_MODEL_LEN")

    def max_context(self, spec: ModelSpec) -> ContextLimit | None:
        return spec.max_context

    def options(self, inputs: PlanInputs) -> EngineOptions:
        return vllm_options(inputs)

    def prefill_step_defaults(self, gpu: GPU, version: str | None, *,
                              dp_attention: int = 1) -> tuple[int, int]:
        """`vllm serve`'s max_num_batched_tokens and max_num_seqs by version and device
        (EngineArgs.get_batch_defaults: alloc.vllm_batch_defaults), on every DP engine alike
        (each data-parallel engine core runs its own scheduler with the same limits)."""
        seqs, tokens = alloc.vllm_batch_defaults(gpu.total_bytes, is_a100=gpu.is_a100,
                                                 version=version,
                                                 capability=gpu.compute_capability)
        return tokens, seqs

    def decode_graphs(self, inputs: PlanInputs) -> DecodeGraphs:
        # No rule of vLLM's reads a captured step; its graphs count tokens and pad a step to
        # the next size (decode_graph_sizes; kvplan.engines.decode_graphs).
        return NO_DECODE_GRAPHS

    def decode_graph_sizes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[int, ...]:
        """vLLM's capture sizes (spec_graph_sizes.vllm_cuda_graph_sizes) at the launch's
        max_num_seqs (`vllm serve`'s default by version and device where not given) and
        max_num_batched_tokens, under the model class's ceiling (graph_sizes: gpt-oss), with
        the drafter's k tokens (spec_graph_sizes); none with --enforce-eager. A step of up to
        the largest runs padded to the next (v1/worker/gpu_model_runner.py 0.11.0:1927-1935;
        kvplan.perf.graph_padding)."""
        if inputs.enforce_eager:
            return ()
        seqs = inputs.max_num_seqs
        if seqs is None:
            seqs, _ = alloc.vllm_batch_defaults(inputs.total_bytes, is_a100=inputs.is_a100,
                                                version=inputs.engine_version,
                                                capability=inputs.compute_capability)
        return vllm_cuda_graph_sizes(
            max_num_seqs=seqs, max_num_batched_tokens=inputs.max_num_batched_tokens,
            model_max_capture=vllm_model_max_capture_size(spec.architectures,
                                                          inputs.engine_version),
            num_speculative_tokens=inputs.num_speculative_tokens, version=inputs.engine_version)

    def default_block_size(self, inputs: PlanInputs) -> int:
        # The platform's attention block; the model's own (MLA by GPU and KV dtype, the sparse
        # indexer's) is block_size.vllm_block, as the plan reports it.
        platform = alloc.get_platform(inputs.platform)
        return attention_default_block(platform.name, platform.default_block,
                                       inputs.engine_version)

    def default_max_num_batched_tokens(self, total_bytes: int | None, *, is_a100: bool,
                                       version: str | None,
                                       capability: tuple[int, int] | None = None) -> int:
        """`vllm serve`'s chunked-prefill budget (EngineArgs.get_batch_defaults)."""
        return alloc.vllm_batch_defaults(total_bytes, is_a100=is_a100, version=version,
                                         capability=capability)[1]

    def served_spec(self, spec: ModelSpec, inputs: PlanInputs | None = None) -> ModelSpec:
        """vLLM caches MiniCPM3's MLA decompressed (`vllm_cached_spec`); with `inputs`, an
        architecture outside its registry as `served_architecture` says, and DeepSeek's sparse
        attention at fp8 on SM 10.x in the standard fp8 row
        (kvplan.engines.vllm.kv_dtype.sparse_mla_served), a multimodal wrapper without the
        towers its --limit-mm-per-prompt leaves unbuilt (kvplan.engines.vllm.towers), and
        IndexCache's indexer on the layers this release builds it on
        (kvplan.engines.vllm.index_cache), transformers' rotary buffers instead of cos/sin
        tables where its Transformers backend builds the model
        (kvplan.engines.vllm.architectures.transformers_backend_rotary); a class without
        SupportsPP refused at --pp > 1 (kvplan.engines.vllm.stage_weights)."""
        spec = alloc.vllm_cached_spec(spec)
        if inputs is None:
            return spec
        spec = self.served_architecture(spec, inputs.engine_version)
        spec = transformers_backend_rotary(spec, inputs.engine_version)
        check_vllm_pipeline(spec, inputs.pp)
        opts = vllm_options(inputs)
        spec = without_skipped_towers(spec, opts.limit_mm_per_prompt,
                                      inputs.engine_version or profiles.DEFAULT_VLLM_VERSION,
                                      skip_mm_profiling=opts.skip_mm_profiling)
        spec = index_cache_served(spec, inputs.engine_version, profiles.DEFAULT_VLLM_VERSION)
        return sparse_mla_served(spec, inputs)

    def served_inputs(self, spec: ModelSpec, inputs: PlanInputs) -> PlanInputs:
        return inputs  # it forces no setting kvplan's inputs carry

    def served_architecture(self, spec: ModelSpec, version: str | None) -> ModelSpec:
        """An architecture vLLM's registry does not list: refused, or served by its
        Transformers backend with an assumption (kvplan.engines.vllm.architectures)."""
        return flag_unread_version(
            vllm_served_architecture(spec, version, profiles.DEFAULT_VLLM_VERSION), self, version)

    def state_dtypes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[str | None, str]:
        return None, resolved_ssm_dtype(spec, inputs)

    def refuse_unmodelled(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        """Everything kvplan sizes is modelled for vLLM (kvplan.engines.vllm.alloc)."""

    def model_dtype(self, spec: ModelSpec) -> str:
        return vllm_model_dtype(spec)

    def auto_kv_dtype(self, spec: ModelSpec, version: str | None = None,
                      gpu: GPU | None = None) -> tuple[str, str | None]:
        """--kv-cache-dtype auto: the checkpoint's declared KV dtype, else the model dtype
        (bf16, fp16 for a float16 checkpoint), but fp8 for GLM-5 on SM 10.x
        (kvplan.engines.vllm.kv_dtype)."""
        return vllm_auto_kv_dtype(spec, version, gpu)

    def given_kv_dtype(self, spec: ModelSpec, kv_dtype: str, version: str | None = None,
                       gpu: GPU | None = None) -> tuple[str, str | None]:
        """--kv-cache-dtype as given."""
        return kv_dtype, None

    def runnable_kv_dtypes(self, spec: ModelSpec, version: str | None = None,
                           gpu: GPU | None = None) -> tuple[str, ...] | None:
        """Every one --kv-cache-dtype names (bfloat16, fp8: kvplan.engines.vllm.launch) but
        where the sparse MLA backend on `gpu` narrows them (kvplan.engines.vllm.kv_dtype), or
        an older release's dense MLA backend takes no fp8 (kvplan.engines.vllm.block_size)."""
        att = alloc.vllm_cached_spec(spec).attention
        if (isinstance(att, LatentAttention) and not att.decompressed_cache
                and spec.indexer is None and mla_fp8_missing(
                    att, version, "cuda" if gpu is None else gpu.platform,
                    None if gpu is None else gpu.compute_capability)):
            return ("bf16",)
        return vllm_runnable_kv_dtypes(spec, gpu)

    def default_speculative_tokens(self) -> int:
        return 1

    def loads_draft_weights(self, inputs: PlanInputs) -> bool:
        return True

    def stage_outer(self, spec: ModelSpec) -> StageOuter:
        """The embeddings and head a class builds on every stage (stage_weights._STAGE_OUTER)."""
        return vllm_stage_outer(spec)

    def moe_kernels(self, options: EngineOptions | None = None) -> MoeKernels | None:
        """VLLM_MOE_KERNELS with the user's MXFP4 kernel (--mxfp4-backend, as vLLM's
        VLLM_MXFP4_USE_MARLIN=1 picks it: kvplan.engines.vllm.moe_kernel, VllmMoeKernels.
        mxfp4_chosen), so the time model prices the kernel the launch runs."""
        chosen = options.mxfp4_backend if isinstance(options, VllmOptions) else None
        return VLLM_MOE_KERNELS if chosen is None else replace(VLLM_MOE_KERNELS,
                                                               mxfp4_chosen=chosen)

    def dp_attention_weights(self, options: EngineOptions | None = None) -> DpAttentionWeights:
        """DP + EP: each DP rank a replica of all but the routed experts (its own TP group)."""
        return DpAttentionWeights()

    def expert_map_entry_bytes(self) -> int:
        """FusedMoE's int32 expert map, a GPU buffer built with the model (vLLM 0.32
        layers/fused_moe/expert_map_manager.py:72, routed_experts.py:133 and :262-268; read in
        kvplan.capacity.weights.expert_map_bytes)."""
        return 4

    def mxfp4_backend(self, inputs: PlanInputs) -> tuple[str, str]:
        """By GPU generation and release, or --mxfp4-backend (kvplan.engines.vllm.mxfp4_backend:
        Hopper runs Triton from 0.11.1, whose wheel vendors triton_kernels)."""
        return vllm_mxfp4_backend(inputs.engine_version, inputs.compute_capability,
                                  inputs.platform, vllm_options(inputs).mxfp4_backend)

    def attention_scale_bytes(self, spec: ModelSpec) -> int:
        """Each Attention / MLAAttention layer's four float32 scale buffers, _k_scale, _v_scale,
        _q_scale, _prob_scale (vLLM 0.32 model_executor/layers/attention/attention.py:133-139,
        :188, :465; mla_attention.py:547; kvplan.capacity.weights.attention_scales_bytes).
        DeepSeek-V4's DeepseekV4Attention (models/deepseek_v4/attention.py:131) is neither
        class and registers none."""
        return 0 if isinstance(spec.attention, CompressedSparseAttention) else 16

    def estimate_config(self, spec: ModelSpec, inputs: PlanInputs) -> alloc.VllmKVConfig:
        return vllm_stage_config(spec, inputs)

    def stage_pool(self, spec: ModelSpec, inputs: PlanInputs, layers: range, context: int,
                   budget: int, caches: tuple[LayerCaches, ...]) -> StagePool | None:
        """vLLM's pool: its KV-cache groups for the stage (kvplan.engines.vllm.alloc)."""
        config = vllm_stage_config(spec, inputs, layers, context, caches=caches)
        if not config.groups:
            return None
        num_blocks = config.num_blocks(budget)
        first = config.groups[0]
        # A packed pool's block is its widest group's pages side by side (one slot of
        # bytes_per_block); else one page size x a group's layers.
        page, size = ((config.bytes_per_block, 1) if config.packed else
                      (first.page_bytes, len(first.layers) + first.padding_layers))
        return StagePool(
            per_gpu_bytes_per_token=(sum(c.bytes_per_token for lc in caches for c in lc.caches)
                                     if all(c.per_token for lc in caches for c in lc.caches)
                                     else None),
            page_bytes=page, group_size=size,
            num_groups=len(config.groups), num_blocks=num_blocks,
            blocks_per_request=config.blocks_per_request,
            # A shared prefix is cached once, in whole blocks, by the groups whose kind keeps
            # every token (full attention, MLA); windows, chunks and states are per request.
            shared_prefix_blocks=sum(min(inputs.shared_prefix, context) // g.block_size
                                     for g in config.groups if g.cache.shares_prefix),
            # vLLM <= 0.19 logs num_blocks // num_groups x block_size as "GPU KV cache size".
            token_capacity=num_blocks // len(config.groups) * config.block_size,
            block_size=config.block_size, requested_block_size=config.requested_block_size,
            state_bytes_per_request=config.state_bytes_per_request,
            state_padding_percent=config.state_padding_percent,
            mamba_cache_mode=config.mamba_cache_mode,
            kv_cache_groups=tuple(config.describe_groups()),
            reported_kv_cache_tokens=config.reported_tokens(num_blocks, context),
        )

    def kv_bytes_needed(self, stage: StageFacts, requests: int, context: int,
                        shared_prefix: int) -> int:
        return block_pool_kv_bytes(stage, requests)

    def grid_pages(self, spec: ModelSpec, inputs: PlanInputs, stage: StageFacts,
                   contexts: Any) -> GridPages:
        """The engine's own per-group rules (kvplan.kv.kinds), over every context."""
        config = vllm_stage_config(spec, inputs)
        return GridPages(pages_per_request=config.pages_per_request(contexts),
                         bytes_per_slot=config.bytes_per_block, num_groups=len(config.groups),
                         block_size=config.block_size)

    def sequence_block_size(self, spec: ModelSpec, inputs: PlanInputs) -> int:
        """The block vLLM runs, as `estimate`: raised for recurrent state, dense MLA's by GPU and
        KV dtype, the sparse indexer's (kvplan.engines.vllm.block_size.vllm_block)."""
        latent = isinstance(spec.attention, LatentAttention) and not (
            spec.attention.decompressed_cache)
        if not (spec.num_recurrent_layers or latent):
            return inputs.resolved_block_size
        return vllm_stage_config(spec, inputs).block_size

    def request_cap(self, stage: StageFacts, budgets: Any, contexts: Any) -> Any:
        return None

    def reported_version(self, inputs: PlanInputs) -> str | None:
        return profiles.vllm_profile(inputs.engine_version).version

    def reported_platform(self, inputs: PlanInputs) -> str | None:
        return inputs.platform

    def launch_plan(self, ref: str, layout: LaunchLayout, settings: LaunchSettings
                    ) -> LaunchPlan:
        return vllm_launch(ref, layout, settings)

    def copy_on_node(self, command: Command, slot: int, gpus: int) -> Command:
        return vllm_copy_on_node(command, slot, gpus)

    def kv_connector(self, name: str | None) -> KvConnector:
        return vllm_connector(name)

    def layout_text(self, layout: LaunchLayout) -> str:
        # DP attention runs as `--data-parallel-size D --tensor-parallel-size T/D`: D engines
        # of T/D GPUs each (vllm/launch.py), so the row says tp T/D, dp D.
        text = layout_text(layout.attention_tp, layout.pp, layout.dp, layout.ep, "dp")
        return text + " (data-parallel attention)" if layout.dp_attention else text

    def running_cap(self, layout: LaunchLayout, concurrency: int) -> int:
        return vllm_running_cap(layout, concurrency)

    def running_flag(self, layout: LaunchLayout, per_scheduler: int) -> int:
        return vllm_running_flag(layout, per_scheduler)

    def page_row(self, plan: PlanFacts, page_bytes: int, group_size: int,
                 num_groups: int) -> tuple[str, str]:
        if page_bytes not in {g["page_bytes"] for g in plan.kv_cache_groups}:
            # A packed pool (kvplan.engines.vllm.packed): stage_pool gives its pool block as the
            # page, no group's own page size.
            return "pool block", (f"{num_groups} groups' pages side by side, the widest "
                                  "group's (vLLM's packed KV-cache groups)")
        return "page (block per layer)", (
            f"{plan.block_size} tokens; {group_size} layers share a block slot"
            + (f", {num_groups} groups" if num_groups > 1 else ""))

    def view_rows(self, plan: PlanFacts) -> list[tuple[str, int, str]]:
        rule = ("int(max_concurrency x context)" if plan.reported_kv_cache_tokens !=
                plan.token_capacity else "num_blocks // groups x block size")
        return [("reported KV cache tokens", plan.reported_kv_cache_tokens,
                 f"what vLLM {plan.engine_version} logs as 'KV cache size: N tokens' ({rule})")]

    def prints_max_concurrency(self) -> bool:
        """"Maximum concurrency for N tokens per request: X.XXx"."""
        return True

    def capacity_notes(self, spec: ModelSpec, plan: PlanFacts) -> list[str]:
        notes = []
        note = mla_block_note(plan.platform, plan.engine_version, spec.num_recurrent_layers > 0)
        if (isinstance(spec.attention, LatentAttention) and spec.indexer is None
                and not spec.attention.decompressed_cache and note):
            # Dense MLA only: DeepSeek's sparse attention runs its indexer's block
            # (plan.block_size), whatever the MLA backend.
            notes.append(note)
        notes.append(f"vLLM {plan.engine_version} rules, platform {plan.platform} "
                     "(see `kvplan engines`).")
        if plan.block_size != plan.requested_block_size and plan.state_padding_percent:
            notes.append(
                f"Attention block raised from {plan.requested_block_size} to {plan.block_size} "
                f"tokens so a page holds one recurrent state; state page padded by "
                f"{plan.state_padding_percent:.2f}% (vLLM: 'Setting attention block size', "
                "'Padding mamba page size').")
        if spec.is_hybrid or spec.sliding_window:
            notes.append(
                "Sliding and chunked groups keep the window (chunk) plus the tokens in flight "
                f"({in_flight_text()}); recurrent groups keep 1 state page per request, 2 "
                "(Mamba2: 3) in mode align.")
        return notes

    def shows_groups(self, plan: PlanFacts) -> bool:
        return len(plan.kv_cache_groups) > 1

    def profile_view(self) -> tuple[list[list[str]], list[dict[str, object]], list[str]]:
        """`kvplan engines`: a row and a record per vLLM profile, and the notes on its rules."""
        rows, records = [], []
        for p, nxt in zip(profiles.VLLM_PROFILES, (*profiles.VLLM_PROFILES[1:], None), strict=True):
            ratio = "smaller count" if p.group_size_ratio is None else (
                f"larger if < {p.group_size_ratio:g}x smaller")
            rows.append([f"vllm {p.version}", ratio,
                         "blocks//groups x bs" if p.reported_tokens == "blocks" else
                         "int(conc. x len)",
                         (in_flight := in_flight_span(p.version, nxt.version if nxt else None)),
                         "on" if p.chunked_local_hybrid else "off",
                         ("align" if p.hybrid_prefix_caching else
                          "none; align with prefix caching") if p.mamba_align_mode else "none"])
            records.append({"engine": "vllm", **dict(p.__dict__.items()), "in_flight": in_flight})
        notes = [f"vllm {p.version}: {p.notes}." for p in profiles.VLLM_PROFILES] + [
            "Rules read from vLLM's source (0.32 to 0.34: v1/kv_cache_interface.py, "
            "v1/core/kv_cache_utils.py and 0.33's kv_cache_planning.py, platforms/interface.py, "
            "config/vllm.py, engine/arg_utils.py, v1/worker/gpu_worker.py), each profile's "
            "change at the first wheel 0.10.0 - 0.34.0 that has it (kvplan.engines.vllm."
            "profiles), and checked on start-up logs; --engine-version X.Y picks the newest "
            "profile at "
            f"or below X.Y (none given: {profiles.DEFAULT_VLLM_VERSION}, the newest whose CUDA "
            "budget kvplan models; 0.33's and 0.34's are refused unless the budget or reserve "
            f"is given); a release after {profiles.NEWEST_READ_VLLM} takes its rules, not exact.",
            f"Sliding and chunked layers keep their tokens in flight: {in_flight_text()} "
            "(kvplan.engines.vllm.in_flight).",
            "Platforms: " + "; ".join(
                f"{p.name}: block {p.default_block}, MLA {p.mla_block}"
                f"{CUDA_MLA_BLOCK_TEXT if p.name == 'cuda' else ''}"
                + (f", sparse MLA {p.sparse_mla_block}" if p.sparse_mla_block_multiple
                   else ", no sparse MLA") + f", kernel alignment "
                f"{p.kernel_block}, async scheduling {'on' if p.async_scheduling else 'off'}"
                for p in alloc.PLATFORMS.values()) + ".",
            "Blocks with no --block-size from vLLM 0.34: CacheConfig.DEFAULT_BLOCK_SIZE 64 "
            "(16 before): CUDA standard attention 64, MLA its backend's take of 64 (CUTLASS_MLA "
            "128); ROCm MLA and sparse MLA 64, standard attention 16 (ROCM_ATTN's own); CPU "
            "128 (kvplan.engines.vllm.default_block).",
            "vLLM reserve: the profile peak (max of the forward over max_num_batched_tokens and "
            "the sampler warm-up: model runner V1 0.13 GiB + 14.37 B per logit on FlashInfer's "
            "or the Triton top-k/top-p, + 34.64 B on PyTorch's sort (0.10-0.16 without "
            "FlashInfer; --flashinfer-sampler); model runner V2, the default for listed "
            "architectures from 0.22, dense text models from 0.25 and all from 0.29, the 16-bit "
            "logits alone plus its penalty state), non-torch memory by TP, CUDA graphs by the "
            "number vLLM captures (V1 from 0.20, V2 from 0.29; not with --enforce-eager); batch "
            "defaults by GPU memory (>= 160 GiB tier from 0.28). Unified-memory GPUs (GB10) "
            "need --reserve-gib: vLLM reads free memory there as the host's available RAM "
            "(utils/mem_utils.py).",
        ]
        return rows, records, notes


ENGINE = VllmEngine()
