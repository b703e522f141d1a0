"""Properties of SGLang's handover between unequal prefill / decode TP sizes (issue 29,
kvplan.engines.sglang.state_transfer; goldens from real configs in tests/test_disagg_engines.py):
the Mamba slot is cut on its TP axis and the window pages head-sliced, so where nothing is
replicated the decode ranks together receive, and the prefill ranks together send, exactly the
request's whole state / KV whatever the two TP sizes; equal TP sizes keep the one-source rule.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kvplan.analysis.disagg import DisaggRequest, plan_disagg
from kvplan.analysis.plan_types import Layout
from kvplan.engines.base import Engine
from kvplan.engines.launch import LaunchLayout
from kvplan.engines.sglang.connectors import SglangDisagg
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link
from kvplan.kv.cache import layer_caches
from kvplan.kv.kinds import LayerCaches
from kvplan.sources.resolve import load_model

QWEN3_NEXT, _ = load_model("qwen3-next-80b-a3b")  # GDN: 16 key / 32 value heads
NEMOTRON, _ = load_model("nemotron-nano-9b-v2")  # Mamba2: 128 heads, 8 groups
GPT_OSS, _ = load_model("gpt-oss-20b")  # 8 KV heads
TPS = st.sampled_from([1, 2, 4, 8])


def _stages(spec, tp: int, *, states_only: bool) -> tuple[tuple[LayerCaches, ...], ...]:
    # SGLang's dtypes: the conv state bf16, the SSM state float32; KV bf16.
    layers = layer_caches(spec, kv_dtype="bf16", tp=tp, conv_dtype="bfloat16",
                          ssm_dtype="float32")
    if states_only:
        layers = tuple(LayerCaches(index=lc.index, caches=tuple(c for c in lc.caches
                                                                if c.is_state))
                       for lc in layers)
    return (layers,)


def _handover(spec, p: int, d: int, n: int, page: int, *, states_only: bool,
              backend: str = "mooncake", version: str | None = None):
    return SglangDisagg(backend=backend).handover(
        spec, input_len=n, prefill=LaunchLayout(tp=p), decode=LaunchLayout(tp=d),
        decode_stages=_stages(spec, d, states_only=states_only), block_size=page,
        version=version)


@settings(max_examples=40, deadline=None)
@given(spec=st.sampled_from([QWEN3_NEXT, NEMOTRON]), p=TPS, d=TPS,
       n=st.integers(1, 50_000), page=st.sampled_from([1, 16, 64]),
       backend=st.sampled_from(["mooncake", "nixl"]))
def test_state_bytes_summed_over_ranks_are_the_requests_state(spec, p, d, n, page,
                                                              backend) -> None:
    # Nothing replicated (heads and groups divide 8): the decode ranks' slots add up to the
    # request's whole state (its TP-1 slot per layer), and so do the prefill ranks' sends.
    h = _handover(spec, p, d, n, page, states_only=True, backend=backend)
    whole = sum(c.state_bytes for lc in _stages(spec, 1, states_only=True)[0]
                for c in lc.caches)
    assert sum(h.bytes_per_rank) == sum(h.sender_bytes) == sum(h.transfer_bytes) == whole
    # Each decode rank gets its own slot; each prefill rank sends its own slot's bytes once
    # (to one decode rank, or a 1 / (D / P) cut to each of D / P).
    assert h.bytes_per_rank == (whole // d,) * d
    assert h.sender_bytes == (whole // p,) * p


@settings(max_examples=40, deadline=None)
@given(p=TPS, d=TPS, n=st.integers(1, 50_000), page=st.sampled_from([1, 16, 64]))
def test_head_sliced_pages_summed_over_ranks_are_the_requests_kv(p, d, n, page) -> None:
    # gpt-oss-20b's 8 KV heads split over up to 8 ranks without replicas: the decode ranks
    # together receive every layer's pages of all heads once (without SGLang's SWA pool, as
    # here, the window layers keep every page).
    h = _handover(GPT_OSS, p, d, n, page, states_only=False)
    pages = -(-n // page)
    whole = 24 * pages * page * 8 * 64 * 2 * 2
    assert sum(h.bytes_per_rank) == sum(h.sender_bytes) == whole


@settings(max_examples=12, deadline=None)
@given(p=TPS, d=TPS, n=st.integers(1, 20_000), page=st.sampled_from([1, 16, 64]))
def test_swa_pool_pages_summed_over_ranks_are_the_requests_window(p, d, n, page) -> None:
    # gpt-oss-20b in SGLang's SWA pool (0.5.23, head-sliced from 0.5.22): the decode ranks
    # together receive each full layer's cdiv(n, page) pages and each window layer's pages of
    # [floor(max(0, n - 127) / page) x page, n), all 8 heads once (2,048 B/token at TP 1).
    h = plan_disagg(GPT_OSS, DisaggRequest(
        prefill=Layout(tp=p), decode=Layout(tp=d), input_len=n, output_len=64,
        gpu=get_gpu("H100"), link=get_kv_link("ib-ndr"), engine=Engine.sglang,
        engine_version="0.5.23", extra={"block_size": page})).handover
    start = max(0, n - 127) // page * page
    window_pages = -(-(n - start) // page)
    whole = 12 * (-(-n // page) + window_pages) * page * 2048
    assert sum(h.bytes_per_rank) == sum(h.sender_bytes) == whole


@settings(max_examples=30, deadline=None)
@given(spec=st.sampled_from([QWEN3_NEXT, NEMOTRON, GPT_OSS]), tp=TPS,
       n=st.integers(1, 50_000), page=st.sampled_from([1, 16, 64]),
       version=st.sampled_from([None, "0.5.9", "0.5.21", "0.5.23"]))
def test_equal_tp_is_the_one_source_rule(spec, tp, n, page, version) -> None:
    # Equal TP: every decode rank takes all its caches' pages and slots from its own prefill
    # rank, whatever the release (0.5.9 on, both backends): one transfer each, the rank's
    # layers x units x unit bytes.
    h = _handover(spec, tp, tp, n, page, states_only=False, version=version)
    own = sum(m.nbytes for m in h.moves)
    assert h.bytes_per_rank == h.transfer_bytes == h.sender_bytes == (own,) * tp
