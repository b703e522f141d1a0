"""vLLM V1's KV block pool as the scheduler sees it: one pool of blocks shared by every KV-cache
group, per-group allocation rules, prefix caching with chained block hashes and LRU eviction.

Follows vLLM 0.32 (``vllm/v1/core/kv_cache_manager.py`` allocate_slots / get_computed_blocks,
``vllm/v1/core/single_type_kv_cache_manager.py`` get_num_blocks_to_allocate,
get_num_skipped_tokens, ``vllm/v1/core/block_pool.py`` get_new_blocks / free_blocks /
get_usage):

- The pool holds `num_blocks` blocks of which one is the null block (BlockPool.__init__ pops
  block 0 as `null_block`), so `num_blocks - 1` can be handed out and usage is
  1 - free / (num_blocks - 1).
- A request holds blocks in every group. Full attention (and MLA, the indexer): cdiv(slots,
  block). Sliding window W: the same slots, but blocks wholly before the window of the next
  token are returned as soon as the tokens are computed (remove_skipped_blocks;
  get_num_skipped_tokens = computed - W + 1); chunked local attention C: the blocks before the
  current chunk (skipped = computed // C x C). Recurrent state (mamba cache mode 'none'): a
  fixed number of pages from admission to the end (kvplan.kv.kinds.RecurrentState: 1 + spec
  tokens; 'align' mode's extra pages are held for the whole request here, an approximation).
- Admission checks that the whole sequence fits (SchedulerConfig.scheduler_reserve_full_isl,
  default True in 0.32): blocks for request.num_tokens, sliding and chunked groups capped at
  their max_admission_blocks_per_request (kvplan.kv.kinds pages_per_request, the rule
  `estimate` sizes with); prefix-hit blocks sitting in the free queue count as allocations.
- Prefix caching (one group of full-attention kind only: kvplan refuses to guess how the hybrid
  coordinator's hits across sliding / state groups play out): a full block is cached when it is
  allocated for computed tokens (cache_blocks up to min(computed + new, num_tokens)); a lookup
  takes the longest run of cached full blocks up to num_tokens - 1 tokens. Freed blocks
  without a hash go to the front of the free queue and cached ones to its end, the request's
  tail block first (KVCacheManager.free frees in reverse; BlockPool.free_blocks), so every
  uncached free block is handed out before the least recently freed cached one is evicted.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kvplan._util.units import cdiv

# The hash field of a cached block holding a request's own tokens (past every shared segment).
# Only that request can ever hit it (after a preemption), so it is found through the request's
# own block list (`PoolRequest.kept`) and never enters the hash map: the same hits, the same
# eviction order, without hashing the blocks nobody else can share.
OWN = object()


@dataclass(frozen=True, kw_only=True)
class GroupRule:
    """One KV-cache group's allocation rule."""

    kind: str  # "full", "sliding", "chunked" or "state"
    block_size: int
    window: int | None = None
    chunk: int | None = None
    state_pages: int = 1
    admission_cap: int | None = None  # sliding / chunked: max_admission_blocks_per_request

    def skipped_blocks(self, computed: int) -> int:
        """Blocks wholly before the attention span of the next token."""
        if self.kind == "sliding":
            assert self.window is not None
            return max(0, computed - self.window + 1) // self.block_size
        if self.kind == "chunked":
            assert self.chunk is not None
            return computed // self.chunk * self.chunk // self.block_size
        return 0


class PoolRequest(Protocol):
    """What the pool reads and keeps on a request (the simulator's SimRequest)."""

    num_computed: int
    alloc: list[int]
    freed: list[int]
    blocks: list[list[object]]
    cached_blocks: int  # leading blocks already hashed
    kept: list[list[object]]  # its blocks when it was last freed (its own ones may be cached)

    @property
    def num_tokens(self) -> int: ...

    def block_hash(self, index: int, block_size: int) -> int: ...

    def own_from(self, block_size: int) -> int:
        """The first block wholly past the shared segments."""
        ...


class KVPool:
    """The block pool and the per-group rules. `caching`: prefix caching on (one full group)."""

    def __init__(self, num_blocks: int, groups: tuple[GroupRule, ...], *,
                 caching: bool = False) -> None:
        if num_blocks < 2:
            raise ValueError("a vLLM pool needs at least 2 blocks (one is the null block)")
        if caching and (len(groups) != 1 or groups[0].kind != "full"):
            raise ValueError("prefix caching is simulated for one full-attention group only")
        self.groups = groups
        self.usable = num_blocks - 1
        self.caching = caching
        self.free_uncached = self.usable
        # Cached blocks with no reference, least recently freed first: id(block) -> block.
        self.cached_free: OrderedDict[int, list[object]] = OrderedDict()
        # hash -> blocks holding it (vLLM's BlockHashToBlockMap may hold several).
        self.by_hash: dict[int, list[list[object]]] = {}
        # Told the cached pages that leave the cache (each one's hash, or id() of a request's
        # own block), in eviction order, once per allocation that evicts: SGLang's SWA and
        # mamba radix trees keep their pages' sliding-layer or recurrent state beside them.
        self.on_evict: Callable[[list[object]], None] | None = None
        # `_grow`'s per-group steps: (group, kind is "state", block size, state pages).
        self._steps = tuple((g, rule.kind == "state", rule.block_size, rule.state_pages)
                            for g, rule in enumerate(groups))
        self._windowed = any(rule.kind in ("sliding", "chunked") for rule in groups)

    @property
    def num_free(self) -> int:
        return self.free_uncached + len(self.cached_free)

    def usage(self) -> float:
        return 1.0 - self.num_free / self.usable

    def hit_tokens(self, hit: list[list[object]] | None) -> int:
        return len(hit) * self.groups[0].block_size if hit else 0

    # -- prefix cache -------------------------------------------------------------------

    def find_hit(self, req: PoolRequest) -> list[list[object]]:
        """The longest run of cached full blocks of `req`, covering at most num_tokens - 1
        tokens (the last token is recomputed for its logits)."""
        if not self.caching:
            return []
        bs = self.groups[0].block_size
        hit: list[list[object]] = []
        own = req.own_from(bs)
        kept = req.kept
        for j in range((req.num_tokens - 1) // bs):
            if j < own:
                blocks = self.by_hash.get(req.block_hash(j, bs))
                if not blocks:
                    break
                hit.append(blocks[0])
            elif j < len(kept) and kept[j][0] is OWN:
                hit.append(kept[j])
            else:
                break
        return hit

    def _touch(self, block: list[object]) -> None:
        if block[1] == 0:
            del self.cached_free[id(block)]
        block[1] = int(block[1]) + 1  # type: ignore[call-overload]

    def _new_blocks(self, count: int) -> list[list[object]]:
        """`count` blocks from the front of the free queue: uncached ones first, then the least
        recently freed cached ones, evicted (BlockPool.get_new_blocks)."""
        fresh = min(count, self.free_uncached)
        self.free_uncached -= fresh
        out: list[list[object]] = [[None, 1] for _ in range(count)]
        if count == fresh:
            return out
        popitem, by_hash = self.cached_free.popitem, self.by_hash
        told: list[object] | None = None if self.on_evict is None else []
        for _ in range(count - fresh):
            _, evicted = popitem(last=False)
            h = evicted[0]
            if h is not OWN:
                holders = by_hash[h]  # type: ignore[index]
                if len(holders) == 1:
                    del by_hash[h]  # type: ignore[arg-type]
                    if told is not None:
                        told.append(h)
                else:  # by identity: two free holders of one hash are equal lists
                    del holders[next(k for k, b in enumerate(holders) if b is evicted)]
            elif told is not None:
                told.append(id(evicted))
            evicted[0] = None
        if told and self.on_evict is not None:
            self.on_evict(told)
        return out

    def _new_block(self) -> list[object]:
        return self._new_blocks(1)[0]

    def _cache(self, req: PoolRequest, tokens: int) -> None:
        bs = self.groups[0].block_size
        own = req.own_from(bs)
        blocks = req.blocks
        for j in range(req.cached_blocks, tokens // bs):
            block = blocks[j]
            if block[0] is None:
                if j >= own:
                    block[0] = OWN
                    continue
                h = req.block_hash(j, bs)
                block[0] = h
                self.by_hash.setdefault(h, []).append(block)
        req.cached_blocks = max(req.cached_blocks, tokens // bs)

    # -- allocation ---------------------------------------------------------------------

    def blocks_needed(self, req: PoolRequest, slots: int, *, hit_blocks: int = 0,
                      evictable: int = 0, admission: bool = False) -> int:
        """Blocks to take from the pool to give `req` `slots` token slots (get_num_blocks_to_
        allocate, summed over the groups); `admission`: the whole-sequence check's count."""
        if not (hit_blocks or evictable or admission) and any(req.alloc):
            return self._running_need(req.alloc, slots)
        return self._blocks_needed(req, slots, hit_blocks, evictable, admission)

    def _blocks_needed(self, req: PoolRequest, slots: int, hit_blocks: int, evictable: int,
                       admission: bool) -> int:
        """`blocks_needed`'s general count (any request, hit or admission check)."""
        need = evictable
        new_request = not any(req.alloc)
        for g, rule in enumerate(self.groups):
            if rule.kind == "state":
                need += rule.state_pages if req.alloc[g] == 0 else 0
                continue
            required = cdiv(slots, rule.block_size)
            if admission and rule.admission_cap is not None:
                required = min(required, rule.admission_cap)
            if new_request:
                skipped = rule.skipped_blocks(req.num_computed + hit_blocks * rule.block_size)
                need += max(required - max(skipped, hit_blocks), 0)
            else:
                need += max(required - req.alloc[g], 0)
        return need

    def _running_need(self, alloc: list[int], slots: int) -> int:
        """`blocks_needed` for a request holding blocks (`alloc`), with no hit and no admission
        check: a state group's pages if it holds none, each other group's blocks past those
        it holds (the same count as the general loop, in one pass)."""
        need = 0
        for g, state, bs, pages in self._steps:
            if state:
                if alloc[g] == 0:
                    need += pages
            elif -(-slots // bs) > alloc[g]:  # cdiv(slots, bs) above what it holds
                need += -(-slots // bs) - alloc[g]
        return need

    def release_skipped(self, req: PoolRequest) -> None:
        """Return the sliding / chunked blocks no longer attended (remove_skipped_blocks)."""
        for g, rule in enumerate(self.groups):
            if rule.kind in ("sliding", "chunked"):
                skipped = min(rule.skipped_blocks(req.num_computed), req.alloc[g])
                if skipped > req.freed[g]:
                    self.free_uncached += skipped - req.freed[g]
                    req.freed[g] = skipped

    def allocate(self, req: PoolRequest, new_tokens: int, *,
                 hit: list[list[object]] | None = None, admission: bool = False) -> bool:
        """Slots for `new_tokens` more tokens of `req` (and, for a new request, its prefix hit
        `hit`); False, with nothing taken, when the pool is short (allocate_slots -> None)."""
        if not hit and not admission and any(req.alloc):
            return self._grow(req, new_tokens)
        return self._allocate(req, new_tokens, hit, admission)

    def _allocate(self, req: PoolRequest, new_tokens: int, hit: list[list[object]] | None,
                  admission: bool) -> bool:
        """`allocate`'s general path (any request, hit or admission check)."""
        hit = hit or []
        hit_tokens = len(hit) * self.groups[0].block_size if hit else 0
        computed = req.num_computed + hit_tokens
        evictable = sum(1 for b in hit if b[1] == 0)
        if admission:
            full = self.blocks_needed(req, req.num_tokens, hit_blocks=len(hit),
                                      evictable=evictable, admission=True)
            if full > self.num_free:
                return False
        if any(req.alloc):
            self.release_skipped(req)
        slots = computed + new_tokens
        need = self.blocks_needed(req, slots, hit_blocks=len(hit), evictable=evictable)
        if need > self.num_free:
            return False
        if self.caching:
            if hit:
                # A hit is whole cached blocks (the request holds none yet). Without one, the
                # count stays: the tail block is hashed by `_cache` once it is full.
                for block in hit:
                    self._touch(block)
                req.blocks.extend(hit)
                req.cached_blocks = len(req.blocks)
            more = cdiv(slots, self.groups[0].block_size) - len(req.blocks)
            if more > 0:
                req.blocks.extend(self._new_blocks(more))
            req.alloc[0] = len(req.blocks)
            self._cache(req, min(slots, req.num_tokens))
            return True
        new_request = not any(req.alloc)
        for g, rule in enumerate(self.groups):
            if rule.kind == "state":
                if req.alloc[g] == 0:
                    req.alloc[g] = rule.state_pages
                    self.free_uncached -= rule.state_pages
                continue
            required = cdiv(slots, rule.block_size)
            if new_request:
                skipped = rule.skipped_blocks(computed)
                req.freed[g] = skipped
                if required > skipped:
                    self.free_uncached -= required - skipped
                req.alloc[g] = max(required, skipped)
            elif required > req.alloc[g]:
                self.free_uncached -= required - req.alloc[g]
                req.alloc[g] = required
        return True

    def _grow(self, req: PoolRequest, new_tokens: int) -> bool:
        """`allocate` for a request already holding blocks, with no hit and no admission check
        (a running request's next tokens): the same steps, the hit's terms being zero, in one
        pass (speed only: the same blocks, counts and cache as `allocate`'s general path)."""
        if self._windowed:
            self.release_skipped(req)
        slots = req.num_computed + new_tokens
        alloc = req.alloc
        if self.caching:  # one full group (checked at construction)
            bs = self._steps[0][2]
            required = -(-slots // bs)  # cdiv
            if required - alloc[0] > self.free_uncached + len(self.cached_free):
                return False
            blocks = req.blocks
            if required > len(blocks):
                blocks.extend(self._new_blocks(required - len(blocks)))
            alloc[0] = len(blocks)
            tokens = min(slots, req.num_tokens)
            if tokens // bs > req.cached_blocks:  # else `_cache` changes nothing
                self._cache(req, tokens)
            return True
        need = self._running_need(alloc, slots)
        if need == 0:
            return True  # every group holds its slots already: nothing changes
        if need > self.free_uncached + len(self.cached_free):
            return False
        for g, state, bs, pages in self._steps:
            if state:
                if alloc[g] == 0:
                    alloc[g] = pages
                    self.free_uncached -= pages
                continue
            required = -(-slots // bs)
            if required > alloc[g]:
                self.free_uncached -= required - alloc[g]
                alloc[g] = required
        return True

    def free(self, req: PoolRequest) -> None:
        """Return every block of `req` (KVCacheManager.free: tail first)."""
        if self.caching:
            # Full blocks of computed tokens are cached before they are freed (allocate_slots
            # caches them as it allocates; the collective decode batch defers it to here).
            self._cache(req, min(req.num_computed, len(req.blocks) * self.groups[0].block_size))
            cached_free = self.cached_free
            uncached = 0
            for block in reversed(req.blocks):
                refs = block[1] = block[1] - 1  # type: ignore[operator]
                if not refs:
                    if block[0] is None:
                        uncached += 1
                    else:
                        cached_free[id(block)] = block
            self.free_uncached += uncached
            req.kept = req.blocks
            req.blocks = []
            req.cached_blocks = 0
        else:
            for g in range(len(self.groups)):
                self.free_uncached += req.alloc[g] - req.freed[g]
        for g in range(len(self.groups)):
            req.alloc[g] = req.freed[g] = 0

    def held(self, req: PoolRequest) -> int:
        """Blocks `req` holds (shared prefix blocks counted for each holder)."""
        return sum(a - f for a, f in zip(req.alloc, req.freed, strict=True))

    def trim(self, req: PoolRequest, tokens: int) -> int:
        """Return the slots of `req` past its first `tokens` (one full-attention group, page
        size 1: SGLang frees a verify's rejected draft slots at once, kvplan.engines.sglang.
        spec_decode); they are past its computed tokens, never hashed. Returns how many."""
        if len(self.groups) != 1 or self.groups[0].block_size != 1:
            raise ValueError("KVPool.trim: one group of page size 1 only")
        extra = req.alloc[0] - tokens
        if extra <= 0:
            return 0
        if self.caching:
            if any(b[0] is not None for b in req.blocks[tokens:]):
                raise ValueError("KVPool.trim: a hashed block past the kept tokens")
            del req.blocks[tokens:]
        self.free_uncached += extra
        req.alloc[0] = tokens
        return extra
