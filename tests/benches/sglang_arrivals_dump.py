"""Dump the SGLang releases that register each architecture: kvplan/engines/sglang/arrivals.json.

Reads, statically (ast, nothing imported), the `python/sglang/srt/models/*.py` modules of every
SGLang wheel under a directory (one sub-directory per release, each holding the release's
`sglang-*.whl`, as `pip download --no-deps sglang==X -d DIR/X` leaves it):

    PYTHONPATH=$PWD .venv/bin/python tests/benches/sglang_arrivals_dump.py /tmp/sglwheels \
        > kvplan/engines/sglang/arrivals.json

A release registers what srt/models/registry.py `import_model_classes("sglang.srt.models")`
collects: for each plain module of the package (`pkgutil.iter_modules`, not sub-packages), its
`EntryClass` (a class or a list of classes), keyed by each class's `__name__`. Every release
read assigns EntryClass once at module level, a name or a list of names; a name is resolved to
the `__name__` of the class it binds: a class defined in the module, an alias `A = B` followed to
B, or `from m import B as A` (B). Not modelled: a module whose import fails at start-up (a
missing optional dependency: registry.py logs "Ignore import error" and skips it), the
SGLANG_DISABLED_MODEL_ARCHS / SGLANG_EXTERNAL_MODEL_PACKAGE environment variables.

For each architecture the file gives `served`: the ranges of consecutive releases read that
register it, [first, last] (last null: still in the newest release read). `transformers_pin`:
each release's `Requires-Dist: transformers==` (its METADATA), the transformers its Transformers
fallback (models/transformers.py, TransformersForCausalLM, from 0.4.7) loads classes from.
"""

from __future__ import annotations

import ast
import re
import sys
import zipfile
from pathlib import Path

from kvplan._util.versions import release_post_key
from tests.benches.vllm_arrivals_dump import line_per_entry

PACKAGE = "sglang/srt/models/"


def _binding(tree: ast.Module, name: str, seen: frozenset[str] = frozenset()) -> str:
    """The `__name__` of the class module-level `name` binds (the last binding wins)."""
    found = name
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            found = node.name
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
              and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
              and node.value.id not in seen):
            found = _binding(tree, node.value.id, seen | {name})
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    found = alias.name
    return found


def entry_classes(source: bytes, where: str) -> list[str]:
    """The class names a module's `EntryClass` registers ([] where it has none)."""
    tree = ast.parse(source)
    value = None
    for node in tree.body:
        if (isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets)):
            value = node.value
    if value is None:
        return []
    elts = value.elts if isinstance(value, ast.List) else [value]
    if not all(isinstance(e, ast.Name) for e in elts):
        raise SystemExit(f"{where}: EntryClass is not a name or a list of names")
    return [_binding(tree, e.id) for e in elts]


def read_release(wheel: Path) -> tuple[list[str], str | None]:
    """One wheel's registered architectures and its transformers pin."""
    names: list[str] = []
    pin = None
    with zipfile.ZipFile(wheel) as z:
        for member in sorted(z.namelist()):
            rest = member[len(PACKAGE):]
            if member.startswith(PACKAGE) and rest.endswith(".py") and "/" not in rest:
                names += entry_classes(z.read(member), f"{wheel.name}:{member}")
            if member.endswith(".dist-info/METADATA"):
                found = re.search(r"^Requires-Dist: transformers==([\w.]+)",
                                  z.read(member).decode(), re.M)
                pin = found and found.group(1)
    return sorted(set(names)), pin


def served_ranges(releases: list[str], names: dict[str, list[str]]) -> dict[str, dict]:
    """{architecture: {"served": [[first, last or None], ...]}}: the runs of consecutive
    `releases` (oldest first) whose `names` hold it; also trtllm_arrivals_dump's."""
    architectures: dict[str, dict] = {}
    for arch in sorted({a for found in names.values() for a in found}):
        served: list[list[str | None]] = []
        for i, release in enumerate(releases):
            if arch not in names[release]:
                if served and served[-1][1] is None:
                    served[-1][1] = releases[i - 1]
                continue
            if not served or served[-1][1] is not None:
                served.append([release, None])
        architectures[arch] = {"served": served}
    return architectures


def arrivals(source: Path) -> dict:
    wheels = {p.parent.name: p for p in source.glob("*/sglang-*.whl")}
    # 0.5.0rc0 - rc2 share 0.5.0's key: the name orders them.
    releases = sorted(wheels, key=lambda r: (release_post_key(r), r))
    read = {r: read_release(wheels[r]) for r in releases}
    architectures = served_ranges(releases, {r: read[r][0] for r in releases})
    return {"source": "python/sglang/srt/models/*.py EntryClass of each SGLang wheel (read "
                      "statically, ast; registry.py import_model_classes); written by "
                      "tests/benches/sglang_arrivals_dump.py",
            "releases": releases, "oldest": releases[0],
            "transformers_pin": {r: read[r][1] for r in releases},
            "architectures": architectures}


def main(argv: list[str]) -> int:
    data = arrivals(Path(argv[1] if len(argv) > 1 else "/tmp/sglwheels"))
    print(line_per_entry(data, ("transformers_pin", "architectures")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
