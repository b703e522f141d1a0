"""DeepEP's measured kernel speeds (kvplan.engines.sglang.deepep_speed) and the time
`DeepEp.seconds` gives with them, worked out by hand from aiconfigurator's GB200 / GB300
tables (ai-dynamo/aiconfigurator 095f58a51, systems/data/{gb200,gb300}/comm/sglang/0.5.12/
wideep_deepep_{ll,normal}_perf.parquet, the rows of hidden 7,168, 256 experts, top-8; normal
mode at 20 SMs)."""

from __future__ import annotations

from math import comb

import pytest

from kvplan.engines.sglang.deepep import DeepEp
from kvplan.engines.sglang.deepep_speed import (
    LL_COMBINE_MSG,
    LL_DISPATCH_MSG,
    MEASURED_PAIRS,
    NORMAL_COMBINE_PAIR,
    NORMAL_DISPATCH_PAIR,
    measured_speed,
)
from kvplan.hardware.interconnect import INTERCONNECTS
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
    # 60,626,944 B in 96.351 us = 629.23 GB/s; combine 18.129 / 168.290: 1,023 x 8 x 14,336 =
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


def test_unmeasured_gpu_keeps_the_link_rule(r1) -> None:  # type: ignore[no-untyped-def]
    # H100 has no table read: its EP link's latency twice (NVLink 4: 10 us) and the remote
    # bytes at its bandwidth; 128 decode tokens at EP 8, 152,208 B a token (test_sglang_deepep).
    nvlink4 = INTERCONNECTS["nvlink4"]
    t = DeepEp(mode="low_latency").seconds(128, r1.moe, 7168, 8, "decode", "H100", nvlink4)
    assert t == pytest.approx(2 * nvlink4.latency_s + 128 * 152_208 / nvlink4.bytes_per_s)
    assert nvlink4.latency_s == pytest.approx(10e-6)
