"""The gptossjit64 forensic's pure parts (tests.benches.gptossjit64): the triton_kernels BLOCK_M
rule at its bucket edges, the prefill step placement and the bucket replay on records worked by
hand, and the FINDING's claims against its data file."""

from __future__ import annotations

import json

import pytest

from tests.benches import gptossjit64 as g


@pytest.mark.parametrize(("tokens", "expected"), [
    # tokens x 4 // 128 per expert; at most 64: max(16, min(next_pow2(2 x), 64)).
    (1, 16),      # 4 // 128 = 0 -> 1; 2 -> 16
    (287, 16),    # 1,148 // 128 = 8; 16
    (288, 32),    # 1,152 // 128 = 9; 18 -> 32
    (543, 32),    # 2,172 // 128 = 16; 32
    (544, 64),    # 2,176 // 128 = 17; 34 -> 64
    (2079, 64),   # 8,316 // 128 = 64; 128 -> capped 64
    (2080, 128),  # 8,320 // 128 = 65 > 64: next_pow2(65) = 128
    (8192, 128),  # 256 -> capped 128
])
def test_block_m_edges(tokens: int, expected: int) -> None:
    assert g.block_m(tokens) == expected


def test_prefill_steps() -> None:
    # Cumulative 5,000 / 10,000 / 16,384 / 16,484 in steps of 8,192: the last token of each in
    # step 0, 1, 1 (16,383 // 8,192), 2.
    assert g.prefill_steps([5000, 5000, 6384, 100]) == [0, 1, 1, 2]


# Three requests sent at 0: A (8,192 in) first token 0.1 s, then 2.0 s; B (8,192) 2.0, then 0.1;
# C (100) 2.01, then 0.09. Tokens 0.1, 2.0, 2.01, 2.1 x 3: the silent interval is 0.1 -> 2.0.
DOC = {"ttfts": [0.1, 2.0, 2.01], "itls": [[2.0], [0.1], [0.09]],
       "input_lens": [8192, 8192, 100], "output_lens": [2, 2, 2]}


def test_summarize_by_hand() -> None:
    s = g.summarize(DOC)
    # Steps: A in 0, B in 1, C in 2 (16,484 tokens, 3 steps, the last 100). Within 0.02 s of
    # the interval's end: B (step 1) and C (step 2): results step 2; stalled step min(3, 2).
    assert (s["steps"], s["remainder"], s["input_tokens"]) == (3, 100, 16484)
    assert (s["results_step"], s["stalled_step"]) == (2, 2)
    assert s["gap_s"] == pytest.approx(1.9)
    assert s["first_token_s"] == pytest.approx(0.1)
    assert (s["full_block_m"], s["remainder_block_m"], s["bench_warmup_tokens"]) == (128, 16, 8192)


def test_bucket_replay_by_hand() -> None:
    first = {"bench_warmup_tokens": 38, "full_block_m": 128, "remainder_block_m": 64}
    second = {"bench_warmup_tokens": 1062, "full_block_m": 128, "remainder_block_m": 128}
    # SGLang start-up runs 1-512 tokens (16, 32): the first run meets 128 then 64; the second
    # nothing new. vLLM's start-up runs 8,192 and 1-1,024 (all four): nothing new at all.
    assert g.bucket_replay([first, second]) == [[128, 64], []]
    assert g.bucket_replay([first, second], g.VLLM_STARTUP_TOKENS) == [[], []]
    # A run whose bench warm-up prompt is in 544-2,079 tokens compiles 64 untimed.
    assert g.bucket_replay([{**first, "bench_warmup_tokens": 1062}]) == [[128]]


def test_finding_against_data() -> None:
    runs = json.loads(g.DATA.read_text())["runs"]
    assert len(runs) == 12
    at_remainder = [k for k, r in runs.items() if r["stalled_step"] == r["steps"] - 1]
    at_last_full = [k for k, r in runs.items() if r["stalled_step"] == r["steps"] - 2]
    assert len(at_remainder) == 8
    assert sorted(at_last_full) == ["A100 4096", "A100 8192", "H100 8192", "H200 4096"]
    for key, r in runs.items():
        assert r["remainder_block_m"] == (64 if key.endswith(" 1024") else 128)
    for gpu in g.GPTOSS_GPUS:
        chain = [runs[f"{gpu} {n}"] for n in g.LENGTHS]
        # The bucket rule: a new BLOCK_M in the 1,024 run only, yet every run has a stall.
        assert g.bucket_replay(chain) == [[128, 64], [], [], []]
        assert all(r["gap_s"] > 1.0 for r in chain)
        assert 2.9 < chain[0]["first_token_s"] < 3.05
