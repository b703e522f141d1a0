"""kvplan's command line. Thin typer commands: parse, call the core, hand a View to render."""

import sys
from typing import Any

from kvplan.cli.app import main

# Importing the submodule bound `kvplan.cli.app` to it; as an attribute of this package, `app`
# is the typer app with every command instead (as before), built on first access: `main`
# builds only the command it runs.
del app  # type: ignore[name-defined]  # noqa: F821

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name == "app":
        value = sys.modules[f"{__name__}.app"].app
        globals()["app"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
