"""`kvplan models`: vLLM's registry, one row per architecture, with kvplan's status."""

from __future__ import annotations

from collections.abc import Sequence

from kvplan.present.render import Column, View
from kvplan.sources.support import (
    EXACT,
    GOLDEN_CONFIG_KINDS,
    STATUSES,
    Support,
    golden_config_kinds,
    support_table,
    support_version,
)


def _why(row: Support) -> str:
    """Exact rows: what holds them; the others: the one-line reason kvplan refuses with (after
    the release that first registers it, for an architecture newer than vLLM 0.32)."""
    since = (f"registered from vLLM {row.registered_from}; " if row.registered_from else
             f"removed after vLLM {row.removed_after}; " if row.removed_after else "")
    return since + _held_or_refused(row)


def _held_or_refused(row: Support) -> str:
    if row.status == EXACT:
        oracle = f", vLLM oracle {row.oracle}" if row.oracle else ", no CPU oracle"
        return f"golden {row.golden} ({row.golden_config} config){oracle}" + "".join(
            f"; refused where {name}: {why}" for name, why in _refusals(row))
    return row.reason or ""


def _refusals(row: Support) -> list[tuple[str, str]]:
    """An exact row's configs refused all the same: (what marks them, why)."""
    return ([(f"{field} is stated", why) for field, why in row.refused_with]
            + [(f"model_type is {kind}", why) for kind, why in row.refused_model_types])


def models_view(rows: Sequence[Support]) -> View:
    """The support table's `rows` (a selection of its architectures)."""
    total = len(support_table())
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    configs = {k: sum(r.golden_config == k for r in rows) for k in GOLDEN_CONFIG_KINDS}
    return View(
        title=f"vLLM {support_version()} architectures and kvplan's status",
        columns=[Column(header="architecture", no_wrap=True), Column(header="status"),
                 Column(header="model_type", optional=True),
                 Column(header="example", optional=True), Column(header="why")],
        rows=[[r.architecture, r.status, ", ".join(r.model_types) or "-", r.example or "-",
               _why(r)] for r in rows],
        records=[{"architecture": r.architecture, "status": r.status,
                  "vllm_group": r.category, "model_types": list(r.model_types),
                  "example": r.example, "reason": r.reason, "golden": r.golden,
                  "oracle": r.oracle, "golden_config": r.golden_config,
                  "registered_from": r.registered_from, "removed_after": r.removed_after,
                  "refused_where": [{"when": when, "reason": why}
                                    for when, why in _refusals(r)]} for r in rows],
        notes=[f"{len(rows)} of {total} architectures: "
               + ", ".join(f"{counts[s]} {s}" for s in STATUSES) + ".",
               "exact: kvplan's KV numbers equal vLLM's (a golden test of the real "
               "config.json, and the vLLM oracle where vLLM's CPU build runs the family); "
               "refused / not a decoder: a config.json naming the architecture exits 2 with "
               "the reason shown.",
               "golden configs of the exact rows: " + ", ".join(
                   f"{configs[k]} {k}" for k in GOLDEN_CONFIG_KINDS) + " (" + "; ".join(
                   f"{k}: {v}" for k, v in golden_config_kinds().items()) + "; each file's "
               "source: tests/data/configs/SOURCES*.md)."])
