"""The prospsgl63 search record (tests/data/sim_to_real/sglsearch63.json): no SGLang or
TensorRT-LLM run from a new publisher met the prospective sets' selection rule, so it freezes no
run; its candidates (one new publisher's cookbook cells, P50 figures) name a model config in the
stores, a GPU preset and an SGLang release each, and none is a run an earlier set replayed."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.hardware.gpus import get_gpu

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "tests" / "data" / "sim_to_real"
RECORD = json.loads((SETS / "sglsearch63.json").read_text())


def _cells() -> list[dict]:  # type: ignore[type-arg]
    return [c for group in ("qwen3.6", "qwen3.5") for c in RECORD["candidates"][group]["cells"]]


def test_the_record_freezes_no_run() -> None:
    assert RECORD["runs"] == []
    # Qwen3.6-35B-A3B bf16 HT on B200 and B300 at concurrency 1024 and 4096 (4); Qwen3.5-9B on
    # H100 / H200 / B200 / B300 and Qwen3.5-27B on H200 / B200 / B300, at the same two (14).
    assert len(RECORD["candidates"]["qwen3.6"]["cells"]) == 4
    assert len(RECORD["candidates"]["qwen3.5"]["cells"]) == 14


def test_every_candidate_names_a_config_a_gpu_and_a_release() -> None:
    for c in _cells():
        assert (REPO / c["model"]).is_file(), c["model"]
        assert get_gpu(c["gpu"]).name, c["gpu"]
        major, minor, patch = map(int, c["sglang"].split("."))
        assert (0, 4, 5) <= (major, minor, patch) <= (0, 5, 23), c["sglang"]
        assert c["url"].startswith("https://github.com/sgl-project/sglang/")
        w = c["workload"]
        assert (w["input_len"], w["output_len"], w["random_range_ratio"]) == (8192, 1024, 1.0)
        assert w["max_concurrency"] in (1024, 4096)
        assert c["published_p50"]["ttft_ms"] > 0 and c["published_p50"]["tpot_ms"] > 0


def test_the_qwen36_cells_state_their_prompts_and_the_qwen35_cells_do_not() -> None:
    # qwen3.6.jsx numPromptsByConc {1024: 2048, 4096: 8192}; the qwen3.5.jsx read predates the
    # re-bench's numPromptsByConc.
    assert all(c["workload"]["num_prompts"] == 2 * c["workload"]["max_concurrency"]
               for c in RECORD["candidates"]["qwen3.6"]["cells"])
    assert all(c["workload"]["num_prompts"] is None
               for c in RECORD["candidates"]["qwen3.5"]["cells"])


# The sets frozen after this search: prospective64 (stop 63) took its candidates up after the
# decision to compare a P50 row P50 to P50 (tests/test_prospective64.py), so it is not one;
# prospective65 (stop 64) took up the same cookbook file's MoE cells (tests/test_prospective65.py).
LATER = ("prospective64.json", "prospective65.json")


def test_no_candidate_is_a_run_an_earlier_set_replayed() -> None:
    urls = {c["url"] for c in _cells()} | {RECORD["candidates"][g][k]
                                          for g in ("qwen3.6", "qwen3.5")
                                          for k in ("benchmarks", "config")}
    for path in sorted(SETS.glob("prospective*.json")):
        if path.name in LATER:
            continue
        text = path.read_text()
        doc = json.loads(text)
        assert not urls & {run.get("url") for run in doc["runs"]}, path.name
        assert "dougyster" not in text, path.name
        assert "qwen3.5-benchmarks.jsx" not in text and "qwen3.6-benchmarks.jsx" not in text
