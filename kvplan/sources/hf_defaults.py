"""What transformers' config classes fill in when a config.json leaves a field out, by
``model_type``: one table, read by every reader that needs a class default (issue 26).

vLLM loads config.json through transformers (5.19 in vLLM 0.32's CPU build), so a field the
published file leaves out takes its config class's default (``LlamaConfig()``,
``Gemma3TextConfig()``, ...). Only the fields kvplan reads are listed, each read from the class
itself. Who fills them, and how a fill is reported, stays with each reader:

- a top-level text family (kvplan.sources.hf_text.fill_family_defaults): the cache fields;
- a multimodal wrapper's text sub-config (kvplan.sources.hf_wrappers.wrapped_text_config);
- Gemma-3's ``text_config`` (kvplan.sources.hf_config);
- ``tie_word_embeddings`` for every reader (`tie_default`; weights only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TIE = "tie_word_embeddings"

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
              "max_position_embeddings": 32768, "use_sliding_window": False, _TIE: False},
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
    # Each class's tie_word_embeddings where no other default is listed.
    "gemma": {_TIE: True}, "gemma2": {_TIE: True}, "gemma3": {_TIE: True},
    "minicpm3": {_TIE: True}, "falcon": {_TIE: True}, "gpt2": {_TIE: True}, "opt": {_TIE: True},
    "lfm2": {_TIE: True}, "cohere": {_TIE: True}, "cohere2": {_TIE: True},
    "mamba": {_TIE: True}, "falcon_mamba": {_TIE: True}, "zamba2": {_TIE: True},
    "gemma4": {_TIE: True}, "gpt_bigcode": {_TIE: True}, "gptj": {_TIE: False},
    "stablelm": {_TIE: False}, "olmoe": {_TIE: False}, "granitemoe": {_TIE: False},
    "apertus": {_TIE: False}, "seed_oss": {_TIE: False}, "ernie4_5_moe": {_TIE: True},
    "lfm2_moe": {_TIE: True}, "olmo": {_TIE: False}, "hunyuan_v1_dense": {_TIE: True},
    "internlm2": {_TIE: False}, "exaone": {_TIE: False}, "bloom": {_TIE: True},
    "minicpm": {_TIE: True}, "dbrx": {_TIE: False}, "olmo_hybrid": {_TIE: False},
    # Gemma3nTextConfig() and Gemma3nConfig().
    "gemma3n": {_TIE: True},
    # Starcoder2Config() (use_bias True too), PhiConfig(), Olmo2Config().
    "starcoder2": {_TIE: True, "use_bias": True}, "phi": {_TIE: False}, "olmo2": {_TIE: False},
}


def class_defaults(model_type: str) -> Mapping[str, Any]:
    """The config class's defaults for the fields kvplan reads ({} when not held)."""
    return CLASS_DEFAULTS.get(model_type, {})


def cache_defaults(model_type: str) -> dict[str, Any]:
    """The class's defaults of the fields that shape the cache (all but the tie flag)."""
    return {k: v for k, v in class_defaults(model_type).items() if k != _TIE}


def tie_default(model_type: str) -> bool | None:
    """The class's tie_word_embeddings default (None: not held)."""
    return class_defaults(model_type).get(_TIE)
