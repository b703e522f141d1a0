"""Dump the vLLM release that first registers each architecture: kvplan/engines/vllm/arrivals.json.

Reads, statically (ast, nothing imported), vllm/model_executor/models/registry.py of every vLLM
release unpacked under a directory (one sub-directory per release, each holding `vllm/`):

    PYTHONPATH=$PWD .venv/bin/python tests/benches/vllm_arrivals_dump.py /tmp/vllm-src \
        > kvplan/engines/vllm/arrivals.json

A release registers what its `_VLLM_MODELS` holds: the `**` merge of its tables
(_TEXT_GENERATION_MODELS, _EMBEDDING_MODELS, _MULTIMODAL_MODELS, _SPECULATIVE_DECODING_MODELS,
_TRANSFORMERS_*_MODELS, ...; the tables differ by release), each `{architecture: (module,
class)}`, as `ModelRegistry = _ModelRegistry({... for arch, (mod, cls) in _VLLM_MODELS.items()})`
builds it (vLLM's `--model-class-overrides`, a debugging option, registers more at run time: not
modelled). For each architecture the file gives `served`: the ranges of consecutive releases
that register it, [first, last] (last null: still in the newest release read), and `renamed`:
the releases where its (module, class) changed, which matter to kvplan only through the name
(a class renamed under a registered name is still served). The newest release's
_PREVIOUSLY_SUPPORTED_MODELS is kept beside it (`previously_supported`).

kvplan models vLLM from 0.10 (kvplan.engines.vllm.profiles.VLLM_PROFILES): the oldest release read
(0.10.0) stands for "0.10 or earlier" (`oldest`).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from kvplan._util.versions import version_key

REGISTRY = "vllm/model_executor/models/registry.py"


def _table_nodes(tree: ast.Module) -> list[ast.stmt]:
    """The module-level `_NAME = {...}` assignments of registry.py, in order (plain or
    annotated)."""
    found: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if (isinstance(target, ast.Name) and target.id.startswith("_")
                and target.id.isupper() and isinstance(value, ast.Dict)):
            found.append(node)
    return found


def read_release(root: Path) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """One release's `_VLLM_MODELS` and `_PREVIOUSLY_SUPPORTED_MODELS`. The table assignments
    alone run, in order, with no builtins: dict displays of string literals, `**` merges of the
    tables above and, from 0.18, comprehensions over them (_EMBEDDING_MODELS takes
    LlamaForCausalLM's entry from _TEXT_GENERATION_MODELS)."""
    tree = ast.parse((root / REGISTRY).read_text(encoding="utf-8"))
    module = ast.Module(body=_table_nodes(tree), type_ignores=[])
    namespace: dict = {"__builtins__": {}}
    exec(compile(module, str(root / REGISTRY), "exec"), namespace)  # noqa: S102 - tables only
    models = {arch: tuple(entry) for arch, entry in namespace["_VLLM_MODELS"].items()}
    return models, dict(namespace.get("_PREVIOUSLY_SUPPORTED_MODELS", {}))


def arrivals(source: Path) -> dict:
    releases = sorted((p.name for p in source.iterdir() if (p / REGISTRY).is_file()),
                      key=version_key)
    read = {r: read_release(source / r) for r in releases}
    names = sorted({a for models, _ in read.values() for a in models})
    architectures: dict[str, dict] = {}
    for arch in names:
        served: list[list[str | None]] = []
        renamed: dict[str, list[str]] = {}
        before: tuple[str, str] | None = None
        for i, release in enumerate(releases):
            entry = read[release][0].get(arch)
            if entry is None:
                if served and served[-1][1] is None:
                    served[-1][1] = releases[i - 1]
                continue
            if not served or served[-1][1] is not None:
                served.append([release, None])
            if before is not None and entry != before:
                renamed[release] = list(entry)
            before = entry
        row: dict = {"served": served}
        if renamed:
            row["renamed"] = renamed
        architectures[arch] = row
    return {"source": f"{REGISTRY} of each vLLM release (read statically, ast): _VLLM_MODELS; "
                      "written by tests/benches/vllm_arrivals_dump.py",
            "releases": releases, "oldest": releases[0],
            "previously_supported": dict(sorted(read[releases[-1]][1].items())),
            "architectures": architectures}


def line_per_entry(data: dict, tables: tuple[str, ...]) -> str:
    """`data` as JSON, each of its `tables` one entry a line (so that a new release's dump diffs
    line by line), after the other keys; also sglang_arrivals_dump's writer."""
    head = {k: v for k, v in data.items() if k not in tables}

    def block(name: str) -> str:
        body = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data[name].items()]
        return f"{json.dumps(name)}: {{\n" + ",\n".join(body) + "}"

    return json.dumps(head)[:-1] + ",\n" + ",\n".join(block(t) for t in tables) + "}"


def main(argv: list[str]) -> int:
    source = Path(argv[1] if len(argv) > 1 else "/tmp/vllm-src")
    print(line_per_entry(arrivals(source), ("previously_supported", "architectures")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
