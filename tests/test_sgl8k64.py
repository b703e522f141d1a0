"""The SGLang ISL 8,192 class (tests.benches.sgl8k64, issue 30): its selection, the scripts'
flags, and the frozen replay's queue worked by hand from kvplan's prefill step."""

from __future__ import annotations

import pytest

from tests.benches import aggmiss63
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import sgl8k64 as m
from tests.benches.lone_prefill import _mixed

_C16 = "2026_03_25_qwen3_5_397b_b200_sxm_sglang_fp8_agg_8192x1024_c16_tp4_0_ep1_0_461"


def test_class_selection_on_a_made_page() -> None:
    row = aggmiss63.frozen_rows()[_C16]
    page = f"""# x

{aggmiss63.SECTION}

| row | layout | measured | kvplan | TTFT ratio | TPOT ratio | split |
|---|---|---|---|---:|---:|---|
| {_C16} | sglang ... | 1,190.0 / 12.91 | 2,267.8 / 13.94 | 1.91 | 1.08 | held out |
"""
    rows = aggmiss63.page_rows(page, {_C16: row})
    assert [r.id for r in m.class_rows(rows)] == [_C16]
    # A shaped row is not in the class, nor a vLLM one.
    shaped = page.replace("| held out |", "| shaped |")
    assert m.class_rows(aggmiss63.page_rows(shaped, {_C16: row})) == []
    vllm = {_C16: {**row, "backend": "vllm"}}
    assert m.class_rows(aggmiss63.page_rows(page, vllm)) == []


def test_script_flags_follow_the_concurrency() -> None:
    """qwen3.5_fp8_b200.sh at 64c20b6b5 :31-42: recv 10 below 16 users, 30 from 16; chunk and
    input budget 32,768; 128 running; 0.82; fp8 KV. qwen3.5_fp8_b300.sh at c0f62a2ef:
    --max-running-requests $CONC, 16,384, recv 10."""
    b200 = m.SCRIPTS[("Qwen3.5-397B-A17B", "fp8", "b200_sxm", "0.5.9")]
    assert (b200.flags(8).recv_interval, b200.flags(16).recv_interval) == (10, 30)
    f = b200.flags(64)
    assert (f.chunked_prefill_size, f.max_prefill_tokens, f.max_running_requests,
            f.mem_fraction_static, f.kv_fp8) == (32768, 32768, 128, 0.82, True)
    b300 = m.SCRIPTS[("Qwen3.5-397B-A17B", "fp8", "b300_sxm", "0.5.10.post1")].flags(32)
    assert (b300.chunked_prefill_size, b300.max_running_requests, b300.recv_interval) == \
        (16384, 32, 10)


def test_frozen_replay_is_a_queue_of_lone_8k_prefills() -> None:
    """The frozen bench's Qwen3.5-397B FP8 B200 TP 4 row at 16 users (SGLang 0.5.9's
    defaults: chunk and input budget 16,384, so one 8,192-token prompt a step): kvplan's
    prefill step is its eager launches, 2,840 ops x 67 us = 190.28 ms, plus the GPU time
    (76.5 ms): 266.8 ms. The users stay in step, so each round's k-th prompt waits k steps:
    mean TTFT (16 + 1) / 2 x 266.8 = 2,267.8 ms, the page's figure (measured 1,190.0).
    Since hopperops65: 2,840 x 63.2 us = 179.49 ms, and the GPU time adds the norms' and the
    qkv input quantization's bytes (kvplan.perf.norm_traffic), 60 post-attention norms and the
    15 attention layers' input norms at 8,192 x 4,096 x 8 B = 268,435,456 B each, 15
    quantizations at 8,192 x (8,192 + 4,096 + 128) = 101,711,872 B: 21.65 GB at 8e12 x 0.9 =
    3.008 ms, less 90 floors (0.36 ms): 2.65 ms; 79.16 ms, a step of 258.65 ms, mean TTFT
    17 / 2 x 258.65 = 2,198.5 ms."""
    row = {r["id"]: r for r in agg.rows()}[_C16]
    cost = _mixed(agg.row_setup(row, "0.5.9").cost)
    assert cost.launch_seconds(8192) == pytest.approx(2840 * 63.2e-6)
    step = cost.seconds(decode_contexts=[], chunks=[(0, 8192)])
    assert step * 1e3 == pytest.approx(179.49 + 76.51 + 2.65, abs=0.05)
    assert 17 / 2 * step * 1e3 == pytest.approx(2198.5, abs=0.5)
