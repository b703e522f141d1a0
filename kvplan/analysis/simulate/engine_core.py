"""vLLM's engine-core host work in the simulated step (`kvplan simulate`, on by default for
vLLM; `--no-engine-core-cpu` turns it off): each step's time with the engine core's CPU per step
(kvplan.engines.vllm.engine_core.EngineCoreCost, measured with vLLM's own classes) after the
GPU step without async scheduling, or beside it (the longer of the two) with it. The requests
it counts are the step's scheduled requests, decodes and prompt chunks alike."""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.sim_types import StepCost
from kvplan.engines.base import Scheduler
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


def engine_core_stage(scheduler: Scheduler, async_scheduling: bool, asked: bool | None
                      ) -> tuple[EngineCoreCost | None, str]:
    """The engine core's host cost for `scheduler`'s engine and the note to show: on by
    default for vLLM (`asked` None), off where asked so (None, no note); asked for another
    engine, refused (only vLLM's engine core is modelled), else None."""
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
    return cost, (f"engine core CPU: {cost.s_per_step * 1e6:.1f} us + "
                  f"{cost.s_per_request * 1e6:.2f} us per scheduled request, {how}; "
                  f"{cost.source}")


def with_host(cost: StepCost, host: EngineCoreCost | None, *, async_scheduling: bool
              ) -> StepCost:
    """`cost` with the engine core's host work, where the set-up asked for it."""
    return cost if host is None else HostStepCost(inner=cost, host=host,
                                                  async_scheduling=async_scheduling)
