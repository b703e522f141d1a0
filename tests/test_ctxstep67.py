"""ctxstep67's bench (tests/benches/ctxstep67.py, ctxstep67_fp4.py): the numbers worked by hand."""

from __future__ import annotations

import pytest

from tests.benches import ctxstep67 as c
from tests.benches import ctxstep67_fp4 as f

CFG527 = "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527"


def _case(engine: str, gpu: str, ep: int, tokens: int):  # noqa: ANN202
    return next(r for r in f.cases()
                if (r.engine, r.gpu, r.moe_ep, r.tokens) == (engine, gpu, ep, tokens))


def test_nvfp4_case_price_by_hand() -> None:
    # SGLang B200 NVFP4, EP 4, 16,384 tokens, balanced: 16,384 x 8 / 4 = 32,768 (token, expert)
    # rows on the rank, 3 GEMMs of 7,168 x 2,048 (gate, up, down): 2 x 3 x 7,168 x 2,048 x
    # 32,768 = 2,886,218,022,912 FLOPs, at 0.70 (the dense fraction) of B200's 9 PFLOPS FP4:
    # 0.45813 ms. The table measured 1.1432 ms (tests/data/moe_op/moe_nvfp4_rows.csv.gz).
    case = _case("sglang", "B200", 4, 16384)
    assert case.measured_ms == pytest.approx(1.14317, rel=1e-4)
    assert f.price_ms(case) == pytest.approx(2886218022912 / (0.70 * 9e15) * 1e3, rel=1e-3)
    # Compute-bound: half the fraction, twice the time.
    assert f.price_ms(case, 0.35) == pytest.approx(2 * f.price_ms(case), rel=1e-3)


def test_fit_cases_are_compute_bound_and_fit_centres_them() -> None:
    rows = f.fit_cases()
    # By hand from the table: SGLang B200 EP 4 8,192 -> 16,384 tokens 0.589 -> 1.143 ms (x1.94,
    # a fit case); EP 8 4,096 tokens 0.192 ms over 2,048's: the ratio decides.
    assert _case("sglang", "B200", 4, 16384) in rows
    assert all(r.tokens >= 4096 for r in rows)
    frac = f.fit_fp4_experts()
    assert 0.1 < frac < 0.7  # slower than kvplan's dense 0.70 on the tables
    assert f.median_ratio(rows, frac) == pytest.approx(1.0, abs=0.02)
    assert f.median_ratio(rows) < 0.5  # kvplan's price: under half the measured


def test_fp4_patch_leaves_other_math() -> None:
    from kvplan._util.dtypes import GemmMath
    from kvplan.perf.efficiency import Efficiency

    eff = Efficiency()
    with f.fp4_experts(0.2):
        assert eff.experts_fraction(GemmMath.fp4, 512, 0.7) == 0.2
        assert eff.experts_fraction(GemmMath.bf16, 512, 0.7) == 0.7
    assert eff.experts_fraction(GemmMath.fp4, 512, 0.7) == 0.7


def test_cfg527_step_and_need_by_hand() -> None:
    # The page (examples/disagg-bench.md 3l): 4 prompts of 1,024 on each of 4 ranks, a full
    # step 314 ms. Measured rate (Little): 512 / (7,816.5 + 1,023 x 24.49 ms) = 15.58 /s;
    # kvplan's 16 / 0.314 s = 50.96 /s: need 3.27.
    s = c.context_step(CFG527)
    assert (s.prompts, s.ranks, s.isl) == (4, 4, 1024)
    assert s.step_ms == pytest.approx(314.0, abs=0.5)
    assert s.need == pytest.approx(16 / 0.314 / (512 / 32.8698), rel=0.01)
    assert sum(s.by_op.values()) == pytest.approx(s.step_ms, rel=1e-6)


def test_op_ratios_take_the_stated_cases() -> None:
    s = c.context_step(CFG527)
    r = c.op_ratios(s)
    # q_b (24,576 x 1,536) -> the grid's (16,384, 2,048): log2 distances 0.58 + 0.42.
    assert "16384x2048" in r["attention_proj"].case and "bfloat16" in r["attention_proj"].case
    assert "nvfp4" in r["mlp"].case
    assert r["experts"].ratio == pytest.approx(0.45813 / 1.14317, rel=1e-3)
    assert "MLA ISL 1,024 x 4" in r["attention"].case
    imp = c.implied_ms(s, r)
    assert imp["experts"] == pytest.approx(s.by_op["experts"] / r["experts"].ratio)
    assert imp["prefill_launch"] == s.by_op["prefill_launch"]  # no table: kvplan's
