"""The gptossttft63 forensic's pure parts (tests.benches.gptossttft63): the stall episodes, the
large gaps and the quantile on a two-request record worked by hand, and its data file against
the figures Scicom's .txt files print (prospective62 / 63 hold them): the summaries are of the
same runs."""

from __future__ import annotations

import json

import pytest

from tests.benches import gptossttft63 as g
from tests.benches.prospective_runs import load

# Two requests started at 0: A's first token at 0.1 s, then gaps 0.01, 0.6, 0.02 (tokens at
# 0.1, 0.11, 0.71, 0.73); B's at 0.2, then 0.7, 0.01 (0.2, 0.9, 0.91).
DOC = {"start_times": [0.0, 0.0], "ttfts": [0.1, 0.2], "itls": [[0.01, 0.6, 0.02], [0.7, 0.01]]}


def test_token_times() -> None:
    a, b = g.token_times(DOC)
    assert a == pytest.approx([0.1, 0.11, 0.71, 0.73])
    assert b == pytest.approx([0.2, 0.9, 0.91])


def test_stall_episodes_join() -> None:
    # Gaps over 0.5 s: A's (0.11, 0.71), B's (0.2, 0.9); B's starts 0.2 < 0.71 + 0.2: one
    # episode from 0.11 to max(0.71, 0.9) = 0.9 holding two gaps.
    [(a, b, n)] = g.stall_episodes(DOC)
    assert (a, b, n) == (pytest.approx(0.11), pytest.approx(0.9), 2)
    # With no joining window B's gap still starts inside A's (0.2 < 0.71): one episode.
    assert len(g.stall_episodes(DOC, join_s=0.0)) == 1
    # A 0.65 s threshold keeps B's 0.7 s gap only.
    [(a, b, n)] = g.stall_episodes(DOC, stall_s=0.65)
    assert (a, b, n) == (pytest.approx(0.2), pytest.approx(0.9), 1)


def test_large_gaps_and_quantile() -> None:
    big = g.large_gaps(DOC)
    assert big == pytest.approx([0.6, 0.02, 0.7])  # 0.01 is not above 0.015
    # Sorted 0.02, 0.6, 0.7: p10 index int(0.2) = 0, p50 int(1.0) = 1, p90 int(1.8) = 1.
    assert g.quantile(big, 0.1) == pytest.approx(0.02)
    assert g.quantile(big, 0.5) == pytest.approx(0.6)
    assert g.quantile(big, 0.9) == pytest.approx(0.6)


def test_summarize_by_hand() -> None:
    s = g.summarize(DOC)
    assert s["mean_ttft_ms"] == pytest.approx(150.0)
    assert s["median_ttft_ms"] == pytest.approx(150.0)
    assert (s["large_gaps"], s["stalls"]) == (3, 1)
    assert s["stall_s"] == pytest.approx(0.79)  # 0.9 - 0.11
    # A's TTFT window (0, 0.1) ends before the episode starts (0.11); B's (0, 0.2) overlaps.
    assert s["clear_requests"] == 1
    assert s["clear_mean_ttft_ms"] == pytest.approx(100.0)


def test_data_file_is_of_the_printed_runs() -> None:
    """Every Scicom April H100 TP8 run of prospective62 / 63 has a summary whose recomputed
    mean and median TTFT are the .txt's printed ones (to the print's 0.01 ms)."""
    runs = json.loads(g.DATA.read_text())["runs"]
    by_key = {(v["model"], v["input_len"], v["concurrency"]): v for v in runs.values()
              if v["layout"] == "TP8_DP1"}
    checked = 0
    for name in ("prospective62", "prospective63"):
        for run in load(g.DATA.parent / f"{name}.json")["runs"]:
            if not run["id"].startswith("scicom vLLM ") or " H100 TP8 " not in run["id"]:
                continue
            if run["source"] not in ("scicom-vllm-lengths", "scicom-vllm-lengths-c25-c50"):
                continue
            model = run["id"].split()[2]
            w = run["workload"]
            length = w["input_len"] + (1 if model.startswith("Llama") else 0)
            v = by_key[(model, length, w["max_concurrency"])]
            assert v["requests"] == w["num_prompts"], run["id"]
            assert v["mean_ttft_ms"] == pytest.approx(run["measured"]["mean_ttft_ms"], abs=0.006)
            assert v["median_ttft_ms"] == pytest.approx(run["measured"]["median_ttft_ms"],
                                                        abs=0.006)
            checked += 1
    assert checked >= 60


def test_prefills_per_large_step_by_hand() -> None:
    # DOC: the one gap in (15 ms, 0.5 s) is A's 0.02 s ending at 0.73, where no first token
    # arrives: one step of at most 50 ms that finished no prompt.
    assert g.prefills_per_large_step(DOC) == ({0: 1}, {})
    # A: tokens 0.1, 0.16 (a 0.06 s gap), 0.17; B's first token at 0.16; C's at 0.3; D's at
    # 0.14 then 0.161 (a 0.021 s gap). The two gap ends 0.16 and 0.161 are 1 ms apart: one step,
    # its gap the longer, 0.06 > 0.05; the first tokens within 3 ms of 0.16: B's only.
    doc = {"start_times": [0.0] * 4, "ttfts": [0.1, 0.16, 0.3, 0.14],
           "itls": [[0.06, 0.01], [0.01], [0.01], [0.021]]}
    assert g.prefills_per_large_step(doc) == ({}, {1: 1})
    # Split at 0.07 s instead: the same step is on the low side.
    assert g.prefills_per_large_step(doc, split_s=0.07) == ({1: 1}, {})
