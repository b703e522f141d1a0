"""`kvplan plan`: one command answers "can I serve this?" with a verdict and the launch command."""

from pathlib import Path
from typing import Annotated, Any

import typer

import kvplan.cli.cost_opts as co
import kvplan.cli.moe_a2a_opts as ma
import kvplan.cli.offload_opts as oo
import kvplan.cli.spec_opts as so
from kvplan._util.errors import InputError, KvplanError
from kvplan.analysis.simulate.executor import Executor
from kvplan.cli.common import (
    EXIT_DOES_NOT_FIT,
    AllowLongContextOpt,
    CpuAmxOpt,
    DTypeOpt,
    EngineArgOpt,
    EngineVersionOpt,
    ExplainOpt,
    FormatOpt,
    GpuMemGibOpt,
    LimitMmOpt,
    LoadQuantization,
    MaxNumBatchedTokensOpt,
    MaxNumSeqsOpt,
    Mxfp4BackendOpt,
    PlatformOpt,
    QuantizationOpt,
    ReserveGibOpt,
    SkipMmProfilingOpt,
    SpecMethod,
    SpecMethodOpt,
    SpecTokensOpt,
    WeightDType,
    WeightsGibOpt,
    handle_errors,
    load_spec,
)
from kvplan.cli.disagg_opts import (
    ConnectorOpt,
    DecodeDpAttnOpt,
    DecodeDpOpt,
    DecodeEpOpt,
    DecodePpOpt,
    DecodeTpOpt,
    DisaggBlockOpt,
    DisaggOpt,
    LinkOpt,
    PrefillDpAttnOpt,
    PrefillDpOpt,
    PrefillEpOpt,
    PrefillPpOpt,
    PrefillTpOpt,
    RailsOpt,
    SchedulerRecvIntervalOpt,
    check_disagg_flags,
    disagg_plan_view,
)
from kvplan.cli.vocab import (
    CONCURRENCY_FLAGS,
    CONTEXT_FLAGS,
    parse_kv_dtype_or_auto,
    parse_tokens,
    tokens_option,
    tokens_or_zero_option,
)
from kvplan.cli.workload_opts import (
    ExecutorOpt,
    InputLenOpt,
    JobsOpt,
    NoDpAttentionOpt,
    NumRequestsOpt,
    OutputLenOpt,
    RateOpt,
    SeedOpt,
    SloPercentileOpt,
    SloTpotOpt,
    SloTtftOpt,
    TraceFormatOpt,
    TraceOpt,
)
from kvplan.engines.base import DEFAULT_ENGINE, Engine
from kvplan.engines.context import default_context
from kvplan.hardware.kv_links import DEFAULT_FABRIC
from kvplan.present.progress_view import progress_shown
from kvplan.present.render import OutputFormat, emit

DEFAULT_GPU = "H100-80GB"


def _price(text: str) -> tuple[str, float]:
    """--price GPU=USD_PER_HOUR -> (the preset's name, the price)."""
    from kvplan.hardware.gpus import get_gpu

    name, sep, value = text.partition("=")
    try:
        price = float(value)
    except ValueError:
        price = -1.0
    if not sep or not name.strip() or not (0 <= price < 1e12):
        raise InputError(f"--price: expected GPU=USD_PER_HOUR (e.g. H100=2.5), got {text!r}")
    return get_gpu(name.strip()).name, price


def _from_file(values: dict[str, Any], file: str) -> dict[str, Any]:
    """The scenario's values converted as the flags are; a bad one names the file and field."""
    def where(key: str, exc: KvplanError) -> InputError:
        return InputError(f"{file}: {key}: {str(exc).split(': ', 1)[-1]}")

    out = dict(values)
    for key in ("context", "max_num_batched_tokens"):
        if key in out:
            try:
                out[key] = parse_tokens(key, out[key])
            except InputError as exc:
                raise where(key, exc) from None
    try:
        if "kv_dtype" in out:
            out["kv_dtype"] = parse_kv_dtype_or_auto("kv_dtype", out["kv_dtype"])
    except InputError as exc:
        raise where("kv_dtype", exc) from None
    for key, kind in (("engine", Engine), ("dtype", WeightDType)):
        if key in out:
            try:
                out[key] = kind(out[key])
            except ValueError:
                choices = ", ".join(m.value for m in kind)
                raise InputError(f"{file}: {key}: expected one of {choices}, got "
                                 f"{out[key]!r}") from None
    for key, choices in (("speculative_method", tuple(m.value for m in SpecMethod)),
                         ("quantization", tuple(m.value for m in LoadQuantization))):
        if key in out and out[key] not in choices:
            raise InputError(f"{file}: {key}: expected one of {', '.join(choices)}, got "
                             f"{out[key]!r}")
    if "prices" in out:
        prices = {}
        for name, price in out["prices"].items():
            try:
                prices[_price(f"{name}={price}")[0]] = price
            except InputError as exc:
                raise where("prices", exc) from None
        out["prices"] = prices
    return out


def plan_cmd(
    model: Annotated[str | None, typer.Argument(
        help="Bundled spec id (see `kvplan specs`), a spec YAML file, or a HuggingFace "
             "config.json (or a folder holding one); optional with --scenario.")] = None,
    concurrency: Annotated[int | None, typer.Option(
        *CONCURRENCY_FLAGS, min=1, help="Concurrent requests to serve (default 1).")] = None,
    context: Annotated[int | None, typer.Option(
        *CONTEXT_FLAGS, parser=tokens_option, metavar="TOKENS",
        help="Tokens per request (32k, 1m accepted); default: the model's max length as the "
             "engine derives it (vLLM's max_model_len, SGLang's context length, TensorRT-LLM's "
             "max_seq_len).")] = None,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="GPU, or several to search them all: H100,H200,B200 (default H100-80GB; "
                      "see `kvplan gpus`).")] = None,
    gpus_per_node: Annotated[int | None, typer.Option("--gpus-per-node", min=1,
                                                      help="GPUs per node (default 8).")] = None,
    nodes: Annotated[int | None, typer.Option("--nodes", min=1,
                                              help="Nodes at most (default 1).")] = None,
    price: Annotated[list[str] | None, typer.Option(
        "--price", metavar="GPU=USD_PER_HOUR",
        help="A GPU's price per hour (repeatable): plans are ranked by the cost per hour of "
             "the whole layout, with the cost per million output tokens where the time model "
             "gives it.")] = None,
    prices: Annotated[Path | None, typer.Option(
        "--prices", metavar="FILE", help="A YAML/JSON mapping GPU: USD per hour.")] = None,
    scenario: Annotated[Path | None, typer.Option(
        "--scenario", metavar="FILE.yaml",
        help="The question as a file: model, target, hardware list, prices and engine options "
             "(examples/plan-scenario.yaml); flags given override it.")] = None,
    engine: Annotated[Engine | None, typer.Option(
        "--engine", help="The serving engine (default vllm).")] = None,
    engine_version: EngineVersionOpt = None,
    engine_arg: EngineArgOpt = None,
    platform: PlatformOpt = None,
    cpu_amx: CpuAmxOpt = None,
    kv_dtype: Annotated[str | None, typer.Option(
        "--kv-dtype", "--kv-cache-dtype",
        help="Only this KV dtype (default: search every dtype the engine runs on the GPU; "
             "auto: the engine's own, as `kvplan estimate` takes it).")
    ] = None,
    mem_fraction: Annotated[float | None, typer.Option(
        "--mem-fraction", "--gpu-memory-utilization", "--mem-fraction-static", min=0.01,
        max=1.0, help="Only this memory fraction (default: the engine's default for its "
                      "version, and its documented maximum).")] = None,
    max_num_seqs: MaxNumSeqsOpt = None,
    max_num_batched_tokens: MaxNumBatchedTokensOpt = None,
    speculative_method: SpecMethodOpt = None,
    num_speculative_tokens: SpecTokensOpt = 0,
    spec_mean_accept_len: so.SpecMeanAcceptLenOpt = None,
    spec_acceptance_rate: so.SpecAcceptanceRateOpt = None,
    quantization: QuantizationOpt = None,
    mxfp4_backend: Mxfp4BackendOpt = None,
    dtype: DTypeOpt = WeightDType.auto,
    gpu_mem_gib: GpuMemGibOpt = None,
    weights_gib: WeightsGibOpt = None,
    reserve_gib: ReserveGibOpt = None,
    rate: RateOpt = None,
    slo_ttft_ms: SloTtftOpt = None,
    slo_tpot_ms: SloTpotOpt = None,
    slo_percentile: SloPercentileOpt = 90,
    jobs: JobsOpt = None,
    executor: ExecutorOpt = Executor.process,
    no_dp_attention: NoDpAttentionOpt = False,
    num_requests: NumRequestsOpt = None,
    input_len: InputLenOpt = 1024,
    output_len: OutputLenOpt = 128,
    seed: SeedOpt = 0,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    limit_mm_per_prompt: LimitMmOpt = None,
    skip_mm_profiling: SkipMmProfilingOpt = False,
    shared_prefix: Annotated[int, typer.Option(
        "--shared-prefix-tokens", "--shared-prefix", parser=tokens_or_zero_option,
        metavar="TOKENS",
        help="Tokens of a prefix every request shares, cached once (whole blocks only).")] = 0,
    kv_offloading_size: oo.KvOffloadingSizeOpt = None,
    kv_offloading_backend: oo.KvOffloadingBackendOpt = oo.OffloadBackend.native,
    lmcache_chunk_size: oo.LmcacheChunkOpt = 256, lmcache_cpu_gib: oo.LmcacheCpuOpt = None,
    lmcache_disk_gib: oo.LmcacheDiskOpt = None, hierarchical_cache: oo.HicacheOpt = False,
    hicache_ratio: oo.HicacheRatioOpt = 2.0, hicache_size: oo.HicacheSizeOpt = 0.0,
    hicache_storage_backend: oo.HicacheStorageOpt = None,
    host_cache_size: oo.HostCacheOpt = None, host_mem_gib: oo.HostMemOpt = None,
    host_link: oo.HostLinkOpt = None, disk_read_gbps: oo.DiskReadOpt = None,
    prefix_hit_rate: oo.PrefixHitOpt = 0.0,
    moe_a2a_backend: ma.MoeA2aBackendOpt = None, deepep_mode: ma.DeepepModeOpt = None,
    moe_dense_tp_size: ma.MoeDenseTpOpt = None, enable_dp_lm_head: ma.DpLmHeadOpt = False,
    moe_gemm: co.MoeGemmOpt = None, fp8_moe_gemm: co.Fp8MoeGemmOpt = None,
    moe_gemm_by_rows: co.MoeGemmByRowsOpt = None, fp8_dense_gemm: co.Fp8DenseGemmOpt = None,
    ungraphed_launch_us: co.UngraphedLaunchOpt = None, gemm_by_shape: co.GemmByShapeOpt = False,
    kernel_tables: co.KernelTablesOpt = False,
    mxfp4_experts_by_width: co.Mxfp4ExpertsByWidthOpt = False,
    fmt: FormatOpt = OutputFormat.table,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw requests per replica against context for the candidate "
                       "TP degrees (PNG/SVG; needs matplotlib: kvplan\\[plot]).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --plot.")] = False,
    disagg: DisaggOpt = False,
    prefill_tp: PrefillTpOpt = 1,
    decode_tp: DecodeTpOpt = 1,
    prefill_pp: PrefillPpOpt = 1,
    decode_pp: DecodePpOpt = 1,
    prefill_dp: PrefillDpOpt = 1,
    decode_dp: DecodeDpOpt = 1,
    prefill_ep: PrefillEpOpt = 1,
    decode_ep: DecodeEpOpt = 1,
    prefill_dp_attention: PrefillDpAttnOpt = False,
    decode_dp_attention: DecodeDpAttnOpt = False,
    link: LinkOpt = DEFAULT_FABRIC,
    rails: RailsOpt = None,
    connector: ConnectorOpt = None,
    block_size: DisaggBlockOpt = None,
    scheduler_recv_interval: SchedulerRecvIntervalOpt = 1,
    explain: ExplainOpt = False,
    allow_long_context: AllowLongContextOpt = False,
) -> None:
    """Can MODEL serve N requests of L tokens on this hardware? FITS, BORDERLINE (inside
    kvplan's measured error) or DOES NOT FIT (exit 3), the margin, layout, launch command and
    what to change. With --rate and SLOs: the fewest GPUs meeting them in the simulator."""
    from kvplan.analysis.offload_run import plan_offload
    from kvplan.analysis.planner import PlanRequest, plan_serving, planned_spec
    from kvplan.present.capacity_view import plan_view
    from kvplan.present.cost_rules_view import with_cost_rules
    from kvplan.present.offload_view import with_offload

    ask = oo.offload_ask(**{k: v for k, v in locals().items() if k in oo.ASK_KEYS})

    with handle_errors():
        # The time model's opt-in rules: vLLM's ungraphed launches in the simulator only.
        rules = co.cost_rules_of(locals())
        rules.check(engine=(engine or DEFAULT_ENGINE).value, simulated=rate is not None
                    and not disagg)
        moe_a2a = ma.moe_a2a_options(locals(), (engine or DEFAULT_ENGINE).value)
        check_disagg_flags(disagg, {
            "--scenario": scenario, "--nodes": nodes, "--max-num-seqs": max_num_seqs,
            "--max-num-batched-tokens": max_num_batched_tokens,
            "--speculative-method": speculative_method, "--quantization": quantization,
            "--gpu-mem-gib": gpu_mem_gib, "--weights-gib": weights_gib,
            "--reserve-gib": reserve_gib, "--trace": trace, "--prices": prices,
            "--num-requests": num_requests, "--plot": plot, "--platform": platform,
            "--cpu-amx/--no-cpu-amx": cpu_amx,
            "--limit-mm-per-prompt": limit_mm_per_prompt,
            "--skip-mm-profiling": skip_mm_profiling or None,
            # The disaggregated plan's ratio is the formulas', not a simulation.
            "--engine-arg": engine_arg,
            # One MoE all-to-all for both roles is not read (each role launches its own).
            "--moe-a2a-backend": moe_a2a or None}, {
            "--prefill-tp": prefill_tp != 1, "--decode-tp": decode_tp != 1,
            "--prefill-pp": prefill_pp != 1, "--decode-pp": decode_pp != 1,
            "--prefill-dp": prefill_dp != 1, "--decode-dp": decode_dp != 1,
            "--prefill-ep": prefill_ep != 1, "--decode-ep": decode_ep != 1,
            "--prefill-dp-attention": prefill_dp_attention,
            # --link / --rails: also --rate's fabric between nodes (checked below).
            "--decode-dp-attention": decode_dp_attention, "--connector": connector,
            "--block-size": block_size,
            "--scheduler-recv-interval": scheduler_recv_interval != 1})
    if disagg:
        with handle_errors():
            emit(disagg_plan_view({
                "model": model, "concurrency": concurrency, "rate": rate, "gpu": gpu,
                "gpus_per_node": gpus_per_node, "engine": engine or DEFAULT_ENGINE,
                "engine_version": engine_version, "mem_fraction": mem_fraction,
                "kv_dtype": None if kv_dtype is None else parse_kv_dtype_or_auto("--kv-dtype",
                                                                                 kv_dtype),
                "slo_ttft_ms": slo_ttft_ms, "slo_tpot_ms": slo_tpot_ms,
                "prices": dict(_price(p) for p in price or ()), "input_len": input_len,
                "output_len": output_len, "link": link, "rails": rails,
                "connector": connector, "block_size": block_size,
                "scheduler_recv_interval": scheduler_recv_interval,
                "allow_long_context": allow_long_context, "cost_rules": rules,
                **{f"{role}_{k}": v for role, vals in (
                    ("prefill", (prefill_tp, prefill_pp, prefill_dp, prefill_ep,
                                 prefill_dp_attention)),
                    ("decode", (decode_tp, decode_pp, decode_dp, decode_ep,
                                decode_dp_attention)))
                   for k, v in zip(("tp", "pp", "dp", "ep", "dp_attention"), vals,
                                   strict=True)}}), fmt)
        return
    if rate is not None:
        if ask is not None or shared_prefix or quantization is not None:
            with handle_errors():
                raise InputError("--rate: the simulator runs without offload tiers, a shared "
                                 "prefix or --quantization; plan them without --rate")
        _rate_plan(model, allow_long=allow_long_context, rate=rate, slo_ttft_ms=slo_ttft_ms,
                   slo_tpot_ms=slo_tpot_ms,
                   percentile=slo_percentile, gpu=gpu, context=context,
                   gpus_per_node=gpus_per_node, nodes=nodes, engine=engine,
                   engine_version=engine_version, kv_dtype=kv_dtype,
                   platform=None if platform is None else platform.value, cpu_amx=cpu_amx,
                   limit_mm_per_prompt=limit_mm_per_prompt,
                   skip_mm_profiling=skip_mm_profiling or None, jobs=jobs, executor=executor,
                   engine_args=tuple(engine_arg or ()), max_num_seqs=max_num_seqs,
                   dp_attention=not no_dp_attention, link=link, rails=rails,
                   cost_rules=rules if rules.on else None, moe_a2a=moe_a2a,
                   max_num_batched_tokens=max_num_batched_tokens,
                   workload={"num_requests": num_requests, "input_len": input_len,
                             "output_len": output_len, "seed": seed, "trace": trace,
                             "trace_format": trace_format}, fmt=fmt, explain=explain)
        return
    with handle_errors():
        if link != DEFAULT_FABRIC or rails is not None:
            raise InputError("--link / --rails: need --disagg (the link KV crosses) or --rate "
                             "(the fabric between nodes a layout's collectives cross)")
        if (slo_ttft_ms is not None or slo_tpot_ms is not None or trace is not None
                or jobs is not None or executor is not Executor.process or engine_arg
                or no_dp_attention):
            raise InputError("--slo-ttft-ms / --slo-tpot-ms / --trace / --jobs / --executor / "
                             "--engine-arg / --no-dp-attention: need --rate (plan then searches "
                             "the fewest GPUs that meet the SLOs in the simulator)")
        given: dict[str, Any] = {}
        if scenario is not None:
            from kvplan.sources.files import shown_path
            from kvplan.sources.scenario import read_scenario

            given = _from_file(read_scenario(scenario), shown_path(scenario))
        flags = {
            "model": model, "concurrency": concurrency, "gpu": gpu,
            "gpus_per_node": gpus_per_node, "nodes": nodes, "engine": engine,
            "engine_version": engine_version, "mem_fraction": mem_fraction,
            "platform": None if platform is None else platform.value, "cpu_amx": cpu_amx,
            "max_num_seqs": max_num_seqs, "max_num_batched_tokens": max_num_batched_tokens,
            "speculative_method": None if speculative_method is None
            else speculative_method.value,
            "num_speculative_tokens": num_speculative_tokens or None,
            "spec_mean_accept_len": spec_mean_accept_len,
            "spec_acceptance_rate": spec_acceptance_rate,
            "quantization": None if quantization is None else quantization.value,
            "mxfp4_backend": None if mxfp4_backend is None else mxfp4_backend.value,
            "dtype": None if dtype is WeightDType.auto else dtype,
            "gpu_mem_gib": gpu_mem_gib, "weights_gib": weights_gib, "reserve_gib": reserve_gib,
            "context": context,
            "kv_dtype": None if kv_dtype is None else parse_kv_dtype_or_auto("--kv-dtype",
                                                                             kv_dtype),
            "shared_prefix": shared_prefix or None,
            "allow_long_context": allow_long_context or None,
            "limit_mm_per_prompt": limit_mm_per_prompt,
            "skip_mm_profiling": skip_mm_profiling or None,
            "cost_rules": rules if rules.on else None, "moe_a2a": moe_a2a or None,
        }
        opts = {**given, **{k: v for k, v in flags.items() if v is not None}}
        if prices is not None or price:
            table = dict(given.get("prices", {}))
            if prices is not None:
                from kvplan.sources.files import shown_path
                from kvplan.sources.scenario import read_prices

                table |= _from_file({"prices": read_prices(prices)},
                                    shown_path(prices))["prices"]
            table |= dict(_price(p) for p in price or ())
            opts["prices"] = table
        result, spec, req = _plan(opts, PlanRequest, plan_serving)
        result, tiers = plan_offload(spec, req, result, ask)
        if plot is not None:  # issue 28 item 7
            from kvplan.cli.plots import plot_plan

            plot_plan(plot, spec, result.to_dict(), gpus_per_node=opts.get("gpus_per_node") or 8,
                      force=force, platform=opts.get("platform"), cpu_amx=opts.get("cpu_amx"))
        shown = planned_spec(spec, req, result)
        emit(with_cost_rules(with_offload(plan_view(shown, result), tiers), rules.records(
            req.gpu_types or (req.gpu,), moe=spec.moe is not None)), fmt, explain=explain)
    if result.verdict == "DOES NOT FIT":
        raise typer.Exit(EXIT_DOES_NOT_FIT)


def _acceptance(opts: dict[str, Any], k: int) -> float | None:
    """The drafts' mean acceptance length from --spec-mean-accept-len / --spec-acceptance-rate
    (simulate's options, kvplan.analysis.simulate.spec_acceptance, the one reading of them), or
    None where neither is given: the cost model then prices no draft (it never defaults one)."""
    length, rates = opts.get("spec_mean_accept_len"), opts.get("spec_acceptance_rate")
    if length is None and rates is None:
        return None
    if not opts.get("speculative_method"):
        raise InputError("plan --spec-mean-accept-len / --spec-acceptance-rate: needs "
                         "--speculative-method")
    if length is not None and rates is not None:
        raise InputError("plan: --spec-mean-accept-len or --spec-acceptance-rate, not both")
    from kvplan.analysis.simulate.spec_acceptance import Acceptance

    return Acceptance.of(k=k, mean_accept_len=length,
                         rates=so.parse_rates(rates)).mean_accept_len


def _plan(opts: dict[str, Any], request: Any, plan_serving: Any) -> tuple[Any, Any, Any]:
    """The request from the merged options (file, then flags), its plan, the spec and the
    request."""
    from kvplan._util.units import gib_to_bytes
    from kvplan.analysis.inputs import mm_fields, platform_fields, speculative_tokens
    from kvplan.hardware.gpus import device_of_size, get_gpu

    if opts.get("model") is None:
        raise InputError("MODEL: missing (give it, or `model:` in --scenario)")
    spec = load_spec(opts["model"])
    engine = opts.get("engine") or DEFAULT_ENGINE
    ctx = opts.get("context")
    if ctx is None:
        ctx = default_context(spec, engine)
        if ctx is None:
            raise InputError("--context: the model's max length is unknown; give --context")
    extra: dict[str, Any] = {}
    if opts.get("gpu_mem_gib") is not None:
        if opts.get("gpu") is not None:
            raise InputError("--gpu and --gpu-mem-gib: give one, not both")
        device = device_of_size(gib_to_bytes(opts["gpu_mem_gib"]))
        # As `kvplan estimate --gpu-mem-gib`: no preset decides the rest (NVLink assumed).
        extra["nvlink"] = True
        gpus = (device,)
    else:
        names = [n.strip() for n in (opts.get("gpu") or DEFAULT_GPU).split(",") if n.strip()]
        if not names:
            raise InputError("--gpu: expected a GPU name or a comma-separated list")
        gpus = tuple(dict.fromkeys(get_gpu(n) for n in names))
    for key, field in (("weights_gib", "weights_bytes"), ("reserve_gib", "reserve_bytes")):
        if opts.get(key) is not None:
            extra[field] = gib_to_bytes(opts[key])
    extra.update(platform_fields(opts.get("platform"), opts.get("cpu_amx")))
    extra.update(mm_fields(opts.get("limit_mm_per_prompt"), bool(opts.get("skip_mm_profiling"))))
    for key in ("speculative_method", "quantization", "shared_prefix", "mxfp4_backend"):
        if opts.get(key) is not None:
            extra[key] = opts[key]
    extra.update(opts.get("moe_a2a") or {})  # SGLang's MoE all-to-all (cli.moe_a2a_opts)
    if opts.get("dtype") not in (None, WeightDType.auto):
        extra["dtype"] = WeightDType(opts["dtype"]).value
    extra["num_speculative_tokens"] = speculative_tokens(
        engine, opts.get("speculative_method"), opts.get("num_speculative_tokens") or 0)
    dtype = opts.get("kv_dtype")
    req = request(
        concurrency=opts.get("concurrency") or 1, context=ctx, gpu=gpus[0],
        gpu_types=gpus if len(gpus) > 1 else (), gpus_per_node=opts.get("gpus_per_node") or 8,
        nodes=opts.get("nodes") or 1, engine=engine,
        engine_version=opts.get("engine_version"), kv_dtypes=None if dtype is None else (dtype,),
        mem_fraction=opts.get("mem_fraction"), max_num_seqs=opts.get("max_num_seqs"),
        max_num_batched_tokens=opts.get("max_num_batched_tokens"),
        prices=opts.get("prices") or {}, extra=extra,
        allow_long_context=bool(opts.get("allow_long_context")),
        cost_rules=opts.get("cost_rules"),
        spec_mean_accept_len=_acceptance(opts, extra["num_speculative_tokens"]))
    return plan_serving(spec, req), spec, req


def _rate_plan(model: str | None, *, workload: dict[str, Any], fmt: OutputFormat,
               explain: bool = False, allow_long: bool = False, **given: Any) -> None:
    """`plan --rate`: parse, one library call (kvplan.analysis.rate_plan), present."""
    from kvplan.analysis.rate_plan import plan_for_rate
    from kvplan.analysis.simulate.workload import WorkloadOptions
    from kvplan.present.cost_rules_view import with_cost_rules
    from kvplan.present.rate_plan_view import rate_plan_view

    with handle_errors():
        if model is None:
            raise InputError("MODEL: missing (--rate does not read --scenario)")
        trace = workload["trace"]
        context = given.pop("context")
        if given.get("kv_dtype") is not None:
            given["kv_dtype"] = parse_kv_dtype_or_auto("--kv-dtype", given["kv_dtype"])
        options = {k: v for k, v in given.items() if v is not None}
        spec = load_spec(model)
        if context is not None:
            from kvplan.engines.context import check_context

            check_context(spec, context, engine=options.get("engine") or DEFAULT_ENGINE,
                          allow_long=allow_long)
        with progress_shown():  # a simulation per layout tried
            result = plan_for_rate(
                spec, model=model, rate=given["rate"],
                slo_ttft_ms=given["slo_ttft_ms"], slo_tpot_ms=given["slo_tpot_ms"],
                context=context,
                **{k: options[k] for k in ("percentile", "gpu", "gpus_per_node", "nodes",
                                           "engine", "engine_version", "kv_dtype", "jobs",
                                           "executor", "platform", "cpu_amx",
                                           "limit_mm_per_prompt", "skip_mm_profiling",
                                           "engine_args", "max_num_seqs",
                                           "max_num_batched_tokens", "cost_rules",
                                           "moe_a2a", "dp_attention", "link", "rails")
                   if k in options},
                workload=WorkloadOptions(**{**workload, "rate": given["rate"],
                                            "trace": None if trace is None else str(trace)}))
        emit(with_cost_rules(rate_plan_view(result), list(result.cost_rules)), fmt,
             explain=explain)
    if result.best is None:
        raise typer.Exit(EXIT_DOES_NOT_FIT)
