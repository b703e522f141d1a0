"""The frozen prospective59 set (tests/data/sim_to_real/prospective59.json): every run names its
source and its own URL, a model config, a GPU preset, an SGLang release and measured figures;
none is a run of an earlier set; the replay's requests are the lengths SGLang's bench_serving
drew (they reproduce the printed totals); the replay takes the launch line's context length and
the checkpoint the launch line names (the full replay is tests.benches.prospective59_runs)."""

from __future__ import annotations

import functools
import json

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
    prospective59_runs,
    prospective_runs,
)

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA,
           prospective56_runs.DATA, prospective57_runs.DATA, prospective58_runs.DATA)
COOKBOOK = ("https://github.com/sgl-project/sgl-cookbook/blob/"
            "7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/docs/autoregressive/")

_runs = functools.partial(prospective_runs.runs_by_id, prospective59_runs.DATA)


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective59_runs.DATA)
    # DeepSeek-V3.1: 1000/1000 at concurrency 1 / 16 / 100, 1000/8000 and 8000/1000 at 1 / 16 /
    # 64 (9 runs); Llama-4-Maverick: 1000/1000 at 1 / 16 / 100 (3 runs); all SGLang on MI300X.
    assert len(doc["runs"]) == 12
    assert not prospective_runs.incomplete(doc)
    assert {run["engine"] for run in doc["runs"]} == {"sglang"}
    assert {(run["model"], run["sglang"]) for run in doc["runs"]} == {
        ("tests/data/configs/deepseek-v3.1.json", "0.5.7"),
        ("tests/data/configs/llama-4-maverick.json", "0.5.9")}
    assert {run["url"] for run in doc["runs"]} == {
        COOKBOOK + "DeepSeek/DeepSeek-V3_1.md", COOKBOOK + "Llama/Llama4.md"}
    old = [prospective_runs.load(data) for data in EARLIER]
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    # No earlier run served either checkpoint.
    assert not {run["model"] for d in old for run in d["runs"]} & {
        run["model"] for run in doc["runs"]}
    # Llama4.md is prospective52's page too: its '5.1' section (Llama-4-Scout) is 52's source;
    # this set's is the page's '5.2' section (Llama-4-Maverick), which 52 left for a later set.
    shared = {src["url"] for src in doc["sources"].values()} & {
        src["url"] for d in old for src in d["sources"].values()}
    assert shared == {COOKBOOK + "Llama/Llama4.md"}
    assert doc["sources"]["sglcookbook-llama-4-maverick-mi300x"]["stated"].startswith(
        "'5.2 Speed Benchmark'")
    assert prospective_runs.load(prospective52_runs.DATA)["sources"][
        "sglcookbook-llama-4-scout-mi300x"]["stated"].startswith("'5.1 Speed Benchmark'")
    # Two publishers, both also prospective52's (the section text says so).
    mine = {str(src["publisher"]).split(" (")[0] for src in doc["sources"].values()}
    theirs = {str(src.get("publisher", "")).split(" (")[0]
              for src in prospective_runs.load(prospective52_runs.DATA)["sources"].values()}
    assert mine == {"ChangLiu0709", "haic0"} and mine <= theirs
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 7


def test_requests_follow_the_run() -> None:
    # bench_serving's seed-1 draw (SGLang 0.5.7 and later: every prompt length uniform in
    # 1..1000, then every output length in 1..1000) gives the ten concurrency-1 requests 6,101
    # prompt and 4,220 output tokens, the page's "Total input tokens: 6101" and "Total generated
    # tokens: 4220"; all are available at t = 0 under --max-concurrency 1.
    run = _runs()["sgl-cookbook DeepSeek-V3.1 MI300X TP8 random 1000/1000 conc 1"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 10 and run["workload"]["max_concurrency"] == 1
    assert (sum(r.prompt_len for r in reqs), sum(r.output_len for r in reqs)) == (6101, 4220)
    for run in _runs().values():
        reqs = prospective_runs.requests(run)
        assert len(reqs) == run["workload"]["num_prompts"]
        assert sum(r.prompt_len for r in reqs) == run["measured"]["total_input_tokens"]
        assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"]
        assert {r.arrival_s for r in reqs} == {0.0}
        assert max(r.prompt_len + r.output_len for r in reqs) <= run["max_model_len"]


def test_the_first_evaluation_names_every_run() -> None:
    # The record typed in at the first evaluation covers exactly the frozen runs.
    assert {prospective59_runs.ID_PREFIX + key
            for key in prospective59_runs.FIRST_ROWS} == set(_runs())


def test_the_added_config_is_deepseek_v3s_architecture() -> None:
    # deepseek-ai/DeepSeek-V3.1's published config.json (SOURCES-seed.md) differs from
    # DeepSeek-V3's only in the FP8 scales' format (ue8m0) and the transformers version.
    configs = prospective_runs.REPO / "tests" / "data" / "configs"
    v31 = json.loads((configs / "deepseek-v3.1.json").read_text())
    v3 = json.loads((configs / "deepseek-v3.json").read_text())
    assert v31.pop("quantization_config") == {**v3.pop("quantization_config"),
                                              "scale_fmt": "ue8m0"}
    assert {k for k in v31 if v31[k] != v3.get(k)} == {"transformers_version"}


def test_the_replay_takes_the_launch_line() -> None:
    # DeepSeek-V3.1's launch line sets no --context-length: the config's 163,840;
    # Llama-4-Maverick's sets --context-length 1000000.
    for rid, context in (("sgl-cookbook DeepSeek-V3.1 MI300X TP8 random 1000/1000 conc 1",
                          163_840),
                         ("sgl-cookbook Llama-4-Maverick MI300X TP8 random 1000/1000 conc 1",
                          1_000_000)):
        run = _runs()[rid]
        spec = load_spec(str(prospective_runs.REPO / run["model"]))
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=Engine.sglang,
                                 engine_version=run["sglang"])
        sim, _ = setup(spec, inputs)
        assert run["max_model_len"] == context and sim.scheduler.max_model_len == context
