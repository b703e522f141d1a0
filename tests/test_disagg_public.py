"""The frozen public disaggregated runs (tests/data/disagg/public_disagg_runs.json, issue 29):
each names its source, states its layout in aiconfigurator's fields, and replays through the
disagg bench's code (tests/benches/disagg_public.py). Held out: no number here is asserted
against kvplan's prediction (the bench page reports them, misses included)."""

from __future__ import annotations

import math

import pytest

from tests.benches.disagg_public import replay_run, runs

RUNS = runs()
FIELDS = ("backend", "backend_version", "model_path", "system", "precision", "isl", "osl",
          *(f"{r}_{f}" for r in ("prefill", "decode")
            for f in ("num_workers", "tp_size", "pp_size", "attention_dp_size", "moe_ep_size")))


@pytest.mark.parametrize("run", RUNS, ids=[r["id"] for r in RUNS])
def test_each_run_names_its_source_and_full_layout(run: dict) -> None:
    # A public GitHub file the code index holds without naming its repository is cited by its
    # index file id (as tests/data/disagg/nixl_logs.json does).
    assert run["url"].startswith("https://github.com/") or "index file id" in run["url"]
    assert set(FIELDS) <= set(run["row"])
    assert all(run["row"][f"{r}_{f}"] for r in ("prefill", "decode")
               for f in ("num_workers", "tp_size"))
    assert run["points"] and all(p["concurrency"] >= 1 for p in run["points"])


@pytest.mark.parametrize("run", RUNS, ids=[r["id"] for r in RUNS])
def test_each_run_replays_at_its_first_point(run: dict) -> None:
    # One point is enough to show kvplan sizes and simulates the row (no refusal); the bench
    # replays all of them.
    first = {**run, "points": run["points"][:1]}
    (p,) = replay_run(first)
    assert p.tpot_ms is not None and math.isfinite(p.tpot_ms)
    # One output token (the llm-d study's OSL=1 sweep) has no time per output token: the
    # request ends at its first token, whose time is the replay's answer.
    if int(run["row"]["osl"]) > 1:
        assert p.tpot_ms > 0
    else:
        assert p.ttft_ms is not None and math.isfinite(p.ttft_ms) and p.ttft_ms > 0
