"""`simulate --frontend-latency-ms` (issue 30, frontlatopt64): the user's own send-to-engine
latency in place of `--frontend`'s fitted 25.55 ms (kvplan.engines.vllm.frontend
vllm_api_loop_cost; tests/benches/frontlat64.py FINDING): it reaches the simulation, the output
says it is user-supplied, hostile values are refused, and leaving it out changes nothing."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.vllm.frontend import (
    VLLM_API_INGEST_S_PER_PROMPT_TOKEN,
    VLLM_API_INGEST_S_PER_REQUEST,
    VLLM_API_LOOP_COST,
    VLLM_API_LOOP_LATENCY_S,
    vllm_api_loop_cost,
)
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step

runner = CliRunner()
ARGS = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "8192",
        "--num-requests", "4", "--concurrency", "1", "--input-len", "512", "--output-len", "4"]


def _inputs(engine: Engine = Engine.vllm):  # type: ignore[no-untyped-def]
    spec = load_model("llama-3.1-8b")[0]
    return spec, estimate_inputs(spec, context=8192, gpu="H100-80GB", engine=engine)


def test_the_cost_keeps_the_measured_times_and_takes_the_latency() -> None:
    assert vllm_api_loop_cost() is VLLM_API_LOOP_COST
    assert vllm_api_loop_cost(None).latency_s == VLLM_API_LOOP_LATENCY_S == 0.025550
    own = vllm_api_loop_cost(0.0093)
    assert own.latency_s == 0.0093
    assert own.s_per_request == VLLM_API_INGEST_S_PER_REQUEST
    assert own.s_per_prompt_token == VLLM_API_INGEST_S_PER_PROMPT_TOKEN
    assert "user-supplied (--frontend-latency-ms)" in own.source
    assert "fitted" not in own.source and "fitted" in VLLM_API_LOOP_COST.source


def test_setup_puts_the_users_latency_in_the_stage_and_the_note() -> None:
    spec, inputs = _inputs()
    fitted, fitted_notes = setup(spec, inputs, frontend=True)
    own, notes = setup(spec, inputs, frontend=True, frontend_latency_s=0.007)
    assert fitted.scheduler.api_server == VLLM_API_LOOP_COST
    assert own.scheduler.api_server == vllm_api_loop_cost(0.007)
    line = next(n for n in notes if n.startswith("API server CPU (--frontend)"))
    assert "+ 7.00 ms per request outside the queue" in line
    assert "the latency user-supplied (--frontend-latency-ms)" in line
    fitted_line = next(n for n in fitted_notes if n.startswith("API server CPU (--frontend)"))
    assert "+ 25.55 ms per request outside the queue" in fitted_line
    assert "user-supplied" not in fitted_line


def _closed_loop_ttft_ms(latency_s: float) -> list[float]:
    """Two requests of 16 prompt + 2 output tokens, one user, 10 ms steps, synchronous
    scheduling, behind setup's --frontend stage with `latency_s` (its output stage off)."""
    spec, inputs = _inputs()
    stage = setup(spec, inputs, frontend=True, frontend_latency_s=latency_s)[0].scheduler
    pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                          max_model_len=64, async_scheduling=False,
                                          api_server=stage.api_server),
                    _FixedCost())
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=2) for _ in range(2)]
    done = sorted(sim.run(specs, concurrency=1).finished, key=lambda r: r.sent_s)
    return [round((r.first_token_s - r.sent_s) * 1e3, 6) for r in done]


@pytest.mark.parametrize("latency_ms", [0.0, 9.3, 25.55])
def test_ttft_rises_by_the_latency_by_hand(latency_ms: float) -> None:
    """By hand: a request sent at t reaches the loop at t + L, leaves it after the measured
    service 97.8 us + 16 x 2.168 us = 132.488 us (the loop idle), and the idle engine's prefill
    step (10 ms) gives its first token: TTFT = L + 0.132488 + 10 ms. Its second token is one
    decode step later; the one user's next request is sent then, to an idle loop and engine:
    the same TTFT. L = 0, 9.3, 25.55 ms -> 10.132488, 19.432488, 35.682488 ms."""
    expected = round(latency_ms + 0.132488 + 10.0, 6)
    assert _closed_loop_ttft_ms(latency_ms / 1e3) == [expected, expected]


def test_cli_latency_reaches_the_result_and_says_user_supplied() -> None:
    fitted = runner.invoke(app, [*ARGS, "--frontend", "-f", "json"])
    own = runner.invoke(app, [*ARGS, "--frontend", "--frontend-latency-ms", "9.3", "-f",
                              "json"])
    assert fitted.exit_code == 0 and own.exit_code == 0, own.output
    f, o = json.loads(fitted.stdout), json.loads(own.stdout)
    assert o["frontend_latency"] == {"ms": 9.3,
                                     "source": "user-supplied (--frontend-latency-ms)"}
    assert "frontend_latency" not in f
    # One user, each request to an idle server: every TTFT 25.55 - 9.3 = 16.25 ms lower.
    assert f["ttft_ms"]["mean"] - o["ttft_ms"]["mean"] == pytest.approx(16.25, abs=1e-6)
    md = runner.invoke(app, [*ARGS, "--frontend", "--frontend-latency-ms", "9.3", "-f",
                             "markdown"])
    assert "+ 9.30 ms per request outside the queue" in md.stdout
    assert "the latency user-supplied (--frontend-latency-ms)" in md.stdout


FITTED_NOTE = (
    "API server CPU (--frontend): 0.098 ms per request + 2.17 us per prompt token, one request "
    "at a time, + 25.55 ms per request outside the queue; the loop's work per request measured "
    "with vLLM's own code on AMD EPYC (family 26 model 2, KVM guest, `lscpu`), Python 3.11.7 "
    "(tests/benches/api_ingest_cost.py), its outputs as --api-output's; the latency fitted on "
    "one H100 host's vLLM 0.19.0 row (kvcached's rate 16); a serving host differs")


def test_leaving_it_out_is_byte_identical_to_the_fitted_stage() -> None:
    # Without the option the stage is the very VLLM_API_LOOP_COST object and its note is the
    # text main printed before the option existed (FITTED_NOTE, copied from main's output).
    spec, inputs = _inputs()
    sim, notes = setup(spec, inputs, frontend=True)
    assert sim.scheduler.api_server is VLLM_API_LOOP_COST
    assert FITTED_NOTE in notes
    # The fitted value given as the user's (25.55 ms / 1e3 == 0.02555 exactly) simulates the
    # same run: the JSON is the default's plus the provenance key, nothing else.
    default = runner.invoke(app, [*ARGS, "--frontend", "-f", "json"])
    given = runner.invoke(app, [*ARGS, "--frontend", "--frontend-latency-ms", "25.55", "-f",
                                "json"])
    d, g = json.loads(default.stdout), json.loads(given.stdout)
    assert g.pop("frontend_latency")["ms"] == 25.55
    assert d == g
    plain = runner.invoke(app, [*ARGS, "-f", "json"])
    assert plain.exit_code == 0 and "frontend_latency" not in plain.stdout


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-inf"])
def test_hostile_values_are_refused_in_one_line(value: str) -> None:
    got = runner.invoke(app, [*ARGS, "--frontend", f"--frontend-latency-ms={value}"])
    assert got.exit_code == 2
    err = got.stderr.strip()
    assert "--frontend-latency-ms" in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("extra, says", [
    ([], "needs --frontend"),
    (["--frontend", "--engine", "sglang"], "--engine vllm"),
    (["--frontend", "--engine", "trtllm"], "--engine vllm"),
])
def test_where_it_cannot_apply_it_is_refused(extra: list[str], says: str) -> None:
    got = runner.invoke(app, [*ARGS, *extra, "--frontend-latency-ms", "5"])
    assert got.exit_code == 2 and says in got.stderr
    assert "\n" not in got.stderr.strip()


@pytest.mark.parametrize("bad", [-0.001, float("nan"), float("inf")])
def test_setup_refuses_what_the_cli_cannot_catch(bad: float) -> None:
    spec, inputs = _inputs()
    with pytest.raises(InputError, match="finite number of ms >= 0"):
        setup(spec, inputs, frontend=True, frontend_latency_s=bad)
    sg_spec, sg_inputs = _inputs(Engine.sglang)
    with pytest.raises(InputError, match="--engine vllm"):
        setup(sg_spec, sg_inputs, frontend=True, frontend_latency_s=0.005)
    with pytest.raises(InputError, match="needs --frontend"):
        setup(spec, inputs, frontend_latency_s=0.005)


def test_a_zero_latency_is_allowed() -> None:
    spec, inputs = _inputs()
    stage = setup(spec, inputs, frontend=True, frontend_latency_s=0.0)[0].scheduler.api_server
    assert stage is not None and stage.latency_s == 0.0
