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
- except a removed name (`_PREVIOUSLY_SUPPORTED_MODELS`) whose class only remote code gives: vLLM
  serves it only if that code passes the check, else `_raise_for_unsupported` stops it, and
  such checkpoints were published for vLLM's native class, their code often older than
  transformers' attention interface (TeleChat2-7B at cd0b54c: TeleChatForCausalLM, remote code
  for transformers 4.24, answered with exit 0 where vLLM 0.32 stopped; issue 26's blind batch
  10). Refused in one line, naming the release that last served it (fail closed); transformers'
  own class (vllm_registry.json `transformers_backend`) keeps the route;
- else refused in one line: a removed name with the release that last served it and
  "--engine-version X or older", an out-of-tree one with its plugin URL, any other name as vLLM
  refuses it.
Which names a release registers is arrivals.json (beside this module; written by
tests/benches/vllm_arrivals_dump.py from registry.py's `_VLLM_MODELS` of every release 0.10.0 -
0.34.0, one patch release read per minor): each name's ranges of releases that register it. A
version stands for the release read at or below it in its minor (0.14.0 and 0.14: 0.14.1, the only
0.14 read; 0.10.1: 0.10.0), else the newest read below it (0.35: 0.34.0). So a name is registered
at a version only within its ranges: before its first release vLLM has no class of that name
(issue 26: GLM-4.7-Flash's Glm4MoeLiteForCausalLM, first in 0.15.1, was answered at 0.13), and
the rules above apply to it there: the Transformers backend where it serves the class, else
refused with the release it arrives in ("--engine-version R or newer"). A removed name is
registered up to the last release its ranges give. A name a release registers that neither vLLM
0.32's registry (the support table's, kvplan/sources/support.py) nor a removed-names table
lists (a 0.33 or 0.34 arrival, a class removed before 0.32 without a table entry) is refused at
the versions that register it: kvplan has no row saying how that class caches. The removed,
out-of-tree and backend tables are vLLM 0.32's (removed names: also 0.34's); for other versions
the same rules are taken (the Transformers backend serves unregistered classes in every V1
release kvplan models). SGLang and TensorRT-LLM pick their model classes from registries of their
own, not modelled here.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.engines.vllm.profiles import DEFAULT_VLLM_VERSION
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import Assumption
from kvplan.sources.support import support_table, vllm_registry

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec


_HERE = Path(__file__).parent


@cache
def _arrivals() -> dict[str, Any]:
    """arrivals.json: {"releases": [...], "oldest", "previously_supported",
    "architectures": {name: {"served": [[first, last or None], ...], "renamed"?}}}."""
    return json.loads((_HERE / "arrivals.json").read_text(encoding="utf-8"))


@cache
def _tables() -> dict[str, Any]:
    data = vllm_registry()
    previous = {**_arrivals()["previously_supported"], **data.get("previously_supported", {})}
    return {"known": frozenset(data["architectures"]) | frozenset(support_table())
            | frozenset(previous),
            "previous": previous,
            "out_of_tree": dict(data.get("out_of_tree", {})),
            "backend": dict(data.get("transformers_backend", {})),
            "version": str(data["vllm_version"])}


def _key(release: str) -> tuple[int, ...]:
    """A release as four ints (0.14 and 0.14.0 alike: (0, 14, 0, 0))."""
    key = version_key(release)
    return key + (0,) * (4 - len(key))


def _last_minor(release: str) -> tuple[int, int]:
    major, minor = version_key(release)[:2]
    return major, minor


@cache
def release_read(version: str | None) -> str:
    """The release read (arrivals.json "releases") whose registry stands for vLLM `version`
    (None: the newest modelled), by patch release: the first read at or above it in its minor
    (0.10.1.1, a fix of 0.10.1, for 0.10.1; 0.11.2, two days after 0.11.1, for 0.11.1; 0.14.1 for
    0.14.0), else the newest read of its minor (0.11.2 for 0.11.5), else the newest read below
    it (0.34.0 for 0.35), else the oldest read ("0.10 or earlier"). vLLM's patch releases after
    the first of a minor are where its models arrive only when the release is a feature release
    (0.10.1, 0.10.2, 0.11.1): the unread ones are taken as the read release after them
    (Kimi-Linear, first read in 0.11.2, ran on a 0.11.1 development build of 2025-11-06:
    tests/data/engine_logs/vllm_hybrid_logs.json, vllm issue 28228)."""
    releases = _arrivals()["releases"]
    key = _key(version or DEFAULT_VLLM_VERSION)[:3]
    minor = [r for r in releases if _key(r)[:2] == key[:2]]
    if minor:
        return next((r for r in minor if _key(r)[:3] >= key), minor[-1])
    below = [r for r in releases if _key(r)[:3] < key]
    return below[-1] if below else releases[0]


def _served(name: str) -> list[tuple[str, str | None]]:
    row = _arrivals()["architectures"].get(name)
    return [(first, last) for first, last in row["served"]] if row else []


def registered(name: str, version: str | None) -> bool:
    """Whether vLLM `version`'s registry lists `name` (arrivals.json)."""
    at = _key(release_read(version))
    return any(_key(first) <= at and (last is None or at <= _key(last))
               for first, last in _served(name))


def shown_release(release: str) -> str:
    """The oldest version `release_read` answers with `release`, as kvplan names it in advice:
    the minor where `release` is the first read of its minor ("0.15" for 0.15.1), else the patch
    release after the read before it (0.11.1 for 0.11.2, 0.10.1 for 0.10.1.1, 0.10.2)."""
    minor = [r for r in _arrivals()["releases"] if _key(r)[:2] == _key(release)[:2]]
    at = minor.index(release)
    if at == 0:
        return "{}.{}".format(*_key(release)[:2])
    return "{}.{}.{}".format(*_key(minor[at - 1])[:2], _key(minor[at - 1])[2] + 1)


def arrival(name: str, version: str | None) -> str | None:
    """The first release read after the one standing for `version` that registers `name`, as
    `shown_release` gives it (None: it registers it then, or never after)."""
    at = _key(release_read(version))
    later = [first for first, _ in _served(name) if _key(first) > at]
    return shown_release(later[0]) if later and not registered(name, version) else None


def _earlier(name: str, version: str | None) -> str:
    """", which X to Y did": the releases before `version` that registered `name` (a name that
    left and came back), else ""."""
    at = _key(release_read(version))
    gone = [(first, last) for first, last in _served(name) if last and _key(last) < at]
    return "".join(f"; {shown_release(first)} to {last} did" for first, last in gone)


def unregistered(spec: ModelSpec, version: str | None) -> bool:
    """Whether vLLM `version` registers none of the config's `architectures` (a spec without
    them: False, nothing to check)."""
    names = spec.architectures
    return bool(names) and not any(registered(n, version) for n in names)


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
    return (not any(registered(n, version) for n in architectures)
            and architectures[0] not in _tables()["backend"])


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


# Registered architectures kvplan sizes from one vLLM release on only: {architecture: (the first
# release sized, why not before)}, read in each release's registry.py and model file.
# MiMo-V2 (models/mimo_v2_flash.py from 0.14, mimo_v2.py from 0.21): up to 0.19 the sliding and
# global layers padded V to the K head size (`functional.pad(v, [0, head_dim - v_head_dim])`,
# a cache of 2 x head_dim per head); 0.20 to 0.31 pass head_size_v but leave CacheConfig's
# window in place, which a config class without layer_types (the checkpoint's remote
# MiMoV2FlashConfig) sets from sliding_window and the global layers then take (0.32 sets
# `cache_config.sliding_window = None`: "global layers would otherwise fall back to it").
# LongcatFlashForCausalLM: models/longcat_flash.py 0.11-0.31 builds
# FlashConfig(**hf_config.__dict__).num_hidden_layers decoder layers (FlashModel's make_layers),
# i.e. config.json's num_hidden_layers, else num_layers -- unless the transformers release's own
# LongcatFlashConfig already set num_hidden_layers = 2 x num_layers (5.19's property does),
# which doubles them: the count depends on the transformers install, not on config.json.
# From 0.32 FlashModel builds config.num_layers decoder layers (two MLA attentions each).
# (Kimi-Linear's first release, 0.11.1 as kvplan names it, is arrivals.json's: registry arrivals
# are that table's, not this one's.)
_MIMO_V2_BEFORE_0_32 = ("before it the V head size was padded to the K head size (up to "
                        "0.19), then the global layers could take the config's sliding_window "
                        "as CacheConfig's, depending on the config class loaded "
                        "(models/mimo_v2.py sets cache_config.sliding_window = None from 0.32)")
SIZED_SINCE: dict[str, tuple[str, str]] = {
    "MiMoV2FlashForCausalLM": ("0.32", _MIMO_V2_BEFORE_0_32),
    "MiMoV2ForCausalLM": ("0.32", _MIMO_V2_BEFORE_0_32),
    # granite.py granite_layer_attn_params, unchanged 0.29 to 0.34.
    "GraniteSWAForCausalLM": ("0.29", "vLLM's registry lists it from 0.29 (registry.py); what "
                                      "an older release's Transformers fallback builds of it "
                                      "is not checked"),
    # granitemoeshared.py over granitemoe.py and granite_layer_attn_params, unchanged 0.29-0.34.
    "GraniteMoeSWAForCausalLM": ("0.29", "vLLM's registry lists it from 0.29 (registry.py); "
                                         "what an older release's Transformers fallback builds "
                                         "of it is not checked"),
    # models/step3p5.py, read in 0.32; registered from 0.15.1, whose Step3p5Config kept the MTP
    # layers' layer_types entries (truncated from 0.20): the older releases are not compared.
    "Step3p5ForCausalLM": ("0.32", "kvplan read models/step3p5.py of 0.32; the releases "
                                   "before (from 0.15.1) are not compared"),
    # ExaoneMoE: 0.14-0.26 build exaone4.py's Exaone4Attention (config.sliding_window on
    # layer_types' sliding layers, whatever sliding_windows says); 0.27-0.31 register only
    # ExaoneMoeForCausalLM and read config.sliding_windows as an attribute, with no
    # sliding_window fallback; 0.32 the rule kvplan reads (kvplan.sources.hf_layer_windows).
    "ExaoneMoEForCausalLM": ("0.32", "before it models/exaone_moe.py placed the windows "
                                     "otherwise (0.14-0.26: exaone4.py's attention, "
                                     "ignoring sliding_windows), not checked against vLLM"),
    "LongcatFlashForCausalLM": ("0.32", "models/longcat_flash.py builds "
                                        "FlashConfig(**hf_config.__dict__).num_hidden_layers "
                                        "decoder layers before 0.32, a count that depends on the "
                                        "transformers release's LongcatFlashConfig (5.19's "
                                        "derives 2 x num_layers), not on config.json"),
}


# Registered architectures kvplan sizes up to one vLLM release only: {architecture: (the last
# release sized, why not after)}.
# Step3p5ForCausalLM: from 0.33 vLLM builds model_type step3p5's config with transformers'
# Step3p7TextConfig (0.33 transformers_utils/config.py: "Upstream class, hub remote code fails
# validation"), which rereads the hub fields its own way (transformers 5.19
# configuration_step3p7.py: moe_layers_enum absent -> MoE from layer 3, not 1; layer_types
# split into MTP entries only when exactly num_hidden_layers + num_nextn_predict_layers long;
# rotary parameters per layer type), and models/step3p5.py keeps num_attention_groups and
# head_dim on the sliding layers: not compared with vLLM.
SIZED_UNTIL: dict[str, tuple[str, str]] = {
    "Step3p5ForCausalLM": ("0.32", "from 0.33 vLLM reads step3p5 configs through transformers' "
                                   "Step3p7TextConfig, a reading kvplan has not compared"),
}


def _check_sized_since(spec: ModelSpec, version: str | None) -> None:
    """Refuse, in one line, a release before the one kvplan sizes the architecture from, or
    after the last one it sizes it at (`SIZED_UNTIL`)."""
    if version is None:
        return
    name = next((n for n in spec.architectures if n in SIZED_SINCE), None)
    if name is not None:
        since, why = SIZED_SINCE[name]
        if version_key(version) < version_key(since):
            raise UnmodelledError(f"{spec.path}: architectures: {name} at vLLM {version}: "
                                  f"{why}; kvplan sizes it from vLLM {since} on "
                                  f"(--engine-version {since} or newer)")
    name = next((n for n in spec.architectures if n in SIZED_UNTIL), None)
    if name is not None:
        until, why = SIZED_UNTIL[name]
        if version_key(version)[:2] > version_key(until)[:2]:
            raise UnmodelledError(f"{spec.path}: architectures: {name} at vLLM {version}: "
                                  f"{why}; kvplan sizes it up to vLLM {until} "
                                  f"(--engine-version {until})")


def vllm_served_architecture(spec: ModelSpec, version: str | None, shown: str) -> ModelSpec:
    """`spec` as vLLM `version` (None: the newest, shown as `shown`) builds it when its registry
    lists none of the config's `architectures`: through its Transformers backend, `exact: false`
    with an assumption on `architectures`; refused in one line where vLLM cannot build it,
    and where its registry lists a class kvplan has no support row for (or not yet: the
    release it arrives in), or where kvplan sizes the registered class from a later release on
    only (`SIZED_SINCE`)."""
    if not spec.architectures:
        return spec
    _check_sized_since(spec, version)
    t = _tables()
    at = version or shown
    chosen = next((n for n in spec.architectures if registered(n, version)), None)
    if chosen is not None:  # the first registered name wins (registry.py inspect_model_cls)
        if chosen not in t["known"]:
            first = next(f for f, _ in _served(chosen) if _key(f) <= _key(release_read(version)))
            raise UnmodelledError(
                f"{spec.path}: architectures: vLLM {at} registers {chosen} (from "
                f"{shown_release(first)}, registry.py _VLLM_MODELS), a class kvplan's support "
                f"table (vLLM {t['version']}'s registry) has no row for: not modelled")
        return spec
    if any(a.field == "architectures" for a in spec.assumptions):
        return spec  # already served (served_spec runs more than once)
    name = spec.architectures[0]
    where = f"{spec.path}: architectures: vLLM {at}"
    how = _backend_class(spec)
    later = next(((n, r) for n in spec.architectures if (r := arrival(n, version))), None)
    if later is not None:
        coming, release = later
        arrives = (f"{spec.path}: architectures: {coming} is served by vLLM from {release}; "
                   f"--engine-version {release} or newer (vLLM {at}'s registry.py does not "
                   f"list it{_earlier(coming, version)}, and ")
        if how is None:
            raise UnmodelledError(f"{arrives}neither transformers nor auto_map gives its "
                                  "Transformers backend a class)")
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
    if how == "remote" and removed is not None:
        # Fail closed (issue 26, TeleChat2-7B at cd0b54c): a removed name whose class only the
        # checkpoint's auto_map gives is served only if that remote class passes
        # is_backend_compatible() or _can_set_attn_implementation() (0.32.0 registry.py
        # :1254-1285); else inspect_model_cls ends in _raise_for_unsupported (:1374, :1187).
        # The remote modeling file decides, and kvplan does not read it.
        raise UnmodelledError(
            f"{spec.path}: architectures: {gone}; vLLM {at} would build {name} only through "
            "its Transformers backend from the checkpoint's remote code (auto_map, "
            "--trust-remote-code), and only if that code uses transformers' attention interface "
            "(registry.py _try_resolve_transformers: is_backend_compatible / "
            "_can_set_attn_implementation), which kvplan cannot read: refused rather than "
            f"guessed{advice}")
    unlike = _plain_attention(spec)
    if unlike is not None and later is not None:
        raise UnmodelledError(f"{arrives}its Transformers backend's caches are not sized by "
                              f"kvplan for {unlike})")
    if unlike is not None:
        raise UnmodelledError(f"{where} would build {name} only through its Transformers "
                              f"backend (registry.py _try_resolve_transformers), whose caches "
                              f"kvplan does not size for {unlike}"
                              f"{'; ' + gone if gone else ''}{advice}")
    source = ("transformers' class" if how == "transformers" else
              "the checkpoint's remote code (auto_map; vllm serve needs --trust-remote-code)")
    coming_note = f" (registered from {later[1]})" if later is not None else ""
    why = (f"not in vLLM {at}'s registry{coming_note}: vLLM builds it only through its "
           f"Transformers backend from {source}, one Attention per layer of "
           "num_key_value_heads x head_dim (models/transformers/base.py "
           "_create_attention_instances), which is kvplan's "
           f"reading of model_type {spec.model_type!r}; not checked against a vLLM run, and "
           "vLLM refuses the class if its attention does not go through transformers' "
           "attention interface")
    if gone:
        # A removed name reaches _raise_for_unsupported only after both Transformers
        # fallbacks fail (0.32.0 registry.py inspect_model_cls :1346-1374). Only transformers'
        # own class reaches here (a remote one is refused above), and vllm_registry.json records
        # that it passes the check under the transformers release read.
        why += (f"; {gone}, raised when that class fails the check (transformers' "
                f"is_backend_compatible / _can_set_attn_implementation){advice}")
    return replace(spec, assumptions=spec.assumptions + (
        Assumption(field="architectures", value=name, why=why),))


# transformers 5.19's rotary modules that hold one inv_freq pair per layer type (OLMo-3's and
# Mellum's `f"{layer_type}_inv_freq"`: models/olmo3/modeling_olmo3.py Olmo3RotaryEmbedding,
# models/mellum/modeling_mellum.py); every other class the backend serves in vLLM 0.32 builds
# one module of one pair (`self.rotary_emb = ...RotaryEmbedding(config)` in its Model).
_ROTARY_PER_LAYER_TYPE = frozenset({"olmo3", "mellum"})


def via_transformers_backend(spec: ModelSpec, version: str | None) -> bool:
    """Whether vLLM `version` builds `spec` with its Transformers modeling backend: the first
    registered name maps to module "transformers" then (0.32 registry.py:709-729
    _TRANSFORMERS_SUPPORTED_MODELS: Starcoder2 and GPTBigCode from 0.25.1, OLMo and OLMo-2 from
    0.26, OLMo-3 from 0.29, Phi, GPT-NeoX, GLM, Seed-OSS from 0.32, ...: arrivals.json
    `renamed`), or no name is registered (`vllm_served_architecture` serves it only through
    the backend). A name never renamed keeps the module vllm_registry.json gives it; before its
    first rename a renamed name was native (arrivals.json records none leaving the backend)."""
    names = spec.architectures
    if not names:
        return False
    chosen = next((n for n in names if registered(n, version)), None)
    if chosen is None:
        return True
    renamed = _arrivals()["architectures"].get(chosen, {}).get("renamed", {})
    if renamed:
        at = _key(release_read(version))
        modules = [entry[0] for release, entry in sorted(renamed.items(), key=lambda r: _key(r[0]))
                   if _key(release) <= at]
        return bool(modules) and modules[-1] == "transformers"
    entry = vllm_registry()["architectures"].get(chosen)
    return entry is not None and entry.get("module") == "transformers"


def transformers_backend_rotary(spec: ModelSpec, version: str | None) -> ModelSpec:
    """`spec` with the rotary buffers vLLM `version` really holds where its Transformers backend
    builds the model (`via_transformers_backend`): transformers' inv_freq pairs, no get_rope
    cos/sin table (ModelSpec.rotary_inv_freq_pairs; kvplan.weights.base.
    transformers_rotary_bytes). Found by the sizefix57 sweep's weight probe: Starcoder2-15B's
    and OLMo-2-0325-32B's shrinks hold 512 B of rotary buffers, not the 4 MiB / 1 MiB tables
    kvplan counted (tests/data/oracle/weight-bytes.json)."""
    if spec.rotary_inv_freq_pairs or not via_transformers_backend(spec, version):
        return spec
    pairs = (len({w is None for w in spec.layer_windows}) or 1
             if spec.model_type in _ROTARY_PER_LAYER_TYPE else 1)
    return replace(spec, rotary_inv_freq_pairs=pairs)
