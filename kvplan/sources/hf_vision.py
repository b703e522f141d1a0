"""A multimodal checkpoint's vision_config as the spec's vision sections: Gemma-3's SigLIP tower
and Llama-4's vision model (``vision``), the Qwen3-VL / Qwen3.5 vision transformer
(``qwen_vit``) and the Qwen2-VL / Qwen2.5-VL one (``qwen2_vit``)."""

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
    Qwen2.5-VL (a different tower, profiled with a video in vLLM) are `qwen2_vit`'s."""
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


# The wrappers vLLM 0.32 builds over the Qwen2-VL / Qwen2.5-VL vision transformer
# (models/registry.py): model_type -> the architecture (config.json's architectures, when
# stated, must name it: a subclass such as Tarsier2 may build its tower otherwise).
_QWEN2_VIT_WRAPPERS = {"qwen2_vl": "Qwen2VLForConditionalGeneration",
                       "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration"}


# transformers 5.19's vision config classes: the defaults a vision_config leaves to them
# (Qwen2.5-VL-32B-Instruct's states neither depth nor num_heads). Qwen2VLVisionConfig
# (models/qwen2_vl/configuration_qwen2_vl.py:33-42), Qwen2_5_VLVisionConfig
# (models/qwen2_5_vl/configuration_qwen2_5_vl.py:53-64).
_QWEN2_VIT_DEFAULTS = {
    "qwen2_vl": {"depth": 32, "embed_dim": 1280, "hidden_size": 3584, "mlp_ratio": 4,
                 "num_heads": 16},
    "qwen2_5_vl": {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420,
                   "num_heads": 16, "out_hidden_size": 3584},
}


def qwen2_vit(config: Mapping[str, Any], path: str) -> dict | None:
    """A Qwen2-VL / Qwen2.5-VL checkpoint's vision_config as the spec's qwen2_vit section
    (kvplan.weights.breakdown counts it as vLLM 0.32's qwen2_vl.py / qwen2_5_vl.py build it).
    None for other models, and for a wrapper whose architectures name another class.

    Qwen2-VL (transformers' Qwen2VLVisionConfig, read by qwen2_vl.py:545-555): the tower's
    width is ``embed_dim``, its MLP int(embed_dim x mlp_ratio), and ``hidden_size`` is the
    merger's output (the language model's width); LayerNorm, fc1 / fc2. Qwen2.5-VL
    (Qwen2_5_VLVisionConfig, qwen2_5_vl.py:643-650): ``hidden_size`` is the width,
    ``intermediate_size`` the gated MLP's, ``out_hidden_size`` the merger's output; RMSNorm.
    A field left out takes the config class's default (`_QWEN2_VIT_DEFAULTS`; patch 14, merge
    2, temporal 2, 3 channels in both). ``in_chans`` in the published files is not a field of
    either class (vLLM reads ``in_channels``); ``num_attention_heads`` is num_heads' alias."""
    vc = config.get("vision_config")
    kind = config_model_type(config)
    if kind not in _QWEN2_VIT_WRAPPERS or not isinstance(vc, Mapping):
        return None
    architectures = config.get("architectures")
    if isinstance(architectures, list) and architectures and (
            architectures[0] != _QWEN2_VIT_WRAPPERS[kind]):
        return None
    r = ConfigReader(dict(vc), path, f"{kind}_vision")
    default = _QWEN2_VIT_DEFAULTS[kind]

    def read(key: str) -> int:
        value = r.int(key)
        return default[key] if value is None else value

    qwen2 = kind == "qwen2_vl"
    if qwen2:
        width = read("embed_dim")
        ratio = vc.get("mlp_ratio", default["mlp_ratio"])
        if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or ratio <= 0:
            raise SpecError(path, "vision_config.mlp_ratio",
                            f"expected a positive number, got {ratio!r}")
        inter = int(width * ratio)  # Qwen2VisionBlock: mlp_hidden_dim = int(dim * mlp_ratio)
        out = read("hidden_size")
    else:
        width, inter, out = read("hidden_size"), read("intermediate_size"), read("out_hidden_size")
    depth = r.int("depth", maximum=MAX_LAYERS)
    heads = r.int("num_heads", "num_attention_heads")
    return {
        "kind": kind,
        "depth": default["depth"] if depth is None else depth,
        "hidden_size": width,
        "intermediate_size": inter,
        "num_heads": default["num_heads"] if heads is None else heads,
        "patch_size": r.int("patch_size") or 14,
        "spatial_merge_size": r.int("spatial_merge_size") or 2,
        "temporal_patch_size": r.int("temporal_patch_size") or 2,
        "out_hidden_size": out,
        "in_channels": r.int("in_channels") or 3,
        "rms_norm": not qwen2,
        "gated_mlp": not qwen2,
    }
