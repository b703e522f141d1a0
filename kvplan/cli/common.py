"""What every kvplan command shares: option types, the error wrapper, the MODEL loader.

Subcommand modules import from here, never from app.py (app.py imports them to register them).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from kvplan.dtypes import KVDType
from kvplan.errors import KvplanError
from kvplan.render import OutputFormat, warn
from kvplan.spec import ModelSpec, load_model

ModelArg = Annotated[
    str, typer.Argument(help="Bundled spec id (see `kvplan specs`), a spec YAML file, or a "
                             "HuggingFace config.json (or a folder holding one).")
]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]
KVDTypeOpt = Annotated[KVDType, typer.Option("--kv-dtype", help="KV-cache element type.")]
BlockSizeOpt = Annotated[
    int | None,
    typer.Option("--block-size", min=1,
                 help="Tokens per paged block. Default: the engine's (vLLM 16, SGLang 1, "
                      "TRT-LLM 32); MLA backends force their own (FlashMLA 64)."),
]


@contextmanager
def handle_errors() -> Iterator[None]:
    """A KvplanError becomes one line on stderr and its exit code (2 bad input, 1 runtime);
    KVPLAN_DEBUG=1 shows the traceback instead."""
    try:
        yield
    except KvplanError as exc:
        if os.environ.get("KVPLAN_DEBUG") == "1":
            raise
        sys.stderr.write(f"kvplan: error: {exc}\n")
        raise typer.Exit(exc.exit_code) from None


def load_spec(model: str) -> ModelSpec:
    """Load a MODEL argument; config.json import warnings go to stderr."""
    spec, warnings = load_model(model)
    for w in warnings:
        warn(f"kvplan: warning: {w}")
    return spec
