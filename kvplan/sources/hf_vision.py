"""A multimodal checkpoint's vision_config as the spec's vision sections: Gemma-3's SigLIP tower
and Llama-4's vision model (``vision``), and the Qwen3-VL / Qwen3.5 vision transformer
(``qwen_vit``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_LAYERS
from kvplan.sources.hf_reader import ConfigReader, config_model_type


def _vit_fields(r: ConfigReader) -> dict:
    """The ViT shape every tower reads from its vision_config: widths, depth, heads, image and
    patch size, channels."""
    return {
        "hidden_size": r.int("hidden_size", required="vision_config.hidden_size"),
        "intermediate_size": r.int("intermediate_size",
                                   required="vision_config.intermediate_size"),
        "num_hidden_layers": r.int("num_hidden_layers",
                                   required="vision_config.num_hidden_layers",
                                   maximum=MAX_LAYERS),
        "num_attention_heads": r.int("num_attention_heads",
                                     required="vision_config.num_attention_heads"),
        "image_size": r.int("image_size", required="vision_config.image_size"),
        "patch_size": r.int("patch_size", required="vision_config.patch_size"),
        "num_channels": r.int("num_channels") or 3,
    }


def siglip_tower(config: Mapping[str, Any], path: str) -> dict | None:
    """A Gemma-3 checkpoint's SigLIP vision_config as the spec's vision section
    (kvplan.weights.breakdown counts it as vLLM's siglip.py and gemma3_mm.py build it). None when
    there is none, or when it has a pooling head (vision_use_head), which Gemma-3 does not use and
    kvplan does not price."""
    vc = config.get("vision_config")
    if not isinstance(vc, Mapping) or vc.get("model_type") not in (None, "siglip_vision_model"):
        return None
    if vc.get("vision_use_head") is not False:
        return None
    r = ConfigReader(dict(vc), path, "siglip_vision_model")
    return {
        "kind": "siglip", **_vit_fields(r),
        "projector": "gemma3",
    }


def llama4_tower(config: Mapping[str, Any], path: str) -> dict | None:
    """A Llama-4 checkpoint's vision_config (model_type llama4_vision_model) as the spec's vision
    section, kind "llama4" (kvplan.weights.breakdown counts it as vLLM's mllama4.py builds it,
    kvplan.engines.vllm.mm profiles it). None for other models."""
    vc = config.get("vision_config")
    if config_model_type(config) != "llama4" or not isinstance(vc, Mapping):
        return None
    r = ConfigReader(dict(vc), path, "llama4_vision_model")
    ratio = vc.get("pixel_shuffle_ratio", 0.5)
    if (not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not 0 < ratio <= 1
            or abs(1 / ratio ** 2 - round(1 / ratio ** 2)) > 1e-9):
        raise SpecError(path, "vision_config.pixel_shuffle_ratio",
                        f"expected a ratio r in (0, 1] with 1 / r^2 whole, got {ratio!r}")
    if vc.get("multi_modal_projector_bias"):
        raise SpecError(path, "vision_config.multi_modal_projector_bias",
                        "true is not modelled (the adapter's biases; every Llama-4 config has "
                        "false)")
    return {
        "kind": "llama4", **_vit_fields(r),
        "projector": "llama4",
        "patches_per_token": round(1 / ratio ** 2),
        "projector_input_dim": r.int("projector_input_dim",
                                     required="vision_config.projector_input_dim"),
        "projector_output_dim": r.int("projector_output_dim",
                                      required="vision_config.projector_output_dim"),
        "vision_output_dim": r.int("vision_output_dim",
                                   required="vision_config.vision_output_dim"),
    }


# Wrappers whose vision_config is the Qwen3-VL vision transformer (vLLM qwen3_vl.py
# Qwen3_VisionTransformer; qwen3_vl_moe.py, qwen3_5.py reuse it).
_QWEN3_VIT_WRAPPERS = ("qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe")


def qwen_vit(config: Mapping[str, Any], path: str) -> dict | None:
    """A Qwen3-VL / Qwen3.5 checkpoint's vision_config as the spec's qwen_vit section (vLLM's
    encoder profile sizes it, kvplan.engines.vllm.mm). None for other models; Qwen2-VL and
    Qwen2.5-VL (a different tower, profiled with a video in vLLM) are not described."""
    vc = config.get("vision_config")
    if config_model_type(config) not in _QWEN3_VIT_WRAPPERS or not isinstance(vc, Mapping):
        return None
    r = ConfigReader(dict(vc), path, "qwen3_vl_vision")
    deepstack = vc.get("deepstack_visual_indexes") or []
    if not isinstance(deepstack, list):
        raise SpecError(path, "vision_config.deepstack_visual_indexes", "expected a list")
    return {
        "kind": "qwen3_vl",
        "depth": r.int("depth", required="vision_config.depth", maximum=MAX_LAYERS),
        "hidden_size": r.int("hidden_size", required="vision_config.hidden_size"),
        "intermediate_size": r.int("intermediate_size",
                                   required="vision_config.intermediate_size"),
        "num_heads": r.int("num_heads", required="vision_config.num_heads"),
        "patch_size": r.int("patch_size", required="vision_config.patch_size"),
        "spatial_merge_size": r.int("spatial_merge_size") or 2,
        "temporal_patch_size": r.int("temporal_patch_size") or 2,
        "out_hidden_size": r.int("out_hidden_size", required="vision_config.out_hidden_size"),
        "in_channels": r.int("in_channels") or 3,
        "deepstack_layers": len(deepstack),
        "num_position_embeddings": r.int("num_position_embeddings") or 2304,
    }
