"""The fitted constants' declared rows and the honest split.

Each fitted constant has a `Fitted` record beside it in its module (`<CONSTANT>_FIT`; a point of
a table: CONSTANT_OF below); tests/benches/fitted_rows.py collects them (FITTED). Each record's
value is its live constant's, and no module outside FITTED_MODULES declares one.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from tests.benches import (
    accelmark_runs,
    aiconfig_agg_runs,
    cost_bench,
    disagg_rows,
    engine_bench,
    honest,
    kv_token_runs,
    prospdis66_runs,
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
    prospective65_runs,
    prospective66_runs,
    prospective_runs,
    sim_to_real,
    trtllm_bench,
)
from tests.benches.fitted_rows import FITTED, FITTED_MODULES, LAST_RULE_CHANGE, SHAPED_BY
from tests.benches.replay import row
from tests.benches.row_commits import ADDED_IN, COMMIT_TIMES

# Records of one point of a table, or of a dataclass field's default: the constant each is of
# (a `[...]` suffix names one point of a table). Every other record `X_FIT` is of `X`.
CONSTANT_OF = {
    "kvplan.engines.vllm.budget.VLLM_NON_TORCH_GIB_0_10_FIT":
        "kvplan.engines.vllm.budget.VLLM_NON_TORCH_GIB[0.10]",
    "kvplan.engines.vllm.budget.VLLM_NON_TORCH_GIB_0_19_FIT":
        "kvplan.engines.vllm.budget.VLLM_NON_TORCH_GIB[0.19]",
    "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB_TP1_FIT":
        "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB[cuda][TP1]",
    "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB_TP8_FIT":
        "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB[cuda][TP8]",
    "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB_ROCM_TP8_FIT":
        "kvplan.engines.sglang.budget.SGLANG_PRELOAD_GIB[rocm][TP8]",
    "kvplan.perf.efficiency.LAYER_OVERHEAD_FIT":
        "kvplan.perf.efficiency.Efficiency.layer_overhead_s",
    "kvplan.perf.efficiency.PREFILL_LAUNCH_FIT":
        "kvplan.perf.efficiency.Efficiency.prefill_launch_s",
}


def constant_of(record: str) -> str:
    """The dotted name of the constant the record `record` is of."""
    return CONSTANT_OF.get(record) or record.removesuffix("_FIT")


def live_value(name: str) -> Any:
    """The constant `name` names: module.ATTR, module.Class.field (the default), and `[...]`
    keys into a table (a version "0.19", a "TPn" point, a platform)."""
    base = name.split("[", 1)[0]
    module, attr = base.rsplit(".", 1)
    try:
        value = getattr(importlib.import_module(module), attr)
    except ModuleNotFoundError:
        module, cls = module.rsplit(".", 1)
        value = getattr(getattr(importlib.import_module(module), cls)(), attr)
    for key in re.findall(r"\[([^\]]+)\]", name):
        if re.fullmatch(r"\d+\.\d+", key):
            value = dict(value)[tuple(int(p) for p in key.split("."))]
        elif key.startswith("TP"):
            value = dict(value)[int(key[2:])]
        else:
            value = value[key]
    return getattr(value, "bytes_per_logit", value)


def engine_rows() -> dict[str, list[dict[str, Any]]]:
    return {"vllm": engine_bench.load_all_logs(), "sglang": engine_bench.load_sglang_logs(),
            "trtllm": trtllm_bench.load_trtllm_logs(),
            "trtllm-points": trtllm_bench.load_trtllm_points(),
            "vllm-tokens": kv_token_runs.load_runs()}


def all_row_ids() -> list[str]:
    return ([log["id"] for logs in engine_rows().values() for log in logs]
            + [c.label for c in cost_bench.all_cases()] + sim_to_real.row_ids()
            + disagg_rows.row_ids() + accelmark_runs.row_ids()
            + [run["id"] for run in prospective_runs.load()["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective31_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective52_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective53_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective53b_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective54_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective56_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective57_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective58_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective59_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective60_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective61_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective62_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective63_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective64_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective65_runs.DATA)["runs"]]
            + [run["id"] for run in prospective_runs.load(prospective66_runs.DATA)["runs"]]
            + [i for i in disagg_rows.prospective_row_ids() if i not in disagg_rows.row_ids()]
            + [disagg_rows.PREFIX + r["id"] for r in aiconfig_agg_runs.rows()]
            + [f"{run['id']} @ {p['concurrency']}" for run in prospdis66_runs.load()["runs"]
               for p in run["points"]])


def test_every_fitted_constant_has_its_record() -> None:
    # The 32 records: vLLM 8, SGLang 4, TensorRT-LLM 6, the cost model 7 (five of them fitted
    # on kernel tables, fitted_on=(): the MoE experts' fractions, one per format and two by rows
    # per expert, and the dense FP8 GEMMs'), vLLM's API-server stage 2 (`simulate --frontend`)
    # and its output stage 1 (`simulate --api-output`, measured on a CPU, fitted_on=()), vLLM's
    # engine-core host work 2 (`simulate --engine-core-cpu`, measured on a CPU, fitted_on=()),
    # the prompt's host work per token 1 (lonepf60's opt-in stage, measured on a CPU,
    # fitted_on=()), SGLang's TokenizerManager per prompt token 1 (sglfront61's opt-in stage,
    # measured on a CPU, fitted_on=()), vLLM's API loop 3 (vllmhost62's --frontend: per request
    # and per prompt token measured on a CPU, fitted_on=(); the latency fitted on one row), each
    # engine's experts' tables by rows per expert 6 (moeeng64: vLLM, SGLang, TensorRT-LLM x bf16,
    # block FP8, fitted on kernel tables, fitted_on=()), gpt-oss's MXFP4 experts' table by
    # per-rank width 1 (mxfp4tab65, opt-in, fitted on kernel tables, fitted_on=()), vLLM's
    # detokenizer prime per prompt token 1 (frontdec66's --frontend, measured on a CPU,
    # fitted_on=()).
    assert len(FITTED) == 43
    assert set(CONSTANT_OF) <= set(FITTED)
    assert all(name.endswith("_FIT") for name in FITTED)


@pytest.mark.parametrize("name", sorted(FITTED))
def test_each_entry_names_a_live_constant_of_its_value(name: str) -> None:
    value = FITTED[name].value
    expected = value if isinstance(value, tuple) else pytest.approx(value)
    assert live_value(constant_of(name)) == expected, (
        f"{name}: the constant and its record differ; set the value in one place")


def test_no_module_outside_fitted_modules_declares_a_record() -> None:
    # The benches import FITTED_MODULES only: a record declared elsewhere would leave its rows
    # counted as held out.
    root = Path(__file__).resolve().parents[1]
    declaring = {
        ".".join(path.relative_to(root).with_suffix("").parts)
        for path in (root / "kvplan").rglob("*.py")
        if path.name != "fitted.py" and re.search(r"^\w+ = Fitted\(", path.read_text(), re.M)
    }
    assert declaring == set(FITTED_MODULES)


def test_row_ids_are_unique_and_every_named_row_exists() -> None:
    ids = all_row_ids()
    assert len(ids) == len(set(ids))
    named = {r for fit in FITTED.values() for r in fit.fitted_on}
    named |= {r for shaped in SHAPED_BY for r in shaped.rows}
    assert named <= set(ids), named - set(ids)


def test_every_row_records_the_commit_that_added_it() -> None:
    for logs in engine_rows().values():
        for log in logs:
            assert log["added_in"] in COMMIT_TIMES, log["id"]
    for case in cost_bench.all_cases():
        assert ADDED_IN[case.label] in COMMIT_TIMES, case.label
    for change in LAST_RULE_CHANGE.values():
        assert re.fullmatch(r"[0-9a-f]{12}", change.commit)


def _split(logs: list[dict[str, Any]], ep_key: str | None = None) -> honest.Split:
    return honest.split((row(log, ep=log[ep_key] if ep_key else 1) for log in logs),
                        "engine")


def test_the_issue_25_counts() -> None:
    # Issue 25's corrections, from the rows each constant was fitted on (its `..._FIT`):
    # vLLM: 21 logs marked `fitted` (the sampler rule) and the 23 other H100 0.19.0 logs of
    # llm-d-planner PR #205 behind the non-torch medians: 44 fitted, 44 held out (the "67");
    # issue #26 added held-out logs (the Qwen3-235B-A22B-FP8 TP 8 one shaped a rule). The
    # startup26 rows: llm-d-benchmark's Llama-3.3-70B FP8 TP 2 run is the 0.10 non-torch fit's
    # TP 2 point (fitted), its Llama-3.1-8B H100 TP 1 run shares a fitted configuration.
    vllm = _split(engine_bench.load_logs())
    assert (len(vllm.fitted), len(vllm.same_config)) == (45, 1)
    assert len(vllm.held_out) == len(engine_bench.load_logs()) - 46 >= 62
    # SGLang: 10 of the 28 replayed logs set the preload constants (the 9 startsgl logs are
    # all held out).
    sglang = _split([log for log in engine_bench.load_sglang_logs() if log["replay"]])
    assert (len(sglang.fitted), len(sglang.held_out)) == (10, 18)
    # TensorRT-LLM: 19 of the 29 logs not marked `fit` share a fitted log's configuration.
    replayed = [log for log in trtllm_bench.load_trtllm_logs() if log["replay"]]
    trtllm = _split(replayed, "ep")
    assert (len(trtllm.fitted), len(trtllm.same_config), len(trtllm.held_out)) == (12, 11, 10)
    not_marked = {log["id"] for log in replayed if not log["fitted"]}
    assert len(not_marked) == 29
    assert len(not_marked - set(trtllm.held_out)) == 19
    # Prospective: the 9 startup26 logs (committed in c9999d3 and adf9a1b before any prediction
    # for them) less the H100 NVL one, which shaped the GPU presets' reported totals (cb2d7c4);
    # its 7 held-out llm-d-benchmark runs were read before the rule change (seen_before).
    assert len(vllm.prospective) == 8 and len(vllm.seen_before) == 7
    # The startsgl logs (committed in cd15e16 and 610b696 before any prediction for them):
    # 9 SGLang (0.4.4 1, 0.5.9 6, newest 2), 1 TensorRT-LLM 1.2.1; no preset they use moved.
    assert len(sglang.prospective) == 9 and not sglang.seen_before
    assert len(trtllm.prospective) == 1 and not trtllm.seen_before


def test_cost_split() -> None:
    split = cost_bench.cost_split()
    decode = {c.label for c in cost_bench.CASES}
    assert sum(r in decode for r in split.fitted) == 8
    assert sum(r in decode for r in split.held_out) == 101
    assert sum(r in decode for r in split.unshaped) == 50
    assert not split.prospective
