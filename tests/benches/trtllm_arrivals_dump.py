"""Dump the TensorRT-LLM releases that register each architecture (PyTorch backend), for
kvplan/engines/trtllm/arrivals.json, from a git mirror of NVIDIA/TensorRT-LLM:

    PYTHONPATH=$PWD .venv/bin/python tests/benches/trtllm_arrivals_dump.py MIRROR.git \
        > kvplan/engines/trtllm/arrivals.json

Reads, statically (ast, nothing imported), every tensorrt_llm/_torch/models/**/*.py at each
release tag vX.Y.Z[rcN][.postN] from 0.20.0 (the oldest release kvplan's TRT-LLM budget covers,
kvplan.engines.trtllm.budget.TRTLLM_PROFILES) to the newest kvplan has read
(TrtllmEngine.newest_read), with `git --git-dir MIRROR show TAG:PATH`. A release registers each
string its modules pass to `register_auto_model("Name")` (modeling_utils.py; as a class decorator
or called), the registry AutoModelForCausalLM reads. A call whose name is not a string constant
stops the dump, naming the file, so that it is read by hand.

What the PyTorch backend does with the registry, read at the search index's stored versions of
NVIDIA/TensorRT-LLM (not at a tag): modeling_auto.py AutoModelForCausalLM._resolve_class (commit
01bffee125e24ebe5b4a63437840a9422eb70868) looks up `config.architectures[0]` only (an Eagle-3
draft config, one with `draft_vocab_size`, as "EAGLE3" + the name); `from_config` raises
ValueError "Unknown architecture for AutoModelForCausalLM: NAME" for a name not registered.
_arch_index.py (commit 065ff9e93780bc0bdbfdbc7156a306ca14f5850c, newer than 1.3.0rc10) keeps a
static copy of the registry for lazy loading; this script reads the decorators, which that
file's test holds equal to it. Not read here: whether a module is imported at start-up (a module
that models/__init__.py does not import registers nothing), --custom_module_dirs, any fallback a
later release adds for unregistered names.

The file: `releases` (oldest first; a release candidate before its release), `architectures`:
{name: {"served": [[first, last or None], ...]}}, the runs of consecutive releases read that
register it (tests/benches/sglang_arrivals_dump.served_ranges).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

from kvplan.engines.trtllm.budget import TRTLLM_PROFILES
from kvplan.engines.trtllm.engine import TrtllmEngine
from tests.benches.sglang_arrivals_dump import served_ranges
from tests.benches.vllm_arrivals_dump import line_per_entry

MODELS = "tensorrt_llm/_torch/models/"
TAG = re.compile(r"v(\d+\.\d+\.\d+(?:rc\d+)?(?:\.post\d+)?)")


def registered_names(source: bytes, where: str) -> list[str]:
    """The names a module passes to register_auto_model ([] where it passes none)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if called != "register_auto_model":
            continue
        first = node.args[0] if node.args else None
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            raise SystemExit(f"{where}:{node.lineno}: register_auto_model of a name that is "
                             "not a string constant: read it by hand")
        names.append(first.value)
    return names


def _git(mirror: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(mirror), *args], check=True,
                          capture_output=True).stdout


def release_tags(mirror: Path, oldest: str, newest: str) -> dict[str, str]:
    """{release: tag} for the release tags from `oldest` to `newest`, oldest first."""
    found = {}
    for tag in _git(mirror, "tag", "--list", "v*").decode().split():
        match = TAG.fullmatch(tag)
        if match and Version(oldest) <= Version(match.group(1)) <= Version(newest):
            found[match.group(1)] = tag
    return {r: found[r] for r in sorted(found, key=Version)}


def read_release(mirror: Path, tag: str) -> list[str]:
    """The architectures `tag`'s tensorrt_llm/_torch/models registers."""
    paths = _git(mirror, "ls-tree", "-r", "--name-only", tag, "--", MODELS).decode().split()
    names: list[str] = []
    for path in paths:
        if path.endswith(".py"):
            names += registered_names(_git(mirror, "show", f"{tag}:{path}"), f"{tag}:{path}")
    return sorted(set(names))


def arrivals(mirror: Path, oldest: str, newest: str) -> dict:
    tags = release_tags(mirror, oldest, newest)
    releases = list(tags)
    if not releases:
        raise SystemExit(f"{mirror}: no release tag v{oldest} - v{newest}")
    names = {r: read_release(mirror, tags[r]) for r in releases}
    return {"source": "register_auto_model(\"...\") in tensorrt_llm/_torch/models/**/*.py at "
                      "each TensorRT-LLM release tag (read statically, ast); written by "
                      "tests/benches/trtllm_arrivals_dump.py",
            "releases": releases, "oldest": releases[0],
            "counts": {r: len(names[r]) for r in releases},
            "architectures": served_ranges(releases, names)}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        raise SystemExit("usage: trtllm_arrivals_dump.py MIRROR_GIT_DIR [OLDEST [NEWEST]]")
    oldest = argv[2] if len(argv) > 2 else f"{TRTLLM_PROFILES[0].version}.0"
    newest = argv[3] if len(argv) > 3 else TrtllmEngine.newest_read
    print(line_per_entry(arrivals(Path(argv[1]), oldest, newest), ("counts", "architectures")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
