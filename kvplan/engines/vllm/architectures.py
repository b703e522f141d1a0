"""What vLLM does with a config.json whose `architectures` names no class its registry lists.

vLLM picks the model class by `architectures`, not by model_type (vLLM 0.32,
vllm/model_executor/models/registry.py; kvplan/sources/vllm_registry.json is its dump, written by
tests/benches/vllm_registry_dump.py). `ModelConfig.__post_init__` (vllm/config/model.py) calls
`registry.inspect_model_cls(architectures, model_config)` (and `is_text_generation_model`, which
does the same); `resolve_model_cls` follows the same steps to load the class:

1. `model_impl == "transformers"` (--model-impl transformers): `_try_resolve_transformers` on
   the first name first. kvplan's launch lines leave --model-impl at "auto".
2. With `model_impl == "auto"` and *no* name registered (`all(arch not in self.models ...)`), the
   Transformers fallback, `_try_resolve_transformers(architectures[0], ...)`:
   - a name in `_TRANSFORMERS_BACKEND_MODELS` (TransformersForCausalLM, ...) is taken as is;
   - every `auto_map` entry starting with AutoConfig / AutoModel is imported
     (`try_get_class_from_dynamic_module`, which does nothing unless trust_remote_code);
   - the class is `getattr(transformers, architecture)`, else the first AutoModel* entry of
     `auto_map` that loads, which needs --trust-remote-code; none: None (unsupported);
   - the class must pass `is_backend_compatible()` (transformers' `_supports_attention_backend`)
     or `_can_set_attn_implementation()` (transformers/modeling_utils.py: the module's
     `*Attention*(nn.Module)` classes call `ALL_ATTENTION_FUNCTIONS.get_interface(`), else None;
   - then `ModelConfig._get_transformers_backend_cls()`: Transformers[MultiModal][MoE]ForCausalLM.
3. Each name through `_normalize_arch` (a pooling suffix over a registered base) and
   `_try_inspect_model_cls`: a registered one wins.
4. `_raise_for_unsupported`: a name in `_PREVIOUSLY_SUPPORTED_MODELS` ({architecture: the last
   release that served it}) raises "was supported in vLLM until vX, and is not supported
   anymore"; one in `_OOT_SUPPORTED_MODELS` ({architecture: plugin URL}) "is not supported
   in-tree anymore. Please install the plugin at URL"; any other "Model architectures [...] are
   not supported for now".

So a removed name whose class transformers still has goes to the Transformers backend first
(BambaForCausalLM: 'Resolved architecture: TransformersForCausalLM', tests/data/oracle/bamba-9b).
That backend (vllm/model_executor/models/transformers/base.py `_create_attention_instances`)
builds one `Attention` per layer from the config's num_key_value_heads and head size
(`model_arch_config`), a sliding window only where `layer_types[i] == "sliding_attention"`, MLA
only where its MLA fuser matches, and raises "Layer i does not dispatch through the Transformers
attention interface" on any other mixer (mamba, linear attention).

kvplan's rule, here: a config with a registered name is the support table's
(kvplan/sources/support.py). Otherwise, for vLLM at the version planned:
- the class resolves for the Transformers backend (transformers' class is compatible:
  vllm_registry.json `transformers_backend`; or `auto_map` names remote code, loaded with
  --trust-remote-code) and kvplan's reading is plain attention on every layer (full, GQA / MQA,
  no window, chunk, recurrent state, MLA or shared KV): sized from the config as kvplan reads it,
  which is what that backend's per-layer Attention holds, but `exact: false` with an assumption
  on `architectures` (the backend may still refuse the class's layers, and a remote class may
  fail the compatibility check kvplan cannot run on config.json);
- else refused in one line: a removed name with the release that last served it and
  "--engine-version X or older", an out-of-tree one with its plugin URL, any other name as vLLM
  refuses it.
A removed name is registered in the releases up to the one its table gives: at those versions
nothing here applies. The tables are vLLM 0.32's; for older versions the same rules are taken
(the Transformers backend serves unregistered classes in every V1 release kvplan models).
SGLang and TensorRT-LLM pick their model classes from registries of their own, not modelled here.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import Assumption
from kvplan.sources.support import vllm_registry

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec


@cache
def _tables() -> dict[str, Any]:
    data = vllm_registry()
    return {"registered": frozenset(data["architectures"]),
            "previous": dict(data.get("previously_supported", {})),
            "out_of_tree": dict(data.get("out_of_tree", {})),
            "backend": dict(data.get("transformers_backend", {})),
            "version": str(data["vllm_version"])}


def _last_minor(release: str) -> tuple[int, int]:
    major, minor = version_key(release)[:2]
    return major, minor


def _registered_then(name: str, version: str | None) -> bool:
    """Whether vLLM `version` still registered a name its table lists as removed (served up to
    and with the minor release the table gives; removed from the next minor)."""
    last = _tables()["previous"].get(name)
    return last is not None and version_key(version) < _next_minor(last)


def _next_minor(release: str) -> tuple[int, int]:
    major, minor = _last_minor(release)
    return major, minor + 1


def unregistered(spec: ModelSpec, version: str | None) -> bool:
    """Whether vLLM `version` registers none of the config's `architectures` (a spec without
    them: False, nothing to check)."""
    names = spec.architectures
    registered = _tables()["registered"]
    return bool(names) and not any(
        n in registered or _registered_then(n, version) for n in names)


def _backend_class(spec: ModelSpec) -> str | None:
    """How the Transformers fallback finds a class for architectures[0]: "transformers" (the
    library's compatible class), "remote" (auto_map's AutoModel*, with --trust-remote-code) or
    None (none: vLLM refuses the name)."""
    name = spec.architectures[0]
    backend = _tables()["backend"]
    if name in backend:
        return "transformers" if backend[name] else None
    return "remote" if spec.remote_code else None


def needs_trust_remote_code(architectures: tuple[str, ...], remote_code: bool,
                            version: str | None) -> bool:
    """Whether `vllm serve` needs --trust-remote-code to build the model: none of its names
    registered and architectures[0] a class only the checkpoint's auto_map provides."""
    if not architectures or not remote_code:
        return False
    t = _tables()
    return (not any(n in t["registered"] or _registered_then(n, version) for n in architectures)
            and architectures[0] not in t["backend"])


def _plain_attention(spec: ModelSpec) -> str | None:
    """What of kvplan's reading the Transformers backend's per-layer Attention does not build as
    kvplan sizes it (None: every layer plain attention)."""
    if spec.num_recurrent_layers or spec.num_attention_layers < spec.num_hidden_layers:
        return "layers without attention (recurrent state: its Transformers backend raises " \
               "'does not dispatch through the Transformers attention interface')"
    if any(isinstance(a, LatentAttention) for a in spec.attention_shapes):
        return "MLA (its Transformers backend's latent cache depends on its MLA fuser matching)"
    if any(w is not None for w in spec.layer_windows):
        return "sliding-window layers (its Transformers backend slides only layers whose " \
               "layer_types say sliding_attention)"
    if any(c is not None for c in spec.layer_chunks):
        return "chunked attention"
    if spec.num_kv_shared_layers:
        return "cross-layer KV sharing"
    if len(spec.attention_shapes) > 1:
        return "attention shapes that differ by layer"
    return None


# Registered classes kvplan sizes from a release on only: {architecture: (the first release
# sized, why not before)}. LongcatFlashForCausalLM: models/longcat_flash.py 0.11-0.31 builds
# FlashConfig(**hf_config.__dict__).num_hidden_layers decoder layers (FlashModel's make_layers),
# i.e. config.json's num_hidden_layers, else num_layers -- unless the transformers release's own
# LongcatFlashConfig already set num_hidden_layers = 2 x num_layers (5.19's property does),
# which doubles them: the count depends on the transformers install, not on config.json.
# From 0.32 FlashModel builds config.num_layers decoder layers (two MLA attentions each).
_SIZED_SINCE: dict[str, tuple[tuple[int, ...], str]] = {
    # models/kimi_linear.py is in the 0.11.2 wheel and registered there, not in 0.10.x's nor
    # 0.11.0's (0.11.1, not read, served it: vllm issue #28228's log, tests/test_layers.py).
    "KimiLinearForCausalLM": ((0, 11), (
        "not in the registry of vLLM 0.10 (models/kimi_linear.py is first in the 0.11.2 wheel "
        "read; 0.11.0 lacks it too)")),
    "LongcatFlashForCausalLM": ((0, 32), (
        "models/longcat_flash.py builds FlashConfig(**hf_config.__dict__).num_hidden_layers "
        "decoder layers before 0.32, a count that depends on the transformers release's "
        "LongcatFlashConfig (5.19's derives 2 x num_layers), not on config.json")),
}


def _check_sized_release(spec: ModelSpec, version: str | None) -> None:
    """Refuse, in one line, a release before the one kvplan sizes the architecture from."""
    for name in spec.architectures[:1]:
        if name in _SIZED_SINCE and version is not None:
            since, why = _SIZED_SINCE[name]
            if version_key(version) < since:
                first = ".".join(map(str, since))
                raise UnmodelledError(
                    f"{spec.path}: architectures: {name} at vLLM {version}: {why}; kvplan sizes "
                    f"it from vLLM {first} on (--engine-version {first} or newer)")


def vllm_served_architecture(spec: ModelSpec, version: str | None, shown: str) -> ModelSpec:
    """`spec` as vLLM `version` (None: the newest, shown as `shown`) builds it when its registry
    lists none of the config's `architectures`: through its Transformers backend, `exact: false`
    with an assumption on `architectures`; refused in one line where vLLM cannot build it (or
    where kvplan sizes a registered class only from a later release: _SIZED_SINCE)."""
    _check_sized_release(spec, version)
    if not unregistered(spec, version):
        return spec
    if any(a.field == "architectures" for a in spec.assumptions):
        return spec  # already served (served_spec runs more than once)
    t = _tables()
    name = spec.architectures[0]
    where = f"{spec.path}: architectures: vLLM {version or shown}"
    how = _backend_class(spec)
    removed = next((n for n in spec.architectures if n in t["previous"]), None)
    gone = advice = ""
    if removed is not None:
        last = t["previous"][removed]
        major, minor = _last_minor(last)
        gone = (f"{removed} was removed after vLLM {last} (registry.py "
                f"_PREVIOUSLY_SUPPORTED_MODELS: 'supported in vLLM until v{last}')")
        advice = f"; plan with --engine-version {major}.{minor} or older"
    if how is None:
        oot = next((n for n in spec.architectures if n in t["out_of_tree"]), None)
        if removed is not None:
            raise UnmodelledError(f"{where} cannot serve it: {gone}, and neither transformers "
                                  "nor auto_map gives its Transformers backend a class"
                                  f"{advice}")
        if oot is not None:
            raise UnmodelledError(f"{where} serves {oot} only through the out-of-tree plugin at "
                                  f"{t['out_of_tree'][oot]} (registry.py _OOT_SUPPORTED_MODELS), "
                                  "which kvplan does not model")
        raise UnmodelledError(
            f"{where} refuses {list(spec.architectures)} ('are not supported for now'): not in "
            "its registry, no backend-compatible transformers class of that name, and no "
            "auto_map AutoModel entry to load with --trust-remote-code (registry.py "
            "_try_resolve_transformers)")
    unlike = _plain_attention(spec)
    if unlike is not None:
        raise UnmodelledError(f"{where} would build {name} only through its Transformers "
                              f"backend (registry.py _try_resolve_transformers), whose caches "
                              f"kvplan does not size for {unlike}"
                              f"{'; ' + gone if gone else ''}{advice}")
    source = ("transformers' class" if how == "transformers" else
              "the checkpoint's remote code (auto_map; vllm serve needs --trust-remote-code)")
    why = (f"not in vLLM {t['version']}'s registry: vLLM builds it only through its Transformers "
           f"backend from {source}, one Attention per layer of num_key_value_heads x head_dim "
           "(models/transformers/base.py _create_attention_instances), which is kvplan's "
           f"reading of model_type {spec.model_type!r}; not checked against a vLLM run, and "
           "vLLM refuses the class if its attention does not go through transformers' "
           "attention interface")
    return replace(spec, assumptions=spec.assumptions + (
        Assumption(field="architectures", value=name, why=why),))
