"""SGLang's SWA radix cache with its prefix hits (`kvplan simulate --engine sglang` on gpt-oss,
Llama-4, SGLang 0.5.8 - 0.5.11): the sliding-window pool of kvplan.analysis.simulate.sglang_swa
beside a tree whose pages keep their full-attention KV (kvplan's `KVPool`, prefix caching on)
and, unless tombstoned, their sliding-layer KV.

Read from sgl-project/sglang, ``python/sglang/srt/mem_cache/swa_radix_cache.py`` at 0.5.9
(0.5.8, 0.5.10 and 0.5.11 the same rules: ``_match_prefix_helper``, ``evict``, ``_insert_helper``
and the lock walk differ only in their return types and 0.5.11's ``RadixKey`` methods; 0.5.8
refreshes the path inside the helper; 0.5.11's ``_insert_helper`` adds a case for a tail wholly
swa-evicted, freed rather than inserted, that its ``_evict_swa`` never lets happen (it keeps the
window and a page before the insert boundary, schedule_batch.py 0.5.11:2661-2669); 0.5.11 frees
decoded tokens by its own rule, kvplan.analysis.simulate.sglang_swa.EveryIntervalDecodes):

* Match (``_match_prefix_helper`` :821-872, ``_match_post_processor`` :888-921): the walk
  counts ``match_len_since_tombstone`` from infinity (a path from the root with no tombstone
  always matches), and at a tombstoned node keeps the match up to there if at least
  ``sliding_window_size`` tokens since the previous tombstone were matched, then restarts the
  count at 0; at the end the whole match counts if the count is >= the window. The hit is
  that length (``value[:best_value_len]``); the path up to its last node is refreshed in both
  LRU lists, nodes nearer the root older (``reset_node_and_parents_mru``).
* Lock (``inc_lock_ref`` :692-731): from the request's last node back, whole nodes, until they
  hold >= the window: their sliding-layer KV is protected; the rest of the tree's is evictable
  (the budgets count it free: ``PrefillAdder.rem_total_tokens``, as kvplan.analysis.simulate.
  sglang_swa).
* Eviction (``evict`` :602-690; asked for by ``evict_from_tree_cache``, mem_cache/common.py
  0.5.9:229-252, when an allocation finds fewer swa tokens free than it takes): the least
  recently used unlocked node keeping sliding-layer KV gives it up first; an inner node is
  tombstoned (``_tombstone_internal_node`` :1116), a leaf deleted. Evicting a node's full KV
  (the full pool's LRU) drops its sliding-layer KV too.
* Insert (``_insert_helper`` :959-1059): a prompt's chunk (``cache_unfinished_req``) enters
  with its sliding-layer KV, and a tombstoned page it recomputes gets the request's (branch 1,
  :1011-1020); a finished request's sequence (``cache_finished_req``) enters with the tokens
  ``maybe_evict_swa`` freed, ``[cache_protected_len, swa_evicted_seqlen)``, as a tombstone
  (:1048-1058); the walk refreshes the whole path. A retracted request is not inserted
  (``release_kv_cache(..., is_insert=False)``, managers/schedule_batch.py 0.5.9:1915).

Modelled a page at a time over `KVPool`'s cached blocks (a shared page is its block hash, as
one tree node path; the request's own pages their blocks): each page keeps its sliding-layer
KV or is tombstoned, in one LRU of the unlocked pages keeping it. A node's tombstone is its
pages' (the match reads only where tombstones start and end, so the same hit), node ends are
kept where SGLang's nodes end (each insertion's end, a match's end) for the lock walk. Not
modelled: SWA eviction frees whole nodes (here pages: no overshoot), and a leaf evicted for
its sliding-layer KV keeps its full KV here (tombstoned: a match stops before it all the same;
its full tokens stay cached, which the budgets count free either way). The full pool's
eviction order is `KVPool`'s (least recently freed blocks), and a retracted request finds its
own cached blocks again (its decoded ones too, which SGLang does not insert), as for SGLang's
plain radix cache in kvplan.analysis.simulate.sglang_scheduler.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from kvplan._util.units import cdiv
from kvplan.analysis.simulate.kv_pool import OWN, KVPool, PoolRequest
from kvplan.analysis.simulate.sglang_swa import SwaSettings, SwaWindow, _Held


def page_key(block: list[object]) -> object | None:
    """A cached page's place in the tree: its block hash (a shared page), the block itself (a
    request's own page); None while not cached."""
    h = block[0]
    if h is None:
        return None
    return id(block) if h is OWN else h


def swa_hit_pages(keys: Sequence[object | None], tombstoned: set[object] | frozenset[object],
                  window: int, page: int) -> int:
    """The pages of a full-attention match of `keys` (root first) that SGLang keeps
    (``_match_prefix_helper``, 0.5.9 swa_radix_cache.py:841-870: the count of matched tokens
    since the last tombstone starts at infinity; at a tombstone the match so far is kept if the
    count is >= `window`, and the count restarts at 0; at the end all of it is kept if the
    count is >= `window`). The same read from the end: all of it if no tombstone is within
    `window` tokens of it, else the last tombstone preceded by >= `window` tombstone-free tokens
    (or by none at all, from the root) ends the hit."""
    n = len(keys)
    if not tombstoned:
        return n
    j, run = n - 1, 0
    while j >= 0 and keys[j] not in tombstoned:
        run += page
        j -= 1
    if j < 0 or run >= window:
        return n
    while j >= 0:  # keys[j] is a tombstone: kept up to it if the run before it is long enough
        i, before = j - 1, 0
        while i >= 0 and keys[i] not in tombstoned and before < window:
            before += page
            i -= 1
        if before >= window or i < 0:
            return j
        j = i
    return 0


class _Keys(Sequence[object | None]):
    """The page keys of a hit, read as the match reads them (from the end, a few)."""

    def __init__(self, blocks: list[list[object]]) -> None:
        self.blocks = blocks

    def __len__(self) -> int:
        return len(self.blocks)

    def __getitem__(self, j):  # type: ignore[no-untyped-def, override]
        return page_key(self.blocks[j])


class SwaRadixWindow(SwaWindow):
    """The sliding-window pool and the SWA radix tree's pages (module docstring). `used` counts
    the tokens each request keeps outside the tree; the tree's pages count once, locked ones as
    used, unlocked ones free but evicted (tombstoned) when an allocation needs them."""

    def __init__(self, settings: SwaSettings, pool: KVPool) -> None:
        super().__init__(settings)
        self.pool = pool
        pool.on_evict = self._dropped
        self.lru: OrderedDict[object, None] = OrderedDict()  # unlocked pages keeping swa KV
        self.locks: dict[object, int] = {}  # locked pages (all keep swa KV)
        self.tombstoned: set[object] = set()
        self.ends: set[object] = set()  # pages that end a tree node
        self._reqs_by_rid: dict[int, PoolRequest] = {}
        self._locked: dict[int, list[object]] = {}
        self.tombstoned_tokens = 0  # sliding-layer tokens SWA eviction took from the tree

    # -- the pool's counts ----------------------------------------------------------------

    def _held(self, h: _Held) -> int:
        # The tokens past the tree (the chunk not inserted yet, the decoded ones not freed).
        page = self.settings.page
        prot = h.bounds[-1] if h.bounds else 0
        return cdiv(h.alloc, page) * page - max(prot, h.evicted)

    @property
    def free(self) -> int:
        return self.settings.tokens - self.used - self.settings.page * len(self.locks)

    def usage(self) -> float:
        held = self.used + self.settings.page * len(self.locks)
        return held / self.settings.tokens if self.settings.tokens else 0.0

    def take(self, rid: int, n: int) -> None:
        # evict_from_tree_cache: the swa tokens short of free ones come from the tree's LRU.
        short = self.pages_needed(rid, n) - (self.free - self.settings.page * len(self.lru))
        page = self.settings.page
        while short > 0 and self.lru:
            key, _ = self.lru.popitem(last=False)
            self.tombstoned.add(key)
            self.tombstoned_tokens += page
            short -= page
        super().take(rid, n)

    def _dropped(self, keys: list[object]) -> None:
        """The full pool evicted pages `keys`: their sliding-layer KV goes with them."""
        lru, tombstoned, ends = self.lru, self.tombstoned, self.ends
        for key in keys:
            lru.pop(key, None)
            tombstoned.discard(key)
            ends.discard(key)

    # -- the tree ---------------------------------------------------------------------------

    def match(self, hit: list[list[object]]) -> list[list[object]]:
        return hit[:swa_hit_pages(_Keys(hit), self.tombstoned, self.settings.window,
                                  self.settings.page)]

    def _keys(self, blocks: Sequence[list[object]], start: int, end: int) -> list[object]:
        page = self.settings.page
        keys = (page_key(b) for b in blocks[start // page:end // page])
        return [k for k in keys if k is not None]

    def _refresh(self, keys: list[object]) -> None:
        for key in keys:  # root first: the root's end is the least recently used
            if key in self.lru:
                self.lru.move_to_end(key)

    def _add(self, keys: list[object], *, tombstone: bool) -> None:
        for key in keys:
            if key in self.locks:
                continue
            if tombstone:
                if key not in self.lru:
                    self.tombstoned.add(key)
            else:
                self.tombstoned.discard(key)
                self.lru[key] = None
                self.lru.move_to_end(key)

    def _end(self, blocks: Sequence[list[object]], end: int) -> None:
        page = self.settings.page
        if end >= page:
            key = page_key(blocks[end // page - 1])
            if key is not None:
                self.ends.add(key)

    def _relock(self, rid: int, blocks: Sequence[list[object]], end: int) -> None:
        """inc_lock_ref on the node ending at `end`, then dec_lock_ref on the old one: whole
        nodes from the end back until they hold >= the window."""
        page, window = self.settings.page, self.settings.window
        new: list[object] = []
        acc = 0
        key = page_key(blocks[end // page - 1]) if end >= page else None
        for j in range(end // page - 1, -1, -1):
            if key is None or key in self.tombstoned:
                break
            new.append(key)
            acc += page
            key = page_key(blocks[j - 1]) if j else None
            if acc >= window and (j == 0 or key in self.ends):
                break
        new.reverse()
        for key in new:
            self.lru.pop(key, None)
            self.locks[key] = self.locks.get(key, 0) + 1
        self._unlock(self._locked.get(rid, []))
        self._locked[rid] = new

    def _unlock(self, keys: list[object]) -> None:
        for key in keys:
            left = self.locks[key] - 1
            if left:
                self.locks[key] = left
            else:
                del self.locks[key]
                self.lru[key] = None  # the insert walk refreshed it: most recently used

    def admitted(self, req: PoolRequest, rid: int, hit: list[list[object]]) -> None:
        """Request `rid` joins with prefix `hit` (whole pages): match_prefix's refresh, the
        lock at admission (PrefillAdder.add_one_req -> inc_lock_ref)."""
        self._reqs_by_rid[rid] = req
        if not hit:
            return
        tokens = len(hit) * self.settings.page
        self._end(hit, tokens)
        self._refresh(self._keys(hit, 0, tokens))

        def start(h: _Held) -> None:
            h.alloc = h.evicted = tokens
            h.bounds = [tokens]
        self._update(rid, start)
        self._relock(rid, hit, tokens)

    def refused(self, rid: int) -> None:
        # add_one_req's NO_TOKEN after the lock: ``_lock_node`` unlocks on leaving (0.5.9
        # schedule_policy.py:750-753); the request holds nothing yet.
        self.release(rid)

    def _insert(self, h: _Held, computed: int) -> None:
        rid = h.rid
        before = h.bounds[-1] if h.bounds else 0
        super()._insert(h, computed)
        end = h.bounds[-1]
        req = self._reqs_by_rid.get(rid)
        if req is None or end <= before:
            return
        blocks = req.blocks
        for b in h.bounds:
            if before < b <= end:
                self._end(blocks, b)
        self._add(self._keys(blocks, before, end), tombstone=False)
        self._refresh(self._keys(blocks, 0, end))
        self._relock(rid, blocks, end)

    def release(self, rid: int, finished: bool = False) -> None:
        """cache_finished_req (`finished`: the sequence enters the tree, the tokens
        maybe_evict_swa freed as a tombstone) or a retraction (is_insert=False); the request's
        locks go."""
        h = self._reqs.get(rid)
        req = self._reqs_by_rid.pop(rid, None)
        if h is not None and req is not None and finished:
            blocks = req.kept  # KVPool.free ran: its blocks, cached
            page = self.settings.page
            prot = h.bounds[-1] if h.bounds else 0
            end = min(h.alloc, len(blocks) * page) // page * page
            cut = min(max(h.evicted, prot), end)
            if end > prot:
                self._add(self._keys(blocks, prot, cut), tombstone=True)
                self._add(self._keys(blocks, cut, end), tombstone=False)
                self._end(blocks, end)
            self._refresh(self._keys(blocks, 0, end))
        self._unlock(self._locked.pop(rid, []))
        super().release(rid)
