"""`kvplan simulate --frontend`: vLLM's API server's serial CPU stage before the engine
(kvplan.engines.vllm.frontend ApiServerCost; kvplan.analysis.simulate.frontend ServerQueue), its
queue worked by hand and its fitted constants against the rows they were fitted on."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.frontend import ServerQueue
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.vllm.frontend import (
    VLLM_API_LOOP_COST,
    VLLM_API_LOOP_MEASURED,
    VLLM_API_OUTPUT_COST,
    VLLM_API_SERVER_COST,
    VLLM_API_SERVER_LATENCY_S,
    VLLM_API_SERVER_S_PER_REQUEST,
    VLLM_API_TOKENIZER_BATCHING,
    VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN,
    ApiServerCost,
)
from kvplan.sources.resolve import load_model
from tests.benches import prospective_runs
from tests.test_simulate_frontend import _FixedCost

runner = CliRunner()


def _cost(ms: float, *, us_per_token: float = 0.0, latency_ms: float = 0.0) -> ApiServerCost:
    return ApiServerCost(s_per_request=ms / 1e3, s_per_prompt_token=us_per_token / 1e6,
                         latency_s=latency_ms / 1e3, source="by hand")


def test_500_requests_at_once_leave_one_service_time_apart() -> None:
    # 500 requests sent at t = 0 through a serial stage of 10 ms each: the k-th (from 1) leaves
    # at k x 10 ms, the last at 500 x 10 ms = 5 s (a ceiling of 100 requests/s); a latency of
    # 5 ms delays them all by 5 ms, the queue starting when the first reaches the server.
    queue = ServerQueue(_cost(10.0))
    leaves = [queue.leave_s(0.0, 512) for _ in range(500)]
    assert leaves[0] == pytest.approx(0.010) and leaves[-1] == pytest.approx(5.0)
    late = ServerQueue(_cost(10.0, latency_ms=5.0))
    assert [late.leave_s(0.0, 512) for _ in range(500)][-1] == pytest.approx(5.005)


def test_the_server_idles_between_spaced_arrivals() -> None:
    # Sent at 0, 5 and 50 ms, 10 ms each: 0-10, queued 10-20, then idle until 50: 50-60.
    # Per prompt token 20 us on a 500-token prompt adds 10 ms of service: 20 ms each,
    # leaving at 20, 40 and 70 ms.
    queue = ServerQueue(_cost(10.0))
    assert [round(queue.leave_s(t / 1e3, 500) * 1e3, 9) for t in (0, 5, 50)] == [10, 20, 60]
    tokens = ServerQueue(_cost(10.0, us_per_token=20.0))
    assert [round(tokens.leave_s(t / 1e3, 500) * 1e3, 9) for t in (0, 5, 50)] == [20, 40, 70]


@pytest.mark.parametrize("bulk", [True, False])
def test_the_engine_sees_the_last_of_500_at_500_service_times(bulk: bool) -> None:
    # 500 one-token requests at t = 0 through a 4 ms stage, engine steps of 10 ms
    # (_FixedCost), synchronous scheduling: the engine is handed the last request at
    # 500 x 4 ms = 2.0 s, schedules it in the step starting at the first step boundary after
    # that, and its one token leaves that step's end. Steps start at 4 ms (the first request
    # alone) and then every 10 ms: 4, 14, ..., 1994, 2004: the last one's token at 2.014 s.
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=1) for _ in range(500)]
    pool = KVPool(2000, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=512, max_num_batched_tokens=8192,
                                          max_model_len=64, api_server=_cost(4.0)),
                    _FixedCost(), bulk_decode=bulk)
    done = sorted(sim.run(specs).finished, key=lambda r: r.rid)
    assert done[-1].seen_s == pytest.approx(2.0)
    assert done[-1].first_token_s == pytest.approx(2.014)
    assert done[0].first_token_s == pytest.approx(0.014)


def test_the_stage_comes_before_the_tokenizer_batcher() -> None:
    # Leaves the stage at 10 ms (sent at 0, 10 ms each), then finds the 2 ms batcher idle:
    # handed to the engine at 12 ms; the second leaves at 20 ms, batcher closed at 12: 22 ms.
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=1) for _ in range(2)]
    pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                          max_model_len=64, api_server=_cost(10.0),
                                          tokenizer_batching=VLLM_API_TOKENIZER_BATCHING),
                    _FixedCost())
    done = sorted(sim.run(specs).finished, key=lambda r: r.rid)
    assert [round(r.seen_s * 1e3, 9) for r in done] == [12.0, 22.0]


def test_setup_adds_the_stage_only_when_asked() -> None:
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine_version="0.19.0")
    assert setup(spec, inputs, default_frontend=False)[0].scheduler.api_server is None
    # frontdef67: a `vllm serve` run's default is the loop's measured parts, no latency.
    default, default_notes = setup(spec, inputs)
    assert default.scheduler.api_server == VLLM_API_LOOP_MEASURED
    assert VLLM_API_LOOP_MEASURED == replace(VLLM_API_LOOP_COST, latency_s=0.0,
                                             source=VLLM_API_LOOP_MEASURED.source)
    assert any(n.startswith("API server CPU (default for `vllm serve`") for n in default_notes)
    # In process (no API server), none.
    assert setup(spec, inputs, api_server=False)[0].scheduler.api_server is None
    sim, notes = setup(spec, inputs, frontend=True)
    # vLLM's --frontend is the API server's one loop: the measured ingestion and, on the same
    # FIFO, the measured output stage (vllmhost62).
    assert sim.scheduler.api_server == VLLM_API_LOOP_COST
    # 0.19.0 >= 0.17: with the detokenizer's whole-prompt prime (tests/test_detok_prime.py).
    assert sim.scheduler.api_output == replace(
        VLLM_API_OUTPUT_COST, s_per_primed_token=VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN,
        source=sim.scheduler.api_output.source)
    assert any("--frontend" in n and "measured with vLLM's own code" in n for n in notes)
    assert setup(spec, inputs, api_output=True)[0].scheduler.api_server is None
    # SGLang's --frontend is its TokenizerManager (tests/test_sglang_frontend.py).


def test_the_fitted_constants_reproduce_their_two_rows() -> None:
    # tests/benches/frontend_fit.py solved these two rows' mean TTFT together (kvcached's H100
    # vLLM 0.19.0 Qwen3-0.6B, 500 x 512 in / 128 out, seed 42): 2,996.34 ms at rate inf and
    # 39.14 ms at 16 req/s. Without the stage kvplan gives 259.7 and 8.0 ms; with it the
    # rounded constants (11.85 ms per request, 18.18 ms latency) give both back within 0.5 %.
    assert (VLLM_API_SERVER_S_PER_REQUEST, VLLM_API_SERVER_LATENCY_S) == (0.01185, 0.01818)
    runs = {r["id"]: r for r in prospective_runs.load()["runs"]}
    for row in prospective_runs.FRONTEND_FIT_ROWS:
        run = runs[row]
        spec = load_model(str(prospective_runs.REPO / run["model"]))[0]
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine_version=run["vllm"],
                                 mem_fraction=run["gpu_memory_utilization"])
        # the old fit's stage alone, as frontend_fit.py ran it (before frontdef67's default)
        sim, _ = setup(spec, inputs, default_frontend=False)
        sim = replace(sim, scheduler=replace(sim.scheduler, api_server=VLLM_API_SERVER_COST))
        ttft = simulate(sim, prospective_runs.requests(run)).metrics.ttft_ms["mean"]
        assert ttft == pytest.approx(run["measured"]["mean_ttft_ms"], rel=0.005)


def test_the_loop_stage_is_the_measured_line_and_one_fitted_latency() -> None:
    # tests/benches/api_ingest_cost.py's median-slope run: 97.8 us + 2.168 us a prompt token, so
    # a 128-token prompt takes 97.8 + 277.504 = 375.304 us of the loop and a 512-token one
    # 97.8 + 1,110.016 = 1,207.816 us; against the old fit's 11.85 ms (an ingestion ceiling of
    # 1 / 11.85 ms = 84.4 requests a second) that is 2,664 a second at 128 tokens.
    assert VLLM_API_LOOP_COST.service_s(128) == pytest.approx(375.304e-6, abs=1e-12)
    assert VLLM_API_LOOP_COST.service_s(512) == pytest.approx(1207.816e-6, abs=1e-12)
    assert 1 / VLLM_API_SERVER_COST.service_s(128) == pytest.approx(84.388, abs=1e-3)
    # The latency, fitted on the rate-16 row behind the measured stages, gives that row back;
    # the rate-inf row (no part of that fit) stays far under its measured 2,996 ms (708 ms):
    # the measured loop does not explain that burst's queue.
    runs = {r["id"]: r for r in prospective_runs.load()["runs"]}
    got = {}
    for row in prospective_runs.FRONTEND_FIT_ROWS:
        run = runs[row]
        spec = load_model(str(prospective_runs.REPO / run["model"]))[0]
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine_version=run["vllm"],
                                 mem_fraction=run["gpu_memory_utilization"])
        sim, _ = setup(spec, inputs, frontend=True)
        # The fit's stages: the output stage without 0.17's detokenizer prime (frontdec66 left
        # the latency as fitted; tests/test_detok_prime.py).
        fit = replace(sim, scheduler=replace(sim.scheduler, api_output=VLLM_API_OUTPUT_COST))
        got[row] = (simulate(fit, prospective_runs.requests(run)).metrics.ttft_ms["mean"],
                    run["measured"]["mean_ttft_ms"],
                    simulate(sim, prospective_runs.requests(run)).metrics.ttft_ms["mean"])
    rate16 = next(v for k, v in got.items() if "rate 16" in k)
    inf = next(v for k, v in got.items() if "rate inf" in k)
    assert rate16[0] == pytest.approx(rate16[1], rel=0.005)
    assert inf[0] < 0.3 * inf[1]
    # With the prime (0.19.0 >= 0.17), each 512-token request's first token waits for its own
    # prime, 512 x 0.931 us = 0.477 ms, and for other requests' primes queued before it on the
    # loop: the row's mean TTFT rises by at least 0.477 ms, and (16 req/s, ~0.5 ms each: the
    # loop rarely holds two) by well under twice that.
    assert 0.4766 <= rate16[2] - rate16[0] < 2 * 0.4767


def test_cli_frontend_option() -> None:
    # 100 requests at once (closed loop of 100): with --frontend the engine is handed the k-th
    # (from 1) at 25.55 ms of latency + k x 1.207816 ms (97.8 us + 512 x 2.168 us), the 99th
    # at 25.55 + 119.574 = 145.124 ms (later if the loop's output work comes between), so the
    # p99 TTFT is above that, and the mean above kvplan's default (all 100 handed over at 0).
    args = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "4096",
            "--concurrency", "100", "--num-requests", "100", "--input-len", "512",
            "--output-len", "8", "--engine-version", "0.19.0", "-f", "json"]
    plain = runner.invoke(app, args)
    served = runner.invoke(app, [*args, "--frontend"])
    assert plain.exit_code == 0 and served.exit_code == 0, served.output
    with_stage, without = json.loads(served.stdout)["ttft_ms"], json.loads(plain.stdout)["ttft_ms"]
    assert with_stage["p99"] > 25.55 + 99 * 1.207816
    assert with_stage["mean"] > without["mean"]
    refused = runner.invoke(app, [*args, "--engine", "trtllm", "--frontend"])
    assert refused.exit_code == 2 and "--frontend" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
