"""SGLang's --ep-num-redundant-experts (kvplan.capacity.weights.redundant_experts_held, read in
SGLang 0.5.8.post1): each MoE layer builds n_routed + redundant physical experts, spread over
the EP ranks, every copy holding a logical expert's weights, so each rank holds more expert
weights and less KV. Worked out by hand for DeepSeek-V3 (its config.json: 61 layers,
first_k_dense_replace 3, so 58 MoE layers; 256 routed experts of hidden 7,168 x
moe_intermediate_size 2,048; FP8 weights in 128 x 128 blocks with fp32 scales) at the srt-slurm
DeepEP recipes' setting, 32 redundant experts."""

from __future__ import annotations

import pytest

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.capacity.plan import plan_capacity
from kvplan.capacity.weights import redundant_experts_held, weights_breakdown
from kvplan.engines.base import Engine, plan_inputs
from kvplan.sources.resolve import load_model

DEEPEP = {"moe_a2a_backend": "deepep", "moe_dense_tp_size": 1, "enable_dp_lm_head": True}
# One routed expert of one layer: gate, up and down, each 7,168 x 2,048 FP8 (14,680,064 B):
# 44,040,192 B; their 128 x 128 block scales, (2,048 / 128) x (7,168 / 128) = 896 fp32 a
# matrix: 3 x 896 x 4 = 10,752 B.
EXPERT_BYTES, EXPERT_SCALE_BYTES, MOE_LAYERS = 44_040_192, 10_752, 58


@pytest.fixture(scope="module")
def v3():  # type: ignore[no-untyped-def]
    spec, _ = load_model("deepseek-v3")
    assert spec.moe is not None and spec.moe.n_routed_experts == 256
    assert sum(spec.moe.is_moe_layer(i) for i in range(spec.num_hidden_layers)) == MOE_LAYERS
    return spec


def test_experts_a_rank_holds() -> None:
    # expert_location.py:199-205 / fused_moe_triton/layer.py:194-197: (256 + 32) / ep a rank.
    assert redundant_experts_held(256, 32, 32) == 9  # 8 without them
    assert redundant_experts_held(256, 32, 8) == 36  # 32 without them
    assert redundant_experts_held(256, 0, 32) == 8


def test_divisibility_rule() -> None:
    # 288 = 12 x 24 divides; 256 + 16 = 272 does not divide over 32 ranks (SGLang's assert).
    assert redundant_experts_held(256, 32, 12) == 24
    with pytest.raises(InputError, match="divide over EP 32"):
        redundant_experts_held(256, 16, 32)


def test_redundant_weights_by_hand(v3) -> None:  # type: ignore[no-untyped-def]
    # EP 32 (the recipes' decode): 9 experts a rank a layer instead of 8, so 58 x 44,040,192 =
    # 2,554,331,136 B more expert weights and 58 x 10,752 = 623,616 B more scales a rank
    # (2,554,954,752 B, 2.38 GiB). The experts group: 58 x 9 x 44,040,192 = 22,988,980,224 B,
    # plus the routers, whole and unchanged (the gate is built over the 256 logical experts):
    # 58 x (256 x 7,168 x 2 B bf16 + 256 x 4 B fp32 correction bias) = 212,920,320 B;
    # 23,201,900,544 B.
    base = weights_breakdown(v3, tp=32, ep=32, dp_attention=True)
    more = weights_breakdown(v3, tp=32, ep=32, dp_attention=True, redundant_experts=32)
    assert more.experts == 58 * 9 * EXPERT_BYTES + 58 * (256 * 7168 * 2 + 256 * 4)
    assert more.experts == 23_201_900_544
    assert more.experts - base.experts == MOE_LAYERS * EXPERT_BYTES == 2_554_331_136
    assert more.expert_scales - base.expert_scales == MOE_LAYERS * EXPERT_SCALE_BYTES == 623_616
    assert more.total - base.total == 2_554_954_752
    # EP 8 (the recipes' normal-mode prefill): 36 instead of 32, 4 x as much.
    base8 = weights_breakdown(v3, tp=8, ep=8, dp_attention=True)
    more8 = weights_breakdown(v3, tp=8, ep=8, dp_attention=True, redundant_experts=32)
    assert more8.total - base8.total == 4 * 2_554_954_752 == 10_219_819_008


def test_they_come_out_of_the_kv_pool(v3) -> None:  # type: ignore[no-untyped-def]
    # SGLang sizes its pool after loading the weights (model_runner.py init_memory_pool after
    # load_model): the redundant experts' 2,554,954,752 B a rank leave the KV budget.
    def cap(redundant: int):  # type: ignore[no-untyped-def]
        return plan_capacity(v3, plan_inputs(
            context=2048, engine=Engine.sglang, engine_version="0.5.8.post1", tp=32, ep=32,
            dp_attention=True, total_bytes=192 * 10**9, mem_fraction=0.82,
            ep_num_redundant_experts=redundant, **DEEPEP))

    base, more = cap(0), cap(32)
    assert more.weights_bytes - base.weights_bytes == 2_554_954_752
    assert base.kv_budget_bytes - more.kv_budget_bytes == 2_554_954_752
    assert more.token_capacity < base.token_capacity


def test_refused_without_ep(v3) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnmodelledError, match="--ep-num-redundant-experts 32"):
        weights_breakdown(v3, tp=8, ep=1, redundant_experts=32)


def test_estimate_flag(v3) -> None:  # type: ignore[no-untyped-def]
    # `kvplan estimate --ep-num-redundant-experts 32` at TP 8 with EP over it (B200, SGLang
    # 0.5.8.post1): 36 experts a rank instead of 32, the 10,219,819,008 B worked out above more
    # weights and that much less KV budget.
    from typer.testing import CliRunner

    from kvplan.cli import app

    def run(redundant: int) -> dict:  # type: ignore[type-arg]
        out = CliRunner().invoke(app, [
            "estimate", "deepseek-v3", "--engine", "sglang", "--engine-version", "0.5.8.post1",
            "--tp", "8", "--enable-expert-parallel", "--dp-attention", "--gpu", "B200",
            "--ep-num-redundant-experts", str(redundant), "--format", "json"])
        assert out.exit_code == 0, out.output
        import json

        return json.loads(out.stdout)

    base, more = run(0), run(32)
    assert more["weights_bytes"] - base["weights_bytes"] == 10_219_819_008
    assert base["kv_budget_bytes"] - more["kv_budget_bytes"] == 10_219_819_008
