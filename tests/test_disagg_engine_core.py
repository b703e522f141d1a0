"""vLLM's engine-core host work in the disaggregated roles' steps (pdhost65, issue 29): the
prefill and decode role steps of `kvplan plan --disagg` (kvplan.analysis.disagg.role_times,
prefill_batching's step_ms) charge it by the same EngineCoreCost.step_s `kvplan simulate`'s
step charges (kvplan.analysis.simulate.engine_core: HostStepCost, RoleHost), under the same
conditions: vLLM only, on unless asked off, async scheduling by the release's default.

Hand numbers: VLLM_ENGINE_CORE_COST is 71.1 us a step + 11.98 us a scheduled request
(kvplan.engines.vllm.engine_core), so a step of 4 requests has 71.1 + 4 x 11.98 = 119.02 us of
host work, one of 1 request 83.08 us; synchronous (vLLM 0.11.0: async scheduling off by
default) it is added to the GPU step, async (0.15.1: on by default) the step is the longer of
the two, the GPU's for any real step.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.disagg import DisaggRequest, _candidate, role_host, role_times
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.plan_types import Layout
from kvplan.analysis.simulate.engine_core import HostStepCost, RoleHost
from kvplan.analysis.simulate.engine_core import role_host as sim_role
from kvplan.analysis.simulate.run import replica_step_cost, setup
from kvplan.engines.base import Engine, Scheduler
from kvplan.engines.vllm.engine_core import VLLM_ENGINE_CORE_COST
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link
from kvplan.sources.resolve import load_model

HOST_4_S = 71.1e-6 + 4 * 11.98e-6  # 119.02 us: a step scheduling 4 requests
HOST_1_S = 71.1e-6 + 11.98e-6  # 83.08 us: one prompt's step


def _req(version: str, **kw: object) -> DisaggRequest:
    # bf16: Llama 3 8B's KV as vLLM runs it ("auto", resolved as plan_disagg does).
    return DisaggRequest(prefill=Layout(tp=1), decode=Layout(tp=1), input_len=2048,
                         output_len=256, gpu=get_gpu("H100"), link=get_kv_link("ib-ndr"),
                         engine_version=version, kv_dtype="bf16", **kw)


def test_role_host_follows_simulates_conditions() -> None:
    sync = sim_role(Scheduler.mixed_token_budget, "0.11.0", None)
    assert sync.host is VLLM_ENGINE_CORE_COST and not sync.async_scheduling
    assert sim_role(Scheduler.mixed_token_budget, "0.15.1", None).async_scheduling
    assert sim_role(Scheduler.mixed_token_budget, "0.11.0", False).host is None
    assert sim_role(Scheduler.prefill_first, None, None).host is None  # SGLang: not charged
    assert sim_role(None, None, None).host is None
    with pytest.raises(InputError, match="only vLLM"):
        sim_role(Scheduler.prefill_first, None, True)
    # 10 ms of GPU at 4 requests: + 119.02 us synchronous; async the GPU's 10 ms; 0.1 ms of
    # GPU async: the host's 119.02 us (longer).
    assert sync.step_s(10e-3, 4) == pytest.approx(10e-3 + HOST_4_S, abs=1e-12)
    over = RoleHost(host=VLLM_ENGINE_CORE_COST, async_scheduling=True)
    assert over.step_s(10e-3, 4) == 10e-3
    assert over.step_s(0.1e-3, 4) == pytest.approx(HOST_4_S, abs=1e-12)


@pytest.mark.parametrize("version,added_s", [("0.11.0", HOST_4_S), ("0.15.1", 0.0)])
def test_a_decode_role_step_is_simulates_step_with_and_without_the_host(
        version: str, added_s: float) -> None:
    # Llama 3 8B on one H100, decode role at 4 requests: its TPOT with the host term is the
    # one without plus 119.02 us at 0.11.0 (synchronous) and the same at 0.15.1 (async: the
    # GPU step, some ms, is longer than the host's 0.12 ms).
    spec = load_model("llama-3-8b")[0]
    on, off = _req(version), _req(version, engine_core_cpu=False)
    decode = _candidate(spec, on, "decode", on.decode)
    _, with_ms = role_times(spec, on, decode, batch=4)
    _, without_ms = role_times(spec, off, decode, batch=4)
    assert with_ms is not None and without_ms is not None and without_ms > 1.0
    assert with_ms - without_ms == pytest.approx(added_s * 1e3, abs=1e-9)
    # simulate's step for the same batch (4 decodes) adds the same host term to its own GPU
    # step, by the same function: with the role's GPU time as its inner step, the two agree.
    inputs = estimate_inputs(spec, context=2048 + 256, gpu="H100", engine_version=version)
    sim_on = replica_step_cost(setup(spec, inputs)[0])
    sim_off = replica_step_cost(setup(spec, inputs, engine_core_cpu=False)[0])
    assert isinstance(sim_on, HostStepCost) and not isinstance(sim_off, HostStepCost)
    ctx = [2048 + 128] * 4
    gap = (sim_on.seconds(decode_contexts=ctx, chunks=[])
           - sim_off.seconds(decode_contexts=ctx, chunks=[]))
    assert gap == pytest.approx(added_s, abs=1e-12)
    role = role_host(on)
    same = replace(sim_on, inner=_Fixed(without_ms / 1e3))
    assert same.seconds(decode_contexts=ctx, chunks=[]) * 1e3 == pytest.approx(with_ms, abs=1e-9)
    assert role.step_s(without_ms / 1e3, 4) * 1e3 == pytest.approx(with_ms, abs=1e-12)


def test_the_prefill_role_charges_one_prompts_step() -> None:
    # One 2,048-token prompt at 0.11.0: the prefill ms with the host term is the one without
    # plus 83.08 us (one scheduled request).
    spec = load_model("llama-3-8b")[0]
    on, off = _req("0.11.0"), _req("0.11.0", engine_core_cpu=False)
    prefill = _candidate(spec, on, "prefill", on.prefill)
    with_ms, _ = role_times(spec, on, prefill, batch=1)
    without_ms, _ = role_times(spec, off, prefill, batch=1)
    assert with_ms is not None and without_ms is not None
    assert with_ms - without_ms == pytest.approx(HOST_1_S * 1e3, abs=1e-9)


def test_sglang_roles_are_not_charged() -> None:
    assert role_host(replace(_req("0.5.6"), engine=Engine.sglang)).host is None


class _Fixed:
    full_attention_only = True

    def __init__(self, s: float) -> None:
        self.s = s

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return self.s

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return self.s
