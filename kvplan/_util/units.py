"""Byte units. GiB (2**30) and GB (10**9) are different numbers and are always labelled."""

from __future__ import annotations

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40
KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative integers (exact, no floats)."""
    return -(-a // b)


def gib_to_bytes(gib: float) -> int:
    """Convert a GiB figure a user typed (e.g. ``58.11``) to whole bytes, rounding down."""
    return int(gib * GiB)


def human_bytes(n: float) -> str:
    """Pick the largest binary unit that keeps the number >= 1 (``'69.12 KiB'``)."""
    for name, size in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {name}"
    return f"{int(n):,} B"


def human_bytes_decimal(n: float) -> str:
    """Like `human_bytes` in decimal units (kB = 10^3, MB = 10^6, GB = 10^9, TB = 10^12)."""
    for name, size in (("TB", TB), ("GB", GB), ("MB", MB), ("kB", KB)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {name}"
    return f"{int(n):,} B"
