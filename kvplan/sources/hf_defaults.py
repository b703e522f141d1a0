"""What transformers' config classes fill in when a config.json leaves a field out, by
``model_type``: one table, read by every reader that needs a class default (issue 26).

vLLM loads config.json through transformers (5.19 in vLLM 0.32's CPU build), so a field the
published file leaves out takes its config class's default (``LlamaConfig()``,
``Gemma3TextConfig()``, ...). Only the fields kvplan reads are listed, each read from the class
itself. Who fills them, and how a fill is reported, stays with each reader:

- a top-level text family (kvplan.sources.hf_text.fill_family_defaults): the cache fields;
- a multimodal wrapper's text sub-config (kvplan.sources.hf_wrappers.wrapped_text_config);
- Gemma-3's ``text_config`` (kvplan.sources.hf_config);
- ``tie_word_embeddings`` for every reader (`tie_default`; weights only);
- a known family's cache fields (kvplan.sources.hf_fields.fill_class_defaults; `field_defaults`),
  held under `_FIELDS` in the class's entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TIE = "tie_word_embeddings"
# The cache fields only the known families' field reader fills (kvplan.sources.hf_fields, after
# the readers above, for the keys config.json leaves out). Held apart from the keys the other
# readers fill: a wrapper whose text model names one of these classes would otherwise take them
# too and answer differently (kimi_k25's deepseek_v3 text model without its KV fields is refused
# by kvplan.sources.hf_wrappers, whose class defaults it does not hold; a qwen2_audio's
# Qwen2Config text model gets its 32 KV heads from hf_fields, said in hf_fields' warning).
_FIELDS = "cache fields of a known family"
# DeepseekV2Config, DeepseekV3Config, DeepseekV32Config: MLA ranks (a config.json without
# kv_lora_rank is still MLA in vLLM; kvplan had sized it as GQA).
_DEEPSEEK_MLA = {"kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
                 "qk_nope_head_dim": 128, "v_head_dim": 128}
# Qwen3NextConfig, Qwen3_5TextConfig, Qwen3_5MoeTextConfig: head_dim 256 (not hidden / heads),
# the gated delta-net's shapes, and layer_types full every 4th layer when neither layer_types
# nor full_attention_interval is given.
_QWEN_LINEAR = {"head_dim": 256, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
                "linear_value_head_dim": 128, "linear_num_key_heads": 16,
                "linear_num_value_heads": 32, "full_attention_interval": 4}

CLASS_DEFAULTS: dict[str, Mapping[str, Any]] = {
    # LlamaConfig(): num_key_value_heads unset means num_attention_heads.
    "llama": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32,
              "max_position_embeddings": 2048, _TIE: False},
    # MistralConfig(): sliding_window 4096 unless the file says otherwise (null: none).
    "mistral": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "max_position_embeddings": 131072, "sliding_window": 4096, _TIE: False},
    # Qwen2Config(): use_sliding_window false (sliding_window then unused).
    "qwen2": {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32,
              "max_position_embeddings": 32768, "use_sliding_window": False, _TIE: False,
              _FIELDS: {"num_key_value_heads": 32}},
    # Gemma3TextConfig().
    "gemma3_text": {"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
                    "num_hidden_layers": 26, "num_attention_heads": 8,
                    "num_key_value_heads": 4, "head_dim": 256,
                    "max_position_embeddings": 131072, "sliding_window": 4096,
                    "sliding_window_pattern": 6, _TIE: True},
    # PhimoeConfig(), GlmConfig(), VaultGemmaConfig(), CwmConfig(): the cache fields.
    "phimoe": {"num_key_value_heads": 8},
    "glm": {"num_key_value_heads": 2, "head_dim": 128},
    "vaultgemma": {"num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096,
                   _TIE: True},
    "cwm": {"num_key_value_heads": 8, "head_dim": 128, "sliding_window": 8192},
    # AfmoeConfig(): head_dim 128, sliding_window 1024 (its layer_types: kvplan.sources.hf_text).
    "afmoe": {"head_dim": 128, "sliding_window": 1024, _TIE: False},
    # GraniteSWAConfig() (transformers 5.19): the cache fields (its layer_types:
    # kvplan.sources.hf_text).
    "granite_swa": {"num_key_value_heads": 4, "sliding_window": 128, _TIE: True},
    # GraniteMoeSWAConfig() (transformers 5.19): sliding_window 128, untied; num_key_value_heads
    # None -> the heads (its __post_init__), as kvplan's reader falls back without a default.
    "granitemoe_swa": {"sliding_window": 128, _TIE: False},
    # HYV3Config(): the cache fields.
    "hy_v3": {"num_key_value_heads": 8, "head_dim": 128, _TIE: False},
    # HyperCLOVAXConfig: num_key_value_heads and head_dim None -> the heads and hidden / heads
    # (its __post_init__), as kvplan's reader falls back without a default.
    "hyperclovax": {_TIE: False},
    # Step1Config (remote, Step-Audio's configuration_step1.py): num_attention_groups 8; no
    # tie flag, so PretrainedConfig's True (models/step1.py ties lm_head when it is true).
    "step1": {"num_attention_groups": 8, _TIE: True},
    # OPTConfig() (transformers 5.19, models/opt/configuration_opt.py): what a Blip-2 wrapper's
    # text_config leaves out (Blip2Config builds CONFIG_MAPPING["opt"](**text_config));
    # word_embed_proj_dim None -> hidden_size, enable_bias True.
    "opt": {"vocab_size": 50272, "hidden_size": 768, "num_hidden_layers": 12, "ffn_dim": 3072,
            "num_attention_heads": 12, "max_position_embeddings": 2048, _TIE: True},
    # Each class's tie_word_embeddings where no other default is listed.
    "gemma3": {_TIE: True},
    "minicpm3": {_TIE: True}, "falcon": {_TIE: True}, "gpt2": {_TIE: True},
    "lfm2": {_TIE: True}, "cohere": {_TIE: True}, "cohere2": {_TIE: True},
    "mamba": {_TIE: True}, "falcon_mamba": {_TIE: True}, "zamba2": {_TIE: True},
    "gpt_bigcode": {_TIE: True}, "gptj": {_TIE: False},
    "stablelm": {_TIE: False}, "olmoe": {_TIE: False}, "granitemoe": {_TIE: False},
    "apertus": {_TIE: False}, "lfm2_moe": {_TIE: True}, "olmo": {_TIE: False},
    "hunyuan_v1_dense": {_TIE: True},
    # SmolLM3Config (the published SmolLM3-3B config.json leaves the flag to it).
    "smollm3": {_TIE: True},
    "internlm2": {_TIE: False}, "exaone": {_TIE: False}, "bloom": {_TIE: True},
    "minicpm": {_TIE: True}, "dbrx": {_TIE: False}, "olmo_hybrid": {_TIE: False},
    # Starcoder2Config() (use_bias True too), PhiConfig(), Olmo2Config().
    "starcoder2": {_TIE: True, "use_bias": True}, "phi": {_TIE: False}, "olmo2": {_TIE: False},
    # The known families' cache fields (`_FIELDS`), as transformers 5.19's classes hold them
    # (`AutoConfig.for_model(model_type)`), where kvplan had taken hidden / heads, one KV head
    # per query head, or no window.
    "gemma": {_TIE: True, _FIELDS: {"head_dim": 256, "num_key_value_heads": 16}},
    "gemma2": {_TIE: True, _FIELDS: {"head_dim": 256, "num_key_value_heads": 4}},
    # Gemma3nTextConfig() and Gemma3nConfig() (its layer_types: kvplan.sources.hf_fields_table).
    "gemma3n": {_TIE: True, _FIELDS: {"head_dim": 256, "num_key_value_heads": 2,
                                      "sliding_window": 512}},
    "gemma4": {_TIE: True, _FIELDS: {"head_dim": 256, "num_key_value_heads": 4}},
    "ernie4_5": {_FIELDS: {"head_dim": 128, "num_key_value_heads": 2}},
    "ernie4_5_moe": {_TIE: True, _FIELDS: {"num_key_value_heads": 4}},
    "falcon_h1": {_FIELDS: {"num_key_value_heads": 8}},
    "glm4": {_FIELDS: {"head_dim": 128, "num_key_value_heads": 2}},
    "gpt_oss": {_FIELDS: {"head_dim": 64, "num_key_value_heads": 8, "sliding_window": 128}},
    # JambaConfig: attention every 8th layer from layer 4 (kvplan had taken offset 0).
    "jamba": {_FIELDS: {"num_key_value_heads": 8, "attn_layer_period": 8, "attn_layer_offset": 4,
                        "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2}},
    "deepseek_v2": {_FIELDS: _DEEPSEEK_MLA},
    "deepseek_v3": {_FIELDS: _DEEPSEEK_MLA},
    # DeepseekV32Config (transformers 5.19 configuration_deepseek_v32.py:98-122): its MLA ranks
    # and its indexer's, which vLLM 0.32 builds on every layer whatever the file states
    # (models/deepseek_v32/attention.py:65 reads config.index_topk; blind batch 18).
    "deepseek_v32": {_FIELDS: {**_DEEPSEEK_MLA, "index_topk": 2048, "index_head_dim": 128,
                               "index_n_heads": 64}},
    # GlmMoeDsaConfig (transformers 5.19 configuration_glm_moe_dsa.py:103-127): GLM-5's MLA
    # ranks and indexer. A file leaving the index_* fields out (aiconfigurator's trimmed GLM-5-FP8
    # copy, blind batch 18) still gets vLLM's indexer cache: kvplan had sized it as plain MLA.
    "glm_moe_dsa": {_FIELDS: {"kv_lora_rank": 512, "q_lora_rank": 2048, "qk_rope_head_dim": 64,
                              "qk_nope_head_dim": 192, "v_head_dim": 256, "index_topk": 2048,
                              "index_head_dim": 128, "index_n_heads": 32}},
    # Glm4MoeLiteConfig: its MLA ranks.
    "glm4_moe_lite": {_FIELDS: {"kv_lora_rank": 512, "q_lora_rank": 768, "qk_rope_head_dim": 64,
                                "qk_nope_head_dim": 192, "v_head_dim": 256}},
    "mixtral": {_FIELDS: {"num_key_value_heads": 8}},
    "mimo": {_FIELDS: {"num_key_value_heads": 32}},
    "qwen2_moe": {_FIELDS: {"num_key_value_heads": 16}},
    # Qwen3Config: head_dim 128, not hidden / heads.
    "qwen3": {_FIELDS: {"num_key_value_heads": 32, "head_dim": 128}},
    "qwen3_moe": {_FIELDS: {"num_key_value_heads": 4}},
    "minimax_m2": {_FIELDS: {"num_key_value_heads": 8, "head_dim": 128}},
    "seed_oss": {_TIE: False, _FIELDS: {"num_key_value_heads": 8, "head_dim": 128}},
    "nemotron_h": {_FIELDS: {"num_key_value_heads": 8, "head_dim": 128}},
    "qwen3_next": {_FIELDS: {"num_key_value_heads": 2, **_QWEN_LINEAR}},
    "qwen3_5_text": {_FIELDS: {"num_key_value_heads": 4, **_QWEN_LINEAR}},
    "qwen3_5_moe_text": {_FIELDS: {"num_key_value_heads": 2, **_QWEN_LINEAR}},
    # ExaoneMoeConfig (transformers 5.19): its windows (kvplan.sources.hf_layer_windows builds
    # layer_types from the pattern when absent) and first dense layers.
    "exaone_moe": {_TIE: False, _FIELDS: {"num_key_value_heads": 32, "sliding_window": 4096,
                                          "sliding_window_pattern": 4,
                                          "first_k_dense_replace": 1}},
    # The remote Plamo3Config (configuration_plamo3.py of pfnet's PLaMo-3 checkpoints): the
    # defaults its published versions share (window_size differs between them: not filled).
    "plamo3": {_TIE: True, _FIELDS: {"num_key_value_heads": 4, "head_dim": 128,
                                     "sliding_window_pattern": 8}},
    # The remote PanguEmbeddedConfig (configuration_openpangu_dense.py of the openPangu-Embedded
    # checkpoints; copy read: github.com/wujing215/OpenPangu7B-on-NVIDIA): bias=True, untied.
    "PanguEmbedded": {"bias": True, _TIE: False},
    # Llama4TextConfig: attention_chunk_size 8192.
    "llama4_text": {_FIELDS: {"num_key_value_heads": 8, "head_dim": 128,
                              "attention_chunk_size": 8192}},
}


def class_defaults(model_type: str) -> Mapping[str, Any]:
    """The config class's defaults for the fields kvplan reads ({} when not held), less the
    known-family cache fields only kvplan.sources.hf_fields fills (`field_defaults`)."""
    return {k: v for k, v in CLASS_DEFAULTS.get(model_type, {}).items() if k != _FIELDS}


def field_defaults(model_type: str, shared: tuple[str, ...] = ()) -> dict[str, Any]:
    """The class's defaults of a known family's cache fields (kvplan.sources.hf_fields), with
    the `shared` ones the other readers fill too."""
    entry = CLASS_DEFAULTS.get(model_type, {})
    return {**{k: entry[k] for k in shared}, **entry.get(_FIELDS, {})}


def cache_defaults(model_type: str) -> dict[str, Any]:
    """The class's defaults of the fields that shape the cache (all but the tie flag)."""
    return {k: v for k, v in class_defaults(model_type).items() if k != _TIE}


def tie_default(model_type: str) -> bool | None:
    """The class's tie_word_embeddings default (None: not held)."""
    return class_defaults(model_type).get(_TIE)
