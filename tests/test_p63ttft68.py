"""The p63ttft68 forensic's pure parts (tests.benches.p63ttft68): a saved result's summary on a
three-request record worked by hand, the run classes, and its data file against the figures
Scicom's .txt files print (prospective63.json holds them): the summaries are of the same runs."""

from __future__ import annotations

import json

import pytest

from tests.benches import p63ttft68 as p
from tests.benches.prospective_runs import load

# Three requests: A sent at 0 s, first token at 0.1 s, gaps 0.01, 0.6 (a stall: over 400 ms),
# 0.02; B sent at 0.05 s, first token after 0.2 s, gaps 0.5 (its start 0.25 s), 0.01; C sent at
# 1.0 s, first token after 1.3 s (over max(400 ms, 3 x the median 200 ms): hit), one gap 0.01.
DOC = {"start_times": [10.0, 10.05, 11.0], "ttfts": [0.1, 0.2, 1.3],
       "itls": [[0.01, 0.6, 0.02], [0.5, 0.01], [0.01]]}


def test_summary_by_hand() -> None:
    s = p.summary(DOC, 1)
    # A's 0.6 s gap starts at 0.1 + 0.01 = 0.11 s (110 ms); B's 0.5 s gap at 0.05 + 0.2 = 0.25 s
    # (250 ms): 140 ms later, within 200 ms: one stall at 110 ms, its longest gap 600 ms.
    assert s["stalls_ms"] == [[110.0, 600.0]]
    # TTFTs 100, 200, 1,300 ms: mean 533.33, median 200; C alone over max(400, 600) ms.
    assert s["mean_ttft_ms"] == pytest.approx(533.33)
    assert s["median_ttft_ms"] == pytest.approx(200.0)
    assert s["hit"] == 1
    assert s["mean_ttft_without_hit_ms"] == pytest.approx(150.0)
    # After the first send (0 ms), the sends at 50 and 1,000 ms are 950 ms apart: two
    # clusters of one, bunch 1.
    assert s["bunch"] == pytest.approx(1.0)


def test_bunch_by_hand() -> None:
    # C = 2: the first two sends (0, 1 ms) are the burst. After them 10, 12, 16 ms (each
    # within 5 ms of the one before: one cluster of 3) and 30 ms (alone): sizes 3, 3, 3, 1,
    # mean over the four sends (9 + 1) / 4 = 2.5.
    assert p.bunch([0.0, 1.0, 10.0, 12.0, 16.0, 30.0], 2) == pytest.approx(2.5)
    # 16 -> 22 ms is 6 ms: 10, 12 one cluster, 22 and 30 alone: (4 + 1 + 1) / 4 = 1.5.
    assert p.bunch([0.0, 1.0, 10.0, 12.0, 22.0, 30.0], 2) == pytest.approx(1.5)
    assert p.bunch([0.0, 1.0], 2) == 0.0


def test_two_stalls_apart() -> None:
    # B's gap moved 300 ms later (its first token at 0.5 s): 390 ms after A's, two stalls.
    doc = {**DOC, "ttfts": [0.1, 0.5, 1.3]}
    assert p.summary(doc, 1)["stalls_ms"] == [[110.0, 600.0], [550.0, 500.0]]


def test_data_file_is_of_the_printed_runs() -> None:
    """Every prospective63 run has a summary whose mean and median TTFT are the .txt's printed
    ones (to the print's 0.01 ms), and no other run."""
    runs = {r["id"]: r["measured"] for r in load(p.tf.DATA / "prospective63.json")["runs"]}
    doc = json.loads(p.STALLS.read_text())
    assert doc["commit"] == p.BENCHMAQ
    assert set(doc["runs"]) == set(runs)
    for rid, s in doc["runs"].items():
        assert s["mean_ttft_ms"] == pytest.approx(runs[rid]["mean_ttft_ms"], abs=0.011), rid
        assert s["median_ttft_ms"] == pytest.approx(runs[rid]["median_ttft_ms"], abs=0.011), rid
        assert s["mean_ttft_without_hit_ms"] <= s["mean_ttft_ms"] + 1e-9


def test_run_class() -> None:
    runs = {r["id"]: r for r in load(p.tf.DATA / "prospective63.json")["runs"]}
    cls = {rid: p.run_class(p.Split(set_name="prospective63", run=r)) for rid, r in runs.items()}
    assert cls["scicom vLLM gpt-oss-120b H100 TP8 random 128/128 conc 25 (1000 prompts)"] == (
        "gpt-oss-120b")
    assert cls["scicom vLLM Qwen3-32B H100 TP8 random 4096/128 conc 50 (500 prompts)"] == (
        "C <= 50, >= 2,048 tokens")
    assert cls["scicom vLLM Llama-3.1-70B H100 TP8 random 2047/128 conc 25 (500 prompts)"] == (
        "C <= 50, >= 2,048 tokens")  # Llama's prompts print one token fewer
    assert cls["scicom vLLM Qwen3-8B H100 TP8 random 512/128 conc 50 (1000 prompts)"] == (
        "C <= 50, <= 1,024 tokens, Qwen3-8B / 14B")
    assert cls["scicom vLLM Llama-3.1-70B H100 TP8 random 127/128 conc 25 (1000 prompts)"] == (
        "C <= 50, <= 1,024 tokens, Llama-70B / Qwen3-32B")
    assert cls["scicom vLLM Qwen3-14B H100 TP8 random 4096/128 conc 100 (500 prompts)"] == (
        "C >= 100, >= 2,048 tokens")
