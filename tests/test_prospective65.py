"""The prospective65 set (tests/data/sim_to_real/prospective65.json), frozen at 4804138c and
first evaluated at 38738b15: 15 runs, each complete (source and own URL, a model config that
loads, a GPU preset, a release, the statistic it published and its figures); none is a run or a
cell of an earlier set (by id, by URL, by (checkpoint, GPU, TP, engine, concurrency)) or of the
aiconfig rows; the replay's requests reproduce each client command; a run is compared on its own
statistic only; the record of the first evaluation names every run and its medians follow from
its rows; the set's section is wired into the page. Nothing here simulates a full run (the
replay: python -m tests.benches.prospective65_runs)."""

from __future__ import annotations

import functools
import gzip
import json
import re
import statistics
from pathlib import Path

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from tests.benches import cost_bench, prospective65_runs, prospective_runs
from tests.benches.fitted_rows import FITTED, SHAPED_BY

SETS = Path(__file__).resolve().parent / "data" / "sim_to_real"
EARLIER = sorted(p for p in SETS.glob("prospective*.json") if p.name != "prospective65.json")
SEARCH63 = SETS / "sglsearch63.json"
AGG = SETS / "aiconfigurator_agg.csv.gz"
ROOT = Path(__file__).resolve().parent.parent

_runs = functools.partial(prospective_runs.runs_by_id, prospective65_runs.DATA)


def _doc() -> dict:  # type: ignore[type-arg]
    return prospective_runs.load(prospective65_runs.DATA)


def _cell(run: dict) -> tuple:  # type: ignore[type-arg]
    """A run's server and load: checkpoint, GPU (as its file names it), TP, engine, client
    concurrency (an earlier set's run may keep fewer fields: None where it has none)."""
    gpu = str(run.get("gpu", ""))
    return (Path(run.get("model", "")).stem, get_gpu(gpu).name if gpu else "", run.get("tp"),
            run.get("engine", "vllm"), (run.get("workload") or {}).get("max_concurrency"))


def test_every_run_is_complete() -> None:
    doc = _doc()
    # Qwen3.5 MoE cookbook cells: 35B-A3B on H200, B200, B300; 122B-A10B on H200, B200, B300;
    # 397B-A17B on H200 (7 cells x concurrency 1,024 and 4,096) + the vLLM PR's base run.
    assert len(doc["runs"]) == 7 * 2 + 1 == 15
    assert len(_runs()) == 15  # ids unique
    assert not prospective65_runs.incomplete(doc)
    assert {(r["engine"], r[r["engine"]], r["statistic"]) for r in doc["runs"]} == {
        ("sglang", "0.5.16", "p50"), ("vllm", "0.10.1.1", "mean")}
    assert {(Path(r["model"]).stem, r["tp"]) for r in doc["runs"]} == {
        ("qwen3.5-35b-a3b", 1), ("qwen3.5-122b-a10b", 4), ("qwen3.5-122b-a10b", 2),
        ("qwen3.5-397b-a17b", 8), ("qwen3-30b-a3b", 1)}
    for run in doc["runs"]:
        keys = set(run["measured"])
        if run["statistic"] == "p50":
            assert keys == {"median_ttft_ms", "median_tpot_ms"}
        else:
            assert {"mean_ttft_ms", "mean_tpot_ms"} <= keys
    assert len(doc["skipped"]) == 11
    assert all(src["stated"] and src["assumed"] for src in doc["sources"].values())


def test_every_config_loads_with_the_runners_loader() -> None:
    # prospective_runs.run_one loads load_spec(str(REPO / run["model"])); the three configs
    # added for this set (tests/data/configs/SOURCES-prosp65.md) have the published shapes.
    for path in sorted({run["model"] for run in _runs().values()}):
        spec = load_spec(str(prospective_runs.REPO / path))
        assert spec.id == Path(path).stem
    for stem, layers, hidden, experts in (("qwen3.5-35b-a3b", 40, 2048, 256),
                                          ("qwen3.5-122b-a10b", 48, 3072, 256),
                                          ("qwen3.5-397b-a17b", 60, 4096, 512)):
        raw = json.loads((ROOT / "tests" / "data" / "configs" / f"{stem}.json").read_text())
        text = raw["text_config"]
        assert raw["architectures"] == ["Qwen3_5MoeForConditionalGeneration"]
        assert (text["num_hidden_layers"], text["hidden_size"], text["num_experts"]) == (
            layers, hidden, experts)
        assert "quantization_config" not in raw and text["max_position_embeddings"] == 262144


def test_no_run_is_in_an_earlier_set_or_the_aiconfig_rows() -> None:
    doc = _doc()
    old = [prospective_runs.load(path) for path in EARLIER]
    assert len(old) >= 16  # prospective30 ... 64 (56_served included)
    urls = {run["url"] for run in doc["runs"]}
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    assert not {run.get("url") for d in old for run in d["runs"]} & urls
    assert not {_cell(run) for d in old for run in d["runs"]} & {_cell(r) for r in doc["runs"]}
    search = prospective_runs.load(SEARCH63)["candidates"]
    found = {(c["model"], c["gpu"], c["workload"]["max_concurrency"])
             for key in ("qwen3.6", "qwen3.5") for c in search[key]["cells"]}
    assert not found & {(r["model"], r["gpu"], r["workload"]["max_concurrency"])
                        for r in doc["runs"]}
    with gzip.open(AGG, "rt") as f:
        agg = f.read()
    assert not any(url in agg for url in urls)
    # The vLLM run's publisher is new; the cookbook's is prospective64's (the rule says so).
    assert not any("wenchen76" in path.read_text() or "vllm/pull/23151" in path.read_text()
                   for path in EARLIER)
    publishers = {k: src["publisher"].split(" (")[0] for k, src in doc["sources"].items()}
    assert publishers == {"cookbook-qwen3.5-moe": "dougyster", "vllm-pr-23151": "wenchen76"}
    assert "publisher rule" in doc["selection_rule"] and "waived" in doc["selection_rule"]


def test_requests_follow_the_client_commands() -> None:
    # Cookbook: --random-input-len 8192 --random-output-len 1024 --random-range-ratio 1.0:
    # bench_serving (0.5.16 >= 0.5.7, output floor 1) draws randint(8192, 8193) = 8,192 in
    # and randint(1024, 1025) = 1,024 out; --request-rate inf: every request at t = 0.
    run = _runs()["dougyster SGLang Qwen3.5-397B-A17B H200 TP8 random 8192/1024 conc 1024 "
                  "(2048 prompts)"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 2048 and {r.arrival_s for r in reqs} == {0.0}
    assert {(r.prompt_len, r.output_len) for r in reqs} == {(8192, 1024)}
    # vllm#23151: 100 prompts at the block's means, 204,169 / 100 = 2,041.69 -> 2,042 in and
    # 101,576 / 100 = 1,015.76 -> 1,016 out; /v1/completions (no template); rate inf.
    run = _runs()["wenchen76 vLLM Qwen3-30B-A3B H100 TP1 random 2048/1024 conc 10 "
                  "(100 prompts, before)"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 100 and {r.arrival_s for r in reqs} == {0.0}
    assert {(r.prompt_len, r.output_len) for r in reqs} == {(2042, 1016)}
    m = run["measured"]
    assert round(m["total_input_tokens"] / 100) == 2042
    assert round(m["total_generated_tokens"] / 100) == 1016
    for run in _runs().values():
        w = run["workload"]
        if run["engine"] == "sglang":
            assert w["num_prompts"] == 2 * w["max_concurrency"] and w["request_rate"] is None
            assert (w["input_len"], w["output_len"], w["random_range_ratio"]) == (8192, 1024, 1.0)


def _result(rid: str, simulated: dict[str, float]) -> prospective_runs.Result:
    run = _runs()[rid]
    return prospective_runs.Result(run_id=rid, source=run["source"], measured=run["measured"],
                                   simulated=simulated, served={}, preemptions=0,
                                   prefix_hit_rate=0.0)


def test_each_run_is_compared_on_its_own_statistic() -> None:
    # A p50 run (35B-A3B on B300 at 1,024: measured P50 TTFT 141,478 ms, P50 TPOT 33.38 ms):
    # p50s of 70,739 and 36.718 are -50.0 % and +10.0 % (70,739 / 141,478 - 1 = -0.5;
    # 36.718 / 33.38 - 1 = 0.1); its means (made 10x off) are not compared.
    rid = "dougyster SGLang Qwen3.5-35B-A3B B300 TP1 random 8192/1024 conc 1024 (2048 prompts)"
    r = _result(rid, {"ttft_ms.p50": 70_739.0, "tpot_ms.p50": 36.718, "ttft_ms.mean": 1.4e6,
                      "tpot_ms.mean": 333.8, "itl_ms.mean": 333.8, "e2e_ms.mean": 1.0,
                      "e2e_ms.p50": 1.0})
    errors = prospective65_runs.compared(r)
    assert set(errors) == {"TTFT", "TPOT"}
    assert abs(errors["TTFT"] + 0.5) < 1e-12 and abs(errors["TPOT"] - 0.1) < 1e-12
    line = prospective65_runs.medians_line("x", [r])
    assert line == "| x | 1 of 1 | 50.0% (1) | 10.0% (1) | - | - |"
    # The mean run (vllm#23151: mean TTFT 267.22 ms, mean TPOT 13.18 ms): means of 400.83 and
    # 11.862 are +50.0 % and -10.0 % (400.83 / 267.22 - 1 = 0.5; 11.862 / 13.18 - 1 = -0.1);
    # its p50s (made 10x off) are not compared; no ITL or E2E was published.
    rid = "wenchen76 vLLM Qwen3-30B-A3B H100 TP1 random 2048/1024 conc 10 (100 prompts, before)"
    r = _result(rid, {"ttft_ms.mean": 400.83, "tpot_ms.mean": 11.862, "ttft_ms.p50": 3000.5,
                      "tpot_ms.p50": 131.7, "itl_ms.mean": 1.0, "e2e_ms.mean": 1.0,
                      "e2e_ms.p50": 1.0})
    errors = prospective65_runs.compared(r)
    assert set(errors) == {"TTFT", "TPOT"}
    assert abs(errors["TTFT"] - 0.5) < 1e-12 and abs(errors["TPOT"] + 0.1) < 1e-12


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
    for rid in _runs():
        r = _result(rid, {})
        assert sum(len(prospective65_runs.of_model([r], m))
                   for m in prospective65_runs.MODELS) == 1
        assert sum(len(prospective65_runs.on_gpu([r], g)) for g in prospective65_runs.GPUS) == 1
        assert sum(len(prospective65_runs.at_concurrency([r], c))
                   for c in prospective65_runs.CONCURRENCIES) == 1


def test_frozen_then_evaluated_once_and_wired() -> None:
    assert re.fullmatch(r"[0-9a-f]{8}", prospective65_runs.FREEZE)
    assert re.fullmatch(r"[0-9a-f]{8}", prospective65_runs.FIRST)
    record = prospective65_runs.FIRST_EVALUATION
    assert record and prospective65_runs.FIRST in record and prospective65_runs.FREEZE in record
    assert "2026-12-07" in record
    # The data file stays as frozen (its 'what' says so); the runner's docstring no longer.
    assert "NOT evaluated" in _doc()["what"]
    assert "NOT EVALUATED" not in (prospective65_runs.__doc__ or "")
    bench = (ROOT / "tests" / "benches" / "simulate_bench.py").read_text()
    assert bench.index("prospective64_runs.print_section()") < bench.index(
        "prospective65_runs.print_section()") < bench.index("aiconfig_agg_runs.print_section()")


def test_the_first_evaluation_names_every_run() -> None:
    rows = prospective65_runs.FIRST_ROWS
    assert set(rows) == set(_runs())
    assert all(row is not None for row in rows.values())  # none was refused


def _first_median(rids: list[str], column: int) -> float:
    rows = prospective65_runs.FIRST_ROWS
    return statistics.median(abs(rows[r][column]) for r in rids)  # type: ignore[index]


def test_the_records_medians_follow_from_its_rows() -> None:
    # FIRST_EVALUATION's medians recomputed from FIRST_ROWS. The 15 |TTFT| sorted: 4.0, 4.8,
    # 7.0, 8.6, 12.4, 13.4, 19.0, 22.0 (the 8th), ... -> 22.0 %; |TPOT|: 6.3, 6.8, 14.2, 15.0,
    # 15.7, 16.5, 16.9, 19.5 (the 8th), ... -> 19.5 %: an odd count gives the printed figure.
    # An even count averages two rows rounded to 0.1 pp as printed, so it may differ from the
    # median of the unrounded errors (then rounded to 0.1 pp) by up to 0.1 pp: B200's 4 |TPOT|
    # 19.5, 19.8, 27.7, 27.9 -> (19.8 + 27.7) / 2 = 23.75 from the rows, 23.7 % as printed.
    record = (prospective65_runs.FIRST_EVALUATION or "").replace(" %", "%")
    ids = list(_runs())
    assert f"{_first_median(ids, 0):.1%}" == "22.0%" and f"{_first_median(ids, 1):.1%}" == "19.5%"
    assert "TTFT 22.0%" in record and "TPOT 19.5%" in record
    results = [_result(rid, {}) for rid in ids]
    groups = [(f"{s} ({len(g)}", g) for s in prospective65_runs.SOURCES
              if (g := [r for r in ids if _runs()[r]["source"] == s])]
    for gpu in ("H200", "B200", "B300", "H100"):
        part = prospective65_runs.on_gpu(results, gpu)
        groups.append((f"{gpu} ({len(part)}", [r.run_id for r in part]))
    for model in prospective65_runs.MODELS[:3]:
        part = prospective65_runs.of_model(results, model)
        groups.append((f"{model} ({len(part)}", [r.run_id for r in part]))
    for c in (1024, 4096):
        part = prospective65_runs.at_concurrency(results, c)
        groups.append((f"{c:,} ({len(part)}", [r.run_id for r in part]))
    assert len(groups) == 11
    for label, rids in groups:
        m = re.search(rf"{re.escape(label)}[^)]*\) (?:TTFT )?([\d.]+)% / (?:TPOT )?([\d.]+)%",
                      record)
        assert m, label
        for column, printed in enumerate(m.groups()):
            assert abs(_first_median(rids, column) - float(printed) / 100) <= 0.001 + 1e-12
            if len(rids) % 2:
                assert f"{_first_median(rids, column):.1%}" == f"{printed}%"
    # Every TPOT error positive (kvplan slow on all 15); every Blackwell run slow on both.
    rows = prospective65_runs.FIRST_ROWS
    assert all(row[1] > 0 for row in rows.values())  # type: ignore[index]
    assert all(min(rows[r.run_id]) > 0  # type: ignore[type-var]
               for g in ("B200", "B300") for r in prospective65_runs.on_gpu(results, g))
