"""Every command in the README's Usage block runs and exits 0 (docs that cannot drift)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app

README = (Path(__file__).resolve().parent.parent / "README.md").read_text().splitlines()
# A command whose comment says "exit N" documents that exit code (kvplan plan: 3, does not fit).
EXPECTED = {
    line.split("#")[0].strip()[2:]: int(m.group(1))
    for line in README if (m := re.search(r"# exit (\d)", line))
}
COMMANDS = [
    line.split("#")[0].strip()[2:]
    for i, line in enumerate(README)
    if re.match(r"\$ (kvplan|python -m kvplan) ", line)
    # An example followed by its error message shows a failure on purpose.
    and not README[i + 1].startswith("kvplan: error:")
]
# Lines that need the user's own files (a local model snapshot, their own spec).
RUNNABLE = [c for c in COMMANDS if "~/" not in c and "./my-model" not in c]
runner = CliRunner()


def test_readme_has_examples() -> None:
    assert len(RUNNABLE) >= 10


@pytest.mark.parametrize("command", RUNNABLE)
def test_readme_command_runs(command: str, tmp_path) -> None:
    args = shlex.split(command)
    args = args[3:] if args[0] == "python" else args[1:]
    if "--plot" in args:
        pytest.importorskip("matplotlib")
    for flag in ("-o", "--plot"):
        if flag in args:
            i = args.index(flag) + 1
            args[i] = str(tmp_path / Path(args[i]).name)
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == EXPECTED.get(command, 0), (command, result.output)
