"""`kvplan plan`: can this model serve N concurrent requests of L tokens on this hardware, and how.

Searches the layouts the engine can run -- tensor parallel inside a node, pipeline parallel across
nodes, data-parallel replicas, expert parallel for MoE, data-parallel attention for MLA -- times
the KV dtypes the engine supports on the GPU, times the memory fraction within the engine's limits
(kvplan.analysis.plan_search), on each GPU type asked for, and keeps the plan that serves the
target at the least cost per hour (with prices), else on the fewest GPUs. Every candidate is
evaluated with `plan_capacity` and the defaults `kvplan estimate` uses, so a plan's numbers are
estimate's numbers for that layout. Each verdict carries its margin against the target and
kvplan's measured error for the engine (kvplan.engines.accuracy): a margin inside that error is
BORDERLINE. Pure: no I/O; the launch command is built as text.
"""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan.analysis.launch import command_text, launch_for
from kvplan.analysis.plan_search import (
    MAX_NODES,
    alternatives_when_fits,
    alternatives_when_not,
    cost_per_hour,
    layout_text,
    margin,
    plan_inputs_for,
    predict,
    search,
    smallest_serving,
)
from kvplan.analysis.plan_types import (
    BORDERLINE,
    DOES_NOT_FIT,
    FITS,
    Alternative,
    Candidate,
    Layout,
    PlanRequest,
    ServingPlan,
)
from kvplan.engines.context import check_context, long_context_env
from kvplan.engines.kv_dtype import (
    check_kv_dtype,
    known_auto_kv_dtype,
    run_kv_dtype,
    supported_kv_dtypes,
)
from kvplan.engines.launch import LaunchPlan, LaunchSettings, declared_kv_dtype
from kvplan.engines.sglang.deepep import moe_a2a_launch_groups
from kvplan.hardware.gpus import GPU, GPUS
from kvplan.model.spec import ModelSpec

__all__ = ["Candidate", "Layout", "PlanRequest", "ServingPlan", "launch_command", "launch_plan",
           "plan_serving", "planned_spec", "supported_kv_dtypes"]


def launch_plan(spec: ModelSpec, req: PlanRequest, cand: Candidate) -> LaunchPlan:
    """The engine's own commands for the plan, head node first (kvplan.analysis.launch)."""
    launch = launch_for(spec, req.engine, cand.layout, LaunchSettings(
        context=cand.context, fraction=cand.mem_fraction, kv_dtype=cand.kv_dtype,
        declared_kv_dtype=declared_kv_dtype(spec),
        quantization_json=spec.quantization_json,
        quantization_file=spec.quantization_file,
        load_quantization=req.extra.get("quantization"),
        auto_kv_dtype=known_auto_kv_dtype(req.engine, spec, req.engine_version, cand.gpu),
        concurrency=req.concurrency, version=req.engine_version,
        speculative_method=req.extra.get("speculative_method"),
        num_speculative_tokens=req.extra.get("num_speculative_tokens") or 0,
        speculative_eagle_topk=req.extra.get("speculative_eagle_topk"),
        speculative_num_draft_tokens=req.extra.get("speculative_num_draft_tokens"),
        running_cap=req.max_num_seqs,
        limit_mm_per_prompt=req.extra.get("limit_mm_per_prompt", ()),
        skip_mm_profiling=bool(req.extra.get("skip_mm_profiling")),
        # SGLang's MoE all-to-all as planned (only where given: kvplan.cli.moe_a2a_opts).
        extra_groups=moe_a2a_launch_groups(req.extra)),
        ref=req.model_ref)
    env = long_context_env(spec, cand.context, req.engine)
    return replace(launch, env=launch.env + env) if env else launch


def planned_spec(spec: ModelSpec, req: PlanRequest, plan: ServingPlan) -> ModelSpec:
    """`spec` as the plan's engine serves its chosen candidate: the architecture it runs and the
    assumptions that still hold at the plan's settings (a tower --limit-mm-per-prompt leaves
    unbuilt takes its assumption with it), which the plan's output lists."""
    shown = req.engine.rules.served_architecture(spec, req.engine_version)
    cand = plan.chosen
    if cand is None:
        return shown
    served = req.engine.rules.served_spec(spec, plan_inputs_for(
        req, cand.gpu, cand.layout, cand.kv_dtype, cand.mem_fraction, cand.context))
    return replace(shown, assumptions=served.assumptions)


def launch_command(spec: ModelSpec, req: PlanRequest, cand: Candidate) -> str:
    """The head node's command line for the plan (flags as each engine's CLI spells them)."""
    return command_text(launch_plan(spec, req, cand))


def _check(spec: ModelSpec, req: PlanRequest) -> None:
    if req.concurrency < 1:
        raise InputError(f"--concurrency: must be >= 1, got {req.concurrency}")
    if req.context < 1:
        raise InputError(f"--context: must be >= 1, got {req.context}")
    if req.gpus_per_node < 1 or req.nodes < 1:
        raise InputError("--gpus-per-node and --nodes: must be >= 1")
    if req.max_num_seqs is not None and req.max_num_seqs < 1:
        raise InputError(f"--max-num-seqs: must be >= 1, got {req.max_num_seqs}")
    gpus = req.gpu_list
    if req.prices:
        missing = [g.name for g in gpus if g.name not in req.prices]
        if missing:
            raise InputError(f"--price: no price for {', '.join(missing)} (give --price "
                             f"{missing[0]}=USD_PER_HOUR, or leave it out of --gpu)")
    for gpu in gpus:
        for dtype in kv_dtypes_on(spec, req, gpu) or ():
            check_kv_dtype(req.engine, dtype, gpu)


def kv_dtypes_on(spec: ModelSpec, req: PlanRequest, gpu: GPU) -> tuple[str, ...] | None:
    """The KV dtypes `req` plans on `gpu`: those asked, ENGINE_AUTO as the engine's own for the
    model on that GPU (run_kv_dtype, as `kvplan estimate` takes it), else every dtype the
    engine can be told to run for this checkpoint there (None: every one it runs)."""
    if req.kv_dtypes:
        return tuple(dict.fromkeys(run_kv_dtype(req.engine, spec, dtype, req.engine_version,
                                                gpu)[0] for dtype in req.kv_dtypes))
    return req.engine.rules.runnable_kv_dtypes(spec, req.engine_version, gpu)


def _gib(n: int) -> str:
    return f"{n / GiB:,.2f} GiB"


def _verdict(req: PlanRequest, best: Candidate | None, closest: Candidate | None
             ) -> tuple[str, Candidate | None, str]:
    """FITS, BORDERLINE or DOES NOT FIT, the candidate it is about, and why."""
    chosen = best or closest
    if chosen is None:
        return DOES_NOT_FIT, None, "no layout of these GPUs holds the weights"
    m = margin(req, chosen)
    band = (f"kvplan's measured error for {req.engine.rules.display_name} here: "
            f"+-{_gib(m.band_bytes)}")
    if best is not None and not m.inside_error:
        return FITS, chosen, f"{_gib(m.margin_bytes)} of KV to spare per GPU ({band})"
    if m.inside_error:
        side = "to spare" if m.margin_bytes >= 0 else "short"
        return BORDERLINE, chosen, (
            f"{_gib(abs(m.margin_bytes))} of KV {side} per GPU is inside {band}: the engine's "
            "own profile decides; check its 'Available KV cache memory' line")
    return DOES_NOT_FIT, chosen, f"{_gib(-m.margin_bytes)} of KV short per GPU ({band})"


def _plan_on(spec: ModelSpec, req: PlanRequest, gpu: GPU) -> ServingPlan:
    """The plan on one GPU type, with its alternatives (commands not yet written)."""
    best, closest, searched = search(spec, req, gpu)
    verdict, chosen, reason = _verdict(req, best, closest)
    fits = best is not None
    alternatives = (alternatives_when_fits(spec, req, best) if fits else
                    alternatives_when_not(spec, req, gpu, closest))
    return ServingPlan(
        model=spec.id, engine=req.engine.value,
        engine_version=chosen.capacity.engine_version if chosen else None,
        gpu=gpu.name, concurrency=req.concurrency, context=req.context, fits=fits,
        chosen=chosen, command=None, alternatives=tuple(alternatives), searched=searched,
        margin=margin(req, chosen) if chosen else None, verdict=verdict, reason=reason,
        max_num_seqs=req.max_num_seqs or (req.engine.rules.running_cap(chosen.layout,
                                                                        req.concurrency)
                                          if chosen else req.concurrency),
        max_num_seqs_given=req.max_num_seqs,
        layout_text=req.engine.rules.layout_text(chosen.layout) if chosen else "",
        cost_per_hour_usd=cost_per_hour(req, chosen) if chosen else None)


def _rank(req: PlanRequest, plan: ServingPlan) -> tuple[float, ...]:
    c = plan.chosen
    assert c is not None and plan.margin is not None
    cost = plan.cost_per_hour_usd if req.prices else 0.0
    return (cost or 0.0, c.layout.gpus, -plan.margin.margin_bytes)


def _larger_gpu(spec: ModelSpec, req: PlanRequest, tried: tuple[GPU, ...]) -> Alternative | None:
    """Of the presets with more memory than every GPU tried, the one that serves the target on
    the fewest GPUs (the cheapest per hour when prices are given; ties: the least memory), on
    its smallest layout (kvplan.analysis.plan_search.smallest_serving). Not merely the next
    larger preset: a 141 GiB H200 may need more GPUs than a 180 GiB B200 (issue 32)."""
    biggest = max(g.total_bytes for g in tried)
    found: tuple[tuple[float, int, int, str], Candidate] | None = None
    # Largest first: without prices, each answer bounds the search on the next presets.
    for gpu in sorted(GPUS.values(), key=lambda g: (-g.total_bytes, g.name)):
        if gpu.total_bytes <= biggest or gpu.unified_memory:
            continue
        at_most = None if req.prices or found is None else found[1].layout.gpus
        try:
            dtypes = kv_dtypes_on(spec, req, gpu)
            for dtype in dtypes or ():
                check_kv_dtype(req.engine, dtype, gpu)
            best = smallest_serving(spec, replace(req, gpu=gpu, kv_dtypes=dtypes), gpu,
                                    at_most=at_most)
        except InputError:
            continue  # a GPU the engine cannot run or kvplan cannot model: not an alternative
        if best is None:
            continue
        cost = cost_per_hour(req, best)
        key = (0.0 if not req.prices else cost if cost is not None else float("inf"),
               best.layout.gpus, gpu.total_bytes, gpu.name)
        if found is None or key < found[0]:
            found = (key, best)
    if found is None:
        return None
    best = found[1]
    return Alternative(label=f"a larger GPU: {layout_text(best, req)}", fits=True,
                       gpus=best.layout.gpus, requests=best.requests, candidate=best,
                       with_command=True, cost_per_hour_usd=cost_per_hour(req, best))


def _with_commands(spec: ModelSpec, req: PlanRequest, plan: ServingPlan) -> ServingPlan:
    alternatives = tuple(
        replace(a, command=launch_command(spec, replace(req, gpu=a.candidate.gpu), a.candidate))
        if a.with_command and a.candidate is not None else a
        for a in plan.alternatives)
    command = launch = None
    if plan.chosen is not None and plan.verdict != DOES_NOT_FIT:
        launch = launch_plan(spec, replace(req, gpu=plan.chosen.gpu), plan.chosen)
        command = command_text(launch)
    return replace(plan, alternatives=alternatives, command=command, launch=launch)


def plan_serving(spec: ModelSpec, req: PlanRequest) -> ServingPlan:
    """The answer to "can I serve this?": the verdict with its margin, the plan and its command,
    and ranked alternatives, over every GPU type asked for. A `kv_dtypes` of ENGINE_AUTO is the
    engine's own for the model, as `kvplan estimate` takes it (run_kv_dtype)."""
    _check(spec, req)
    check_context(spec, req.context, engine=req.engine, allow_long=req.allow_long_context)
    gpus = req.gpu_list
    plans = [_plan_on(spec, replace(req, gpu=g, kv_dtypes=kv_dtypes_on(spec, req, g)), g)
             for g in gpus]
    ranking = ("Ranked by cost per hour of the whole layout, then GPUs, then headroom."
               if req.prices else
               "No prices given: ranked by GPU count, then headroom (--price GPU=USD_PER_HOUR "
               "ranks by cost).")
    serving = sorted((p for p in plans if p.fits), key=lambda p: _rank(req, p))
    # Nothing fits: the plan shown is the nearest miss (a borderline one first).
    winner = serving[0] if serving else max(plans, key=lambda p: (
        p.verdict == BORDERLINE, p.margin.margin_bytes if p.margin else -(1 << 62)))
    alternatives = list(winner.alternatives)
    # The other GPU types, ranked: each one's plan, or what would serve on it.
    for other in serving[1:]:
        c = other.chosen
        assert c is not None
        cost = "" if other.cost_per_hour_usd is None else f", ${other.cost_per_hour_usd:,.2f}/h"
        alternatives.append(Alternative(
            label=f"{other.verdict}: {layout_text(c, req)}{cost}", fits=True, gpus=c.layout.gpus,
            requests=c.requests, candidate=c, with_command=True,
            cost_per_hour_usd=other.cost_per_hour_usd))
    for other in plans:
        if other is not winner and not other.fits:
            alternatives += [a for a in other.alternatives if a.fits and a.with_command]
    none_reason = ""
    if not serving:
        # Nothing fits on the GPUs given: the alternatives that serve the whole target first,
        # cheapest (or fewest GPUs) first, then the others; a larger GPU when none of these
        # types serves it or when it takes fewer GPUs.
        def whole(a: Alternative) -> bool:
            c = a.candidate
            return (a.fits and c is not None and c.context >= req.context
                    and c.requests >= req.concurrency)

        alternatives.sort(key=lambda a: (not whole(a), not a.fits, a.cost_per_hour_usd or 0.0,
                                         a.gpus or 0))
        fewest = min((a.gpus or 0 for a in alternatives if whole(a)), default=None)
        larger = _larger_gpu(spec, req, gpus)
        if larger is not None and (fewest is None or (larger.gpus or 0) < fewest):
            alternatives.insert(0 if fewest is None else 1, larger)
        if fewest is None and larger is None:
            none_reason = ("nothing in the GPU list can hold the weights and the target "
                           f"(no layout up to {MAX_NODES} nodes serves it, and no larger "
                           "GPU preset does)")
    winner = replace(winner, alternatives=tuple(alternatives), ranking=ranking,
                     none_reason=none_reason, searched=sum(p.searched for p in plans),
                     prediction=(predict(spec, req, winner.chosen)
                                 if winner.fits and winner.chosen is not None else None))
    return _with_commands(spec, req, winner)
