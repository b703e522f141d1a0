"""`kvplan simulate`'s library call: the engine set up from the same inputs `estimate` plans
with (kvplan.analysis.inputs.estimate_inputs -> capacity PlanInputs), its KV pool the capacity
plan's exact block count and the engine's own KV-cache groups, the step time from the cost model
(kvplan.perf.mixed_step), then the requests served (kvplan.analysis.simulate.scheduler).

Split into kvplan.analysis.simulate.sim_setup (`SimSetup`, `SimResult`) and
kvplan.analysis.simulate.engine_setups (each engine's set-up, `group_rules`, `step_cost`), whose
names this module re-exports; here: `setup` (the checks and the options every engine shares),
the run over the replicas (`simulate`) and the result's assembly."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import replace

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import EstimateInputs
from kvplan.analysis.simulate.client_loop import ClientLoopCost
from kvplan.analysis.simulate.dp_lockstep import balance_for, run_lockstep
from kvplan.analysis.simulate.engine_core import engine_core_stage, with_host
from kvplan.analysis.simulate.engine_setups import SETUPS, group_rules, step_cost
from kvplan.analysis.simulate.gc_scope import collector_paused
from kvplan.analysis.simulate.hybrid_pool import HybridPool
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.metrics import SimMetrics, metrics
from kvplan.analysis.simulate.moe_jit import MoeJitStall, replica_cost
from kvplan.analysis.simulate.pipeline import PipelineSimulator, pipeline_async, pipelined
from kvplan.analysis.simulate.sampling import SampledStepCost
from kvplan.analysis.simulate.scheduler import Simulator
from kvplan.analysis.simulate.sglang_mamba_radix import MambaRadixTree
from kvplan.analysis.simulate.sglang_scheduler import SglangOptionsSim, SglangSimulator
from kvplan.analysis.simulate.sglang_spec_sim import SglangSpecSimulator, sglang_spec_rule
from kvplan.analysis.simulate.sglang_swa import SwaWindow
from kvplan.analysis.simulate.sglang_swa_radix import SwaRadixWindow
from kvplan.analysis.simulate.sim_setup import SimResult, SimSetup
from kvplan.analysis.simulate.sim_types import SimRequest, SimState, StepCost
from kvplan.analysis.simulate.spec_acceptance import Acceptance
from kvplan.analysis.simulate.spec_sim import SpecDecodeSim, SpecSimulator, spec_metrics
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmOptionsSim, TrtllmSimulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.capacity.weights import routed_expert_bits
from kvplan.engines.base import Scheduler
from kvplan.engines.sglang.options import sglang_options
from kvplan.engines.sglang.spec_decode import SglangSpecDecode
from kvplan.engines.trtllm.dp_balance import AdpContextGate
from kvplan.engines.vllm.eagle_head import VllmEagleHead
from kvplan.engines.vllm.frontend import (
    VLLM_API_LOOP_MEASURED,
    ApiOutputCost,
    vllm_api_output_cost,
)
from kvplan.engines.vllm.graph_sizes import vllm_model_max_capture_size
from kvplan.engines.vllm.moe_jit import vllm_triton_moe_jit
from kvplan.engines.vllm.sampler import SamplingParams, VllmSampler
from kvplan.engines.vllm.spec_decode import VllmSpecDecode
from kvplan.engines.vllm.spec_graph_sizes import vllm_cuda_graph_sizes
from kvplan.kv.cache import check_token_sized
from kvplan.model.spec import ModelSpec
from kvplan.perf.sampler_cost import SamplerCost
from kvplan.sources.draft_config import DraftConfig

__all__ = ["SimResult", "SimSetup", "group_rules", "replica_step_cost", "setup", "simulate",
           "step_cost"]
_step_cost = step_cost  # the name the benches call (tests/benches/aiconfig_agg_flags.py)


def setup(spec: ModelSpec, inputs: EstimateInputs, *, dp: int = 1,
          max_num_seqs: int | None = None, async_scheduling: bool | None = None,
          sglang: SglangOptionsSim | None = None, api_server: bool = True,
          frontend: bool = False, moe_jit_compile_s: float | None = None,
          trtllm: TrtllmOptionsSim | None = None, dp_attention: bool = False,
          api_output: bool = False, sampling: SamplingParams | None = None,
          engine_core_cpu: bool | None = None, acceptance: Acceptance | None = None,
          spec_seed: int = 0, draft_config: DraftConfig | None = None,
          frontend_latency_s: float | None = None, default_frontend: bool = True,
          client_cost: ClientLoopCost | None = None) -> tuple[SimSetup, list[str]]:
    """The engine `inputs` describe (a capacity question: --gpu or a KV budget), as simulated by
    its engine's scheduler (EngineRules.scheduler). `async_scheduling`: vLLM's async scheduling
    / SGLang's overlap scheduler (None: the default). `max_num_seqs`: vLLM --max-num-seqs /
    SGLang --max-running-requests. `api_server`: the requests come through `vllm serve`'s OpenAI
    server (its tokenizer batcher, kvplan.engines.vllm.frontend), not to an engine run in
    process. `frontend`: the server's CPU stage before the engine (`simulate --frontend`: vLLM's
    VLLM_API_LOOP_COST, with the output stage on the same loop at --dp 1, SGLang's measured
    TokenizerManager; kvplan.engines.{vllm,sglang}.frontend). `moe_jit_compile_s`: the seconds
    one Triton compile of vLLM's fused-MoE GEMM stalls a step (kvplan.analysis.simulate.moe_jit;
    None: not simulated). `trtllm`: TensorRT-LLM's chunked prefill and capacity scheduler policy
    (None: its defaults). `dp_attention`: the `dp` ranks are one engine's attention-DP ranks
    (`inputs` one rank's layout: kvplan.analysis.simulate.dp_lockstep. dp_attention_layout),
    stepped in lockstep. `api_output`: the API server loop's work after each step (`kvplan
    simulate --api-output`; vLLM only, one replica:
    kvplan.engines.vllm.frontend.VLLM_API_OUTPUT_COST, measured). `sampling`: the parameters
    every request samples with, vLLM's sampler charged in each step over the step's requests
    (`kvplan simulate --generation-config`; vLLM 0.15 only: kvplan.engines.vllm.sampler).
    `engine_core_cpu`: vLLM's engine-core CPU (None: on). `acceptance`: the drafts'
    acceptance with `inputs`' speculative method (vLLM or SGLang, required there:
    kvplan.analysis.simulate.spec_sim), drawn from `spec_seed`; `draft_config`: the EAGLE head's
    own config.json (vLLM only: kvplan.engines.vllm.eagle_head; None: one layer of the target's
    shape). `frontend_latency_s`: the user's send-to-engine latency in place of vLLM's
    --frontend's fitted one (kvplan.engines.vllm.frontend.vllm_api_loop_cost; needs `frontend`,
    vLLM only). `client_cost`: the benchmark client's serial loop in a closed loop
    (kvplan.analysis.simulate.client_loop; `simulate --client-cost measured`; one vLLM
    replica). `default_frontend`: without `frontend`, a `vllm serve` run (`api_server`, one
    replica, no attention DP, no speculative decoding, no `api_output`) gets the API server's
    measured stage, no latency (VLLM_API_LOOP_MEASURED, frontdef67); False: the engine alone
    (`simulate --no-frontend`). Returns it and the notes."""
    check_token_sized(spec, "simulate")
    cap = inputs.capacity
    if cap is None or inputs.gpu is None:
        raise InputError("simulate: give --gpu (the step time needs a GPU preset)")
    rules = cap.engine.rules
    if rules.scheduler is None:
        raise InputError(f"simulate: {rules.display_name}'s scheduler is not modelled "
                         "(--engine vllm, sglang or trtllm)")
    if cap.pp > 1:
        _check_pipeline(rules.scheduler, dp_attention=dp_attention, sampling=sampling,
                        moe_jit=moe_jit_compile_s is not None,
                        spec=bool(cap.num_speculative_tokens))
        pp_async, pp_async_note = pipeline_async(inputs.spec, version=cap.engine_version,
                                                 pp=cap.pp, asked=async_scheduling)
        async_scheduling = pp_async is not None
    if cap.num_speculative_tokens and rules.scheduler is Scheduler.capacity_micro_batch:
        raise InputError("simulate --speculative-method: only vLLM's and SGLang's speculative "
                         "decoding are simulated (--engine vllm or sglang)")
    if draft_config is not None and not cap.num_speculative_tokens:
        raise InputError("simulate --spec-draft-config: needs --speculative-method")
    if acceptance is not None and not cap.num_speculative_tokens:
        raise InputError("simulate --spec-mean-accept-len / --spec-acceptance-rate: needs "
                         "--speculative-method")
    _check_frontend_latency(frontend_latency_s, frontend=frontend, scheduler=rules.scheduler)
    # vLLM's --frontend is the API server's one loop, which also takes every step's outputs
    # (kvplan.engines.vllm.frontend, VLLM_API_LOOP_COST): the output stage comes with it.
    vllm_one = rules.scheduler is Scheduler.mixed_token_budget and dp == 1
    measured = default_frontend and measured_default(
        frontend=frontend, api_output=api_output, api_server=api_server, vllm_one=vllm_one,
        dp_attention=dp_attention, speculative=bool(cap.num_speculative_tokens))
    loop = (frontend or measured) and vllm_one
    if cap.num_speculative_tokens and (dp_attention or api_output or loop):
        raise InputError("simulate --speculative-method: not simulated with --dp-attention, "
                         "--api-output or vLLM's --frontend (its output stage)")
    if moe_jit_compile_s is not None and rules.scheduler is not Scheduler.mixed_token_budget:
        raise InputError("simulate --moe-jit-compile-ms: only vLLM's Triton fused MoE is "
                         "modelled (--engine vllm)")
    if (trtllm is not None and trtllm != TrtllmOptionsSim()
            and rules.scheduler is not Scheduler.capacity_micro_batch):
        raise InputError("simulate --capacity-scheduler-policy / --enable-chunked-prefill: "
                         "TensorRT-LLM's options (--engine trtllm)")
    if cap.num_speculative_tokens and rules.scheduler is Scheduler.prefill_first:
        async_scheduling = False  # SGLang's spec v1 turns the overlap scheduler off
        # (kvplan.engines.sglang.spec_decode: server_args.py 0.5.6 :1693-1694)
    sim, notes = SETUPS[rules.scheduler](inputs.spec, inputs, dp=dp, max_num_seqs=max_num_seqs,
                                          async_scheduling=async_scheduling, sglang=sglang,
                                          api_server=api_server, frontend=frontend,
                                          trtllm=trtllm, frontend_latency_s=frontend_latency_s)
    if measured:
        sim, notes = _with_measured_loop(sim, notes)
    if api_output or loop:
        sim, notes = _with_api_output(sim, notes, rules.scheduler, dp,
                                      vllm_api_output_cost(cap.engine_version, frontend=loop))
    if client_cost is not None:
        sim, notes = _with_client_loop(sim, notes, client_cost, vllm_one and not dp_attention)
    if sampling is not None:
        sim, notes = _with_sampler(sim, notes, rules.scheduler, inputs, sampling)
    if cap.num_speculative_tokens:
        sim, notes = _with_spec_decode(sim, notes, inputs, acceptance, spec_seed, draft_config)
    host, note = engine_core_stage(rules.scheduler, sim.scheduler.async_scheduling,
                                   engine_core_cpu, pipeline=cap.pp > 1)
    if cap.pp > 1:  # the host work before each batch (kvplan.analysis.simulate.pipeline)
        pipe, pp_note = pipelined(sim.cost, inputs.spec, cap.pp, version=cap.engine_version,
                                  async_mode=pp_async, host=host)
        notes = [*notes, *([pp_async_note] if pp_async_note else []), pp_note,
                 *([note] if host else [])]
        sim, host = replace(sim, pipeline=pipe), None
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


def _check_pipeline(scheduler: Scheduler, *, dp_attention: bool, sampling: SamplingParams | None,
                    moe_jit: bool, spec: bool) -> None:
    """Refuse --pp > 1 where its pipeline is not simulated: SGLang's and TensorRT-LLM's
    micro-batches, and vLLM's with the options whose step cost has no stage split."""
    if scheduler is not Scheduler.mixed_token_budget:
        raise InputError("simulate --pp above 1: only vLLM's pipeline is simulated (--engine "
                         "vllm); SGLang's and TensorRT-LLM's micro-batches are not modelled")
    if dp_attention or sampling is not None or moe_jit or spec:
        raise InputError("simulate --pp above 1: not simulated with --dp-attention, "
                         "--generation-config, --moe-jit-compile-ms or --speculative-method")


def _with_client_loop(sim: SimSetup, notes: list[str], cost: ClientLoopCost,
                      vllm_one: bool) -> tuple[SimSetup, list[str]]:
    """The client's serial loop added to `sim` (kvplan.analysis.simulate.client_loop): one vLLM
    replica's run loop only (dp_lockstep and the other engines' loops do not take it)."""
    if not vllm_one:
        raise InputError("simulate --client-cost: simulated for one vLLM replica only "
                         "(--engine vllm, --dp 1, no --dp-attention)")
    note = (f"benchmark client: its loop's serial work in a closed loop, "
            f"{cost.finish_s * 1e3:.2f} ms a finished stream and {cost.send_s * 1e3:.2f} ms a "
            f"replacement sent ({cost.source})")
    return replace(sim, scheduler=replace(sim.scheduler, bench_client=cost)), [*notes, note]


def _check_frontend_latency(latency_s: float | None, *, frontend: bool,
                            scheduler: Scheduler) -> None:
    """Refuse --frontend-latency-ms where it has no stage to replace the latency of: without
    --frontend, on an engine whose --frontend stage has no latency (SGLang's TokenizerManager;
    TensorRT-LLM has none), or not a finite time >= 0."""
    if latency_s is None:
        return
    if not frontend:
        raise InputError("simulate --frontend-latency-ms: needs --frontend (it replaces that "
                         "stage's fitted latency)")
    if scheduler is not Scheduler.mixed_token_budget:
        raise InputError("simulate --frontend-latency-ms: only vLLM's --frontend stage has a "
                         "send-to-engine latency (--engine vllm)")
    if not math.isfinite(latency_s) or latency_s < 0:
        raise InputError("simulate --frontend-latency-ms: expected a finite number of ms >= 0, "
                         f"got {latency_s * 1e3:g}")


def measured_default(*, frontend: bool, api_output: bool, api_server: bool, vllm_one: bool,
                     dp_attention: bool, speculative: bool) -> bool:
    """Whether a run gets `vllm serve`'s default measured stage (VLLM_API_LOOP_MEASURED,
    frontdef67): no stage asked for, through the API server, one vLLM replica, no attention DP
    (one loop over ranks not modelled), no speculative decoding (its output stage is not)."""
    return (not frontend and not api_output and api_server and vllm_one and not dp_attention
            and not speculative)


def _with_measured_loop(sim: SimSetup, notes: list[str]) -> tuple[SimSetup, list[str]]:
    """`vllm serve`'s default ingestion stage added to `sim` (VLLM_API_LOOP_MEASURED)."""
    cost = VLLM_API_LOOP_MEASURED
    note = (f"API server CPU (default for `vllm serve`; --frontend adds a latency, --no-frontend "
            f"leaves it out): {cost.s_per_request * 1e3:.3f} ms per request + "
            f"{cost.s_per_prompt_token * 1e6:.2f} us per prompt token, one request at a time; "
            f"{cost.source}")
    return replace(sim, scheduler=replace(sim.scheduler, api_server=cost)), [*notes, note]


def _with_api_output(sim: SimSetup, notes: list[str], scheduler: Scheduler, dp: int,
                     cost: ApiOutputCost) -> tuple[SimSetup, list[str]]:
    """The vLLM API server's output stage `cost` added to `sim` (kvplan.engines.vllm.frontend
    `vllm_api_output_cost`)."""
    if scheduler is not Scheduler.mixed_token_budget:
        raise InputError("simulate --api-output: only vLLM's API server is modelled "
                         "(--engine vllm)")
    if dp > 1:
        raise InputError("simulate --api-output: one API server over --dp replicas is not "
                         "modelled (give --dp 1)")
    prime = (f" (+ {cost.s_per_primed_token * 1e6:.2f} us per prompt token of a request given "
             "its first token: the detokenizer's prime)" if cost.s_per_primed_token else "")
    note = (f"API server outputs (--api-output): {cost.s_per_output * 1e6:.1f} us per request "
            f"given a token{prime}, + {cost.s_per_step * 1e6:.1f} us, after each step on the loop "
            f"that also takes the requests; {cost.source}")
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


def _with_spec_decode(sim: SimSetup, notes: list[str], inputs: EstimateInputs,
                      acceptance: Acceptance | None, seed: int,
                      draft_config: DraftConfig | None = None) -> tuple[SimSetup, list[str]]:
    """vLLM's serial drafter in each step (kvplan.analysis.simulate.spec_sim), priced from
    `draft_config` where given (kvplan.engines.vllm.eagle_head)."""
    cap = inputs.capacity
    assert cap is not None and cap.speculative_method is not None
    k = cap.num_speculative_tokens
    if acceptance is None:
        acceptance = Acceptance.of(k=k)  # raises: the acceptance is an input, not a default
    if acceptance.k != k:
        raise InputError(f"simulate: the acceptance is for {acceptance.k} drafts, "
                         f"--num-speculative-tokens is {k}")
    rule: VllmSpecDecode | SglangSpecDecode
    head = None
    if draft_config is not None:
        if cap.engine.rules.scheduler is not Scheduler.mixed_token_budget:
            raise InputError("simulate --spec-draft-config: read in vLLM's EAGLE heads only "
                             "(--engine vllm)")
        head = VllmEagleHead.of(cap.speculative_method, draft_config, inputs.spec)
    if cap.engine.rules.scheduler is Scheduler.prefill_first:
        rule, sim, note = sglang_spec_rule(
            sim, method=cap.speculative_method, num_steps=k, engine_version=cap.engine_version,
            topk=sglang_options(cap).speculative_eagle_topk)
    else:
        rule = VllmSpecDecode(method=cap.speculative_method, num_speculative_tokens=k)
        note = (f"speculative decoding ({rule.method}, k {k}): a decode verifies {k + 1} tokens "
                f"a step, {k} KV lookahead slots, the drafter one pass over the step's tokens "
                f"and {k - 1} of one token a request")
    spec = SpecDecodeSim.of(rule, acceptance, sim.cost, seed=seed, head=head)
    if isinstance(rule, VllmSpecDecode):
        note += (f" (drafter: {spec.drafter}"
                 + ("" if head is not None else "; --spec-draft-config prices the head's own")
                 + ")")
    note += (f"; acceptance from {acceptance.source}: mean acceptance length "
             f"{acceptance.mean_accept_len:.3g}, drawn per request per step from seed {seed} "
             "(kvplan.analysis.simulate.spec_sim)")
    return replace(sim, spec_decode=spec), [*notes, note]


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
        max_num_batched_tokens=sim.scheduler.max_num_batched_tokens,
        model_max_capture=vllm_model_max_capture_size(spec.architectures, cap.engine_version),
        num_speculative_tokens=cap.num_speculative_tokens, version=cap.engine_version)
    rule = vllm_triton_moe_jit(
        gpu=inputs.gpu.name, engine_version=cap.engine_version,
        num_experts=moe.n_routed_experts, top_k=moe.num_experts_per_tok,
        intermediate_per_rank=moe.moe_intermediate_size // cap.tp, graph_sizes=graphs,
        max_num_batched_tokens=sim.scheduler.max_num_batched_tokens)
    return MoeJitStall(rule=rule, compile_s=compile_s)


def _engine(sim: SimSetup, blocks: int, *, timeline: bool, bulk_decode: bool,
            replica: int = 0) -> Simulator:
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
        if sim.spec_decode is not None:
            assert isinstance(pool, KVPool)
            return SglangSpecSimulator(pool, sim.scheduler, sim.cost, sim.sglang,
                                       sim.spec_decode, replica=replica, timeline=timeline)
        return SglangSimulator(pool, sim.scheduler, sim.cost, sim.sglang, timeline=timeline,
                               bulk_decode=bulk_decode, swa=swa, mamba=slots is not None,
                               mamba_tree=tree)
    if sim.trtllm is not None:
        return TrtllmSimulator(pool, sim.scheduler, sim.cost, sim.trtllm, timeline=timeline)
    if sim.spec_decode is not None:
        return SpecSimulator(pool, sim.scheduler, replica_step_cost(sim), sim.spec_decode,
                             replica=replica, timeline=timeline)
    if sim.pipeline is not None:
        return PipelineSimulator(pool, sim.scheduler, replica_step_cost(sim), sim.pipeline,
                                 timeline=timeline)
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


def let_go(sims: list[Simulator], finished: Iterable[SimRequest]) -> None:
    """A run's page objects freed by reference counting when it returns, not left to the
    collector's scan (speed only, kvplan.analysis.simulate.gc_scope): the radix trees' eviction
    hooks taken off the pools (a tree holds its pool and the pool the tree's hook, a cycle) and
    the finished requests' pages dropped (SimRequest.drop_pages)."""
    for s in sims:
        if isinstance(s.pool, KVPool):
            s.pool.on_evict = None
    for r in finished:
        r.drop_pages()


@collector_paused()  # speed only (kvplan.analysis.simulate.gc_scope)
def simulate(sim: SimSetup, requests: Iterable[RequestSpec], *, concurrency: int | None = None,
             slo_ttft_ms: float | None = None, slo_tpot_ms: float | None = None,
             timeline: bool = False, bulk_decode: bool = True,
             num_blocks: int | None = None, engines: int = 1) -> SimResult:
    """Serve `requests` on `sim.dp` replicas (round-robin; a closed loop's concurrency is
    shared out the same way), or on `sim.dp` attention-DP ranks in lockstep (`dp_balance`).
    `engines`: that many independent copies of the attention-DP engine (each its `sim.dp`
    ranks in lockstep, numbering its own requests for its balancer), the stream dealt to them
    round-robin as to plain replicas (`plan --rate`'s replicas of an attention-DP engine);
    1 without attention DP. `num_blocks`: another pool size (tests, what-ifs)."""
    blocks = (sim.pool_blocks or sim.plan.num_blocks) if num_blocks is None else num_blocks
    lockstep = sim.dp_balance is not None
    if engines > 1 and not lockstep:
        raise InputError("simulate: engines above 1 are copies of an attention-DP engine "
                         "(plain replicas are --dp)")
    sims = [_engine(sim, blocks, timeline=timeline, bulk_decode=bulk_decode and not lockstep,
                    replica=i) for i in range(sim.dp * engines)]
    # The servers the stream is dealt to: each attention-DP engine's ranks, or each replica.
    servers = ([sims[k * sim.dp:(k + 1) * sim.dp] for k in range(engines)] if lockstep
               else [[s] for s in sims])

    def serve(group: list[Simulator], stream: Iterable[RequestSpec], share: int | None
              ) -> list[SimState]:
        if sim.dp_balance is None:
            return [group[0].run(stream, concurrency=share)]
        adp = sim.trtllm.adp_balance if sim.trtllm is not None else None
        gate = (None if adp is None or sim.trtllm is None
                else AdpContextGate(adp, sim.trtllm.max_batch_size))
        return run_lockstep(group, sim.dp_balance, stream, concurrency=share, gate=gate)

    if len(servers) == 1:
        states = serve(servers[0], requests, concurrency)
    else:
        n = len(servers)
        streams = [itertools.islice(s, 0, None) for s in itertools.tee(requests, n)]
        shares = [None if concurrency is None else max(1, (concurrency + i) // n)
                  for i in range(n)]
        states = [st for i, (g, stream) in enumerate(zip(servers, streams, strict=True))
                  for st in serve(g, itertools.islice(stream, i, None, n), shares[i])]
    m = metrics(states, slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms)
    m = _hybrid_pool_metrics(m, sims)
    if sim.spec_decode is not None:
        m = replace(m, spec_decode=spec_metrics(
            sim.spec_decode, [s for s in sims if isinstance(s, SpecSimulator)]))
    rows = tuple((i, rec) for i, st in enumerate(states) for rec in (st.timeline or ()))
    finished = tuple(r for st in states for r in st.finished)
    let_go(sims, finished)
    return SimResult(setup=replace(sim), metrics=m, timeline=rows, notes=(), finished=finished)
