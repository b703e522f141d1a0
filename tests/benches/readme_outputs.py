"""The README's commands and the output it shows for them.

Run: python -m tests.benches.readme_outputs   (reruns every `$ kvplan ...` line of a ```console
block that shows its output, at 80 columns, and rewrites that output in README.md)

tests/test_readme.py runs every command found here (``commands``) and compares the output shown
with the real one, so that the README never shows an output kvplan no longer prints.

What counts as a command: in a ```bash block, a line starting with `kvplan `; in a ```console
block, a line starting with `$ kvplan `, whose output is the lines up to the next `$ ` or the end
of the block (a last line `...` shows only the lines before it). A trailing `# exit N` says the
exit code expected (else 0, or 2 when the output shown is a `kvplan: error:` line); `# GPU only`
marks a command that needs a CUDA device (skipped without one). The set-up lines (`python3 -m
venv ...`, `.venv/bin/python -m pytest`) are not commands: CI runs them itself (.ci/run).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
WIDTH = 80
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Command:
    line: str              # the command as written, without `$ ` or the trailing comment
    exit_code: int         # `# exit N`, else 0
    gpu_only: bool         # `# GPU only`
    shown: tuple[str, ...] | None  # the output the README shows (console blocks), else None
    start: int             # index of the first output line in the README's lines
    end: int               # index after the last output line

    @property
    def args(self) -> list[str]:
        return shlex.split(self.line)[1:]


def commands(text: str) -> list[Command]:
    lines = text.splitlines()
    found: list[Command] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _FENCE.match(line)
        if match:
            fence = None if fence is not None else match.group(1)
            i += 1
            continue
        prompt = "$ " if fence == "console" else ""
        if fence in ("bash", "console") and line.startswith(f"{prompt}kvplan "):
            body, _, comment = line[len(prompt):].partition("  #")
            code = re.search(r"exit (\d+)", comment)
            j = i + 1
            if fence == "console":
                while j < len(lines) and not lines[j].startswith(("$ ", "```")):
                    j += 1
            shown = tuple(lines[i + 1:j]) if j > i + 1 else None
            # An output that is an error line shows a refusal: exit 2 unless said otherwise.
            refused = shown is not None and shown[0].startswith("kvplan: error:")
            found.append(Command(body.strip(), int(code.group(1)) if code else 2 * refused,
                                 "GPU only" in comment, shown, i + 1, j))
            i = j
            continue
        i += 1
    return found


def run(command: Command, cwd: Path) -> tuple[int, str, str]:
    """Run one README command as a user would type it, at 80 columns, in ``cwd``: exit code,
    stdout, stderr."""
    from typer.testing import CliRunner

    from kvplan.cli import app

    here = os.getcwd()
    os.chdir(cwd)
    try:
        # Offline, as CI is: a Hub id in the README must come from a bundled spec or the cache.
        result = CliRunner().invoke(app, command.args,
                                    env={"COLUMNS": str(WIDTH), "HF_HUB_OFFLINE": "1"})
    finally:
        os.chdir(here)
    return result.exit_code, result.stdout, result.stderr


def printed(stdout: str, stderr: str) -> list[str]:
    """What a terminal shows: stdout, then stderr; trailing blanks dropped."""
    return [line.rstrip() for line in (stdout + stderr).rstrip("\n").splitlines()]


def as_shown(shown: tuple[str, ...], real: list[str]) -> list[str]:
    """The real output as the README shows it: whole, or its first lines then `...` when the
    README cuts it there."""
    if shown and shown[-1] == "..." and len(real) > len(shown) - 1:
        return real[:len(shown) - 1] + ["..."]
    return real


def main() -> None:
    import tempfile

    lines = README.read_text().splitlines()
    for command in reversed(commands("\n".join(lines))):
        if command.shown is None:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            _, out, err = run(command, Path(tmp))
        lines[command.start:command.end] = as_shown(command.shown, printed(out, err))
    README.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
