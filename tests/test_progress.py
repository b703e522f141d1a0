"""Issue 28 item 5: progress on stderr for long work (verify's phases, Hub fetches, sweeps,
simulations), drawn only on a terminal and never with --quiet; stdout unchanged."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util import progress
from kvplan.cli import app
from kvplan.present import progress_view
from tests.test_checkpoint_weights import LLAMA_CONFIG, llama_tensors, make_folder
from tests.test_hub import FakeHub, hub_env  # noqa: F401 - the fixture

runner = CliRunner()


def Console(**kwargs):  # noqa: N802 - rich's, imported when a test runs (ruff TID253)
    from rich.console import Console as RichConsole

    return RichConsole(**kwargs)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr as a terminal (rich forced to draw on whatever sys.stderr is at the time: the
    runner's), and the display shown at once instead of after a second."""
    monkeypatch.setattr(progress_view, "stderr_console",
                        lambda: Console(file=sys.stderr, force_terminal=True, width=80))
    monkeypatch.setattr(progress_view, "SHOW_AFTER_S", 0.0)


def _run(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


# --- the library's side: reports go to whoever listens, or nowhere -------------------------

def test_reports_go_nowhere_without_a_reporter_and_to_it_with_one() -> None:
    progress.report("nobody listens", 1, 2)  # no error, no output
    seen: list[tuple[str, int, int | None]] = []
    with progress.reporting_to(lambda *a: seen.append(a)):
        assert progress.active()
        with progress.phase("load"):
            pass
        assert list(progress.counted("abc", "items", 3)) == ["a", "b", "c"]
    assert not progress.active()
    assert seen == [("load", 0, None), ("load", 1, 1), ("items", 0, 3), ("items", 1, 3),
                    ("items", 2, 3), ("items", 3, 3)]


def test_the_display_draws_phases_and_clears_them() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    with progress_view.ProgressDisplay(console, show_after_s=0.0) as display:
        display("fill", 0, None)
        display("decode", 3, 4)
    text = out.getvalue()
    assert "fill" in text or "decode" in text
    assert text.endswith("\x1b[?25h") or "\x1b[2K" in text  # cleared, cursor shown again


def test_short_work_shows_nothing() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    with progress_view.ProgressDisplay(console, show_after_s=5.0) as display:
        display("quick", 1, 1)
    assert out.getvalue() == ""


# --- the CLI: on a terminal, progress; not a terminal or --quiet, nothing; stdout the same ----

SWEEP = ["sweep", "llama-3-8b", "-c", "1k,2k", "--gpu", "H100", "-f", "json"]


def test_sweep_progress_only_on_a_terminal(terminal: None, monkeypatch) -> None:
    shown = _run(*SWEEP)
    assert "sweep: llama-3-8b" in shown.stderr
    monkeypatch.undo()  # stderr is the runner's pipe again: not a terminal
    plain = _run(*SWEEP)
    assert plain.stderr == ""
    assert plain.stdout == shown.stdout


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("flag", ["--quiet", "-q"])
def test_quiet_draws_nothing_even_on_a_terminal(terminal: None, flag: str, where: str) -> None:
    args = [flag, *SWEEP] if where == "before" else [*SWEEP, flag]
    quiet = _run(*args)
    assert quiet.stderr == ""
    assert quiet.stdout == _run(*SWEEP).stdout


def test_simulate_progress(terminal: None) -> None:
    args = ["simulate", "llama-3-8b", "--gpu", "H100", "--num-requests", "30", "--rate", "5",
            "--input-len", "256", "--output-len", "32", "-f", "json"]
    shown = _run(*args)
    assert "simulate: requests served" in shown.stderr
    assert shown.stdout == _run("--quiet", *args).stdout


def test_verify_shows_its_phases(terminal: None) -> None:
    pytest.importorskip("torch")
    args = ["verify", "gpt2", "--device", "cpu", "-c", "64", "--budget-gib", "0.005",
            "-f", "json"]
    shown = _run(*args)
    for phase in ("verify: warm-up", "verify: fill", "verify: search", "verify: decode"):
        assert phase in shown.stderr, phase
    assert shown.stdout.startswith("{")  # the JSON alone on stdout (measured: not compared)


def test_a_hub_fetch_shows_progress(terminal: None, hub_env: FakeHub,  # noqa: F811
                                    tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    hub_env.add("org/tiny-llama", folder)
    shown = _run("estimate", "org/tiny-llama", "-f", "json")
    assert "Hub: org/tiny-llama: config.json" in shown.stderr
    assert "Hub: org/tiny-llama: safetensors headers" in shown.stderr
    # From the cache now: the same answer, and with --quiet not a byte on stderr.
    quiet = _run("estimate", "org/tiny-llama", "-f", "json", "--quiet")
    assert quiet.stderr == "" and quiet.stdout == shown.stdout
