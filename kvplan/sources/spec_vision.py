"""A model spec's vision sections -> their spec types: ``vision`` (Gemma-3's SigLIP tower,
Llama-4's vision model), ``qwen_vit`` (Qwen3-VL / Qwen3.5) and ``qwen2_vit`` (Qwen2-VL /
Qwen2.5-VL); kvplan.sources.hf_vision writes them from a config.json's vision_config."""

from __future__ import annotations

from typing import Any, TypeVar

from kvplan.model.spec import (
    QWEN3_VL_MAX_PIXELS,
    QWEN3_VL_VIDEO_MAX_PIXELS,
    Qwen2ViTSpec,
    QwenViTSpec,
    VisionTowerSpec,
)
from kvplan.sources.spec_reader import SectionReader

_Tower = TypeVar("_Tower", Qwen2ViTSpec, QwenViTSpec)


def parse_vision(r: SectionReader | None) -> VisionTowerSpec | None:
    if r is None:
        return None
    kind = r.str("kind", choices=("siglip", "llama4"))
    llama4 = kind == "llama4"
    tower = VisionTowerSpec(
        kind=kind,
        hidden_size=r.int("hidden_size"),
        intermediate_size=r.int("intermediate_size"),
        num_hidden_layers=r.int("num_hidden_layers"),
        num_attention_heads=r.int("num_attention_heads"),
        image_size=r.int("image_size"),
        patch_size=r.int("patch_size"),
        num_channels=r.int("num_channels", required=False, default=3),
        projector=r.str("projector", choices=("llama4",) if llama4 else ("gemma3",)),
        tokens_per_image=r.int("tokens_per_image", required=False, default=256),
        patches_per_token=r.int("patches_per_token", required=False, default=4),
        projector_input_dim=r.int("projector_input_dim", required=llama4, default=0),
        projector_output_dim=r.int("projector_output_dim", required=llama4, default=0),
        vision_output_dim=r.int("vision_output_dim", required=llama4, default=0),
        max_tiles=r.int("max_tiles", required=False, default=16),
    )
    r.finish()
    if llama4 and tower.num_positions % tower.patches_per_token:
        raise r.error("patches_per_token", "must divide the patches of a tile")
    if tower.hidden_size % tower.num_attention_heads:
        raise r.error("num_attention_heads", "must divide hidden_size")
    return tower


def _qwen_tower(r: SectionReader, kinds: tuple[str, ...]) -> dict[str, Any]:
    """The fields Qwen2-VL's and Qwen3-VL's towers share (Qwen2ViTSpec, QwenViTSpec), read in
    the order the sections list them: ``kind`` one of `kinds`."""
    return {
        "kind": r.str("kind", choices=kinds),
        "depth": r.int("depth"),
        "hidden_size": r.int("hidden_size"),
        "intermediate_size": r.int("intermediate_size"),
        "num_heads": r.int("num_heads"),
        "patch_size": r.int("patch_size"),
        "spatial_merge_size": r.int("spatial_merge_size"),
        "temporal_patch_size": r.int("temporal_patch_size"),
        "out_hidden_size": r.int("out_hidden_size"),
        "in_channels": r.int("in_channels", required=False, default=3),
    }


def _finished(r: SectionReader, tower: _Tower) -> _Tower:
    """`tower` once its section has no unknown key and its heads divide its width."""
    r.finish()
    if tower.hidden_size % tower.num_heads:
        raise r.error("num_heads", "must divide hidden_size")
    return tower


def parse_qwen2_vit(r: SectionReader | None) -> Qwen2ViTSpec | None:
    if r is None:
        return None
    return _finished(r, Qwen2ViTSpec(
        **_qwen_tower(r, ("qwen2_vl", "qwen2_5_vl")),
        rms_norm=r.bool("rms_norm", default=False),
        gated_mlp=r.bool("gated_mlp", default=False),
    ))


def parse_qwen_vit(r: SectionReader | None) -> QwenViTSpec | None:
    if r is None:
        return None
    return _finished(r, QwenViTSpec(
        **_qwen_tower(r, ("qwen3_vl",)),
        deepstack_layers=r.int("deepstack_layers", required=False, default=0, minimum=0),
        num_position_embeddings=r.int("num_position_embeddings", required=False, default=2304),
        max_pixels=r.int("max_pixels", required=False, default=QWEN3_VL_MAX_PIXELS),
        video_max_pixels=r.int("video_max_pixels", required=False,
                               default=QWEN3_VL_VIDEO_MAX_PIXELS),
    ))
