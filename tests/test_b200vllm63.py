"""NVLink 5's bandwidth, measured on aiconfigurator's B200 all-reduce tables (b200vllm63):
the median bus bandwidth of the 8-rank all-reduces the ring rule prices, and what it charges."""

from __future__ import annotations

import pytest

from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import INTERCONNECTS
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model
from tests.benches.b200vllm63 import ROOT, bus_bandwidth
from tests.benches.dense_op_bench import ArRow

MIB = 1024 * 1024


def _row(nbytes: int, ms: float, *, gpu: str = "B200", ranks: int = 8) -> ArRow:
    return ArRow(source="vllm eager", version="0.19.0", gpu=gpu, ranks=ranks, nbytes=nbytes,
                 measured_ms=ms)


def test_bus_bandwidth_by_hand() -> None:
    # Bus bandwidth = 2 (n - 1) / n x buffer / time. 8 ranks, 64 MiB (67,108,864 B) in 0.25 ms:
    # 1.75 x 67,108,864 / 0.25e-3 = 469.762 GB/s; 128 MiB in 0.4 ms: 1.75 x 134,217,728 / 0.4e-3
    # = 587.203 GB/s; 1 GiB in 2.6 ms: 1.75 x 1,073,741,824 / 2.6e-3 = 722.710 GB/s. Median
    # 587.203. Left out: 8 MiB (under 16 MiB), another GPU's row, a 4-rank row.
    rows = [_row(64 * MIB, 0.25), _row(128 * MIB, 0.4), _row(1024 * MIB, 2.6),
            _row(8 * MIB, 0.01), _row(128 * MIB, 0.1, gpu="H200"),
            _row(128 * MIB, 0.1, ranks=4)]
    assert bus_bandwidth("B200", rows) == pytest.approx(587.203e9, rel=1e-6)


def test_nvlink5_is_the_b200_tables_median() -> None:
    # The preset holds the tables' median (41 rows at 8 ranks, 16 MiB-1 GiB) to 1 GB/s, and the
    # same median over the H100 tables, 370 GB/s, is within 3 % of nvlink4's 360 (read from
    # nccl-tests elsewhere): the method reads H100 as the older preset did.
    b200 = bus_bandwidth("B200")
    assert b200 == pytest.approx(587.9e9, abs=0.1e9)
    assert INTERCONNECTS["nvlink5"].bytes_per_s == pytest.approx(round(b200 / 1e9) * 1e9)
    h100 = bus_bandwidth("H100-80GB")
    assert h100 == pytest.approx(370.0e9, abs=0.1e9)
    assert h100 == pytest.approx(INTERCONNECTS["nvlink4"].bytes_per_s, rel=0.03)


def test_b200_prefill_all_reduce_by_hand() -> None:
    # Qwen3-32B (64 layers, hidden 5,120) at TP 8 on B200, one 8,192-token prefill step: two
    # all-reduces a layer of 8,192 x 5,120 x 2 B = 83,886,080 B (80 MiB, over the custom
    # kernel's 8 MiB: the ring), 8 us + 2 x 7/8 x 83,886,080 / 588e9 s = 8 + 249.661 =
    # 257.661 us each; 128 of them = 32.981 ms (at 720 GB/s it was 211.9 us, 27.12 ms).
    nvlink5 = INTERCONNECTS["nvlink5"]
    assert nvlink5.all_reduce_s(8, 83_886_080) == pytest.approx(257.661e-6, abs=1e-9)
    spec = load_model(str(ROOT / "tests" / "data" / "configs" / "qwen3-32b.json"))[0]
    gpu = get_gpu("B200")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.14.1")
    st = step_time(spec, gpu, tokens=8192, context=8192, requests=1, phase="prefill",
                   layout=Layout(tp=8), eff=eff)
    assert st.by_op["tp_all_reduce"] == pytest.approx(32.981e-3, abs=1e-6)
