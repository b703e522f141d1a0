"""The Qwen2-VL / Qwen2.5-VL vision transformer's weights (kvplan.weights.breakdown._qwen2_vit),
worked by hand from the published configs, as vLLM 0.32 builds the towers (models/qwen2_vl.py
Qwen2VisionTransformer, models/qwen2_5_vl.py Qwen2_5_VisionTransformer), and held equal to
vLLM's own bytes on the oracle shrinks (tests/oracle/vllm_weight_bytes.py,
tests/data/oracle/weight-bytes.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.sources.hf_config import load_config
from kvplan.sources.resolve import load_spec
from kvplan.weights.base import engine_dtype
from kvplan.weights.breakdown import weight_breakdown

DATA = Path(__file__).parent / "data"
MEASURED = json.loads((DATA / "oracle" / "weight-bytes.json").read_text())["cases"]

# Qwen/Qwen2.5-VL-7B-Instruct's vision_config (tests/data/configs/qwen2.5-vl-7b.json): depth 32,
# hidden 1280, intermediate 3420, 16 heads (head_dim 80), out_hidden_size 3584, patch 14,
# temporal 2, merge 2, in_channels 3 (in_chans is not a config-class field). In elements:
#   patch_embed.proj (Conv3d, bias=False; qwen2_5_vl.py:554-560): 1280 x 3 x 2 x 14 x 14
#     = 1,505,280
#   rotary cos_sin_cache (get_rope(head_size=80, max_position=8192, partial_rotary_factor 0.5),
#     qwen2_5_vl.py:682-687): 8192 x 40 = 327,680
#   per block (Qwen2_5_VisionBlock, :478-507): norm1 + norm2 (RMSNorm) 2 x 1280; qkv
#     (QKVParallelLinear, bias) 3840 x 1280 + 3840; proj (RowParallelLinear, bias) 1280 x 1280
#     + 1280; gate_up_proj (MergedColumnParallelLinear, bias) 2 x 3420 x 1280 + 6840;
#     down_proj (bias) 1280 x 3420 + 1280 = 19,702,200; x 32 = 630,470,400
#   merger (Qwen2_5_VisionPatchMerger, :576-611): ln_q (RMSNorm) 1280; mlp.0 5120 x 5120 +
#     5120; mlp.2 3584 x 5120 + 3584 = 44,574,464
#   total 676,877,824 x 2 B (bf16) = 1,353,755,648; and input_norm's two float32 buffers of 3
#   channels (FusedMMInputNorm, layers/fusion/mm_input_norm.py:236-248) 24 B: 1,353,755,672.
# (Less the rotary table, 676,550,144 parameters: the model card's 8,292,166,656 less the
# Qwen2.5-7B language model's 7,615,616,512, recalled from the Hub pages, not re-read here.)
QWEN25_VL_7B_VISION = 1_353_755_672
# At TP 2 the column / row linears halve (biases of the row ones whole): per block 2,560 +
# 1920 x 1280 + 1920 + 1280 x 640 + 1280 + 2 x 1710 x 1280 + 3420 + 1280 x 1710 + 1280
# = 9,853,660, x 32 = 315,317,120; merger 1280 + 2560 x 5120 + 2560 + 3584 x 2560 + 3584
# = 22,289,664; with the replicated patch embed and rotary table: 339,439,744 x 2 B + 24 B.
QWEN25_VL_7B_VISION_TP2 = 678_879_512

# allenai/olmOCR-7B-0225-preview (Qwen2-VL-7B's architecture; tests/data/configs/mm/): depth
# 32, embed_dim 1280, mlp_ratio 4 (fc1 int(1280 x 4) = 5120), 16 heads, hidden_size 3584 (the
# merger's output), patch 14, temporal 2, merge 2. In elements (qwen2_vl.py):
#   patch_embed.proj (Conv3d, bias=False; :461-467) 1,505,280; rotary table (:572-577)
#     8192 x 40 = 327,680
#   per block (Qwen2VisionBlock, :394-432): norm1 + norm2 (LayerNorm, weight and bias)
#     4 x 1280; qkv (ColumnParallelLinear, bias) 3840 x 1280 + 3840; proj 1280 x 1280 + 1280;
#     fc1 5120 x 1280 + 5120; fc2 1280 x 5120 + 1280 = 19,677,440; x 32 = 629,678,080
#   merger (Qwen2VisionPatchMerger, :476-511): ln_q (LayerNorm) 2 x 1280; mlp.0 5120 x 5120
#     + 5120; mlp.2 3584 x 5120 + 3584 = 44,575,744
#   total 676,086,784 x 2 B = 1,352,173,568, + input_norm's 24 B. (Less the rotary table,
#   675,759,104 parameters: Qwen2-VL-7B's 8,291,375,616 less 7,615,616,512, recalled likewise.)
OLMOCR_7B_VISION = 1_352_173_592


def test_qwen25_vl_vision_transformer_by_hand() -> None:
    spec, _ = load_config(DATA / "configs" / "qwen2.5-vl-7b.json")
    vit = spec.qwen2_vit
    assert vit is not None and (vit.rms_norm, vit.gated_mlp) == (True, True)
    assert weight_breakdown(spec, None, dtype="bf16").vision == QWEN25_VL_7B_VISION
    assert weight_breakdown(spec, None, dtype="bf16", tp=2).vision == QWEN25_VL_7B_VISION_TP2
    assert weight_breakdown(spec, None, dtype="bf16", vision=False).vision == 0


def test_qwen2_vl_vision_transformer_by_hand() -> None:
    spec, _ = load_config(DATA / "configs" / "mm" / "olmocr-7b-0225-preview.json")
    vit = spec.qwen2_vit
    assert vit is not None and (vit.hidden_size, vit.intermediate_size) == (1280, 5120)
    assert vit.out_hidden_size == 3584 and not vit.rms_norm and not vit.gated_mlp
    assert weight_breakdown(spec, None, dtype="bf16").vision == OLMOCR_7B_VISION


def test_fields_left_out_take_the_config_class_defaults() -> None:
    # Qwen/Qwen2.5-VL-32B-Instruct's published vision_config (tests/data/blind26/real/) states
    # hidden 1280, intermediate 3456, out_hidden_size 5120 and neither depth nor num_heads:
    # transformers 5.19's Qwen2_5_VLVisionConfig gives 32 and 16, as vLLM builds it. Per block
    # 2 x 1280 + 3840 x 1280 + 3840 + 1280 x 1280 + 1280 + 2 x 3456 x 1280 + 6912 + 1280 x 3456
    # + 1280 = 19,840,512, x 32 = 634,896,384; merger 1280 + 5120 x 5120 + 5120 + 5120 x 5120
    # + 5120 = 52,440,320; patch embed 1,505,280 and rotary 327,680: 689,169,664 x 2 B + 24 B.
    spec, _ = load_config(DATA / "blind26" / "real" / "qwen2.5-vl-32b-instruct.json")
    assert spec.qwen2_vit is not None and (spec.qwen2_vit.depth, spec.qwen2_vit.num_heads) == (
        32, 16)
    assert weight_breakdown(spec, None, dtype="bf16").vision == 1_378_339_352


def test_priced_towers_leave_only_the_encoder_profile_assumed() -> None:
    # The tower is counted, so "not counted in the weights" goes; vLLM's encoder profile of it
    # is not modelled (kvplan.engines.vllm.mm), so the budget keeps that one assumption.
    for path in (DATA / "configs" / "qwen2.5-vl-7b.json",
                 DATA / "configs" / "mm" / "olmocr-7b-0225-preview.json"):
        spec, _ = load_config(path)
        assert spec.kv_exact and not spec.exact, path
        assert [a.value for a in spec.assumptions] == ["encoder profile not in the reserve"]


def test_another_architecture_over_the_same_model_type_stays_assumed(tmp_path: Path) -> None:
    # A wrapper class vLLM registers over model_type qwen2_vl with a tower of its own (not
    # described here) keeps the tower as an assumption.
    config = json.loads((DATA / "configs" / "mm" / "olmocr-7b-0225-preview.json").read_text())
    config["architectures"] = ["Tarsier2ForConditionalGeneration"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    spec, _ = load_config(tmp_path)
    assert spec.qwen2_vit is None
    assert [a.field for a in spec.assumptions] == ["vision_config"]


@pytest.mark.parametrize("case", ["qwen2.5-vl-7b", "olmocr-7b-0225-preview"])
def test_tower_and_whole_weights_equal_vllm_on_the_oracle(case: str) -> None:
    # vLLM 0.32's CPU build on the shrinks (8 and 2 tower blocks, 4 text layers; the tower
    # built, see weight-bytes.json's note): every visual.* tensor, parameters and buffers, and
    # the whole model's parameters plus the tower's buffers, to the byte (before the input_norm
    # buffers were counted, 24 B short; before this branch, the tower's 408,050,072 and
    # 171,527,192 B).
    spec = load_spec(str(DATA / "oracle" / case))
    b = weight_breakdown(spec, None, dtype=engine_dtype(spec.weight_dtype))
    row = MEASURED[case]
    assert b.vision == row["vision"]
    assert b.total - b.rope_cache == row["params"] + row["vision_buffers"]
    # The language model's MRoPE table: 4 x max_position_embeddings rows (get_rope's default
    # mrope_positions_factor, rotary_embedding/mrope.py:347-351; kvplan.sources.hf_rotary
    # MROPE_X4_WRAPPERS): a quarter of it before, 98,304,000 B short on the 7B shrink.
    assert b.rope_cache == row["lm_rotary"]


def test_language_model_mrope_table_is_four_times_the_positions() -> None:
    # Qwen2.5-VL-7B-Instruct: max_position_embeddings 128,000, head_dim 3584 / 28 = 128,
    # rope_scaling {"type": "mrope", "mrope_section": [16, 24, 24]}: qwen2.py's get_rope builds
    # MRotaryEmbedding with positions_factor 4 (rotary_embedding/__init__.py:112-123):
    # 4 x 128,000 x 128 x 2 B = 131,072,000 B (the text-only Qwen2.5-7B: its 131,072 x 128 x 2 B).
    spec, _ = load_config(DATA / "configs" / "qwen2.5-vl-7b.json")
    assert weight_breakdown(spec, None, dtype="bf16").rope_cache == 131_072_000
    spec, _ = load_config(DATA / "configs" / "qwen2.5-7b.json")
    assert weight_breakdown(spec, None, dtype="bf16").rope_cache == 131_072 * 128 * 2


def test_an_ignore_list_naming_the_tower_keeps_it_unquantized() -> None:
    # An AWQ checkpoint's modules_to_not_convert names the tower "visual" (the pre-4.52 names) or
    # "model.visual" (vLLM's WeightsMapper maps it onto its visual.): vLLM's is_layer_skipped
    # leaves those linears unquantized either way, so the tower weighs what it does in fp16.
    from kvplan.model.quant_config import parse_quantization_config

    spec, _ = load_config(DATA / "configs" / "qwen2.5-vl-7b.json")
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
           "version": "gemm"}
    for skip in (["visual"], ["model.visual"]):
        quant = parse_quantization_config({**awq, "modules_to_not_convert": skip}, "test")
        assert weight_breakdown(spec, quant, dtype="fp16").vision == QWEN25_VL_7B_VISION
    quant = parse_quantization_config(awq, "test")
    assert weight_breakdown(spec, quant, dtype="fp16").vision < QWEN25_VL_7B_VISION / 2
