"""Engine versions as users and logs spell them: 0.19, 0.10.1.1, v0.11.0, 0.20.1rc1.dev16+g7a1eb8ac2
(what `vllm --version` prints for a nightly), 0.5.5.post1. The numeric release parts decide which
rules apply; a pre-release, post-release or local suffix follows its release's rules."""

from __future__ import annotations

import re

from kvplan._util.errors import InputError

_RELEASE = re.compile(r"v?(\d+(?:\.\d+){1,3})(?:(?:rc|a|b|\.?post|\.?dev)\d*)*(?:\+[\w.]+)?")


def version_key(text: str | None) -> tuple[int, ...]:
    """The release as a tuple of ints (None: the newest, (99,)). One line on anything else."""
    if text is None:
        return (99,)
    found = _RELEASE.fullmatch(text.strip())
    if found is None:
        raise InputError(f"--engine-version: expected X.Y[.Z] (e.g. 0.19, 0.10.1.1, "
                         f"0.11.0rc1), got {text!r}")
    return tuple(int(p) for p in found.group(1).split("."))
