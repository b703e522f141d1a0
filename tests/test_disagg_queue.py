"""The disaggregated simulation with a connector's transfers queued on each end
(kvplan.analysis.simulate.disagg_queue, trtctx68) on hand-worked timelines, and TensorRT-LLM's
rule that gives the queues (kvplan.engines.trtllm.transceiver_queue)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.disagg_queue import QueuedTransferFlow, simulate_disagg_queued
from kvplan.analysis.simulate.disagg_sim import DisaggSimInputs, simulate_disagg
from kvplan.analysis.simulate.sim_types import SchedulerConfig
from kvplan.engines.trtllm.transceiver_queue import transceiver_queue


def _inputs(concurrency: int = 2, *, decode_workers: int = 1, rounds: int = 1
            ) -> DisaggSimInputs:
    # One prefill rank taking up to two 100-token prompts a 1 s step (no chunking), decode
    # steps of 0.1 s, transfers of 0.25 s polled at the decode boundaries, the first token at
    # the boundary the request joins (TensorRT-LLM's flow: first_token_steps 0).
    return DisaggSimInputs(
        concurrency=concurrency, input_len=100, output_len=2, prefill_workers=1,
        prefill_ranks=1, decode_workers=decode_workers, decode_ranks=1,
        prefill=SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=200, max_model_len=100),
        chunked_prefill=False, decode_max_seqs=8, transfer_s=0.25, first_token_steps=0.0,
        transfer_polled=True, rounds=rounds, measure_all_rounds=True)


def _flow(send: int = 1, recv: int = 1, pool: int | None = None) -> QueuedTransferFlow:
    return QueuedTransferFlow(send_slots=send, recv_slots=recv, pool_blocks=pool,
                              block_tokens=100, held_extra_tokens=1)


def _run(inp: DisaggSimInputs, flow: QueuedTransferFlow | None) -> tuple[float, float]:
    kw = {"prefill_step_s": lambda tokens, prompts: 1.0, "decode_step_s": lambda batch: 0.1}
    res = (simulate_disagg(inp, **kw) if flow is None
           else simulate_disagg_queued(inp, flow, **kw))
    return res.ttft_ms, res.tpot_ms


def test_transfers_at_once_take_in_both_prompts_at_the_handover_plus_a_transfer() -> None:
    # Both prompts prefill in one 1 s step and are taken in at t = 1 by the idle decode worker;
    # both transfers end at 1.25 and both join then: TTFT 1,250 ms, one 0.1 s step to the
    # second token (TPOT 100 ms). Two slots a side: the same as disagg_sim's.
    assert _run(_inputs(), None) == pytest.approx((1250.0, 100.0))
    assert _run(_inputs(), _flow(2, 2)) == pytest.approx((1250.0, 100.0))


def test_one_receive_at_a_time_puts_the_second_transfer_after_the_first() -> None:
    # One receive slot: prompt 0's transfer 1.00-1.25 s, prompt 1's 1.25-1.50 s (its receive
    # starts as the first ends). Prompt 0 joins the idle worker at 1.25 (first token then, the
    # second at 1.35); prompt 1 is seen done at 1.50 by the then idle worker and joins:
    # TTFT (1.25 + 1.50) / 2 = 1,375 ms, TPOT 100 ms each.
    assert _run(_inputs(), _flow(send=2, recv=1)) == pytest.approx((1375.0, 100.0))


def test_one_send_at_a_time_serialises_two_decode_workers() -> None:
    # Two decode workers (one request each: its own receive slot), one prefill rank sending
    # one at a time: 1.00-1.25 and 1.25-1.50 s, the same 1,375 ms mean TTFT.
    assert _run(_inputs(decode_workers=2), _flow(send=1, recv=2)) == pytest.approx(
        (1375.0, 100.0))
    assert _run(_inputs(decode_workers=2), _flow(send=2, recv=1)) == pytest.approx(
        (1250.0, 100.0))


def test_the_prefill_pool_holds_a_prompt_until_its_send_ends() -> None:
    # Each prompt reserves 100 + 1 tokens: 2 blocks of 100. A pool of 2 blocks admits prompt 0
    # alone (1.00 s step ending at 1; its send ends 1.25, its blocks freed then); prompt 1's
    # step 1.25-2.25, its transfer 2.25-2.50: TTFT (1.25 + 2.50) / 2 = 1,875 ms. Unbounded
    # (None) or 4 blocks: both in the first step, 1,375 ms as above.
    assert _run(_inputs(), _flow(pool=2)) == pytest.approx((1875.0, 100.0))
    assert _run(_inputs(), _flow(pool=4)) == pytest.approx((1375.0, 100.0))
    with pytest.raises(InputError, match="needs 2 blocks; a prefill rank's pool has 1"):
        _run(_inputs(), _flow(pool=1))


@pytest.mark.parametrize("workers", [1, 3])
def test_unbounded_queues_reproduce_the_simulation_without_them(workers: int) -> None:
    # Slots above the users and no pool: nothing waits, so the closed loop's times are
    # disagg_sim's, over several rounds and decode workers (the refactored polled rule).
    inp = replace(_inputs(7, decode_workers=workers, rounds=4), measure_all_rounds=False)
    assert _run(inp, _flow(100, 100)) == pytest.approx(_run(inp, None))


def test_trtllm_transceiver_runs_one_transfer_a_rank_unless_its_variables_say_more() -> None:
    # cacheTransBuffer.cpp: mSendBufferCount = TRTLLM_PARALLEL_CACHE_SEND ?
    # TRTLLM_KVCACHE_SEND_MAX_CONCURRENCY_NUM (default 2) : 1, and the receive side the same
    # with TRTLLM_REQUEST_KV_CACHE_CONCURRENT / TRTLLM_KVCACHE_RECV_BUFFER_COUNT (default 2);
    # a boolean variable counts only as "1" (envUtils.cpp getBoolEnv).
    q = transceiver_queue()
    assert (q.send_slots, q.recv_slots, q.sender_holds_kv, q.held_extra_tokens) == (
        1, 1, True, 1)
    q = transceiver_queue({"TRTLLM_PARALLEL_CACHE_SEND": "1",
                           "TRTLLM_REQUEST_KV_CACHE_CONCURRENT": "1"})
    assert (q.send_slots, q.recv_slots) == (2, 2)
    q = transceiver_queue({"TRTLLM_PARALLEL_CACHE_SEND": "1",
                           "TRTLLM_KVCACHE_SEND_MAX_CONCURRENCY_NUM": "4",
                           "TRTLLM_KVCACHE_RECV_BUFFER_COUNT": "3"})
    assert (q.send_slots, q.recv_slots) == (4, 1)  # no concurrent receive: the count unread
    q = transceiver_queue({"TRTLLM_PARALLEL_CACHE_SEND": "true"})
    assert q.send_slots == 1


def test_a_worker_blocked_on_a_transfer_takes_nothing_new_in() -> None:
    # One prompt a 1 s step (budget 100), transfers of 1.5 s, two slots a side. Prompt 0 is
    # handed over at 1 and taken in (transfer 1.0-2.5 s): nothing runs, so the worker blocks
    # on it; prompt 1, handed over at 2, is taken in only at the boundary of 2.5 s (its
    # transfer 2.5-4.0 s), as disagg_sim's wait for a known transfer end takes it:
    # TTFT (2.5 + 4.0) / 2 = 3,250 ms. Prompt 0's one decode step 2.5-2.6 s: TPOT 100 ms.
    inp = replace(_inputs(), transfer_s=1.5,
                  prefill=SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=100,
                                          max_model_len=100))
    assert _run(inp, _flow(2, 2)) == pytest.approx((3250.0, 100.0))
    assert _run(inp, None) == pytest.approx((3250.0, 100.0))
