"""`kvplan simulate --api-output`: vLLM's API server loop taking each engine step's outputs after
the step (kvplan.engines.vllm.frontend ApiOutputCost; kvplan.analysis.simulate.frontend
ServerQueue.deliver_s), worked by hand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.frontend import ServerQueue
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.vllm.frontend import VLLM_API_OUTPUT_COST, ApiOutputCost
from kvplan.sources.resolve import load_model
from tests.test_simulate_frontend import _FixedCost

runner = CliRunner()


def _out(step_ms: float, per_output_ms: float) -> ApiOutputCost:
    return ApiOutputCost(s_per_step=step_ms / 1e3, s_per_output=per_output_ms / 1e3,
                         source="by hand")


def test_a_step_s_outputs_wait_for_the_loop() -> None:
    # 1 ms a step + 0.5 ms per output. Steps ending at 10 and 20 ms with 4 outputs: 3 ms of
    # loop work each, the loop idle in between: delivered at 13 and 23 ms. Steps ending at
    # 30 and 31 ms with 20 outputs (11 ms each): 30-41, then 41-52. A request sent at 32 ms
    # (no ingestion cost) waits for the loop: it leaves at 52 ms. No outputs: no work.
    loop = ServerQueue(None, _out(1.0, 0.5))
    assert [round(loop.deliver_s(t / 1e3, 4) * 1e3, 9) for t in (10, 20)] == [13, 23]
    assert [round(loop.deliver_s(t / 1e3, 20) * 1e3, 9) for t in (30, 31)] == [41, 52]
    assert round(loop.leave_s(0.032, 1024) * 1e3, 9) == 52
    assert round(loop.deliver_s(0.060, 0) * 1e3, 9) == 60
    # Booked out of order: a step ending at 70 ms (20 outputs, 70-81) booked before the
    # requests sent at 65 and 75 ms are: the first reached the loop before that work and
    # leaves at once, the second waits for it (81 ms).
    assert round(loop.deliver_s(0.070, 20) * 1e3, 9) == 81
    assert [round(loop.leave_s(t / 1e3, 1024) * 1e3, 9) for t in (65, 75)] == [65, 81]
    # Without the output stage a step's tokens are delivered at its end.
    assert ServerQueue(None).deliver_s(0.010, 200) == 0.010


@pytest.mark.parametrize("bulk", [True, False])
def test_tokens_reach_the_client_after_the_loop(bulk: bool) -> None:
    # Two requests at t = 0 (16 prompt tokens, 3 output), 10 ms steps (_FixedCost),
    # synchronous scheduling, the loop 2 ms per output: step 0-10 ms prefills both (2 first
    # tokens: loop 10-14), 10-20 and 20-30 decode both (loop 20-24, 30-34). TTFT 14 ms, finish
    # 34 ms, TPOT (34 - 14) / 2 = 10 ms, every gap 10 ms; the run ends at 34 ms.
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=3) for _ in range(2)]
    pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                          max_model_len=64, api_output=_out(0.0, 2.0)),
                    _FixedCost(), bulk_decode=bulk)
    st = sim.run(specs)
    assert [round(r.first_token_s * 1e3, 9) for r in st.finished] == [14, 14]
    assert [round(r.finish_s * 1e3, 9) for r in st.finished] == [34, 34]
    assert sum(st.itl_weights) == 4
    assert all(round(v * 1e3, 9) == 10 for v in st.itl_values)
    assert round(st.clock_s * 1e3, 9) == 34


@pytest.mark.parametrize("bulk", [True, False])
def test_a_closed_loop_sends_when_the_client_sees_the_finish(bulk: bool) -> None:
    # Concurrency 1, two requests of 2 output tokens, the loop 5 ms per output. Request 0:
    # step 0-10 (first token at 15), step 10-20 (its last token, delivered at 25). The client
    # sends request 1 at 25 ms, not 20: the engine idles 20-25, steps 25-35 (first token at
    # 40: TTFT 15 ms) and 35-45 (finish at 50: E2E 25 ms).
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=2) for _ in range(2)]
    pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                          max_model_len=64, api_output=_out(0.0, 5.0)),
                    _FixedCost(), bulk_decode=bulk)
    done = sorted(sim.run(specs, concurrency=1).finished, key=lambda r: r.rid)
    ms = [[round(v * 1e3, 9) for v in (r.sent_s, r.first_token_s, r.finish_s)] for r in done]
    assert ms == [[0, 15, 25], [25, 40, 50]]


def test_setup_adds_the_output_stage_only_when_asked() -> None:
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine_version="0.15.0")
    assert setup(spec, inputs, default_frontend=False)[0].scheduler.api_output is None
    # frontdef67: `vllm serve`'s default stage takes the outputs on the same loop (0.15.0: no
    # detokenizer prime).
    assert setup(spec, inputs)[0].scheduler.api_output == VLLM_API_OUTPUT_COST
    sim, notes = setup(spec, inputs, api_output=True)
    assert sim.scheduler.api_output == VLLM_API_OUTPUT_COST
    assert any("--api-output" in n and "measured" in n for n in notes)
    with pytest.raises(InputError, match="--dp"):
        setup(spec, inputs, dp=2, api_output=True)
    sglang = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine=Engine.sglang)
    with pytest.raises(InputError, match="--api-output"):
        setup(spec, sglang, api_output=True)


def test_cli_api_output_option() -> None:
    # 8 requests at once of 64 output tokens: each step's 8 outputs cost the loop 8 x 17 us =
    # 0.136 ms, less than a step, so each token arrives 0.136 ms after its step: the mean TTFT
    # grows by about that and the TPOT stays within 1 %.
    args = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "4096",
            "--concurrency", "8", "--num-requests", "8", "--input-len", "512",
            "--output-len", "64", "--engine-version", "0.15.0", "-f", "json"]
    plain = runner.invoke(app, [*args, "--no-frontend"])  # the engine alone (frontdef67)
    staged = runner.invoke(app, [*args, "--api-output"])
    assert plain.exit_code == 0 and staged.exit_code == 0, staged.output
    a, b = json.loads(plain.stdout), json.loads(staged.stdout)
    assert b["ttft_ms"]["mean"] - a["ttft_ms"]["mean"] == pytest.approx(0.136, abs=0.01)
    assert b["tpot_ms"]["mean"] == pytest.approx(a["tpot_ms"]["mean"], rel=0.01)
