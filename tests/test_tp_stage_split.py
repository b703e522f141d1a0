"""The bounds of tests/benches/tp_stage_split.py (issue 30, the offload set's dense TP miss),
worked by hand on study run 2: CodeLlama-34B-Instruct, TP 2, H100, vLLM 0.15.1, codegen."""

import pytest

from tests.benches.tp_stage_split import (
    all_reduce_floor_s,
    chunk_extra_floor_s,
    chunk_extra_upper_s,
)

# error_records.csv, run 2 (stage 0 at 5/s, stage 1 at 10/s): mean ITL 14.357 and 15.029 ms,
# mean E2E 3,610.4 and 3,779.1 ms.
ITL = (14.35706711617361e-3, 15.029237858334639e-3)
E2E = (3.610361284431691, 3.7791062494528787)


def test_all_reduce_floor_by_hand() -> None:
    # A decode token's all-reduce at hidden 8,192 in bf16 is 16,384 bytes; at 2 ranks each sends
    # 2 (2 - 1) / 2 = 1 x it: 16,384 / 450 GB/s = 36.41 ns. At 4 ranks, 1.5 x: 54.61 ns.
    assert all_reduce_floor_s(2, 16_384) == pytest.approx(36.409e-9, rel=1e-4)
    assert all_reduce_floor_s(4, 16_384) == pytest.approx(54.613e-9, rel=1e-4)
    assert all_reduce_floor_s(1, 16_384) == 0.0


def test_chunk_extra_upper_run2_by_hand() -> None:
    # Running requests b = rate x E2E = 18.05 and 37.79; chunk-holding shares f = rate x ITL =
    # 0.07179 and 0.15029. Least growth per running request: its KV read, CodeLlama-34B's
    # config.json (48 layers, 8 KV heads of 8,192 / 64 = 128) at TP 2: 48 x 2 (K, V) x 4 x
    # 128 x 2 bytes = 98,304 bytes a token a GPU, at the mean context 100 + 466 + 123 = 689
    # tokens 67,731,456 bytes, 20.218 us at 3.35 TB/s; plus its 2 x 48 all-reduces at the line
    # rate, 96 x 36.41 ns = 3.495 us: 23.714 us. X <= (0.67217 ms - 23.714 us x 19.739)
    # / 0.07851 = 2.600 ms.
    kv = 689 * 98_304 / 3.35e12
    assert kv == pytest.approx(20.218e-6, rel=1e-4)
    growth = kv + 96 * all_reduce_floor_s(2, 16_384)
    upper = chunk_extra_upper_s(itl_s=ITL, share=(5 * ITL[0], 10 * ITL[1]),
                                running=(5 * E2E[0], 10 * E2E[1]), floor_growth_s=growth)
    assert upper == pytest.approx(2.600e-3, abs=0.001e-3)


def test_chunk_extra_floor_run2_by_hand() -> None:
    # The step of 18 decodes and the 470-token uncached chunk (566-token prompt less its 96
    # cached tokens), 488 tokens: each layer's weights are 2 x 8,192^2 (q, o) + 2 x 8,192 x
    # 1,024 (k, v) + 3 x 8,192 x 22,016 (gate, up, down) = 692,060,160 elements, 48 layers
    # 33,218,887,680, 16,609,443,840 a rank at TP 2: 2 x that x 488 = 1.62108e13 FLOPs, 16.383
    # ms at the H100's 989.5 dense bf16 TFLOPS (attention and lm_head left out: a lower floor).
    # Its 96 all-reduces of 488 x 16,384 bytes at the line rate: 96 x 17.768 us = 1.706 ms.
    # X >= 16.383 + 1.706 - 14.357 = 3.731 ms: above the upper bound (2.600 ms) by 1.1 ms.
    flops = 2 * 16_609_443_840 * 488
    ar = 96 * all_reduce_floor_s(2, 488 * 16_384)
    assert ar == pytest.approx(1.7057e-3, rel=1e-4)
    floor = chunk_extra_floor_s(chunk_step_flops=flops, peak_flops_per_s=989.5e12,
                                all_reduce_floor_s=ar, itl0_s=ITL[0])
    assert floor == pytest.approx(3.731e-3, abs=0.001e-3)
