"""The fewest GPUs that serve a request stream within SLOs (issue 30, item 5: the library half of
`kvplan plan MODEL --rate R --slo-ttft-ms X --slo-tpot-ms Y`, for the plan command to call).

Layouts are tried by GPU count (TP degree x data-parallel replicas, fewest first, then the
smaller TP; then, for a MoE model where asked, engines whose attention runs data-parallel:
one engine over that many GPUs, or replicas of a smaller one that fits a node (several on a
node) or fills whole nodes, the smaller engine first, each engine's ranks from attention TP 1 up:
kvplan.analysis.simulate.dp_lockstep.attention_dp_engines); each is simulated on the same
requests (kvplan.analysis.simulate.run; replicas, plain or of an attention-DP engine, each
take every R-th request: the round-robin of a load balancer in front of independent servers)
and meets the SLOs when its TTFT and TPOT at the given percentile are within them. The first
that meets them is the answer, and every layout with fewer GPUs was simulated and failed (or
cannot hold the model).

The search is bounded: per GPU count n, at most one plain layout per TP size in `tps` and one
attention-DP layout per (engine size in `tps` dividing n, rank count dividing the engine size);
a layout that cannot hold the model is refused at set-up, before any step is simulated.

Pipeline parallelism (vLLM only, where `kvplan simulate --pp` runs it: `pipeline_shapes`):
engines of TP = GPUs per node x PP = 2 .. nodes stages, tried only when no TP engine within a
node holds the model (set up, nothing simulated: `holds_model`), after the layouts without PP
of the same GPU count. The rule is vLLM's own guide's ("Distributed Inference and Serving",
docs.vllm.ai v0.8: a model too large for one node runs TP = the GPUs of each node, PP = the
nodes); a model that fits a node is searched as before (no PP layout), so its answer stays.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from kvplan._util.errors import InputError, KvplanError, UnmodelledError
from kvplan._util.progress import report
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.dp_lockstep import DpAttentionLayout, attention_dp_engines
from kvplan.analysis.simulate.engine_args import EngineSettings
from kvplan.analysis.simulate.executor import Executor, map_ordered
from kvplan.analysis.simulate.metrics import PERCENTILES, SimMetrics
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.sim_setup import SimSetup
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import DEFAULT_ENGINE, Engine, Scheduler
from kvplan.hardware.interconnect import Interconnect
from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class LayoutTrial:
    """One layout simulated: `dp` replicas of `tp` GPUs, or with `dp_attention` `engines`
    engines of `dp // engines` attention-DP ranks of `tp` GPUs each (attention TP: 1, or for
    SGLang / vLLM above), each engine's experts over `ep` of its GPUs, its ranks in lockstep."""

    tp: int
    dp: int
    meets: bool
    metrics: SimMetrics | None
    refused: str = ""  # why the layout cannot serve the model (no KV pool, TP not dividing)
    dp_attention: bool = False
    ep: int = 1
    # What the layout was simulated with, for its launch command (kvplan.analysis.rate_launch):
    # the running-request cap of each scheduler (one replica's, one attention-DP rank's:
    # SimSetup.scheduler.max_num_seqs) and the memory fraction its pool was sized at.
    running_cap: int | None = None
    mem_fraction: float | None = None
    # Independent copies of the attention-DP engine (dp_attention), the stream dealt to them
    # round-robin; 1 without attention DP (the replicas are `dp`).
    engines: int = 1
    pp: int = 1  # pipeline stages of each replica (vLLM; 1: none)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def servers(self) -> int:
        """The independent servers a load balancer deals the stream to."""
        return self.engines if self.dp_attention else self.dp

    @property
    def ranks(self) -> int:
        """Attention-DP ranks of one engine (dp_attention), else 1."""
        return self.dp // self.engines if self.dp_attention else 1


@dataclass(frozen=True, kw_only=True)
class RateSearch:
    best: LayoutTrial | None  # None: no layout tried meets the SLOs
    trials: tuple[LayoutTrial, ...]  # every layout simulated, in the order tried
    # The (TP, PP) pipeline engines searched (pipeline_shapes; empty: none, the model fits a
    # node or the engine runs no simulated pipeline).
    pipelines: tuple[tuple[int, int], ...] = ()


def _meets(m: SimMetrics, key: str, slo_ttft_ms: float | None, slo_tpot_ms: float | None
           ) -> bool:
    ttft, tpot = m.ttft_ms[key], m.tpot_ms[key]
    return ((slo_ttft_ms is None or (ttft is not None and ttft <= slo_ttft_ms))
            and (slo_tpot_ms is None or (tpot is not None and tpot <= slo_tpot_ms)))


@dataclass(frozen=True, kw_only=True)
class Shape:
    """A layout to try: `dp` replicas of `tp` GPUs, or (`rank` given) `engines` engines of `dp`
    attention-DP ranks each, `tp` its `simulate --tp` and `rank` one rank's capacity layout."""

    tp: int
    dp: int
    rank: DpAttentionLayout | None = None
    engines: int = 1
    pp: int = 1  # pipeline stages of each of the `dp` replicas


# The engine's attention-DP forms over a number of GPUs (dp_lockstep.attention_dp_engines).
AttentionDpForms = Callable[[int], tuple[tuple[int, int, DpAttentionLayout], ...]]


def _gpu_counts(tps: tuple[int, ...], max_gpus: int, max_dp: int) -> Iterator[int]:
    """The GPU counts some layout takes, ascending, each once: the multiples d x tp of a size
    in `tps` (d <= `max_dp`) up to `max_gpus`. Merged lazily from one run of multiples a size,
    so sizes over whole nodes (2^9 nodes of 10^9 GPUs) never make the search count through
    every number below them."""
    runs = (range(tp, min(max_gpus, tp * max_dp) + 1, tp) for tp in sorted(set(tps)) if tp > 0)
    last = 0
    for n in heapq.merge(*runs):
        if n != last:
            last = n
            yield n


def _layouts(tps: tuple[int, ...], max_gpus: int, max_dp: int,
             attention_dp: AttentionDpForms | None = None, gpus_per_node: int = 8,
             pipelines: tuple[tuple[int, int], ...] = ()) -> Iterator[Shape]:
    """Layouts by GPU count, fewest first: the plain ones (the smaller TP first), then
    (`attention_dp`: the engine's attention-DP forms over so many GPUs, empty where it runs
    none) attention-DP engines of a size in `tps` above 1 dividing the count, the smaller
    engine first, each size's forms in their order (attention TP 1 first). Several engines
    where one fits a node of `gpus_per_node` (as many on a node as it holds, each on its own
    GPUs and ports: kvplan.engines.launch.copies_on_nodes, the engine's copy_on_node) or fills
    whole nodes (replicate_on_nodes); not one over a node and a part of another, which no
    launch places. At most `max_gpus` GPUs and `max_dp` replicas (servers). `pipelines`: (TP, PP)
    engines, replicas of each tried after the layouts above of the same GPU count. Generated,
    never listed whole."""
    sizes = tuple(sorted(set(tps) | {tp * pp for tp, pp in pipelines}))
    for n in _gpu_counts(sizes, max_gpus, max_dp):
        yield from _counted(n, tps, max_dp, attention_dp, gpus_per_node)
        for tp, pp in pipelines:
            if n % (tp * pp) == 0 and n // (tp * pp) <= max_dp:
                yield Shape(tp=tp, dp=n // (tp * pp), pp=pp)


def _counted(n: int, tps: tuple[int, ...], max_dp: int, attention_dp: AttentionDpForms | None,
             gpus_per_node: int) -> Iterator[Shape]:
    """The layouts without PP of `n` GPUs, in `_layouts`' order."""
    for tp in sorted(tps):
        if n % tp == 0 and n // tp <= max_dp:
            yield Shape(tp=tp, dp=n // tp)
    if attention_dp is None:
        return
    for size in sorted(tps):
        engines = n // size
        if (size < 2 or n % size or engines > max_dp
                or (engines > 1 and size > gpus_per_node and size % gpus_per_node)):
            continue
        for tp, ranks, rank in attention_dp(size):
            yield Shape(tp=tp, dp=ranks, rank=rank, engines=engines)


@dataclass(frozen=True, kw_only=True)
class TrialTask:
    """One layout to simulate: everything `run_trial` needs, picklable (the requests come from
    `requests`, a picklable callable such as functools.partial(requests_from, options))."""

    spec: ModelSpec
    requests: Callable[[], Iterable[RequestSpec]]
    tp: int
    dp: int
    gpu: str
    context: int
    # One engine of `dp` attention-DP ranks (`tp`: its `simulate --tp`), this one rank's
    # capacity layout; None: `dp` plain replicas of `tp` GPUs.
    rank: DpAttentionLayout | None = None
    engines: int = 1  # copies of that attention-DP engine, the stream dealt round-robin
    pp: int = 1  # pipeline stages of each plain replica (`simulate --pp`)
    slo_ttft_ms: float | None
    slo_tpot_ms: float | None
    key: str
    estimate_options: dict[str, Any]
    # The engine's own flags (plan --rate --engine-arg), on every layout alike.
    settings: EngineSettings = field(default_factory=EngineSettings)
    # GPUs of one host (--gpus-per-node): the time model's NVLink domain is no larger, and an
    # all-reduce over several takes the inter-node link (kvplan.perf.layout.link).
    node_gpus: int | None = None
    # The fabric between nodes (plan --rate --link: kv_links.scale_out_link); None: ib-ndr.
    scale_out: Interconnect | None = None


@dataclass(frozen=True, kw_only=True)
class TrialOutcome:
    trial: LayoutTrial
    unmodelled: str = ""  # the model cannot be sized: the whole search is refused


def _set_up(task: TrialTask) -> SimSetup:
    """The layout's simulator set-up (raises where it cannot hold the model)."""
    given, rank = task.settings, task.rank
    # One rank's capacity layout with attention DP (as `simulate --dp-attention` sizes it).
    layout = ({"tp": task.tp} if task.pp == 1 else {"tp": task.tp, "pp": task.pp}
              ) if rank is None else {
        "tp": rank.tp, "ep": rank.ep, "dp_attention": rank.dp_attention,
        **({} if rank.attention_dp_size is None
           else {"attention_dp_size": rank.attention_dp_size})}
    inputs = estimate_inputs(task.spec, context=task.context, gpu=task.gpu, **layout,
                             **task.estimate_options, **given.estimate_options())
    sim, _ = setup(task.spec, replace(inputs, node_gpus=task.node_gpus,
                                      scale_out=task.scale_out), dp=task.dp,
                   async_scheduling=given.async_scheduling, sglang=given.sglang,
                   trtllm=given.trtllm, dp_attention=rank is not None)
    return sim


def holds_model(task: TrialTask) -> bool:
    """Whether the layout's set-up holds the model (a KV pool, a layout the engine takes);
    nothing is simulated."""
    try:
        _set_up(task)
    except KvplanError:
        return False
    return True


def run_trial(task: TrialTask) -> TrialOutcome:
    """Simulate one layout (pure: the same task gives the same outcome, in any process)."""
    dp, rank = task.dp, task.rank
    # The layout as listed: GPUs per replica (per attention-DP rank: 1) x replicas (ranks).
    shown = {"tp": task.tp if rank is None else rank.gpus // dp, "dp": dp * task.engines,
             "dp_attention": rank is not None, "ep": 1 if rank is None else rank.ep,
             "engines": task.engines, "pp": task.pp}
    try:
        sim = _set_up(task)
    except UnmodelledError as exc:
        return TrialOutcome(trial=LayoutTrial(**shown, meets=False, metrics=None,
                                              refused=str(exc)), unmodelled=str(exc))
    except KvplanError as exc:
        return TrialOutcome(trial=LayoutTrial(**shown, meets=False, metrics=None,
                                              refused=str(exc)))
    m = simulate(sim, task.requests(), slo_ttft_ms=task.slo_ttft_ms,
                 slo_tpot_ms=task.slo_tpot_ms, engines=task.engines).metrics
    return TrialOutcome(trial=LayoutTrial(
        **shown, meets=_meets(m, task.key, task.slo_ttft_ms, task.slo_tpot_ms), metrics=m,
        running_cap=sim.scheduler.max_num_seqs, mem_fraction=sim.plan.mem_fraction))


def fewest_gpus(spec: ModelSpec, requests: Callable[[], Iterable[RequestSpec]], *, gpu: str,
                context: int, slo_ttft_ms: float | None, slo_tpot_ms: float | None,
                percentile: int = 90, tps: tuple[int, ...] = (1, 2, 4, 8), max_gpus: int = 16,
                executor: Executor = Executor.local, jobs: int = 1,
                settings: EngineSettings | None = None, dp_attention: bool = False,
                gpus_per_node: int = 8, scale_out: Interconnect | None = None,
                nodes: int = 1, **estimate_options: Any) -> RateSearch:
    """Try layouts of up to `max_gpus` GPUs, fewest first, on `requests()` (a fresh stream
    each time), stopping at the first that meets the SLOs at `percentile` (50, 90 or 99).
    `executor` / `jobs`: where the layouts are simulated, and how many at once (the next
    layouts run while the first is simulated; the answer and the trials are the serial run's,
    the layouts simulated past the answer are dropped). Other than `local`, `requests` must be
    picklable. `settings`: the engine's own flags, the same on every layout (None: its
    defaults). `dp_attention`: also try, for a MoE model, engines whose attention runs
    data-parallel over a GPU count in `tps` (after the plain layouts of each total count: one
    engine, or copies of one fitting a node of `gpus_per_node` or filling whole nodes), in
    each form the engine runs as simulated (dp_lockstep.attention_dp_engines); a dense model
    gets none. `scale_out`: the fabric between nodes (kvplan.hardware.kv_links.scale_out_link; None:
    ib-ndr). `nodes`: the nodes a vLLM pipeline may span (`pipeline_shapes`; 1: none)."""
    if slo_ttft_ms is None and slo_tpot_ms is None:
        raise InputError("give --slo-ttft-ms and/or --slo-tpot-ms")
    if percentile not in PERCENTILES:
        raise InputError(f"--slo-percentile: one of {', '.join(map(str, PERCENTILES))}, got "
                         f"{percentile}")
    key = f"p{percentile}"
    # More replicas than requests serve the same stream as one replica per request: replicas
    # stop there, whatever --gpus-per-node x --nodes allows (2^40 of them built a list of
    # 2^40 layouts before anything ran, issue 32).
    max_dp = sum(1 for _ in requests())
    rules = Engine(estimate_options.get("engine") or DEFAULT_ENGINE).rules
    attention_dp = partial(attention_dp_engines, rules, spec) if dp_attention else None
    template = TrialTask(spec=spec, requests=requests, tp=1, dp=1, gpu=gpu, context=context,
                         slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms, key=key,
                         estimate_options=estimate_options,
                         settings=settings or EngineSettings(), node_gpus=gpus_per_node,
                         scale_out=scale_out)
    pipelines = pipeline_shapes(template, tps, gpus_per_node, nodes)
    tasks = (replace(template, tp=s.tp, dp=s.dp, rank=s.rank, engines=s.engines, pp=s.pp)
             for s in _layouts(tps, max_gpus, max_dp, attention_dp, gpus_per_node, pipelines))
    trials = []
    outcomes = map_ordered(run_trial, tasks, executor=executor, jobs=jobs)
    try:
        for outcome in outcomes:
            if outcome.unmodelled:
                # refused as `estimate` refuses it (exit 2), not "no layout meets the SLOs"
                raise UnmodelledError(outcome.unmodelled)
            trials.append(outcome.trial)
            report("plan --rate: layouts simulated", len(trials))
            if outcome.trial.meets:
                return RateSearch(best=outcome.trial, trials=tuple(trials),
                                  pipelines=pipelines)
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()  # cancel the layouts still in flight
    return RateSearch(best=None, trials=tuple(trials), pipelines=pipelines)


def pipeline_shapes(template: TrialTask, tps: tuple[int, ...], gpus_per_node: int,
                    nodes: int) -> tuple[tuple[int, int], ...]:
    """The (TP, PP) engines the search adds (module docstring): TP `gpus_per_node` x PP 2 ..
    `nodes`, for vLLM (the only pipeline `kvplan simulate` runs) when no TP engine of `tps`
    within a node holds the model (tried from the largest; the first that holds stops the
    probe); else none."""
    rules = Engine(template.estimate_options.get("engine") or DEFAULT_ENGINE).rules
    if rules.scheduler is not Scheduler.mixed_token_budget or nodes < 2:
        return ()
    within = sorted((t for t in tps if t <= gpus_per_node), reverse=True)
    if any(holds_model(replace(template, tp=t)) for t in within):
        return ()
    return tuple((gpus_per_node, k) for k in range(2, nodes + 1))
