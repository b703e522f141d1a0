"""The simulated engine's set-up (`SimSetup`: its pool, scheduler limits and step cost, as
kvplan.analysis.simulate.run.setup builds it) and a run's result (`SimResult`). Split from
kvplan.analysis.simulate.run, which re-exports both."""

from __future__ import annotations

from dataclasses import dataclass

from kvplan.analysis.simulate.dp_lockstep import Balance
from kvplan.analysis.simulate.kv_pool import GroupRule
from kvplan.analysis.simulate.metrics import SimMetrics
from kvplan.analysis.simulate.moe_jit import MoeJitStall
from kvplan.analysis.simulate.pipeline import PipelineCost
from kvplan.analysis.simulate.sglang_pools import SglangTokenPoolSim
from kvplan.analysis.simulate.sglang_scheduler import SglangSchedule
from kvplan.analysis.simulate.sglang_swa import SwaSettings
from kvplan.analysis.simulate.sim_types import SchedulerConfig, SimRequest, StepRecord
from kvplan.analysis.simulate.spec_sim import SpecDecodeSim
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmSchedule
from kvplan.capacity.plan import CapacityPlan
from kvplan.engines.vllm.engine_core import EngineCoreCost
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.sampler_cost import SamplerCost


@dataclass(frozen=True, kw_only=True)
class SimSetup:
    """The simulated engine: its pool, scheduler limits and step cost."""

    plan: CapacityPlan
    groups: tuple[GroupRule, ...]
    scheduler: SchedulerConfig
    caching: bool
    cost: MixedStepCost
    dp: int
    sglang: SglangSchedule | None = None  # SGLang's scheduler (None: vLLM V1's)
    trtllm: TrtllmSchedule | None = None  # TensorRT-LLM's scheduler (None: not it)
    sglang_pool: SglangTokenPoolSim | None = None  # SGLang's pool kind (hybrid pools' keys)
    swa: SwaSettings | None = None  # SGLang's sliding-window pool (None: none)
    pool_blocks: int = 0  # blocks of the simulated pool (0: the plan's)
    # vLLM's Triton fused-MoE JIT stalls (`simulate --moe-jit-compile-ms`; None: not simulated).
    moe_jit: MoeJitStall | None = None
    # The `dp` ranks as attention-DP ranks of one engine, in lockstep, requests dealt by this
    # rule (kvplan.analysis.simulate.dp_lockstep; `simulate --dp-attention`); None: `dp`
    # independent replicas, round-robin.
    dp_balance: Balance | None = None
    # vLLM's sampler in each step (`simulate --generation-config`; None: not charged).
    sampler: SamplerCost | None = None
    engine_core: EngineCoreCost | None = None  # vLLM's host work a step (--engine-core-cpu)
    # vLLM's speculative decoding (`simulate --speculative-method`; None: none).
    spec_decode: SpecDecodeSim | None = None
    # vLLM's pipeline stages and batch queue (`simulate --pp`; None: one stage).
    pipeline: PipelineCost | None = None


@dataclass(frozen=True, kw_only=True)
class SimResult:
    setup: SimSetup
    metrics: SimMetrics
    timeline: tuple[tuple[int, StepRecord], ...]  # (replica, step)
    notes: tuple[str, ...]
    # Every finished request (sent_s, first_token_s, finish_s, lengths), over the replicas in
    # replica order: for a caller's own statistics (a bench's steady state).
    finished: tuple[SimRequest, ...] = ()
