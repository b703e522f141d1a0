"""The step boundary rule (kvplan.analysis.simulate.step_boundary): a closed loop's reply to a
finish is not taken by the scheduling made at the finish's instant while the engine has work."""

from __future__ import annotations

import pytest

from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.sglang_scheduler import SglangSchedule, SglangSimulator
from kvplan.analysis.simulate.step_boundary import taken
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmSimulator
from kvplan.analysis.simulate.workload import RequestSpec

STEP_S = 0.010


class _FixedStep:
    """Every step takes STEP_S, whatever it holds."""

    full_attention_only = True

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return STEP_S

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return STEP_S


def _ttfts(specs: list[RequestSpec], concurrency: int, *, lookahead: bool,
           sglang: bool = False) -> list[float]:
    pool = KVPool(64, (GroupRule(kind="full", block_size=16),), caching=False)
    config = SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512, max_model_len=64,
                             async_scheduling=lookahead)
    sim = (SglangSimulator(pool, config, _FixedStep(), SglangSchedule(
        chunked_prefill_size=512, max_running_requests=8)) if sglang
        else Simulator(pool, config, _FixedStep(), bulk_decode=False))
    state = sim.run(specs, concurrency=concurrency)
    done = sorted(state.finished, key=lambda r: r.rid)
    return [round((r.first_token_s - r.sent_s) * 1e3, 6) for r in done]


# Two users, 10 ms steps. Step 1 (0-10 ms) prefills R0 (1 output token: it finishes at 10 ms)
# and R1 (6 output tokens: it decodes in steps 2-6, so the engine stays busy). R0's user sends
# R2 at 10 ms, when step 2 starts. By the code the drain before step 2 is over when the client
# has R0's last token, so R2 is first drained before step 3 (synchronous): prefilled in step 3,
# 20-30 ms, first token at 30 ms, TTFT 30 - 10 = 20 ms (the old `seen <= cutoff` took it into
# step 2: 10 ms). Async: step k + 1's arrivals end at step k's start; step 3 is scheduled at
# step 2's launch (10 ms), before the reply; step 4 (scheduled at 20 ms) takes it: 30-40 ms,
# TTFT 40 - 10 = 30 ms (the old rule: step 3, 20 ms). R0 and R1: 10 ms (step 1) either way.
TWO_USERS = [RequestSpec(arrival_s=0.0, prompt_len=8, output_len=1),
             RequestSpec(arrival_s=0.0, prompt_len=8, output_len=6),
             RequestSpec(arrival_s=0.0, prompt_len=8, output_len=1)]


@pytest.mark.parametrize(("lookahead", "want"), [(False, [10.0, 10.0, 20.0]),
                                                 (True, [10.0, 10.0, 30.0])])
def test_reply_waits_for_the_step_after_the_finish(lookahead: bool, want: list[float]) -> None:
    assert _ttfts(TWO_USERS, 2, lookahead=lookahead) == want
    # SGLang's loop (normal / overlap) gives the same steps by the same derivation.
    assert _ttfts(TWO_USERS, 2, lookahead=lookahead, sglang=True) == want


@pytest.mark.parametrize(("lookahead", "want"), [(False, [10.0, 10.0, 10.0]),
                                                 (True, [10.0, 10.0, 20.0])])
def test_without_the_rule_the_reply_took_the_next_step(
        monkeypatch: pytest.MonkeyPatch, lookahead: bool, want: list[float]) -> None:
    # The old order (`seen <= cutoff`): R2 in step 2 (sync) / step 3 (async), one step early.
    for engine in (Simulator, SglangSimulator):
        monkeypatch.setattr(engine, "finish_reply_misses_next_step", False)
    assert _ttfts(TWO_USERS, 2, lookahead=lookahead) == want
    assert _ttfts(TWO_USERS, 2, lookahead=lookahead, sglang=True) == want


@pytest.mark.parametrize("lookahead", [False, True])
def test_an_idle_engine_takes_the_reply_at_once(lookahead: bool) -> None:
    # One user: R0 finishes at 10 ms and leaves the engine idle; it blocks on its input
    # (vLLM `_process_input_queue`) and R1, sent at 10 ms, is prefilled 10-20 ms: TTFT 10 ms.
    assert _ttfts(TWO_USERS[:2], 1, lookahead=lookahead) == [10.0, 10.0]


def test_taken() -> None:
    assert taken(1.0, 1.0, reply_to_finish=False) and not taken(1.0, 1.0, reply_to_finish=True)
    assert taken(0.5, 1.0, reply_to_finish=True) and not taken(1.5, 1.0, reply_to_finish=False)


def test_each_engine_answers() -> None:
    # vLLM (the base simulator), SGLang and TensorRT-LLM all receive at the loop's top and hand
    # the outputs out after the next decision (step_boundary's citations).
    for engine in (Simulator, SglangSimulator, TrtllmSimulator):
        assert engine.finish_reply_misses_next_step is True
