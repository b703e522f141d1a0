"""The frozen prospective53b set (tests/data/sim_to_real/prospective53b.json): every run names
its source, model config, GPU preset, vLLM release and measured figures, none is in an earlier
set, and the replay's requests are the run's stated lengths (the full replay is
tests.benches.prospective53b_runs)."""

from __future__ import annotations

import functools

from tests.benches import (
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective53b_runs,
    prospective_runs,
)

# The set's runs by id.
_runs = functools.partial(prospective_runs.runs_by_id, prospective53b_runs.DATA)


def test_every_run_is_complete() -> None:
    doc = prospective_runs.load(prospective53b_runs.DATA)
    # Qwen3-Next-80B-A3B (B200 TP 4) and Step-3.5-Flash (H200 TP 4), vllm-project/recipes.
    assert len(doc["runs"]) == 2
    assert not prospective_runs.incomplete(doc)
    # No publisher of the earlier vLLM sets (gpustack, kvcached).
    assert not any(word in src["url"] for src in doc["sources"].values()
                   for word in ("gpustack", "kvcached"))
    # No page of this set is in an earlier set.
    old = {src["url"] for data in (prospective_runs.DATA, prospective31_runs.DATA,
                                   prospective52_runs.DATA, prospective53_runs.DATA)
           for src in prospective_runs.load(data)["sources"].values()}
    assert not old & {src["url"] for src in doc["sources"].values()}
    # What a page does not state is listed: both releases are assumed, not read.
    assert all("the vLLM release: not stated" in src["assumed"]
               for src in doc["sources"].values())
    assert len(doc["skipped"]) == 11


def test_requests_follow_the_run() -> None:
    # Qwen3-Next: 2,043,736 / 1,000 = 2,043.7 -> 2,044 tokens in, 957,462 / 1,000 = 957.5 ->
    # 957 out (no --ignore-eos: outputs stopped early, modelled at the mean), the completions
    # endpoint (no chat template), 1,000 requests (the client's default --num-prompts) under
    # --max-concurrency 256, all available at t = 0 (no --request-rate).
    run = _runs()["vllm-recipes Qwen3-Next-80B-A3B-Instruct B200 TP4 random 2048/1024 conc 256"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 1000 and run["workload"]["max_concurrency"] == 256
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(2044, 957, 0.0)}
    # Step-3.5-Flash: 204,700 / 100 = 2,047 in, 102,400 / 100 = 1,024 out, 10 at a time.
    run = _runs()["vllm-recipes Step-3.5-Flash H200 TP4 random 2048/1024 conc 10"]
    assert {(r.prompt_len, r.output_len) for r in prospective_runs.requests(run)} == {
        (2047, 1024)}


def test_a_model_kvplan_has_not_read_at_the_run_s_release_is_refused() -> None:
    # Step-3.5-Flash's layers were read in vLLM 0.32's models/step3p5.py only: at the run's
    # (assumed) 0.16.0 the replay is refused with the reason, not guessed.
    run = _runs()["vllm-recipes Step-3.5-Flash H200 TP4 random 2048/1024 conc 10"]
    result = prospective_runs.run_one(run)
    assert "Step3p5ForCausalLM at vLLM 0.16.0" in result.refused
    assert not result.simulated
