"""`kvplan COMMAND --help` in one screen (one line an option, engine options in their own
panels) and `kvplan help [COMMAND | engines [ENGINE]]`: a command's full help, or every
engine-specific option of every command (issue 28 item 3).

Reads the commands' own parameters (never a second list of options that could drift); the
layout is kvplan.present.help_view's. Imports nothing else of kvplan.cli (cli/common.py calls
`print_compact_help` from KvplanCommand.format_help).
"""

from typing import Annotated, Any

import typer

from kvplan.cli.vocab import (
    COST_RULES_PANEL,
    ENGINE_PANELS,
    FABRIC_PANEL,
    HOST_STAGES_PANEL,
    LENGTH_SPREAD_PANEL,
    RATE_LAYOUTS_PANEL,
    SPEC_DECODE_PANEL,
)

FULL_HELP_KEY = "kvplan_full_help"
ENGINES_TOPIC = "engines"

_CHOICES_MAX = 22
# Panels shown folded in a command's one-screen --help: one line naming their options, each in
# full in `kvplan help COMMAND` (the offload tiers' fourteen options, issue 29).
FOLDED_PANELS = ("KV offload", HOST_STAGES_PANEL, COST_RULES_PANEL, LENGTH_SPREAD_PANEL,
                 RATE_LAYOUTS_PANEL, SPEC_DECODE_PANEL, FABRIC_PANEL)


def first_sentence(doc: str) -> str:
    """`kvplan --help`'s line for a command: its docstring's first sentence, unwrapped."""
    text = " ".join(doc.split("\n\n")[0].split())
    ends = [i for i in (text.find(". "), text.find("? ")) if i >= 0]
    return text[:min(ends) + 1] if ends else text


def _metavar(param: Any) -> str:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    if param.metavar:
        return str(param.metavar)
    import enum
    import pathlib
    import typing

    kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    kind = args[0] if args else kind
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        text = "|".join(str(m.value) for m in kind)
        return text if len(text) <= _CHOICES_MAX else "CHOICE"
    if isinstance(kind, type) and issubclass(kind, pathlib.PurePath):
        return "PATH"
    return {bool: "", int: "N", float: "X"}.get(kind, "TEXT")  # type: ignore[call-overload]


def _short_names(param: Any) -> str:
    """``-c, --context TOKENS``: one short and one long spelling, and the metavar."""
    if param.param_type_name == "argument":
        return (param.name or "arg").upper()
    opts = list(param.opts)
    shorts = [o for o in opts if not o.startswith("--")]
    longs = [o for o in opts if o.startswith("--")] or opts
    long = longs[0]
    secondary = list(getattr(param, "secondary_opts", ()))
    if secondary:
        negated = "--no-" + long[2:]
        long = f"--[no-]{long[2:]}" if secondary[0] == negated else f"{long}/{secondary[0]}"
    names = ", ".join([*shorts[:1], long]) if shorts and len(shorts[0]) == 2 else long
    metavar = _metavar(param)
    return f"{names} {metavar}" if metavar else names


def _all_names(param: Any) -> str:
    names = ", ".join([*param.opts, *getattr(param, "secondary_opts", ())])
    metavar = _metavar(param)
    return f"{names} {metavar}" if metavar else names


def _panel(param: Any) -> str:
    if param.param_type_name == "argument":
        return "Arguments"
    return getattr(param, "rich_help_panel", None) or "Options"


def print_compact_help(command: Any, ctx: Any) -> None:
    """One screen: usage, description, each option on one line; engine panels last."""
    from kvplan.present.help_view import HelpRow
    from kvplan.present.help_view import print_compact_help as render

    panels: dict[str, list[HelpRow]] = {"Arguments": [], "Options": []}
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        help_text = (getattr(param, "help", None) or "").replace("\\[", "[")
        panels.setdefault(_panel(param), []).append(HelpRow(_short_names(param), help_text))
    # The folded panels share one box of one line (cli60: a box each took three lines, and
    # plan's --help is held to one screen): their option count, then each panel's names.
    folded = [(title, panels.pop(title)) for title in FOLDED_PANELS if panels.get(title)]
    if folded:
        count = sum(len(rows) for _, rows in folded)
        names = "; ".join(f"{title}: " + ", ".join(r.names.split()[0] for r in rows)
                          for title, rows in folded)
        panels[" / ".join(title for title, _ in folded)] = [HelpRow(
            f"{count} options", f"in full: kvplan help {command.name}; {names}")]
    ordered = [(t, panels[t]) for t in panels if t not in ENGINE_PANELS]
    ordered += [(f"{t} options", panels[t]) for t in ENGINE_PANELS if t in panels]
    usage = "Usage: " + " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    footer = f"Options in full: kvplan help {command.name}"
    if any(t in panels for t in ENGINE_PANELS):
        footer += "; engine options: kvplan help engines"
    render(usage=usage, description=(command.help or "").replace("\\[", "["),
           panels=ordered, footer=footer)


def engine_options(group: Any, ctx: Any, only: str | None = None) -> list[Any]:
    """Every engine-specific option of every command, once, with the commands that take it."""
    from kvplan.present.help_view import EngineOption

    found: dict[tuple[str, str], dict[str, Any]] = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        for param in getattr(command, "params", ()):
            panel = getattr(param, "rich_help_panel", None)
            if panel not in ENGINE_PANELS or (only is not None and panel != only):
                continue
            key = (panel, param.opts[0])
            entry = found.setdefault(key, {"names": _all_names(param),
                                           "help": (param.help or "").replace("\\[", "["),
                                           "commands": []})
            entry["commands"].append(name)
    order = {p: i for i, p in enumerate(ENGINE_PANELS)}
    return [EngineOption(panel=p, names=e["names"], help=e["help"],
                         commands=tuple(e["commands"]))
            for (p, _), e in sorted(found.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))]


def engine_flag_rows(only: str | None = None) -> list[Any]:
    """Each engine's own flags `--engine-arg` takes (its table, `Engine.engine_flags`), or only
    the engine `only` names (its display name)."""
    from kvplan.engines.base import Engine
    from kvplan.present.help_view import EngineFlagRow

    rows = []
    for e in Engine:
        name = e.rules.display_name
        if only is not None and name != only:
            continue
        for f in e.engine_flags.flags:
            same = f" (as kvplan's {f.kvplan_option})" if f.kvplan_option else ""
            same += f"; releases {f.releases}" if f.releases else ""
            rows.append(EngineFlagRow(panel=name, flag=f"{f.flag}: {f.expected}",
                                      help=f"{f.help} Sets {f.sets}{same}.", source=f.source))
    return rows


def help_cmd(
    ctx: typer.Context,
    topic: Annotated[str | None, typer.Argument(
        help="A command (its every option and alias in full), or 'engines' (every "
             "engine-specific option).", show_default=False)] = None,
    engine: Annotated[str | None, typer.Argument(
        help="With 'engines': only this engine's (vllm, sglang, tensorrt-llm).",
        show_default=False)] = None,
) -> None:
    """Help in full: `kvplan help estimate` (every option and alias of estimate), `kvplan help
    engines` (the vLLM, SGLang and TensorRT-LLM options of every command, and the engine flags
    `--engine-arg` takes)."""
    from kvplan.present.help_view import print_engine_options

    root = ctx.parent
    group = root.command
    if topic is None:
        import textwrap

        names = ", ".join(n for n in group.list_commands(root) if n != ctx.info_name)
        typer.echo("kvplan help COMMAND            every option of COMMAND and its aliases, "
                   "in full\n"
                   f"kvplan help {ENGINES_TOPIC} [ENGINE]   every engine-specific option, in full\n"
                   + textwrap.fill(f"COMMAND: {names}", width=80))
        return
    if topic == ENGINES_TOPIC:
        from kvplan.engines.base import Engine

        # An engine by its --engine value or its name: vllm, trtllm, tensorrt-llm.
        topics = {k: e.rules.display_name for e in Engine
                  for k in (e.value, e.rules.display_name.lower())}
        wanted = None if engine is None else topics.get(engine.strip().lower())
        if engine is not None and wanted is None:
            _refuse(f"ENGINE: expected one of {', '.join(topics)}, got {engine!r}")
        options = engine_options(group, root, wanted)
        print_engine_options(options, title="Engine-specific options, in full:",
                             flags=engine_flag_rows(wanted))
        return
    command = group.get_command(root, topic)
    if command is None:
        _refuse(f"TOPIC: no command {topic!r} (kvplan --help lists them)")
    sub = command.make_context(topic, [], parent=root, resilient_parsing=True)
    sub.meta[FULL_HELP_KEY] = True
    sub.info_name = topic
    typer.echo(command.get_help(sub), nl=False)


def _refuse(message: str) -> None:
    """Bad input: one line on stderr, exit 2 (as cli/common.py's handle_errors)."""
    import sys

    sys.stderr.write(f"kvplan: error: {message}\n")
    raise typer.Exit(2)
