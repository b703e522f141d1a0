"""Which architectures of vLLM's model registry kvplan sizes exactly, refuses, or does not plan.

Two data files beside this module: ``vllm_registry.json``, every architecture of vLLM's registry
(``vllm/model_executor/models/registry.py`` of vLLM 0.34: the names 0.32 has, dumped with 0.32's
import by ``tests/benches/vllm_registry_dump.py``; the rest read from 0.34's source by
``tests/benches/vllm_registry_static.py``, each with the release that first registers it) with
its group (text generation, multimodal, embedding, cross-encoder, speculative draft, ...); and
``support.json``, one entry per architecture (and per architecture 0.33 or 0.34 dropped):

- *exact*: kvplan's KV numbers equal vLLM's, held by a golden test of the model's real config.json
  (``tests/test_support.py``) and, where vLLM's CPU build runs it, a vLLM-oracle case
  (``tests/data/oracle/<case>``);
- *refused*: a config.json naming this architecture is refused (exit 2) with the entry's reason;
- *not a decoder*: pooling and encoder-only models, also refused: nothing to plan.

A config is matched by its ``architectures`` list, as vLLM picks its model class: the first name
the registry knows decides. A config none of whose names the registry lists (a removed one, an
out-of-tree one, a new one, a remote-code class) is read by the config readers, and the engine
decides what it can serve: vLLM's rules for such names (its removed and out-of-tree tables, its
Transformers backend) are kvplan/engines/vllm/architectures.py's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kvplan._util.errors import SpecError, unknown_choice

EXACT = "exact"
REFUSED = "refused"
NOT_A_DECODER = "not a decoder"
STATUSES = (EXACT, REFUSED, NOT_A_DECODER)
# What an exact row's golden config.json is (support.json's "golden_configs" says each in a line;
# every file's source: tests/data/configs/SOURCES*.md), best first.
GOLDEN_CONFIG_KINDS = ("verbatim", "content", "derived", "rebuilt", "unrecorded")

_HERE = Path(__file__).parent


@dataclass(frozen=True, kw_only=True)
class Support:
    """One architecture's row of the support table."""

    architecture: str
    status: str
    category: str  # the registry group: text-generation, multimodal, embedding, ...
    model_types: tuple[str, ...]
    example: str | None  # a representative Hub repo id
    reason: str | None = None  # why refused / not a decoder
    golden: str | None = None  # exact: the golden config's id (tests/test_support.py)
    oracle: str | None = None  # exact: the vLLM-oracle case (tests/data/oracle/<oracle>)
    golden_config: str | None = None  # exact: one of GOLDEN_CONFIG_KINDS
    # exact: fields with which vLLM refuses to build this architecture, and why (support.json
    # "refused_with": {field: reason}); a config stating one is refused with that reason.
    refused_with: tuple[tuple[str, str], ...] = ()
    # exact: config classes (model_type) over which vLLM refuses to build it
    # ("refused_model_types": {model_type: reason}).
    refused_model_types: tuple[tuple[str, str], ...] = ()
    # the first vLLM release whose registry lists it, where that is newer than the oldest
    # registry kvplan has read statically (support.json "registered_from"; None: listed by the
    # registry dumped by import, vLLM 0.32, or earlier). kvplan/engines/vllm/architectures.py
    # refuses it at an older --engine-version.
    registered_from: str | None = None
    # the last vLLM release read whose registry lists it, for an architecture the newest one no
    # longer lists (support.json "removed_after"): its row still answers for the releases that
    # served it.
    removed_after: str | None = None


@cache
def vllm_registry() -> dict[str, Any]:
    """vllm_registry.json: {"vllm_version", "source", "architectures": {name: {...}}}."""
    return json.loads((_HERE / "vllm_registry.json").read_text(encoding="utf-8"))


@cache
def _support_data() -> dict[str, Any]:
    return json.loads((_HERE / "support.json").read_text(encoding="utf-8"))


@cache
def support_table() -> dict[str, Support]:
    """Every architecture with a support.json entry, by name (registry order: alphabetical):
    the registry's, and those an earlier registry listed (`removed_after`, category
    "removed")."""
    registry = vllm_registry()["architectures"]
    table = {}
    for name, entry in _support_data()["architectures"].items():
        table[name] = Support(
            architecture=name, status=entry["status"],
            category=registry.get(name, {}).get("category", "removed"),
            model_types=tuple(entry.get("model_types") or ()), example=entry.get("example"),
            reason=entry.get("reason"), golden=entry.get("golden"), oracle=entry.get("oracle"),
            golden_config=entry.get("golden_config"),
            refused_with=tuple((entry.get("refused_with") or {}).items()),
            refused_model_types=tuple((entry.get("refused_model_types") or {}).items()),
            registered_from=entry.get("registered_from"),
            removed_after=entry.get("removed_after"))
    return table


def golden_config_kinds() -> dict[str, str]:
    """Each kind of golden config.json (GOLDEN_CONFIG_KINDS) with what it means."""
    return dict(_support_data()["golden_configs"])


def support_version() -> str:
    """The vLLM version whose registry the table covers."""
    return str(_support_data()["vllm_version"])


def config_architecture(config: Mapping[str, Any]) -> Support | None:
    """The support row vLLM would pick for a config.json: the first of its `architectures`
    the registry lists (None: no such name, or no `architectures`)."""
    names = config.get("architectures")
    if not isinstance(names, list):
        return None
    table = support_table()
    for name in names:
        if isinstance(name, str) and name in table:
            return table[name]
    return None


def model_type_hint(config: Mapping[str, Any], model_type: str) -> str:
    """For a refusal over a model_type kvplan does not read: " (ARCH, which it names, is read
    for model_type T)" where the config's architecture is exact for other model_types (an
    aiconfigurator copy of DeepSeek-V4-Pro-FP8 with model_type deepseek_ref: issue 26, blind
    batch 13), else ""."""
    row = config_architecture(config)
    if row is None or row.status != EXACT or not row.model_types or model_type in row.model_types:
        return ""
    return (f" ({row.architecture}, which it names, is read for model_type "
            f"{' / '.join(repr(t) for t in row.model_types)}; transformers and vLLM build its "
            "config by model_type)")


def config_architectures(config: Mapping[str, Any]) -> tuple[tuple[str, ...], bool]:
    """config.json's `architectures` names (strings only) and whether its `auto_map` names a
    model class of the checkpoint's own code (an `AutoModel*` entry), which an engine loads only
    when told to trust remote code (ModelSpec.architectures, .remote_code)."""
    names = config.get("architectures")
    auto_map = config.get("auto_map")
    remote = isinstance(auto_map, Mapping) and any(
        isinstance(key, str) and key.startswith("AutoModel") for key in auto_map)
    return (tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else (),
            remote)


def config_code_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The spec fields (ModelSpec.architectures, .remote_code, .remote_config,
    .config_model_type) an engine's model-class and config-class rules read from the outer
    config.json (a wrapper's own, not its text part's): its model classes, whether auto_map
    names remote modeling code, the class auto_map names for AutoConfig (the checkpoint's own
    configuration code, which transformers' AutoConfig runs only with trust_remote_code where
    it has no class of the model_type) and the model_type stated beside it."""
    fields: dict[str, Any] = {}
    names, remote = config_architectures(config)
    if names:
        fields.update(architectures=list(names), remote_code=remote)
    auto_map = config.get("auto_map")
    ref = auto_map.get("AutoConfig") if isinstance(auto_map, Mapping) else None
    if isinstance(ref, str) and ref.strip():
        fields["remote_config"] = ref
        stated = config.get("model_type")
        if isinstance(stated, str) and stated.strip():
            fields["config_model_type"] = stated
    return fields


def check_architecture(config: Mapping[str, Any], path: str) -> None:
    """Refuse (SpecError, exit 2) a config whose architecture the table does not mark exact,
    with the table's one-line reason."""
    row = config_architecture(config)
    if row is None:
        return
    if row.status == EXACT:
        refusals = [(field, f"{field} stated", why) for field, why in row.refused_with
                    if config.get(field) is not None]
        refusals += [("model_type", f"model_type {kind!r}", why)
                     for kind, why in row.refused_model_types if config.get("model_type") == kind]
        for field, what, why in refusals[:1]:
            raise SpecError(path, field, f"{row.architecture} with {what}: {why}")
        return
    what = "not a decoder" if row.status == NOT_A_DECODER else "refused"
    where = (f"for the vLLM releases up to {row.removed_after} that registered it"
             if row.removed_after else f"for vLLM {support_version()}'s registry" + (
                 f", which lists it from {row.registered_from}" if row.registered_from else ""))
    raise SpecError(path, "architectures",
                    f"{row.architecture}: {row.reason} ({what} {where}; see `kvplan models`)")


def find_support(*, status: str | None = None, term: str | None = None) -> list[Support]:
    """The table's rows, alphabetical, with `status` only (exact / refused / not a decoder), and
    with `term` (case-insensitive) in the architecture, a model_type, the example repo, the
    registry group or the reason."""
    if status is not None and status not in STATUSES:
        raise unknown_choice("--status", STATUSES, status)
    needle = term.lower() if term else None
    rows = []
    for row in support_table().values():
        if status is not None and row.status != status:
            continue
        if needle is not None and not any(needle in text.lower() for text in (
                row.architecture, *row.model_types, row.example or "", row.category,
                row.reason or "")):
            continue
        rows.append(row)
    return rows
