"""A model spec YAML (or the mapping config.json import builds) -> ModelSpec: every field
validated at the boundary, each error one line naming the file and the field."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kvplan._util.dtypes import WEIGHT_DTYPE_ALIASES
from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_LAYERS, checked_int, checked_text, checked_text_list
from kvplan.model.attention import Attention, AttentionKind, HeadAttention, LatentAttention
from kvplan.model.context_limit import ContextLimit
from kvplan.model.recurrent import RECURRENT_FIELDS, RECURRENT_KINDS, RecurrentSpec
from kvplan.model.spec import (
    CHUNKED,
    FULL,
    HYBRID,
    LAYER_TYPES,
    MLP_ONLY,
    RECURRENT,
    SLIDING,
    STATE_DTYPES,
    Assumption,
    MLPSpec,
    ModelSpec,
    MoESpec,
    last_layers_sources,
    share_every_sources,
    validate_kv_sources,
)
from kvplan.sources.features import architecture_features
from kvplan.sources.hf_dsv4 import csa_section
from kvplan.sources.hf_gemma_blocks import parse_gemma_blocks
from kvplan.sources.hf_index_cache import parse_indexer
from kvplan.sources.spec_context import FIELD, parse_position_fields
from kvplan.sources.spec_reader import SectionReader as _Reader
from kvplan.sources.spec_vision import parse_qwen2_vit, parse_qwen_vit, parse_vision

# Validation helpers. Each takes the mapping, the key and the dotted prefix used in messages.


_HEAD_FIELDS = ("num_key_value_heads", "head_dim")
_MLA_FIELDS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "q_lora_rank")


def _parse_attention(r: _Reader) -> Attention:
    kind = AttentionKind(r.str("kind", choices=tuple(k.value for k in AttentionKind)))
    if kind is AttentionKind.csa:  # DeepSeek-V4: kvplan.sources.hf_dsv4 checks the section
        return csa_section(r.data, r.path, r.prefix, r.seen)
    if kind is AttentionKind.none:
        r.forbid(("num_attention_heads", *_HEAD_FIELDS, *_MLA_FIELDS),
                 "not used by kind none (a model without attention layers)")
        return HeadAttention.none()
    heads = r.int("num_attention_heads")
    # attention_bias is accepted for every kind (DeepSeek configs carry `attention_bias: false`).
    attention_bias = r.bool("attention_bias")
    if kind is AttentionKind.mla:
        r.forbid(_HEAD_FIELDS, "not used by kind mla (MLA caches kv_lora_rank + qk_rope_head_dim)")
        return LatentAttention(
            num_attention_heads=heads,
            kv_lora_rank=r.int("kv_lora_rank"),
            qk_rope_head_dim=r.int("qk_rope_head_dim"),
            qk_nope_head_dim=r.int("qk_nope_head_dim"), v_head_dim=r.int("v_head_dim"),
            q_lora_rank=r.int("q_lora_rank", required=False),
        )
    r.forbid(_MLA_FIELDS, f"only valid for kind mla, not {kind.value}")
    kv_heads = r.int("num_key_value_heads")
    head_dim = r.int("head_dim")
    v_head_dim = r.int("v_head_dim", required=False, default=head_dim)
    if heads % kv_heads:
        raise r.error("num_key_value_heads", f"must divide num_attention_heads ({heads})")
    if kind is AttentionKind.mha and kv_heads != heads:
        raise r.error("num_key_value_heads",
                      f"kind mha needs num_attention_heads ({heads}) KV heads")
    if kind is AttentionKind.mqa and kv_heads != 1:
        raise r.error("num_key_value_heads", f"kind mqa needs exactly 1 KV head, got {kv_heads}")
    if kind is AttentionKind.gqa and not 1 <= kv_heads <= heads:
        raise r.error("num_key_value_heads", "kind gqa needs between 1 and num_attention_heads")
    return HeadAttention(
        kind=kind,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=v_head_dim,
        attention_bias=attention_bias,
        o_proj_bias=r.bool("o_proj_bias"),
    )


def _parse_windows(r: _Reader, num_layers: int) -> tuple[int | None, ...]:
    window = r.int("sliding_window", required=False)
    pattern = r.int("sliding_window_pattern", required=False)
    types = r._get("layer_types", False)
    if pattern is not None and types is not None:
        raise r.error("layer_types", "give either sliding_window_pattern or layer_types, not both")
    if (pattern is not None or types is not None) and window is None:
        raise r.error("sliding_window", "missing: required with sliding_window_pattern/layer_types")
    if window is None:
        return (None,) * num_layers
    if types is not None:
        if not isinstance(types, list) or len(types) != num_layers:
            raise r.error("layer_types", f"expected a list of {num_layers} entries (one per layer)")
        bad = [t for t in types if t not in (SLIDING, FULL)]
        if bad:
            raise r.error("layer_types", f"entries must be {SLIDING} or {FULL}, got {bad[0]!r}")
        return tuple(window if t == SLIDING else None for t in types)
    if pattern is not None:
        # Every `pattern`-th layer (1-based) is global: gemma-3's 6 gives 5 local : 1 global.
        return tuple(None if (i + 1) % pattern == 0 else window for i in range(num_layers))
    return (window,) * num_layers


def _parse_sharing(r: _Reader, windows: tuple[int | None, ...]) -> tuple[int | None, ...]:
    n = len(windows)
    every = r.int("share_every", required=False)
    last = r.int("num_kv_shared_layers", required=False, minimum=0)
    targets = r._get("kv_shared_layer_targets", False)
    given = [name for name, v in (("share_every", every), ("num_kv_shared_layers", last),
                                  ("kv_shared_layer_targets", targets)) if v is not None]
    if len(given) != 1:
        raise SpecError(r.path, r.prefix.rstrip("."),
                        "give exactly one of share_every, num_kv_shared_layers, "
                        "kv_shared_layer_targets")
    r.finish()
    if every is not None:
        sources = share_every_sources(n, every)
        field = r.field("share_every")
    elif last is not None:
        if last >= n:
            raise r.error("num_kv_shared_layers", f"must be < num_hidden_layers ({n})")
        sources = last_layers_sources(windows, last)
        field = r.field("num_kv_shared_layers")
    else:
        field = r.field("kv_shared_layer_targets")
        if not isinstance(targets, list) or len(targets) != n:
            raise SpecError(r.path, field, f"expected a list of {n} entries (null or a layer "
                                           "index, one per layer)")
        for t in targets:
            if t is not None and (isinstance(t, bool) or not isinstance(t, int)):
                raise SpecError(r.path, field, f"entries must be null or a layer index, got {t!r}")
        sources = tuple(targets)
    validate_kv_sources(sources, windows, path=r.path, field=field)
    return sources


def _parse_moe(r: _Reader, num_layers: int) -> MoESpec:
    moe = MoESpec(
        n_routed_experts=r.int("n_routed_experts"),
        num_experts_per_tok=r.int("num_experts_per_tok"),
        moe_intermediate_size=r.int("moe_intermediate_size"),
        n_shared_experts=r.int("n_shared_experts", required=False, default=0, minimum=0),
        shared_expert_intermediate_size=r.int(
            "shared_expert_intermediate_size", required=False, default=0, minimum=0
        ),
        first_k_dense_replace=r.int("first_k_dense_replace", required=False, default=0, minimum=0),
        moe_layer_freq=r.int("moe_layer_freq", required=False, default=1),
        zero_experts=r.int("zero_experts", required=False, default=0, minimum=0),
        score_bias=r.bool("score_bias"),
    )
    if moe.num_experts_per_tok > moe.n_routed_experts:
        raise r.error("num_experts_per_tok",
                      f"must be <= n_routed_experts ({moe.n_routed_experts})")
    if moe.first_k_dense_replace > num_layers:
        raise r.error("first_k_dense_replace", f"must be <= num_hidden_layers ({num_layers})")
    r.finish()
    return moe


def _parse_quantization(r: _Reader, path: str) -> str | None:
    """The quantization_config mapping, checked by kvplan.model.quant_config's parser (one line
    on error)."""
    import json

    qc = r._get("quantization_config", False)
    if qc is None:
        return None
    # The quantized formats load for a quantized spec only (start-up: examples/startup-bench.md).
    from kvplan.model.quant_config import parse_quantization_config

    parse_quantization_config(qc, path)
    try:
        return json.dumps(qc, sort_keys=True)
    except (TypeError, ValueError):
        raise r.error("quantization_config", "expected a JSON-like mapping") from None


_MIXER_OF = {FULL: "attention", SLIDING: "attention", CHUNKED: "attention",
             RECURRENT: "recurrent", HYBRID: "hybrid", MLP_ONLY: "mlp"}


def _parse_layer_types(r: _Reader, att_r: _Reader, types: Any, num_layers: int
                       ) -> tuple[tuple[int | None, ...], tuple[int | None, ...],
                                  tuple[str, ...]]:
    """Top-level ``layer_types``: one entry per layer from LAYER_TYPES. Returns the sliding
    windows, the local-attention chunks and the mixers, one entry per layer each."""
    field = r.field("layer_types")
    if not isinstance(types, list) or len(types) != num_layers:
        raise SpecError(r.path, field, f"expected a list of {num_layers} entries (one per layer)")
    bad = [t for t in types if t not in LAYER_TYPES]
    if bad:
        raise SpecError(r.path, field, f"entries must be one of {', '.join(LAYER_TYPES)}, "
                                       f"got {bad[0]!r}")
    att_r.forbid(("layer_types", "sliding_window_pattern"),
                 "not with the top-level layer_types (which already says which layers slide)")
    window = att_r.int("sliding_window", required=False)
    chunk = att_r.int("attention_chunk_size", required=False)
    if SLIDING in types and window is None:
        raise att_r.error("sliding_window", "missing: layer_types has sliding_attention layers")
    if CHUNKED in types and chunk is None:
        raise att_r.error("attention_chunk_size",
                          "missing: layer_types has chunked_attention layers")
    windows = tuple(window if t == SLIDING else None for t in types)
    chunks = tuple(chunk if t == CHUNKED else None for t in types)
    if all(c is None for c in chunks):
        chunks = ()
    return windows, chunks, tuple(_MIXER_OF[t] for t in types)


def _parse_recurrent(r: _Reader) -> RecurrentSpec:
    kind = r.str("kind", choices=tuple(RECURRENT_FIELDS))
    needed = RECURRENT_FIELDS[kind]
    values: dict[str, Any] = {}
    for name in ("conv_kernel", "intermediate_size", "state_size", "n_groups", "num_heads",
                 "head_dim", "num_key_heads", "num_value_heads", "key_head_dim",
                 "value_head_dim", "dt_rank"):
        if name in needed:
            values[name] = r.int(name)
        else:
            value = r.int(name, required=False)
            if value is not None and name != "dt_rank":
                raise r.error(name, f"not used by kind {kind} (it needs {', '.join(needed)})")
            if value is not None:
                values[name] = value
    values["ssm_dtype"] = r.str("ssm_dtype", required=False, choices=STATE_DTYPES)
    values["conv_bias"] = r.bool("conv_bias", default=True)
    rec = RECURRENT_KINDS[kind](**values)
    if kind == "mamba2":
        if rec.num_heads % rec.n_groups:
            raise r.error("n_groups", f"must divide num_heads ({rec.num_heads})")
        if rec.num_heads * rec.head_dim != rec.intermediate_size:
            raise r.error("intermediate_size", f"must equal num_heads x head_dim "
                                               f"({rec.num_heads * rec.head_dim})")
    if kind == "gated_delta_net" and rec.num_value_heads % rec.num_key_heads:
        raise r.error("num_value_heads", f"must be a multiple of num_key_heads "
                                         f"({rec.num_key_heads})")
    r.finish()
    return rec


def parse_spec(data: Any, *, path: str, spec_id: str) -> ModelSpec:
    """Validate a mapping (from YAML, or converted from config.json) into a ModelSpec."""
    r = _Reader(data, path, "")
    layers = r.int("num_hidden_layers", maximum=MAX_LAYERS)
    weight_dtype = r.str("torch_dtype", required=False, default="bfloat16")
    if weight_dtype not in WEIGHT_DTYPE_ALIASES:
        raise r.error("torch_dtype", f"expected one of {', '.join(WEIGHT_DTYPE_ALIASES)}")
    att_r = r.section("attention")
    attention = _parse_attention(att_r)
    types = r._get("layer_types", False)
    if types is None:
        windows = _parse_windows(att_r, layers)
        mixers: tuple[str, ...] = ()
        chunks: tuple[int | None, ...] = ()
    else:
        windows, chunks, mixers = _parse_layer_types(r, att_r, types, layers)
    layer_attention = (_parse_layer_kv_heads(att_r, attention, layers)
                       or _parse_layer_shapes(att_r, attention, windows))
    indexer_r = att_r.section("indexer", required=False)
    indexer = parse_indexer(indexer_r, attention) if indexer_r is not None else None
    att_r.finish()
    rec_r = r.section("recurrent", required=False)
    needs_state = any(m in ("recurrent", "hybrid") for m in mixers)
    if needs_state and rec_r is None:
        raise r.error("recurrent", "missing: layer_types has recurrent/hybrid layers, whose "
                                   "state shape this section gives")
    if rec_r is not None and not needs_state:
        raise r.error("recurrent", "given, but no layer_types entry is recurrent or hybrid")
    recurrent = _parse_recurrent(rec_r) if rec_r is not None else None
    if attention.kind is AttentionKind.none and (
            not mixers or any(m in ("attention", "hybrid") for m in mixers)):
        raise att_r.error("kind", "none needs layer_types whose every entry is recurrent or mlp")
    mlp_r = r.section("mlp")
    mlp = MLPSpec(
        intermediate_size=mlp_r.int("intermediate_size"),
        gated=mlp_r.bool("gated", default=True),
        bias=mlp_r.bool("bias"),
    )
    in_mixer_layers = mlp_r.bool("in_mixer_layers", default=True)
    present = mlp_r._get("layers", False)
    mlp_r.finish()
    has_mlp: tuple[bool, ...] = ()
    if present is not None:
        # `mlp.layers`: per layer, whether it holds the MLP (Nemotron-NAS's no-op ffn blocks).
        if not in_mixer_layers:
            raise r.error("mlp.layers", "not with mlp.in_mixer_layers")
        if not isinstance(present, list) or len(present) != layers or not all(
                isinstance(x, bool) for x in present):
            raise r.error("mlp.layers", f"expected a list of {layers} true / false entries "
                                        "(one per layer)")
        has_mlp = tuple(present)
    elif not in_mixer_layers:
        if not mixers:
            raise r.error("mlp.in_mixer_layers", "false needs layer_types with mlp layers")
        has_mlp = tuple(m == "mlp" for m in mixers)
    elif any(m == "mlp" for m in mixers):
        has_mlp = (True,) * layers
    sharing_r = r.section("kv_sharing", required=False)
    sources = _parse_sharing(sharing_r, windows) if sharing_r is not None else ()
    moe_r = r.section("moe", required=False)
    moe = _parse_moe(moe_r, layers) if moe_r is not None else None
    position_embedding = r.str("position_embedding", required=False, default="rope",
                               choices=("rope", "learned", "alibi", "none"))
    max_pos = r.int("max_position_embeddings", required=False)
    if position_embedding == "learned" and max_pos is None:
        raise r.error("max_position_embeddings", "required with position_embedding: learned")
    spec = ModelSpec(
        id=spec_id, name=r.str("name"), source=r.str("source"), path=path,
        model_type=r.str("model_type", required=False, default="unknown"),
        # config.json's model classes and auto_map (ModelSpec.architectures): vLLM's registry rule
        architectures=checked_text_list(r._get("architectures", False), path=path,
                                        field="architectures"),
        text_architectures=checked_text_list(r._get("text_architectures", False), path=path,
                                             field="text_architectures"),
        remote_code=r.bool("remote_code"),
        **{k: r.str(k, required=False) for k in ("remote_config", "config_model_type")},
        weight_dtype=WEIGHT_DTYPE_ALIASES[weight_dtype],
        num_hidden_layers=layers,
        hidden_size=r.int("hidden_size"),
        vocab_size=r.int("vocab_size"),
        attention=attention, mlp=mlp, moe=moe,
        tie_word_embeddings=r.bool("tie_word_embeddings"),
        position_embedding=position_embedding,
        max_position_embeddings=max_pos,
        context_limit=_parse_context_limit(r),
        position_fields=parse_position_fields(r._get(FIELD, False), r.path),
        norm_type=r.str("norm_type", required=False, default="rmsnorm",
                        choices=("rmsnorm", "layernorm")),
        layer_windows=windows,
        kv_sources=sources,
        layer_mixers=mixers, layer_chunks=chunks, layer_has_mlp=has_mlp,
        layers_per_block=r.int("layers_per_block", required=False, default=1, minimum=1),
        recurrent=recurrent,
        indexer=indexer,
        num_nextn_predict_layers=r.int("num_nextn_predict_layers", required=False, default=0,
                                       minimum=0),
        rope_tables=_parse_rope_tables(r), rotary_dim=r.int("rotary_dim", required=False),
        qk_norm=r.bool("qk_norm"),
        vision=parse_vision(r.section("vision", required=False)),
        qwen_vit=parse_qwen_vit(r.section("qwen_vit", required=False)),
        qwen2_vit=parse_qwen2_vit(r.section("qwen2_vit", required=False)),
        gemma_blocks=parse_gemma_blocks(r._get("gemma_blocks", False), path),
        quantization_json=_parse_quantization(r, path),
        assumptions=_parse_assumptions(r),
        layer_attention=layer_attention,
        weight_dtype_stated=r.bool("torch_dtype_stated", default=True),
        wrapper_dtype=WEIGHT_DTYPE_ALIASES.get(r.str(
            "wrapper_torch_dtype", required=False, choices=tuple(WEIGHT_DTYPE_ALIASES)) or ""),
    )
    # Architecture features: the file's own keys, else the table by model_type.
    spec = replace(spec, **{name: r.bool(name, default=value) for name, value in
                            architecture_features(spec.model_type, qk_norm=spec.qk_norm).items()})
    r.finish()
    return spec


def _parse_layer_kv_heads(r: _Reader, attention: Attention, layers: int
                          ) -> tuple[Attention, ...]:
    """`attention.layer_kv_heads`: one KV-head count per layer (null for a layer without
    attention), for models whose KV heads vary by layer (Nemotron-NAS: num_attention_heads //
    n_heads_in_group per block). Empty when not given."""
    value = r._get("layer_kv_heads", False)
    if value is None:
        return ()
    if not isinstance(attention, HeadAttention) or attention.kind is AttentionKind.none:
        raise r.error("layer_kv_heads", "only for kinds mha, gqa and mqa")
    if not isinstance(value, list) or len(value) != layers:
        raise r.error("layer_kv_heads", f"expected a list of {layers} entries (one per layer)")
    heads = attention.num_attention_heads
    out = []
    for kv in value:
        if kv is None:
            out.append(attention)
            continue
        kv = checked_int(kv, path=r.path, field=r.field("layer_kv_heads"))
        if heads % kv:
            raise r.error("layer_kv_heads", f"{kv} does not divide num_attention_heads ({heads})")
        kind = (AttentionKind.mha if kv == heads else AttentionKind.mqa if kv == 1
                else AttentionKind.gqa)
        out.append(replace(attention, kind=kind, num_key_value_heads=kv))
    return tuple(out)


def _parse_layer_shapes(r: _Reader, attention: Attention, windows: tuple[int | None, ...]
                        ) -> tuple[Attention, ...]:
    """`attention.full_layers` / `sliding_layers`: those layers' own heads, KV heads, K and V head
    sizes (Gemma-4, MiMo-V2: kvplan.sources.hf_layer_shapes). Empty when neither is given."""
    shapes: dict[bool, Attention] = {}
    for key, sliding in (("full_layers", False), ("sliding_layers", True)):
        sub = r.section(key, required=False)
        if sub is None:
            continue
        if not isinstance(attention, HeadAttention) or attention.kind is AttentionKind.none:
            raise r.error(key, "only for kinds mha, gqa and mqa")
        heads = sub.int("num_attention_heads", default=attention.num_attention_heads,
                        required=False)
        kv = sub.int("num_key_value_heads", default=attention.num_key_value_heads,
                     required=False)
        head_dim = sub.int("head_dim", default=attention.head_dim, required=False)
        v_head_dim = sub.int("v_head_dim", default=head_dim, required=False)
        sub.finish()
        if heads is None or kv is None or head_dim is None or v_head_dim is None or heads % kv:
            raise sub.error("num_key_value_heads", f"must divide num_attention_heads ({heads})")
        kind = (AttentionKind.mha if kv == heads else AttentionKind.mqa if kv == 1
                else AttentionKind.gqa)
        shapes[sliding] = replace(attention, kind=kind, num_attention_heads=heads,
                                  num_key_value_heads=kv, head_dim=head_dim,
                                  v_head_dim=v_head_dim)
    if not shapes:
        return ()
    return tuple(shapes.get(w is not None, attention) for w in windows)


def _parse_assumptions(r: _Reader) -> tuple[Assumption, ...]:
    """`assumptions`: what config.json import took without the config stating it (a list of
    {field, value, why}); a spec that lists any is not exact."""
    value = r._get("assumptions", False)
    if value is None:
        return ()
    field = r.field("assumptions")
    if not isinstance(value, list):
        raise SpecError(r.path, field, "expected a list of {field, value, why}")
    out = []
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if not isinstance(item, Mapping) or not (
                {"field", "value", "why"} <= set(item) <= {"field", "value", "why", "affects"}):
            raise SpecError(r.path, where, "expected a mapping of field, value, why and "
                                           "optionally affects")
        affects = item.get("affects", "kv")
        if affects not in ("kv", "weights"):
            raise SpecError(r.path, f"{where}.affects", f"expected kv or weights, got "
                                                        f"{affects!r}")
        out.append(Assumption(**{k: checked_text(item[k], path=r.path, field=f"{where}.{k}")
                                 for k in ("field", "value", "why")}, affects=affects))
    return tuple(out)


def _parse_context_limit(r: _Reader) -> ContextLimit | None:
    """Optional `max_model_len` (the longest context vLLM starts with, when it is not
    max_position_embeddings) and `max_model_len_source` (the config field it comes from)."""
    tokens = r.int("max_model_len", required=False)
    source = r.str("max_model_len_source", required=False, default="spec max_model_len")
    return None if tokens is None else ContextLimit(tokens=tokens, source=source)


def _parse_rope_tables(r: _Reader) -> tuple[int, ...]:
    value = r._get("rope_tables", False)
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise r.error("rope_tables", "expected a list of row counts (one per rotary table)")
    return tuple(checked_int(v, path=r.path, field=r.field("rope_tables")) for v in value)


