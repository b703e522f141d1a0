"""`kvplan report`: the plan (or the estimate) as one file to share: self-contained HTML with
charts, or Markdown without. Parse; kvplan.analysis.report computes; kvplan.present.report_view
renders; the file is written atomically (never over an existing one without --force)."""

import importlib.util
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

import kvplan.cli.offload_opts as oo
from kvplan._util.errors import InputError
from kvplan.analysis.plan_types import DOES_NOT_FIT
from kvplan.cli.common import EXIT_DOES_NOT_FIT, ModelArg, handle_errors, load_spec
from kvplan.cli.outputs import atomic_write, check_output
from kvplan.cli.vocab import (
    CONCURRENCY_FLAGS,
    CONTEXT_FLAGS,
    parse_kv_dtype_or_auto,
    tokens_option,
)
from kvplan.engines.base import DEFAULT_ENGINE, Engine
from kvplan.engines.context import default_context
from kvplan.present.render import warn
from kvplan.sources.files import shown_path

PLOT_HINT = "pip install 'kvplan[plot]'"


class ReportFormat(str, Enum):
    html = "html"
    markdown = "markdown"


def report_cmd(
    model: ModelArg,
    output: Annotated[Path, typer.Option(
        "--output", "-o", help="The file to write (.html, or .md with --format markdown).")],
    concurrency: Annotated[int | None, typer.Option(
        *CONCURRENCY_FLAGS, min=1,
        help="Concurrent requests to serve: a plan (`kvplan plan`) with its launch command; "
             "without it, an estimate (`kvplan estimate --gpu`) at --tp.")] = None,
    context: Annotated[int | None, typer.Option(
        *CONTEXT_FLAGS, parser=tokens_option, metavar="TOKENS",
        help="Tokens per request (32k, 1m accepted); default: the model's max length as the "
             "engine derives it.")] = None,
    gpu: Annotated[str, typer.Option("--gpu", help="GPU (see `kvplan gpus`).")] = "H100-80GB",
    gpus_per_node: Annotated[int, typer.Option("--gpus-per-node", min=1)] = 8,
    nodes: Annotated[int, typer.Option("--nodes", min=1)] = 1,
    tp: Annotated[int, typer.Option(
        "--tp", "--tensor-parallel-size", min=1,
        help="Tensor-parallel degree of the estimate (a plan searches its own).")] = 1,
    engine: Annotated[Engine, typer.Option("--engine")] = DEFAULT_ENGINE,
    engine_version: Annotated[str | None, typer.Option("--engine-version")] = None,
    kv_dtype: Annotated[str | None, typer.Option(
        "--kv-dtype", "--kv-cache-dtype",
        help="KV dtype (a plan: only this one, default every dtype the engine runs; an "
             "estimate: default auto). auto: the engine's own, as `kvplan estimate` takes it: "
             "bf16, or for vLLM the KV dtype the checkpoint's quantization_config declares.")
    ] = None,
    mem_fraction: Annotated[float | None, typer.Option(
        "--mem-fraction", "--gpu-memory-utilization", "--mem-fraction-static", min=0.01,
        max=1.0, help="Memory fraction (default: the engine's).")] = None,
    fmt: Annotated[ReportFormat, typer.Option(
        "--format", "-f", help="html: one self-contained page with charts (needs matplotlib: "
                               "kvplan\\[plot]); markdown: the same without charts.")
    ] = ReportFormat.html,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --output.")] = False,
    kv_offloading_size: oo.KvOffloadingSizeOpt = None,
    kv_offloading_backend: oo.KvOffloadingBackendOpt = oo.OffloadBackend.native,
    lmcache_chunk_size: oo.LmcacheChunkOpt = 256, lmcache_cpu_gib: oo.LmcacheCpuOpt = None,
    lmcache_disk_gib: oo.LmcacheDiskOpt = None, hierarchical_cache: oo.HicacheOpt = False,
    hicache_ratio: oo.HicacheRatioOpt = 2.0, hicache_size: oo.HicacheSizeOpt = 0.0,
    hicache_storage_backend: oo.HicacheStorageOpt = None,
    host_cache_size: oo.HostCacheOpt = None, host_mem_gib: oo.HostMemOpt = None,
    host_link: oo.HostLinkOpt = None, disk_read_gbps: oo.DiskReadOpt = None,
    prefix_hit_rate: oo.PrefixHitOpt = 0.0,
) -> None:
    """One file to share: the verdict and launch lines, the memory per GPU, capacity against
    context, the KV-cache groups and where each number comes from. Exit 0, or 3 when the plan
    (-n) does not fit, as `kvplan plan`; the file is written either way."""
    from kvplan.analysis.report import build_report
    from kvplan.hardware.gpus import get_gpu
    from kvplan.present.report_view import to_report_html, to_report_markdown

    ask = oo.offload_ask(**{k: v for k, v in locals().items() if k in oo.ASK_KEYS})
    with handle_errors():
        html = fmt is ReportFormat.html
        if html and importlib.util.find_spec("matplotlib") is None:
            raise InputError(f"--format html: the charts need matplotlib: {PLOT_HINT} (or "
                             "--format markdown)")
        spec = load_spec(model)
        check_output("-o", output, force=force, inputs=[Path(spec.path)])  # before the work
        ctx = context if context is not None else default_context(spec, engine)
        if ctx is None:
            raise InputError("--context: the model's max length is unknown; give --context")
        data = build_report(
            spec, context=ctx, gpu=get_gpu(gpu), concurrency=concurrency,
            gpus_per_node=gpus_per_node, nodes=nodes, engine=engine,
            engine_version=engine_version, tp=tp, mem_fraction=mem_fraction,
            kv_dtype=None if kv_dtype is None else parse_kv_dtype_or_auto("--kv-dtype",
                                                                           kv_dtype),
            curves=html, offload=ask)
        if data.kv_dtype_note is not None:
            warn(f"kvplan: warning: {data.kv_dtype_note}")
        text = to_report_html(data) if html else to_report_markdown(data)
        atomic_write("-o", output, lambda tmp: tmp.write_text(text, encoding="utf-8"),
                     force=force, inputs=[Path(spec.path)])
        verdict = None if data.plan is None else data.plan.verdict
        warn(f"kvplan: wrote {shown_path(output)}{'' if verdict is None else f' ({verdict})'}")
    if verdict == DOES_NOT_FIT:  # as `kvplan plan` exits (issue 32): the file is written
        raise typer.Exit(EXIT_DOES_NOT_FIT)
