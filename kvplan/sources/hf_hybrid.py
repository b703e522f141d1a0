"""config.json readers for the layer plans of 2025-26 architectures: which layer holds which cache.

Each family is read by its real field names, as vLLM's model code reads them (0.32:
``vllm/model_executor/models/<family>.py`` and ``get_mamba_state_shape_from_config``). The result
is kvplan's top-level ``layer_types`` (full_attention, sliding_attention, chunked_attention,
recurrent, hybrid, mlp), the ``recurrent`` state section and extra attention fields.

A config that declares a cache kvplan does not model is refused with the field named, never
sized as attention.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import checked_int, checked_int_list
from kvplan.model.spec import CHUNKED, FULL, HYBRID, MLP_ONLY, RECURRENT
from kvplan.sources.hf_reader import ConfigReader


@dataclass
class LayerPlan:
    layer_types: list[str]
    recurrent: dict[str, Any] | None = None
    attention: dict[str, Any] = field(default_factory=dict)  # extra attention fields
    mlp_in_mixer_layers: bool = True
    mlp: dict[str, Any] | None = None  # MLP fields read with the plan (Nemotron-NAS)


# Fields that declare a cache of a kind kvplan must know to size. On a model_type that no reader
# below handles, any of them is refused (one line naming the field).
STATE_FIELDS = (
    "hybrid_override_pattern", "linear_attn_config", "attn_layer_period", "mamba_d_state",
    "mamba_d_ssm", "ssm_state_size", "state_size", "linear_num_key_heads",
    "linear_num_value_heads", "linear_key_head_dim", "conv_L_cache", "index_head_dim",
    "attention_chunk_size", "attn_type_list", "full_attention_interval", "mamba_n_heads",
    "num_linear_layers", "lightning_attention",
)


def _need(c: ConfigReader, *keys: str) -> int:
    value = c.int(*keys, required=keys[0])
    assert value is not None
    return value


# NemotronHConfig's layer kinds (transformers 5.19 _pattern_to_list), with the legacy names
# configuration_utils._LEGACY_LAYER_TYPE_REMAP renames (mamba, attention).
_NEMOTRON_H_KINDS = {"linear_attention": "M", "mamba": "M", "full_attention": "*",
                     "attention": "*", "moe": "E", "mlp": "-"}


def nemotron_h_layers(data: dict, path: str, warnings: list[str]) -> dict:
    """`data` with the layer pattern NemotronHConfig (transformers 5.19, as vLLM 0.32 loads it)
    builds: layers_block_type when given (hybrid_override_pattern is read only when it is absent
    or null), and the layer count its length (num_hidden_layers is then ignored, as the class's
    property is). vLLM's models/nemotron_h.py reads the pattern as the class's
    hybrid_override_pattern property, one character per layer, so it is written there."""
    types = data.get("layers_block_type")
    if types is None:
        return data
    if not isinstance(types, list) or not types or len(types) > 4096:
        raise SpecError(path, "layers_block_type", "expected a non-empty list of layer kinds")
    bad = [t for t in types if not isinstance(t, str) or t not in _NEMOTRON_H_KINDS]
    if bad:
        raise SpecError(path, "layers_block_type", f"layer kind {bad[0]!r} is not one "
                        f"NemotronHConfig takes ({', '.join(_NEMOTRON_H_KINDS)})")
    pattern = "".join(_NEMOTRON_H_KINDS[t] for t in types)
    layers = data.get("num_hidden_layers")
    if layers is not None and layers != len(types):
        warnings.append(f"num_hidden_layers {layers} ignored: NemotronHConfig counts the "
                        f"{len(types)} entries of layers_block_type")
    stated = data.get("hybrid_override_pattern")
    if stated is not None and stated != pattern:
        warnings.append("hybrid_override_pattern ignored: NemotronHConfig builds the layers "
                        "from layers_block_type")
    return {**data, "hybrid_override_pattern": pattern, "num_hidden_layers": len(types)}


def _nemotron_h(c: ConfigReader, layers: int) -> LayerPlan:
    # hybrid_override_pattern: one character per layer. M = Mamba2, * = attention, - = MLP,
    # E = MoE (vllm/model_executor/models/nemotron_h.py); a mixer layer holds no MLP of its own.
    if c.data.get("block_configs") is not None:
        # Nemotron-H "Puzzle" checkpoints: nemotron_h.py builds each layer from the remote
        # config's get_nemotron_h_config_for_layer (per-layer heads and widths), which the
        # top-level fields do not describe.
        raise SpecError(c.path, "block_configs", "per-layer Nemotron-H configs are not read; "
                                                 "refused rather than sized from the top level")
    pattern = c.data.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or len(pattern) != layers:
        raise SpecError(c.path, "hybrid_override_pattern",
                        f"expected a string of {layers} characters (one per layer)")
    kinds = {"M": RECURRENT, "*": FULL, "-": MLP_ONLY, "E": MLP_ONLY}
    bad = sorted(set(pattern) - set(kinds))
    if bad:
        raise SpecError(c.path, "hybrid_override_pattern",
                        f"layer kind {bad[0]!r} is not one kvplan models (M, *, -, E)")
    heads = _need(c, "mamba_num_heads")
    head_dim = _need(c, "mamba_head_dim")
    ssm_dtype = c.data.get("mamba_ssm_cache_dtype") or "float32"
    c.warn(f"mamba_ssm_cache_dtype {ssm_dtype}: vLLM's NemotronH default (float32 unless the "
           "config says otherwise)")
    return LayerPlan(
        layer_types=[kinds[ch] for ch in pattern],
        recurrent={"kind": "mamba2", "conv_kernel": _need(c, "conv_kernel"),
                   "intermediate_size": heads * head_dim, "state_size": _need(c, "ssm_state_size"),
                   "n_groups": _need(c, "n_groups"), "num_heads": heads, "head_dim": head_dim,
                   "ssm_dtype": ssm_dtype},
        mlp_in_mixer_layers=False)


def _mamba2_fields(c: ConfigReader, hidden: int, *, heads_key: str, d_inner: int | None = None
                   ) -> dict[str, Any]:
    heads = _need(c, heads_key)
    head_dim = _need(c, "mamba_d_head")
    inner = d_inner if d_inner is not None else heads * head_dim
    return {"kind": "mamba2", "conv_kernel": _need(c, "mamba_d_conv"),
            "intermediate_size": inner, "state_size": _need(c, "mamba_d_state"),
            "n_groups": _need(c, "mamba_n_groups"), "num_heads": heads, "head_dim": head_dim}


def _mapped_types(c: ConfigReader, types: object, layers: int, mapping: dict[str, str], *,
                  wrong_length: str) -> list[str]:
    """The config's layer_types as kvplan's layer kinds: a list of `layers` names, each one of
    `mapping`'s (`wrong_length` says what is wrong otherwise); a name kvplan does not know is
    refused, never sized as the engine's default for it."""
    if not isinstance(types, list) or len(types) != layers:
        raise SpecError(c.path, "layer_types", wrong_length)
    bad = [t for t in types if t not in mapping]
    if bad:
        raise SpecError(c.path, "layer_types", f"layer type {bad[0]!r} is not one kvplan models")
    return [mapping[t] for t in types]


def _granite_hybrid(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    types = _mapped_types(c, c.data.get("layer_types"), layers,
                          {"mamba": RECURRENT, "attention": FULL},
                          wrong_length=f"missing: a list of {layers} entries ('mamba' or "
                                       "'attention') is needed")
    return LayerPlan(layer_types=types,
                     recurrent=_mamba2_fields(c, hidden, heads_key="mamba_n_heads"))


def _falcon_h1(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    # Every Falcon-H1 layer runs attention and Mamba2 side by side (parallel hybrid).
    d_ssm = c.int("mamba_d_ssm")
    if d_ssm is None:
        d_ssm = _need(c, "mamba_expand") * hidden
    rec = _mamba2_fields(c, hidden, heads_key="mamba_n_heads", d_inner=d_ssm)
    return LayerPlan(layer_types=[HYBRID] * layers, recurrent=rec)


def _bamba(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    # Bamba: Mamba2 everywhere but the attn_layer_indices (vLLM <= 0.22, BambaForCausalLM).
    indices = c.data.get("attn_layer_indices")
    if not isinstance(indices, list) or any(
            isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < layers for i in indices):
        raise SpecError(c.path, "attn_layer_indices", f"expected a list of layer indices "
                                                      f"below {layers}")
    d_inner = _need(c, "mamba_expand") * hidden
    return LayerPlan(layer_types=[FULL if i in indices else RECURRENT for i in range(layers)],
                     recurrent=_mamba2_fields(c, hidden, heads_key="mamba_n_heads",
                                              d_inner=d_inner))


def _jamba(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    period = _need(c, "attn_layer_period")
    offset = c.int_or("attn_layer_offset", 0)
    types = [FULL if i % period == offset else RECURRENT for i in range(layers)]
    if FULL not in types:
        # The class is hybrid, not attention-free: an engine keeps its hybrid cache handling
        # (vLLM 0.32: prefix caching stays on, Mamba 'align' mode at the attention block size,
        # config/model.py is_prefix_caching_supported reads the class's is_attention_free),
        # which the attention-free sizing does not describe. Found by blind batch 8's 4-layer
        # shrunken Jamba2-Mini (offset 4, period 8): exit 0 with block 8,192 where vLLM ran 16.
        raise SpecError(c.path, "attn_layer_offset",
                        f"{offset} with attn_layer_period {period} puts no attention layer in "
                        f"{layers} layers: a Jamba model without attention is not sized")
    expand = _need(c, "mamba_expand")
    rec = {"kind": "mamba1", "conv_kernel": _need(c, "mamba_d_conv"),
           "intermediate_size": expand * hidden, "state_size": _need(c, "mamba_d_state"),
           "conv_bias": c.bool("mamba_conv_bias", True)}
    dt_rank = c.data.get("mamba_dt_rank")
    if dt_rank != "auto":  # "auto": ceil(hidden / 16), the spec's default
        dt_rank = c.int("mamba_dt_rank")
        if dt_rank is not None:
            rec["dt_rank"] = dt_rank
    return LayerPlan(layer_types=types, recurrent=rec)


def _gdn_fields(c: ConfigReader) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "kind": "gated_delta_net", "conv_kernel": _need(c, "linear_conv_kernel_dim"),
        "num_key_heads": _need(c, "linear_num_key_heads"),
        "num_value_heads": _need(c, "linear_num_value_heads"),
        "key_head_dim": _need(c, "linear_key_head_dim"),
        "value_head_dim": _need(c, "linear_value_head_dim")}
    dtype = c.data.get("mamba_ssm_dtype")
    if dtype is not None:
        rec["ssm_dtype"] = dtype  # Qwen3.5: vLLM takes the SSM state dtype from the config
    return rec


def _qwen_linear(c: ConfigReader, layers: int) -> LayerPlan:
    types = c.data.get("layer_types")
    if isinstance(types, list):
        plan_types = _mapped_types(c, types, layers,
                                   {"linear_attention": RECURRENT, "full_attention": FULL},
                                   wrong_length=f"expected {layers} entries, got {len(types)}")
    else:
        # Qwen3-Next: every full_attention_interval-th layer (1-based) is full attention.
        interval = _need(c, "full_attention_interval")
        plan_types = [FULL if (i + 1) % interval == 0 else RECURRENT for i in range(layers)]
    return LayerPlan(layer_types=plan_types, recurrent=_gdn_fields(c))


def _olmo_hybrid(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    """OLMo Hybrid (vLLM 0.32 models/olmo_hybrid.py): layer_types[i] "linear_attention" is a
    Gated DeltaNet layer (layers/mamba/gdn/olmo_gdn_linear_attn.py), any other entry an
    OlmoHybridAttention of num_key_value_heads heads of hidden_size / num_attention_heads (no
    window); every layer has its MLP. The state: get_mamba_state_shape_from_config ->
    gated_delta_net_state_shape over the linear_* fields, dtype from the model / cache config
    only (no config handler reads a mamba_ssm_dtype for this class). Absent fields take
    transformers' OlmoHybridConfig.__post_init__ values, as the config vLLM reads carries them:
    full attention at i % 4 == 3 (the last layer if none), linear heads = num_attention_heads,
    key head dim int(0.75 x hidden / key heads), value head dim twice that, conv kernel 4."""
    heads = _need(c, "num_attention_heads")
    types = c.data.get("layer_types")
    if types is None:
        types = ["full_attention" if i % 4 == 3 else "linear_attention" for i in range(layers)]
        if "full_attention" not in types:
            types[-1] = "full_attention"
        c.warn("layer_types absent: OlmoHybridConfig default (full attention every 4th layer)")
    # vLLM builds full attention for any entry but "linear_attention"; a name kvplan does not
    # know (a sliding layer?) is refused rather than sized as vLLM's full attention.
    plan_types = _mapped_types(c, types, layers,
                               {"linear_attention": RECURRENT, "full_attention": FULL},
                               wrong_length=f"expected a list of {layers} entries")
    k_heads = c.int_or("linear_num_key_heads", heads, minimum=1)
    v_heads = c.int_or("linear_num_value_heads", heads, minimum=1)
    k_dim = c.int("linear_key_head_dim")
    if k_dim is None:
        k_dim = int(0.75 * hidden / k_heads)
        c.warn(f"linear_key_head_dim absent: OlmoHybridConfig default {k_dim}")
    v_dim = c.int_or("linear_value_head_dim", 2 * k_dim, minimum=1)
    return LayerPlan(layer_types=plan_types, recurrent={
        "kind": "gated_delta_net", "conv_kernel": c.int_or("linear_conv_kernel_dim", 4,
                                                           minimum=2),
        "num_key_heads": k_heads, "num_value_heads": v_heads, "key_head_dim": k_dim,
        "value_head_dim": v_dim})


def _kimi_linear(c: ConfigReader, layers: int) -> LayerPlan:
    cfg = c.data.get("linear_attn_config")
    if not isinstance(cfg, dict):
        raise SpecError(c.path, "linear_attn_config", "expected a mapping")
    kda = checked_int_list(cfg.get("kda_layers") or [], path=c.path,
                           field="linear_attn_config.kda_layers")
    full = checked_int_list(cfg.get("full_attn_layers") or [], path=c.path,
                            field="linear_attn_config.full_attn_layers")
    # 1-based layer numbers (vllm/model_executor/models/kimi_linear.py: is_kda_layer(i + 1)).
    types = []
    for n in range(1, layers + 1):
        if n in kda:
            types.append(RECURRENT)
        elif n in full:
            types.append(FULL)
        else:
            raise SpecError(c.path, "linear_attn_config",
                            f"layer {n} is in neither kda_layers nor full_attn_layers")
    heads, head_dim = cfg.get("num_heads"), cfg.get("head_dim")
    kernel = cfg.get("short_conv_kernel_size")
    for name, value in (("num_heads", heads), ("head_dim", head_dim),
                        ("short_conv_kernel_size", kernel)):
        checked_int(value, path=c.path, field=f"linear_attn_config.{name}")
    return LayerPlan(layer_types=types, recurrent={
        "kind": "kda", "conv_kernel": kernel, "num_heads": heads, "head_dim": head_dim})


def _llama4(c: ConfigReader, layers: int) -> LayerPlan:
    chunk = c.int("attention_chunk_size")
    nope = c.int_list("no_rope_layers")
    if not nope:
        # Llama4TextConfig default: every no_rope_layer_interval-th layer (1-based, default 4)
        # skips RoPE and attends globally; the others use RoPE and chunked attention.
        interval = c.int_or("no_rope_layer_interval", 4, minimum=1)
        nope = [int((i + 1) % interval != 0) for i in range(layers)]
    if len(nope) != layers:
        raise SpecError(c.path, "no_rope_layers", f"expected {layers} entries, got {len(nope)}")
    if chunk is None:
        return LayerPlan(layer_types=[FULL] * layers)
    types = [CHUNKED if use_rope else FULL for use_rope in nope]
    return LayerPlan(layer_types=types, attention={"attention_chunk_size": chunk})


def _lfm2(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    # transformers' Lfm2Config: layer_types when given, else full attention at full_attn_idxs
    # (LFM2-1.2B/700M/350M ship only those), else at every layer.
    types = c.data.get("layer_types")
    if types is None and c.model_type == "lfm2_moe":
        # vLLM 0.32 models/lfm2_moe.py reads config.layer_types[layer_idx] and nothing else.
        raise SpecError(c.path, "layer_types", "missing: vLLM's lfm2_moe.py needs it")
    if types is None:
        full = c.int_list("full_attn_idxs") if c.data.get("full_attn_idxs") is not None \
            else list(range(layers))
        if any(i >= layers for i in full):
            raise SpecError(c.path, "full_attn_idxs", f"expected layer indices below {layers}")
        types = ["full_attention" if i in full else "conv" for i in range(layers)]
    plan_types = _mapped_types(c, types, layers, {"conv": RECURRENT, "full_attention": FULL},
                               wrong_length=f"expected a list of {layers} entries")
    # vLLM sizes the conv state from conv_dim (lfm2.py get_mamba_state_shape_from_config:
    # short_conv_state_shape(intermediate_size=hf_config.conv_dim)); every LFM2 sets it to
    # hidden_size.
    if RECURRENT not in plan_types:
        return LayerPlan(layer_types=plan_types)
    # lfm2_moe.py sizes the conv state from hidden_size itself (conv_dim is not read), and so
    # does the LFM2-VL wrapper (lfm2_vl.py get_mamba_state_shape_from_config:
    # intermediate_size=hf_config.text_config.hidden_size), whatever its text model's class.
    by_hidden = c.model_type == "lfm2_moe" or c.data.get("_wrapper_model_type") == "lfm2_vl"
    channels = hidden if by_hidden else c.int_or("conv_dim", hidden, minimum=1)
    return LayerPlan(layer_types=plan_types, recurrent={
        "kind": "short_conv", "conv_kernel": c.int_or("conv_L_cache", 3, minimum=2),
        "intermediate_size": channels})


def _default(c: ConfigReader, key: str, default: int, cls: str) -> int:
    value = c.int(key)
    if value is None:
        c.warn(f"{key} absent: {cls} default {default}")
        return default
    return value


def _mamba_pure(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    """Mamba1 (mamba, falcon_mamba) and Mamba2 models: every layer a mixer, no attention, no
    MLP. The state as vLLM 0.32 sizes it: models/mamba.py get_mamba_state_shape_from_config
    (hf_config.intermediate_size, state_size, conv_kernel) and models/mamba2.py (intermediate
    size expand x hidden_size, n_groups, num_heads, head_dim, state_size, conv_kernel). Absent
    fields take the transformers config class's defaults (MambaConfig / FalconMambaConfig:
    state 16, conv 4, expand 2, intermediate_size expand x hidden_size unless the config states
    it; Mamba2Config: 128 heads x 64, 8 groups, state 128, conv 4, expand 2)."""
    mt = c.model_type
    if mt == "mamba2":
        cls = "Mamba2Config"
        heads, head_dim = _default(c, "num_heads", 128, cls), _default(c, "head_dim", 64, cls)
        expand = _default(c, "expand", 2, cls)
        if expand * hidden != heads * head_dim:
            raise SpecError(c.path, "num_heads", f"num_heads x head_dim ({heads * head_dim}) "
                                                 f"must equal expand x hidden_size "
                                                 f"({expand * hidden})")
        rec: dict[str, Any] = {
            "kind": "mamba2", "conv_kernel": _default(c, "conv_kernel", 4, cls),
            "intermediate_size": expand * hidden,
            "state_size": _default(c, "state_size", 128, cls),
            "n_groups": _default(c, "n_groups", 8, cls), "num_heads": heads,
            "head_dim": head_dim}
    else:
        cls = "FalconMambaConfig" if mt == "falcon_mamba" else "MambaConfig"
        inner = c.int("intermediate_size") or _default(c, "expand", 2, cls) * hidden
        rec = {"kind": "mamba1", "conv_kernel": _default(c, "conv_kernel", 4, cls),
               "intermediate_size": inner, "state_size": _default(c, "state_size", 16, cls),
               "conv_bias": c.bool("use_conv_bias", True)}
        if c.data.get("time_step_rank", "auto") != "auto":
            rec["dt_rank"] = c.int("time_step_rank")
    return LayerPlan(layer_types=[RECURRENT] * layers, recurrent=rec, mlp_in_mixer_layers=False)


def _zamba2(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    """Zamba2: Mamba2 layers, and "hybrid" layers that run one of num_mem_blocks shared
    transformer blocks before their Mamba2 mixer. The blocks share weights, not KV: vLLM 0.32
    models/zamba2.py Zamba2Attention builds one Attention per hybrid layer ("KV cache is unique
    for every attention layer"), with num_attention_heads KV heads (QKVParallelLinear without a
    KV-head count) of attention_head_dim; the Mamba2 state from mamba_expand x hidden_size,
    n_mamba_heads x mamba_headdim, mamba_ngroups, mamba_d_state, mamba_d_conv
    (get_mamba_state_shape_from_config). Zamba2Config (transformers) derives
    attention_head_dim = 2 x hidden_size / num_attention_heads and mamba_headdim =
    mamba_expand x hidden_size / n_mamba_heads unless config.json states them."""
    types = c.data.get("layers_block_type", c.data.get("layer_types"))
    mapping = {"mamba": RECURRENT, "linear_attention": RECURRENT, "hybrid": HYBRID}
    if not isinstance(types, list) or len(types) != layers:
        raise SpecError(c.path, "layers_block_type", f"expected a list of {layers} entries "
                                                     "('mamba' or 'hybrid')")
    bad = [t for t in types if t not in mapping]
    if bad:
        raise SpecError(c.path, "layers_block_type",
                        f"layer type {bad[0]!r} is not one kvplan models")
    heads = _need(c, "num_attention_heads")
    head_dim = c.int("attention_head_dim") or 2 * hidden // heads
    expand = _default(c, "mamba_expand", 2, "Zamba2Config")
    m_heads = _default(c, "n_mamba_heads", 8, "Zamba2Config")
    m_head_dim = c.int("mamba_headdim") or expand * hidden // m_heads
    c.warn("Zamba2's shared transformer blocks are counted once per hybrid layer: weights "
           "come out high (the KV cache is per layer, as vLLM allocates it)")
    return LayerPlan(
        layer_types=[mapping[t] for t in types],
        attention={"kind": "mha", "num_attention_heads": heads, "num_key_value_heads": heads,
                   "head_dim": head_dim},
        recurrent={"kind": "mamba2", "conv_kernel": _default(c, "mamba_d_conv", 4,
                                                             "Zamba2Config"),
                   "intermediate_size": expand * hidden,
                   "state_size": _default(c, "mamba_d_state", 64, "Zamba2Config"),
                   "n_groups": _default(c, "mamba_ngroups", 1, "Zamba2Config"),
                   "num_heads": m_heads, "head_dim": m_head_dim})


def _nemotron_nas(c: ConfigReader, layers: int, hidden: int) -> LayerPlan:
    """Nemotron-NAS (DeciLMForCausalLM: Llama-3.3-Nemotron-Super-49B, -Ultra-253B): one
    block_configs entry per layer, as vLLM 0.32 models/nemotron_nas.py DeciLMDecoderLayer reads
    it. attention.no_op: no attention (and no cache) in that layer; else an Attention of
    num_attention_heads // attention.n_heads_in_group KV heads (head size from the config, as
    LlamaAttention takes it). ffn.no_op: no MLP; else a gated MLP of ffn.intermediate_size, or
    of _ffn_mult_to_intermediate_size(ffn_mult, hidden) = int(2 x ffn_mult x hidden / 3) rounded
    up to a multiple of 256. Fields vLLM's code does not read and that would change the
    attention (replace_with_linear, window_length, sparsify, num_sink_tokens) are refused
    when set, rather than sized as vLLM's plain attention."""
    blocks = c.data.get("block_configs")
    if not isinstance(blocks, list) or len(blocks) != layers:
        raise SpecError(c.path, "block_configs", f"expected a list of {layers} entries (one per "
                                                 "layer)")
    heads = _need(c, "num_attention_heads")
    types, kv_heads, has_mlp, widths = [], [], [], []
    for i, block in enumerate(blocks):
        where = f"block_configs[{i}]"
        att, ffn = (block.get(k) if isinstance(block, dict) else None for k in ("attention",
                                                                                "ffn"))
        if not isinstance(att, dict) or not isinstance(ffn, dict):
            raise SpecError(c.path, where, "expected a mapping with attention and ffn")
        for part, name in ((att, "attention"), (ffn, "ffn")):
            for key in ("replace_with_linear", "window_length", "sparsify", "num_sink_tokens"):
                if part.get(key) not in (None, False) and not part.get("no_op"):
                    raise SpecError(c.path, f"{where}.{name}.{key}",
                                    f"{part[key]!r}: not read by vLLM's nemotron_nas.py; "
                                    "refused rather than sized as plain attention")
        if att.get("no_op"):
            types.append(MLP_ONLY)
            kv_heads.append(None)
        else:
            group = checked_int(att.get("n_heads_in_group"), path=c.path,
                                field=f"{where}.attention.n_heads_in_group")
            if heads % group:
                raise SpecError(c.path, f"{where}.attention.n_heads_in_group",
                                f"{group} does not divide num_attention_heads ({heads})")
            types.append(FULL)
            kv_heads.append(heads // group)
        has_mlp.append(not ffn.get("no_op"))
        if ffn.get("no_op"):
            continue
        if ffn.get("ffn_mult") is not None:
            mult = ffn["ffn_mult"]
            if isinstance(mult, bool) or not isinstance(mult, (int, float)) or mult <= 0:
                raise SpecError(c.path, f"{where}.ffn.ffn_mult", "expected a positive number")
            width = int(2 * mult * hidden / 3)
            widths.append(width + (-width) % 256)
        else:
            widths.append(checked_int(ffn.get("intermediate_size"), path=c.path,
                                      field=f"{where}.ffn.intermediate_size"))
    found = [k for k in kv_heads if k is not None]
    if not found:
        raise SpecError(c.path, "block_configs", "no layer has attention: not a decoder "
                                                 "kvplan sizes")
    attention: dict[str, Any] = {"num_key_value_heads": found[0],
                                 "kind": "mha" if found[0] == heads else
                                 "mqa" if found[0] == 1 else "gqa"}
    if len(set(found)) > 1:
        attention["layer_kv_heads"] = kv_heads
    mlp: dict[str, Any] = {"intermediate_size": round(sum(widths) / len(widths)) if widths
                           else 1}
    if len(set(widths)) > 1:
        c.warn(f"MLP widths vary by layer ({min(widths)}-{max(widths)}): weights counted at "
               f"their mean, {mlp['intermediate_size']}")
    if not all(has_mlp):
        mlp["layers"] = has_mlp
    return LayerPlan(layer_types=types, attention=attention, mlp=mlp)


def layer_plan(c: ConfigReader, layers: int, hidden: int) -> LayerPlan | None:
    """The layer plan of a hybrid family, or None for uniform / sliding-only models."""
    mt = c.model_type
    if mt == "nemotron-nas":
        return _nemotron_nas(c, layers, hidden)
    if mt == "nemotron_h":
        return _nemotron_h(c, layers)
    if mt == "granitemoehybrid":
        return _granite_hybrid(c, layers, hidden)
    if mt == "falcon_h1":
        return _falcon_h1(c, layers, hidden)
    if mt == "jamba":
        return _jamba(c, layers, hidden)
    if mt == "bamba":
        return _bamba(c, layers, hidden)
    if mt in ("qwen3_next", "qwen3_5", "qwen3_5_moe"):
        return _qwen_linear(c, layers)
    if mt == "kimi_linear":
        return _kimi_linear(c, layers)
    if mt == "olmo_hybrid":
        return _olmo_hybrid(c, layers, hidden)
    if mt == "llama4":
        return _llama4(c, layers)
    if mt in ("lfm2", "lfm2_moe"):
        return _lfm2(c, layers, hidden)
    if mt in PURE_RECURRENT_TYPES:
        return _mamba_pure(c, layers, hidden)
    if mt == "zamba2":
        return _zamba2(c, layers, hidden)
    return None


# Models without a single attention layer.
PURE_RECURRENT_TYPES = frozenset({"mamba", "falcon_mamba", "mamba2"})


HYBRID_MODEL_TYPES = frozenset({"nemotron_h", "granitemoehybrid", "falcon_h1", "jamba", "bamba",
                                "qwen3_next", "qwen3_5", "qwen3_5_moe", "kimi_linear", "llama4",
                                "olmo_hybrid",
                                "lfm2", "lfm2_moe", "zamba2",
                                "nemotron-nas"}) | PURE_RECURRENT_TYPES
