"""The frozen prospdis65 set (tests/data/disagg/public_disagg_runs65.json, issue 29): every run
names its source and each point its saved result, states both roles' layouts in aiconfigurator's
fields, a model kvplan sizes, a GPU preset, a vLLM release and a KV link preset; none is in an
earlier disagg data file. Held out: no number here is asserted against kvplan's prediction (the
replay is tests.benches.prospdis65_runs)."""

from __future__ import annotations

import pytest

from tests.benches import disagg_rows, prospdis65_runs

DOC = prospdis65_runs.load()
RUNS = DOC["runs"]
REPO = "https://github.com/anyscale/ray-serve-llm-perf-examples/"
SHA = "04ba8ab40727da4e10adce75b6a3777360582b6e"
FIELDS = ("backend", "backend_version", "model_path", "system", "precision", "isl", "osl",
          "kv_link",
          *(f"{r}_{f}" for r in ("prefill", "decode")
            for f in ("num_workers", "tp_size", "pp_size", "attention_dp_size", "moe_ep_size")))


def test_the_set_is_eleven_runs_of_sixty_one_points_with_unique_ids() -> None:
    # 7 packed H100 P:D layouts + 1 H100 spread over EFA + 2 H200 (pack, spread), 6
    # concurrencies each (4, 8, 16, 32, 48, 64), + 1 run of one point (8,000 / 1,000, conc 64).
    assert len(RUNS) == 11
    assert sum(len(r["points"]) for r in RUNS) == 10 * 6 + 1
    assert len({r["id"] for r in RUNS}) == len(RUNS)


@pytest.mark.parametrize("run", RUNS, ids=[r["id"] for r in RUNS])
def test_each_run_is_complete(run: dict) -> None:
    assert run["url"].startswith(REPO + "tree/" + SHA + "/")
    row = run["row"]
    assert set(FIELDS) <= set(row)
    assert (row["model_path"], row["precision"]) in disagg_rows.MODELS
    assert row["system"] in disagg_rows.GPUS and row["backend_version"] == "0.11.0"
    assert disagg_rows.kv_link(row).name == row["kv_link"]
    assert all(int(row[f"{r}_num_workers"]) >= 1 and int(row[f"{r}_tp_size"]) >= 1
               for r in ("prefill", "decode"))
    assert run["stated"] and run["reading"] and run["caveat"]
    concs = [p["concurrency"] for p in run["points"]]
    assert concs == sorted(set(concs))
    for p in run["points"]:
        assert p["url"].startswith(REPO + "blob/" + SHA + "/")
        assert p["url"].endswith(f"/conc{p['concurrency']}.json")
        assert p["num_prompts"] == 5 * p["concurrency"]  # run_bm.sh: 5 x the concurrency
        assert p["measured_ttft_ms"] > 0 and p["measured_tpot_ms"] > 0 and not p["approximate"]


def test_no_run_is_in_an_earlier_disagg_data_file() -> None:
    # Neither the repository nor any of its files appears in the disagg data files read before
    # (SOURCES.md names it once, in this set's own entry).
    mine = (prospdis65_runs.DATA.name, "SOURCES.md")
    for path in sorted(disagg_rows.DATA.iterdir()):
        if path.is_file() and path.name not in mine and path.suffix != ".gz":
            assert "ray-serve-llm-perf-examples" not in path.read_text(), path.name
    entries = (disagg_rows.DATA / "SOURCES.md").read_text().split("\n- ")
    hits = [e for e in entries if "ray-serve-llm-perf-examples" in e]
    assert len(hits) == 1 and hits[0].startswith("`public_disagg_runs65.json`")


def test_a_row_stating_its_link_crosses_it() -> None:
    # nvlink4: 450 GB/s each way x 1 port x 0.8 achieved = 360 GB/s; efa-p5: 100 Gb/s = 12.5
    # GB/s a device x 4 devices a GPU x 0.8 = 40 GB/s; a row without `kv_link` keeps the
    # replay's default between HGX nodes, ib-ndr: 400 Gb/s = 50 GB/s x 1 x 0.9 = 45 GB/s.
    pack = next(r["row"] for r in RUNS if r["row"]["kv_link"] == "nvlink4")
    efa = next(r["row"] for r in RUNS if r["row"]["kv_link"] == "efa-p5")
    assert disagg_rows.kv_link(pack).bytes_per_s == pytest.approx(360e9)
    assert disagg_rows.kv_link(efa).bytes_per_s == pytest.approx(40e9)
    plain = {k: v for k, v in pack.items() if k != "kv_link"}
    assert disagg_rows.kv_link(plain).bytes_per_s == pytest.approx(45e9)
    assert disagg_rows.kv_link({**plain, "system": "gb200"}).name == "nvlink5"


def test_the_first_evaluation_is_recorded_for_every_run() -> None:
    assert prospdis65_runs.FREEZE and prospdis65_runs.FIRST_EVALUATION
    assert prospdis65_runs.FIRST_EVALUATION.startswith(prospdis65_runs.FREEZE)
    # Nothing was replayed at the first evaluation: every run is recorded refused, none timed.
    assert set(prospdis65_runs.FIRST_REFUSED) == {r["id"] for r in RUNS}
    assert prospdis65_runs.FIRST_ROWS == {}


def test_the_timed_records_cover_every_point() -> None:
    # The rule (vLLM's hybrid KV-cache manager off with a KV connector before 0.22: every layer
    # full attention, NIXL reads every block; kvplan.engines.vllm.kv_transfer) made every run
    # replayable; its first timed evaluation (RULE_EVALUATION) stays recorded per point.
    assert prospdis65_runs.RULE_EVALUATION.startswith(prospdis65_runs.RULE_COMMIT)
    assert prospdis65_runs.CLIENT_EVALUATION.startswith(prospdis65_runs.CLIENT_COMMIT)
    assert set(prospdis65_runs.RULE_ROWS) == set(prospdis65_runs.CLIENT_ROWS)
    assert len(prospdis65_runs.CLIENT_ROWS) == 61
    assert prospdis65_runs.HOST_EVALUATION.startswith(prospdis65_runs.HOST_COMMIT)
    assert set(prospdis65_runs.HOST_ROWS) == set(prospdis65_runs.CLIENT_ROWS)


def test_the_replay_matches_the_latest_record() -> None:
    # The replay with the points' own client (vllm bench serve, every request averaged, the
    # first burst included: raypd65, shaped) and vLLM's engine-core host work in the role
    # steps (pdhost65, shaped), at stop 64's merged rules (hopperops65's norm bytes), with the
    # decode steps padded to vLLM's next CUDA-graph size (raypd66, shaped), is the latest
    # record before stop 65's merge, PAD_ROWS; with tpslope66's Marlin padded shapes (a rule
    # not written on these points) the latest, MARLIN_ROWS.
    points, refused = prospdis65_runs.replay_all()
    assert refused == {}
    assert prospdis65_runs.STOP64_EVALUATION.startswith(prospdis65_runs.STOP64_COMMIT)
    assert set(prospdis65_runs.STOP64_ROWS) == set(prospdis65_runs.HOST_ROWS)
    assert prospdis65_runs.PAD_EVALUATION.startswith(prospdis65_runs.PAD_COMMIT)
    assert set(prospdis65_runs.PAD_ROWS) == set(prospdis65_runs.HOST_ROWS)
    assert prospdis65_runs.MARLIN_EVALUATION.startswith(prospdis65_runs.MARLIN_COMMIT)
    assert set(prospdis65_runs.MARLIN_ROWS) == set(prospdis65_runs.PAD_ROWS)
    assert len(points) == len(prospdis65_runs.MARLIN_ROWS) == 61
    for p in points:
        ttft, tpot = prospdis65_runs.MARLIN_ROWS[prospdis65_runs.key(p)]
        assert p.ttft_ratio is not None and ttft is not None
        assert round(p.ttft_ratio, 2) == ttft and round(p.tpot_ratio, 2) == tpot
