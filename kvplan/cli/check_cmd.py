"""`kvplan check URL`: hold kvplan's plan against a running vLLM or SGLang server.
Exit 0 when they agree within the engine's measured error, 4 when they do not, 2 on bad input
or a server that cannot be read."""

import time
from dataclasses import replace
from typing import Annotated, Any

import typer

from kvplan.cli.common import (
    CpuAmxOpt,
    DisableHybridOpt,
    DTypeOpt,
    EngineVersionOpt,
    ExplainOpt,
    FormatOpt,
    HybridManager,
    HybridManagerOpt,
    PlatformOpt,
    PrefixCachingOpt,
    SpecMethodOpt,
    SpecTokensOpt,
    StateDType,
    StateDTypeOpt,
    WeightDType,
    handle_errors,
    load_spec,
)
from kvplan.cli.vocab import VLLM_PANEL, kv_dtype_option, tokens_option
from kvplan.engines.base import Engine
from kvplan.present.render import OutputFormat, emit, warn

EXIT_DISAGREE = 4

# What a server can state itself (the stated value wins over the server's, and a difference
# between the two is a likely cause); every other option only completes the plan.
SERVER_SETTINGS = ("context", "kv_dtype", "block_size", "mem_fraction", "kv_cache_memory",
                   "kv_budget_gib", "prefix_caching", "ssm_dtype", "engine_version", "tp",
                   "max_num_seqs", "weights_gib")


def check_cmd(
    url: Annotated[str, typer.Argument(
        help="The server's base URL (http://127.0.0.1:8000); its /metrics, /v1/models, "
             "/version (vLLM) or /get_server_info (SGLang) are read.")],
    model: Annotated[str | None, typer.Option(
        "--model", help="The model's spec, config.json or Hub id, when the server's model id "
                        "is not one kvplan can load.")] = None,
    engine: Annotated[Engine | None, typer.Option(
        "--engine", help="vllm or sglang (default: detected from the endpoints).")] = None,
    context: Annotated[int | None, typer.Option(
        "--context", "-c", "--max-model-len", "--context-length", parser=tokens_option,
        metavar="TOKENS", help="What max_model_len was meant to be (default: the server's).")
    ] = None,
    kv_dtype: Annotated[str | None, typer.Option(
        "--kv-dtype", "--kv-cache-dtype", parser=kv_dtype_option, metavar="DTYPE",
        help="What the KV dtype was meant to be (default: the server's cache_dtype).")] = None,
    block_size: Annotated[int | None, typer.Option(
        "--block-size", "--page-size", min=1,
        help="Tokens per block, if one was chosen (default: the server's choice).")] = None,
    tp: Annotated[int | None, typer.Option(
        "--tp", "--tensor-parallel-size", "-tp", min=1,
        help="Tensor-parallel degree (vLLM does not expose it: default 1; SGLang's tp_size).")
    ] = None,
    pp: Annotated[int, typer.Option("--pp", "--pipeline-parallel-size", min=1,
                                    help="Pipeline-parallel stages.")] = 1,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="The server's GPU preset (not exposed by the server).")] = None,
    gpu_mem_gib: Annotated[float | None, typer.Option(
        "--gpu-mem-gib", min=0.001, help="Device total in GiB (instead of --gpu).")] = None,
    mem_fraction: Annotated[float | None, typer.Option(
        "--mem-fraction", "--gpu-memory-utilization", "--mem-fraction-static", min=0.0,
        max=1.0, help="What the memory fraction was meant to be (default: the server's).")
    ] = None,
    weights_gib: Annotated[float | None, typer.Option(
        "--weights-gib", min=0.0, help="Weights per GPU in GiB (SGLang: default the server's "
                                       "memory_usage.weight).")] = None,
    reserve_gib: Annotated[float | None, typer.Option(
        "--reserve-gib", min=0.0, help="Activation + runtime reserve per GPU in GiB.")] = None,
    kv_budget_gib: Annotated[float | None, typer.Option(
        "--kv-budget-gib", min=0.0, help="KV budget per GPU in GiB (vLLM's 'Available KV cache "
                                         "memory'): checks the layout alone.")] = None,
    kv_cache_memory: Annotated[int | None, typer.Option(
        "--kv-cache-memory", min=1, help="KV budget per GPU in bytes (vLLM --kv-cache-memory; "
                                         "default: the server's, if it states one).")] = None,
    max_num_seqs: Annotated[int | None, typer.Option(
        "--max-num-seqs", "--max-running-requests", min=1,
        help="The engine's cap on concurrent requests.")] = None,
    max_num_batched_tokens: Annotated[int | None, typer.Option(
        "--max-num-batched-tokens", min=1, parser=tokens_option, metavar="TOKENS",
        help="vLLM's chunked-prefill budget (not exposed by the server; default: that of "
             "`vllm serve` for the GPU).")] = None,
    engine_version: EngineVersionOpt = None,
    platform: PlatformOpt = None,
    cpu_amx: CpuAmxOpt = None,
    hybrid_manager: HybridManagerOpt = HybridManager.auto,
    disable_hybrid: DisableHybridOpt = False,
    prefix_caching: PrefixCachingOpt = None,
    ssm_dtype: StateDTypeOpt = StateDType.auto,
    speculative_method: SpecMethodOpt = None,
    num_speculative_tokens: SpecTokensOpt = 0,
    dtype: DTypeOpt = WeightDType.auto,
    enforce_eager: Annotated[bool, typer.Option(
        "--enforce-eager", rich_help_panel=VLLM_PANEL,
        help="vLLM without CUDA graphs (nothing reserved for them).")
    ] = False,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.1, max=600.0,
        help="Seconds to read the server, all endpoints together.")] = 3.0,
    watch: Annotated[bool, typer.Option(
        "--watch", help="After the check, a live view of KV usage, running and waiting "
                        "requests and prefix hits against the plan, with the time to KV "
                        "exhaustion at the current growth (Ctrl-C stops).")] = False,
    once: Annotated[bool, typer.Option(
        "--once", help="The load view once (two readings --interval apart, for the growth), "
                       "for scripts: with --format json.")] = False,
    interval: Annotated[float, typer.Option(
        "--interval", min=0.2, max=3600.0, help="Seconds between readings (--watch, --once).")
    ] = 2.0,
    fmt: FormatOpt = OutputFormat.table,
    explain: ExplainOpt = False,
) -> None:
    """Check a running vLLM or SGLang server against kvplan's plan for the same settings:
    KV blocks, KV tokens, max concurrency and KV memory, predicted against live. Exit 0 agree,
    4 disagree, 2 bad input or server unreachable."""
    from kvplan.analysis.check import check_deployment, load_view
    from kvplan.analysis.server_read import read_load, read_server
    from kvplan.present.check_view import check_view, load_view_table, verdict_line
    from kvplan.present.check_view import watch as watch_screen

    given: dict[str, Any] = {
        "context": context, "kv_dtype": kv_dtype, "block_size": block_size, "tp": tp,
        "mem_fraction": mem_fraction, "kv_cache_memory": kv_cache_memory,
        "kv_budget_gib": kv_budget_gib, "prefix_caching": prefix_caching,
        "ssm_dtype": None if ssm_dtype is StateDType.auto else ssm_dtype.value,
        "engine_version": engine_version, "max_num_seqs": max_num_seqs,
        "weights_gib": weights_gib}
    stated = {k: v for k, v in given.items() if v is not None}
    options = {k: v for k, v in {
        "gpu": gpu, "gpu_mem_gib": gpu_mem_gib, "pp": pp, "reserve_gib": reserve_gib,
        "max_num_batched_tokens": max_num_batched_tokens,
        "platform": None if platform is None else platform.value, "cpu_amx": cpu_amx,
        "hybrid_manager": hybrid_manager.value, "disable_hybrid": disable_hybrid,
        "speculative_method": None if speculative_method is None else speculative_method.value,
        "num_speculative_tokens": num_speculative_tokens,
        "dtype": None if dtype is WeightDType.auto else dtype.value,
        "enforce_eager": enforce_eager}.items() if v is not None}
    with handle_errors():
        if watch and once:
            from kvplan._util.errors import InputError

            raise InputError("--watch and --once: give one")
        base, live = read_server(url, engine=engine, timeout_s=timeout)
        name = model or live.model_id
        if name is None:
            from kvplan._util.errors import InputError

            raise InputError("--model: the server names no model; give --model")
        try:
            spec = load_spec(name)
        except Exception as exc:  # noqa: BLE001 - one line naming the option to use
            if model is not None:
                raise
            from kvplan._util.errors import InputError

            raise InputError(f"--model: the server serves {name!r}, which kvplan cannot load "
                             f"({exc}); give --model") from None
        result = check_deployment(spec, live, url=base, stated=stated, options=options)
        if watch:
            watch_screen(result, lambda: read_load(base, live.engine, timeout_s=timeout),
                         interval_s=interval, sleep=time.sleep)
            return
        if once:
            first = read_load(base, live.engine, timeout_s=timeout)
            time.sleep(interval)
            now = read_load(base, live.engine, timeout_s=timeout)
            view = load_view_table(result, load_view(result, now, first))
            records = {**check_view(result).records, "load": view.records["load"]}
            emit(replace(view, records=records), fmt)
        else:
            emit(check_view(result), fmt, explain=explain)
        for d in result.disagreements:
            warn(f"kvplan: check: {verdict_line(d)}")
    if not result.agree:
        raise typer.Exit(EXIT_DISAGREE)
