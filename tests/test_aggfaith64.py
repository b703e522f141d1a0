"""aggfaith64's helpers (tests/benches/aggfaith64.py), worked by hand."""

from __future__ import annotations

import math

import pytest

from tests.benches import aggfaith64 as f


def test_one_parameter_by_hand() -> None:
    # (1, 3), (2, 5), (3, 7). Slope alone: sum xy / sum x^2 = (3 + 10 + 21) / (1 + 4 + 9)
    # = 34 / 14 = 17 / 7; residuals 3 - 17/7 = 4/7, 5 - 34/7 = 1/7, 7 - 51/7 = -2/7, mean
    # square (16 + 1 + 4) / 49 / 3 = 1/7, RMS 1 / sqrt 7. Offset alone: mean(y - x) = mean(2,
    # 3, 4) = 3; residuals -1, 0, 1, RMS sqrt(2/3).
    a, rms_a, b, rms_b = f.one_parameter([1, 2, 3], [3, 5, 7])
    assert (a, rms_a) == pytest.approx((17 / 7, 1 / math.sqrt(7)))
    assert (b, rms_b) == pytest.approx((3.0, math.sqrt(2 / 3)))


def test_bootstrap_brackets_an_exact_line() -> None:
    # Points on y = 2 x + 1 exactly: every resample that places a slope gives a = 2, b = 1,
    # so both percentile bands collapse there; the same seed gives the same bands.
    xs, ys = [1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 5.0, 7.0, 9.0, 11.0]
    (a_lo, a_hi), (b_lo, b_hi) = f.bootstrap(xs, ys, n=50)
    assert (a_lo, a_hi, b_lo, b_hi) == pytest.approx((2.0, 2.0, 1.0, 1.0))
    assert f.bootstrap(xs, ys, n=50) == f.bootstrap(xs, ys, n=50)


def test_counterfactual_by_hand() -> None:
    # A 10 ms step; experts 2 -> 5, attention core 1 -> 1, projections 1 -> 2, all-reduce
    # 1 -> 3 at the tables: 10 + 3 + 0 + 1 + 2 = 16 ms; the experts kept: 16 - 3 = 13 ms. An op
    # outside COVERED (the Triton-priced line) is not counted.
    table = {"experts": (2.0, 5.0), "attention core": (1.0, 1.0),
             "attention projections": (1.0, 2.0), "TP all-reduce": (1.0, 3.0),
             "experts (kvplan priced as the table's Triton kernel)": (9.0, 5.0)}
    assert f.counterfactual(10.0, table) == pytest.approx((16.0, 13.0))


def test_model_class() -> None:
    assert f.model_class(f._spec("MiniMaxAI/MiniMax-M2.5", "fp8")) == "MoE"
    assert f.model_class(f._spec("moonshotai/Kimi-K2.5", "int4")) == "MLA"
    assert f.model_class(f._spec("deepseek-ai/DeepSeek-R1", "fp8")) == "MLA"


def test_b200_block_fp8_projections_below_the_table() -> None:
    # The finding's item (2): on B200 kvplan prices MiniMax-M2.5's block-FP8 attention
    # projections under half the tables' vLLM 0.19.0 GEMMs (0.35 - 0.45), and the context
    # attention of a 1,024-token prompt at under a quarter (a floor-sized op); on H200 the
    # 8,192-token experts are within 10 % of the Triton table. Fails if the pricing moves.
    b200 = f.table_ops("B200", 2, 8192)
    k, t = b200["attention projections"]
    assert 0.3 < k / t < 0.5
    k, t = f.table_ops("B200", 2, 1024)["attention core"]
    assert k / t < 0.25
    k, t = f.table_ops("H200", 4, 8192)["experts"]
    assert 0.9 < k / t < 1.1


def _point(isl: int, kvplan: float, measured: float, tp: str = "2") -> dict:  # type: ignore[type-arg]
    row = {"backend": "vllm", "backend_version": "0.19.0", "system": "b200_sxm",
           "model_path": "MiniMaxAI/MiniMax-M2.5", "precision": "fp8", "tp_size": tp,
           "attention_dp_size": "", "moe_tp_size": tp, "moe_ep_size": "", "osl": "1024",
           "isl": str(isl)}
    return {"row": row, "ttft": kvplan, "m_ttft": measured}


def test_paired_by_hand() -> None:
    # One server: ISL 1,024 at kvplan 40 / 50 ms (two rows, means 50 / 80), ISL 8,192 at
    # 150 / 250: a = (250 - 80) / (150 - 50) = 1.7, b = 80 - 1.7 x 50 = -5. A second server
    # (TP 4) with one ISL only gives no line.
    part = [_point(1024, 40, 70), _point(1024, 60, 90), _point(8192, 150, 250),
            _point(1024, 30, 60, tp="4")]
    [(key, a, b, points)] = f.paired(part)
    assert key[-2] == "(2, 1, 2, 1)"
    assert (a, b) == pytest.approx((1.7, -5.0))
    assert points == pytest.approx((50.0, 80.0, 150.0, 250.0))


def test_trend_all_reduce_near_the_table_at_tp8() -> None:
    # The finding's item (4): gpt-oss-120b's H200 TP 8 prefill all-reduce is within 10 % of the
    # tables', so it is not what the TP trend misses. Fails if the pricing moves.
    line = next(x for x in f.trend_ar_lines() if x.startswith("| H200 | 8 | 7,373 |"))
    assert 0.9 < float(line.split("|")[-2]) < 1.0
