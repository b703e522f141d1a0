"""Python's cyclic garbage collector paused over a simulation's event loop (speed only).

A replay holds millions of small containers that live for the whole run (vLLM's and SGLang's
per-page blocks, `[hash, refs]` lists, one per token at SGLang's page size 1; the requests and
their block lists), and it makes almost no reference cycles: everything it drops is freed by
reference counting. The collector still scans the live containers at every generation-2
collection, a third of the heaviest replays' CPU (tests.benches.gcspeed66 measures it). Paused
over the run, the same objects are made and freed in the same order; nothing the simulation
computes depends on when the collector runs, so every output stays byte-identical.

`collector_paused` is re-entrant (a simulation inside a simulation, e.g. a rate search's trials
run in-process) and thread-safe: the collector is turned off by the outermost scope only if it
was on, and turned back on when the last scope open in the process closes, also on an
exception. It never collects on its own: what the run left cyclic is found by the caller's
next collection, as it would have been.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0  # scopes open in the process
_resume = False  # the collector was on when the outermost scope opened


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the `with` body (or a decorated call), restored on the way out."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
