"""The time model's opt-in rules in a command's output (kvplan.perf.cost_rules): the JSON's
`cost_rules` (each rule on, its option, value and source) and one note under the table, only
where a rule is on, so that every output without one is unchanged. A default rule named there
(the experts' shape table on a CUDA device, "opt_in" false: moedefault63) is in the JSON only:
the note lists the opt-in ones."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kvplan.present.render import View


def cost_rules_note(records: list[dict[str, Any]]) -> str:
    def one(r: dict[str, Any]) -> str:
        value = r["value"]
        if value is None or isinstance(value, dict | str):
            return str(r["option"])
        # A time in seconds (`ungraphed_launch_s`) in its option's microseconds.
        return f"{r['option']} {value * 1e6 if r['rule'].endswith('_s') else value:g}"

    shown = ", ".join(one(r) for r in records)
    return (f"Opt-in cost rules on (not kvplan's defaults; JSON cost_rules names each source): "
            f"{shown}.")


def noted(view: View, records: list[dict[str, Any]]) -> View:
    """`view` with the note under it and under its summary (the table's default), where a rule
    is on."""
    asked = [r for r in records if r.get("opt_in", True)]
    if not asked:
        return view
    note = cost_rules_note(asked)
    summary = view.summary
    if summary is not None:
        summary = replace(summary, notes=(*summary.notes, note))
    return replace(view, notes=(*view.notes, note), summary=summary)


def with_cost_rules(view: View, records: list[dict[str, Any]]) -> View:
    """`view` with `records` under `cost_rules` and the note (unchanged where none is on); a
    view whose records are rows (compare) gets the key on every row."""
    if not records:
        return view
    if isinstance(view.records, dict):
        rows: Any = {**view.records, "cost_rules": records}
    else:
        rows = [{**r, "cost_rules": records} for r in view.records]
    return noted(replace(view, records=rows), records)
