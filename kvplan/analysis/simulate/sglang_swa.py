"""SGLang's sliding-window pool as its scheduler meets it (`kvplan simulate --engine sglang` on
gpt-oss, Llama-4): the tokens of the sliding (Llama-4: chunked) layers each running request
holds in the SWA pool, beside the full-attention pool that `KVPool` keeps.

Read from sgl-project/sglang, ``python/sglang/srt/``, at 0.5.9 (and 0.5.6 where named):

* Every extend and decode takes its tokens in both pools (``mem_cache/swa_memory_pool.py:
  SWATokenToKVPoolAllocator``; ``ScheduleBatch._is_available_size_sufficient``: full and swa
  available >= the tokens); ``available_size`` is the smaller of the two (0.5.9:299-303), so
  the decode check (``check_decode_mem``, 0.5.9 ``managers/schedule_batch.py``:1834-1837) and
  retraction see the tighter pool, and the prefill budget too (``PrefillAdder.rem_total_tokens``:
  min(full available + evictable, swa available + evictable) less the running requests'
  expected decode, 0.5.9 ``managers/schedule_policy.py``:450-456).
* Radix cache on (``mem_cache/swa_radix_cache.py: SWARadixCache``, the default): a prompt enters
  the tree chunk by chunk (``cache_unfinished_req`` before the next chunk, scheduler.py:1873,
  and after the last, ``scheduler_output_processor_mixin.py``:183), one node per insertion,
  page-aligned; while the request runs, ``inc_lock_ref`` (0.5.9 swa_radix_cache.py:692-731)
  locks the swa side of its nodes from the last back until they hold >= ``window`` tokens;
  the earlier nodes' swa tokens are evictable (the tree frees them on demand, counted free
  here; with the prefix hits simulated, 0.5.8 - 0.5.11, kvplan.analysis.simulate.
  sglang_swa_radix keeps which pages lost them). The tokens after the prompt stay with the
  request until
  ``ScheduleBatch.maybe_evict_swa`` (0.5.9:2268-2327): at a decode with ``decode_batch_idx %
  window == 1`` it frees ``[max(swa_evicted_seqlen, cache_protected_len), seqlen - 1 -
  window)``, floored to the page (skipped under ``--enable-piecewise-cuda-graph``, off by
  default, server_args.py 0.5.9:604; not simulated). 0.5.6 locks the same way
  (swa_radix_cache.py 0.5.6 ``inc_lock_ref``; the prompt enters at scheduler.py:1644 and
  scheduler_output_processor_mixin.py:119) but has no such eviction with the radix cache (its
  ``evict_swa`` runs only in ``SWAChunkCache``, 0.5.6 ``mem_cache/common.py``:331-337,
  428-433): the decoded tokens stay until the request ends. How each release frees them is one
  rule type below (`SwaRule`), picked by version in kvplan.analysis.simulate.sglang_pools.
* The window is SGLang's ``sliding_window_size`` (model_runner.py 0.5.9:1021-1033; gpt-oss's
  is the config's minus one, kvplan.analysis.simulate.sglang_pools).
* Radix cache off (``SWAChunkCache``, 0.5.9): the same decode rule from 0 (no protected
  prefix), and at each extend ``[swa_evicted_seqlen, pre_len - window)`` (with the overlap
  scheduler from the third chunk on, ``pre_len - chunked_prefill_size``).
* A finished or retracted request gives back all it holds (``release_kv_cache``;
  ``reset_for_retract`` zeroes ``swa_evicted_seqlen`` and ``decode_batch_idx``, 0.5.9:1131-1133).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvplan._util.units import cdiv


def _ceil_page(tokens: int, page: int) -> int:
    return cdiv(tokens, page) * page


@dataclass(frozen=True)
class SwaRule:
    """SGLang 0.5.6 - 0.5.7 with the radix cache: no decoded token leaves the SWA pool while its
    request runs (no ``maybe_evict_swa``; 0.5.7 swa_radix_cache.py ``inc_lock_ref`` and
    ``cache_unfinished_req`` are 0.5.6's). Each subclass is one later release's rule."""

    # Whether kvplan read this rule's --disable-radix-cache path (the chunk cache).
    chunk_cache: bool = False

    def keep(self, window: int, page: int) -> int:
        """How far behind ``pre_len`` the eviction frontier stops (``_evict_swa``)."""
        return window

    def leaf_cap(self, window: int, page: int) -> int | None:
        """The longest fresh tree leaf an insertion leaves before the lock (None: uncapped)."""
        return None

    def due(self, h: _Held, computed: int, window: int, page: int) -> bool:
        """Whether this decode of the request frees its out-of-window tokens."""
        return False

    def decode(self, h: _Held, computed: int, window: int, page: int, prot: int) -> None:
        if self.due(h, computed, window, page):
            h.evicted = max(h.evicted, prot,
                            max(0, computed - self.keep(window, page)) // page * page)


@dataclass(frozen=True)
class EveryWindowDecodes(SwaRule):
    """0.5.8 - 0.5.10: ``maybe_evict_swa`` frees [max(swa_evicted_seqlen, cache_protected_len),
    seqlen - 1 - window) at ``decode_batch_idx % window == 1`` (0.5.9 managers/schedule_batch.py
    :2268-2327; 0.5.8 and 0.5.10 the same but for the piecewise-CUDA-graph skip, not simulated;
    their ``_evict_swa`` is 0.5.9's, 0.5.8 :2129, 0.5.10 :2459)."""

    chunk_cache: bool = True

    def due(self, h: _Held, computed: int, window: int, page: int) -> bool:
        return h.decode_idx % window == 1


@dataclass(frozen=True)
class EveryIntervalDecodes(EveryWindowDecodes):
    """0.5.11 - 0.5.13: every ``eviction_interval`` decodes, ``max(page, int(window x
    SGLANG_SWA_EVICTION_INTERVAL_MULTIPLIER = 1.0))`` floored to the page (0.5.11 managers/
    schedule_batch.py:2613-2650, environ.py:267), and the frontier one page further back:
    ``pre_len - window - page_size`` (0.5.11 ``_evict_swa`` :2651-2680; 0.5.13's
    SGLANG_OPT_SWA_EVICT_DROP_PAGE_MARGIN, off by default, environ.py:774, not simulated).
    0.5.12 - 0.5.13's SGLANG_OPT_SWA_RELEASE_LEAF_LOCK_AFTER_WINDOW is off by default
    (environ.py 0.5.12:598), not simulated."""

    def keep(self, window: int, page: int) -> int:
        return window + page

    def due(self, h: _Held, computed: int, window: int, page: int) -> bool:
        return h.decode_idx % (max(page, window) // page * page) == 1


@dataclass(frozen=True)
class TokenGatedDecodes(SwaRule):
    """0.5.23 (radix cache on; ``UnifiedRadixCache`` with its SWA component):
    * a decode (``decode_batch_idx >= 1``) frees once ``interval`` tokens have slid out of the
      window since the request's last free: ``seqlen - 1 - window >= swa evicted seqlen +
      SGLANG_SWA_EVICTION_INTERVAL`` (128, environ.py:730; ``_swa_eviction_trigger``,
      managers/schedule_batch.py:4047-4066, ``maybe_evict_swa`` :4068-4123); the evicted
      seqlen is then raised to ``cache_protected_len`` (``swa_dead_lo``, :994-1000; gpt-oss has
      no ``swa_evict_floor``: only ``is_prefill_aware_swa`` models set it, scheduler.py:4359)
      and on to ``pre_len - ceil_page(max(window, page))``, floored to the page
      (mem_cache/common.py ``free_swa_out_of_window_slots``:75-138);
    * an insertion's fresh leaf longer than ``ceil_page(window)`` is split so its tail is that
      long (unified_cache/components/swa.py ``_maybe_split_leaf_for_swa_lock``:593-624, from
      ``commit_insert_component_data``), so the lock (``inc_lock_ref`` walk, :855-902, as
      0.5.9's) pins one window, not the whole last chunk. The prompt enters the tree as in
      0.5.9: per chunk (scheduler.py:3772-3776 ``stash_chunked_request`` -> mem_cache/common.py
      ``checkpoint_kv_cache``:271-280) and after the prefill's result
      (scheduler_components/batch_result_processor.py:394).
    The SGLANG_OPT_RELEASE_PREFILL_SWA prefix-lock release is off by default (environ.py:743),
    not simulated. With --disable-radix-cache 0.5.23 runs a ``UnifiedRadixCache`` without
    prefix sharing (mem_cache/registry.py:83-96), not read: refused.
    0.5.21 - 0.5.22 are the same (0.5.22 schedule_batch.py:3873-3955, environ.py:677, swa.py
    :584 and :826-; 0.5.21 :3867-, :679, :556 and :798-, the radix cache a ``UnifiedRadixCache``,
    registry.py), but for the frontier, ``pre_len - max(window, page)`` not rounded up to the
    page (common.py 0.5.22:100, 0.5.21:97): ``page_rounded=False``. 0.5.20 too: the same
    token gate written inline (schedule_batch.py 0.5.20:3721-3781, environ.py:666), the same
    frontier (common.py:73-108, :86), the fresh leaf capped as 0.5.21 (unified_cache/
    components/swa.py ``commit_insert_component_data``:509-556, cap :559-), the lock walk as
    0.5.21's; the prompt enters through ``maybe_cache_unfinished_req`` (scheduler.py:3456).
    0.5.20 - 0.5.21's --disable-radix-cache runs ``SWAChunkCache`` (registry.py), not read:
    refused."""

    interval: int = 128
    page_rounded: bool = True

    def keep(self, window: int, page: int) -> int:
        if not self.page_rounded:
            return max(window, page)
        return _ceil_page(max(window, page), page)

    def leaf_cap(self, window: int, page: int) -> int | None:
        return _ceil_page(window, page)

    def decode(self, h: _Held, computed: int, window: int, page: int, prot: int) -> None:
        if h.decode_idx >= 1 and computed - window >= h.cursor + self.interval:
            h.cursor = max(h.cursor, prot,
                           max(0, computed - self.keep(window, page)) // page * page)
            h.evicted = max(h.evicted, h.cursor)


@dataclass(kw_only=True)
class _Held:
    """One request's place in the SWA pool."""

    alloc: int = 0  # tokens allocated (kv_allocated_len)
    bounds: list[int] = field(default_factory=list)  # radix: the tree nodes' ends
    lock_start: int = 0  # radix: the locked nodes start here; before, evictable
    evicted: int = 0  # swa_evicted_seqlen
    decode_idx: int = 0  # decode_batch_idx
    extend_idx: int = 0  # extend_batch_idx
    prefilled: bool = False  # the prompt's last insertion is done
    cursor: int = 0  # 0.5.23: the request's own SWA evicted seqlen (insertions leave it)
    rid: int = 0


@dataclass(frozen=True, kw_only=True)
class SwaSettings:
    """One engine's SWA pool as set up: `tokens` tokens in pages of `page`, SGLang's `window`,
    the radix cache (else the chunk cache), the chunked prefill size and overlap scheduler (the
    chunk cache's extend rule) and the release's eviction rule."""

    tokens: int
    window: int
    page: int
    radix: bool
    chunk: int | None
    overlap: bool
    rule: SwaRule
    # The radix cache's prefix hits simulated (kvplan.analysis.simulate.sglang_swa_radix).
    hits: bool = False

    @property
    def decode_evicts(self) -> bool:
        """Whether the release frees decoded tokens while the request runs (0.5.8 on)."""
        return type(self.rule) is not SwaRule


class SwaWindow:
    """The SWA pool of one engine, as `settings` describe it, and what each request holds."""

    def __init__(self, settings: SwaSettings) -> None:
        self.settings = settings
        self.used = 0
        self._reqs: dict[int, _Held] = {}

    @property
    def free(self) -> int:
        return self.settings.tokens - self.used

    def usage(self) -> float:
        return self.used / self.settings.tokens if self.settings.tokens else 0.0

    def _held(self, h: _Held) -> int:
        if self.settings.radix:
            prot = h.bounds[-1] if h.bounds else 0
            freed = h.lock_start + max(0, h.evicted - prot)
        else:
            freed = h.evicted
        return cdiv(h.alloc, self.settings.page) * self.settings.page - freed

    def _state(self, rid: int) -> _Held:
        return self._reqs.setdefault(rid, _Held(rid=rid))

    def _update(self, rid: int, change: object) -> None:
        h = self._state(rid)
        before = self._held(h)
        change(h)  # type: ignore[operator]
        self.used += self._held(h) - before

    def pages_needed(self, rid: int, n: int) -> int:
        """Tokens (whole pages) that `n` more tokens of request `rid` take."""
        h = self._reqs.get(rid)
        alloc = h.alloc if h is not None else 0
        page = self.settings.page
        return (cdiv(alloc + n, page) - cdiv(alloc, page)) * page

    def can_take(self, rid: int, n: int) -> bool:
        return self.pages_needed(rid, n) <= self.free

    def take(self, rid: int, n: int) -> None:
        self._update(rid, lambda h: setattr(h, "alloc", h.alloc + n))

    def release(self, rid: int, finished: bool = False) -> None:
        """Request `rid` ends (`finished`) or is retracted: it gives back all it holds."""
        h = self._reqs.pop(rid, None)
        if h is not None:
            self.used -= self._held(h)

    def match(self, hit: list[list[object]]) -> list[list[object]]:
        """The part of a full-attention prefix hit SGLang keeps (all: hits off here)."""
        return hit

    def admitted(self, req: object, rid: int, hit: list[list[object]]) -> None:
        """Request `rid` joins with prefix `hit` (the radix tree's, kvplan.analysis.simulate.
        sglang_swa_radix)."""

    def refused(self, rid: int) -> None:
        """Request `rid`'s admission failed after `admitted`: its lock goes (the radix tree's)."""

    def _floor(self, tokens: int) -> int:
        return max(0, tokens) // self.settings.page * self.settings.page

    def _insert(self, h: _Held, computed: int) -> None:
        """cache_unfinished_req: a node up to `computed` (page-aligned), then the lock."""
        end = self._floor(computed)
        if not h.bounds or end > h.bounds[-1]:
            cap = self.settings.rule.leaf_cap(self.settings.window, self.settings.page)
            start = h.bounds[-1] if h.bounds else 0
            if cap is not None and end - start > cap:
                h.bounds.append(end - cap)  # the leaf split before the lock
            h.bounds.append(end)
        acc, start = 0, 0
        for i in range(len(h.bounds) - 1, -1, -1):
            start = h.bounds[i - 1] if i else 0
            acc += h.bounds[i] - start
            if acc >= self.settings.window:
                break
        else:
            start = 0
        h.lock_start = start
        h.evicted = max(h.evicted, h.bounds[-1])

    def before_chunk(self, rid: int, computed: int) -> None:
        """A prefill chunk of request `rid` is scheduled with `computed` tokens done: the radix
        tree takes the previous chunk (scheduler.py:1873); the chunk cache evicts (0.5.9
        maybe_evict_swa, extend)."""
        if self.settings.radix:
            if computed:
                self._update(rid, lambda h: self._insert(h, computed))
            return

        def evict(h: _Held) -> None:
            pre = computed
            if self.settings.overlap:
                if h.extend_idx < 2:
                    h.extend_idx += 1
                    return
                pre = computed - (self.settings.chunk or 0)
            h.extend_idx += 1
            keep = self.settings.rule.keep(self.settings.window, self.settings.page)
            h.evicted = max(h.evicted, self._floor(pre - keep))
        self._update(rid, evict)

    def prompt_done(self, rid: int, computed: int) -> None:
        """Request `rid`'s prefill ended with `computed` tokens of KV: with the radix cache the
        tree takes the prompt (cache_unfinished_req after the prefill's result,
        scheduler_output_processor_mixin.py 0.5.9:183), once."""
        def done(h: _Held) -> None:
            if self.settings.radix and not h.prefilled:
                self._insert(h, computed)
            h.prefilled = True
        self._update(rid, done)

    def before_decode(self, rid: int, computed: int) -> None:
        """A decode of request `rid` (`computed` tokens with KV) is prepared: maybe_evict_swa's
        decode rule; decode_batch_idx counts it."""
        self.prompt_done(rid, computed)

        def step(h: _Held) -> None:
            prot = h.bounds[-1] if (self.settings.radix and h.bounds) else 0
            self.settings.rule.decode(h, computed, self.settings.window, self.settings.page, prot)
            h.decode_idx += 1
        self._update(rid, step)
