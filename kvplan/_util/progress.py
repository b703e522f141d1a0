"""Progress of long work, told to whoever shows it (issue 28 item 5).

The library never draws anything: work that can take seconds (verify's phases, a Hub fetch, a
large sweep, a simulation) calls `report(what, done, total)`, which does nothing unless a caller
has installed a reporter for the duration of a call (`reporting_to`). The CLI installs one that
draws a rich display on stderr (kvplan.present.progress_view); a library user may install
their own, e.g. ``with reporting_to(lambda what, done, total: print(what, done, total)):``.

The reporter is held in a context variable, so a report from deep inside (the Hub client, the
scheduler's loop) needs no parameter threaded through every layer, and threads or processes the
work starts report to nobody unless they install their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["ProgressFn", "active", "counted", "phase", "report", "reporting_to"]

ProgressFn = Callable[[str, int, "int | None"], None]
"""``fn(what, done, total)``: `what` names the phase (a new one ends the last), `done` counts
its units so far, `total` is their number (None: unknown, a spinner)."""

_reporter: ContextVar[ProgressFn | None] = ContextVar("kvplan_progress", default=None)

T = TypeVar("T")


@contextmanager
def reporting_to(fn: ProgressFn | None) -> Iterator[None]:
    """Send the reports made inside the block to `fn` (None: to nobody)."""
    token = _reporter.set(fn)
    try:
        yield
    finally:
        _reporter.reset(token)


def active() -> bool:
    """Whether a reporter is installed (a display already shown need not be shown twice)."""
    return _reporter.get() is not None


def report(what: str, done: int = 0, total: int | None = None) -> None:
    """Tell the reporter, if any, that phase `what` has `done` of `total` units done."""
    fn = _reporter.get()
    if fn is not None:
        fn(what, done, total)


@contextmanager
def phase(what: str) -> Iterator[None]:
    """A phase of unknown length: reported when it starts and when it ends."""
    report(what)
    yield
    report(what, 1, 1)


def counted(items: Iterable[T], what: str, total: int | None = None) -> Iterator[T]:
    """`items`, reporting how many were done before each and all of them at the end."""
    done = 0
    for item in items:
        report(what, done, total)
        yield item
        done += 1
    report(what, done, total if total is not None else done)
