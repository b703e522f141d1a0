"""What a running server says about its deployment, in kvplan's terms: the settings it was
started with, the KV capacity it allocated, and its load now (`kvplan check`).

Each engine package reads its own server (``kvplan.engines.<name>.live.LIVE``, a `LiveReader`):
which endpoints to ask, whether the answers are its own, what each metric and field means in
each of its versions, which kvplan settings they fix, what kvplan's plan predicts for the same
quantities, and how far apart the two may be (`MeasuredError`, taken from kvplan's benches).
The HTTP reading itself is kvplan.sources.server.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan.engines.accuracy import given_budget_runs, measured_error
from kvplan.engines.base import Engine

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.sources.server import ServerReplies

QUANTITIES = ("num_gpu_blocks", "kv_cache_tokens", "max_concurrency", "kv_cache_memory_bytes",
              "block_size")
"""The capacity quantities a server may expose and kvplan predicts (JSON keys of `live` and
`predicted`): KV blocks (pages), KV tokens, requests of max_model_len tokens that fit, KV bytes,
and the attention block (page) size in tokens the server resolved (always compared exactly)."""
EXACT = frozenset({"block_size"})


class CapacityFacts(Protocol):
    """The plan fields a server's quantities are predicted from
    (kvplan.capacity.plan.CapacityPlan)."""

    num_blocks: int
    reported_kv_cache_tokens: int
    max_concurrency: float
    kv_budget_bytes: int
    per_gpu_bytes_per_token: int
    block_size: int


@dataclass(frozen=True, kw_only=True)
class LiveLoad:
    """The server's load when read (None: not exposed)."""

    kv_usage: float | None = None
    """Fraction of the KV pool in use, 0 to 1."""
    running: int | None = None
    waiting: int | None = None
    prefix_cache_hits: float | None = None
    """Cumulative prefix-cache hits (tokens for vLLM), with the queries below."""
    prefix_cache_queries: float | None = None
    prefix_hit_rate: float | None = None
    """SGLang's own running hit rate (it exports no counters)."""


@dataclass(frozen=True, kw_only=True)
class LiveDeployment:
    """One server, read: its settings in kvplan's option names, its capacity, its load."""

    engine: Engine
    version: str | None
    model_id: str | None
    settings: Mapping[str, Any]
    """kvplan settings the server states (estimate_inputs' keyword names: context, kv_dtype,
    block_size, mem_fraction, kv_cache_memory, prefix_caching, ssm_dtype, tp, ...)."""
    shown: Mapping[str, str]
    """The same settings as the server spells them (``cache_dtype: auto``), for the view."""
    capacity: Mapping[str, float]
    """Of `QUANTITIES`, those the server exposes."""
    load: LiveLoad
    sources: Mapping[str, str] = field(default_factory=dict)
    """Where each capacity quantity and setting was read (metric, label or JSON field)."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class MeasuredError:
    """How far kvplan's capacity may be from the engine's and still agree: a relative share,
    or an amount of KV memory, whichever is larger, as measured on kvplan's benches."""

    relative: float
    kv_bytes: int
    source: str
    """The bench and its figures (what share of held-out rows fall within this band)."""

    def slack(self, predicted: float, predicted_kv_bytes: int) -> float:
        """The allowed |live - predicted| for a quantity whose prediction is `predicted`, when
        the plan's KV pool is `predicted_kv_bytes`."""
        share = self.relative
        if self.kv_bytes and predicted_kv_bytes > 0:
            share = max(share, self.kv_bytes / predicted_kv_bytes)
        return abs(predicted) * share


def derived_budget_error(engine: Engine) -> MeasuredError:
    """The band when kvplan derives the KV budget: the engine's measured error, the figure
    `kvplan plan` puts beside its verdict (kvplan.engines.accuracy, generated from the engine
    bench)."""
    err = measured_error(engine)
    return MeasuredError(
        relative=err.relative, kv_bytes=err.bytes,
        source=f"kvplan's measured error for {engine.value} (kvplan/engines/measured_error.json,"
               f" as plan's margin): 90 % of {err.logs} held-out start-up logs of "
               f"examples/engine-bench.md within max({err.relative:.2%}, "
               f"{err.bytes / GiB:.2f} GiB) of the logged KV budget")


def given_budget_error(engine: Engine) -> MeasuredError | None:
    """The band when the deployment states its KV budget: exact where kvplan matched every
    recorded run of the engine with the budget given (None: no such runs, or a miss)."""
    runs = given_budget_runs(engine)
    if runs is None or runs.matched != runs.runs:
        return None
    return MeasuredError(relative=0.0, kv_bytes=0,
                         source=f"{runs.matched} of {runs.runs} {runs.statistic}")


class LiveReader(Protocol):
    """An engine's server, as `kvplan check` reads it."""

    endpoints: tuple[str, ...]

    def recognizes(self, replies: ServerReplies) -> bool:
        """Whether these answers come from this engine's server."""
        ...

    def read(self, replies: ServerReplies) -> LiveDeployment:
        """The deployment, read; InputError (one line) when the server exposes too little."""
        ...

    def predicted(self, plan: CapacityFacts) -> dict[str, float]:
        """kvplan's plan as the same quantities the server exposes (`QUANTITIES` keys)."""
        ...

    def resolution(self) -> Mapping[str, float]:
        """The precision the server prints each quantity with (absolute; 0: exact)."""
        ...

    def measured_error(self, *, budget_given: bool) -> MeasuredError:
        """The agreement band: `budget_given` when the KV budget came from the deployment
        itself (vLLM's --kv-cache-memory, its CPU KV space) rather than kvplan's reserve."""
        ...


def live_reader(engine: Engine) -> LiveReader:
    """The engine's server reader (``kvplan.engines.<name>.live.LIVE``)."""
    reader: LiveReader | None = importlib.import_module(f"kvplan.engines.{engine.value}.live").LIVE
    if reader is None:
        raise InputError(f"--engine: kvplan cannot read a running {engine.rules.display_name} "
                         "server yet")
    return reader


def readers() -> list[tuple[Engine, LiveReader]]:
    """Every engine that can read its server, in the registry's order."""
    found = []
    for engine in Engine:
        reader = importlib.import_module(f"kvplan.engines.{engine.value}.live").LIVE
        if reader is not None:
            found.append((engine, reader))
    return found


def all_endpoints() -> tuple[str, ...]:
    """Every endpoint some engine reads, each once (to detect the engine in one pass)."""
    seen: list[str] = []
    for _, reader in readers():
        seen.extend(p for p in reader.endpoints if p not in seen)
    return tuple(seen)


def detect(replies: ServerReplies) -> Engine:
    """The engine whose server gave these answers; one line when none recognizes them."""
    for engine, reader in readers():
        if reader.recognizes(replies):
            return engine
    asked = ", ".join(replies.replies)
    raise InputError(f"{replies.url}: neither a vLLM nor an SGLang server (asked {asked}); "
                     "give --engine if it is one behind a proxy")
