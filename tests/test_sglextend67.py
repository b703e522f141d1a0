"""tests.benches.sglextend67: what the measured TPOT leaves for SGLang's extend stalls and the
extend price that room implies at kvplan's count (hand-worked)."""

from __future__ import annotations

import pytest

from kvplan.analysis.simulate.workload import RequestSpec
from tests.benches import sglextend67


def test_room_is_the_measured_tpot_less_the_decode_share() -> None:
    # Row 263 (DeepSeek-R1 B200 TP8, 1,024 / 1,024, C 16): measured TPOT 13.18 ms, kvplan's
    # decode share 15.04 ms a token: 13.18 - 15.04 = -1.86 ms, no room for any extend.
    assert sglextend67.room(13.18, 15.04) == pytest.approx(-1.86)
    assert sglextend67.room(22.0, 14.5) == pytest.approx(7.5)


def test_implied_extend_price() -> None:
    # kvplan: 20 stalls of 150 ms over a request's 1,000 gaps = 3.0 ms a token. A room of
    # 1.5 ms a token holds the same 20 stalls at 1.5 x 1,000 / 20 = 75 ms each = 150 x 1.5 / 3.
    assert sglextend67.implied_extend_ms(1.5, 3.0, 150.0) == pytest.approx(75.0)
    # A negative room implies a negative price (the decode share alone is above the measured).
    assert sglextend67.implied_extend_ms(-0.6, 3.0, 150.0) == pytest.approx(-30.0)
    # No extend stall: nothing to price.
    assert sglextend67.implied_extend_ms(1.5, 0.0, 0.0) is None


def test_one_extend_takes_every_request_the_receive_found() -> None:
    """The count the bench reads (SGLang 0.5.9 scheduler.py: one non-blocking recv_requests per
    loop iteration, :1148, :1229-1250; a prefill batch first, :1935-1938, taking the whole
    waiting queue while the budgets last, :2053-2114), 10 ms a step, overlap off, interval 1.
    A (100 in, 10 out) at 0: prefilled 0-10 ms, decodes 10-20. B and C, sent at 12 and 15 ms
    (during that decode), are both taken at 20 ms by ONE extend, 20-30 ms (first tokens at
    30 ms). D, sent at 35 ms during the decode 30-40, gets its own, 40-50. So three extends
    for four prompts, and A sits through two: its 10 tokens are 1 at 10 ms, 2 at 20, 3 at 40,
    then 7 decodes from 50 ms: it finishes at 120 ms."""
    from tests.test_simulate_sglang import _recv_engine

    specs = [RequestSpec(arrival_s=0.0, prompt_len=100, output_len=10),
             RequestSpec(arrival_s=0.012, prompt_len=100, output_len=5),
             RequestSpec(arrival_s=0.015, prompt_len=100, output_len=5),
             RequestSpec(arrival_s=0.035, prompt_len=100, output_len=5)]
    done = {r.rid: r for r in _recv_engine(1).run(specs).finished}
    assert [done[i].first_token_s for i in range(4)] == pytest.approx(
        [0.010, 0.030, 0.030, 0.050])
    assert done[0].finish_s == pytest.approx(0.120)
