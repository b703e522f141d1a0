"""TensorRT-LLM as kvplan asks it (kvplan.engines.base.EngineRules): its one block pool per
pipeline stage, every layer sized as full attention, its dtypes and block size, how it is
launched, what the views need to know of it. Its budget is kvplan.engines.trtllm.budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import UnmodelledError
from kvplan.engines.base import (
    CostTraits,
    EngineDefaults,
    EngineOptions,
    GridPages,
    Launch,
    LongContext,
    PlanFacts,
    PlanInputs,
    PrefillOpCount,
    Scheduler,
    StageFacts,
    StagePool,
    block_pool_kv_bytes,
    check_one_attention_per_layer,
    flag_unread_version,
)
from kvplan.engines.caches import stage_caches
from kvplan.engines.handover import KvConnector
from kvplan.engines.launch import Command, LaunchLayout, LaunchPlan, LaunchSettings
from kvplan.engines.moe_shape import TRTLLM_EXPERTS_SHAPE
from kvplan.engines.trtllm.architectures import trtllm_served_architecture
from kvplan.engines.trtllm.budget import (
    BUDGET,
    TRTLLM_DEFAULT_FRACTION,
    TRTLLM_MAX_NUM_TOKENS,
    TRTLLM_PROFILES,
    trtllm_cuda_graph_batch_sizes,
)
from kvplan.engines.trtllm.connectors import trtllm_connector
from kvplan.engines.trtllm.context import OVERRIDE_ENV, trtllm_context_limit
from kvplan.engines.trtllm.disagg_flow import MAX_BATCH_SIZE
from kvplan.engines.trtllm.kv_dtype import (
    check_trtllm_float32,
    trtllm_auto_kv_dtype,
    trtllm_given_kv_dtype,
    trtllm_model_dtype,
    trtllm_runnable_kv_dtypes,
)
from kvplan.engines.trtllm.launch import (
    check_trtllm_load_quantization,
    trtllm_copy_on_node,
    trtllm_launch,
)
from kvplan.engines.trtllm.moe_kernel import TRTLLM_MOE_KERNELS
from kvplan.engines.trtllm.options import trtllm_options
from kvplan.engines.vllm.engine import resolved_ssm_dtype
from kvplan.kv.kinds import FullAttentionCache, RequestShape
from kvplan.model.attention import AttentionKind
from kvplan.weights.base import DpAttentionWeights, StageOuter

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.moe_kernel import MoeKernels
    from kvplan.hardware.gpus import GPU
    from kvplan.kv.kinds import LayerCaches
    from kvplan.model.context_limit import ContextLimit
    from kvplan.model.spec import ModelSpec

# Architectures whose sliding windows kvplan reads from a per-layer list as vLLM's model code
# reads them (kvplan.sources.hf_layer_windows); TensorRT-LLM's model code for them
# (tensorrt_llm/_torch/models/modeling_exaone_moe.py) is not read.
TRTLLM_UNREAD_WINDOW_LISTS = frozenset({"ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM",
                                        "Plamo3ForCausalLM"})


@dataclass(frozen=True, kw_only=True)
class TokenPool:
    """TRT-LLM's pool on one rank: every layer that owns a cache sized as full attention
    (`cache`, kvplan.kv.kinds), all `num_layers` in one group, a block one page per layer."""

    cache: FullAttentionCache
    num_layers: int
    block_size: int

    @property
    def page_bytes(self) -> int:
        return self.cache.page_bytes(self.block_size)

    @property
    def bytes_per_token(self) -> int:
        return self.num_layers * self.cache.bytes_per_token

    def pages_per_request(self, context: Any) -> Any:
        """Pages (blocks) one request holds at `context` (ints or numpy arrays)."""
        return self.cache.pages_per_request(context, self.block_size, RequestShape())


def token_pool(caches: tuple[LayerCaches, ...], block_size: int) -> TokenPool | None:
    """The pool of a stage's caches; None when the stage holds no cache."""
    owned = [c for lc in caches for c in lc.caches]
    if not owned:
        return None
    return TokenPool(cache=FullAttentionCache(token_bytes=owned[0].bytes_per_token),
                     num_layers=len(owned), block_size=block_size)


class TrtllmEngine(EngineDefaults):
    # EngineDefaults' answers stand (the version as asked, no platform, the TP layout text, no
    # view rows); its running cap is the concurrency: `--max_batch_size` as the launch writes it
    # (not re-read here).
    name = "trtllm"
    display_name = "TensorRT-LLM"
    # The newest release whose sizing code kvplan has read: 1.3.0rc10 (budget.py: KvCacheCreator
    # read for 1.0-1.3, its rules checked on 1.3.0rc10 logs; PyPI's newest final is 1.2.1).
    newest_read = "1.3.0rc10"
    fraction_name = "free_gpu_memory_fraction"
    kv_dtypes = ("bf16", "fp8")

    def running_flag(self, layout: LaunchLayout, per_scheduler: int) -> int:
        """--max_batch_size is each rank's: every rank's PyExecutor takes max_num_active_requests
        = model_engine.get_max_num_sequences() (its own max_batch_size), and with
        enable_attention_dp the request fetch admits up to tp_size x max_num_active_requests
        over the ranks (tensorrt_llm/_torch/pyexecutor/py_executor.py __init__ and
        _fetch_new_requests; executor_request_queue.py in later lines; read in stored copies,
        no release tag mirrored in this session, so no line numbers) -- the seats
        kvplan.analysis.simulate.dp_lockstep.trtllm_balance sums. Replicas are separate
        servers, each with the flag. So the flag is the per-rank cap as it is."""
        return per_scheduler
    # The default: the budget's (KvCacheConfig.free_gpu_memory_fraction, 0.9), as `kvplan
    # estimate` takes it; up to 0.95 as in its examples; attention DP is not planned for it.
    launch = Launch(fractions=(None, 0.95), context_flag="max_seq_len", dp_attention=False,
                    moe_tp_under_ep="1.2")  # kvplan.engines.moe_layout
    # Its PyTorch backend replays CUDA graphs for generation-only steps only
    # (_torch/pyexecutor/model_engine.py `_maybe_get_cuda_graph`: None unless the batch is
    # generation-only) and compiles nothing by default (llm_args.py `torch_compile_config =
    # None`; TorchCompileConfig `enable_piecewise_cuda_graph = False`, 1.0 - 1.2): a step with a
    # context request launches every op from Python, counted from its model code
    # (kvplan.perf.trtllm_ops), each at the fitted `prefill_launch_s`. EP's all-to-all only
    # under attention DP:
    # _torch/modules/fused_moe/fused_moe_cutlass.py `CutlassFusedMoE.select_alltoall_method_type`
    # (the 1.2 line, NVIDIA/TensorRT-LLM PR #8950; fused_moe_trtllm_gen.py's the same) returns
    # NotEnabled where `mapping.dp_size == 1` ("If no attention DP, no need to use AlltoAll"),
    # and before it `enable_alltoall` required `mapping.enable_attention_dp` (1.0 / 1.1); with
    # TP attention `MoE.reducescatter_or_allreduce` (fused_moe/interface.py) all-reduces the
    # experts' output over the TP group (`reduce_results`, or the model's fused all-reduce +
    # norm after the MoE), the TP all-reduce kvplan.perf.roofline already counts.
    cost_traits = CostTraits(ep_all_to_all_needs_dp=True, eager_prefill=True,
                             prefill_op_count=PrefillOpCount.trtllm,
                             moe_kernel=TRTLLM_MOE_KERNELS,  # kvplan.engines.trtllm.moe_kernel
                             experts_shape=TRTLLM_EXPERTS_SHAPE)  # its own (moe_shape)
    # The PyTorch backend's capacity + micro-batch scheduler (tensorrt_llm/_torch/pyexecutor/
    # scheduler.py; kvplan.analysis.simulate.trtllm_scheduler; 1.0 - 1.3, trtllm_lines).
    scheduler = Scheduler.capacity_micro_batch
    # tensorrt_llm/_torch/pyexecutor/model_engine.py PyTorchModelEngine._init_max_seq_len: a
    # max_seq_len above the model's infer_max_seq_len is lowered to it with a warning
    # ("Specified self.max_seq_len=... is larger than what the model can support"; the executor
    # then uses that smaller value), unless TLLM_ALLOW_LONG_MAX_MODEL_LEN is 1/true (in the
    # releases that read it) keeps the user's value. It starts, but not at the asked context.
    long_context = LongContext(refuses=False, action="lowers max_seq_len to it",
                               override_env=OVERRIDE_ENV)

    def max_context(self, spec: ModelSpec) -> ContextLimit | None:
        # infer_max_seq_len (kvplan.engines.trtllm.context).
        return spec.engine_max_context(trtllm_context_limit)

    def prefill_step_defaults(self, gpu: GPU, version: str | None, *,
                              dp_attention: int = 1) -> tuple[int, int]:
        """max_num_tokens (8192) and max_batch_size (2048), llm_args.py's defaults whatever the
        GPU (kvplan.engines.trtllm.disagg_flow; prompts run whole: no chunked prefill)."""
        return TRTLLM_MAX_NUM_TOKENS, MAX_BATCH_SIZE

    def options(self, inputs: PlanInputs) -> EngineOptions:
        return trtllm_options(inputs)

    def decode_graph_sizes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[int, ...]:
        """The captured batch sizes a generation-only step is padded to, with
        cuda_graph_config.enable_padding on; () with it off (the default) or eager.

        NVIDIA/TensorRT-LLM _torch/pyexecutor/cuda_graph_runner.py, read at the stored commit
        7b437aaa (search-index id 268157532; no release tag readable here: the repository is
        too large to fetch, as kvplan.perf.trtllm_ops says), `CUDAGraphRunner._get_padded_batch`
        (which `pad_batch` wraps around each forward): no padding unless graphs and padding
        are on and `batch.can_run_cuda_graph` (no context request: a mixed step is never
        padded and runs eagerly, MixedStepCost `graph_mixed` False) and the batch is at most
        `max_supported_batch_size`; else it rounds up to the next of `supported_batch_sizes`
        (`_round_up_batch_size`, bisect_left), unless the padded batch would pass the engine's
        `batch_size` (max_batch_size), and appends that many copies of one dummy generation
        request (`add_dummy_requests(is_gen=True)`: a few cached tokens each, priced here as
        attending nothing, kvplan.perf.graph_padding). The sizes:
        kvplan.engines.trtllm.budget.trtllm_cuda_graph_batch_sizes (padded list), cut at
        max_batch_size (`inputs.max_num_seqs`, default 2048). Under attention DP the runner
        pads every rank to the largest rank's batch (`tp_allgather`); each rank is padded to
        its own here (the lockstep takes the slowest rank). Not modelled: without padding a
        generation-only batch of an uncaptured size runs eagerly (`maybe_get_cuda_graph`:
        `batch_size not in self.supported_batch_sizes`), priced here as graphed.

        In tokens, the padding's unit (kvplan.perf.graph_padding): with MTP's k draft tokens a
        graph is keyed by (batch size, draft_len = max_total_draft_tokens, k for MTP's chain:
        `get_graph_key`) and captured at batch x (1 + draft_len) tokens (`capture`:
        num_tokens_for_capture = batch_size x max_beam_width x token_per_request); the padding
        adds dummy generation requests of that draft length (`add_dummy_requests(...,
        max_num_draft_tokens=engine.runtime_draft_len)`): each batch size b is b x (1 + k)."""
        opts = trtllm_options(inputs)
        if inputs.enforce_eager or not opts.cuda_graph_padding:
            return ()
        seats = inputs.max_num_seqs or MAX_BATCH_SIZE
        sizes = trtllm_cuda_graph_batch_sizes(opts.cuda_graph_max_batch_size, True)
        per_request = 1 + inputs.num_speculative_tokens
        return tuple(s * per_request for s in sizes if s <= seats)

    def default_block_size(self, inputs: PlanInputs) -> int:
        return 32  # tokens_per_block

    def default_max_num_batched_tokens(self, total_bytes: int | None, *, is_a100: bool,
                                       version: str | None,
                                       capability: tuple[int, int] | None = None) -> int:
        """max_num_tokens (8192, llm_args.py) whatever the device."""
        return TRTLLM_MAX_NUM_TOKENS

    def served_spec(self, spec: ModelSpec, inputs: PlanInputs | None = None) -> ModelSpec:
        spec = check_one_attention_per_layer(spec, "TensorRT-LLM")
        if inputs is None:
            return spec
        if trtllm_options(inputs).trtllm_backend == "engine":
            # A built TensorRT engine (the legacy tensorrt_llm/models path) is not built by
            # the PyTorch backend's AutoModelForCausalLM: not held to its registry.
            return flag_unread_version(spec, self, inputs.engine_version)
        return self.served_architecture(spec, inputs.engine_version)

    def served_inputs(self, spec: ModelSpec, inputs: PlanInputs) -> PlanInputs:
        return inputs  # it forces no setting kvplan's inputs carry

    def served_architecture(self, spec: ModelSpec, version: str | None) -> ModelSpec:
        # The PyTorch backend's model registry (register_auto_model; AutoModelForCausalLM reads
        # architectures[0] only), read at one commit: kvplan.engines.trtllm.architectures. A
        # release newer than kvplan has read: flagged (kvplan.engines.base.flag_unread_version).
        spec = check_one_attention_per_layer(spec, "TensorRT-LLM")
        return flag_unread_version(trtllm_served_architecture(spec, version), self, version)

    def state_dtypes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[str | None, str]:
        return None, resolved_ssm_dtype(spec, inputs)  # vLLM's rule (recurrent pools: refused)

    def model_dtype(self, spec: ModelSpec) -> str:
        return trtllm_model_dtype(spec)

    def auto_kv_dtype(self, spec: ModelSpec, version: str | None = None,
                      gpu: GPU | None = None) -> tuple[str, str | None]:
        """kv_cache_config.dtype auto (kvplan.engines.trtllm.kv_dtype)."""
        return trtllm_auto_kv_dtype(spec)

    def given_kv_dtype(self, spec: ModelSpec, kv_dtype: str, version: str | None = None,
                       gpu: GPU | None = None) -> tuple[str, str | None]:
        """kv_cache_config.dtype as given, refused where the checkpoint declares another
        (kvplan.engines.trtllm.kv_dtype)."""
        return trtllm_given_kv_dtype(spec, kv_dtype)

    def runnable_kv_dtypes(self, spec: ModelSpec, version: str | None = None,
                           gpu: GPU | None = None) -> tuple[str, ...] | None:
        return trtllm_runnable_kv_dtypes(spec)

    def refuse_unmodelled(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        """Pools for recurrent state, chunked attention, the sparse indexer and draft layers are
        not modelled: refuse rather than size them as attention; nor is a float32 checkpoint's
        pool (kvplan.engines.trtllm.kv_dtype.check_trtllm_float32)."""
        check_trtllm_float32(spec)
        what = None
        if spec.kind is AttentionKind.csa:
            what = "DeepSeek-V4's compressed sparse attention"
        elif spec.num_recurrent_layers:
            what = "recurrent-state layers"
        elif spec.layer_chunks:
            what = "chunked local attention"
        elif spec.indexer is not None:
            what = "the sparse-attention indexer cache"
        elif inputs.speculative_method is not None:
            what = "speculative-decoding draft layers"
        elif spec.layer_attention:
            what = "attention shapes that differ by layer type"
        elif TRTLLM_UNREAD_WINDOW_LISTS.intersection(spec.architectures):
            what = "per-layer sliding windows read from vLLM's model code only"
        if what is not None:
            raise UnmodelledError(
                f"--engine {inputs.engine.value}: {spec.id} has {what}, which "
                "kvplan models for vLLM only; use --engine vllm")

    def default_speculative_tokens(self) -> int:
        return 1

    def stage_outer(self, spec: ModelSpec) -> StageOuter:
        """The first / last split: which of TensorRT-LLM's model classes build more on every stage
        is not read (vLLM's Gemma-4 does: kvplan.engines.vllm.stage_weights)."""
        return StageOuter()

    def expert_map_entry_bytes(self) -> int:
        """Not read in TensorRT-LLM's MoE: none counted."""
        return 0

    def mxfp4_backend(self, inputs: PlanInputs) -> tuple[str, str] | None:
        """Not read for TensorRT-LLM: Marlin's layout, as kvplan counted it before reading
        vLLM's."""
        return None

    def attention_scale_bytes(self, spec: ModelSpec) -> int:
        """Not read for TensorRT-LLM's attention layers: none counted."""
        return 0

    def moe_kernels(self, options: EngineOptions | None = None) -> MoeKernels | None:
        """Its declared kernels (CostTraits.moe_kernel): no TensorRT-LLM option read here
        forces one."""
        return self.cost_traits.moe_kernel

    def dp_attention_weights(self, options: EngineOptions | None = None) -> DpAttentionWeights:
        """enable_attention_dp's placement of the dense MLPs and lm_head is not read: held
        whole, as kvplan counted them before reading SGLang's."""
        return DpAttentionWeights()

    def loads_draft_weights(self, inputs: PlanInputs) -> bool:
        return True

    def estimate_config(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        check_trtllm_load_quantization(inputs.quantization)
        if (spec.num_recurrent_layers or inputs.speculative_method is not None
                or spec.layer_attention or spec.kind is AttentionKind.csa
                or TRTLLM_UNREAD_WINDOW_LISTS.intersection(spec.architectures)):
            self.refuse_unmodelled(spec, inputs)

    def stage_pool(self, spec: ModelSpec, inputs: PlanInputs, layers: range, context: int,
                   budget: int, caches: tuple[LayerCaches, ...]) -> StagePool | None:
        """TRT-LLM's pool: every layer sized as full attention, one group."""
        check_trtllm_load_quantization(inputs.quantization)
        self.refuse_unmodelled(spec, inputs)
        pool = token_pool(caches, inputs.resolved_block_size)
        if pool is None:
            return None
        block_size = pool.block_size
        # max_tokens from the budget (capped by the user's max_tokens), then whole blocks,
        # rounded by version / backend (kvplan.engines.trtllm.budget.TrtllmBudget.num_blocks).
        num_blocks = BUDGET.num_blocks(inputs, budget, pool.bytes_per_token, block_size)
        need = pool.pages_per_request(context)
        # A shared prefix is cached once, in whole blocks (prefix caching shares full blocks
        # only).
        shared = min(inputs.shared_prefix, context) // block_size
        tokens = num_blocks * block_size
        return StagePool(
            per_gpu_bytes_per_token=pool.bytes_per_token, page_bytes=pool.page_bytes,
            group_size=pool.num_layers, num_groups=1, num_blocks=num_blocks,
            blocks_per_request=need, shared_prefix_blocks=shared,
            token_capacity=tokens, block_size=block_size, reported_kv_cache_tokens=tokens,
            kv_cache_groups=({"kind": "full", "groups": 1, "layers": pool.num_layers,
                              "padding_layers": 0, "block_size": block_size,
                              "page_bytes": pool.page_bytes, "pages_per_request": need},),
        )

    def kv_bytes_needed(self, stage: StageFacts, requests: int, context: int,
                        shared_prefix: int) -> int:
        return block_pool_kv_bytes(stage, requests)

    def grid_pages(self, spec: ModelSpec, inputs: PlanInputs, stage: StageFacts,
                   contexts: Any) -> GridPages:
        import numpy as np

        pool = token_pool(stage_caches(spec, inputs), inputs.resolved_block_size)
        assert pool is not None and (pool.page_bytes, pool.num_layers) == (
            stage.page_bytes, stage.group_size)
        need = np.asarray(pool.pages_per_request(np.asarray(contexts)), dtype=np.int64)
        return GridPages(pages_per_request=need, bytes_per_slot=pool.page_bytes * pool.num_layers,
                         num_groups=1, block_size=pool.block_size)

    def sequence_block_size(self, spec: ModelSpec, inputs: PlanInputs) -> int:
        return inputs.resolved_block_size  # tokens_per_block as given

    def request_cap(self, stage: StageFacts, budgets: Any, contexts: Any) -> Any:
        return None

    def launch_plan(self, ref: str, layout: LaunchLayout, settings: LaunchSettings
                    ) -> LaunchPlan:
        return trtllm_launch(ref, layout, settings)

    def copy_on_node(self, command: Command, slot: int, gpus: int) -> Command:
        return trtllm_copy_on_node(command, slot, gpus)

    def kv_connector(self, name: str | None) -> KvConnector:
        return trtllm_connector(name)

    def page_row(self, plan: PlanFacts, page_bytes: int, group_size: int,
                 num_groups: int) -> tuple[str, str]:
        return "page (block per layer)", (
            f"{plan.block_size} tokens; {group_size} layers share a block slot"
            + (f", {num_groups} groups" if num_groups > 1 else ""))

    def capacity_notes(self, spec: ModelSpec, plan: PlanFacts) -> list[str]:
        if spec.is_hybrid or spec.sliding_window:
            return [f"{self.display_name} sizing here treats sliding-window layers as full "
                    "attention."]
        return []

    def profile_view(self) -> tuple[list[list[str]], list[dict[str, object]], list[str]]:
        rows: list[list[str]] = []
        records: list[dict[str, object]] = []
        for tp in TRTLLM_PROFILES:
            rows.append([f"trtllm {tp.version}", "-", f"max_tokens, blocks {tp.blocks_rounding}",
                         "-", "-", "-"])
            records.append({"engine": "trtllm", "version": tp.version,
                            "blocks_rounding": tp.blocks_rounding,
                            "rounding_source": tp.rounding_source,
                            "default_fraction": TRTLLM_DEFAULT_FRACTION,
                            "max_num_tokens": TRTLLM_MAX_NUM_TOKENS,
                            "source": "tensorrt_llm/_torch/pyexecutor/_util.py (KvCacheCreator), "
                                      "resource_manager.py (KVCacheManager)"})
        notes = [
            "TensorRT-LLM, PyTorch backend (0.20+; _torch/pyexecutor/_util.py KvCacheCreator): "
            "(total - peak of a max_num_tokens dummy run + its temporary KV pool) x "
            f"free_gpu_memory_fraction ({TRTLLM_DEFAULT_FRACTION}) = (total - weights - "
            "activation - non-torch) x fraction; max_tokens = that // bytes per token, capped "
            "by max_tokens; blocks of tokens_per_block 32 rounded up to 1.1 (C++ "
            "KVCacheManager, ceilDiv), down from 1.2 (resource_manager.py "
            "calculate_max_num_blocks). Non-torch memory from public logs by TP. The engine "
            "path (TensorRT engines) rounds up and, like unified-memory devices (GB10), needs "
            "--reserve-gib.",
            "TensorRT-LLM: full attention, sliding windows (sized as full) and MLA only; "
            "recurrent state, chunked attention, the sparse indexer and draft layers are "
            "refused.",
        ]
        return rows, records, notes


ENGINE = TrtllmEngine()
