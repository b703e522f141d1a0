"""Gemma-4's multimodal towers as vLLM 0.32 builds them beside the language model
(models/gemma4_mm.py:1095-1133: transformers' Gemma4VisionModel / Gemma4AudioModel from
vision_config / audio_config, each followed by vLLM's Gemma4MultimodalEmbedder), by the sizes
that set their weights (counted by kvplan.weights.gemma4_towers)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Gemma4VisionTower:
    """vision_config's sizes (transformers 5 modeling_gemma4.py Gemma4VisionModel)."""

    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    patch_size: int
    position_embedding_size: int
    use_clipped_linears: bool
    standardize: bool


@dataclass(frozen=True, kw_only=True)
class Gemma4AudioTower:
    """audio_config's sizes (modeling_gemma4.py Gemma4AudioModel, a conformer)."""

    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    conv_kernel_size: int
    subsampling_conv_channels: tuple[int, int]
    output_proj_dims: int
    use_clipped_linears: bool


@dataclass(frozen=True, kw_only=True)
class Gemma4Towers:
    """The towers a Gemma4ForConditionalGeneration config describes (audio: E2B / E4B only)."""

    vision: Gemma4VisionTower
    audio: Gemma4AudioTower | None = None
