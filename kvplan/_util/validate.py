"""The one validation layer for numbers and strings read from files (spec YAML, config.json,
quantization_config): integers where integers are meant, within sane bounds, and one-line text.

Every reader of user files (kvplan.sources.spec_yaml's ``_Reader``, kvplan.sources.hf_reader's
``ConfigReader``, which the config.json readers use, and
kvplan.model.quant_config.parse_quantization_config) goes through these functions, so NaN,
infinities, strings, floats (``1.5`` or ``2.0``), booleans and absurd sizes are refused the same
way everywhere: ``SpecError(path, field, message)``, one line naming the field.
"""

from __future__ import annotations

from typing import Any

from kvplan._util.errors import SpecError

# No dimension of a real model comes near 2^40 (a trillion); anything larger is a typo or an
# attack, and products of such numbers would leave the range numpy's int64 holds.
MAX_SIZE = 1 << 40
# Per-layer tuples are built from num_hidden_layers: cap it so that a hostile value cannot
# allocate gigabytes (the deepest real models have ~100-200 layers).
MAX_LAYERS = 1 << 16


def describe(value: Any) -> str:
    """A short, one-line rendering of a bad value for an error message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if value.bit_length() > 64:  # str() of a 5,000-digit int raises on Python >= 3.11
            return f"an integer of {value.bit_length():,} bits"
        return str(value)
    if isinstance(value, float):
        return repr(value)  # nan, inf, 1.5
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return repr(text)
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def checked_int(value: Any, *, path: str, field: str | None, minimum: int = 1,
                maximum: int = MAX_SIZE) -> int:
    """`value` as an int in [minimum, maximum], else a SpecError naming `field`. Booleans and
    floats (even ``2.0``: a config that writes a float where an int belongs is suspect) are
    refused, as are strings, NaN and infinities."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(path, field, f"expected an integer, got {describe(value)}")
    if value < minimum:
        raise SpecError(path, field, f"must be >= {minimum}, got {describe(value)}")
    if value > maximum:
        raise SpecError(path, field, f"must be <= {maximum:,}, got {describe(value)}")
    return value


def checked_int_list(value: Any, *, path: str, field: str | None, minimum: int = 0,
                     maximum: int = MAX_SIZE) -> list[int]:
    """A list of ints, each as `checked_int` wants it."""
    if not isinstance(value, list):
        raise SpecError(path, field, f"expected a list of integers, got {describe(value)}")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or not (
                minimum <= item <= maximum):
            raise SpecError(path, field, f"entries must be integers in [{minimum}, "
                                         f"{maximum:,}], got {describe(item)}")
    return list(value)


def checked_text_list(value: Any, *, path: str, field: str | None) -> tuple[str, ...]:
    """A list of `checked_text` strings (None: empty)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise SpecError(path, field, f"expected a list of names, got {describe(value)}")
    return tuple(checked_text(item, path=path, field=field) for item in value)


def checked_text(value: Any, *, path: str, field: str | None) -> str:
    """A non-empty, one-line string: a newline or other control character in a name would break
    tables and inject lines into the YAML header `kvplan import` writes."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(path, field, f"expected a non-empty string, got {describe(value)}")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise SpecError(path, field, "must be one line without control characters")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        # JSON's and YAML's "\ud800" escapes decode to half a character, which no output
        # encoding can write.
        raise SpecError(path, field, "not valid Unicode text (a lone surrogate escape)")
    if len(value) > 4096:
        raise SpecError(path, field, f"too long ({len(value):,} characters; at most 4,096)")
    return value
