"""The hostile suite's harness (issue 32): every case runs kvplan as a real process under a
resource cap, so that a regression fails the case instead of hanging or swapping CI.

- address space: RLIMIT_AS of CAP_BYTES, set in the child itself before kvplan is imported (a
  bootstrap line instead of preexec_fn, which is unsafe while the fake Hub's thread runs);
- time: TIMEOUT_S of wall clock, then the process group is killed and the case fails;
- the contract of a refusal, asserted at once by `refused`: the exit code of the policy
  (examples/errors.md), nothing on stdout, exactly one stderr line, no traceback;
- files: `listing` before and after: no temporary file left, no file lost or changed.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CAP_BYTES = 4 << 30  # 4 GiB of address space per case
TIMEOUT_S = 30.0
_BOOT = ("import resource, sys; "
         "resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap})); "
         "sys.argv[0] = 'kvplan'; "
         "from kvplan.cli import main; main()")


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float


def clean_env(**extra: str | None) -> dict[str, str]:
    """This environment without the variables that steer kvplan from outside (torchrun's, the
    Hub's, debug), plus `extra` (None: removed)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                        "MASTER_PORT", "KVPLAN_DEBUG", "HF_HUB_OFFLINE", "HF_ENDPOINT")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def kvplan(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
           timeout_s: float = TIMEOUT_S, cap_bytes: int = CAP_BYTES,
           during: Callable[[subprocess.Popen[str]], None] | None = None) -> Run:
    """Run `kvplan ARGS` capped; `during(proc)` runs while it does (to send it a signal)."""
    cmd = [sys.executable, "-c", _BOOT.format(cap=cap_bytes), *args]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(env if env is not None else clean_env()),
                            cwd=cwd or ROOT, start_new_session=True)
    try:
        if during is not None:
            during(proc)
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"kvplan {' '.join(args)}: no answer within {timeout_s:g} s "
                             "(a hang)") from None
    return Run(proc.returncode, out, err, time.monotonic() - t0)


def refused(run: Run, code: int = 2, *, fragment: str = "") -> str:
    """The contract of a refusal: exit `code`, nothing on stdout, one stderr line (containing
    `fragment`), no traceback. Returns the line."""
    lines = run.stderr.splitlines()
    assert run.code == code, (run.code, run.stderr[-2000:])
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.stdout == "", run.stdout[:500]
    assert len(lines) == 1, run.stderr[-2000:]
    assert lines[0].startswith("kvplan: error: "), lines[0]
    assert "internal error" not in lines[0], lines[0]
    assert fragment in lines[0], lines[0]
    return lines[0]


def listing(folder: Path) -> dict[str, str]:
    """Every file under `folder` (hidden ones too) with its content's digest."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def no_temporary_file(folder: Path) -> None:
    left = [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]
    assert not left, left
