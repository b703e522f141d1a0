"""Weights vLLM builds that kvplan did not count (issue 26, the gaps that are not routers): the
attention output gate, per-head q/k norms and sandwich norms (kvplan.weights.params), held
against hand-worked bytes from real configs and against vLLM 0.32's own parameter bytes on the
oracle shrinks (tests/oracle/vllm_weight_bytes.py, tests/data/oracle/weight-bytes.json); and
gpt-oss's float32 rotary table (kvplan.weights.base.rope_cache_bytes)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvplan.sources.hf_config import load_config
from kvplan.sources.resolve import load_spec
from kvplan.weights.base import engine_dtype
from kvplan.weights.breakdown import weight_breakdown
from kvplan.weights.params import count_params

DATA = Path(__file__).resolve().parent / "data"
OFF = {"attention_output_gate": False, "per_head_qk_norm": False, "sandwich_norms": False}


def _extra(name: str) -> tuple[int, int]:
    """(parameters, bf16 weight bytes) the three features add to a real config."""
    spec, _ = load_config(DATA / "configs" / f"{name}.json")
    plain = replace(spec, **OFF)
    params = count_params(spec).total - count_params(plain).total
    b = (weight_breakdown(spec, None, dtype="bf16").total
         - weight_breakdown(plain, None, dtype="bf16").total)
    return params, b


def test_trinity_mini_gate_qk_norms_and_sandwich_norms() -> None:
    # arcee-ai/Trinity-Mini config.json: 32 layers, hidden 2048, 32 heads of 128.
    # vLLM 0.32 models/afmoe.py:216-222 gate_proj = ColumnParallelLinear(hidden, 32 x 128):
    #   4,096 x 2,048 = 8,388,608 per layer, x 32 = 268,435,456;
    # :225-226 q_norm, k_norm of head_dim: 2 x 128 x 32 = 8,192;
    # :331-332 pre_mlp_layernorm and post_mlp_layernorm beside input / post_attention:
    #   2 more x 2,048 x 32 = 131,072.
    # 268,574,720 parameters, 537,149,440 B in bf16 (0.50 GiB) kvplan did not count.
    assert _extra("trinity-mini") == (268_574_720, 537_149_440)


def test_qwen3_next_gate_rows_and_qk_norms() -> None:
    # Qwen/Qwen3-Next-80B-A3B-Instruct config.json: 48 layers, full attention every 4th (12
    # layers), hidden 2048, 16 heads of 256. vLLM 0.32 models/qwen3_next.py:317-321 builds
    # qkv_proj with 16 x (1 + attn_output_gate) query heads: 16 x 256 x 2,048 = 8,388,608 gate
    # weights per layer, x 12 = 100,663,296; :370-371 q_norm, k_norm: 2 x 256 x 12 = 6,144.
    # 100,669,440 parameters, 201,338,880 B in bf16.
    assert _extra("qwen3-next-80b-a3b") == (100_669_440, 201_338_880)


def test_qwen3_6_takes_qwen3_next_attention() -> None:
    # Qwen/Qwen3.6-35B-A3B text config: 40 layers, full attention every 4th (10), hidden 2048,
    # 16 heads of 256; models/qwen3_5.py builds Qwen3NextAttention: 10 x (16 x 256 x 2,048 +
    # 2 x 256) = 83,891,200 parameters, 167,782,400 B in bf16.
    assert _extra("qwen3.6-35b-a3b-text") == (83_891_200, 167_782_400)


def test_gate_rows_split_over_tensor_parallel() -> None:
    # The gate is column-parallel like q: at TP 4 each rank holds a quarter of its rows,
    # the q/k norms whole: Trinity-Mini 32 x (4,096 / 4 x 2,048 + 2 x 128 + 2 x 2,048) x 2 B.
    spec, _ = load_config(DATA / "configs" / "trinity-mini.json")
    plain = replace(spec, **OFF)
    got = (weight_breakdown(spec, None, dtype="bf16", tp=4).total
           - weight_breakdown(plain, None, dtype="bf16", tp=4).total)
    assert got == 32 * (1024 * 2048 + 2 * 128 + 2 * 2048) * 2


MEASURED = json.loads((DATA / "oracle" / "weight-bytes.json").read_text())["cases"]


@pytest.mark.parametrize("case", ["trinity-mini", "qwen3-30b-a3b"])
def test_whole_weights_equal_vllm(case: str) -> None:
    # Trinity was 134,287,360 B short (gate 134,217,728 + sandwich norms 65,536 + q/k norms
    # 4,096 on the 8-layer shrink), Qwen3-30B-A3B 2,048 B (its q/k norms).
    spec = load_spec(str(DATA / "oracle" / case))
    b = weight_breakdown(spec, None, dtype=engine_dtype(spec.weight_dtype))
    assert b.total - b.rope_cache == MEASURED[case]["params"]


@pytest.mark.parametrize("case", ["qwen3-next-80b-a3b", "qwen3.6-35b-a3b-text"])
def test_gated_delta_net_weights_equal_vllm(case: str) -> None:
    # Were 16,779,648 and 33,556,864 B short, then 384 B after wgaps: the six GatedDeltaNet
    # layers' A_log, 32 values each held in float32 (layers/mamba/gdn/qwen_gdn_linear_attn.py:
    # 555-560), priced since wgaps2 (kvplan.weights.params.recurrent_float32_params): 6 x 32 x 2 B.
    spec = load_spec(str(DATA / "oracle" / case))
    b = weight_breakdown(spec, None, dtype=engine_dtype(spec.weight_dtype))
    assert MEASURED[case]["params"] == b.total - b.rope_cache


def test_gpt_oss_rope_table_in_float32() -> None:
    # openai/gpt-oss-20b config.json: max_position_embeddings 131,072, head_dim 64; vLLM 0.32
    # models/gpt_oss.py:110-113 get_rope(..., dtype=torch.float32): 131,072 x 64 x 4 B =
    # 33,554,432 B whatever the model dtype (the oracle shrink's cos_sin_cache: float32,
    # [131072, 64]); bf16 pricing gave 16,777,216.
    spec, _ = load_config(DATA / "configs" / "gpt-oss-20b.json")
    assert weight_breakdown(spec, None, dtype="bf16").rope_cache == 33_554_432


@pytest.mark.parametrize(("case", "measured", "layers", "per_layer"), [
    ("olmo-2-0325-32b", "olmo-2-0325-32b", 4, (40 + 8) * 128),
    ("olmo2-7b", "olmo2-7b-sweep57", 8, (32 + 32) * 128),
    ("olmo3-7b", "olmo3-7b-sweep57", 8, (32 + 32) * 128)])
def test_olmo2_olmo3_full_width_qk_norms(case: str, measured: str, layers: int,
                                         per_layer: int) -> None:
    # vLLM 0.32 serves Olmo2ForCausalLM / Olmo3ForCausalLM with the Transformers backend
    # (registry.py _TRANSFORMERS_SUPPORTED_MODELS), i.e. transformers 5.19's Olmo2Attention
    # (modeling_olmo2.py:213-214; Olmo3: modeling_olmo3.py:161-162): q_norm over
    # num_attention_heads x head_dim, k_norm over num_key_value_heads x head_dim, whole.
    # By hand, OLMo-2-0325-32B (40 heads, 8 KV heads of 128): 5,120 + 1,024 = 6,144 bf16 weights
    # a layer, 4 layers of the shrink = 49,152 B, which kvplan missed until sizefix57 (the sweep's
    # weight probe found it); olmo2-7b / olmo3-7b (32 and 32 heads): 8,192 a layer, 131,072 B.
    spec = load_spec(str(DATA / "oracle" / case))
    assert spec.replicated_qk_norm
    b = weight_breakdown(spec, None, dtype=engine_dtype(spec.weight_dtype))
    assert b.total - b.rope_cache == MEASURED[measured]["params"]
    without = weight_breakdown(replace(spec, replicated_qk_norm=False), None,
                               dtype=engine_dtype(spec.weight_dtype))
    assert b.total - without.total == layers * per_layer * 2
