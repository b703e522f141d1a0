"""`kvplan simulate` (issue 30): the mixed-step time against the roofline, the KV pool's rules,
preemption, prefix caching against a hand count, trace readers, scheduler invariants
(hypothesis) and the CLI's JSON contract."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.metrics import summary_ms
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest, Simulator
from kvplan.analysis.simulate.workload import (
    LengthDist,
    RequestSpec,
    from_trace,
    parse_length_dist,
    synthetic,
)
from kvplan.cli import app
from kvplan.engines.vllm.alloc import vllm_async_scheduling_default
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_cost import causal_pairs
from kvplan.perf.efficiency import DEFAULT_EFFICIENCY
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model
from kvplan.sources.traces import read_trace

TRACES = Path(__file__).parent / "data" / "traces"
runner = CliRunner()


def _llama_setup(**kw: object):  # type: ignore[no-untyped-def]
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", **kw)  # type: ignore[arg-type]
    return setup(spec, inputs)[0]


# -- the step time -----------------------------------------------------------------------------

def test_window_pairs_by_hand() -> None:
    # Positions 2..6; a token at position p attends p + 1 keys (itself and those before).
    assert causal_pairs(2, 5, None, None) == 3 + 4 + 5 + 6 + 7
    # Window 4: min(p + 1, 4) = 3, 4, 4, 4, 4.
    assert causal_pairs(2, 5, 4, None) == 19
    # Chunk 4: (p mod 4) + 1 = 3, 4, 1, 2, 3.
    assert causal_pairs(2, 5, None, 4) == 13
    assert causal_pairs(10, 3, 4, None) == 12
    assert causal_pairs(0, 0, None, None) == 0


def test_mixed_step_equals_roofline_for_pure_decode_and_one_prefill() -> None:
    """A batch of decodes at one context, and one prompt prefilled from 0, cost exactly what
    kvplan.perf.roofline.step_time charges (the mixed step composes its per-op costs)."""
    spec = load_model("llama-3.1-8b")[0]
    gpu = get_gpu("H100-80GB")
    eff = DEFAULT_EFFICIENCY.__class__(prefill_launch_s=0.0)  # vLLM: no eager launch time
    cost = MixedStepCost(spec, gpu, eff=eff)
    decode = step_time(spec, gpu, tokens=32, context=1000, requests=32, eff=eff)
    assert cost.seconds(decode_contexts=[1000] * 32, chunks=[]) == pytest.approx(
        decode.seconds, rel=1e-12)
    assert cost.seconds_from_sums(32, 32 * 1000, []) == cost.seconds(
        decode_contexts=[1000] * 32, chunks=[])
    assert cost.seconds_from_sums(32, 32 * 1000, [(100, 500)]) == cost.seconds(
        decode_contexts=[900, 1100] * 16, chunks=[(100, 500)])
    prefill = step_time(spec, gpu, tokens=2048, context=2048, requests=1, phase="prefill",
                        logits=1, eff=eff)
    assert cost.seconds(decode_contexts=[], chunks=[(0, 2048)]) == pytest.approx(
        prefill.seconds, rel=1e-12)


def test_mixed_step_grows_with_the_mix() -> None:
    spec = load_model("llama-3.1-8b")[0]
    cost = MixedStepCost(spec, get_gpu("H100-80GB"))
    alone = cost.seconds(decode_contexts=[4000] * 64, chunks=[])
    mixed = cost.seconds(decode_contexts=[4000] * 64, chunks=[(0, 2048)])
    later_chunk = cost.seconds(decode_contexts=[4000] * 64, chunks=[(6000, 2048)])
    assert alone < mixed < later_chunk


# -- the pool ------------------------------------------------------------------------------------

def test_sliding_window_skipped_blocks_by_hand() -> None:
    # vLLM get_num_skipped_tokens: computed - window + 1 = 5000 - 4096 + 1 = 905 tokens,
    # 905 // 16 = 56 whole blocks.
    rule = GroupRule(kind="sliding", block_size=16, window=4096)
    assert rule.skipped_blocks(5000) == 56
    assert rule.skipped_blocks(4096) == 0
    # Chunked local, chunk 8192: computed 10000 -> skipped 8192 tokens = 512 blocks.
    assert GroupRule(kind="chunked", block_size=16, chunk=8192).skipped_blocks(10000) == 512


def test_gemma2_groups_follow_estimate() -> None:
    """Gemma-2's sliding and full layers make two groups; the sliding one's admission cap is
    estimate's pages_per_request (window - 1 + in-flight tokens, in blocks, + 1)."""
    spec = load_model("gemma-2-9b")[0]
    sim = setup(spec, estimate_inputs(spec, context=8192, gpu="H100-80GB"))[0]
    kinds = sorted(g.kind for g in sim.groups)
    assert kinds == ["full", "sliding"]
    sliding = next(g for g in sim.groups if g.kind == "sliding")
    # window 4096, in flight 2 x 8192 (async scheduling): cdiv(4095 + 16384, 16) + 1 = 1281.
    assert sliding.window == 4096 and sliding.admission_cap == 1281
    # Prefix caching on, vLLM 0.32's default, over both groups (tests/test_simulate_hybrid.py).
    assert sim.caching


# -- preemption and prefix caching ----------------------------------------------------------

def _specs(n: int, prompt: int, output: int) -> list[RequestSpec]:
    return [RequestSpec(arrival_s=0.0, prompt_len=prompt, output_len=output) for _ in range(n)]


def test_exhausted_pool_preempts_and_a_larger_one_does_not() -> None:
    """64 requests of 1,000 + 500 tokens in flight need 64 x cdiv(1,499, 16) = 6,016 blocks: a
    2,001-block pool (2,000 usable) preempts, the H100's 28,378-block pool does not."""
    sim = _llama_setup(prefix_caching=False)
    assert sim.plan.num_blocks == 28_378
    small = simulate(sim, _specs(200, 1000, 500), concurrency=64, num_blocks=2001).metrics
    large = simulate(sim, _specs(200, 1000, 500), concurrency=64).metrics
    assert small.preemptions > 0
    assert large.preemptions == 0
    assert small.kv_usage["max"] == pytest.approx(1.0, abs=0.01)
    assert small.num_requests == large.num_requests == 200
    assert small.output_tokens == large.output_tokens == 200 * 500


def test_mooncake_prefix_hit_rate_equals_hand_count() -> None:
    """tests/data/traces/mooncake_sample.jsonl, 16-token blocks, each request done before the
    next arrives. Hits (tokens): [1,2] new 0; [1,2,3] 1,024 (ids 1, 2); [1,2] again 1,008 (all
    1,024 cached, but a lookup stops at num_tokens - 1 = 1,023 -> 63 blocks); [1,4] 512 (id 1);
    [5,6] 0; [5,6] with 530 tokens: 33 full blocks, all cached by the 600-token request -> 528."""
    sim = _llama_setup()
    assert sim.caching
    rows = read_trace(TRACES / "mooncake_sample.jsonl", "mooncake")
    m = simulate(sim, from_trace(rows)).metrics
    hits = 0 + 1024 + 1008 + 512 + 0 + 528
    queries = 1024 + 1536 + 1024 + 700 + 600 + 530
    assert m.prefix_hit_rate == hits / queries
    assert m.num_requests == 6


def test_shared_prefix_hits_and_no_caching() -> None:
    sim = _llama_setup()
    specs = list(synthetic(num_requests=20, input_len=LengthDist(kind="fixed", a=100),
                           output_len=LengthDist(kind="fixed", a=5), rate=0.5,
                           prefix_len=512, seed=3))
    m = simulate(sim, specs).metrics
    # The first request finds nothing; each later one finds the 512 shared tokens (32 blocks).
    assert m.prefix_hit_rate == 19 * 512 / (20 * 612)
    off = simulate(_llama_setup(prefix_caching=False), specs).metrics
    assert off.prefix_hit_rate is None


def test_preempted_request_recomputes_from_its_own_cached_blocks() -> None:
    """With prefix caching, a preempted request's blocks stay cached until evicted; its
    re-admission is not counted in the hit rate (first admissions only, as vLLM)."""
    sim = _llama_setup()
    m = simulate(sim, _specs(40, 1000, 300), concurrency=40, num_blocks=1500).metrics
    assert m.preemptions > 0
    assert m.num_requests == 40


def test_a_decodes_tail_block_is_cached_once_full() -> None:
    """Issue #30: allocate_slots caches the full blocks up to min(computed + new, num_tokens)
    (vllm/v1/core/kv_cache_manager.py, 0.32). A 20-token prompt (block 16) holds blocks 0 and
    a partial 1; decodes fill block 1 at 32 tokens, when it must be hashed (its own tokens:
    OWN), and a re-admission after a preemption hits both blocks."""
    pool = KVPool(10, (GroupRule(kind="full", block_size=16),), caching=True)
    req = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=20, output_len=20), 0.0, 1)
    assert pool.allocate(req, 20, admission=True)
    req.num_computed, req.num_output = 20, 1
    assert req.cached_blocks == 1 and req.blocks[1][0] is None
    while req.num_computed < 31:  # a decode each step: the 12th fills block 1
        assert pool.allocate(req, 1)
        req.num_computed += 1
        req.num_output += 1
    assert req.cached_blocks == 1 and req.blocks[1][0] is None  # 31 tokens: block 1 partial
    assert pool.allocate(req, 1)
    req.num_computed += 1
    req.num_output += 1
    assert req.cached_blocks == 2 and req.blocks[1][0] is not None
    pool.free(req)
    req.num_computed = 0
    assert len(pool.find_hit(req)) == 2  # 33 tokens: (33 - 1) // 16 blocks, both hit



def test_an_evicted_block_leaves_its_hash_when_another_holds_the_same() -> None:
    """Two requests computed the same 32-token prefix at once (neither was cached when it was
    admitted), so each of its 2 blocks has two holders, A's then B's (allocate caches as it
    allocates). B is freed before A, so B's blocks come first in the free queue (tail first:
    B1, B0, A1, A0); C's 96 own tokens take the 5 uncached blocks and evict B1. B1, not A1,
    must leave hash 1's holders (both are free [hash, 0] lists, equal but not the same): D,
    the same prefix again, then hits A0 and A1 (2 blocks, (33 - 1) // 16) and is admitted."""
    pool = KVPool(10, (GroupRule(kind="full", block_size=16),), caching=True)
    prefix = (("p", 32),)

    def req(rid: int, prompt: int, segments: tuple = ()) -> SimRequest:  # type: ignore[type-arg]
        return SimRequest(rid, RequestSpec(arrival_s=0.0, prompt_len=prompt, output_len=1,
                                           segments=segments), 0.0, 1)

    a, b = req(0, 33, prefix), req(1, 33, prefix)
    for r in (a, b):
        assert pool.allocate(r, 33, admission=True)
        r.num_computed = 33
    pool.free(b)
    pool.free(a)
    assert pool.allocate(req(2, 96), 96, admission=True)
    d = req(3, 33, prefix)
    hit = pool.find_hit(d)
    assert [h is blk for h, blk in zip(hit, a.kept[:2], strict=True)] == [True, True]
    assert pool.allocate(d, 1, hit=hit, admission=True)

# -- scheduler invariants ----------------------------------------------------------------------

class _LinearCost:
    """A step cost for property tests: 1 ms + 1 us per token + 1 ns per attended key."""

    full_attention_only = True

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        tokens = len(decode_contexts) + sum(n for _, n in chunks)
        keys = sum(decode_contexts) + sum(s * n + n * (n + 1) // 2 for s, n in chunks)
        return self._at(tokens, keys)

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return self.seconds(decode_contexts=[decode_keys] + [0] * (decodes - 1) if decodes
                            else [], chunks=chunks)

    @staticmethod
    def _at(tokens: int, keys: int) -> float:
        return 1e-3 + tokens * 1e-6 + keys * 1e-9


class _CheckedPool(KVPool):
    """Holds every allocation to the pool's size."""

    def allocate(self, req, new_tokens, **kw):  # type: ignore[no-untyped-def]
        ok = super().allocate(req, new_tokens, **kw)
        assert 0 <= self.num_free <= self.usable
        return ok


workloads = st.fixed_dictionaries({
    "n": st.integers(1, 25),
    "prompt": st.tuples(st.integers(1, 300), st.integers(0, 300)),
    "output": st.tuples(st.integers(1, 120), st.integers(0, 120)),
    "rate": st.one_of(st.none(), st.floats(0.5, 500)),
    "concurrency": st.one_of(st.none(), st.integers(1, 12)),
    "blocks": st.integers(30, 400),
    "budget": st.integers(4, 512),
    "seqs": st.integers(1, 16),
    "seed": st.integers(0, 1000),
    "caching": st.booleans(),
    "prefix": st.integers(0, 64),
    "async": st.booleans(),
})


def _run(w: dict, *, bulk: bool = True):  # type: ignore[no-untyped-def]
    lo, extra = w["prompt"]
    olo, oextra = w["output"]
    rate = w["rate"] if w["concurrency"] is None or w["rate"] is not None else None
    concurrency = w["concurrency"] if rate is None else w["concurrency"]
    if rate is None and concurrency is None:
        concurrency = 4
    specs = list(synthetic(num_requests=w["n"],
                           input_len=LengthDist(kind="uniform", a=lo, b=lo + extra),
                           output_len=LengthDist(kind="uniform", a=olo, b=olo + oextra),
                           rate=rate, prefix_len=w["prefix"], seed=w["seed"]))
    # The pool must hold one request of the longest length (vLLM refuses to start otherwise).
    longest = max(s.prompt_len + s.output_len for s in specs)
    blocks = max(w["blocks"], -(-longest // 16) + 2)
    pool = _CheckedPool(blocks, (GroupRule(kind="full", block_size=16),), caching=w["caching"])
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=w["seqs"],
                                          max_num_batched_tokens=w["budget"],
                                          max_model_len=longest,
                                          async_scheduling=w.get("async", False)),
                    _LinearCost(), timeline=True, bulk_decode=bulk)
    state = sim.run(specs, concurrency=concurrency)
    return specs, state, pool


@settings(max_examples=60, deadline=None)
@given(workloads)
def test_scheduler_invariants(w: dict) -> None:  # type: ignore[type-arg]
    specs, state, pool = _run(w)
    # Every request finishes, none before it was sent, tokens conserved.
    assert len(state.finished) == len(specs)
    assert sorted(r.rid for r in state.finished) == list(range(len(specs)))
    for r in state.finished:
        spec = specs[r.rid]
        assert r.sent_s >= spec.arrival_s
        assert r.sent_s <= r.first_token_s <= r.finish_s
        assert r.num_output == r.output_len == spec.output_len
        # The last sampled token is never fed back: KV for prompt + output - 1 tokens.
        assert r.num_computed == spec.prompt_len + spec.output_len - 1
    assert sum(w for w in state.itl_weights) == sum(s.output_len - 1 for s in specs)
    # KV blocks used never exceed the pool, and all come back.
    assert state.timeline is not None
    assert all(0.0 <= rec.kv_usage <= 1.0 for rec in state.timeline)
    assert all(rec.tokens <= w["budget"] for rec in state.timeline)
    assert all(rec.running <= w["seqs"] for rec in state.timeline)
    assert pool.num_free == pool.usable


# Issue #30: a request re-admitted after a preemption with prefix caching on. The exact path
# marked a decode's partial tail block as cached on its next allocation, so that block was
# never hashed once full and the re-admission's hit stopped short of it (the batch, hashing
# at free, found it): 48 vs 80 hit tokens for request 7 in the first; usage in the second.
# The third: a recompute chunk after a preemption ends one token short of the sequence; the
# request joins the batch without a token and its next gap must be timed from its last token.
@example({"n": 8, "prompt": (1, 106), "output": (69, 0), "rate": None, "concurrency": None,
          "blocks": 30, "budget": 7, "seqs": 4, "seed": 125, "caching": False, "prefix": 0})
@example({"n": 8, "prompt": (1, 74), "output": (32, 7), "rate": None, "concurrency": None,
          "blocks": 30, "budget": 64, "seqs": 4, "seed": 0, "caching": True, "prefix": 15})
@example({"n": 15, "prompt": (39, 0), "output": (44, 96), "rate": None, "concurrency": None,
          "blocks": 30, "budget": 81, "seqs": 3, "seed": 0, "caching": True, "prefix": 0})
@settings(max_examples=40, deadline=None)
@given(workloads)
def test_deterministic_and_bulk_decode_changes_nothing(w: dict) -> None:  # type: ignore[type-arg]
    _, a, _ = _run(w)
    _, b, _ = _run(w)
    _, c, _ = _run(w, bulk=False)
    key = [(r.rid, r.first_token_s, r.finish_s, r.preemptions) for r in a.finished]
    assert key == [(r.rid, r.first_token_s, r.finish_s, r.preemptions) for r in b.finished]
    assert key == [(r.rid, r.first_token_s, r.finish_s, r.preemptions) for r in c.finished]
    assert (a.steps, a.preemptions, a.usage_max) == (c.steps, c.preemptions, c.usage_max)
    assert a.usage_sum == pytest.approx(c.usage_sum, rel=1e-12)
    # Every inter-token gap the same (the batch times its members' gaps in bulk).
    itl_a, itl_c = summary_ms(a.itl_values, a.itl_weights), summary_ms(c.itl_values,
                                                                       c.itl_weights)
    for key in itl_a:
        if itl_c[key] is None:
            assert itl_a[key] is None
        else:
            assert itl_a[key] == pytest.approx(itl_c[key], rel=1e-9, abs=1e-12)
    assert sum(a.itl_weights) == sum(c.itl_weights)


class _FixedCost:
    """Every step takes 10 ms, whatever it holds."""

    full_attention_only = True

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return 0.010

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return 0.010


@pytest.mark.parametrize("bulk", [True, False])
def test_async_scheduling_sees_an_arrival_one_step_later(bulk: bool) -> None:
    """vLLM's async scheduling (vllm/v1/engine/core.py step_with_batch_queue, batch queue of
    2, vLLM 0.32): step k+1 is scheduled when step k is launched. Worked by hand with 10 ms
    steps: A (16 + 10 tokens) arrives at 0 and runs alone (prefill 0-10 ms, decodes from 10 ms);
    B arrives at 15 ms, inside the step 10-20 ms. Synchronous: the step scheduled at 20 ms
    takes B, its first token at 30 ms (TTFT 15 ms). Async: the step 20-30 ms was scheduled at
    10 ms, before B; the step scheduled at 20 ms (run 30-40 ms) takes B: TTFT 25 ms. A came to
    an idle engine: its prefill is the first step either way (TTFT 10 ms)."""
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=10),
             RequestSpec(arrival_s=0.015, prompt_len=16, output_len=10)]
    ttft = {}
    for mode in (False, True):
        pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
        sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                              max_model_len=64, async_scheduling=mode),
                        _FixedCost(), bulk_decode=bulk)
        done = {r.rid: r for r in sim.run(specs).finished}
        ttft[mode] = [round((done[i].first_token_s - done[i].sent_s) * 1e3, 9) for i in (0, 1)]
    assert ttft[False] == [10.0, 15.0]
    assert ttft[True] == [10.0, 25.0]


def test_async_scheduling_default_by_vllm_version() -> None:
    # vLLM PR 27614 (in 0.14.0): async scheduling on unless --no-async-scheduling.
    assert not vllm_async_scheduling_default("0.13.0")
    assert vllm_async_scheduling_default("0.14.0")
    assert vllm_async_scheduling_default("0.15.1")
    assert vllm_async_scheduling_default(None)
    assert _llama_setup(engine_version="0.13.0").scheduler.async_scheduling is False
    assert _llama_setup().scheduler.async_scheduling is True


def test_same_seed_same_metrics_with_the_cost_model() -> None:
    sim = _llama_setup()

    def once() -> dict:  # type: ignore[type-arg]
        specs = synthetic(num_requests=200, input_len=parse_length_dist("x", "uniform:50:3000"),
                          output_len=parse_length_dist("x", "lognormal:5:0.5"), rate=20.0,
                          arrival="gamma", burstiness=0.5, seed=7)
        return asdict(simulate(sim, specs).metrics)

    assert once() == once()


# -- workloads and traces -------------------------------------------------------------------

def test_length_dist_parsing() -> None:
    assert parse_length_dist("--x", "uniform:10:20") == LengthDist(kind="uniform", a=10, b=20)
    assert parse_length_dist("--x", "fixed:7").mean == 7
    for bad in ("uniform:20:10", "normal:5", "gauss:1:2", "lognormal:1:-1", "fixed:0",
                "uniform:a:b"):
        with pytest.raises(InputError, match="--x"):
            parse_length_dist("--x", bad)


def test_constant_arrivals_and_poisson_mean() -> None:
    fixed = LengthDist(kind="fixed", a=10)
    times = [s.arrival_s for s in synthetic(num_requests=5, input_len=fixed, output_len=fixed,
                                            rate=4.0, arrival="constant")]
    assert times == [0.0, 0.25, 0.5, 0.75, 1.0]
    poisson = [s.arrival_s for s in synthetic(num_requests=20_001, input_len=fixed,
                                              output_len=fixed, rate=10.0, seed=1)]
    assert poisson[-1] / 20_000 == pytest.approx(0.1, rel=0.03)


def test_trace_readers() -> None:
    burst = list(read_trace(TRACES / "burstgpt_sample.csv", "burstgpt"))
    # The 0-response-token row (a failure) is skipped; times from the first row's.
    assert [(r.arrival_s, r.prompt_len, r.output_len) for r in burst[:2]] == [
        (0.0, 472, 18), (113.0, 417, 165)]
    assert len(burst) == 6
    azure = list(read_trace(TRACES / "azure_sample.csv", "azure"))
    assert azure[1].arrival_s == pytest.approx(50.995169 - 46.68059, abs=1e-6)
    assert (azure[0].prompt_len, azure[0].output_len) == (374, 44)
    moon = list(read_trace(TRACES / "mooncake_sample.jsonl", "mooncake"))
    assert moon[1].arrival_s == 10.0
    # 1,536 tokens over three 512-token ids; 700 tokens over [1, 4]: 512 + 188.
    assert [n for _, n in moon[1].segments] == [512, 512, 512]
    assert [n for _, n in moon[3].segments] == [512, 188]
    share = list(read_trace(TRACES / "sharegpt_sample.json", "sharegpt",
                            count_tokens=lambda text: len(text.split())))
    assert [(r.prompt_len, r.output_len, r.arrival_s) for r in share] == [
        (4, 2, None), (3, 5, None)]
    with pytest.raises(InputError, match="tokenizer"):
        list(read_trace(TRACES / "sharegpt_sample.json", "sharegpt"))


def test_trace_errors_name_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"timestamp": 0, "input_length": 10, "output_length": 5}\n'
                   '{"timestamp": 5, "input_length": -3, "output_length": 5}\n')
    with pytest.raises(InputError, match=r"t.jsonl: line 2: input_length"):
        list(read_trace(bad, "mooncake"))
    csv_bad = tmp_path / "b.csv"
    csv_bad.write_text("Timestamp,Request tokens\n1,2\n")
    with pytest.raises(InputError, match="missing column.*Response tokens"):
        list(read_trace(csv_bad, "burstgpt"))


# -- the command -------------------------------------------------------------------------------

SIMULATE_KEYS = {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "request_throughput",
                 "output_throughput", "preemptions", "kv_usage", "prefix_hit_rate", "goodput"}


def test_cli_json_contract(tmp_path: Path) -> None:
    timeline = tmp_path / "steps.csv"
    result = runner.invoke(app, [
        "simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "4096",
        "--concurrency", "8", "--num-requests", "40", "--input-len", "256", "--output-len",
        "32", "--slo-ttft-ms", "200", "--slo-tpot-ms", "50", "--timeline", str(timeline),
        "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert SIMULATE_KEYS <= data.keys()
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        assert set(data[key]) == {"mean", "p50", "p90", "p99"}
    assert set(data["kv_usage"]) == {"mean", "max"}
    assert data["num_requests"] == 40 and data["output_tokens"] == 40 * 32
    assert 0 < data["goodput"] <= data["request_throughput"]
    rows = list(csv.DictReader(io.StringIO(timeline.read_text())))
    assert len(rows) == data["steps"]
    assert {"kv_usage", "running", "waiting"} <= rows[0].keys()


def test_cli_refusals() -> None:
    for args, text in (
        (["--engine", "trtllm", "--rate", "1", "--engine-version", "0.21"], "1.0 - 1.3"),
        # vLLM before 0.16 refuses async scheduling with PP (ppasync66; simulated from 0.16).
        (["--rate", "1", "--pp", "2", "--engine-version", "0.15.1", "--async-scheduling"],
         "--pp above 1"),
        ([], "--rate"),
        (["--rate", "1", "--trace-format", "azure"], "--trace"),
        (["--concurrency", "2", "--input-len", "9000"], "exceed the max model length"),
    ):
        result = runner.invoke(app, ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB",
                                     "--max-model-len", "8192", "--num-requests", "3", *args])
        assert result.exit_code == 2, (args, result.output)
        assert text in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert result.stdout == ""


@pytest.mark.parametrize(("model", "gpu", "tp"), [("llama-3.1-8b", "H100-80GB", 1),
                                                  ("deepseek-v3", "H200", 8)])
def test_large_steps_interpolate_the_roofline_closely(model: str, gpu: str, tp: int) -> None:
    """Beyond 512 tokens the token-count part is interpolated between multiples of 64 tokens
    (kvplan.perf.mixed_step.dense_seconds); against step_time at the token count itself it is
    within 0.1 % (measured: 1e-15 for Llama-3.1-8B, 1.5e-4 for DeepSeek-V3's MoE, whose
    touched-experts fraction is not linear)."""
    from kvplan.perf.layout import Layout

    cost = MixedStepCost(load_model(model)[0], get_gpu(gpu), layout=Layout(tp=tp))
    for tokens in (513, 700, 2345, 5000, 8191):
        exact = cost._dense_exact(tokens, 0) + cost.head_seconds(10)
        assert cost.dense_seconds(tokens, 10) == pytest.approx(exact, rel=1e-3)


def test_cuda_graph_padding() -> None:
    """vLLM pads a step of up to its largest capture size to the next one (config/vllm.py
    _set_cudagraph_sizes: 1, 2, 4, then every 8 to 248, every 16 to min(2 x max_num_seqs,
    512))."""
    from kvplan.engines.vllm.budget import vllm_cuda_graph_sizes

    assert vllm_cuda_graph_sizes(max_num_seqs=16, max_num_batched_tokens=8192) == (
        1, 2, 4, 8, 16, 24, 32)
    sizes = vllm_cuda_graph_sizes(max_num_seqs=1024, max_num_batched_tokens=8192)
    assert len(sizes) == 3 + 31 + 17 and sizes[-1] == 512
    spec = load_model("llama-3.1-8b")[0]
    gpu = get_gpu("H100-80GB")
    padded = MixedStepCost(spec, gpu, graph_sizes=sizes)
    plain = MixedStepCost(spec, gpu)
    assert padded.dense_seconds(37, 37) == plain.dense_seconds(40, 37)
    assert padded.dense_seconds(300, 5) == plain.dense_seconds(304, 5)
    assert padded.dense_seconds(600, 5) == plain.dense_seconds(600, 5)
    # At 300 tokens the 8B GEMMs are compute-bound: the 4 padding rows cost time.
    assert padded.dense_seconds(300, 5) > plain.dense_seconds(300, 5)


def test_fewest_gpus_for_a_rate_and_one_fewer_fails() -> None:
    """Llama-3.1-8B on H100s, 12 requests/s of 2,000 in / 200 out: the search returns the first
    layout whose p90 TTFT and TPOT meet the SLOs, and every layout of fewer GPUs was simulated
    and missed them."""
    from kvplan.analysis.simulate.rate_search import fewest_gpus

    spec = load_model("llama-3.1-8b")[0]
    fixed_in, fixed_out = LengthDist(kind="fixed", a=2000), LengthDist(kind="fixed", a=200)

    def stream():  # type: ignore[no-untyped-def]
        return synthetic(num_requests=300, input_len=fixed_in, output_len=fixed_out,
                         rate=12.0, seed=5)

    found = fewest_gpus(spec, stream, gpu="H100-80GB", context=4096, slo_ttft_ms=150,
                        slo_tpot_ms=15, tps=(1, 2), max_gpus=4)
    assert found.best is not None and found.best.meets
    assert found.best.gpus > 1
    fewer = [t for t in found.trials if t.gpus < found.best.gpus]
    assert fewer and not any(t.meets for t in fewer)
    assert found.best.metrics is not None and found.best.metrics.goodput is not None


def test_data_parallel_replicas_share_the_load() -> None:
    sim = _llama_setup(prefix_caching=False)
    specs = list(synthetic(num_requests=120, input_len=LengthDist(kind="fixed", a=3000),
                           output_len=LengthDist(kind="fixed", a=100), rate=40.0, seed=2))
    one = simulate(sim, specs).metrics
    from dataclasses import replace

    two = simulate(replace(sim, dp=2), specs).metrics
    assert one.num_requests == two.num_requests == 120
    assert two.ttft_ms["mean"] < one.ttft_ms["mean"]  # type: ignore[operator]
    assert two.tpot_ms["mean"] < one.tpot_ms["mean"]  # type: ignore[operator]


def test_cli_burstgpt_trace_and_rate_override() -> None:
    base = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "4096",
            "--trace", str(TRACES / "burstgpt_sample.csv"), "--trace-format", "burstgpt",
            "-f", "json"]
    replayed = runner.invoke(app, base)
    assert replayed.exit_code == 0, replayed.output
    data = json.loads(replayed.stdout)
    # Six requests (the failed row skipped) over the trace's 215 s.
    assert data["num_requests"] == 6 and data["duration_s"] > 215
    fast = runner.invoke(app, [*base, "--rate", "100", "--num-requests", "3"])
    assert fast.exit_code == 0, fast.output
    assert json.loads(fast.stdout)["num_requests"] == 3
    assert json.loads(fast.stdout)["duration_s"] < 5
