"""vLLM's engine-core host work in the simulated step (`kvplan simulate`, on by default for
vLLM; `--no-engine-core-cpu` turns it off): each step's time with the engine core's CPU per step
(kvplan.engines.vllm.engine_core.EngineCoreCost, measured with vLLM's own classes) after the
GPU step without async scheduling, or beside it (the longer of the two) with it. The requests
it counts are the step's scheduled requests, decodes and prompt chunks alike.

The disaggregated roles (`kvplan plan --disagg`, kvplan.analysis.disagg: a prefill step, a
decode step) are vLLM engine steps too: `role_host` gives them the same stage under the same
conditions (vLLM only, on unless asked off, async scheduling by the release's default), and
`RoleHost.step_s` prices a role's step by the same `EngineCoreCost.step_s` that
`HostStepCost` calls here. A KV connector does not change the async-scheduling default: vLLM's
VllmConfig turns it off by default only for a pooling model, a speculator it does not support,
an executor without it (and, 0.32, ROCm DeepEP DBO or pipeline stages on the V1 runner), never
for a `kv_transfer_config` (0.14.1 vllm/config/vllm.py:588-628; 0.32.0 :1585-1644)."""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.sim_types import StepCost
from kvplan.engines.base import Scheduler
from kvplan.engines.vllm.alloc import vllm_async_scheduling_default
from kvplan.engines.vllm.engine_core import VLLM_ENGINE_CORE_COST, EngineCoreCost


@dataclass(kw_only=True)
class HostStepCost:
    """`inner`'s step time combined with `host`'s seconds over the step's requests, as the
    engine core runs them (`async_scheduling`: overlapped)."""

    inner: StepCost
    host: EngineCoreCost
    async_scheduling: bool

    @property
    def full_attention_only(self) -> bool:
        return self.inner.full_attention_only

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        gpu = self.inner.seconds(decode_contexts=decode_contexts, chunks=chunks)
        return self.host.step_s(gpu, len(decode_contexts) + len(chunks),
                                async_scheduling=self.async_scheduling)

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        gpu = self.inner.seconds_from_sums(decodes, decode_keys, chunks)
        return self.host.step_s(gpu, decodes + len(chunks),
                                async_scheduling=self.async_scheduling)


def engine_core_stage(scheduler: Scheduler, async_scheduling: bool, asked: bool | None, *,
                      pipeline: bool = False) -> tuple[EngineCoreCost | None, str]:
    """The engine core's host cost for `scheduler`'s engine and the note to show: on by
    default for vLLM (`asked` None), off where asked so (None, no note); asked for another
    engine, refused (only vLLM's engine core is modelled), else None. `pipeline`: charged
    before each batch of a pipeline (kvplan.analysis.simulate.pipeline), the note says so."""
    if scheduler is not Scheduler.mixed_token_budget:
        if asked:
            raise InputError("simulate --engine-core-cpu: only vLLM's engine core is modelled "
                             "(--engine vllm)")
        return None, ""
    if asked is False:
        return None, ""
    cost = VLLM_ENGINE_CORE_COST
    how = ("beside each GPU step (async scheduling: the longer of the two)" if async_scheduling
           else "after each GPU step (synchronous scheduling)")
    if pipeline:
        how = "on the engine core's thread before each batch enters the first stage"
    return cost, (f"engine core CPU: {cost.s_per_step * 1e6:.1f} us + "
                  f"{cost.s_per_request * 1e6:.2f} us per scheduled request, {how}; "
                  f"{cost.source}")


@dataclass(frozen=True, kw_only=True)
class RoleHost:
    """The engine core's host stage of a disaggregated role's steps (module docstring):
    `host` None where it is not charged."""

    host: EngineCoreCost | None
    async_scheduling: bool

    def step_s(self, gpu_s: float, requests: int) -> float:
        """One role step's seconds: `gpu_s` of GPU work over `requests` scheduled requests,
        with the host work as `HostStepCost` charges a simulated step."""
        if self.host is None:
            return gpu_s
        return self.host.step_s(gpu_s, requests, async_scheduling=self.async_scheduling)


def role_host(scheduler: Scheduler | None, version: str | None, asked: bool | None
              ) -> RoleHost:
    """The host stage of a disaggregated role of `scheduler`'s engine at `version` (`asked`:
    as simulate's --engine-core-cpu; None: on for vLLM), with the async scheduling `kvplan
    simulate` gives that release (kvplan.engines.vllm.alloc.vllm_async_scheduling_default)."""
    if scheduler is None:
        if asked:
            raise InputError("--engine-core-cpu: only vLLM's engine core is modelled "
                             "(--engine vllm)")
        return RoleHost(host=None, async_scheduling=False)
    overlap = (vllm_async_scheduling_default(version)
               if scheduler is Scheduler.mixed_token_budget else False)
    host, _ = engine_core_stage(scheduler, overlap, asked)
    return RoleHost(host=host, async_scheduling=overlap)


def with_host(cost: StepCost, host: EngineCoreCost | None, *, async_scheduling: bool
              ) -> StepCost:
    """`cost` with the engine core's host work, where the set-up asked for it."""
    return cost if host is None else HostStepCost(inner=cost, host=host,
                                                  async_scheduling=async_scheduling)
