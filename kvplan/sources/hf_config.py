"""Import a HuggingFace ``config.json`` into kvplan's model-spec schema (``kvplan import``).

Pure and offline: the file is read by kvplan.sources.hf_files (`read_config`), converted to a
mapping in the YAML schema of ``model_specs/README.md`` (`spec_mapping_from_config`) and validated
by :func:`kvplan.sources.spec_yaml.parse_spec`. Field names are the ones transformers' config
classes use; defaults that a config.json leaves out are those classes' defaults, and every default
or guess that matters is reported as a warning.

The sections are read by kvplan.sources.hf_families (attention, MLP, MoE, family by family),
kvplan.sources.hf_hybrid (layer plans of hybrid architectures) and kvplan.sources.hf_vision
(vision towers); `spec_yaml_text` renders the result for ``kvplan import``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from kvplan._util.dtypes import WEIGHT_DTYPE_ALIASES
from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_LAYERS
from kvplan.model.context_limit import context_limit_from_config
from kvplan.model.quant_config import parse_quantization_config
from kvplan.model.spec import ModelSpec
from kvplan.sources.features import config_features
from kvplan.sources.hf_defaults import class_defaults, tie_default
from kvplan.sources.hf_dsv4 import CSA_MODEL_TYPE, csa_attention_mapping
from kvplan.sources.hf_families import (
    GPT2_NAMES,
    GPT2_STYLE,
    KNOWN_MODEL_TYPES,
    LAYERNORM_FAMILY,
    MLA_FAMILY,
    gemma3_rope_tables,
    head_attention,
    layer_type_shapes,
    mla_attention,
    mtp_layers,
)
from kvplan.sources.hf_fields import check_family_fields, fill_class_defaults
from kvplan.sources.hf_files import QUANT_FILE, QUANT_FILE_KEY, read_config
from kvplan.sources.hf_gemma_blocks import GEMMA3N_FAMILIES, gemma3n_rope_tables, gemma_blocks
from kvplan.sources.hf_hybrid import (
    PURE_RECURRENT_TYPES,
    STATE_FIELDS,
    layer_plan,
    nemotron_h_layers,
)
from kvplan.sources.hf_index_cache import indexer_mapping
from kvplan.sources.hf_mlp import mlp_section
from kvplan.sources.hf_moe import moe_section
from kvplan.sources.hf_notes import family_notes
from kvplan.sources.hf_reader import ConfigReader, config_model_type
from kvplan.sources.hf_renamed import renamed_fields
from kvplan.sources.hf_rotary import builds_rotary_table, rope_table_rows, rotary_dim
from kvplan.sources.hf_text import check_layer_types, fill_family_defaults, text_family
from kvplan.sources.hf_unknown import check_unknown_fields
from kvplan.sources.hf_vision import llama4_tower, qwen2_vit, qwen_vit, siglip_tower
from kvplan.sources.hf_wrappers import (
    TEXT_FAMILY,
    TEXT_KEYS,
    dtype_fields,
    text_class_fields,
    tower_assumption,
    untouched_towers,
    wrapped_text_config,
    wrapper_of,
)
from kvplan.sources.spec_context import position_fields_from_config, position_fields_mapping
from kvplan.sources.spec_yaml import parse_spec
from kvplan.sources.support import check_architecture, config_code_fields, model_type_hint

# Model types read as another family: a multimodal wrapper's text model goes by the wrapper
# family's name, and a model_type transformers maps to another family's config class by it.
_TEXT_ALIASES = {"llama4_text": "llama4", "qwen3_5_text": "qwen3_5",
                 "qwen3_5_moe_text": "qwen3_5_moe", "gemma3n_text": "gemma3n",
                 "qwen3_next_text": "qwen3_next", "gemma4_text": "gemma4",
                 # ShieldGemma2Config (transformers 5.19): Gemma3Config's text_config and
                 # vision_config; vLLM 0.32 serves it as Gemma3ForConditionalGeneration.
                 "shieldgemma2": "gemma3",
                 # CONFIG_MAPPING["gpt-sw3"] is GPT2Config; vLLM serves GPT2LMHeadModel.
                 "gpt-sw3": "gpt2",
                 # Qwen2.5-VL's published config.json keeps the decoder's fields at the top
                 # (no text_config): qwen2_5_vl.py builds Qwen2ForCausalLM over them.
                 "qwen2_5_vl": "qwen2",
                 # Qwen2-VL's too: transformers 5.19 Qwen2VLConfig pops the flat file's text
                 # keys into Qwen2VLTextConfig, and qwen2_vl.py builds Qwen2ForCausalLM over it.
                 "qwen2_vl": "qwen2",
                 # Ministral-3 (Ministral3Config, transformers 5.19): registry.py serves
                 # Ministral3ForCausalLM with models/mistral.py MistralForCausalLM.
                 "ministral3": "mistral"}
# Configs that keep Gemma-3's decoder under text_config (or at the top: gemma3_text).
_GEMMA3_CONFIGS = ("gemma3", "gemma3_text", "shieldgemma2")
# Wrapper classes read by `unwrap_text_config` whose config class builds the language model
# from text_config alone: absent, it is the text class's defaults, never the file's top-level
# keys, so a flat file (ktransformers' Llama-4-Scout config, blind batch 18) is refused rather
# than read. Llama4Config (transformers 5.19 configuration_llama4.py:254-256): text_config None
# -> Llama4TextConfig(); vLLM 0.32 models/mllama4.py builds its decoder over
# config.text_config. By architecture: the text-only Llama4ForCausalLM reads its own config.
_TEXT_SUBCONFIG_ONLY = {"Llama4ForConditionalGeneration":
                        "Llama4Config builds Llama4TextConfig() defaults"}

_TOP_ORDER = (
    "name", "source", "model_type", "architectures", "text_architectures", "remote_code",
    "remote_config", "config_model_type", "torch_dtype", "num_hidden_layers", "hidden_size",
    "vocab_size", "tie_word_embeddings", "position_embedding", "max_position_embeddings",
    "max_model_len", "max_model_len_source", "position_fields", "norm_type",
)


def _text_config(config: Mapping[str, Any], model_type: str, cfg_warn: list[str]) -> dict:
    """Gemma-3 keeps the decoder's settings under text_config; fill gaps with the defaults."""
    if model_type not in _GEMMA3_CONFIGS:
        return dict(config)
    text = config.get("text_config")
    merged = dict(config)
    if isinstance(text, Mapping):
        merged.update({k: v for k, v in text.items() if v is not None})
        # torch_dtype is a top-level field of the multimodal config; keep it when present.
        for key in ("torch_dtype", "dtype"):
            if config.get(key) is not None:
                merged[key] = config[key]
    used = []
    for key, value in class_defaults("gemma3_text").items():
        if key == "sliding_window_pattern" and merged.get("_sliding_window_pattern") is not None:
            continue
        if merged.get(key) is None:
            merged[key] = value
            used.append(f"{key} {value}")
    if used:
        cfg_warn.append("not in config.json, taken from transformers' Gemma3TextConfig defaults: "
                        + ", ".join(used))
    return merged


def unwrap_text_config(config: Mapping[str, Any], warnings: list[str]) -> dict:
    """The language model's settings of a multimodal wrapper (Llama-4, Qwen3.5, Gemma-3n,
    Mistral-3, ...), with the wrapper's dtype and tie flag where the text part leaves them out.
    Vision and audio towers are not part of the KV cache; they are reported, not counted."""
    for key in TEXT_KEYS:
        text = config.get(key)
        if isinstance(text, Mapping) and ("num_hidden_layers" in text or "model_type" in text):
            merged = {k: v for k, v in text.items() if v is not None}
            for outer in ("torch_dtype", "dtype", "tie_word_embeddings", "quantization_config",
                          "_name_or_path"):
                if outer not in merged and config.get(outer) is not None:
                    merged[outer] = config[outer]
            merged.setdefault("model_type", config_model_type(config))
            merged["_wrapper_model_type"] = config_model_type(config)
            # Stated as null (dropped above): not left to the config class's default.
            merged["_null_keys"] = tuple(k for k, v in text.items() if v is None)
            towers = [k for k in ("vision_config", "audio_config") if isinstance(
                config.get(k), Mapping)]
            if towers:
                warnings.append(f"{key} of a {config_model_type(config)} wrapper read as the "
                                f"language model; {', '.join(towers)} not counted (no KV cache)")
            return merged
    return dict(config)


def _name(config: Mapping[str, Any], path: str, model_type: str) -> str:
    value = config.get("_name_or_path")
    if isinstance(value, str) and value.strip() and len(value) <= 1024 and not any(
            ord(ch) < 32 or ord(ch) == 127 for ch in value):
        value = value.strip().rstrip("/")
        # A local path says little; keep its last component.
        return value.rsplit("/", 1)[-1] if value.startswith(("/", ".", "~")) else value
    return _id_from_path(path) or model_type


def _id_from_path(path: str) -> str:
    p = Path(path)
    if p.name == "config.json":
        return p.parent.name
    return p.stem if p.suffix == ".json" else p.name


def _dtype(c: ConfigReader) -> str:
    """The checkpoint's dtype as config.json states it (the engines' compute dtype follows from
    it: float32 is served in bfloat16, see kvplan.weights.base.engine_dtype). Quantized formats are
    carried apart, in quantization_config."""
    key, value = c.first("torch_dtype", "dtype")
    if key is None:
        c.warn("torch_dtype absent: assumed float32 (transformers' default); the engines load "
               "bfloat16")
        return "float32"
    if not isinstance(value, str) or value not in WEIGHT_DTYPE_ALIASES:
        c.warn(f"{key} {value!r} is not a weight dtype kvplan knows: assumed bfloat16")
        return "bfloat16"
    return value


def _quantization(c: ConfigReader, origin: str | None) -> dict | None:
    """quantization_config, checked; `origin`: the hf_quant_config.json it was read from
    (read_config), said in the warning."""
    quant = c.data.get("quantization_config")
    if quant is None:
        return None
    parsed = parse_quantization_config(quant, origin or c.path)
    if origin is None and c.data.get("model_type") == CSA_MODEL_TYPE:
        # vLLM runs a V4 fp8 config as deepseek_v4_fp8 (kvplan.weights.csa prices it).
        c.warn(f"quantization_config: {parsed.description}, run by vLLM as deepseek_v4_fp8 "
               f"with {c.data.get('expert_dtype', 'fp4')} experts")
    elif origin is None:
        c.warn(f"quantization_config: {parsed.description}")
    else:
        c.warn(f"{QUANT_FILE}: {parsed.description}, read as vLLM does when config.json has no "
               f"quantization_config (transformers_utils/config.py get_config; {origin})")
    if not parsed.weights_exact:
        c.assume("quantization_config.quant_algo", parsed.method,
                 "weights priced per quantized_layers entry, a reading not checked against "
                 "vLLM; the KV cache does not depend on it", affects="weights")
    return dict(quant)


def spec_mapping_from_config(config: dict, *, path: str) -> tuple[dict, list[str]]:
    """Convert a config.json mapping into kvplan's YAML schema; returns (mapping, warnings)."""
    if not isinstance(config, Mapping):
        raise SpecError(path, None, "expected a JSON object")
    check_architecture(config, path)  # vLLM's registry: exact, else refused (sources/support.py)
    model_type = config_model_type(config)
    pre_warnings: list[str] = []
    wrapper = wrapper_of(config)
    if model_type in _GEMMA3_CONFIGS:
        data = _text_config(config, model_type, pre_warnings)
    elif wrapper is not None:
        data = wrapped_text_config(config, wrapper, path, pre_warnings)
        model_type = config_model_type(data)
    else:
        archs = config.get("architectures")
        arch = archs[0] if isinstance(archs, list) and archs else None
        if arch in _TEXT_SUBCONFIG_ONLY and not isinstance(config.get("text_config"), Mapping):
            raise SpecError(path, "text_config", f"missing: transformers 5.19's "
                            f"{_TEXT_SUBCONFIG_ONLY[arch]} for the language model and "
                            "reads none of the file's top-level text fields (vLLM 0.32 sizes "
                            "the cache from those defaults); refused rather than guessed")
        data = unwrap_text_config(config, pre_warnings)
        model_type = config_model_type(data)
    model_type = _TEXT_ALIASES.get(model_type, TEXT_FAMILY.get(model_type, model_type))
    data, renamed = renamed_fields(data, model_type, path)  # DBRX's, LongCat-Flash's names
    if model_type == "nemotron_h":
        data = nemotron_h_layers(data, path, pre_warnings)
    data = fill_family_defaults(data, model_type, pre_warnings)
    data = fill_class_defaults(data, model_type, pre_warnings)
    check_layer_types(data, model_type, path)
    check_family_fields(data, path, model_type)  # a known family's unread cache field: refused
    data["model_type"] = model_type
    c = ConfigReader(data, path, model_type)
    c.warnings.extend(pre_warnings)
    mt = model_type
    known = mt in KNOWN_MODEL_TYPES

    # ChatGLM: vLLM's chatglm.py builds config.num_layers layers.
    layer_keys = ("num_layers", "num_hidden_layers") if mt == "chatglm" else (
        "num_hidden_layers", "n_layer", "num_layers")
    gpt2_names = mt in GPT2_NAMES  # n_layer, n_head, n_embd, n_positions
    layers = c.int(*layer_keys, required="n_layer" if gpt2_names else layer_keys[0],
                   maximum=MAX_LAYERS)
    pure = mt in PURE_RECURRENT_TYPES  # no attention layer: no heads to read
    heads = 0 if pure else c.int("num_attention_heads", "n_head",
                                 required="n_head" if gpt2_names else "num_attention_heads")
    hidden = c.int("hidden_size", "n_embd", "d_model",
                   required="n_embd" if gpt2_names else "hidden_size")
    vocab = c.int("vocab_size", "padded_vocab_size", required="vocab_size",
                  what="missing: needed for the weight count")

    if not known:
        declared = [k for k in STATE_FIELDS if k in c.data]
        if declared:
            raise SpecError(c.path, declared[0], f"declares a cache kvplan does not model for "
                                                 f"model_type {mt!r}, no family kvplan reads "
                                                 f"field by field{model_type_hint(c.data, mt)}; "
                                                 "refused rather than sized as attention")
        check_unknown_fields(c.data, c.path, mt)
        c.assume("model_type", mt, "not a family kvplan reads field by field: every layer "
                                   "sized as one attention cache from the standard fields, as "
                                   "vLLM's Llama-style decoders (models/llama.py) build it")
    plan = layer_plan(c, layers, hidden)
    is_mla = c.has("kv_lora_rank")
    if pure:
        attention: dict[str, Any] = {"kind": "none"}
    elif mt == CSA_MODEL_TYPE:  # DeepSeek-V4: its own attention section (hf_dsv4)
        attention = csa_attention_mapping(c.data, c.path)
    elif is_mla:
        attention = mla_attention(c, heads, hidden)
    elif plan is not None:
        attention = head_attention(c, heads, hidden, layers, windows=False)
    else:
        attention = head_attention(c, heads, hidden, layers)
    if plan is not None:
        attention.update(plan.attention)
    layer_type_shapes(c, attention)  # shapes that differ by layer type (Gemma-4, MiMo-V2)
    if mt != CSA_MODEL_TYPE and (c.has("index_head_dim") or (c.has("index_topk")
                                                             and mt in MLA_FAMILY)):
        attention["indexer"] = indexer_mapping(c, layers)  # IndexCache's skipped layers too
    # Mamba layers hold no MLP (in_mixer_layers false below): the section's width is unused.
    if plan is not None and plan.mlp is not None:
        mlp = {"gated": True, "bias": c.bool("mlp_bias", False), **plan.mlp}
    else:
        mlp = ({"intermediate_size": plan.recurrent["intermediate_size"], "gated": False}
               if pure and plan is not None and plan.recurrent else mlp_section(c, hidden))
    if plan is not None and not plan.mlp_in_mixer_layers:
        mlp["in_mixer_layers"] = False

    moe = moe_section(c, layers, mlp["intermediate_size"])

    # Embeddings, positions, norms.
    if c.has("tie_word_embeddings"):
        tie = c.bool("tie_word_embeddings", False)
    else:
        tie = bool(tie_default(mt))
        if known:
            c.warn(f"tie_word_embeddings absent: {mt} default ({str(tie).lower()})")
        else:
            c.assume("tie_word_embeddings", "false (untied embeddings)",
                     "absent; changes weights only", affects="weights")
    if mt in GPT2_STYLE:
        position, max_pos = "learned", c.int("n_positions", "max_position_embeddings",
                                             required="n_positions",
                                             what="missing: needed for learned positions")
    elif mt == "opt":
        # OPT's learned position table has max_position_embeddings + 2 rows (a fixed offset of
        # 2); the 2 extra rows (2 * hidden_size parameters) are ignored.
        position = "learned"
        max_pos = c.int("max_position_embeddings", required="max_position_embeddings",
                        what="missing: needed for learned positions")
    else:
        family = text_family(mt)
        position = "alibi" if c.bool("alibi", False) else family.position if family else "rope"
        if position == "rope" and not builds_rotary_table(c.data, mt):
            position = "none"  # attention without a rotary table (Nemotron-H, Jamba)
        max_pos = c.int("max_position_embeddings", "n_positions", "seq_length")
        if mt == "falcon" and max_pos is None:
            max_pos = 2048
            c.warn("max_position_embeddings absent: FalconConfig default 2048")
        if not known and not c.has("alibi"):
            c.assume("position_embedding", "RoPE positions", "no cache size depends on it",
                     affects="weights")
    norm = "layernorm" if mt in LAYERNORM_FAMILY else "rmsnorm"
    if not known:
        c.assume("norm_type", "rmsnorm", "changes weights only", affects="weights")

    family_notes(c)
    if not known:
        c.warn(f"model_type {mt!r} is not one kvplan knows; read from the standard fields, "
               "assumed: " + "; ".join(f"{a.field} {a.value}" for a in c.assumed))

    mapping: dict[str, Any] = {
        "name": _name(config, path, mt),
        "source": path,
        "model_type": mt,
        "torch_dtype": _dtype(c),
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "vocab_size": vocab,
        "tie_word_embeddings": tie,
        "position_embedding": position,
        **dtype_fields(config, data),
    }
    mapping.update(config_code_fields(config))  # engines' model and config class rules
    mapping.update(text_class_fields(config, data))  # a wrapper's language model class
    if max_pos is not None:
        mapping["max_position_embeddings"] = max_pos
    limit = context_limit_from_config(data, mt)
    if limit is not None and (limit.tokens, limit.source) != (
            max_pos, "config.json max_position_embeddings"):
        mapping["max_model_len"] = limit.tokens
        mapping["max_model_len_source"] = limit.source
    fields = position_fields_mapping(position_fields_from_config(data, max_pos))
    if fields is not None:
        mapping["position_fields"] = fields
    mapping["norm_type"] = norm
    mapping["attention"] = attention
    mapping.update(renamed)
    mapping["mlp"] = mlp
    if moe is not None:
        mapping["moe"] = moe
    quant = _quantization(c, config.get(QUANT_FILE_KEY))
    if quant is not None:
        mapping["quantization_config"] = quant
    if plan is not None:
        mapping["layer_types"] = plan.layer_types
        if plan.recurrent is not None:
            mapping["recurrent"] = plan.recurrent
    nextn = mtp_layers(c)
    if nextn:
        mapping["num_nextn_predict_layers"] = nextn
    mapping.update(config_features(c))  # qk_norm; Falcon's parallel_block_norm
    shared = c.int("num_kv_shared_layers", minimum=0, maximum=MAX_LAYERS)
    if shared:
        # gemma-3n: the last N layers reuse the KV cache of the last earlier layer of the same
        # attention type (transformers' Gemma3n attention), whatever the model_type is called.
        mapping["kv_sharing"] = {"num_kv_shared_layers": shared}
    if position == "rope" and isinstance(attention.get("head_dim"), int):
        rotary = rotary_dim(c.data, mt, attention["head_dim"], c.path)  # partial rotary
        if rotary is not None:
            mapping["rotary_dim"] = rotary
        tables = rope_table_rows(c.data, mt, max_pos, c.path) if max_pos else None
        if tables:
            mapping["rope_tables"] = tables
    # PLE, AltUp, LAuReL; Gemma-4's tower sizes
    blocks = gemma_blocks(c.data, mt, c.path, untouched_towers(config), config)
    if blocks is not None:
        mapping["gemma_blocks"] = blocks
        if position == "rope" and max_pos and mt in GEMMA3N_FAMILIES:
            mapping["rope_tables"] = gemma3n_rope_tables(c.data, max_pos, c.path)
    if mt in ("gemma3", "gemma3_text") and max_pos is not None:
        mapping["rope_tables"] = gemma3_rope_tables(c, max_pos)
        tower = siglip_tower(config, path)
        if tower is not None:
            mapping["vision"] = tower
        mm_tokens = config.get("mm_tokens_per_image")
        if (tower is not None and isinstance(mm_tokens, int) and not isinstance(mm_tokens, bool)
                and mm_tokens != 256):  # 256: the spec's default
            tower["tokens_per_image"] = mm_tokens
    if c.assumed:
        mapping["assumptions"] = [asdict(x) for x in c.assumed]
    vit = qwen_vit(config, path)
    if vit is not None:
        mapping["qwen_vit"] = vit
    llama4_vision = llama4_tower(config, path)
    if llama4_vision is not None:
        mapping["vision"] = llama4_vision
    vit2 = qwen2_vit(config, path)
    if vit2 is not None:
        mapping["qwen2_vit"] = vit2
    counted = "tower_shapes" in mapping.get("gemma_blocks", {})  # Gemma-4's towers
    towers = (None if "vision" in mapping or vit  # priced, with their encoder profile
              else tower_assumption(config, weighed=vit2 is not None, counted=counted))
    if towers is not None:
        c.assume(*towers, affects="weights")
        mapping["assumptions"] = [asdict(x) for x in c.assumed]
    # A tower kvplan weighs but does not profile says so in its assumption, which the engine
    # drops where vLLM profiles no encoder (kvplan.engines.vllm.towers); a warning here, before
    # the engine's flags are known, would be false for a server started without the profile.
    if (isinstance(config.get("vision_config"), Mapping) and "vision" not in mapping
            and vit is None and vit2 is None and not counted):
        c.warn(f"vision_config of a {config_model_type(config)} checkpoint not read: vLLM's "
               "multimodal encoder profile is not in its reserve (give --reserve-gib, or "
               "--limit-mm-per-prompt image=0,video=0 as vLLM would be started)")
    return mapping, c.warnings


def load_config(path: Path) -> tuple[ModelSpec, list[str]]:
    """Load a config.json (file or folder) as a validated ModelSpec, plus the import warnings."""
    data, shown = read_config(Path(path))
    mapping, warnings = spec_mapping_from_config(data, path=shown)
    spec_id = _id_from_path(shown) or mapping["model_type"]
    spec = parse_spec(mapping, path=shown, spec_id=spec_id)
    if QUANT_FILE_KEY in data:
        spec = replace(spec, quantization_file=QUANT_FILE)
    return spec, warnings


def spec_yaml_text(mapping: dict, warnings: list[str] | tuple[str, ...] = ()) -> str:
    """Render a spec mapping as YAML in the schema's order, with a header and the warnings."""
    import yaml  # light, but only needed here

    lines = [
        f"# Imported from {mapping.get('source', '?')} by `kvplan import`.",
        "# Check the values against the model card; the schema is in model_specs/README.md.",
    ]
    if warnings:
        lines.append("# Warnings:")
        for w in warnings:
            lines.extend(textwrap.wrap(" ".join(str(w).split()), width=98,
                                       initial_indent="#   - ", subsequent_indent="#     "))
    top = {k: mapping[k] for k in _TOP_ORDER if k in mapping}
    top.update({k: v for k, v in mapping.items()
                if k not in top and k not in ("attention", "mlp", "moe", "kv_sharing",
                                              "recurrent", "layer_types",
                                              "quantization_config", "vision", "qwen_vit",
                                              "qwen2_vit", "assumptions")})
    parts = ["\n".join(lines), yaml.safe_dump(top, sort_keys=False, default_flow_style=False)]
    if "layer_types" in mapping:
        parts.append("layer_types: [" + ", ".join(mapping["layer_types"]) + "]")
    for section in ("attention", "recurrent", "mlp", "moe", "kv_sharing", "vision",
                    "qwen_vit", "qwen2_vit", "quantization_config", "assumptions"):
        if section in mapping:
            parts.append(yaml.safe_dump({section: mapping[section]}, sort_keys=False,
                                        default_flow_style=False))
    return "\n".join(p.rstrip("\n") + "\n" for p in parts)
