"""An engine's own option given with another engine: refused in one line (exit 2) before the
command runs, instead of being ignored (`estimate --engine sglang --kv-transfer`).

Which engines read an option is kvplan.engines.option_readers.OPTION_READERS (read from the
code, not from the option's help panel). Only an option written on the command line is judged,
never a default. The engines in play are the command's --engine; a command whose --engine is
left out and has no single default (plan: vLLM unless a --question file names another; check:
detected from the server) has every engine in play, so only an option no engine reads would be
refused there. A command without --engine (compare, which runs every scheme on one engine's
rules) is not judged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvplan._util.errors import InputError

__all__ = ["check_engine_options"]

# Letters whose spoken name starts with a vowel sound ("an SGLang option", "a vLLM option").
_AN_LETTERS = frozenset("AEFHILMNORSX")


def _option_of(names: list[str]) -> str:
    text = " / ".join(names)
    return ("an " if text[:1] in _AN_LETTERS else "a ") + text + " option"


def refusal(flag: str, readers: frozenset[Any], engine: Any) -> str | None:
    """The one-line refusal of `flag` with `engine` (an Engine), or None when it reads it."""
    if engine in readers:
        return None
    from kvplan.engines.rules import Engine

    names = [e.rules.display_name for e in Engine if e in readers]
    return f"{flag}: {_option_of(names)}; --engine {engine.value} does not read it"


def check_engine_options(ctx: Any, flag_of: Callable[[Any], str]) -> None:
    """Refuse the first engine option written on the command line that no engine in play
    reads (InputError: one line, exit 2); `flag_of(param)`: the spelling the user wrote."""
    if "engine" not in ctx.params:
        return
    from kvplan.engines.option_readers import readers_of
    from kvplan.engines.rules import Engine

    chosen = ctx.params["engine"]
    in_play = set(Engine) if chosen is None else {Engine(chosen)}
    for param in ctx.command.params:
        opts = getattr(param, "opts", ())
        readers = readers_of(opts[0]) if opts else None
        if readers is None or readers & in_play:
            continue
        source = ctx.get_parameter_source(param.name)
        if getattr(source, "name", None) != "COMMANDLINE":
            continue
        # One engine in play (the common case) is named; several: the first that does not
        # read it (none of them does).
        message = refusal(flag_of(param), readers, min(in_play, key=list(Engine).index))
        if message is not None:
            raise InputError(message)
