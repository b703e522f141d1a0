"""Rendering: the only module that imports rich. Computing happens elsewhere; this module turns a
`View` (a titled table plus machine-readable records) into table, JSON, CSV or Markdown text."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kvplan._util.version import SCHEMA_VERSION

JSON_SCHEMA_VERSION = SCHEMA_VERSION


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


@dataclass(frozen=True, kw_only=True)
class Column:
    header: str
    numeric: bool = False
    min_width: int | None = None
    # Hidden when the table would not fit the terminal (shown with --wide, and in JSON/CSV/MD).
    optional: bool = False
    # An optional column hidden only after every other optional one (a key figure that gives
    # way last).
    last_resort: bool = False
    # Never broken inside a word or id (the column takes the width of its widest cell).
    no_wrap: bool = False


# --wide: every column, whatever the terminal's width (set by the CLI for one invocation).
WIDE = False
PROSE_FOLD = 16


@dataclass(frozen=True, kw_only=True)
class View:
    """What a command shows. `records` is the data for JSON/CSV (a dict or a list of dicts);
    `columns`/`rows` are the human table; `notes` are printed under it (table and Markdown)."""

    title: str
    columns: Sequence[Column]
    rows: Sequence[Sequence[str]]
    records: Mapping[str, Any] | Sequence[Mapping[str, Any]]
    notes: Sequence[str] = field(default_factory=tuple)
    # Lines printed as they are, after the table and before the notes (table: never wrapped, so
    # a shell command pastes whole; Markdown: a console block; JSON/CSV use `records`).
    code: Sequence[str] = field(default_factory=tuple)
    # Further tables shown after this one (table and Markdown only; JSON/CSV use `records`).
    more: Sequence[View] = field(default_factory=tuple)


def build_table(view: View):
    """A rich Table, so that tests can render it at a fixed width."""
    from rich.table import Table

    table = Table(title=view.title, title_justify="left", caption_justify="left")
    for col in view.columns:
        table.add_column(col.header, justify="right" if col.numeric else "left",
                         no_wrap=col.numeric or col.no_wrap, min_width=col.min_width,
                         overflow="fold")
    for row in view.rows:
        table.add_row(*row)
    return table


def _min_cell_width(col: Column, cells: list[str]) -> int:
    if col.numeric or col.min_width or col.no_wrap:
        widest = max((len(c) for c in cells), default=0)
    else:
        # Prose wraps at words; a word longer than PROSE_FOLD (a formula, a flag name) folds.
        widest = min(PROSE_FOLD, max((len(w) for c in cells for w in c.split()), default=0))
    # rich never wraps a no_wrap (numeric) column's header either.
    header = len(col.header) if col.numeric else max((len(w) for w in col.header.split()),
                                                     default=0)
    return max(widest, header, col.min_width or 0)


def _min_table_width(view: View) -> int:
    widths = [_min_cell_width(col, [row[i] for row in view.rows])
              for i, col in enumerate(view.columns)]
    return sum(w + 3 for w in widths) + 1  # " x |" per column, plus the left border


def _fits(view: View, width: int) -> bool:
    """Whether the view's table, as `emit` prints it, stays within `width` columns. emit widens
    the console to `_min_table_width` (numbers and ids whole), and rich folds or wraps every
    column down to the console's width; each column's minimum here is at most its natural
    width, so the printed table is exactly as wide as the wider of the two: it fits when the
    minimum does (tests/test_cli.py checks this against rich's own rendering)."""
    return _min_table_width(view) <= width


def _select(view: View, keep: list[int]) -> View:
    from dataclasses import replace

    return replace(view, columns=[view.columns[j] for j in keep],
                   rows=[[row[j] for j in keep] for row in view.rows])


def fit_columns(view: View, width: int) -> View:
    """Drop optional columns, rightmost first, until the table fits `width` (unless --wide);
    a note says how many are hidden. JSON, CSV and Markdown always keep every column."""
    from dataclasses import replace

    if WIDE or _fits(view, width):
        return view
    keep = list(range(len(view.columns)))
    hidden = 0
    order = sorted((i for i, c in enumerate(view.columns) if c.optional),
                   key=lambda i: (view.columns[i].last_resort, -i))  # rightmost first
    for i in order:
        keep.remove(i)
        hidden += 1
        if _fits(_select(view, keep), width):
            break
    if not hidden:
        return view
    return replace(_select(view, keep),
                   notes=[*view.notes, f"{hidden} column(s) hidden to fit {width} columns: "
                                       "--wide shows them (JSON, CSV and Markdown have all)."])


def versioned(records: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Any:
    """Every JSON document kvplan writes carries the same ``schema_version``: an object gets it
    as its first key, a list of rows (specs, gpus, compare, sweep) gets it in every row, so a
    row read alone still says which contract it follows."""
    if isinstance(records, Mapping):
        return {"schema_version": JSON_SCHEMA_VERSION,
                **{k: v for k, v in records.items() if k != "schema_version"}}
    return [versioned(row) if isinstance(row, Mapping) else row for row in records]


def to_json(view: View) -> str:
    return json.dumps(versioned(view.records), indent=2, default=str) + "\n"


def _csv_cell(value: Any) -> Any:
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=str)
    return "" if value is None else value


def to_csv(view: View) -> str:
    records = [view.records] if isinstance(view.records, Mapping) else list(view.records)
    out = io.StringIO()
    if not records:
        return ""
    fieldnames: list[str] = []
    for rec in records:
        fieldnames.extend(k for k in rec if k not in fieldnames)
    writer = csv.DictWriter(out, fieldnames=fieldnames, lineterminator="\n")
    writer.writeheader()
    for rec in records:
        writer.writerow({k: _csv_cell(v) for k, v in rec.items()})
    return out.getvalue()


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(view: View) -> str:
    return "\n".join(_markdown_one(v) for v in (view, *view.more))


def _markdown_one(view: View) -> str:
    lines = [f"### {view.title}", ""]
    lines.append("| " + " | ".join(_md_escape(c.header) for c in view.columns) + " |")
    lines.append("|" + "|".join("---:" if c.numeric else "---" for c in view.columns) + "|")
    for row in view.rows:
        lines.append("| " + " | ".join(_md_escape(cell) for cell in row) + " |")
    if view.code:
        lines += ["", "```console", *view.code, "```"]
    if view.notes:
        lines.append("")
        lines.extend(f"- {note}" for note in view.notes)
    return "\n".join(lines) + "\n"


def emit(view: View, fmt: OutputFormat, *, width: int | None = None) -> None:
    """Write a view to stdout in the requested format. Data only goes to stdout."""
    if fmt is OutputFormat.json:
        sys.stdout.write(to_json(view))
    elif fmt is OutputFormat.csv:
        sys.stdout.write(to_csv(view))
    elif fmt is OutputFormat.markdown:
        sys.stdout.write(to_markdown(view))
    else:
        from rich.console import Console
        console = Console(markup=False, highlight=False, emoji=False, width=width)
        for i, one in enumerate((view, *view.more)):
            if i:
                console.print()
            one = fit_columns(one, console.width)
            table = build_table(one)
            # Never squeeze a number into "1.88 G…": widen to what the table needs (numbers and
            # labels whole, text wrapped at words) even if lines then exceed the terminal.
            needed = _min_table_width(one)
            out = console if needed <= console.width else Console(
                markup=False, highlight=False, emoji=False, width=needed)
            out.print(table)
            if one.code:
                sys.stdout.flush()
                sys.stdout.write("".join(line + "\n" for line in one.code))
            for note in one.notes:
                console.print(note)  # wrapped at words to the terminal
    sys.stdout.flush()


def warn(message: str) -> None:
    """Notes and warnings go to stderr so stdout stays parseable."""
    sys.stderr.write(message.rstrip("\n") + "\n")
