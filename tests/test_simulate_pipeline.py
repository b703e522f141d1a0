"""`kvplan simulate --pp`: vLLM's pipeline stages and batch queue
(kvplan.analysis.simulate.pipeline, kvplan.engines.vllm.pipeline), checked against runs worked
by hand."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.pipeline import PipelineCost, PipelineSimulator, pipeline_async
from kvplan.analysis.simulate.sim_types import SchedulerConfig
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.vllm.engine_core import EngineCoreCost
from kvplan.engines.vllm.pipeline import (
    vllm_pp_drains_done,
    vllm_pp_partition,
    vllm_pp_send_bytes,
)
from kvplan.engines.vllm.pipeline_async import PipelineAsync, vllm_pp_async
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.sources.resolve import load_model

runner = CliRunner()


class _Const:
    """A stage that takes `s` seconds for any batch."""

    def __init__(self, s: float) -> None:
        self.s = s

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return self.s


def _pipeline(stages: tuple[float, ...], send_s: float, depth: int) -> PipelineCost:
    # send: the latency only (an infinite rate), tp 1.
    return PipelineCost(stages=tuple(_Const(s) for s in stages),  # type: ignore[misc]
                        depth=depth, hidden_size=1, tp=1, send_latency_s=send_s,
                        send_bytes_per_s=float("inf"), gather_latency_s=0.0,
                        gather_bytes_per_s=float("inf"))


def _run(pipe: PipelineCost, specs: list[RequestSpec], budget: int, blocks: int = 1000):
    pool = KVPool(blocks, (GroupRule(kind="full", block_size=16),), caching=False)
    # Admission on the first chunk (vLLM to 0.18.1) where the pool is small: preemptions.
    config = SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=budget,
                             max_model_len=4096, full_isl_admission=blocks >= 1000)
    sim = PipelineSimulator(pool, config, _Const(0.0), pipe)  # type: ignore[arg-type]
    return sim.run(specs)


def test_partition_follows_get_pp_indices() -> None:
    # layers // pp each, the remainder one a stage from the second-to-last backwards.
    assert vllm_pp_partition(32, 2) == (16, 16)
    assert vllm_pp_partition(10, 4) == (2, 3, 3, 2)  # 2 each, +1 on stages 2 and 1
    assert vllm_pp_partition(7, 3) == (2, 3, 2)  # 2 each, +1 on stage 1
    assert vllm_pp_partition(80, 3) == (27, 27, 26)  # 80 % 3 = 2: +1 on stages 1 and 0


def test_partition_refusals() -> None:
    with pytest.raises(InputError, match="VLLM_PP_LAYER_PARTITION"):
        vllm_pp_partition(10, 2, (4, 5))
    with pytest.raises(InputError, match="layers"):
        vllm_pp_partition(2, 4)


def test_send_bytes() -> None:
    # hidden_states + residual, bf16: 2 x 10 tokens x 4096 x 2 B.
    assert vllm_pp_send_bytes(10, 4096) == 163_840


def test_two_stages_steady_decode_by_hand() -> None:
    """PP 2, stages 3 ms and 5 ms, 1 ms send, a queue of 2, a budget of 4 tokens; two
    4-token prompts at t = 0, 5 tokens each. By hand (ms):
    A = req0's prompt at 0: stage 0 [0, 3], stage 1 [4, 9]. B = req1's prompt at 0 (the queue
    has room; req0's tokens are all in flight): stage 0 [3, 6], stage 1 [max(7, 9), 14].
    Queue full: wait for A (9): req0's first token. C = req0's decode at 9: [9, 12],
    [max(13, 14), 19]. Wait for B (14): req1's first token; D at 14: [14, 17], [max(18, 19),
    24]. Then each batch waits on stage 1 (5 ms a batch, two batches in the pipe): req0's
    tokens at 9, 19, 29, 39, 49, req1's at 14, 24, 34, 44, 54: TPOT 10 ms = 2 x 5 ms (the
    queue times the slowest stage, above the 9 ms a batch takes through the pipe)."""
    specs = [RequestSpec(arrival_s=0.0, prompt_len=4, output_len=5)] * 2
    state = _run(_pipeline((3e-3, 5e-3), 1e-3, depth=2), specs, budget=4)
    done = sorted(state.finished, key=lambda r: r.rid)
    assert [r.first_token_s for r in done] == pytest.approx([9e-3, 14e-3])
    assert [r.finish_s for r in done] == pytest.approx([49e-3, 54e-3])
    for r in done:
        assert (r.finish_s - r.first_token_s) / (r.output_len - 1) == pytest.approx(10e-3)
    # A queue of one (no pipelining): A [0, 9]; B = req0's decode (1) + req1's first 3 prompt
    # tokens at 9, [9, 18]; then both, 9 ms a batch: slower end to end.
    one = _run(_pipeline((3e-3, 5e-3), 1e-3, depth=1), specs, budget=4)
    assert max(r.finish_s for r in one.finished) > 54e-3


def test_synchronised_batch_takes_the_whole_pipe() -> None:
    """Requests that arrive together ride in one batch: the second batch slot stays empty
    and every token takes the whole pipe, 3 + 1 + 5 = 9 ms (vLLM schedules no request twice)."""
    specs = [RequestSpec(arrival_s=0.0, prompt_len=8, output_len=4)] * 3
    state = _run(_pipeline((3e-3, 5e-3), 1e-3, depth=2), specs, budget=256)
    for r in state.finished:
        assert r.first_token_s == pytest.approx(9e-3)
        assert r.finish_s == pytest.approx(9e-3 * 4)


@settings(max_examples=40, deadline=None)
@given(stages=st.lists(st.floats(1e-4, 1e-2), min_size=2, max_size=4),
       send=st.floats(0, 1e-3),
       reqs=st.lists(st.tuples(st.floats(0, 0.05), st.integers(1, 40), st.integers(1, 6)),
                     min_size=1, max_size=8),
       budget=st.integers(1, 64), blocks=st.sampled_from([4, 6, 1000]))
def test_pipe_bounds(stages: list[float], send: float, reqs: list[tuple[float, int, int]],
                     budget: int, blocks: int) -> None:
    """A request's first token comes no sooner than one pass through every stage and send
    after it arrives, and each later token no sooner than one pass after the one before (its
    decode is in no second batch while the first is in flight); with a pool small enough to
    preempt requests in flight (4 or 6 blocks of 16; each request fits alone), every request
    still finishes with all its tokens."""
    pipe = _pipeline(tuple(stages), send, depth=len(stages))
    passage = sum(stages) + send * (len(stages) - 1)
    specs = sorted((RequestSpec(arrival_s=a, prompt_len=p, output_len=o) for a, p, o in reqs),
                   key=lambda s: s.arrival_s)
    state = _run(pipe, specs, budget, blocks)
    assert len(state.finished) == len(specs)
    for r in state.finished:
        assert r.num_output == r.output_len
        assert r.first_token_s - r.sent_s >= passage * (1 - 1e-9)
        if r.output_len > 1:
            assert (r.finish_s - r.first_token_s) / (r.output_len - 1) >= passage * (1 - 1e-9)


def test_stages_sum_to_the_model() -> None:
    """The stages' times add to the whole model's plus one step overhead a further stage (each
    stage's runner is a step of its own) and less the lm_head on all but the last."""
    spec = load_model("llama-3.1-8b")[0]
    cost = MixedStepCost(spec, get_gpu("H100-80GB"), layout=Layout(tp=1), graph_sizes=(8, 16))
    pipe = PipelineCost.of(cost, spec, 2, depth=2)
    assert [len(c.layers or ()) for c in pipe.stages] == [16, 16]
    decodes, chunks = [100, 200, 300], [(0, 64)]
    whole = cost.seconds(decode_contexts=decodes, chunks=chunks)
    parts = pipe.stage_seconds(decodes, chunks)
    assert sum(parts) == pytest.approx(whole + cost.eff.step_overhead_s, rel=1e-9)
    assert parts[1] - parts[0] == pytest.approx(cost.head_seconds(4), rel=1e-9)


def test_cli_pp() -> None:
    base = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "4096",
            "--num-requests", "20", "--rate", "4", "--input-len", "256", "--output-len", "32",
            "--engine-version", "0.15.1", "--no-async-scheduling", "-f", "json"]
    result = runner.invoke(app, [*base, "--pp", "2"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["num_requests"] == 20
    text = runner.invoke(app, [*base[:-2], "--pp", "2"])
    assert "pipeline parallelism: 2 stages of 16, 16 layers" in " ".join(text.stdout.split())
    for args, text in ((["--engine", "sglang"], "only vLLM's pipeline"),
                       (["--async-scheduling"], "vLLM before 0.16 refuses it")):
        result = runner.invoke(app, [*base, "--pp", "2", *args])
        assert result.exit_code == 2 and text in result.stderr, result.output
        assert len(result.stderr.strip().splitlines()) == 1


def test_send_seconds_by_hand() -> None:
    """TP 2, 10 tokens of hidden 4096: 163,840 B (hidden + residual, bf16); each rank sends
    81,920 B at 1e11 B/s after 10 us (10.8192 us), the receiving pair all-gathers half of the
    whole at 5e10 B/s after 5 us (5 + 1.6384 us): 17.4576 us."""
    pipe = PipelineCost(stages=(), depth=2, hidden_size=4096, tp=2, send_latency_s=10e-6,
                        send_bytes_per_s=1e11, gather_latency_s=5e-6, gather_bytes_per_s=5e10)
    assert pipe.send_seconds(10) == pytest.approx(17.4576e-6)
    assert pipe.send_seconds(0) == 0.0


def test_async_scheduling_by_release() -> None:
    spec = load_model("llama-3.1-8b")[0]  # dense: model runner V2 from 0.25
    # Off by default at PP > 1 to 0.15 (0.14.1 config/vllm.py:590-596), refused asked (:562-568).
    for version in ("0.12.0", "0.15.1"):
        mode, note = pipeline_async(spec, version=version, pp=2, asked=None)
        assert mode is None and "before 0.16 turns it off" in note
        with pytest.raises(InputError, match="vLLM before 0.16 refuses it"):
            pipeline_async(spec, version=version, pp=2, asked=True)
    # On by default from 0.16 with no PP condition: the V1 runner's (0.16.0, 0.19.0).
    for version in ("0.16.0", "0.19.0"):
        mode, _ = pipeline_async(spec, version=version, pp=2, asked=None)
        assert mode is not None and (mode.runner, mode.lag, mode.stagger) == ("V1", 1, 1)
        assert mode.every_batch  # no skip of prompt-chunk batches before 0.20
        assert pipeline_async(spec, version=version, pp=2, asked=False)[0] is None
    # 0.32: on on V2 (a dense model), a lag and stagger of PP.
    mode, _ = pipeline_async(spec, version="0.32.0", pp=3, asked=None)
    assert mode is not None and (mode.runner, mode.lag, mode.stagger) == ("V2", 3, 3)
    # From 0.31 turned off on V1 by default (0.32.0 config/vllm.py:1634-1641), kept asked.
    mode, note = vllm_pp_async("0.32.0", 2, asked=None, v2_runner=False)
    assert mode is None and "turns it off at PP > 1 on model runner V1" in note
    mode, _ = vllm_pp_async("0.32.0", 2, asked=True, v2_runner=False)
    assert mode is not None and mode.runner == "V1" and not mode.every_batch


def _async_run(pipe: PipelineCost, specs: list[RequestSpec], budget: int):
    pool = KVPool(1000, (GroupRule(kind="full", block_size=16),), caching=False)
    config = SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=budget,
                             max_model_len=4096, async_scheduling=True)
    sim = PipelineSimulator(pool, config, _Const(0.0), pipe)  # type: ignore[arg-type]
    return sim.run(specs)


def test_async_v1_two_batches_by_hand() -> None:
    """PP 2 with vLLM 0.16-0.19's async scheduling on the V1 runner (lag 1, a queue of 2):
    stages 3 and 5 ms, a 1 ms send (also the sampled ids' broadcast), one 4-token prompt of 3
    output tokens at t = 0, a budget of 4. By hand (ms): A = the prompt at 0: stage 0 [0, 3],
    stage 1 [4, 9]; it samples, one placeholder. The queue has room: B = its first decode at 0
    (4 + 1 placeholder - 4 computed = 1 token; 4 + 2 - 1 = 5 < 4 + 3), two batches in flight;
    its first stage waits for A's sampled ids, 9 + 1 = 10: [10, 13], [14, 19]. Queue full: A
    back at 9, the first token. C at 9 (5 + 1 - 5 = 1 token; 5 + 2 - 1 = 6 < 7): [20, 23],
    [24, 29]. B back at 19: token 2. At 19, 6 + 2 - 1 = 7 >= 7: the placeholder reaches the last
    token, nothing scheduled; C back at 29: token 3, finished. Tokens at 9, 19, 29: 10 ms a
    token, against 9 ms synchronous (9, 18, 27: each decode after its token is back)."""
    pipe = replace(_pipeline((3e-3, 5e-3), 1e-3, depth=2),
                   async_mode=PipelineAsync(lag=1, stagger=1, runner="V1", every_batch=True))
    specs = [RequestSpec(arrival_s=0.0, prompt_len=4, output_len=3)]
    (r,) = _async_run(pipe, specs, budget=4).finished
    assert (r.first_token_s, r.finish_s) == pytest.approx((9e-3, 29e-3))
    (s,) = _run(_pipeline((3e-3, 5e-3), 1e-3, depth=2), specs, budget=4).finished
    assert (s.first_token_s, s.finish_s) == pytest.approx((9e-3, 27e-3))


def test_async_v1_chunk_batches_by_release() -> None:
    """An 8-token prompt in two chunks of 4 (3 and 5 ms stages, 1 ms send, a queue of 2, 2
    output tokens). From 0.20 a batch of prompt chunks short of their end broadcasts nothing:
    A = chunk 1 at 0, [0, 3], [4, 9]; B = chunk 2 at 0 (it samples: a placeholder) waits for
    nothing: [3, 6], [9, 14]; A back at 9 (no token); C = the decode at 9 waits for B's ids,
    14 + 1: [15, 18], [19, 24]; B back at 14: token 1; at 14, 9 + 2 - 1 >= 8 + 2: nothing
    more; C back at 24: token 2. To 0.19 every batch broadcasts: B waits for A, 9 + 1: [10, 13],
    [14, 19]: token 1 at 19; C after B's, 19 + 1: [20, 23], [24, 29]: token 2 at 29."""
    specs = [RequestSpec(arrival_s=0.0, prompt_len=8, output_len=2)]
    for every, first, last in ((False, 14e-3, 24e-3), (True, 19e-3, 29e-3)):
        pipe = replace(_pipeline((3e-3, 5e-3), 1e-3, depth=2), async_mode=PipelineAsync(
            lag=1, stagger=1, runner="V1", every_batch=every))
        (r,) = _async_run(pipe, specs, budget=4).finished
        assert (r.first_token_s, r.finish_s) == pytest.approx((first, last))


def test_async_v2_stagger_by_hand() -> None:
    """The V2 runner (0.32: lag and stagger PP = 2, a queue of 3), the same request: A = the
    prompt at step 1, [0, 3], [4, 9], next decode eligible at step 3; step 2 schedules nothing
    (wait for A: token 1 at 9); step 3 at 9: B [9, 12], [13, 18] (no batch two before it);
    step 4 nothing (token 2 at 18); step 5 at 18: C waits for A's ids (9 + 1 = 10, long
    passed): [18, 21], [22, 27]: tokens at 9, 18, 27, the synchronous run's."""
    pipe = replace(_pipeline((3e-3, 5e-3), 1e-3, depth=3),
                   async_mode=PipelineAsync(lag=2, stagger=2, runner="V2"))
    specs = [RequestSpec(arrival_s=0.0, prompt_len=4, output_len=3)]
    (r,) = _async_run(pipe, specs, budget=4).finished
    assert (r.first_token_s, r.finish_s) == pytest.approx((9e-3, 27e-3))


def test_host_before_each_batch_by_hand() -> None:
    """The engine core's host work (EngineCoreCost: 0.5 ms a batch, 0 a request) before a
    batch enters the first stage, synchronous PP 2 (stages 3 and 5 ms, 1 ms send): A at 0,
    host [0, 0.5], [0.5, 3.5], [4.5, 9.5]: token 1 at 9.5; the decode at 9.5, host to 10,
    [10, 13], [14, 19]: token 2 at 19. A token every 9.5 ms = host + the 9 ms pass, PP 1's
    synchronous rule (host + GPU step)."""
    host = EngineCoreCost(s_per_step=0.5e-3, s_per_request=0.0, source="test")
    pipe = replace(_pipeline((3e-3, 5e-3), 1e-3, depth=2), host=host)
    specs = [RequestSpec(arrival_s=0.0, prompt_len=4, output_len=3)]
    (r,) = _run(pipe, specs, budget=4).finished
    assert (r.first_token_s, r.finish_s) == pytest.approx((9.5e-3, 28.5e-3))


@settings(max_examples=30, deadline=None)
@given(stages=st.lists(st.floats(1e-4, 1e-2), min_size=2, max_size=4),
       send=st.floats(0, 1e-3), v2=st.booleans(),
       reqs=st.lists(st.tuples(st.floats(0, 0.05), st.integers(1, 40), st.integers(1, 6)),
                     min_size=1, max_size=8),
       budget=st.integers(1, 64))
def test_async_pipe_bounds(stages: list[float], send: float, v2: bool,
                           reqs: list[tuple[float, int, int]], budget: int) -> None:
    """With async scheduling every request still ends with exactly its tokens, its first no
    sooner than one pass after it arrives, and (V1: each batch waits for the one before's
    sampled ids) each later token no sooner than a pass after the one before."""
    pp = len(stages)
    mode = (PipelineAsync(lag=pp, stagger=pp, runner="V2") if v2
            else PipelineAsync(lag=1, stagger=1, runner="V1", every_batch=True))
    pipe = replace(_pipeline(tuple(stages), send, depth=pp + v2), async_mode=mode)
    passage = sum(stages) + send * (pp - 1)
    specs = sorted((RequestSpec(arrival_s=a, prompt_len=p, output_len=o) for a, p, o in reqs),
                   key=lambda s: s.arrival_s)
    state = _async_run(pipe, specs, budget)
    assert len(state.finished) == len(specs)
    for r in state.finished:
        assert r.num_output == r.output_len
        assert r.first_token_s - r.sent_s >= passage * (1 - 1e-9)
        if r.output_len > 1 and not v2:
            assert (r.finish_s - r.first_token_s) / (r.output_len - 1) >= passage * (1 - 1e-9)


def test_drains_done_by_release() -> None:
    # `not batch_queue[-1][0].done()`: 0.11.0 core.py:333 to 0.19.0 :481; absent in 0.10.0, 0.32.0.
    assert [vllm_pp_drains_done(v) for v in ("0.10.1", "0.11.0", "0.19.0", "0.32.0")] == [
        False, True, True, False]


class _Counting(PipelineSimulator):
    """Counts the batch outputs that come back for requests preempted while in flight."""

    stale = 0

    def _execute(self) -> int:
        oldest = self._queue[0] if self._queue else None
        done = super()._execute()
        if oldest is not None and (not self._queue or self._queue[0] is not oldest):
            self.stale += sum(1 for r, _, p, _, _ in oldest.items if r.preemptions != p)
        return done


def test_preempted_in_flight() -> None:
    """Six 10-token prompts at t = 0, 10 tokens each, on 4 blocks of 16 (3 usable) with
    first-chunk admission and 4-token chunks, PP 2: decodes outgrow the pool and vLLM's rule
    preempts the last running request, here some while a batch holding them is in flight. As
    vLLM 0.32 does, such a batch's token is still delivered and the request waits until it is
    back before it is admitted again; every request ends with its 10 tokens, once each, and its
    tokens in time order."""
    specs = [RequestSpec(arrival_s=0.0, prompt_len=10, output_len=10)] * 6
    pool = KVPool(4, (GroupRule(kind="full", block_size=16),), caching=False)
    config = SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=4, max_model_len=4096,
                             full_isl_admission=False)
    sim = _Counting(pool, config, _Const(0.0), _pipeline((1e-3, 1e-3), 1e-4, depth=2))  # type: ignore[arg-type]
    state = sim.run(specs)
    assert state.preemptions > 0 and sim.stale > 0
    assert sorted(r.rid for r in state.finished) == list(range(6))
    assert all(r.num_output == 10 for r in state.finished)
    assert all(0 < r.first_token_s <= r.finish_s for r in state.finished)
    assert min(state.itl_values) > 0 and sum(state.itl_weights) == 6 * 9
