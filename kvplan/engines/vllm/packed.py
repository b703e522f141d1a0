"""vLLM's packed KV-cache groups: layers of mixed page sizes (and their own block sizes) packed
side by side in one block-outermost pool block. DeepSeek-V4's caches take this path.

Follows vLLM 0.32 ``vllm/v1/core/kv_cache_utils.py`` (the same code moved to
``v1/core/kv_cache_planning.py`` in 0.33 and 0.34): get_kv_cache_groups (no uniform spec and no
uniform type, so) _get_packed_kv_cache_groups, _approximate_gcd, _get_kv_cache_bytes_per_block,
get_max_concurrency_for_kv_cache_config and get_kv_cache_capacity. Pure: the kinds of
kvplan.kv.compressed in, a `VllmKVConfig` out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kvplan._util.units import cdiv
from kvplan.engines.vllm.alloc import KVGroup, Platform, VllmKVConfig
from kvplan.engines.vllm.profiles import VllmProfile
from kvplan.kv.compressed import PagedRowCache, SlidingRowCache
from kvplan.kv.kinds import LayerCaches, RequestShape


def approximate_gcd(values: Sequence[int], *, lower_bound: int | None = None) -> int:
    """_approximate_gcd: the d in [lower_bound, max(values)] that rounds the values up to
    multiples of d with the least padding; ties go to the larger d."""
    min_d = max(1, lower_bound if lower_bound is not None else 1)
    max_d = max(values)
    if min_d > max_d:
        return min_d
    best_d, best_pad = min_d, None
    for d in range(min_d, max_d + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad is None or pad < best_pad or (pad == best_pad and d > best_d):
            best_d, best_pad = d, pad
    return best_d


def _uniform_type(cache: PagedRowCache, cache_block: int) -> tuple[Any, ...]:
    """UniformTypeKVCacheSpecs.is_uniform_type: one block size, and full attention alike (the
    MLAAttentionSpec rows) or sliding windows of one window."""
    window = cache.window if isinstance(cache, SlidingRowCache) else None
    return (cache.block(cache_block), window)


@dataclass(frozen=True, kw_only=True)
class _Bucket:
    entries: tuple[tuple[int, PagedRowCache], ...]
    page_size_layers: dict[int, list[tuple[int, PagedRowCache]]]
    balanced: bool

    @property
    def max_layers_per_page_size(self) -> int:
        """get_max_layers_per_page_size: the most layers sharing one page size (a balanced
        bucket's pattern repeats)."""
        return max(len(names) for names in self.page_size_layers.values())


def _buckets(entries: list[tuple[int, PagedRowCache]], cache_block: int) -> list[_Bucket]:
    """Greedy bucketing in layer-registration order: a layer joins the first bucket it is
    uniform with."""
    found: dict[tuple[Any, ...], list[tuple[int, PagedRowCache]]] = {}
    for index, cache in entries:
        found.setdefault(_uniform_type(cache, cache_block), []).append((index, cache))
    out = []
    for members in found.values():
        pages: dict[int, list[tuple[int, PagedRowCache]]] = {}
        for index, cache in members:
            pages.setdefault(cache.page_bytes(cache_block), []).append((index, cache))
        # Only 1:1 patterns (one layer of each page size per repeat) are balanced.
        balanced = len({len(v) for v in pages.values()}) == 1
        out.append(_Bucket(entries=tuple(members), page_size_layers=pages, balanced=balanced))
    return out


def packed_groups(entries: list[tuple[int, PagedRowCache]], *, cache_block: int,
                  context: int, shape: RequestShape) -> list[KVGroup]:
    """_get_packed_kv_cache_groups: balanced buckets split into groups of the same number of
    pattern repeats (picked by approximate_gcd, at least the largest mixed-page bucket's
    count), other buckets whole; sliding buckets become state buckets when no bucket sets a
    repeat count, capped at the states one block already holds."""
    buckets = _buckets(entries, cache_block)
    min_repeats = max((b.max_layers_per_page_size for b in buckets
                       if b.balanced and len(b.page_size_layers) > 1), default=0)
    repeats = (approximate_gcd([b.max_layers_per_page_size for b in buckets if b.balanced],
                               lower_bound=min_repeats) if min_repeats else None)

    def num_groups_for(b: _Bucket) -> int:
        if b.balanced and repeats is not None:
            return cdiv(b.max_layers_per_page_size, repeats)
        return 1

    def widest_group_bytes(b: _Bucket, n: int) -> int:
        return sum(cdiv(len(names), n) * page for page, names in b.page_size_layers.items())

    def is_state_bucket(b: _Bucket) -> bool:
        return repeats is None and isinstance(b.entries[0][1], SlidingRowCache)

    anchor = max((widest_group_bytes(b, len(b.entries) if is_state_bucket(b)
                                     else num_groups_for(b)) for b in buckets), default=0)
    groups = []
    for b in buckets:
        n = num_groups_for(b)
        if anchor and is_state_bucket(b):
            per_block = max(anchor // b.entries[0][1].page_bytes(cache_block), 1)
            n = max(n, cdiv(len(b.entries), per_block))
        if n == 1:
            parts = [list(b.entries)]
        else:
            pattern = list(zip(*b.page_size_layers.values(), strict=False))
            parts = [[e for repeat in pattern[i::n] for e in repeat] for i in range(n)]
        for members in parts:
            specs = tuple(c for _, c in members)
            first = specs[0]
            groups.append(KVGroup(
                kind="+".join(dict.fromkeys(c.label for c in specs)),
                layers=tuple(i for i, _ in members), padding_layers=0,
                block_size=first.block(cache_block),
                page_bytes=max(c.page_bytes(cache_block) for c in specs),
                # UniformTypeKVCacheSpecs.max_memory_usage_bytes / page_size_bytes
                pages_per_request=max(c.pages_per_request(context, cache_block, shape)
                                      for c in specs),
                bytes_per_block=sum(c.page_bytes(cache_block) for c in specs), spec=specs))
    return groups


def vllm_packed_config(layers: tuple[LayerCaches, ...], *, context: int, cache_block: int,
                       profile: VllmProfile, platform: Platform, in_flight_tokens: int
                       ) -> VllmKVConfig:
    """The pool for one rank's packed layers. num_blocks = budget // the widest group's pages
    (_get_kv_cache_bytes_per_block, block-outermost: no spec here sets a block stride
    alignment, so no rounding); a request takes each group's pages at max_model_len
    (get_max_concurrency_for_kv_cache_config)."""
    entries: list[tuple[int, PagedRowCache]] = []
    for lc in layers:
        for c in lc.caches:
            if not isinstance(c, PagedRowCache):
                raise TypeError("vllm_packed_config takes kvplan.kv.compressed kinds only")
            entries.append((lc.index, c))
    shape = RequestShape(in_flight_tokens=in_flight_tokens)
    groups = packed_groups(entries, cache_block=cache_block, context=context, shape=shape)
    # The block size vLLM reports: after allocation v1/engine/core.py (0.32, lines 341-356) sets
    # cache_config.block_size to the smallest block of the prefix-cacheable groups. Every packed
    # DeepSeek-V4 spec is (SlidingWindowMLASpec.prefix_cacheable is `not bounded_replay`, which
    # models/deepseek_v4 never sets): 4 with a compress-ratio-4 layer (vLLM logs "kv cache group
    # sizes (64, 64, 256, 4, 8)"), not the 256-token cache block. Blind batch 11: vLLM's CPU
    # build reported 4 where kvplan had said 256 (blocks, tokens and concurrency equal).
    return VllmKVConfig(
        profile=profile, platform=platform, block_size=min(g.block_size for g in groups),
        requested_block_size=cache_block, state_page_bytes=0, state_padding_percent=None,
        hybrid_manager=True, mamba_cache_mode=None, groups=tuple(groups),
        bytes_per_block=max(g.bytes_per_block for g in groups), in_flight_tokens=in_flight_tokens,
        request_shape=shape, packed=True)

