"""SGLang as kvplan asks it (kvplan.engines.base.EngineRules): its token pools per pipeline
stage (kvplan.engines.sglang.pools), its dtypes and page size, how it is launched, what the time
model and the views need to know of it. Its budget is kvplan.engines.sglang.budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError
from kvplan._util.units import cdiv
from kvplan.engines.base import (
    CostTraits,
    EngineDefaults,
    EngineOptions,
    GridPages,
    Launch,
    LongContext,
    PlanFacts,
    PlanInputs,
    Scheduler,
    StageFacts,
    StagePool,
    check_one_attention_per_layer,
    flag_unread_version,
)
from kvplan.engines.decode_graphs import DecodeGraphs
from kvplan.engines.handover import KvConnector
from kvplan.engines.launch import Command, LaunchLayout, LaunchPlan, LaunchSettings
from kvplan.engines.moe_shape import SGLANG_EXPERTS_SHAPE
from kvplan.engines.sglang.allreduce_fusion import SGLANG_ALLREDUCE_NORM_FUSIONS
from kvplan.engines.sglang.architectures import sglang_served_architecture
from kvplan.engines.sglang.budget import sglang_cuda_graph_max_bs
from kvplan.engines.sglang.connectors import sglang_connector
from kvplan.engines.sglang.context import OVERRIDE_ENV, sglang_context_limit
from kvplan.engines.sglang.deepep import (
    check_moe_a2a,
    sglang_dp_attention_weights,
    sglang_moe_all_to_all,
)
from kvplan.engines.sglang.dsa_page import sglang_page_size
from kvplan.engines.sglang.dsa_settings import dsa_settings_notes, sglang_dsa_inputs
from kvplan.engines.sglang.index_cache import index_cache_served
from kvplan.engines.sglang.kv_dtype import (
    check_sglang_quant_file,
    sglang_auto_kv_dtype,
    sglang_given_kv_dtype,
    sglang_model_dtype,
    sglang_runnable_kv_dtypes,
)
from kvplan.engines.sglang.launch import sglang_copy_on_node, sglang_launch
from kvplan.engines.sglang.mla_decode import SGLANG_MLA_DECODE_LAUNCHES
from kvplan.engines.sglang.mla_prefill import SGLANG_KV_DTYPE_ATTENTION
from kvplan.engines.sglang.options import sglang_chunked_prefill_tokens, sglang_options
from kvplan.engines.sglang.pools import (
    check_sglang_served,
    sglang_pool,
    sglang_state_dtypes,
)
from kvplan.engines.sglang.prefill_graph import SGLANG_PIECEWISE_PREFILL
from kvplan.engines.sglang.quant_methods import check_sglang_quantization
from kvplan.engines.sglang.router_gemm import SGLANG_ROUTER_GEMM
from kvplan.engines.sglang.shared_fusion import SGLANG_SHARED_EXPERT_FUSION
from kvplan.engines.sglang.shared_stream import SGLANG_SHARED_EXPERT_STREAM
from kvplan.engines.vllm.alloc import vllm_batch_defaults
from kvplan.model.attention import AttentionKind
from kvplan.weights.base import DpAttentionWeights, StageOuter

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.moe_kernel import MoeKernels
    from kvplan.hardware.gpus import GPU
    from kvplan.kv.kinds import LayerCaches
    from kvplan.model.context_limit import ContextLimit
    from kvplan.model.spec import ModelSpec

# `kvplan engines`: SGLang's default mem_fraction_static by release (server_args.py).
SGLANG_FRACTION_RULES = (
    ("sglang 0.4.5", "TP table 0.88 / 0.87 / 0.85 / 0.81 / 0.79"),
    ("sglang 0.4.6", "TP x PP table; raised above 96 GiB of GPU memory"),
    ("sglang 0.4.8", "(gpu_mem - reserved) / gpu_mem, reserved by memory tier + TP x PP"),
    ("sglang 0.5.3", "reserved = 512 + 1.5 chunked prefill + 2 graph bs + 128 TP x PP "
                     "(>= 10 GiB above 60 GiB)"),
    ("sglang 0.5.10", "+ prefill CUDA graphs (8 MiB x 58, MLA 1.5 GiB)"),
)


class SglangEngine(EngineDefaults):
    # EngineDefaults' answers stand (the version as asked, no platform, the TP layout text, no
    # view rows); its running cap is the concurrency because `--max-running-requests` is the
    # server's total: each DP rank's model runner takes server_args.max_running_requests //
    # dp_size (sglang/srt/model_executor/model_runner.py, "Init max running requests").
    name = "sglang"
    display_name = "SGLang"
    # The newest release whose sizing code kvplan has read: 0.5.23 (pools.py: 0.5.14-0.5.23
    # DefaultPoolConfigurator; kv_dtype.py and quant_methods.py read to 0.5.23).
    newest_read = "0.5.23"
    fraction_name = "mem_fraction_static"
    kv_dtypes = ("bf16", "fp8")

    def running_flag(self, layout: LaunchLayout, per_scheduler: int) -> int:
        """--max-running-requests is the server's: under DP attention each rank takes it //
        dp_size, ModelRunner.dp_size being server_args.dp_size with --enable-dp-attention and 1
        without (model_runner.py "Init max running requests": min(max_running_requests //
        dp_size, req_to_token_pool.size); the pool's own max_num_reqs from 0.5.10,
        _resolve_max_num_reqs: min(max_running_requests // dp_size, estimated), from 0.5.14
        min(.., tokens // 2); lines as kvplan.engines.sglang.pools and .decode_admission cite
        them: 0.5.10 mixin:844-849, 0.5.14 mixin:988-991, 0.5.5.post2 model_runner.py:558-565,
        0.5.3 tp_worker.py:144-151). So D ranks of R requests each take D x R: (D x R) // D = R,
        within those caps where R was simulated within them. Without DP attention the
        data-parallel controller starts each --dp-size replica with the same server_args and
        no division: each replica takes the flag whole. (The `// dp_size` forms were read in
        stored copies of those files; no release tag of SGLang is mirrored in this session.)"""
        return per_scheduler * (layout.dp if layout.dp_attention else 1)
    # The default fraction depends on TP and memory (kvplan.engines.sglang.budget).
    launch = Launch(fractions=(None, 0.9), context_flag="context-length",
                    moe_tp_under_ep="0.5.9")  # kvplan.engines.moe_layout
    # Prefill ops launched one by one from Python (model_executor/cuda_graph_runner.py captures
    # decode batches only) before 0.5.10; from 0.5.10 on, piecewise CUDA graphs by default
    # (kvplan.engines.sglang.prefill_graph); the fused all-reduce + RMSNorm above. Without DeepEP
    # (--moe-a2a-backend none, the default: server_args.py:472, 0.5.8.post1) an extend step's
    # MLP layers gather by all-reduce, with no all-to-all (kvplan.perf.roofline, `prefill_gather`);
    # a decode step's (CUDA graphs, MAX_LEN) by all-gather and reduce-scatter, no all-to-all
    # either (layers/dp_attention.py:76-82, :478-495, :552-561; communicator.py:566-576, :920-936).
    # An MLA prefill on SM 10.x with an fp8 cache computes in FP8 (kvplan.engines.sglang.
    # mla_prefill: trtllm_mla_backend.py:1133-1134, 0.5.7 on).
    # --moe-a2a-backend deepep: DeepEP's dispatch and combine on the MoE layers in place of
    # the gathers (kvplan.engines.sglang.deepep).
    cost_traits = CostTraits(eager_prefill=True, prefill_mlp_all_reduce=True,
                             decode_mlp_gather=True, moe_all_to_all=sglang_moe_all_to_all,
                             allreduce_norm_fusions=SGLANG_ALLREDUCE_NORM_FUSIONS,
                             kv_dtype_attention=SGLANG_KV_DTYPE_ATTENTION,
                             mla_decode_launches=SGLANG_MLA_DECODE_LAUNCHES,
                             shared_expert_fusion=SGLANG_SHARED_EXPERT_FUSION,
                             prefill_graph=SGLANG_PIECEWISE_PREFILL,
                             router_gemm=SGLANG_ROUTER_GEMM,
                             experts_shape=SGLANG_EXPERTS_SHAPE,  # its own (moe_shape)
                             shared_expert_stream=SGLANG_SHARED_EXPERT_STREAM)
    scheduler = Scheduler.prefill_first  # python/sglang/srt/managers/scheduler.py
    # python/sglang/srt/configs/model_config.py: ModelConfig.__init__ (0.5.2 lines 177-198),
    # `_derive_context_length` from 0.5.3 (0.5.6 lines 286-315, 0.5.10 379-408): a
    # --context-length above the derived one raises ValueError "To allow overriding this
    # maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" unless it is set
    # (environ.py EnvBool(False)). 0.4.x to 0.5.0rc0 read it with default="True" (0.4.8 lines
    # 137-153): they only warn and start with the longer context.
    long_context = LongContext(
        refuses=True, action="refuses to start with it (0.5.1 on; 0.4.x and 0.5.0 warn)",
        override_env=OVERRIDE_ENV)

    def max_context(self, spec: ModelSpec) -> ContextLimit | None:
        # get_context_length (kvplan.engines.sglang.context).
        return spec.engine_max_context(sglang_context_limit)

    def options(self, inputs: PlanInputs) -> EngineOptions:
        return sglang_options(inputs)

    def prefill_step_defaults(self, gpu: GPU, version: str | None, *,
                              dp_attention: int = 1) -> tuple[int, int]:
        """Its chunked prefill size by GPU, per attention-DP rank (sglang_chunked_prefill_tokens);
        no cap on the prompts a step takes but the KV."""
        return sglang_chunked_prefill_tokens(gpu, dp_attention=dp_attention), 1 << 30

    def decode_graphs(self, inputs: PlanInputs) -> DecodeGraphs:
        """Batches of up to --cuda-graph-max-bs requests, by default (sglang_cuda_graph_max_bs:
        by the GPU's memory and TP), however many tokens a request (a verify's S + 1:
        kvplan.engines.decode_graphs); SGLang reads no --enforce-eager (kvplan.engines.
        option_readers) and kvplan models no --disable-cuda-graph, so none turns it off."""
        return DecodeGraphs(max_requests=sglang_cuda_graph_max_bs(inputs))

    def decode_graph_sizes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[int, ...]:
        """None: `kvplan simulate` steps SGLang unpadded (its decode graphs' padding to
        --cuda-graph-bs is not modelled)."""
        return ()

    def default_block_size(self, inputs: PlanInputs) -> int:
        return 1  # page_size 1

    def default_max_num_batched_tokens(self, total_bytes: int | None, *, is_a100: bool,
                                       version: str | None,
                                       capability: tuple[int, int] | None = None) -> int:
        """kvplan sizes SGLang's forward step as vLLM's default (`vllm serve`'s)."""
        return vllm_batch_defaults(total_bytes, is_a100=is_a100, version=version,
                                   capability=capability)[1]

    def served_spec(self, spec: ModelSpec, inputs: PlanInputs | None = None) -> ModelSpec:
        """With `inputs`: an architecture this release does not register refused, and
        IndexCache's indexer keys on the layers this release keeps them on
        (kvplan.engines.sglang.index_cache)."""
        spec = check_one_attention_per_layer(spec, "SGLang")
        if inputs is None:
            return spec
        spec = self.served_architecture(spec, inputs.engine_version)
        return index_cache_served(spec, inputs.engine_version)

    def served_inputs(self, spec: ModelSpec, inputs: PlanInputs) -> PlanInputs:
        """DP attention (0.5.3-0.5.5) and mem_fraction_static (0.5.3) as SGLang forces them for
        DeepSeek's sparse attention (kvplan.engines.sglang.dsa_settings)."""
        return sglang_dsa_inputs(spec, inputs)

    def served_architecture(self, spec: ModelSpec, version: str | None) -> ModelSpec:
        # An architecture its release has no model class for: refused
        # (kvplan.engines.sglang.architectures); a release newer than kvplan has read: flagged
        # (kvplan.engines.base.flag_unread_version).
        spec = sglang_served_architecture(check_one_attention_per_layer(spec, "SGLang"), version)
        return flag_unread_version(spec, self, version)

    def state_dtypes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[str | None, str]:
        return sglang_state_dtypes(spec, inputs.ssm_dtype)

    def model_dtype(self, spec: ModelSpec) -> str:
        return sglang_model_dtype(spec)

    def auto_kv_dtype(self, spec: ModelSpec, version: str | None = None,
                      gpu: GPU | None = None) -> tuple[str, str | None]:
        """--kv-cache-dtype auto by version and GPU (kvplan.engines.sglang.kv_dtype)."""
        return sglang_auto_kv_dtype(spec, version, gpu)

    def given_kv_dtype(self, spec: ModelSpec, kv_dtype: str, version: str | None = None,
                       gpu: GPU | None = None) -> tuple[str, str | None]:
        """As given, but where server_args.py overrides it (kvplan.engines.sglang.kv_dtype)."""
        return sglang_given_kv_dtype(spec, kv_dtype, version, gpu)

    def runnable_kv_dtypes(self, spec: ModelSpec, version: str | None = None,
                           gpu: GPU | None = None) -> tuple[str, ...] | None:
        return sglang_runnable_kv_dtypes(spec, version, gpu)

    def refuse_unmodelled(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        check_sglang_served(spec, inputs)

    def default_speculative_tokens(self) -> int:
        # SGLang picks steps / topk / draft tokens by architecture and release
        # (server_args.py auto_choose_speculative_params): not guessed here.
        raise InputError("--engine sglang --speculative-method: give "
                         "--speculative-num-steps (and --speculative-eagle-topk / "
                         "--speculative-num-draft-tokens for a tree), as the server "
                         "log's ServerArgs shows them")

    def stage_outer(self, spec: ModelSpec) -> StageOuter:
        """The first / last split: which of SGLang's model classes build more on every stage
        is not read (vLLM's Gemma-4 does: kvplan.engines.vllm.stage_weights)."""
        return StageOuter()

    def expert_map_entry_bytes(self) -> int:
        """Not read for the SGLang versions kvplan follows (an EP MoE layer seen in SGLang's
        code builds expert_map_cpu and copies it to the GPU in its first forward, after the
        weights are measured): none counted."""
        return 0

    def mxfp4_backend(self, inputs: PlanInputs) -> tuple[str, str] | None:
        """Not read for SGLang: Marlin's layout, as kvplan counted it before reading vLLM's."""
        return None

    def attention_scale_bytes(self, spec: ModelSpec) -> int:
        """Not read for SGLang's attention layers: none counted."""
        return 0

    def moe_kernels(self, options: EngineOptions | None = None) -> MoeKernels | None:
        """Its declared kernels (CostTraits.moe_kernel): no SGLang option read here forces one."""
        return self.cost_traits.moe_kernel

    def dp_attention_weights(self, options: EngineOptions | None = None) -> DpAttentionWeights:
        """Under --enable-dp-attention only the attention and the token embeddings are built
        on the attention-TP group (size tp / dp: 1 with dp = tp, so whole on every GPU); the
        dense MLP layers, the shared experts and the lm_head keep the whole TP group (SGLang
        0.5.4 models/deepseek_v2.py: DeepseekV2MLP:391-424 takes tp_rank / tp_size None, the
        TP group, for the dense layers :2454-2467 unless --moe-dense-tp-size 1, and for the
        shared experts :601-615 unless --moe-a2a-backend deepep / mooncake or flashinfer-cutlass
        fp4 all-gather; the embeddings :2647-2651 `enable_tp=not is_dp_attention_enabled()`;
        ParallelLMHead :2862-2868 `use_attn_tp_group=enable_dp_lm_head`, False by default,
        server_args.py:445; the attention :1056-1145 on get_attention_tp_size(). 0.5.9 the
        same: :466-483, :2302-2313, :2531-2535 (use_attn_tp_group=is_dp_attention_enabled()),
        :2818-2824; 0.4.6 :1377 and :1446-1451, no --enable-dp-lm-head yet). The other DP
        attention families build the same way (qwen2_moe.py:175-183 and :527, qwen3_moe.py:680,
        glm4_moe.py:694 / :738, gpt_oss.py:499 / :594, 0.5.4). Those are the defaults
        (--moe-a2a-backend none, no --moe-dense-tp-size, no --enable-dp-lm-head); `options`
        may keep them whole (kvplan.engines.sglang.deepep.sglang_dp_attention_weights)."""
        return sglang_dp_attention_weights(options)

    def loads_draft_weights(self, inputs: PlanInputs) -> bool:
        """The target model skips the MTP layers (DeepseekV3ForCausalLM); its draft worker loads
        them after the target's pool is sized (before 0.5.14: outside the budget) or before it
        (0.5.14+: kvplan then needs --weights-gib, draft.check_draft_weights_known)."""
        return False

    def check_loadable(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        """Refuse, in one line, a checkpoint quantization this SGLang release stops on at
        start-up, and MoE communication settings kvplan does not price (sglang.deepep): every
        command passes here (estimate_config, stage_pool)."""
        check_sglang_quant_file(spec, inputs.engine_version)
        check_sglang_quantization(spec, inputs.quantization, inputs.engine_version)
        check_moe_a2a(inputs, spec)

    def estimate_config(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        self.check_loadable(spec, inputs)
        if (spec.num_recurrent_layers or inputs.speculative_method is not None
                or spec.layer_attention or spec.kind is AttentionKind.csa):
            self.refuse_unmodelled(spec, inputs)

    def stage_pool(self, spec: ModelSpec, inputs: PlanInputs, layers: range, context: int,
                   budget: int, caches: tuple[LayerCaches, ...]) -> StagePool | None:
        """SGLang's pools for the stage: the full-attention token pool in pages, with its
        sliding-window or recurrent-state pool beside it."""
        self.check_loadable(spec, inputs)
        pool = sglang_pool(spec, inputs, caches)
        if pool is None:
            return None
        sizes = pool.size(budget)
        page = pool.page_size
        tokens = sizes.max_total_num_tokens
        blocks = cdiv(context, page)
        return StagePool(
            per_gpu_bytes_per_token=pool.bytes_per_token, page_bytes=page * pool.cell,
            group_size=1, num_groups=1, num_blocks=tokens // page, blocks_per_request=blocks,
            # A shared prefix is cached once in the full pool (radix cache, whole pages).
            shared_prefix_blocks=min(inputs.shared_prefix, context) // page,
            token_capacity=tokens, block_size=page, reported_kv_cache_tokens=tokens,
            state_bytes_per_request=getattr(pool, "per_req", 0),
            kv_cache_groups=({"kind": pool.kind, "groups": 1, "layers": len(layers),
                              "padding_layers": 0, "block_size": page,
                              "page_bytes": page * pool.cell, "pages_per_request": blocks},),
            max_running_requests=sizes.max_running_requests, sglang_sizes=sizes,
            sglang_pool=pool, limits=pool.extra_limits(sizes, context),
        )

    def kv_bytes_needed(self, stage: StageFacts, requests: int, context: int,
                        shared_prefix: int) -> int:
        return int(stage.sglang_pool.rest_needed(requests, context, shared_prefix))

    def grid_pages(self, spec: ModelSpec, inputs: PlanInputs, stage: StageFacts,
                   contexts: Any) -> GridPages:
        import numpy as np

        pool = stage.sglang_pool
        if pool.kind != "token":
            raise InputError(f"sweep: {spec.id} runs SGLang's {pool.kind} pools (a separate "
                             "pool beside the full-attention one), which sweep does not grid; "
                             "use kvplan estimate for each point")
        if pool.draft is not None:
            raise InputError(f"sweep: {spec.id} with SGLang's draft worker (its headroom and "
                             "scaled cell, kvplan.engines.sglang.pools.SglangDraft) is not "
                             "gridded; use kvplan estimate for each point")
        block = pool.page_size
        return GridPages(pages_per_request=-(-np.asarray(contexts, dtype=np.int64) // block),
                         bytes_per_slot=block * pool.cell, num_groups=1, block_size=block)

    def sequence_block_size(self, spec: ModelSpec, inputs: PlanInputs) -> int:
        """--page-size, but 64 for DeepSeek's sparse attention from 0.5.3 (the pool's page,
        kvplan.engines.sglang.dsa_page)."""
        return sglang_page_size(spec, inputs)

    def request_cap(self, stage: StageFacts, budgets: Any, contexts: Any) -> Any:
        """max_running_requests over the grid, as plan_capacity caps max_requests (the pool's
        own rule, kvplan.engines.sglang.pools.SglangPool.grid_running)."""
        return stage.sglang_pool.grid_running(budgets, contexts)

    def launch_plan(self, ref: str, layout: LaunchLayout, settings: LaunchSettings
                    ) -> LaunchPlan:
        return sglang_launch(ref, layout, settings)

    def copy_on_node(self, command: Command, slot: int, gpus: int) -> Command:
        return sglang_copy_on_node(command, slot, gpus)

    def kv_connector(self, name: str | None) -> KvConnector:
        return sglang_connector(name)

    def page_row(self, plan: PlanFacts, page_bytes: int, group_size: int,
                 num_groups: int) -> tuple[str, str]:
        return "page (all layers)", (f"{plan.block_size} tokens x the "
                                     f"{plan.sglang_pool.get('kind', 'token')} pool's cell")

    def capacity_notes(self, spec: ModelSpec, plan: PlanFacts) -> list[str]:
        notes = dsa_settings_notes(spec, plan.engine_version)
        return notes + self._pool_notes(spec, plan)

    def _pool_notes(self, spec: ModelSpec, plan: PlanFacts) -> list[str]:
        kind = plan.sglang_pool.get("kind")
        if kind == "hybrid_swa":
            return ["SGLang keeps the sliding (Llama-4: chunked) layers in their own pool of "
                    "swa_full_tokens_ratio x the full pool's tokens; a request holds at most "
                    "its window plus one page there."]
        if kind == "mamba":
            per = plan.sglang_pool.get("slots_per_request")
            why = {1: "the radix cache off", 3: "the radix cache on",
                   5: "the radix cache's extra_buffer strategy, SGLang 0.5.14+"}.get(per, "")
            return ["SGLang splits the rest between the recurrent-state slots (ratio / (1 + "
                    "ratio) of it) and the full-attention token pool; a running request takes "
                    f"{per} slots ({why})."]
        if spec.sliding_window:
            return ["SGLang sizes these sliding-window layers as full attention (its separate "
                    "pool is for gpt-oss and Llama-4 only)."]
        if spec.is_hybrid:
            return [f"{self.display_name} sizing here treats sliding-window layers as full "
                    "attention."]
        return []

    def profile_view(self) -> tuple[list[list[str]], list[dict[str, object]], list[str]]:
        rows: list[list[str]] = []
        records: list[dict[str, object]] = []
        for name, rule in SGLANG_FRACTION_RULES:
            rows.append([name, "-", "tokens = rest // cell", "-", "-", "-"])
            records.append({"engine": "sglang", "version": name.split()[1],
                            "default_fraction": rule,
                            "source": "python/sglang/srt/server_args.py"})
        notes = [f"{name}: {rule} (server_args.py)." for name, rule in SGLANG_FRACTION_RULES]
        notes += [
            "SGLang: rest = (total - pre-loaded) x mem_fraction_static - weights; pre-loaded "
            "memory by TP from logs. A multimodal checkpoint's default fraction x 0.90 (0.4.9) "
            "or adjust_mem_fraction_for_vlm's factor over its vision tower (0.4.10+).",
            "SGLang's pools (kvplan/engines/sglang_pools.py): the token pool, hybrid_swa "
            "(gpt-oss, Llama-4), mamba (0.5.2+), the sparse indexer keys; speculative "
            "decoding's draft worker (0.4.2+) keeps a pool of the target's tokens over its "
            "layers, and the target's pool takes the draft + verify headroom in 0.4.4-0.5.6 "
            "(max_running_requests 48 unless set) and the draft's layers in its cell from "
            "0.5.14.",
        ]
        return rows, records, notes


ENGINE = SglangEngine()
