"""The frozen prospective62 set (tests/data/sim_to_real/prospective62.json): every run names its
source and its own URL, a model config, a GPU preset, its engine's release and measured figures;
none is a run of an earlier set, and none is of the length case or concurrency the earlier sets
that read its repository kept; the replay's requests reproduce the printed totals and run as a
closed loop at the run's concurrency on a fresh engine (the full replay is
tests.benches.prospective62_runs)."""

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
    prospective62_runs,
    prospective_runs,
)
from tests.benches.fitted_rows import FITTED, SHAPED_BY

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA,
           prospective56_runs.DATA, prospective57_runs.DATA, prospective58_runs.DATA,
           prospective59_runs.DATA, prospective60_runs.DATA, prospective61_runs.DATA)
SCICOM = ("https://github.com/Scicom-AI-Enterprise-Organization/llm-benchmaq/blob/"
          "123eefe103473a886b6610cd62cfd630406c7507/benchmarks/vllm/")
WENTAO = ("https://github.com/Wentao274/vllm-benchmark-test/blob/"
          "21f4d96fe45869cf157d05864a691c368cc8b9f5/reports/benchmark/nvidia_h100/MiniMax-M2.5/"
          "test_05/01/32-1000-")

_runs = functools.partial(prospective_runs.runs_by_id, prospective62_runs.DATA)


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective62_runs.DATA)
    # April: 5 models x 4 lengths x 2 concurrencies less gpt-oss-120b's 3 missing files (37);
    # January: Qwen3-32B x 3 GPUs x 4 lengths (12); Wentao274: 5 length cases at 32 (5).
    assert len(doc["runs"]) == 37 + 12 + 5
    assert not prospective_runs.incomplete(doc)
    assert {(run.get("engine", "vllm"), run["vllm"]) for run in doc["runs"]} == {
        ("vllm", "0.15.0"), ("vllm", "0.20.0")}
    assert {run["gpu"] for run in doc["runs"]} == {"B200", "H100-80GB", "H200"}
    assert all(run["url"].startswith(WENTAO if run["id"].startswith("Wentao274") else SCICOM)
               for run in doc["runs"])
    old = [prospective_runs.load(data) for data in EARLIER]
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    assert not {run.get("url") for d in old for run in d["runs"]} & {
        run["url"] for run in doc["runs"]}
    # prospective56 kept Scicom's 1,024-token case (1,023 for Llama); prospective58 / 61 kept
    # Wentao274's test_05 1,024 / 512 and concurrency 1, 64 and 128: this set has none of them.
    assert not {run["workload"]["input_len"] for run in doc["runs"]} & {1023, 1024}
    assert {run["workload"]["max_concurrency"] for run in doc["runs"]
            if run["id"].startswith("Wentao274")} == {32}
    assert {src["publisher"].split(" (")[0] for src in doc["sources"].values()} == {
        "Scicom", "Wentao274"}
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 5


def test_requests_follow_the_run() -> None:
    # Llama-3.1-70B, --random-input-len 2,048: the printed 1,023,500 input tokens over 500
    # prompts is 2,047 a prompt (its tokenizer re-encodes each random prompt one token short);
    # 500 x 128 = 64,000 out, every request at t = 0.
    run = _runs()["scicom vLLM Llama-3.1-70B H100 TP8 random 2047/128 conc 200 (500 prompts)"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 500 and {r.arrival_s for r in reqs} == {0.0}
    assert sum(r.prompt_len for r in reqs) == run["measured"]["total_input_tokens"] == 1_023_500
    assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"] == 64_000
    # Qwen3-32B on the B200, 15,000 in: 100 x 15,000 = 1,500,000 in, 12,800 out.
    run = _runs()["scicom vLLM Qwen3-32B B200 TP8 random 15000/128 conc 100 (100 prompts)"]
    assert sum(r.prompt_len for r in prospective_runs.requests(run)) == 1_500_000
    # MiniMax-M2.5, 8,192 / 1,024: 8,231,000 in over 1,000 prompts is 8,231 a prompt, the
    # requested 8,192 plus the chat template's 39.
    run = _runs()["Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 test_05 8192/1024 chat conc 32 "
                  "(1000 prompts)"]
    assert {(r.prompt_len, r.output_len) for r in prospective_runs.requests(run)} == {
        (8192 + 39, 1024)}
    assert run["measured"]["total_input_tokens"] == 8_231_000
    for run in _runs().values():
        w, m, reqs = run["workload"], run["measured"], prospective_runs.requests(run)
        assert len(reqs) == w["num_prompts"] and w["request_rate"] is None
        assert sum(r.prompt_len for r in reqs) == m["total_input_tokens"]
        assert sum(r.output_len for r in reqs) == m["total_generated_tokens"]


def test_the_replay_is_a_closed_loop_on_a_fresh_engine(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The April and Wentao274 runs on a fresh engine; the January runs after their server's
    # earlier lengths (janwarm62, the data file's 'amended'): 8,192 follows 1,024, 2,048 and
    # 4,096, each whole at concurrency 100.
    seen = []

    def stop(sim, requests, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(kwargs["concurrency"])
        raise KvplanError("stopped here")

    def warm(sim, earlier, requests, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(([len(b) for b in earlier], len(requests), kwargs["concurrency"]))
        raise KvplanError("stopped here")

    monkeypatch.setattr(prospective_runs, "simulate", stop)
    monkeypatch.setattr(prospective_runs, "simulate_after", warm)
    for rid in ("scicom vLLM Qwen3-8B H100 TP8 random 128/128 conc 200 (1000 prompts)",
                "scicom vLLM Qwen3-32B H200 TP8 random 8192/128 conc 100 (100 prompts)",
                "Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 test_05 512/256 chat conc 32 "
                "(1000 prompts)"):
        assert prospective_runs.run_one(_runs()[rid]).refused == "stopped here"
    assert seen == [200, ([100, 100, 100], 100, 100), 32]


def test_the_first_evaluation_names_every_run() -> None:
    rows = prospective62_runs.FIRST_ROWS
    assert set(rows) == set(_runs())
    assert all(value is not None for value in rows.values())  # none was refused


def test_every_run_is_in_one_group() -> None:
    for rid, run in _runs().items():
        result = prospective_runs.Result(run_id=rid, source=run["source"], measured={},
                                         simulated={}, served={}, preemptions=0,
                                         prefix_hit_rate=0.0)
        assert sum(prospective62_runs.in_group(result, g) for g in prospective62_runs.GROUPS) == 1
    assert {g.source for g in prospective62_runs.GROUPS} == set(prospective62_runs.SOURCES)


def test_no_run_shares_a_fitted_rows_configuration_or_shaped_a_rule() -> None:
    # The cost bench's fitted rows by model config, GPU, TP and engine: none is this set's.
    # Four SHAPED_BY entries name runs of it, each written after its first evaluation: the
    # January runs' warm replay (janwarm62, bc794cd5), vllmhost62's opt-in --frontend loop
    # (63daad97), after the 18 April runs at concurrency 200, and the sampling of the 49 Scicom
    # runs' client (sampler63, 3df275b0: vllm bench serve sends none, the model's
    # generation_config.json applies), recorded after vllm200u63 read the concurrency-200 runs,
    # and nvlink5's measured bandwidth (b200vllm63, 153bb2ff), opened by the January B200 runs.
    fitted = {r for f in FITTED.values() for r in f.fitted_on}
    engines = {"SGLang": "sglang", "TensorRT-LLM": "trtllm", "vLLM": "vllm"}
    keys = {(c.model, get_gpu(c.gpu).name, c.layout.tp,
             next((v for k, v in engines.items() if k in c.label), None))
            for c in (*cost_bench.PREFILL_CASES, *cost_bench.all_cases()) if c.label in fitted}
    assert not {rid for rid, run in _runs().items()
                if (Path(run["model"]).stem, get_gpu(run["gpu"]).name, run["tp"],
                    run.get("engine", "vllm")) in keys}
    january = {rid for rid, run in _runs().items() if run["source"] == prospective62_runs.JANUARY}
    assert len(january) == 12
    shaped = {e.commit: {r for r in e.rows if r in _runs()} for e in SHAPED_BY}
    assert {c for c, rows in shaped.items() if rows} == {"bc794cd5", "63daad97", "3df275b0",
                                                         "153bb2ff"}
    assert shaped["153bb2ff"] == {rid for rid in january if " B200 " in rid}
    assert shaped["3df275b0"] == {rid for rid, run in _runs().items()
                                  if run["source"] != prospective62_runs.WENTAO}
    assert shaped["bc794cd5"] == january
    assert shaped["63daad97"] == {rid for rid in _runs()
                                  if rid.startswith("scicom vLLM ") and " conc 200 " in rid}
    assert len(shaped["63daad97"]) == 18
    assert not fitted & set(_runs())
