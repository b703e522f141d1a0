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


TABLES = [c for c in RUNNABLE if "--format" not in c and " -o " not in c
          and "--plot" not in c and "verify" not in c]


@pytest.mark.parametrize("command", TABLES)
def test_readme_command_fits_80_columns(command: str) -> None:
    # Every table fits an 80-column terminal by default: optional columns give way, notes wrap
    # at words, ids and numbers are never broken (--wide shows every column).
    args = shlex.split(command)
    args = args[3:] if args[0] == "python" else args[1:]
    result = runner.invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == EXPECTED.get(command, 0), (command, result.output)
    widest = max(len(line) for line in result.stdout.splitlines())
    assert widest <= 80, (command, widest)


def test_wide_shows_every_column() -> None:
    narrow = runner.invoke(app, ["compare", "deepseek-v2", "--gpu", "H100"],
                           env={"COLUMNS": "80"}).stdout
    wide = runner.invoke(app, ["compare", "deepseek-v2", "--gpu", "H100", "--wide"],
                         env={"COLUMNS": "80"}).stdout
    assert "hidden to fit 80 columns" in narrow and "vs MHA" not in narrow
    assert "vs MHA" in wide and "hidden" not in wide


def test_bench_figures_block_is_current() -> None:
    # The README quotes the benches only through its generated block (issue 25: no stale "55
    # runs"); regenerate with `python -m tests.benches.readme_figures`.
    from tests.benches import readme_figures

    assert readme_figures.readme_block("\n".join(README)) == readme_figures.figures()
