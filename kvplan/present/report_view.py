"""`kvplan report`: one self-contained HTML file (inline CSS and SVG charts drawn by matplotlib;
no script, no link, nothing fetched at view time) or Markdown (the same without charts), built
from the very Views `kvplan plan` and `kvplan estimate` print (plan_view, estimate_view,
capacity_view), so the report cannot say other than the commands. Computing is
kvplan.analysis.report's; matplotlib is imported only to draw."""

from __future__ import annotations

import html
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kvplan._util.units import GiB
from kvplan._util.version import __version__
from kvplan.engines.base import DEFAULT_ENGINE
from kvplan.engines.context import max_context_tokens
from kvplan.present.capacity_view import capacity_view, plan_view
from kvplan.present.estimate_view import estimate_view
from kvplan.present.offload_view import with_offload
from kvplan.present.render import View, to_markdown, versioned

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.analysis.report import ReportData

CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;
background:#fff;max-width:1000px;margin:2em auto;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.8em;
border-bottom:1px solid #d0d7de;padding-bottom:.2em}h3{font-size:1em}
.verdict{font-size:1.25em;font-weight:600;padding:.6em .9em;border-radius:6px}
.fits{background:#dafbe1;border:1px solid #2da44e}.nofit{background:#ffebe9;
border:1px solid #cf222e}.info{background:#ddf4ff;border:1px solid #54aeff}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.7em;
overflow-x:auto;font-size:13px}
table{border-collapse:collapse;margin:.4em 0;font-size:14px}
th,td{border:1px solid #d0d7de;padding:.25em .6em;vertical-align:top;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f6f8fa}
.chart svg{max-width:100%;height:auto}.muted{color:#57606a;font-size:.9em}
ul.notes{font-size:.92em;color:#3a4048}
"""

# Colours of the memory picture: weights, the reserve's parts (shades), KV, outside; the host
# tier's parts.
WEIGHTS, KV, FREE = "#4c72b0", "#55a868", "#e5e5e5"
HOST = ("#8172b3", "#937860", "#da8bc3")
RESERVE = ("#dd8452", "#e8a87c", "#c44e52", "#f0c080", "#b07040", "#d9a0a0", "#a05030")


def report_views(data: ReportData) -> list[View]:
    """The Views of the report, in order: the plan (with --concurrency), the KV sizes
    (`estimate`'s), then the capacity on one GPU."""
    views: list[View] = []
    if data.plan is not None:  # the plan as `kvplan plan` prints it (the capacity follows)
        plan = plan_view(data.spec, data.plan)
        views.append(plan.summary or plan)
    if data.answer is not None:
        views.append(estimate_view(data.spec, data.answer.estimate))
    if data.capacity is not None:
        views.append(with_offload(capacity_view(data.spec, data.capacity, device=data.device),
                                  data.offload))
    # A table two commands both show (the KV-cache groups, the assumptions) appears once.
    seen: set[str] = set()
    out = []
    for view in views:
        more = tuple(m for m in view.more if m.title not in seen)
        seen.update(m.title for m in (view, *more))
        out.append(replace(view, more=more))
    return out


def verdict(data: ReportData) -> tuple[str, str]:
    """(the one-line answer, its CSS class): the very line `kvplan plan` (with --concurrency) or
    `kvplan estimate` prints first (kvplan.present.answers), never worded here a second time."""
    from kvplan.analysis.answers import estimate_headline, plan_headline
    from kvplan.present.answers import estimate_answer, plan_answer

    if data.plan is not None:
        word = data.plan.verdict  # FITS, BORDERLINE (inside kvplan's error), DOES NOT FIT
        return (plan_answer(plan_headline(data.plan)),
                "nofit" if word == "DOES NOT FIT" else "fits")
    if data.answer is not None and data.answer.plan is not None:
        h = estimate_headline(data.answer, device=data.device.split(",")[0])
        return estimate_answer(h), "fits" if h.max_requests else "nofit"
    return "No device: sizes only", "info"


def launch_lines(data: ReportData) -> list[str]:
    views = report_views(data)
    return list(views[0].code) if views and data.plan is not None else []


def provenance(data: ReportData) -> list[tuple[str, str]]:
    """Where each number comes from: the config, the engine version and its rules, the weights,
    the reserve's parts, the budget formula, what was assumed, and kvplan's version."""
    spec = data.spec
    rows = [("model", f"{spec.name} ({spec.id})"),
            ("config", str(spec.source or spec.path)),
            ("exact", "yes: every size read from the config" if spec.exact
             else "no: " + "; ".join(f"{a.field} = {a.value} ({a.why})"
                                     for a in spec.assumptions))]
    records = _records(data)
    for key, label in (("engine", "engine"), ("engine_version", "engine version"),
                       ("platform", "platform"), ("budget_formula", "KV budget"),
                       ("mem_fraction_rule", "memory fraction"),
                       ("weights_source", "weights from"), ("weight_dtype", "weight dtype"),
                       ("candidates_searched", "candidates searched")):
        if records.get(key) not in (None, ""):
            rows.append((label, str(records[key])))
    for part, item in (records.get("reserve_breakdown") or {}).items():
        if isinstance(item, Mapping):
            rows.append((f"reserve: {part.replace('_', ' ')}",
                         f"{int(item['bytes']) / GiB:.2f} GiB: {item.get('rule', '')}"))
    rows.append(("kvplan", f"{__version__} (JSON schema {records.get('schema_version', '')})"))
    return rows


def record_sets(data: ReportData) -> dict[str, dict[str, Any]]:
    """The commands' JSON records, each whole: "plan" (`kvplan plan`), "estimate" and
    "capacity" (`kvplan estimate --gpu`); so a key the plan gains later is in the report too."""
    views = report_views(data)
    names = (["plan"] if data.plan is not None else []) + (
        ["estimate"] if data.answer is not None else []) + (
        ["capacity"] if data.capacity is not None else [])
    return {name: dict(versioned(view.records)) for name, view in zip(names, views, strict=True)
            if isinstance(view.records, Mapping)}


def _records(data: ReportData) -> dict[str, Any]:
    """The record sets merged, the plan's keys winning (its figures cover every replica)."""
    sets = record_sets(data)
    out: dict[str, Any] = {}
    for name in ("estimate", "capacity", "plan"):
        out.update(sets.get(name, {}))
    return out


# ---- Markdown ------------------------------------------------------------------------------

def to_report_markdown(data: ReportData) -> str:
    """The report without charts: the answer, the launch lines, the commands' tables, the
    memory per GPU as a table, and the provenance."""
    text, _ = verdict(data)
    lines = [f"# kvplan report: {data.spec.name}", "", f"**{text}**", ""]
    launch = launch_lines(data)
    if launch:
        lines += ["## Launch", "", "```console", *launch, "```", ""]
    memory = memory_rows(data)
    if memory:
        lines += ["## Memory per GPU", "", "| stage | part | GiB |", "|---|---|---:|"]
        lines += [f"| {s} | {p} | {b / GiB:,.2f} |" for s, parts in memory for p, b, _ in parts]
        lines.append("")
    for view in report_views(data):
        lines.append(to_markdown(view))
    lines += ["## Provenance", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v.replace('|', chr(92) + '|')} |" for k, v in provenance(data)]
    return "\n".join(lines) + "\n"


# ---- the memory picture --------------------------------------------------------------------

def memory_rows(data: ReportData) -> list[tuple[str, list[tuple[str, int, str]]]]:
    """Per pipeline stage (one GPU of it; TP ranks alike): (label, [(part, bytes, colour)]) --
    weights, the reserve's parts, the KV cache, and what the engine leaves unused -- summing to
    the device total, from the capacity records `kvplan estimate --gpu --format json` prints."""
    records = _records(data)
    total = records.get("total_bytes")
    stages = records.get("stages") or []
    if not total or not stages:
        return []
    breakdown = {k: int(v["bytes"]) for k, v in (records.get("reserve_breakdown") or {}).items()
                 if isinstance(v, Mapping) and int(v["bytes"]) > 0}
    out = []
    for stage in stages:
        parts = [("weights", int(stage["weights_bytes"]), WEIGHTS)]
        reserve = int(stage["reserve_bytes"])
        if breakdown and sum(breakdown.values()) == reserve:
            parts += [(f"reserve: {k.replace('_', ' ')}", v, RESERVE[i % len(RESERVE)])
                      for i, (k, v) in enumerate(breakdown.items())]
        elif reserve:
            parts.append(("reserve", reserve, RESERVE[0]))
        kv = int(stage["kv_budget_bytes"])
        parts.append(("KV cache", kv, KV))
        parts.append(("not used", max(0, int(total) - sum(b for _, b, _ in parts)), FREE))
        label = (f"stage {stage['stage']}: layers {stage['first_layer']}-"
                 f"{stage['first_layer'] + stage['num_layers'] - 1}" if len(stages) > 1
                 else "each GPU")
        out.append((label, parts))
    return out + _host_rows(data)


def _host_rows(data: ReportData) -> list[tuple[str, list[tuple[str, int, str]]]]:
    """The host tier, per GPU: each offload tier's DRAM (disk tiers apart) and the rest of the
    GPU's share of the node's DRAM (the node's DRAM / its GPUs, when known)."""
    off = data.offload
    if off is None or not off.tiers:
        return []
    parts = [(f"host: {t.name}", t.host_bytes_per_rank, HOST[i % len(HOST)])
             for i, t in enumerate(off.tiers) if t.host_bytes_per_rank]
    if not parts:
        return []
    if off.host_mem_bytes is not None and off.gpus_per_node:
        share = off.host_mem_bytes // off.gpus_per_node
        parts.append(("host: not used", max(0, share - sum(b for _, b, _ in parts)), FREE))
    return [("host DRAM, per GPU", parts)]


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def memory_svg(data: ReportData) -> str | None:
    from matplotlib.figure import Figure

    rows = memory_rows(data)
    if not rows:
        return None
    fig = Figure(figsize=(9, 1.8 + 0.55 * len(rows)), layout="constrained")
    ax = fig.add_subplot()
    seen: set[str] = set()
    for y, (_label, parts) in enumerate(rows):
        left = 0.0
        for name, size, colour in parts:
            width = size / GiB
            ax.barh(y, width, left=left, color=colour, edgecolor="white",
                    label=None if name in seen else name)
            if width > 4:
                ax.text(left + width / 2, y, f"{width:.1f}", ha="center", va="center",
                        fontsize="x-small")
            seen.add(name)
            left += width
    ax.set_yticks(range(len(rows)), [label for label, _ in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"GiB per GPU (of {data.device})")
    fig.legend(fontsize="x-small", ncols=5, loc="outside lower center")
    return _svg(fig)


def curves_svg(data: ReportData) -> str | None:
    from kvplan.present.sweep_plot import sweep_figure

    if data.curves is None or data.curves.empty:
        return None
    target = None
    if data.plan is not None:
        target = (data.plan.context, data.plan.concurrency)
    engine = data.capacity.engine if data.capacity is not None else DEFAULT_ENGINE
    fig = sweep_figure(data.curves, max_contexts={data.spec.id: max_context_tokens(data.spec,
                                                                                  engine)},
                       title="requests per replica vs context, per tensor-parallel degree",
                       target=target)
    return _svg(fig)


# ---- HTML ----------------------------------------------------------------------------------

def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def view_html(view: View, *, level: int = 3) -> str:
    """Any View as HTML: its title, its table (numeric columns right-aligned), its code lines and
    notes, then its further Views."""
    out = [f"<h{level}>{_e(view.title)}</h{level}>"]
    if view.rows:
        heads = "".join(f"<th>{_e(c.header)}</th>" for c in view.columns)
        head = f"<thead><tr>{heads}</tr></thead>" if any(c.header for c in view.columns) else ""
        out.append(f"<table>{head}<tbody>")
        for row in view.rows:
            cells = "".join(f"<td class=\"{'num' if c.numeric else ''}\">{_e(cell)}</td>"
                            for c, cell in zip(view.columns, row, strict=False))
            out.append(f"<tr>{cells}</tr>")
        out.append("</tbody></table>")
    if view.code:
        out.append("<pre>" + _e("\n".join(view.code)) + "</pre>")
    if view.notes:
        out.append("<ul class=\"notes\">" + "".join(f"<li>{_e(n)}</li>" for n in view.notes)
                   + "</ul>")
    out += [view_html(v, level=level + 1 if level < 4 else 4) for v in view.more]
    return "\n".join(out)


def _table(rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<table><tbody>{body}</tbody></table>"


def to_report_html(data: ReportData) -> str:
    """The report as one HTML page: nothing outside it is fetched when it is viewed."""
    text, css_class = verdict(data)
    title = f"kvplan report: {data.spec.name}"
    parts = [f"<h1>{_e(title)}</h1>",
             f"<p class=\"muted\">{_e(data.device)}; kvplan {_e(__version__)}</p>",
             f"<p class=\"verdict {css_class}\">{_e(text)}</p>"]
    launch = launch_lines(data)
    if launch:
        parts += ["<h2>Launch</h2>", "<pre>" + _e("\n".join(launch)) + "</pre>"]
    elif data.plan is None:
        parts.append("<p class=\"muted\">An estimate: give --concurrency for a plan and its "
                     "launch command.</p>")
    memory = memory_svg(data)
    if memory:
        parts += ["<h2>Memory per GPU</h2>", f"<div class=\"chart\">{memory}</div>"]
    curves = curves_svg(data)
    if curves:
        parts += ["<h2>Capacity against context</h2>",
                  "<p class=\"muted\">One replica of each tensor-parallel degree the model "
                  "takes, at the report's KV dtype and memory fraction (the numbers of "
                  "<code>kvplan sweep</code>, at the engine's default request cap, so a little "
                  "below the plan's own figure when it launches with a lower "
                  "<code>--max-num-seqs</code>).</p>", f"<div class=\"chart\">{curves}</div>"]
    parts.append("<h2>Numbers</h2>")
    parts += [view_html(v) for v in report_views(data)]
    parts += ["<h2>Provenance</h2>", _table(provenance(data))]
    records = json.dumps(record_sets(data), indent=1, default=str)
    parts += ["<details><summary>Every number (the commands' JSON)</summary>",
              f"<pre>{_e(records)}</pre></details>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
