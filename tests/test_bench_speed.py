"""benchspeed63's speed-ups give what the slower code gave (issue 30: the two heavy page
generators, byte-identical): each checked here against the code as written before it, by hand
and on drawn cases -- the percentiles sorted once (metrics._Sorted), the hybrid pool's per-step
calls over the groups that act (HybridPool._attention / _sliding), and the cost model's memos
(QuantConfig.scheme_for, bytes_per_param, routed_expert_formats, the eager op counts)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kvplan._util.memo import spec_cache
from kvplan.analysis.simulate.hybrid_pool import HybridPool, StateCache
from kvplan.analysis.simulate.kv_pool import GroupRule
from kvplan.analysis.simulate.metrics import summary_ms, weighted_percentile
from kvplan.analysis.simulate.scheduler import SimRequest
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.capacity.weights import loaded_formats
from kvplan.perf import moe_kernel, weight_bytes
from kvplan.perf.layout import Layout
from kvplan.perf.op_counts import eager_prefill_ops
from kvplan.sources.resolve import load_model


def _scan_percentile(values: list[float], weights: list[int], p: float) -> float:
    """metrics.weighted_percentile as written before benchspeed63: a sort and a scan each."""
    pairs = sorted(zip(values, weights, strict=True))
    n = sum(w for _, w in pairs)
    if n == 0:
        return math.nan
    pos = p / 100 * (n - 1)
    lo_index, frac = int(math.floor(pos)), pos - math.floor(pos)

    def at(index: int) -> float:
        seen = 0
        for v, w in pairs:
            seen += w
            if index < seen:
                return v
        return pairs[-1][0]

    lo = at(lo_index)
    return lo if frac == 0 else lo + (at(lo_index + 1) - lo) * frac


def test_percentiles_by_hand() -> None:
    # Values 1, 2, 3 weighted 1, 2, 1: the multiset 1, 2, 2, 3 (n = 4). p50 at position
    # 0.5 x 3 = 1.5, between 2 and 2: 2.0; p90 at 2.7: 2 + (3 - 2) x 0.7 = 2.7; p99 at 2.97.
    assert weighted_percentile([3.0, 1.0, 2.0], [1, 1, 2], 50) == 2.0
    assert math.isclose(weighted_percentile([3.0, 1.0, 2.0], [1, 1, 2], 90), 2.7)
    out = summary_ms([3.0, 1.0, 2.0], [1, 1, 2])
    # mean (3 + 1 + 4) / 4 = 2 s = 2,000 ms
    assert out["mean"] == 2000.0 and out["p50"] == 2000.0
    assert math.isclose(out["p99"] or 0.0, 2970.0)
    assert math.isnan(weighted_percentile([1.0, 2.0], [0, 0], 50))
    assert summary_ms([]) == {"mean": None, "p50": None, "p90": None, "p99": None}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1e-3, 7.0, 0.1, 0.3]),
                          st.integers(0, 5)), max_size=30),
       st.sampled_from([0, 1, 37.3, 50, 90, 99, 99.9, 100]))
def test_percentiles_equal_the_scan_and_numpy(pairs: list[tuple[float, int]], p: float
                                              ) -> None:
    values, weights = [v for v, _ in pairs], [w for _, w in pairs]
    got = weighted_percentile(values, weights, p)
    want = _scan_percentile(values, weights, p)
    assert repr(got) == repr(want)  # the same float (nan included), not only close
    if sum(weights):
        assert math.isclose(got, float(np.percentile(np.repeat(values, weights), p)),
                            rel_tol=1e-12, abs_tol=1e-15)


class _ScanPool(HybridPool):
    """HybridPool's per-step calls as written before benchspeed63: every group asked."""

    def blocks_needed(self, req, slots, *, hit=None, admission=False):  # type: ignore[no-untyped-def]
        hold = req.hybrid
        hit_tokens = self.hit_tokens(hit)
        skipped = [c.skipped(hit_tokens) for c in self.caches]
        need = sum(cache.to_allocate(
            slots, None if hold is None else len(hold.blocks[g]),
            len(hit.blocks[g]) if hit is not None and hit.tokens else 0, skipped[g], admission)
            for g, cache in enumerate(self.caches))
        return need + (self._evictable(hit, skipped) if hold is None else 0)

    def release_skipped(self, req):  # type: ignore[no-untyped-def]
        hold = req.hybrid
        for g, cache in enumerate(self.caches):
            skipped = min(cache.skipped(req.num_computed), len(hold.blocks[g]))
            row = hold.blocks[g]
            for j in range(skipped - 1, -1, -1):
                block = row[j]
                if block is None:
                    break
                row[j] = None
                self._release(block)
                req.freed[g] += 1

    def allocate(self, req, new_tokens, *, hit=None, admission=False):  # type: ignore[no-untyped-def]
        hit_tokens = self.hit_tokens(hit)
        if admission and self.blocks_needed(req, req.num_tokens, hit=hit,
                                             admission=True) > self.num_free:
            return False
        if req.hybrid is not None:
            self.release_skipped(req)
        slots = req.num_computed + hit_tokens + new_tokens
        if self.blocks_needed(req, slots, hit=hit) > self.num_free:
            return False
        hold = req.hybrid
        if hold is None:
            hold = req.hybrid = self._admit(req, hit)
        for g, cache in enumerate(self.caches):
            rows = cache.rows_for(slots)
            if rows is not None:
                row = hold.blocks[g]
                for _ in range(rows - len(row)):
                    row.append(self._take())
                req.alloc[g] = len(row)
        self._cache(req, hold, min(slots, req.num_tokens))
        return True

    def _cache(self, req, hold, tokens):  # type: ignore[no-untyped-def]
        bs = self.block_size
        full = tokens // bs
        boundaries = ((req.prompt_len - 1) // bs * bs,) + (
            (hold.junction // bs * bs,) if hold.junction else ())
        for g, cache in enumerate(self.caches):
            if isinstance(cache, StateCache):
                for b in boundaries:
                    if 0 < b <= tokens and b not in hold.states[g]:
                        hold.states[g].add(b)
                        self._checkpoint(req, g, b)
                continue
            row = hold.blocks[g]
            for j in range(hold.cached[g], min(full, len(row))):
                block = row[j]
                if block is not None and block[0] is None and cache.cached(j, boundaries):
                    self._register(block, (g, req.block_hash(j, bs)))
            hold.cached[g] = max(hold.cached[g], full)


def _pool_state(pool: HybridPool, reqs: list[SimRequest]) -> tuple[object, ...]:
    """Everything a later call can read: the free queue (keys in order), the hash map's
    holders, each request's rows (keys and references), counts and cached marks."""
    def block(b: object) -> object:
        return None if b is None else tuple(b)  # type: ignore[arg-type]
    return (pool.free_uncached, [block(b) for b in pool.cached_free.values()],
            sorted((k, len(v)) for k, v in pool.by_key.items()),
            [(r.alloc, r.freed, None if r.hybrid is None else (
                [[block(b) for b in row] for row in r.hybrid.blocks], r.hybrid.cached,
                r.hybrid.states, r.hybrid.junction)) for r in reqs])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 30), st.integers(0, 3),
                          st.booleans()), min_size=1, max_size=12),
       st.sampled_from(["sliding", "state", "both"]), st.integers(8, 90),
       st.sampled_from([None, 3]))
def test_hybrid_pool_steps_as_every_group_asked(
        rows: list[tuple[int, int, int, bool]], other: str, blocks: int, cap: int | None
        ) -> None:
    """The same stream (admit with the hit, decode steps, frees, in turn) through the pool and
    through `_ScanPool`: every answer and the whole state after each call the same."""
    bs = 4
    sliding = GroupRule(kind="sliding", block_size=bs, window=9, admission_cap=cap)
    state = GroupRule(kind="state", block_size=bs, state_pages=2)
    full = GroupRule(kind="full", block_size=bs)
    groups = {"sliding": (sliding, full), "state": (state, full),
              "both": (full, sliding, state)}[other]
    pools = (HybridPool(blocks, groups), _ScanPool(blocks, groups))
    streams: tuple[list[SimRequest], list[SimRequest]] = ([], [])
    for i, (prompt, output, key, free_at_end) in enumerate(rows):
        answers = []
        for pool, reqs in zip(pools, streams, strict=True):
            shared = ((f"k{key}", 8),) if key else ()
            req = SimRequest(i, RequestSpec(arrival_s=0.0, prompt_len=prompt + 8 * bool(key),
                                            output_len=output, segments=shared), 0.0,
                             len(groups))
            reqs.append(req)
            hit = pool.find_hit(req)
            got = [hit.tokens, pool.blocks_needed(req, req.num_tokens, hit=hit, admission=True)]
            ok = pool.allocate(req, req.prompt_len - hit.tokens, hit=hit, admission=True)
            got.append(ok)
            if ok:
                req.num_computed = req.prompt_len
                for _ in range(output):
                    req.num_output += 1
                    got.append(pool.blocks_needed(req, req.num_computed + 1))
                    if not pool.allocate(req, 1):
                        got.append("short")
                        break
                    req.num_computed += 1
                    got.append(pool.held(req))
                if free_at_end:
                    pool.free(req)
            answers.append((got, _pool_state(pool, reqs)))
        assert answers[0] == answers[1]


def test_cost_model_memos_answer_as_computed() -> None:
    """Each memo gives what its function computes (the memo skipped), and a caller's dicts are
    its own (mutating them changes no later answer)."""
    spec, _ = load_model("tests/data/configs/gpt-oss-120b.json")
    for tp in (1, 2, 8):
        first = weight_bytes.bytes_per_param(spec, tp)
        fresh = weight_bytes._bytes_per_param.__wrapped__(spec, tp, None)  # type: ignore[attr-defined]
        assert first == fresh
        first[0]["attention"] = -1.0
        assert weight_bytes.bytes_per_param(spec, tp) == fresh
    layers = range(spec.num_hidden_layers)
    got = moe_kernel.routed_expert_formats(spec, layers)
    assert got == moe_kernel._routed_expert_formats.__wrapped__(  # type: ignore[attr-defined]
        spec, tuple(layers), None)
    assert moe_kernel.routed_expert_formats(spec, list(layers)) == got
    lay = Layout(tp=2)
    assert eager_prefill_ops(spec, lay) == eager_prefill_ops.__wrapped__(spec, lay)  # type: ignore[attr-defined]
    quant = loaded_formats(spec, None)[0]
    assert quant is not None
    twin = type(quant)(**{f: getattr(quant, f) for f in quant.__dataclass_fields__})
    names = ["lm_head", "model.layers.0.mlp.experts", "model.layers.3.self_attn.qkv_proj",
             "model.layers.0.mlp.router", "model.embed_tokens"]
    for name in names * 2:
        assert quant.scheme_for(name) == twin._scheme_for(name)
    # The memo is no field: the config still equals (and hashes as) one never asked.
    assert quant == twin and hash(quant) == hash(twin) and repr(quant) == repr(twin)


def test_spec_cache_computes_a_spec_with_its_checkpoint() -> None:
    """A spec's checkpoint is left out of its equality (kvplan.model.spec): such a spec is
    computed each time, the others answered once per key."""
    calls: list[str] = []

    @spec_cache(maxsize=8)
    def weigh(spec: _Spec, tp: int) -> str:
        calls.append(spec.name)
        return f"{spec.name}/{spec.checkpoint}/{tp}"

    plain, measured = _Spec("a", None), _Spec("a", "headers")
    assert plain == measured  # as ModelSpec: the checkpoint compares equal
    assert [weigh(plain, 2), weigh(plain, 2)] == ["a/None/2"] * 2
    assert [weigh(measured, 2), weigh(measured, 2)] == ["a/headers/2"] * 2
    assert calls == ["a", "a", "a"]  # the plain spec once, the measured one each time


@dataclass(frozen=True)
class _Spec:
    name: str
    checkpoint: str | None = field(default=None, compare=False)
