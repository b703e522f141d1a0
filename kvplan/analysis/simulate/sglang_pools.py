"""SGLang's pools as its scheduler meets them (`kvplan simulate --engine sglang`): one type per
pool kind that `estimate` sizes (kvplan.engines.sglang.pools), each answering the set-up's
questions -- the running-request cap, the radix cache, the pool's words in the notes.

Read from sgl-project/sglang, ``python/sglang/srt/``, at 0.5.6, 0.5.8 and 0.5.9 (the same rules
in all three):

``SglangTokenPoolSim`` -- one token pool: every layer's KV in ``max_total_num_tokens`` tokens.
``SglangMambaPoolSim`` -- the full-attention token pool beside ``MambaPool``'s recurrent-state
    slots (Qwen3-Next, Qwen3.5, Nemotron-H, ...). What the scheduler does with the slots:
    * each running request holds one slot (``mem_cache/memory_pool.py: HybridReqToTokenPool
      .alloc``, 0.5.6:379-, called by ``mem_cache/common.py: alloc_req_slots``, 0.5.6:294);
      the mamba radix cache holds one more per cached node (``mem_cache/mamba_radix_cache.py:
      cache_unfinished_req`` forks the running request's slot at a chunk's end, 0.5.6:496;
      ``cache_finished_req`` hands the request's slot to the tree, 0.5.6:428-472), and gives
      them back on demand (``evict_mamba``, 0.5.6:584, called by ``alloc_req_slots`` when the
      free slots are fewer than the requests admitted);
    * so the slots never run out under the running requests: ``init_memory_pool`` caps
      ``max_num_reqs`` at ``max_mamba_cache_size // 3`` with the radix cache on
      (``MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO``, 0.5.6 ``model_executor/model_runner.py``
      :240 and :1686-1695; ``mamba_scheduler_strategy`` "auto" is "no_buffer", 0.5.8
      ``server_args.py``:842-845, adding no extra ratio, ``model_runner_kv_cache_mixin.py``
      :268-281), ``// 1`` with ``--disable-radix-cache``; the request pool has that many rows
      and ``tp_worker.py`` (0.5.6:289-297) makes the scheduler's ``max_running_requests``
      ``min(max_total_num_tokens // 2 or --max-running-requests, req_to_token_pool.size)``.
      When the slots are short, requests wait in the queue (``get_num_allocatable_reqs`` <= 0:
      ``batch_is_full``, ``managers/scheduler.py`` 0.5.6:1706-1739); retraction happens only
      when the token pool runs out (``schedule_batch.py: check_decode_mem``, 0.5.6:1567);
    * the prefill budget counts the full-attention tokens only (``PrefillAdder.rem_total_tokens``
      ``is_hybrid_gdn_cache``: the allocator's free tokens plus ``full_evictable_size``,
      ``managers/schedule_policy.py`` 0.5.6:384-397).
    The mamba radix cache's hits (only a cached node that holds a state matches,
    ``_match_prefix_helper``: a prompt chunk's end, a prompt's end, a finished request's
    committed tokens) are simulated for 0.5.7 - 0.5.12 (`MAMBA_HITS`, kvplan.analysis.
    simulate.sglang_mamba_radix); elsewhere the radix cache runs without hits and an explicit
    ``--enable-prefix-caching`` is refused.
``SglangSwaPoolSim`` -- the full-attention token pool beside the sliding-window pool (gpt-oss,
    Llama-4; sized by ``estimate``, kvplan.engines.sglang.pools.HybridSwaPool): what a request
    holds in it and when SGLang frees it, kvplan.analysis.simulate.sglang_swa (one rule per
    release range, `SWA_RULES`: 0.5.6 - 0.5.7 and 0.5.20+ with the radix cache on, 0.5.8 -
    0.5.13; 0.5.14 - 0.5.19 refused, their eviction not read in full). The SWA
    radix cache's hits (a match must keep ``window`` tokens of swa KV, ``swa_radix_cache.py:
    _match_prefix_helper``) are simulated for 0.5.8 - 0.5.11 (`SWA_HITS`,
    kvplan.analysis.simulate.sglang_swa_radix); elsewhere the radix cache runs without hits,
    as for the mamba pool, and an explicit ``--enable-prefix-caching`` is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key
from kvplan.analysis.simulate.sglang_swa import (
    EveryIntervalDecodes,
    EveryWindowDecodes,
    SwaRule,
    SwaSettings,
    TokenGatedDecodes,
)
from kvplan.capacity.plan import CapacityPlan
from kvplan.engines.sglang.swa_split import sglang_window

# The rule by which each release frees a running request's out-of-window tokens from the
# sliding-window pool (kvplan.analysis.simulate.sglang_swa; sglang wheels read, python/sglang/
# srt/managers/schedule_batch.py, mem_cache/, environ.py): (first, last, rule), last None: and
# every later release. Refused, their eviction not read in full: 0.5.14 - 0.5.16 (a batch's
# forward-iteration cadence, ``forward_iter % SGLANG_SWA_EVICTION_INTERVAL == 0``, 0.5.14
# schedule_batch.py maybe_evict_swa; 0.5.17 too, :3218), 0.5.18 - 0.5.19 (they gate on tokens
# as 0.5.20, over trees not read in full), and everything before 0.5.6.
SWA_RULES: tuple[tuple[tuple[int, ...], tuple[int, ...] | None, SwaRule], ...] = (
    ((0, 5, 6), (0, 5, 7), SwaRule()),
    ((0, 5, 8), (0, 5, 10), EveryWindowDecodes()),
    ((0, 5, 11), (0, 5, 13), EveryIntervalDecodes()),
    ((0, 5, 20), (0, 5, 22), TokenGatedDecodes(page_rounded=False)),
    ((0, 5, 23), None, TokenGatedDecodes()),
)


def _release(v: tuple[int, ...]) -> str:
    return ".".join(map(str, v))


def _spans(spans: list[tuple[tuple[int, ...], tuple[int, ...] | None]]) -> list[str]:
    """Release spans, one after the next merged ((0, 5, 8)-(0, 5, 10) and (0, 5, 11)-(0, 5, 13):
    "0.5.8 - 0.5.13"), the last open one "X+"."""
    merged: list[list[tuple[int, ...] | None]] = []
    for first, last in spans:
        prev = merged[-1][1] if merged else None
        if prev is not None and (*prev[:2], prev[2] + 1) == first:
            merged[-1][1] = last
        else:
            merged.append([first, last])
    out = []
    for lo, hi in merged:
        assert lo is not None
        out.append(f"{_release(lo)}+" if hi is None else _release(lo) if hi == lo
                   else f"{_release(lo)} - {_release(hi)}")
    return out


def swa_releases_text() -> str:
    """The releases whose SWA eviction kvplan reads (`SWA_RULES`), in words: "0.5.6 - 0.5.7 and
    0.5.20+ with the radix cache, 0.5.8 - 0.5.13" (the latter with it on or off)."""
    radix = _spans([(f, last) for f, last, rule in SWA_RULES if not rule.chunk_cache])
    both = _spans([(f, last) for f, last, rule in SWA_RULES if rule.chunk_cache])
    return f"{' and '.join(radix)} with the radix cache, {', '.join(both)}"


# The releases whose SWA radix cache's prefix hits kvplan simulates (kvplan.analysis.simulate.
# sglang_swa_radix): swa_radix_cache.py's match, lock, eviction and insertion read at 0.5.9 and
# the same at 0.5.8 and 0.5.10 (but for return types) and 0.5.11 (RadixKey.match / child_key;
# _insert_helper's new case 3, a tail wholly swa-evicted left out of the tree, never fires:
# 0.5.11 schedule_batch.py _evict_swa keeps the window and one page more before the insert
# boundary, "the defensive counterpart"; evict_from_tree_cache and add_one_req's lock as
# 0.5.9's). 0.5.6 - 0.5.7 differ; 0.5.12 on evict a leaf's swa KV under a full lock, compact
# single-child chains and split leaves on insert (env-gated), and release a prefix's swa lock
# early (swa_prefix_lock_released), not read in full: refused.
SWA_HITS = ((0, 5, 8), (0, 5, 11))


def swa_hits(version: str | None) -> bool:
    """Whether kvplan simulates SGLang `version`'s SWA radix cache hits (None: the newest)."""
    first, last = SWA_HITS
    return first <= version_key(version)[:3] <= last


# The releases whose mamba radix cache's prefix hits kvplan simulates (kvplan.analysis.simulate.
# sglang_mamba_radix): mamba_radix_cache.py's match, insertion, eviction and locks read at 0.5.9,
# the same rules at 0.5.7 - 0.5.12 (diffed function by function; the scheduler's hooks --
# stash_chunked_request, the prefill result's cache_unfinished_req, init_next_round_input's
# max_prefix_len, a retraction's is_insert=False -- the same). 0.5.6 (no strategy, another
# match) and 0.5.13 on (the state copy deferred, a new slot allocator) not read: refused. The
# default --mamba-scheduler-strategy ("auto": "no_buffer") only.
MAMBA_HITS = ((0, 5, 7), (0, 5, 12))


def mamba_hits(version: str | None) -> bool:
    """Whether kvplan simulates SGLang `version`'s mamba radix cache hits (None: the newest)."""
    first, last = MAMBA_HITS
    return first <= version_key(version)[:3] <= last


def swa_rule(version: str | None) -> SwaRule | None:
    """The SWA eviction rule of SGLang `version` (None: the newest); None where not read."""
    key = version_key(version)[:3]
    for first, last, rule in SWA_RULES:
        if first <= key and (last is None or key <= last):
            return rule
    return None


@dataclass(frozen=True, kw_only=True)
class SglangTokenPoolSim:
    """One token pool of `plan.token_capacity` tokens (the plain pool)."""

    plan: CapacityPlan

    @classmethod
    def from_plan(cls, plan: CapacityPlan) -> SglangTokenPoolSim:
        return cls(plan=plan)

    def running_cap(self, cap: int) -> int:
        """The scheduler's max_running_requests, given the token pool's cap `cap`."""
        return cap

    def caching(self, asked: bool | None, version: str | None = None
                ) -> tuple[bool, str, str]:
        """(radix cache simulated, its word in the scheduler's note, a note of its own): on
        unless turned off (SGLang `version`)."""
        on = asked is not False
        return on, "on" if on else "off", ""

    def pool_text(self) -> str:
        return f"{self.plan.token_capacity:,} tokens"

    def window_pool(self, *, radix: bool, chunk: int | None, overlap: bool,
                    version: str | None, model_type: str) -> SwaSettings | None:
        """The sliding-window pool's settings for one engine (None: the pool has none)."""
        return None

    def mamba_slots(self) -> int | None:
        """The mamba pool's slots (None: the pool has none)."""
        return None


@dataclass(frozen=True, kw_only=True)
class SglangMambaPoolSim(SglangTokenPoolSim):
    """The full-attention token pool and `slots` recurrent-state slots, `per_request` of them
    reserved for each running request (3 with the radix cache, 5 with its extra_buffer strategy
    from SGLang 0.5.14, kvplan.engines.sglang.mamba_strategy; 1 without)."""

    slots: int
    per_request: int

    @classmethod
    def from_plan(cls, plan: CapacityPlan) -> SglangTokenPoolSim:
        per = plan.sglang_pool.get("slots_per_request")
        assert isinstance(per, int) and plan.max_mamba_cache_size is not None
        return cls(plan=plan, slots=plan.max_mamba_cache_size, per_request=per)

    def running_cap(self, cap: int) -> int:
        # init_memory_pool: max_num_reqs = min(max_num_reqs, max_mamba_cache_size // ratio); the
        # scheduler takes min(its cap, req_to_token_pool.size) (tp_worker.py).
        return min(cap, self.slots // self.per_request)

    def caching(self, asked: bool | None, version: str | None = None
                ) -> tuple[bool, str, str]:
        # mamba_radix_cache.py asserts page size 1 without the extra buffer (0.5.9:383-386).
        if mamba_hits(version) and self.plan.block_size == 1:
            on = asked is not False
            return on, "on" if on else "off", ""
        return _radix_without_hits(
            asked, f"--enable-prefix-caching: SGLang {version or 'newest'}'s mamba radix cache "
            "hits (only at a cached node holding a recurrent state) are not simulated (kvplan "
            "reads mamba_radix_cache.py at 0.5.7 - 0.5.12, page size 1); use --engine-version "
            "0.5.9",
            f"the mamba radix cache is on ({self.per_request} mamba slots per running request) "
            "but its prefix hits are simulated for SGLang 0.5.7 - 0.5.12 only (SGLang matches "
            "only a node holding a recurrent state, mamba_radix_cache.py): no prefix hits")

    def pool_text(self) -> str:
        return (f"{self.plan.token_capacity:,} full-attention tokens, {self.slots:,} mamba "
                f"slots, {self.per_request} per running request")

    def mamba_slots(self) -> int | None:
        return self.slots


def _radix_without_hits(asked: bool | None, refusal: str, note: str
                        ) -> tuple[bool, str, str]:
    """A hybrid pool's radix cache whose hits kvplan does not simulate: asked for, refused in
    one line (`refusal`); off when turned off; by default on with no hits (`note` says so)."""
    if asked:
        raise InputError(refusal)
    if asked is False:
        return False, "off", ""
    return False, "on without hits", note


def _swa_caching(asked: bool | None, version: str | None) -> tuple[bool, str, str]:
    if swa_hits(version):
        on = asked is not False
        return on, "on" if on else "off", ""
    return _radix_without_hits(
        asked, f"--enable-prefix-caching: SGLang {version or 'newest'}'s SWA radix cache hits "
        "are not simulated (kvplan reads swa_radix_cache.py's match and eviction at 0.5.8 - "
        "0.5.11); use --engine-version 0.5.9",
        "the SWA radix cache is on (a running request's last nodes holding >= the window are "
        "locked in the sliding-window pool) but its prefix hits are simulated for SGLang "
        "0.5.8 - 0.5.11 only (swa_radix_cache.py): no prefix hits")


@dataclass(frozen=True, kw_only=True)
class SglangSwaPoolSim(SglangTokenPoolSim):
    """The full-attention token pool and a sliding-window pool of `swa_tokens` tokens, each
    request keeping there the tokens kvplan.analysis.simulate.sglang_swa counts."""

    swa_tokens: int
    window: int

    @classmethod
    def from_plan(cls, plan: CapacityPlan) -> SglangTokenPoolSim:
        window = plan.sglang_pool.get("sliding_window")
        assert isinstance(window, int) and plan.swa_max_total_num_tokens is not None
        return cls(plan=plan, swa_tokens=plan.swa_max_total_num_tokens, window=window)

    def caching(self, asked: bool | None, version: str | None = None
                ) -> tuple[bool, str, str]:
        return _swa_caching(asked, version)

    def window_pool(self, *, radix: bool, chunk: int | None, overlap: bool,
                    version: str | None, model_type: str) -> SwaSettings | None:
        rule = swa_rule(version)
        if rule is None or not (radix or rule.chunk_cache):
            raise InputError(
                f"simulate --engine sglang: SGLang {version or 'newest'}'s eviction of "
                "out-of-window tokens from the sliding-window pool is not read (kvplan reads "
                f"{swa_releases_text()}); use --engine-version 0.5.9")
        window = sglang_window(self.window, model_type)  # SGLang's sliding_window_size
        return SwaSettings(tokens=self.swa_tokens, window=window, page=self.plan.block_size,
                           radix=radix, chunk=chunk, overlap=overlap, rule=rule,
                           hits=radix and swa_hits(version))

    def pool_text(self) -> str:
        return (f"{self.plan.token_capacity:,} full-attention tokens, {self.swa_tokens:,} "
                f"sliding-window tokens, window {self.window:,}")


# The pool kinds `estimate` names (SglangPool.kind) that the simulator runs.
_SIM_POOLS: dict[str, type[SglangTokenPoolSim]] = {"token": SglangTokenPoolSim,
                                                    "mamba": SglangMambaPoolSim,
                                                    "hybrid_swa": SglangSwaPoolSim}


def sglang_sim_pool(plan: CapacityPlan) -> SglangTokenPoolSim:
    """The simulated pool for the kind `estimate` sized (refused for any other)."""
    kinds = sorted({str(g.get("kind")) for g in plan.kv_cache_groups})
    pool = _SIM_POOLS.get(kinds[0]) if len(kinds) == 1 else None
    if pool is None:
        raise InputError(f"simulate --engine sglang: only SGLang's plain token pool, its "
                         f"mamba pool and its sliding-window pool are simulated (this model's "
                         f"is {', '.join(kinds)})")
    return pool.from_plan(plan)
