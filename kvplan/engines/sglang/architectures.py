"""Which architectures an SGLang release has a model class for (issue 26).

SGLang picks the model class by config.json's `architectures` from its own registry
(python/sglang/srt/models/registry.py: `ModelRegistry.register("sglang.srt.models")` runs
`import_model_classes`, which imports every plain module of srt/models/ and keys each class its
`EntryClass` names, a class or a list, by the class's `__name__`). model_loader/utils.py
`get_model_architecture` (0.4.5 - 0.5.23): with no name registered, `resolve_transformers_arch`
tries the Transformers fallback (models/transformers.py TransformersForCausalLM, from 0.4.7):
`getattr(transformers, arch)` of the transformers the release pins, else auto_map's "AutoModel"
(remote code), else ValueError "Cannot find model module"; a class whose
`is_backend_compatible()` is False raises "has no SGlang implementation and the Transformers
implementation is not compatible with SGLang"; before 0.4.7, `_raise_for_unsupported`: "Model
architectures [...] are not supported for now".

kvplan's rule, here: a config whose `architectures` has a name the planned release registers is
planned as before; otherwise refused in one line, naming the first later release that
registers one of its names ("--engine-version R or newer"), the last release that did (a name
SGLang removed: "--engine-version R or older"), or that no release read registers any. The
Transformers fallback is not sized: whether it starts depends on the pinned transformers
release's class and its `_supports_attention_backend` (or the checkpoint's remote code), which
kvplan does not read for SGLang, so the fallback's case is refused too, saying so. A spec without
`architectures` (a bundled YAML without them) is not checked.

SGLang's own config classes rename a few architectures before the registry sees them
(srt/utils/hf_transformers_utils.py get_config builds `_CONFIG_REGISTRY[model_type]`'s class for
a model_type it lists): `CONFIG_RENAMES`, read by grepping every wheel's srt/ for assignments to
`architectures` outside srt/models/ (the others set a draft model's class, a GGUF checkpoint's,
a default where config.json names none, or model_types kvplan does not read).

Which names a release registers is arrivals.json (beside this module; written by
tests/benches/sglang_arrivals_dump.py from the EntryClass of srt/models/*.py in every SGLang
wheel 0.4.5 - 0.5.23, post releases and 0.5.0rc0 - rc2 included). A version stands for the
release of that name, else the newest read at or below it (0.5.6.post3, not a release:
0.5.6.post2; 0.5.0: 0.5.0rc2, the last before 0.5.1); one below 0.4.5
for 0.4.5 (whose table is taken for older releases); None (SGLang's default in kvplan) and one
above 0.5.23 for 0.5.23.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvplan._util.versions import release_post_key
from kvplan.engines import arrivals as shared

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec

_HERE = Path(__file__).parent
# SGLang's Transformers fallback class (models/transformers.py EntryClass).
FALLBACK = "TransformersForCausalLM"

# {config.json's name: (its model_type, the name SGLang's config class gives it, the first
# release read that does)}. configs/olmo3.py Olmo3Config.__init__ (0.5.4 - 0.5.23): "This model
# uses Olmo3ForCausalLM in transformers but Olmo2ForCausalLM in sglang":
# `kwargs["architectures"].remove("Olmo3ForCausalLM")` then `.append("Olmo2ForCausalLM")`;
# model_type "olmo3" is in _CONFIG_REGISTRY from 0.5.4 (hf_transformers_utils.py).
CONFIG_RENAMES: dict[str, tuple[str, str, str]] = {
    "Olmo3ForCausalLM": ("olmo3", "Olmo2ForCausalLM", "0.5.4"),
}


@cache
def _arrivals() -> dict[str, Any]:
    """arrivals.json: {"releases": [...], "oldest", "transformers_pin": {release: version},
    "architectures": {name: {"served": [[first, last or None], ...]}}}."""
    return shared.load_arrivals(_HERE / "arrivals.json")


@cache
def release_read(version: str | None) -> str:
    """The release read whose registry stands for SGLang `version` (None: the newest read;
    0.5.0rc0 - rc2: one key, three registries, each read under its own name)."""
    return shared.release_read(_arrivals()["releases"], version, release_post_key)


def _served(name: str, model_type: str | None = None) -> shared.Ranges:
    """The ranges of releases read that register `name`; for a `CONFIG_RENAMES` name of its
    model_type, those of the name it is renamed to from the release that renames it."""
    rename = CONFIG_RENAMES.get(name)
    if rename is not None and rename[0] == model_type:
        _, target, since = rename
        at = release_post_key(since)
        return [(first if release_post_key(first) >= at else since, last)
                for first, last in _served(target)
                if last is None or release_post_key(last) >= at]
    return shared.served_ranges(_arrivals(), name)


def registered(name: str, version: str | None, model_type: str | None = None) -> bool:
    """Whether SGLang `version`'s srt/models registers `name` (arrivals.json), as a config of
    `model_type` names it (`CONFIG_RENAMES`)."""
    return shared.covers(_served(name, model_type), release_read(version), release_post_key)


def arrival(name: str, version: str | None, model_type: str | None = None) -> str | None:
    """The first release read after the one standing for `version` that registers `name`
    (None: none, or it registers it then)."""
    return shared.first_after(_served(name, model_type), release_read(version),
                              release_post_key)


def departure(name: str, version: str | None, model_type: str | None = None) -> str | None:
    """The last release read before the one standing for `version` that registered `name`
    (None: none, or it registers it then)."""
    return shared.last_before(_served(name, model_type), release_read(version),
                              release_post_key)


def sglang_served_architecture(spec: ModelSpec, version: str | None) -> ModelSpec:
    """`spec` unchanged where SGLang `version` (None: the newest read) registers one of its
    `architectures` (or it names none); else refused in one line (module docstring,
    kvplan.engines.arrivals.refuse_unregistered)."""
    names, kind = spec.architectures, spec.model_type
    if not names or any(registered(n, version, kind) for n in names):
        return spec
    release = release_read(version)
    where = (f"{spec.path}: architectures: SGLang {version or release} has no model class for "
             f"{', '.join(names)} (srt/models/*.py EntryClass, registry.py)")
    fallback = ""
    if registered(FALLBACK, version):
        pin = _arrivals()["transformers_pin"].get(release)
        fallback = (f"; its Transformers fallback ({FALLBACK}, model_loader/utils.py "
                    f"resolve_transformers_arch, transformers {pin}) is not sized by kvplan")
    shared.refuse_unregistered(where, "SGLang", {n: _served(n, kind) for n in names}, release,
                               _arrivals()["releases"], release_post_key, fallback)
