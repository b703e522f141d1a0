"""vLLM's group-size rule over a `KVLayout` (TRT-LLM's pool and the sweep's grid size their one
group with it)."""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.units import cdiv
from kvplan.engines.base import Engine
from kvplan.kv.cache import KVLayout
from kvplan.kv.kinds import RequestShape, SlidingWindowCache


@dataclass(frozen=True, kw_only=True)
class GroupNeed:
    """One vLLM KV-cache group: `layers` real layers of one attention type."""

    kind: str  # "full" or "sliding"
    layers: int
    window: int | None

    def blocks_per_request(self, context: int, block_size: int, max_num_batched_tokens: int,
                           ) -> int:
        if self.window is None:
            return cdiv(context, block_size)
        # vLLM SlidingWindowSpec.max_memory_usage_bytes: a chunked prefill step can hold
        # window - 1 earlier tokens plus a whole batch of new ones, plus one block for alignment.
        return SlidingWindowCache(token_bytes=1, window=self.window).pages_per_request(
            context, block_size, RequestShape(in_flight_tokens=max_num_batched_tokens))


@dataclass(frozen=True, kw_only=True)
class BlockPool:
    """The paged pool of one rank: `num_blocks` slots, each a page for `group_size` layers."""

    page_bytes: int
    group_size: int
    groups: tuple[GroupNeed, ...]

    @property
    def num_groups(self) -> int:
        return len(self.groups)

    def num_blocks(self, kv_budget_bytes: int) -> int:
        return max(0, kv_budget_bytes) // self.page_bytes // self.group_size


def block_pool(layout: KVLayout, engine: Engine) -> BlockPool:
    page = layout.bytes_per_block_per_layer
    n = layout.num_kv_layers
    windows = {layer.sliding_window for layer in layout.layers}
    if engine is not Engine.vllm or len(windows) == 1:
        # One group of all layers. TRT-LLM sizes every layer as full attention here, and so
        # does SGLang outside its hybrid-SWA architectures (kvplan.engines.sglang.pools).
        window = next(iter(windows)) if engine is Engine.vllm else None
        return BlockPool(page_bytes=page, group_size=n,
                         groups=(GroupNeed(kind="full" if window is None else "sliding",
                                           layers=n, window=window),))
    full = sum(1 for layer in layout.layers if layer.sliding_window is None)
    sliding = n - full
    window = max(w for w in windows if w is not None)
    smaller, larger = min(full, sliding), max(full, sliding)
    # vLLM _get_kv_cache_groups_uniform_page_size: groups of the smaller type's layer count, or
    # of the larger's when it is under 1.5x the smaller (then the smaller type is padded).
    group_size = larger if larger < 1.5 * smaller else smaller
    groups = [GroupNeed(kind="full", layers=full, window=None)] * cdiv(full, group_size)
    groups += [GroupNeed(kind="sliding", layers=sliding, window=window)] * cdiv(sliding, group_size)
    return BlockPool(page_bytes=page, group_size=group_size, groups=tuple(groups))
