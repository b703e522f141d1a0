"""The package's shape (issue 25, examples/architecture.md): imports run one way through the
layers, no import cycle (counting function-level and TYPE_CHECKING imports), no module over 600
lines, at most 14 entries at the top of kvplan/, and no branch on an engine's name outside
kvplan/engines/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kvplan"

# The layers, bottom first (examples/architecture.md). A module may import its own package and the
# packages of lower layers only; packages of one layer do not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_util",),
    ("model",),
    ("hardware",),
    ("sources",),
    ("kv", "weights"),
    ("engines",),
    ("capacity",),
    ("perf",),
    ("analysis",),
    ("present",),
    ("cli",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
MAX_MODULE_LINES = 600
MAX_TOP_ENTRIES = 14


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every kvplan module `name` imports, wherever the import statement is (module level, inside
    a function, under TYPE_CHECKING): `from a import b` counts a.b when b is a module."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            found.add(str(node.args[0].value))
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_no_import_cycle() -> None:
    # Tarjan's strongly connected components over the whole graph.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert cycles == []


def test_imports_run_down_the_layers() -> None:
    wrong = []
    for module, targets in GRAPH.items():
        here = _top(module)
        if here is None or here not in RANK:  # kvplan/__init__.py (the API) and __main__
            continue
        for target in targets:
            there = _top(target)
            if there is None:
                wrong.append(f"{module} imports the kvplan package itself")
            elif there != here and (there not in RANK or RANK[there] >= RANK[here]):
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_every_package_has_a_layer() -> None:
    tops = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert tops <= set(RANK), tops - set(RANK)


def test_no_module_over_600_lines() -> None:
    big = {name: n for name, path in MODULES.items()
           if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert big == {}


def test_at_most_14_entries_at_the_top_of_the_package() -> None:
    entries = [p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"]
    assert len(entries) <= MAX_TOP_ENTRIES, sorted(entries)


ENGINE_NAME_BRANCH = re.compile(
    r"""(==|!=|\bin\b)\s*[({\[]?\s*["'](vllm|sglang|trtllm)["']"""
    r"""|["'](vllm|sglang|trtllm)["']\s*(==|!=|:)"""
    r"""|\bEngine\.(vllm|sglang|trtllm)\b""")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _top(m) != "engines"))
def test_no_branch_on_an_engine_name_outside_the_engines(module: str) -> None:
    hits = [f"{MODULES[module].name}:{i}: {line.strip()}"
            for i, line in enumerate(MODULES[module].read_text().splitlines(), 1)
            if ENGINE_NAME_BRANCH.search(line)]
    assert hits == []
