"""Each engine's simulated set-up (kvplan.analysis.simulate.run.setup dispatches on
EngineRules.scheduler through `SETUPS`): vLLM V1's (its KV-cache groups, `group_rules`, and
prefix caching), SGLang's and TensorRT-LLM's, each with the cost model's step time for the
engine (`step_cost`). Split from kvplan.analysis.simulate.run, which re-exports `group_rules`
and `step_cost` (as `_step_cost` too)."""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import EstimateInputs
from kvplan.analysis.simulate.hybrid_pool import hybrid_caching_refusal
from kvplan.analysis.simulate.kv_pool import GroupRule
from kvplan.analysis.simulate.sglang_frontend import with_tokenizer_manager
from kvplan.analysis.simulate.sglang_pools import sglang_sim_pool
from kvplan.analysis.simulate.sglang_scheduler import SglangOptionsSim, SglangSchedule
from kvplan.analysis.simulate.sim_setup import SimSetup
from kvplan.analysis.simulate.sim_types import SchedulerConfig
from kvplan.analysis.simulate.trtllm_lines import trtllm_line
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmOptionsSim, TrtllmSchedule
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import Scheduler
from kvplan.engines.decode_graphs import NO_DECODE_GRAPHS, DecodeGraphs
from kvplan.engines.sglang.options import MAX_PREFILL_TOKENS
from kvplan.engines.trtllm.disagg_flow import MAX_BATCH_SIZE
from kvplan.engines.vllm.admission import vllm_admission
from kvplan.engines.vllm.alloc import (
    VllmKVConfig,
    vllm_async_scheduling_default,
    vllm_batch_defaults,
)
from kvplan.engines.vllm.engine import vllm_stage_config
from kvplan.engines.vllm.frontend import vllm_api_loop_cost, vllm_api_tokenizer_batching
from kvplan.engines.vllm.options import vllm_options
from kvplan.kv.kinds import ChunkedLocalCache, RecurrentState, SlidingWindowCache
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.cost_rules import opt_in
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.flops import MLAForm
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.serving import sglang_chunked_prefill_tokens

# The vLLM release whose scheduler (vllm/v1/core/sched/scheduler.py) the simulator follows.
_SCHEDULER_VERSION = "0.32"


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


def _vllm_setup(spec: ModelSpec, inputs: EstimateInputs, *, dp: int, max_num_seqs: int | None,
                async_scheduling: bool | None, sglang: SglangOptionsSim | None,
                api_server: bool, frontend: bool, trtllm: TrtllmOptionsSim | None = None,
                frontend_latency_s: float | None = None) -> tuple[SimSetup, list[str]]:
    """vLLM V1's engine (kvplan.analysis.simulate.scheduler): its KV-cache groups and pool as
    `estimate` sizes them, its batch defaults, prefix caching and async scheduling by version,
    the API server's tokenizer batching, with `frontend` its CPU stage (`frontend_latency_s`:
    the user's latency in place of the fitted one). (`sglang`: SGLang's options, not read.)"""
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
    graphs = rules.decode_graph_sizes(spec, replace(cap, max_num_seqs=max_num_seqs))
    cost = step_cost(spec, inputs, graphs)
    batching = vllm_api_tokenizer_batching(cap.engine_version) if api_server else None
    if batching is not None:
        notes.append(f"API server: prompts tokenized in batches released "
                     f"{batching.wait_s * 1e3:g} ms after the first (up to {batching.max_batch}; "
                     "vLLM's AsyncMicrobatchTokenizer, 0.11-0.23)")
    # The one place --frontend's fitted latency enters (or the user's, --frontend-latency-ms).
    server = vllm_api_loop_cost(frontend_latency_s) if frontend else None
    if server is not None:
        notes.append(f"API server CPU (--frontend): {server.s_per_request * 1e3:.3f} ms per "
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


def step_cost(spec: ModelSpec, inputs: EstimateInputs, graphs: tuple[int, ...],
               prefill_graph: bool | None = None,
               decode_graphs: DecodeGraphs = NO_DECODE_GRAPHS, *,
               graph_mixed: bool = True) -> MixedStepCost:
    """The cost model's step time for the engine `inputs` name (its traits, its GPU), a
    prefill step with its eager launch time where the engine pays one (SGLang, TensorRT-LLM:
    MixedStepCost's `eager_prefill`; engine_efficiency gives vLLM's 0); `graphs` the sizes a
    step is padded to, a step with a prefill chunk too unless `graph_mixed` is False;
    `decode_graphs`: the steps it replays from CUDA graphs without padding, in its unit
    (MixedStepCost; kvplan.engines.decode_graphs)."""
    cap = inputs.capacity
    assert cap is not None and inputs.gpu is not None
    att = spec.attention
    form = (MLAForm.decompressed if isinstance(att, LatentAttention) and att.decompressed_cache
            else MLAForm.absorbed)
    conv, ssm = cap.engine.rules.state_dtypes(spec, cap)
    layout = Layout(tp=cap.tp, dp_attention=cap.dp_attention, ep=cap.ep if cap.ep > 1 else 1,
                    attn_tp=cap.attention_tp if cap.dp_attention else 1,
                    node_gpus=inputs.node_gpus,
                    **({} if inputs.scale_out is None else {"scale_out": inputs.scale_out}))
    graph = False if cap.dp_attention or cap.pp > 1 else prefill_graph  # off: DP attn, PP
    return MixedStepCost(spec, inputs.gpu, kv_dtype=cap.kv_dtype, layout=layout,
                         eff=engine_efficiency(
                             cap.engine.value, opt_in(inputs.cost_rules, inputs.gpu),
                             version=cap.engine_version, prefill_graph=graph, options=cap.options,
                             spec=spec),
                         quantization=cap.quantization, conv_dtype=conv, ssm_dtype=ssm,
                         mla_form=form, graph_sizes=graphs, eager_prefill=True,
                         graph_mixed=graph_mixed, graphs=decode_graphs)


def _sglang_setup(spec: ModelSpec, inputs: EstimateInputs, *, dp: int, max_num_seqs: int | None,
                  async_scheduling: bool | None, sglang: SglangOptionsSim | None,
                  api_server: bool, frontend: bool, trtllm: TrtllmOptionsSim | None = None,
                  frontend_latency_s: float | None = None) -> tuple[SimSetup, list[str]]:
    """SGLang's engine (kvplan.analysis.simulate.sglang_scheduler): its token pool as
    `estimate` sizes it (max_total_num_tokens in pages, one full-attention pool; a mamba
    pool's slots beside it cap the running requests, kvplan.analysis.simulate.sglang_pools),
    its max_running_requests (`max_num_seqs`), chunked_prefill_size by GPU
    (kvplan.engines.sglang.options), the radix cache (on unless --disable-radix-cache), the
    overlap scheduler (`async_scheduling`; on unless turned off), with `frontend` its
    TokenizerManager (kvplan.analysis.simulate.sglang_frontend; `api_server`,
    `frontend_latency_s`: not read, the latter refused by run.setup)."""
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
    elif cap.dp_attention:
        # A given --max-running-requests sizes each rank's req_to_token_pool whole
        # (model_runner.py 0.5.6 :509-513) but each rank's scheduler runs at most it //
        # dp_size, asserted above 0 (managers/tp_worker.py 0.5.3 :145-152, 0.5.6 :290-297;
        # model_runner.py 0.5.9 :593-600).
        reqs = min(reqs, cap.max_num_seqs // cap.attention_dp_ranks)
        if reqs < 1:
            raise InputError(f"--max-running-requests {cap.max_num_seqs}: SGLang divides it by "
                             f"--dp-size {cap.attention_dp_ranks} under DP attention and "
                             "asserts the quotient above 0")
    cap_running = pool.running_cap(reqs)
    # Under DP attention each rank's scheduler takes chunked_prefill_size // dp_size, the default
    # or the one given (server_args.py _handle_data_parallelism: 0.5.3 :954-957, 0.5.6
    # :1496-1499, 0.5.9 :2114-2117; the disaggregated roles likewise, kvplan.analysis.disagg).
    ranks = cap.attention_dp_ranks
    chunk = (sglang_chunked_prefill_tokens(inputs.gpu, dp_attention=ranks)
             if opts.chunked_prefill_size is None
             else (None if opts.chunked_prefill_size <= 0
                   else opts.chunked_prefill_size // ranks))
    if opts.max_prefill_tokens is not None and opts.max_prefill_tokens < 1:
        raise InputError(f"simulate: --max-prefill-tokens {opts.max_prefill_tokens}: expected "
                         "a positive token count")
    sg = SglangSchedule(chunked_prefill_size=chunk, max_running_requests=cap_running,
                        schedule_conservativeness=opts.schedule_conservativeness,
                        policy=opts.schedule_policy,
                        max_prefill_tokens=(MAX_PREFILL_TOKENS if opts.max_prefill_tokens is None
                                            else opts.max_prefill_tokens),
                        recv_interval=opts.scheduler_recv_interval,
                        ignore_eos_path=opts.ignore_eos and cap.prefix_caching is False)
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
    if opts.ignore_eos:  # the client's ignore_eos (sglang_scheduler rule 4); no note without it
        notes.append("requests sent with ignore_eos: " + (
            "admitted by add_one_req_ignore_eos (radix cache disabled)" if sg.ignore_eos_path
            else "admitted as any other (add_one_req: the radix cache is on)"))
    # Decode batches up to --cuda-graph-max-bs requests replay CUDA graphs (unpadded here); the
    # same source as the cost model's CostInputs.graphs (kvplan.analysis.plan_search).
    cost = step_cost(spec, inputs, (), opts.piecewise_cuda_graph,
                     cap.engine.rules.decode_graphs(cap))
    if cost.eff.prefill_graph is not None:
        notes.append("prefill: piecewise CUDA graphs (on by default from SGLang "
                     f"{cost.eff.prefill_graph.default_since}), each captured step launching "
                     "only the ops outside them")
    sched = SchedulerConfig(max_num_seqs=cap_running, max_num_batched_tokens=chunk or tokens,
                            max_model_len=cap.context, async_scheduling=overlap)
    sched, notes = with_tokenizer_manager(sched, notes, frontend=frontend, dp=dp)
    groups = (GroupRule(kind="full", block_size=plan.block_size),)
    return SimSetup(plan=plan, groups=groups, scheduler=sched, caching=caching,
                    cost=cost, dp=dp, sglang=sg, sglang_pool=pool,
                    swa=swa, pool_blocks=tokens // plan.block_size + 1), notes


def _trtllm_setup(spec: ModelSpec, inputs: EstimateInputs, *, dp: int,
                  max_num_seqs: int | None, async_scheduling: bool | None,
                  sglang: SglangOptionsSim | None, api_server: bool, frontend: bool,
                  trtllm: TrtllmOptionsSim | None = None,
                  frontend_latency_s: float | None = None) -> tuple[SimSetup, list[str]]:
    """TensorRT-LLM's PyTorch executor (kvplan.analysis.simulate.trtllm_scheduler): its pool
    as `estimate` sizes it (the plan's blocks; no null block), max_batch_size (`max_num_seqs`,
    default 2048), max_num_tokens (the plan's max_num_batched_tokens, default 8192), block
    reuse (on unless turned off), the overlap scheduler (`async_scheduling`; on unless turned
    off), chunked prefill and the capacity policy (`trtllm`). (`api_server`, `sglang`,
    `frontend_latency_s`: not read.)"""
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
                           early_exit=line.early_exit, adp_balance=opts.adp_balance,
                           # `_schedule` waits only without attention DP (batch_wait).
                           batch_wait=None if cap.dp_attention else opts.batch_wait)
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
    # A generation-only step padded to the next captured batch size where enable_padding is
    # on (kvplan.engines.trtllm.engine `decode_graph_sizes`; off by default: no sizes); a step
    # with a context request never (it runs eagerly).
    graphs = cap.engine.rules.decode_graph_sizes(spec, replace(cap, max_num_seqs=batch))
    if graphs:
        notes.append(f"CUDA graphs: a generation-only step padded to the next captured batch "
                     f"size ({len(graphs)} sizes up to {graphs[-1]:,}; enable_padding)")
    return SimSetup(plan=plan, groups=groups, scheduler=config, caching=caching,
                    cost=step_cost(spec, inputs, graphs, graph_mixed=False), dp=dp, trtllm=sched,
                    pool_blocks=plan.num_blocks + 1), notes


# Each engine's scheduler (EngineRules.scheduler) and the set-up that simulates it.
SETUPS = {Scheduler.mixed_token_budget: _vllm_setup, Scheduler.prefill_first: _sglang_setup,
          Scheduler.capacity_micro_batch: _trtllm_setup}
