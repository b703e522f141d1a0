"""The MoE op bench (tests/benches/moe_op_bench.py): its extracted rows, kvplan's price of a
row worked by hand, and examples/moe-op-bench.md printed as committed."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.benches.moe_op_bench import moe_price_s, read_csv, read_rows
from tests.benches.moe_op_extract import COLUMNS, LAYOUTS, SHAPES, TOKENS

ROOT = Path(__file__).resolve().parent.parent


def test_extracted_rows_are_the_kept_ones() -> None:
    rows = read_csv()
    assert tuple(rows[0]) == COLUMNS
    # tests/data/moe_op/SOURCES.md: rows kept per table, as the extraction printed them.
    per_table = Counter((r["device"], r["framework"]) for r in rows)
    assert per_table == {
        ("NVIDIA H100 80GB HBM3", "VLLM"): 1395, ("NVIDIA H100 80GB HBM3", "SGLang"): 1440,
        ("NVIDIA H100 80GB HBM3", "TRTLLM"): 1395, ("NVIDIA H200", "VLLM"): 1395,
        ("NVIDIA H200", "SGLang"): 1440, ("NVIDIA H200", "TRTLLM"): 1020,
        ("NVIDIA B200", "VLLM"): 1395, ("NVIDIA B200", "SGLang"): 1438,
        ("NVIDIA B200", "TRTLLM"): 876}
    assert sum(per_table.values()) == 11_794
    assert {r["distribution"] for r in rows} == {"balanced"}
    assert {r["moe_dtype"] for r in rows} == {"bfloat16", "fp8_block"}
    assert {(int(r["hidden_size"]), int(r["inter_size"]), int(r["num_experts"]),
             int(r["topk"])) for r in rows} == set(SHAPES)
    assert {(int(r["moe_tp_size"]), int(r["moe_ep_size"])) for r in rows} <= set(LAYOUTS)
    assert {int(r["num_tokens"]) for r in rows} == set(TOKENS)


def test_one_row_as_the_parquet_holds_it() -> None:
    # h100_sxm/moe/trtllm/1.2.0rc5/moe_perf.parquet at 095f58a51, read with pyarrow: the row
    # the trtmoe56 finding quotes (tests/benches/aiconfig_agg_text.py, "0.397 ms a layer at
    # 4,096 tokens on EP 8"): CUTLASS block-FP8, Qwen3-235B-A22B's experts.
    hits = [r for r in read_csv() if r["framework"] == "TRTLLM"
            and r["device"] == "NVIDIA H100 80GB HBM3" and r["moe_dtype"] == "fp8_block"
            and r["num_tokens"] == "4096" and r["hidden_size"] == "4096"
            and r["num_experts"] == "128" and r["moe_ep_size"] == "8"]
    assert len(hits) == 1
    assert hits[0]["kernel_source"] == "moe_torch_flow_cutlass"
    assert (hits[0]["inter_size"], hits[0]["topk"], hits[0]["moe_tp_size"]) == ("1536", "8", "1")
    assert float(hits[0]["latency"]) == 0.39716800053914386


def test_duplicate_cases_are_averaged_once() -> None:
    # The 384-expert shape is measured twice per case (SOURCES.md): 1,470 pairs.
    rows = read_csv()
    keys = Counter(tuple(r[c] for c in COLUMNS[:-1]) for r in rows)
    twice = [k for k, n in keys.items() if n == 2]
    assert len(twice) == 1470 and max(keys.values()) == 2
    assert {k[COLUMNS.index("num_experts")] for k in twice} == {"384"}
    cases = read_rows()
    assert len(cases) == 11_794 - 1470
    one = next(c for c in cases if c.engine == "vllm" and c.gpu == "H100" and c.tokens == 1
               and c.quant == "bfloat16" and c.shape == (7168, 2048, 384, 8) and c.moe_ep == 8)
    assert one.measured_ms == pytest.approx((0.06645333270231883 + 0.05894400179386139) / 2)


def _mixtral_trtllm_h100(tokens: int):
    return next(c for c in read_rows() if c.engine == "trtllm" and c.gpu == "H100"
                and c.quant == "bfloat16" and c.shape == (4096, 14336, 8, 2)
                and c.moe_tp == 1 and c.moe_ep == 1 and c.tokens == tokens)


def test_price_by_hand_compute_bound() -> None:
    # Mixtral-8x7B's experts, bf16, one H100, 16,384 tokens, TensorRT-LLM (no fused-MoE kernel
    # declared: exact FLOPs). 16,384 x 2 pairs x 2 x 3 x 4,096 x 14,336 = 1.15449e13 FLOPs at
    # 0.7 x 989.5 TFLOPS = 16.6677 ms, plus 4 small kernels (activation, permute, unpermute,
    # top-k) at 4 us: 16.6837 ms. (Measured 14.52 ms: a ratio of 1.15.)
    row = _mixtral_trtllm_h100(16384)
    flops = 16384 * 2 * 2 * 3 * 4096 * 14336
    assert moe_price_s(row) == pytest.approx(flops / (0.7 * 989.5e12) + 4 * 4e-6, rel=1e-9)
    assert moe_price_s(row) * 1e3 == pytest.approx(16.6837, abs=1e-4)


def test_price_by_hand_memory_bound() -> None:
    # One token: 2 of 8 experts touched (1 - (1 - 2/8)^1 = 0.25 of the experts' weights, and
    # of the router's): 8 x 3 x 4,096 x 14,336 x 2 B x 0.25 = 704.6 MB, with the router's
    # 4,096 x 8 x 2 B x 0.25, at 0.9 x 3.35 TB/s = 0.23370 ms, plus 4 x 4 us: 0.24970 ms.
    row = _mixtral_trtllm_h100(1)
    nbytes = (8 * 3 * 4096 * 14336 + 4096 * 8) * 2 * 0.25
    assert moe_price_s(row) == pytest.approx(nbytes / (0.9 * 3.35e12) + 4 * 4e-6, rel=1e-9)


def test_moe_op_bench_md_is_current() -> None:
    out = subprocess.run([sys.executable, "-m", "tests.benches.moe_op_bench"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "examples" / "moe-op-bench.md").read_text()
