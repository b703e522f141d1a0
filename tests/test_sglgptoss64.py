"""The sglgptoss64 forensic's pure parts (tests.benches.sglgptoss64): the silent gap, the
figures with it cut and the steady step on a three-request record worked by hand; its data file
against the figures Scicom's .txt files print (prospective56 / 61 hold them); and the FINDING's
claim about the stalls against the data file."""

from __future__ import annotations

import json

import pytest

from tests.benches import sglgptoss64 as g
from tests.benches.prospective_runs import load

# Three requests sent at 0. A: first token at 0.1 s, gaps 0.01, 1.0, 0.01 (tokens at 0.1,
# 0.11, 1.11, 1.12; 4 out); B: 0.2, then 0.9, 0.01 (0.2, 1.1, 1.11; 3 out); C: 1.05, then
# 0.03 (1.05, 1.08; 2 out).
DOC = {"ttfts": [0.1, 0.2, 1.05], "itls": [[0.01, 1.0, 0.01], [0.9, 0.01], [0.03]],
       "output_lens": [4, 3, 2], "input_lens": [10, 20, 30]}


def test_silent_gap() -> None:
    # Merged: 0.1, 0.11, 0.2, 1.05, 1.08, 1.1, 1.11, 1.11, 1.12: the longest empty interval is
    # 0.2 -> 1.05.
    assert g.silent_gap(DOC) == (pytest.approx(0.2), pytest.approx(1.05))


def test_figures_as_printed() -> None:
    f = g.figures(DOC)
    # TTFT (0.1 + 0.2 + 1.05) / 3 = 0.45 s, median 0.2; TPOT A 1.02 / 3 = 0.34, B 0.91 / 2 =
    # 0.455, C 0.03: mean 0.275, median 0.34; ITL 1.96 / 6.
    assert f["mean_ttft_ms"] == pytest.approx(450.0)
    assert f["median_ttft_ms"] == pytest.approx(200.0)
    assert f["mean_tpot_ms"] == pytest.approx(275.0)
    assert f["median_tpot_ms"] == pytest.approx(340.0)
    assert f["mean_itl_ms"] == pytest.approx(1960.0 / 6)


def test_figures_with_the_gap_cut() -> None:
    f = g.figures(DOC, (0.2, 1.05))
    # 0.85 s off C's TTFT (it ends at 1.05) and off the gaps spanning 0.2 -> 1.05: A's 1.0 ->
    # 0.15, B's 0.9 -> 0.05 (its gap starts at 0.2, the gap's start). TTFT 0.1, 0.2, 0.2: mean
    # 0.5 / 3; TPOT A 0.17 / 3, B 0.06 / 2, C 0.03; ITL (0.01 + 0.15 + 0.01 + 0.05 + 0.01 +
    # 0.03) / 6 = 0.26 / 6.
    assert f["mean_ttft_ms"] == pytest.approx(500.0 / 3)
    assert f["median_ttft_ms"] == pytest.approx(200.0)
    assert f["mean_tpot_ms"] == pytest.approx(1e3 * (0.17 / 3 + 0.03 + 0.03) / 3)
    assert f["median_tpot_ms"] == pytest.approx(30.0)
    assert f["mean_itl_ms"] == pytest.approx(260.0 / 6)


def test_steady_step_and_summary() -> None:
    gap = (0.2, 1.05)
    # A and B had their first token by 0.2; the gap after the spanning one: A's 0.01 (1.11 ->
    # 1.12), B's 0.01 (1.1 -> 1.11); C started after the stall and does not count.
    assert g.steady_step(DOC, gap, n=1) == pytest.approx(10.0)
    # Neither has two gaps after the spanning one.
    assert g.steady_step(DOC, gap, n=2) == 0.0
    # After the stall only C's first token (1.05): one prefill batch; a window of 0 still one.
    assert g.groups_after(DOC, gap) == 1
    # From 0.15 on: B's (0.2) and C's (1.05) first tokens, 0.85 s apart: two batches, one
    # with a window of a second.
    assert g.groups_after(DOC, (0.0, 0.15)) == 2
    assert g.groups_after(DOC, (0.0, 0.15), window_s=1.0) == 1
    s = g.summarize(DOC)
    assert s["first_tokens_before_gap"] == 2
    assert s["gap_s"] == pytest.approx(0.85)
    assert (s["input_tokens"], s["output_tokens"]) == (60, 9)


def _data() -> dict:  # type: ignore[type-arg]
    return json.loads(g.DATA.read_text())["runs"]


def test_data_file_is_of_the_printed_runs() -> None:
    """Every Scicom SGLang TP 8 length run of prospective56 / 61 (gpt-oss-120b and the dense
    models) has a summary whose recomputed figures are the .txt's printed ones (to the print's
    0.01 ms) and whose generated total is the printed one."""
    runs = _data()
    checked = 0
    for name in ("prospective56", "prospective61"):
        for run in load(g.DATA.parent / f"{name}.json")["runs"]:
            if not run["id"].startswith("scicom SGLang "):
                continue
            model, gpu = run["id"].split()[2:4]
            key = f"{model.replace('Llama-3.1', 'Llama3.1')} {gpu} {run['workload']['input_len']}"
            v, m = runs[key], run["measured"]
            for metric in ("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms", "median_tpot_ms",
                           "mean_itl_ms"):
                assert v["printed"][metric] == pytest.approx(m[metric], abs=0.006), (key, metric)
            if "total_generated_tokens" in m:
                assert v["output_tokens"] == m["total_generated_tokens"], key
            checked += 1
    assert checked == 28  # 7 model-GPU groups x 4 lengths


def test_the_stall_is_gpt_oss_only() -> None:
    """FINDING 2: every gpt-oss file has a silent interval of at least 1.04 s, in its prefill
    phase's end (77-89 first tokens before it, one or two prefill batches after); every dense
    file's is at most 0.36 s but one (Qwen3.5-27B 8,192 in, 0.77 s, from a record whose TTFT
    is 0)."""
    runs = _data()
    gptoss = {k: v for k, v in runs.items() if k.startswith("gpt-oss-120b ")}
    dense = {k: v for k, v in runs.items() if not k.startswith("gpt-oss-120b ")}
    assert len(gptoss) == 12 and len(dense) == 16
    assert min(v["gap_s"] for v in gptoss.values()) == pytest.approx(1.04, abs=0.005)
    assert all(77 <= v["first_tokens_before_gap"] <= 89 for v in gptoss.values())
    assert all(1 <= v["first_token_groups_after_gap"] <= 2 for v in gptoss.values())
    odd = [k for k, v in dense.items() if v["gap_s"] > 0.365]
    assert odd == ["Qwen3.5-27B H100 8192"]
    assert runs["Qwen3.5-27B H100 8192"]["gap_start_s"] == pytest.approx(0.0)
