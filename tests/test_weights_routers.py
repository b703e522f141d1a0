"""MoE routers priced as vLLM builds them (issue 26, kvplan/weights/routers.py): the gate's dtype,
the float32 score-correction bias and the Qwen-only shared-expert gate, by hand from real
published configs (tests/data/configs/, provenance in SOURCES-*.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.dtypes import get_dtype
from kvplan.sources.checkpoint import from_headers
from kvplan.sources.resolve import load_spec
from kvplan.weights.base import engine_dtype
from kvplan.weights.breakdown import weight_breakdown
from kvplan.weights.checkpoint import checkpoint_breakdown
from kvplan.weights.params import count_params
from kvplan.weights.routers import ROUTERS, router_build, router_bytes

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"


def _moe_layers(spec) -> int:
    return sum(spec.moe.is_moe_layer(i) for i in range(spec.num_hidden_layers)
               if spec.has_mlp(i))


@pytest.mark.parametrize(("config", "layers", "per_layer"), [
    # XiaomiMiMo/MiMo-V2-Flash: hidden 4096, 256 routed experts, moe_layer_freq 47 of 48 layers.
    # models/mimo_v2.py:158-170 (vLLM 0.32): the gate in moe_router_dtype, default float32, and
    # e_score_correction_bias in float32: 256 x 4096 x 4 + 256 x 4 = 4,195,328 B a layer,
    # 47 x 4,195,328 = 197,180,416 B (kvplan counted 47 x 2,097,152 = 98,566,144 B in bf16).
    ("mimo-v2-flash", 47, 256 * 4096 * 4 + 256 * 4),
    # meituan-longcat/LongCat-Flash-Chat: 28 decoder layers (each one MoE), hidden 6144,
    # 512 routed + 256 zero experts. models/longcat_flash.py:153-167, 190: classifier and
    # e_score_correction_bias in float32, 768 wide: 768 x 6144 x 4 + 768 x 4 = 18,877,440 B,
    # x 28 = 528,568,320 B (264,327,168 B more than in bf16).
    ("longcat-flash-chat", 28, 768 * 6144 * 4 + 768 * 4),
    # MiniMaxAI/MiniMax-M2: 62 layers, hidden 3072, 256 experts, use_routing_bias true.
    # models/minimax_m2.py:85-116: the gate float32, the bias float32:
    # 256 x 3072 x 4 + 256 x 4 = 3,146,752 B a layer.
    ("minimax-m2", 62, 256 * 3072 * 4 + 256 * 4),
    # deepseek-ai/DeepSeek-V3: 61 layers, first_k_dense_replace 3, hidden 7168, 256 experts,
    # topk_method noaux_tc. models/deepseek_v2.py:320-332: the gate in the compute dtype (bf16),
    # e_score_correction_bias float32: 256 x 7168 x 2 + 256 x 4 = 3,671,040 B a layer.
    ("deepseek-v3", 58, 256 * 7168 * 2 + 256 * 4),
    # Qwen/Qwen2-57B-A14B: 28 layers, hidden 3584, 64 experts, one shared expert (20,480 wide).
    # models/qwen2_moe.py:142-153: gate and shared_expert_gate (1 x 3584) in bf16, no bias:
    # (64 + 1) x 3584 x 2 = 465,920 B a layer.
    ("qwen2-57b-a14b", 28, 65 * 3584 * 2),
    # ibm-granite/granite-swash-3b-a600m (GraniteMoeSWA): 28 layers, hidden 1280, 48 experts
    # and a shared MLP (shared_intermediate_size 1280) without a gate (granitemoeshared.py:
    # 110-114): 48 x 1280 x 2 = 122,880 B a layer, no shared-expert gate.
    ("granite-swash-3b-a600m", 28, 48 * 1280 * 2),
])
def test_router_bytes_by_hand(config: str, layers: int, per_layer: int) -> None:
    spec = load_spec(str(CONFIGS / f"{config}.json"))
    assert _moe_layers(spec) == layers
    assert router_bytes(spec, 16) == per_layer


def test_granite_shared_mlp_has_no_gate_parameter() -> None:
    # GraniteMoeSWA's router: 48 x 1280 = 61,440 parameters a layer (the shared MLP's gate that a
    # Qwen block would add, 1,280, is not built): the oracle shrink's +20,160 B went with it.
    spec = load_spec(str(CONFIGS / "granite-swash-3b-a600m.json"))
    assert {x.router for x in count_params(spec).layers} == {48 * 1280}


def test_every_entry_names_its_vllm_source() -> None:
    for name, build in ROUTERS.items():
        assert build.source.startswith("models/"), name
        assert build.score_bias in ("always", "config", "never"), name


def test_spec_file_without_architectures_takes_its_model_type_row(tmp_path: Path) -> None:
    # A spec file that names no architectures (model_specs/deepseek-v3.yaml without the field
    # presetarch68 gave it): its model_type's row of the support table (DeepseekV3ForCausalLM)
    # gives the router; its score_bias is stated in the file.
    import yaml

    data = yaml.safe_load((Path(__file__).resolve().parents[1] / "model_specs"
                           / "deepseek-v3.yaml").read_text())
    assert data.pop("architectures") == ["DeepseekV3ForCausalLM"]
    (tmp_path / "deepseek-v3.yaml").write_text(yaml.safe_dump(data))
    spec = load_spec(str(tmp_path / "deepseek-v3.yaml"))
    assert spec.architectures == ()
    assert router_build(spec) is ROUTERS["DeepseekV3ForCausalLM"]
    assert spec.moe.score_bias


def test_checkpoint_router_held_in_float32() -> None:
    # MiniMax-M2's checkpoint stores each layer's router as a (256, 3072) BF16 matrix and its
    # e_score_correction_bias as (256,); vLLM 0.32 (models/minimax_m2.py:85-116) builds both in
    # float32: 256 x 3072 x 4 + 256 x 4 = 3,146,752 B for one layer, where converting the
    # stored tensors to the compute dtype gave 256 x 3072 x 2 + 256 x 2 = 1,573,376 B.
    spec = load_spec("minimax-m2")
    header = {
        "model.layers.0.block_sparse_moe.gate.weight": {
            "dtype": "BF16", "shape": [256, 3072], "data_offsets": [0, 256 * 3072 * 2]},
        "model.layers.0.block_sparse_moe.e_score_correction_bias": {
            "dtype": "BF16", "shape": [256], "data_offsets": [0, 256 * 2]},
    }
    ckpt = from_headers("x", {"a.safetensors": header}, None,
                        num_hidden_layers=spec.num_hidden_layers)
    b = checkpoint_breakdown(ckpt, spec, None, dtype="bf16", layers=range(0, 1))
    assert b.experts + b.dense_mlp + b.norms == 3_146_752


ORACLE = Path(__file__).resolve().parent / "data" / "oracle"
MEASURED = json.loads((ORACLE / "weight-bytes.json").read_text())["cases"]
# Cases whose every parameter byte kvplan now counts as vLLM 0.32 holds it (before this table:
# LongCat -73,872 B, ERNIE -122,976 B, GLM-4.7-Flash -98,400 B, the float32 routers and biases;
# DeepSeek-V3 -32 B, its score bias), and MoE cases that were exact and stay so.
WHOLE = ("longcat-flash-chat", "ernie-4.5-21b-a3b", "glm-4.7-flash", "deepseek-v3",
         "deepseek-v2-lite", "ling-lite-1.5", "mixtral-8x7b", "qwen2-57b-a14b")


# DeepSeek-V4's routers (a score bias on its non-hash layers only) are counted with its blocks,
# kvplan.weights.csa, and held whole against vLLM in tests/test_weights_dsv4.py. The MoE cases (the
# file also holds dense and hybrid shrinks, measured for wgaps2's rotary tables:
# tests/test_weights_rotary_extras.py).
@pytest.mark.parametrize("case", sorted(c for c, row in MEASURED.items()
                                        if row.get("router") and not c.startswith("deepseek-v4/")))
def test_router_bytes_equal_vllm_on_the_oracle(case: str) -> None:
    # vLLM's own router / gate / score-bias parameters after loading the shrunk config
    # (tests/oracle/vllm_weight_bytes.py): kvplan's router bytes per MoE layer times its MoE
    # layers, in the model dtype the case's config gives.
    spec = load_spec(str(ORACLE / case))
    bits = get_dtype(engine_dtype(spec.weight_dtype if spec.weight_dtype_stated else None))
    assert _moe_layers(spec) * router_bytes(spec, bits.element_bits) == MEASURED[case]["router"]


@pytest.mark.parametrize("case", WHOLE)
def test_whole_weights_equal_vllm_on_the_oracle(case: str) -> None:
    spec = load_spec(str(ORACLE / case))
    b = weight_breakdown(spec, None, dtype=engine_dtype(spec.weight_dtype))
    assert b.total - b.rope_cache == MEASURED[case]["params"]
