"""The minimax61 forensic's arithmetic (tests/benches/minimax61_forensic.py), by hand."""

from __future__ import annotations

import pytest

from tests.benches.minimax61_forensic import PrefillPremium, seen_prefill_ms, service_ms


class _Flat:
    """A step cost of 10 ms a step plus 1 ms a token."""

    full_attention_only = True

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return 0.010 + 0.001 * (len(decode_contexts) + sum(n for _, n in chunks))


def test_service_ms() -> None:
    # 100 ms to the first token, then 127 more tokens at 16 ms: 100 + 127 x 16 = 2,132 ms.
    assert service_ms(100.0, 16.0, 128) == pytest.approx(2132.0)


def test_seen_prefill_ms() -> None:
    # TPOT 20 ms, decode-only step 18 ms, 1,025 tokens out: (20 - 18) x 1,024 = 2,048 ms over
    # the 64 other prompts of a 65-seat loop = 32 ms a prompt.
    run = {"measured": {"mean_tpot_ms": 20.0, "median_itl_ms": 18.0},
           "workload": {"max_concurrency": 65, "input_len": 100, "output_len": 1025},
           "chat_template_tokens": 39}
    assert seen_prefill_ms(run) == pytest.approx(32.0)


def test_prefill_premium() -> None:
    cost = PrefillPremium(_Flat(), 0.050, 1e-5)  # type: ignore[arg-type]
    # 4 decodes only: 10 + 4 ms, no premium.
    assert cost.seconds(decode_contexts=[5] * 4, chunks=[]) == pytest.approx(0.014)
    # 4 decodes and a 1,000-token chunk: 10 + 1,004 ms, plus 50 ms + 1,000 x 10 us = 60 ms.
    assert cost.seconds(decode_contexts=[5] * 4, chunks=[(0, 1000)]) == pytest.approx(1.074)
    assert cost.full_attention_only is False
