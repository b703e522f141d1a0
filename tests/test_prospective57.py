"""The frozen prospective57 set (tests/data/sim_to_real/prospective57.json): every run names its
source and its own URL, a model config, a GPU preset, a vLLM release and measured figures, none is
in an earlier set or from an earlier set's publisher, and the replay's requests are the run's
stated lengths, checked against the saved results' totals (the full replay is
tests.benches.prospective57_runs)."""

from __future__ import annotations

import functools

import pytest

from tests.benches import (
    dashboard_log57,
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective53b_runs,
    prospective54_runs,
    prospective56_runs,
    prospective57_runs,
    prospective_runs,
)

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA,
           prospective56_runs.DATA)

_runs = functools.partial(prospective_runs.runs_by_id, prospective57_runs.DATA)


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective57_runs.DATA)
    # Anyscale: the archived TP8 sweep (6), three TP2 runs and the TP4 baseline; the vLLM
    # perf-dashboard: one H200 TP8 run.
    assert len(doc["runs"]) == 11
    assert not prospective_runs.incomplete(doc)
    assert all(run["url"].startswith("https://github.com/") and run["url"].endswith(".json")
               for run in doc["runs"])
    old = [prospective_runs.load(data) for data in EARLIER]
    urls = {src["url"] for src in doc["sources"].values()}
    assert not urls & {src["url"] for d in old for src in d["sources"].values()}
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    mine = {str(src["publisher"]).split(" (")[0] for src in doc["sources"].values()}
    theirs = {str(src.get("publisher", "")).split(" (")[0] for d in old
              for src in d["sources"].values()}
    assert mine == {"Anyscale", "vLLM perf-dashboard"} and not mine & theirs
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 11


def test_requests_follow_the_run() -> None:
    # The TP4 baseline: 2,560,000 / 320 = 8,000 prompt tokens and 320,000 / 320 = 1,000 out per
    # request (--ignore-eos), all available at t = 0 (rate 1e9) under --max-concurrency 64; no
    # chat template (/v1/completions).
    run = _runs()["anyscale Ray Serve vLLM gpt-oss-120b H100 TP4 1 replica 8000/1000 conc 64 "
                  "(320 prompts)"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 320 and run["workload"]["max_concurrency"] == 64
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(8000, 1000, 0.0)}
    for run in _runs().values():
        reqs = prospective_runs.requests(run)
        assert len(reqs) == run["workload"]["num_prompts"]
        assert sum(r.prompt_len for r in reqs) == run["measured"]["total_input_tokens"]
        assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"]
        assert {r.arrival_s for r in reqs} == {0.0}


def test_anyscale_prompt_counts_are_the_clients_rule() -> None:
    # prefill_decode/run_bm.sh: NUM_PROMPTS = 5 x the concurrency for a concurrency sweep.
    for rid, run in _runs().items():
        if rid.startswith("anyscale"):
            assert run["workload"]["num_prompts"] == 5 * run["workload"]["max_concurrency"]


def test_the_first_evaluation_names_every_run() -> None:
    # The record typed in at the freeze's commit covers exactly the frozen runs.
    assert set(prospective57_runs.FIRST_ROWS) == set(_runs())
    assert prospective57_runs.DASHBOARD in _runs()


def test_the_dashboard_pool_with_the_servers_max_num_seqs() -> None:
    # The server log: 115.89 GiB of KV cache per GPU, 13,502,608 tokens (max_num_seqs 64). kvplan
    # with the same max_num_seqs sizes within 2 % of it; the replay (vLLM's default max_num_seqs)
    # sizes less, and neither pool binds 64 requests of 2,048 tokens (131,072 tokens).
    run = _runs()[prospective57_runs.DASHBOARD]
    gib, tokens = prospective57_runs.kv_pool(run, 64)
    assert abs(tokens / prospective57_runs.LOGGED_KV_TOKENS - 1) < 0.02
    assert abs(gib / prospective57_runs.LOGGED_KV_GIB - 1) < 0.02
    _, default_tokens = prospective57_runs.kv_pool(run, None)
    assert 64 * 2048 < default_tokens < tokens


def test_the_dashboard_log_window_is_the_clients_work() -> None:
    # tests.benches.dashboard_log57: the server log's five 10-s lines 676-1448 (00:23:37 ->
    # 00:24:27). Prompt tokens: 10 x (6,552.4 + 13,105.4 + 6,552.6 + 13,105.4 + 6,552.9) =
    # 458,687 = 447.9 prompts of the client's 1,024 tokens, i.e. 7 rounds of 64 (448): the log
    # and the client's fixed lengths agree. Generated: 10 x 46,070.0 = 460,700 tokens, within
    # 0.5 % of the 7 rounds' 7 x 64 x 1,024 = 458,752. At 64 a step, 7,198.4 steps x 6.317 ms
    # = 45.47 s of the 50: 4.53 s / 458,687 = 9.9 us a prompt token.
    w = dashboard_log57.window()
    assert round(w.prompt_tokens) == 458_687 and round(w.prompts) == 7 * 64
    assert abs(w.generated_tokens / (7 * 64 * 1024) - 1) < 0.005
    assert w.seconds == 50.0 and abs(w.decode_s - 45.47) < 0.01
    assert abs(w.prefill_s_per_token * 1e6 - 9.87) < 0.01


def test_the_dashboard_log_against_kvplans_steps() -> None:
    # What the page's paragraph says of kvplan's cost model, held so that a change to the cost
    # model that moves it shows here: the decode step of 64 requests is below the client's
    # median ITL (6.23 vs 6.32 ms since tpslope66 priced Marlin's padded shapes, 5.90 before),
    # the prefill per prompt token below the log's (7.88 vs 9.9 us since tpslope66; 7.27
    # since hopperops65 charged the norms' whole rows, kvplan.perf.norm_traffic; 6.92 since
    # moedefault63's experts' shape table: gpt-oss's MXFP4 experts at its bf16
    # first point 0.34, not the dense 0.70; 4.59 before it, with Marlin, the run's forced
    # kernel, since gptosshopper62; 3.42 before that), and the window's work priced under its
    # 50 s (48.5; 45.7 before tpslope66); the experts the chunk step's largest op (42.2 ms;
    # 37.0 before tpslope66, 18.0
    # before the table;
    # the all-reduce 17.3; Triton's pricing gave 10.7).
    run = _runs()[prospective57_runs.DASHBOARD]
    w, k = dashboard_log57.window(), dashboard_log57.kvplan_steps(run)
    assert k.decode_s * 1e3 < dashboard_log57.DECODE_STEP_MS
    assert k.prefill_s_per_token < w.prefill_s_per_token
    assert w.steps * k.decode_s + w.prompt_tokens * k.prefill_s_per_token < w.seconds
    assert dict(k.dense_by_op)["experts"] > dict(k.dense_by_op)["tp_all_reduce"]
    assert k.prefill_s_per_token * 1e6 == pytest.approx(7.88, abs=0.01)


def test_anyscales_runs_ran_flashinfers_sampler() -> None:
    # gpustackfi61 (the data file's 'amended'): Anyscale's SETUP.md lists flashinfer-python
    # 0.2.14.post1 beside vllm==0.11.0, whose V1 sampler runs it whenever it imports; the
    # perf-dashboard run (0.15.1: opt-in) keeps the default.
    doc = prospective_runs.load(prospective57_runs.DATA)
    assert "flashinfer-python==0.2.14.post1" in doc["amended"]
    for run in doc["runs"]:
        assert run.get("flashinfer_sampler") is (
            True if run["source"].startswith("anyscale") else None), run["id"]


def test_the_dashboard_run_forced_marlin() -> None:
    # gptosshopper62 (the data file's 'amended'): perf-dashboard benchmark/run.sh:142 exports
    # VLLM_MXFP4_USE_MARLIN=1 (its server log: 'Using Marlin backend'), so its replay runs
    # --mxfp4-backend marlin; no other run of the set names a kernel.
    doc = prospective_runs.load(prospective57_runs.DATA)
    assert "run.sh:142" in doc["amended"] and "VLLM_MXFP4_USE_MARLIN=1" in doc["amended"]
    for run in doc["runs"]:
        assert run.get("mxfp4_backend") == (
            "marlin" if run["id"] == prospective57_runs.DASHBOARD else None), run["id"]
