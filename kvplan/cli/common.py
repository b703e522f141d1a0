"""What every kvplan command shares: option types, the error wrapper, the MODEL loader.

Subcommand modules import from here, never from app.py (app.py imports them to register them).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from kvplan.dtypes import KVDType
from kvplan.errors import InputError, KvplanError
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


class HybridManager(str, Enum):
    auto = "auto"
    on = "on"
    off = "off"


class Platform(str, Enum):
    cuda = "cuda"
    rocm = "rocm"
    cpu = "cpu"


class StateDType(str, Enum):
    auto = "auto"
    float32 = "float32"
    bfloat16 = "bfloat16"
    float16 = "float16"


class SpecMethod(str, Enum):
    mtp = "mtp"
    eagle = "eagle"
    eagle3 = "eagle3"


EngineVersionOpt = Annotated[str | None, typer.Option(
    "--engine-version", help="Engine version whose rules to follow (vLLM: 0.10 to 0.32; "
                             "default the newest modelled). See `kvplan engines`.")]
PlatformOpt = Annotated[Platform | None, typer.Option(
    "--platform", help="vLLM platform: block sizes and scheduling (default: rocm for MI* GPU "
                       "presets, else cuda).")]
HybridManagerOpt = Annotated[HybridManager, typer.Option(
    "--hybrid-kv-cache-manager",
    help="vLLM's hybrid KV-cache manager (auto: what that version does for the model; off: "
         "sliding and chunked layers allocate as full attention).")]
DisableHybridOpt = Annotated[bool, typer.Option(
    "--disable-hybrid-kv-cache-manager",
    help="Alias of --hybrid-kv-cache-manager off (vLLM's flag).")]
PrefixCachingOpt = Annotated[bool | None, typer.Option(
    "--enable-prefix-caching/--no-enable-prefix-caching",
    help="vLLM prefix caching (default: that version's; for recurrent-state models it sets the "
         "mamba cache mode: align with, none without).", show_default=False)]
StateDTypeOpt = Annotated[StateDType, typer.Option(
    "--mamba-ssm-cache-dtype",
    help="dtype of the recurrent (SSM) state; auto: the config's, else the model's.")]
SpecMethodOpt = Annotated[SpecMethod | None, typer.Option(
    "--speculative-method", help="Speculative decoding: the drafter's layers get KV "
                                 "(mtp: the model's MTP layers; eagle/eagle3: one layer).")]
SpecTokensOpt = Annotated[int, typer.Option(
    "--num-speculative-tokens", min=0,
    help="Draft tokens per step (each adds a recurrent-state page and conv rows).")]


class WeightDType(str, Enum):
    auto = "auto"
    bfloat16 = "bfloat16"
    float16 = "float16"
    float32 = "float32"


class LoadQuantization(str, Enum):
    bitsandbytes = "bitsandbytes"


DTypeOpt = Annotated[WeightDType, typer.Option(
    "--dtype", help="Compute dtype of unquantized weights (auto: the config's, float32 served "
                    "as bfloat16, as vLLM and SGLang do).")]
QuantizationOpt = Annotated[LoadQuantization | None, typer.Option(
    "--quantization", help="Quantization applied at load time (bitsandbytes: NF4).")]


def hybrid_manager_choice(mode: HybridManager, disable: bool) -> bool | None:
    if disable:
        if mode is HybridManager.on:
            raise InputError("--disable-hybrid-kv-cache-manager contradicts "
                             "--hybrid-kv-cache-manager on")
        return False
    return {HybridManager.auto: None, HybridManager.on: True, HybridManager.off: False}[mode]


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


def atomic_write(option: str, path: Path, write: Callable[[Path], None]) -> None:
    """Write via `write(tmp)` to a temporary file in the target's folder, then os.replace it over
    `path`: the target is either untouched or complete. The temporary file never survives."""
    folder = path.parent
    if not folder.is_dir():
        raise InputError(f"{option}: folder {str(folder)!r} does not exist")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would otherwise stick to the result
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise InputError(f"{option}: cannot write {str(path)!r}: {exc.strerror or exc}"
                         ) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
