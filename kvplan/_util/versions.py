"""Engine versions as users and logs spell them: 0.19, 0.10.1.1, v0.11.0, 0.20.1rc1.dev16+g7a1eb8ac2
(what `vllm --version` prints for a nightly), 0.5.5.post1. The numeric release parts decide which
rules apply; a pre-release, post-release or local suffix follows its release's rules."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from kvplan._util.errors import InputError

_Row = TypeVar("_Row")

_RELEASE = re.compile(r"v?(\d+(?:\.\d+){1,3})(?:(?:rc|a|b|\.?post|\.?dev)\d*)*(?:\+[\w.]+)?")
NEWEST = (99,)  # the key of no version given: the newest release's rules


def _matched(pattern: re.Pattern[str], text: str, expected: str) -> re.Match[str]:
    """`text` as `pattern` reads it whole; one line naming --engine-version on anything else."""
    found = pattern.fullmatch(text.strip())
    if found is None:
        raise InputError(f"--engine-version: expected {expected}, got {text!r}")
    return found


def version_key(text: str | None) -> tuple[int, ...]:
    """The release as a tuple of ints (None: the newest, (99,)). One line on anything else."""
    if text is None:
        return NEWEST
    found = _matched(_RELEASE, text, "X.Y[.Z] (e.g. 0.19, 0.10.1.1, 0.11.0rc1)")
    return tuple(int(p) for p in found.group(1).split("."))


_POST = re.compile(r"\.?post(\d+)")


def release_post_key(text: str | None) -> tuple[int, ...]:
    """`version_key` padded to four parts, then the post-release number (0 where there is none),
    for the few rules a post release changed: SGLang 0.5.4.post2 dropped bitsandbytes that
    0.5.4.post1 loads (kvplan.engines.sglang.quant_methods). None: the newest, (99,)."""
    release = version_key(text)
    if text is None:
        return release
    post = _POST.search(text.strip())
    return (*release, *(0,) * (4 - len(release)), int(post.group(1)) if post else 0)


_PEP440 = re.compile(r"v?(\d+(?:\.\d+){1,3})(?:(a|b|rc)(\d*))?(?:\.?post(\d*))?"
                     r"(?:\.?dev(\d*))?(?:\+[\w.]+)?")
# Pre-release phases in PEP 440 order (a < b < rc < the release); a bare .devN of a release comes
# before all of them.
_PHASE = {"a": -3, "b": -2, "rc": -1, None: 0}


def prerelease_key(text: str | None) -> tuple[int, ...]:
    """A version's place in PEP 440 order, pre-releases included: the release padded to four
    parts, then its phase (.devN < aN < bN < rcN < the release < .postN), so TensorRT-LLM's
    1.3.0rc10 sorts below 1.3.0rc24 and both below 1.3.0 (which `version_key` and
    `release_post_key` treat alike). A local suffix (+g065ff9e) is ignored. None: the newest,
    (99,). One line on anything else."""
    if text is None:
        return NEWEST
    found = _matched(_PEP440, text, "X.Y[.Z] with at most aN, bN or rcN, then .postN and .devN "
                                    "(e.g. 1.3.0rc10, 0.5.5.post1)")
    release, phase, number, post, dev = found.groups()
    parts = tuple(int(p) for p in release.split("."))
    rank = _PHASE[phase]
    if phase is None and post is None and dev is not None:
        rank = -4  # X.devN: before X's pre-releases
    return (*parts, *(0,) * (4 - len(parts)), rank, int(number or 0),
            -1 if post is None else int(post or 0),
            # a .devN before what it is a development of (the same pre- or post-release)
            0 if dev is None else -1, int(dev or 0))


def newest_at(rows: Sequence[_Row], key: tuple[int, ...],
              since: Callable[[_Row], tuple[int, ...]]) -> _Row:
    """The last of `rows` (ordered oldest first) whose `since(row)` is at or below `key`; the
    first row where none is: the one lookup of the engines' per-release tables."""
    found = rows[0]
    for row in rows:
        if since(row) <= key:
            found = row
    return found
