"""Collectives priced by the layout's NVLink domain (issue 30, planrate64): an all-reduce over
hosts is NCCL's hierarchical one on the inter-node link (kvplan.perf.layout, SpanningLink), the
domain is no larger than the host the deployment names (`--gpus-per-node`, Layout.node_gpus)
except an NVL72 rack's, and plan --rate tries engines over any count of whole nodes the model
can take (kvplan.analysis.rate_plan.engine_sizes)."""

from __future__ import annotations

import time

import pytest

from kvplan.analysis.rate_plan import engine_sizes, model_limit
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import INTERCONNECTS
from kvplan.perf.layout import Layout, SpanningLink, link
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

MIB = 2**20
H100 = get_gpu("H100-80GB")


def test_tp16_over_two_nodes_all_reduce_by_hand() -> None:
    # nvlink4: 360 GB/s, NCCL latency 10 us; ib-ndr: 45 GB/s a GPU's NIC, 25 us. 1 MiB over
    # TP 16 = 2 domains (hosts) of 8:
    #   in the domain  10 + 2 x 7/8 x 2^20 / 360e9 s = 10 + 5.0972 us
    #   across         25 + 2 x 1/2 x (2^20 / 8) / 45e9 s = 25 + 2.9127 us   -> 43.0100 us
    # (before: a flat NCCL ring over ib-ndr, 25 + 2 x 15/16 x 2^20 / 45e9 = 68.69 us).
    ar = link(Layout(tp=16, node_gpus=8), H100, 16)
    assert isinstance(ar, SpanningLink)
    assert ar.all_reduce_s(16, MIB) * 1e6 == pytest.approx(43.0100, abs=1e-4)
    # Other collectives over the hosts keep the scale-out preset's numbers.
    assert (ar.bytes_per_s, ar.latency_s) == (INTERCONNECTS["ib-ndr"].bytes_per_s,
                                              INTERCONNECTS["ib-ndr"].latency_s)
    # The same without node_gpus: the H100 preset's domain is 8 GPUs.
    assert link(Layout(tp=16), H100, 16).all_reduce_s(16, MIB) == ar.all_reduce_s(16, MIB)


def test_hosts_smaller_than_the_domain_cap_it() -> None:
    # TP 8 on hosts of 4 H100s: 2 domains of 4.
    #   10 + 2 x 3/4 x 2^20 / 360e9 = 10 + 4.3691 us; 25 + 2 x 1/2 x (2^20 / 4) / 45e9 =
    #   25 + 5.8254 us -> 45.1945 us; on one host of 8 the two-shot custom kernel:
    #   13.1018 (measured fixed part, interconnects.json) + 5.0972 = 18.1990 us.
    assert link(Layout(tp=8, node_gpus=4), H100, 8).all_reduce_s(8, MIB) * 1e6 == \
        pytest.approx(45.1945, abs=1e-4)
    within = link(Layout(tp=8, node_gpus=8), H100, 8)
    assert within is link(Layout(tp=8), H100, 8) or within == link(Layout(tp=8), H100, 8)
    assert within.all_reduce_s(8, MIB) * 1e6 == pytest.approx(18.1990, abs=1e-4)


def test_nvl72_rack_over_trays_is_nccl_on_nvlink() -> None:
    # GB200 trays of 4: TP 8 stays in the rack's NVLink domain (72) but spans two hosts, where
    # the custom all-reduce refuses (vLLM custom_all_reduce.py:90): NCCL's ring on nvlink5,
    # 8 + 2 x 7/8 x 2^20 / 588e9 s = 8 + 3.1208 = 11.1208 us.
    gb200 = get_gpu("GB200")
    ar = link(Layout(tp=8, node_gpus=4), gb200, 8)
    assert not isinstance(ar, SpanningLink) and ar.custom_all_reduce_latency_s is None
    assert ar.all_reduce_s(8, MIB) * 1e6 == pytest.approx(11.1208, abs=1e-4)


def test_tp16_over_two_nodes_is_slower_than_tp8_by_the_inter_node_all_reduce() -> None:
    # Llama-3.1-70B (80 layers, hidden 8192), a decode step of 64 requests at 2,048 tokens:
    # 2 all-reduces a layer of 64 x 8192 x 2 B = 1 MiB: TP 8 160 x 18.1990 us = 2.9118 ms,
    # TP 16 over 2 hosts 160 x 43.0100 us = 6.8816 ms. TP 16 streams half the weights a GPU,
    # yet its step is slower than TP 8's at the same 64 requests (and than a TP 8 copy's at
    # 32, each of two copies taking half the stream); without its all-reduces it is faster.
    spec = load_model("llama-3.1-70b")[0]

    def step(tp: int, requests: int) -> tuple[float, float]:
        st = step_time(spec, H100, tokens=requests, context=2048, requests=requests,
                       layout=Layout(tp=tp, node_gpus=8))
        return st.seconds, st.by_op["tp_all_reduce"]

    (t16, ar16), (t8, ar8), (t8_half, _) = step(16, 64), step(8, 64), step(8, 32)
    assert ar16 * 1e3 == pytest.approx(6.8816, abs=1e-4)
    assert ar8 * 1e3 == pytest.approx(2.9118, abs=1e-4)
    assert t16 > t8 > t8_half
    assert t16 - ar16 < t8 - ar8


def test_engine_sizes_take_any_node_count_the_model_can() -> None:
    # DeepSeek-V3: 128 heads, 256 routed experts -> engines up to 256 GPUs, 2..32 nodes of 8;
    # Llama-3.1-70B: 64 heads -> 2..8 nodes. No engine's check admits more (model_limit).
    assert model_limit(load_model("deepseek-v3")[0]) == 256
    assert model_limit(load_model("llama-3.1-70b")[0]) == 64
    assert engine_sizes(8, 3, 256) == (1, 2, 4, 8, 16, 24)
    assert engine_sizes(8, 5, 64) == (1, 2, 4, 8, 16, 24, 32, 40)
    assert engine_sizes(8, 20, 64) == (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64)
    assert engine_sizes(8, 3) == (1, 2, 4, 8, 16)  # no limit known: powers of two, as before


def test_huge_node_counts_do_not_count_through() -> None:
    start = time.monotonic()
    assert engine_sizes(8, 10**12, 256) == (1, 2, 4, 8) + tuple(range(16, 257, 8))
    assert engine_sizes(10**9, 10**12, 256) == (1, 2, 4, 8)
    assert len(engine_sizes(8, 10**12)) == 4 + 39  # 2 .. 2^39 nodes
    assert time.monotonic() - start < 1.0
