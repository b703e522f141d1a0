"""The progress display on stderr (issue 28 item 5): a rich progress line for work that has
run over SHOW_AFTER_S, cleared when the work ends, so that stdout's data and the final stderr
lines are as without it. Silent when stderr is not a terminal, and with --quiet (QUIET, set by
the CLI for one invocation).

The library reports through kvplan._util.progress; this module only draws.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kvplan._util.progress import active, reporting_to

__all__ = ["QUIET", "SHOW_AFTER_S", "ProgressDisplay", "progress_shown", "stderr_console"]

# --quiet / -q: no progress display (set by the CLI for one invocation, as render.WIDE).
QUIET = False
# Work shorter than this shows nothing.
SHOW_AFTER_S = 1.0
# The display redraws at most this often (a simulation reports every finished request).
_MIN_UPDATE_S = 0.05


def stderr_console() -> Any:
    """The console the display draws on, None when stderr is not a terminal (rich is then not
    even imported); tests replace it with a forced terminal."""
    import sys

    if not sys.stderr.isatty():
        return None
    from rich.console import Console

    return Console(stderr=True, highlight=False, markup=False)


class ProgressDisplay:
    """A reporter (kvplan._util.progress.ProgressFn) drawing one line per phase: a spinner, the
    phase, a bar and count when the total is known, and the time elapsed. Shown only once the
    work has run `show_after_s`; transient."""

    def __init__(self, console: Any, *, show_after_s: float = SHOW_AFTER_S) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
            MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True,
            redirect_stdout=False, redirect_stderr=False)
        self._lock = threading.Lock()
        self._timer = threading.Timer(show_after_s, self._show)
        self._timer.daemon = True
        self._shown = self._closed = False
        self._task: Any = None
        self._what: str | None = None
        self._last = 0.0

    def _show(self) -> None:
        with self._lock:
            if not self._closed and not self._shown:
                self._progress.start()
                self._shown = True

    def __call__(self, what: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        with self._lock:
            if what != self._what:
                if self._task is not None:
                    self._progress.remove_task(self._task)
                self._task = self._progress.add_task(what, total=total, completed=done)
                self._what, self._last = what, now
            elif now - self._last >= _MIN_UPDATE_S or (total is not None and done >= total):
                self._progress.update(self._task, completed=done, total=total)
                self._last = now

    def __enter__(self) -> ProgressDisplay:
        if self._timer.interval <= 0:
            self._show()  # at once (tests), not from a thread that may start after the work
        else:
            self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._shown:
                self._progress.stop()  # transient: the line is cleared


@contextmanager
def progress_shown() -> Iterator[None]:
    """Reports inside the block drawn on stderr when it is a terminal and --quiet was not
    given; otherwise the reports go nowhere."""
    if active():  # inside another block that shows progress: its display shows this too
        yield
        return
    console = None if QUIET else stderr_console()
    if console is None or not console.is_terminal:
        with reporting_to(None):
            yield
        return
    with ProgressDisplay(console, show_after_s=SHOW_AFTER_S) as display, reporting_to(display):
        yield
