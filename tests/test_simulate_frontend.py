"""`kvplan simulate`: vLLM's API server in front of the engine (issue 30) - the tokenizer
batcher (vllm/utils/async_utils.py AsyncMicrobatchTokenizer, 0.11-0.23), by hand."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.frontend import TokenizerBatcher
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.vllm.frontend import (
    VLLM_API_TOKENIZER_BATCHING,
    TokenizerBatching,
    vllm_api_tokenizer_batching,
)
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step


@dataclass
class _Req:
    sent_s: float
    seen_s: float = -1.0


def _seen_ms(rule: TokenizerBatching, sent_ms: list[float]) -> list[float]:
    batcher = TokenizerBatcher(rule)
    reqs = [_Req(sent_s=t / 1e3) for t in sent_ms]
    for r in reqs:
        batcher.admit(r)
    return [round(r.seen_s * 1e3, 9) for r in reqs]


def test_batcher_releases_at_the_deadline_by_hand() -> None:
    """_batch_encode_loop: the first prompt opens a batch with a deadline 2 ms later; a prompt
    by the deadline joins it. 0 and 1 ms -> both released at 2 ms; 5 ms finds the batcher
    idle -> 7 ms; 7 ms is on the deadline (joins) -> 7 ms; 7.5 ms -> 9.5 ms."""
    assert _seen_ms(VLLM_API_TOKENIZER_BATCHING, [0, 1, 5, 7, 7.5]) == [2, 2, 7, 7, 9.5]


def test_a_full_batch_is_released_by_the_prompt_that_fills_it() -> None:
    """max_batch_size prompts end the collection at once: with 2 per batch, 0 and 0.5 ms are
    released at 0.5 ms; 1 ms opens the next batch (deadline 3 ms), 2 ms fills it -> 2 ms."""
    rule = TokenizerBatching(wait_s=0.002, max_batch=2)
    assert _seen_ms(rule, [0, 0.5, 1, 2]) == [0.5, 0.5, 2, 2]


def test_batcher_by_vllm_version() -> None:
    # PR 19334 brought it (kvplan: from 0.11), PR 45759 removed it (absent from 0.24.0).
    assert vllm_api_tokenizer_batching("0.10.2") is None
    assert vllm_api_tokenizer_batching("0.11.0") == VLLM_API_TOKENIZER_BATCHING
    assert vllm_api_tokenizer_batching("0.15.1") == VLLM_API_TOKENIZER_BATCHING
    assert vllm_api_tokenizer_batching("0.23.1") == VLLM_API_TOKENIZER_BATCHING
    assert vllm_api_tokenizer_batching("0.24.0") is None
    assert vllm_api_tokenizer_batching(None) is None  # the newest (0.32): none
    assert VLLM_API_TOKENIZER_BATCHING == TokenizerBatching(wait_s=0.002, max_batch=32)


def test_setup_puts_the_batcher_only_in_front_of_vllm_serve() -> None:
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine_version="0.15.1")
    assert setup(spec, inputs)[0].scheduler.tokenizer_batching == VLLM_API_TOKENIZER_BATCHING
    assert setup(spec, inputs, api_server=False)[0].scheduler.tokenizer_batching is None
    newest = estimate_inputs(spec, context=8192, gpu="H100-80GB")
    assert setup(spec, newest)[0].scheduler.tokenizer_batching is None


@pytest.mark.parametrize("bulk", [True, False])
def test_the_engine_sees_a_request_when_its_batch_is_released(bulk: bool) -> None:
    """tests/test_simulate.py's async case (10 ms steps; A at 0 ms, B at 15 ms: TTFT 10 and
    25 ms) behind a 2 ms batcher. A is released at 2 ms to an idle engine: prefill 2-12 ms,
    TTFT 12 ms. A's decodes run 12-22 ms (scheduled at 2 ms), 22-32 ms (scheduled at 12 ms)
    and so on; B is sent at 15 ms and released at 17 ms, after the step 22-32 ms was
    scheduled, so the step scheduled at 22 ms (run 32-42 ms) takes it: TTFT 42 - 15 = 27 ms,
    E2E from 15 ms too."""
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=10),
             RequestSpec(arrival_s=0.015, prompt_len=16, output_len=10)]
    pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                          max_model_len=64, async_scheduling=True,
                                          tokenizer_batching=VLLM_API_TOKENIZER_BATCHING),
                    _FixedCost(), bulk_decode=bulk)
    done = {r.rid: r for r in sim.run(specs).finished}
    ttft = [round((done[i].first_token_s - done[i].sent_s) * 1e3, 9) for i in (0, 1)]
    assert ttft == [12.0, 27.0]
    # B's 10 tokens: the first at 42 ms, then one per 10 ms step.
    assert round((done[1].finish_s - done[1].sent_s) * 1e3, 9) == 27.0 + 9 * 10.0
