"""The option reference, generated from the CLI itself: every command, argument and option with
its help text, as typer builds them.

Run: python -m tests.benches.cli_reference > examples/cli-reference.md

tests/test_readme.py regenerates it and compares, so the reference never drifts from the CLI
(after changing an option, rerun this).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

HEADER = """# Command-line reference

Generated from the CLI by `python -m tests.benches.cli_reference > examples/cli-reference.md`
(a test holds it current); `kvplan COMMAND --help` prints the same. [Back to the
README](../README.md).

Every command that takes a MODEL also takes, anywhere before `--`: `--hub-timeout SECONDS`
(every Hub request of the command, in all; default {hub_timeout:g}, at most {max_hub:g}),
`--weights-from {weights_from}` (size the weights from the checkpoint's safetensors headers, or
from config.json's architecture) and `--wide` (every table column, whatever the terminal's width).
Token counts take `8k`, `32k`, `1m` (k = 1024).
"""


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _default(param: Any) -> str | None:
    default = param.default
    if default is None or param.required or callable(default):
        return None
    if isinstance(default, Enum):
        default = default.value
    if isinstance(default, (list, tuple)):
        if not default:
            return None
        default = ",".join(str(getattr(d, "value", d)) for d in default)
    if isinstance(default, bool):
        if not default and not param.secondary_opts:
            return None
        if param.secondary_opts:
            return (param.opts[0] if default else param.secondary_opts[0]).lstrip()
        return str(default).lower()
    if isinstance(default, str) and not default:
        return None
    return str(default)


def _type_name(annotation: Any) -> str:
    import typing
    from pathlib import Path

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if args and typing.get_origin(annotation) is not typing.Annotated:
        return _type_name(args[0])
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "|".join(str(m.value) for m in annotation)
    names = {int: "INT", float: "FLOAT", str: "TEXT", Path: "PATH", bool: "BOOL"}
    return names.get(annotation, getattr(annotation, "__name__", "VALUE").upper())


def _metavar(param: Any) -> str:
    if getattr(param, "is_flag", False):
        return ""
    if param.metavar:
        return str(param.metavar)
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:
        return "VALUE"
    return _type_name(descriptor.annotation)


def _option(param: Any) -> str:
    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    metavar = _metavar(param)
    line = f"- {names}" + (f" {metavar}" if metavar else "")
    default = _default(param)
    if param.multiple:
        line += " (repeatable)"
    if default is not None:
        line += f" (default {default})"
    if param.required:
        line += " (required)"
    text = _one_line(getattr(param, "help", None))
    return line + (f": {text}" if text else "")


def reference() -> str:
    import typer

    from kvplan.cli.app import COMMANDS, make_app
    from kvplan.cli.common import MAX_HUB_TIMEOUT_S, WEIGHTS_FROM
    from kvplan.sources.hub_http import HUB_TIMEOUT_S

    group = typer.main.get_command(make_app())
    out = [HEADER.format(hub_timeout=HUB_TIMEOUT_S, max_hub=MAX_HUB_TIMEOUT_S,
                         weights_from="|".join(WEIGHTS_FROM))]
    out.append("Commands: " + ", ".join(f"[`{n}`](#kvplan-{n})" for n in COMMANDS) + ".\n")
    for name in COMMANDS:
        command = group.commands[name]
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        options = [p for p in command.params
                   if p.param_type_name == "option" and not p.hidden]
        usage = " ".join([f"kvplan {name}", "[OPTIONS]"]
                         + [(p.name or "").upper() + ("..." if p.nargs == -1 else "")
                            if p.required else f"[{(p.name or '').upper()}]"
                            for p in arguments])
        out += [f"## kvplan {name}", "", (command.help or "").strip(), "", f"`{usage}`", ""]
        for p in arguments:
            text = _one_line(getattr(p, "help", None))
            out.append(f"- `{(p.name or '').upper()}`" + (f": {text}" if text else ""))
        panels: dict[str, list[Any]] = {}
        for p in options:
            panels.setdefault(getattr(p, "rich_help_panel", None) or "Options", []).append(p)
        for panel, params in panels.items():
            if len(panels) > 1 or arguments:
                out += ["", f"{panel}:", ""] if panel != "Options" or arguments else [""]
            out += [_option(p) for p in params]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(reference())
