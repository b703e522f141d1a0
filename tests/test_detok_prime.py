"""vLLM's whole-prompt detokenizer prime in `simulate --frontend`'s output stage (frontdec66,
issue 30; kvplan.engines.vllm.frontend `vllm_detok_prime`, VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN):
from 0.17 the API server decodes every prompt id when a request's first token arrives, charged
per prompt token to the output work of the step that gives the first token. Hand-worked."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.frontend import ServerQueue, given_tokens
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine
from kvplan.engines.vllm.frontend import (
    VLLM_API_OUTPUT_COST,
    VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN,
    ApiOutputCost,
    vllm_api_output_cost,
    vllm_detok_prime,
)
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step

# A hand-sized cost: 17 us a request given a token, 1 us a primed prompt token.
COST = ApiOutputCost(s_per_step=0.0, s_per_output=17e-6, s_per_primed_token=1e-6, source="t")


def test_the_prime_is_read_from_0_17_on() -> None:
    # detokenizer.py: 0.16.0 primes <= 23 ids (:183-195), 0.17.0 / 0.18.0 / 0.32 every id.
    assert not vllm_detok_prime("0.16.0") and not vllm_detok_prime("0.15.1")
    assert vllm_detok_prime("0.17.0") and vllm_detok_prime("0.18.0")
    assert vllm_detok_prime("0.32.0") and vllm_detok_prime(None)  # None: the newest


def test_only_frontend_at_0_17_on_charges_it() -> None:
    assert vllm_api_output_cost("0.16.0", frontend=True) is VLLM_API_OUTPUT_COST
    assert vllm_api_output_cost("0.18.0", frontend=False) is VLLM_API_OUTPUT_COST
    cost = vllm_api_output_cost("0.18.0", frontend=True)
    assert cost.s_per_primed_token == VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN
    assert cost.s_per_output == VLLM_API_OUTPUT_COST.s_per_output
    assert VLLM_API_OUTPUT_COST.s_per_primed_token == 0.0
    assert "detok_prime_cost.py" in cost.source


def test_step_s_adds_the_primed_tokens() -> None:
    # 3 requests x 17 us + 1,000 primed tokens x 1 us = 51 + 1,000 = 1,051 us.
    assert COST.step_s(3, 1000) == pytest.approx(1051e-6)
    assert COST.step_s(3) == pytest.approx(51e-6)
    assert COST.step_s(0, 1000) == 0.0  # no output, no work


@dataclass
class _Req:
    prompt_len: int
    num_computed: int
    num_tokens: int
    num_output: int


def test_given_tokens_counts_first_tokens_prompts() -> None:
    scheduled = [
        (_Req(100, 0, 100, 0), 100),   # its whole prefill: first token, 100 primed
        (_Req(200, 0, 200, 0), 50),    # a chunk: no token
        (_Req(120, 120, 121, 1), 1),   # a decode: a token, not the first
        (_Req(64, 0, 67, 3), 67),      # recomputed after preemption: a token, not the first
    ]
    assert given_tokens(scheduled) == (3, 100)
    assert given_tokens(scheduled, 5) == (8, 100)  # + 5 running decodes, none primed


def test_deliver_s_waits_for_the_prime() -> None:
    # 2 outputs x 17 us + 8,192 primed x 1 us = 8,226 us after the step's end at 1 s.
    queue = ServerQueue(None, COST)
    assert queue.deliver_s(1.0, 2, 8192) == pytest.approx(1.008226)
    # The loop is busy until then: the next step's outputs (ending at 1.005 s) wait for it.
    assert queue.deliver_s(1.005, 1) == pytest.approx(1.008226 + 17e-6)


def _ttft_ms(cost: ApiOutputCost) -> float:
    """One request of 1,000 prompt + 2 output tokens, 10 ms steps, synchronous scheduling,
    behind the output stage `cost` alone."""
    pool = KVPool(200, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=2048,
                                          max_model_len=2048, async_scheduling=False,
                                          api_output=cost), _FixedCost())
    done = sim.run([RequestSpec(arrival_s=0.0, prompt_len=1000, output_len=2)],
                   concurrency=1).finished
    return (done[0].first_token_s - done[0].sent_s) * 1e3


def test_the_prime_lands_in_ttft() -> None:
    # The prefill step ends at 10 ms; its output work is 17 us + 1,000 x 1 us = 1.017 ms.
    assert _ttft_ms(COST) == pytest.approx(11.017)
    no_prime = ApiOutputCost(s_per_step=0.0, s_per_output=17e-6, source="t")
    assert _ttft_ms(no_prime) == pytest.approx(10.017)


def test_setup_names_it_in_the_note_by_version() -> None:
    spec = load_model("llama-3.1-8b")[0]
    for version, primed in (("0.18.0", True), ("0.16.0", False)):
        inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine=Engine.vllm,
                                 engine_version=version)
        sim, notes = setup(spec, inputs, frontend=True)
        assert sim.scheduler.api_output == vllm_api_output_cost(version, frontend=True)
        line = next(n for n in notes if n.startswith("API server outputs"))
        assert ("the detokenizer's prime" in line) is primed
        plain = setup(spec, inputs, api_output=True)[0].scheduler.api_output
        assert plain is VLLM_API_OUTPUT_COST  # --api-output alone: unchanged
