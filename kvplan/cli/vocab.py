"""The engines' own option vocabulary: token counts with k/m suffixes and KV dtype spellings."""

from __future__ import annotations

from kvplan._util.dtypes import KV_DTYPE_ALIASES
from kvplan._util.errors import InputError

__all__ = ["KV_DTYPE_ALIASES", "kv_dtype_option", "parse_kv_dtype", "parse_tokens",
           "tokens_option"]


def parse_tokens(option: str, text: str) -> int:
    """4096, 32k (x1024), 1m (x1024^2)."""
    from kvplan.analysis.sweep import parse_size  # pure Python; pandas/numpy load only for a sweep

    try:
        return parse_size(option, text)
    except InputError:
        raise InputError(f"{option}: bad value {text.strip()!r} (expected a token count like "
                         "4096, 32k (x1024) or 1m (x1024^2))") from None


def parse_kv_dtype(option: str, text: str) -> str:
    try:
        return KV_DTYPE_ALIASES[text.strip().lower()]
    except KeyError:
        raise InputError(f"{option}: expected one of {', '.join(KV_DTYPE_ALIASES)}, got "
                         f"{text!r}") from None


def tokens_option(value: str | int) -> int:
    """typer parser for token-count options: 4096, 32k, 1m (one clear usage error otherwise)."""
    import typer

    if isinstance(value, int):
        return value
    try:
        return parse_tokens("value", value)
    except InputError as exc:
        raise typer.BadParameter(str(exc).removeprefix("value: ")) from None


def kv_dtype_option(value: str) -> str:
    import typer

    try:
        return parse_kv_dtype("value", value)
    except InputError as exc:
        raise typer.BadParameter(str(exc).removeprefix("value: ")) from None
