"""Reading a server for `kvplan check`: fetch its endpoints (kvplan.sources.server), find which
engine answered, and let that engine read its deployment (kvplan.engines.live). The one place
`check` does I/O; kvplan.analysis.check compares what it returns."""

from __future__ import annotations

import time

from kvplan.analysis.check import LoadPoint
from kvplan.engines.base import Engine
from kvplan.engines.live import LiveDeployment, all_endpoints, detect, live_reader
from kvplan.sources.server import DEFAULT_TIMEOUT_S, fetch


def read_server(url: str, *, engine: Engine | None = None,
                timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[str, LiveDeployment]:
    """The server's base URL and its deployment, read; `engine` None: detected from the
    endpoints that answer."""
    paths = all_endpoints() if engine is None else live_reader(engine).endpoints
    replies = fetch(url, paths, timeout_s=timeout_s)
    if engine is None:
        engine = detect(replies)
    return replies.url, live_reader(engine).read(replies)


def read_load(url: str, engine: Engine, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> LoadPoint:
    """One reading of the server's load (its metrics only)."""
    reader = live_reader(engine)
    replies = fetch(url, reader.endpoints, timeout_s=timeout_s)
    load = reader.read(replies).load
    return LoadPoint(t_s=time.monotonic(), kv_usage=load.kv_usage, running=load.running,
                     waiting=load.waiting, prefix_cache_hits=load.prefix_cache_hits,
                     prefix_cache_queries=load.prefix_cache_queries,
                     prefix_hit_rate=load.prefix_hit_rate)
