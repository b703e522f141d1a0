"""Output files: `check_output`'s rules for a target, and `atomic_write`, which leaves the target
either untouched or complete and never a temporary file (also on signals)."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kvplan._util.errors import InputError
from kvplan.sources.files import shown_path

__all__ = ["atomic_write", "check_output", "file_format"]


def file_format(option: str, path: str, formats: dict[str, str]) -> str:
    """The format `path`'s extension names in `formats` ({".png": "png", ...}), or one line
    naming the option and the extensions it takes."""
    ext = Path(path).suffix.lower()
    if ext not in formats:
        raise InputError(f"{option}: {path!r}: unknown extension {ext or '(none)'!r} "
                         f"(use {', '.join(formats)})")
    return formats[ext]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_output(option: str, path: Path, *, force: bool, inputs: Iterable[Path] = ()) -> None:
    """An output target may not exist (unless --force), may never be one of the inputs, and
    when it exists must be a regular file (never a folder, FIFO or device)."""
    shown = shown_path(path)
    if len(str(path)) > 4096:
        raise InputError(f"{option}: path too long")
    folder = path.parent
    try:
        st = os.stat(folder)
        if not stat.S_ISDIR(st.st_mode):
            raise InputError(f"{option}: cannot write {shown!r}: {shown_path(folder)!r} is not "
                             "a folder")
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if not folder.is_dir():
            raise InputError(f"{option}: folder {shown_path(folder)!r} does not exist"
                             ) from None
        return
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or "not a valid path"
        raise InputError(f"{option}: cannot write {shown!r}: {reason}") from None
    for source in inputs:
        if _same_file(path, source):
            raise InputError(f"{option}: {shown!r} is the input file; refusing to overwrite it")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{option}: {shown!r} exists and is not a regular file")
    if not force:
        raise InputError(f"{option}: {shown!r} exists (pass --force to overwrite)")


_FATAL_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGXCPU")


@contextmanager
def _cleanup_on_signals(cleanup: Callable[[], None]) -> Iterator[list[int]]:
    """A signal whose default action ends the process (SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2,
    SIGALRM, SIGXCPU) removes the temporary file before kvplan exits with 128 + its number
    (SIGQUIT left it, issue 32); SIGINT does through KeyboardInterrupt. SIGKILL cannot be
    caught: the target is still untouched, and only a hidden .NAME.*.tmp file can be left.
    Yields the list the caught signal is noted in: a signal that lands while Python runs a
    callback whose exceptions it ignores (an import lock's weakref callback) does not end the
    process there, so the caller ends it (`_exit_if_caught`)."""
    caught: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        caught.append(signum)
        cleanup()
        raise SystemExit(128 + signum)

    previous: dict[int, Any] = {}
    for name in _FATAL_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass
    hook = sys.unraisablehook

    def unraisable(info: Any) -> None:  # the handler's SystemExit, swallowed: said by the exit
        if not (caught and info.exc_type is SystemExit):
            hook(info)

    sys.unraisablehook = unraisable
    try:
        yield caught
    finally:
        sys.unraisablehook = hook
        for sig, old in previous.items():
            signal.signal(sig, old)


def _exit_if_caught(caught: list[int]) -> None:
    """Exit with 128 + the signal's number if one was caught (its handler's SystemExit may have
    been swallowed)."""
    if caught:
        raise SystemExit(128 + caught[0])


def atomic_write(option: str, path: Path, write: Callable[[Path], None], *,
                 force: bool = True, inputs: Iterable[Path] = ()) -> None:
    """Write via `write(tmp)` to a temporary file in the target's folder, then os.replace it over
    `path`: the target is either untouched or complete. The temporary file never survives (also
    on Ctrl-C, SIGTERM and SIGHUP). `check_output`'s rules apply first."""
    inputs = list(inputs)
    check_output(option, path, force=force, inputs=inputs)
    shown = shown_path(path)
    folder = path.parent
    try:
        if not folder.is_dir():
            raise InputError(f"{option}: folder {shown_path(folder)!r} does not exist")
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp",
                                        dir=folder)
    except OSError as exc:
        raise InputError(f"{option}: cannot write {shown!r}: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(tmp_name)

    def remove_tmp() -> None:
        with contextlib.suppress(OSError):
            tmp.unlink()

    caught: list[int] = []
    try:
        with _cleanup_on_signals(remove_tmp) as caught:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would otherwise stick to the result
            write(tmp)
            _exit_if_caught(caught)
            # Between the check above and now the target may have appeared: check again.
            check_output(option, path, force=force, inputs=inputs)
            os.replace(tmp, path)
    except OSError as exc:
        remove_tmp()
        _exit_if_caught(caught)
        raise InputError(f"{option}: cannot write {shown!r}: {exc.strerror or exc}") from None
    except BaseException:
        remove_tmp()
        _exit_if_caught(caught)
        raise
