"""kvplan's command line. Thin typer commands: parse, call the core, hand a View to render."""

from .app import app, main

__all__ = ["app", "main"]
