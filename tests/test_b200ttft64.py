"""The b200ttft64 finding's helpers (tests/benches/b200ttft64.py), worked by hand."""

from __future__ import annotations

import pytest

from tests.benches import b200ttft64 as b
from tests.benches.dense_op_bench import ArRow

MIB = 1024 * 1024


def test_fit_by_hand() -> None:
    # y = 2 x + 1 through (1, 3), (2, 5), (3, 7): the means 2 and 5, slope
    # ((-1)(-2) + 0 + (1)(2)) / (1 + 0 + 1) = 2, intercept 5 - 2 x 2 = 1. The middle point
    # moved to 6: the means 2 and 16/3, y's deviations -7/3, 2/3, 5/3, slope
    # ((-1)(-7/3) + 0 + (1)(5/3)) / 2 = 2, intercept 16/3 - 4 = 4/3.
    assert b.fit([1, 2, 3], [3, 5, 7]) == pytest.approx((2.0, 1.0))
    assert b.fit([1, 2, 3], [3, 6, 7]) == pytest.approx((2.0, 4 / 3))


def test_table_ar_ms_interpolates_by_hand() -> None:
    # 80 MiB between 64 MiB (0.25 ms) and 128 MiB (0.45 ms): 0.25 + 0.20 x 16 / 64 = 0.30 ms.
    # Rows of another GPU, rank count or implementation are not read.
    def row(nbytes: int, ms: float, **kw: object) -> ArRow:
        args = {"source": "vllm eager", "version": "0.19.0", "gpu": "B200", "ranks": 8,
                "nbytes": nbytes, "measured_ms": ms, **kw}
        return ArRow(**args)  # type: ignore[arg-type]

    rows = [row(64 * MIB, 0.25), row(128 * MIB, 0.45), row(80 * MIB, 9.0, gpu="H200"),
            row(80 * MIB, 9.0, ranks=4), row(80 * MIB, 9.0, source="nccl")]
    assert b.table_ar_ms(rows, "B200", 80 * MIB) == pytest.approx(0.30)
    assert b.table_ar_ms(rows, "B200", 64 * MIB) == pytest.approx(0.25)


def test_table_counterfactual_by_hand() -> None:
    # GEMMs 1.0 s at kvplan / measured 0.8 -> 1.25; all-reduce 0.5 at 0.5 -> 1.0; attention
    # 0.2 at 0.4 -> 0.5; host 0.1 kept: 2.85 s.
    split = {"GEMMs": 1.0, "all-reduce": 0.5, "attention": 0.2, "host": 0.1}
    ratios = {"GEMMs": 0.8, "all-reduce": 0.5, "attention": 0.4}
    assert b.table_counterfactual(split, ratios) == pytest.approx(2.85)


def test_b200_all_reduce_against_the_table() -> None:
    # kvplan: 8 us + 2 x 7/8 x 83,886,080 B / 588 GB/s = 257.661 us (tests/test_b200vllm63.py).
    # The table (vLLM 0.19.0 eager, 8 ranks): 64 MiB 0.25117 ms, 128 MiB 0.42770 ms, so 80 MiB
    # 0.25117 + 0.17653 x 16 / 64 = 0.29530 ms; 0.257661 / 0.29530 = 0.8725.
    r = b.kvplan_over_tables()["B200"]
    assert r["kvplan all-reduce ms"] == pytest.approx(0.257661, abs=1e-6)
    assert r["table all-reduce ms"] == pytest.approx(0.29530, abs=1e-5)
    assert r["all-reduce"] == pytest.approx(0.8725, abs=1e-3)


def test_split_of_the_1024_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # The split sums to the simulator's steps (asserted per step in step_split); the GEMMs of
    # the 13 compute-bound prefill steps scale with the bf16 peaks at one fraction:
    # H100 / B200 = 2,250 / 989.5 = 2.2739; the floors and the per-layer overhead are the
    # same on both (4 us and 35 us on every card). Since hopperops65 the small kernels also
    # carry the norms' bytes (kvplan.perf.norm_traffic; Qwen3-32B bf16: no quantization, no
    # float32 router) at each card's HBM speed, so H100's are larger; with those bytes at 0
    # the floors are the same on both again.
    # The engine alone (`simulate --no-frontend`): since frontdef67 `vllm serve`'s default
    # API-server stage staggers the arrivals the two cards' engines see (15 and 14 steps).
    monkeypatch.setattr("kvplan.analysis.simulate.run.measured_default", lambda **k: False)
    runs = {rid.split(" ")[3]: (name, rid) for name, rid in b.run_ids() if " 1024/128 " in rid}
    _, n_b, b200 = b.prefill_split(*runs["B200"])
    _, n_h, h100 = b.prefill_split(*runs["H100"])
    assert n_b == n_h == 13
    assert h100["GEMMs"] / b200["GEMMs"] == pytest.approx(2250 / 989.5, rel=1e-3)
    assert h100["floors + layer overhead"] > b200["floors + layer overhead"]
    assert b200["launch"] == 0.0  # vLLM replays no eager prefill launch (efficiency.py)
    monkeypatch.setattr("kvplan.perf.roofline.rms_norm_bytes", lambda *a, **k: 0.0)
    _, _, b200 = b.prefill_split(*runs["B200"])
    _, _, h100 = b.prefill_split(*runs["H100"])
    assert h100["floors + layer overhead"] == pytest.approx(b200["floors + layer overhead"])


def test_attention_fraction_b200_below_h100() -> None:
    # The finding's attention claim, recomputed from the tables: at each length band the
    # fraction of the bf16 peak that makes kvplan's median the measured one (0.60 x the median
    # kvplan / measured) is lower on B200 (FlashInfer / TRT-LLM-gen) than on H100
    # (FlashAttention): 0.46 / 0.56 / 0.62 against 0.57 / 0.68 / 0.71.
    lines = b.attention_fraction_lines()
    frac = {line.split(" tokens")[0][2:]: float(line.rsplit(" ", 1)[1]) for line in lines}
    for lo, hi in b.ISL_BANDS:
        band = f"{lo:,}-{hi:,}"
        assert frac[f"B200 {band}"] < frac[f"H100 {band}"] - 0.05
    assert [frac[f"B200 {lo:,}-{hi:,}"] for lo, hi in b.ISL_BANDS] == [0.46, 0.56, 0.62]
