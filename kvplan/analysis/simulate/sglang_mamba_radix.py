"""SGLang's mamba radix cache with its prefix hits (`kvplan simulate --engine sglang` on
Qwen3-Next, Nemotron-H, Granite-4.0-H, ..., SGLang 0.5.7 - 0.5.12): a tree whose pages keep their
full-attention KV (kvplan's `KVPool`, prefix caching on) and, at some node ends only, a
recurrent state in one of ``MambaPool``'s slots.

Read from sgl-project/sglang, ``python/sglang/srt/mem_cache/mamba_radix_cache.py`` at 0.5.9
(0.5.7 - 0.5.12 the same rules, function by function: 0.5.7 - 0.5.8 match in
``_match_prefix_helper`` what 0.5.9 splits into ``_match_post_processor``; 0.5.10 frees an
insertion's duplicate KV inside ``_insert_helper``, ``prev_prefix_len``; 0.5.11 reads keys
through ``RadixKey.match`` / ``child_key`` and inserts through ``maybe_cache_unfinished_req``,
which skips only a disaggregation warm-up request; 0.5.12 adds KV-cache events. 0.5.13 defers
the match's state copy, ``mamba_cow_src_index``, and allocates the fork through
``_alloc_mamba_slot``: not read), with ``--mamba-scheduler-strategy`` "auto", which is
"no_buffer" (server_args.py 0.5.9:874-877; 0.5.7:766-769, 0.5.12:1184-1187), page size 1
(``MambaRadixCache.__init__`` :383-386 asserts it without the extra buffer):

* The radix cache is on by default (``--disable-radix-cache`` turns it off; kvplan.engines.
  sglang.pools sizes 3 slots per running request with it, 1 without).
* Where a state is kept: a node holds the state after its last token or none (a split node
  has none, ``_split_node`` :1030-1058, "mamba cache can not be split"). A request's state is
  forked into the tree at each prompt chunk's end (``cache_unfinished_req`` :556-671: from
  ``stash_chunked_request``, managers/scheduler.py 0.5.9:1872-1873) and at its prompt's end
  (after the prefill, scheduler_output_processor_mixin.py 0.5.9:181-183); a finished request
  hands its own slot to the tree at the end of its committed tokens (``cache_finished_req``
  :464-554; freed when that node has a state already). A retracted request inserts nothing
  (``release_kv_cache(..., is_insert=False)``, managers/schedule_batch.py 0.5.9:1915). The
  extra buffer's tracking every ``--mamba-track-interval`` tokens is not the default: not
  simulated.
* A hit (``_match_prefix_helper`` :905-945): the full-attention match (at most the prompt less
  one token, ``init_next_round_input``, schedule_batch.py 0.5.9:895-900) cut back to its last
  node holding a state (``best_value_len``); the path up to it is refreshed in both LRU lists,
  nodes nearer the root older (``_match_post_processor`` :956-1028), and its state is copied
  into the request's slot (``cow_mamba``).
* Lock (``inc_lock_ref`` :788-814): a running request's last node's state (the hit's end, then
  each insertion's end) cannot be evicted; the full KV of the whole path is held.
* Eviction (``evict_mamba`` :728-761): the least recently used unlocked state goes (an inner
  node is tombstoned, a leaf deleted with its full KV) when the mamba pool has no free slot
  for a fork (``cache_unfinished_req`` :613-619) and when a prefill batch of ``bs`` requests
  (the chunked one included) finds fewer than 3 x ``bs`` free before its requests take theirs
  (``alloc_req_slots``, mem_cache/common.py 0.5.9:303-315, ``MAMBA_STATE_PER_REQ_PREFIX_CACHE``
  = 3, 0.5.7 - 0.5.12 alike). The full pool's eviction (``evict_full`` :763-786) of a node
  drops its state too.

Modelled a page (one token) at a time over `KVPool`'s cached blocks, as kvplan.analysis.
simulate.sglang_swa_radix: a state is keyed by the page that ends it (a shared page's block hash
names its whole prefix; a request's own pages their blocks), in one LRU of every state (locked
ones are skipped by eviction, as SGLang's LRU lists skip them). The slots: `slots` in all, one
for each running request (the chunked one included), one for each state in the tree. Not
modelled: a leaf whose state is evicted keeps its full KV here (SGLang deletes the leaf: no
hit can end there either way; the budgets count both free); the states a request's match
refreshes are those on its path when it was admitted and those it inserted (a state another
request adds on that path later is not refreshed by this request's insertions); a waiting
request's match (every scheduling pass) neither refreshes the LRU nor takes a slot (SGLang's
``cow_mamba`` copies the state into a slot at the match). The full pool's eviction order is
`KVPool`'s (least recently freed blocks).
"""

from __future__ import annotations

from collections import OrderedDict

from kvplan.analysis.simulate.kv_pool import KVPool, PoolRequest
from kvplan.analysis.simulate.sglang_swa_radix import page_key


class MambaRadixTree:
    """The mamba radix cache's states over `KVPool`'s cached pages (module docstring), in a
    mamba pool of `slots` slots."""

    def __init__(self, slots: int, pool: KVPool) -> None:
        self.slots = slots
        self.pool = pool
        pool.on_evict = self._dropped
        # Every state in the tree, least recently used first; `locks` counts the running
        # requests whose last node ends at it.
        self.order: OrderedDict[object, None] = OrderedDict()
        self.locks: dict[object, int] = {}
        self._reqs: dict[int, PoolRequest] = {}  # running requests, one slot each
        self._last: dict[int, object] = {}  # the state each running request locks
        self._path: dict[int, list[object]] = {}  # the states on its path, root first
        self._top: dict[int, int] = {}  # its tokens in the tree (its last insertion's end)
        self.states_evicted = 0  # states evict_mamba took for slots

    # -- the slots ------------------------------------------------------------------------

    @property
    def free_slots(self) -> int:
        return self.slots - len(self.order) - len(self._reqs)

    def _evict(self, count: int) -> None:
        """evict_mamba: the `count` least recently used unlocked states go."""
        while count > 0:
            key = next((k for k in self.order if k not in self.locks), None)
            if key is None:
                return
            del self.order[key]
            self.states_evicted += 1
            count -= 1

    def _dropped(self, keys: list[object]) -> None:
        """The full pool evicted pages `keys`: a state ending at one goes with it."""
        locks, pop = self.locks, self.order.pop
        for key in keys:
            if key not in locks:
                pop(key, None)

    # -- the tree -------------------------------------------------------------------------

    def match(self, hit: list[list[object]]) -> list[list[object]]:
        """The full-attention match `hit` (whole pages) cut back to its last page holding a
        state (``_match_prefix_helper``'s best_value_len)."""
        order = self.order
        for j in range(len(hit), 0, -1):
            if page_key(hit[j - 1]) in order:
                return hit[:j]
        return []

    def _refresh(self, keys: list[object]) -> None:
        order = self.order
        for key in keys:  # root first: nodes nearer the root are older
            if key in order:
                order.move_to_end(key)

    def _relock(self, rid: int, key: object | None) -> None:
        """dec_lock_ref on the request's old last node, inc_lock_ref on `key`'s."""
        old = self._last.pop(rid, None)
        if old is not None:
            left = self.locks[old] - 1
            if left:
                self.locks[old] = left
            else:
                del self.locks[old]
        if key is not None:
            self.locks[key] = self.locks.get(key, 0) + 1
            self._last[rid] = key

    def admitted(self, req: PoolRequest, rid: int, hit: list[list[object]]) -> None:
        """Request `rid` joins with prefix `hit` (a match: it ends on a state, or is empty):
        the match's refresh, the lock, and a slot for the request (evicting if none is free)."""
        self._reqs[rid] = req
        order = self.order
        path = [k for k in (page_key(b) for b in hit) if k in order]
        self._path[rid] = path
        self._top[rid] = len(hit) * self.pool.groups[0].block_size
        self._refresh(path)
        end = page_key(hit[-1]) if hit else None
        self._relock(rid, end if path and path[-1] == end else None)
        if self.free_slots < 0:
            self._evict(-self.free_slots)

    def prefill_batch(self, size: int, new: int) -> None:
        """A prefill batch of `size` requests, `new` of them admitted in it (their slots
        taken here already): alloc_req_slots evicts until 3 x `size` slots were free before
        the new ones took theirs."""
        short = 3 * size - (self.free_slots + new)
        if short > 0:
            self._evict(short)

    def _add(self, rid: int, req: PoolRequest, end: int, *, forked: bool) -> object | None:
        """Insert the request's tokens [0, `end`) with a state at `end`: forked from the
        request's slot (a fresh slot, evicting one if none is free) or its own handed over."""
        page = self.pool.groups[0].block_size
        blocks = req.blocks if req.blocks else req.kept
        if end < page or end // page > len(blocks):
            return None
        key = page_key(blocks[end // page - 1])
        if key is None:
            return None
        path = self._path.setdefault(rid, [])
        self._refresh(path)
        if key not in self.order:
            if forked and self.free_slots <= 0:
                self._evict(1)
            self.order[key] = None
        self.order.move_to_end(key)
        path.append(key)
        self._top[rid] = end
        return key

    def insert(self, rid: int, end: int) -> None:
        """cache_unfinished_req: request `rid`'s tokens [0, `end`) enter the tree (a prompt
        chunk's end, or its prompt's), a state forked at `end`; the request's lock moves
        there. Once per end."""
        req = self._reqs.get(rid)
        if req is None or end <= self._top.get(rid, 0):
            return
        key = self._add(rid, req, end, forked=True)
        if key is not None:
            self._relock(rid, key)

    def release(self, rid: int, finished: bool = False) -> None:
        """cache_finished_req (`finished`: its committed tokens enter the tree with the
        request's slot as their state) or a retraction (is_insert=False: the slot is freed);
        the request's lock and slot go."""
        req = self._reqs.get(rid)
        if req is not None and finished:
            page = self.pool.groups[0].block_size
            end = min(req.num_computed, len(req.kept) * page) // page * page
            if end > self._top.get(rid, 0):
                self._add(rid, req, end, forked=False)
        self._relock(rid, None)
        self._reqs.pop(rid, None)
        self._path.pop(rid, None)
        self._top.pop(rid, None)
