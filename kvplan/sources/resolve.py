"""Where a model comes from: bundled ids, spec files, config.json folders and Hugging Face ids,
read safely (size and path bounds, one-line errors)."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

from kvplan._util.errors import InputError, SpecError
from kvplan.model.spec import ModelSpec
from kvplan.sources.spec_yaml import parse_spec

# ---------------------------------------------------------------------------------------------
# Finding and reading files.


def bundled_specs_dir() -> Path:
    """Installed wheels carry the specs inside the package; a checkout has them at the top."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "model_specs", package.parent / "model_specs"):
        if candidate.is_dir():
            return candidate
    return package.parent / "model_specs"


def bundled_spec_ids() -> list[str]:
    return sorted(p.stem for p in bundled_specs_dir().glob("*.yaml"))


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


def load_spec_file(path: Path, *, spec_id: str | None = None) -> ModelSpec:
    import yaml  # light, but only needed here

    shown = shown_path(path)
    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise SpecError(shown, None, f"malformed YAML{where}: {problem}") from None
    except (ValueError, RecursionError, OverflowError) as exc:
        # A 5,000-digit integer (Python's int-string limit), nesting too deep to walk.
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise SpecError(shown, None, f"malformed YAML: {reason.splitlines()[0][:200]}") from None
    if data is None:
        raise SpecError(shown, None, "file is empty")
    return parse_spec(data, path=shown, spec_id=spec_id or path.stem)


def looks_like_path(model: str) -> bool:
    """A MODEL argument that names a file or folder rather than a bundled id: it contains a path
    separator or ends in .yaml/.yml/.json. Anything else is looked up as a bundled id first, so a
    folder called ``llama-3-8b`` in the working directory never shadows the bundled spec."""
    seps = [os.sep] + ([os.altsep] if os.altsep else [])
    return any(sep in model for sep in seps) or model.lower().endswith((".yaml", ".yml",
                                                                         ".json"))


def load_model(model: str) -> tuple[ModelSpec, list[str]]:
    """Resolve a MODEL argument, with any import warnings: a bundled id (``deepseek-v3``), a
    spec YAML file, a HuggingFace ``config.json``, or a folder holding a config.json.

    Bundled ids resolve first unless MODEL looks like a path (`looks_like_path`)."""
    if not model or not model.strip():
        raise InputError("MODEL: empty (give a bundled id, a spec YAML or a config.json)")
    if not looks_like_path(model) and len(model) <= 255:
        bundled = bundled_specs_dir() / f"{model}.yaml"
        if model in bundled_spec_ids():
            return load_spec_file(bundled, spec_id=model), []
    candidate = Path(model)
    kind = path_kind(candidate)
    if kind is None:
        from kvplan.sources.hub import is_hub_id, load_hub_model  # huggingface_hub only for Hub ids

        if is_hub_id(model):
            return load_hub_model(model)
    if kind == "dir":
        if path_kind(candidate / "config.json") is None:
            raise SpecError(shown_path(candidate), None,
                            "a folder without a config.json (give a spec YAML, a config.json or "
                            "a folder holding one)")
        from kvplan.sources.checkpoint import has_checkpoint, read_checkpoint
        from kvplan.sources.hf_config import load_config  # only when a config.json is given

        spec, warnings = load_config(candidate)
        if has_checkpoint(candidate):
            spec = replace(spec, checkpoint=read_checkpoint(
                candidate, num_hidden_layers=spec.num_hidden_layers))
        return spec, warnings
    if candidate.suffix.lower() == ".json":
        from kvplan.sources.hf_config import load_config

        return load_config(candidate)
    if kind is not None or candidate.suffix.lower() in (".yaml", ".yml"):
        return load_spec_file(candidate), []
    known = ", ".join(bundled_spec_ids())
    raise SpecError(shown_path(model), None, f"no such file or bundled spec (bundled: {known})")


def load_spec(model: str) -> ModelSpec:
    """Like `load_model`, without the import warnings."""
    return load_model(model)[0]


def load_bundled_specs() -> list[ModelSpec]:
    return [load_spec(spec_id) for spec_id in bundled_spec_ids()]
