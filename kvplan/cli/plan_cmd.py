"""`kvplan plan`: one command answers "can I serve this?" with a verdict and the launch command."""

from pathlib import Path
from typing import Annotated

import typer

from kvplan._util.errors import InputError
from kvplan.cli.common import FormatOpt, ModelArg, handle_errors, load_spec
from kvplan.cli.vocab import parse_kv_dtype, parse_tokens
from kvplan.engines.base import DEFAULT_ENGINE, Engine
from kvplan.present.render import OutputFormat, emit

EXIT_DOES_NOT_FIT = 3


def plan_cmd(
    model: ModelArg,
    concurrency: Annotated[int, typer.Option(
        "--concurrency", "-n", min=1, help="Concurrent requests to serve.")] = 1,
    context: Annotated[str | None, typer.Option(
        "--context", "-c", "--max-model-len", "--context-length",
        help="Tokens per request (32k, 1m accepted); default: the model's max length, as vLLM's "
             "max_model_len.")] = None,
    gpu: Annotated[str, typer.Option("--gpu", help="GPU (see `kvplan gpus`; H100, h200, ...).")
                   ] = "H100-80GB",
    gpus_per_node: Annotated[int, typer.Option("--gpus-per-node", min=1)] = 8,
    nodes: Annotated[int, typer.Option("--nodes", min=1)] = 1,
    engine: Annotated[Engine, typer.Option("--engine")] = DEFAULT_ENGINE,
    engine_version: Annotated[str | None, typer.Option("--engine-version")] = None,
    kv_dtype: Annotated[str | None, typer.Option(
        "--kv-dtype", "--kv-cache-dtype",
        help="Only this KV dtype (default: search every dtype the engine runs on the GPU).")
    ] = None,
    mem_fraction: Annotated[float | None, typer.Option(
        "--mem-fraction", "--gpu-memory-utilization", "--mem-fraction-static", min=0.01,
        max=1.0, help="Only this memory fraction (default: the engine's default and its "
                      "documented maximum).")] = None,
    fmt: FormatOpt = OutputFormat.table,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw requests per replica against context for the candidate "
                       "TP degrees (PNG/SVG; needs matplotlib: kvplan\\[plot]).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --plot.")] = False,
) -> None:
    """Can MODEL serve N concurrent requests of L tokens on this hardware? FITS or DOES NOT
    FIT, the layout, the exact launch command, and what to change. Exit 0 fits, 3 does not."""
    from kvplan.analysis.planner import PlanRequest, plan_serving
    from kvplan.hardware.gpus import get_gpu
    from kvplan.present.capacity_view import plan_view

    with handle_errors():
        spec = load_spec(model)
        if context is None:
            if spec.max_position_embeddings is None:
                raise InputError("--context: the model's max length is unknown; give --context")
            ctx = spec.max_position_embeddings
        else:
            ctx = parse_tokens("--context", context)
        dtypes = None if kv_dtype is None else (parse_kv_dtype("--kv-dtype", kv_dtype),)
        result = plan_serving(spec, PlanRequest(
            concurrency=concurrency, context=ctx, gpu=get_gpu(gpu), gpus_per_node=gpus_per_node,
            nodes=nodes, engine=engine, engine_version=engine_version, kv_dtypes=dtypes,
            mem_fraction=mem_fraction))
        if plot is not None:  # issue 28 item 7
            from kvplan.cli.plots import plot_plan

            plot_plan(plot, spec, result.to_dict(), gpus_per_node=gpus_per_node, force=force)
        emit(plan_view(spec, result), fmt)
    if not result.fits:
        raise typer.Exit(EXIT_DOES_NOT_FIT)
