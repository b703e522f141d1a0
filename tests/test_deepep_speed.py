"""DeepEP's measured kernel speeds (kvplan.engines.sglang.deepep_speed) and the time
`DeepEp.seconds` gives with them, worked out by hand from aiconfigurator's tables
(ai-dynamo/aiconfigurator 095f58a51, systems/data/<system>/comm/sglang/<version>/
wideep_deepep_{ll,normal}_perf.parquet, the rows of hidden 7,168, 256 experts, top-8; normal
mode at 20 SMs): GB200 / GB300 at EP 4 (0.5.12), H100 SXM at EP 8 (0.5.12) and across 2 nodes,
EP 16 (the legacy 0.5.6.post2 tables); the stand-ins and the refusals."""

from __future__ import annotations

from dataclasses import replace
from math import comb

import pytest

from kvplan._util.errors import UnmodelledError
from kvplan.analysis.disagg import DisaggRequest, plan_disagg
from kvplan.analysis.plan_types import Layout
from kvplan.engines.base import Engine
from kvplan.engines.sglang.deepep import DeepEp
from kvplan.engines.sglang.deepep_speed import (
    LL_COMBINE_MSG,
    LL_DISPATCH_MSG,
    MEASURED_PAIRS,
    NORMAL_COMBINE_PAIR,
    NORMAL_DISPATCH_PAIR,
    deepep_speed,
    measured_speed,
)
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import INTERCONNECTS
from kvplan.hardware.kv_links import get_kv_link
from kvplan.sources.resolve import load_model


@pytest.fixture(scope="module")
def r1():  # type: ignore[no-untyped-def]
    spec, _ = load_model("deepseek-v3")
    assert spec.moe is not None and spec.hidden_size == 7168
    return spec


def test_message_sizes_match_the_byte_rules() -> None:
    # internode_ll.cu:181: 16 B header + 7,168 FP8 + 56 fp32 scales = 7,408 B; bf16 combine
    # 14,336 B. intranode.cu:262-277 / :750-762: 7,168 + 224 + 4 + 8 x (8 + 4) = 7,492 B;
    # 14,336 + 4 + 8 x 4 = 14,372 B (the same sizes tests/test_sglang_deepep.py works out).
    assert (LL_DISPATCH_MSG, LL_COMBINE_MSG) == (7408, 14336)
    assert (NORMAL_DISPATCH_PAIR, NORMAL_COMBINE_PAIR) == (7492, 14372)
    # EP 4 (64 experts a rank): C(192, 8) / C(256, 8) = 0.0964464..., 4 x 0.9035536 =
    # 3.6142143 ranks a token.
    assert comb(192, 8) / comb(256, 8) == pytest.approx(0.0964464, abs=1e-7)
    assert MEASURED_PAIRS == pytest.approx(3.6142143, abs=1e-7)


def test_gb200_speeds_by_hand() -> None:
    # Low latency: dispatch 16.570 us at 1 token, 112.921 at 1,024: 1,023 x 8 x 7,408 =
    # 60,627,072 B in 96.351 us = 629.23 GB/s; combine 18.129 / 168.290: 1,023 x 8 x 14,336 =
    # 117,325,824 B in 150.161 us = 781.33 GB/s.
    d, c = measured_speed("GB200", "low_latency") or (None, None)
    assert d is not None and c is not None
    assert d.latency_s == pytest.approx(16.570e-6) and c.latency_s == pytest.approx(18.129e-6)
    assert d.bytes_per_s == pytest.approx(629.23e9, rel=1e-5)
    assert c.bytes_per_s == pytest.approx(781.33e9, rel=1e-5)
    # Normal (20 SMs): dispatch 34.092 us at 1 token, 1,526.745 at 16,384: 16,383 x 3.6142143
    # x 7,492 B = 443,613,854 B in 1,492.653 us = 297.20 GB/s; combine 48.010 / 2,585.740:
    # 16,383 x 3.6142143 x 14,372 = 850,990,163 B in 2,537.730 us = 335.34 GB/s.
    d, c = measured_speed("GB200", "normal") or (None, None)
    assert d is not None and c is not None
    assert d.latency_s == pytest.approx(34.092e-6) and c.latency_s == pytest.approx(48.010e-6)
    assert d.bytes_per_s == pytest.approx(297.20e9, rel=1e-4)
    assert c.bytes_per_s == pytest.approx(335.34e9, rel=1e-4)
    assert measured_speed("H100", "normal") is None
    assert measured_speed("GB300", "low_latency") is not None


def test_normal_seconds_at_ep8_by_hand(r1) -> None:  # type: ignore[no-untyped-def]
    # 4,096 prefill tokens a rank at EP 8 on GB200: a token reaches 8 x (1 - C(224, 8) /
    # C(256, 8)) = 8 x 0.6618315 = 5.294652 ranks (its own among them), against 3.6142143 at
    # the measured EP 4, so the logical bytes are 4,096 x 5.294652 / (16,383 x 3.6142143) =
    # 0.3662605 of those between the rows: dispatch 34.092 + 0.3662605 x 1,492.653 = 580.79 us,
    # combine 48.010 + 0.3662605 x 2,537.730 = 977.48 us; 1,558.27 us.
    nvlink5 = INTERCONNECTS["nvlink5"]
    t = DeepEp(mode="normal").seconds(4096, r1.moe, 7168, 8, "prefill", "GB200", nvlink5)
    assert t == pytest.approx(1558.27e-6, rel=1e-5)


def test_h100_speeds_by_hand() -> None:
    # h100_sxm/comm/sglang/0.5.12, node_num 1 (EP 8 over NVLink 4). Low latency: dispatch
    # 13.194 us at 1 token, 224.057 at 1,024: 1,023 x 8 x 7,408 = 60,627,072 B in 210.863 us =
    # 287.52 GB/s; combine 14.402 / 489.434: 1,023 x 8 x 14,336 = 117,325,824 B in 475.032 us
    # = 246.985 GB/s.
    d, c = measured_speed("H100-80GB", "low_latency", 8) or (None, None)
    assert d is not None and c is not None
    assert d.latency_s == pytest.approx(13.194e-6) and c.latency_s == pytest.approx(14.402e-6)
    assert d.bytes_per_s == pytest.approx(287.52e9, rel=1e-5)
    assert c.bytes_per_s == pytest.approx(246.985e9, rel=1e-5)
    # Normal, 20 SMs: 8 x (1 - C(224, 8) / C(256, 8)) = 5.294652 ranks a token; dispatch
    # 25.914 / 1,960.135 us: 16,383 x 5.294652 x 7,492 = 649,873,190 B in 1,934.221 us =
    # 335.99 GB/s; combine 48.216 / 3,565.430: x 14,372 = 1,246,660,102 B in 3,517.214 us =
    # 354.45 GB/s.
    d, c = measured_speed("H100-80GB", "normal", 8) or (None, None)
    assert d is not None and c is not None
    assert d.bytes_per_s == pytest.approx(335.99e9, rel=1e-4)
    assert c.bytes_per_s == pytest.approx(354.45e9, rel=1e-4)
    # Only the table's own EP: none at EP 4 on H100, none under the bare name "H100".
    assert measured_speed("H100-80GB", "normal", 4) is None
    assert measured_speed("H100", "normal", 8) is None


def test_h100_internode_ep16_seconds_by_hand(r1) -> None:  # type: ignore[no-untyped-def]
    # h100_sxm/comm/sglang/0.5.6.post2, node_num 2 (2 x 8 GPUs, RDMA between the nodes), low
    # latency from 2 tokens (the legacy rows' first) to 256 (their last): dispatch 22.57 ->
    # 183.03 us, 254 x 8 x 7,408 = 15,053,056 B in 160.46 us = 93.81 GB/s; combine 25.9 ->
    # 337.47 us, 254 x 8 x 14,336 = 29,130,752 B in 311.57 us = 93.50 GB/s. 128 decode tokens
    # a rank: 22.57 + 128 / 254 x 160.46 = 103.432 us, 25.9 + 128 / 254 x 311.57 = 182.912 us;
    # 286.343 us.
    d, c = measured_speed("H100-80GB", "low_latency", 16) or (None, None)
    assert d is not None and c is not None
    assert d.bytes_per_s == pytest.approx(93.81e9, rel=1e-4)
    assert c.bytes_per_s == pytest.approx(93.50e9, rel=1e-4)
    nvlink4 = INTERCONNECTS["nvlink4"]  # not read: the kernels' own speeds
    ll = DeepEp(mode="low_latency")
    t = ll.seconds(128, r1.moe, 7168, 16, "decode", "H100-80GB", nvlink4)
    assert t == pytest.approx(286.343e-6, rel=1e-5)
    assert ll.notes("H100-80GB", 16, "decode") == ()
    # Normal mode (test_internode.py, 20 SMs), each call notify + transfer: dispatch 26.83 +
    # 31.63 = 58.46 us at 1 token, 3,162.0 + 50.3 = 3,212.3 at 16,384; combine 50.93 + 33.13 =
    # 84.06 and 7,624.0 + 182.3 = 7,806.3. At the measured EP the logical bytes of 4,096 tokens
    # are 4,096 / 16,383 of those between the rows: 58.46 + 0.250015 x 3,153.84 = 846.97 us,
    # 84.06 + 0.250015 x 7,722.24 = 2,014.74 us; 2,861.71 us.
    t = DeepEp(mode="normal").seconds(4096, r1.moe, 7168, 16, "prefill", "H100-80GB", nvlink4)
    assert t == pytest.approx(2861.71e-6, rel=1e-5)


def test_stand_ins_are_named(r1) -> None:  # type: ignore[no-untyped-def]
    # GB200 at EP 32 (the NVL72 rack): its one-tray EP 4 rows, said so; H200 across nodes:
    # H100's internode rows (its legacy table repeats them), said so.
    ll = DeepEp(mode="low_latency")
    (note,) = ll.notes("GB200", 32, "decode")
    assert "EP 32 on GB200" in note and "EP 4" in note
    speed = deepep_speed("H200", "low_latency", 32)
    assert speed.measurement.gpu == "H100-80GB" and speed.measurement.nodes == 4
    assert speed.note is not None and "H100's 4-node measurement" in speed.note
    assert deepep_speed("H200", "low_latency", 8).note is None  # its own 0.5.12 rows
    nvlink4 = INTERCONNECTS["nvlink4"]
    assert ll.seconds(64, r1.moe, 7168, 32, "decode", "H200", nvlink4) == pytest.approx(
        ll.seconds(64, r1.moe, 7168, 32, "decode", "H100-80GB", nvlink4))


@pytest.mark.parametrize(("gpu", "mode", "ep"), [
    ("B200", "low_latency", 16),  # two HGX B200 nodes: RDMA, no row
    ("H100-80GB", "normal", 4),  # half a node: no row at EP 4
    ("GB200", "normal", 144),  # beyond one NVL72 rack
    ("A100-80GB", "low_latency", 8),  # no table
])
def test_unmeasured_layouts_are_refused(gpu: str, mode: str, ep: int) -> None:
    with pytest.raises(UnmodelledError, match=f"DeepEP's {mode} kernels on {gpu} at EP {ep}"):
        deepep_speed(gpu, mode, ep)


def test_plan_notes_name_the_stand_ins() -> None:
    # A disaggregated plan on H200 (DeepEP on both roles, --deepep-mode auto): the prefill role's
    # EP 8 runs on H200's own 0.5.12 rows (no note); the decode role's EP 16 spans two nodes,
    # priced by H100's internode rows, which the plan says. B200 at EP 16: refused.
    spec, _ = load_model("deepseek-v3")
    extra = {"moe_a2a_backend": "deepep", "moe_dense_tp_size": 1, "enable_dp_lm_head": True}
    req = DisaggRequest(prefill=Layout(tp=8, dp=8, ep=8, dp_attention=True),
                        decode=Layout(tp=16, dp=16, ep=16, dp_attention=True), input_len=1024,
                        output_len=1024, gpu=get_gpu("H200"), link=get_kv_link("ib-ndr"),
                        engine=Engine.sglang, engine_version="0.5.8.post1", extra=extra)
    notes = [n for n in plan_disagg(spec, req).notes if "DeepEP" in n]
    assert len(notes) == 1 and notes[0].startswith("decode: DeepEP low_latency at EP 16 on H200")
    with pytest.raises(UnmodelledError, match="on B200 at EP 16"):
        plan_disagg(spec, replace(req, gpu=get_gpu("B200")))


@pytest.mark.parametrize(("ep", "dispatch_us", "combine_us"), [
    (16, 118, 195), (32, 155, 273), (64, 173, 314)])
def test_h100_internode_rows_agree_with_deepep_readme(ep: int, dispatch_us: float,
                                                      combine_us: float) -> None:
    # An independent measurement: deepseek-ai/DeepEP README.md, "Low-latency kernels with pure
    # RDMA" (H800, one CX7 InfiniBand 400 Gb/s NIC a GPU, 128 tokens a batch, hidden 7,168,
    # top-8, FP8 dispatch / bf16 combine; the table as of its 2025.04.22 news, PR #130, before
    # PR #173 let the kernels use NVLink). kvplan's H100 rows (aiconfigurator's legacy
    # internode table, another lab and GPU with the same NIC) price 128 tokens within 15 % of
    # it: e.g. EP 32, 27.13 + 128 / 254 x 237.34 = 146.7 us against 155, 28.43 + 128 / 254 x
    # 471.77 = 266.2 us against 273. Not used to set anything.
    d, c = measured_speed("H100-80GB", "low_latency", ep) or (None, None)
    assert d is not None and c is not None
    t_d = d.latency_s + 128 * 8 * 7408 / d.bytes_per_s
    t_c = c.latency_s + 128 * 8 * 14336 / c.bytes_per_s
    assert t_d == pytest.approx(dispatch_us * 1e-6, rel=0.15)
    assert t_c == pytest.approx(combine_us * 1e-6, rel=0.15)
