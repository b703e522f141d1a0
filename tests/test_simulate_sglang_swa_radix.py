"""The SWA radix cache's prefix hits in `kvplan simulate --engine sglang` (issue 30):
kvplan.analysis.simulate.sglang_swa_radix against SGLang 0.5.9 mem_cache/swa_radix_cache.py
(``_match_prefix_helper`` :821-872, ``evict`` :602-690, ``inc_lock_ref`` :692-731,
``_insert_helper`` :959-1059)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.sglang_pools import swa_hits
from kvplan.analysis.simulate.sglang_swa_radix import SwaRadixWindow, swa_hit_pages
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from tests.sglang_radix import recorded_matches, shared_prefix_requests, three_requests


def _gpt_oss_sim(version: str = "0.5.9"):  # type: ignore[no-untyped-def]
    """gpt-oss-20b on one H200, 1 GiB of KV, SGLang 0.5.9: 24,272 full-attention tokens,
    19,417 sliding-window tokens, page 1, window 127 (tests/test_simulate_sglang_swa.py
    derives them by hand)."""
    spec = load_model("gpt-oss-20b")[0]
    inputs = estimate_inputs(spec, context=4096, gpu="H200", tp=1, kv_budget_gib=1,
                             engine=Engine("sglang"), engine_version=version)
    sim, _ = setup(spec, inputs)
    assert sim.swa is not None and sim.swa.hits and sim.caching
    assert sim.swa.window == 127 and sim.swa.page == 1
    return sim


def test_match_keeps_the_last_tombstone_free_window_by_hand() -> None:
    """``_match_prefix_helper`` (0.5.9:841-870), window 4, page 1, the path's pages p0..p9:
    - no tombstone: the count starts at infinity, all 10 pages hit;
    - p6, p7 tombstoned: at p6 the count is infinite (>= 4): best = 6; it restarts at 0, p8
      and p9 bring it to 2 < 4: the hit is 6;
    - p2 tombstoned only: best = 2 at p2, then p3..p9 count 7 >= 4: all 10 hit;
    - p2 and p8: best 2 at p2; at p8 the count is 5 (p3..p7) >= 4: best = 8; p9 counts 1: 8;
    - p2 and p5: best 2; at p5 the count is 2 < 4 (no update); p6..p9 count 4: all 10;
    - p2 and p4 and p9: best 2; at p4 count 1; at p9 count 4 (p5..p8): best 9; ends 0: 9;
    - p0 tombstoned and p5: at p0 best 0; at p5 the count is 4 (p1..p4): best 5; p6..p9: 4: 10.
    Page 2 (window 4 = two pages): pages q0..q4, q3 tombstoned: best 3 at q3, q4 counts 2
    tokens < 4: 3 pages."""
    keys = [f"p{i}" for i in range(10)]
    for tombs, hit in (((), 10), ((6, 7), 6), ((2,), 10), ((2, 8), 8), ((2, 5), 10),
                       ((2, 4, 9), 9), ((0, 5), 10)):
        assert swa_hit_pages(keys, {f"p{i}" for i in tombs}, 4, 1) == hit, tombs
    assert swa_hit_pages(keys[:5], {"p3"}, 4, 2) == 3


def _sglang_match(tomb: list[bool], window: int, page: int) -> int:
    """SGLang 0.5.9's walk (_match_prefix_helper :841-870), one node a page, as written."""
    since: float = float("inf")
    best = 0
    for j, dead in enumerate(tomb):
        if dead:
            if since >= window:
                best = j
            since = 0
        else:
            since += page
    return len(tomb) if since >= window else best


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), max_size=40), st.integers(1, 50), st.sampled_from([1, 16]))
def test_a_hit_never_exceeds_the_full_match_and_ends_on_a_kept_window(
        tomb: list[bool], window: int, page: int) -> None:
    """Whatever the tombstones: the hit is at most the full-attention match, all of it when
    there is no tombstone, and it ends on a kept page, either on a path with no tombstone from
    the root or after >= window tombstone-free tokens; and it is what SGLang's forward walk
    gives (kvplan reads the match from its end, which stops early)."""
    keys = list(range(len(tomb)))
    dead = {k for k, t in zip(keys, tomb, strict=True) if t}
    hit = swa_hit_pages(keys, dead, window, page)
    assert hit == _sglang_match(tomb, window, page)  # read from the end, the same
    assert 0 <= hit <= len(keys)
    if not dead:
        assert hit == len(keys)
    if hit:
        free_run = 0
        for k in reversed(keys[:hit]):
            if k in dead:
                break
            free_run += page
        assert free_run == hit * page or free_run >= window
        assert keys[hit - 1] not in dead


def _assert_hand_trace_hits(sim: Any, tmp_path: Path) -> None:
    """The derivation below: 1,800 of 3,050 tokens hit and 202 tombstoned with the
    sliding-window pool cut to 1,051 tokens; 1,900 and none with the pool estimate sizes."""
    assert sim.swa is not None
    cut = simulate(replace(sim, swa=replace(sim.swa, tokens=1_051)), three_requests(tmp_path))
    assert cut.metrics.prefix_hit_rate == 1_800 / 3_050
    assert cut.metrics.swa_tombstoned_tokens == 202
    whole = simulate(sim, three_requests(tmp_path))
    assert whole.metrics.prefix_hit_rate == 1_900 / 3_050
    assert whole.metrics.swa_tombstoned_tokens == 0


def test_a_prefix_whose_window_was_evicted_hits_up_to_its_last_kept_window_by_hand(
        tmp_path: Path) -> None:
    """SGLang 0.5.9, gpt-oss-20b (window 127, page 1), the sliding-window pool cut to 1,051
    tokens (the full pool's 24,272 never evict), tests/sglang_radix.py's TRACE (A, D, C; s1:
    blocks 1 - 10):
    - A: no hit; its prompt enters the tree (s1[0, 1,000)), then at its end its one decoded
      token (page 1,000, its own): 1,001 unlocked pages in the SWA LRU, root first.
    - D: full match s1[0, 900) (no tombstone: the count is infinite): hit 900. Its match
      refreshes s1[0, 900); inc_lock_ref locks the node [0, 900) whole (the match split it
      there; 900 >= 127): locked 900, the LRU holds s1[900, 1,000) and A's page (101). D's
      100 tokens find 1,051 - 900 - 101 = 50 free: evict_from_tree_cache takes 50 from the
      LRU's front, s1[900, 950), tombstoned (inner pages: _tombstone_internal_node).
    - D's decode: the tree takes D[900, 1,000); the lock walks back over it and over [0, 900)
      (no node ends inside): D's path locked whole; its token finds none free: s1[950] goes.
      At its end its page 1,000 joins the LRU, then its path, unlocked: s1[951, 1,000), A's
      page, D's page, s1[0, 900), D[900, 1,000).
    - C: full match s1[0, 1,000) (the full pool kept it all). The walk: s1[0, 900) counts 900;
      at s1[900], a tombstone, 900 >= 127: best = 900, the count restarts; s1[951, 1,000)
      follows (49 < 127): the hit stays 900. The lock takes [0, 900) before the check
      (add_one_req 0.5.9:750-753): 1,051 - 900 = 151 free for C's 150, all from the LRU's front
      (s1[951, 1,000), A's page, D's page, D[900, 999)); its decode's token takes the last
      unlocked one, D[999] (the tree took C's [900, 1,050) and locked it; [0, 900) went back
      to the LRU behind D[999]). Tombstoned: 50 + 1 + 150 + 1 = 202 tokens.
    Hits 0 + 900 + 900 = 1,800 of 1,000 + 1,000 + 1,050 = 3,050 queried. With the
    sliding-window pool as estimate sizes it (19,417: no eviction) C hits all 1,000: 1,900 /
    3,050, the full-attention radix cache's."""
    _assert_hand_trace_hits(_gpt_oss_sim(), tmp_path)


def test_0_5_11_hits_as_0_5_9_on_the_hand_trace(tmp_path: Path) -> None:
    """SGLang 0.5.11 (its tree's rules 0.5.9's, kvplan.analysis.simulate.sglang_pools
    SWA_HITS; the same pools, 24,272 and 19,417 tokens): that trace gives the same hits
    and tombstones, its decoded tokens (one a request) too few for either release's
    maybe_evict_swa to free any: 1,800 and 202 with the sliding-window pool cut to 1,051,
    1,900 and 0 as estimate sizes it."""
    sim = _gpt_oss_sim("0.5.11")
    assert sim.swa is not None and type(sim.swa.rule).__name__ == "EveryIntervalDecodes"
    _assert_hand_trace_hits(sim, tmp_path)


# Draws of shared_prefix_requests: a user segment of 1 - 400 tokens each.
_DRAWS = st.lists(st.tuples(st.integers(0, 2), st.integers(100, 1_500), st.integers(1, 400),
                            st.integers(1, 200)), min_size=2, max_size=24)


@settings(max_examples=10, deadline=None)
@given(_DRAWS)
def test_a_window_as_long_as_the_context_hits_as_the_full_attention_radix_cache(
        draws: list[tuple[int, int, int, int]]) -> None:
    """With the window >= every context and the sliding-window pool as large as the full one,
    a running request locks its whole path and its sliding-layer KV never outgrows its full
    KV: nothing is tombstoned and every hit is the full-attention match; the run is the plain
    token pool's (SGLang's radix cache, no SWA pool) to the hit and to the TTFT."""
    sim = _gpt_oss_sim()
    assert sim.swa is not None
    long = replace(sim, swa=replace(sim.swa, window=10**6, tokens=sim.plan.token_capacity))
    plain = replace(sim, swa=None)
    a = simulate(long, shared_prefix_requests(draws), num_blocks=3_001)
    b = simulate(plain, shared_prefix_requests(draws), num_blocks=3_001)
    assert a.metrics.prefix_hit_rate == b.metrics.prefix_hit_rate
    assert a.metrics.ttft_ms == b.metrics.ttft_ms


@settings(max_examples=10, deadline=None)
@given(_DRAWS, st.integers(2_500, 6_000))
def test_every_hit_is_at_most_the_full_pools_match(draws: list[tuple[int, int, int, int]],
                                                  swa_tokens: int) -> None:
    """Under sliding-window pressure (the pool cut to `swa_tokens`), each match keeps at most
    what the full pool matched (per match, recorded at each call: two runs' schedules differ,
    so their hit rates are not compared)."""
    sim = _gpt_oss_sim()
    assert sim.swa is not None
    seen: list[tuple[int, int]] = []
    with recorded_matches(SwaRadixWindow, lambda hit, kept: seen.append((len(kept), len(hit)))):
        run = simulate(replace(sim, swa=replace(sim.swa, tokens=swa_tokens)),
                       shared_prefix_requests(draws))
    assert seen and all(kept <= full for kept, full in seen)
    assert run.metrics.swa_usage is not None and run.metrics.swa_usage["max"] <= 1


def test_hits_are_simulated_for_the_releases_read() -> None:
    """swa_radix_cache.py's match, eviction, insertion and lock walk are 0.5.9's at 0.5.8 and
    0.5.10 (return types aside) and 0.5.11 (RadixKey's methods; an insert case its eviction never
    reaches); 0.5.6 - 0.5.7 and 0.5.12 on differ, not read: no hits."""
    for v in ("0.5.8", "0.5.8.post1", "0.5.9", "0.5.10", "0.5.11"):
        assert swa_hits(v)
    for v in ("0.5.6", "0.5.7", "0.5.12", "0.5.23", None):
        assert not swa_hits(v)
