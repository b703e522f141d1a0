"""`kvplan plan`: can this model serve N concurrent requests of L tokens on this hardware, and how.

Searches the layouts the engine can run -- tensor parallel inside a node, pipeline parallel across
nodes, data-parallel replicas, expert parallel for MoE, data-parallel attention for MLA -- times
the KV dtypes the engine supports on the GPU, times the memory fraction within the engine's limits,
and keeps the plan that serves the target on the fewest GPUs. Every candidate is evaluated with
`plan_capacity`, the function `kvplan estimate` uses, so a plan's numbers are estimate's numbers for
that layout. Pure: no I/O; the launch command is built as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kvplan._util.errors import InputError, KvplanError
from kvplan.analysis.inputs import build_inputs
from kvplan.analysis.launch import command_text, launch_for
from kvplan.capacity.plan import CapacityPlan, plan_capacity
from kvplan.engines.base import (
    DEFAULT_ENGINE,
    Engine,
    PlanInputs,
    check_kv_dtype,
    default_max_num_batched_tokens,
    supported_kv_dtypes,
)
from kvplan.engines.launch import LaunchLayout, LaunchPlan, LaunchSettings
from kvplan.hardware.gpus import GPU
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class Layout:
    tp: int
    pp: int = 1
    dp: int = 1  # replicas (or, with dp_attention, the attention-DP ranks of one replica)
    ep: int = 1  # expert-parallel ranks (MoE with --enable-expert-parallel: tp x dp)
    dp_attention: bool = False
    gpus_per_node: int = 8

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * (1 if self.dp_attention else self.dp)

    @property
    def nodes(self) -> int:
        return -(-self.gpus // self.gpus_per_node)

    def to_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "ep": self.ep, "gpus": self.gpus,
                "nodes": self.nodes}


@dataclass(frozen=True, kw_only=True)
class Candidate:
    layout: Layout
    kv_dtype: str
    mem_fraction: float
    context: int
    capacity: CapacityPlan  # one replica (per attention-DP rank with dp_attention)
    max_concurrency: float  # requests of `context` tokens, all replicas together

    @property
    def requests(self) -> int:
        per = self.capacity.max_requests
        return per * (self.layout.tp if self.layout.dp_attention else self.layout.dp)


@dataclass(frozen=True, kw_only=True)
class Alternative:
    label: str
    fits: bool
    gpus: int | None
    requests: int | None
    command: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "fits": self.fits, "gpus": self.gpus,
                "requests": self.requests, "command": self.command}


@dataclass(frozen=True, kw_only=True)
class ServingPlan:
    model: str
    engine: str
    engine_version: str | None
    gpu: str
    concurrency: int
    context: int
    fits: bool
    chosen: Candidate | None  # the plan (or, when nothing fits, the closest candidate)
    command: str | None
    alternatives: tuple[Alternative, ...] = field(default_factory=tuple)
    searched: int = 0
    prediction: Any = None  # kvplan.perf.costmodel.Prediction at the target load, when modelled
    launch: LaunchPlan | None = None  # every command (head node first); `command` is the head's

    def to_dict(self) -> dict[str, Any]:
        c = self.chosen
        return {
            "model": self.model, "engine": self.engine, "engine_version": self.engine_version,
            "gpu": self.gpu, "concurrency": self.concurrency, "context": self.context,
            "fits": self.fits,
            "layout": c.layout.to_dict() if c else None,
            "max_concurrency": c.max_concurrency if c else 0.0,
            "max_requests": c.requests if c else 0,
            "kv_dtype": c.kv_dtype if c else None,
            "mem_fraction": c.mem_fraction if c else None,
            "dp_attention": c.layout.dp_attention if c else False,
            "kv_budget_bytes": c.capacity.kv_budget_bytes if c else None,
            "weights_bytes": c.capacity.weights_bytes if c else None,
            "num_blocks": c.capacity.num_blocks if c else None,
            "block_size": c.capacity.block_size if c else None,
            "command": self.command,
            # One argv list per command to run, head node first (`command` is the first).
            "commands": [cmd.argv for cmd in self.launch.commands] if self.launch else None,
            "launch": self.launch.to_dict() if self.launch else None,
            "alternatives": [a.to_dict() for a in self.alternatives],
            "candidates_searched": self.searched,
            "tpot_ms": self.prediction.tpot_ms if self.prediction else None,
            "ttft_ms": self.prediction.ttft_ms if self.prediction else None,
            "output_tokens_per_s_per_gpu": (self.prediction.output_tokens_per_s_per_gpu
                                            if self.prediction else None),
        }


@dataclass(frozen=True, kw_only=True)
class PlanRequest:
    concurrency: int
    context: int
    gpu: GPU
    gpus_per_node: int = 8
    nodes: int = 1
    engine: Engine = DEFAULT_ENGINE
    engine_version: str | None = None
    kv_dtypes: tuple[str, ...] | None = None  # None: every dtype the engine supports here
    mem_fraction: float | None = None  # None: search the engine's fractions
    max_num_batched_tokens: int | None = None
    model_ref: str | None = None  # what to put in the launch command (HF id or path)
    extra: dict[str, Any] = field(default_factory=dict)  # further PlanInputs fields


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _tp_ok(spec: ModelSpec, tp: int) -> bool:
    heads = spec.attention.num_attention_heads
    if heads % tp:
        return False
    kv = getattr(spec.attention, "num_key_value_heads", None)
    # vLLM: KV heads must split evenly over TP or be replicated evenly (tp % kv == 0).
    return kv is None or kv % tp == 0 or tp % kv == 0


def _inputs(spec: ModelSpec, req: PlanRequest, layout: Layout, kv_dtype: str,
            fraction: float | None, context: int) -> PlanInputs:
    mnbt = req.max_num_batched_tokens or default_max_num_batched_tokens(
        req.gpu.total_bytes, is_a100=req.gpu.is_a100, engine=req.engine)
    extra = dict(req.extra)
    if req.engine.rules.launch.plans_with_max_num_seqs:
        # The launch line sets --max-num-seqs to the target concurrency (launch_command), and
        # vLLM's profile run warms the sampler up over max_num_seqs rows of logits: evaluate the
        # candidate with the flag it will be launched with, not the 1,024 default.
        extra.setdefault("max_num_seqs", req.concurrency)
    return build_inputs(context=context, gpu=req.gpu, engine=req.engine,
                        engine_version=req.engine_version, max_num_batched_tokens=mnbt,
                        kv_dtype=kv_dtype, tp=layout.tp, pp=layout.pp, mem_fraction=fraction,
                        dp_attention=layout.dp_attention, **extra)


def _evaluate(spec: ModelSpec, req: PlanRequest, layout: Layout, kv_dtype: str,
              fraction: float | None, context: int) -> Candidate | None:
    try:
        cap = plan_capacity(spec, _inputs(spec, req, layout, kv_dtype, fraction, context))
    except KvplanError:
        return None  # a layout the engine refuses (e.g. a PP stage with no cache)
    per = cap.max_concurrency
    scale = layout.tp if layout.dp_attention else layout.dp
    return Candidate(layout=layout, kv_dtype=kv_dtype, mem_fraction=cap.mem_fraction,
                     context=context, capacity=cap, max_concurrency=per * scale)


def _layouts(spec: ModelSpec, req: PlanRequest, max_gpus: int) -> list[Layout]:
    """Every (tp, pp) the engine runs: TP inside a node (a divisor of the GPUs per node that the
    heads allow), PP across nodes (one stage per node); DP attention for MLA on SGLang and vLLM."""
    out = []
    is_mla = spec.kind.value == "mla"
    max_nodes = max(1, max_gpus // req.gpus_per_node)
    for tp in _divisors(req.gpus_per_node):
        if not _tp_ok(spec, tp):
            continue
        for pp in range(1, max_nodes + 1):
            if pp > spec.num_hidden_layers or tp * pp > max_gpus:
                break
            if pp > 1 and tp != req.gpus_per_node:
                continue  # a stage per node uses the whole node
            out.append(Layout(tp=tp, pp=pp, gpus_per_node=req.gpus_per_node))
            if is_mla and tp > 1 and pp == 1 and req.engine.rules.launch.dp_attention:
                out.append(Layout(tp=tp, pp=1, dp=tp, dp_attention=True,
                                  gpus_per_node=req.gpus_per_node))
    return out


def _with_ep(spec: ModelSpec, layout: Layout) -> Layout:
    if spec.moe is None:
        return layout
    ranks = layout.tp * (layout.dp if not layout.dp_attention else 1)
    ep = ranks if spec.moe.n_routed_experts % ranks == 0 else 1
    return replace(layout, ep=ep)


def search(spec: ModelSpec, req: PlanRequest, *, max_gpus: int | None = None,
           context: int | None = None) -> tuple[Candidate | None, Candidate | None, int]:
    """(the plan on the fewest GPUs that serves the target, the candidate closest to it when none
    does, candidates evaluated). Ties: fewer GPUs, then the higher-precision KV dtype, then the
    default memory fraction, then fewer pipeline stages, then more headroom."""
    context = req.context if context is None else context
    max_gpus = max_gpus or req.gpus_per_node * req.nodes
    dtypes = req.kv_dtypes or supported_kv_dtypes(req.engine, req.gpu)
    # The memory fractions a plan may use: the engine's default first, then the most its own
    # guidance allows (kvplan.engines.base.Launch).
    fractions = ((req.mem_fraction,) if req.mem_fraction is not None
                 else req.engine.rules.launch.fractions)
    best = closest = None
    searched = 0

    def rank(c: Candidate) -> tuple[Any, ...]:
        default_fraction = fractions[0]
        return (c.layout.gpus, dtypes.index(c.kv_dtype),
                0 if c.mem_fraction == default_fraction or default_fraction is None else 1,
                c.layout.pp, -c.max_concurrency)

    for layout in _layouts(spec, req, max_gpus):
        for dtype in dtypes:
            for fraction in fractions:
                cand = _evaluate(spec, req, layout, dtype, fraction, context)
                searched += 1
                if cand is None:
                    continue
                per = cand.capacity.max_requests
                if not layout.dp_attention and per > 0:
                    # Replicas of this layout: as many as the target needs, within the GPUs.
                    dp = -(-req.concurrency // per)
                    if dp * layout.gpus <= max_gpus:
                        cand = replace(cand, layout=replace(layout, dp=dp),
                                       max_concurrency=cand.capacity.max_concurrency * dp)
                cand = replace(cand, layout=_with_ep(spec, cand.layout))
                if cand.requests >= req.concurrency and cand.layout.gpus <= max_gpus:
                    if best is None or rank(cand) < rank(best):
                        best = cand
                elif closest is None or (cand.requests, -cand.layout.gpus) > (
                        closest.requests, -closest.layout.gpus):
                    closest = cand
    return best, closest, searched


def launch_plan(spec: ModelSpec, req: PlanRequest, cand: Candidate) -> LaunchPlan:
    """The engine's own commands for the plan, head node first (kvplan.analysis.launch)."""
    lay = cand.layout
    return launch_for(spec, req.engine, LaunchLayout(
        tp=lay.tp, pp=lay.pp, dp=lay.dp, ep=lay.ep, dp_attention=lay.dp_attention,
        gpus_per_node=lay.gpus_per_node), LaunchSettings(
        context=cand.context, fraction=cand.mem_fraction, kv_dtype=cand.kv_dtype,
        concurrency=req.concurrency, version=req.engine_version), ref=req.model_ref)


def launch_command(spec: ModelSpec, req: PlanRequest, cand: Candidate) -> str:
    """The head node's command line for the plan (flags as each engine's CLI spells them)."""
    return command_text(launch_plan(spec, req, cand))


def plan_serving(spec: ModelSpec, req: PlanRequest) -> ServingPlan:
    """The answer to "can I serve this?": the plan, its command, and ranked alternatives."""
    if req.concurrency < 1:
        raise InputError(f"--concurrency: must be >= 1, got {req.concurrency}")
    if req.context < 1:
        raise InputError(f"--context: must be >= 1, got {req.context}")
    if req.gpus_per_node < 1 or req.nodes < 1:
        raise InputError("--gpus-per-node and --nodes: must be >= 1")
    for dtype in req.kv_dtypes or ():
        check_kv_dtype(req.engine, dtype, req.gpu)
    best, closest, searched = search(spec, req)
    alternatives: list[Alternative] = []
    total = req.gpus_per_node * req.nodes
    launch = None
    if best is not None:
        launch = launch_plan(spec, req, best)
        command = command_text(launch)
        alternatives += _alternatives_when_fits(spec, req, best)
    else:
        command = None
        alternatives += _alternatives_when_not(spec, req, closest, total)
    return ServingPlan(
        prediction=_predict(spec, req, best) if best is not None else None,
        model=spec.id, engine=req.engine.value,
        engine_version=(best or closest).capacity.engine_version if (best or closest) else None,
        gpu=req.gpu.name, concurrency=req.concurrency, context=req.context,
        fits=best is not None, chosen=best or closest, command=command, launch=launch,
        alternatives=tuple(alternatives), searched=searched)


def _short(n: int) -> str:
    if n % 1024 == 0 and n >= 1024:
        return f"{n // 1024}k"
    return f"{n:,}"


def _alternatives_when_fits(spec: ModelSpec, req: PlanRequest, best: Candidate
                            ) -> list[Alternative]:
    out = []
    # A cheaper KV dtype on the same hardware budget: fewer GPUs, or more requests.
    if best.kv_dtype != "fp8" and "fp8" in supported_kv_dtypes(req.engine, req.gpu):
        fp8, _, _ = search(spec, replace(req, kv_dtypes=("fp8",)))
        if fp8 is not None and fp8.layout.gpus < best.layout.gpus:
            out.append(Alternative(label=f"fp8 KV: fits on {fp8.layout.gpus} GPUs "
                                         f"(tp {fp8.layout.tp}, pp {fp8.layout.pp}, dp "
                                         f"{fp8.layout.dp})", fits=True, gpus=fp8.layout.gpus,
                                   requests=fp8.requests,
                                   command=launch_command(spec, req, fp8)))
        else:
            same = _evaluate(spec, req, best.layout, "fp8", best.mem_fraction, best.context)
            if same is not None and best.requests:
                ratio = same.requests / best.requests
                out.append(Alternative(label=f"fp8 KV on the same GPUs: {same.requests:,} "
                                             f"requests ({ratio:.1f}x)", fits=True,
                                       gpus=best.layout.gpus, requests=same.requests))
    # A shorter context on the same layout.
    if req.context >= 2048:
        half = req.context // 2
        shorter = _evaluate(spec, req, best.layout, best.kv_dtype, best.mem_fraction, half)
        if shorter is not None and best.requests:
            ratio = shorter.requests / best.requests
            out.append(Alternative(label=f"{req.engine.rules.launch.context_flag} {_short(half)}: "
                                         f"{shorter.requests:,} "
                                         f"requests ({ratio:.1f}x)", fits=True,
                                   gpus=best.layout.gpus, requests=shorter.requests))
    # Headroom of the plan itself.
    out.append(Alternative(label=f"the plan holds {best.requests:,} requests of "
                                 f"{_short(best.context)} ({best.requests / req.concurrency:.1f}x "
                                 "the target)", fits=True, gpus=best.layout.gpus,
                           requests=best.requests))
    return out


def _alternatives_when_not(spec: ModelSpec, req: PlanRequest, closest: Candidate | None,
                           total: int) -> list[Alternative]:
    out = []
    # More GPUs: the smallest layout that serves the target, up to 8 nodes.
    more, _, _ = search(spec, req, max_gpus=max(total, 8 * req.gpus_per_node))
    if more is not None:
        out.append(Alternative(label=f"{more.layout.gpus} GPUs ({more.layout.nodes} node(s), tp "
                                     f"{more.layout.tp}, pp {more.layout.pp}, dp "
                                     f"{more.layout.dp}, {more.kv_dtype} KV)", fits=True,
                               gpus=more.layout.gpus, requests=more.requests,
                               command=launch_command(spec, req, more)))
    if closest is not None and closest.requests > 0:
        out.append(Alternative(label=f"{closest.requests:,} concurrent requests of "
                                     f"{_short(req.context)} fit on {closest.layout.gpus} GPUs",
                               fits=False, gpus=closest.layout.gpus,
                               requests=closest.requests))
    # The longest context that serves the target on all the GPUs given.
    lo, hi = 1, req.context - 1
    found = None
    while lo <= hi:
        mid = (lo + hi) // 2
        best, _, _ = search(spec, req, context=mid)
        if best is not None:
            found, lo = best, mid + 1
        else:
            hi = mid - 1
    if found is not None:
        flag = req.engine.rules.launch.context_flag
        out.append(Alternative(label=f"{flag} {found.context:,}: serves "
                                     f"{req.concurrency:,} requests on {found.layout.gpus} GPUs",
                               fits=True, gpus=found.layout.gpus, requests=found.requests,
                               command=launch_command(spec, req, found)))
    return out


def _predict(spec: ModelSpec, req: PlanRequest, cand: Candidate) -> Any:
    """Decode and prefill time at the target load (kvplan.perf.costmodel), for layouts it models
    (no pipeline stages); None otherwise."""
    from kvplan.perf.costmodel import CostInputs, predict
    from kvplan.perf.efficiency import device_efficiency
    from kvplan.perf.engine_traits import engine_efficiency
    from kvplan.perf.flops import MLAForm
    from kvplan.perf.layout import Layout as CostLayout

    # Timed as the engine runs it: vLLM attends over MiniCPM3's decompressed cache.
    spec = req.engine.rules.served_spec(spec)
    att = spec.attention
    form = (MLAForm.decompressed if isinstance(att, LatentAttention) and att.decompressed_cache
            else MLAForm.absorbed)
    lay = cand.layout
    if lay.pp > 1:
        return None
    ranks = lay.tp if lay.dp_attention else lay.dp
    batch = max(1, -(-req.concurrency // ranks))
    try:
        # The recurrent state in the dtypes the engine keeps it (decode reads and writes it).
        conv, ssm = req.engine.rules.state_dtypes(spec, _inputs(spec, req, lay, cand.kv_dtype,
                                               cand.mem_fraction, cand.context))
        return predict(spec, req.gpu, CostInputs(
            context=cand.context, batch=batch, kv_dtype=cand.kv_dtype, mla_form=form,
            layout=CostLayout(tp=lay.tp, dp_attention=lay.dp_attention,
                              ep=lay.ep if lay.ep > 1 else 1),
            efficiency=engine_efficiency(req.engine.value, device_efficiency(req.gpu)),
            conv_dtype=conv, ssm_dtype=ssm))
    except KvplanError:
        return None
