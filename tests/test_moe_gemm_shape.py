"""The routed experts' fraction by rows per expert (kvplan.perf.moe_gemm_shape, moeshape59): the
fit on the H100 kernel tables gives the committed tables, kvplan's price of a kernel-table case
by hand, and the fraction's properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvplan._util.dtypes import GemmMath
from kvplan._util.errors import InputError
from kvplan.perf.efficiency import (
    DEFAULT_EFFICIENCY,
    MOE_GEMM_SHAPE,
    MOE_GEMM_SHAPE_BF16,
    MOE_GEMM_SHAPE_FP8,
    Efficiency,
)
from kvplan.perf.moe_gemm_shape import ExpertsShapeFraction
from tests.benches.moe_op_bench import BEFORE, SHAPE, moe_price_s, read_rows
from tests.benches.moe_shape_fit import compute_bound, fit_table


def _case(engine: str, quant: str, shape: tuple[int, int, int, int], tp: int, ep: int,
          tokens: int):
    return next(c for c in read_rows() if c.engine == engine and c.gpu == "H100"
                and c.quant == quant and c.shape == shape and c.moe_tp == tp
                and c.moe_ep == ep and c.tokens == tokens)


def test_the_fit_gives_the_tables() -> None:
    # tests.benches.moe_shape_fit on the H100 tables: (rows per expert, fit cases, cases in the
    # bucket, median implied fraction), kept to two places in kvplan.perf.efficiency.
    rows = read_rows()
    bf16, fp8 = fit_table(rows, "bfloat16"), fit_table(rows, "fp8_block")
    assert [(m, n, every) for m, n, every, _ in bf16] == [
        (512, 81, 102), (1024, 60, 60), (2048, 21, 21), (4096, 21, 21)]
    assert [(m, n, every) for m, n, every, _ in fp8] == [
        (256, 76, 117), (512, 93, 96), (1024, 55, 56), (2048, 21, 21), (4096, 21, 21)]
    assert sum(n for _, n, _, _ in bf16) == 183 and sum(n for _, n, _, _ in fp8) == 266
    # Fitted at e846422e (bf16 0.34 / 0.44 / 0.59 / 0.59). vLLM's EP walk over every pair was
    # priced after (vllmep59: its bf16 EP cases now cost more, so they imply a higher fraction):
    # the same fit over the same cases gives 0.376 / 0.455 at 512 / 1,024 rows today; the opt-in
    # table is kept as fitted (as moefit58's constant is, tests/test_moe_op_bench.py).
    assert [f for _, _, _, f in bf16] == pytest.approx([0.376, 0.455, 0.589, 0.589], abs=5e-4)
    assert MOE_GEMM_SHAPE_BF16 == ((512, 0.34), (1024, 0.44), (2048, 0.59), (4096, 0.59))
    # Block FP8's fitted at e846422e as 0.18 / 0.22 / 0.23 / 0.35 / 0.35; vllmmoe59 then priced
    # vLLM's FP8 Triton activations (its FP8 cases cost more, so imply higher fractions): 0.205
    # / 0.232 / 0.252 / 0.346 / 0.346; trtctx66 TensorRT-LLM's CUTLASS kernels' in its prefill:
    # today 0.211 / 0.239 / 0.255 / 0.360 / 0.360; kept as fitted.
    assert [f for _, _, _, f in fp8] == pytest.approx([0.211, 0.239, 0.255, 0.360, 0.360],
                                                      abs=5e-4)
    assert MOE_GEMM_SHAPE_FP8 == ((256, 0.18), (512, 0.22), (1024, 0.23), (2048, 0.35),
                                  (4096, 0.35))
    # FP8's 2,048 and 4,096 points are pooled (at the fit 0.353 then 0.337 apart): one median.
    assert fp8[3][3] == fp8[4][3] == pytest.approx(0.360, abs=5e-4)


def test_compute_bound_is_read_in_the_measurements() -> None:
    # Mixtral-8x7B bf16 under TensorRT-LLM, one H100: 16,384 tokens ran 14.52 ms, 8,192 tokens
    # about half (a fit case); 1 token against none at 0 tokens is no case, nor 2 tokens (1 x 2
    # / 8 = 0.25 rows an expert at the half: not every expert receives one).
    rows = [r for r in read_rows() if r.engine == "trtllm" and r.gpu == "H100"
            and r.quant == "bfloat16" and r.shape == (4096, 14336, 8, 2) and r.moe_tp == 1
            and r.moe_ep == 1]
    picked = {r.tokens for r in compute_bound(rows)}
    assert 16384 in picked and not {1, 2} & picked
    big, half = (next(r for r in rows if r.tokens == t) for t in (16384, 8192))
    assert big.measured_ms >= 1.6 * half.measured_ms


def test_shape_price_by_hand_bf16() -> None:
    # Mixtral-8x7B's experts, bf16, one H100, 16,384 tokens, TensorRT-LLM (no fused-MoE kernel
    # declared: exact FLOPs): 16,384 x 2 / 8 = 4,096 rows an expert, the table's last point,
    # 0.59. 16,384 x 2 pairs x 2 x 3 x 4,096 x 14,336 = 1.15449e13 FLOPs / (0.59 x 989.5
    # TFLOPS) = 19.7752 ms, plus the 4 small kernels at 4 us: 19.7912 ms (measured 14.52 ms;
    # 16.6837 ms at the dense 0.70, 35.3716 ms at the one fraction 0.33).
    row = _case("trtllm", "bfloat16", (4096, 14336, 8, 2), 1, 1, 16384)
    flops = 16384 * 2 * 2 * 3 * 4096 * 14336
    assert moe_price_s(row, **SHAPE) == pytest.approx(flops / (0.59 * 989.5e12) + 4 * 4e-6,
                                                      rel=1e-9)
    assert moe_price_s(row, **SHAPE) * 1e3 == pytest.approx(19.7912, abs=1e-4)


def test_shape_price_by_hand_block_fp8_between_points() -> None:
    # Kimi-K2's experts (384, top-8), block FP8, SGLang 0.5.9 on one H100 rank of EP 8, 16,384
    # tokens (no fused-MoE kernel declared: exact FLOPs; vLLM's row adds its Triton kernel's
    # FP8 activation traffic over every pair since vllmmoe59, tests/test_moe_kernel.py):
    # 16,384 x 8 / 384 = 341.33 rows an expert, between the FP8 points 256 (0.18) and
    # 512 (0.22): log2(341.33 / 256) = log2(4 / 3) = 0.41504 of the way, 0.18 + 0.41504 x 0.04
    # = 0.196601. FLOPs: 16,384 x 8 x 2 x 3 x 7,168 x 2,048 / 8 ranks = 1.44312e12, at 0.196601
    # x 1,979 TFLOPS = 3.7091 ms, plus 4 x 4 us: 3.7251 ms. The rank's 48 experts' weights,
    # 48 x 3 x 7,168 x 2,048 B = 2.11 GB at 0.69 x 3.35 TB/s = 0.92 ms, are not the bound.
    row = _case("sglang", "fp8_block", (7168, 2048, 384, 8), 1, 8, 16384)
    frac = 0.18 + math.log2(4 / 3) * (0.22 - 0.18)
    assert frac == pytest.approx(0.196601, abs=1e-6)
    flops = 16384 * 8 * 2 * 3 * 7168 * 2048 / 8
    assert moe_price_s(row, **SHAPE) == pytest.approx(flops / (frac * 1979e12) + 4 * 4e-6,
                                                      rel=1e-9)
    assert moe_price_s(row, **SHAPE) * 1e3 == pytest.approx(3.7251, abs=1e-4)


def test_memory_bound_calls_do_not_move() -> None:
    # One token of Mixtral (0.25 rows an expert): the first point's 0.34 leaves it bound by
    # its weights' bytes (test_moe_op_bench.test_price_by_hand_memory_bound).
    row = _case("trtllm", "bfloat16", (4096, 14336, 8, 2), 1, 1, 1)
    assert moe_price_s(row, **SHAPE) == moe_price_s(row, **BEFORE)


def test_opt_in_and_checked() -> None:
    assert DEFAULT_EFFICIENCY.moe_gemm_shape is None
    for rows, fractions in (((512, 256), (0.3, 0.4)), ((256, 512), (0.4, 0.3)),
                            ((256,), (1.5,)), ((256, 512), (0.3,)), ((0,), (0.3,))):
        with pytest.raises(InputError, match="experts shape table"):
            ExpertsShapeFraction(rows=rows, fractions=fractions)


def test_fp4_experts_keep_the_dense_fraction() -> None:
    eff = Efficiency(moe_gemm_shape=MOE_GEMM_SHAPE)
    assert eff.experts_fraction(GemmMath.fp4, 4096, 0.7) == 0.7


@given(a=st.floats(0.01, 1e6), b=st.floats(0.01, 1e6),
       math_=st.sampled_from([GemmMath.bf16, GemmMath.fp8]),
       dense=st.sampled_from([0.70, 0.55, 0.54, 0.49]))
def test_fraction_monotone_and_within_dense(a: float, b: float, math_: GemmMath,
                                            dense: float) -> None:
    # More rows an expert never lowers the fraction, which stays in (0, the dense GEMMs'].
    eff = Efficiency(moe_gemm_shape=MOE_GEMM_SHAPE)
    lo, hi = sorted((a, b))
    f_lo, f_hi = (eff.experts_fraction(math_, x, dense) for x in (lo, hi))
    assert 0 < f_lo <= f_hi <= dense
