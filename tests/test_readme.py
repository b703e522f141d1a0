"""The README runs: every command in it runs (at 80 columns, with the output it shows), every
printed line fits 80 columns, it fits a page, and its generated parts are current."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.benches import readme_outputs
from tests.benches.readme_outputs import WIDTH, as_shown, printed

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "README.md").read_text()
COMMANDS = readme_outputs.commands(TEXT)


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def test_readme_fits_a_page() -> None:
    assert len(TEXT.splitlines()) <= 250


def test_readme_has_the_recipes() -> None:
    # The 30-second example and the five recipes: plan, estimate, compare, sweep, verify.
    verbs = {c.args[0] for c in COMMANDS}
    assert {"plan", "estimate", "compare", "sweep", "verify", "report"} <= verbs
    assert len(COMMANDS) >= 12
    assert any(c.shown and c.args[0] == "plan" for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS, ids=[c.line for c in COMMANDS])
def test_readme_command_runs_within_80_columns(command, tmp_path: Path) -> None:
    if command.gpu_only and not _cuda():
        pytest.skip("needs a CUDA GPU (marked '# GPU only' in the README)")
    if "--plot" in command.args or command.args[0] == "report":
        pytest.importorskip("matplotlib")
    if command.args[0] == "verify":
        pytest.importorskip("torch")
    code, out, err = readme_outputs.run(command, tmp_path)
    assert code == command.exit_code, (command.line, out, err)
    wide = [line for line in (out + err).splitlines() if len(line) > WIDTH]
    assert not wide, (command.line, wide)
    if command.shown is not None:
        # Regenerate with `python -m tests.benches.readme_outputs` after an output change.
        assert list(command.shown) == as_shown(command.shown, printed(out, err)), command.line


def test_readme_printed_blocks_fit_80_columns() -> None:
    # The README's own output blocks (```console, ```text), prompts aside: nothing a terminal
    # would wrap.
    for block in re.findall(r"```(?:console|text)\n(.*?)```", TEXT, re.S):
        for line in block.splitlines():
            if not line.startswith("$ "):
                assert len(line) <= WIDTH, line


def test_readme_setup_commands_are_ci() -> None:
    # CI runs the README's two set-up commands; the first plans on a bundled model.
    blocks = re.findall(r"```bash\n(.*?)\n```", TEXT, re.S)
    setup, tests = blocks[0], blocks[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert tests == ".venv/bin/python -m pytest -q -n auto --dist worksteal" and tests in ci
    cpu_torch = "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
    assert cpu_torch in setup and cpu_torch in ci
    main_job = setup.split(" && ")[-1]
    assert main_job.startswith(".venv/bin/kvplan ") and main_job in ci


def test_readme_links_resolve() -> None:
    # Every relative link of the README and the guides names a file that exists.
    docs = [ROOT / "README.md", ROOT / "model_specs" / "README.md",
            *sorted((ROOT / "examples").glob("*.md"))]
    for doc in docs:
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", doc.read_text()):
            assert (doc.parent / target).exists(), (doc.name, target)


def test_bench_figures_block_is_current() -> None:
    # The README quotes the benches only through its generated block (issue 25: no stale "55
    # runs"); regenerate with `python -m tests.benches.readme_figures`.
    from tests.benches import readme_figures

    assert readme_figures.readme_block(TEXT) == readme_figures.figures()


def test_cli_reference_is_current() -> None:
    # examples/cli-reference.md is generated from the typer app: every command and option;
    # regenerate with `python -m tests.benches.cli_reference > examples/cli-reference.md`.
    from tests.benches import cli_reference

    text = cli_reference.reference()
    assert (ROOT / "examples" / "cli-reference.md").read_text() == text
    for command in ("estimate", "plan", "compare", "sweep", "verify", "report"):
        assert f"## kvplan {command}" in text


def test_bounds_table_is_current() -> None:
    # examples/errors.md states the bounds the constants hold; regenerate with
    # `python -m tests.benches.limits`.
    from tests.benches import limits

    assert limits.guide_block(limits.GUIDE.read_text()) == limits.block()
    # The bounds the README quotes are the table's.
    bound = {what: value.split(" (")[0] for what, value, _ in limits.rows()}
    quoted = {"an input file": bound["a spec, config.json or index file"],
              "a size": bound["a size in a spec or config.json"],
              "a sweep grid": bound["points in one sweep grid"] + " points",
              "all Hub requests of a command": bound["Hub requests of one command, in all"]}
    text = " ".join(TEXT.split())
    for phrase, value in quoted.items():
        assert f"{phrase}: {value}" in text, (phrase, value)


# The guides' example commands (the former README's Usage block and worked examples) run too;
# those that need the user's own files or a running server are left out.
GUIDES = ("capacity", "plan", "errors", "sweep", "simulate")
GUIDE_COMMANDS = [
    (name, c) for name in GUIDES
    for c in readme_outputs.commands((ROOT / "examples" / f"{name}.md").read_text())
    if "~/" not in c.line and "./my-model" not in c.line]


@pytest.mark.parametrize("guide,command", GUIDE_COMMANDS,
                         ids=[f"{g}: {c.line}" for g, c in GUIDE_COMMANDS])
def test_guide_command_runs(guide: str, command, tmp_path: Path) -> None:
    if "--plot" in command.args:
        pytest.importorskip("matplotlib")
    if command.args[0] == "verify":
        pytest.importorskip("torch")
    code, out, err = readme_outputs.run(command, tmp_path)
    assert code == command.exit_code, (guide, command.line, out, err)
    # Tables fit 80 columns (as the former README test held them: not JSON/CSV, nor a sweep
    # written to a file or plotted, whose grid may have more dimension columns than fit).
    if not {"--format", "-o", "--plot"} & set(command.args):
        wide = [line for line in out.splitlines() if len(line) > WIDTH]
        assert not wide, (guide, command.line, wide)


def test_guides_have_commands() -> None:
    assert len(GUIDE_COMMANDS) >= 20
