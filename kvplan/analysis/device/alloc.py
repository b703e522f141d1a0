"""Allocation as vLLM V1 does it from its KV-cache config, and the search for the real maximum.

vLLM (``v1/core/kv_cache_utils.py: get_kv_cache_config_from_groups``, ``v1/worker/
gpu_model_runner.py: _reshape_kv_cache_tensors``) allocates raw byte tensors of ``num_blocks x
page`` and lets each layer view its share:

- one group (every layer alike, or MLA + indexer keys needing the same token slots): one tensor
  per layer cache, of that cache's own page;
- several groups (hybrid): ``group_size`` tensors of the largest page, tensor j shared by the
  j-th layer of every group; a smaller page is viewed at the start of each padded page, a
  recurrent state's tensors one after the other inside it (vLLM's "Padding mamba page size").

Block ids index the same pages of every tensor, and the groups draw their blocks from the one
pool, so a block id belongs to one group at a time.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import DeviceError
from kvplan._util.units import cdiv
from kvplan.analysis.device.formats import PageLayout, Part, Storage, page_layout
from kvplan.analysis.device.probe import Device
from kvplan.engines.vllm.alloc import KVGroup, VllmKVConfig
from kvplan.kv.kinds import (
    CacheKind,
    ChunkedLocalCache,
    FullAttentionCache,
    LayerCaches,
    SlidingWindowCache,
)
from kvplan.model.spec import ModelSpec

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True, kw_only=True)
class Member:
    """One layer's cache inside one group: which tensor it views and how."""

    layer: int
    group: int
    buffer: int  # index of the raw tensor it views
    layout: PageLayout


@dataclass(frozen=True, kw_only=True)
class PoolPlan:
    """What to allocate, before any tensor exists: the raw tensors' page sizes and who views
    them. ``bytes_per_block`` = the sum of the pages = the core's ``bytes_per_block``."""

    config: VllmKVConfig
    buffer_pages: tuple[int, ...]
    members: tuple[Member, ...]

    @property
    def bytes_per_block(self) -> int:
        return sum(self.buffer_pages)

    @property
    def groups(self) -> tuple[KVGroup, ...]:
        return self.config.groups


def _promoted_key(cache: CacheKind) -> tuple[Any, ...]:
    # With the hybrid manager off, vLLM allocates sliding and chunked layers as full attention.
    if isinstance(cache, (SlidingWindowCache, ChunkedLocalCache)):
        return FullAttentionCache(token_bytes=cache.token_bytes).group_key()
    return cache.group_key()


def _matching(caches: tuple[CacheKind, ...], spec: CacheKind) -> CacheKind:
    key = spec.group_key()
    for c in caches:
        if c.group_key() == key or _promoted_key(c) == key:
            return c
    raise DeviceError(f"internal: no cache of kind {spec.describe()} on a layer of its group")


def pool_plan(spec: ModelSpec, config: VllmKVConfig, caches: tuple[LayerCaches, ...], *,
              tp: int, st: Storage) -> PoolPlan:
    by_layer = {lc.index: lc.caches for lc in caches}
    buffers: list[int] = []
    members: list[Member] = []
    if len(config.groups) == 1:
        g = config.groups[0]
        for layer in g.layers:
            for cache in by_layer[layer]:
                layout = page_layout(cache, spec, tp=tp, st=st, block=g.block_size)
                members.append(Member(layer=layer, group=0, buffer=len(buffers), layout=layout))
                buffers.append(layout.nbytes)
    else:
        slots = len(config.groups[0].layers) + config.groups[0].padding_layers
        buffers = [config.groups[0].page_bytes] * slots
        for gi, g in enumerate(config.groups):
            for j, layer in enumerate(g.layers):
                cache = _matching(by_layer[layer], g.spec)
                layout = page_layout(cache, spec, tp=tp, st=st, block=g.block_size)
                if layout.nbytes > g.page_bytes:
                    raise DeviceError(f"internal: a {cache.describe()} page ({layout.nbytes:,} B)"
                                      f" exceeds its group's page ({g.page_bytes:,} B)")
                members.append(Member(layer=layer, group=gi, buffer=j, layout=layout))
    plan = PoolPlan(config=config, buffer_pages=tuple(buffers), members=tuple(members))
    if plan.bytes_per_block != config.bytes_per_block:
        raise DeviceError(f"internal: the tensors hold {plan.bytes_per_block:,} B per block, the "
                          f"core predicts {config.bytes_per_block:,} B")
    return plan


@dataclass(kw_only=True)
class Held:
    """Every tensor a run holds, in one place, so that freeing is one `clear()`."""

    buffers: list[torch.Tensor] = field(default_factory=list)
    views: dict[tuple[int, str], torch.Tensor] = field(default_factory=dict)  # (member, role)
    extra: list[torch.Tensor] = field(default_factory=list)
    refs: list[weakref.ref] = field(default_factory=list)
    num_blocks: int = 0

    def clear(self) -> None:
        self.views.clear()
        self.buffers.clear()
        self.extra.clear()

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.buffers)


def raw_tensors(pages: tuple[int, ...], num_blocks: int, device: str,
                refs: list[weakref.ref]) -> list[torch.Tensor]:
    """`num_blocks` pages of each size, zeroed so that every page is resident."""
    import torch

    out = []
    for page in pages:
        t = torch.empty(num_blocks * page, dtype=torch.uint8, device=device)
        t.zero_()
        refs.append(weakref.ref(t))
        out.append(t)
    return out


def part_view(buffer: torch.Tensor, num_blocks: int, page: int, offset: int,
              part: Part) -> torch.Tensor:
    """[num_blocks, *part.shape] viewing bytes [offset, offset + part.nbytes) of every page."""
    rows = buffer.view(num_blocks, page)[:, offset:offset + part.nbytes]
    return rows.view(part.dtype).view(num_blocks, *part.shape)


def allocate(plan: PoolPlan, num_blocks: int, device: str, held: Held,
             alloc: Callable[..., list[torch.Tensor]] = raw_tensors) -> None:
    """The pool into `held`: raw tensors, then every member's views into them."""
    held.buffers.extend(alloc(plan.buffer_pages, num_blocks, device, held.refs))
    held.num_blocks = num_blocks
    for m_index, m in enumerate(plan.members):
        page = plan.buffer_pages[m.buffer]
        offset = 0
        for part in m.layout.parts:
            held.views[(m_index, part.role)] = part_view(held.buffers[m.buffer], num_blocks,
                                                         page, offset, part)
            offset += part.nbytes


# ---------------------------------------------------------------------------------------------
# The search for the real maximum.


@dataclass(frozen=True, kw_only=True)
class SearchOutcome:
    pool_blocks: int  # the pool finally held (the prediction, less any shrink for overhead)
    blocks: int  # the real maximum found
    limit: str
    search_bytes: int  # device-measured use with the search's extra blocks held
    charged_bytes: int = 0  # use beyond the pool's bytes at the start, added to the budget


def search_blocks(device: Device, *, pool_blocks: int, block_bytes: int, budget: int,
                  shrink_pool: Callable[[int], None],
                  add_blocks: Callable[[int], list[Any]],
                  max_charged_bytes: int = 0) -> SearchOutcome:
    """The most blocks the device's own accounting keeps inside `budget`, the pool of
    `pool_blocks` already held. The device's use beyond the pool's own bytes at the search's
    first reading (fixed, not growing with the blocks) is added to the budget, up to
    `max_charged_bytes`. First from above: while the pool measures over the budget (allocator
    overhead), reallocate it smaller (`shrink_pool`). Then from below: add chunks of blocks (a
    page in every tensor, `add_blocks`) while the next chunk stays inside the budget, halving
    the chunk down to one block. An out-of-memory error is a measured limit."""
    limit = "the budget"
    now = device.usage()
    # Read at the same moment as the first `now`: nothing the process did between the pool's
    # measurement and this reading can count against the blocks. On CPU that is the
    # interpreter's own heap (obmalloc pools, glibc chunks refaulted after the baseline's
    # malloc_trim: a 4 KiB page now and then) in the anonymous RSS.
    charged = min(max(0, now - pool_blocks * block_bytes), max_charged_bytes)
    budget += charged
    for _ in range(8):
        if now <= budget:
            break
        pool_blocks -= max(1, cdiv(now - budget, block_bytes))
        if pool_blocks < 1:
            raise DeviceError(f"not one block fits in the budget by {device.name}'s accounting")
        shrink_pool(pool_blocks)
        now = device.usage()
        limit = (f"the budget (allocator overhead put the predicted pool over it; "
                 f"reallocated with {pool_blocks:,} blocks)")
    if now > budget:
        raise DeviceError(f"{device.name}: the pool stays over the budget after 8 reallocations")
    blocks = pool_blocks
    chunk = max(1, pool_blocks // 8)
    extras: list[Any] = []
    search_bytes = now
    try:
        while chunk >= 1:
            before = device.usage()
            if before + chunk * block_bytes > budget:
                chunk //= 2
                continue
            try:
                added = add_blocks(chunk)
            except BaseException as exc:
                if not device.is_oom(exc):
                    raise
                limit = "an out-of-memory error"
                device.settle()
                chunk //= 2
                continue
            if device.usage() - before < chunk * block_bytes // 2:
                # Pages that were already resident (a reused heap) are not growth: stop here.
                limit = "the device's accounting not tracking the allocation"
                del added
                break
            extras.append(added)
            blocks += chunk
        search_bytes = device.usage()
    finally:
        extras.clear()
        device.settle()
    return SearchOutcome(pool_blocks=pool_blocks, blocks=blocks, limit=limit,
                         search_bytes=search_bytes, charged_bytes=charged)
