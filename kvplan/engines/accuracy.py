"""kvplan's measured error per engine: how far its KV budget fell from the engine's own start-up
logs on the held-out rows of examples/engine-bench.md. The figures are data written by the bench
(`python -m tests.benches.measured_error` writes ``measured_error.json`` beside this module;
tests/test_measured_error.py holds them equal to the bench), never typed here. `kvplan check`
takes its agreement bands from the same data (kvplan.engines.<name>.live), so plan's margin and
check's agree/disagree quote one figure."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kvplan.engines.base import Engine

DATA_FILE = Path(__file__).with_name("measured_error.json")


@dataclass(frozen=True, kw_only=True)
class MeasuredError:
    """90 % of the engine's held-out logs fell within max(relative x KV budget, bytes)."""

    relative: float
    bytes: int
    logs: int
    statistic: str

    def band_bytes(self, kv_budget_bytes: int) -> int:
        """The error band around a KV budget of `kv_budget_bytes` (per GPU); a budget below
        zero has only the absolute part (the relative one was measured on positive budgets)."""
        return max(int(self.relative * max(kv_budget_bytes, 0)), self.bytes)

    def to_dict(self) -> dict[str, Any]:
        return {"relative": self.relative, "bytes": self.bytes, "logs": self.logs,
                "statistic": self.statistic}


@dataclass(frozen=True, kw_only=True)
class ExactRuns:
    """Recorded engine runs with the KV budget given that kvplan matched exactly."""

    matched: int
    runs: int
    statistic: str


@cache
def _data() -> dict[str, Any]:
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


@cache
def _table() -> dict[str, MeasuredError]:
    return {name: MeasuredError(**fields) for name, fields in _data().items()
            if name != "given_budget"}


def given_budget_runs(engine: Engine) -> ExactRuns | None:
    """The engine's recorded runs with the budget given, and how many kvplan matched exactly
    (None: no such runs recorded)."""
    fields = _data()["given_budget"].get(engine.value)
    return None if fields is None else ExactRuns(**fields)


def measured_error(engine: Engine) -> MeasuredError:
    """The engine's measured error (every engine kvplan models has held-out logs)."""
    return _table()[engine.value]
