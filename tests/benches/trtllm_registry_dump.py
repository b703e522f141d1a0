"""Dump TensorRT-LLM's PyTorch model registry at one commit, for
kvplan/engines/trtllm/registry.json (read by kvplan.engines.trtllm.architectures):

    PYTHONPATH=$PWD .venv/bin/python tests/benches/trtllm_registry_dump.py \
        _arch_index.py COMMIT RELEASE [NOTE] > kvplan/engines/trtllm/registry.json

_arch_index.py is tensorrt_llm/_torch/models/_arch_index.py of NVIDIA/TensorRT-LLM at COMMIT
(`git show COMMIT:tensorrt_llm/_torch/models/_arch_index.py`, or the search index's stored copy):
its `MODEL_ARCH_TO_MODULE` dict, {architecture: modeling module}, is a static copy of every name
the modules of tensorrt_llm/_torch/models pass to `@register_auto_model("...")` (its docstring:
test_lazy_model_zoo.py fails on any drift between the table and the decorators), read here with
ast, nothing imported. RELEASE is the release whose registry the commit stands for (the commit's
tensorrt_llm/version.py), written beside it; NOTE, how RELEASE was found (where version.py
at COMMIT could not be read). One commit only: the per-release table is
tests/benches/trtllm_arrivals_dump.py's, which needs a git mirror of the repository (2.5 GB, more
than can be fetched here).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

TABLE = "MODEL_ARCH_TO_MODULE"
REPO = "NVIDIA/TensorRT-LLM"
PATH = "tensorrt_llm/_torch/models/_arch_index.py"


def arch_table(source: str, where: str) -> dict[str, str]:
    """`MODEL_ARCH_TO_MODULE` of an _arch_index.py: string keys and values only, else stop."""
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == TABLE):
            table = ast.literal_eval(node.value)
            if not (isinstance(table, dict)
                    and all(isinstance(k, str) and isinstance(v, str) for k, v in table.items())):
                raise SystemExit(f"{where}: {TABLE} is not a dict of strings: read it by hand")
            return table
    raise SystemExit(f"{where}: no {TABLE} = {{...}}")


def registry(source: str, where: str, commit: str, release: str, note: str = "") -> dict:
    table = arch_table(source, where)
    return {"source": f"https://github.com/{REPO}/blob/{commit}/{PATH} {TABLE} (read "
                      "statically, ast); written by tests/benches/trtllm_registry_dump.py",
            "repo": REPO, "path": PATH, "commit": commit, "release": release,
            **({"release_note": note} if note else {}), "count": len(table),
            "architectures": dict(sorted(table.items()))}


def main(argv: list[str]) -> int:
    if len(argv) not in (4, 5):
        raise SystemExit("usage: trtllm_registry_dump.py ARCH_INDEX_PY COMMIT RELEASE [NOTE]")
    from tests.benches.vllm_arrivals_dump import line_per_entry

    path = Path(argv[1])
    data = registry(path.read_text(encoding="utf-8"), str(path), argv[2], argv[3],
                    argv[4] if len(argv) == 5 else "")
    print(line_per_entry(data, ("architectures",)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
