"""The frozen prospective63 set (tests/data/sim_to_real/prospective63.json): every run names its
source and its own URL, a model config, a GPU preset, its engine's release and measured figures;
none is a run of an earlier set (by id and by URL), and none is of the concurrency the earlier
sets that read its repository kept at its length; the replay's requests reproduce the printed
totals and run as a closed loop at the run's concurrency on a fresh engine (the full replay is
tests.benches.prospective63_runs)."""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

from kvplan._util.errors import KvplanError
from kvplan.hardware.gpus import get_gpu
from tests.benches import (
    cost_bench,
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective53b_runs,
    prospective54_runs,
    prospective56_runs,
    prospective57_runs,
    prospective58_runs,
    prospective59_runs,
    prospective60_runs,
    prospective61_runs,
    prospective62_runs,
    prospective63_runs,
    prospective_runs,
)
from tests.benches.fitted_rows import FITTED, SHAPED_BY

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA,
           prospective56_runs.DATA, prospective57_runs.DATA, prospective58_runs.DATA,
           prospective59_runs.DATA, prospective60_runs.DATA, prospective61_runs.DATA,
           prospective62_runs.DATA)
SCICOM = ("https://github.com/Scicom-AI-Enterprise-Organization/llm-benchmaq/blob/"
          "123eefe103473a886b6610cd62cfd630406c7507/benchmarks/vllm/runpod_h100sxm/")
AGG = Path(__file__).resolve().parent / "data" / "sim_to_real" / "aiconfigurator_agg.csv.gz"

_runs = functools.partial(prospective_runs.runs_by_id, prospective63_runs.DATA)


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective63_runs.DATA)
    # Concurrency 25 and 50: 5 models x 4 lengths x 2 less gpt-oss-120b's two 4,096-token
    # files (38); concurrency 100: Llama-3.1-70B, Qwen3-8B and Qwen3-14B x 4 lengths (12).
    assert len(doc["runs"]) == 38 + 12
    assert not prospective_runs.incomplete(doc)
    assert {(run.get("engine", "vllm"), run["vllm"]) for run in doc["runs"]} == {
        ("vllm", "0.15.0")}
    assert {(run["gpu"], run["tp"]) for run in doc["runs"]} == {("H100-80GB", 8)}
    assert all(run["url"].startswith(SCICOM) and "_TP8_DP1_" in run["url"]
               for run in doc["runs"])
    assert len({run["url"] for run in doc["runs"]}) == 50
    old = [prospective_runs.load(data) for data in EARLIER]
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    assert not {run.get("url") for d in old for run in d["runs"]} & {
        run["url"] for run in doc["runs"]}
    with gzip.open(AGG, "rt") as f:
        agg = f.read()
    assert not any(run["url"] in agg for run in doc["runs"])
    # prospective56 kept the 1,024-token case (1,023 for Llama), prospective62 concurrency 10
    # and 200 at the other lengths: this set has neither.
    assert not {run["workload"]["input_len"] for run in doc["runs"]} & {1023, 1024}
    assert {run["workload"]["max_concurrency"] for run in doc["runs"]} == {25, 50, 100}
    assert {run["workload"]["max_concurrency"] for run in doc["runs"]
            if run["source"] == prospective63_runs.C100} == {100}
    assert all("benchmaq-h100x8" in run["url"]
               for run in doc["runs"] if run["source"] == prospective63_runs.C100)
    assert {src["publisher"].split(" (")[0] for src in doc["sources"].values()} == {"Scicom"}
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 5


def test_requests_follow_the_run() -> None:
    # Llama-3.1-70B, --random-input-len 4,096 at concurrency 25: the printed 2,047,500 input
    # tokens over 500 prompts is 4,095 a prompt (its tokenizer re-encodes each random prompt
    # one token short); 500 x 128 = 64,000 out (--ignore-eos), every request at t = 0.
    run = _runs()["scicom vLLM Llama-3.1-70B H100 TP8 random 4095/128 conc 25 (500 prompts)"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 500 and {r.arrival_s for r in reqs} == {0.0}
    assert sum(r.prompt_len for r in reqs) == run["measured"]["total_input_tokens"] == 2_047_500
    assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"] == 64_000
    # Qwen3-8B, 128 in at concurrency 100: 1,000 x 128 = 128,000 in and out.
    run = _runs()["scicom vLLM Qwen3-8B H100 TP8 random 128/128 conc 100 (1000 prompts)"]
    assert {(r.prompt_len, r.output_len) for r in prospective_runs.requests(run)} == {(128, 128)}
    assert run["measured"]["total_input_tokens"] == 128_000
    for run in _runs().values():
        w, m, reqs = run["workload"], run["measured"], prospective_runs.requests(run)
        assert len(reqs) == w["num_prompts"] and w["request_rate"] is None
        assert sum(r.prompt_len for r in reqs) == m["total_input_tokens"]
        assert sum(r.output_len for r in reqs) == m["total_generated_tokens"]


def test_the_replay_is_a_closed_loop_on_a_fresh_engine(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Every run on a fresh engine (no earlier batches), at its client concurrency.
    seen = []

    def stop(sim, requests, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((len(requests), kwargs["concurrency"]))
        raise KvplanError("stopped here")

    def warm(sim, earlier, requests, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("no run of this set is replayed after its server's earlier runs")

    monkeypatch.setattr(prospective_runs, "simulate", stop)
    monkeypatch.setattr(prospective_runs, "simulate_after", warm)
    for rid in ("scicom vLLM Qwen3-14B H100 TP8 random 2048/128 conc 50 (500 prompts)",
                "scicom vLLM Llama-3.1-70B H100 TP8 random 511/128 conc 100 (1000 prompts)"):
        assert prospective_runs.run_one(_runs()[rid]).refused == "stopped here"
    assert seen == [(500, 50), (1000, 100)]


def test_the_first_evaluation_names_every_run() -> None:
    assert prospective63_runs.FIRST_EVALUATION
    assert set(prospective63_runs.FIRST_ROWS) == set(_runs())


def test_no_run_shares_a_fitted_rows_configuration_or_shaped_a_rule() -> None:
    # The cost bench's fitted rows by model config, GPU, TP and engine: none is this set's;
    # no SHAPED_BY record names a run of it, and none is a fitted row.
    fitted = {r for f in FITTED.values() for r in f.fitted_on}
    engines = {"SGLang": "sglang", "TensorRT-LLM": "trtllm", "vLLM": "vllm"}
    keys = {(c.model, get_gpu(c.gpu).name, c.layout.tp,
             next((v for k, v in engines.items() if k in c.label), None))
            for c in (*cost_bench.PREFILL_CASES, *cost_bench.all_cases()) if c.label in fitted}
    assert not {rid for rid, run in _runs().items()
                if (Path(run["model"]).stem, get_gpu(run["gpu"]).name, run["tp"],
                    run.get("engine", "vllm")) in keys}
    assert not {r for e in SHAPED_BY for r in e.rows} & set(_runs())
    assert not fitted & set(_runs())


def test_every_run_is_in_one_group() -> None:
    for rid, run in _runs().items():
        result = prospective_runs.Result(run_id=rid, source=run["source"], measured={},
                                         simulated={}, served={}, preemptions=0,
                                         prefix_hit_rate=0.0)
        assert sum(len(prospective63_runs.of_model([result], m))
                   for m in prospective63_runs.MODELS) == 1
        assert sum(len(prospective63_runs.at_concurrency([result], c))
                   for c in prospective63_runs.CONCURRENCIES) == 1
        assert sum(len(prospective63_runs.at_length([result], n))
                   for n in prospective63_runs.LENGTHS) == 1


def test_one_run_replays() -> None:
    # A runner smoke on one short row (1,000 prompts of 128 / 128 at concurrency 100 on
    # Qwen3-8B, about a second): kvplan sizes and simulates it, default and --frontend, and
    # every compared figure is positive (the first evaluation's errors are in FIRST_ROWS; a
    # later rule may move them, so they are not pinned here).
    run = _runs()["scicom vLLM Qwen3-8B H100 TP8 random 128/128 conc 100 (1000 prompts)"]
    result = prospective_runs.run_one(run)
    assert not result.refused
    for figures in (result.simulated, result.served):
        assert all(figures[f"{metric}.{stat}"] > 0
                   for _, metric, stat in prospective_runs.PAIRS52)
    assert result.preemptions == 0
