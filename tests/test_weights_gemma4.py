"""Gemma-4's weights as vLLM 0.32 builds them (issue 26, gemma4w): per-layer embeddings, q-only
KV-shared layers, the double-wide MLP of those layers, the dense MLP and three norms beside each
MoE block, the router's scales (kvplan.weights.gemma_blocks, kvplan.weights.routers,
kvplan.sources.hf_gemma_blocks); the wrappers' towers refused or, at a 0 prompt limit, not built
(kvplan.engines.vllm.towers). Held against bytes worked by hand from the published configs in
tests/data/blind26/real/, and against vLLM's own bytes on the oracle shrinks gemma-4-e2b-text,
gemma-4-e4b-text and gemma-4-26b-a4b (tests/data/oracle/weight-bytes.json, measured 2026-12-04
with tests/oracle/vllm_weight_bytes.py; held by
tests/test_weights_rotary_extras.py::test_weights_and_rotary_tables_equal_vllm)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.cli.app import app
from kvplan.sources.resolve import load_spec
from kvplan.weights.breakdown import weight_breakdown
from kvplan.weights.params import count_params
from kvplan.weights.routers import router_bytes

DATA = Path(__file__).resolve().parent / "data"
REAL = DATA / "blind26" / "real"
MEASURED = json.loads((DATA / "oracle" / "weight-bytes.json").read_text())["cases"]


def test_e2b_text_weights_by_hand() -> None:
    # google/gemma-4-E2B's text_config (tests/data/blind26/real/gemma-4-e2b.json): 35 layers,
    # hidden 1,536, 8 query heads and 1 KV head of 256 (full layers 4, 9, ..., 34: of
    # global_head_dim 512), MLP 6,144, vocabulary 262,144 (tied), per-layer width 256 over
    # 262,144 rows, the last 20 layers KV-shared (from 15), use_double_wide_mlp true.
    # vLLM 0.32 models/gemma4.py, in elements:
    #   embed_tokens 262,144 x 1,536                                      =   402,653,184
    #   embed_tokens_per_layer 262,144 x (35 x 256)           (:1027-1032) = 2,348,810,240
    #   per_layer_model_projection 8,960 x 1,536 + norm 256   (:1043-1057) =    13,762,816
    #   final norm                                                        =         1,536
    # attention (:409-446): own layers qkv + o + q_norm + k_norm, shared layers q + o + q_norm
    #   12 sliding own  (2,560 + 2,048) x 1,536 + 512                     =    84,940,800
    #   3 full own      (5,120 + 4,096) x 1,536 + 1,024                   =    42,470,400
    #   16 sliding shared (2,048 + 2,048) x 1,536 + 256                   =   100,667,392
    #   4 full shared   (4,096 + 4,096) x 1,536 + 512                     =    50,333,696
    # MLP 3 x 1,536 x 6,144, twice as wide on the 20 shared layers (:570-582)
    #   15 x 28,311,552 + 20 x 56,623,104                                 = 1,557,135,360
    # per layer: four norms, post_per_layer_input_norm, per_layer_input_gate and
    #   per_layer_projection (:654-690): 35 x (5 x 1,536 + 2 x 256 x 1,536) = 27,793,920
    # total 4,628,569,344 elements = 9,257,138,688 B at bf16; rotary tables: sliding 131,072 x
    # 256, full 131,072 x 512 (the proportional rope keeps head_size wide), x 2 B = 201,326,592.
    spec = load_spec(str(REAL / "gemma-4-e2b.json"))
    assert count_params(spec).total == 4_628_569_344
    b = weight_breakdown(spec, None, dtype="bf16")
    # (the towers beside it: tests/test_weights_gemma4_towers.py)
    assert b.total - b.rope_cache - b.vision == 9_257_138_688
    assert b.rope_cache == 201_326_592


def test_26b_a4b_moe_layer_by_hand() -> None:
    # google/gemma-4-26B-A4B's text_config (gemma-4-26b-a4b-nvfp4.json, its NVFP4 re-release):
    # hidden 2,816, MLP 2,112, 128 experts of 704. vLLM 0.32 models/gemma4.py:587-651: every
    # layer keeps its dense MLP (3 x 2,816 x 2,112 = 17,842,176) beside the experts, with seven
    # norms (the four sandwich norms, post_feedforward_layernorm_1 / _2,
    # pre_feedforward_layernorm_2: 7 x 2,816 = 19,712); Gemma4Router (:298-323) holds scale
    # (2,816), per_expert_scale (128) and proj (128 x 2,816), bf16:
    # (360,448 + 2,816 + 128) x 2 B = 726,784 B.
    spec = load_spec(str(REAL / "gemma-4-26b-a4b-nvfp4.json"))
    layer = count_params(spec).layers[0]
    assert (layer.mlp, layer.norms, layer.router) == (17_842_176, 19_712, 363_392)
    assert router_bytes(spec, 16) == 726_784


def test_26b_a4b_nvfp4_experts_quantized_beside_the_ignored_mlp() -> None:
    # RedHat/NVIDIA's NVFP4 gemma-4-26B-A4B (gemma-4-26b-a4b-nvfp4.json): modelopt NVFP4, group
    # 16, targets Linear, ignore lm_head, the towers and per layer `...layers.N.mlp*`,
    # `.router*`, `.self_attn*`. vLLM 0.32 models/gemma4.py:646-653 builds the experts as
    # `{layer}.experts`, beside `{layer}.mlp` (not under it), so modelopt.py is_layer_excluded
    # (the `mlp*` pattern split into `mlp` and `mlp.*` by apply_vllm_mapper) leaves them NVFP4
    # (ModelOptNvFp4FusedMoE); kvplan looked them up as `mlp.experts` and priced them at bf16.
    # Per expert (hidden 2,816, moe_intermediate 704; kvplan.model.quant_formats.Nvfp4):
    #   w13 1,408 x 2,816: 1,982,464 B at 4 bits + fp8 scales 1,408 x 176 + 2 fp32 = 247,816
    #   w2  2,816 x   704:   991,232 B            + fp8 scales 2,816 x  44 + 2 fp32 = 123,912
    # x 128 experts x 30 layers: weights 11,418,992,640 B, scales 1,427,435,520 B; the router
    # stays bf16 (726,784 B a layer, 21,803,520 B). Before: the experts at bf16,
    # 30 x 128 x 3 x 704 x 2,816 x 2 B = 45,675,970,560 B, a model of 50,897,772,544 B;
    # now 50,897,772,544 - 45,675,970,560 + 11,418,992,640 + 1,427,435,520 = 18,068,230,144 B.
    from kvplan.capacity.weights import weights_breakdown
    from kvplan.weights.base import experts_module

    spec = load_spec(str(REAL / "gemma-4-26b-a4b-nvfp4.json"))
    assert experts_module(spec, 3) == "model.layers.3.experts.0.gate_proj"
    b = weights_breakdown(spec, tp=1)
    assert b.experts == 11_418_992_640 + 21_803_520
    assert b.expert_scales == b.quantization_scales == 1_427_435_520
    assert b.dense_mlp == 30 * 17_842_176 * 2  # the ignored dense MLP stays bf16
    assert b.total == 18_068_230_144
    # Every other MoE keeps its experts under mlp (qwen3_moe.py: `{layer}.mlp.experts`).
    assert experts_module(load_spec(str(DATA / "oracle" / "qwen3-30b-a3b")), 0) == (
        "model.layers.0.mlp.experts.0.gate_proj")


def test_router_bytes_equal_vllm_on_the_shrink() -> None:
    # gemma-4-26b-a4b: 6 layers x (2,816 x 4 + 2,816 + 4) x 2 B = 169,008 B, all bfloat16.
    spec = load_spec(str(DATA / "oracle" / "gemma-4-26b-a4b"))
    assert 6 * router_bytes(spec, 16) == MEASURED["gemma-4-26b-a4b"]["router"] == 169_008


def _estimate(model: str, *extra: str):
    return CliRunner().invoke(app, ["estimate", str(REAL / model), "--gpu", "H100",
                                    "--context", "4096", *extra])


def test_wrapper_towers_counted_unless_not_built() -> None:
    # Gemma4ForConditionalGeneration (gemma4_mm.py:1095-1133) builds a vision tower (for image
    # and video) and, with audio_config, an audio tower beside the language model; kvplan counts
    # both (tests/test_weights_gemma4_towers.py), so a GPU's budget is derived; with every
    # tower's modalities limited to 0 (interfaces.py _mark_tower_model) vLLM builds no tower
    # (the oracle shrink gemma-4-26b-a4b so started holds its text model's parameters only).
    assert _estimate("gemma-4-e2b.json").exit_code == 0
    text_only = _estimate("gemma-4-e2b.json", "--limit-mm-per-prompt", "image=0,video=0,audio=0",
                          "--format", "json")
    assert text_only.exit_code == 0, text_only.stderr
    given = _estimate("gemma-4-e2b.json", "--weights-gib", "10")
    assert given.exit_code == 0, given.stderr
    # gemma-4-31b-it has a vision tower only.
    assert _estimate("gemma-4-31b-it.json").exit_code == 0
    assert _estimate("gemma-4-31b-it.json", "--limit-mm-per-prompt",
                     "image=0,video=0").exit_code == 0


def test_wrapper_per_layer_embedding_buffer_in_the_reserve() -> None:
    # gemma4_mm.py:1143-1156: the wrapper allocates per_layer_embeddings, max_num_batched_tokens
    # x num_layers x hidden_size_per_layer_input in the model dtype, while the model loads:
    # 8,192 x 35 x 256 x 2 B = 146,800,640 B for E2B on an H100 (max_num_batched_tokens 8,192).
    from kvplan.engines.vllm.towers import ple_buffer_bytes

    wrapper = load_spec(str(REAL / "gemma-4-e2b.json"))
    assert ple_buffer_bytes(wrapper, max_num_batched_tokens=8192, element_bytes=2) == 146_800_640
    text = load_spec(str(DATA / "oracle" / "gemma-4-e2b-text"))  # Gemma4ForCausalLM: none
    assert ple_buffer_bytes(text, max_num_batched_tokens=8192, element_bytes=2) == 0
    no_ple = load_spec(str(REAL / "gemma-4-31b-it.json"))  # hidden_size_per_layer_input 0
    assert ple_buffer_bytes(no_ple, max_num_batched_tokens=8192, element_bytes=2) == 0


def test_spec_section_flags_are_booleans() -> None:
    from kvplan.sources.hf_gemma_blocks import parse_gemma_blocks

    sizes = {"altup_num_inputs": 0, "laurel_rank": 0, "hidden_size_per_layer_input": 256,
             "vocab_size_per_layer_input": 262_144}
    blocks = parse_gemma_blocks({**sizes, "double_wide_shared_mlp": True}, "g.yaml")
    assert blocks is not None and blocks.double_wide_shared_mlp
    assert not blocks.dense_mlp_beside_moe
    with pytest.raises(SpecError, match="gemma_blocks.dense_mlp_beside_moe"):
        parse_gemma_blocks({**sizes, "dense_mlp_beside_moe": "yes"}, "g.yaml")
