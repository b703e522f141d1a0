"""Where a search's candidate evaluations run (issue 30, item 6): in this process, in a pool of
local processes (concurrent.futures.ProcessPoolExecutor), or as Ray remote tasks (the optional
extra `kvplan[ray]`) on a Ray cluster for searches that outgrow one machine.

The task function is pure and picklable (inputs -> result); results come back in the order the
tasks were given, whatever order they finish in, so a search run with any executor and any
number of jobs decides exactly as the serial run. At most `jobs` tasks are in flight: the
tasks are drawn lazily, and when the caller stops early (the search found its answer) the ones
still pending are cancelled.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from enum import Enum
from typing import Any, TypeVar

from kvplan._util.errors import InputError
from kvplan._util.progress import reporting_to

T = TypeVar("T")
R = TypeVar("R")


class Executor(str, Enum):
    local = "local"
    process = "process"
    ray = "ray"


def map_ordered(fn: Callable[[T], R], tasks: Iterable[T], *, executor: Executor = Executor.local,
                jobs: int = 1) -> Iterator[R]:
    """fn(task) for each task, in order, at most `jobs` at once. `local`, or `process` with one
    job: in this process. Close the iterator (or stop consuming it) to cancel what is left."""
    if jobs < 1:
        raise InputError(f"--jobs: at least 1, got {jobs}")
    if executor is Executor.ray:
        return _ray_map(fn, tasks, jobs)
    if executor is Executor.local or jobs == 1:
        return map(fn, tasks)
    return _process_map(fn, tasks, jobs)


def _windowed(submit: Callable[[T], Any], wait: Callable[[Any], R], cancel: Callable[[Any], None],
              tasks: Iterable[T], jobs: int) -> Iterator[R]:
    pending: deque[Any] = deque()
    source = iter(tasks)
    try:
        while True:
            while len(pending) < jobs:
                task = next(source, None)
                if task is None:
                    break
                pending.append(submit(task))
            if not pending:
                return
            yield wait(pending.popleft())
    finally:
        for handle in pending:
            cancel(handle)


def _quiet(fn: Callable[[T], R], task: T) -> R:
    """fn(task) reporting progress to nobody: a forked worker inherits the parent's reporter
    (the CLI's display), which must not draw from another process."""
    with reporting_to(None):
        return fn(task)


def _process_map(fn: Callable[[T], R], tasks: Iterable[T], jobs: int) -> Iterator[R]:
    # Fork where the platform has it: the workers inherit the loaded modules (spawn would
    # import kvplan again in each), and the parent holds no threads of its own here.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=jobs,
                             mp_context=multiprocessing.get_context(method)) as pool:
        yield from _windowed(lambda t: pool.submit(_quiet, fn, t), lambda f: f.result(),
                             lambda f: f.cancel(), tasks, jobs)


def _ray_map(fn: Callable[[T], R], tasks: Iterable[T], jobs: int) -> Iterator[R]:
    try:
        import ray
    except ImportError:
        raise InputError("--executor ray: ray is not installed (pip install 'kvplan[ray]')"
                         ) from None
    if not ray.is_initialized():
        # RAY_ADDRESS names a running cluster; without it Ray starts one on this machine.
        local = {} if os.environ.get("RAY_ADDRESS") else {"num_cpus": jobs}
        ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
                 **local)
    remote = ray.remote(num_cpus=1)(fn)
    return _windowed(lambda t: remote.remote(t), ray.get,
                     ray.cancel, tasks, jobs)
