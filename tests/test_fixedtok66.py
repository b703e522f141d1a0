"""tests.benches.fixedtok66's arithmetic (issue 30: the fixed per-prompt-token excess), each
against a number worked by hand."""

from __future__ import annotations

import pytest

from tests.benches import fixedtok66 as f


def test_prefill_steps_one_chunk_at_both_lengths() -> None:
    # ceil(922 / 8,192) = 1, ceil(7,373 / 8,192) = 1, ceil(8,192 / 8,192) = 1,
    # ceil(8,193 / 8,192) = 2: the rows' prompts (<= 8,192) are one chunk at both ISLs.
    assert [f.prefill_steps(n, 8192) for n in (922, 7373, 8192, 8193)] == [1, 1, 1, 2]
    assert f.prefill_steps(7373, 2048) == 4  # 3 x 2,048 = 6,144 < 7,373 <= 8,192


def test_ungraphed_price_of_gpt_oss_step() -> None:
    # kvplan's count (kvplan.perf.vllm_ungraphed) 543 launches at TP 1, 616 at TP 2 (the
    # all-reduces and the lm_head's all-gather): 543 x 4.4 us = 2,389.2 us, 616 x 4.4 = 2,710.4.
    assert f.ungraphed_ms(1) == pytest.approx(2.3892)
    assert f.ungraphed_ms(2) == pytest.approx(2.7104)
    # Spread over the 6,451 more prompt tokens: 2,710.4 / 6,451 = 0.420 us a token at most.
    assert f.ungraphed_ms(8) * 1e3 / f.MORE_TOKENS == pytest.approx(0.42015, rel=1e-4)


def test_detok_prime_gate_follows_the_sdists() -> None:
    # detokenizer.py primes <= 24 ids at 0.16.0, every id at 0.17.0 and 0.18.0.
    assert not f.detok_prime("0.16.0")
    assert f.detok_prime("0.17.0") and f.detok_prime("0.18.0")


def test_after_host() -> None:
    # 0.18.0: 10.0 - 4.90 - 1.38 = 3.72; 0.16.0 (no whole-prompt prime): 13.4 - 4.90 = 8.50.
    assert f.after_host(10.0, "0.18.0", 4.90, 1.38) == pytest.approx(3.72)
    assert f.after_host(13.4, "0.16.0", 4.90, 1.38) == pytest.approx(8.50)


def test_bytes_an_hbm_bound_op_would_move() -> None:
    # 10 us x 4.8e12 B/s = 4.8e7 B = 48 MB a token.
    assert f.bytes_per_token_to_explain(10.0) == pytest.approx(48e6)


def test_lines_state_one_step_per_prompt() -> None:
    text = "\n".join(f.lines())
    assert "| gpt-oss-120b | 8,192 | 2,048 | 1 / 1 / 1 | yes / no |" in text
    assert "| MiniMax-M2.5 | 8,192 | 512 | 1 / 1 / 1 | no / no |" in text
    # median(4.90, 5.73, 4.85) = 4.90, median(1.51, 1.25) = 1.38: H200 TP 1 left 3.7.
    assert "| H200 | gpt-oss-120b | 0.18.0 | 1 | 10.0 | yes | 3.7 |" in text
