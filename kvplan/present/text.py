"""Text pieces every view shares: the bytes note, thousands separators, GiB figures."""

from __future__ import annotations

from kvplan._util.units import GiB

BYTES_NOTE = (
    "Bytes are exact integers. KiB/MiB/GiB are binary (2^10/2^20/2^30 B); "
    "kB/MB/GB are decimal (10^3/10^6/10^9 B)."
)


def commas(n: int) -> str:
    return f"{n:,}"


def gib_text(n: int | float) -> str:
    return f"{n / GiB:,.2f} GiB"
