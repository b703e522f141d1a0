"""What a stage's KV pool is to kvplan, as plain data and the facts its questions read: the
pool an engine sizes for one pipeline stage (`StagePool`), the same over many contexts at once
(`GridPages`, the sweep), the plan and stage fields an engine's view notes and inverse question
read (`PlanFacts`, `StageFacts`), and the KV bytes of a pool of blocks (`block_pool_kv_bytes`).
Split from kvplan.engines.base, which re-exports each name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, kw_only=True)
class StagePool:
    """One pipeline stage's KV pool as its engine sizes it from the stage's budget: the fields
    of the stage's plan the engine decides (kvplan.capacity.stages.StagePlan)."""

    per_gpu_bytes_per_token: int | None  # None: no whole bytes per token (DeepSeek-V4)
    page_bytes: int
    group_size: int
    num_groups: int
    num_blocks: int
    blocks_per_request: int
    shared_prefix_blocks: int
    token_capacity: int
    block_size: int
    reported_kv_cache_tokens: int
    kv_cache_groups: tuple[dict[str, object], ...] = ()
    requested_block_size: int = 0
    state_bytes_per_request: int = 0
    state_padding_percent: float | None = None
    mamba_cache_mode: str | None = None
    max_running_requests: int | None = None  # the engine's own cap (SGLang)
    sglang_sizes: Any = None  # SGLang's printed sizes (kvplan.engines.sglang.pools)
    sglang_pool: Any = field(default=None, compare=False)
    # Further pools a request needs pages in, as (pages held, pages one request needs).
    limits: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, kw_only=True)
class GridPages:
    """A stage's pool over many contexts at once (the sweep): pages per request for each
    context, the bytes one page slot takes, the groups sharing the slots, the block size."""

    pages_per_request: Any  # numpy int64 array, one per context
    bytes_per_slot: int
    num_groups: int
    block_size: int


class PlanFacts(Protocol):
    """The plan fields an engine's view notes read (kvplan.capacity.plan.CapacityPlan)."""

    engine_version: str | None
    platform: str | None
    block_size: int
    requested_block_size: int
    state_padding_percent: float | None
    reported_kv_cache_tokens: int
    token_capacity: int
    kv_cache_groups: tuple[dict[str, object], ...]
    sglang_pool: dict[str, object]


class StageFacts(Protocol):
    """The stage fields the inverse question reads (kvplan.capacity.stages.StagePlan)."""

    blocks_per_request: int
    shared_prefix_blocks: int
    page_bytes: int
    group_size: int
    sglang_pool: Any


def block_pool_kv_bytes(stage: StageFacts, requests: int) -> int:
    """KV bytes of `requests` requests in a pool of blocks (vLLM's, TensorRT-LLM's): the shared
    prefix's blocks once, each request's own, a block a page per layer of its group."""
    blocks = stage.shared_prefix_blocks + requests * (
        stage.blocks_per_request - stage.shared_prefix_blocks)
    return blocks * stage.page_bytes * stage.group_size
