"""Which architectures an engine release registers, read from a per-release table (issue 26).

An engine's `arrivals.json` (written by its tests/benches/<engine>_arrivals_dump.py) gives the
releases read, oldest first, and for each architecture name the ranges of consecutive releases
read that register it, [first, last] (last null: still in the newest read). This module holds the
part of the rule every engine shares: which release read stands for a version, whether a range
covers it, the first later release that registers a name or the last earlier one that did, and
the one-line refusal naming them. What an engine adds (renames, a fallback to name) stays in its
own module (kvplan.engines.sglang.architectures).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from kvplan._util.errors import UnmodelledError

Ranges = list[tuple[str, "str | None"]]
Key = Callable[[str], tuple[int, ...]]


def load_arrivals(path: Path) -> dict[str, Any]:
    """An arrivals.json: {"releases": [...], "architectures": {name: {"served": [[first,
    last or None], ...]}}, ...} (each engine may add keys of its own)."""
    return json.loads(path.read_text(encoding="utf-8"))


def release_read(releases: Sequence[str], version: str | None, key: Key) -> str:
    """The release read that stands for `version`: the release of that name, else the newest
    read at or below it by `key`; the oldest for one below every release, the newest for None."""
    if version is None:
        return releases[-1]
    if version in releases:
        return version
    at = key(version)
    below = [r for r in releases if key(r) <= at]
    return below[-1] if below else releases[0]


def served_ranges(table: dict[str, Any], name: str) -> Ranges:
    """The ranges of releases read that register `name` ([] for none)."""
    row = table["architectures"].get(name)
    return [(first, last) for first, last in row["served"]] if row else []


def covers(ranges: Ranges, release: str, key: Key) -> bool:
    """Whether one of `ranges` holds the release read `release`."""
    at = key(release)
    return any(key(first) <= at and (last is None or at <= key(last)) for first, last in ranges)


def first_after(ranges: Ranges, release: str, key: Key) -> str | None:
    """The first release read after `release` that starts one of `ranges` (None: none, or
    `release` is covered)."""
    if covers(ranges, release, key):
        return None
    at = key(release)
    return next((first for first, _ in ranges if key(first) > at), None)


def last_before(ranges: Ranges, release: str, key: Key) -> str | None:
    """The last release read before `release` that ends one of `ranges` (None: none, or
    `release` is covered)."""
    if covers(ranges, release, key):
        return None
    at = key(release)
    gone = [last for _, last in ranges if last and key(last) < at]
    return gone[-1] if gone else None


def refuse_unregistered(where: str, engine: str, ranges_by_name: dict[str, Ranges],
                        release: str, releases: Sequence[str], key: Key,
                        fallback: str = "") -> NoReturn:
    """Raise the one-line refusal for names (`ranges_by_name`, none covering `release`):
    `where` (file: field: what is missing) then the first later release that registers one
    ("--engine-version R or newer"), else the last earlier one that did ("R or older"), else
    that no release read does; `fallback` (what the engine would try instead) closes it."""
    later = [(n, r) for n, ranges in ranges_by_name.items()
             if (r := first_after(ranges, release, key))]
    if later:
        name, first = min(later, key=lambda nr: key(nr[1]))
        raise UnmodelledError(f"{where}; {engine} serves {name} from {first}: --engine-version "
                              f"{first} or newer{fallback}")
    earlier = [(n, r) for n, ranges in ranges_by_name.items()
               if (r := last_before(ranges, release, key))]
    if earlier:
        name, last = max(earlier, key=lambda nr: key(nr[1]))
        raise UnmodelledError(f"{where}; {engine} served {name} up to {last}: --engine-version "
                              f"{last} or older{fallback}")
    raise UnmodelledError(f"{where}, nor does any release read ({releases[0]} to "
                          f"{releases[-1]}){fallback}")
