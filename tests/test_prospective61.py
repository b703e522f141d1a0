"""The frozen prospective61 set (tests/data/sim_to_real/prospective61.json): every run names its
source and its own URL, a model config, a GPU preset, its engine's release and measured figures;
none is a run of an earlier set, and every one is of a length case the earlier set that read its
repository left out for its cap; the replay's requests reproduce the printed totals and run as a
closed loop at the run's concurrency (the full replay is tests.benches.prospective61_runs)."""

from __future__ import annotations

import functools
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
    prospective_runs,
)
from tests.benches.fitted_rows import FITTED, SHAPED_BY

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA,
           prospective56_runs.DATA, prospective57_runs.DATA, prospective58_runs.DATA,
           prospective59_runs.DATA, prospective60_runs.DATA)
SCICOM = ("https://github.com/Scicom-AI-Enterprise-Organization/llm-benchmaq/blob/"
          "123eefe103473a886b6610cd62cfd630406c7507/benchmarks/sglang/")
WENTAO = ("https://github.com/Wentao274/vllm-benchmark-test/blob/"
          "21f4d96fe45869cf157d05864a691c368cc8b9f5/reports/benchmark/nvidia_h100/MiniMax-M2.5/"
          "test_05/01/")

_runs = functools.partial(prospective_runs.runs_by_id, prospective61_runs.DATA)


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective61_runs.DATA)
    # 7 SGLang groups x 3 input lengths, and 5 vLLM length cases x 2 concurrencies.
    assert len(doc["runs"]) == 31
    assert not prospective_runs.incomplete(doc)
    engines = {(run.get("engine", "vllm"), run[run.get("engine", "vllm")]) for run in doc["runs"]}
    assert engines == {("sglang", "0.5.9"), ("sglang", "0.5.8"), ("vllm", "0.20.0")}
    assert {run["gpu"] for run in doc["runs"]} == {"A100-80GB", "H100-80GB", "H200"}
    assert all(run["url"].startswith(SCICOM if run.get("engine") == "sglang" else WENTAO)
               for run in doc["runs"])
    assert all(run["url"].startswith(doc["sources"][run["source"]]["url"].replace(
        "/tree/", "/blob/")) for run in doc["runs"])
    old = [prospective_runs.load(data) for data in EARLIER]
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    assert not {run.get("url") for d in old for run in d["runs"]} & {
        run["url"] for run in doc["runs"]}
    # The earlier sets that read these repositories kept one length case each (prospective56:
    # 1,024 in for SGLang; prospective58: test_05's 1,024 / 512): this set has none of them.
    assert {run["workload"]["input_len"] for run in doc["runs"]
            if run.get("engine") == "sglang"} == {2048, 4096, 8192}
    assert (1024, 512) not in {(run["workload"]["input_len"], run["workload"]["output_len"])
                               for run in doc["runs"]}
    assert {src["publisher"].split(" (")[0] for src in doc["sources"].values()} == {
        "Scicom", "Wentao274"}
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 5


def test_requests_follow_the_run() -> None:
    # Qwen3-8B, 4,096 in: bench_serving's seed-1 draw (range ratio 0: uniform in 1..4,096 and
    # 1..128) gives the printed totals, 209,281 in and 6,108 out, over 100 requests at t = 0.
    run = _runs()["scicom SGLang Qwen3-8B H100 TP8 random 4096/128 conc 100"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 100 and {r.arrival_s for r in reqs} == {0.0}
    assert sum(r.prompt_len for r in reqs) == run["measured"]["total_input_tokens"] == 209_281
    assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"] == 6_108
    # MiniMax-M2.5, 2,048 / 1,024: 2,087,000 in over 1,000 prompts is 2,087 a prompt, the
    # requested 2,048 plus the chat template's 39; 1,024,000 out is 1,024 each.
    run = _runs()["Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 test_05 2048/1024 chat conc 64 "
                  "(1000 prompts)"]
    assert {(r.prompt_len, r.output_len) for r in prospective_runs.requests(run)} == {
        (2048 + 39, 1024)}
    for run in _runs().values():
        w, m, reqs = run["workload"], run["measured"], prospective_runs.requests(run)
        assert len(reqs) == w["num_prompts"] and w["request_rate"] is None
        if run.get("engine") == "sglang":
            # Llama's tokenizer re-encodes each random prompt one token shorter (prospective56).
            short = w["num_prompts"] if "Llama" in run["id"] else 0
            assert sum(r.prompt_len for r in reqs) - short == m["total_input_tokens"]
        else:
            assert m["total_input_tokens"] == w["num_prompts"] * (w["input_len"] + 39)
        assert sum(r.output_len for r in reqs) == m["total_generated_tokens"]


def test_the_replay_is_a_closed_loop_at_the_runs_concurrency(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen = []

    def stop(sim, requests, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(kwargs["concurrency"])
        raise KvplanError("stopped here")

    def stop_warm(sim, earlier, requests, **kwargs):  # type: ignore[no-untyped-def]
        # A Scicom SGLang length run is replayed after its server's earlier runs
        # (tests.benches.scicom_server): the 4,096 and 2,048 runs and the warm-ups before it.
        assert [len(b) for b in earlier] == [1, 100, 1, 100, 1, 100, 1]
        return stop(sim, requests, **kwargs)

    monkeypatch.setattr(prospective_runs, "simulate", stop)
    monkeypatch.setattr(prospective_runs, "simulate_after", stop_warm)
    for rid in ("scicom SGLang gpt-oss-120b H200 TP8 random 8192/128 conc 100",
                "Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 test_05 128/128 chat conc 128 "
                "(1000 prompts)"):
        assert prospective_runs.run_one(_runs()[rid]).refused == "stopped here"
    assert seen == [100, 128]


def test_the_first_evaluation_names_every_run() -> None:
    rows = prospective61_runs.FIRST_ROWS
    assert set(rows) == set(_runs())
    assert all(value is not None for value in rows.values())  # none was refused


def test_every_run_is_in_one_group() -> None:
    for rid in _runs():
        result = prospective_runs.Result(run_id=rid, source="", measured={}, simulated={},
                                         served={}, preemptions=0, prefix_hit_rate=0.0)
        assert sum(prospective61_runs.in_group(result, g) for g in prospective61_runs.GROUPS) == 1
        assert prospective61_runs.engine_of(result) in prospective61_runs.ENGINES


def test_no_run_shares_a_fitted_rows_configuration_or_shaped_a_rule() -> None:
    # The cost bench's fitted rows by model config, GPU, TP and engine (the only TP 8 one is
    # DeepSeek-V3 / R1 SGLang on 8 x H200): none is this set's; and no SHAPED_BY entry names a
    # run of it (no cost-model rule was written after them). Its 21 SGLang runs shaped
    # sgllong61's warm-server replay (prospective61_runs.WARM_SERVER_SHAPED), a harness rule.
    fitted = {r for f in FITTED.values() for r in f.fitted_on}
    engines = {"SGLang": "sglang", "TensorRT-LLM": "trtllm", "vLLM": "vllm"}
    keys = {(c.model, get_gpu(c.gpu).name, c.layout.tp,
             next((v for k, v in engines.items() if k in c.label), None))
            for c in (*cost_bench.PREFILL_CASES, *cost_bench.all_cases()) if c.label in fitted}
    assert not {rid for rid, run in _runs().items()
                if (Path(run["model"]).stem, get_gpu(run["gpu"]).name, run["tp"],
                    run.get("engine", "vllm")) in keys}
    assert not {r for entry in SHAPED_BY for r in entry.rows} & set(_runs())
    assert set(prospective61_runs.WARM_SERVER_SHAPED.rows) == {
        rid for rid, run in _runs().items() if run.get("engine") == "sglang"}
