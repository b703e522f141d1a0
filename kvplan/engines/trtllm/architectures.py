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
Older releases, from their release notes (release_notes.json beside this module: the "Model
Support" lines of docs/source/release-notes.md at commit 001eaecea63dd6bdbfd02aed1bf8dc7fad567bd0,
each naming the release that adds a model, e.g. 1.1 "Add GPT-OSS model support."): a registered
name whose model the notes of release X add is refused at an --engine-version of an older
release (major.minor below X's: X-1's branch did not have it), in one line naming X and the line;
at X's release candidates it is answered with the assumption above (which candidate first has it
is not recorded). Per-release registries themselves could not be read here: PyPI holds no
tensorrt-llm wheel for 1.0.0, 1.1.0, 1.2.1 or 1.3.0rc10 (`pip download` finds 1.6-10 kB sdists
only), the GitHub repository is a 2.5 GB mirror, and the search index keeps each file at the
commits that changed it, not at release tags.
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
from kvplan._util.versions import prerelease_key, version_key
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


@cache
def release_notes() -> dict[str, Any]:
    """release_notes.json: {"source", "what", "architectures": {name: {"release", "line"}}}."""
    data: dict[str, Any] = json.loads((_HERE / "release_notes.json").read_text(encoding="utf-8"))
    return data


def noted_release(name: str) -> str | None:
    """The release ("1.1") whose notes add `name`'s model; None where the notes kvplan keeps
    name none."""
    entry = release_notes()["architectures"].get(name)
    return None if entry is None else entry["release"]


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
    first = noted_release(name)
    if first is not None and version_key(version)[:2] < version_key(first)[:2]:
        line = release_notes()["architectures"][name]["line"]
        raise UnmodelledError(
            f"{spec.path}: architectures: {name} is registered by TensorRT-LLM's PyTorch backend "
            f"from {first} (release notes, docs/source/release-notes.md, 'TensorRT-LLM Release "
            f"{first}': \"{line}\"), not at {version}: --engine-version {first} or newer")
    assumed = Assumption(
        field="architectures", value=name,
        why=f"TensorRT-LLM's PyTorch model registry was read at {release} ({_read_at()}), "
            f"not at {version}: per-release registries are not recorded, so whether {version} "
            f"registers {name} is not checked")
    if assumed in spec.assumptions:
        return spec  # already flagged (served_spec runs more than once)
    return replace(spec, assumptions=(*spec.assumptions, assumed))
