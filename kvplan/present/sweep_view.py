"""`kvplan sweep`'s output: the DataFrame of ``kvplan.analysis.sweep.evaluate`` as JSON and CSV
text, its table and its sparklines (pandas objects in; pandas itself is never imported here
except to recognise its missing value)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kvplan._util.units import GiB, human_bytes
from kvplan.analysis.answers import sweep_headline
from kvplan.present.answers import sweep_answer
from kvplan.present.render import Column, View, versioned

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


# ---------------------------------------------------------------------------------------------
# Serialisation (pure: strings; the CLI writes them).


def json_value(value: Any) -> Any:
    """A DataFrame cell as a JSON value: pandas NA/NaN -> None, numpy scalars -> Python."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    try:
        import pandas as pd

        if value is pd.NA:
            return None
    except ImportError:  # pragma: no cover
        pass
    return value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain dicts of Python values (None for empty cells)."""
    names = list(df.columns)
    cols = [[json_value(v) for v in df[name].tolist()] for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*cols, strict=True)]


def to_json_text(df: pd.DataFrame) -> str:
    """A JSON list of objects, one per point; floats round-trip exactly; empty cells null."""
    return json.dumps(versioned([_with_concurrency(r) for r in records(df)]), indent=1) + "\n"


def _with_concurrency(rec: dict[str, Any]) -> dict[str, Any]:
    """"batch" kept; "concurrency" beside it, the name every command's JSON uses."""
    out: dict[str, Any] = {}
    for key, value in rec.items():
        out[key] = value
        if key == "batch":
            out["concurrency"] = value
    return out


def to_csv_text(df: pd.DataFrame) -> str:
    """CSV with a header; empty cells for missing values; floats as repr (round-trip)."""
    return df.to_csv(index=False, lineterminator="\n")


def csv_chunks(frames: Iterable[pd.DataFrame]) -> Iterator[str]:
    """`to_csv_text` of the frames' rows put together, a frame at a time (the header once): the
    same text, never held whole."""
    first = True
    for df in frames:
        yield df.to_csv(index=False, lineterminator="\n", header=first)
        first = False


def json_chunks(frames: Iterable[pd.DataFrame]) -> Iterator[str]:
    """`to_json_text` of the frames' rows put together, a frame at a time: the same text
    (json.dumps(..., indent=1) of the list), never held whole."""
    first = True
    for df in frames:
        for row in versioned([_with_concurrency(r) for r in records(df)]):
            # One row as json.dumps lays it out inside a list at indent 1: " {\n  ...\n }".
            text = json.dumps([row], indent=1)[2:-2]
            yield ("[\n" if first else ",\n") + text
            first = False
    yield "[]\n" if first else "\n]\n"


def _int(n: Any) -> str:
    return "" if json_value(n) is None else f"{int(n):,}"


def _varying(df: pd.DataFrame, name: str) -> bool:
    return df[name].nunique(dropna=False) > 1


def series_columns(df: pd.DataFrame) -> list[str]:
    """The dimensions besides context and batch that take more than one value: one plotted line
    (one sparkline) per combination of them."""
    return [c for c in ("model", "scheme", "kv_dtype", "gpu", "tp", "mem_fraction")
            if _varying(df, c)]


def sweep_view(df: pd.DataFrame, *, max_rows: int | None = None, head: int = 10) -> View:
    """The table: context and batch always, other dimensions only where they vary (constant ones
    go in the title). With `max_rows` and more rows than that, the first and last `head` rows."""
    has_capacity = df["num_blocks"].notna().any() if len(df) else False
    dims = ["model", "scheme", "kv_dtype", "gpu", "tp", "mem_fraction"]
    shown = [d for d in dims if _varying(df, d)]
    const = [d for d in dims if d not in shown and json_value(df[d].iloc[0]) is not None]
    columns = [Column(header=h, min_width=max(len(h), *(len(dim_text(h, json_value(v)))
                                                      for v in df[h].unique())))
               for h in shown]
    columns += [Column(header="context", numeric=True),
                                                    Column(header="batch", numeric=True)]
    # With a GPU, the capacity is the answer and the batch's bytes may give way to fit.
    columns += [Column(header="bytes/token", numeric=True, optional=True),
                Column(header="per sequence", numeric=True, optional=True),
                # With capacity columns, max_concurrency is the answer: per batch gives way
                # last, so that a sweep over several models fits 80 columns (issue 28).
                Column(header="per batch", numeric=True, optional=has_capacity,
                       last_resort=True)]
    if has_capacity:
        columns += [Column(header="KV budget", numeric=True, optional=True),
                    Column(header="num_blocks", numeric=True, optional=True),
                    Column(header="token_capacity", numeric=True, optional=True),
                    Column(header="max_concurrency", numeric=True,
                           table_header="max\nconcurrency"),
                    Column(header="max_requests", numeric=True, table_header="max\nrequests"),
                    Column(header="fits batch", min_width=len("fits batch"), optional=True)]
    total = len(df)
    if max_rows is not None and total > max_rows:
        picked = df.iloc[list(range(head)) + list(range(total - head, total))]
    else:
        picked = df
    rows = []
    for rec in records(picked):
        row = [dim_text(d, rec[d]) for d in shown]
        row += [_int(rec["context"]), _int(rec["batch"]), _int(rec["bytes_per_token"]),
                human_bytes(rec["bytes_per_sequence"]), human_bytes(rec["bytes_per_batch"])]
        if has_capacity:
            row += [f"{rec['kv_budget_bytes'] / GiB:,.2f} GiB", _int(rec["num_blocks"]),
                    _int(rec["token_capacity"]), f"{rec['max_concurrency']:,.2f}x",
                    _int(rec["max_requests"]), "yes" if rec["fits_batch"] else "no"]
        rows.append(row)
    if len(picked) < total:
        rows.insert(head, ["..."] * len(columns))
    first = df.iloc[0]
    models = ", ".join(str(m) for m in df["model"].unique()) if len(df) else ""
    title = (f"KV sweep: {models}, {total:,} points, {first['engine']}, "
             f"block {first['block_size']}"
             + "".join(f", {d} {dim_text(d, json_value(first[d]))}" for d in const))
    notes = ["Sizes are per GPU (rank) at the point's TP degree; sequences are block-rounded. "
             "Binary units (KiB/MiB/GiB = 2^10/2^20/2^30 B)."]
    if has_capacity:
        notes.append("Capacity as `kvplan estimate --gpu` plans it: the engine's memory "
                     "fraction, estimated weights and reserve.")
    return View(title=title, columns=columns, rows=rows, records=records(picked), notes=notes,
                answer=sweep_answer(sweep_headline(df)))


def dim_text(name: str, value: Any) -> str:
    if value is None:
        return "-"
    if name == "mem_fraction":
        return f"{value:.3g}"
    return str(value)


def metric(df: pd.DataFrame) -> tuple[str, str]:
    """(column, label) plotted against context: max concurrency with a GPU, else bytes per
    sequence."""
    if len(df) and df["max_concurrency"].notna().any():
        return "max_concurrency", "max concurrency (requests)"
    return "bytes_per_sequence", "KV bytes per sequence (per GPU)"


def series(df: pd.DataFrame) -> list[tuple[str, list[int], list[float]]]:
    """(label, contexts, values) per series: `metric` vs context at the first batch (neither
    metric depends on the batch). The label is the varying dimensions' values, space-separated,
    in `series_columns` order."""
    col, _ = metric(df)
    sub = df[df["batch"] == df["batch"].iloc[0]]
    keys = series_columns(df)
    out = []
    if not keys:
        ordered = sub.sort_values("context")
        return [(str(df["scheme"].iloc[0]), [int(c) for c in ordered["context"]],
                 [float(v) for v in ordered[col]])]
    for key, part in sub.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        # Numbers say what they are ("tp 2", "f 0.9"); names (model, scheme, dtype, GPU) do.
        label = " ".join(
            ({"tp": "tp", "mem_fraction": "f"}.get(k, "") + " " if k in ("tp", "mem_fraction")
             else "") + dim_text(k, json_value(v)) for k, v in zip(keys, key, strict=True))
        ordered = part.sort_values("context")
        out.append((label, [int(c) for c in ordered["context"]],
                    [float(v) for v in ordered[col]]))
    return out


_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float]) -> str:
    """Eight-level bars from the series' minimum to its maximum, on a log scale when every value
    is positive (capacity falls as 1/context), else linear."""
    if values and min(values) > 0:
        values = [math.log(v) for v in values]
    lo, hi = min(values), max(values)
    if hi <= lo:
        return _BARS[-1 if hi > 0 else 0] * len(values)
    return "".join(_BARS[min(7, int((v - lo) / (hi - lo) * 8))] for v in values)


def sparkline_view(df: pd.DataFrame, *, max_series: int = 40) -> View:
    col, label = metric(df)
    lines = series(df)
    rows = []
    width = max((len(ctx) for _, ctx, _ in lines), default=1)

    def fmt(v: float) -> str:
        return f"{v:,.2f}x" if col == "max_concurrency" else human_bytes(v)

    for name, ctx, values in lines[:max_series]:
        rows.append([name, sparkline(values), fmt(values[0]), fmt(values[-1]),
                     f"{ctx[0]:,}..{ctx[-1]:,}"])
    notes = [f"{label} vs context, one line per series; bars scale from each series' minimum "
             "to its maximum, log scale where all are positive; contexts ascending."]
    if len(lines) > max_series:
        notes.append(f"First {max_series} of {len(lines)} series shown.")
    return View(title=f"{label} vs context",
                columns=[Column(header="series",
                                min_width=max((len(n) for n, _, _ in lines), default=6)),
                         Column(header="trend", min_width=width),
                         Column(header="first", numeric=True), Column(header="last", numeric=True),
                         Column(header="context", numeric=True)],
                rows=rows, records=[], notes=notes)


def with_more(view: View, *more: View) -> View:
    return replace(view, more=(*view.more, *more))
