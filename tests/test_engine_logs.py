"""vLLM's KV budget against public start-up logs (issue #13), replayed through the CLI by
examples/engine_bench.py: given the model, GPU name, fraction, TP/PP, engine version and the
logged weights, kvplan's `kv_budget_bytes` against "Available KV cache memory"."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _bench():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("engine_bench",
                                                  ROOT / "examples" / "engine_bench.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


bench = _bench()
ROWS = [bench.compare(log) for log in bench.load_logs()]


def test_every_log_names_its_source_and_quotes_the_lines() -> None:
    for row in ROWS:
        log = row["log"]
        assert log["url"] and "Available KV cache memory" in log["quote"]
        assert f"{log['available_kv_cache_gib']}" in log["quote"].replace("GiB", " GiB"), log["url"]


def test_vllm_budget_within_two_percent_median_and_ninety_percent_within_tolerance() -> None:
    # Issue #13's target: median within 2 %, 90 % of logs within max(2 %, 0.25 GiB).
    s = bench.summary(ROWS)
    assert s["logs"] >= 60
    assert s["median_error"] <= 0.02
    assert s["within_share"] >= 0.90


def test_held_out_logs() -> None:
    # The logs not used to fit the sampler rule (other models, versions 0.10-0.17 and GPUs
    # other than the H100): the median still within 2 %; 85 % within the tolerance today (the
    # misses are listed in examples/engine-bench.md and README).
    held = [r for r in ROWS if not r["log"]["fitted"]]
    s = bench.summary(held)
    assert s["logs"] >= 35
    assert s["median_error"] <= 0.02
    assert s["within_share"] >= 0.80


@pytest.mark.parametrize("model", ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct"])
def test_sampler_peak_matches_the_logged_activation_peak(model: str) -> None:
    # The rule was fitted on these bf16 runs; float32 logits add 2 B each (2.13 vs 2.21 GiB).
    rows = [r for r in ROWS if r["log"]["model"] == model and r["log"]["activation_peak_gib"]
            and r["log"]["pp"] == 1 and r["log"]["fitted"]]
    assert rows
    for r in rows:
        assert abs(r["peak_gib"] - r["log"]["activation_peak_gib"]) < 0.05, r["log"]["url"]


def test_engine_bench_md_is_current() -> None:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main()
    assert out.getvalue() == (ROOT / "examples" / "engine-bench.md").read_text()
