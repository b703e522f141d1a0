"""Which bench rows are held out, prospective, or shaped: the split every bench prints.

A row is *fitted* when a fitted constant's `Fitted` record (beside it in kvplan, collected by
tests/benches/fitted_rows.py) names it in `fitted_on`; *same configuration* when it shares a fitted
row's (model, GPU, TP, EP) in the same table; *held out* otherwise. A held-out row is *prospective*
when it was committed after the last change to the rules that predict it (`LAST_RULE_CHANGE`: no
rule was written with it in view) and its source was not read before that change (`seen_before`:
a public log whose figures were in view when a rule or constant was written, though it entered the
bench later), and *shaped* when a rule was written after it was in the bench to move it
(`SHAPED_BY`): it was not used to fit a number, but it is no blind test of that rule either.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tests.benches.fitted_rows import FITTED, LAST_RULE_CHANGE, SHAPED_BY, RuleChange, Shaped
from tests.benches.row_commits import COMMIT_TIMES

HELD_OUT = ("held out (in no fitted constant's `fitted_on` and no fitted row's model, GPU, TP "
            "and EP; tests/benches/fitted_rows.py)")


@dataclass(frozen=True, kw_only=True)
class Row:
    """What the split needs of a bench row: its id, configuration and the commit that added it."""

    id: str
    model: str
    gpu: str
    tp: int
    ep: int
    added_in: str
    seen_before: bool = False

    @property
    def config(self) -> tuple[str, str, int, int]:
        return (self.model, self.gpu, self.tp, self.ep)


def fitted_ids() -> frozenset[str]:
    """Every row any fitted constant was fitted on."""
    return frozenset(row for fit in FITTED.values() for row in fit.fitted_on)


@dataclass(frozen=True, kw_only=True)
class Split:
    rows: tuple[Row, ...]
    fitted: tuple[str, ...]
    same_config: tuple[str, ...]
    held_out: tuple[str, ...]
    prospective: tuple[str, ...]
    shaped: tuple[tuple[Shaped, tuple[str, ...]], ...]
    rule_change: RuleChange
    seen_before: tuple[str, ...] = ()

    @property
    def unshaped(self) -> tuple[str, ...]:
        """The held-out rows no rule was written for."""
        touched = {row for _, rows in self.shaped for row in rows}
        return tuple(r for r in self.held_out if r not in touched)


def split(rows: Iterable[Row], bench: str) -> Split:
    """The honest split of one table's rows (`bench`: "engine" or "cost", for the rule change)."""
    rows = tuple(rows)
    fits = fitted_ids()
    fitted = tuple(r.id for r in rows if r.id in fits)
    configs = {r.config for r in rows if r.id in fits}
    same = tuple(r.id for r in rows if r.id not in fits and r.config in configs)
    held = tuple(r.id for r in rows if r.id not in fits and r.config not in configs)
    change = LAST_RULE_CHANGE[bench]
    added = {r.id: COMMIT_TIMES[r.added_in] for r in rows}
    shaped = tuple((s, tuple(r for r in s.rows if r in held)) for s in SHAPED_BY
                   if any(r in held for r in s.rows))
    # A row a rule was written for is no blind test, even when it entered the bench after it.
    touched = {r for _, ids in shaped for r in ids}
    seen = tuple(r.id for r in rows if r.seen_before and r.id in held)
    prospective = tuple(r for r in held
                        if added[r] > change.time and r not in touched and r not in seen)
    return Split(rows=rows, fitted=fitted, same_config=same, held_out=held,
                 prospective=prospective, shaped=shaped, rule_change=change, seen_before=seen)


def prospective_line(s: Split, unit: str) -> str:
    change = s.rule_change
    what = f"{len(s.prospective)} {unit}" if s.prospective else "none"
    return (f"prospective (held out and added after the last rule change, {change.commit[:7]} "
            f"of {change.time[:10]}, {change.paths}): {what}")


def shaped_lines(s: Split) -> list[str]:
    """One Markdown bullet per rule written for held-out rows already in the table."""
    return [f"- {shaped.rule} ({shaped.commit}): {'; '.join(rows)}" for shaped, rows in s.shaped]
