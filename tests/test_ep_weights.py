"""Expert-parallel weights per rank (task eptpw56): an EP rank holds the routed experts
kvplan.weights.expert_layout.experts_on_rank gives it (ceil(E / ep) on the busiest), each whole
with its own biases and the kernel's padding of its width, the router whole on every rank; the
shared experts stay split over the TP group like a dense MLP. Until eptpw56 one rank's routed
experts were derived as (whole - slice) x ep / (ep - 1) from two TP breakdowns, which is exact
only where an expert's bytes are linear in its width: it kept every expert's down-projection
bias (hidden, whole on every TP rank) and mispriced padded widths and block scales.

Checked against vLLM 0.32's own per-rank bytes (tests/data/oracle/ep-weights), by hand on
gpt-oss-120b and DeepSeek-V3, against the checkpoint path, and by properties."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvplan import load_spec
from kvplan._util.errors import UnmodelledError
from kvplan.capacity.weights import loaded_formats, weights_breakdown
from kvplan.engines.base import Engine
from kvplan.model.spec import ModelSpec
from kvplan.sources.resolve import load_model
from kvplan.weights.breakdown import weight_breakdown
from kvplan.weights.expert_layout import busiest_rank_experts, experts_on_rank
from tests.test_checkpoint_weights import make_folder

DATA = Path(__file__).parent / "data"
EP_ORACLE = DATA / "oracle" / "ep-weights"
ORACLE = json.loads((EP_ORACLE / "weight-bytes.json").read_text())["cases"]


def _routed(spec: ModelSpec, held: int, tp: int = 1) -> tuple[int, int]:
    """(weights, scales) of `held` routed experts of every MoE layer, each split over `tp`,
    without the routers (the same breakdown holding no expert)."""
    quant, dtype = loaded_formats(spec)
    some = weight_breakdown(spec, quant, dtype=dtype, tp=tp, held_experts=held)
    none = weight_breakdown(spec, quant, dtype=dtype, tp=tp, held_experts=0)
    return some.experts - none.experts, some.expert_scales - none.expert_scales


def _moe_layers(spec: ModelSpec) -> int:
    assert spec.moe is not None
    return sum(spec.moe.is_moe_layer(i) for i in range(spec.num_hidden_layers))


# --- vLLM 0.32 itself: TP 2 + --enable-expert-parallel, 5 experts over 2 ranks ----------------
# tests/data/oracle/ep-weights/README.md. Rank 0 holds 3 experts, rank 1 two
# (expert_map_manager.py:66-69). vLLM's count of the routed experts includes FusedMoE's int32
# expert map, E = 5 entries a MoE layer (20 B), which kvplan leaves out.
# By hand, gpt-oss-e5-bf16 (hidden 128, width 128, 2 layers): an expert is w13 256 x 128 + its
# bias 256 + w2 128 x 128 + its bias 128 = 49,536 bf16 = 99,072 B; rank 0: 3 x 99,072 x 2 =
# 594,432 B (+ 40 B of expert maps = vLLM's 594,472). The whole-minus-slice rule gave 595,456:
# the slice at TP 2 keeps the 128-wide down bias whole, so the 2 experts of rank 1 kept theirs
# on rank 0 (2 x 128 x 2 B x 2 layers = 1,024 B more).


@pytest.mark.parametrize("case", sorted(ORACLE))
def test_each_rank_holds_what_vllm_holds(case: str) -> None:
    spec = load_spec(str(EP_ORACLE / case / "config.json"))
    assert spec.moe is not None and spec.moe.n_routed_experts == 5
    expert_map = _moe_layers(spec) * spec.moe.n_routed_experts * 4
    for rank in ORACLE[case]["ranks"]:
        held = experts_on_rank(5, 2, rank["tp_rank"])
        assert held == (3, 2)[rank["tp_rank"]]
        assert _routed(spec, held) == (rank["experts"] - expert_map, 0)
    # The busiest rank as a whole: every parameter (kvplan's total less the rotary table,
    # which vLLM holds as a buffer), the shared experts split over TP 2 like a dense MLP.
    rank0 = ORACLE[case]["ranks"][0]
    w = weights_breakdown(spec, tp=2, ep=2)
    assert w.total - w.rope_cache == rank0["params"]
    if case == "qwen2-moe-e5":  # every layer MoE: the dense-MLP group is the shared experts
        assert w.dense_mlp == rank0["shared_experts"] == 2 * 3 * 256 // 2 * 128 * 2


def test_gpt_oss_e5_by_hand() -> None:
    spec = load_spec(str(EP_ORACLE / "gpt-oss-e5-bf16" / "config.json"))
    assert _routed(spec, 3) == (3 * 99_072 * 2, 0) == (594_432, 0)
    assert ORACLE["gpt-oss-e5-bf16"]["ranks"][0]["experts"] == 594_432 + 40


# --- gpt-oss-120b, EP 8 (TP 8), mxfp4 experts on vLLM's Marlin MoE -----------------------------
# Per expert (tests/test_weights.py test_gpt_oss_120b_mxfp4_marlin_h100: width 2880 padded to
# 2944, hidden to 3072): 13,565,952 B of 4-bit weights + 17,920 B of bf16 biases = 13,583,872
# B, and 847,872 B of e8m0 scales. 128 experts over EP 8: 16 whole on each rank, x 36 layers:
# 16 x 13,583,872 x 36 = 7,824,310,272, + the routers 36 x 2880 x 128 x 2 = 26,542,080 and
# their bias 36 x 128 x 2 = 9,216: 7,850,861,568 B. Scales 16 x 847,872 x 36 = 488,374,272.
# The whole-minus-slice rule gave 8,215,667,712 B and 509,607,936 B (+368 MiB a GPU): the TP-8
# slice's width 360 pads to 384, not 1/8 of 2944, and the down biases stayed whole.


def test_gpt_oss_120b_ep8_by_hand() -> None:
    w = weights_breakdown(load_spec("gpt-oss-120b"), tp=8, ep=8)
    assert w.experts == 16 * 13_583_872 * 36 + 26_542_080 + 9_216 == 7_850_861_568
    assert w.expert_scales == 16 * 847_872 * 36 == 488_374_272


# --- DeepSeek-V3, DP attention + EP 72 (LMSYS's 9-node decode, tests/benches/cost_cases.py) ------
# 256 experts over 72 ranks: 256 = 3 x 72 + 40, so ranks 0-39 hold 4 and the rest 3; the
# busiest 4, as under EP 64. An FP8 expert (3 x 2048 x 7168 B = 44,040,192 B; its [128, 128]
# blocks: w13 4096 / 128 x 7168 / 128 = 1,792 and w2 56 x 16 = 896, 4 B each = 10,752 B):
# 4 x 44,040,192 + the router 256 x 7168 x 2 + 256 x 4 = 3,671,040 -> 179,831,808 B a layer,
# x 58 MoE layers = 10,430,244,864 B; scales 4 x 10,752 x 58 = 2,494,464 B. The
# whole-minus-slice rule gave 10,607,316,675 and 6,921,259 B (a TP-72 slice, width
# ceil(2048 / 72) = 29, is no 72nd of an expert and rounds each scale block up).


def test_deepseek_v3_ep72_holds_what_ep64_holds() -> None:
    spec = load_spec("deepseek-v3")
    assert busiest_rank_experts(256, 72) == busiest_rank_experts(256, 64) == 4
    for ep in (64, 72):
        w = weights_breakdown(spec, tp=ep, ep=ep, dp_attention=True,
                              dp_split=Engine("sglang").rules.dp_attention_weights())
        assert w.experts == 58 * (4 * 44_040_192 + 3_671_040) == 10_430_244_864
        assert w.expert_scales == 58 * 4 * 10_752 == 2_494_464


def test_deepseek_v4_flash_ep16_is_sized() -> None:
    # The slice at TP 16 cannot be built (8 output groups), so the old rule refused EP 16 with
    # "tp 16 does not divide DeepSeek-V4's 64 heads and 8 output groups"; EP does not split
    # the attention. 256 experts over 16 ranks: 16 each, the held experts of the TP-1 layout.
    spec = load_spec(str(DATA / "configs" / "dsv4" / "deepseek-v4-flash.json"))
    w = weights_breakdown(spec, tp=8, ep=16)
    quant, dtype = loaded_formats(spec)
    held = weight_breakdown(spec, quant, dtype=dtype, tp=1, held_experts=16)
    assert (w.experts, w.expert_scales) == (held.experts, held.expert_scales)
    assert w.attention == weights_breakdown(spec, tp=8).attention


# --- the checkpoint path agrees -------------------------------------------------------------------


def _config(case: str) -> dict[str, Any]:
    return json.loads((EP_ORACLE / case / "config.json").read_text())


def _qwen2_moe_tensors(c: dict[str, Any]) -> dict[str, tuple[str, list[int]]]:
    h, e, w, s = (c["hidden_size"], c["num_experts"], c["moe_intermediate_size"],
                  c["shared_expert_intermediate_size"])
    out = {"model.embed_tokens.weight": ("BF16", [c["vocab_size"], h]),
           "model.norm.weight": ("BF16", [h]), "lm_head.weight": ("BF16", [c["vocab_size"], h])}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        for m in ("q", "k", "v"):
            out |= {f"{p}.self_attn.{m}_proj.weight": ("BF16", [h, h]),
                    f"{p}.self_attn.{m}_proj.bias": ("BF16", [h])}
        out |= {f"{p}.self_attn.o_proj.weight": ("BF16", [h, h]),
                f"{p}.input_layernorm.weight": ("BF16", [h]),
                f"{p}.post_attention_layernorm.weight": ("BF16", [h]),
                f"{p}.mlp.gate.weight": ("BF16", [e, h]),
                f"{p}.mlp.shared_expert_gate.weight": ("BF16", [1, h]),
                f"{p}.mlp.shared_expert.gate_proj.weight": ("BF16", [s, h]),
                f"{p}.mlp.shared_expert.up_proj.weight": ("BF16", [s, h]),
                f"{p}.mlp.shared_expert.down_proj.weight": ("BF16", [h, s])}
        for x in range(e):
            out |= {f"{p}.mlp.experts.{x}.gate_proj.weight": ("BF16", [w, h]),
                    f"{p}.mlp.experts.{x}.up_proj.weight": ("BF16", [w, h]),
                    f"{p}.mlp.experts.{x}.down_proj.weight": ("BF16", [h, w])}
    return out


def _gpt_oss_mxfp4_tensors(c: dict[str, Any]) -> dict[str, tuple[str, list[int]]]:
    """gpt-oss's own names (tests/data/weights/gpt-oss-tiny): mxfp4 experts as U8 blocks of 16
    bytes (32 elements) with one U8 e8m0 scale each, bf16 biases, router and attention."""
    h, e, w, d = c["hidden_size"], c["num_local_experts"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    out = {"model.embed_tokens.weight": ("BF16", [c["vocab_size"], h]),
           "model.norm.weight": ("BF16", [h]), "lm_head.weight": ("BF16", [c["vocab_size"], h])}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        out |= {f"{p}.self_attn.q_proj.weight": ("BF16", [q, h]),
                f"{p}.self_attn.q_proj.bias": ("BF16", [q]),
                f"{p}.self_attn.k_proj.weight": ("BF16", [kv, h]),
                f"{p}.self_attn.k_proj.bias": ("BF16", [kv]),
                f"{p}.self_attn.v_proj.weight": ("BF16", [kv, h]),
                f"{p}.self_attn.v_proj.bias": ("BF16", [kv]),
                f"{p}.self_attn.o_proj.weight": ("BF16", [h, q]),
                f"{p}.self_attn.o_proj.bias": ("BF16", [h]),
                f"{p}.self_attn.sinks": ("BF16", [c["num_attention_heads"]]),
                f"{p}.input_layernorm.weight": ("BF16", [h]),
                f"{p}.post_attention_layernorm.weight": ("BF16", [h]),
                f"{p}.mlp.router.weight": ("BF16", [e, h]),
                f"{p}.mlp.router.bias": ("BF16", [e]),
                f"{p}.mlp.experts.gate_up_proj_blocks": ("U8", [e, 2 * w, h // 32, 16]),
                f"{p}.mlp.experts.gate_up_proj_scales": ("U8", [e, 2 * w, h // 32]),
                f"{p}.mlp.experts.gate_up_proj_bias": ("BF16", [e, 2 * w]),
                f"{p}.mlp.experts.down_proj_blocks": ("U8", [e, h, w // 32, 16]),
                f"{p}.mlp.experts.down_proj_scales": ("U8", [e, h, w // 32]),
                f"{p}.mlp.experts.down_proj_bias": ("BF16", [e, h])}
    return out


LAYOUTS = [(1, 2), (2, 2), (2, 3), (1, 4), (1, 5), (2, 8)]  # (tp, ep), ep >= tp: vLLM's


def _both_paths(tmp_path: Path, case: str, config: dict[str, Any],
                tensors: dict[str, tuple[str, list[int]]]) -> tuple[ModelSpec, ModelSpec]:
    spec, _ = load_model(str(make_folder(tmp_path / case, config, tensors)))
    assert spec.checkpoint is not None
    return spec, replace(spec, checkpoint=None)


@pytest.mark.parametrize(("tp", "ep"), LAYOUTS)
def test_checkpoint_and_architecture_agree_qwen2_moe(tmp_path: Path, tp: int, ep: int) -> None:
    config = _config("qwen2-moe-e5")
    ckpt, arch = _both_paths(tmp_path, "qwen2", config, _qwen2_moe_tensors(config))
    for dp in (False, True):
        a = weights_breakdown(arch, tp=tp, ep=ep, dp_attention=dp)
        c = weights_breakdown(ckpt, tp=tp, ep=ep, dp_attention=dp)
        # The checkpoint path files the shared expert's gate (1 x 128) with the shared expert
        # (dense MLP), the architecture path with the router: the same bytes, in another group.
        assert c.experts + 2 * 128 * 2 == a.experts
        assert (c.experts + c.dense_mlp, c.total) == (a.experts + a.dense_mlp, a.total)
    # 5 experts of 3 x 64 x 128 bf16 (49,152 B), ceil(5 / ep) on the busiest rank, 2 layers;
    # the router (5 + 1 shared-gate rows of 128, bf16) whole.
    assert a.experts == 2 * (busiest_rank_experts(5, ep) * 49_152 + 6 * 128 * 2)


@pytest.mark.parametrize(("tp", "ep"), LAYOUTS)
def test_checkpoint_and_architecture_agree_gpt_oss_mxfp4(tmp_path: Path, tp: int,
                                                         ep: int) -> None:
    config = _config("gpt-oss-e5-bf16") | {
        "quantization_config": json.loads((DATA / "configs" / "gpt-oss-20b.json").read_text())[
            "quantization_config"]}
    ckpt, arch = _both_paths(tmp_path, "gpt-oss", config, _gpt_oss_mxfp4_tensors(config))
    a = weights_breakdown(arch, tp=tp, ep=ep)
    c = weights_breakdown(ckpt, tp=tp, ep=ep)
    # The checkpoint path adds the kernel's padding to the experts' group (engine_added); the
    # architecture path prices padded weights and scales: the same bytes.
    assert c.experts + c.expert_scales == a.experts + a.expert_scales
    # Both paths split gpt-oss's attention sinks by head (until sizefix57 the checkpoint path
    # held them whole on every rank and agreed at TP 1 only).
    assert c.total == a.total
    assert c.attention == a.attention


def test_gpt_oss_sinks_split_by_head_on_the_checkpoint_path(tmp_path: Path) -> None:
    # vLLM 0.32 models/gpt_oss.py:130-132: OAIAttention.sinks = torch.empty(num_attention_heads
    # // tp_size), the default (model) dtype; the loader narrows the stored (heads,) vector to
    # the rank's heads (:723-729). The oracle measured it (tests/data/oracle/ep-weights,
    # gpt-oss-e5-bf16 at TP 2: "sinks": 8 on each rank = 4 heads / 2 x 2 layers x 2 B).
    # By hand at TP 2: 2 layers x (4 // 2) heads x 2 B = 8 B; whole (the old rule) 16 B, so the
    # attention group loses 8 B; at TP 4: 2 x 1 x 2 = 4 B.
    config = _config("gpt-oss-e5-bf16")
    ckpt, _ = _both_paths(tmp_path, "gpt-oss", config, _gpt_oss_mxfp4_tensors(config))
    assert config["num_attention_heads"] == 4 and config["num_hidden_layers"] == 2
    assert ORACLE["gpt-oss-e5-bf16"]["ranks"][0]["sinks"] == 8
    no_sinks = replace(ckpt, checkpoint=replace(ckpt.checkpoint, tensors=tuple(
        t for t in ckpt.checkpoint.tensors if not t.name.endswith(".sinks"))))
    for tp, sink_bytes in ((1, 16), (2, 8), (4, 4)):
        with_sinks = weights_breakdown(ckpt, tp=tp).attention
        assert with_sinks - weights_breakdown(no_sinks, tp=tp).attention == sink_bytes


# --- properties -----------------------------------------------------------------------------------

MOE_MODELS = ("deepseek-v3", "kimi-k2", "qwen3-235b-a22b", "mixtral-8x7b", "gpt-oss-120b",
              "gpt-oss-20b", "minimax-m2", "llama-4-scout", "glm-4.5-air",
              str(DATA / "configs" / "qwen1.5-moe-a2.7b.json"),
              str(DATA / "configs" / "llama-4-scout-fp8-dynamic.json"),
              str(DATA / "hf_quant" / "qwen3-235b-a22b-nvfp4"),
              str(DATA / "configs" / "dsv4" / "deepseek-v4-flash.json"))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 1024), st.integers(1, 512))
def test_experts_on_rank_partitions_the_experts(n: int, ep: int) -> None:
    counts = [experts_on_rank(n, ep, r) for r in range(ep)]
    assert sum(counts) == n
    assert max(counts) == busiest_rank_experts(n, ep) == -(-n // ep)
    assert max(counts) - min(counts) <= 1


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MOE_MODELS), st.integers(1, 64), st.integers(1, 64))
def test_more_ep_never_holds_more(model: str, ep_a: int, ep_b: int) -> None:
    # vLLM's EP over the TP x DP ranks (TP 1 here: ep >= tp, experts whole). The old rule broke
    # this: gpt-oss-20b at EP 64 held 620,844,349 B of experts, at EP 32 462,521,856.
    spec = load_spec(model)
    lo, hi = sorted((ep_a, ep_b))
    a, b = weights_breakdown(spec, tp=1, ep=lo), weights_breakdown(spec, tp=1, ep=hi)
    assert b.experts <= a.experts and b.expert_scales <= a.expert_scales
    assert b.total <= a.total


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(MOE_MODELS), st.integers(2, 24))
def test_the_ranks_hold_every_routed_expert_once(model: str, ep: int) -> None:
    spec = load_spec(model)
    assert spec.moe is not None
    e = spec.moe.n_routed_experts
    whole = _routed(spec, e)
    ranks = [_routed(spec, experts_on_rank(e, ep, r)) for r in range(ep)]
    assert (sum(w for w, _ in ranks), sum(s for _, s in ranks)) == whole
    # The busiest rank is the EP breakdown's.
    quant, dtype = loaded_formats(spec)
    none = weight_breakdown(spec, quant, dtype=dtype, held_experts=0)
    w = weights_breakdown(spec, tp=1, ep=ep)
    assert (w.experts - none.experts, w.expert_scales - none.expert_scales) == ranks[0]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(MOE_MODELS), st.sampled_from((1, 2, 4, 8)))
def test_holding_every_expert_is_the_tp_path(model: str, tp: int) -> None:
    spec = load_spec(model)
    assert spec.moe is not None
    quant, dtype = loaded_formats(spec)
    try:
        plain = weight_breakdown(spec, quant, dtype=dtype, tp=tp)
    except UnmodelledError as e:  # a TP the model is not split over (DeepSeek-V4's MXFP4)
        pytest.skip(str(e))
    assert weight_breakdown(spec, quant, dtype=dtype, tp=tp,
                            held_experts=spec.moe.n_routed_experts) == plain
    assert weights_breakdown(spec, tp=tp, ep=1) == weights_breakdown(spec, tp=tp)


@pytest.mark.parametrize("model", ["mixtral-8x7b", "qwen3-235b-a22b",
                                   str(DATA / "configs" / "qwen1.5-moe-a2.7b.json")])
@pytest.mark.parametrize("ep", [2, 4])
def test_whole_experts_over_ep_weigh_a_tp_slice(model: str, ep: int) -> None:
    # Unquantized experts without biases, ep dividing E and the width: E / ep whole experts
    # weigh what a 1/ep slice of every expert weighs (the TP path's own count).
    spec = load_spec(model)
    assert spec.moe is not None and spec.moe.n_routed_experts % ep == 0
    assert spec.moe.moe_intermediate_size % ep == 0
    assert weights_breakdown(spec, tp=ep, ep=ep).experts == weights_breakdown(spec, tp=ep).experts


def test_mtp_block_holds_the_ranks_experts() -> None:
    # DeepSeek-V3's MTP layer (--speculative-method mtp) is a decoder layer of the target's
    # parallel config (models/deepseek_mtp.py: a DeepseekV2DecoderLayer, its FusedMoE under
    # EP): at EP 16 a rank holds 16 of its 256 experts whole, at TP 4 without EP a 1/4 slice
    # of each, 64 experts' worth: 48 x 44,040,192 B (FP8 weights; scales counted apart) less.
    # Until eptpw56 the MTP block kept the TP slice under any EP (the same bytes).
    spec = load_spec("deepseek-v3")
    tp4 = weights_breakdown(spec, tp=4, mtp=True).mtp
    for dp in (False, True):
        ep16 = weights_breakdown(spec, tp=4, ep=16, mtp=True, dp_attention=dp).mtp
        assert tp4 - ep16 == 48 * 44_040_192


# --- vLLM's int32 expert map under EP (sizefix57) ---------------------------------------------
# vLLM 0.32 layers/fused_moe/expert_map_manager.py:72 builds torch.full((E,), -1, int32) for
# every FusedMoE when ep_size > 1 and routed_experts.py:133 / :262-268 registers it as the
# `_expert_map` buffer inside the loader's device context (model_loader/base_loader.py:72-74),
# so the load's DeviceMemoryProfiler counts it as weights (gpu_model_runner.py:5050-5137).
# The oracle saw it (tests/data/oracle/ep-weights/weight-bytes.json): each case's rank buffers
# are its rotary table plus 2 MoE layers x 5 entries x 4 B = 40 B.


@pytest.mark.parametrize(("case", "moe_layers"), [("qwen2-moe-e5", 2), ("gpt-oss-e5-bf16", 2),
                                                  ("deepseek-v2-lite-e5", 2)])
def test_expert_map_is_the_buffers_beyond_the_rotary_table(case: str, moe_layers: int) -> None:
    # By hand: qwen2-moe-e5 and gpt-oss-e5-bf16 have 2 layers, both MoE; deepseek-v2-lite-e5 3,
    # the first dense (first_k_dense_replace 1): 2 MoE layers x 5 entries x 4 B = 40 B each.
    from kvplan.capacity.weights import expert_map_bytes

    spec = load_spec(str(EP_ORACLE / case / "config.json"))
    w = weights_breakdown(spec, tp=2, ep=2, expert_map_entry_bytes=4, attention_scale_bytes=16)
    assert w.expert_map == moe_layers * 5 * 4 == 40
    # vLLM's other buffers: the rotary table (kvplan's rope_cache) and each attention layer's
    # four float32 scalars _k_scale, _v_scale, _q_scale, _prob_scale (16 B a layer:
    # model_executor/layers/attention/attention.py:136-139; seen in the oracle's tensor list,
    # WEIGHT_BYTES_LIST=1), counted since sizefix58 (`attention_scales`).
    assert w.attention_scales == 16 * spec.num_hidden_layers
    for rank in ORACLE[case]["ranks"]:
        assert rank["buffers"] - w.rope_cache - w.attention_scales == w.expert_map
    # The busiest rank, parameters and buffers, is vLLM's to the byte.
    rank0 = ORACLE[case]["ranks"][0]
    assert w.total == rank0["params"] + rank0["buffers"]
    assert expert_map_bytes(spec, 1, 4) == 0  # no EP: vLLM builds no map (expert_map None)
    assert weights_breakdown(spec, tp=2, ep=2).expert_map == 0  # an engine that holds none


def test_deepseek_v3_expert_map_by_hand() -> None:
    # DeepSeek-V3 at EP 8 on vLLM: 58 MoE layers (61 less first_k_dense_replace 3) x 256
    # experts x 4 B = 59,392 B; with the MTP layer (a MoE decoder layer like the last): 59 x
    # 1,024 = 60,416 B; a stage of layers 0-29: 27 MoE layers. In vLLM's plan it is in the
    # rank's weights; SGLang's plan counts none.
    from kvplan.capacity.stages import stage_weights
    from kvplan.engines.base import PlanInputs

    spec = load_spec("deepseek-v3")
    assert weights_breakdown(spec, tp=8, ep=8, expert_map_entry_bytes=4).expert_map == 59_392
    assert weights_breakdown(spec, tp=8, ep=8, mtp=True,
                             expert_map_entry_bytes=4).expert_map == 60_416
    assert weights_breakdown(spec, tp=8, ep=8, layers=range(0, 30),
                             expert_map_entry_bytes=4).expert_map == 27 * 1_024
    for engine, entry in (("vllm", 4), ("sglang", 0)):
        inputs = PlanInputs(context=4096, engine=Engine(engine), tp=8, ep=8)
        w = stage_weights(spec, inputs, range(61), pp_first=True, pp_last=True)
        assert w.expert_map == 58 * 256 * entry


# --- the MTP block's scales under DP attention (sizefix57) ----------------------------------------
# `_dp_weights` rebuilds a rank's weights from a TP-1 breakdown without the MTP block and kept
# the split breakdown's MTP bytes, but not its quantization scales. DeepSeek-V3 (FP8, [128, 128]
# blocks, one float32 scale each) at TP 8 = EP 8 with DP attention, the MTP layer (layer 61, a
# MoE decoder layer; its attention counted split, as `_dp_weights` keeps it), per rank:
#   q_a_proj 1536 x 7168: 12 x 56 = 672 blocks; q_b_proj 16 heads x 192 = 3072 x 1536: 24 x 12 =
#   288; kv_a_proj_with_mqa 576 x 7168: 5 x 56 = 280; kv_b_proj 16 x 256 = 4096 x 512: 32 x 4 =
#   128; o_proj 7168 x 2048: 56 x 16 = 896 -> 2,264 blocks = 9,056 B;
#   32 of 256 experts, 10,752 B each (test_deepseek_v3_ep72_holds_what_ep64_holds) = 344,064 B;
#   the shared expert, width 2048 / 8 = 256: gate_up 512 x 7168: 4 x 56 = 224, down 7168 x 256:
#   56 x 2 = 112 -> 336 blocks = 1,344 B; eh_proj and the head are plain (no scales).
#   Total 9,056 + 344,064 + 1,344 = 354,464 B (0 before the fix).


def test_mtp_scales_kept_under_dp_attention() -> None:
    spec = load_spec("deepseek-v3")
    for dp in (False, True):
        with_mtp = weights_breakdown(spec, tp=8, ep=8, mtp=True, dp_attention=dp)
        without = weights_breakdown(spec, tp=8, ep=8, dp_attention=dp)
        assert with_mtp.mtp_scales == 354_464
        assert with_mtp.quantization_scales - without.quantization_scales == 354_464
