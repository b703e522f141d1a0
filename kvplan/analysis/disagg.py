"""`kvplan plan --disagg`: a disaggregated deployment, prefill workers handing each request's KV
to decode workers over a link. Per role: the layout, the KV budget and how many requests of
I + O tokens it holds (the same code as `kvplan plan`), the role's launch command with its KV
connector; the KV one request hands over, as the engine's connector moves it
(kvplan.engines.handover), and the time it takes on the link (kvplan.hardware.kv_links); with a
target (--concurrency or --rate), the x prefill : y decode workers the time model asks for
(kvplan.analysis.disagg_ratio).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from kvplan._util.errors import InputError
from kvplan.analysis.disagg_ratio import PrefillBatching, RatioPlan, RatioTarget, plan_ratio
from kvplan.analysis.launch import command_text, launch_for
from kvplan.analysis.plan_search import evaluate, plan_inputs_for, predict, prefill_stepper
from kvplan.analysis.plan_types import Candidate, Layout, PlanRequest
from kvplan.analysis.simulate.engine_core import RoleHost
from kvplan.analysis.simulate.engine_core import role_host as engine_core_role_host
from kvplan.capacity.plan import plan_capacity
from kvplan.capacity.stages import pp_layer_ranges
from kvplan.engines.base import DEFAULT_ENGINE, Engine, Scheduler
from kvplan.engines.caches import stage_caches
from kvplan.engines.context import check_context, long_context_env
from kvplan.engines.handover import DecodeAdmission, Handover
from kvplan.engines.kv_dtype import ENGINE_AUTO, check_kv_dtype, known_auto_kv_dtype, run_kv_dtype
from kvplan.engines.launch import LaunchPlan, LaunchSettings, declared_kv_dtype
from kvplan.engines.sglang.options import MAX_PREFILL_TOKENS
from kvplan.hardware.gpus import GPU
from kvplan.hardware.kv_links import KvLink
from kvplan.kv.cache import check_token_sized
from kvplan.model.spec import ModelSpec

ROLES = ("prefill", "decode")


@dataclass(frozen=True, kw_only=True)
class DisaggRequest:
    prefill: Layout
    decode: Layout
    input_len: int
    output_len: int
    gpu: GPU
    link: KvLink
    engine: Engine = DEFAULT_ENGINE
    engine_version: str | None = None
    connector: str | None = None  # None: the engine's default
    kv_dtype: str = ENGINE_AUTO  # the engine's own for the model (run_kv_dtype), as estimate
    mem_fraction: float | None = None
    model_ref: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # further PlanInputs fields
    # The target, for the ratio (kvplan.analysis.disagg_ratio): one of the two, or neither.
    concurrency: int | None = None
    rate: float | None = None  # requests per second
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None
    prices: dict[str, float] = field(default_factory=dict)
    max_workers: int = 32  # per role, for the ratio search
    # I + O above the model's maximum: planned (launch lines with the engine's override), not
    # refused (kvplan.engines.context).
    allow_long_context: bool = False
    # The time model's opt-in rules (kvplan.perf.cost_rules.CostRules), on both roles.
    cost_rules: Any = None
    # The decode launch's --scheduler-recv-interval (SGLang's; 1: its default, every step).
    scheduler_recv_interval: int = 1
    # vLLM's engine-core host work in each role's steps, as `kvplan simulate --engine-core-cpu`
    # (kvplan.analysis.simulate.engine_core.role_host; None: charged for vLLM).
    engine_core_cpu: bool | None = None

    @property
    def context(self) -> int:
        """Every request's max_model_len on both roles: the prompt and its output."""
        return self.input_len + self.output_len


@dataclass(frozen=True, kw_only=True)
class RolePlan:
    """One role's worker: its layout, capacity, time and launch."""

    role: str
    candidate: Candidate
    launch: LaunchPlan
    layout_text: str
    prefill_ms: float | None = None  # one I-token prompt (the prefill role's unit of work)
    tpot_ms: float | None = None  # decode at the batch the target puts on a worker
    batch: int = 1  # requests per attention rank the time is taken at

    @property
    def max_concurrency(self) -> float:
        return self.candidate.max_concurrency

    def to_dict(self) -> dict[str, Any]:
        c = self.candidate
        return {"role": self.role, "layout": {**c.layout.to_dict(),
                                              "dp_attention": c.layout.dp_attention},
                "layout_text": self.layout_text, "kv_dtype": c.kv_dtype,
                "mem_fraction": c.mem_fraction, "kv_budget_bytes": c.capacity.kv_budget_bytes,
                "weights_bytes": c.capacity.weights_bytes, "block_size": c.capacity.block_size,
                "num_blocks": c.capacity.num_blocks, "max_concurrency": c.max_concurrency,
                "max_requests": c.requests, "prefill_ms": self.prefill_ms,
                "tpot_ms": self.tpot_ms, "batch_per_rank": self.batch,
                "command": command_text(self.launch),
                "commands": [cmd.argv for cmd in self.launch.commands],
                "launch": self.launch.to_dict()}


@dataclass(frozen=True, kw_only=True)
class DisaggPlan:
    model: str
    engine: str
    engine_version: str | None
    gpu: str
    input_len: int
    output_len: int
    link: KvLink
    handover: Handover
    transfer_ms: float
    prefill: RolePlan
    decode: RolePlan
    ratio: RatioPlan | None = None  # with a target
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        h = self.handover
        return {
            "model": self.model, "engine": self.engine, "engine_version": self.engine_version,
            "gpu": self.gpu, "input_len": self.input_len, "output_len": self.output_len,
            "context": self.input_len + self.output_len, "connector": h.connector,
            "kv_transfer_bytes_per_request": h.bytes_per_request,
            "kv_transfer_bytes_per_rank": list(h.bytes_per_rank),
            "transfer_ms": self.transfer_ms,
            "handover": h.to_dict(), "link": self.link.to_dict(),
            "prefill": self.prefill.to_dict(), "decode": self.decode.to_dict(),
            "ratio": self.ratio.to_dict() if self.ratio is not None else None,
            "notes": list(self.notes),
        }


def _role_request(req: DisaggRequest, concurrency: int) -> PlanRequest:
    """`req.extra`'s max_num_batched_tokens (a role's own, where given) as the request's."""
    # Both roles launch with the engine's KV connector (--kv-transfer-config on vLLM), which
    # can change the pool (vLLM's hybrid KV-cache manager: kvplan.engines.vllm.kv_transfer);
    # an engine whose options have no such field ignores it (kvplan.engines.rules.plan_inputs).
    extra = {"kv_transfer": True, **req.extra}
    tokens = extra.pop("max_num_batched_tokens", None)
    return PlanRequest(concurrency=max(1, concurrency), context=req.context, gpu=req.gpu,
                       gpus_per_node=req.prefill.gpus_per_node, engine=req.engine,
                       engine_version=req.engine_version, kv_dtypes=(req.kv_dtype,),
                       mem_fraction=req.mem_fraction, model_ref=req.model_ref,
                       max_num_batched_tokens=tokens, extra=extra, prices=dict(req.prices),
                       disaggregated=True, cost_rules=req.cost_rules)


def _candidate(spec: ModelSpec, req: DisaggRequest, role: str, layout: Layout) -> Candidate:
    cand = evaluate(spec, _role_request(req, 1), req.gpu, layout, req.kv_dtype,
                    req.mem_fraction, req.context)
    if cand is None:  # the engine refuses the layout: say why, as `kvplan estimate` would
        cap = plan_capacity(spec, plan_inputs_for(_role_request(req, 1), req.gpu, layout,
                                                  req.kv_dtype, req.mem_fraction, req.context))
        if cap.dp_attention != layout.dp_attention:  # kvplan.engines.sglang.dsa_settings
            raise InputError(f"--{role}-tp {layout.tp}: SGLang {req.engine_version} runs "
                             f"{spec.id} with DP attention at TP > 1; give "
                             f"--{role}-dp {layout.tp} --{role}-dp-attention")
    if cand is None or cand.capacity.kv_budget_bytes <= 0 or cand.requests < 1:
        raise InputError(f"--{role}-tp {layout.tp}: one {role} worker of {layout.gpus} x "
                         f"{req.gpu.name} does not hold one request of {req.context:,} tokens "
                         f"({req.input_len:,} in + {req.output_len:,} out) with "
                         f"{req.kv_dtype} KV; give more GPUs to the role")
    return cand


def _a2a_notes(spec: ModelSpec, req: DisaggRequest, prefill: Candidate, decode: Candidate
               ) -> tuple[str, ...]:
    """Each role's MoE all-to-all stand-ins (kvplan.engines.moe_comm.MoeAllToAll.notes: SGLang's
    DeepEP priced by another EP size's or GPU's measurement), as the time model met them."""
    rule = req.engine.rules.cost_traits.moe_all_to_all
    out: list[str] = []
    for role, cand in (("prefill", prefill), ("decode", decode)):
        lay = cand.layout
        options = plan_inputs_for(_role_request(req, 1), req.gpu, lay, req.kv_dtype,
                                  req.mem_fraction, req.context).options
        a2a = rule(options, spec) if rule is not None and lay.ep > 1 else None
        if a2a is not None:
            out += [f"{role}: {n}" for n in a2a.notes(req.gpu.name, lay.ep, role)]
    return tuple(out)


def _launch(spec: ModelSpec, req: DisaggRequest, role: str, cand: Candidate,
            concurrency: int) -> LaunchPlan:
    connector = req.engine.rules.kv_connector(req.connector)
    launch = launch_for(spec, req.engine, cand.layout, LaunchSettings(
        context=req.context, fraction=cand.mem_fraction, kv_dtype=cand.kv_dtype,
        declared_kv_dtype=declared_kv_dtype(spec),
        quantization_json=spec.quantization_json,
        quantization_file=spec.quantization_file,
        auto_kv_dtype=known_auto_kv_dtype(req.engine, spec, req.engine_version, req.gpu),
        concurrency=max(1, concurrency), version=req.engine_version,
        extra_groups=connector.launch_groups(role, req.engine_version,
                                             req.extra.get("block_size")) + (
            adm.launch_groups if role == "decode" and req.scheduler_recv_interval != 1
            and (adm := decode_admission_of(req, cand)) is not None else ()),
        extra_yaml=connector.launch_yaml(role, req.engine_version,
                                         req.extra.get("block_size"))), ref=req.model_ref)
    env = (long_context_env(spec, req.context, req.engine)
           + connector.launch_env(role, req.engine_version, spec))
    return replace(launch, env=launch.env + env) if env else launch


def role_host(req: DisaggRequest) -> RoleHost:
    """The engine core's host stage of both roles' steps, as `kvplan simulate` charges it for
    the engine and release (kvplan.analysis.simulate.engine_core.role_host)."""
    return engine_core_role_host(req.engine.rules.scheduler, req.engine_version,
                                 req.engine_core_cpu)


def role_times(spec: ModelSpec, req: DisaggRequest, cand: Candidate, *, batch: int
               ) -> tuple[float | None, float | None]:
    """(prefill ms of one I-token prompt, TPOT ms at `batch` requests per attention rank at the
    mean decode context I + O / 2) from the time model (kvplan.perf), or None where it does not
    model the layout (pipeline stages). Each is one engine step's (the prompt's, one request; a
    decode step's, `batch` requests a rank's engine core schedules, over its tokens per
    request): its GPU time with the engine core's host work (`role_host`)."""
    return role_prefill_ms(spec, req, cand), role_tpot_ms(spec, req, cand, batch=batch)


def role_prefill_ms(spec: ModelSpec, req: DisaggRequest, cand: Candidate) -> float | None:
    """`role_times`' first: the prefill ms of one I-token prompt (its own function so that a
    caller after the TPOT alone does not time the prompt it drops; simspeed67)."""
    host = role_host(req)
    prefill = predict(spec, _role_request(req, cand.layout.replicas),
                      replace(cand, context=req.input_len))
    return host.step_s(prefill.ttft_ms / 1e3, 1) * 1e3 if prefill is not None else None


def role_tpot_ms(spec: ModelSpec, req: DisaggRequest, cand: Candidate, *, batch: int
                 ) -> float | None:
    """`role_times`' second: the TPOT ms at `batch` requests per attention rank."""
    host = role_host(req)
    decode = predict(spec, _role_request(req, batch * cand.layout.replicas),
                     replace(cand, context=req.input_len + req.output_len // 2))
    # TPOT: the step's time over the tokens a request gains a step (speculative decoding).
    return (host.step_s(decode.decode_step_ms / 1e3, batch) * 1e3
            / decode.tokens_per_step if decode is not None else None)


def prefill_batching(spec: ModelSpec, req: DisaggRequest, prefill: Candidate,
                     decode: Candidate, *, token_budget: int | None = None,
                     max_seqs: int | None = None, decode_max_seqs: int | None = None
                     ) -> PrefillBatching | None:
    """How the engine's scheduler batches prompts on a prefill rank, for the closed-loop
    simulation (kvplan.analysis.simulate.disagg_sim), or None where kvplan neither simulates
    the engine's scheduler (`EngineRules.scheduler`) nor reads its context server's. Per
    step, as the engine answers it (EngineRules.prefill_step_defaults): vLLM
    max_num_batched_tokens and max_num_seqs (`vllm serve`'s defaults by version and device,
    EngineArgs.get_batch_defaults); SGLang its chunked prefill size per rank (divided by the
    --dp-size under DP attention), seats bounded by the KV. Both chunk the prompt crossing the
    budget (vLLM V1 and SGLang default to chunked prefill).
    SGLang's steps also stop at its input budget (--max-prefill-tokens' default, a prompt after
    the first joining only below what is left of it: kvplan.engines.sglang.options
    MAX_PREFILL_TOKENS); vLLM's scheduler has none besides its token budget.
    `token_budget`: the launch's own max_num_batched_tokens where a recipe states it. A decode
    rank runs at most max_num_seqs requests (vLLM) and at most what its KV holds; where the
    connector's decode side admits a prompt before its prefill (SGLang's preallocation,
    `KvConnector.decode_admission`), that rule and its running cap instead.
    Where the engine's scheduler is not simulated but its context server's is read
    (`KvConnector.context_scheduler`: TensorRT-LLM's max_num_tokens, max_batch_size and
    enable_chunked_prefill per rank, kvplan.engines.trtllm.disagg_flow), those limits, and
    the decode rank's seats its max_batch_size. `max_seqs` / `decode_max_seqs`: the launch's
    own prompts per prefill step / running requests per decode rank, where a deployment
    states them."""
    rules = req.engine.rules
    conn = rules.kv_connector(req.connector)
    # The context server's own limits where the connector reads them (TensorRT-LLM's), else
    # the engine's scheduler's.
    context = conn.context_scheduler(req.engine_version)
    if rules.scheduler is None and context is None:
        return None
    p_lay = prefill.layout
    if context is not None:
        tokens, seqs, chunked = context.max_num_tokens, context.max_batch_size, context.chunked
    else:
        tokens, seqs = rules.prefill_step_defaults(
            req.gpu, req.engine_version, dp_attention=p_lay.dp if p_lay.dp_attention else 1)
        chunked = True
    d_lay = decode.layout
    p_req = _role_request(req, prefill.layout.replicas)
    p_cand = replace(prefill, context=req.input_len)

    host = role_host(req)
    gpu_ms = prefill_stepper(spec, p_req, p_cand)

    @cache
    def step_ms(tokens_: int, prompts: int) -> float | None:
        # The step's GPU time with the engine core's host work over its `prompts` (the
        # simulation's prompts finishing in the step, at least 1: a prompt chunk that goes on
        # beside finishing ones is not counted, one request's 12 us).
        ms = gpu_ms(tokens_, prompts)
        return host.step_s(ms / 1e3, prompts) * 1e3 if ms is not None else None

    admission = decode_admission_of(req, decode)
    # Where the decode rank admits by its own rule, that rule bounds its running batch (its
    # pages, not requests of I + O tokens, limit what it holds).
    running = (admission.max_running if admission is not None
               else min(decode_max_seqs or seqs, decode.requests // d_lay.replicas))
    return PrefillBatching(
        input_len=req.input_len, token_budget=token_budget or tokens, max_seqs=max_seqs or seqs,
        chunked=chunked,
        decode_max_seqs=max(1, running), step_ms=step_ms, decode_admission=admission,
        input_budget=MAX_PREFILL_TOKENS if rules.scheduler is Scheduler.prefill_first else None,
        prefill_balance=conn.prefill_balance())


def decode_admission_of(req: DisaggRequest, decode: Candidate) -> DecodeAdmission | None:
    """The decode rank's admission before the prefill, as the engine's connector reads it
    (`KvConnector.decode_admission`): from the rank's pool, the launch's running-request cap
    and --scheduler-recv-interval (the connector refuses a value its engine has no flag for, or
    a layout its engine refuses it with)."""
    cap, lay = decode.capacity, decode.layout
    return req.engine.rules.kv_connector(req.connector).decode_admission(
        pool_tokens=cap.token_capacity, max_num_reqs=cap.max_running_requests or 0,
        page_tokens=cap.block_size, dp_attention=lay.dp if lay.dp_attention else 1,
        user_max_running=req.extra.get("max_num_seqs"),
        recv_interval=req.scheduler_recv_interval)


def handover_for(spec: ModelSpec, req: DisaggRequest, decode: Candidate) -> Handover:
    """The KV one request hands over, as the engine's connector moves it: the decode rank's
    caches per pipeline stage as the engine caches the model (the same as `estimate`)."""
    inputs = plan_inputs_for(_role_request(req, 1), req.gpu, decode.layout, decode.kv_dtype,
                             decode.mem_fraction, req.context)
    stages = tuple(stage_caches(spec, inputs, rng) for rng in
                   (pp_layer_ranges(spec.num_hidden_layers, decode.layout.pp,
                                    spec.layers_per_block)
                    if decode.layout.pp > 1 else [None]))
    return req.engine.rules.kv_connector(req.connector).handover(
        spec, input_len=req.input_len, prefill=req.prefill, decode=decode.layout,
        decode_stages=stages, block_size=decode.capacity.block_size,
        version=req.engine_version, inputs=inputs)


def transfer_seconds(handover: Handover, link: KvLink) -> float:
    """One request's handover time: every rank's reads run at once, each GPU over its own rails;
    the busiest end (a decode rank receiving, or a prefill rank sending to several decode
    ranks) sets it."""
    busiest = max(max(handover.bytes_per_rank), max(handover.sender_bytes))
    return link.transfer_s(busiest)


def plan_disagg(spec: ModelSpec, req: DisaggRequest) -> DisaggPlan:
    """Both roles' plans, the handover and (with a target) the xPyD ratio."""
    check_token_sized(spec, "disagg")
    if req.input_len < 1 or req.output_len < 1:
        raise InputError("--input-len / --output-len: must be >= 1")
    req = replace(req, kv_dtype=run_kv_dtype(req.engine, spec, req.kv_dtype,
                                             req.engine_version, req.gpu)[0])
    check_kv_dtype(req.engine, req.kv_dtype, req.gpu)
    check_context(spec, req.context, engine=req.engine, allow_long=req.allow_long_context,
                  option="--input-len + --output-len")
    for role, lay in (("prefill", req.prefill), ("decode", req.decode)):
        if lay.dp_attention and lay.tp % lay.dp:
            raise InputError(f"--{role}-dp {lay.dp}: attention DP needs it to divide "
                             f"--{role}-tp {lay.tp}")
    prefill = _candidate(spec, req, "prefill", req.prefill)
    decode = _candidate(spec, req, "decode", req.decode)
    if req.scheduler_recv_interval != 1:  # refused up front where the engine refuses it
        decode_admission_of(req, decode)
    handover = handover_for(spec, req, decode)
    transfer_s = transfer_seconds(handover, req.link)
    p_ms = role_prefill_ms(spec, req, prefill)
    ratio = plan_ratio(RatioTarget(
        output_len=req.output_len, concurrency=req.concurrency, rate=req.rate,
        slo_ttft_ms=req.slo_ttft_ms, slo_tpot_ms=req.slo_tpot_ms,
        price_per_gpu_hour=req.prices.get(req.gpu.name), max_workers=req.max_workers),
        prefill, decode, transfer_s, prefill_ms=p_ms,
        decode_tpot_ms=lambda b: role_tpot_ms(spec, req, decode, batch=b),
        first_token_steps=handover.first_token_steps)
    d_batch = ratio.decode_batch if ratio is not None else 1
    tpot = role_tpot_ms(spec, req, decode, batch=d_batch)
    roles = []
    for role, cand, conc, times in (
            # The prefill role's cap: what its KV holds (prompts wait there until read).
            ("prefill", prefill, prefill.requests, {"prefill_ms": p_ms}),
            # The decode role's cap: the target's batch, else what its KV holds.
            ("decode", decode, d_batch * decode.layout.replicas if ratio is not None
             else decode.requests,
             {"tpot_ms": tpot, "batch": d_batch})):
        roles.append(RolePlan(role=role, candidate=cand,
                              launch=_launch(spec, req, role, cand, conc),
                              layout_text=req.engine.rules.layout_text(cand.layout), **times))
    notes = handover.notes + _a2a_notes(spec, req, prefill, decode) + (
        f"transfer: the busiest rank's bytes over one GPU's {req.link.name} rails "
        f"({req.link.bytes_per_s / 1e9:,.1f} GB/s) plus {req.link.latency_s * 1e6:g} us; NIXL's "
        "post time and the handshake of a new pair are not counted.",) + ((
            f"--scheduler-recv-interval {req.scheduler_recv_interval}: on the decode launch; "
            "the ratio's formulas do not model its wait (a prompt held until the decode "
            "worker's N-th decode step before its prefill: the closed-loop simulation does, "
            "kvplan.analysis.simulate.disagg_sim).",) if req.scheduler_recv_interval != 1 else ())
    return DisaggPlan(model=spec.id, engine=req.engine.value,
                      engine_version=decode.capacity.engine_version, gpu=req.gpu.name,
                      input_len=req.input_len, output_len=req.output_len, link=req.link,
                      handover=handover, transfer_ms=transfer_s * 1e3, prefill=roles[0],
                      decode=roles[1], ratio=ratio, notes=notes)
