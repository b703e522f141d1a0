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
  here: their hits are not simulated). The tokens after the prompt stay with the request until
  ``ScheduleBatch.maybe_evict_swa`` (0.5.9:2268-2327): at a decode with ``decode_batch_idx %
  window == 1`` it frees ``[max(swa_evicted_seqlen, cache_protected_len), seqlen - 1 -
  window)``, floored to the page (skipped under ``--enable-piecewise-cuda-graph``, off by
  default, server_args.py 0.5.9:604; not simulated). 0.5.6 locks the same way
  (swa_radix_cache.py 0.5.6 ``inc_lock_ref``; the prompt enters at scheduler.py:1644 and
  scheduler_output_processor_mixin.py:119) but has no such eviction with the radix cache (its
  ``evict_swa`` runs only in ``SWAChunkCache``, 0.5.6 ``mem_cache/common.py``:331-337,
  428-433): the decoded tokens stay until the request ends. Other releases are refused
  (kvplan.analysis.simulate.sglang_pools: 0.5.23 evicts by another rule).
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


class SwaWindow:
    """The SWA pool of one engine: `tokens` tokens in pages of `page`."""

    def __init__(self, *, tokens: int, window: int, page: int, radix: bool,
                 decode_evicts: bool, chunk: int | None, overlap: bool) -> None:
        self.tokens, self.window, self.page = tokens, window, page
        self.radix, self.decode_evicts = radix, decode_evicts
        self.chunk, self.overlap = chunk, overlap
        self.used = 0
        self._reqs: dict[int, _Held] = {}

    @property
    def free(self) -> int:
        return self.tokens - self.used

    def usage(self) -> float:
        return self.used / self.tokens if self.tokens else 0.0

    def _held(self, h: _Held) -> int:
        if self.radix:
            prot = h.bounds[-1] if h.bounds else 0
            freed = h.lock_start + max(0, h.evicted - prot)
        else:
            freed = h.evicted
        return cdiv(h.alloc, self.page) * self.page - freed

    def _state(self, rid: int) -> _Held:
        return self._reqs.setdefault(rid, _Held())

    def _update(self, rid: int, change: object) -> None:
        h = self._state(rid)
        before = self._held(h)
        change(h)  # type: ignore[operator]
        self.used += self._held(h) - before

    def pages_needed(self, rid: int, n: int) -> int:
        """Tokens (whole pages) that `n` more tokens of request `rid` take."""
        h = self._reqs.get(rid)
        alloc = h.alloc if h is not None else 0
        return (cdiv(alloc + n, self.page) - cdiv(alloc, self.page)) * self.page

    def can_take(self, rid: int, n: int) -> bool:
        return self.pages_needed(rid, n) <= self.free

    def take(self, rid: int, n: int) -> None:
        self._update(rid, lambda h: setattr(h, "alloc", h.alloc + n))

    def release(self, rid: int) -> None:
        h = self._reqs.pop(rid, None)
        if h is not None:
            self.used -= self._held(h)

    def _floor(self, tokens: int) -> int:
        return max(0, tokens) // self.page * self.page

    def _insert(self, h: _Held, computed: int) -> None:
        """cache_unfinished_req: a node up to `computed` (page-aligned), then the lock."""
        end = self._floor(computed)
        if not h.bounds or end > h.bounds[-1]:
            h.bounds.append(end)
        acc, start = 0, 0
        for i in range(len(h.bounds) - 1, -1, -1):
            start = h.bounds[i - 1] if i else 0
            acc += h.bounds[i] - start
            if acc >= self.window:
                break
        else:
            start = 0
        h.lock_start = start
        h.evicted = max(h.evicted, h.bounds[-1])

    def before_chunk(self, rid: int, computed: int) -> None:
        """A prefill chunk of request `rid` is scheduled with `computed` tokens done: the radix
        tree takes the previous chunk (scheduler.py:1873); the chunk cache evicts (0.5.9
        maybe_evict_swa, extend)."""
        if self.radix:
            if computed:
                self._update(rid, lambda h: self._insert(h, computed))
            return

        def evict(h: _Held) -> None:
            pre = computed
            if self.overlap:
                if h.extend_idx < 2:
                    h.extend_idx += 1
                    return
                pre = computed - (self.chunk or 0)
            h.extend_idx += 1
            h.evicted = max(h.evicted, self._floor(pre - self.window))
        self._update(rid, evict)

    def prompt_done(self, rid: int, computed: int) -> None:
        """Request `rid`'s prefill ended with `computed` tokens of KV: with the radix cache the
        tree takes the prompt (cache_unfinished_req after the prefill's result,
        scheduler_output_processor_mixin.py 0.5.9:183), once."""
        def done(h: _Held) -> None:
            if self.radix and not h.prefilled:
                self._insert(h, computed)
            h.prefilled = True
        self._update(rid, done)

    def before_decode(self, rid: int, computed: int) -> None:
        """A decode of request `rid` (`computed` tokens with KV) is prepared: maybe_evict_swa's
        decode rule; decode_batch_idx counts it."""
        self.prompt_done(rid, computed)

        def step(h: _Held) -> None:
            if self.decode_evicts and h.decode_idx % self.window == 1:
                prot = h.bounds[-1] if (self.radix and h.bounds) else 0
                h.evicted = max(h.evicted, prot, self._floor(computed - self.window))
            h.decode_idx += 1
        self._update(rid, step)
