"""The prospective66 set (tests/data/sim_to_real/prospective66.json), frozen at 25ffba0f and
first evaluated at 9f0e1d77: kubesimplify's 2 vLLM 0.27.1 runs of
Qwen3-235B-A22B-Instruct-2507-FP8 at TP 4 on 4 RTX PRO 6000. The frozen figures agree with one
another as a `vllm bench serve` block prints them; each run is complete (source and URL, the
stand-in config that loads, a GPU preset, a release kvplan reads); the stand-in differs from the
stored bf16 Qwen3-235B-A22B config only by its quantization_config; no run is in an earlier set or
shares a fitted row's configuration; the replay's requests reproduce the client command; a run is
compared on its means; the record names every run and its medians follow from its rows; the
section is wired into the page. Nothing here simulates a run (the replay:
python -m tests.benches.prospective66_runs)."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from tests.benches import cost_bench, prospective66_runs, prospective_runs
from tests.benches.fitted_rows import FITTED, SHAPED_BY

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "tests" / "data" / "sim_to_real"
CONFIGS = ROOT / "tests" / "data" / "configs"
EARLIER = sorted(p for p in SETS.glob("prospective*.json") if p.name != "prospective66.json")
DOC = prospective_runs.load(prospective66_runs.DATA)
RUNS = {run["id"]: run for run in DOC["runs"]}
CONC1, CONC32 = (rid for rid in RUNS)  # the file's order: concurrency 1, then 32


def test_the_frozen_blocks_are_self_consistent() -> None:
    """Each block's totals are its prompts times the fixed lengths (random dataset,
    --ignore-eos): 12 x 1,024 = 12,288 in, 12 x 256 = 3,072 out; 640 x 1,024 = 655,360 and
    640 x 256 = 163,840. Its throughputs are the totals over the duration, to the block's 2
    decimals, the duration being rounded too: 12 / 55.38 s = 0.2167 -> 0.22 req/s and 3,072 /
    55.38 = 55.47 tok/s; 640 / 262.63 = 2.437 -> 2.44 and 163,840 / 262.63 = 623.84 against
    623.85 printed. vLLM's mean ITL equals its mean
    TPOT when every request decodes the same 256 tokens (17.10 and 43.36 both)."""
    assert len(RUNS) == 2 and [RUNS[r]["workload"]["max_concurrency"] for r in RUNS] == [1, 32]
    for run in RUNS.values():
        w, m, p = run["workload"], run["measured"], run["published"]
        n = w["num_prompts"]
        assert (w["input_len"], w["output_len"], w["seed"], w["ignore_eos"]) == (
            1024, 256, 42, True)
        assert n == (12 if w["max_concurrency"] == 1 else 640)
        assert m["total_input_tokens"] == n * 1024 and m["total_generated_tokens"] == n * 256
        # The printed duration is itself rounded to 10 ms (+-0.005 s): 1e-4 relative at most.
        assert abs(n / m["duration_s"] - p["request_throughput_req_s"]) <= 0.005
        assert abs(m["total_generated_tokens"] / m["duration_s"] / p["output_throughput_tok_s"]
                   - 1) < 1e-4
        assert m["mean_itl_ms"] == m["mean_tpot_ms"]
        assert m["median_ttft_ms"] <= m["p99_ttft_ms"] and m["median_tpot_ms"] <= m[
            "p99_tpot_ms"]
        assert all(v > 0 for v in m.values())
    # Only the conc-32 block prints End-to-end Latency.
    assert "mean_e2el_ms" in RUNS[CONC32]["measured"]
    assert "mean_e2el_ms" not in RUNS[CONC1]["measured"]


def test_every_run_is_complete() -> None:
    arrivals = json.loads((ROOT / "kvplan" / "engines" / "vllm" / "arrivals.json").read_text())
    for run in RUNS.values():
        src = DOC["sources"][run["source"]]
        assert src["url"].startswith("https://github.com/") and run["url"] == src["url"]
        assert src["stated"] and src["assumed"]
        assert (ROOT / run["model"]).is_file() and run["model_stand_in"] is True
        assert get_gpu(run["gpu"]).name == "RTX-PRO-6000"
        assert run["vllm"] in arrivals["releases"]
        assert (run["tp"], run["max_model_len"], run["max_num_seqs"], run["statistic"]) == (
            4, 32768, 32, "mean")
    assert len(DOC["skipped"]) == 5
    assert any("johnmusgrave.com" in s["runs"] for s in DOC["skipped"])


def test_the_stand_in_config_differs_from_the_bf16_one_only_by_its_quantization() -> None:
    # aiconfigurator's Qwen--Qwen3-235B-A22B-FP8_config.json (SOURCES-prosp66.md): every field
    # of the stored bf16 Qwen3-235B-A22B config, plus block FP8 (e4m3, [128, 128], dynamic)
    # with lm_head and, for each of the 94 layers, its 2 norms and router gate left unconverted:
    # 1 + 94 x 3 = 283 entries.
    fp8 = json.loads((CONFIGS / "qwen3-235b-a22b-fp8.json").read_text())
    bf16 = json.loads((CONFIGS / "qwen3-235b-a22b.json").read_text())
    q = fp8.pop("quantization_config")
    assert fp8 == bf16
    assert (q["quant_method"], q["fmt"], q["weight_block_size"], q["activation_scheme"]) == (
        "fp8", "e4m3", [128, 128], "dynamic")
    assert len(q["modules_to_not_convert"]) == 1 + 94 * 3
    # The fields the post quotes (94 layers, 64 / 4 heads, head_dim 128, 128 experts, 8 per
    # token), and a position limit above the runs' --max-model-len.
    assert (fp8["num_hidden_layers"], fp8["num_attention_heads"], fp8["num_key_value_heads"],
            fp8["head_dim"], fp8["num_experts"], fp8["num_experts_per_tok"]) == (
        94, 64, 4, 128, 128, 8)
    assert fp8["max_position_embeddings"] >= 32768
    assert load_spec(str(CONFIGS / "qwen3-235b-a22b-fp8.json")).id == "qwen3-235b-a22b-fp8"


def test_no_run_is_in_an_earlier_set_or_shares_a_fitted_rows_configuration() -> None:
    old = [prospective_runs.load(path) for path in EARLIER]
    assert len(old) >= 17  # prospective30 ... 65 (53b and 56_served included)
    assert not {run["id"] for d in old for run in d["runs"]} & set(RUNS)
    assert not {run.get("url") for d in old for run in d["runs"]} & {r["url"] for r in
                                                                     RUNS.values()}
    assert not any("kubesimplify" in path.read_text() for path in EARLIER)
    fitted = {r for f in FITTED.values() for r in f.fitted_on}
    keys = {(c.model, get_gpu(c.gpu).name, c.layout.tp)
            for c in (*cost_bench.PREFILL_CASES, *cost_bench.all_cases()) if c.label in fitted}
    assert not {rid for rid, run in RUNS.items()
                if (Path(run["model"]).stem, get_gpu(run["gpu"]).name, run["tp"]) in keys}
    assert not {r for e in SHAPED_BY for r in e.rows} & set(RUNS)
    assert not fitted & set(RUNS)


def test_requests_follow_the_client_command() -> None:
    # --random-input-len 1024 --random-output-len 256 (range ratio 0: fixed), /v1/completions
    # (no chat template), --request-rate inf: every request at t = 0 behind the concurrency.
    for run, n in ((RUNS[CONC1], 12), (RUNS[CONC32], 640)):
        reqs = prospective_runs.requests(run)
        assert len(reqs) == n and {r.arrival_s for r in reqs} == {0.0}
        assert {(r.prompt_len, r.output_len) for r in reqs} == {(1024, 256)}


def _result(rid: str, simulated: dict[str, float]) -> prospective_runs.Result:
    run = RUNS[rid]
    return prospective_runs.Result(run_id=rid, source=run["source"], measured=run["measured"],
                                   simulated=simulated, served={}, preemptions=0,
                                   prefix_hit_rate=0.0)


def test_each_run_is_compared_on_its_means() -> None:
    # Conc 32 (mean TTFT 2,070.58, TPOT 43.36, ITL 43.36, E2E 13,126.87 ms): means of
    # 3,105.87, 39.024, 47.696 and 6,563.435 are +50 %, -10 %, +10 % and -50 %
    # (3,105.87 / 2,070.58 = 1.5; 39.024 / 43.36 = 0.9; 47.696 / 43.36 = 1.1;
    # 6,563.435 / 13,126.87 = 0.5); the p50s (made 10x off) are not compared.
    sim = {"ttft_ms.mean": 3105.87, "tpot_ms.mean": 39.024, "itl_ms.mean": 47.696,
           "e2e_ms.mean": 6563.435, "ttft_ms.p50": 5049.7, "tpot_ms.p50": 405.3}
    e = prospective66_runs.compared(_result(CONC32, sim))
    assert set(e) == {"TTFT", "TPOT", "ITL", "E2E"}
    for column, want in (("TTFT", 0.5), ("TPOT", -0.1), ("ITL", 0.1), ("E2E", -0.5)):
        assert abs(e[column] - want) < 1e-12
    # Conc 1 prints no E2E: 3 columns; mean TTFT 255.31 -> 127.655 is -50 %.
    sim1 = {"ttft_ms.mean": 127.655, "tpot_ms.mean": 17.10, "itl_ms.mean": 17.10}
    e1 = prospective66_runs.compared(_result(CONC1, sim1))
    assert set(e1) == {"TTFT", "TPOT", "ITL"} and abs(e1["TTFT"] + 0.5) < 1e-12
    line = prospective66_runs.medians_line("x", [_result(CONC1, sim1), _result(CONC32, sim)])
    # TTFT median of 50 % and 50 %; TPOT of 0 % and 10 %: 5 %; E2E over the one run.
    assert line == "| x | 2 of 2 | 50.0% (2) | 5.0% (2) | 5.0% (2) | 50.0% (1) |"
    assert prospective66_runs.compared(prospective_runs.Result(
        run_id=CONC1, source="kubesimplify-tp4", measured={}, simulated={}, served={},
        preemptions=0, prefix_hit_rate=0.0, refused="no")) == {}


def test_frozen_then_evaluated_once_and_wired() -> None:
    assert re.fullmatch(r"[0-9a-f]{8}", prospective66_runs.FREEZE)
    assert re.fullmatch(r"[0-9a-f]{8}", prospective66_runs.FIRST)
    record = prospective66_runs.FIRST_EVALUATION
    assert prospective66_runs.FIRST in record and prospective66_runs.FREEZE in record
    assert "NOT evaluated" in DOC["what"]  # the data file stays as frozen
    assert set(prospective66_runs.FIRST_ROWS) == set(RUNS)
    rows = [r for r in prospective66_runs.FIRST_ROWS.values() if r is not None]
    # The record's medians follow from its rows: median(54.2, 25.4) = 39.8; median(9.6, 39.2)
    # = 24.4.
    for i, text in ((0, "mean TTFT"), (1, "mean TPOT")):
        m = statistics.median(abs(r[i]) for r in rows)
        assert f"{text} {m * 100:.1f} %" in record
    bench = (ROOT / "tests" / "benches" / "simulate_bench.py").read_text()
    assert bench.index("prospective65_runs.print_section()") < bench.index(
        "prospective66_runs.print_section()") < bench.index("aiconfig_agg_runs.print_section()")


def test_the_planned_server_pages_its_budget() -> None:
    """kvplan's plan of the runs' server: at TP 4 each GPU keeps 1 of the 4 KV heads, so a
    token costs 2 (K, V) x 94 layers x 1 head x 128 x 2 bytes = 48,128 B = 47 KiB per GPU (the
    post's own derivation), and a 16-token block per layer 16 x 512 = 8,192 B: the pool is
    budget // (8,192 x 94) blocks of 16 tokens. Weights per GPU: the FP8 checkpoint's ~235 B
    parameters over 4 GPUs, between 50 and 60 GiB (the log: 55.19)."""
    plan = prospective66_runs.planned_server(RUNS[CONC1])
    budget = round(plan["kv_budget_gib"] * 2**30)
    assert abs(plan["kv_tokens"] - budget // (8192 * 94) * 16) <= 16
    assert 50 < plan["weights_gib"] < 60
