"""TensorRT-LLM as kvplan asks it (kvplan.engines.base.EngineRules): its one block pool per
pipeline stage, every layer sized as full attention, its dtypes and block size, how it is
launched, what the views need to know of it. Its budget is kvplan.engines.trtllm.budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError
from kvplan.engines.base import (
    CostTraits,
    Engine,
    EngineOptions,
    GridPages,
    Launch,
    LaunchLayout,
    PlanFacts,
    PlanInputs,
    StageFacts,
    StagePool,
)
from kvplan.engines.blocks import block_pool
from kvplan.engines.trtllm.budget import (
    BUDGET,
    TRTLLM_DEFAULT_FRACTION,
    TRTLLM_MAX_NUM_TOKENS,
    TRTLLM_PROFILES,
)
from kvplan.engines.trtllm.options import trtllm_options
from kvplan.engines.vllm.engine import resolved_ssm_dtype
from kvplan.kv.cache import kv_layout

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.kv.kinds import LayerCaches
    from kvplan.model.spec import ModelSpec


class TrtllmEngine:
    name = "trtllm"
    display_name = "TensorRT-LLM"
    fraction_name = "free_gpu_memory_fraction"
    kv_dtypes = ("bf16", "fp8")
    # The default 0.9 and up to 0.95 in its examples; attention DP is not planned for it.
    launch = Launch(fractions=(0.9, 0.95), context_flag="max_seq_len", dp_attention=False)
    cost_traits = CostTraits()  # it runs its engine: no prefill launch time

    def options(self, inputs: PlanInputs) -> EngineOptions:
        return trtllm_options(inputs)

    def default_block_size(self, inputs: PlanInputs) -> int:
        return 32  # tokens_per_block

    def default_max_num_batched_tokens(self, total_bytes: int | None, *, is_a100: bool,
                                       version: str | None) -> int:
        """max_num_tokens (8192, llm_args.py) whatever the device."""
        return TRTLLM_MAX_NUM_TOKENS

    def served_spec(self, spec: ModelSpec) -> ModelSpec:
        return spec

    def state_dtypes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[str | None, str]:
        return None, resolved_ssm_dtype(spec, inputs)  # vLLM's rule (recurrent pools: refused)

    def refuse_unmodelled(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        """Pools for recurrent state, chunked attention, the sparse indexer and draft layers are
        not modelled: refuse rather than size them as attention."""
        what = None
        if spec.num_recurrent_layers:
            what = "recurrent-state layers"
        elif spec.layer_chunks:
            what = "chunked local attention"
        elif spec.indexer is not None:
            what = "the sparse-attention indexer cache"
        elif inputs.speculative_method is not None:
            what = "speculative-decoding draft layers"
        if what is not None:
            raise InputError(f"--engine {inputs.engine.value}: {spec.id} has {what}, which "
                             "kvplan models for vLLM only; use --engine vllm")

    def default_speculative_tokens(self) -> int:
        return 1

    def loads_draft_weights(self, inputs: PlanInputs) -> bool:
        return True

    def estimate_config(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        if spec.num_recurrent_layers or inputs.speculative_method is not None:
            self.refuse_unmodelled(spec, inputs)

    def stage_pool(self, spec: ModelSpec, inputs: PlanInputs, layers: range, context: int,
                   budget: int, caches: tuple[LayerCaches, ...]) -> StagePool | None:
        """TRT-LLM's pool: every layer sized as full attention, one group."""
        self.refuse_unmodelled(spec, inputs)
        block_size = inputs.resolved_block_size
        layout = kv_layout(spec, kv_dtype=inputs.kv_dtype, block_size=block_size,
                           tp=inputs.kv_tp, layer_range=layers)
        if not layout.layers:
            return None
        pool = block_pool(layout, Engine.trtllm)
        # max_tokens from the budget (capped by the user's max_tokens), then whole blocks,
        # rounded by version / backend (kvplan.engines.trtllm.budget.TrtllmBudget.num_blocks).
        num_blocks = BUDGET.num_blocks(inputs, budget, layout.bytes_per_token, block_size)
        per_group = [g.blocks_per_request(context, block_size, inputs.max_num_batched_tokens)
                     for g in pool.groups]
        # A shared prefix is cached once, in whole blocks (prefix caching shares full blocks
        # only), and only by full-attention groups: sliding layers keep their own window.
        shared = min(inputs.shared_prefix, context) // block_size * sum(
            1 for g in pool.groups if g.window is None)
        tokens = num_blocks // pool.num_groups * block_size
        return StagePool(
            per_gpu_bytes_per_token=layout.bytes_per_token, page_bytes=pool.page_bytes,
            group_size=pool.group_size, num_groups=pool.num_groups, num_blocks=num_blocks,
            blocks_per_request=sum(per_group), shared_prefix_blocks=shared,
            token_capacity=tokens, block_size=block_size, reported_kv_cache_tokens=tokens,
            kv_cache_groups=tuple(
                {"kind": g.kind, "groups": 1, "layers": g.layers, "padding_layers": 0,
                 "block_size": block_size, "page_bytes": pool.page_bytes,
                 "pages_per_request": b}
                for g, b in zip(pool.groups, per_group, strict=True)),
        )

    def kv_bytes_needed(self, stage: StageFacts, requests: int, context: int,
                        shared_prefix: int) -> int:
        own = stage.blocks_per_request - stage.shared_prefix_blocks
        return (stage.shared_prefix_blocks + requests * own) * stage.page_bytes * \
            stage.group_size

    def grid_pages(self, spec: ModelSpec, inputs: PlanInputs, stage: StageFacts,
                   contexts: Any) -> GridPages:
        import numpy as np

        bs = inputs.resolved_block_size
        layout = kv_layout(spec, kv_dtype=inputs.kv_dtype, block_size=bs, tp=inputs.kv_tp)
        pool = block_pool(layout, Engine.trtllm)
        assert (pool.page_bytes, pool.group_size) == (stage.page_bytes, stage.group_size)
        need = np.zeros(len(contexts), dtype=np.int64)
        for g in pool.groups:
            need += np.asarray(g.blocks_per_request(contexts, bs, inputs.max_num_batched_tokens),
                               dtype=np.int64)
        # max(0, b) // page // group_size == max(0, b) // (page * group_size) for ints.
        return GridPages(pages_per_request=need, bytes_per_slot=pool.page_bytes * pool.group_size,
                         num_groups=pool.num_groups, block_size=bs)

    def grid_block_size(self, spec: ModelSpec, inputs: PlanInputs) -> int | None:
        return None

    def request_cap(self, token_capacity: Any, contexts: Any) -> Any:
        return None

    def reported_version(self, inputs: PlanInputs) -> str | None:
        return inputs.engine_version

    def reported_platform(self, inputs: PlanInputs) -> str | None:
        return None

    def launch_args(self, ref: str, layout: LaunchLayout, *, context: int, fraction: float,
                    kv_dtype: str, concurrency: int) -> list[str]:
        args = ["trtllm-serve", ref, "--backend", "pytorch", "--tp_size", str(layout.tp),
                "--pp_size", str(layout.pp)]
        if layout.ep > 1:
            args += ["--ep_size", str(layout.ep)]
        return args + ["--max_seq_len", str(context), "--max_batch_size", str(concurrency),
                       "--kv_cache_free_gpu_memory_fraction", f"{fraction:g}"]

    def page_row(self, plan: PlanFacts, page_bytes: int, group_size: int,
                 num_groups: int) -> tuple[str, str]:
        return "page (block per layer)", (
            f"{plan.block_size} tokens; {group_size} layers share a block slot"
            + (f", {num_groups} groups" if num_groups > 1 else ""))

    def view_rows(self, plan: PlanFacts) -> list[tuple[str, int, str]]:
        return []

    def prints_max_concurrency(self) -> bool:
        return False  # it prints the pool in tokens

    def capacity_notes(self, spec: ModelSpec, plan: PlanFacts) -> list[str]:
        if spec.is_hybrid or spec.sliding_window:
            return [f"{self.display_name} sizing here treats sliding-window layers as full "
                    "attention."]
        return []

    def shows_groups(self, plan: PlanFacts) -> bool:
        return False

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
