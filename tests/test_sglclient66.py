"""tests.benches.sglclient66: the decomposition of a client-mode TPOT into decode steps and
extend stalls (hand-worked), and the scripts' --scheduler-recv-interval it passes in its
counterfactual arm (read from InferenceX's script)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.benches import aiconfig_agg_runs as agg
from tests.benches import sglclient66


def test_split_hand_worked() -> None:
    # Steps (start s, seconds, extend): a 10 ms decode, a 100 ms extend (another request's
    # prompt), two 10 ms decodes. The request's first token comes at the first decode's end
    # (0.010 s) and its third and last at 0.130 s: span 120 ms over 3 - 1 = 2 gaps, so TPOT
    # 60 ms = decode (10 + 10) / 2 = 10 ms + extend 100 / 2 = 50 ms + other 0; one stall of
    # 100 ms. The first decode (before its first token) is not its; a one-token request has no
    # TPOT and is left out. The run's decode steps average 10 ms; it has one extend.
    steps = [(0.0, 0.010, False), (0.010, 0.100, True), (0.110, 0.010, False),
             (0.120, 0.010, False)]
    done = [SimpleNamespace(output_len=3, first_token_s=0.010, finish_s=0.130),
            SimpleNamespace(output_len=1, first_token_s=0.0, finish_s=0.010)]
    s = sglclient66.split(done, steps)
    assert s.tpot == pytest.approx(60.0)
    assert s.decode == pytest.approx(10.0)
    assert s.extend == pytest.approx(50.0)
    assert s.other == pytest.approx(0.0, abs=1e-9)
    assert (s.stalls, s.stall_ms, s.extends, s.requests) == (1.0, pytest.approx(100.0), 1, 1)
    assert s.decode_step_ms == pytest.approx(10.0)


def _row(suffix: str) -> dict[str, str]:
    return next(r for r in agg.rows() if r["id"].endswith(suffix))


def test_recv_interval_from_the_scripts() -> None:
    # SemiAnalysisAI/InferenceX benchmarks/single_node/dsr1_fp8_b200.sh (at 1cb92d21d):
    # TP 8: SCHEDULER_RECV_INTERVAL=30 from CONC 16, else 10.
    assert sglclient66.recv_interval(
        _row("deepseek_r1_b200_sxm_sglang_fp8_agg_1024x1024_c64_tp8_0_ep1_0_288")) == 30
    assert sglclient66.recv_interval(
        _row("deepseek_r1_b200_sxm_sglang_fp8_agg_1024x8192_c4_tp8_0_ep1_0_303")) == 10
    # qwen3.5_fp8_b200.sh (64c20b6b5): 10 below 16 users, 30 from 16.
    assert sglclient66.recv_interval(
        _row("qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c32_tp4_0_ep1_0_472")) == 30
    # A nightly build's row with no script read (sgl8k64.SCRIPTS): not known.
    nightly = _row("qwen3_5_b200_sglang_fp4_agg_1024x1024_c32_cfg708")
    assert sglclient66.recv_interval(nightly) is None
