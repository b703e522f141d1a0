"""The mamba radix cache's prefix hits in `kvplan simulate --engine sglang` (issue 30):
kvplan.analysis.simulate.sglang_mamba_radix against SGLang 0.5.9 mem_cache/mamba_radix_cache.py
(``_match_prefix_helper`` :905-945, ``_match_post_processor`` :956-1028, ``cache_unfinished_req``
:556-671, ``cache_finished_req`` :464-554, ``evict_mamba`` :728-761, ``inc_lock_ref`` :788-814),
the default --mamba-scheduler-strategy no_buffer (server_args.py 0.5.9:874-877), page size 1."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.sglang_mamba_radix import MambaRadixTree
from kvplan.analysis.simulate.sglang_pools import mamba_hits
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from tests.sglang_radix import recorded_matches, shared_prefix_requests, three_requests

runner = CliRunner()


def _qwen3_next_sim(version: str = "0.5.9", **options: object):  # type: ignore[no-untyped-def]
    """Qwen3-Next-80B-A3B at TP 8 on H200, 40 GiB: 1,839,937 full-attention tokens, 2,106
    mamba slots, 702 running at most (tests/test_simulate_sglang_mamba.py derives them by hand
    at 0.5.6; 0.5.9 sizes them the same), page 1, chunked prefill 8,192 (the H200 default)."""
    spec = load_model("qwen3-next-80b-a3b")[0]
    inputs = estimate_inputs(spec, context=2064, gpu="H200", tp=8, kv_budget_gib=40,
                             engine=Engine("sglang"), engine_version=version, **options)
    sim, notes = setup(spec, inputs)
    assert sim.caching and sim.plan.block_size == 1
    return sim, notes


def _hits(run) -> int:  # type: ignore[no-untyped-def]
    return round(run.metrics.prefix_hit_rate * 3_050)


def test_a_hit_ends_on_a_node_holding_a_state_by_hand(tmp_path: Path) -> None:
    """SGLang 0.5.9, Qwen3-Next (page 1), tests/sglang_radix.py's TRACE (A, B, C); queried
    1,000 + 1,000 + 1,050 = 3,050 tokens. The full-attention radix cache would hit 0 + 900 +
    1,000 = 1,900.
    - Chunked prefill 8,192 (no prompt is cut): A's state enters the tree at its prompt's end,
      s1[0, 1,000) (cache_unfinished_req after the prefill), and at its end after its
      committed tokens (1,001: cache_finished_req hands its slot over). B's full match s1[0,
      900) splits A's node at 900, a node with no state (_split_node): no node on it holds
      one, best_value_len 0: hit 0. C's full match s1[0, 1,000) ends on A's prompt node,
      which holds a state: hit 1,000. Hits 1,000.
    - Chunks of 300: A's prompt is cut at 300, 600, 900 (its state forked at each chunk's end
      before the next, stash_chunked_request) and ends at 1,000: B hits 900, C 1,000: 1,900,
      the full-attention cache's.
    - Chunks of 400: A's states at 400, 800, 1,000: B's match of 900 is cut back to 800; C
      hits 1,000: 1,800.
    - 3 mamba slots (--max-mamba-cache-size 3: 3 // 3 = one running request, chunks 8,192):
      A's batch finds 3 free (alloc_req_slots wants 3 x 1); A ends with 2 states in the tree
      (A1000 then A1001, most recent last). B's batch finds 1 free < 3: evict_mamba takes the
      two least recently used unlocked states, A1000 and A1001; B1000 and B1001 enter. C's
      match (s1[0, 1,000)) has no state left: hit 0; its batch evicts B1000 and B1001. Hits
      0, 4 states evicted."""
    sim, notes = _qwen3_next_sim()
    assert "radix cache on," in notes[0] and len(notes) == 1
    assert sim.sglang is not None and sim.sglang.chunked_prefill_size == 8_192
    whole = simulate(sim, three_requests(tmp_path))
    assert _hits(whole) == 1_000
    assert whole.metrics.mamba_states_evicted == 0
    for chunk, hits in ((300, 1_900), (400, 1_800)):
        cut = replace(sim, sglang=replace(sim.sglang, chunked_prefill_size=chunk))
        assert _hits(simulate(cut, three_requests(tmp_path))) == hits, chunk
    few, _ = _qwen3_next_sim(max_mamba_cache_size=3)
    assert few.sglang is not None and few.sglang.max_running_requests == 1
    short = simulate(few, three_requests(tmp_path))
    assert short.metrics.prefix_hit_rate == 0.0
    assert short.metrics.mamba_states_evicted == 4


# Draws of shared_prefix_requests: a user segment of 0 - 3 tokens (none for some: a prompt
# that is all shared prefix ends where a later one can match).
_DRAWS = st.lists(st.tuples(st.integers(0, 2), st.integers(100, 1_500), st.integers(0, 3),
                            st.integers(1, 200)), min_size=2, max_size=24)


@settings(max_examples=10, deadline=None)
@given(_DRAWS, st.sampled_from([3, 12, 2_106]))
def test_every_hit_is_at_most_the_full_attention_match(
        draws: list[tuple[int, int, int, int]], slots: int) -> None:
    """Whatever the slots (3: one running request and two states; 2,106 as estimate sizes
    them), each match keeps at most what the full-attention pool matched, and ends on a page
    holding a state (per match, recorded at each call: runs' schedules differ)."""
    sim, _ = _qwen3_next_sim(max_mamba_cache_size=slots)
    seen: list[tuple[int, int, bool]] = []

    def record(hit: list[object], kept: list[object]) -> None:
        ends = not kept or any(kept[-1] is b for b in hit)
        seen.append((len(kept), len(hit), ends))

    with recorded_matches(MambaRadixTree, record):
        run = simulate(sim, shared_prefix_requests(draws))
    assert seen and all(kept <= full and ends for kept, full, ends in seen)
    assert run.metrics.mamba_slots_used is not None
    assert run.metrics.mamba_slots_used["max"] <= slots // 3


def _closed_form(draws: list[tuple[int, int, int, int]]) -> int:
    """The rule's hits with a state slot for every state and each request alone (it ends
    before the next comes, no prompt cut): a request hits the longest earlier state point
    that is a prefix of its prompt less one token. A request's state points are its prompt's
    end and its committed tokens' end; the latter and, with a user segment, the former lie
    in its own tokens, so only an all-shared prompt (sys key k, length n) leaves a point a
    later request of key k and a prompt longer than n can match: n."""
    points: dict[int, set[int]] = {}
    hits = 0
    for sys_key, shared, own, _ in draws:
        prompt = shared + own
        usable = [n for n in points.get(sys_key, ()) if n <= min(shared, prompt - 1)]
        hits += max(usable, default=0)
        if own == 0:
            points.setdefault(sys_key, set()).add(shared)
    return hits


# By hand: the first (all s0[0, 500)) leaves a point at 500; the second (s0[0, 800) and 2 of
# its own) hits it: 500; the third (s0[0, 500) and 1) hits it too (500 <= 501 - 1); the fifth
# (s0[0, 500) alone) may match 499 tokens at most: 0. Hits 1,000 (the full-attention cache's:
# 500 + 500 + 499 = 1,499).
HAND = [(0, 500, 0, 10), (0, 800, 2, 10), (0, 500, 1, 5), (1, 300, 0, 3), (0, 500, 0, 4)]


def test_the_closed_form_by_hand() -> None:
    assert _closed_form(HAND) == 1_000


@settings(max_examples=15, deadline=None)
@example(HAND)
@given(_DRAWS)
def test_with_slots_for_every_state_the_hits_are_the_rules_closed_form(
        draws: list[tuple[int, int, int, int]]) -> None:
    """Requests 30 s apart (each ends before the next: at most 1,503 + 200 tokens, a few
    seconds), 2,106 slots (never short: at most 2 x 24 states, one running request and 3
    kept free for a batch), no
    prompt cut (8,192 > 1,503): the hits are `_closed_form`'s, and at most the
    full-attention radix cache's on the same trace (the plain token pool, SGLang's
    RadixCache: every earlier prefix)."""
    sim, _ = _qwen3_next_sim()
    reqs = [replace(r, arrival_s=30.0 * i) for i, r in enumerate(shared_prefix_requests(draws))]
    run = simulate(sim, reqs)
    queried = sum(r.prompt_len for r in reqs)
    assert run.metrics.mamba_states_evicted == 0
    assert round((run.metrics.prefix_hit_rate or 0.0) * queried) == _closed_form(draws)
    full = simulate(replace(sim, sglang_pool=None), reqs)
    assert full.metrics.prefix_hit_rate is not None
    assert run.metrics.prefix_hit_rate <= full.metrics.prefix_hit_rate


def test_hits_are_simulated_for_the_releases_read_and_refused_elsewhere() -> None:
    """mamba_radix_cache.py's match, insertion, eviction and locks are 0.5.9's at 0.5.7 -
    0.5.12 (diffed function by function); 0.5.6 and 0.5.13 on are not read: the radix cache
    runs without hits, and --enable-prefix-caching is refused in one line naming what is
    simulated."""
    for v in ("0.5.7", "0.5.8", "0.5.8.post1", "0.5.9", "0.5.10", "0.5.11", "0.5.12"):
        assert mamba_hits(v)
    for v in ("0.5.6", "0.5.6.post2", "0.5.13", "0.5.23", None):
        assert not mamba_hits(v)
    args = ["simulate", "qwen3-next-80b-a3b", "--engine", "sglang", "--gpu", "H200", "--tp",
            "8", "--kv-budget-gib", "40", "--max-model-len", "2064", "--num-requests", "8",
            "--concurrency", "4", "--input-len", "256", "--output-len", "16"]
    refused = runner.invoke(app, [*args, "--engine-version", "0.5.13",
                                  "--enable-prefix-caching"])
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1
    assert "SGLang 0.5.13's mamba radix cache hits" in refused.stderr
    assert "0.5.7 - 0.5.12" in refused.stderr
    ok = runner.invoke(app, [*args, "--engine-version", "0.5.9", "--enable-prefix-caching",
                             "--format", "json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    assert data["prefix_hit_rate"] == 0.0  # random prompts share nothing
    assert data["mamba_states_evicted"] == 0
