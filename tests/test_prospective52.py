"""The frozen prospective52 set (tests/data/sim_to_real/prospective52.json): every run names its
source, model config, GPU preset, SGLang release and measured figures, the replay's requests
are the lengths the run's client drew (its printed totals), and a run kvplan refuses is
reported, not simulated (the full replay is tests.benches.prospective52_runs)."""

from __future__ import annotations

import functools
from pathlib import Path

from tests.benches import prospective31_runs, prospective52_runs, prospective_runs

ROOT = Path(__file__).resolve().parents[1]


# The set's runs by id.
_runs = functools.partial(prospective_runs.runs_by_id, prospective52_runs.DATA)


def test_every_run_is_complete() -> None:
    doc = prospective_runs.load(prospective52_runs.DATA)
    assert len(doc["runs"]) == 24
    assert not prospective_runs.incomplete(doc)
    assert {run["engine"] for run in doc["runs"]} == {"sglang"}
    for run in doc["runs"]:
        for key in ("mean_e2e_ms", "median_e2e_ms", "total_input_tokens",
                    "total_generated_tokens"):
            assert run["measured"][key] > 0, (run["id"], key)
    # Three publishers, none of prospective30's or 31's, no page another bench already uses.
    assert len({prospective_runs.publisher(doc, prospective_runs.Result(
        run_id=r["id"], source=r["source"], measured={}, simulated={}, served={},
        preemptions=0, prefix_hit_rate=0.0)) for r in doc["runs"]}) == 3
    old = ({r["source"] for r in prospective_runs.load()["runs"]}
           | {r["source"] for r in prospective_runs.load(prospective31_runs.DATA)["runs"]})
    assert not old & {r["source"] for r in doc["runs"]}
    cost_cases = (ROOT / "tests" / "benches" / "cost_cases.py").read_text()
    for src in doc["sources"].values():
        page = src["url"].split("/docs/autoregressive/")[1]
        assert f'"{page}"' not in cost_cases, page


def test_requests_are_the_clients_draw() -> None:
    # SGLang 0.5.7's bench_serving draws every prompt length in 1..1000, then every output
    # length in 1..1000, from np.random.seed(1): the 10-prompt run's printed totals are 6,101
    # in and 4,220 out. 0.5.6's draw (outputs in 0..1000, the same random stream) gives the
    # same prompts and every output one token shorter: 4,220 - 10 = 4,210.
    reqs = prospective_runs.requests(_runs()["sgl-cookbook ERNIE-4.5-21B-A3B MI300X random "
                                            "1000/1000 conc 1"])
    assert (sum(r.prompt_len for r in reqs), sum(r.output_len for r in reqs)) == (6101, 4220)
    assert {r.arrival_s for r in reqs} == {0.0}
    old = prospective_runs.bench_serving_random(10, 1000, 1000)
    assert [r.prompt_len for r in old] == [r.prompt_len for r in reqs]
    assert sum(r.output_len for r in old) == 4210
    # Every run whose page printed the draw's totals replays them exactly; Llama-4's tokenizer
    # re-encodes the decoded prompts to other input totals at 80 and 500 prompts (stated).
    for run in _runs().values():
        reqs = prospective_runs.requests(run)
        drawn = (sum(r.prompt_len for r in reqs), sum(r.output_len for r in reqs))
        printed = (run["measured"]["total_input_tokens"],
                   run["measured"]["total_generated_tokens"])
        if "Llama-4" in run["id"] and run["workload"]["num_prompts"] > 10:
            assert drawn[1] == printed[1] and drawn[0] != printed[0], run["id"]
        else:
            assert drawn == printed, run["id"]


def test_a_run_kvplan_refuses_is_reported_not_simulated() -> None:
    # GLM-4.7-Flash's page says SGLang 0.5.7, which has no model class for
    # Glm4MoeLiteForCausalLM (the 0.5.7 wheel's srt/models/ holds glm4, glm4_moe,
    # glm4_moe_nextn, glm4v, glm4v_moe): refused, the measured figures kept.
    result = prospective_runs.run_one(_runs()["sgl-cookbook GLM-4.7-Flash B200 random "
                                               "1000/1000 conc 1"])
    assert result.refused.startswith("tests/data/configs/glm-4.7-flash.json: ")
    assert "Glm4MoeLiteForCausalLM" in result.refused
    assert result.simulated == {} and result.measured["mean_ttft_ms"] == 131.36


def test_an_sglang_run_is_a_closed_loop_without_the_frontend_stage() -> None:
    # ERNIE-4.5-21B-A3B at max concurrency 1: one request at a time, so the mean E2E is the
    # mean TTFT plus the mean output's decode (vLLM's --frontend stage does not apply).
    result = prospective_runs.run_one(_runs()["sgl-cookbook ERNIE-4.5-21B-A3B MI300X random "
                                               "1000/1000 conc 1"])
    assert not result.refused and result.served == {} and result.preemptions == 0
    s = result.simulated
    assert s["e2e_ms.mean"] > s["ttft_ms.mean"] + 400 * s["tpot_ms.mean"]
