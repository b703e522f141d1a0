"""Fail closed on a config.json of a *known* family that carries a field kvplan's reader of that
family does not cover and that may shape the cache (issue 26: exact or refused, never a guess
that looks like an answer).

kvplan.sources.hf_unknown refuses such fields on an unknown ``model_type``; this module does the
same, family by family, for the families of `FAMILY_FIELDS` (kvplan.sources.hf_fields_table).
Each row names, for one ``model_type`` (the text model's, after the wrappers are unwrapped), the
vLLM 0.32 file that builds its layers and every field whose name says it may shape the cache
(hf_unknown.CACHE_WORDS) that kvplan covers: read the way that file reads it, or known to change
no cache size there, optionally only for some values (Gemma's use_bidirectional_attention:
false). Any other such field -- an alias the model code never reads (``num_kv_heads`` on Llama,
where vLLM's llama.py reads ``num_key_value_heads`` only; ``n_head_kv`` on Falcon, where
falcon.py reads only num_kv_heads), a field another family reads (``use_sliding_window`` or
``kv_lora_rank`` on Llama, ``head_dim`` on Jamba, which takes hidden_size / heads) -- is refused
with one line naming the file and the field. Fields on hf_unknown.IGNORED (dropout, norm
epsilons, MoE routing, ...) are harmless everywhere. Families not listed are not scanned here.

`fill_class_defaults` takes the transformers 5.19 config class's defaults of cache fields a
config.json leaves out, where kvplan's readers would assume another value (MistralConfig's
sliding_window 4096: left out, vLLM slides every layer over 4096 tokens; Qwen3Config's head_dim
128, not hidden / heads); the values live in kvplan.sources.hf_defaults with every other class
default. A row's `head_dim_is_hidden` and `required` refuse two layouts vLLM itself handles
inconsistently or not at all.

The families were audited in two halves of vLLM's registry (model_types A-K, L-Z) that settled
five points differently; each row says which (`FamilyFields.audit`, hf_fields_table.AK / LZ).
Two are settled. The fields every family covers: both cover num_nextn_predict_layers and
add_cross_attention false, and the counts' other names (n_layer, n_head, num_layers) only on
the families whose config class takes them. A wrapper text sub-config's stated nulls: both
keep them, as its transformers config class does. The other three would change answers if
unified, so they stay explicit until each is settled against vLLM:

- an uncovered cache field stated null: refused by A-K, taken as unset by L-Z;
- class defaults on a config whose model_type is not the class's: A-K fills them for any
  model_type read as the family, L-Z only for the class's own (`config_class`);
- the wording of the refusal and of the defaults warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan.sources.hf_defaults import field_defaults
from kvplan.sources.hf_fields_table import FAMILY_FIELDS, Covered, FamilyFields, only
from kvplan.sources.hf_unknown import CACHE_WORDS, IGNORED

__all__ = ["FAMILY_FIELDS", "Covered", "FamilyFields", "check_family_fields",
           "fill_class_defaults", "only"]


def fill_class_defaults(data: dict, model_type: str, warnings: list[str]) -> dict:
    """`data` with the family's config-class defaults of cache fields config.json leaves out
    (kvplan.sources.hf_defaults.field_defaults; an explicit null stays null, as the class keeps
    it) and the class's layer_types when it has none, each said in a warning. A wrapper's text
    sub-config (Mistral-3's MistralConfig) is filled too, unless the row's audit fills only its
    own class (qwen2_5_vl_text is not Qwen2Config) or keeps the sub-config's stated nulls (the
    unwrapping records those in `_null_keys`, having dropped them)."""
    family = FAMILY_FIELDS.get(model_type)
    if family is None:
        return data
    audit = family.audit
    config_class = family.config_class or model_type
    if audit.same_class_only and data.get("model_type", model_type) != config_class:
        return data
    nulls = data.get("_null_keys", ()) if audit.keeps_stated_nulls else ()
    defaults = field_defaults(config_class, family.shared_defaults)
    used = {k: v for k, v in defaults.items() if k not in data and k not in nulls}
    said = [f"{k} {v}" for k, v in used.items()]
    data = {**data, **used} if used else data
    build, layers = family.default_layer_types, data.get("num_hidden_layers")
    if (build is not None and data.get("layer_types") is None and isinstance(layers, int)
            and not isinstance(layers, bool) and 0 < layers <= 4096):
        data = {**data, "layer_types": [build(i) for i in range(layers)]}
        said.append("layer_types (the class's pattern)")
    if said:
        warnings.append(f"not in config.json, taken from the {model_type} config class's "
                        f"defaults{audit.fill_words}: {', '.join(said)}")
    return data


def check_family_fields(data: Mapping[str, Any], path: str, model_type: str) -> None:
    """Refuse a field that may shape the cache (by its name) which the family's reader does not
    cover, or a covered field holding a value it does not cover, and the row's `required` and
    `head_dim_is_hidden` layouts; one line naming the file and the field."""
    for key in ("rope_scaling", "rope_parameters"):
        # Every transformers 5.19 config class validates these as a mapping or null (a float
        # rope_scaling raises StrictDataclass*ValidationError, checked on Llama, Qwen2/3-MoE,
        # Mixtral, GPT-2, BLOOM, OPT), so vLLM 0.32 loads no such file (blind batch 15:
        # mllm's Qwen3-30B-A3B edit, rope_scaling 1.0, stopped its CPU build).
        value = data.get(key)
        if value is not None and not isinstance(value, Mapping):
            raise SpecError(path, key, f"{value!r}: transformers 5.19's config classes take a "
                                       "mapping or null, so vLLM 0.32 does not load this file")
    _check_mrope_section(data, path)
    family = FAMILY_FIELDS.get(model_type)
    if family is None:
        return
    for key in family.required:
        if data.get(key) is None:
            raise SpecError(path, key, f"missing: the {model_type} config class leaves it null "
                                       "and vLLM 0.32 does not load the model without it")
    _check_head_dim(family, data, path)
    audit = family.audit
    for key, value in data.items():
        name = str(key)
        if name.startswith("_") or name in IGNORED:
            continue
        rule = family.covered.get(name) or audit.common.get(name)
        if rule is None:
            if value is None and audit.skips_null and name not in audit.null_is_read:
                continue  # unset, as vLLM's getattr(config, name, None) reads it
            if any(word in name.lower() for word in CACHE_WORDS):
                raise SpecError(path, name, audit.unread.format(model_type=model_type,
                                                                source=family.source))
            continue
        if rule.same_as and value != data.get(rule.same_as):
            raise SpecError(path, name, f"{value!r} on {model_type}: vLLM 0.32 sizes the cache "
                                        f"by {rule.same_as} ({data.get(rule.same_as)!r}), which "
                                        "these weights do not fit; refused rather than guessed")
        if rule.accepts is not None and not rule.accepts(value):
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            raise SpecError(path, name, f"{shown} on {model_type}: expected {rule.expected} "
                                        f"({rule.why}); refused rather than guessed")


def _check_mrope_section(data: Mapping[str, Any], path: str) -> None:
    """vLLM 0.32 builds M-RoPE only when mrope_section sums to half the rotary width
    (layers/rotary_embedding/mrope.py:364 asserts it; rotary_embedding/__init__.py get_rope:
    rope_dim, else head size x partial_rotary_factor): any other file stops vLLM on every
    platform (blind batch 15: KsanaLLM's tiny Qwen2-VL, [16, 24, 24] on 64-wide heads)."""
    key = "rope_parameters" if isinstance(data.get("rope_parameters"), Mapping) else "rope_scaling"
    rope, ints = data.get(key), lambda v: isinstance(v, int) and not isinstance(v, bool)
    section = rope.get("mrope_section") if isinstance(rope, Mapping) else None
    hidden, heads = data.get("hidden_size"), data.get("num_attention_heads")
    head = data.get("head_dim") if ints(data.get("head_dim")) else (
        hidden // heads if ints(hidden) and ints(heads) and heads > 0 else None)
    factor = rope.get("partial_rotary_factor", data.get("partial_rotary_factor")) \
        if isinstance(rope, Mapping) else None
    if not (isinstance(section, list) and section and all(ints(v) for v in section)
            and head is not None and isinstance(factor, (int, float, type(None)))):
        return
    # No factor stated: a class default may halve the width (Glm4vTextConfig's 0.5), so only a
    # section wider than the whole head is known to fail.
    width = rope["rope_dim"] if ints(rope.get("rope_dim")) else int(head * (factor or 1.0))
    if sum(section) > width // 2 or (factor is not None or ints(rope.get("rope_dim"))) and (
            sum(section) != width // 2):
        raise SpecError(path, f"{key}.mrope_section", f"sums to {sum(section)}, not half the "
                                                      f"rotary width {width}: vLLM 0.32 does not "
                                                      "build it (rotary_embedding/mrope.py)")


def _check_head_dim(family: FamilyFields, data: Mapping[str, Any], path: str) -> None:
    head_dim, hidden, heads = (data.get(k) for k in ("head_dim", "hidden_size",
                                                     "num_attention_heads"))
    if family.head_dim_is_hidden and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                         for v in (head_dim, hidden, heads)) and (
            head_dim * heads != hidden):
        raise SpecError(path, "head_dim", f"{head_dim} is not hidden_size / num_attention_heads "
                                          f"({hidden} / {heads}): {family.source} sizes its "
                                          "attention by the quotient while vLLM pads the "
                                          "recurrent state pages by head_dim; refused")
