"""The disaggregated closed-loop simulation (kvplan.analysis.simulate.disagg_sim): a case worked
by hand and a property."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvplan.analysis.simulate.disagg_sim import DisaggSimInputs, _Req, _Run, simulate_disagg
from kvplan.analysis.simulate.scheduler import SchedulerConfig
from kvplan.engines.sglang.dp_balance import BOOTSTRAP_ROOM
from kvplan.engines.trtllm.dp_balance import TRTLLM_ADP_BALANCE
from kvplan.engines.vllm.dp_balance import VLLM_DP_BALANCE


def _inputs(*, concurrency: int = 2, budget: int = 1000, fts: float | None = 1.5,
            rounds: int = 3) -> DisaggSimInputs:
    return DisaggSimInputs(
        concurrency=concurrency, input_len=100, output_len=3, prefill_workers=1,
        prefill_ranks=1, decode_workers=1, decode_ranks=1,
        prefill=SchedulerConfig(max_num_seqs=10, max_num_batched_tokens=budget,
                                max_model_len=100),
        chunked_prefill=True, decode_max_seqs=10, transfer_s=0.005, first_token_steps=fts,
        rounds=rounds)


def _fixed(inp: DisaggSimInputs):  # prefill step 0.1 s whatever its size, decode step 0.01 s
    return simulate_disagg(inp, prefill_step_s=lambda tokens, prompts: 0.1,
                           decode_step_s=lambda batch: 0.01)


def test_two_users_one_step_by_hand() -> None:
    # Both prompts fit one step (200 of 1000 tokens). Round 1 (the one measured of 3): both
    # users resend at 0.15 s; the prefill step ends at 0.25; the KV is there at 0.255; the idle
    # decode worker steps from 0.25 (empty, to 0.26), sees the KV at 0.26 and the first token
    # comes 1.5 steps later, 0.275: TTFT 0.125 s = 0.1 + (max(1, ceil(0.005 / 0.01)) + 1.5) x
    # 0.01, disagg_ratio.handover_s's rule. Its 2 more tokens end steps 7-9 (0.28, 0.29 ... the
    # last at 0.30): TPOT (0.30 - 0.275) / 2 = 12.5 ms.
    res = _fixed(_inputs())
    assert res.measured == 2
    assert res.ttft_ms == pytest.approx(125.0)
    assert res.tpot_ms == pytest.approx(12.5)


def test_one_prompt_per_step_by_hand() -> None:
    # A budget of 100 tokens: one prompt per step. Round 0: user 0's prompt 0-0.1 s, its last
    # token at 0.15; user 1's 0.1-0.2, its last at 0.25. Round 1: user 0 resends at 0.15 and
    # waits for the prefill step ending at 0.2; its own runs 0.2-0.3, the decode worker's
    # empty step 0.3-0.31, the first token at 0.31 + 0.015 = 0.325: TTFT 0.175. User 1
    # resends at 0.25: prefill 0.3-0.4, first token 0.425: TTFT 0.175.
    res = _fixed(_inputs(budget=100))
    assert res.ttft_ms == pytest.approx(175.0)
    assert res.tpot_ms == pytest.approx(12.5)


def test_without_connector_flow_the_first_token_is_the_handover() -> None:
    # first_token_steps None: the prefill samples the first token; TTFT = prefill + transfer.
    res = _fixed(_inputs(fts=None))
    assert res.ttft_ms == pytest.approx(105.0)


def test_ttft_nondecreasing_in_concurrency() -> None:
    # Doubling the users up to what one prefill step holds (16 prompts: 2 ranks x 8,192
    # tokens), TTFT never falls. The deterministic closed loop can split the users into cohorts
    # that each get a prefill step of their own (odd counts over 2 decode workers: 9 users
    # 86.9 ms against 8 users' 112.6; beyond 16: 195.1 ms at 16, 189.8 at 32), so between
    # doublings and past one step it is nondecreasing within 5 % only, and it climbs once the
    # prefill saturates (128, 256).
    def ttft(conc: int) -> float:
        inp = DisaggSimInputs(
            concurrency=conc, input_len=1024, output_len=64, prefill_workers=1,
            prefill_ranks=2, decode_workers=2, decode_ranks=1,
            prefill=SchedulerConfig(max_num_seqs=256, max_num_batched_tokens=8192,
                                    max_model_len=1024),
            chunked_prefill=True, decode_max_seqs=256, transfer_s=0.002,
            first_token_steps=1.5)
        return simulate_disagg(inp, prefill_step_s=lambda t, p: 0.01 + 2e-5 * t,
                               decode_step_s=lambda b: 0.008 + 1e-4 * b).ttft_ms

    low = [ttft(c) for c in (1, 2, 4, 8, 16)]
    assert all(b >= a - 1e-9 for a, b in zip(low, low[1:], strict=False))
    high = [ttft(c) for c in (16, 24, 32, 48, 64, 128, 256)]
    assert all(b >= 0.95 * a for a, b in zip(high, high[1:], strict=False))
    assert high[-1] > 1.5 * high[0]


def _five_users(lookahead: bool) -> DisaggSimInputs:
    return replace(_inputs(concurrency=5, budget=200, fts=1.0), prefill_lookahead=lookahead)


def test_prefill_lookahead_by_hand() -> None:
    # SGLang's overlap prefill loop (kvplan.engines.sglang.connectors): step k + 1 is formed
    # when step k starts. Five users, two prompts a step (200 of 200 tokens), steps of 0.1 s,
    # decode steps of 0.01 s, first token 1 step after the boundary that sees the KV.
    # Round 0: A 0-0.1 (users 0, 1), B 0.1-0.2 (2, 3), C 0.2-0.3 (4): C was formed at 0.1, as B
    # started, when only user 4 waited; users 0 and 1 (first token 0.12, last 0.14) resend at
    # 0.14 and run in D 0.3-0.4 (formed at 0.2); the KV is there at 0.405, seen on the decode
    # boundary 0.41, first token 0.42: TTFT 0.28. Users 2, 3 resend at 0.24, during C, after
    # D was formed: E 0.4-0.5, first 0.52, TTFT 0.28; user 4 at 0.34: F 0.5-0.6, first 0.62,
    # TTFT 0.28. Mean 280 ms.
    run = _Run(_five_users(True), lambda tokens, prompts: 0.1, lambda batch: 0.01)
    assert run.run().ttft_ms == pytest.approx(280.0)
    round1 = sorted((r.user, round(r.first_s, 6)) for r in run.done if r.round == 1)
    assert round1 == [(0, 0.42), (1, 0.42), (2, 0.52), (3, 0.52), (4, 0.62)]
    # Without it, C at 0.2 takes user 4 and user 0 (resent at 0.14): users 0, 1 get TTFT 0.18
    # and 0.28, 2 0.18, 3 0.28, 4 0.18: mean 220 ms.
    assert _fixed(_five_users(False)).ttft_ms == pytest.approx(220.0)


def test_random_rank_pick_is_reproducible_and_moot_on_one_rank() -> None:
    # One rank a worker: the random pick (SGLang's bootstrap_room % dp_size) is that rank.
    base = _inputs(concurrency=4, budget=200, fts=1.0)
    assert _fixed(replace(base, prefill_balance=BOOTSTRAP_ROOM)) == _fixed(base)
    # Four DP ranks: a fixed-seed draw, the same result run after run.
    dp = replace(base, prefill_ranks=4, prefill_balance=BOOTSTRAP_ROOM, concurrency=16)
    assert _fixed(dp) == _fixed(dp)


def _queued(run: _Run, rank: int, remaining: list[int], running: int) -> None:
    """Prompts on a prefill rank's queue (`remaining` tokens each), the first `running` of
    them scheduled already."""
    for n in remaining:
        req = _Req(rid=run.next_rid, user=0, round=0, sent_s=0.0, remaining=n,
                   prompt_len=100, output_len=run.inp.output_len, transfer_s=0.0)
        run.next_rid += 1
        run.p_queue[rank].append(req)
        run.p_tokens[rank] += n
    run.p_running[rank] += running


def test_prefill_rank_by_the_engines_balancer() -> None:
    # One prefill worker of two DP ranks, prompts of 100 tokens. Rank 0: one prompt waiting
    # (100 tokens); rank 1: three running, part-prefilled to 40 tokens left each (120).
    # Least loaded (no engine rule): rank 0, 100 < 120 tokens. vLLM's client
    # (vllm/v1/engine/core_client.py:1354, 4 x waiting + running): rank 0 scores 4, rank 1 3:
    # rank 1. TensorRT-LLM's heap (active tokens are whole prompts: 100 vs 300): rank 0.
    def pick(rule) -> int:
        run = _Run(replace(_inputs(), prefill_ranks=2, prefill_balance=rule),
                   lambda tokens, prompts: 0.1, lambda batch: 0.01)
        _queued(run, 0, [100], running=0)
        _queued(run, 1, [40, 40, 40], running=3)
        req = _Req(rid=run.next_rid, user=0, round=0, sent_s=0.0, remaining=100,
                   prompt_len=100, output_len=run.inp.output_len, transfer_s=0.0)
        run._enqueue_prefill(req, 0.0)
        return next(r for r, q in enumerate(run.p_queue) if req in q)

    assert pick(None) == 0
    assert pick(VLLM_DP_BALANCE) == 1
    assert pick(TRTLLM_ADP_BALANCE) == 0


def test_balancers_count_running_prompts_by_hand() -> None:
    # Four users on one worker of two ranks, a step of 150 tokens a rank (1.5 prompts of 100):
    # the counts the balancer reads stay those of the queues (every prompt done leaves them).
    inp = replace(_inputs(concurrency=4, budget=150), prefill_ranks=2,
                  prefill_balance=VLLM_DP_BALANCE)
    run = _Run(inp, lambda tokens, prompts: 0.1, lambda batch: 0.01)
    res = run.run()
    assert run.p_running == [0, 0] and all(not q for q in run.p_queue)
    # The vLLM balancer and the least-loaded pick agree here (every rank alike each time).
    assert res == _fixed(replace(inp, prefill_balance=None))


class _OneAtATime:
    """A decode admission holding one request at a time (a stub of the protocol)."""

    pool_tokens = 10**9
    page_tokens = 1
    max_running = 10
    recv_interval = 1  # new requests taken at every boundary

    def admits(self, state, queued: int, input_len: int, max_new_tokens: int) -> int:
        return min(queued, 1) if state.held == 0 else 0


def test_decode_admission_holds_the_prompt_by_hand() -> None:
    # Two users, a decode rank that admits one request at a time, the first token at the
    # transfer's end (fts None). A request runs prefill 0.1 s, transfer 0.005, one empty decode
    # step 0.01 (the KV lands mid-step), then 2 steps: 0.13 s from admission to its end. A
    # user resending at its request's end queues behind the other user's, admitted at that
    # request's end 0.13 s later: TTFT 0.13 + 0.105 = 0.235 s (without admission: 0.105).
    # Its first token at admission + 0.105, its last at admission + 0.13: TPOT 12.5 ms.
    res = _fixed(replace(_inputs(fts=None), decode_admission=_OneAtATime()))
    assert res.ttft_ms == pytest.approx(235.0)
    assert res.tpot_ms == pytest.approx(12.5)


def test_decode_admission_pages_are_all_returned() -> None:
    # SGLang's rule with pages of 4 (prompt 100, 3 tokens out): the pool the sim tracks is
    # whole again once every request has ended (3 held at most: 1,936 - 3 x 612 < 612).
    from kvplan.engines.sglang.decode_admission import SglangDecodeAdmission

    adm = SglangDecodeAdmission(pool_tokens=3 * 612 + 100, page_tokens=4, max_num_reqs=64,
                                max_running=64)
    run = _Run(replace(_inputs(concurrency=8, rounds=4), decode_admission=adm),
               lambda tokens, prompts: 0.1, lambda batch: 0.01)
    res = run.run()
    assert res.measured == 16
    assert run.d_alloc == [0] and run.d_tokens == [0] and run.d_pending == [0]
    assert run.d_by_phase == [[0, 0, 0, 0]]


# SGLang's input budget (kvplan.engines.sglang.options.MAX_PREFILL_TOKENS: --max-prefill-tokens
# 16,384, server_args.py:316 in 0.5.8.post1), beside the chunk a B200 prefill rank with TP
# attention takes (--chunked-prefill-size 16,384: cards of 160 GiB or more), for DeepSeek-R1's
# rows of 8,192- and 1,024-token prompts (tests/benches/disagg_rows.py).
def _sglang_tp_prefill(input_len: int, concurrency: int, *, input_budget: bool
                       ) -> DisaggSimInputs:
    from kvplan.engines.sglang.options import MAX_PREFILL_TOKENS, sglang_chunked_prefill_tokens
    from kvplan.hardware.gpus import get_gpu

    chunk = sglang_chunked_prefill_tokens(get_gpu("B200"))
    assert chunk == 16384 == MAX_PREFILL_TOKENS
    return replace(_inputs(concurrency=concurrency, budget=chunk), input_len=input_len,
                   prefill=replace(_inputs().prefill, max_num_seqs=1 << 30,
                                   max_num_batched_tokens=chunk, max_model_len=input_len),
                   prefill_input_budget=MAX_PREFILL_TOKENS if input_budget else None)


def test_sglang_input_budget_one_8192_prompt_a_step_by_hand() -> None:
    # Two prompts of 8,192 tokens fit the chunk of 16,384 together, and without the input
    # budget run in one step: test_two_users_one_step_by_hand's timeline, TTFT 125 ms. SGLang's
    # PrefillAdder takes the first (budget 16,384 -> 8,192 left) and refuses the second, its
    # 8,192 tokens >= the 8,192 left (schedule_policy.py 0.5.8.post1:715): one prompt a step,
    # test_one_prompt_per_step_by_hand's timeline, TTFT 175 ms.
    without = _fixed(_sglang_tp_prefill(8192, 2, input_budget=False))
    assert without.ttft_ms == pytest.approx(125.0)
    assert without.prefill_prompts_per_step == 2.0
    with_budget = _fixed(_sglang_tp_prefill(8192, 2, input_budget=True))
    assert with_budget.ttft_ms == pytest.approx(175.0)
    assert with_budget.tpot_ms == pytest.approx(12.5)
    assert with_budget.prefill_prompts_per_step == 1.0


def _first_step(inp: DisaggSimInputs, queued: int) -> list[int]:
    """The tokens each prompt takes in the first step of a worker with `queued` prompts."""
    run = _Run(inp, lambda tokens, prompts: 0.1, lambda batch: 0.01)
    for user in range(queued):
        run._send(user, 0, 0.0)
    run.events.clear()
    run._prefill_step(0, 0.0)
    (_, _, _, _, taken), = run.events
    return [n for _, sched in taken for _, n in sched]  # type: ignore[attr-defined]


def test_sglang_input_budget_fifteen_1024_prompts_a_step_by_hand() -> None:
    # 16 prompts of 1,024 tokens queued: the chunk alone takes all 16 (16,384 tokens); SGLang
    # takes prompts while each is below the budget left: the k-th joins while 1,024 < 16,384 -
    # (k - 1) x 1,024, i.e. k <= 15: 15,360 tokens, the 16th waits for the next step.
    assert _first_step(_sglang_tp_prefill(1024, 16, input_budget=False), 16) == [1024] * 16
    assert _first_step(_sglang_tp_prefill(1024, 16, input_budget=True), 16) == [1024] * 15
    # A prompt longer than the chunk still runs, chunked, as the step's first (16,384 of
    # 20,000), and no second prompt is cut to fill what is left.
    long = replace(_sglang_tp_prefill(20000, 2, input_budget=True), chunked_prefill=True)
    assert _first_step(long, 2) == [16384]


@given(input_len=st.integers(1, 20000), chunk=st.integers(1, 20000),
       extra=st.integers(0, 20000), queued=st.integers(1, 40))
def test_input_budget_property(input_len: int, chunk: int, extra: int, queued: int) -> None:
    # SGLang's budget is never below the chunk (16,384 against the chunk // dp-size): with it a
    # step takes no more than without, at least one prompt, every prompt after the first below
    # what was left of it, and it stops only where the next prompt is not (or the chunk ends).
    inp = replace(_sglang_tp_prefill(input_len, queued, input_budget=False),
                  prefill=replace(_inputs().prefill, max_num_seqs=1 << 30,
                                  max_num_batched_tokens=chunk, max_model_len=input_len))
    budget = chunk + extra
    free = _first_step(inp, queued)
    taken = _first_step(replace(inp, prefill_input_budget=budget), queued)
    assert 1 <= len(taken) <= len(free) and sum(taken) <= sum(free)
    for j in range(1, len(taken)):
        assert input_len < budget - sum(taken[:j])
    if len(taken) < len(free):
        assert input_len >= budget - sum(taken)


def test_first_token_at_the_join_boundary_by_hand() -> None:
    # first_token_steps 0 (TensorRT-LLM's generation server returns the context server's
    # token when it first schedules the request: kvplan.engines.trtllm.disagg_flow). Round 1
    # of 3: both users resend at 0.13 s (round 0's last token); the prefill step 0.13-0.23;
    # the KV is there at 0.235; the idle decode worker steps from 0.23 (empty, to 0.24) and
    # takes both in at 0.24, their first token then: TTFT 0.11 s = 0.1 + max(1, ceil(0.005 /
    # 0.01)) x 0.01 + 0 steps (disagg_ratio.handover_s). That step makes token 2 (0.25), the
    # next token 3 (0.26): TPOT (0.26 - 0.24) / 2 = one step, 10 ms (1.5 steps: 12.5 above).
    res = _fixed(_inputs(fts=0.0))
    assert res.measured == 2
    assert res.ttft_ms == pytest.approx(110.0)
    assert res.tpot_ms == pytest.approx(10.0)


def _polled_run(polled: bool) -> _Run:
    # One prompt a prefill step (budget 100), 20 output tokens, one round: user 0's prompt
    # 0-0.1 s, user 1's 0.1-0.2, both handed to the one decode worker (transfer 5 ms).
    inp = replace(_inputs(budget=100, fts=0.0, rounds=1), output_len=20, transfer_polled=polled)
    run = _Run(inp, lambda tokens, prompts: 0.1, lambda batch: 0.01)
    run.run()
    return run


def test_polled_transfer_by_hand() -> None:
    # TensorRT-LLM's generation server (kvplan.engines.trtllm.disagg_flow (b), py_executor.py
    # `_prepare_disagg_gen_init` / `_check_disagg_gen_transfer_status`). User 0 reaches the
    # idle worker at 0.1: taken in there, nothing else active, so the check blocks for the
    # transfer and the request is scheduled as it ends: first token 0.105. Its steps run from
    # 0.105 every 10 ms (step 1 at 0.105, step 11 at 0.205). User 1 arrives at 0.2 while it
    # runs: taken in at the boundary 0.205, its transfer done at 0.21, seen at the next
    # boundary, 0.215: its first token then. Its 19 more tokens end at 0.405: TPOT 10 ms.
    firsts = sorted(r.first_s for r in _polled_run(True).done)
    assert firsts == pytest.approx([0.105, 0.215])
    # Counted from the handover (transfer_polled False): the idle worker steps empty from 0.1
    # and takes user 0 in at 0.11; user 1's KV is there at 0.205, joined at that boundary
    # (the worker's steps run 0.11, 0.12, ... 0.21, 0.22, so at 0.21).
    firsts = sorted(r.first_s for r in _polled_run(False).done)
    assert firsts == pytest.approx([0.11, 0.21])
    last = max(_polled_run(True).done, key=lambda r: r.first_s)
    assert (last.last_s - last.first_s) / 19 == pytest.approx(0.01)


def test_polled_transfer_blocks_an_idle_worker_by_hand() -> None:
    # The fts 0 case above (test_first_token_at_the_join_boundary_by_hand) with the transfer
    # polled: every request reaches an idle worker, which waits 5 ms for the transfer instead
    # of a 10 ms empty step. Round 0: first token 0.105, last 0.125; round 1 sent at 0.125,
    # prefill 0.125-0.225, first token 0.23: TTFT 0.105 = prefill + transfer; TPOT one step.
    res = _fixed(replace(_inputs(fts=0.0), transfer_polled=True))
    assert res.measured == 2
    assert res.ttft_ms == pytest.approx(105.0)
    assert res.tpot_ms == pytest.approx(10.0)


def test_ttft_phases_by_hand() -> None:
    # The two hand cases above, their TTFT split (disagg_sim.TtftPhases). One step for both
    # prompts: sent at 0.15, the step starts at once (queue 0) and ends at 0.25 (prefill 100 ms),
    # the KV there at 0.255 (transfer 5 ms), the first token at 0.275 (decode side 20 ms: the
    # boundary at 0.26, then 1.5 steps of 10 ms). One prompt per step: user 0 waits 0.15 -> 0.2
    # and user 1 0.25 -> 0.3 (queue 50 ms each), then the same 100 + 5 + 20 ms.
    for budget, queue in ((1000, 0.0), (100, 50.0)):
        res = _fixed(_inputs(budget=budget))
        ph = res.phases
        assert ph is not None
        assert (ph.admission_ms, ph.prefill_queue_ms, ph.prefill_ms, ph.transfer_ms,
                ph.decode_side_ms) == pytest.approx((0.0, queue, 100.0, 5.0, 20.0))
        assert (ph.admission_ms + ph.prefill_queue_ms + ph.prefill_ms + ph.transfer_ms
                + ph.decode_side_ms) == pytest.approx(res.ttft_ms)


def test_sa_bench_burst_averaged_by_hand() -> None:
    # sa-bench averages every request of its measured run (kvplan.analysis.simulate.
    # bench_client), the users' first burst included. Three users, one prompt a step (budget
    # 100), one round: the prompts' steps end at 0.1, 0.2, 0.3 s; each then waits 5 ms for the
    # KV, the idle decode worker's empty 10 ms step and 1.5 steps: first tokens at 0.125,
    # 0.225, 0.325 (user 0 has left the decode worker by 0.15, user 1 by 0.25): TTFT 225 ms,
    # 100 ms of it in the prefill queue (0, 0.1, 0.2 s).
    inp = replace(_inputs(concurrency=3, budget=100, rounds=1), measure_all_rounds=True)
    res = _fixed(inp)
    assert res.measured == 3
    assert res.ttft_ms == pytest.approx(225.0)
    assert res.phases is not None and res.phases.prefill_queue_ms == pytest.approx(100.0)


def test_frontend_not_by_load_by_hand() -> None:
    # Three users, three single-seat decode workers. Least loaded: one each, every first token
    # at 0.125 s (the one-step case above). Drawn uniformly (random_workers; the draws of
    # Random(1): three prefill workers of one, then decode workers 0, 1, 1): users 1 and 2 share
    # worker 1; user 1 joins at 0.11 and ends with the step ending 0.15 (its 3 tokens: steps to
    # 0.12, 0.13, 0.14, 0.15), when user 2 joins: its first token at 0.165. Mean TTFT
    # (0.125 + 0.125 + 0.165) / 3.
    inp = replace(_inputs(concurrency=3, rounds=1), decode_workers=3, decode_max_seqs=1)
    assert _fixed(inp).ttft_ms == pytest.approx(125.0)
    assert _fixed(replace(inp, random_workers=True)).ttft_ms == pytest.approx(415.0 / 3)
    # One worker a role: nothing to draw between, the same as by load.
    one = replace(inp, decode_workers=1, decode_max_seqs=3)
    assert _fixed(replace(one, random_workers=True)) == _fixed(one)


def test_per_request_lengths_by_hand() -> None:
    # Two users, one request each (every round measured), lengths (100, 3) and (50, 5): one
    # prefill step of both (0.1 s), the KV on the decode side at 0.105 (the row's 5 ms) and
    # 0.1025 (5 ms x 50 / 100); the decode worker steps once empty (0.10-0.11), both join at
    # 0.11 and see their first token 1.5 steps on: 0.125 s, TTFT 125 ms. End steps 1 + 2 + 3 - 2
    # = 4 (ends 0.15) and 1 + 2 + 5 - 2 = 6 (ends 0.17): TPOT (0.025 / 2 + 0.045 / 4) / 2 =
    # 11.875 ms; the transfer phase the mean of 5 and 2.5 ms.
    inp = replace(_inputs(rounds=1), measure_all_rounds=True, lengths=((100, 3), (50, 5)))
    res = _fixed(inp)
    assert res.ttft_ms == pytest.approx(125.0) and res.tpot_ms == pytest.approx(11.875)
    assert res.phases is not None and res.phases.transfer_ms == pytest.approx(3.75)
    with pytest.raises(ValueError, match="lengths"):
        _fixed(replace(inp, lengths=((100, 3),)))  # fewer than the requests sent
    with pytest.raises(ValueError, match="lengths"):
        _fixed(replace(inp, lengths=((101, 3), (50, 5))))  # a prompt over input_len


@given(st.integers(1, 6), st.integers(1, 4), st.sampled_from([None, 1.5]),
       st.booleans())
def test_equal_lengths_are_the_fixed_run(concurrency: int, rounds: int, fts: float | None,
                                         admission: bool) -> None:
    # Every request given the row's own lengths: the same run as without `lengths`, SGLang's
    # admission (admits_each against admits) included.
    from kvplan.engines.sglang.decode_admission import SglangDecodeAdmission

    inp = _inputs(concurrency=concurrency, rounds=rounds, fts=fts)
    if admission:
        inp = replace(inp, decode_admission=SglangDecodeAdmission(
            pool_tokens=3 * 612 + 100, page_tokens=4, max_num_reqs=64, max_running=64))
    same = replace(inp, lengths=((inp.input_len, inp.output_len),) * (concurrency * rounds))
    assert _fixed(same) == _fixed(inp)


def test_admits_each_charges_each_request_its_own_prompt() -> None:
    # SGLang's rule, an idle rank of 3,000 free tokens (R = 512): prompts of 1,000 and 900 need
    # 1,512 and 1,412 (2,924 <= 3,000): both; a third of 100 (612) does not fit the 76 left.
    # At 1,000 each (`admits`): 1,512 then 1,512 > 1,488 left: one.
    from kvplan.engines.handover import DecodeRankState
    from kvplan.engines.sglang.decode_admission import SglangDecodeAdmission

    adm = SglangDecodeAdmission(pool_tokens=3000, page_tokens=1, max_num_reqs=64,
                                max_running=64)
    idle = DecodeRankState(free_tokens=3000, running=0, pending=0, running_tokens=0)
    assert adm.admits_each(idle, [(1000, 10), (900, 10), (100, 10)], 0) == 2
    assert adm.admits(idle, 3, 1000, 10) == 1


class _AdmitAll:
    """A decode admission that admits every request it has taken in, taking new requests in
    every `recv_interval` decode steps (SGLang's --scheduler-recv-interval; a stub)."""

    pool_tokens = 10**9
    page_tokens = 1
    max_running = 10

    def __init__(self, recv_interval: int) -> None:
        self.recv_interval = recv_interval

    def admits(self, state, queued: int, input_len: int, max_new_tokens: int) -> int:
        return queued

    def single_need(self, input_len: int, max_new_tokens: int) -> int:
        return 0

    def admits_each(self, state, heads, running_need: int) -> int:
        return len(list(heads))


def test_decode_recv_interval_by_hand() -> None:
    # disagg63 (kvplan.engines.sglang.decode_admission, "Taking requests in"). Two users, user 0
    # asking 2 tokens a request, user 1 40 (lengths in send order: rid 0 user 0, rid 1 user 1,
    # rid 2 user 0's second, rid 3 user 0's third, rids 4-5 user 1's), prefill steps 0.1 s,
    # decode steps 0.01 s, transfer 0.005 s, the first token at the transfer's end (fts None);
    # the decode worker takes requests in every 4 decode steps. Both first prompts are taken at
    # once (idle worker), prefilled 0-0.1 s, seated at the 0.11 boundary (a take: nothing
    # running yet). Rid 0 ends at 0.12 and user 0 resends (rid 2) while rid 1 decodes: the
    # boundaries 0.12, 0.13, 0.14 are the 1st-3rd since the take at 0.11, 0.15 the 4th, where
    # rid 2 is taken and admitted: prefill 0.15-0.25, first token 0.255, TTFT 0.135 s (0.105
    # taken at once), 0.03 of it admission. Rid 4 (user 1's second, measured too) is sent at
    # 0.50 when rid 1 ends, with nothing left running (rid 3 ended at 0.42): taken at once,
    # TTFT 0.105. Mean of the two measured (round 1): 0.120 s, admission 0.015 s.
    lengths = ((100, 2), (100, 40), (100, 2), (100, 2), (100, 2), (100, 2))
    base = replace(_inputs(fts=None), lengths=lengths)
    res = _fixed(replace(base, decode_admission=_AdmitAll(4)))
    assert res.measured == 2
    assert res.ttft_ms == pytest.approx(120.0)
    assert res.phases is not None and res.phases.admission_ms == pytest.approx(15.0)
    once = _fixed(replace(base, decode_admission=_AdmitAll(1)))
    assert once.ttft_ms == pytest.approx(105.0)
    assert once.phases is not None and once.phases.admission_ms == pytest.approx(0.0)
