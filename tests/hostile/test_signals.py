"""Hostile class 5: signals. A signal during a write leaves the target untouched (or whole) and
no temporary file, whatever the signal's default action."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.hostile.harness import kvplan, listing, no_temporary_file


def _when_writing(folder: Path, sig: int):  # noqa: ANN202
    """Send `sig` once the temporary file of the write exists."""
    def during(proc: subprocess.Popen[str]) -> None:
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and proc.poll() is None:
            if any(p.name.endswith(".tmp") for p in folder.iterdir()):
                proc.send_signal(sig)
                return
            time.sleep(0.02)
    return during


@pytest.mark.parametrize("sig", [signal.SIGQUIT, signal.SIGTERM, signal.SIGINT],
                         ids=["SIGQUIT", "SIGTERM", "SIGINT"])
def test_a_signal_during_sweep_output_leaves_nothing(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "sweep.csv"
    out.write_text("old\n")
    before = listing(tmp_path)
    # A streamed sweep of 2,000,000 rows: long enough to be caught writing.
    run = kvplan("sweep", "llama-3.1-8b", "--gpu", "H100", "-c", "1..20000:+1", "-b",
                 "1..100:+1", "-o", str(out), "--force", during=_when_writing(tmp_path, sig))
    assert run.code == (130 if sig == signal.SIGINT else 128 + sig), (run.code, run.stderr)
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) <= 1, run.stderr
    no_temporary_file(tmp_path)
    assert listing(tmp_path) == before  # the old file, untouched


def test_a_signal_swallowed_by_a_callback_still_ends_the_write(tmp_path: Path) -> None:
    # A signal whose handler runs inside a callback Python ignores exceptions of (seen: an import
    # lock's weakref callback, during a sweep's write) must not let the write go on and fail with
    # "cannot write ...: No such file" (exit 2): it ends with 128 + the signal, nothing left.
    import gc
    import weakref

    from kvplan.cli.outputs import atomic_write

    out = tmp_path / "out.csv"
    out.write_text("old\n")

    class Thing:
        pass

    def write(tmp: Path) -> None:
        tmp.write_text("partial\n")
        thing = Thing()
        ref = weakref.ref(thing, lambda _r: signal.raise_signal(signal.SIGTERM))
        del thing  # the callback runs here; the handler's SystemExit is swallowed
        gc.collect()
        assert ref() is None
        tmp.write_text("more\n")  # the temporary file is gone: this is what failed

    with pytest.raises(SystemExit) as ended:
        atomic_write("-o", out, write, force=True)
    assert ended.value.code == 128 + signal.SIGTERM
    no_temporary_file(tmp_path)
    assert out.read_text() == "old\n"
