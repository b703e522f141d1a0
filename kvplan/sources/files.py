"""Reading the files a user names, safely: size and path bounds, no FIFO or device read, one-line
errors naming the file (`read_text`, `path_kind`, `shown_path`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from kvplan._util.errors import SpecError

# Real config.json files are < 100 kB and spec YAMLs < 10 kB; a larger file is not a model
# description (and /dev/zero or a 10 GB file must not be read into memory).
MAX_INPUT_BYTES = 16 << 20
# Longer than any real path; the OS would refuse it anyway (ENAMETOOLONG), we say so first.
MAX_PATH_CHARS = 4096


def shown_path(path: str | Path) -> str:
    """A path as error messages show it: one line (control characters escaped), not too long."""
    text = str(path)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        text = repr(text)[1:-1]
    return text if len(text) <= 200 else f"{text[:100]}...{text[-40:]} ({len(text):,} characters)"


def _os_problem(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "file not found"
    return f"cannot read: {exc.strerror or exc.__class__.__name__}"


def path_kind(path: Path) -> str | None:
    """'file', 'dir', 'other' (FIFO, device, socket) or None (absent); stat errors other than
    absence (a symlink loop, a name too long, no permission) are a SpecError naming the path."""
    if len(str(path)) > MAX_PATH_CHARS:
        raise SpecError(shown_path(path), None, "path too long")
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise SpecError(shown_path(path), None, _os_problem(exc)) from None
    except ValueError:  # an embedded NUL byte
        raise SpecError(shown_path(path), None, "not a valid path") from None
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "dir" if stat.S_ISDIR(st.st_mode) else "other"


def read_text(path: Path) -> str:
    """A UTF-8 regular file's text. Anything else (missing, a directory, a FIFO or device, a
    symlink loop, unreadable, over MAX_INPUT_BYTES, not UTF-8) is a SpecError naming the file.

    The file is opened non-blocking and checked with fstat before a byte is read, so a FIFO
    named config.json cannot hang kvplan and /dev/zero cannot fill memory."""
    shown = shown_path(path)
    if len(str(path)) > MAX_PATH_CHARS:
        raise SpecError(shown, None, "path too long")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise SpecError(shown, None, _os_problem(exc)) from None
    except ValueError:
        raise SpecError(shown, None, "not a valid path") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SpecError(shown, None, "is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise SpecError(shown, None, "not a regular file (a FIFO, device or socket); "
                                         "refused before reading")
        if st.st_size > MAX_INPUT_BYTES:
            raise SpecError(shown, None, f"too large ({st.st_size:,} bytes; a model description "
                                         f"is at most {MAX_INPUT_BYTES:,})")
        chunks = []
        size = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_INPUT_BYTES:  # grew while we read
                raise SpecError(shown, None, f"too large (over {MAX_INPUT_BYTES:,} bytes)")
            chunks.append(chunk)
    except OSError as exc:
        raise SpecError(shown, None, _os_problem(exc)) from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(shown, None, f"not UTF-8 text (byte {exc.start:,})") from None


def parse_json(text: str | bytes, shown: str, what: str = "") -> Any:
    """JSON from a file kvplan did not write (a safetensors header, an index): anything that is
    not plain JSON (malformed, nested past the parser's depth, an integer of more digits than
    Python converts, NaN or an infinity) is a one-line SpecError naming the file."""
    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    prefix = f"{what} is " if what else ""
    try:
        return json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise SpecError(shown, None, f"{prefix}not valid JSON (line {exc.lineno}, column "
                                     f"{exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise SpecError(shown, None, f"{prefix}nested too deeply") from None
    except (ValueError, OverflowError) as exc:
        reason = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
        if "integer string conversion" in reason:  # Python's int-string limit (4,300 digits)
            reason = "an integer of too many digits"
        raise SpecError(shown, None, f"{prefix}not valid JSON ({reason})") from None
