"""kvplan.perf.sm100_tables (b200rule65): the B200 vLLM 0.19.0 kernel-table rates, each checked
against numbers worked by hand from the table rows (tests/data/dense_op, tests/data/attention_op)
and the data file `python -m tests.benches.b200rule65 fit` wrote from them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan._util.dtypes import GemmMath
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.sm100_tables import b200_tables
from kvplan.perf.step_ops import _Step

US = 1e-6


def test_gemm_fraction_is_the_tables_harmonic_mean_over_aspects() -> None:
    # B200 vLLM 0.19.0 fp8_block rows at M 1,024 with N x K = 2^24 (ms): 1,024 x 16,384
    # 0.0636116, 2,048 x 8,192 0.0388009, 4,096 x 4,096 0.0342240, 8,192 x 2,048 0.0329040,
    # 16,384 x 1,024 0.0336667; mean 0.0406414 ms for 2 x 1,024 x 2^24 = 34.3597 GFLOP each:
    # 845.4 TFLOPS, / 4,500 (B200 dense FP8) = 0.18787 -> 0.1879.
    t = b200_tables()
    assert t.gemm_fraction(1024, 2**24) == pytest.approx(0.1879, abs=1e-4)
    # Below 512 rows (CUDA-graph sized): no rate, the preset's fraction stays.
    assert t.gemm_fraction(256, 2**24) is None
    # Every fraction is of a table row: all in (0, 0.5) on this card (best 0.415).
    assert max(max(r) for r in t.gemm.fractions) < 0.5


def test_fp8_gemm_priced_at_the_table_fraction() -> None:
    # One w8a8 FP8 GEMM, M 1,024, N = K = 4,096 (N x K = 2^24): 34.3597e9 FLOPs /
    # (4.5e15 x 0.1879) = 40.64 us, above its weight bytes (16.8 MB at 8 TB/s x 0.69: ~3 us)
    # and two 4 us floors; without the rule 34.3597e9 / (4.5e15 x 0.55) = 13.88 us.
    gpu = get_gpu("B200")
    base = device_efficiency(gpu)
    flops = 2.0 * 1024 * 4096 * 4096
    for eff, want in ((base, 13.88), (replace(base, sm100_tables=b200_tables()), 40.64)):
        s = _Step(gpu, eff, eff.kernel_floor_s)
        s.op("gemm", flops=flops, nbytes=4096 * 4096, math=GemmMath.fp8, rows=1024)
        assert s.by_op["gemm"] / US == pytest.approx(want, abs=0.01)


def test_all_reduce_linear_between_table_sizes() -> None:
    # vLLM eager all-reduce, B200, 2 ranks: 1 MiB 20.8 us (20.80), 2 MiB 36.4 us (36.40);
    # 1.5 MiB: (20.80 + 36.40) / 2 = 28.60 us.
    t = b200_tables()
    pts = dict(t.all_reduce[2])
    lo, hi = pts[2**20], pts[2**21]
    assert t.all_reduce_s(2, 1.5 * 2**20, 1024) == pytest.approx((lo + hi) / 2)
    assert lo / US == pytest.approx(20.8, abs=0.05) and hi / US == pytest.approx(36.4, abs=0.05)
    # Graph-sized steps, rank counts the table lacks: kvplan's own price (None).
    assert t.all_reduce_s(2, 2**20, 511) is None
    assert t.all_reduce_s(3, 2**20, 1024) is None
    # Above the largest size (1 GiB): proportional to the bytes.
    top_b, top_s = t.all_reduce[4][-1]
    assert t.all_reduce_s(4, 2 * top_b, 4096) == pytest.approx(2 * top_s)


def test_context_floor_is_the_fastest_layout_linear_in_tokens() -> None:
    # Least measured context attention over the 11 GQA layouts, batch 1, bf16: 512 tokens
    # 14.86 us ((4, 1) / (16, 4)), 1,024 tokens 21.03 us ((8, 2)); 768: 17.945 us.
    t = b200_tables()
    assert t.context_floor_s(512) / US == pytest.approx(14.86)
    assert t.context_floor_s(1024) / US == pytest.approx(21.03)
    assert t.context_floor_s(768) / US == pytest.approx(17.945)
    assert t.context_floor_s(1) / US == pytest.approx(6.62)


def test_simulator_attention_takes_the_floor() -> None:
    # 4 query heads on 1 KV head (head dim 128), one 1,024-token chunk: kvplan prices the
    # layer at its 4 us kernel floor (the FLOPs take ~1.4 us); with the rule 21.03 us, the
    # table's fastest layout at 1,024 tokens.
    from tests.benches.attention_op_bench import step_cost

    cost, layers = step_cost("GQA", "vllm", "0.19.0", "B200", 4, 1, 1)
    before = cost.attention_seconds([], [(0, 1024)]) / layers
    cost._ctx_floor = b200_tables()
    after = cost.attention_seconds([], [(0, 1024)]) / layers
    assert before / US == pytest.approx(4.0)
    assert after / US == pytest.approx(21.03)
    # A decode-only step is untouched.
    cost._ctx_floor = None
    dec = cost.attention_seconds([2048] * 8, [])
    cost._ctx_floor = b200_tables()
    try:
        assert cost.attention_seconds([2048] * 8, []) == dec
    finally:
        cost._ctx_floor = None  # step_cost is cached: leave it as built


def test_data_file_is_the_tables_fit() -> None:
    # kvplan/perf/sm100_tables.json is what `python -m tests.benches.b200rule65 fit` writes
    # from the kernel-table rows alone (no serving row): rebuilt here, it must match.
    import json

    from tests.benches import b200rule65 as b

    data = json.loads(b.DATA.read_text())
    grid = b.gemm_grid()
    assert grid.pop("cases") == 174  # 6 M (512 .. 16,384) x 29 weight shapes
    assert data["gemm"] == grid
    assert data["all_reduce_us"] == b.ar_points()
    assert data["context_floor_us"] == b.floor_points()
