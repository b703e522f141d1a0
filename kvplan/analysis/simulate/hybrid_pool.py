"""Prefix caching for hybrid models (several KV-cache groups: full attention with sliding-window
or recurrent-state groups), as vLLM 0.32's hybrid coordinator does it.

Follows vLLM 0.32 ``vllm/v1/core/kv_cache_coordinator.py`` (HybridKVCacheCoordinator
.find_longest_cache_hit, the fixed point; KVCacheCoordinator.cache_blocks) and
``vllm/v1/core/single_type_kv_cache_manager.py`` (FullAttentionManager, SlidingWindowManager,
MambaManager: find_longest_cache_hit, reachable_block_mask, get_num_blocks_to_allocate,
remove_skipped_blocks), with ``vllm/config/cache.py`` defaults (prefix_cache_retention_interval
0, mamba_cache_mode 'align' when prefix caching is on: model_executor/models/config.py
MambaModelConfig), no EAGLE, no KV connector, every group at one block size B (hash block =
scheduler block = B; vLLM raises the attention block to the state page for recurrent hybrids,
so partial hash hits, which need a state block larger than the hash block, stay off):

- One pool of blocks for every group; a cached block is keyed by (group, block hash).
- The hit (find_longest_cache_hit): the candidate starts at num_tokens - 1 tokens; each kind of
  group in turn (full attention first) answers the longest hit it holds up to the candidate,
  which then shrinks to that answer, until no kind shrinks it (a fixed point). Full attention:
  the run of cached blocks from the start. Sliding window W: scanning right to left, the first
  run of cdiv(W - 1, B) cached blocks ends the hit (only the window's blocks are needed);
  without one, the run from block 0. Recurrent state: the rightmost cached state, at a block
  boundary.
- What is cached (cache_blocks, reachable_block_mask with retention interval 0): every full
  block of a full-attention group; in a sliding group only the cdiv(W - 1, B) blocks ending at
  a "reachable boundary"; in a state group only the state at one. The reachable boundaries are
  the replay boundary, num_prompt_tokens - 1 rounded down to B (a resend of the same prompt
  resumes there), and the shared-prefix junction: when a lookup finds the full-attention hit
  longer than the common one, the request records the full hit as its junction
  (KVCacheManager.get_computed_blocks: shared_prefix_boundary) and caches its sliding / state
  blocks there, so the next request sharing that prefix hits it (the first sharer pays).
- Sliding blocks before the window are freed as the request moves on (remove_skipped_blocks);
  freed blocks with a hash go to the end of the free queue, the others to its front
  (BlockPool.free_blocks), so they stay hittable until evicted.

Approximations (said where they act): a state group holds its `state_pages` pages for the whole
request (align mode moves the running state to a fresh block each step and frees the old one);
a cached state is a block taken from the free queue when the request's computed tokens pass the
boundary (skipped when none is free); the scheduler's block-aligned prefill split for Mamba
(Scheduler._mamba_block_aligned_split) is not applied to chunk sizes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kvplan._util.units import cdiv
from kvplan.analysis.simulate.kv_pool import GroupRule


class HybridRequest(Protocol):
    """What the hybrid pool reads and keeps on a request (the simulator's SimRequest)."""

    num_computed: int
    prompt_len: int
    alloc: list[int]
    freed: list[int]
    hybrid: HybridHold | None

    @property
    def num_tokens(self) -> int: ...

    def block_hash(self, index: int, block_size: int) -> int: ...


Block = list[object]  # [key (group, hash) or None, references]


@dataclass(kw_only=True)
class HybridHold:
    """A request's blocks in each group (None: the null block), its cached counts and its
    shared-prefix junction (Request.shared_prefix_boundary)."""

    blocks: list[list[Block | None]]
    cached: list[int]
    states: list[set[int]]  # state groups: the boundaries already cached
    junction: int = 0


@dataclass(frozen=True, kw_only=True)
class Hit:
    """A prefix-cache hit: its tokens, the blocks of each group, the junction it records."""

    tokens: int
    blocks: tuple[list[Block | None], ...]
    junction: int = 0


# -- one type per group kind: each answers its own hit, mask and skipped-blocks questions --

Present = Callable[[int], bool]  # is block j cached in every group of this kind


@dataclass(frozen=True)
class _AttentionCache:
    """What full and sliding attention share: a block per B tokens of the request, grown as it
    computes (SingleTypeKVCacheManager.get_num_blocks_to_allocate / allocate_new_blocks)."""

    rule: GroupRule

    def to_allocate(self, slots: int, held: int | None, hit_blocks: int, skipped: int,
                    admission: bool) -> int:
        """Blocks to take to give `slots` token slots; `held` None: a new request with
        `hit_blocks` hit (the first `skipped` of them before the window: null blocks)."""
        required = cdiv(slots, self.rule.block_size)
        if admission and self.rule.admission_cap is not None:
            required = min(required, self.rule.admission_cap)
        if held is None:
            return max(required - max(skipped, hit_blocks), 0)
        return max(required - held, 0)

    def rows_for(self, slots: int) -> int | None:
        """The length the request's row grows to for `slots` (None: a fixed set of pages)."""
        return cdiv(slots, self.rule.block_size)

    def admitted(self, row: list[Block | None]) -> list[Block | None]:
        """The hit's row as the request keeps it."""
        return row

    def pages(self) -> int:
        """Pages taken at admission besides the hit (a fixed set; attention grows instead)."""
        return 0


@dataclass(frozen=True)
class FullCache(_AttentionCache):
    """Full attention (FullAttentionManager): every block attended and cached."""

    def longest(self, present: Present, max_blocks: int) -> int:
        n = 0
        while n < max_blocks and present(n):
            n += 1
        return n

    def hit_span(self, hit_blocks: int) -> range:
        return range(hit_blocks)

    def cached(self, j: int, boundaries: tuple[int, ...]) -> bool:
        return True

    def skipped(self, computed: int) -> int:
        return 0


@dataclass(frozen=True)
class SlidingCache(_AttentionCache):
    """Sliding window W (SlidingWindowManager): a hit needs only the cdiv(W - 1, B) blocks
    before it; only those ending at a reachable boundary are cached; blocks wholly before the
    window of the next token are freed (get_num_skipped_tokens = computed - W + 1)."""

    @property
    def need(self) -> int:
        assert self.rule.window is not None
        return cdiv(self.rule.window - 1, self.rule.block_size)

    def longest(self, present: Present, max_blocks: int) -> int:
        run = 0
        for i in range(max_blocks - 1, -1, -1):
            if present(i):
                run += 1
                if run >= self.need:
                    return i + self.need
            else:
                run = 0
        return run  # the run from block 0: shorter than the window, all of it attended

    def hit_span(self, hit_blocks: int) -> range:
        return range(max(0, hit_blocks - self.need), hit_blocks)

    def cached(self, j: int, boundaries: tuple[int, ...]) -> bool:
        bs = self.rule.block_size
        return any(b // bs - self.need <= j < b // bs for b in boundaries)

    def skipped(self, computed: int) -> int:
        return self.rule.skipped_blocks(computed)


@dataclass(frozen=True)
class StateCache:
    """Recurrent state in mamba cache mode 'align' (MambaManager): block j holds the state
    after (j + 1) x B tokens; a hit is the rightmost cached state; only states at reachable
    boundaries are cached."""

    rule: GroupRule

    def longest(self, present: Present, max_blocks: int) -> int:
        for i in range(max_blocks - 1, -1, -1):
            if present(i):
                return i + 1
        return 0

    def hit_span(self, hit_blocks: int) -> range:
        return range(hit_blocks - 1, hit_blocks) if hit_blocks else range(0)

    def cached(self, j: int, boundaries: tuple[int, ...]) -> bool:
        bs = self.rule.block_size
        return any(b // bs - 1 == j for b in boundaries)

    def skipped(self, computed: int) -> int:
        return 0

    def to_allocate(self, slots: int, held: int | None, hit_blocks: int, skipped: int,
                    admission: bool) -> int:
        """Its pages at admission (a hit's state block is one of them), none after."""
        if held is not None:
            return 0
        return self.rule.state_pages - (1 if hit_blocks else 0)

    def rows_for(self, slots: int) -> int | None:
        return None

    def admitted(self, row: list[Block | None]) -> list[Block | None]:
        """Only the hit's state: the blocks before it are null."""
        return [row[-1]] if row and row[-1] is not None else []

    def pages(self) -> int:
        return self.rule.state_pages


GroupCache = FullCache | SlidingCache | StateCache
_KINDS: dict[str, type[FullCache] | type[SlidingCache] | type[StateCache]] = {
    "full": FullCache, "sliding": SlidingCache, "state": StateCache}


def hybrid_caching_refusal(groups: tuple[GroupRule, ...]) -> str:
    """Why prefix caching over these groups is not simulated ('' when it is)."""
    kinds = {g.kind for g in groups}
    if not kinds - {"state"}:
        return "no attention group (vLLM turns prefix caching off for attention-free models)"
    if kinds - set(_KINDS):
        return f"{', '.join(sorted(kinds - set(_KINDS)))} groups are not simulated with it"
    if len({g.block_size for g in groups}) > 1:
        return "its groups have different block sizes"
    return ""


class HybridPool:
    """vLLM's block pool shared by every group, with the hybrid coordinator's prefix caching.
    The interface of kvplan.analysis.simulate.kv_pool.KVPool (the scheduler's calls)."""

    caching = True

    def __init__(self, num_blocks: int, groups: tuple[GroupRule, ...]) -> None:
        if num_blocks < 2:
            raise ValueError("a vLLM pool needs at least 2 blocks (one is the null block)")
        why = hybrid_caching_refusal(groups)
        if why:
            raise ValueError(f"hybrid prefix caching: {why}")
        self.groups = groups
        self.block_size = groups[0].block_size
        self.caches: tuple[GroupCache, ...] = tuple(_KINDS[g.kind](g) for g in groups)
        # Groups of one spec are looked up together (HybridKVCacheCoordinator
        # .verify_and_split_kv_cache_groups), full attention first.
        specs: dict[GroupRule, list[int]] = {}
        for g, rule in enumerate(groups):
            specs.setdefault(rule, []).append(g)
        self.specs = sorted(specs.values(), key=lambda ids: groups[ids[0]].kind != "full")
        self.usable = num_blocks - 1
        self.free_uncached = self.usable
        # The groups each per-step call acts on (the others' answers are constant: a full or
        # state group skips no block, a state group grows no row), in group order.
        self._attention = tuple((g, g_rule.admission_cap) for g, (g_rule, cache)
                                in enumerate(zip(groups, self.caches, strict=True))
                                if not isinstance(cache, StateCache))
        self._sliding = tuple((g, cache) for g, cache in enumerate(self.caches)
                              if isinstance(cache, SlidingCache))
        # `release_skipped`'s inputs per sliding group: (group, window, block size).
        self._windows = tuple((g, cache.rule.window, cache.rule.block_size)
                              for g, cache in self._sliding)
        self._has_state = any(isinstance(cache, StateCache) for cache in self.caches)
        self.cached_free: OrderedDict[int, Block] = OrderedDict()
        self.by_key: dict[tuple[int, int], list[Block]] = {}

    @property
    def num_free(self) -> int:
        return self.free_uncached + len(self.cached_free)

    def usage(self) -> float:
        return 1.0 - self.num_free / self.usable

    def hit_tokens(self, hit: Hit | None) -> int:
        return 0 if hit is None else hit.tokens

    # -- the hit --------------------------------------------------------------------

    def find_hit(self, req: HybridRequest) -> Hit:
        """HybridKVCacheCoordinator.find_longest_cache_hit: the fixed point over the kinds,
        at most num_tokens - 1 tokens; the junction (shared_prefix_boundary) it records."""
        bs = self.block_size
        max_blocks = (req.num_tokens - 1) // bs
        hashes = [req.block_hash(j, bs) for j in range(max_blocks)]
        by_key = self.by_key

        def present_in(ids: list[int]) -> Present:
            return lambda j: all((g, hashes[j]) in by_key for g in ids)

        hit = max_blocks
        longest = 0
        while True:
            cur = hit
            for ids in self.specs:
                cur = self.caches[ids[0]].longest(present_in(ids), cur)
                longest = max(longest, cur)
            if cur >= hit:
                break
            hit = cur
        blocks: list[list[Block | None]] = []
        for g, cache in enumerate(self.caches):
            row: list[Block | None] = [None] * hit
            for j in cache.hit_span(hit):
                row[j] = by_key[(g, hashes[j])][0]
            blocks.append(row)
        uncached = (longest - hit) * bs
        return Hit(tokens=hit * bs, blocks=tuple(blocks),
                   junction=hit * bs + uncached if uncached else 0)

    # -- blocks in and out of the free queue -------------------------------------------

    def _take(self) -> Block:
        """One block from the front of the free queue: an uncached one, else the least
        recently freed cached one, evicted (BlockPool.get_new_blocks)."""
        if self.free_uncached:
            self.free_uncached -= 1
            return [None, 1]
        _, block = self.cached_free.popitem(last=False)
        key = block[0]
        holders = self.by_key[key]  # type: ignore[index]
        holders.remove(block)
        if not holders:
            del self.by_key[key]  # type: ignore[arg-type]
        return [None, 1]

    def _touch(self, block: Block) -> None:
        if block[1] == 0:
            del self.cached_free[id(block)]
        block[1] = int(block[1]) + 1  # type: ignore[call-overload]

    def _release(self, block: Block) -> None:
        refs = block[1] = int(block[1]) - 1  # type: ignore[call-overload]
        if refs == 0:
            if block[0] is None:
                self.free_uncached += 1
            else:
                self.cached_free[id(block)] = block

    def _register(self, block: Block, key: tuple[int, int]) -> None:
        block[0] = key
        self.by_key.setdefault(key, []).append(block)

    # -- allocation ---------------------------------------------------------------------

    def _evictable(self, hit: Hit | None, skipped: list[int]) -> int:
        if hit is None:
            return 0
        return sum(1 for g, row in enumerate(hit.blocks) for b in row[skipped[g]:]
                   if b is not None and b[1] == 0)

    def blocks_needed(self, req: HybridRequest, slots: int, *, hit: Hit | None = None,
                      admission: bool = False) -> int:
        """get_num_blocks_to_allocate summed over the groups (with the hit's evictable
        blocks); `admission`: the whole-sequence check's count."""
        hold = req.hybrid
        if hold is not None:
            # A running request (`to_allocate` with `held`: only attention groups grow, each
            # to cdiv(slots, B) blocks, capped at admission; no hit, nothing evictable).
            required = cdiv(slots, self.block_size)
            need = 0
            for g, cap in self._attention:
                more = (min(required, cap) if admission and cap is not None else required
                        ) - len(hold.blocks[g])
                if more > 0:
                    need += more
            return need
        hit_tokens = self.hit_tokens(hit)
        skipped = [c.skipped(hit_tokens) for c in self.caches]
        need = sum(cache.to_allocate(
            slots, None if hold is None else len(hold.blocks[g]),
            len(hit.blocks[g]) if hit is not None and hit.tokens else 0, skipped[g], admission)
            for g, cache in enumerate(self.caches))
        return need + (self._evictable(hit, skipped) if hold is None else 0)

    def release_skipped(self, req: HybridRequest) -> None:
        """remove_skipped_blocks: sliding blocks before the window back to the pool, the
        last first (SingleTypeKVCacheManager._remove_blocks_in_range)."""
        hold = req.hybrid
        assert hold is not None
        computed = req.num_computed
        for g, window, bs in self._windows:  # full and state groups skip none
            row = hold.blocks[g]
            # SlidingCache.skipped (GroupRule.skipped_blocks), inline
            skipped = min(max(0, computed - window + 1) // bs, len(row))
            if not skipped or row[skipped - 1] is None:
                continue  # freed up to there already (the loop below would stop at once)
            for j in range(skipped - 1, -1, -1):
                block = row[j]
                if block is None:
                    break
                row[j] = None
                self._release(block)
                req.freed[g] += 1

    def allocate(self, req: HybridRequest, new_tokens: int, *, hit: Hit | None = None,
                 admission: bool = False) -> bool:
        """Slots for `new_tokens` more tokens of `req` (a new one: with its hit); False, with
        nothing taken, when the pool is short (allocate_slots -> None)."""
        hold = req.hybrid
        if hold is not None and hit is None and not admission:
            # A running request's next tokens: `blocks_needed`'s running branch and the rows'
            # growth inline (speed only: the same steps as below with no hit).
            self.release_skipped(req)
            slots = req.num_computed + new_tokens
            rows = -(-slots // self.block_size)  # cdiv; every attention group's `rows_for`
            blocks = hold.blocks
            need = 0
            for g, _ in self._attention:
                if rows > len(blocks[g]):
                    need += rows - len(blocks[g])
            if need > self.free_uncached + len(self.cached_free):
                return False
            alloc = req.alloc
            for g, _ in self._attention:
                row = blocks[g]
                if rows > len(row):
                    row.extend([self._take() for _ in range(rows - len(row))])
                alloc[g] = len(row)
            self._cache(req, hold, min(slots, req.num_tokens))
            return True
        return self._allocate(req, new_tokens, hit, admission)

    def _allocate(self, req: HybridRequest, new_tokens: int, hit: Hit | None,
                  admission: bool) -> bool:
        """`allocate`'s general path (a new request, a hit or the admission check)."""
        hit_tokens = self.hit_tokens(hit)
        if admission and self.blocks_needed(req, req.num_tokens, hit=hit,
                                             admission=True) > self.num_free:
            return False
        if req.hybrid is not None:
            self.release_skipped(req)
        slots = req.num_computed + hit_tokens + new_tokens
        if self.blocks_needed(req, slots, hit=hit) > self.num_free:
            return False
        hold = req.hybrid
        if hold is None:
            hold = req.hybrid = self._admit(req, hit)
        rows = cdiv(slots, self.block_size)  # every attention group's `rows_for`
        for g, _ in self._attention:
            row = hold.blocks[g]
            for _ in range(rows - len(row)):
                row.append(self._take())
            req.alloc[g] = len(row)
        self._cache(req, hold, min(slots, req.num_tokens))
        return True

    def _admit(self, req: HybridRequest, hit: Hit | None) -> HybridHold:
        """add_local_computed_blocks: the hit's blocks touched in every group first (those
        before a sliding window left as null blocks), then the state pages taken, so no group's
        new page evicts another group's hit (KVCacheCoordinator.allocate_new_computed_blocks,
        vLLM issue #33775)."""
        hit_tokens = self.hit_tokens(hit)
        rows: list[list[Block | None]] = []
        for g, cache in enumerate(self.caches):
            row = list(hit.blocks[g]) if hit is not None else []
            skipped = cache.skipped(hit_tokens)
            for j in range(min(skipped, len(row))):
                row[j] = None
            for b in row:
                if b is not None:
                    self._touch(b)
            req.freed[g] = skipped
            rows.append(cache.admitted(row))
        cached = [len(row) for row in rows]
        for g, cache in enumerate(self.caches):
            if cache.pages():
                rows[g] += [self._take() for _ in range(cache.pages() - len(rows[g]))]
                req.alloc[g] = cache.pages()
        return HybridHold(blocks=rows, cached=cached, states=[set() for _ in rows],
                          junction=hit.junction if hit is not None else 0)

    def _cache(self, req: HybridRequest, hold: HybridHold, tokens: int) -> None:
        """cache_blocks up to `tokens` computed (or being computed) tokens, each group by its
        reachable_block_mask; a state group's checkpoint at each boundary passed."""
        bs = self.block_size
        full = tokens // bs
        cached = hold.cached
        if not self._has_state and all(cached[g] >= full for g, _ in self._attention):
            return  # nothing newly full (a decode step's usual case) and no state group
        boundaries = ((req.prompt_len - 1) // bs * bs,) + (
            (hold.junction // bs * bs,) if hold.junction else ())
        for g, cache in enumerate(self.caches):
            if isinstance(cache, StateCache):
                for b in boundaries:
                    if 0 < b <= tokens and b not in hold.states[g]:
                        hold.states[g].add(b)
                        self._checkpoint(req, g, b)
                continue
            start = cached[g]
            if start >= full:
                continue  # nothing newly full (a decode step's usual case)
            row = hold.blocks[g]
            for j in range(start, min(full, len(row))):
                block = row[j]
                if block is not None and block[0] is None and cache.cached(j, boundaries):
                    self._register(block, (g, req.block_hash(j, bs)))
            cached[g] = full

    def _checkpoint(self, req: HybridRequest, g: int, boundary: int) -> None:
        """The state after `boundary` tokens kept in the cache: a block from the free queue,
        hashed and freed at once (align mode frees a state block once the running state has
        moved past it; here it is taken when the tokens pass it, when a block is free)."""
        key = (g, req.block_hash(boundary // self.block_size - 1, self.block_size))
        if key in self.by_key or not self.num_free:
            return
        block = self._take()
        self._register(block, key)
        self._release(block)

    def free(self, req: HybridRequest) -> None:
        """Every block of `req` back to the pool, each group's tail first
        (KVCacheManager.free)."""
        hold = req.hybrid
        if hold is not None:
            for row in hold.blocks:
                for block in reversed(row):
                    if block is not None:
                        self._release(block)
        req.hybrid = None
        for g in range(len(self.groups)):
            req.alloc[g] = req.freed[g] = 0

    def held(self, req: HybridRequest) -> int:
        """Blocks `req` holds (shared blocks counted for each holder)."""
        hold = req.hybrid
        return 0 if hold is None else sum(b is not None for row in hold.blocks for b in row)
