"""simspeed65: the pools' one-pass paths for a running request (KVPool._grow / _running_need,
HybridPool.allocate's running branch) against the general paths they short-cut, by hand and on
drawn operation sequences; the evictions told to a radix tree once per allocation, in order."""

from __future__ import annotations

import random

from kvplan.analysis.simulate.hybrid_pool import HybridPool
from kvplan.analysis.simulate.kv_pool import OWN, GroupRule, KVPool
from kvplan.analysis.simulate.sim_types import SimRequest
from kvplan.analysis.simulate.workload import RequestSpec

FULL16 = GroupRule(kind="full", block_size=16)
SLIDING16 = GroupRule(kind="sliding", block_size=16, window=64, admission_cap=5)
STATE2 = GroupRule(kind="state", block_size=16, state_pages=2)


def _req(rid: int, prompt: int, out: int, groups: int, shared: int = 0) -> SimRequest:
    segments = (("sys", shared),) if shared else ()
    return SimRequest(rid, RequestSpec(arrival_s=0.0, prompt_len=prompt, output_len=out,
                                       segments=segments), 0.0, groups)


def test_running_need_by_hand() -> None:
    # full (16-token blocks) + state (2 pages): a request holding [2, 2] blocks at 31 computed.
    # 32 slots: cdiv(32, 16) = 2 held, the state held: 0. 33 slots: 3 blocks, 1 more.
    pool = KVPool(100, (FULL16, STATE2))
    r = _req(0, 40, 8, 2)
    assert pool.allocate(r, 31)  # new: cdiv(31, 16) = 2 blocks + 2 state pages
    assert r.alloc == [2, 2] and pool.free_uncached == 99 - 4
    r.num_computed = 31
    assert pool.blocks_needed(r, 32) == 0 and pool.blocks_needed(r, 33) == 1
    assert pool.allocate(r, 1) and r.alloc == [2, 2] and pool.free_uncached == 95
    assert pool.allocate(r, 2) and r.alloc == [3, 2] and pool.free_uncached == 94
    # 94 free and 3 held: at most 97 blocks, 97 x 16 = 1,552 slots, 1,521 tokens past the 31
    # computed; 1,522 need 98 (95 more than the 94 free): refused, nothing taken.
    assert not pool.allocate(r, 1522) and r.alloc == [3, 2] and pool.free_uncached == 94
    assert pool.allocate(r, 1521) and r.alloc == [97, 2] and pool.free_uncached == 0


def test_sliding_release_by_hand() -> None:
    # Window 64, 16-token blocks: at 100 computed, max(0, 100 - 64 + 1) // 16 = 2 blocks are
    # wholly before the window and go back; at 110, 47 // 16 = 2 still; at 112, 49 // 16 = 3.
    # Blocks: 7 a group for 100 slots, 7 for 111 (cdiv(111, 16)), 8 for 113.
    pool = KVPool(100, (FULL16, SLIDING16))
    r = _req(0, 200, 8, 2)
    assert pool.allocate(r, 100)  # 7 blocks each group
    r.num_computed = 100
    assert pool.allocate(r, 1) and r.freed == [0, 2] and pool.free_uncached == 99 - 14 + 2
    r.num_computed = 110
    assert pool.allocate(r, 1) and r.freed == [0, 2] and r.alloc == [7, 7]
    r.num_computed = 112
    assert pool.allocate(r, 1) and r.freed == [0, 3] and r.alloc == [8, 8]
    assert pool.free_uncached == 99 - 16 + 3


def _kv_state(pool: KVPool, reqs: list[SimRequest]) -> tuple[object, ...]:
    def tag(b: list[object]) -> object:
        return ("own" if b[0] is OWN else b[0], b[1])
    return (pool.free_uncached, len(pool.cached_free), sorted(pool.by_hash),
            [(r.alloc, r.freed, r.cached_blocks, [tag(b) for b in r.blocks],
              [tag(b) for b in r.kept]) for r in reqs])


def _drive(make_pool, general, groups: int, seed: int) -> None:  # type: ignore[no-untyped-def]
    """The same drawn operations on two pools, one through `allocate`, the other always
    through `general` (the path the one-pass code short-cuts); every state equal after each."""
    rng = random.Random(seed)
    pools = (make_pool(), make_pool())
    told: tuple[list[object], list[object]] = ([], [])
    twins: list[tuple[SimRequest, SimRequest]] = []

    def teller(k: int):  # type: ignore[no-untyped-def]
        def tell(keys: list[object]) -> None:
            # A request's own page by its place (the twins' blocks are other objects).
            own = {id(b): (i, j) for i, t in enumerate(twins) for j, b in enumerate(t[k].kept)}
            told[k].append([own.get(key, key) for key in keys])  # type: ignore[call-overload]
        return tell

    for k, pool in enumerate(pools):
        if isinstance(pool, KVPool) and pool.caching:
            pool.on_evict = teller(k)
    running: list[int] = []
    for step in range(400):
        op = rng.random()
        if op < 0.25 or not running:
            prompt, out = rng.randint(1, 90), rng.randint(1, 40)
            shared = rng.choice((0, 0, 16, 32))
            pair = (_req(step, prompt, out, groups, min(shared, prompt)),
                    _req(step, prompt, out, groups, min(shared, prompt)))
            first = rng.randint(1, prompt)
            check = rng.random() < 0.5
            ok = []
            for pool, r in zip(pools, pair, strict=True):
                hit = pool.find_hit(r)
                r.num_computed = pool.hit_tokens(hit)
                n = max(1, min(first, r.num_tokens - r.num_computed))
                ok.append(pool.allocate(r, n, hit=hit, admission=check))
            assert ok[0] == ok[1]
            if ok[0]:
                for r in pair:
                    r.num_computed += n
                twins.append(pair)
                running.append(len(twins) - 1)
        elif op < 0.85:
            i = rng.choice(running)
            n = rng.randint(1, 20)
            a, b = twins[i]
            assert pools[0].allocate(a, n) == general(pools[1], b, n)
            if rng.random() < 0.7:
                a.num_computed += n
                b.num_computed += n
        else:
            i = running.pop(rng.randrange(len(running)))
            for pool, r in zip(pools, twins[i], strict=True):
                pool.free(r)
        if isinstance(pools[0], KVPool):
            reqs = [[t[k] for t in twins] for k in (0, 1)]
            assert _kv_state(pools[0], reqs[0]) == _kv_state(pools[1], reqs[1])
        else:
            assert pools[0].free_uncached == pools[1].free_uncached
            assert len(pools[0].cached_free) == len(pools[1].cached_free)
            for a, b in twins:
                assert (a.alloc, a.freed) == (b.alloc, b.freed)
                ha, hb = a.hybrid, b.hybrid
                assert (ha is None) == (hb is None)
                if ha is not None and hb is not None:
                    assert ha.cached == hb.cached
                    assert [[None if x is None else x[1] for x in row] for row in ha.blocks] == \
                        [[None if x is None else x[1] for x in row] for row in hb.blocks]
    assert told[0] == told[1]


def test_kv_pool_grow_equals_general_path() -> None:
    def general(pool: KVPool, r: SimRequest, n: int) -> bool:
        return pool._allocate(r, n, None, False)

    for seed in range(6):
        _drive(lambda: KVPool(60, (FULL16, SLIDING16, STATE2)), general, 3, seed)
        _drive(lambda: KVPool(40, (FULL16,), caching=True), general, 1, seed)
        _drive(lambda: KVPool(300, (GroupRule(kind="full", block_size=1),), caching=True),
               general, 1, seed)


def test_hybrid_pool_running_branch_equals_general_path() -> None:
    def general(pool: HybridPool, r: SimRequest, n: int) -> bool:
        return pool._allocate(r, n, None, False)

    for seed in range(6):
        _drive(lambda: HybridPool(80, (SLIDING16, FULL16)), general, 2, seed)
        _drive(lambda: HybridPool(80, (FULL16, SLIDING16)), general, 2, seed)


def test_evictions_told_once_in_order() -> None:
    # Page size 1, caching: A's three own pages are cached as computed and freed tail first
    # (b2, b1, b0 in the free queue); B's two new pages evict b2 then b1, told in one call.
    pool = KVPool(4, (GroupRule(kind="full", block_size=1),), caching=True)
    calls: list[list[object]] = []
    pool.on_evict = calls.append
    a = _req(0, 3, 1, 1)
    assert pool.allocate(a, 3)
    a.num_computed = 3
    b0, b1, b2 = a.blocks
    pool.free(a)
    assert pool.free_uncached == 0 and list(pool.cached_free.values()) == [b2, b1, b0]
    b = _req(1, 2, 1, 1)
    assert pool.allocate(b, 2)
    assert calls == [[id(b2), id(b1)]] and b2[0] is None and b0[0] is OWN
