"""Text-only decoder families read as Llama-style attention, one table row each: how vLLM's model
code takes the KV heads, the head size and the sliding window, and what the family's config class
fills in when config.json leaves a field out (issue 26: every architecture of vLLM's registry
exact or refused).

Each row names the vLLM 0.32 file that builds the layer's ``Attention``. The rules common to all
rows (kvplan.sources.hf_families.head_attention and ``_windows``):

- KV heads: ``num_key_value_heads``, else one per query head;
- head size: ``head_dim`` when the model code reads it (``head_dim="config"``), else
  hidden_size / num_attention_heads (``head_dim="hidden"``: the code never reads head_dim);
- window: a layer marked ``sliding_attention`` in ``layer_types`` takes ``sliding_window`` when
  the model code reads layer_types (``per_layer_sliding_window``); without layer_types, vLLM's
  CacheConfig hands ``sliding_window`` to every layer's Attention (0.32
  engine/arg_utils.py create_engine_config: "Only set CacheConfig.sliding_window if the model is
  all sliding window"). A model code that ignores layer_types gives no layer a window once
  layer_types has a full layer, which kvplan refuses rather than models (`check_layer_types`).

Family deviations are data here (config-class defaults, a default layer pattern, other names
for a field), never a ``model_type`` test elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kvplan._util.errors import SpecError
from kvplan.model.spec import FULL, SLIDING
from kvplan.sources.hf_defaults import cache_defaults


@dataclass(frozen=True, kw_only=True)
class TextFamily:
    """One family's reading rules (see the module docstring)."""

    source: str  # the vLLM 0.32 model file (and config class) these rules follow
    head_dim: str = "config"  # "config": config.head_dim, else hidden / heads; "hidden"
    reads_layer_types: bool = False  # the model code passes per_layer_sliding_window
    mha: bool = False  # one KV head per query head, whatever the config says
    # Fields kvplan would read as another cache layout but this family's vLLM code ignores:
    # refused when present rather than sized as vLLM does not.
    unread: tuple[str, ...] = ()
    default_layer_types: Callable[[int], str] | None = None  # the config class's pattern
    # other name -> the standard name (or names) it stands for
    aliases: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    # other name -> the standard name it replaces whatever config.json says of the standard
    # one (the model code reads only the other, which its config class always sets)
    overrides: Mapping[str, str] = field(default_factory=dict)
    # Weights only: the MLP, the norm, biases and positions.
    gated_mlp: bool = True
    mlp_bias: bool | None = None  # None: the config's mlp_bias
    mlp_hidden_multiple: int | None = None  # the MLP is this x hidden_size wide (fixed)
    attention_bias: bool | None = None  # None: the config's attention_bias (q/k/v and o)
    layernorm: bool = False
    position: str = "rope"


TEXT_FAMILIES: dict[str, TextFamily] = {
    # models/bloom.py BloomAttention: total_num_heads = config.n_head, head_dim = hidden_size /
    # n_head, one KV head per query head (QKVParallelLinear without a KV count), ALiBi, no
    # window; BloomMLP 4 x hidden_size wide with biases. BloomConfig (transformers 5.19) maps
    # num_hidden_layers -> n_layer, num_attention_heads -> n_head and takes a config.json's
    # `n_embed` as hidden_size.
    "bloom": TextFamily(source="models/bloom.py", head_dim="hidden", mha=True,
                        aliases={"n_embed": "hidden_size"}, gated_mlp=False, mlp_bias=True,
                        mlp_hidden_multiple=4,
                        attention_bias=True, layernorm=True, position="alibi"),
    # models/phimoe.py PhiMoEAttention: num_kv_heads = config.num_key_value_heads, head_dim =
    # getattr(config, "head_dim", hidden / heads); Attention(cache_config=...) with no
    # per-layer window: CacheConfig's sliding_window on every layer. PhimoeConfig defaults
    # num_key_value_heads 8. Experts: intermediate_size wide (kvplan.sources.hf_moe).
    "phimoe": TextFamily(source="models/phimoe.py", layernorm=True),
    # models/nemotron.py NemotronAttention: num_kv_heads = getattr(config,
    # "num_key_value_heads", heads), head_dim = getattr(config, "head_dim", None) or hidden /
    # heads; no per-layer window. NemotronMLP: up_proj and down_proj (relu2), no gate.
    "nemotron": TextFamily(source="models/nemotron.py", gated_mlp=False, layernorm=True),
    # GlmForCausalLM: the Transformers backend (0.32 registry.py _TRANSFORMERS_BACKEND_MODELS;
    # models/transformers/base.py _create_attention_instances: num_kv_heads and head_size from
    # the config, per-layer windows from layer_types). GlmConfig defaults num_key_value_heads 2
    # and head_dim 128.
    "glm": TextFamily(source="models/transformers/base.py (GlmConfig)", reads_layer_types=True),
    # ArceeForCausalLM, Jais2ForCausalLM: the Transformers backend, as glm; ArceeConfig and
    # Jais2Config default head_dim to hidden / heads and num_key_value_heads to the heads.
    # ArceeMLP and Jais2MLP: up_proj and down_proj (ReLU^2), no gate.
    "arcee": TextFamily(source="models/transformers/base.py (ArceeConfig)",
                        reads_layer_types=True, gated_mlp=False),
    "jais2": TextFamily(source="models/transformers/base.py (Jais2Config)",
                        reads_layer_types=True, gated_mlp=False, layernorm=True),
    # VaultGemmaForCausalLM: the Transformers backend; VaultGemmaConfig defaults head_dim 256,
    # num_key_value_heads 4, sliding_window 4096 and builds layer_types as sliding on even
    # layers, full on odd ones (`bool((i + 1) % 2)`).
    "vaultgemma": TextFamily(
        source="models/transformers/base.py (VaultGemmaConfig)", reads_layer_types=True,
        default_layer_types=lambda i: SLIDING if (i + 1) % 2 else FULL),
    # CwmForCausalLM: the Transformers backend; CwmConfig defaults head_dim 128,
    # num_key_value_heads 8, sliding_window 8192 and builds layer_types with every fourth layer
    # full from layer 0 (`i % 4 == 0`).
    "cwm": TextFamily(
        source="models/transformers/base.py (CwmConfig)", reads_layer_types=True,
        default_layer_types=lambda i: FULL if i % 4 == 0 else SLIDING),
    # models/granitemoeshared.py over granitemoe.py GraniteMoeAttention: head_dim = hidden /
    # heads, num_key_value_heads; a window only on layer_types' sliding layers
    # (granite.py granite_layer_attn_params).
    "granitemoeshared": TextFamily(source="models/granitemoeshared.py", head_dim="hidden",
                                   reads_layer_types=True),
    # GraniteSWAForCausalLM: vLLM 0.32 registry.py serves it with models/granite.py
    # GraniteForCausalLM: GraniteAttention num_key_value_heads x getattr(config, "head_dim",
    # None) or hidden / heads; granite_layer_attn_params gives `config.sliding_window` to the
    # layers layer_types marks sliding_attention (attention sinks and layer_rope_theta: no
    # cache). GraniteSWAConfig (transformers 5.19) builds layer_types full at i % 4 == 0 and
    # defaults sliding_window 128, num_key_value_heads 4 (kvplan.sources.hf_defaults).
    "granite_swa": TextFamily(
        source="models/granite.py (GraniteSWAConfig)", reads_layer_types=True,
        default_layer_types=lambda i: FULL if i % 4 == 0 else SLIDING),
    # GraniteMoeSWAForCausalLM: vLLM 0.32 registry.py serves it with models/granitemoeshared.py
    # GraniteMoeSharedForCausalLM (0.29 to 0.34): granitemoe.py GraniteMoeAttention,
    # num_key_value_heads x hidden / heads (config.head_dim never read);
    # granite_layer_attn_params gives `config.sliding_window` to the layers layer_types marks
    # sliding_attention (attention sinks and layer_rope_theta: no cache). GraniteMoeSWAConfig
    # (transformers 5.19) builds layer_types full at i % 4 == 0 and defaults sliding_window 128
    # and num_key_value_heads to the heads (kvplan.sources.hf_defaults).
    "granitemoe_swa": TextFamily(
        source="models/granitemoeshared.py (GraniteMoeSWAConfig)", head_dim="hidden",
        reads_layer_types=True, default_layer_types=lambda i: FULL if i % 4 == 0 else SLIDING),
    # models/minicpm.py MiniCPMAttention: head_dim = hidden / heads (never config.head_dim),
    # num_key_value_heads; no per-layer window.
    "minicpm": TextFamily(source="models/minicpm.py", head_dim="hidden"),
    # models/orion.py OrionAttention: head_dim = hidden / heads, num_key_value_heads; no
    # per-layer window; nn.LayerNorm.
    "orion": TextFamily(source="models/orion.py", head_dim="hidden", layernorm=True),
    # models/solar.py SolarAttention: head_dim = getattr(config, "head_dim", None) or hidden /
    # heads, num_kv_heads = getattr(config, "num_key_value_heads", heads); no per-layer window.
    "solar": TextFamily(source="models/solar.py"),
    # DeepseekForCausalLM (DeepSeek-MoE, model_type "deepseek"): models/deepseek_v2.py
    # DeepseekV2DecoderLayer takes DeepseekAttention (`use_mha = config.model_type ==
    # "deepseek" or ...`): num_key_value_heads of hidden / heads, no per-layer window.
    # A kv_lora_rank would make kvplan size MLA where vLLM still builds DeepseekAttention.
    "deepseek": TextFamily(source="models/deepseek_v2.py (DeepseekAttention)", head_dim="hidden",
                           unread=("kv_lora_rank",)),
    # Olmo2ForCausalLM, PhiForCausalLM, Starcoder2ForCausalLM: the Transformers backend (0.32
    # registry.py; models/transformers/base.py: num_kv_heads and head_size from the config,
    # per-layer windows from layer_types, else the cache config's window on every layer).
    # Olmo2Config: SwiGLU MLP, RMSNorm, no biases (attention_bias false). PhiConfig
    # (PhiAttention, PhiMLP): q/k/v and dense biased, fc1 / fc2 (GELU) biased, LayerNorm.
    # Starcoder2Config: `use_bias` on q/k/v/o and c_fc / c_proj (GELU), LayerNorm.
    "olmo2": TextFamily(source="models/transformers/base.py (Olmo2Config)",
                        reads_layer_types=True),
    "phi": TextFamily(source="models/transformers/base.py (PhiConfig)", reads_layer_types=True,
                      gated_mlp=False, mlp_bias=True, attention_bias=True, layernorm=True),
    "starcoder2": TextFamily(source="models/transformers/base.py (Starcoder2Config)",
                             reads_layer_types=True, gated_mlp=False,
                             aliases={"use_bias": ("attention_bias", "mlp_bias")},
                             layernorm=True),
    # InternLM3ForCausalLM: models/llama.py LlamaAttention (head_dim or hidden / heads, windows
    # from layer_types).
    "internlm3": TextFamily(source="models/llama.py", reads_layer_types=True),
    # BailingMoeForCausalLM (Ling): models/bailing_moe.py BailingAttention: num_kv_heads =
    # config.num_key_value_heads, head_dim = config.head_dim or hidden / heads; no per-layer
    # window. Remote BailingMoeConfig (no transformers class); use_qkv_bias / use_bias are
    # weights only.
    "bailing_moe": TextFamily(source="models/bailing_moe.py"),
    # Phi3VForCausalLM (Phi-3 / 3.5-vision, remote Phi3VConfig): models/phi3v.py builds
    # LlamaForCausalLM over the whole flat config (llama.py LlamaAttention: head_dim or hidden /
    # heads, num_key_value_heads, windows from layer_types, else CacheConfig's sliding_window on
    # every layer). The CLIP tower (img_processor) holds no KV cache.
    "phi3_v": TextFamily(source="models/phi3v.py (LlamaForCausalLM)", reads_layer_types=True),
    # AfmoeForCausalLM (Arcee Trinity): models/afmoe.py AfmoeAttention: num_kv_heads =
    # config.num_key_value_heads, head_dim = config.head_dim (or hidden / heads when null),
    # `per_layer_sliding_window = config.sliding_window` on layer_types' sliding_attention
    # layers, none on the others. AfmoeConfig (transformers 5.19) defaults head_dim 128,
    # sliding_window 1024, num_key_value_heads to the heads, and builds layer_types with every
    # global_attn_every_n_layers-th layer full (`bool((i + 1) % n)`, n 4 by default; another n
    # without layer_types is refused, kvplan.sources.hf_fields_table).
    "afmoe": TextFamily(source="models/afmoe.py", reads_layer_types=True,
                        default_layer_types=lambda i: SLIDING if (i + 1) % 4 else FULL),
    # HYV3ForCausalLM (Tencent Hy3): models/hy_v3.py HYV3Attention: num_kv_heads =
    # config.num_key_value_heads, head_dim = config.head_dim when set, else hidden / heads;
    # Attention(cache_config=...) with no per-layer window. HYV3Config (transformers 5.19)
    # defaults num_key_value_heads 8, head_dim 128. MTP layers (num_nextn_predict_layers) only
    # with speculative decoding.
    "hy_v3": TextFamily(source="models/hy_v3.py"),
    # HyperCLOVAXForCausalLM: models/hyperclovax.py HyperCLOVAXAttention: num_kv_heads =
    # config.num_key_value_heads, head_dim = config.head_dim (HyperCLOVAXConfig, transformers
    # 5.19, sets it to hidden / heads when None, and the KV heads to the heads);
    # Attention(cache_config=...) with no per-layer window. use_post_norm adds norms only.
    "hyperclovax": TextFamily(source="models/hyperclovax.py"),
    # Step1ForCausalLM (Step-Audio): models/step1.py StepAttention: head_dim = hidden / heads,
    # num_kv_heads = getattr(config, "num_attention_groups", getattr(config,
    # "num_key_value_heads", 1)); the remote Step1Config always sets num_attention_groups
    # (default 8), so num_key_value_heads is never read. ALiBi (use_alibi_sqrt), no window.
    "step1": TextFamily(source="models/step1.py", head_dim="hidden",
                        overrides={"num_attention_groups": "num_key_value_heads"},
                        position="alibi"),
    # TeleChat2ForCausalLM: models/telechat2.py sets the config's attribute_map (n_layer ->
    # num_hidden_layers, n_head -> num_attention_heads, ffn_hidden_size -> intermediate_size)
    # and builds llama.py's LlamaModel: LlamaAttention num_kv_heads = num_key_value_heads (else
    # the heads), head_dim or hidden / heads, windows from layer_types.
    "telechat": TextFamily(source="models/telechat2.py (LlamaModel)", reads_layer_types=True,
                           aliases={"n_layer": "num_hidden_layers",
                                    "n_head": "num_attention_heads",
                                    "ffn_hidden_size": "intermediate_size"}),
    # TeleFLMForCausalLM (remote model_type "TeleFLM"): models/teleflm.py is llama.py's
    # LlamaForCausalLM with muP scaling of the embeddings and logits only.
    "TeleFLM": TextFamily(source="models/teleflm.py (LlamaForCausalLM)", reads_layer_types=True),
    # IQuestCoderForCausalLM (remote model_type "iquestcoder"): 0.32 registry.py serves it with
    # llama.py's LlamaForCausalLM (num_key_value_heads, head_dim or hidden / heads, windows from
    # layer_types only). Its files' use_sliding_window / max_window_layers / clip_qkv are read
    # by no vLLM code; a sliding_window without layer_types is CacheConfig's, on every layer.
    "iquestcoder": TextFamily(source="models/llama.py (LlamaForCausalLM)",
                              reads_layer_types=True),
    # NanbeigeForCausalLM (remote model_type "nanbeige"): the Transformers backend (0.32
    # registry.py _TRANSFORMERS_BACKEND_MODELS; models/transformers/base.py: num_kv_heads from
    # model_config.get_num_kv_heads, head_size from arch_config.head_size -- head_dim, else
    # hidden / heads -- and per-layer windows from layer_types).
    "nanbeige": TextFamily(source="models/transformers/base.py (remote NanbeigeConfig)",
                           reads_layer_types=True),
    # PanguEmbeddedForCausalLM (remote model_type "PanguEmbedded"): 0.32 models/openpangu.py
    # OpenPanguDecoderLayer builds OpenPanguEmbeddedAttention when the config has neither the
    # four MLA fields nor param_sink_number > 0 (lines 790-880): num_kv_heads =
    # getattr(config, "num_key_value_heads", heads), head_dim = getattr(config, "head_dim",
    # None) or hidden / heads (lines 434-436); a window only from interleaved_sliding_window
    # (lines 463-476), else CacheConfig's. q/k/v and o biases from attention_bias, bias and
    # qkv_bias (lines 853-858: kvplan.sources.hf_families). The other layouts are refused by
    # its fields row.
    "PanguEmbedded": TextFamily(source="models/openpangu.py (OpenPanguEmbeddedAttention)"),
}


def text_family(model_type: str) -> TextFamily | None:
    return TEXT_FAMILIES.get(model_type)


def _read_aliases(data: dict, family: TextFamily) -> None:
    for other, names in family.aliases.items():
        for standard in (names,) if isinstance(names, str) else names:
            if data.get(standard) is None and data.get(other) is not None:
                data[standard] = data[other]


def fill_family_defaults(data: dict, model_type: str, warnings: list[str]) -> dict:
    """`data` with the family's other field names read as the standard ones and its config
    class's defaults (each default taken said in a warning), and its default layer_types when
    config.json has none. Families outside the table come back unchanged."""
    family = TEXT_FAMILIES.get(model_type)
    if family is None:
        return data
    data = dict(data)
    _read_aliases(data, family)  # the file's own values under another name come first
    used = []
    for key, value in cache_defaults(model_type).items():
        if key not in data:  # an explicit null stays null, as the config class keeps it
            data[key] = value
            used.append(f"{key} {value}")
    _read_aliases(data, family)  # then a default given under another name (use_bias)
    for other, standard in family.overrides.items():
        if data.get(other) is not None:
            data[standard] = data[other]
    if used:
        warnings.append(f"not in config.json, taken from the {model_type} config class's "
                        f"defaults: {', '.join(used)}")
    layers = data.get("num_hidden_layers")
    if (family.default_layer_types is not None and data.get("layer_types") is None
            and isinstance(layers, int) and not isinstance(layers, bool) and 0 < layers <= 4096):
        data["layer_types"] = [family.default_layer_types(i) for i in range(layers)]
        warnings.append(f"layer_types absent: built as the {model_type} config class builds "
                        "them")
    return data


def check_layer_types(data: Mapping[str, Any], model_type: str, path: str) -> None:
    """Refuse a field the family's vLLM code does not read (`TextFamily.unread`), and
    layer_types with sliding layers on a family whose vLLM model code ignores layer_types:
    vLLM would give no layer a window (CacheConfig keeps none once a layer is full), a layout
    kvplan does not model."""
    family = TEXT_FAMILIES.get(model_type)
    for key in family.unread if family is not None else ():
        if data.get(key) is not None:
            raise SpecError(path, key, f"given on {model_type}, whose vLLM code "
                                       f"({family.source}) does not read it: refused rather "
                                       "than sized as another cache layout")
    types = data.get("layer_types")
    if family is None or family.reads_layer_types or not isinstance(types, list):
        return
    if SLIDING in types and any(t != SLIDING for t in types):
        raise SpecError(path, "layer_types", f"sliding layers on {model_type}, whose vLLM code "
                                             f"({family.source}) reads no layer_types: vLLM "
                                             "would slide on no layer; refused rather than "
                                             "guessed")
