"""The frozen prospdis66 set (tests/data/disagg/public_disagg_runs66.json, issue 29): every run
names its source doc and YAML at a stored commit, states both roles' layouts in aiconfigurator's
fields, a model kvplan sizes, the B200 preset, vLLM 0.20.1 and a KV link preset; none is in an
earlier disagg data file. Held out: no number here is asserted against kvplan's prediction (the
replay is tests.benches.prospdis66_runs); the summary is checked on hand-made points."""

from __future__ import annotations

import json

import pytest

from kvplan.sources.resolve import load_model
from tests.benches import disagg_rows, prospdis66_runs
from tests.benches.disagg_public import Point

DOC = prospdis66_runs.load()
RUNS = DOC["runs"]
REPO = "https://github.com/ankdeshm/dynamo_disaag_serving_gke/blob/"
FIELDS = ("backend", "backend_version", "model_path", "system", "precision", "isl", "osl",
          "kv_link",
          *(f"{r}_{f}" for r in ("prefill", "decode")
            for f in ("num_workers", "tp_size", "pp_size", "attention_dp_size", "moe_ep_size")))


def test_the_set_is_eight_runs_of_fifteen_points_with_unique_ids() -> None:
    # docs 09 (1 point), 13 (2 runs x 2), 11 (2), 14 (2), 15 (3 runs x 2).
    assert len(RUNS) == 8
    assert sum(len(r["points"]) for r in RUNS) == 1 + 4 + 2 + 2 + 6
    assert len({r["id"] for r in RUNS}) == len(RUNS)


@pytest.mark.parametrize("run", RUNS, ids=[r["id"] for r in RUNS])
def test_each_run_is_complete(run: dict) -> None:
    assert run["url"].startswith(REPO)
    row = run["row"]
    assert set(FIELDS) <= set(row)
    assert (row["model_path"], row["precision"]) in disagg_rows.MODELS
    assert row["system"] == "b200_sxm" and row["backend_version"] == "0.20.1"
    assert disagg_rows.kv_link(row).name == row["kv_link"]
    assert run["stated"] and run["reading"] and run["caveat"]
    assert "vllm-runtime:1.2.1" in run["stated"]
    concs = [p["concurrency"] for p in run["points"]]
    assert concs == sorted(set(concs)) and set(concs) <= {16, 32}
    for p in run["points"]:
        assert p["url"] == run["url"]
        assert p["measured_ttft_ms"] > 0 and p["measured_tpot_ms"] > 0 and not p["approximate"]
        assert p["request_count"] >= 100


def test_the_llama_checkpoint_is_llama_3_1_70b_with_fp8_per_tensor_linear_layers() -> None:
    # Llama-3.1-70B: 80 layers, hidden 8192; the reconstructed
    # quantization_config: FP8 weights and activations, one scale per tensor, lm_head bf16.
    path, kv, _ = disagg_rows.MODELS[("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "fp8")]
    spec, notes = load_model(str(disagg_rows.ROOT / path))
    assert kv == "fp8"
    assert (spec.num_hidden_layers, spec.hidden_size) == (80, 8192)
    assert notes == ["quantization_config: compressed-tensors (fp8 per-tensor)"]
    q = json.loads((disagg_rows.ROOT / path).read_text())["quantization_config"]
    group = q["config_groups"]["group_0"]
    assert group["weights"]["strategy"] == group["input_activations"]["strategy"] == "tensor"
    assert q["ignore"] == ["lm_head"]


def test_no_run_is_in_an_earlier_data_file() -> None:
    # The repository appears only in this set's files and in SOURCES.md's entry for them.
    mine = {prospdis66_runs.DATA.name, "prospdis66_search.json", "SOURCES.md"}
    for path in sorted(disagg_rows.DATA.iterdir()):
        if path.is_file() and path.name not in mine and path.suffix != ".gz":
            assert "dynamo_disaag_serving_gke" not in path.read_text(), path.name
    entries = (disagg_rows.DATA / "SOURCES.md").read_text().split("\n- ")
    hits = [e for e in entries if "dynamo_disaag_serving_gke" in e]
    assert len(hits) == 1 and hits[0].startswith("`public_disagg_runs66.json`")


def test_the_search_record_lists_queries_and_near_misses() -> None:
    search = json.loads((disagg_rows.DATA / "prospdis66_search.json").read_text())
    assert len(search["queries"]) >= 10
    assert all(m["url"].startswith("https://") and m["lacks"] for m in search["near_misses"])


def _point(run: dict, p: dict, ttft_factor: float, tpot_factor: float) -> Point:
    return Point(run=run["id"], concurrency=p["concurrency"],
                 measured_ttft_ms=p["measured_ttft_ms"],
                 measured_tpot_ms=p["measured_tpot_ms"], approximate=False,
                 ttft_ms=p["measured_ttft_ms"] * ttft_factor,
                 tpot_ms=p["measured_tpot_ms"] * tpot_factor)


def test_the_summary_counts_one_row_and_a_refused_run() -> None:
    # Hand-made, not kvplan's: doc 09's point at 1.0x TTFT and 2.0x TPOT: TTFT inside
    # [0.75, 1.33], TPOT above; a refused run of 2 points counts 2 more points outside, so
    # 3 points: both 0 of 3, TTFT 1 of 3 (33%), TPOT 0 of 3.
    one, two = RUNS[0], RUNS[1]
    pts = [_point(one, one["points"][0], 1.0, 2.0)]
    lines = prospdis66_runs.section(pts, {two["id"]: "refused here"}, [one, two])
    text = "\n".join(lines)
    assert "| 32 | 1,454.4 / 17.08 | 1,454.4 / 34.16 | 1.00 | 2.00 |" in text
    assert "both 0 of 3 (0%); TTFT 1 of 3 (33%); TPOT 0 of 3 (0%)" in text
    assert f"- {two['id']}: refused (2 points): refused here" in text
    assert f"- {one['id']}: both 0 of 1 (0%); TTFT 1 of 1 (100%); TPOT 0 of 1 (0%)" in text


def test_the_first_evaluation_is_recorded_for_every_point() -> None:
    # Run once on the freeze commit: every point replayed (none refused), each with its ratios.
    assert prospdis66_runs.FREEZE == "41e39618"
    assert prospdis66_runs.FIRST_EVALUATION and prospdis66_runs.FIRST_EVALUATION.startswith(
        prospdis66_runs.FREEZE)
    assert prospdis66_runs.FIRST_REFUSED == {}
    keys = {f"{r['id']} @ {p['concurrency']}" for r in RUNS for p in r["points"]}
    assert set(prospdis66_runs.FIRST_ROWS) == keys
    # The summary line is the count of the recorded ratios inside [0.75, 1.33]: TPOT 8 of 15.
    tpot_in = sum(0.75 <= o <= 1.33 for _, o in prospdis66_runs.FIRST_ROWS.values())
    assert tpot_in == 8 and "TPOT 8 of 15" in prospdis66_runs.FIRST_EVALUATION
