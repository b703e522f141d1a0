"""TensorRT-LLM's batch waiting (kvplan.engines.trtllm.batch_wait): a step that picked context
and generation requests runs its generation requests only while the counter is below
batch_wait_timeout_iters and its tokens below batch_wait_max_tokens_ratio x max_num_tokens."""

from __future__ import annotations

import pytest

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig
from kvplan.analysis.simulate.trtllm_scheduler import (
    TrtllmOptionsSim,
    TrtllmSchedule,
    TrtllmSimulator,
)
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine
from kvplan.engines.trtllm.batch_wait import BatchWait, BatchWaitGate
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step


def test_gate_by_hand() -> None:
    # timeout 2, ratio 0.5 of 1,000 tokens (500): a 101-token step waits twice (counter 0 -> 1
    # -> 2), the third runs (2 >= 2) and the counter goes back to 0; a 500-token step runs.
    gate = BatchWaitGate(BatchWait(timeout_iters=2, max_tokens_ratio=0.5), 1000)
    assert [gate.release(100, 1) for _ in range(4)] == [False, False, True, False]
    assert gate.release(499, 1) and gate.iters == 0
    # timeout 0: the counter is always at the limit, nothing waits (the ratio alone does not).
    zero = BatchWaitGate(BatchWait(timeout_iters=0, max_tokens_ratio=0.8), 1000)
    assert zero.release(1, 1)
    assert not BatchWait().on and BatchWait(timeout_iters=40).on


def _engine(wait: BatchWait | None) -> TrtllmSimulator:
    pool = KVPool(1001, (GroupRule(kind="full", block_size=32),), caching=False)
    return TrtllmSimulator(
        pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=8192,
                              max_model_len=1 << 20, async_scheduling=False),
        _FixedCost(), TrtllmSchedule(max_batch_size=8, max_num_tokens=8192, batch_wait=wait))


@pytest.mark.parametrize(("wait", "first_ms"), [
    (None, 30.0),  # off: r1's prompt in step 3 (20-30 ms) beside r0's token
    (BatchWait(timeout_iters=2, max_tokens_ratio=0.5), 50.0),  # held in steps 3, 4; runs in 5
    (BatchWait(timeout_iters=2, max_tokens_ratio=0.01), 30.0),  # 101 >= 81.92 tokens: runs
    (BatchWait(timeout_iters=0, max_tokens_ratio=0.5), 30.0),  # timeout 0: never waits
])
def test_a_context_request_beside_generation_waits(wait: BatchWait | None,
                                                   first_ms: float) -> None:
    # r0: a 100-token prompt at 0, 10 tokens out; r1: 100 tokens at 15 ms (after step 2 began,
    # the synchronous executor: it is first seen at step 3, 20 ms). Steps of 10 ms. Step 3
    # picks r0's token and r1's prompt: 100 + 1 = 101 tokens.
    specs = [RequestSpec(arrival_s=0.0, prompt_len=100, output_len=10),
             RequestSpec(arrival_s=0.015, prompt_len=100, output_len=5)]
    done = {r.rid: r for r in _engine(wait).run(specs).finished}
    assert done[0].first_token_s == pytest.approx(0.010)
    assert done[1].first_token_s == pytest.approx(first_ms / 1000)


def test_setup_passes_it_without_attention_dp_only() -> None:
    spec, _ = load_model("tests/data/configs/llama-3.1-8b.json")
    wait = BatchWait(timeout_iters=40, max_tokens_ratio=0.8)  # dsr1_fp8_b200_trt.sh's
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine=Engine("trtllm"))
    sim, _ = setup(spec, inputs, trtllm=TrtllmOptionsSim(batch_wait=wait))
    assert sim.trtllm is not None and sim.trtllm.batch_wait == wait
    plain, _ = setup(spec, inputs)
    assert plain.trtllm is not None and plain.trtllm.batch_wait is None
