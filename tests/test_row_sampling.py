"""The bench rows' recorded sampling (tests.benches.row_sampling, sampler63): which rows carry
it, and what each resolves to, worked by hand from the client's payload and the checkpoint's
generation_config.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.engines.vllm.sampler import SamplingParams
from tests.benches.row_sampling import row_sampling, sampling_label
from tests.benches.sim_to_real import load_runs

DATA = Path(__file__).parent / "data" / "sim_to_real"


def _runs(name: str) -> list[dict]:  # type: ignore[type-arg]
    return json.loads((DATA / f"{name}.json").read_text())["runs"]


def test_every_vllm_015_row_of_the_scicom_and_dashboard_sets_records_its_sampling() -> None:
    # The sampler is read for vLLM 0.15 only: exactly the 0.15 rows carry it (26 + 49 + 1).
    for name, count in (("prospective56", 26), ("prospective62", 49), ("prospective57", 1)):
        runs = _runs(name)
        with_it = [r for r in runs if "sampling" in r]
        assert len(with_it) == count
        assert all(str(r["vllm"]).startswith("0.15") and r.get("engine", "vllm") == "vllm"
                   for r in with_it)
        assert not [r["id"] for r in runs if "sampling" not in r
                    and r.get("engine", "vllm") == "vllm" and str(r.get("vllm")).startswith("0.15")]


@pytest.mark.parametrize(("model_id", "expected"), [
    # `vllm bench serve` 0.15.0 sends no key: every value from the checkpoint's file.
    ("Qwen/Qwen3-8B", SamplingParams(temperature=0.6, top_p=0.95, top_k=20)),
    ("Qwen/Qwen3-32B", SamplingParams(temperature=0.6, top_p=0.95, top_k=20)),
    # Llama-3.1-70B-Instruct: temperature 0.6, top_p 0.9, no top_k (the server's 0).
    ("meta-llama/Llama-3.1-70B-Instruct", SamplingParams(temperature=0.6, top_p=0.9, top_k=0)),
    # gpt-oss-120b's file has none of the three: the server's 1.0 / 1.0 / 0, no sort.
    ("openai/gpt-oss-120b", SamplingParams(temperature=1.0, top_p=1.0, top_k=0)),
])
def test_scicom_rows_resolve_to_the_checkpoints_keys(model_id: str,
                                                     expected: SamplingParams) -> None:
    got = {row_sampling(r["sampling"]) for name in ("prospective56", "prospective62")
           for r in _runs(name) if r.get("model_id") == model_id and "sampling" in r}
    assert got == {expected}


def test_the_dashboard_client_sends_temperature_zero_so_greedy() -> None:
    (run,) = [r for r in _runs("prospective57") if "sampling" in r]
    params = row_sampling(run["sampling"])
    assert params is not None and params.greedy and sampling_label(params) == "greedy"


def test_study_rows_resolve_by_model_and_the_other_sets_carry_none() -> None:
    labels = {}
    for kw in ({}, {"prospective": True}, {"blind": True}):
        for run in load_runs(**kw)[1]:
            params = row_sampling(run.sampling)
            assert params is not None, run.id
            labels.setdefault(Path(run.model).name, set()).add(sampling_label(params))
    # inference-perf sends no key: Qwen3-14B 0.6 / 0.95 / 20, Llama-3.1-8B 0.6 / 0.9, Mixtral's
    # file none (temperature 1, no top-p, no top-k: sampled without a sort).
    assert labels == {"qwen3-14b.json": {"T 0.6, top-p 0.95, top-k 20"},
                      "llama-3.1-8b": {"T 0.6, top-p 0.9"},
                      "mixtral-8x7b.json": {"T 1, top-p 1"},
                      "mixtral-8x22b-instruct.json": {"T 1, top-p 1"}}
    assert all(run.sampling is None for run in load_runs(offload=True)[1])
    assert row_sampling(None) is None


def test_run_one_charges_the_recorded_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    # prospective56's Qwen3-8B H100 TP 8 run at concurrency 200 (1,024 in, 128 out): its
    # decode steps carry up to 200 rows, each charged vLLM 0.15's top-k + top-p sampler over
    # 151,936 logits, 3.0437 ms at 200 rows on the H100 (tests/test_vllm_sampler.py, worked by
    # hand: 302 B an element at 3.015e12 B/s). The mean TPOT rises by at most that, and by
    # more than 90 % of it (most steps hold all 200 requests; the prefill steps' rows are
    # fewer). Measured here: +2.970 ms.
    # The engine alone (`simulate --no-frontend`): the default API-server stage (frontdef67)
    # takes every step's 200 outputs on its loop, which shifts the steps (+3.19 ms with it).
    import kvplan.analysis.simulate.run as sim_run
    from tests.benches.prospective_runs import run_one

    monkeypatch.setattr(sim_run, "measured_default", lambda **k: False)
    (run,) = [r for r in _runs("prospective56")
              if r["id"] == "scicom vLLM Qwen3-8B H100 TP8 random 1024/128 conc 200 (1000 prompts)"]
    without = run_one(run, charge_sampling=False).simulated["tpot_ms.mean"]
    with_it = run_one(run).simulated["tpot_ms.mean"]
    assert 0.9 * 3.0437 < with_it - without <= 3.0437
