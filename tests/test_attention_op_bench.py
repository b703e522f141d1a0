"""The attention op bench (tests/benches/attention_op_bench.py): its extracted rows, kvplan's
price of rows worked by hand, the rows left out, and examples/attention-op-bench.md printed as
committed."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.benches.attention_op_bench import (
    MLA_ROWS,
    below_bound,
    excluded,
    price_s,
    read_csv,
    read_mla_rows,
    read_rows,
)
from tests.benches.attention_op_extract import COLUMNS, GROUPS, MLA_COLUMNS, MLA_TP

ROOT = Path(__file__).resolve().parent.parent
H100, H200, B200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA B200"


def test_extracted_rows_are_the_kept_ones() -> None:
    rows = read_csv()
    assert tuple(rows[0]) == COLUMNS
    # tests/data/attention_op/SOURCES.md: rows kept per table, as the extraction printed them.
    per_table = Counter((r["device"], r["framework"], r["op_name"]) for r in rows)
    ctx, gen = "context_attention", "generation_attention"
    assert per_table == {
        (H100, "VLLM", ctx): 2618, (H100, "VLLM", gen): 3264,
        (H100, "SGLang", ctx): 2618, (H100, "SGLang", gen): 2384,
        (H100, "TRTLLM", ctx): 2420, (H100, "TRTLLM", gen): 2590,
        (H200, "VLLM", ctx): 4972, (H200, "VLLM", gen): 6528,
        (H200, "SGLang", ctx): 2618, (H200, "SGLang", gen): 2384,
        (H200, "TRTLLM", ctx): 2420, (H200, "TRTLLM", gen): 2590,
        (B200, "VLLM", ctx): 2618, (B200, "VLLM", gen): 3264,
        (B200, "SGLang", ctx): 2618, (B200, "SGLang", gen): 2384,
        (B200, "TRTLLM", ctx): 2420, (B200, "TRTLLM", gen): 2590}
    assert sum(per_table.values()) == 53_300
    assert {r["head_dim"] for r in rows} == {"128"}
    assert {(r["attn_dtype"], r["kv_cache_dtype"]) for r in rows} == {
        ("bfloat16", "bfloat16"), ("bfloat16", "fp8")}
    # Every case with each cache: half the rows are fp8.
    assert sum(r["kv_cache_dtype"] == "fp8" for r in rows) == 26_650
    assert {int(r["num_heads"]) // int(r["num_key_value_heads"]) for r in rows} == set(GROUPS)
    assert {r["step"] for r in rows if r["op_name"] == ctx} == {"0"}
    assert {r["isl"] for r in rows if r["op_name"] == gen} == {"1"}
    # H200's vLLM tables carry two version labels, 0.19.0 and 0.19.1 (SOURCES.md).
    assert Counter(r["version"] for r in rows if r["device"] == H200
                   and r["framework"] == "VLLM") == {"0.19.0": 5750, "0.19.1": 5750}
    assert len(read_rows()) == 53_300  # no case repeats within a version


def test_extracted_mla_rows() -> None:
    rows = read_csv(MLA_ROWS)
    assert tuple(rows[0]) == MLA_COLUMNS
    per_table = Counter((r["device"], r["framework"], r["op_name"]) for r in rows)
    assert sum(per_table.values()) == 1655 == len(read_mla_rows())
    assert per_table[(H100, "SGLang", "mla_context")] == 110
    assert per_table[(H200, "TRTLLM", "mla_context")] == 87
    assert {r["num_heads"] for r in rows} == {"128"}
    assert {int(r["tp_size"]) for r in rows} <= set(MLA_TP)
    assert {r["framework"] for r in rows} == {"SGLang", "TRTLLM"}


def _row(rows, **want):
    hits = [r for r in rows if all(getattr(r, k) == v for k, v in want.items())]
    assert len(hits) == 1
    return hits[0]


def test_one_row_as_the_parquet_holds_it() -> None:
    # h100_sxm/attention/vllm/0.19.0/context_attention_perf.parquet at 095f58a51, read with
    # pyarrow: one 16,384-token prompt, 64 query heads, 8 KV heads, bf16, no window.
    hits = [r for r in read_csv() if r["framework"] == "VLLM" and r["device"] == H100
            and r["op_name"] == "context_attention" and r["batch_size"] == "1"
            and r["isl"] == "16384" and r["num_heads"] == "64"
            and r["num_key_value_heads"] == "8" and r["kv_cache_dtype"] == "bfloat16"]
    assert len(hits) == 1
    assert hits[0]["kernel_source"] == "vllm_flash_attn"
    assert float(hits[0]["latency"]) == 6.1134293874104815


def test_price_by_hand_context_compute_bound() -> None:
    # That row: the causal pairs of one 16,384-token prompt, 16,384 x 16,385 / 2 = 134,225,920,
    # each 2 x 64 x 128 (q.K) + 2 x 64 x 128 (p.V) = 32,768 FLOPs: 4.39831e12 FLOPs at 0.60 x
    # 989.5 TFLOPS = 7.4083 ms. Its bytes, the 16,384 rows written (8 KV heads x 256 x 2 B =
    # 4 kB each), 67 MB, take 0.022 ms: compute-bound. Measured 6.113 ms (FlashAttention 3 at
    # 0.71 of the peak): a ratio of 1.21.
    row = _row(read_rows(), engine="vllm", gpu="H100", phase="context", batch=1, isl=16384,
               heads=64, kv_heads=8, kv_dtype="bf16")
    flops = 16384 * 16385 // 2 * (2 * 64 * 128 * 2)
    assert price_s(row) == pytest.approx(flops / (0.6 * 989.5e12), rel=1e-9)
    assert price_s(row) * 1e3 == pytest.approx(7.4083, abs=1e-4)


def test_price_by_hand_generation_memory_bound() -> None:
    # SGLang 0.5.9 on H100: 8 sequences over 8,191 cached tokens (8,192 keys with the new one),
    # 32 query / 8 KV heads: 8 x 8,192 keys x 8 heads x (128 + 128) x 2 B = 268,435,456 B at
    # 0.9 x 3.35 TB/s = 0.089033 ms (the FLOPs, 8 x 8,192 x 16,384, are 1.07e9: 1.8 us at the
    # attention rate). Measured 0.1024 ms: a ratio of 0.87.
    row = _row(read_rows(), engine="sglang", gpu="H100", phase="generation", batch=8,
               step=8191, heads=32, kv_heads=8, kv_dtype="bf16")
    nbytes = 8 * 8192 * 8 * 256 * 2
    assert price_s(row) == pytest.approx(nbytes / (0.9 * 3.35e12), rel=1e-9)
    assert price_s(row) * 1e3 == pytest.approx(0.089033, abs=1e-6)
    # The same case with an fp8 cache: one byte an element, half the bytes, 0.044517 ms.
    # Measured 0.0675 ms (1.5x faster than with the bf16 cache's 0.1024 ms, not 2x).
    fp8 = _row(read_rows(), engine="sglang", gpu="H100", phase="generation", batch=8,
               step=8191, heads=32, kv_heads=8, kv_dtype="fp8")
    assert price_s(fp8) == pytest.approx(nbytes / 2 / (0.9 * 3.35e12), rel=1e-9)


def test_price_by_hand_mla_context_naive_form() -> None:
    # TensorRT-LLM 1.2.0rc5, H100, DeepSeek-V3's 128 heads on one rank, one 16,384-token
    # prompt, priced in the naive form (kvplan.perf.flops.prefill_form): per pair 2 x 128 x
    # (128 + 64) + 2 x 128 x 128 = 81,920 FLOPs, x 134,225,920 pairs = 1.09958e13 FLOPs at
    # 0.60 x 989.5 TFLOPS = 18.5208 ms. Measured 18.411 ms.
    row = _row(read_mla_rows(), engine="trtllm", gpu="H100", phase="context", batch=1,
               isl=16384, tp=1)
    flops = 16384 * 16385 // 2 * (2 * 128 * 192 + 2 * 128 * 128)
    assert price_s(row) == pytest.approx(flops / (0.6 * 989.5e12), rel=1e-9)
    assert row.measured_ms == pytest.approx(18.4111, abs=1e-4)


def test_rows_below_the_cards_bound_are_left_out() -> None:
    # H200's vLLM context row of the hand-priced case: 0.466 ms, where the FLOPs alone need
    # 4.39831e12 / 989.5e12 = 4.445 ms at the whole peak.
    rows = read_rows()
    h200 = [r for r in rows if r.engine == "vllm" and r.gpu == "H200" and r.phase == "context"
            and r.batch == 1 and r.isl == 16384 and (r.heads, r.kv_heads) == (64, 8)
            and r.kv_dtype == "bf16"]
    assert len(h200) == 2  # 0.19.0 and 0.19.1
    for r in h200:
        assert price_s(r, bound=True) * 1e3 == pytest.approx(4.4450, abs=1e-4)
        assert below_bound(r) and excluded(r) == "table left out"
    table = [r for r in rows if r.engine == "vllm" and r.gpu == "H200" and r.phase == "context"
             and r.kv_dtype == "bf16"]
    assert (sum(map(below_bound, table)), len(table)) == (1083, 2486)
    # The hand-priced H100 row runs slower than the bound and is kept.
    h100 = _row(rows, engine="vllm", gpu="H100", phase="context", batch=1, isl=16384,
                heads=64, kv_heads=8, kv_dtype="bf16")
    assert excluded(h100) is None
    trt = Counter(r.gpu for r in rows if r.engine == "trtllm" and below_bound(r))
    assert trt == {"H100": 148, "H200": 75, "B200": 148}
    # All generation calls holding a quarter of a GB of KV or more, the least of them
    # 268,435,456 B (e.g. H100's 128 sequences x 512 keys x 8 KV heads x 256 x 2 B).
    assert min(r.batch * (r.step + 1) * r.kv_heads * 256 * 2 for r in rows
               if r.engine == "trtllm" and below_bound(r) and r.phase == "generation"
               ) == 268_435_456
    assert all(r.phase == "generation" for r in rows if r.engine == "trtllm" and below_bound(r))


def test_attention_op_bench_md_is_current() -> None:
    out = subprocess.run([sys.executable, "-m", "tests.benches.attention_op_bench"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "examples" / "attention-op-bench.md").read_text()
