"""`kvplan plan MODEL --rate R --slo-ttft-ms X --slo-tpot-ms Y` (issue 30, item 5): the fewest GPUs
(TP x replicas, or for a MoE model engines with attention DP: one, or replicas of one that
fits a node, several on it, or fills whole nodes; ranks of attention TP 1 and up where the
engine runs them) that serve the request stream within the SLOs in the simulator
(kvplan.analysis.simulate.rate_search.fewest_gpus), with its goodput and headroom, and the
layouts of fewer GPUs that were simulated and missed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from kvplan._util.errors import InputError
from kvplan.analysis.rate_launch import rate_launch, trial_layout
from kvplan.analysis.simulate.engine_args import EngineSettings, with_engine_args
from kvplan.analysis.simulate.executor import Executor
from kvplan.analysis.simulate.rate_search import LayoutTrial, RateSearch, fewest_gpus
from kvplan.analysis.simulate.workload import WorkloadOptions, requests_from
from kvplan.engines.base import DEFAULT_ENGINE, Engine
from kvplan.engines.context import default_context
from kvplan.engines.kv_dtype import ENGINE_AUTO, run_kv_dtype
from kvplan.engines.launch import LaunchLayout, LaunchPlan
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import DEFAULT_FABRIC, scale_out_link
from kvplan.kv.cache import check_token_sized
from kvplan.model.spec import ModelSpec
from kvplan.perf.cost_rules import NO_COST_RULES
from kvplan.sources.machine import usable_cpus

# EngineSettings' fields of SGLang's MoE all-to-all, which the launch writes as plan does.
MOE_A2A_FIELDS = ("moe_a2a_backend", "deepep_mode", "moe_dense_tp_size", "enable_dp_lm_head")
TPS = (1, 2, 4, 8)  # the TP degrees tried (fewest_gpus), up to --gpus-per-node


def engine_sizes(gpus_per_node: int, nodes: int, limit: int = 0) -> tuple[int, ...]:
    """The GPUs one engine (a TP replica, an attention-DP engine) is tried on: TPS up to a
    node, then every count of whole nodes up to `nodes` whose GPUs are at most `limit`
    (model_limit: every engine's own check refuses an engine of more, so none is tried); with
    no limit known (0), 2, 4, 8 ... nodes. Every engine's launch writes an engine over any
    number of whole nodes (kvplan.engines.<name>.launch: SGLang --nnodes, vLLM --nnodes or a Ray
    cluster, TensorRT-LLM mpirun; each spans whole nodes only: nodes_per_replica); a count
    the model cannot take (TP 24 for 64 heads) is refused at set-up by kvplan's layout check,
    as `estimate --tp` refuses it. Never counts through 10^9 nodes."""
    if limit:
        spans = [k * gpus_per_node for k in range(2, min(nodes, limit // gpus_per_node) + 1)]
    else:
        spans = []
        k = 2
        while k <= nodes:
            spans.append(k * gpus_per_node)
            k *= 2
    return tuple(tp for tp in TPS if tp <= gpus_per_node) + tuple(spans)


def model_limit(spec: ModelSpec) -> int:
    """The most GPUs an engine of `spec` can run on by the engines' own checks (0: unknown): TP
    divides the query heads (vLLM ModelConfig.verify_with_parallel_config, "Total number of
    attention heads ... must be divisible by tensor parallel size"; kvplan's `--tp` check), so
    a TP engine, and an SGLang attention-DP engine (its --tp is the engine's GPUs), has at most
    that many; a vLLM or TensorRT-LLM attention-DP engine's EP ranks are its GPUs, at most the
    routed experts (kvplan.perf.layout.check_layout, "--ep: N ranks for M experts")."""
    heads = getattr(spec.attention, "num_attention_heads", 0)
    return max(heads, spec.moe.n_routed_experts if spec.moe is not None else 0)


@dataclass(frozen=True, kw_only=True)
class RatePlan:
    model: str
    gpu: str
    engine: str
    rate: float
    slo_ttft_ms: float | None
    slo_tpot_ms: float | None
    percentile: int
    context: int
    max_gpus: int
    search: RateSearch
    workload: dict[str, Any] = field(default_factory=dict)
    # The engine's own flags applied (--engine-arg: flag, value, the setting it set).
    engine_args: tuple[dict[str, Any], ...] = ()
    # The time model's opt-in rules on (kvplan.perf.cost_rules.CostRules.records).
    cost_rules: tuple[dict[str, Any], ...] = ()
    gpus_per_node: int = 8
    # The answer's commands as simulated (kvplan.analysis.rate_launch); None: no answer.
    launch: LaunchPlan | None = None
    launch_refused: str = ""  # why the engine's launch writer refused the answer (no launch)
    sizes: tuple[int, ...] = ()  # the GPUs one engine was tried on (engine_sizes)
    link: str = DEFAULT_FABRIC  # the fabric between nodes (--link: kv_links.scale_out_link)

    @property
    def link_named(self) -> bool:
        """Whether --link named a fabric other than the default (ib-ndr, one rail)."""
        return self.link != DEFAULT_FABRIC

    @property
    def best(self) -> LayoutTrial | None:
        return self.search.best

    @property
    def fewer(self) -> tuple[LayoutTrial, ...]:
        """The layouts of fewer GPUs than the answer (all simulated and missed, or refused)."""
        if self.best is None:
            return self.search.trials
        return tuple(t for t in self.search.trials if t.gpus < self.best.gpus)

    def launch_layout(self, trial: LayoutTrial) -> LaunchLayout:
        """The trial as the engine's launch command spells it (rate_launch.trial_layout)."""
        return trial_layout(trial, self.gpus_per_node)

    @property
    def engine_name(self) -> str:
        return Engine(self.engine).rules.display_name

    def layout_text(self, trial: LayoutTrial) -> str:
        """The trial's layout in the engine's own words (EngineRules.layout_text): "tp 8,
        dp-attention 8, ep 8" for SGLang, "tp 1, dp 8, ep 8 (data-parallel attention)" for
        vLLM; copies of an attention-DP engine as "2 x (tp 8, dp-attention 8, ep 8)"."""
        text = Engine(self.engine).rules.layout_text(self.launch_layout(trial))
        return text if trial.engines == 1 else f"{trial.engines} x ({text})"

    def at(self, trial: LayoutTrial, metric: str) -> float | None:
        """The trial's `metric` (ttft_ms, tpot_ms) at the SLO percentile."""
        if trial.metrics is None:
            return None
        return getattr(trial.metrics, metric)[f"p{self.percentile}"]

    def headroom_ms(self) -> dict[str, float | None]:
        """SLO minus the answer's latency at the percentile (positive: within)."""
        out: dict[str, float | None] = {}
        for metric, slo in (("ttft_ms", self.slo_ttft_ms), ("tpot_ms", self.slo_tpot_ms)):
            value = None if self.best is None else self.at(self.best, metric)
            out[metric] = None if slo is None or value is None else slo - value
        return out


def plan_for_rate(spec: ModelSpec, *, model: str, rate: float, slo_ttft_ms: float | None,
                  slo_tpot_ms: float | None, percentile: int = 90, gpu: str = "H100-80GB",
                  context: int | None = None, gpus_per_node: int = 8, nodes: int = 1,
                  engine: Engine = DEFAULT_ENGINE, engine_version: str | None = None,
                  kv_dtype: str = ENGINE_AUTO, workload: WorkloadOptions | None = None,
                  executor: Executor = Executor.process, jobs: int | None = None,
                  platform: str | None = None, cpu_amx: bool | None = None,
                  limit_mm_per_prompt: str | None = None,
                  skip_mm_profiling: bool = False, engine_args: Sequence[str] = (),
                  max_num_seqs: int | None = None, max_num_batched_tokens: int | None = None,
                  cost_rules: Any = None, moe_a2a: dict[str, Any] | None = None,
                  dp_attention: bool = True, link: str = DEFAULT_FABRIC,
                  rails: int | None = None) -> RatePlan:
    """The fewest GPUs of `gpu`, up to `gpus_per_node` x `nodes`, that serve `rate` requests
    per second of `workload` within the SLOs at `percentile` (each layout simulated on the same
    stream). `executor`, `jobs`: where the layouts are simulated and how many at once (default
    the usable CPUs); the answer is the same with any. `kv_dtype` ENGINE_AUTO: the engine's own
    for the model, as `kvplan estimate` takes it (run_kv_dtype). `platform`, `cpu_amx`: as
    estimate's --platform and --cpu-amx; `limit_mm_per_prompt`, `skip_mm_profiling`: as its
    --limit-mm-per-prompt and --skip-mm-profiling. `engine_args`: the engine's own flags as it
    spells them (`--engine-arg`, kvplan.analysis.simulate.engine_args), on every layout;
    `max_num_seqs`, `max_num_batched_tokens`: kvplan's own options of those names (None: the
    engine's defaults), on every layout too. `cost_rules`: the time model's opt-in rules
    (kvplan.perf.cost_rules.CostRules; None: none), on every layout; `moe_a2a`: SGLang's MoE
    all-to-all settings as kvplan's options give them (EngineSettings' fields of those names;
    --engine-arg sets them too). `dp_attention`: also try, for a MoE model, engines with
    attention DP over 2, 4, 8 GPUs (up to `gpus_per_node`) and whole nodes (engine_sizes), one
    or copies of one that fits a node or fills whole nodes, in every form the engine runs as
    `kvplan simulate --dp-attention` does (rate_search.fewest_gpus; False:
    `--no-dp-attention`). The layouts are at most `gpus_per_node` x `nodes` GPUs, a TP engine
    over nodes of a size in engine_sizes. `link`: the fabric between nodes, a kv_links.json
    name (`plan --link`), that a collective over several NVLink domains crosses
    (kv_links.KvLink.scale_out), `rails` its NICs per GPU (None: the preset's)."""
    check_token_sized(spec, "plan --rate")
    scale_out = scale_out_link(link, rails)  # refuses a name that is no fabric between nodes
    settings = with_engine_args(EngineSettings(max_num_seqs=max_num_seqs,
                                               max_num_batched_tokens=max_num_batched_tokens,
                                               **(moe_a2a or {})),
                                engine, engine_args, engine_version)
    if settings.trtllm.adp_balance is not None:
        raise InputError("--engine-arg attention_dp_config.enable_balance=true: needs attention "
                         "DP on every layout, and plan --rate also searches layouts without it "
                         "(kvplan simulate --dp-attention takes it)")
    if "," in gpu:
        raise InputError("--gpu: one GPU type with --rate (the simulator times one)")
    kv_dtype, _ = run_kv_dtype(engine, spec, kv_dtype, engine_version, get_gpu(gpu))
    ctx = context or default_context(spec, engine)
    if ctx is None:
        raise InputError("--context: the model's max length is unknown; give --context")
    options = WorkloadOptions(rate=rate) if workload is None else workload
    if options.rate != rate:
        options = replace(options, rate=rate)
    tps = engine_sizes(gpus_per_node, nodes, model_limit(spec))
    max_gpus = gpus_per_node * nodes
    search = fewest_gpus(spec, partial(requests_from, options), gpu=gpu, context=ctx,
                         slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms,
                         percentile=percentile, tps=tps, max_gpus=max_gpus, engine=engine,
                         engine_version=engine_version, kv_dtype=kv_dtype,
                         platform=platform, cpu_amx=cpu_amx,
                         limit_mm_per_prompt=limit_mm_per_prompt,
                         skip_mm_profiling=skip_mm_profiling, executor=executor,
                         settings=settings, cost_rules=cost_rules, dp_attention=dp_attention,
                         gpus_per_node=gpus_per_node, scale_out=scale_out, nodes=nodes,
                         jobs=usable_cpus() if jobs is None else jobs)
    launch, refused = None, ""
    if search.best is not None:
        try:
            launch = rate_launch(
                spec, search.best, engine=engine, gpu=gpu, context=ctx, kv_dtype=kv_dtype,
                gpus_per_node=gpus_per_node, engine_version=engine_version,
                limit_mm_per_prompt=limit_mm_per_prompt, skip_mm_profiling=skip_mm_profiling,
                moe_a2a={k: getattr(settings, k) for k in MOE_A2A_FIELDS},
                engine_args=engine_args, max_num_batched_tokens=max_num_batched_tokens)
        except InputError as exc:  # the engine's launch refuses it: the answer stands
            refused = str(exc)
    return RatePlan(model=model, launch=launch, launch_refused=refused, gpu=gpu,
                    engine=engine.value, rate=rate, sizes=tps,
                    link=scale_out.name if rails is None else f"{scale_out.name} x {rails} rails",
                    slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms, percentile=percentile,
                    context=ctx, max_gpus=max_gpus, search=search,
                    workload={"num_requests": options.num_requests,
                              "input_len": options.input_len,
                              "output_len": options.output_len, "trace": options.trace,
                              "trace_format": options.trace_format, "seed": options.seed},
                    engine_args=tuple(settings.applied_dicts()), gpus_per_node=gpus_per_node,
                    cost_rules=tuple((cost_rules or NO_COST_RULES).records(
                        (get_gpu(gpu),), moe=spec.moe is not None)))
