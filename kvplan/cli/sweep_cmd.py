"""`kvplan sweep`: tables, files and plots over a grid of contexts, batches, KV dtypes, attention
schemes, GPUs, TP degrees and memory fractions. Registered in app.py with
``app.command("sweep")(sweep_cmd)``.

This module must not import kvplan.cli.app (a cycle; shared pieces live in cli/common.py), nor
pandas, matplotlib or rich at module level (`kvplan estimate` imports app.py, which imports
this): they are imported when a sweep runs.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kvplan._util.errors import InputError
from kvplan.cli.common import (
    AllowLongContextOpt,
    CpuAmxOpt,
    EngineVersionOpt,
    ExplainOpt,
    FormatOpt,
    ModelArg,
    PlatformOpt,
    handle_errors,
    load_spec,
    written_flag,
)
from kvplan.cli.outputs import atomic_write, check_output, file_format
from kvplan.cli.vocab import CONCURRENCY_FLAGS, CONTEXT_FLAGS, ENGINE_AUTO
from kvplan.engines.base import DEFAULT_ENGINE, Engine
from kvplan.engines.context import context_refusal, max_context_tokens
from kvplan.engines.kv_dtype import check_kv_dtype
from kvplan.hardware.gpus import get_gpu
from kvplan.present.progress_view import progress_shown
from kvplan.present.render import OutputFormat, emit, warn
from kvplan.sources.files import shown_path
from kvplan.sources.machine import available_memory_bytes

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

# A table of more rows than this shows the first and last TABLE_HEAD rows (stderr says so).
TABLE_MAX_ROWS = 50
TABLE_HEAD = 10
FILE_FORMATS = {".csv": "csv", ".json": "json", ".md": "markdown", ".parquet": "parquet"}
PLOT_FORMATS = {".png": "png", ".svg": "svg"}
PLOT_HINT = "pip install 'kvplan[plot]'"
# The same in --help text, where rich would take [plot] for markup and print `kvplan`.
PLOT_HINT_HELP = PLOT_HINT.replace("[", "\\[")


def write_table(df: pd.DataFrame, path: Path, fmt: str, *, force: bool = True,
                inputs: tuple[Path, ...] = ()) -> None:
    """-o FILE: csv, json, markdown (the full table) or parquet (needs pyarrow)."""
    from kvplan.present.render import to_markdown
    from kvplan.present.sweep_view import sweep_view, to_csv_text, to_json_text

    if fmt == "parquet":
        if importlib.util.find_spec("pyarrow") is None:
            raise InputError(f"-o: {str(path)!r}: writing .parquet needs pyarrow "
                             "(pip install pyarrow); or use .csv, .json or .md")
        atomic_write("-o", path, lambda tmp: df.to_parquet(tmp, index=False), force=force,
                     inputs=inputs)
        return
    text = {"csv": to_csv_text, "json": to_json_text,
            "markdown": lambda d: to_markdown(sweep_view(d))}[fmt](df)
    atomic_write("-o", path, lambda tmp: tmp.write_text(text, encoding="utf-8"), force=force,
                 inputs=inputs)


def _matplotlib_figure() -> type:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(f"--plot: needs matplotlib: {PLOT_HINT}") from None
    return Figure


def write_plot(df: pd.DataFrame, path: Path, fmt: str, *, force: bool = True,
               inputs: tuple[Path, ...] = (),
               max_contexts: dict[str, int | None] | None = None,
               title: str | None = None, target: tuple[int, int] | None = None) -> None:
    """--plot FILE: the sweep figure (kvplan.present.sweep_plot), written atomically."""
    from kvplan.present.sweep_plot import sweep_figure

    _matplotlib_figure()
    fig = sweep_figure(df, max_contexts=max_contexts, title=title, target=target)
    atomic_write("--plot", path, lambda tmp: fig.savefig(tmp, format=fmt), force=force,
                 inputs=inputs)


def _stream(specs: Any, grid: Any, fmt: str, output: Path | None, *, force: bool,
            inputs: tuple[Path, ...], chunks: Any, frames: Any) -> None:
    """Rows as CSV or JSON text, a chunk at a time, to stdout or atomically to -o."""
    rows = 0

    def counted() -> Any:
        nonlocal rows
        for df in frames(specs, grid):
            rows += len(df)
            yield df

    if output is None:
        for text in chunks(counted()):
            sys.stdout.write(text)
        sys.stdout.flush()
        return

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            for text in chunks(counted()):
                fh.write(text)

    atomic_write("-o", output, write, force=force, inputs=inputs)
    warn(f"kvplan: wrote {rows:,} rows to {shown_path(output)}")


def sweep_cmd(
    ctx: typer.Context,
    model: ModelArg,
    context: Annotated[str, typer.Option(
        *CONTEXT_FLAGS, metavar="TOKENS,...",
        help="Contexts: 1k,4k,32k (k = 1024, m = 1024^2), ranges 1k..128k:x2 or 1k..8k:+1k.")
    ] = "4096",
    batch: Annotated[str, typer.Option(
        *CONCURRENCY_FLAGS, metavar="N,...",
        help="Concurrent requests (batch sizes): 1,8,64 or a range like 1..256:x2.")] = "1",
    kv_dtype: Annotated[str, typer.Option(
        "--kv-dtype", "--kv-cache-dtype", metavar="DTYPE,...",
        help="KV dtypes: bf16,fp8 (fp32, fp16, int8, int4, nvfp4). auto (the default): the "
             "engine's own, as `kvplan estimate` takes it: bf16, or for vLLM the KV dtype the "
             "checkpoint's quantization_config declares.")] = ENGINE_AUTO,
    scheme: Annotated[str, typer.Option(
        "--scheme", help="Attention schemes: native (the model as is), mha, gqa (--groups KV "
                         "heads), mqa, mla (absorbed); as `kvplan compare` rewrites them.")
    ] = "native",
    groups: Annotated[int | None, typer.Option(
        "--groups", min=1, help="KV heads of the gqa scheme (default 8; only with --scheme gqa).")
    ] = None,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="GPU presets: H100-80GB,H200 (see `kvplan gpus`); adds capacity.")] = None,
    tp: Annotated[str, typer.Option("--tp", "--tensor-parallel-size", "-tp", metavar="N,...",
                                    help="Tensor-parallel degrees: 1,2,8.")] = "1",
    mem_fraction: Annotated[str | None, typer.Option(
        "--mem-fraction", "--gpu-memory-utilization", "--mem-fraction-static",
        help="Memory fractions: 0.8,0.9 (default: the engine's).")] = None,
    engine: Annotated[Engine, typer.Option(
        "--engine", help="Whose memory-fraction accounting to follow.")] = DEFAULT_ENGINE,
    engine_version: EngineVersionOpt = None,
    block_size: Annotated[int | None, typer.Option(
        "--block-size", "--page-size", min=1,
        help="Tokens per paged block (default: the engine's: vLLM 16, SGLang 1, TRT-LLM 32).")
    ] = None,
    platform: PlatformOpt = None,
    cpu_amx: CpuAmxOpt = None,
    fmt: FormatOpt = OutputFormat.table,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write every row to FILE (.csv, .json, .md, or .parquet with "
                               "pyarrow) instead of stdout; written atomically.")] = None,
    plot: Annotated[str | None, typer.Option(
        "--plot", help=f"Also draw FILE.png or FILE.svg: max concurrency (bytes per sequence "
                       f"without --gpu) vs context. Needs matplotlib: {PLOT_HINT_HELP}.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Overwrite an existing -o/--plot file (never the input).")] = False,
    max_points: Annotated[int | None, typer.Option(
        "--max-points", min=1,
        help="Evaluate up to this many grid points (default: 20,000,000 for CSV/JSON, which "
             "are streamed; for a table, Markdown, parquet or plot, what half the available "
             "memory holds).")] = None,
    explain: ExplainOpt = False,
    allow_long_context: AllowLongContextOpt = False,
) -> None:
    """The estimate/capacity numbers over a grid: every combination of the comma lists given,
    one row per point, as a table, CSV/JSON/Markdown, a file and/or a plot."""
    from kvplan.analysis.sweep import (
        SweepGrid,
        check_points,
        evaluate_models,
        iter_frames,
        parse_dtype_list,
        parse_fraction_list,
        parse_gpu_list,
        parse_int_list,
        parse_scheme_list,
        run_kv_dtypes,
        skipped_contexts,
    )
    from kvplan.present.sweep_view import (
        csv_chunks,
        json_chunks,
        sparkline_view,
        sweep_view,
        to_csv_text,
        to_json_text,
        with_more,
    )

    with handle_errors():

        schemes = parse_scheme_list("--scheme", scheme)
        if groups is not None and "gqa" not in schemes:
            raise InputError(f"--groups {groups}: sets the KV heads of the gqa scheme, and "
                             f"--scheme {scheme} does not sweep gqa (add it: --scheme "
                             f"{scheme},gqa)")
        grid = SweepGrid(
            contexts=parse_int_list(written_flag(ctx, "context"), context),
            batches=parse_int_list(written_flag(ctx, "batch"), batch),
            kv_dtypes=parse_dtype_list("--kv-dtype", kv_dtype),
            schemes=schemes,
            gpus=() if gpu is None else parse_gpu_list("--gpu", gpu),
            tps=parse_int_list("--tp", tp),
            mem_fractions=() if mem_fraction is None else parse_fraction_list(
                "--mem-fraction", mem_fraction),
            engine=engine, block_size=block_size, groups=8 if groups is None else groups,
            skip_long_contexts=not allow_long_context,
            platform=None if platform is None else platform.value, cpu_amx=cpu_amx,
            engine_version=engine_version,
        )
        out_fmt = None if output is None else file_format("-o", output, FILE_FORMATS)
        plot_fmt = None if plot is None else file_format("--plot", plot, PLOT_FORMATS)
        if plot_fmt is not None:
            _matplotlib_figure()  # fail before the work, not after
        # MODEL may list several models: qwen3-8b,llama-3.1-8b (unless it names a real file).
        names = [model] if "," not in model or Path(model).exists() else [
            m.strip() for m in model.split(",") if m.strip()]
        specs = [load_spec(m) for m in names]
        for s in specs:  # contexts the engines refuse to start with: left out, said here
            skipped = skipped_contexts(s, grid)
            if skipped and len(skipped) < len(grid.contexts):
                shown = ",".join(map(str, skipped)) if len(skipped) <= 4 else (
                    f"{skipped[0]},{skipped[1]},...,{skipped[-1]} ({len(skipped):,} contexts)")
                line = context_refusal(s, skipped[0], engine).replace(
                    f" {skipped[0]}:", f" {shown}:", 1)
                # Wrapped to 80 columns: a note beside the rows, not a one-line error.
                warn("\n".join(textwrap.wrap(f"kvplan: warning: {line}; left out of the sweep",
                                              width=80, subsequent_indent="  ")))
        inputs = tuple(Path(s.path) for s in specs)
        targets = [(opt, Path(p)) for opt, p in (("-o", output), ("--plot", plot))
                   if p is not None]
        for opt, target in targets:  # refuse before the work, not after
            check_output(opt, target, force=force, inputs=inputs)
        if len(targets) == 2 and targets[0][1].absolute() == targets[1][1].absolute():
            raise InputError("-o and --plot: the same file")
        # `auto`, per model, as `kvplan estimate` resolves it (SGLang / TRT-LLM refuse it for a
        # checkpoint that declares a KV dtype): before the work, saying what the checkpoint chose.
        kv_dtypes: dict[str, None] = {}
        for s in specs:
            dtypes, notes = run_kv_dtypes(s, grid)
            kv_dtypes.update(dict.fromkeys(dtypes))
            for note in notes:
                warn(f"kvplan: warning: {s.id + ': ' if len(specs) > 1 else ''}{note}")
        for dtype in kv_dtypes:  # what the engine cannot run: said, then sized anyway
            for gpu_name in grid.gpus or (None,):
                try:
                    check_kv_dtype(engine, dtype, None if gpu_name is None else get_gpu(gpu_name))
                except InputError as exc:
                    warn(f"kvplan: warning: {exc}; sized anyway")
                    break
        # CSV and JSON are streamed, a chunk of rows at a time; the other outputs hold every row.
        stream_fmt = out_fmt if output is not None else fmt.value
        streamed = plot is None and stream_fmt in ("csv", "json")
        held = None if streamed else "plot" if plot is not None else stream_fmt
        check_points(grid.num_points * len(specs), held=held, max_points=max_points,
                     available_bytes=None if streamed else available_memory_bytes())
        if streamed:
            with progress_shown():
                _stream(specs, grid, stream_fmt, None if output is None else Path(output),
                        force=force, inputs=inputs,
                        chunks=(csv_chunks if stream_fmt == "csv" else json_chunks),
                        frames=iter_frames)
            return
        with progress_shown():
            df = evaluate_models(specs, grid, max_points=max_points, held=held or "dataframe")
        if output is not None and out_fmt is not None:
            write_table(df, Path(output), out_fmt, force=force, inputs=inputs)
            warn(f"kvplan: wrote {len(df):,} rows to {shown_path(output)}")
        if plot is not None and plot_fmt is not None:
            write_plot(df, Path(plot), plot_fmt, force=force, inputs=inputs,
                       max_contexts={s.id: max_context_tokens(s, engine) for s in specs})
            warn(f"kvplan: wrote plot to {shown_path(plot)}")
        if output is not None:
            return
        if fmt is OutputFormat.csv:
            sys.stdout.write(to_csv_text(df))
        elif fmt is OutputFormat.json:
            sys.stdout.write(to_json_text(df))
        elif fmt is OutputFormat.markdown:
            emit(sweep_view(df), fmt)
        else:
            view = sweep_view(df, max_rows=TABLE_MAX_ROWS, head=TABLE_HEAD)
            if len(df) > TABLE_MAX_ROWS:
                warn(f"kvplan: note: {len(df):,} rows; the table shows the first {TABLE_HEAD} "
                     f"and the last {TABLE_HEAD} (all rows: --format csv|json|markdown or "
                     "-o FILE)")
            if plot is None:
                view = with_more(view, sparkline_view(df))
            emit(view, fmt, explain=explain)
        sys.stdout.flush()
