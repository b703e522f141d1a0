"""Dump the model_types SGLang loads a config class for without remote code, as kvplan's data file
kvplan/engines/sglang/config_types.json (kvplan/engines/sglang/config_class.py reads it).

Reads the wheels' source, imports neither (SGLang pins a transformers of its own, not the vLLM
venv's):

    pip download sglang==0.5.9 transformers==4.57.1 --no-deps -d /tmp/w
    python tests/benches/sglang_config_types_dump.py /tmp/w/sglang-0.5.9-py3-none-any.whl \
        /tmp/w/transformers-4.57.1-py3-none-any.whl > kvplan/engines/sglang/config_types.json

SGLang 0.5.9's get_config (srt/utils/hf_transformers_utils.py) calls
`AutoConfig.from_pretrained(model, trust_remote_code=...)` after registering each class of its
`_CONFIG_REGISTRY` (srt/configs/) into AutoConfig by its model_type (and srt/configs/lfm2_moe.py
registers lfm2_moe into CONFIG_MAPPING). transformers' AutoConfig (models/auto/
configuration_auto.py) takes CONFIG_MAPPING's class for a model_type it lists; else, where
auto_map names an AutoConfig, the checkpoint's code, refused without trust_remote_code. This
dumps CONFIG_MAPPING_NAMES' keys of the transformers SGLang pins (METADATA Requires-Dist) and the
model_type of each class SGLang registers.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile


def _assigned(tree: ast.Module, name: str) -> ast.expr:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == name:
            return node.value
    raise KeyError(name)


def transformers_types(wheel: zipfile.ZipFile) -> list[str]:
    source = wheel.read("transformers/models/auto/configuration_auto.py").decode()
    value = _assigned(ast.parse(source), "CONFIG_MAPPING_NAMES")
    pairs = ast.literal_eval(value.args[0])  # OrderedDict([(model_type, class name), ...])
    return sorted(model_type for model_type, _ in pairs)


def sglang_types(wheel: zipfile.ZipFile) -> list[str]:
    source = wheel.read("sglang/srt/utils/hf_transformers_utils.py").decode()
    classes = {e.id for e in _assigned(ast.parse(source), "_CONFIG_REGISTRY").elts}
    found: set[str] = set()
    for name in wheel.namelist():
        if not (name.startswith("sglang/srt/configs/") and name.endswith(".py")):
            continue
        tree = ast.parse(wheel.read(name).decode())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in classes:
                for stmt in node.body:  # model_type = "..." or model_type: str = "..."
                    target = (stmt.targets[0] if isinstance(stmt, ast.Assign)
                              and len(stmt.targets) == 1 else getattr(stmt, "target", None))
                    if (getattr(target, "id", None) == "model_type"
                            and isinstance(getattr(stmt, "value", None), ast.Constant)):
                        found.add(stmt.value.value)
        registered = r'CONFIG_MAPPING\.register\(\s*"([^"]+)"'
        found.update(re.findall(registered, wheel.read(name).decode()))
    return sorted(found)


def main() -> int:
    sglang_whl, transformers_whl = (zipfile.ZipFile(p) for p in sys.argv[1:3])
    meta = next(n for n in sglang_whl.namelist() if n.endswith(".dist-info/METADATA"))
    text = sglang_whl.read(meta).decode()
    version = re.search(r"^Version: (\S+)", text, re.M).group(1)
    pin = re.search(r"^Requires-Dist: transformers\s*\(?==\s*([\d.]+)", text, re.M).group(1)
    tmeta = next(n for n in transformers_whl.namelist() if n.endswith(".dist-info/METADATA"))
    tversion = re.search(r"^Version: (\S+)", transformers_whl.read(tmeta).decode(), re.M).group(1)
    if tversion != pin:
        raise SystemExit(f"SGLang {version} pins transformers {pin}, not {tversion}")
    data = {
        "sglang_version": version,
        "transformers_version": tversion,
        "source": f"sglang {version} wheel srt/utils/hf_transformers_utils.py _CONFIG_REGISTRY "
                  "(each class's model_type, srt/configs/) and CONFIG_MAPPING.register calls; "
                  f"transformers {tversion} wheel models/auto/configuration_auto.py "
                  "CONFIG_MAPPING_NAMES",
        "sglang_config_types": sglang_types(sglang_whl),
        "transformers_config_types": transformers_types(transformers_whl),
    }
    print(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
