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
    # The table format's header when narrower than `header` (lines split at "\n"); Markdown
    # keeps `header`.
    table_header: str | None = None

    @property
    def shown_header(self) -> str:
        return self.header if self.table_header is None else self.table_header


# --wide: every column, whatever the terminal's width (set by the CLI for one invocation).
WIDE = False
# Prose columns wrap at words and keep each word whole (an identifier, a flag, a file name) up
# to PROSE_FOLD characters; only when the table cannot then fit the terminal do words longer
# than SHORT_FOLD fold, rather than the table running past the terminal's edge.
PROSE_FOLD = 40
SHORT_FOLD = 16


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
    # The one-line answer printed first in table format (issue 28: answer first).
    answer: str = ""
    # What the table format shows without --explain (None: the whole view); JSON, CSV and
    # Markdown always carry everything, and --explain shows the whole view after the answer.
    summary: View | None = None


def build_table(view: View, width: int | None = None):
    """A rich Table, so that tests can render it at a fixed width. With `width` (the console's),
    the prose columns get widths that keep every word whole where the table allows it."""
    from rich.table import Table

    widths = [None] * len(view.columns) if width is None else prose_widths(view, width)
    table = Table(title=view.title, title_justify="left", caption_justify="left")
    for col, fixed in zip(view.columns, widths, strict=True):
        table.add_column(col.shown_header, justify="right" if col.numeric else "left",
                         no_wrap=col.numeric or col.no_wrap, min_width=col.min_width,
                         width=fixed, overflow="fold")
    for row in view.rows:
        table.add_row(*row)
    return table


def _min_cell_width(col: Column, cells: list[str], fold: int = PROSE_FOLD) -> int:
    if col.numeric or col.min_width or col.no_wrap:
        # A cell may hold several lines (an exact figure above its binary size).
        widest = max((len(line) for c in cells for line in c.split("\n")), default=0)
    else:
        # Prose wraps at words; a word longer than `fold` folds.
        widest = min(fold, max((len(w) for c in cells for w in c.split()), default=0))
    # rich never wraps a no_wrap (numeric) column's header either, but keeps its lines.
    header = (max(len(line) for line in col.shown_header.split("\n")) if col.numeric
              else max((len(w) for w in col.shown_header.split()), default=0))
    return max(widest, header, col.min_width or 0)


def _min_table_width(view: View, fold: int = PROSE_FOLD) -> int:
    widths = [_min_cell_width(col, [row[i] for row in view.rows], fold)
              for i, col in enumerate(view.columns)]
    return sum(w + 3 for w in widths) + 1  # " x |" per column, plus the left border


def prose_widths(view: View, width: int) -> list[int | None]:
    """Widths for the prose columns when the table is wider than `width` (None: rich's own).
    rich narrows the widest wrapping column first, below its longest word if need be; here too
    the widest give way first (every prose column capped at one width), but none below its
    minimum (its longest word, see `_min_cell_width`)."""
    n = len(view.columns)
    cells = [[row[i] for row in view.rows] for i in range(n)]
    fold = PROSE_FOLD if _min_table_width(view) <= width else SHORT_FOLD
    mins = [_min_cell_width(c, cells[i], fold) for i, c in enumerate(view.columns)]
    natural = [max(len(line) for cell in [c.shown_header, *cells[i]] for line in cell.split("\n"))
               for i, c in enumerate(view.columns)]
    borders = 3 * n + 1
    prose = [i for i, c in enumerate(view.columns)
             if not (c.numeric or c.no_wrap or c.min_width)]
    room = width - borders - sum(max(mins[i], natural[i]) for i in range(n) if i not in prose)
    if sum(natural) + borders <= width or room < sum(mins[i] for i in prose) or not prose:
        return [None] * n

    def used(cap: int) -> int:
        return sum(max(mins[i], min(natural[i], cap)) for i in prose)

    cap = max(natural[i] for i in prose)
    while cap > 0 and used(cap) > room:
        cap -= 1
    out: list[int | None] = [None] * n
    for i in prose:
        out[i] = max(mins[i], min(natural[i], cap))
    return out


def needed_width(view: View, width: int) -> int:
    """The width the table is printed at when the terminal has `width` columns: its minimum
    with words whole up to PROSE_FOLD if that fits, else with words folded past SHORT_FOLD."""
    whole = _min_table_width(view)
    return whole if whole <= width else _min_table_width(view, SHORT_FOLD)


def _fits(view: View, width: int) -> bool:
    """Whether the view's table, as `emit` prints it, stays within `width` columns. emit widens
    the console to `_min_table_width` (numbers and ids whole), and rich folds or wraps every
    column down to the console's width; each column's minimum here is at most its natural
    width, so the printed table is exactly as wide as the wider of the two: it fits when the
    minimum does (tests/test_cli.py checks this against rich's own rendering)."""
    return needed_width(view, width) <= width


def _select(view: View, keep: list[int]) -> View:
    from dataclasses import replace

    return replace(view, columns=[view.columns[j] for j in keep],
                   rows=[[row[j] for j in keep] for row in view.rows])


def fit_columns(view: View, width: int) -> View:
    """Drop optional columns, rightmost first, until the table fits `width` (unless --wide);
    a note says how many are hidden. JSON, CSV and Markdown always keep every column. Hiding a
    column comes before folding a long word; folding comes before running past `width`."""
    from dataclasses import replace

    if WIDE or _min_table_width(view) <= width:
        return view
    # Rightmost first; a `last_resort` column after every other optional one.
    optional = sorted((i for i, c in enumerate(view.columns) if c.optional),
                      key=lambda i: (view.columns[i].last_resort, -i))
    keep = list(range(len(view.columns)))
    for fold in (PROSE_FOLD, SHORT_FOLD):
        keep = list(range(len(view.columns)))
        if _min_table_width(view, fold) <= width:
            break
        for i in optional:
            keep.remove(i)
            if _min_table_width(_select(view, keep), fold) <= width:
                break
        else:
            continue
        break
    hidden = len(view.columns) - len(keep)
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
    # A table cell's lines (kept apart only in the table format) join with a space.
    return text.replace("|", "\\|").replace("\n", " ")


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


def emit(view: View, fmt: OutputFormat, *, width: int | None = None,
         explain: bool = False) -> None:
    """Write a view to stdout in the requested format. Data only goes to stdout. The table
    format starts with the view's one-line answer, then shows its summary, or with `explain`
    (or no summary) the whole view; JSON, CSV and Markdown always carry everything."""
    if fmt is OutputFormat.json:
        sys.stdout.write(to_json(view))
    elif fmt is OutputFormat.csv:
        sys.stdout.write(to_csv(view))
    elif fmt is OutputFormat.markdown:
        sys.stdout.write(to_markdown(view))
    else:
        from rich.console import Console
        console = Console(markup=False, highlight=False, emoji=False, width=width)
        if view.answer:
            console.print(view.answer)  # wrapped at words should it not fit one line
        shown = view if explain or view.summary is None else view.summary
        for i, one in enumerate((shown, *shown.more)):
            if i:
                console.print()
            one = fit_columns(one, console.width)
            # Never squeeze a number into "1.88 G…": widen to what the table needs (numbers and
            # labels whole, text wrapped at words) even if lines then exceed the terminal.
            needed = needed_width(one, console.width)
            out = console if needed <= console.width else Console(
                markup=False, highlight=False, emoji=False, width=needed)
            table = build_table(one, out.width)
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
