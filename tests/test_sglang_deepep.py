"""SGLang's MoE layers under --moe-a2a-backend deepep (kvplan.engines.sglang.deepep): the bytes
DeepEP's dispatch and combine send per token per MoE layer, worked out by hand for
DeepSeek-R1 (its config.json: hidden_size 7,168, n_routed_experts 256, num_experts_per_tok 8;
DeepSeek-V3's model spec, the same architecture) at EP 8 / 16 / 32; the weights it keeps whole;
the launches refused; and the step the time model prices with it."""

from __future__ import annotations

import pytest

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.capacity.weights import weights_breakdown
from kvplan.engines.base import Engine, plan_inputs
from kvplan.engines.sglang.deepep import (
    DeepEp,
    check_moe_a2a,
    resolve_mode,
    sglang_dp_attention_weights,
    sglang_moe_all_to_all,
)
from kvplan.hardware.gpus import GPUS
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model
from kvplan.weights.base import DpAttentionWeights

DEEPEP = {"moe_a2a_backend": "deepep", "moe_dense_tp_size": 1, "enable_dp_lm_head": True}


@pytest.fixture(scope="module")
def r1():  # type: ignore[no-untyped-def]
    spec, _ = load_model("deepseek-v3")
    assert spec.moe is not None and spec.hidden_size == 7168
    assert (spec.moe.n_routed_experts, spec.moe.num_experts_per_tok) == (256, 8)
    return spec


def test_mode_resolution() -> None:
    # layers/moe/utils.py:106-113 (0.5.8.post1): auto -> normal with an extend in the batch.
    assert resolve_mode("auto", "prefill") == "normal"
    assert resolve_mode("auto", "decode") == "low_latency"
    assert resolve_mode("normal", "decode") == "normal"
    assert resolve_mode("low_latency", "prefill") == "low_latency"


def test_low_latency_fp8_bytes_by_hand(r1) -> None:  # type: ignore[no-untyped-def]
    # internode_ll.cu:181 (DeepEP 29d31c0): a message per (token, expert) = int4 header 16 B +
    # 7,168 FP8 values + 7,168 / 128 = 56 fp32 scales (224 B) = 7,408 B; the combine sends each
    # expert's bf16 output back, 14,336 B. 8 experts a token, 7 / 8 of them on another rank at
    # EP 8: 8 x 21,744 x 7 / 8 = 152,208 B; EP 16: x 15 / 16 = 163,080; EP 32: x 31 / 32 =
    # 168,516.
    ll = DeepEp(mode="low_latency")
    assert ll.bytes_per_token(r1.moe, 7168, 8, "decode") == 152_208
    assert ll.bytes_per_token(r1.moe, 7168, 16, "decode") == 163_080
    assert ll.bytes_per_token(r1.moe, 7168, 32, "decode") == 168_516


def test_low_latency_nvfp4_bytes_by_hand(r1) -> None:  # type: ignore[no-untyped-def]
    # NVFP4 dispatch (SGLANG_MOE_NVFP4_DISPATCH on a ModelOpt NVFP4 checkpoint): 16 B header +
    # 7,168 / 2 = 3,584 B of values + 7,168 / 16 = 448 FP8 scales = 4,048 B; combine bf16
    # 14,336 B. 8 x 18,384 = 147,072 B a token, x 7/8 = 128,688 (EP 8), x 15/16 = 137,880 (EP
    # 16), x 31/32 = 142,476 (EP 32).
    ll = DeepEp(mode="low_latency", nvfp4_dispatch=True)
    assert ll.bytes_per_token(r1.moe, 7168, 8, "decode") == 128_688
    assert ll.bytes_per_token(r1.moe, 7168, 16, "decode") == 137_880
    assert ll.bytes_per_token(r1.moe, 7168, 32, "decode") == 142_476


def test_normal_bytes_by_hand(r1) -> None:  # type: ignore[no-untyped-def]
    # intranode.cu:262-277 / :750-762: per (token, rank) the dispatch sends 7,168 FP8 values,
    # 56 fp32 scales (224 B), an int32 source index (4 B) and 8 int64 top-k ids + 8 fp32
    # weights (96 B) = 7,492 B; the combine a bf16 hidden state (14,336 B), the index and the
    # 8 weights = 14,372 B; 21,864 B a pair. A given other rank holds none of a token's 8 of
    # 256 experts with probability C(256 - 256/ep, 8) / C(256, 8):
    # EP 8 (32 a rank): 224 x 223 x ... x 217 / (256 x 255 x ... x 249)
    #   = 138,535,357,316,356 / 409,663,695,276,000 = 0.338168...; so 7 x 0.661832 = 4.632821
    #   other ranks a token, x 21,864 = 101,291.99 B.
    # EP 16 (16 a rank): C(240, 8) / C(256, 8) = 242,641,770,336,810 / 409,663,695,276,000 =
    #   0.592295; 15 x 0.407705 = 6.115575 ranks, x 21,864 = 133,710.92 B.
    # EP 32 (8 a rank): C(248, 8) / C(256, 8) = 316,634,191,933,059 / 409,663,695,276,000 =
    #   0.772913; 31 x 0.227087 = 7.039712 ranks, x 21,864 = 153,916.27 B.
    normal = DeepEp(mode="normal")
    assert normal.bytes_per_token(r1.moe, 7168, 8, "prefill") == pytest.approx(101_291.99,
                                                                               abs=0.01)
    assert normal.bytes_per_token(r1.moe, 7168, 16, "prefill") == pytest.approx(133_710.92,
                                                                                abs=0.01)
    assert normal.bytes_per_token(r1.moe, 7168, 32, "prefill") == pytest.approx(153_916.27,
                                                                                abs=0.01)
    # Normal mode sends a token once a rank, fewer bytes than low latency's once an expert.
    assert normal.bytes_per_token(r1.moe, 7168, 8, "prefill") < DeepEp(
        mode="low_latency").bytes_per_token(r1.moe, 7168, 8, "prefill")


def test_the_launch_selects_it(r1) -> None:  # type: ignore[no-untyped-def]
    none = plan_inputs(context=2048, engine=Engine.sglang).options
    assert sglang_moe_all_to_all(none, r1) is None
    given = plan_inputs(context=2048, engine=Engine.sglang, deepep_mode="low_latency",
                        moe_nvfp4_dispatch=True, **DEEPEP).options
    # DeepSeek-V3's FP8 checkpoint is not ModelOpt NVFP4: the flag leaves the dispatch in FP8
    # (modelopt_quant.py:1482-1490 sets the input global scale only in its NVFP4 MoE method).
    assert sglang_moe_all_to_all(given, r1) == DeepEp(mode="low_latency", nvfp4_dispatch=False)
    assert Engine.sglang.rules.cost_traits.moe_all_to_all is sglang_moe_all_to_all
    assert Engine.vllm.rules.cost_traits.moe_all_to_all is None


def test_weights_it_keeps_whole(r1) -> None:  # type: ignore[no-untyped-def]
    # deepseek_v2.py:455-473 (shared experts tp_size 1 under DeepEP), :2291-2294 (dense MLP
    # whole under --moe-dense-tp-size 1), :2798-2803 (lm_head on the attention-TP group under
    # --enable-dp-lm-head): all whole on every DP-attention rank.
    opts = plan_inputs(context=2048, engine=Engine.sglang, **DEEPEP).options
    assert sglang_dp_attention_weights(opts) == DpAttentionWeights()
    assert Engine.sglang.rules.dp_attention_weights(opts) == DpAttentionWeights()
    assert Engine.sglang.rules.dp_attention_weights() == DpAttentionWeights(
        mlp_split=True, lm_head_split=True)
    whole = weights_breakdown(r1, tp=8, dp_attention=True, dp_split=DpAttentionWeights())
    # One byte a weight: 3 x 3 x 18,432 x 7,168 dense + 58 x 3 x 2,048 x 7,168 shared =
    # 3,743,416,320 B a rank (split over 8: 467,927,040); the bf16 lm_head 129,280 x 7,168 x 2.
    assert whole.dense_mlp == 3_743_416_320
    assert whole.lm_head == 129280 * 7168 * 2


# A refusal of the settings is UnmodelledError (no layout would do); one of the layout (DP
# attention, EP) an InputError, so that `plan` searches the layouts that take them (cli60).
@pytest.mark.parametrize(("settings", "dp", "ep", "says", "error"), [
    ({"moe_a2a_backend": "deepep"}, True, 8, "--moe-dense-tp-size 1", UnmodelledError),
    ({"moe_dense_tp_size": 1}, True, 8, "--moe-dense-tp-size 1", UnmodelledError),
    (DEEPEP, False, 8, "--enable-dp-lm-head", InputError),
    ({"moe_a2a_backend": "deepep", "moe_dense_tp_size": 1}, False, 8, "--enable-dp-attention",
     InputError),
    (DEEPEP, True, 4, "--ep-size", InputError),
    ({"moe_a2a_backend": "mooncake"}, True, 8, "mooncake", UnmodelledError),
    ({**DEEPEP, "deepep_mode": "fast"}, True, 8, "--deepep-mode fast", UnmodelledError),
])
def test_refused(settings: dict[str, object], dp: bool, ep: int, says: str,
                 error: type[Exception]) -> None:
    inputs = plan_inputs(context=2048, engine=Engine.sglang, tp=8, ep=ep, dp_attention=dp,
                         **settings)
    with pytest.raises(error, match=says) as got:
        check_moe_a2a(inputs)
    assert type(got.value) is error


def test_priced_step_decode_ep32(r1) -> None:  # type: ignore[no-untyped-def]
    # A GB200 decode rank of DP 32 / EP 32 at 64 requests: with DeepEP low latency each of the
    # 58 MoE layers pays dispatch + combine at DeepEP's measured GB200 speed
    # (kvplan.engines.sglang.deepep_speed: aiconfigurator's gb200 wideep_deepep_ll_perf rows at
    # 1 and 1,024 tokens). The logical bytes of 64 tokens are 64 / 1,023 of those between the
    # rows (8 messages a token either way), so each call is the rows' line at 64 tokens:
    # dispatch 16.570 + 64 / 1,023 x (112.921 - 16.570) = 22.5978 us, combine 18.129 + 64 /
    # 1,023 x (168.290 - 18.129) = 27.5232 us; 58 x 50.1211 us = 2.907 ms (the measured row at
    # 64 tokens: 21.642 + 25.969 = 47.611 us). No gather, no logits gather.
    gpu = GPUS["GB200"]
    lay = Layout(tp=32, dp_attention=True, ep=32)
    opts = plan_inputs(context=2048, engine=Engine.sglang, **DEEPEP).options
    eff = engine_efficiency("sglang", device_efficiency(gpu), version="0.5.8.post1",
                            options=opts, spec=r1)
    with_deepep = step_time(r1, gpu, tokens=64, context=2048, requests=64, layout=lay, eff=eff,
                            kv_dtype="fp8")
    per_layer = (16.570 + 64 / 1023 * (112.921 - 16.570)
                 + 18.129 + 64 / 1023 * (168.290 - 18.129)) * 1e-6
    assert with_deepep.by_op["ep_all_to_all"] == pytest.approx(58 * per_layer, rel=1e-9)
    assert not any(k.startswith(("dp_gather", "logits_gather")) for k in with_deepep.by_op)
    default = engine_efficiency("sglang", device_efficiency(gpu), version="0.5.8.post1")
    gathered = step_time(r1, gpu, tokens=64, context=2048, requests=64, layout=lay, eff=default,
                         kv_dtype="fp8")
    assert "ep_all_to_all" not in gathered.by_op
    assert gathered.by_op["dp_gather_all_gather"] > 0 and gathered.by_op["logits_gather"] > 0
