"""`kvplan check`'s views: predicted against live with the verdict, the settings each side used,
and the `--watch` screen (rich Live: the only place it runs).

JSON: `live` and `predicted` (the same keys), `agree`, `differences` (one per quantity both
have: live, predicted, difference, percent, allowed, agree, given, cause), `settings`, `engine`,
`version`, `model`, `url`, `measured_error`, `notes`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kvplan._util.units import GiB
from kvplan.analysis.answers import check_headline
from kvplan.analysis.check import CheckResult, Difference, LoadPoint, LoadView, load_view
from kvplan.present.answers import EXPLAIN_HINT, check_answer
from kvplan.present.render import Column, View

LABELS = {"num_gpu_blocks": "KV blocks", "kv_cache_tokens": "KV tokens",
          "max_concurrency": "max concurrency", "kv_cache_memory_bytes": "KV memory",
          "block_size": "block size"}


def _amount(key: str, value: float) -> str:
    if key == "kv_cache_memory_bytes":
        return f"{value / GiB:,.2f} GiB"
    if key == "max_concurrency":
        return f"{value:,.2f}x"
    return f"{int(round(value)):,}"


def _signed(key: str, value: float) -> str:
    text = _amount(key, abs(value))
    return ("+" if value >= 0 else "-") + text


def _verdict(d: Difference) -> str:
    if d.given:
        return "given"
    if d.agree:
        return "agree" if d.difference == 0 else f"agree (±{_amount(d.quantity, d.allowed)})"
    return "DISAGREE"


def verdict_line(d: Difference) -> str:
    """One line for a disagreement: the quantity, by how much, the likely cause."""
    pct = "" if d.percent is None else f" ({d.percent:+.1f}%)"
    return (f"{LABELS.get(d.quantity, d.quantity)} ({d.quantity}): live "
            f"{_amount(d.quantity, d.live)}, predicted {_amount(d.quantity, d.predicted)}, "
            f"{_signed(d.quantity, d.difference)}{pct} beyond ±"
            f"{_amount(d.quantity, d.allowed)}; likely {d.cause}")


def _setting(value: Any) -> str:
    return "" if value is None else str(value)


def check_records(r: CheckResult) -> dict[str, Any]:
    live = r.live_deployment
    return {
        "url": r.url, "engine": live.engine.value, "version": live.version,
        "model": r.model, "served_model": live.model_id,
        "live": dict(r.live), "predicted": dict(r.predicted), "agree": r.agree,
        "differences": [
            {"quantity": d.quantity, "live": d.live, "predicted": d.predicted,
             "difference": d.difference, "percent": d.percent, "allowed": d.allowed,
             "agree": d.agree, "given": d.given, "cause": d.cause}
            for d in r.differences],
        "settings": [{"name": s.name, "stated": s.stated, "server": s.server, "used": s.used,
                      "differs": s.differs} for s in r.settings],
        "budget_given": r.budget_given,
        "measured_error": {"relative": r.error.relative, "kv_bytes": r.error.kv_bytes,
                           "source": r.error.source},
        "sources": dict(live.sources),
        "notes": list(r.notes),
    }


def check_view(r: CheckResult) -> View:
    live = r.live_deployment
    name = live.engine.rules.display_name
    rows = [[LABELS.get(d.quantity, d.quantity), _amount(d.quantity, d.live),
             _amount(d.quantity, d.predicted),
             _signed(d.quantity, d.difference), _verdict(d)] for d in r.differences]
    band = ("exact" if r.error.relative == 0 and r.error.kv_bytes == 0 else
            f"max({r.error.relative:.0%}, {r.error.kv_bytes / GiB:g} GiB of KV)")
    notes = [f"{'AGREE' if r.agree else 'DISAGREE'}: {name} "
             f"{live.version or '(version not exposed)'} at {r.url} serving "
             f"{live.model_id or '?'}, checked against kvplan's plan for {r.model}.",
             f"Agreement band: {band}; {r.error.source}."]
    notes += [verdict_line(d) for d in r.disagreements]
    notes += list(r.notes)
    settings = View(
        title="Settings (stated over the server's)",
        columns=[Column(header="setting", no_wrap=True), Column(header="stated"),
                 Column(header="server"), Column(header="plan used")],
        rows=[[s.name + (" *" if s.differs else ""), _setting(s.stated), _setting(s.server),
               _setting(s.used)] for s in r.settings],
        records={}, notes=["* stated one way, run another"] if any(
            s.differs for s in r.settings) else [])
    view = View(
        title=f"kvplan check: {name} server against the plan",
        columns=[Column(header="quantity", no_wrap=True), Column(header="live", numeric=True),
                 Column(header="predicted", numeric=True),
                 Column(header="difference", numeric=True), Column(header="verdict")],
        rows=rows, records=check_records(r), notes=notes, more=(settings,))
    # Without --explain: the quantities and the disagreements, not the settings table.
    summary = replace(view, more=(), notes=[*notes[2:], EXPLAIN_HINT])
    return replace(view, answer=check_answer(check_headline(r)), summary=summary)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _duration(s: float | None) -> str:
    if s is None:
        return "not growing"
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 60:
        return f"{s / 60:.1f} min"
    return f"{s:.0f} s"


def load_records(r: CheckResult, lv: LoadView) -> dict[str, Any]:
    return {"url": r.url, "engine": r.live_deployment.engine.value, "agree": r.agree,
            "load": lv.to_dict()}


def load_view_table(r: CheckResult, lv: LoadView) -> View:
    used = "n/a" if lv.kv_tokens_used is None else f"{lv.kv_tokens_used:,}"
    rows = [
        ["KV usage", _pct(lv.kv_usage), f"{used} of {lv.kv_tokens_capacity:,} tokens"],
        ["running", "n/a" if lv.running is None else f"{lv.running:,}",
         f"plan: {lv.planned_max_requests:,} of max_model_len fit"],
        ["waiting", "n/a" if lv.waiting is None else f"{lv.waiting:,}", ""],
        ["prefix cache hits", _pct(lv.prefix_hit_rate), "of queried tokens"],
        ["KV growth", "n/a" if lv.kv_usage_growth_per_s is None
         else f"{100 * lv.kv_usage_growth_per_s:+.2f}%/s", "between the last two readings"],
        ["KV exhausted in", _duration(lv.seconds_to_kv_exhaustion), "at that growth"],
    ]
    return View(title=f"kvplan check --watch: {r.url} "
                      f"({'plan agrees' if r.agree else 'plan DISAGREES'})",
                columns=[Column(header="", no_wrap=True), Column(header="now", numeric=True),
                         Column(header="against")],
                rows=rows, records=load_records(r, lv))


def watch(r: CheckResult, read: Callable[[], LoadPoint], *, interval_s: float,
          sleep: Callable[[float], None], limit: int | None = None) -> int:
    """Refresh the load view every `interval_s` seconds until Ctrl-C (or `limit` readings);
    returns the readings taken. A KeyboardInterrupt ends it cleanly."""
    from rich.console import Console
    from rich.live import Live

    from kvplan.present.render import build_table

    console = Console(markup=False, highlight=False, emoji=False)
    taken = 0
    before: LoadPoint | None = None
    try:
        now = read()
        taken = 1
        with Live(build_table(load_view_table(r, load_view(r, now))), console=console,
                  auto_refresh=False, transient=False) as screen:
            while limit is None or taken < limit:
                sleep(interval_s)
                before, now = now, read()
                taken += 1
                screen.update(build_table(load_view_table(r, load_view(r, now, before))),
                              refresh=True)
    except KeyboardInterrupt:
        pass
    return taken
