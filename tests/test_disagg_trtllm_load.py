"""Section 3j's load counterfactual (tests.benches.disagg_trtllm_load, trtdis57): Little's law
and the roles' rates worked by hand, and the section's lines on made-up rows."""

from __future__ import annotations

import pytest

from tests.benches.disagg_rows import PREFIX, Replay
from tests.benches.disagg_trtllm_load import (
    RoleRates,
    decode_role_rps,
    little_rps,
    load_lines,
    prefill_role_rps,
)


def test_rates_by_hand() -> None:
    # dsr1_h200_trtllm_fp8_disagg_1024x1024_c144_cfg303 as section 3j prints it: 144 users,
    # TTFT 1,037.0 ms, TPOT 20.17 ms, O 1,024: in flight 1,037.0 + 1,023 x 20.17 = 21,670.91
    # ms, so 144 / 21.67091 s = 6.6449 requests a second.
    assert little_rps(144, 1037.0, 20.17, 1024) == pytest.approx(6.6449, rel=1e-4)
    # 8 ranks of one prompt a step at 921 ms a step: 8,000 / 921 = 8.6862 prompts a second.
    assert prefill_role_rps(8, 921.0) == pytest.approx(8.6862, rel=1e-4)
    # 9 decode ranks of 16 requests, 1,023 steps of 20 ms each: 144,000 / 20,460 = 7.0381.
    assert decode_role_rps(9, 16, 1024, 20.0) == pytest.approx(7.0381, rel=1e-4)


def _row(name: str, conc: int, ttft: float, tpot: float, ours: float) -> Replay:
    return Replay(id=f"{PREFIX}dsr1_x_trtllm_fp8_disagg_1024x1024_c{conc}_{name}",
                  label="1P TP8 EP8 : 1D TP8 EP8, ...", measured_ttft_ms=ttft,
                  measured_tpot_ms=tpot, concurrency=conc, input_len=1024, output_len=1024,
                  ttft_ms=ours, tpot_ms=tpot)


def _rates(r: Replay, prefill_rps: float, pool: int) -> RoleRates:
    x = little_rps(r.concurrency or 0, r.measured_ttft_ms, r.measured_tpot_ms, r.output_len)
    return RoleRates(measured_rps=x, kvplan_rps=x, prefill_rps=prefill_rps, decode_rps=x,
                     prefill_slots=1, prefill_step_ms=50.0, pool_prompts=pool, prefill_ranks=1,
                     measured_ttft_s=r.measured_ttft_ms / 1e3)


def test_load_lines_by_hand() -> None:
    """Three loads of one deployment and one row of another, worked by hand."""
    rows = [_row("cfg1", 10, 300.0, 10.0, 100.0),    # X = 10 / 10.530 s = 0.9497/s
            _row("cfg1", 20, 330.0, 11.0, 100.0),    # X = 20 / 11.583 s = 1.7267/s
            _row("cfg1", 40, 2000.0, 12.0, 100.0),   # X = 40 / 14.276 s = 2.8019/s
            _row("cfg2", 100, 5000.0, 20.0, 10000.0)]  # X = 100 / 25.460 s = 3.9277/s
    rates = {r.id: _rates(r, 4.0 if "cfg2" in r.id else 20.0, 10 if "cfg2" in r.id else 100)
             for r in rows}
    text = "\n".join(load_lines(rows, rates))
    # Loads: cfg1 0.9497 / 20 = 0.047, 0.086, 0.140 (below 0.5); cfg2 3.9277 / 4 = 0.98
    # (at or above 0.9): TTFT ratios 100 / 300 = 0.33, 0.30, 0.05 (median 0.30) and 2.00.
    assert ("Measured rate at or above 0.9 x kvplan's context-server capacity: 1 of 4 "
            "(dsr1_x_trtllm_fp8_disagg_1024x1024_c100_cfg2 0.98 x); median TTFT ratio there "
            "2.00") in text
    assert "Below 0.5 x that capacity: 3 of 4, median TTFT ratio 0.30" in text
    # TTFT over time in flight: 2.85%, 2.85%, 14.01%, 19.64%: median (2.85 + 14.01) / 2 = 8.4%.
    assert "a median 8.4% of a request's time in flight (largest 19.6%)" in text
    # Held prompts X x TTFT / 1 rank: 0.28, 0.57, 5.60 of 100 and 19.6 of 10; shares 0.28%,
    # 0.57%, 5.6%, 196%: median (0.57 + 5.60) / 2 = 3.1%.
    assert ("a median 3.1% of the pool, at or over it on 1 of 4 "
            "(dsr1_x_trtllm_fp8_disagg_1024x1024_c100_cfg2 19.6 of 10)") in text
    # cfg1 c10 -> c40: C / TPOT rises (40 / 12) / (10 / 10) = 3.33, X 2.8019 / 0.9497 = 2.95,
    # above 0.8 x 3.33 = 2.67: it tracks the decode side; per-prompt time 1,000 / X: 1,053 ->
    # 357 ms.
    assert ("Deployments measured at two or more loads: 1; in 1 of them" in text
            and "c10 -> c40: 0.95 -> 2.80/s, per-prompt time if prefill-bound 1,053 -> 357 ms"
            in text)
    # TTFT / TPOT: 30, 30 below the highest load, 166.7 at it.
    assert ("in 1 of the 1 deployments measured at three or more loads "
            "(dsr1_x_trtllm_fp8_disagg_1024x1024_cfg1 30-30 steps at c10-c20 (167 at c40))"
            ) in text
    # At 64 or fewer users (c10, c20, c40; c100 is not): 30, 30 and 166.7 steps, median 30.
    assert ("The same count at 64 or fewer users, by lengths: ISL 1,024 / OSL 1,024: median 30 "
            "over 3 (from 30 to 167).") in text
    assert "| dsr1_x_trtllm_fp8_disagg_1024x1024_c100_cfg2 | 100 | 3.93 / 3.93 | 4.00 | 0.98 |" \
        in text


def test_load_lines_flat_deployment() -> None:
    """A deployment whose rate stays flat as users double (a context server at capacity)."""
    rows = [_row("cfg3", 10, 300.0, 10.0, 100.0),  # X = 0.9497/s
            _row("cfg3", 20, 11000.0, 10.0, 100.0)]  # X = 20 / 21.23 s = 0.9421/s
    rates = {r.id: _rates(r, 1.0, 100) for r in rows}
    text = "\n".join(load_lines(rows, rates))
    # C / TPOT doubles, X does not rise (0.9421 < 0.8 x 2 x 0.9497): not tracking.
    assert "Deployments measured at two or more loads: 1; in 0 of them" in text
    assert ("The others: dsr1_x_trtllm_fp8_disagg_1024x1024_cfg3 c10 -> c20: 0.95 -> 0.94/s, "
            "measured TTFT 300 -> 11,000 ms, 0.94 x kvplan's context capacity at the highest."
            ) in text
