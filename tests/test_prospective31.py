"""The frozen prospective31 set (tests/data/sim_to_real/prospective31.json): every run names its
source, model config, GPU preset, vLLM version and measured figures, and the replay's requests
are the run's stated lengths (the full replay is tests.benches.prospective31_runs)."""

from __future__ import annotations

import functools

from tests.benches import prospective31_runs, prospective_runs

# The set's runs by id.
_runs = functools.partial(prospective_runs.runs_by_id, prospective31_runs.DATA)


def test_every_run_is_complete() -> None:
    doc = prospective_runs.load(prospective31_runs.DATA)
    assert len(doc["runs"]) == 24
    assert not prospective_runs.incomplete(doc)
    assert all(run["vllm"].count(".") == 2 for run in doc["runs"])
    # No run of this set is in prospective30 (a new page each).
    old = {r["source"] for r in prospective_runs.load()["runs"]}
    assert not old & {r["source"] for r in doc["runs"]}


def test_requests_follow_the_run() -> None:
    # gpt-oss-20b's 4K case: 500 prompts of 1,999,249 / 500 = 3,998.5 -> 3,998 tokens plus the
    # 65 tokens of the harmony chat rendering (counted by hand), 52,309 / 500 = 104.6 -> 105
    # out, all sent at t = 0 (no --request-rate).
    reqs = prospective_runs.requests(_runs()["gpustack gpt-oss-20b H100 random 4000/200"])
    assert len(reqs) == 500
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(4063, 105, 0.0)}


def test_a_run_kvplan_refuses_is_reported_not_simulated() -> None:
    # Qwen3-32B at vLLM 0.11's default max_model_len 40,960: 64 layers x 8 KV heads x 128 x
    # 2 (K, V) x 2 bytes = 256 KiB a token, so one request holds 40,960 / 16 = 2,560 blocks
    # (10 GiB), more than kvplan's pool on an 80 GB H100: the run comes back refused.
    result = prospective_runs.run_one(_runs()["gpustack Qwen3-32B H100 random 128/4"])
    assert result.refused and "2,560 blocks" in result.refused
    assert result.simulated == {} and result.measured["mean_ttft_ms"] == 21648.67
