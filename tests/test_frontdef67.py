"""frontdef67's decomposition of vLLM's `--frontend` (tests/benches/frontdef67.py): each of the
bench's cumulative replays builds the stage it names, and one request's TTFT grows by each
part as worked out by hand."""

from __future__ import annotations

import pytest

from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.vllm.frontend import (
    VLLM_API_LOOP_COST,
    VLLM_API_OUTPUT_COST,
    vllm_api_loop_cost,
    vllm_api_output_cost,
)
from tests.benches.frontdef67 import NO_OUTPUT, variant
from tests.test_frontend_latency_opt import _inputs
from tests.test_simulate import _FixedCost  # 10 ms a step


def _stage(name: str):  # type: ignore[no-untyped-def]
    spec, inputs = _inputs()
    with variant(name):
        sched = setup(spec, inputs, frontend=True)[0].scheduler
    return inputs.capacity.engine_version, sched


def test_each_replay_builds_the_parts_it_names() -> None:
    version, req = _stage("req")
    assert vllm_api_output_cost(version, frontend=True).s_per_primed_token > 0  # >= 0.17
    assert (req.api_server.s_per_request, req.api_server.s_per_prompt_token,
            req.api_server.latency_s) == (VLLM_API_LOOP_COST.s_per_request, 0.0, 0.0)
    assert req.api_output == NO_OUTPUT
    tok = _stage("tok")[1]
    assert tok.api_server == vllm_api_loop_cost(0.0) and tok.api_output == NO_OUTPUT
    out = _stage("out")[1]
    assert out.api_server == vllm_api_loop_cost(0.0) and out.api_output == VLLM_API_OUTPUT_COST
    prime = _stage("prime")[1]  # candidate (a): `--frontend --frontend-latency-ms 0`
    assert prime.api_server == vllm_api_loop_cost(0.0)
    assert prime.api_output == vllm_api_output_cost(version, frontend=True)
    full = _stage("latency")[1]
    assert full.api_server is VLLM_API_LOOP_COST
    assert full.api_output == vllm_api_output_cost(version, frontend=True)


def _ttft_ms(name: str) -> list[float]:
    """Two requests of 16 prompt + 2 output tokens, one user, 10 ms steps, synchronous
    scheduling, behind the `name` replay's stage."""
    stage = _stage(name)[1]
    pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                          max_model_len=64, async_scheduling=False,
                                          api_server=stage.api_server,
                                          api_output=stage.api_output),
                    _FixedCost())
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=2) for _ in range(2)]
    done = sorted(sim.run(specs, concurrency=1).finished, key=lambda r: r.sent_s)
    return [round((r.first_token_s - r.sent_s) * 1e3, 6) for r in done]


# By hand, one request to an idle loop and engine: the prefill step 10 ms, plus
# req: 97.8 us of ingestion -> 10.0978 ms;
# tok: + 16 x 2.168 us = 34.688 us -> 10.132488;
# out: + the step's one output, 17 us -> 10.149488;
# prime: + 16 prompt tokens x 0.931 us = 14.896 us at the first token -> 10.164384;
# latency: + 25.55 ms outside the queue -> 35.714384.
# The one user's next request is sent when the first has its last token: idle again, the same.
@pytest.mark.parametrize(("name", "ms"), [("req", 10.0978), ("tok", 10.132488),
                                          ("out", 10.149488), ("prime", 10.164384),
                                          ("latency", 35.714384)])
def test_ttft_by_hand(name: str, ms: float) -> None:
    assert _ttft_ms(name) == [ms, ms]
