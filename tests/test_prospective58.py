"""The frozen prospective58 set (tests/data/sim_to_real/prospective58.json): every run names its
source and its own URL, a model config, a GPU preset, a vLLM release and measured figures, none is
in an earlier set or from an earlier set's publisher, the replay's requests are the run's stated
lengths plus the chat template the totals show, and the replay takes the server's stated flags
(the full replay is tests.benches.prospective58_runs)."""

from __future__ import annotations

import functools

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from tests.benches import (
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective53b_runs,
    prospective54_runs,
    prospective56_runs,
    prospective57_runs,
    prospective58_runs,
    prospective_runs,
)

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA,
           prospective56_runs.DATA, prospective57_runs.DATA)

_runs = functools.partial(prospective_runs.runs_by_id, prospective58_runs.DATA)


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective58_runs.DATA)
    # Wentao274's H100 runs of run-id 01: test_01 (10 concurrencies), test_02 (5), test_03 (2),
    # test_04 (9) and test_05's 1,024 / 512 case (7); each URL is the run's own console log.
    assert len(doc["runs"]) == 33
    assert not prospective_runs.incomplete(doc)
    assert all(run["url"].startswith("https://github.com/Wentao274/vllm-benchmark-test/blob/")
               and run["url"].endswith(".log") for run in doc["runs"])
    old = [prospective_runs.load(data) for data in EARLIER]
    urls = {src["url"] for src in doc["sources"].values()}
    assert not urls & {src["url"] for d in old for src in d["sources"].values()}
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    mine = {str(src["publisher"]).split(" (")[0] for src in doc["sources"].values()}
    theirs = {str(src.get("publisher", "")).split(" (")[0] for d in old
              for src in d["sources"].values()}
    assert mine == {"Wentao274"} and not mine & theirs
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 8
    assert {prospective58_runs.suite_of(rid) for rid in _runs()} == set(
        prospective58_runs.SUITES)


def test_requests_follow_the_run() -> None:
    # test_01 at concurrency 16: 3,289,280 / 320 = 10,279 prompt tokens = the requested 10,240
    # + 39 of the chat template (the client sent /v1/chat/completions), 81,920 / 320 = 256 out,
    # all available at t = 0 (rate inf) under --max-concurrency 16.
    run = _runs()["Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 test_01 10240/256 chat conc 16 "
                  "(320 prompts)"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 320 and run["workload"]["max_concurrency"] == 16
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(10279, 256, 0.0)}
    for run in _runs().values():
        assert run["chat_template_tokens"] == 39
        reqs = prospective_runs.requests(run)
        assert len(reqs) == run["workload"]["num_prompts"]
        assert sum(r.prompt_len for r in reqs) == run["measured"]["total_input_tokens"]
        assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"]
        assert {r.arrival_s for r in reqs} == {0.0}
        # Every request fits the server's --max-model-len 196,608 (test_02: 194,599 + 1,024).
        assert max(r.prompt_len + r.output_len for r in reqs) <= run["max_model_len"]


def test_the_first_evaluation_names_every_run() -> None:
    # The record typed in at the first evaluation covers exactly the frozen runs.
    assert {prospective58_runs.ID_PREFIX + key
            for key in prospective58_runs.FIRST_ROWS} == set(_runs())


def test_the_replay_takes_the_servers_flags() -> None:
    # The deploy record: --max-num-seqs 64, --max-num-batched-tokens 8192,
    # --enable-expert-parallel over TP 8 (so EP 8), gpu-memory-utilization 0.88. run_one's
    # inputs carry them (without them, vLLM 0.20's H100 defaults would be 1,024 sequences and
    # no EP).
    run = next(iter(_runs().values()))
    spec = load_spec(str(prospective_runs.REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine=Engine.vllm, engine_version=run["vllm"],
                             mem_fraction=run["gpu_memory_utilization"],
                             max_num_seqs=run["max_num_seqs"],
                             max_num_batched_tokens=run["max_num_batched_tokens"],
                             expert_parallel=run["expert_parallel"])
    sim, _ = setup(spec, inputs)
    assert inputs.capacity is not None and inputs.capacity.ep == 8
    assert (sim.scheduler.max_num_seqs, sim.scheduler.max_num_batched_tokens) == (64, 8192)
    assert sim.scheduler.max_model_len == 196_608
