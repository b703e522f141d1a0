"""The disaggregated closed-loop simulation (kvplan.analysis.simulate.disagg_sim): a case worked
by hand and a property."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan.analysis.simulate.disagg_sim import DisaggSimInputs, _Run, simulate_disagg
from kvplan.analysis.simulate.scheduler import SchedulerConfig


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
    assert _fixed(replace(base, prefill_random_rank=True)) == _fixed(base)
    # Four DP ranks: a fixed-seed draw, the same result run after run.
    dp = replace(base, prefill_ranks=4, prefill_random_rank=True, concurrency=16)
    assert _fixed(dp) == _fixed(dp)


class _OneAtATime:
    """A decode admission holding one request at a time (a stub of the protocol)."""

    pool_tokens = 10**9
    page_tokens = 1
    max_running = 10

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
