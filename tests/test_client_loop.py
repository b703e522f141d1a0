"""`kvplan simulate --client-cost measured`: the benchmark client's serial loop in a closed loop
(kvplan.analysis.simulate.client_loop), worked by hand."""

from __future__ import annotations

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.client_loop import (
    VLLM_BENCH_CLIENT_COST,
    ClientLoop,
    ClientLoopCost,
)
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.sources.resolve import load_model
from tests.test_simulate_frontend import _FixedCost


def _cost(finish_ms: float, send_ms: float) -> ClientLoopCost:
    return ClientLoopCost(finish_s=finish_ms / 1e3, send_s=send_ms / 1e3, source="by hand")


def test_a_group_is_sent_one_replacement_after_another() -> None:
    # 1 ms a finish, 0.5 ms a send. Three streams seen to end at 10 ms: the loop finishes them
    # 10-13, then sends at 13.5, 14 and 14.5 ms and is free at 14.5. Two more seen at 14 ms
    # wait for it: finished 14.5-16.5, sent at 17 and 17.5. One seen at 30 ms (idle): 31.5.
    loop = ClientLoop(_cost(1.0, 0.5))
    ms = [[round(t * 1e3, 9) for t, _ in loop.sends(s / 1e3, k)] for s, k in
          ((10, 3), (14, 2), (30, 1))]
    assert ms == [[13.5, 14, 14.5], [17, 17.5], [31.5]]
    assert {n for _, n in loop.sends(0.040, 4)} == {1}


@pytest.mark.parametrize("bulk", [True, False])
def test_a_closed_loop_sends_after_the_client_s_work(bulk: bool) -> None:
    # Concurrency 2, four requests of 16 prompt tokens and 2 output tokens, 10 ms steps
    # (_FixedCost), no output stage: requests 0 and 1 prefill 0-10 and finish 10-20. The client
    # (3 ms a finish, 2 ms a send) sees both end at 20 ms: sends request 2 at 20 + 6 + 2 = 28
    # and request 3 at 30 ms. The engine idles to 28, steps 28-38 (request 2 alone: request 3
    # comes at 30) and request 3 waits for the next step; without the client both go at 20.
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=2) for _ in range(4)]

    def run(cost: ClientLoopCost | None) -> list[float]:
        pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
        sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                              max_model_len=64, bench_client=cost),
                        _FixedCost(), bulk_decode=bulk)
        done = sorted(sim.run(specs, concurrency=2).finished, key=lambda r: r.rid)
        return [round(r.sent_s * 1e3, 9) for r in done]

    assert run(_cost(3.0, 2.0)) == [0, 0, 28, 30]
    assert run(None) == [0, 0, 20, 20]


def test_setup_adds_the_client_only_when_asked() -> None:
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine_version="0.15.0")
    assert setup(spec, inputs)[0].scheduler.bench_client is None
    sim, notes = setup(spec, inputs, client_cost=VLLM_BENCH_CLIENT_COST)
    assert sim.scheduler.bench_client == VLLM_BENCH_CLIENT_COST
    assert any("benchmark client" in n and "0.43 ms" in n for n in notes)
    with pytest.raises(InputError, match="--client-cost"):
        setup(spec, inputs, dp=2, client_cost=VLLM_BENCH_CLIENT_COST)
