"""Gemma-3n's weights as vLLM 0.32 builds them (issue 26, gemma3nw): per-layer embeddings, AltUp,
LAuReL, q-only KV-shared layers, the sandwich and q/k norms, and two rotary tables
(kvplan.weights.gemma_blocks, kvplan.sources.hf_gemma_blocks). Held against bytes worked by hand
from google/gemma-3n-E4B-it's text config, and against vLLM's own bytes on the oracle shrink
(tests/test_weights_rotary_extras.py::test_weights_and_rotary_tables_equal_vllm,
gemma-3n-e4b-text: params 2,130,984,512 B and two 16,777,216 B tables, re-measured 2026-12-04
with tests/oracle/vllm_weight_bytes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import SpecError
from kvplan.sources.hf_config import load_config, spec_mapping_from_config
from kvplan.sources.resolve import load_spec
from kvplan.weights.breakdown import weight_breakdown
from kvplan.weights.params import count_params

DATA = Path(__file__).resolve().parent / "data"

# google/gemma-3n-E4B-it's text config (tests/data/configs/gemma-3n-e4b-text.json): 35 layers,
# hidden 2,048, 8 query heads and 2 KV heads of 256, MLP 16,384, vocabulary 262,400 (tied),
# per-layer width 256 over 262,144 rows, AltUp 4, LAuReL rank 64, the last 15 layers KV-shared.
# vLLM 0.32 models/gemma3n.py, in elements:
#   embed_tokens 262,400 x 2,048                                   =   537,395,200
#   embed_tokens_per_layer 262,144 x (35 x 256)          (:567-572) = 2,348,810,240
#   per_layer_model_projection 8,960 x 2,048 + its norm 256 (:580-590) = 18,350,336
#   altup_projections + altup_unembed_projections 2 x 3 x 2,048^2 (:604-615, :839-851)
#                                                                   =    25,165,824
#   final norm                                                      =         2,048
# per layer (x 35):
#   AltUp 4x4 + 16x4 + 4 x 2,048 + router_norm 2,048 (:83-117)      =        10,320
#   MLP 3 x 2,048 x 16,384                                          =   100,663,296
#   LAuReL 2 x 2,048 x 64 + post_laurel_norm 2,048 (:195-217)       =       264,192
#   per_layer_input_gate + per_layer_projection 2 x 2,048 x 256 (:490-505) = 1,048,576
#   five hidden norms (:511-530)                                    =        10,240
# attention: 20 layers qkv 3,072 x 2,048 + o 2,048 x 2,048 + q_norm, k_norm 256 each
#   = 10,486,272; 15 KV-shared layers q 2,048 x 2,048 + o + q_norm (:318-347) = 8,388,864.
# Total 2,929,723,648 + 35 x 101,996,624 + 20 x 10,486,272 + 15 x 8,388,864 = 6,835,163,888
# bf16 elements, 13,670,327,776 B; and correct_output_scale, float32 (:118-120): 35 x 2,048 x
# 4 B = 286,720 B.
E4B_PARAMS = 6_835_163_888 + 35 * 2_048
E4B_BYTES = 13_670_327_776 + 286_720
# Two cos/sin tables (:365-370, get_rope per rope_parameters[layer_type]): rope_theta 1e6 and
# rope_local_base_freq 1e4, each 32,768 rows x 256 x 2 B.
E4B_ROPE = 2 * 32_768 * 256 * 2


def _spec(name: str):
    return load_config(DATA / "configs" / f"{name}.json")[0]


def test_gemma3n_e4b_weights_by_hand() -> None:
    spec = _spec("gemma-3n-e4b-text")
    b = weight_breakdown(spec, None, dtype="bf16")
    assert b.total - b.rope_cache == E4B_BYTES
    assert b.rope_cache == E4B_ROPE
    assert count_params(spec).total == E4B_PARAMS


def test_bundled_spec_and_wrapper_config_agree() -> None:
    # The bundled YAML (model_specs/gemma-3n-e4b.yaml) and the multimodal wrapper's config build
    # the same language model; the towers stay an assumption (kvplan.sources.hf_wrappers).
    for spec in (load_spec("gemma-3n-e4b"), _spec("gemma-3n-e4b")):
        b = weight_breakdown(spec, None, dtype="bf16")
        assert (b.total - b.rope_cache, b.rope_cache) == (E4B_BYTES, E4B_ROPE)
        assert not spec.exact


def test_tensor_parallel_split() -> None:
    # TP 2: the per-layer vocabulary table, per_layer_model_projection, the AltUp (un)embed
    # projections and LAuReL's linears split (VocabParallelEmbedding, Column/RowParallelLinear);
    # AltUp's coefficients and router, the per-layer gate and projection are ReplicatedLinear.
    # Halved, in elements: 2,348,810,240 / 2 + 18,350,080 / 2 + 25,165,824 / 2 and 35 x 262,144
    # / 2 of LAuReL = 1,200,750,592 fewer; x 2 B.
    spec = _spec("gemma-3n-e4b-text")
    one = weight_breakdown(spec, None, dtype="bf16")
    two = weight_breakdown(spec, None, dtype="bf16", tp=2)
    moved = (one.embeddings + one.dense_mlp) - (two.embeddings + two.dense_mlp)
    # the main embedding (262,400 x 2,048) and the MLPs (35 x 100,663,296) halve too
    assert moved == 2 * (1_200_750_592 + 537_395_200 // 2 + 35 * 100_663_296 // 2)


def test_one_table_when_the_bases_agree() -> None:
    config = json.loads((DATA / "configs" / "gemma-3n-e4b-text.json").read_text())
    config["rope_local_base_freq"] = config["rope_theta"]
    mapping, _ = spec_mapping_from_config(config, path="gemma-3n.json")
    assert mapping["rope_tables"] == [32_768]


def test_rope_scaling_refused() -> None:
    config = json.loads((DATA / "configs" / "gemma-3n-e4b-text.json").read_text())
    config["rope_scaling"] = {"rope_type": "linear", "factor": 2.0}
    with pytest.raises(SpecError, match="rope_scaling"):
        spec_mapping_from_config(config, path="gemma-3n.json")


def test_wrapper_towers_refuse_the_budget_from_the_gpu() -> None:
    # Gemma3nForConditionalGeneration (vLLM 0.32 models/gemma3n_mm.py:616-640) loads a timm
    # MobileNetV5 vision tower, an audio conformer and their embedders, and allocates
    # per_layer_embeddings (max_num_batched_tokens x 35 x 256 x 2 B: 146.8 MB at 8,192 tokens)
    # beside the language model; kvplan counts none of them, so a GPU's budget is refused
    # unless the weights or the budget are given (exit 2, the file and the towers named).
    from typer.testing import CliRunner

    from kvplan.cli.app import app

    runner = CliRunner()
    wrapper = str(DATA / "configs" / "gemma-3n-e4b.json")
    for model in (wrapper, "gemma-3n-e4b"):
        result = runner.invoke(app, ["estimate", model, "--gpu", "H100", "--context", "8k"])
        assert result.exit_code == 2
        assert "vision_config, audio_config" in result.stderr
        assert "--weights-gib" in result.stderr
    given = runner.invoke(app, ["estimate", wrapper, "--gpu", "H100", "--context", "8k",
                                "--weights-gib", "16"])
    assert given.exit_code == 0, given.stderr
    text = runner.invoke(app, ["estimate", str(DATA / "configs" / "gemma-3n-e4b-text.json"),
                               "--gpu", "H100", "--context", "8k"])
    assert text.exit_code == 0, text.stderr


def test_spec_section_refuses_unknown_keys() -> None:
    from kvplan.sources.hf_gemma_blocks import parse_gemma_blocks

    sizes = {"altup_num_inputs": 4, "laurel_rank": 64, "hidden_size_per_layer_input": 256,
             "vocab_size_per_layer_input": 262_144}
    assert parse_gemma_blocks(sizes, "g.yaml").towers == ()
    with pytest.raises(SpecError, match="gemma_blocks"):
        parse_gemma_blocks({**sizes, "altup_rank": 1}, "g.yaml")
    with pytest.raises(SpecError, match="gemma_blocks.towers"):
        parse_gemma_blocks({**sizes, "towers": "vision_config"}, "g.yaml")
