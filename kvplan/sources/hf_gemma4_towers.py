"""Gemma-4's tower sizes (kvplan.model.gemma4_towers) read from a Gemma4ForConditionalGeneration
config.json's vision_config and audio_config into the spec mapping (GemmaBlocksSpec.tower_shapes)
and parsed back. Only fields the file states are read (no class defaults); a missing one, or a
quantization_config (vLLM then builds the towers with the checkpoint's quantization,
gemma4_mm.py:1074-1092, which kvplan does not price), leaves the towers uncounted: a budget
from the device is then refused (kvplan.capacity.stages.refuse_uncounted_towers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import checked_int
from kvplan.model.gemma4_towers import Gemma4AudioTower, Gemma4Towers, Gemma4VisionTower

VISION_SIZES = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads", "head_dim", "patch_size", "position_embedding_size")
VISION_FLAGS = ("use_clipped_linears", "standardize")
AUDIO_SIZES = ("hidden_size", "num_hidden_layers", "num_attention_heads", "conv_kernel_size",
               "output_proj_dims")
AUDIO_FLAGS = ("use_clipped_linears",)


def _section(sub: Any, sizes: tuple[str, ...], flags: tuple[str, ...]) -> dict | None:
    if not isinstance(sub, Mapping):
        return None
    out = {k: sub.get(k) for k in (*sizes, *flags)}
    if any(not isinstance(out[k], int) or isinstance(out[k], bool) for k in sizes) or any(
            not isinstance(out[k], bool) for k in flags):
        return None
    return out


def tower_shapes(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `tower_shapes` mapping of a Gemma-4 wrapper's config.json, else None."""
    if config.get("quantization_config") is not None:
        return None
    vision = _section(config.get("vision_config"), VISION_SIZES, VISION_FLAGS)
    if vision is None:
        return None
    out: dict[str, Any] = {"vision": vision}
    if config.get("audio_config") is not None:
        audio = _section(config["audio_config"], AUDIO_SIZES, AUDIO_FLAGS)
        channels = config["audio_config"].get("subsampling_conv_channels") if isinstance(
            config["audio_config"], Mapping) else None
        if audio is None or not (isinstance(channels, list) and len(channels) == 2
                                 and all(isinstance(c, int) and not isinstance(c, bool)
                                         for c in channels)):
            return None
        out["audio"] = {**audio, "subsampling_conv_channels": list(channels)}
    return out


def _parse(value: Any, path: str, field: str, sizes: tuple[str, ...],
           flags: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not set(sizes) | set(flags) <= set(value):
        raise SpecError(path, field, "expected a mapping of " + ", ".join((*sizes, *flags)))
    out: dict[str, Any] = {k: checked_int(value[k], path=path, field=f"{field}.{k}", minimum=1)
                           for k in sizes}
    for k in flags:
        if not isinstance(value[k], bool):
            raise SpecError(path, f"{field}.{k}", "expected true or false")
        out[k] = value[k]
    return out


def parse_tower_shapes(value: Any, path: str) -> Gemma4Towers | None:
    """A spec's `gemma_blocks.tower_shapes` (vision, optionally audio), else None."""
    if value is None:
        return None
    field = "gemma_blocks.tower_shapes"
    if not isinstance(value, Mapping) or not {"vision"} <= set(value) <= {"vision", "audio"}:
        raise SpecError(path, field, "expected a mapping of vision (and audio)")
    vision = Gemma4VisionTower(**_parse(value["vision"], path, f"{field}.vision", VISION_SIZES,
                                        VISION_FLAGS))
    audio = None
    if value.get("audio") is not None:
        a = value["audio"]
        fields = _parse(a, path, f"{field}.audio", AUDIO_SIZES, AUDIO_FLAGS)
        channels = a.get("subsampling_conv_channels") if isinstance(a, Mapping) else None
        if not isinstance(channels, list) or len(channels) != 2:
            raise SpecError(path, f"{field}.audio.subsampling_conv_channels",
                            "expected two channel counts")
        fields["subsampling_conv_channels"] = tuple(
            checked_int(c, path=path, field=f"{field}.audio.subsampling_conv_channels",
                        minimum=1) for c in channels)
        audio = Gemma4AudioTower(**fields)
    return Gemma4Towers(vision=vision, audio=audio)
