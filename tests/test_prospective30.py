"""The frozen prospective30 set (tests/data/sim_to_real/prospective30.json): every run names its
source, model config, GPU preset, vLLM version and measured figures, and the replay's requests
are the run's stated lengths (no simulation here: tests.benches.prospective_runs does that)."""

from __future__ import annotations

from pathlib import Path

from kvplan.hardware.gpus import get_gpu
from tests.benches import prospective_runs

ROOT = Path(__file__).resolve().parents[1]


def test_every_run_is_complete() -> None:
    doc = prospective_runs.load()
    assert len(doc["runs"]) >= 10
    for run in doc["runs"]:
        assert run["source"] in doc["sources"], run["id"]
        assert doc["sources"][run["source"]]["url"].startswith("https://github.com/")
        assert (ROOT / run["model"]).is_file(), run["id"]
        assert get_gpu(run["gpu"]).name, run["id"]
        assert run["vllm"].count(".") == 2, run["id"]
        for key in ("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms", "mean_itl_ms"):
            assert run["measured"][key] > 0, (run["id"], key)


def test_requests_follow_the_run() -> None:
    doc = prospective_runs.load()
    by_id = {r["id"]: r for r in doc["runs"]}
    # gpustack's 4K case: 500 prompts of 1,997,942 / 500 = 3,996 tokens + Qwen3's 8-token chat
    # template, 200 out, all sent at t = 0 (no --request-rate).
    reqs = prospective_runs.requests(by_id["gpustack Qwen3-14B H100 random 4000/200"])
    assert len(reqs) == 500
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(4004, 200, 0.0)}
    # kvcached's rate-16 run: 500 Poisson arrivals, mean gap about 1/16 s.
    reqs = prospective_runs.requests(by_id["kvcached-h100 Qwen3-0.6B rate 16 seed 42"])
    assert len(reqs) == 500 and reqs[0].arrival_s == 0.0
    assert 0.8 < reqs[-1].arrival_s / (499 / 16) < 1.2
    assert {(r.prompt_len, r.output_len) for r in reqs} == {(512, 128)}
