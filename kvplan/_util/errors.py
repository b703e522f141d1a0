"""kvplan's exceptions. Domain code raises these; the CLI turns them into one-line messages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

_Value = TypeVar("_Value")


class KvplanError(Exception):
    """Base class. ``exit_code`` 2 means bad user input, 1 a runtime failure."""

    exit_code = 2


class SpecError(KvplanError):
    """A model spec (YAML or config.json) is missing, malformed or inconsistent.

    The message always names the file and the field: ``path: field: problem``.
    """

    def __init__(self, path: str, field: str | None, message: str) -> None:
        self.path = path
        self.field = field
        self.message = message
        where = f"{path}: {field}" if field else path
        super().__init__(f"{where}: {message}")


class InputError(KvplanError):
    """A command-line argument or combination of arguments is invalid."""


class UnmodelledError(InputError):
    """A model, GPU or engine (or their combination) kvplan cannot size correctly: refused with
    exit 2 in every command, never answered with a verdict (issue 32). The search behind
    `kvplan plan` skips layouts the engine refuses, but re-raises this: no layout would do."""


class DeviceError(KvplanError):
    """The requested device is unavailable or a measurement failed."""

    exit_code = 1


def unknown_choice(option: str, choices: Iterable[str], got: str) -> InputError:
    """The one line for a name that is none of `choices`: ``OPTION: expected one of A, B, got
    'x'``."""
    return InputError(f"{option}: expected one of {', '.join(choices)}, got {got!r}")


def one_of(table: Mapping[str, _Value], name: str, option: str) -> _Value:
    """`table[name]`, or `unknown_choice` naming `option` and the table's keys."""
    try:
        return table[name]
    except KeyError:
        raise unknown_choice(option, table, name) from None
