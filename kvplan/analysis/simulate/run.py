"""`kvplan simulate`'s library call: the engine set up from the same inputs `estimate` plans
with (kvplan.analysis.inputs.estimate_inputs -> capacity PlanInputs), its KV pool the capacity
plan's exact block count and the engine's own KV-cache groups, the step time from the cost model
(kvplan.perf.mixed_step), then the requests served (kvplan.analysis.simulate.scheduler)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, replace

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import EstimateInputs
from kvplan.analysis.simulate.dp_lockstep import Balance, balance_for, run_lockstep
from kvplan.analysis.simulate.engine_core import engine_core_stage, with_host
from kvplan.analysis.simulate.hybrid_pool import HybridPool, hybrid_caching_refusal
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.metrics import SimMetrics, metrics
from kvplan.analysis.simulate.moe_jit import MoeJitStall, replica_cost
from kvplan.analysis.simulate.sampling import SampledStepCost
from kvplan.analysis.simulate.scheduler import Simulator
from kvplan.analysis.simulate.sglang_mamba_radix import MambaRadixTree
from kvplan.analysis.simulate.sglang_pools import SglangTokenPoolSim, sglang_sim_pool
from kvplan.analysis.simulate.sglang_scheduler import (
    SglangOptionsSim,
    SglangSchedule,
    SglangSimulator,
)
from kvplan.analysis.simulate.sglang_swa import SwaSettings, SwaWindow
from kvplan.analysis.simulate.sglang_swa_radix import SwaRadixWindow
from kvplan.analysis.simulate.sim_types import (
    SchedulerConfig,
    SimRequest,
    StepCost,
    StepRecord,
)
from kvplan.analysis.simulate.trtllm_lines import trtllm_line
from kvplan.analysis.simulate.trtllm_scheduler import (
    TrtllmOptionsSim,
    TrtllmSchedule,
    TrtllmSimulator,
)
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.capacity.plan import CapacityPlan, plan_capacity
from kvplan.capacity.weights import routed_expert_bits
from kvplan.engines.base import Scheduler
from kvplan.engines.sglang.options import MAX_PREFILL_TOKENS
from kvplan.engines.trtllm.disagg_flow import MAX_BATCH_SIZE
from kvplan.engines.trtllm.dp_balance import AdpContextGate
from kvplan.engines.vllm.admission import vllm_admission
from kvplan.engines.vllm.alloc import (
    VllmKVConfig,
    vllm_async_scheduling_default,
    vllm_batch_defaults,
)
from kvplan.engines.vllm.budget import vllm_cuda_graph_sizes
from kvplan.engines.vllm.engine import vllm_stage_config
from kvplan.engines.vllm.engine_core import EngineCoreCost
from kvplan.engines.vllm.frontend import (
    VLLM_API_OUTPUT_COST,
    VLLM_API_SERVER_COST,
    vllm_api_tokenizer_batching,
)
from kvplan.engines.vllm.moe_jit import vllm_triton_moe_jit
from kvplan.engines.vllm.options import vllm_options
from kvplan.engines.vllm.sampler import SamplingParams, VllmSampler
from kvplan.kv.cache import check_token_sized
from kvplan.kv.kinds import ChunkedLocalCache, RecurrentState, SlidingWindowCache
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.cost_rules import opt_in
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.flops import MLAForm
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.sampler_cost import SamplerCost
from kvplan.perf.serving import sglang_chunked_prefill_tokens

# The vLLM release whose scheduler (vllm/v1/core/sched/scheduler.py) the simulator follows.
_SCHEDULER_VERSION = "0.32"


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


@dataclass(frozen=True, kw_only=True)
class SimResult:
    setup: SimSetup
    metrics: SimMetrics
    timeline: tuple[tuple[int, StepRecord], ...]  # (replica, step)
    notes: tuple[str, ...]
    # Every finished request (sent_s, first_token_s, finish_s, lengths), over the replicas in
    # replica order: for a caller's own statistics (a bench's steady state).
    finished: tuple[SimRequest, ...] = ()


def group_rules(config: VllmKVConfig) -> tuple[GroupRule, ...]:
    """The allocation rule of each of vLLM's KV-cache groups, from kvplan's own cache kinds."""
    rules = []
    for g in config.groups:
        cache = g.cache
        shape = config.request_shape
        if isinstance(cache, RecurrentState):
            rules.append(GroupRule(kind="state", block_size=g.block_size,
                                   state_pages=cache.pages_per_request(1, g.block_size, shape)))
        elif isinstance(cache, SlidingWindowCache):
            # max_admission_blocks_per_request: the rule `estimate` sizes with, at any length.
            cap = cache.pages_per_request(1 << 40, g.block_size, shape)
            rules.append(GroupRule(kind="sliding", block_size=g.block_size, window=cache.window,
                                   admission_cap=cap))
        elif isinstance(cache, ChunkedLocalCache):
            cap = cache.pages_per_request(1 << 40, g.block_size, shape)
            rules.append(GroupRule(kind="chunked", block_size=g.block_size, chunk=cache.chunk,
                                   admission_cap=cap))
        else:
            rules.append(GroupRule(kind="full", block_size=g.block_size))
    return tuple(rules)


def setup(spec: ModelSpec, inputs: EstimateInputs, *, dp: int = 1,
          max_num_seqs: int | None = None, async_scheduling: bool | None = None,
          sglang: SglangOptionsSim | None = None, api_server: bool = True,
          frontend: bool = False, moe_jit_compile_s: float | None = None,
          trtllm: TrtllmOptionsSim | None = None, dp_attention: bool = False,
          api_output: bool = False, sampling: SamplingParams | None = None,
          engine_core_cpu: bool | None = None) -> tuple[SimSetup, list[str]]:
    """The engine `inputs` describe (a capacity question: --gpu or a KV budget), as simulated
    by its engine's scheduler (EngineRules.scheduler). `async_scheduling`: vLLM's async
    scheduling / SGLang's overlap scheduler (None: the default). `max_num_seqs`: vLLM
    --max-num-seqs / SGLang --max-running-requests. `api_server`: the requests come through
    `vllm serve`'s OpenAI server (its tokenizer batcher, kvplan.engines.vllm.frontend), not to
    an engine run in process. `frontend`: the API server's serial CPU stage before the engine,
    with its fitted constants (`kvplan simulate --frontend`; vLLM only:
    kvplan.engines.vllm.frontend.VLLM_API_SERVER_COST). `moe_jit_compile_s`: the seconds one
    Triton compile of vLLM's fused-MoE GEMM stalls a step (kvplan.analysis.simulate.moe_jit;
    None: not simulated). `trtllm`: TensorRT-LLM's chunked prefill and capacity scheduler
    policy (None: its defaults). `dp_attention`: the `dp` ranks are one engine's attention-DP
    ranks (`inputs` one rank's layout: kvplan.analysis.simulate.dp_lockstep.
    dp_attention_layout), stepped in lockstep. `api_output`: the API server loop's work after
    each step (`kvplan simulate --api-output`; vLLM only, one replica:
    kvplan.engines.vllm.frontend.VLLM_API_OUTPUT_COST, measured). `sampling`: the parameters
    every request samples with, vLLM's sampler charged in each step over the step's requests
    (`kvplan simulate --generation-config`; vLLM 0.15 only: kvplan.engines.vllm.sampler).
    `engine_core_cpu`: vLLM's engine-core CPU (None: on). Returns it and the notes to show."""
    check_token_sized(spec, "simulate")
    cap = inputs.capacity
    if cap is None or inputs.gpu is None:
        raise InputError("simulate: give --gpu (the step time needs a GPU preset)")
    rules = cap.engine.rules
    if rules.scheduler is None:
        raise InputError(f"simulate: {rules.display_name}'s scheduler is not modelled "
                         "(--engine vllm, sglang or trtllm)")
    if cap.pp > 1:
        raise InputError("simulate: --pp > 1 is not simulated (pipeline micro-batches)")
    if cap.num_speculative_tokens:
        raise InputError("simulate: speculative decoding is not simulated")
    if moe_jit_compile_s is not None and rules.scheduler is not Scheduler.mixed_token_budget:
        raise InputError("simulate --moe-jit-compile-ms: only vLLM's Triton fused MoE is "
                         "modelled (--engine vllm)")
    if (trtllm is not None and trtllm != TrtllmOptionsSim()
            and rules.scheduler is not Scheduler.capacity_micro_batch):
        raise InputError("simulate --capacity-scheduler-policy / --enable-chunked-prefill: "
                         "TensorRT-LLM's options (--engine trtllm)")
    sim, notes = _SETUPS[rules.scheduler](inputs.spec, inputs, dp=dp, max_num_seqs=max_num_seqs,
                                          async_scheduling=async_scheduling, sglang=sglang,
                                          api_server=api_server, frontend=frontend,
                                          trtllm=trtllm)
    if api_output:
        sim, notes = _with_api_output(sim, notes, rules.scheduler, dp)
    if sampling is not None:
        sim, notes = _with_sampler(sim, notes, rules.scheduler, inputs, sampling)
    host, note = engine_core_stage(rules.scheduler, sim.scheduler.async_scheduling,
                                   engine_core_cpu)
    sim, notes = replace(sim, engine_core=host), [*notes, note] if host else notes
    if trtllm is not None and trtllm.adp_balance is not None and not dp_attention:
        raise InputError("simulate: attention_dp_config.enable_balance needs --dp-attention")
    if dp_attention:
        if sglang is not None and sglang.scheduler_recv_interval > 1:
            # SGLang's SchedulerRecvSkipper.__init__ asserts `not enable_dp_attention`
            # (managers/scheduler_recv_skipper.py, 0.5.9 / 0.5.10.post1).
            raise InputError("simulate --scheduler-recv-interval above 1: SGLang refuses it "
                             "with DP attention")
        if moe_jit_compile_s is not None:
            raise InputError("simulate --moe-jit-compile-ms: not simulated with --dp-attention")
        sim = replace(sim, dp_balance=balance_for(rules))
        notes = [*notes, f"attention DP: {dp} ranks in lockstep, each its own scheduler and KV "
                         "pool, every step as long as the slowest rank's; requests dealt by "
                         f"{rules.display_name}'s balancer (kvplan.analysis.simulate."
                         "dp_lockstep)"]
    if moe_jit_compile_s is None:
        return sim, notes
    stall = _moe_jit(inputs, sim, moe_jit_compile_s)
    if stall is None:
        return sim, [*notes, "--moe-jit-compile-ms: no 16-bit Triton fused MoE on TP ranks in "
                             "this model: no compile stall"]
    return replace(sim, moe_jit=stall), [
        *notes, f"fused-MoE JIT: {moe_jit_compile_s * 1e3:g} ms a step per Triton compile not "
                "made at start-up (vLLM 0.15.1 rule, kvplan.engines.vllm.moe_jit; the time is "
                "the option's)"]


def _with_api_output(sim: SimSetup, notes: list[str], scheduler: Scheduler, dp: int
                     ) -> tuple[SimSetup, list[str]]:
    """The vLLM API server's output stage added to `sim` (kvplan.engines.vllm.frontend)."""
    if scheduler is not Scheduler.mixed_token_budget:
        raise InputError("simulate --api-output: only vLLM's API server is modelled "
                         "(--engine vllm)")
    if dp > 1:
        raise InputError("simulate --api-output: one API server over --dp replicas is not "
                         "modelled (give --dp 1)")
    cost = VLLM_API_OUTPUT_COST
    note = (f"API server outputs (--api-output): {cost.s_per_output * 1e6:.1f} us per request "
            f"given a token, + {cost.s_per_step * 1e6:.1f} us, after each step on the loop that "
            f"also takes the requests; {cost.source}")
    return replace(sim, scheduler=replace(sim.scheduler, api_output=cost)), [*notes, note]


def _with_sampler(sim: SimSetup, notes: list[str], scheduler: Scheduler, inputs: EstimateInputs,
                  sampling: SamplingParams) -> tuple[SimSetup, list[str]]:
    """vLLM's sampler charged in each step (kvplan.analysis.simulate.sampling)."""
    if scheduler is not Scheduler.mixed_token_budget:
        raise InputError("simulate --generation-config: only vLLM's sampler is modelled "
                         "(--engine vllm)")
    cap = inputs.capacity
    assert cap is not None and inputs.gpu is not None
    sampler = VllmSampler(params=sampling, version=cap.engine_version)
    cost = SamplerCost(sampler, vocab=inputs.spec.vocab_size, gpu=inputs.gpu, eff=sim.cost.eff)
    kind = ("greedy (argmax)" if sampling.greedy else
            f"temperature {sampling.temperature:g}, top_p {sampling.top_p:g}, top_k "
            f"{sampling.top_k}" + (" (full-vocabulary sort)" if sampling.top_p < 1 else ""))
    note = (f"sampler (--generation-config): vLLM 0.15's native sampler, {kind}, over "
            f"{inputs.spec.vocab_size:,} logits a request each step, memory-bound at the HBM "
            "rate (kvplan.engines.vllm.sampler)")
    return replace(sim, sampler=cost), [*notes, note]


def _moe_jit(inputs: EstimateInputs, sim: SimSetup, compile_s: float) -> MoeJitStall | None:
    """The JIT rule for the engine, or None where the model runs no 16-bit Triton fused MoE
    on TP ranks (kvplan.perf.roofline: the engine's moe_kernel on 16-bit experts, no EP)."""
    cap, spec = inputs.capacity, inputs.spec
    assert cap is not None and inputs.gpu is not None
    moe = spec.moe
    bits = {} if moe is None else routed_expert_bits(
        spec, [i for i in range(spec.num_hidden_layers) if moe.is_moe_layer(i)],
        cap.quantization)
    if (moe is None or cap.ep > 1 or cap.engine.rules.cost_traits.moe_kernel is None
            or not bits or any(b != 16 for b in bits.values())):
        return None
    graphs = () if cap.enforce_eager else vllm_cuda_graph_sizes(
        max_num_seqs=sim.scheduler.max_num_seqs,
        max_num_batched_tokens=sim.scheduler.max_num_batched_tokens)
    rule = vllm_triton_moe_jit(
        gpu=inputs.gpu.name, engine_version=cap.engine_version,
        num_experts=moe.n_routed_experts, top_k=moe.num_experts_per_tok,
        intermediate_per_rank=moe.moe_intermediate_size // cap.tp, graph_sizes=graphs,
        max_num_batched_tokens=sim.scheduler.max_num_batched_tokens)
    return MoeJitStall(rule=rule, compile_s=compile_s)


def _vllm_setup(spec: ModelSpec, inputs: EstimateInputs, *, dp: int, max_num_seqs: int | None,
                async_scheduling: bool | None, sglang: SglangOptionsSim | None,
                api_server: bool, frontend: bool, trtllm: TrtllmOptionsSim | None = None
                ) -> tuple[SimSetup, list[str]]:
    """vLLM V1's engine (kvplan.analysis.simulate.scheduler): its KV-cache groups and pool as
    `estimate` sizes them, its batch defaults, prefix caching and async scheduling by version,
    the API server's tokenizer batching. (`sglang`: SGLang's options, not read here.)"""
    cap = inputs.capacity
    assert cap is not None
    rules = cap.engine.rules
    if not isinstance(rules.estimate_config(spec, cap), VllmKVConfig):
        raise InputError("simulate: this model's vLLM KV groups are not simulated")
    if async_scheduling is None:
        async_scheduling = vllm_async_scheduling_default(cap.engine_version)
    # The pool as vLLM sizes it under this scheduling: sliding and chunked groups reserve the
    # batches in flight (kvplan.engines.vllm.alloc.vllm_max_concurrent_batches).
    cap = replace(cap, options=replace(vllm_options(cap), async_scheduling=async_scheduling))
    notes = [f"scheduler: vLLM {_SCHEDULER_VERSION} V1 (FCFS, chunked prefill, preemption by "
             f"recompute, {'async' if async_scheduling else 'synchronous'} scheduling); pool "
             f"and groups: vLLM {cap.engine.rules.reported_version(cap)} rules as `estimate`"]
    plan = plan_capacity(spec, cap)
    stage = vllm_stage_config(spec, cap)
    groups = group_rules(stage)
    max_num_seqs = cap.max_num_seqs if max_num_seqs is None else max_num_seqs
    if max_num_seqs is None:
        max_num_seqs = vllm_batch_defaults(cap.total_bytes, is_a100=cap.is_a100,
                                           version=cap.engine_version,
                                           capability=cap.compute_capability)[0]
    caching, note = _vllm_caching(groups, stage, cap.prefix_caching)
    if note:
        notes.append(note)
    if plan.max_concurrency < 1:
        raise InputError(f"simulate: one request of --max-model-len {cap.context:,} tokens needs "
                         f"{plan.blocks_per_request:,} blocks, the pool has {plan.num_blocks:,} "
                         "(vLLM refuses to start)")
    graphs = () if cap.enforce_eager else vllm_cuda_graph_sizes(
        max_num_seqs=max_num_seqs, max_num_batched_tokens=cap.max_num_batched_tokens)
    cost = _step_cost(spec, inputs, graphs)
    batching = vllm_api_tokenizer_batching(cap.engine_version) if api_server else None
    if batching is not None:
        notes.append(f"API server: prompts tokenized in batches released "
                     f"{batching.wait_s * 1e3:g} ms after the first (up to {batching.max_batch}; "
                     "vLLM's AsyncMicrobatchTokenizer, 0.11-0.23)")
    server = VLLM_API_SERVER_COST if frontend else None
    if server is not None:
        notes.append(f"API server CPU (--frontend): {server.s_per_request * 1e3:.2f} ms per "
                     f"request + {server.s_per_prompt_token * 1e6:.2f} us per prompt token, "
                     f"one request at a time, + {server.latency_s * 1e3:.2f} ms per request "
                     f"outside the queue; {server.source}")
    sched = SchedulerConfig(max_num_seqs=max_num_seqs, max_model_len=cap.context,
                            max_num_batched_tokens=cap.max_num_batched_tokens, api_server=server,
                            async_scheduling=async_scheduling, tokenizer_batching=batching,
                            full_isl_admission=vllm_admission(cap))
    return SimSetup(plan=plan, groups=groups, scheduler=sched, caching=caching, cost=cost,
                    dp=dp), notes


def _vllm_caching(groups: tuple[GroupRule, ...], stage: VllmKVConfig, asked: bool | None
                  ) -> tuple[bool, str]:
    """Prefix caching as vLLM runs it, and the note to show. V1's default is on for a model
    with attention (0.32 config/model.py is_prefix_caching_supported); a recurrent group takes
    part in it in mamba cache mode 'align' only, which the version's rule sets with it
    (kvplan.engines.vllm.alloc: the pool `estimate` sized). Hybrid groups: the hybrid
    coordinator's rules (kvplan.analysis.simulate.hybrid_pool)."""
    one_full = len(groups) == 1 and groups[0].kind == "full"
    if one_full:
        return (True if asked is None else asked), ""
    why = hybrid_caching_refusal(groups)
    if not why and any(g.kind == "state" for g in groups) and not (
            stage.request_shape.mamba_align):
        why = "this vLLM version runs recurrent groups without mamba cache mode 'align'"
    if why:
        if asked:
            raise InputError(f"--enable-prefix-caching: not simulated for this model ({why})")
        return False, ("" if asked is False
                       else f"prefix caching not simulated for this model ({why}): off")
    on = True if asked is None else asked
    kinds = ", ".join(sorted({g.kind for g in groups}))
    return on, (f"prefix caching over hybrid groups ({kinds}): vLLM 0.32's hybrid coordinator "
                "(hits common to every group; sliding / state blocks kept at the prompt's "
                "end and shared-prefix junctions)" if on else "")


def _step_cost(spec: ModelSpec, inputs: EstimateInputs, graphs: tuple[int, ...],
               prefill_graph: bool | None = None) -> MixedStepCost:
    """The cost model's step time for the engine `inputs` name (its traits, its GPU), a
    prefill step with its eager launch time where the engine pays one (SGLang, TensorRT-LLM:
    MixedStepCost's `eager_prefill`; engine_efficiency gives vLLM's 0)."""
    cap = inputs.capacity
    assert cap is not None and inputs.gpu is not None
    att = spec.attention
    form = (MLAForm.decompressed if isinstance(att, LatentAttention) and att.decompressed_cache
            else MLAForm.absorbed)
    conv, ssm = cap.engine.rules.state_dtypes(spec, cap)
    layout = Layout(tp=cap.tp, dp_attention=cap.dp_attention, ep=cap.ep if cap.ep > 1 else 1)
    graph = False if cap.dp_attention or cap.pp > 1 else prefill_graph  # off: DP attn, PP
    return MixedStepCost(spec, inputs.gpu, kv_dtype=cap.kv_dtype, layout=layout,
                         eff=engine_efficiency(
                             cap.engine.value, opt_in(inputs.cost_rules, inputs.gpu),
                             version=cap.engine_version, prefill_graph=graph, options=cap.options,
                             spec=spec),
                         quantization=cap.quantization, conv_dtype=conv, ssm_dtype=ssm,
                         mla_form=form, graph_sizes=graphs, eager_prefill=True)


def _sglang_setup(spec: ModelSpec, inputs: EstimateInputs, *, dp: int, max_num_seqs: int | None,
                  async_scheduling: bool | None, sglang: SglangOptionsSim | None,
                  api_server: bool, frontend: bool, trtllm: TrtllmOptionsSim | None = None
                  ) -> tuple[SimSetup, list[str]]:
    """SGLang's engine (kvplan.analysis.simulate.sglang_scheduler): its token pool as
    `estimate` sizes it (max_total_num_tokens in pages, one full-attention pool; a mamba
    pool's slots beside it cap the running requests, kvplan.analysis.simulate.sglang_pools),
    its max_running_requests (`max_num_seqs`), chunked_prefill_size by GPU
    (kvplan.engines.sglang.options), the radix cache (on unless --disable-radix-cache), the
    overlap scheduler (`async_scheduling`; on unless turned off). (`api_server`: not modelled
    for SGLang.)"""
    if frontend:
        raise InputError("simulate --frontend: only vLLM's API server is modelled "
                         "(--engine vllm)")
    max_running, overlap, schedule = max_num_seqs, async_scheduling, sglang
    cap = inputs.capacity
    assert cap is not None and inputs.gpu is not None
    plan = plan_capacity(spec, cap)
    if plan.dp_attention and not cap.dp_attention:
        raise InputError(f"simulate --engine sglang: SGLang {cap.engine_version} runs {spec.id} "
                         "with DP attention at TP > 1 (DeepSeek NSA, kvplan.engines.sglang."
                         f"dsa_settings): give --dp {cap.tp} --dp-attention, --tp 1 or "
                         "--engine-version 0.5.6 or newer")
    pool = sglang_sim_pool(plan)
    if plan.max_concurrency < 1:
        raise InputError(f"simulate: one request of --context-length {cap.context:,} tokens "
                         f"does not fit SGLang's pool of {plan.token_capacity:,} tokens")
    opts = schedule or SglangOptionsSim()
    tokens = plan.token_capacity
    # The scheduler's max_running_requests: max_num_reqs as `estimate`'s pool gives it
    # (kvplan.engines.sglang.pools: --max-running-requests capped by release, else the default
    # rule over that release's tokens), by default at most tokens // 2 (model_runner.py
    # 0.5.9:593-600; inside _resolve_max_num_reqs from 0.5.10); `max_running` (a caller's own)
    # in its place, at most tokens // 2. A mamba pool also caps it by its slots
    # (kvplan.analysis.simulate.sglang_pools).
    assert plan.max_running_requests is not None
    reqs = plan.max_running_requests
    if max_running is not None or cap.max_num_seqs is None:
        reqs = min(reqs if max_running is None else max_running, tokens // 2)
    cap_running = pool.running_cap(reqs)
    chunk = (sglang_chunked_prefill_tokens(inputs.gpu) if opts.chunked_prefill_size is None
             else (None if opts.chunked_prefill_size <= 0 else opts.chunked_prefill_size))
    if opts.max_prefill_tokens is not None and opts.max_prefill_tokens < 1:
        raise InputError(f"simulate: --max-prefill-tokens {opts.max_prefill_tokens}: expected "
                         "a positive token count")
    sg = SglangSchedule(chunked_prefill_size=chunk, max_running_requests=cap_running,
                        schedule_conservativeness=opts.schedule_conservativeness,
                        policy=opts.schedule_policy,
                        max_prefill_tokens=(MAX_PREFILL_TOKENS if opts.max_prefill_tokens is None
                                            else opts.max_prefill_tokens),
                        recv_interval=opts.scheduler_recv_interval)
    caching, radix, cache_note = pool.caching(cap.prefix_caching, cap.engine_version)
    overlap = True if overlap is None else overlap
    # A sliding-window pool's rules for this release (refused where not read).
    swa = pool.window_pool(radix=cap.prefix_caching is not False, chunk=chunk,
                           overlap=overlap, version=cap.engine_version,
                           model_type=spec.model_type)
    notes = [f"scheduler: SGLang (prefill first, chunked prefill {chunk or 'off'}, "
             f"new-token ratio admission and retraction, {opts.schedule_policy}, radix cache "
             f"{radix}, overlap {'on' if overlap else 'off'}); pool: "
             f"SGLang {cap.engine.rules.reported_version(cap) or cap.engine_version or 'newest'}"
             " rules as `estimate` "
             f"({pool.pool_text()}, max_running_requests {cap_running:,})"]
    notes += [cache_note] if cache_note else []
    cost = _step_cost(spec, inputs, (), opts.piecewise_cuda_graph)
    if cost.eff.prefill_graph is not None:
        notes.append("prefill: piecewise CUDA graphs (on by default from SGLang "
                     f"{cost.eff.prefill_graph.default_since}), each captured step launching "
                     "only the ops outside them")
    sched = SchedulerConfig(max_num_seqs=cap_running, max_num_batched_tokens=chunk or tokens,
                            max_model_len=cap.context, async_scheduling=overlap)
    groups = (GroupRule(kind="full", block_size=plan.block_size),)
    return SimSetup(plan=plan, groups=groups, scheduler=sched, caching=caching,
                    cost=cost, dp=dp, sglang=sg, sglang_pool=pool,
                    swa=swa, pool_blocks=tokens // plan.block_size + 1), notes


def _trtllm_setup(spec: ModelSpec, inputs: EstimateInputs, *, dp: int,
                  max_num_seqs: int | None, async_scheduling: bool | None,
                  sglang: SglangOptionsSim | None, api_server: bool, frontend: bool,
                  trtllm: TrtllmOptionsSim | None = None) -> tuple[SimSetup, list[str]]:
    """TensorRT-LLM's PyTorch executor (kvplan.analysis.simulate.trtllm_scheduler): its pool
    as `estimate` sizes it (the plan's blocks; no null block), max_batch_size (`max_num_seqs`,
    default 2048), max_num_tokens (the plan's max_num_batched_tokens, default 8192), block
    reuse (on unless turned off), the overlap scheduler (`async_scheduling`; on unless turned
    off), chunked prefill and the capacity policy (`trtllm`). (`api_server`, `sglang`: not
    read.)"""
    if frontend:
        raise InputError("simulate --frontend: only vLLM's API server is modelled "
                         "(--engine vllm)")
    cap = inputs.capacity
    assert cap is not None
    # The release lines read (1.0 - 1.3) and the rule that differs between them.
    line = trtllm_line(cap.engine_version)
    opts = trtllm or TrtllmOptionsSim()
    plan = plan_capacity(spec, cap)
    if plan.max_concurrency < 1:
        raise InputError(f"simulate: one request of --max-model-len {cap.context:,} tokens needs "
                         f"{plan.blocks_per_request:,} blocks, the pool has {plan.num_blocks:,}")
    batch = max_num_seqs or cap.max_num_seqs or MAX_BATCH_SIZE
    tokens = cap.max_num_batched_tokens
    overlap = True if async_scheduling is None else async_scheduling
    caching = cap.prefix_caching is not False
    sched = TrtllmSchedule(max_batch_size=batch, max_num_tokens=tokens,
                           chunked_prefill=opts.chunked_prefill, policy=opts.policy,
                           early_exit=line.early_exit, adp_balance=opts.adp_balance)
    notes = [f"scheduler: TensorRT-LLM {line.name} PyTorch executor (capacity "
             f"{opts.policy.upper()}, "
             f"max_batch_size {batch:,}, max_num_tokens {tokens:,}, chunked prefill "
             f"{'on' if opts.chunked_prefill else 'off'}, block reuse "
             f"{'on' if caching else 'off'}, overlap scheduler {'on' if overlap else 'off'}); "
             f"pool: TensorRT-LLM {cap.engine.rules.reported_version(cap) or 'newest'} rules as "
             f"`estimate` ({plan.num_blocks:,} blocks of {plan.block_size} tokens)"]
    if not line.early_exit:
        notes.append(f"scheduler: {line.read}; a request is scheduled once more after its last "
                     "token (the overlap scheduler's early exit came in 1.2)"
                     + ("" if overlap else ", which needs the overlap scheduler (off here)"))
    config = SchedulerConfig(max_num_seqs=batch, max_num_batched_tokens=tokens,
                             max_model_len=cap.context, async_scheduling=overlap)
    groups = (GroupRule(kind="full", block_size=plan.block_size),)
    # CUDA graphs without padding (enable_padding False): the step is not padded (no sizes).
    return SimSetup(plan=plan, groups=groups, scheduler=config, caching=caching,
                    cost=_step_cost(spec, inputs, ()), dp=dp, trtllm=sched,
                    pool_blocks=plan.num_blocks + 1), notes


# Each engine's scheduler (EngineRules.scheduler) and the set-up that simulates it.
_SETUPS = {Scheduler.mixed_token_budget: _vllm_setup, Scheduler.prefill_first: _sglang_setup,
           Scheduler.capacity_micro_batch: _trtllm_setup}


def _engine(sim: SimSetup, blocks: int, *, timeline: bool, bulk_decode: bool) -> Simulator:
    one_full = len(sim.groups) == 1 and sim.groups[0].kind == "full"
    pool: KVPool | HybridPool = (HybridPool(blocks, sim.groups) if sim.caching and not one_full
                                 else KVPool(blocks, sim.groups, caching=sim.caching))
    if sim.sglang is not None:
        swa = (None if sim.swa is None
               else SwaRadixWindow(sim.swa, pool) if sim.swa.hits and isinstance(pool, KVPool)
               else SwaWindow(sim.swa))
        slots = sim.sglang_pool.mamba_slots() if sim.sglang_pool is not None else None
        # The mamba radix cache's hits (SGLang 0.5.7 - 0.5.12: kvplan.analysis.simulate.
        # sglang_pools.SglangMambaPoolSim.caching turns prefix caching on only there).
        tree = (MambaRadixTree(slots, pool) if slots is not None and sim.caching
                and isinstance(pool, KVPool) else None)
        return SglangSimulator(pool, sim.scheduler, sim.cost, sim.sglang, timeline=timeline,
                               bulk_decode=bulk_decode, swa=swa, mamba=slots is not None,
                               mamba_tree=tree)
    if sim.trtllm is not None:
        return TrtllmSimulator(pool, sim.scheduler, sim.cost, sim.trtllm, timeline=timeline)
    return Simulator(pool, sim.scheduler, replica_step_cost(sim), timeline=timeline,
                     bulk_decode=bulk_decode)


def replica_step_cost(sim: SimSetup) -> StepCost:
    """One vLLM replica's step time: the cost model's, with the fused-MoE JIT stalls
    (`sim.moe_jit`), the sampler (`sim.sampler`) and the engine core's host work
    (`sim.engine_core`) where the set-up asked for them."""
    cost = replica_cost(sim.cost, sim.moe_jit)
    cost = cost if sim.sampler is None else SampledStepCost(inner=cost, sampler=sim.sampler)
    return with_host(cost, sim.engine_core, async_scheduling=sim.scheduler.async_scheduling)


def _hybrid_pool_metrics(m: SimMetrics, sims: list[Simulator]) -> SimMetrics:
    """The SGLang hybrid pools' per-step use over the replicas (mean over steps, max)."""
    sg = [s for s in sims if isinstance(s, SglangSimulator)]
    steps = m.steps
    if not sg or not steps:
        return m
    if sg[0].swa is not None:
        m = replace(m, swa_usage={"mean": sum(s.swa_usage_sum for s in sg) / steps,
                                  "max": max(s.swa_usage_max for s in sg)})
        if isinstance(sg[0].swa, SwaRadixWindow):
            m = replace(m, swa_tombstoned_tokens=sum(
                s.swa.tombstoned_tokens for s in sg if isinstance(s.swa, SwaRadixWindow)))
    if sg[0].mamba:
        m = replace(m, mamba_slots_used={"mean": sum(s.slots_sum for s in sg) / steps,
                                         "max": max(s.slots_max for s in sg)})
        if sg[0].mamba_tree is not None:
            m = replace(m, mamba_states_evicted=sum(
                s.mamba_tree.states_evicted for s in sg if s.mamba_tree is not None))
    return m


def simulate(sim: SimSetup, requests: Iterable[RequestSpec], *, concurrency: int | None = None,
             slo_ttft_ms: float | None = None, slo_tpot_ms: float | None = None,
             timeline: bool = False, bulk_decode: bool = True,
             num_blocks: int | None = None) -> SimResult:
    """Serve `requests` on `sim.dp` replicas (round-robin; a closed loop's concurrency is
    shared out the same way), or on `sim.dp` attention-DP ranks in lockstep (`dp_balance`).
    `num_blocks`: another pool size (tests, what-ifs)."""
    blocks = (sim.pool_blocks or sim.plan.num_blocks) if num_blocks is None else num_blocks
    lockstep = sim.dp_balance is not None
    sims = [_engine(sim, blocks, timeline=timeline, bulk_decode=bulk_decode and not lockstep)
            for _ in range(sim.dp)]
    if sim.dp_balance is not None:
        adp = sim.trtllm.adp_balance if sim.trtllm is not None else None
        gate = (None if adp is None or sim.trtllm is None
                else AdpContextGate(adp, sim.trtllm.max_batch_size))
        states = run_lockstep(sims, sim.dp_balance, requests, concurrency=concurrency,
                              gate=gate)
    elif sim.dp == 1:
        states = [sims[0].run(requests, concurrency=concurrency)]
    else:
        streams = [itertools.islice(s, 0, None) for s in itertools.tee(requests, sim.dp)]
        shares = [None if concurrency is None else max(1, (concurrency + i) // sim.dp)
                  for i in range(sim.dp)]
        states = [s.run(itertools.islice(stream, i, None, sim.dp), concurrency=shares[i])
                  for i, (s, stream) in enumerate(zip(sims, streams, strict=True))]
    m = metrics(states, slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms)
    m = _hybrid_pool_metrics(m, sims)
    rows = tuple((i, rec) for i, st in enumerate(states) for rec in (st.timeline or ()))
    return SimResult(setup=replace(sim), metrics=m, timeline=rows, notes=(),
                     finished=tuple(r for st in states for r in st.finished))
