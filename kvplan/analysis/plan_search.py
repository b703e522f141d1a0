"""The search behind `kvplan plan` on one GPU type: the layouts the engine runs, each candidate
evaluated with `plan_capacity` (the code `kvplan estimate` runs, with the same defaults: the
engine's fraction for its version, its --max-num-seqs unless one is given), the margin against
the target, and the alternatives with their numbers. Pure; launch commands are written by
kvplan.analysis.planner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kvplan._util.errors import KvplanError, UnmodelledError
from kvplan.analysis.inputs import build_inputs
from kvplan.analysis.plan_types import Alternative, Candidate, Layout, Margin, PlanRequest
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.accuracy import measured_error
from kvplan.engines.base import PlanInputs
from kvplan.engines.kv_dtype import planned_kv_dtypes, supported_kv_dtypes
from kvplan.engines.moe_layout import check_moe_tp_x_ep, even_ep
from kvplan.hardware.gpus import GPU
from kvplan.hardware.interconnect import scale_up_gpus
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec

# The no-fit search goes up to this many nodes of the largest node the GPU ships in (eight per
# HGX/DGX or MI300X platform node, 72 per GB200/GB300 NVL72 rack: scale_up_gpus).
MAX_NODES = 16
# TP degrees tried: at most this many GPUs per TP group (the largest NVLink domain, NVL72's 72,
# rounded up to a power of two); bounds the loop whatever --gpus-per-node says.
MAX_TP = 128


def _tp_degrees(spec: ModelSpec, gpus_per_node: int) -> list[int]:
    """TP degrees inside a node: divisors of the GPUs per node (at most MAX_TP) that the heads
    allow. vLLM: KV heads split evenly over TP or are replicated evenly (tp % kv == 0)."""
    heads = spec.attention.num_attention_heads
    kv = getattr(spec.attention, "num_key_value_heads", None)
    out = []
    for tp in range(1, min(gpus_per_node, MAX_TP) + 1):
        if gpus_per_node % tp or heads % tp:
            continue
        if kv is None or kv % tp == 0 or tp % kv == 0:
            out.append(tp)
    return out


def plan_inputs_for(req: PlanRequest, gpu: GPU, layout: Layout, kv_dtype: str,
                    fraction: float | None, context: int) -> PlanInputs:
    """The PlanInputs `kvplan estimate` builds for this layout: same defaults (the engine's
    max_num_batched_tokens for the device and version, its fraction, its --max-num-seqs unless
    one was given)."""
    extra = dict(req.extra)
    if req.max_num_seqs is not None:
        extra["max_num_seqs"] = req.max_num_seqs
    return build_inputs(context=context, gpu=gpu, engine=req.engine,
                        engine_version=req.engine_version,
                        max_num_batched_tokens=req.max_num_batched_tokens, kv_dtype=kv_dtype,
                        tp=layout.tp, pp=layout.pp, mem_fraction=fraction,
                        dp_attention=layout.dp_attention, ep=layout.ep,
                        # The layout's attention-DP ranks of tp / dp GPUs (SGLang --dp-size);
                        # None: --tp ranks of one GPU.
                        attention_dp_size=(layout.dp if layout.dp_attention
                                           and layout.dp != layout.tp else None), **extra)


def evaluate(spec: ModelSpec, req: PlanRequest, gpu: GPU, layout: Layout, kv_dtype: str,
             fraction: float | None, context: int) -> Candidate | None:
    try:
        # EP below the TP group: only where the engine launches it (kvplan.engines.moe_layout).
        check_moe_tp_x_ep(req.engine.rules, spec, tp=layout.tp, ep=layout.ep,
                          version=req.engine_version)
        cap = plan_capacity(spec, plan_inputs_for(req, gpu, layout, kv_dtype, fraction,
                                                  context))
    except UnmodelledError:
        raise  # no layout would do: refused as `estimate` refuses it (exit 2), not DOES NOT FIT
    except KvplanError:
        return None  # a layout the engine refuses (e.g. a PP stage with no cache)
    if cap.dp_attention != layout.dp_attention:
        # The engine runs it as the other layout (SGLang 0.5.3-0.5.5 turn DP attention on for
        # DeepSeek's sparse attention, kvplan.engines.sglang.dsa_settings): that one is planned.
        return None
    return Candidate(layout=layout, kv_dtype=kv_dtype, mem_fraction=cap.mem_fraction,
                     context=context, capacity=cap, gpu=gpu,
                     max_concurrency=cap.max_concurrency * layout.replicas,
                     default_fraction=fraction is None or fraction == req.mem_fraction)


def _layouts(spec: ModelSpec, req: PlanRequest, gpus_per_node: int, max_gpus: int
             ) -> list[Layout]:
    """Every (tp, pp) the engine runs: TP inside a node, PP across nodes (one stage per node);
    DP attention for MLA where the engine runs it."""
    out = []
    is_mla = spec.kind.value == "mla"
    max_nodes = max(1, max_gpus // gpus_per_node)
    for tp in _tp_degrees(spec, gpus_per_node):
        for pp in range(1, max_nodes + 1):
            if pp > spec.num_hidden_layers or tp * pp > max_gpus:
                break
            if pp > 1 and tp != gpus_per_node:
                continue  # a stage per node uses the whole node
            out.append(with_ep(spec, req, Layout(tp=tp, pp=pp, gpus_per_node=gpus_per_node)))
            if is_mla and tp > 1 and pp == 1 and req.engine.rules.launch.dp_attention:
                out.append(with_ep(spec, req, Layout(tp=tp, pp=1, dp=tp, dp_attention=True,
                                                     gpus_per_node=gpus_per_node)))
    return out


def with_ep(spec: ModelSpec, req: PlanRequest, layout: Layout) -> Layout:
    """`layout` with the expert-parallel ranks its launch command runs a MoE model with: every
    rank of the TP group (SGLang --ep-size, TensorRT-LLM --ep_size: EP within TP), or where the
    engine's EP spans the data-parallel replicas too (vLLM: EP = TP x DP), all of them; EP only
    where the routed experts split evenly over those ranks (else 1: experts split by TP)."""
    if spec.moe is None:
        return layout
    spans = req.engine.rules.launch.ep_over_dp and not layout.dp_attention
    ranks = layout.tp * (layout.dp if spans else 1)
    return replace(layout, ep=even_ep(spec, ranks))


def _replicated(spec: ModelSpec, req: PlanRequest, cand: Candidate, fraction: float | None,
                max_gpus: int) -> Candidate:
    """`cand` (one replica of its layout) with as many data-parallel replicas as the target
    needs, within the GPUs (else `cand` as it is). Where the engine's EP spans the replicas
    (vLLM), each replica count is a layout of its own: its ranks hold ceil(E / (TP x DP))
    experts, so it is evaluated again with that EP (the weights, budget and blocks `estimate`
    gives for it); the fewest replicas that serve the target are kept."""
    lay, per = cand.layout, cand.capacity.max_requests
    if lay.dp_attention or per <= 0:
        return cand
    if spec.moe is not None and req.engine.rules.launch.ep_over_dp:
        return _ep_replicated(spec, req, cand, fraction, max_gpus)
    dp = -(-req.concurrency // per)
    if dp * lay.gpus > max_gpus:
        return cand
    return replace(cand, layout=replace(lay, dp=dp),
                   max_concurrency=cand.capacity.max_concurrency * dp)


def _ep_replicated(spec: ModelSpec, req: PlanRequest, cand: Candidate,
                   fraction: float | None, max_gpus: int) -> Candidate:
    """`_replicated` where EP spans the replicas. Replica counts whose experts do not split
    evenly are not offered (vLLM would split them by TP over the TP x DP ranks: not modelled),
    nor those kvplan does not size (DeepSeek-V4 with more EP ranks than heads: an
    UnmodelledError). More replicas leave each rank fewer experts, so a replica holds no fewer
    requests: the most replicas kvplan sizes, then the fewest that serve, by bisection."""
    layouts = [with_ep(spec, req, replace(cand.layout, dp=dp))
               for dp in range(2, max_gpus // cand.layout.gpus + 1)]
    layouts = [x for x in layouts if x.ep > 1]
    seen: dict[int, Candidate | None] = {}

    def at(i: int) -> Candidate | None:
        if i not in seen:
            try:
                seen[i] = evaluate(spec, req, cand.gpu, layouts[i], cand.kv_dtype, fraction,
                                   cand.context)
            except UnmodelledError:
                seen[i] = None
        return seen[i]

    lo, hi = 0, len(layouts) - 1
    while lo < hi:  # the last layout kvplan sizes
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if at(mid) is not None else (lo, mid - 1)
    top = hi
    if top < 0 or not _serves(req, at(top)):
        return cand
    lo, hi = 0, top
    while lo < hi:  # the fewest replicas that serve
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _serves(req, at(mid)) else (mid + 1, hi)
    found = at(lo)
    assert found is not None
    return found


def _serves(req: PlanRequest, cand: Candidate | None) -> bool:
    return cand is not None and cand.requests >= req.concurrency


def fractions(req: PlanRequest) -> tuple[float | None, ...]:
    """The memory fractions a plan may use: the one given, else the engine's default for its
    version (None: the engine's budget decides, as in `kvplan estimate`), then the most its own
    guidance allows (kvplan.engines.base.Launch)."""
    if req.mem_fraction is not None:
        return (req.mem_fraction,)
    return req.engine.rules.launch.fractions


def search(spec: ModelSpec, req: PlanRequest, gpu: GPU, *, gpus_per_node: int | None = None,
           max_gpus: int | None = None, context: int | None = None,
           kv_dtypes: tuple[str, ...] | None = None,
           ) -> tuple[Candidate | None, Candidate | None, int]:
    """(the plan on the fewest GPUs that serves the target, the candidate closest to it when
    none does (`near`), candidates evaluated). Ties: fewer GPUs, then a margin outside kvplan's
    measured error (a sure plan before a borderline one), then the higher-precision KV dtype,
    then the default memory fraction, then fewer pipeline stages, then more headroom."""
    context = req.context if context is None else context
    per_node = gpus_per_node or req.gpus_per_node
    max_gpus = max_gpus or req.gpus_per_node * req.nodes
    dtypes = kv_dtypes or req.kv_dtypes or planned_kv_dtypes(req.engine, spec, gpu)
    best = closest = None
    searched = 0

    def near(c: Candidate) -> tuple[Any, ...]:
        # The closest miss: the most whole requests, then the least KV short, then fewer GPUs.
        return (c.requests, margin(req, c).margin_bytes, -c.layout.gpus)

    def rank(c: Candidate) -> tuple[Any, ...]:
        return (c.layout.gpus, margin(req, c).inside_error, dtypes.index(c.kv_dtype),
                0 if c.default_fraction else 1, c.layout.pp, -c.max_concurrency)

    for layout in _layouts(spec, req, per_node, max_gpus):
        for dtype in dtypes:
            for fraction in fractions(req):
                cand = evaluate(spec, req, gpu, layout, dtype, fraction, context)
                searched += 1
                if cand is None:
                    continue
                if cand.requests < req.concurrency:
                    cand = _replicated(spec, req, cand, fraction, max_gpus)
                if cand.requests >= req.concurrency and cand.layout.gpus <= max_gpus:
                    if best is None or rank(cand) < rank(best):
                        best = cand
                elif closest is None or near(cand) > near(closest):
                    closest = cand
    return best, closest, searched


def margin(req: PlanRequest, cand: Candidate) -> Margin:
    """The KV headroom of `cand` against the target: per GPU, the KV budget less what the
    target's requests (split over the replicas) need on the tightest stage; and kvplan's measured
    error for the engine around that budget (kvplan.engines.accuracy)."""
    rules = req.engine.rules
    per = -(-req.concurrency // cand.layout.replicas)
    shared = min(cand.capacity.shared_prefix, cand.context)
    tight = None
    for st in cand.capacity.stages:
        spare = st.kv_budget_bytes - rules.kv_bytes_needed(st, per, cand.context, shared)
        tight = spare if tight is None else min(tight, spare)
    error = measured_error(req.engine)
    return Margin(margin_bytes=int(tight or 0), margin_requests=cand.requests - req.concurrency,
                  band_bytes=error.band_bytes(cand.capacity.kv_budget_bytes),
                  expected_error=error.to_dict())


def short(n: int) -> str:
    if n % 1024 == 0 and n >= 1024:
        return f"{n // 1024}k"
    return f"{n:,}"


def layout_text(c: Candidate, req: PlanRequest) -> str:
    """A candidate's label: its GPUs and nodes, the layout in the engine's own words (as its
    launch command runs it, `EngineRules.layout_text`) and its KV dtype."""
    lay = c.layout
    nodes = f"{lay.nodes} node{'s' if lay.nodes > 1 else ''} of {lay.gpus_per_node}"
    words = req.engine.rules.layout_text(lay)
    return f"{lay.gpus} x {c.gpu.name} ({nodes}; {words}; {c.kv_dtype} KV)"


def predict(spec: ModelSpec, req: PlanRequest, cand: Candidate) -> Any:
    """Decode and prefill time at the target load (kvplan.perf.costmodel), with the cost per
    million output tokens where the GPU has a price, for layouts it models (no pipeline
    stages); None otherwise."""
    from kvplan.perf.costmodel import predict as cost_predict

    setup = _cost_setup(spec, req, cand)
    if setup is None:
        return None
    try:
        return cost_predict(*setup)
    except KvplanError:
        return None


def prefill_step_ms(spec: ModelSpec, req: PlanRequest, cand: Candidate, *, prompts: int,
                    tokens: int) -> float | None:
    """One prefill step on a rank of `cand` (the busiest, in lockstep) running `tokens` prompt
    tokens of `prompts` prompts of `cand.context` tokens (kvplan.perf.costmodel.prefill_seconds;
    prompts=1, tokens=context: `predict`'s ttft_ms), or None where `predict` is."""
    return prefill_stepper(spec, req, cand)(tokens, prompts)


def prefill_stepper(spec: ModelSpec, req: PlanRequest, cand: Candidate
                    ) -> Callable[[int, int], float | None]:
    """`prefill_step_ms` of (tokens, prompts) for one (spec, req, cand), the cost model's setup
    found once, at the first step (simspeed67: a simulation times thousands of step shapes of
    one setup; the same floats)."""
    from kvplan.perf.costmodel import prefill_seconds

    found: list[Any] = []

    def step_ms(tokens: int, prompts: int) -> float | None:
        if not found:
            found.append(_cost_setup(spec, req, cand))
        setup = found[0]
        if setup is None:
            return None
        try:
            return prefill_seconds(*setup, tokens=tokens, prompts=prompts) * 1e3
        except KvplanError:
            return None

    return step_ms


def _cost_setup(spec: ModelSpec, req: PlanRequest, cand: Candidate) -> Any:
    """(served spec, GPU, CostInputs) the cost model times `cand` with, or None where it does not
    model the layout (pipeline stages, a device known only by its size)."""
    from kvplan.perf.cost_rules import opt_in
    from kvplan.perf.costmodel import CostInputs
    from kvplan.perf.engine_traits import engine_efficiency
    from kvplan.perf.flops import MLAForm
    from kvplan.perf.layout import Layout as CostLayout

    lay = cand.layout
    if lay.pp > 1 or cand.gpu.hbm_bytes_per_s <= 0:
        return None  # pipeline stages, or a device known only by its size (--gpu-mem-gib)
    batch = max(1, -(-req.concurrency // lay.replicas))
    try:
        inputs = plan_inputs_for(req, cand.gpu, lay, cand.kv_dtype, cand.mem_fraction,
                                 cand.context)
        # Timed as the engine runs it on this device: vLLM attends over MiniCPM3's
        # decompressed cache, and DeepSeek's sparse attention's fp8 row on SM 10.x.
        spec = req.engine.rules.served_spec(spec, inputs)
        # The recurrent state in the dtypes the engine keeps it (decode reads and writes it).
        conv, ssm = req.engine.rules.state_dtypes(spec, inputs)
    except KvplanError:
        return None
    att = spec.attention
    form = (MLAForm.decompressed if isinstance(att, LatentAttention) and att.decompressed_cache
            else MLAForm.absorbed)
    # The drafter's k tokens a step, priced where the drafts' acceptance is given (plan
    # --spec-mean-accept-len / --spec-acceptance-rate, read as simulate reads them: one rate
    # for every position solving the mean acceptance length, spec_acceptance.chain_rate);
    # without it no draft is priced, as before (an acceptance is never defaulted).
    accept_len = req.spec_mean_accept_len
    drafts = inputs.num_speculative_tokens if accept_len is not None else 0
    draft_kw: dict[str, Any] = {}
    if drafts:
        from kvplan.analysis.simulate.spec_acceptance import chain_rate

        draft_kw = {"draft_tokens": drafts, "acceptance": chain_rate(accept_len, drafts)}
    return spec, cand.gpu, CostInputs(
        context=cand.context, batch=batch, kv_dtype=cand.kv_dtype, mla_form=form,
        layout=CostLayout(tp=lay.tp, dp_attention=lay.dp_attention,
                          ep=lay.ep if lay.ep > 1 else 1,
                          attn_tp=inputs.attention_tp if lay.dp_attention else 1,
                          node_gpus=lay.gpus_per_node),  # the NVLink domain: perf.layout.link
        efficiency=engine_efficiency(req.engine.value, opt_in(req.cost_rules, cand.gpu),
                                     enforce_eager=bool(req.extra.get("enforce_eager")),
                                     version=req.engine_version,
                                     prefill_graph=False if req.disaggregated else None,
                                     options=inputs.options, spec=spec),
        conv_dtype=conv, ssm_dtype=ssm, gpu_hour_usd=req.prices.get(cand.gpu.name),
        # A disaggregated role's decode step replayed from the engine's CUDA graphs, padded
        # to the next captured size as `kvplan simulate` steps it (kvplan.perf.graph_padding);
        # a collocated plan's step is not padded (not changed here).
        graph_sizes=(req.engine.rules.decode_graph_sizes(spec, inputs) if req.disaggregated
                     else ()),
        # Its decode steps replayed from captured CUDA graphs, as `kvplan simulate`'s.
        graphs=req.engine.rules.decode_graphs(inputs), **draft_kw)


def cost_per_hour(req: PlanRequest, cand: Candidate) -> float | None:
    price = req.prices.get(cand.gpu.name)
    return None if price is None else price * cand.layout.gpus



def fp8_runnable(spec: ModelSpec, req: PlanRequest, gpu: GPU) -> bool:
    """Whether the engine runs an fp8 KV cache for `spec` on `gpu` (its dtypes there, narrowed
    by EngineRules.runnable_kv_dtypes): an fp8 alternative is offered only then."""
    runnable = req.engine.rules.runnable_kv_dtypes(spec, req.engine_version, gpu)
    return "fp8" in supported_kv_dtypes(req.engine, gpu) and (runnable is None
                                                                 or "fp8" in runnable)

def alternatives_when_fits(spec: ModelSpec, req: PlanRequest, best: Candidate
                           ) -> list[Alternative]:
    out = []
    gpu = best.gpu
    # A cheaper KV dtype on the same hardware budget: fewer GPUs, or more requests.
    if best.kv_dtype != "fp8" and fp8_runnable(spec, req, gpu):
        fp8, _, _ = search(spec, req, gpu, kv_dtypes=("fp8",))
        if fp8 is not None and fp8.layout.gpus < best.layout.gpus:
            out.append(Alternative(label=f"fp8 KV: fits on {fp8.layout.gpus} GPUs "
                                         f"(tp {fp8.layout.tp}, pp {fp8.layout.pp}, dp "
                                         f"{fp8.layout.dp})", fits=True, gpus=fp8.layout.gpus,
                                   requests=fp8.requests, candidate=fp8, with_command=True,
                                   cost_per_hour_usd=cost_per_hour(req, fp8)))
        else:
            same = evaluate(spec, req, gpu, best.layout, "fp8", best.mem_fraction, best.context)
            if same is not None and best.requests:
                ratio = same.requests / best.requests
                out.append(Alternative(label=f"fp8 KV on the same GPUs: {same.requests:,} "
                                             f"requests ({ratio:.1f}x)", fits=True,
                                       gpus=best.layout.gpus, requests=same.requests,
                                       candidate=same,
                                       cost_per_hour_usd=cost_per_hour(req, same)))
    # A shorter context on the same layout (not capped by the target: the engine's default
    # --max-num-seqs, or the one given).
    if req.context >= 2048:
        half = req.context // 2
        shorter = evaluate(spec, req, gpu, best.layout, best.kv_dtype, best.mem_fraction, half)
        if shorter is not None and best.requests:
            ratio = shorter.requests / best.requests
            out.append(Alternative(label=f"{req.engine.rules.launch.context_flag} {short(half)}: "
                                         f"{shorter.requests:,} "
                                         f"requests ({ratio:.1f}x)", fits=True,
                                   gpus=best.layout.gpus, requests=shorter.requests,
                                   candidate=shorter,
                                   cost_per_hour_usd=cost_per_hour(req, shorter)))
    # Headroom of the plan itself.
    out.append(Alternative(label=f"the plan holds {best.requests:,} requests of "
                                 f"{short(best.context)} ({best.requests / req.concurrency:.1f}x "
                                 "the target)", fits=True, gpus=best.layout.gpus,
                           requests=best.requests, candidate=best,
                           cost_per_hour_usd=cost_per_hour(req, best)))
    return out


def smallest_serving(spec: ModelSpec, req: PlanRequest, gpu: GPU, *,
                     at_most: int | None = None) -> Candidate | None:
    """The fewest GPUs of this type that serve the target: the given node size with more
    nodes, or the largest node the GPU ships in (scale_up_gpus), up to MAX_NODES nodes (and
    up to `at_most` GPUs when given: a caller that has an answer on that many already)."""
    found = None
    for per_node in dict.fromkeys((req.gpus_per_node, max(req.gpus_per_node,
                                                          scale_up_gpus(gpu.name)))):
        limit = max(req.gpus_per_node * req.nodes, per_node * MAX_NODES)
        if at_most is not None:
            limit = min(limit, at_most)
        best, _, _ = search(spec, req, gpu, gpus_per_node=per_node, max_gpus=limit)
        if best is not None and (found is None or best.layout.gpus < found.layout.gpus):
            found = best
    return found


def longest_context(spec: ModelSpec, req: PlanRequest, gpu: GPU) -> Candidate | None:
    """The longest context (below the target's) that serves the concurrency on the GPUs given:
    a bisection, so about log2(context) searches."""
    lo, hi = 1, req.context - 1
    found = None
    while lo <= hi:
        mid = (lo + hi) // 2
        best, _, _ = search(spec, req, gpu, context=mid)
        if best is not None:
            found, lo = best, mid + 1
        else:
            hi = mid - 1
    return found


def alternatives_when_not(spec: ModelSpec, req: PlanRequest, gpu: GPU,
                          closest: Candidate | None) -> list[Alternative]:
    """What would serve the target: more GPUs of this type, fp8 KV on the GPUs given (when
    the search was held to another dtype and the engine can run fp8 there), the longest context
    that serves the concurrency on them; and the closest candidate, for scale."""
    out = []
    more = smallest_serving(spec, req, gpu)
    if more is not None:
        out.append(Alternative(label=f"{more.layout.gpus} GPUs: {layout_text(more, req)}",
                               fits=True, gpus=more.layout.gpus, requests=more.requests,
                               candidate=more, with_command=True,
                               cost_per_hour_usd=cost_per_hour(req, more)))
    if req.kv_dtypes and "fp8" not in req.kv_dtypes and fp8_runnable(spec, req, gpu):
        fp8, _, _ = search(spec, req, gpu, kv_dtypes=("fp8",))
        if fp8 is not None:
            out.append(Alternative(label=f"fp8 KV: serves it on {layout_text(fp8, req)}", fits=True,
                                   gpus=fp8.layout.gpus, requests=fp8.requests, candidate=fp8,
                                   with_command=True,
                                   cost_per_hour_usd=cost_per_hour(req, fp8)))
    if closest is not None and closest.requests > 0:
        out.append(Alternative(label=f"{closest.requests:,} concurrent requests of "
                                     f"{short(req.context)} fit on {closest.layout.gpus} GPUs",
                               fits=False, gpus=closest.layout.gpus,
                               requests=closest.requests, candidate=closest,
                               cost_per_hour_usd=cost_per_hour(req, closest)))
    found = longest_context(spec, req, gpu)
    if found is not None:
        flag = req.engine.rules.launch.context_flag
        out.append(Alternative(label=f"{flag} {found.context:,}: serves "
                                     f"{req.concurrency:,} requests on {found.layout.gpus} GPUs",
                               fits=True, gpus=found.layout.gpus, requests=found.requests,
                               candidate=found, with_command=True,
                               cost_per_hour_usd=cost_per_hour(req, found)))
    return out
