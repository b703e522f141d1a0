"""Which architectures TensorRT-LLM's PyTorch backend has a model class for (issue 26).

The PyTorch backend builds the model from config.json's `architectures[0]` alone:
tensorrt_llm/_torch/models/modeling_auto.py `AutoModelForCausalLM._resolve_class` (NVIDIA/
TensorRT-LLM commit 01bffee125e24ebe5b4a63437840a9422eb70868) takes
`pretrained_config.architectures[0]` and looks it up in the registry the modules fill with
`@register_auto_model("Name")` (modeling_utils.py); `from_config` raises ValueError "Unknown
architecture for AutoModelForCausalLM: NAME" where none is registered. There is no Transformers
fallback as vLLM's and SGLang's, so a name the registry lacks is a server that does not start.
The one rewrite before the lookup: a config with `draft_vocab_size` (an Eagle-3 draft) is looked
up as "EAGLE3" + the name; kvplan plans target models, so it is not applied here. Not read:
--custom_module_dirs (a user's own registered class), the checkpoint loaders that rewrite
`architectures` for a non-HF format (checkpoints/mistral/config_loader.py), the
`mm_encoder_only` path (vision encoders alone).

The registry is registry.json beside this module, written by tests/benches/trtllm_registry_dump.py
from tensorrt_llm/_torch/models/_arch_index.py `MODEL_ARCH_TO_MODULE` at one commit of main
(its static copy of every `register_auto_model` name, held equal to the decorators by TRT-LLM's
test_lazy_model_zoo.py), which stands for the release in its "release" field. One reading only:
per-release registries are not recorded (tests/benches/trtllm_arrivals_dump.py writes them from a
git mirror, which cannot be fetched here).

kvplan's rule, here, for the PyTorch backend (`--trtllm-backend pytorch`, the default):
- `architectures[0]` not in the registry: refused in one line, naming the name, the release and
  the file and commit it was read from;
- in it, at an explicitly older `--engine-version` than the release read: answered, `exact:
  false`, with an assumption on `architectures` saying the registry was read at the newer
  release (the name may have arrived after the version planned);
- in it, at the release read, a newer one or no version: answered as before (a release newer
  than kvplan's budget reading is flagged by kvplan.engines.base.flag_unread_version).
A spec without `architectures` (a bundled YAML without them) is not checked. A built TensorRT
engine (`--trtllm-backend engine`, the legacy tensorrt_llm/models path) does not go through this
registry and is not held to it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import prerelease_key
from kvplan.model.spec import Assumption

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec

_HERE = Path(__file__).parent


@cache
def registry() -> dict[str, Any]:
    """registry.json: {"source", "repo", "path", "commit", "release", "release_note", "count",
    "architectures": {name: the modeling_* module that registers it}}."""
    data: dict[str, Any] = json.loads((_HERE / "registry.json").read_text(encoding="utf-8"))
    return data


def registered(name: str) -> bool:
    """Whether the registry read (registry.json) has a model class for `name`."""
    return name in registry()["architectures"]


def _read_at() -> str:
    data = registry()
    return f"{data['path']} at {data['repo']} {data['commit'][:9]}"


def trtllm_served_architecture(spec: ModelSpec, version: str | None) -> ModelSpec:
    """`spec` as TensorRT-LLM `version`'s PyTorch backend builds it (module docstring): refused
    in one line where the registry read lacks `architectures[0]`; with an assumption on
    `architectures` at a version older than the registry's release."""
    if not spec.architectures:
        return spec
    name, release = spec.architectures[0], registry()["release"]
    if not registered(name):
        older = ("" if version is None or prerelease_key(version) >= prerelease_key(release)
                 else f"; read at {release} only, not at {version}")
        raise UnmodelledError(
            f"{spec.path}: architectures: {name} is not in TensorRT-LLM {release}'s PyTorch "
            f"model registry ({_read_at()}, MODEL_ARCH_TO_MODULE; AutoModelForCausalLM reads "
            f"architectures[0] only){older}")
    if version is None or prerelease_key(version) >= prerelease_key(release):
        return spec
    assumed = Assumption(
        field="architectures", value=name,
        why=f"TensorRT-LLM's PyTorch model registry was read at {release} ({_read_at()}), "
            f"not at {version}: per-release registries are not recorded, so whether {version} "
            f"registers {name} is not checked")
    if assumed in spec.assumptions:
        return spec  # already flagged (served_spec runs more than once)
    return replace(spec, assumptions=(*spec.assumptions, assumed))
