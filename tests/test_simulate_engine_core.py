"""`kvplan simulate`'s vLLM engine-core host work per step (on by default, --engine-core-cpu)
(kvplan.engines.vllm.engine_core EngineCoreCost; kvplan.analysis.simulate.engine_core
HostStepCost), serial with the GPU step without async scheduling, beside it with it; worked by
hand."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.engine_core import HostStepCost
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import replica_step_cost, setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.vllm.engine_core import (
    VLLM_ENGINE_CORE_COST,
    VLLM_ENGINE_CORE_S_PER_REQUEST_FIT,
    VLLM_ENGINE_CORE_S_PER_STEP_FIT,
    EngineCoreCost,
)
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step

runner = CliRunner()


def _host(step_ms: float, per_request_ms: float) -> EngineCoreCost:
    return EngineCoreCost(s_per_step=step_ms / 1e3, s_per_request=per_request_ms / 1e3,
                          source="by hand")


def test_host_time_after_or_beside_the_gpu_step() -> None:
    # The measured constants (71.1 us + 11.98 us per request): a step of 64 decodes takes
    # 71.1 + 64 x 11.98 = 71.1 + 766.72 = 837.82 us of host time. Synchronous: after a 5 ms GPU
    # step, 5.83782 ms. Async: beside it, 5 ms; beside a 0.5 ms GPU step, the host's 0.83782 ms.
    # A step with nothing scheduled (no GPU time) costs nothing either way.
    cost = VLLM_ENGINE_CORE_COST
    assert cost.host_s(64) == pytest.approx(837.82e-6, abs=1e-12)
    assert cost.step_s(5e-3, 64, async_scheduling=False) == pytest.approx(5.83782e-3, abs=1e-12)
    assert cost.step_s(5e-3, 64, async_scheduling=True) == 5e-3
    assert cost.step_s(0.5e-3, 64, async_scheduling=True) == pytest.approx(0.83782e-3,
                                                                          abs=1e-12)
    assert cost.step_s(0.0, 0, async_scheduling=False) == 0.0
    assert cost.host_s(0) == 0.0


def test_the_constants_are_measured_not_fitted() -> None:
    # Measured on this repository's build host with vLLM's own classes: no serving row set them.
    for fit in (VLLM_ENGINE_CORE_S_PER_STEP_FIT, VLLM_ENGINE_CORE_S_PER_REQUEST_FIT):
        assert fit.fitted_on == ()
        assert "engine_core_cost.py" in fit.source and "AMD EPYC" in fit.source
    assert VLLM_ENGINE_CORE_S_PER_REQUEST_FIT.value == VLLM_ENGINE_CORE_COST.s_per_request


@pytest.mark.parametrize("bulk", [True, False])
def test_a_synchronous_step_waits_for_the_host(bulk: bool) -> None:
    # Two requests at t = 0 (16 prompt tokens, 3 output), 10 ms GPU steps (_FixedCost), the
    # host 1 ms + 0.5 ms per scheduled request: every step schedules both, 2 ms of host time.
    # Synchronous: steps of 12 ms, 0-12 (the prefills: first tokens at 12), 12-24, 24-36
    # (finish at 36): TTFT 12 ms, TPOT (36 - 12) / 2 = 12 ms. Async: 10 ms steps as without
    # the host (it is shorter than the GPU step): first tokens at 10, finish at 30.
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=3) for _ in range(2)]
    for asynchronous, first, last in ((False, 12, 36), (True, 10, 30)):
        pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
        config = SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512, max_model_len=64,
                                 async_scheduling=asynchronous)
        cost = HostStepCost(inner=_FixedCost(), host=_host(1.0, 0.5),
                            async_scheduling=asynchronous)
        st = Simulator(pool, config, cost, bulk_decode=bulk).run(specs)
        assert [round(r.first_token_s * 1e3, 9) for r in st.finished] == [first, first]
        assert [round(r.finish_s * 1e3, 9) for r in st.finished] == [last, last]


def test_async_step_is_the_host_where_it_is_longer() -> None:
    # The host 4 ms + 4 ms per request, two requests: 12 ms a step beside 10 ms of GPU: the
    # async step lasts 12 ms (three steps: finish at 36 ms).
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=3) for _ in range(2)]
    pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    config = SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512, max_model_len=64,
                             async_scheduling=True)
    cost = HostStepCost(inner=_FixedCost(), host=_host(4.0, 4.0), async_scheduling=True)
    st = Simulator(pool, config, cost).run(specs)
    assert [round(r.finish_s * 1e3, 9) for r in st.finished] == [36, 36]


def test_setup_wraps_vllms_step_by_default_and_refuses_other_engines() -> None:
    spec = load_model("llama-3-8b")[0]
    inputs = estimate_inputs(spec, context=4096, gpu="H100", engine_version="0.11.0")
    for asked in (None, True):  # vLLM: on by default
        sim, notes = setup(spec, inputs, engine_core_cpu=asked)
        assert not sim.scheduler.async_scheduling  # 0.11.0: async scheduling off by default
        cost = replica_step_cost(sim)
        assert isinstance(cost, HostStepCost) and not cost.async_scheduling
        assert any("engine core CPU" in n and "after each GPU step" in n for n in notes)
    newest, notes = setup(spec, estimate_inputs(spec, context=4096, gpu="H100"))
    assert newest.scheduler.async_scheduling and any("beside each GPU step" in n for n in notes)
    off, notes = setup(spec, inputs, engine_core_cpu=False)
    assert off.engine_core is None and not isinstance(replica_step_cost(off), HostStepCost)
    assert not any("engine core CPU" in n for n in notes)
    sg = estimate_inputs(spec, context=4096, gpu="H100", engine=Engine.sglang)
    assert setup(spec, sg)[0].engine_core is None  # not modelled for SGLang: not charged
    with pytest.raises(InputError, match="--engine-core-cpu: only vLLM"):
        setup(spec, sg, engine_core_cpu=True)


def test_cli_refuses_it_for_sglang_in_one_line() -> None:
    res = runner.invoke(app, ["simulate", "llama-3-8b", "--gpu", "H100", "--engine", "sglang",
                              "--num-requests", "4", "--input-len", "128", "--output-len", "8",
                              "--concurrency", "2", "--engine-core-cpu"])
    assert res.exit_code == 2
    assert "--engine-core-cpu: only vLLM's engine core" in res.stderr
    assert "Traceback" not in res.stderr
