"""The frozen prospective64 set (tests/data/sim_to_real/prospective64.json): every run names its
source and its own URL, a model config, a GPU preset, its SGLang release, the statistic it
published (P50) and its figures; none is a run of an earlier set (by id and by URL); the
replay's requests reproduce the cookbook's command and run as a closed loop at the run's
concurrency on a fresh engine; a run is compared on its own statistic only (the full replay is
tests.benches.prospective64_runs)."""

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
    prospective64_runs,
    prospective_runs,
)
from tests.benches.fitted_rows import FITTED, SHAPED_BY

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA,
           prospective56_runs.DATA, prospective57_runs.DATA, prospective58_runs.DATA,
           prospective59_runs.DATA, prospective60_runs.DATA, prospective61_runs.DATA,
           prospective62_runs.DATA, prospective63_runs.DATA)
SEARCH63 = Path(__file__).resolve().parent / "data" / "sim_to_real" / "sglsearch63.json"
AGG = Path(__file__).resolve().parent / "data" / "sim_to_real" / "aiconfigurator_agg.csv.gz"

_runs = functools.partial(prospective_runs.runs_by_id, prospective64_runs.DATA)


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective64_runs.DATA)
    # Qwen3.6-35B-A3B on B200, B300 and H200 (6), Qwen3.5-9B on H100, H200, B200 and B300 (8),
    # Qwen3.5-27B on H200, B200 and B300 (6): each at concurrency 1,024 and 4,096.
    assert len(doc["runs"]) == 6 + 8 + 6
    assert not prospective64_runs.incomplete(doc)
    assert {(run["engine"], run["sglang"], run["tp"]) for run in doc["runs"]} == {
        ("sglang", "0.5.15", 1), ("sglang", "0.5.16", 1)}
    assert {run["gpu"] for run in doc["runs"]} == {"H100-80GB", "H200", "B200", "B300"}
    assert {run["statistic"] for run in doc["runs"]} == {"p50"}
    assert all(set(run["measured"]) == {"median_ttft_ms", "median_tpot_ms"}
               for run in doc["runs"])
    assert all(run["url"].startswith("https://github.com/sgl-project/sglang/")
               for run in doc["runs"])
    old = [prospective_runs.load(data) for data in EARLIER]
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    assert not {run.get("url") for d in old for run in d["runs"]} & {
        run["url"] for run in doc["runs"]}
    with gzip.open(AGG, "rt") as f:
        agg = f.read()
    assert not any(run["url"] in agg for run in doc["runs"])
    assert {src["publisher"].split(" (")[0] for src in doc["sources"].values()} == {"dougyster"}
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 11


def test_the_runs_are_stop_62s_candidates_plus_the_h200_cells() -> None:
    # Every (model, GPU, concurrency, P50 TTFT, P50 TPOT) sglsearch63.json listed is a run
    # here with the same figures; the two runs more are the H200 Qwen3.6 cells (0.5.16).
    search = prospective_runs.load(SEARCH63)["candidates"]
    listed = {(c["model"], c["gpu"], c["workload"]["max_concurrency"],
               c["published_p50"]["ttft_ms"], c["published_p50"]["tpot_ms"])
              for key in ("qwen3.6", "qwen3.5") for c in search[key]["cells"]}
    frozen = {(run["model"], run["gpu"], run["workload"]["max_concurrency"],
               run["measured"]["median_ttft_ms"], run["measured"]["median_tpot_ms"]): run
              for run in _runs().values()}
    assert listed <= set(frozen)
    more = [run for key, run in frozen.items() if key not in listed]
    assert {(run["gpu"], run["sglang"], run["gpu_memory_utilization"]) for run in more} == {
        ("H200", "0.5.16", 0.92)}
    assert len(more) == 2


def test_requests_follow_the_cookbook_command() -> None:
    # --random-input-len 8192 --random-output-len 1024 --random-range-ratio 1.0: bench_serving
    # draws randint(8192, 8193) = 8,192 in and randint(1024, 1025) = 1,024 out for every
    # prompt; numPromptsByConc {1024: 2048, 4096: 8192}; every request at t = 0.
    run = _runs()["dougyster SGLang Qwen3.5-27B B300 TP1 random 8192/1024 conc 4096 "
                  "(8192 prompts)"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 8192 and {r.arrival_s for r in reqs} == {0.0}
    assert {(r.prompt_len, r.output_len) for r in reqs} == {(8192, 1024)}
    for run in _runs().values():
        w = run["workload"]
        assert w["num_prompts"] == 2 * w["max_concurrency"] and w["request_rate"] is None
        assert (w["input_len"], w["output_len"], w["random_range_ratio"]) == (8192, 1024, 1.0)


def test_the_replay_is_a_closed_loop_on_a_fresh_engine(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen = []

    def stop(sim, requests, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((len(requests), kwargs["concurrency"]))
        raise KvplanError("stopped here")

    def warm(sim, earlier, requests, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("no run of this set is replayed after its server's earlier runs")

    monkeypatch.setattr(prospective_runs, "simulate", stop)
    monkeypatch.setattr(prospective_runs, "simulate_after", warm)
    for rid in ("dougyster SGLang Qwen3.6-35B-A3B H200 TP1 random 8192/1024 conc 1024 "
                "(2048 prompts)",
                "dougyster SGLang Qwen3.5-9B H100 TP1 random 8192/1024 conc 4096 (8192 prompts)"):
        assert prospective_runs.run_one(_runs()[rid]).refused == "stopped here"
    assert seen == [(2048, 1024), (8192, 4096)]


def test_a_p50_run_is_compared_on_its_medians_only() -> None:
    # B200 Qwen3.6 at 1,024: measured P50 TTFT 206,078 ms and P50 TPOT 22.45 ms. A replay of
    # p50s 103,039 ms and 24.695 ms is -50.0 % and +10.0 % (103,039 / 206,078 - 1 = -0.5;
    # 24.695 / 22.45 - 1 = 0.1); its means (made 10x off here) are not compared.
    rid = "dougyster SGLang Qwen3.6-35B-A3B B200 TP1 random 8192/1024 conc 1024 (2048 prompts)"
    run = _runs()[rid]
    result = prospective_runs.Result(
        run_id=rid, source=run["source"], measured=run["measured"],
        simulated={"ttft_ms.p50": 103_039.0, "tpot_ms.p50": 24.695, "ttft_ms.mean": 2e6,
                   "tpot_ms.mean": 224.5, "itl_ms.mean": 224.5, "e2e_ms.mean": 1.0,
                   "e2e_ms.p50": 1.0},
        served={}, preemptions=0, prefix_hit_rate=0.0)
    errors = prospective64_runs.compared(result)
    assert set(errors) == {"TTFT", "TPOT"}
    assert abs(errors["TTFT"] + 0.5) < 1e-12 and abs(errors["TPOT"] - 0.1) < 1e-12
    line = prospective64_runs.medians_line("x", [result])
    assert line == "| x | 1 of 1 | 50.0% (1) | 10.0% (1) | - | - |"


def test_the_first_evaluation_names_every_run() -> None:
    assert prospective64_runs.FIRST_EVALUATION
    assert set(prospective64_runs.FIRST_ROWS) == set(_runs())


def test_no_run_shares_a_fitted_rows_configuration_or_shaped_a_rule() -> None:
    fitted = {r for f in FITTED.values() for r in f.fitted_on}
    engines = {"SGLang": "sglang", "TensorRT-LLM": "trtllm", "vLLM": "vllm"}
    keys = {(c.model, get_gpu(c.gpu).name, c.layout.tp,
             next((v for k, v in engines.items() if k in c.label), None))
            for c in (*cost_bench.PREFILL_CASES, *cost_bench.all_cases()) if c.label in fitted}
    assert not {rid for rid, run in _runs().items()
                if (Path(run["model"]).stem, get_gpu(run["gpu"]).name, run["tp"],
                    run["engine"]) in keys}
    assert not {r for e in SHAPED_BY for r in e.rows} & set(_runs())
    assert not fitted & set(_runs())


def test_every_run_is_in_one_group() -> None:
    for rid, run in _runs().items():
        result = prospective_runs.Result(run_id=rid, source=run["source"], measured={},
                                         simulated={}, served={}, preemptions=0,
                                         prefix_hit_rate=0.0)
        assert sum(len(prospective64_runs.of_model([result], m))
                   for m in prospective64_runs.MODELS) == 1
        assert sum(len(prospective64_runs.on_gpu([result], g))
                   for g in prospective64_runs.GPUS) == 1
        assert sum(len(prospective64_runs.at_concurrency([result], c))
                   for c in prospective64_runs.CONCURRENCIES) == 1


def test_one_run_replays() -> None:
    # A runner smoke (not the record: a full run is 2,048 or 8,192 prompts): one run's server
    # as frozen (Qwen3.5-9B on one H100, SGLang 0.5.16, --mem-fraction-static 0.8) sized and
    # simulated on its first 32 prompts at its concurrency; every compared figure positive.
    run = _runs()["dougyster SGLang Qwen3.5-9B H100 TP1 random 8192/1024 conc 1024 "
                  "(2048 prompts)"]
    run = {**run, "workload": {**run["workload"], "num_prompts": 32}}
    result = prospective_runs.run_one(run)
    assert not result.refused, result.refused
    assert result.simulated["ttft_ms.p50"] > 0 and result.simulated["tpot_ms.p50"] > 0
    assert set(prospective64_runs.compared(result)) == {"TTFT", "TPOT"}
