"""`kvplan simulate --engine trtllm` (issue 30): TensorRT-LLM's PyTorch-backend scheduler worked
by hand on small cases (kvplan.analysis.simulate.trtllm_scheduler, after the 1.2 line's
cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp, microBatchScheduler.cpp,
scheduledBlocksManager.cpp, kvCacheManager.cpp getRemainingBlocksToCompletion and
tensorrt_llm/_torch/pyexecutor/scheduler.py), hypothesis properties and the CLI."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest
from kvplan.analysis.simulate.trtllm_scheduler import (
    GUARANTEED_NO_EVICT,
    MAX_UTILIZATION,
    TrtllmSchedule,
    TrtllmSimulator,
)
from kvplan.analysis.simulate.workload import LengthDist, RequestSpec, synthetic
from kvplan.cli import app
from kvplan.engines.base import Engine, Scheduler
from kvplan.sources.resolve import load_model
from tests.test_simulate import SIMULATE_KEYS, _FixedCost  # 10 ms a step

runner = CliRunner()


def _engine(blocks: int, *, policy: str = GUARANTEED_NO_EVICT, tokens: int = 8192,
            batch: int = 2048, chunked: bool = False, overlap: bool = False,
            caching: bool = False, block_size: int = 32) -> TrtllmSimulator:
    # TensorRT-LLM's pool has no null block: KVPool keeps one, so it is given one more.
    pool = KVPool(blocks + 1, (GroupRule(kind="full", block_size=block_size),),
                  caching=caching)
    return TrtllmSimulator(
        pool, SchedulerConfig(max_num_seqs=batch, max_num_batched_tokens=tokens,
                              max_model_len=1 << 20, async_scheduling=overlap),
        _FixedCost(), TrtllmSchedule(max_batch_size=batch, max_num_tokens=tokens,
                                     chunked_prefill=chunked, policy=policy))


def _same(n: int, prompt: int, output: int) -> list[RequestSpec]:
    return [RequestSpec(arrival_s=0.0, prompt_len=prompt, output_len=output) for _ in range(n)]


def test_guaranteed_no_evict_holds_back_the_request_whose_whole_max_tokens_do_not_fit() -> None:
    # Each request: 100 prompt + 60 max new tokens = 160 tokens = cdiv(160, 32) = 5 blocks to
    # completion (getRemainingBlocksToCompletion). A pool of 12 blocks: r0 takes 5 (7 left),
    # r1 5 (2 left), r2's 5 > 2: held (the first that does not fit stops the rest). Step 1
    # (0-10 ms) runs r0's and r1's prompts (4 blocks each: cdiv(100, 32)); each then holds 4
    # and reserves 1 more, so 12 - 8 - 2 = 2 stay short of r2's 5 until both finish: their
    # 60th token ends step 60 (600 ms), r2's prompt runs in step 61 (first token 610 ms) and
    # its 60th token ends step 120 (1,200 ms). Nothing is ever evicted.
    state = _engine(12).run(_same(3, 100, 60), concurrency=3)
    done = {r.rid: r for r in state.finished}
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010, 0.010, 0.610])
    assert [done[i].finish_s for i in range(3)] == pytest.approx([0.600, 0.600, 1.200])
    assert state.preemptions == 0
    # 15 blocks hold all three reservations (3 x 5): r2 starts in step 1 with the others.
    roomy = _engine(15).run(_same(3, 100, 60), concurrency=3)
    assert [r.first_token_s for r in roomy.finished] == pytest.approx([0.010] * 3)


def test_max_utilization_admits_on_the_next_step_and_pauses_the_last_started() -> None:
    # The same 12 blocks under MAX_UTILIZATION: each request needs only its next step's
    # blocks (getNeededBlocksOneStep), 4 for a 100-token prompt: all three start in step 1
    # (12 blocks). The step that writes each one's 129th token needs its 5th block; the pool
    # is empty, so r2, the last started, is paused (its 4 blocks freed) and r0, r1 go on to
    # finish at 600 ms as alone; r2 is recomputed after.
    state = _engine(12, policy=MAX_UTILIZATION).run(_same(3, 100, 60), concurrency=3)
    done = {r.rid: r for r in state.finished}
    assert state.preemptions >= 1 and done[2].preemptions >= 1
    assert done[0].preemptions == done[1].preemptions == 0
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010] * 3)
    assert done[0].finish_s == pytest.approx(0.600)
    assert done[2].finish_s > done[0].finish_s


def test_a_step_takes_at_most_max_num_tokens_and_stops_at_the_first_prompt_past_it() -> None:
    # max_num_tokens 250: step 1 takes r0's and r1's 100-token prompts (200); r2's would make
    # 300 > 250, which stops the step (microBatchScheduler: `break`). Step 2: r0, r1 decode
    # (1 token each) and r2's prompt (102 <= 250): its first token at 20 ms.
    state = _engine(1000, tokens=250).run(_same(3, 100, 2), concurrency=3)
    done = {r.rid: r for r in state.finished}
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010, 0.010, 0.020])
    # max_batch_size 2: the same, by requests.
    state = _engine(1000, batch=2).run(_same(3, 10, 2), concurrency=3)
    done = {r.rid: r for r in state.finished}
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010, 0.010, 0.030])


def test_a_prompt_as_long_as_max_num_tokens_waits_for_the_generation_requests_to_drain() -> None:
    # MicroBatchScheduler::operator() (microBatchScheduler.cpp at 0a949d31) walks the capacity
    # scheduler's list, the generation requests first (GuaranteedNoEvictScheduler::impl,
    # capacityScheduler.cpp at 02a10fed), and `break`s at the first request of either kind
    # that would pass max_num_tokens: a request behind it is not looked at. The aggregated
    # set's 8,192-token prompts at the default max_num_tokens 8,192, at 100 / 100: r0, r1
    # 100-token prompts, r2 a 10-token one, 5 output tokens each, sent at 0, 10 ms a step.
    # Step 1 (0-10 ms): r0's prompt (100 = the budget); r1's would make 200: break. Steps 2-5:
    # r0 decodes (1 token), r1's prompt would make 101: break, and r2's 10 tokens, which
    # would fit (11), are not taken (a stop, not a skip). r0's 5th token ends step 5 (50 ms);
    # step 6: r1's prompt alone (r2's would make 110); step 7: r1 decodes and r2's prompt
    # (1 + 10 = 11): first tokens 10, 60, 70 ms.
    specs = [RequestSpec(arrival_s=0.0, prompt_len=n, output_len=5) for n in (100, 100, 10)]
    done = {r.rid: r for r in _engine(1000, tokens=100).run(specs, concurrency=3).finished}
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010, 0.060, 0.070])
    assert done[0].finish_s == pytest.approx(0.050)
    # One token more of budget (101): step 2 takes r0's token and r1's prompt (101), r2's
    # would make 111: break; step 3: r0, r1 decode (2) and r2's prompt (12): 10, 20, 30 ms.
    done = {r.rid: r for r in _engine(1000, tokens=101).run(specs, concurrency=3).finished}
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010, 0.020, 0.030])


def test_generation_requests_are_capped_by_max_num_tokens_too() -> None:
    # A generation request takes 1 token and the first that would pass max_num_tokens ends
    # the step, as a prompt does (microBatchScheduler.cpp, the generation branch: `break`).
    # Chunked prefill, unit 1 (tokens_per_block 1), budget 2, three 1-token prompts with 3
    # output tokens: step 1 chunks FIRST_COME_FIRST_SERVED r0 1, r1 1, r2 0 (no capacity
    # left). Steps 2-3: r0 and r1 decode (2 tokens, the budget), r2 gets no chunk. r0 and r1
    # end at step 3 (30 ms); r2's prompt runs in step 4: first token at 40 ms. With a budget
    # of 3 all three start in step 1.
    specs = _same(3, 1, 3)
    done = {r.rid: r for r in _engine(100, tokens=2, chunked=True, block_size=1)
            .run(specs, concurrency=3).finished}
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010, 0.010, 0.040])
    assert [done[i].finish_s for i in range(2)] == pytest.approx([0.030, 0.030])
    done = {r.rid: r for r in _engine(100, tokens=3, chunked=True, block_size=1)
            .run(specs, concurrency=3).finished}
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010] * 3)


def test_no_evict_hands_the_micro_batch_scheduler_the_generation_requests_first() -> None:
    # GuaranteedNoEvictScheduler::impl fills scheduledRequests with the requests in
    # generation (first pass), then the prompts that fit (second pass): r1, in generation,
    # comes before r0's prompt though r0 arrived first (a prompt mid-chunk, say).
    sim = _engine(100)
    r0 = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=50, output_len=4), 0.0, 1)
    r1 = SimRequest(1, RequestSpec(arrival_s=0.0, prompt_len=10, output_len=4), 0.0, 1)
    r1.num_output, r1.num_computed = 1, 10  # its prompt done, its first token out
    assert [r.rid for r in sim._no_evict([r0, r1])] == [1, 0]


def test_a_prompt_past_max_num_tokens_is_rejected_unless_chunked() -> None:
    # Refused at submission too (llmapi/llm.py LLM._check_arguments: the PyTorch backend
    # without chunked prefill raises where prompt + query tokens pass max_num_tokens).
    with pytest.raises(InputError, match="exceed max_num_tokens"):
        _engine(1000, tokens=64).run(_same(1, 100, 2), concurrency=1)
    # Chunked FIRST_COME_FIRST_SERVED, unit 32 (tokens_per_block): a budget of 50 cuts the
    # 100-token prompt to 32 a step (50 // 32 x 32): 32, 32, then the last 36 whole (they
    # fit the 50: not cut); its first token ends step 3 (30 ms).
    state = _engine(1000, tokens=50, chunked=True).run(_same(1, 100, 2), concurrency=1)
    assert state.finished[0].first_token_s == pytest.approx(0.030)
    # A budget of 64: 64, then 36 whole (20 ms).
    state = _engine(1000, tokens=64, chunked=True).run(_same(1, 100, 2), concurrency=1)
    assert state.finished[0].first_token_s == pytest.approx(0.020)


def test_overlap_scheduler_forms_the_next_step_before_this_one_ends() -> None:
    # r1 arrives at 5 ms, during step 1 (0-10 ms, r0's prompt). Without the overlap scheduler
    # step 2 (formed at 10 ms) takes it: first token at 20 ms. With it, step 2 was formed when
    # step 1 began (0 ms), so r1 waits for step 3: 30 ms.
    specs = [RequestSpec(arrival_s=0.0, prompt_len=10, output_len=5),
             RequestSpec(arrival_s=0.005, prompt_len=10, output_len=5)]
    for overlap, first in ((False, 0.020), (True, 0.030)):
        done = {r.rid: r for r in _engine(100, overlap=overlap).run(specs).finished}
        assert done[1].first_token_s == pytest.approx(first), overlap


def test_block_reuse_hits_full_cached_blocks_of_the_prompt() -> None:
    # Two 100-token prompts sharing their first 80 tokens, the second sent after the first
    # is done: the hit is the cached full blocks of the shared tokens, 80 // 32 = 2 blocks
    # = 64 tokens (partial reuse of the third block's 16 shared tokens is not simulated).
    seg = (("doc", 80),)
    specs = [RequestSpec(arrival_s=0.0, prompt_len=100, output_len=2, segments=seg),
             RequestSpec(arrival_s=1.0, prompt_len=100, output_len=2, segments=seg)]
    state = _engine(100, caching=True).run(specs)
    assert (state.prefix_queries, state.prefix_hits) == (200, 64)



def test_a_prompt_whose_first_new_block_another_is_writing_waits_a_step_to_reuse_it() -> None:
    # beneficialToSkip (capacityScheduler.cpp at 02a10fed, block reuse on): r0 and r1 share
    # their first 64 tokens (2 blocks of 32), r2 shares nothing; all three sent at 0, 100-token
    # prompts. Step 1: r0 is taken and contributes its first uncached full block (block 0,
    # findNewContextBlock); r1's first uncached block is the same: r1 is skipped (`continue`),
    # and r2 (its own block 0) is still taken: first tokens 10, 20, 10 ms. Step 2: r0's blocks
    # are cached; r1's first uncached block is its own third: it runs, hitting 64 tokens. The
    # hits are the same as without the skip (64 of 300 prompt tokens).
    seg = (("doc", 64),)
    specs = [RequestSpec(arrival_s=0.0, prompt_len=100, output_len=3, segments=seg),
             RequestSpec(arrival_s=0.0, prompt_len=100, output_len=3, segments=seg),
             RequestSpec(arrival_s=0.0, prompt_len=100, output_len=3)]
    for policy in (GUARANTEED_NO_EVICT, MAX_UTILIZATION):
        state = _engine(100, caching=True, policy=policy).run(specs, concurrency=3)
        done = {r.rid: r for r in state.finished}
        assert [done[i].first_token_s for i in range(3)] == pytest.approx(
            [0.010, 0.020, 0.010]), policy
        assert (state.prefix_queries, state.prefix_hits) == (300, 64)
    # Block reuse off: nothing to wait for, all three in step 1.
    done = {r.rid: r for r in _engine(100).run(specs, concurrency=3).finished}
    assert [done[i].first_token_s for i in range(3)] == pytest.approx([0.010] * 3)



def test_max_utilization_skips_a_new_prompt_on_the_retry_after_it_paused_a_request() -> None:
    # MaxUtilizationScheduler::operator() (capacityScheduler.cpp at 02a10fed) asks
    # beneficialToSkip at the top of each try, the retry after a pause included; a new
    # prompt's first uncached block went into the set at its first try, so the retry finds
    # it there and skips the prompt. 8 blocks of 32, block reuse on: x (a 100-token prompt
    # to recompute, 4 blocks: paused before, so it keeps its place ahead) and y (started, in
    # generation, 150 tokens: 5 blocks held). x's 4 > 3 free: y (the last started) is paused
    # and freed, then x is skipped: nothing fits this round. Block reuse off: x is retried
    # and taken.
    for caching, taken in ((True, []), (False, [0])):
        sim = _engine(8, policy=MAX_UTILIZATION, caching=caching)
        x = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=100, output_len=4), 0.0, 1)
        y = SimRequest(1, RequestSpec(arrival_s=0.0, prompt_len=150, output_len=4), 0.0, 1)
        assert sim.pool.allocate(y, 150)
        y.admitted, y.num_computed, y.num_output = True, 150, 1
        sim.running.append(y)
        sim.waiting.append(x)
        x.preemptions = sim.state.preemptions = 1
        assert sim.pool.num_free == 3
        assert [r.rid for r in sim._max_utilization([x, y])] == taken, caching
        assert y.preemptions == 1 and not y.admitted
    # Where such a round schedules nothing the executor loops again at once (schedule): x
    # and y are both new now; x (4 blocks) is taken, y (5 more) does not fit the 4 left.
    sim = _engine(8, policy=MAX_UTILIZATION, caching=True)
    x = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=100, output_len=4), 0.0, 1)
    y = SimRequest(1, RequestSpec(arrival_s=0.0, prompt_len=150, output_len=4), 0.0, 1)
    assert sim.pool.allocate(y, 150)
    y.admitted, y.num_computed, y.num_output = True, 150, 1
    sim.running.append(y)
    sim.waiting.append(x)
    x.preemptions = sim.state.preemptions = 1
    assert [(r.rid, n) for r, n in sim.schedule()] == [(0, 100)]
    assert sim.state.preemptions == 2 and y.preemptions == 1


_workloads = st.fixed_dictionaries({
    "n": st.integers(1, 25),
    "prompt": st.tuples(st.integers(1, 300), st.integers(0, 300)),
    "output": st.tuples(st.integers(1, 120), st.integers(0, 120)),
    "rate": st.one_of(st.none(), st.floats(0.5, 500)),
    "concurrency": st.one_of(st.none(), st.integers(1, 10)),
    "blocks": st.integers(0, 200),
    "tokens": st.integers(64, 2048),
    "batch": st.integers(1, 16),
    "chunked": st.booleans(),
    "caching": st.booleans(),
    "prefix": st.integers(0, 64),
    "overlap": st.booleans(),
    "seed": st.integers(0, 1000),
})


def _run(w: dict, policy: str, *, ample: bool = False):  # type: ignore[no-untyped-def,type-arg]
    lo, extra = w["prompt"]
    olo, oextra = w["output"]
    concurrency = w["concurrency"] if w["concurrency"] or w["rate"] else 4
    specs = list(synthetic(num_requests=w["n"],
                           input_len=LengthDist(kind="uniform", a=lo, b=lo + extra),
                           output_len=LengthDist(kind="uniform", a=olo, b=olo + oextra),
                           rate=w["rate"], prefix_len=w["prefix"], seed=w["seed"]))
    longest = max(-(-(s.prompt_len + s.output_len) // 16) for s in specs)
    blocks = 10_000 if ample else max(w["blocks"], longest)
    # Without chunking every (re)computed prompt must fit a step: under MAX_UTILIZATION a
    # paused request recomputes its prompt and output so far (the refusal is tested apart).
    tokens = (max(w["tokens"], max(s.prompt_len + s.output_len for s in specs))
              if not w["chunked"] else w["tokens"])
    sim = _engine(blocks, policy=policy, tokens=tokens, batch=w["batch"],
                  chunked=w["chunked"], overlap=w["overlap"], caching=w["caching"],
                  block_size=16)
    usage: list[float] = []
    record = sim._record

    def watched(start: float, seconds: float, tokens_: int, use: float | None = None) -> None:
        usage.append(sim.pool.num_free)
        record(start, seconds, tokens_, use)

    sim._record = watched  # type: ignore[method-assign]
    state = sim.run(specs, concurrency=concurrency)
    return specs, state, usage


@settings(max_examples=60, deadline=None)
@given(_workloads)
def test_properties(w: dict) -> None:  # type: ignore[type-arg]
    for policy in (GUARANTEED_NO_EVICT, MAX_UTILIZATION):
        specs, state, free = _run(w, policy)
        # Every request finishes with all its tokens; the pool never goes below empty.
        assert len(state.finished) == len(specs)
        assert all(r.num_output == r.output_len for r in state.finished)
        assert min(free) >= 0
        if policy == GUARANTEED_NO_EVICT:
            assert state.preemptions == 0  # nothing is ever evicted
    # With an ample pool (no reservation ever short) the policy does not matter.
    runs = [_run(w, p, ample=True)[1] for p in (GUARANTEED_NO_EVICT, MAX_UTILIZATION)]
    times = [sorted((r.rid, r.first_token_s, r.finish_s) for r in s.finished) for s in runs]
    assert times[0] == times[1]
    assert runs[1].preemptions == 0


# -- the engine set-up and the CLI --------------------------------------------------------

def test_engine_names_its_scheduler_and_setup_follows_the_defaults() -> None:
    assert Engine.trtllm.rules.scheduler is Scheduler.capacity_micro_batch
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine=Engine("trtllm"))
    sim, notes = setup(spec, inputs)
    assert sim.trtllm is not None
    # llm_args.py: max_batch_size 2048, max_num_tokens 8192, enable_chunked_prefill False,
    # GUARANTEED_NO_EVICT; enable_block_reuse True; the overlap scheduler on.
    assert (sim.trtllm.max_batch_size, sim.trtllm.max_num_tokens) == (2048, 8192)
    assert not sim.trtllm.chunked_prefill and sim.trtllm.policy == GUARANTEED_NO_EVICT
    assert sim.caching and sim.scheduler.async_scheduling
    # The pool is the plan's blocks (no null block: KVPool is given one more).
    assert sim.pool_blocks == sim.plan.num_blocks + 1
    assert "GUARANTEED_NO_EVICT" in notes[0]
    result = simulate(sim, synthetic(num_requests=20, input_len=LengthDist(kind="fixed", a=500),
                                     output_len=LengthDist(kind="fixed", a=20), rate=None,
                                     prefix_len=0, seed=0), concurrency=4)
    assert result.metrics.num_requests == 20


def test_cli_json_keys_as_vllm_and_bad_input_exit_2() -> None:
    base = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "8192",
            "--num-requests", "12", "--input-len", "1k", "--output-len", "16"]
    ok = runner.invoke(app, [*base, "--engine", "trtllm", "--concurrency", "4", "-f", "json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    assert SIMULATE_KEYS <= data.keys()
    assert data["num_requests"] == 12 and data["preemptions"] == 0
    for args, text in (
        (["--engine", "trtllm", "--rate", "1", "--engine-version", "0.21"], "1.0 - 1.3"),
        (["--engine", "trtllm", "--rate", "1", "--capacity-scheduler-policy", "lifo"],
         "--capacity-scheduler-policy"),
        (["--engine", "trtllm", "--rate", "1", "--input-len", "9000", "--max-model-len",
          "16k"], "exceed max_num_tokens"),
        (["--engine", "vllm", "--rate", "1", "--enable-chunked-prefill"],
         "--enable-chunked-prefill: a TensorRT-LLM option; --engine vllm does not read it"),
        (["--engine", "trtllm", "--rate", "1", "--frontend"], "--frontend"),
    ):
        result = runner.invoke(app, [*base, *args])
        assert result.exit_code == 2, (args, result.output)
        assert text in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert result.stdout == ""


def test_a_paused_request_whose_recompute_passes_the_budget_is_refused() -> None:
    # MAX_UTILIZATION, 9 blocks of 16, max_num_tokens 64, no chunking: three requests of 60
    # prompt + 30 output tokens. Each prompt (60 <= 64) runs alone in a step and takes 4 blocks;
    # two hold 8 of 9 blocks, the third waits. As they decode, a running request needs a 5th
    # block at token 65 (cdiv(65, 16) = 5) and only one is free: the last started is paused,
    # freeing its blocks, and must later recompute its prompt and the output it had (> 64
    # tokens), which no step can hold without chunking: refused, naming the tokens.
    sim = _engine(9, policy=MAX_UTILIZATION, tokens=64, block_size=16)
    with pytest.raises(InputError, match=r"tokens \(prompt and output, recomputed after a "
                                         r"pause\) exceed max_num_tokens \(64\)"):
        sim.run(_same(3, 60, 30), concurrency=None)
