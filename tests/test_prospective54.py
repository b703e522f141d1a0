"""The frozen prospective54 set (tests/data/sim_to_real/prospective54.json): every run names
its source, model config, GPU preset, engine release and measured figures, none is in an earlier
set or from an earlier set's publisher, and the replay's requests are the run's stated lengths
(vLLM) or bench_serving's own draw (SGLang), checked against the printed totals (the full replay
is tests.benches.prospective54_runs)."""

from __future__ import annotations

import contextlib
import functools
import io

from tests.benches import (
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective53b_runs,
    prospective54_runs,
    prospective_runs,
)

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA)


# The set's runs by id.
_runs = functools.partial(prospective_runs.runs_by_id, prospective54_runs.DATA)


def test_every_run_is_complete() -> None:
    doc = prospective_runs.load(prospective54_runs.DATA)
    # CloudRift: GLM-4.6 8 x H200 (conc 1, 512), Qwen3.6-35B-A3B 2 x PRO 6000 (conc 16);
    # SGLang cookbook (Xinyuan Tong): MiniMax-M2.7 2 x GB300 (conc 1, 100).
    assert len(doc["runs"]) == 5
    assert not prospective_runs.incomplete(doc)
    # No publisher of the earlier sets: not gpustack or kvcached, no earlier source's page, and
    # no SGLang cookbook contributor of prospective52 (by name) or vllm-project/recipes
    # contributor of prospective53b.
    urls = {src["url"] for src in doc["sources"].values()}
    assert not any(word in url for url in urls for word in ("gpustack", "kvcached",
                                                               "vllm-project/recipes"))
    old = [prospective_runs.load(data) for data in EARLIER]
    assert not urls & {src["url"] for d in old for src in d["sources"].values()}
    old_ids = {run["id"] for d in old for run in d["runs"]}
    assert not old_ids & set(_runs())
    cookbook = prospective_runs.load(prospective52_runs.DATA)
    names = {str(src["publisher"]).split(" (")[0] for src in cookbook["sources"].values()}
    mine = {str(src["publisher"]).split(" (")[0] for src in doc["sources"].values()}
    assert mine == {"CloudRift", "Xinyuan Tong"} and not mine & names
    # What a source does not state is listed per source; the skipped sources with why.
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 9


def test_vllm_requests_follow_the_run() -> None:
    # GLM-4.6 at 512: 2,045,447 / 2,048 = 998.75 -> 999 prompt tokens plus the 5 of GLM's chat
    # template (the chat endpoint), 1,000 out (--ignore-eos: 2,048,000 / 2,048), all available
    # at t = 0 (no --request-rate) under --max-concurrency 512.
    run = _runs()["cloudrift GLM-4.6 H200 TP8 chat random 1000/1000 conc 512"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 2048 and run["workload"]["max_concurrency"] == 512
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(1004, 1000, 0.0)}
    # The single-query run: 99,839 / 100 = 998.39 -> 998 + 5.
    run = _runs()["cloudrift GLM-4.6 H200 TP8 chat random 1000/1000 conc 1"]
    assert {(r.prompt_len, r.output_len) for r in prospective_runs.requests(run)} == {
        (1003, 1000)}


def test_sglang_requests_reproduce_the_printed_totals() -> None:
    # bench_serving's seed-1 draw as SGLang 0.5.7 and later make it (outputs from 1): the
    # printed 'Total input tokens' / 'Total generated tokens' of both MiniMax-M2.7 runs.
    for rid, n in (("sgl-cookbook MiniMax-M2.7 GB300 TP2 random 1000/1000 conc 1", 10),
                   ("sgl-cookbook MiniMax-M2.7 GB300 TP2 random 1000/1000 conc 100", 500)):
        run = _runs()[rid]
        reqs = prospective_runs.requests(run)
        assert len(reqs) == n
        assert sum(r.prompt_len for r in reqs) == run["measured"]["total_input_tokens"]
        assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"]


def test_a_class_the_release_does_not_serve_is_refused() -> None:
    # The frozen input for Qwen3.6-35B-A3B is the language model's own class
    # (Qwen3_5MoeForCausalLM), which vLLM serves from 0.27 only as kvplan reads it: at the
    # run's stated 0.20.1 the replay is refused with the reason, not guessed.
    run = _runs()["cloudrift Qwen3.6-35B-A3B RTX-PRO-6000-Max-Q TP2 random 2000/2000 conc 16"]
    result = prospective_runs.run_one(run)
    assert "Qwen3_5MoeForCausalLM is served by vLLM from 0.27" in result.refused
    assert not result.simulated


def test_the_run_table_prints_no_frontend_figures_for_an_sglang_run() -> None:
    figures = {"ttft_ms.mean": 100.0, "ttft_ms.p50": 100.0, "tpot_ms.mean": 10.0,
               "tpot_ms.p50": 10.0, "itl_ms.mean": 10.0}
    measured = {"mean_ttft_ms": 50.0, "median_ttft_ms": 50.0, "mean_tpot_ms": 8.0,
                "median_tpot_ms": 8.0, "mean_itl_ms": 8.0}
    result = prospective_runs.Result(run_id="x", source="s", measured=measured,
                                     simulated=figures, served={}, preemptions=0,
                                     prefix_hit_rate=0.0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        prospective_runs.print_run_table([result])
    # 100 / 50 - 1 = +100 %, 10 / 8 - 1 = +25 %; the two --frontend columns "-".
    assert out.getvalue().splitlines()[-1] == (
        "| x | 50.0 / 50.0 / 8.00 / 8.00 / 8.00 | 100.0 / 100.0 / 10.00 / 10.00 / 10.00 | "
        "+100.0% | +100.0% | +25.0% | +25.0% | +25.0% | 0 | - | - |")


def test_the_official_v0_11_0_image_ran_flashinfers_sampler() -> None:
    # gpustackfi61 (the data file's 'amended'): vllm/vllm-openai v0.11.0 installs FlashInfer
    # (docker/Dockerfile:371-416); only the CloudRift GLM-4.6 runs (0.11.0) say so.
    doc = prospective_runs.load(prospective54_runs.DATA)
    assert "docker/Dockerfile:371-416" in doc["amended"]
    for run in doc["runs"]:
        assert run.get("flashinfer_sampler") is (
            True if run["id"].startswith("cloudrift GLM-4.6") else None), run["id"]
