"""The simulate bench's replay of SGLang bench_serving random runs (tests.benches.simulate_bench
.bench_serving_random): the lengths the run drew, checked against the totals its page printed."""

from __future__ import annotations

import pytest

from tests.benches.cost_cases import CASES
from tests.benches.fitted_rows import SHAPED_BY, SIM_LAUNCH_SHAPED, SIM_REPLAY_SHAPED
from tests.benches.simulate_bench import (
    _fitted_labels,
    _split,
    bench_serving_random,
    sglang_serving_cases,
)


def test_draw_reproduces_the_published_totals() -> None:
    # The SGLang cookbook's DeepSeek-R1 page (sgl-cookbook docs/autoregressive/DeepSeek/
    # DeepSeek-R1.md), bench_serving random 1000/1000, --num-prompts 10: "Total input tokens:
    # 6101", "Total generated tokens: 4210"; 8000/1000 at 320 prompts: 1273893 / 169680.
    # SGLang 0.5.6 bench_serving.py 1227-1236 at the defaults (seed 1, range ratio 0.0).
    ten = bench_serving_random(10, 1000, 1000)
    assert sum(r.prompt_len for r in ten) == 6101
    assert sum(r.output_len for r in ten) == 4210
    assert all(1 <= r.prompt_len <= 1000 and 1 <= r.output_len <= 1000 for r in ten)
    many = bench_serving_random(320, 8000, 1000)
    assert sum(r.prompt_len for r in many) == 1273893
    assert sum(r.output_len for r in many) == 169680


# Kimi-K2's page prints 49,668 input tokens at concurrency 16, every other page 39,668 for the
# same 80 prompts of 1000 in: a digit of the page, not another draw.
KIMI_TYPO = "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 16"


@pytest.mark.parametrize("case", [c for c in CASES if c.bench_random is not None],
                         ids=lambda c: c.label)
def test_every_random_row_matches_its_draw(case) -> None:
    # The rows keep the page's mean lengths (total / prompts): the draw's means are the same,
    # to one token (pages count generated tokens as drawn or one more each; MiniMax-M2.5's
    # 0.5.8 page a few input tokens fewer, the prompt retokenized).
    assert case.requests is not None and case.bench_random is not None
    drawn = bench_serving_random(case.requests, *case.bench_random)
    mean_in = sum(r.prompt_len for r in drawn) / case.requests
    mean_out = sum(r.output_len for r in drawn) / case.requests
    assert abs(mean_out - case.output_len) <= 1.5
    if case.label != KIMI_TYPO:
        assert abs(mean_in - case.input_len) <= 1.5


def test_the_replay_record_names_exactly_the_random_rows() -> None:
    # Every row replayed at its drawn lengths was read before that replay was written
    # (SIM_REPLAY_SHAPED), and the record names no other row.
    random_rows = {c.label for c in CASES if c.bench_random is not None}
    assert {r for shaped in SIM_REPLAY_SHAPED for r in shaped.rows} == random_rows


def test_the_eager_launch_record_names_simulated_sglang_rows() -> None:
    # The rows whose TTFT (or DeepSeek-R1's ITL at 100) was read before the SGLang simulator's
    # prefill steps paid the eager launch (SIM_LAUNCH_SHAPED): SGLang serving rows of the page,
    # split apart from the held-out ones unless a cost-model rule already took them (SHAPED_BY).
    cases = {c.label: c for c in sglang_serving_cases()}
    fitted = _fitted_labels()
    named = [r for shaped in SIM_LAUNCH_SHAPED for r in shaped.rows]
    assert len(named) == len(set(named)) == 24 and set(named) <= set(cases)
    cost_shaped = {r for shaped in SHAPED_BY for r in shaped.rows}
    for label in named:
        want = ("held out, shaped a cost-model rule" if label in cost_shaped
                else "held out, shaped the eager launch")
        assert _split(cases[label], fitted) == want
