"""Typer commands. Each one parses its options, calls the pure core and emits a View.

Errors: domain code raises KvplanError; `_handle_errors` turns it into one line on stderr and
exit code 2 (bad input) or 1 (runtime failure). KVPLAN_DEBUG=1 shows the traceback instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from kvplan.cache import DEFAULT_BLOCK_SIZE, estimate
from kvplan.dtypes import KVDType
from kvplan.errors import KvplanError
from kvplan.render import OutputFormat, emit
from kvplan.spec import load_bundled_specs, load_spec
from kvplan.views import estimate_view, specs_view

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Plan LLM inference KV-cache memory: per token, per block, per request, per GPU.",
)

ModelArg = Annotated[
    str, typer.Argument(help="Bundled spec id (see `kvplan specs`) or path to a spec YAML file.")
]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]
KVDTypeOpt = Annotated[KVDType, typer.Option("--kv-dtype", help="KV-cache element type.")]
BlockSizeOpt = Annotated[
    int, typer.Option("--block-size", min=1, help="Tokens per paged block (vLLM default 16).")
]


@contextmanager
def _handle_errors() -> Iterator[None]:
    try:
        yield
    except KvplanError as exc:
        if os.environ.get("KVPLAN_DEBUG") == "1":
            raise
        sys.stderr.write(f"kvplan: error: {exc}\n")
        raise typer.Exit(exc.exit_code) from None


@app.command("specs")
def specs_cmd(
    kv_dtype: KVDTypeOpt = KVDType.bf16,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """List the bundled model specs with their attention kind and KV bytes per token."""
    with _handle_errors():
        emit(specs_view(load_bundled_specs(), kv_dtype=kv_dtype.value), fmt)


@app.command("estimate")
def estimate_cmd(
    model: ModelArg,
    context: Annotated[int, typer.Option("--context", "-c", min=1,
                                         help="Tokens per sequence (prompt + output).")] = 4096,
    batch: Annotated[int, typer.Option("--batch", "-b", min=1,
                                       help="Concurrent sequences.")] = 1,
    kv_dtype: KVDTypeOpt = KVDType.bf16,
    block_size: BlockSizeOpt = DEFAULT_BLOCK_SIZE,
    tp: Annotated[int, typer.Option("--tp", min=1,
                                    help="Tensor-parallel degree (sizes are per GPU).")] = 1,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """KV-cache size per token, per layer, per paged block, per sequence and for a batch."""
    with _handle_errors():
        spec = load_spec(model)
        est = estimate(spec, context=context, batch=batch, kv_dtype=kv_dtype.value,
                       block_size=block_size, tp=tp)
        emit(estimate_view(spec, est), fmt)


def main() -> None:
    app()
