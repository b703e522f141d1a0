"""What every kvplan command shares: option types, the error wrapper, the MODEL loader.

Subcommand modules import from here, never from app.py (app.py imports them to register them).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from kvplan._util.dtypes import KVDType
from kvplan._util.errors import InputError, KvplanError, unknown_choice
from kvplan._util.validate import MAX_SIZE
from kvplan.cli.vocab import SGLANG_PANEL, VLLM_PANEL, tokens_option, tokens_or_zero_option
from kvplan.model.spec import ModelSpec
from kvplan.present.render import OutputFormat, warn
from kvplan.sources.resolve import load_model

ModelArg = Annotated[
    str, typer.Argument(help="A bundled spec id (`kvplan specs`), a spec YAML file, a "
                             "HuggingFace config.json (or a folder holding one), or a Hub id "
                             "(owner/name). Every command also takes --hub-timeout SECONDS "
                             "(all Hub requests; default 10) and --weights-from "
                             "checkpoint|config.")
]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]
ExplainOpt = Annotated[bool, typer.Option(
    "--explain", help="Table output: after the one-line answer, the whole derivation (every "
                      "table and note; JSON, CSV and Markdown always have it).")]
KVDTypeOpt = Annotated[KVDType, typer.Option("--kv-dtype", help="KV-cache element type.")]
AllowLongContextOpt = Annotated[bool, typer.Option(
    "--allow-long-context", help="Allow a context above the model's maximum as the engine "
    "derives it (max_position_embeddings and the like: vLLM's max_model_len, SGLang's "
    "context length, TensorRT-LLM's max_seq_len), which vLLM and SGLang refuse to start with "
    "and TensorRT-LLM lowers max_seq_len to: plan and simulate refuse it, sweep leaves it out, "
    "estimate warns. Launch lines then carry VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 / "
    "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 / TLLM_ALLOW_LONG_MAX_MODEL_LEN=1.")]
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


class ClientCost(str, Enum):
    """`simulate --client-cost`: the benchmark client's own serial work in a closed loop."""

    none = "none"  # every replacement sent when the client sees its finish
    measured = "measured"  # vllm bench serve's loop, measured (analysis.simulate.client_loop)


class Platform(str, Enum):
    cuda = "cuda"
    rocm = "rocm"
    cpu = "cpu"


class TrtllmBackend(str, Enum):
    pytorch = "pytorch"
    engine = "engine"


class MmEncoderTpMode(str, Enum):
    weights = "weights"
    data = "data"


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
    "--engine-version", help="Engine version whose rules to follow (vLLM 0.10 to 0.34, its "
                             "0.33 and 0.34 budgets refused unless given; SGLang 0.4.5 to "
                             "0.5.23, TensorRT-LLM 0.20 to 1.3; default the newest modelled, "
                             "vLLM 0.32; a newer release takes the newest rules read, not "
                             "exact). See `kvplan engines`.")]
PlatformOpt = Annotated[Platform | None, typer.Option(
    "--platform", rich_help_panel=VLLM_PANEL,
    help="vLLM platform: block sizes and scheduling (default: rocm for MI* GPU "
                       "presets, else cuda).")]
CpuAmxOpt = Annotated[bool | None, typer.Option(
    "--cpu-amx/--no-cpu-amx", rich_help_panel=VLLM_PANEL,
    help="--platform cpu: the host has AMX tiles or not (torch.cpu._is_amx_tile_supported()). "
         "vLLM 0.29 on runs MLA there with AMX_MLA (block 128, or --block-size) on such a host, "
         "with CPU_MLA (block 16) on others; MLA on the CPU platform is refused without it.",
    show_default=False)]
LimitMmOpt = Annotated[str | None, typer.Option(
    "--limit-mm-per-prompt", rich_help_panel=VLLM_PANEL, metavar="MODALITY=N,...",
    help="vLLM: multimodal items per prompt, e.g. image=0,video=0 or '{\"image\": 2}' "
         "(unset modalities: 999). The profile run pushes the modality with the most tokens "
         "through the vision encoder; one at 0 is not profiled, all at 0 none.")]
SkipMmProfilingOpt = Annotated[bool, typer.Option(
    "--skip-mm-profiling", rich_help_panel=VLLM_PANEL,
    help="vLLM: no multimodal encoder profile (nothing reserved for it).")]
HybridManagerOpt = Annotated[HybridManager, typer.Option(
    "--hybrid-kv-cache-manager", rich_help_panel=VLLM_PANEL,
    help="vLLM's hybrid KV-cache manager (auto: what that version does for the model; off: "
         "sliding and chunked layers allocate as full attention).")]
KvTransferOpt = Annotated[bool, typer.Option(
    "--kv-transfer", rich_help_panel=VLLM_PANEL,
    help="vLLM launched with --kv-transfer-config (a KV connector, as plan --disagg's roles): "
         "before 0.22 it turns the hybrid KV-cache manager off.")]
DisableHybridOpt = Annotated[bool, typer.Option(
    "--disable-hybrid-kv-cache-manager", rich_help_panel=VLLM_PANEL,
    help="Alias of --hybrid-kv-cache-manager off (vLLM's flag).")]
PrefixCachingOpt = Annotated[bool | None, typer.Option(
    "--enable-prefix-caching/--no-enable-prefix-caching", rich_help_panel=VLLM_PANEL,
    help="vLLM prefix caching (default: that version's; for recurrent-state models it sets the "
         "mamba cache mode: align with, none without).", show_default=False)]
EngineArgOpt = Annotated[list[str] | None, typer.Option(
    "--engine-arg", metavar="FLAG[=VALUE]",
    help="An engine's own flag as it spells it: --engine-arg=--max-prefill-tokens=8192 "
         "(SGLang), --engine-arg attention_dp_config.enable_balance=true (TensorRT-LLM YAML "
         "key); each engine's in `kvplan help engines`.",
    show_default=False)]
MaxMambaCacheSizeOpt = Annotated[int | None, typer.Option(
    "--max-mamba-cache-size", rich_help_panel=SGLANG_PANEL, min=1,
    help="SGLang: recurrent-state slots (default: --mamba-full-memory-ratio decides).")]
MambaFullMemoryRatioOpt = Annotated[float | None, typer.Option(
    "--mamba-full-memory-ratio", rich_help_panel=SGLANG_PANEL, min=0.001,
    help="SGLang: recurrent-state memory / KV memory (0.9; 0.2 before 0.5.4).")]
SwaFullTokensRatioOpt = Annotated[float | None, typer.Option(
    "--swa-full-tokens-ratio", rich_help_panel=SGLANG_PANEL, min=0.001, max=1.0,
    help="SGLang: sliding-window pool tokens / full pool tokens (0.8).")]
DisableHybridSwaMemoryOpt = Annotated[bool, typer.Option(
    "--disable-hybrid-swa-memory", rich_help_panel=SGLANG_PANEL,
    help="SGLang: no separate sliding-window pool (every layer as full attention).")]
StateDTypeOpt = Annotated[StateDType, typer.Option(
    "--mamba-ssm-cache-dtype", "--mamba-ssm-dtype",
    help="dtype of the recurrent (SSM) state (vLLM --mamba-ssm-cache-dtype, SGLang "
         "--mamba-ssm-dtype); auto: the config's, else the model's (SGLang: float32).")]
SpecMethodOpt = Annotated[SpecMethod | None, typer.Option(
    "--speculative-method", help="Speculative decoding: the drafter's layers get KV "
                                 "(mtp: the model's MTP layers, their weights counted too; "
                                 "eagle/eagle3: one layer, the EAGLE checkpoint's weights not "
                                 "counted: add them with --weights-gib).")]
SpecTokensOpt = Annotated[int, typer.Option(
    "--num-speculative-tokens", "--speculative-num-steps", parser=tokens_or_zero_option,
    metavar="TOKENS",
    help="Draft tokens per step (each adds a recurrent-state page and conv rows); SGLang: "
         "--speculative-num-steps (mtp = SGLang's NEXTN).")]


class WeightDType(str, Enum):
    auto = "auto"
    bfloat16 = "bfloat16"
    float16 = "float16"
    float32 = "float32"


class LoadQuantization(str, Enum):
    bitsandbytes = "bitsandbytes"


class Mxfp4Kernel(str, Enum):
    """The MXFP4 MoE kernels a vLLM user picks on CUDA (kvplan.model.quant_formats.Mxfp4Backend's
    values; the FlashInfer ones' padding is not read by release)."""

    marlin = "marlin"
    triton = "triton"


DTypeOpt = Annotated[WeightDType, typer.Option(
    "--dtype", help="Compute dtype of unquantized weights (auto: the config's, float32 served "
                    "as bfloat16, as vLLM and SGLang do).")]
QuantizationOpt = Annotated[LoadQuantization | None, typer.Option(
    "--quantization", help="Quantization applied at load time (bitsandbytes: NF4).")]
Mxfp4BackendOpt = Annotated[Mxfp4Kernel | None, typer.Option(
    "--mxfp4-backend", rich_help_panel=VLLM_PANEL,
    help="vLLM: the MoE kernel MXFP4 experts (gpt-oss) run on: marlin as "
         "VLLM_MXFP4_USE_MARLIN=1 or --moe-backend marlin picks it; default: that release's on "
         "that GPU (Hopper: triton from 0.11.1, whose wheel vendors triton_kernels, sized as "
         "marlin until its swizzled layout is read; marlin before and elsewhere).")]


GpuMemGibOpt = Annotated[float | None, typer.Option(
    "--gpu-mem-gib", min=0.001, help="Device total in GiB (instead of --gpu).")]
WeightsGibOpt = Annotated[float | None, typer.Option(
    "--weights-gib", min=0.0, help="Weights per GPU in GiB (default: from the spec).")]
ReserveGibOpt = Annotated[float | None, typer.Option(
    "--reserve-gib", min=0.0,
    help="Activation + runtime reserve per GPU in GiB (SGLang: memory in use before "
         "weights load). Default: a documented estimate.")]
MaxNumSeqsOpt = Annotated[int | None, typer.Option(
    "--max-num-seqs", "--max-running-requests", min=1,
    help="The engine's cap on concurrent requests (vLLM --max-num-seqs, SGLang "
         "--max-running-requests): max_requests never exceeds it.")]
MaxNumBatchedTokensOpt = Annotated[int | None, typer.Option(
    "--max-num-batched-tokens", min=1, parser=tokens_option, metavar="TOKENS",
    help="vLLM's chunked-prefill budget (default 8192 on >= 70 GiB non-A100 GPUs, else "
         "2048).")]


# The exit-code policy (examples/errors.md): 0 an answer, 1 a runtime failure (or a bug: "internal
# error"), 2 bad input or a model, GPU or engine kvplan cannot model, 3 a plan that does not fit
# (plan, report), 4 a server that disagrees (check), 130 interrupted, 128 + N ended by signal N.
EXIT_DOES_NOT_FIT = 3

# Flag values beyond these are typos or attacks: 2^40 tokens or requests, a trillion GiB.
MAX_FLAG_INT = MAX_SIZE
MAX_FLAG_FLOAT = 1e12


_ARGV_KEY = "kvplan_argv"


def _flag_name(param: Any, ctx: Any = None) -> str:
    """How the user wrote the parameter: the long option they typed (``--batch``; for a short one,
    the long option declared before it: ``-b`` is ``--batch``), else its first long option
    (``--context``), else its metavar."""
    if param is None:
        return ""
    declared = list(getattr(param, "opts", ()))
    opts = [o for o in declared if o.startswith("--")] or declared
    if getattr(param, "param_type_name", "") == "argument" or not opts:
        return (getattr(param, "name", None) or "argument").upper()
    argv = (getattr(ctx, "meta", None) or {}).get(_ARGV_KEY, ())
    for arg in argv:
        written = arg.split("=", 1)[0]
        if written in declared:
            longs = [o for o in declared[:declared.index(written) + 1] if o.startswith("--")]
            return longs[-1] if longs else opts[0]
    return opts[0]


def _range_text(kind: Any) -> str | None:
    lo, hi = getattr(kind, "min", None), getattr(kind, "max", None)
    lo_op = ">" if getattr(kind, "min_open", False) else ">="
    hi_op = "<" if getattr(kind, "max_open", False) else "<="
    if lo is not None and hi is not None:
        return f"must be {lo_op} {lo:g} and {hi_op} {hi:g}" if isinstance(lo, float) else (
            f"must be {lo_op} {lo} and {hi_op} {hi}")
    if lo is not None:
        return f"must be {lo_op} {lo}"
    if hi is not None:
        return f"must be {hi_op} {hi}"
    return None


_BOUNDS = {"greater_than_equal": ("ge", ">="), "greater_than": ("gt", ">"),
           "less_than_equal": ("le", "<="), "less_than": ("lt", "<")}
_KINDS = {"int_parsing": "an integer", "int_from_float": "an integer", "float_parsing": "a number",
          "bool_parsing": "true or false", "finite_number": "a finite number"}


def _pydantic_message(exc: Any) -> str | None:
    """typer >= 0.26 validates values with pydantic: its error carries the bound and the input."""
    cause = exc.__cause__
    errors = getattr(cause, "errors", None)
    if not callable(errors):
        return None
    try:
        first = errors()[0]
    except Exception:  # noqa: BLE001 - any shape we do not know: fall back to the message
        return None
    kind, ctx, got = first.get("type", ""), first.get("ctx") or {}, first.get("input")
    if kind in _BOUNDS:
        key, op = _BOUNDS[kind]
        return f"must be {op} {ctx.get(key)}, got {got}"
    if kind in _KINDS:
        return f"expected {_KINDS[kind]}, got {got!r}"
    return None


def usage_message(exc: Any) -> str:
    """One line for a typer/click usage error: ``--context: must be >= 1, got 0``."""
    param = getattr(exc, "param", None)
    message = " ".join(str(exc.format_message()).split())
    if param is not None:
        name = _flag_name(param, getattr(exc, "ctx", None))
        better = _pydantic_message(exc)
        if better is not None:
            return f"{name}: {better}"
        suffix = " is not in the range "
        if suffix in message:
            value = message.split(suffix, 1)[0].strip("'\"")
            rule = _range_text(getattr(param, "type", None))
            if rule is not None:
                return f"{name}: {rule}, got {value}"
        # click: "Invalid value for '--kv-dtype': 'x' is not one of ..."
        if message.startswith("Invalid value for"):
            message = message.split(":", 1)[1].strip() if ":" in message else message
        elif message.startswith("Missing "):
            return f"{name}: missing"
        message = message.removeprefix("Value error, ").rstrip(".")
        return f"{name}: {message}"
    return message[:1].lower() + message[1:] if message else "bad usage (see --help)"


def check_flag_values(params: dict[str, Any], command: Any, ctx: Any = None) -> None:
    """Numbers typer accepted but kvplan cannot use: NaN, infinities and absurd sizes."""
    by_name = {p.name: p for p in command.params}
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        flag = _flag_name(by_name.get(name), ctx)
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{flag}: must be a finite number, got {value}")
        limit = MAX_FLAG_FLOAT if isinstance(value, float) else MAX_FLAG_INT
        if abs(value) > limit:
            raise InputError(f"{flag}: must be <= {limit:,.0f}, got {value:g}"
                             if isinstance(value, float) else
                             f"{flag}: must be <= {limit:,}, got {value:,}")


def written_flag(ctx: Any, name: str) -> str:
    """The spelling of parameter `name` the user wrote (`--batch` or `--concurrency`), for a
    message raised in the command's body."""
    param = next((p for p in ctx.command.params if p.name == name), None)
    return _flag_name(param, ctx) or f"--{name.replace('_', '-')}"


def with_keys_after(records: dict[str, Any], after: str, **added: Any) -> dict[str, Any]:
    """`records` with `added` inserted after key `after` (at the end if it is absent): a JSON
    key under the name every command uses, the old one kept."""
    out: dict[str, Any] = {}
    for key, value in records.items():
        out[key] = value
        if key == after:
            out.update(added)
    return {**out, **added}


def _print_error(message: str) -> None:
    sys.stderr.write(f"kvplan: error: {message}\n")


def _defaults_as_declared(param: Any) -> None:
    """Let a value the command line leaves out skip typer's coercion: None, or the declared
    default itself.

    typer (0.2x) builds a pydantic TypeAdapter for every parameter before it coerces the value,
    even a None it returns unchanged or a default that is already the declared type: about
    0.4 ms a parameter, 15 ms on `estimate`'s forty (examples/startup-bench.md). kvplan's
    defaults are typed values that its parsers map to themselves (4096, "bf16", the default engine:
    tests/test_cli.py checks every command's against typer's own coercion), so the value
    stays as declared; the callback, if any, still runs; a value from the command line goes
    through typer whole."""
    if param.required or param.multiple or param.nargs != 1:
        return
    process = type(param).process_value

    def process_value(ctx: Any, value: Any) -> Any:
        source = ctx.get_parameter_source(param.name)
        if value is not None and not (value is param.default
                                      and getattr(source, "name", None) == "DEFAULT"):
            return process(param, ctx, value)
        return param.callback(ctx, param, value) if param.callback is not None else value

    param.process_value = process_value


class KvplanCommand(TyperCommand):
    """A command whose numeric flags are finite and bounded before the body runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            _defaults_as_declared(param)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        cut = args.index("--") if "--" in args else len(args)
        ctx.meta[_ARGV_KEY] = tuple(args[:cut])  # for messages naming the flag as written
        return super().parse_args(ctx, args)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """One screen (kvplan.cli.help_cmd); `kvplan help COMMAND`: typer's full help."""
        from kvplan.cli.help_cmd import FULL_HELP_KEY, print_compact_help

        if ctx.meta.get(FULL_HELP_KEY):
            return super().format_help(ctx, formatter)
        print_compact_help(self, ctx)
        return None

    def invoke(self, ctx: Any) -> Any:
        from kvplan.cli.engine_opts import check_engine_options

        try:
            check_flag_values(ctx.params, self, ctx)
            check_engine_options(ctx, lambda p: _flag_name(p, ctx))  # another engine's option
        except InputError as exc:
            _print_error(str(exc))
            raise typer.Exit(exc.exit_code) from None
        return super().invoke(ctx)


VERIFY_HINT = "pip install 'kvplan[verify]'"


class TorchCommand(KvplanCommand):
    """A command that needs torch (kvplan verify): without it, one line saying how to install
    it, exit 2, before anything is imported."""

    def invoke(self, ctx: Any) -> Any:
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            _print_error(f"{self.name} needs torch, which is not installed: {VERIFY_HINT} "
                         "(on a GPU machine, install your CUDA build of torch first)")
            raise typer.Exit(2)
        return super().invoke(ctx)


GLOBAL_QUIET = ("--quiet", "-q")


class KvplanGroup(TyperGroup):
    """The root command: a usage error (bad flag value, unknown option, missing argument) is one
    line on stderr and exit 2, instead of typer's boxed panel; --help stays rich."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        from kvplan.present import progress_view, render

        argv = list(sys.argv[1:] if args is None else args)
        cut = argv.index("--") if "--" in argv else len(argv)
        # --wide, accepted anywhere before "--": every table column, whatever the terminal;
        # --quiet / -q likewise: no progress display on stderr.
        render.WIDE = "--wide" in argv[:cut]
        progress_view.QUIET = bool(set(GLOBAL_QUIET) & set(argv[:cut]))
        argv = [a for a in argv[:cut] if a not in ("--wide", *GLOBAL_QUIET)] + argv[cut:]
        try:
            argv = take_model_options(argv)
        except InputError as exc:
            _print_error(str(exc))
            if not standalone_mode:
                return 2
            sys.exit(2)
        try:
            rv = super().main(args=argv, prog_name=prog_name or "kvplan",
                              complete_var=complete_var, standalone_mode=False, **extra)
        except typer.Exit as exc:
            code = exc.exit_code
        except typer.Abort:
            _print_error("aborted")
            code = 130
        except typer.TyperException as exc:  # click's UsageError, BadParameter, ...
            if exc.__class__.__name__ == "NoArgsIsHelpError":
                code = 2  # typer has printed the help already
            else:
                _print_error(usage_message(exc))
                code = getattr(exc, "exit_code", 2)
        else:
            code = rv if isinstance(rv, int) else 0
        if not standalone_mode:
            return code
        sys.exit(code)


# How MODEL is read, in every command that takes one (options of the root command, accepted
# anywhere before "--" like --wide, so that each command's own options stay its own).
WEIGHTS_FROM = ("checkpoint", "config")
MAX_HUB_TIMEOUT_S = 3600.0
_model_options: dict[str, Any] = {}


def take_model_options(argv: list[str]) -> list[str]:
    """Take ``--hub-timeout SECONDS`` and ``--weights-from checkpoint|config`` (also written
    ``--opt=value``; the last one given wins) out of `argv`, for `load_spec`."""
    _model_options.clear()
    cut = argv.index("--") if "--" in argv else len(argv)
    rest: list[str] = []
    i = 0
    while i < cut:
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name not in ("--hub-timeout", "--weights-from"):
            rest.append(arg)
            i += 1
            continue
        if not eq:
            if i + 1 >= cut:
                raise InputError(f"{name}: missing")
            value = argv[i + 1]
            i += 1
        i += 1
        if name == "--weights-from":
            if value not in WEIGHTS_FROM:
                raise unknown_choice("--weights-from", WEIGHTS_FROM, value)
            _model_options["weights_from"] = value
            continue
        try:
            seconds = float(value)
        except ValueError:
            raise InputError(f"--hub-timeout: expected a number of seconds, got {value!r}"
                             ) from None
        if not 0 < seconds <= MAX_HUB_TIMEOUT_S:  # also NaN
            raise InputError(f"--hub-timeout: must be > 0 and <= {MAX_HUB_TIMEOUT_S:g} "
                             f"seconds, got {value}")
        _model_options["hub_timeout_s"] = seconds
    return rest + argv[cut:]


# Warnings gathered while a command runs (config.json import notes): printed when it succeeds,
# dropped when it fails, so that a refusal is exactly one line on stderr.
_pending: list[list[str]] = []


def defer_warning(message: str) -> None:
    """A warning for stderr, held until the command succeeds (printed at once outside one)."""
    if _pending:
        _pending[-1].append(message)
    else:
        warn(message)


@contextmanager
def handle_errors() -> Iterator[None]:
    """A KvplanError becomes one line on stderr and its exit code (2 bad input, 1 runtime);
    KVPLAN_DEBUG=1 shows the traceback instead. Deferred warnings are printed on success only."""
    _pending.append([])
    try:
        yield
    except KvplanError as exc:
        _pending.pop()
        if os.environ.get("KVPLAN_DEBUG") == "1":
            raise
        sys.stderr.write(f"kvplan: error: {exc}\n")
        raise typer.Exit(exc.exit_code) from None
    except BaseException:
        _pending.pop()
        raise
    for message in _pending.pop():
        warn(message)


def load_spec(model: str) -> ModelSpec:
    """Load a MODEL argument; config.json import warnings go to stderr (if the command
    succeeds)."""
    from kvplan.present.progress_view import progress_shown

    with progress_shown():  # a Hub fetch can take seconds
        spec, warnings = load_model(model, **_model_options)
    for w in warnings:  # a "note: ..." is information, not a warning
        defer_warning(f"kvplan: {w}" if w.startswith("note: ") else f"kvplan: warning: {w}")
    return spec


def generation_config_file(value: str, model: str) -> Path:
    """`--generation-config`'s file: the path given, or with `auto` the one beside MODEL's
    config.json (kvplan.sources.resolve.generation_config_beside; the Hub's requests bounded
    by --hub-timeout as `load_spec`'s)."""
    if value != "auto":
        return Path(value)
    from kvplan.sources.resolve import generation_config_beside

    return generation_config_beside(model, hub_timeout_s=_model_options.get("hub_timeout_s"))
