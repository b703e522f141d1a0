"""The frozen prospective53 set (tests/data/sim_to_real/prospective53.json): every run names its
source, model config, GPU preset, vLLM version and measured figures, and the replay's requests
are the run's stated lengths (the full replay is tests.benches.prospective53_runs)."""

from __future__ import annotations

import functools

from tests.benches import (
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective_runs,
)

# The set's runs by id.
_runs = functools.partial(prospective_runs.runs_by_id, prospective53_runs.DATA)


def test_every_run_is_complete() -> None:
    doc = prospective_runs.load(prospective53_runs.DATA)
    # 4 DeepSeek-R1-0528 + 4 GLM-4.6 (vLLM 0.11.0) + 5 DeepSeek-V3.2 (vLLM 0.13.0), TP 8 on H200.
    assert len(doc["runs"]) == 13
    assert not prospective_runs.incomplete(doc)
    assert {(r["gpu"], r["tp"]) for r in doc["runs"]} == {("H200-141GB", 8)}
    # No page of this set is in an earlier set (a new page each; the URLs' paths differ).
    old = {src["url"].split("/docs/")[-1]
           for data in (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA)
           for src in prospective_runs.load(data)["sources"].values()}
    assert not old & {src["url"].split("/docs/")[-1] for src in doc["sources"].values()}


def test_requests_follow_the_run() -> None:
    # DeepSeek-R1-0528's 4K case: 500 prompts of 1,997,530 / 500 = 3,995.06 -> 3,995 tokens plus
    # the 3 tokens of DeepSeek-R1's chat template (<｜begin▁of▁sentence｜>, <｜User｜>,
    # <｜Assistant｜>; counted by hand), 100,000 / 500 = 200 out, all sent at t = 0 (no
    # --request-rate).
    reqs = prospective_runs.requests(_runs()["gpustack DeepSeek-R1-0528 H200 TP8 random 4000/200"])
    assert len(reqs) == 500
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(3998, 200, 0.0)}
    # GLM-4.6's default max_model_len is its max_position_embeddings, 202,752, set on the run
    # (the stand-in glm-4.5.json says 131,072).
    assert _runs()["gpustack GLM-4.6 H200 TP8 random 32000/100"]["max_model_len"] == 202752


def test_the_vllm_0_11_runs_ran_flashinfers_sampler() -> None:
    # gpustackfi61 (the data file's 'amended'): gpustack's runner image installs FlashInfer and
    # vLLM 0.11.0 runs its sampler whenever it imports; 0.13.0 (DeepSeek-V3.2) makes it opt-in
    # (from 0.11.1, vllm PR #26859), so those runs keep the default.
    doc = prospective_runs.load(prospective53_runs.DATA)
    assert "da76887" in doc["amended"] and "#26859" in doc["amended"]
    for run in doc["runs"]:
        assert run.get("flashinfer_sampler") is (True if run["vllm"] == "0.11.0" else None)
