"""`kvplan COMMAND --help` in one screen, and `kvplan help engines` (issue 28 item 3).

The CLI reads its own options (names, metavar, help, panel) into `HelpRow`s; this module only
lays them out. `--help` gives each option one line (its shortest spelling and the first
sentence of its help that fits); `kvplan help COMMAND` is typer's full help, every alias and
every word; `kvplan help engines` lists the engine-specific options in full.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EngineOption", "HelpRow", "print_compact_help", "print_engine_options",
           "one_line"]

# Cells a rendered panel adds around its table: "│ " and " │", and the gap between the columns.
_PANEL_CELLS = 4
_GAP = 2
_NAME_MAX = 32


@dataclass(frozen=True)
class HelpRow:
    names: str
    """The option's shortest spellings: ``-c, --context TOKENS``."""
    help: str


@dataclass(frozen=True)
class EngineOption:
    panel: str
    """The engine whose option it is: vLLM, SGLang, TensorRT-LLM."""
    names: str
    """Every spelling, with the metavar."""
    help: str
    commands: tuple[str, ...]


@dataclass(frozen=True)
class EngineFlagRow:
    """One engine flag `--engine-arg` takes (kvplan.engines.<name>.engine_args), as shown."""

    panel: str  # the engine's display name
    flag: str  # the flag as the engine spells it, with what its value must be
    help: str  # what it sets in the simulator
    source: str  # the engine source defining it


def one_line(text: str, width: int) -> str:
    """`text` cut to `width` cells where it reads best: after whole sentences, else after
    whole clauses ("; "), else at a word with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    for sep, end in ((". ", "."), ("; ", "")):
        parts = text.split(sep)
        kept = ""
        for i in range(1, len(parts)):
            candidate = sep.join(parts[:i]) + end
            if len(candidate) <= width and _balanced(candidate):
                kept = candidate
        if kept:
            return kept
    cut = text[:max(1, width - 1)]
    if " " in cut:
        cut = cut[:cut.rindex(" ")]
    if not _balanced(cut) and len(cut[:_open_at(cut)].rstrip()) >= 12:
        cut = cut[:_open_at(cut)]  # not "(0.92…": a parenthesis whole or not at all
    return cut.rstrip(" ,;:(") + "…"


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")")


def _open_at(text: str) -> int:
    """Where the first parenthesis left open in `text` opens."""
    depth, opened = 0, []
    for i, ch in enumerate(text):
        if ch == "(":
            opened.append(i)
        elif ch == ")" and opened:
            opened.pop()
        depth = len(opened)
    return opened[0] if depth else len(text)


def _console(width: int | None = None):  # noqa: ANN202 - rich is imported here only
    from rich.console import Console

    return Console(markup=False, highlight=False, emoji=False, width=width)


def print_compact_help(*, usage: str, description: str,
                       panels: Sequence[tuple[str, Sequence[HelpRow]]], footer: str) -> None:
    """The command's help, one line an option, in rich panels (typer's look, a quarter of its
    length)."""
    from rich.box import ROUNDED
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    console = _console()
    width = console.width
    console.print()
    console.print(Padding(Text(usage, style="yellow"), (0, 1)))
    console.print()
    for paragraph in description.strip().split("\n\n"):
        console.print(Padding(Text(" ".join(paragraph.split())), (0, 1)))
    for title, group in panels:
        if not group:
            continue
        name_width = min(_NAME_MAX, max(len(r.names) for r in group))
        help_width = max(10, width - _PANEL_CELLS - _GAP - name_width)
        table = Table.grid(padding=(0, _GAP))
        table.add_column(style="bold cyan", no_wrap=True, width=name_width,
                         overflow="ellipsis")
        table.add_column(no_wrap=True, overflow="ellipsis")
        for row in group:
            table.add_row(row.names, one_line(row.help, help_width))
        console.print(Panel(table, title=title, title_align="left", box=ROUNDED,
                            border_style="dim", expand=True))
    console.print(Padding(Text(footer, style="dim"), (0, 1)))


def print_engine_options(options: Sequence[EngineOption], *, title: str,
                         flags: Sequence[EngineFlagRow] = ()) -> None:
    """`kvplan help engines`: each engine's options, every spelling and the whole help, with the
    commands that take them; then the engine's own flags `--engine-arg` takes."""
    from rich.box import ROUNDED
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    console = _console()
    console.print(Text(title))
    for panel in dict.fromkeys(o.panel for o in options):
        table = Table.grid(padding=(0, 1))
        table.add_column()
        for option in (o for o in options if o.panel == panel):
            table.add_row(Text(option.names, style="bold cyan"))
            table.add_row(Padding(Text(option.help), (0, 0, 0, 2)))
            table.add_row(Padding(Text("commands: " + ", ".join(option.commands), style="dim"),
                                  (0, 0, 0, 2)))
        console.print(Panel(table, title=f"{panel} options", title_align="left", box=ROUNDED,
                            border_style="dim", expand=True))
    for panel in dict.fromkeys(f.panel for f in flags):
        table = Table.grid(padding=(0, 1))
        table.add_column()
        for row in (f for f in flags if f.panel == panel):
            table.add_row(Text(row.flag, style="bold cyan"))
            table.add_row(Padding(Text(row.help), (0, 0, 0, 2)))
            table.add_row(Padding(Text("source: " + row.source, style="dim"), (0, 0, 0, 2)))
        console.print(Panel(table, title=f"{panel} flags: --engine-arg (simulate, plan --rate)",
                            title_align="left", box=ROUNDED, border_style="dim", expand=True))
    sys.stdout.flush()
