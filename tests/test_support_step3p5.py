"""Step-3.5-Flash (Step3p5ForCausalLM; kvplan.sources.hf_step3p5): its layer shapes, its vLLM
oracle case and its weights worked out by hand from vLLM 0.32's models/step3p5.py, and the
configs around it that kvplan refuses. The golden KV bytes are in
tests/test_support_layer_shapes.py (GOLDEN_SHAPES); sources: tests/data/configs/
SOURCES-layer-shapes.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import KvplanError, SpecError
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import Engine, plan_inputs
from kvplan.sources.hf_config import load_config, spec_mapping_from_config
from kvplan.weights.breakdown import weight_breakdown
from tests.oracle.vllm_oracle import oracle_inputs

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "configs" / "step-3.5-flash.json"
ORACLE = DATA / "oracle" / "step-3.5-flash"


def test_layer_shapes() -> None:
    spec, _ = load_config(GOLDEN)
    assert spec.exact and spec.num_hidden_layers == 45
    assert [i for i, w in enumerate(spec.layer_windows) if w is None] == list(range(0, 45, 4))
    assert {w for w in spec.layer_windows if w is not None} == {512}
    full, sliding = spec.attention_at(0), spec.attention_at(1)
    assert (full.num_attention_heads, full.num_key_value_heads, full.head_dim) == (64, 8, 128)
    assert (sliding.num_attention_heads, sliding.num_key_value_heads, sliding.head_dim) == (
        96, 8, 128)
    # moe_layers_enum "3,...,44": layers 0-2 dense; one shared expert of share_expert_dim 1280.
    assert spec.moe is not None and spec.moe.first_k_dense_replace == 3
    assert (spec.moe.n_routed_experts, spec.moe.num_experts_per_tok,
            spec.moe.n_shared_experts) == (288, 8, 1)
    assert not spec.tie_word_embeddings


def test_oracle_by_hand() -> None:
    # tests/data/oracle/step-3.5-flash: 6 layers, layer_types [full, s, s, s, full, s]. vLLM
    # 0.32 CPU, block 128, 1 GiB, max_model_len 8192, 2048 batched tokens, no async
    # scheduling. One page of every layer: 128 x 8 x (128 + 128) x 2 B = 524,288 B; groups of
    # 2 layers (2 full, 4 sliding): one full, two sliding (log: "kv cache group sizes (128,
    # 128, 128)"); a block = 2 x 524,288 B, 1 GiB // that = 1,024 blocks. Per request: full
    # cdiv(8192, 128) = 64, sliding 2 x (cdiv(511 + 2048, 128) + 1) = 2 x 21: 106 blocks;
    # 1024 / 106 = 9.66x, int(9.660... x 8192) = 79,137 tokens. kvplan said 79,137 / 9.66x
    # before vLLM ran (commit 2536f5d); vLLM then logged the same.
    run = json.loads((ORACLE / "results.json").read_text())[0]
    assert (run["output"]["kv_cache_tokens"], run["output"]["max_concurrency"]) == (79137, 9.66)
    spec, _ = load_config(ORACLE / "config.json")
    plan = plan_capacity(spec, oracle_inputs(run["output"], run["argv"]))
    assert plan.reported_kv_cache_tokens == 79137 == int(1024 / 106 * 8192)


def test_weights_by_hand() -> None:
    # vLLM 0.32 models/step3p5.py at bf16, TP 1, hidden 4096:
    # - embed_tokens and lm_head (never tied): vocab 128,896 (a multiple of 64) x 4096 x 2 B.
    # - attention, Step3p5Attention: qkv_proj (heads x 128 + 2 x 8 x 128) x 4096, o_proj
    #   4096 x heads x 128, g_proj heads x 4096: full layers (64 heads) 75,759,616 params x 12,
    #   sliding (96) 109,445,120 x 33 = 4,520,804,352 params.
    # - dense: Step3p5MLP gate_up + down 3 x 4096 x 11,264 on layers 0-2, and the shared
    #   expert 3 x 4096 x 1280 on the 42 MoE layers: 415,236,096 + 660,602,880 params.
    # - experts: 42 x 288 x 3 x 4096 x 1280 params at 2 B, plus the float32 router: GateLinear
    #   4096 x 288 and router_bias 288, 42 x 1,179,936 x 4 B = 198,229,248 B.
    # - norms: input / post-attention GemmaRMSNorm per layer and the final norm, 91 x 4096.
    # - rotary tables (get_rope, one per distinct set): full layers rotary_dim 128 x 0.5 = 64,
    #   sliding 128, max_position_embeddings 262,144 rows each: 262,144 x 192 x 2 B.
    # - q_norm / k_norm (GemmaRMSNorm of head_dim, per_head_qk_norm; kvplan.weights.params
    #   qk_norm_params, in the attention group): 45 x 2 x 128 x 2 B = 23,040 B.
    spec, _ = load_config(GOLDEN)
    b = weight_breakdown(spec, None, dtype="bf16")
    assert b.embeddings == b.lm_head == 128896 * 4096 * 2 == 1_055_916_032
    assert b.attention == (12 * 75_759_616 + 33 * 109_445_120) * 2 + 45 * 2 * 128 * 2 \
        == 9_041_631_744
    assert b.dense_mlp == (3 * 3 * 4096 * 11264 + 42 * 3 * 4096 * 1280) * 2
    assert b.experts == 42 * 288 * 3 * 4096 * 1280 * 2 + 42 * (4096 * 288 + 288) * 4
    assert b.norms == 91 * 4096 * 2
    assert b.rope_cache == 262144 * (64 + 128) * 2 == 100_663_296


def test_oracle_case_weights_equal_vllms_tensors() -> None:
    # vLLM 0.32's CPU build on tests/data/oracle/step-3.5-flash (dummy weights), its model's
    # named_parameters and named_buffers summed just before process_weights_after_loading
    # (the CPU build repacks the linear weights after it), 3 December 2026: parameters
    # 1,276,095,584 B, q_norm / k_norm (6 x 2 x 128 x 2 = 3,072 B) among them; rotary
    # cos_sin_cache buffers [262144, 64] and [262144, 128] in bf16,
    # 100,663,296 B (and 24 float32 attention scale scalars, 96 B, counted by kvplan for no
    # model).
    spec, _ = load_config(ORACLE / "config.json")
    b = weight_breakdown(spec, None, dtype="bf16")
    parameters = b.embeddings + b.attention + b.dense_mlp + b.experts + b.lm_head + b.norms
    assert parameters == 1_276_095_584
    assert b.rope_cache == 100_663_296


def _config() -> dict:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize(("change", "field"), [
    # vLLM 0.33 / 0.34 keep num_attention_groups and head_dim on the sliding layers.
    ({"attention_other_setting": {"attention_type": "sliding_attention", "head_dim": 128,
                                  "num_attention_groups": 4, "num_attention_heads": 96}},
     "attention_other_setting.num_attention_groups"),
    ({"moe_layers_enum": "3,5,7"}, "moe_layers_enum"),
    ({"use_head_wise_attn_gate": False}, "use_head_wise_attn_gate"),
    ({"tie_word_embeddings": True}, "tie_word_embeddings"),
    ({"need_fp32_gate": False}, "need_fp32_gate"),
    ({"share_expert_dim": 1000}, "share_expert_dim"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}, "rope_scaling.rope_type"),
])
def test_refused(change: dict, field: str) -> None:
    config = _config() | change
    with pytest.raises(SpecError) as err:
        spec_mapping_from_config(config, path="c.json")
    assert err.value.field == field


@pytest.mark.parametrize("field", ["sliding_window", "num_attention_groups", "moe_num_experts"])
def test_missing_field_is_refused(field: str) -> None:
    config = _config()
    del config[field]
    with pytest.raises(SpecError) as err:
        spec_mapping_from_config(config, path="c.json")
    assert err.value.field == field


def test_layer_types_longer_than_the_layers_are_truncated() -> None:
    # Step3p5Config: `layer_types[: self.num_hidden_layers]` (the checkpoint lists the MTP
    # layers too); without moe_layers_enum every layer but the first is MoE.
    config = _config()
    del config["moe_layers_enum"]
    mapping, _ = spec_mapping_from_config(config, path="c.json")
    assert len(mapping["attention"]["layer_types"]) == 45
    assert mapping["moe"]["first_k_dense_replace"] == 1


@pytest.mark.parametrize(("engine", "version"), [("sglang", None), ("trtllm", None),
                                                 ("vllm", "0.31"), ("vllm", "0.33"),
                                                 ("vllm", "0.34")])
def test_refused_where_not_sized(engine: str, version: str | None) -> None:
    # SGLang and TensorRT-LLM: kvplan has not read their pools for shapes that differ by layer
    # type (their code for Step-3.5 not read); vLLM before 0.32 (architectures.SIZED_SINCE) and
    # after it (SIZED_UNTIL: 0.33 reads step3p5 configs through transformers'
    # Step3p7TextConfig).
    spec, _ = load_config(GOLDEN)
    inputs = plan_inputs(context=8192, kv_budget_bytes=1 << 30, engine=Engine(engine),
                         engine_version=version)
    with pytest.raises(KvplanError):
        plan_capacity(spec, inputs)


def test_sized_at_vllm_0_32() -> None:
    spec, _ = load_config(GOLDEN)
    for version in (None, "0.32", "0.32.0"):
        plan = plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=1 << 30,
                                               engine_version=version))
        assert plan.reported_kv_cache_tokens > 0
