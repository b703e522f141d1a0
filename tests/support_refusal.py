"""The support table's refusal check, written once for its test files (tests/test_support.py,
test_support_mm.py, test_support_text.py): a config kvplan must refuse as vLLM would."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kvplan.cli import app


def estimate_refusal(tmp_path: Path, config: dict) -> str:  # type: ignore[type-arg]
    """`kvplan estimate` of `config` (written to tmp_path/config.json) at 8,192 tokens: exit 2,
    nothing on stdout and one line on stderr, which is returned for the caller's checks."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["estimate", str(path), "--context", "8192"])
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    return line
