"""What the engine benches share: paths, the tolerance, replaying a log through the CLI, the
honest split's row and its "shaped" list (tests/benches/engine_bench.py, trtllm_bench.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.benches import honest

ROOT = Path(__file__).resolve().parents[2]
ENGINE_LOGS = ROOT / "tests" / "data" / "engine_logs"
GiB = 1 << 30
TOLERANCE_GIB = 0.25  # issue #13: within max(2 %, 0.25 GiB)


def model_arg(log: dict[str, Any]) -> str:
    """MODEL: a bundled id, or a config.json under the repository."""
    spec = log["spec"]
    return str(ROOT / spec) if spec.endswith(".json") else spec


def device_args(log: dict[str, Any], mem_key: str = "gpu_mem_gib") -> list[str]:
    """A GPU not named in the log (or without a preset) is replayed on its logged total."""
    return (["--gpu-mem-gib", str(log[mem_key])] if log.get(mem_key)
            else ["--gpu", log["gpu"]])


def run_kvplan(args: list[str], where: str) -> dict[str, Any]:
    """kvplan's JSON for `args`, through the CLI as a user runs it; a failure names the log."""
    from kvplan.cli import app

    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        raise RuntimeError(f"{where}: kvplan {' '.join(args)}: {result.output}")
    return json.loads(result.stdout)


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def row(log: dict[str, Any], ep: int) -> honest.Row:
    return honest.Row(id=log["id"], model=log["model"], gpu=log["gpu"], tp=log["tp"], ep=ep,
                      added_in=log["added_in"],
                      seen_before=bool(log.get("seen_before_rule_change")))


def print_shaped(split: honest.Split) -> None:
    lines = honest.shaped_lines(split)
    if lines:
        print("\nHeld-out rows a rule was written for after they were in the bench (so no blind "
              "test of it; tests/benches/fitted_rows.py SHAPED_BY):\n")
        print("\n".join(lines))
