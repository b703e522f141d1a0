"""Gemma-4's vision and audio towers as vLLM 0.32 builds them beside the language model
(models/gemma4_mm.py:1095-1133: transformers' Gemma4VisionModel / Gemma4AudioModel and vLLM's
Gemma4MultimodalEmbedder; kvplan.weights.gemma4_towers), held against bytes worked by hand from
the published configs in tests/data/blind26/real/ and against vLLM's own bytes on the blind
shrinks gemma-4-e2b-it and gemma-4-31b-it started with their towers built
(tests/data/oracle/weight-bytes.json, blind26/<case>, measured 2026-12-04 with
tests/oracle/vllm_weight_bytes.py, WEIGHT_BYTES_TOKENIZER=1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.sources.resolve import load_spec
from kvplan.weights.breakdown import weight_breakdown

DATA = Path(__file__).resolve().parent / "data"
REAL = DATA / "blind26" / "real"
SHRUNK = DATA / "blind26" / "shrunk"
MEASURED = json.loads((DATA / "oracle" / "weight-bytes.json").read_text())["cases"]


def test_31b_vision_tower_by_hand() -> None:
    # google/gemma-4-31B-it's vision_config: hidden 1,152, MLP 4,304, 27 layers, 16 heads (and
    # KV heads) of 72, patch 16, position_embedding_size 10,240, standardize true, no clipped
    # linears; text hidden 5,376. transformers modeling_gemma4.py, in elements:
    #   patch_embedder.input_proj 1,152 x 3 x 16^2                           =     884,736
    #   position_embedding_table 2 x 10,240 x 1,152                          =  23,592,960
    #   per layer q, k, v, o 4 x 1,152^2 + MLP 3 x 4,304 x 1,152
    #     + q_norm, k_norm 2 x 72 + four norms 4 x 1,152 = 20,187,792; x 27   = 545,070,384
    #   std_bias, std_scale 2 x 1,152                                        =       2,304
    #   embed_vision.embedding_projection 5,376 x 1,152 (gemma4_mm.py:988)   =   6,193,152
    # 575,743,536 x 2 B = 1,151,487,072, + the rotary's inv_freq and original_inv_freq,
    # float32, of arange(0, 36, 2) = 18 each: 144 B -> 1,151,487,216 B.
    b = weight_breakdown(load_spec(str(REAL / "gemma-4-31b-it.json")), None, dtype="bf16")
    assert b.vision == 1_151_487_216


def test_e2b_vision_and_audio_towers_by_hand() -> None:
    # google/gemma-4-E2B's vision_config: hidden 768, MLP 3,072, 16 layers, 12 heads of 64,
    # clipped linears (four bf16 scalars each, 7 a layer); text hidden 1,536:
    #   768 x 768 + 2 x 10,240 x 768 + 16 x (4 x 768^2 + 3 x 3,072 x 768 + 2 x 64 + 4 x 768
    #   + 28) + 1,536 x 768 = 168,544,704 elements x 2 B + 2 x 16 float32 x 4 B = 337,089,536.
    # audio_config: hidden 1,024, 12 layers, 8 heads, conv kernel 5, channels (128, 32),
    # output_proj_dims 1,536, clipped linears:
    #   subsample 128 x 9 + 128 + 32 x 128 x 9 + 32 + (128 // 4) x 32 x 1,024 = 1,086,752
    #   inv_timescales 512
    #   per layer: two feed-forwards 2 x (8 x 1,024^2 + 8 + 2 x 1,024) = 16,781,328;
    #     attention 5 x 1,024^2 + 16 + 128 + 1 (softcap) = 5,243,025; light conv
    #     3 x 1,024^2 + 8 + 5 x 1,024 + 2 x 1,024 = 3,152,904; three norms 3,072:
    #     25,180,329 x 12                                                    = 302,163,948
    #   output_proj 1,536 x 1,024 + 1,536                                    =   1,574,400
    #   embed_audio.embedding_projection 1,536 x 1,536                       =   2,359,296
    # 307,184,908 elements x 2 B = 614,369,816 B.
    b = weight_breakdown(load_spec(str(REAL / "gemma-4-e2b.json")), None, dtype="bf16")
    assert b.vision == 337_089_536 + 614_369_816


@pytest.mark.parametrize("case", ["gemma-4-e2b-it", "gemma-4-31b-it"])
def test_towers_equal_vllm_on_the_shrinks(case: str) -> None:
    # The towers to the byte; the whole model to the byte but for the language model's scalar
    # buffers kvplan does not count (each attention's four float32 scales, layer_scalar, the
    # model's normalizer and per-layer-input scalars: 188 B on e2b-it, 218 B on 31b-it).
    row = MEASURED[f"blind26/{case}"]
    b = weight_breakdown(load_spec(str(SHRUNK / case)), None, dtype="bf16")
    assert b.vision == row["vision"] + row.get("audio", 0)
    assert b.rope_cache == row["lm_rotary"]
    assert row["params"] + row["buffers"] - b.total == row["text_scalar_buffers"]


def _estimate(model: str, *extra: str):
    return CliRunner().invoke(app, ["estimate", str(REAL / model), "--gpu", "H100",
                                    "--context", "4096", "--format", "json", *extra])


def test_counted_towers_lift_the_refusal_and_leave_with_their_modalities() -> None:
    # The towers are in the weights, so a GPU's budget is derived (their encoder profile stays
    # an assumption); at prompt limits 0 vLLM builds no tower (interfaces.py
    # _mark_tower_model) and the weights drop by the towers' bytes.
    full = _estimate("gemma-4-e2b.json")
    assert full.exit_code == 0, full.stderr
    text = _estimate("gemma-4-e2b.json", "--limit-mm-per-prompt", "image=0,video=0,audio=0")
    assert text.exit_code == 0, text.stderr
    audio = _estimate("gemma-4-e2b.json", "--limit-mm-per-prompt", "image=0,video=0")
    assert audio.exit_code == 0, audio.stderr
    w = {k: json.loads(r.stdout)["weights_bytes"] for k, r in
         (("full", full), ("text", text), ("audio", audio))}
    assert w["full"] - w["text"] == 337_089_536 + 614_369_816
    assert w["audio"] - w["text"] == 614_369_816
    assert any("encoder profile" in a["value"] for a in json.loads(full.stdout)["assumptions"])


def test_quantized_wrapper_towers_still_refused() -> None:
    # gemma4_mm.py:1074-1092 builds the towers with the checkpoint's quantization where their
    # widths allow it, which kvplan does not price: the budget stays refused.
    refused = CliRunner().invoke(app, ["estimate", str(REAL / "gemma-4-31b-it-nvfp4.json"),
                                       "--gpu", "H100", "--context", "4096"])
    assert refused.exit_code == 2 and refused.stdout == ""
    assert "gemma-4-31b-it-nvfp4.json: vision_config:" in refused.stderr


def test_tower_shapes_validated_and_missing_fields_left_uncounted() -> None:
    from kvplan._util.errors import SpecError
    from kvplan.sources.hf_gemma4_towers import parse_tower_shapes, tower_shapes

    config = json.loads((REAL / "gemma-4-e2b.json").read_text())
    shapes = tower_shapes(config)
    assert shapes is not None and parse_tower_shapes(shapes, "x").audio is not None
    del config["vision_config"]["head_dim"]  # a size the file does not state: not counted
    assert tower_shapes(config) is None
    with pytest.raises(SpecError, match="gemma_blocks.tower_shapes.vision.standardize"):
        parse_tower_shapes({"vision": {**shapes["vision"], "standardize": 1}}, "x")
