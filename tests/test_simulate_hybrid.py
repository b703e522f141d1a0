"""`kvplan simulate`: prefix caching for hybrid models (issue 30, item 2), as vLLM 0.32's
hybrid coordinator does it (kvplan.analysis.simulate.hybrid_pool): sliding blocks freed as
decoding passes the window, hits at the common length of every group, the shared-prefix
junction, recurrent states at block boundaries only; a hypothesis property over random streams.

Numbers by hand from real configs: Gemma-3-27B (google/gemma-3-27b-it config.json:
sliding_window 1024; vLLM block 16, one full and five sliding groups) and Granite-4.0-H-Small
(ibm-granite/granite-4.0-h-small config.json: Mamba2 layers; vLLM 0.32 raises the attention
block to the state page, 528 tokens, and keeps 3 state pages per request in mode 'align':
`kvplan simulate` shows these groups, tests below read them from the setup).

The hits and junctions below were then checked against vLLM 0.32's own KVCacheManager on the same
groups and prompts (tests/oracle/vllm_hybrid_caching.py, opt-in: its printed output is in its
docstring, equal to the numbers here)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.hybrid_pool import HybridPool
from kvplan.analysis.simulate.kv_pool import GroupRule
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.sources.resolve import load_model

SLIDING = GroupRule(kind="sliding", block_size=16, window=1024, admission_cap=10_000)
FULL16 = GroupRule(kind="full", block_size=16)
STATE = GroupRule(kind="state", block_size=528, state_pages=3)
FULL528 = GroupRule(kind="full", block_size=528)


def _req(rid: int, prompt: int, output: int, shared: tuple[tuple[str, int], ...] = (),
         groups: int = 2) -> SimRequest:
    return SimRequest(rid, RequestSpec(arrival_s=0.0, prompt_len=prompt, output_len=output,
                                       segments=shared), 0.0, groups)


def _serve(pool: HybridPool, req: SimRequest, *, decodes: int = 1) -> int:
    """Admit `req` (its hit, its whole prompt in one chunk), then `decodes` decode steps, as
    the scheduler drives the pool; returns the hit's tokens."""
    hit = pool.find_hit(req)
    assert pool.allocate(req, req.prompt_len - hit.tokens, hit=hit, admission=True)
    req.num_computed = req.prompt_len
    for _ in range(decodes):
        req.num_output += 1
        assert pool.allocate(req, 1)
        req.num_computed += 1
    return hit.tokens


def test_gemma3_sliding_blocks_freed_as_decoding_passes_the_window() -> None:
    pool = HybridPool(1000, (SLIDING, FULL16))
    a = _req(0, 1100, 50)
    hit = pool.find_hit(a)
    assert hit.tokens == 0
    assert pool.allocate(a, 1100, hit=hit, admission=True)
    # cdiv(1100, 16) = 69 blocks in each group.
    assert pool.num_free == 999 - 2 * 69
    a.num_computed = 1100
    a.num_output = 1
    assert pool.allocate(a, 1)  # slots 1101: still 69 blocks
    # get_num_skipped_tokens(1100) = 1100 - 1024 + 1 = 77 tokens: 4 whole blocks back. Blocks
    # 0..3 lie before the replay boundary's window ((1100 - 1) // 16 = 68; blocks 68 - 64 = 4
    # to 67 are hashed, cdiv(1023, 16) = 64), so they are uncached: front of the free queue.
    assert pool.num_free == 999 - 2 * 69 + 4
    assert len(pool.cached_free) == 0
    for _ in range(4):  # computed 1101..1104
        a.num_computed += 1
        a.num_output += 1
        assert pool.allocate(a, 1)
    # computed 1104: skipped (1104 - 1023) // 16 = 5 blocks; slots 1105 need 70 blocks in
    # each group (one more each). Block 4 is hashed: it waits in the cached part of the queue.
    assert pool.num_free == 999 - 2 * 70 + 5
    assert len(pool.cached_free) == 1
    assert pool.held(a) == 70 + 70 - 5
    pool.free(a)
    assert pool.num_free == 999


def test_gemma3_shared_prefix_hit_the_first_sharer_pays() -> None:
    pool = HybridPool(2000, (SLIDING, FULL16))
    prefix = (("sys", 800),)
    a, b, c = (_req(i, n, 4, prefix) for i, n in enumerate((1100, 1300, 900)))
    assert _serve(pool, a) == 0
    pool.free(a)
    # B: its full-attention hit is the 800 // 16 = 50 prefix blocks A hashed; its sliding
    # group needs a run of 64 cached blocks (or a run from block 0): A hashed sliding blocks
    # 4..67 only (its replay boundary), blocks 0..3 are not cached, so 4..49 (46) fall short
    # and the common hit is 0. B records the junction at 800 tokens.
    hit = pool.find_hit(b)
    assert (hit.tokens, hit.junction) == (0, 800)
    assert _serve(pool, b) == 0
    assert b.hybrid is not None and b.hybrid.junction == 800
    pool.free(b)
    # B hashed its sliding blocks 50 - 64 .. 49, i.e. 0..49, at its junction: C hits all 800.
    assert _serve(pool, c) == 800


def test_gemma3_resend_hits_the_replay_boundary() -> None:
    pool = HybridPool(2000, (SLIDING, FULL16))
    a, again = _req(0, 2100, 4, (("doc", 2100),)), _req(1, 2100, 4, (("doc", 2100),))
    _serve(pool, a)
    pool.free(a)
    # The same prompt again: at most 2099 tokens, 131 blocks; A hashed sliding blocks
    # 131 - 64 = 67 .. 130, the run of 64 ending at block 131: the hit is 131 x 16.
    assert _serve(pool, again) == 131 * 16


def test_granite_states_hit_at_block_boundaries_only() -> None:
    pool = HybridPool(100, (STATE, FULL528))
    prefix = (("sys", 1100),)
    # A's replay boundary: (1200 - 1) // 528 x 528 = 1056, inside the prefix: its state there
    # is hashed like any request's state after the same 1056 tokens.
    a, b = _req(0, 1200, 4, prefix), _req(1, 1500, 4, prefix)
    assert _serve(pool, a) == 0
    pool.free(a)
    assert _serve(pool, b) == 1056  # 2 blocks of 528, not the 1100 tokens shared
    pool.free(b)
    # A replay boundary past the prefix (1700 - 1) // 528 x 528 = 1584 gives no state a
    # sibling can use: the next sharer gets the full-attention blocks' 1056 tokens in no
    # group but full attention, so the common hit is 0, and it records the junction.
    pool2 = HybridPool(100, (STATE, FULL528))
    d, e, f = (_req(i, n, 4, prefix) for i, n in enumerate((1700, 1500, 1300)))
    assert _serve(pool2, d) == 0
    pool2.free(d)
    hit = pool2.find_hit(e)
    assert (hit.tokens, hit.junction) == (0, 1056)
    assert _serve(pool2, e) == 0
    pool2.free(e)
    assert _serve(pool2, f) == 1056
    # Each request holds 3 state pages and cdiv(slots, 528) attention blocks.
    assert pool2.held(f) == 3 + 3


def test_setup_turns_hybrid_caching_on_as_vllm_does() -> None:
    spec = load_model("gemma-3-27b")[0]
    sim, notes = setup(spec, estimate_inputs(spec, context=8192, gpu="H100-80GB"))
    assert sim.caching and any("hybrid coordinator" in n for n in notes)
    spec = load_model("granite-4.0-h-small")[0]
    sim, _ = setup(spec, estimate_inputs(spec, context=8192, gpu="H100-80GB"))
    assert sim.caching and {g.kind for g in sim.groups} == {"state", "full"}
    assert {g.block_size for g in sim.groups} == {528}
    assert {g.state_pages for g in sim.groups if g.kind == "state"} == {3}
    # vLLM 0.13 had no mamba cache mode 'align': recurrent groups take no part; asked for,
    # refused in one line (with the preset's architectures, presetarch68, by the architecture's
    # rule: 0.11.2 - 0.27 keep a state page per block in mamba cache mode 'all').
    old = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine_version="0.13")
    assert not setup(spec, old)[0].caching
    with pytest.raises(InputError, match="mamba cache mode"):
        setup(spec, estimate_inputs(spec, context=8192, gpu="H100-80GB",
                                    engine_version="0.13", prefix_caching=True))


def test_gemma3_shared_prefix_simulated_hit_rate() -> None:
    # 40 requests of 1,200 + 1,000 tokens sharing 1,200: hits of 1,200 // 16 x 16 = 1,200
    # tokens for every request but the first two (the second records the junction), served
    # one at a time (rate 0.5 /s: each ends before the next arrives).
    spec = load_model("gemma-3-27b")[0]
    sim, _ = setup(spec, estimate_inputs(spec, context=8192, gpu="H100-80GB"))
    reqs = [RequestSpec(arrival_s=2.0 * i, prompt_len=2200, output_len=8,
                        segments=(("sys", 1200),)) for i in range(40)]
    m = simulate(sim, reqs).metrics
    # Queries count each prompt at its first admission (2,200 tokens).
    assert m.prefix_hit_rate == pytest.approx(38 * 1200 / (40 * 2200))


class _Cost:
    full_attention_only = False

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return 0.01


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 90), st.integers(1, 12),
                          st.integers(0, 3)), min_size=1, max_size=25),
       st.sampled_from(["sliding", "state"]), st.integers(12, 80))
def test_hybrid_hits_within_shared_prefix_and_blocks_conserved(
        rows: list[tuple[int, int, int, int]], other: str, blocks: int) -> None:
    bs = 4
    rule = (GroupRule(kind="sliding", block_size=bs, window=9, admission_cap=3)
            if other == "sliding" else GroupRule(kind="state", block_size=bs, state_pages=2))
    pool = HybridPool(blocks, (rule, GroupRule(kind="full", block_size=bs)))
    seen: list[SimRequest] = []

    def conserved() -> None:
        refs: dict[int, int] = {}
        held: dict[int, list[object]] = {}
        for r in seen:
            for row in (r.hybrid.blocks if r.hybrid is not None else ()):
                for b in row:
                    if b is not None:
                        refs[id(b)] = refs.get(id(b), 0) + 1
                        held[id(b)] = b
        # Each held block's reference count is its holders; free + held = the pool.
        assert all(b[1] == refs[i] for i, b in held.items())
        assert pool.free_uncached + len(pool.cached_free) + len(refs) == pool.usable
        assert not set(refs) & set(pool.cached_free)

    find_hit, allocate, free = pool.find_hit, pool.allocate, pool.free

    def checked_find(req: SimRequest):  # type: ignore[no-untyped-def]
        hit = find_hit(req)
        if req not in seen:
            seen.append(req)
        shared = sum(n for _, n in req.segments)
        if req.preemptions == 0:
            assert hit.tokens <= shared and hit.tokens % bs == 0
        return hit

    def checked_allocate(*a, **k):  # type: ignore[no-untyped-def]
        conserved()
        ok = allocate(*a, **k)
        conserved()
        return ok

    def checked_free(req: SimRequest) -> None:
        free(req)
        conserved()

    pool.find_hit, pool.allocate, pool.free = (  # type: ignore[method-assign]
        checked_find, checked_allocate, checked_free)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=32,
                                          max_model_len=120), _Cost())
    specs = [RequestSpec(arrival_s=0.05 * i, prompt_len=p + 8 * key_len,
                         output_len=o, segments=((f"k{k}", 8 * key_len),) if key_len else ())
             for i, (k, p, o, key_len) in enumerate(rows)]
    try:
        state = sim.run(specs)
    except InputError:
        return  # a request that does not fit the pool alone: refused, as vLLM would
    assert len(state.finished) == len(specs)
    assert all(r.hybrid is None for r in state.finished)
    assert pool.num_free == pool.usable
