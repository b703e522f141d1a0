"""gpt-oss's MXFP4 experts' table by rows per expert and per-rank width (mxfp4tab65,
kvplan.perf.mxfp4_experts; opt-in Efficiency.mxfp4_experts_shape), worked by hand."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from kvplan._util.errors import InputError
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import MXFP4_EXPERTS_SHAPE, Efficiency, device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.mxfp4_experts import Mxfp4ExpertsShape
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_spec

# gpt-oss-120b, one layer's four active experts: gate_up 2,880 x 5,760 + bias 5,760, down
# 2,880 x 2,880 + bias 2,880 each: 4 x 24,891,840 = 99,567,360 parameters.
ACTIVE = 4 * (2880 * 5760 + 5760 + 2880 * 2880 + 2880)
H100_BF16 = 989.5e12  # kvplan's H100 dense bf16 peak


def test_fraction_lookup_by_hand() -> None:
    t = MXFP4_EXPERTS_SHAPE
    # At a fitted width and point: the point (width 360 = 2,880 / 8, 256 rows: 0.25).
    assert t.fraction(256, 360) == 0.25
    # Below the first rows point and below the first width: the corner's value.
    assert t.fraction(4, 100) == 0.25
    # Halfway in log2 between widths 720 and 1,440 (sqrt(720 x 1440)), 256 rows:
    # (0.32 + 0.36) / 2.
    assert t.fraction(256, math.sqrt(720 * 1440)) == pytest.approx(0.34)
    # Past the last width: 2,880's (512 rows: 0.41).
    assert t.fraction(512, 5760) == 0.41


def test_table_rejects_unordered_widths() -> None:
    with pytest.raises(InputError, match="widths"):
        Mxfp4ExpertsShape(widths=(720, 360), tables=MXFP4_EXPERTS_SHAPE.tables[:2])


def _experts_ms(eff: Efficiency) -> float:
    spec, gpu = load_spec("gpt-oss-120b"), get_gpu("H100")
    st = step_time(spec, gpu, tokens=8192, context=8192, requests=1, phase="prefill",
                   layout=Layout(tp=8), eff=eff, layers=range(0, 1))
    return st.by_op["experts"] * 1e3


def test_experts_op_by_hand_h100_tp8() -> None:
    # One 8,192-token prefill, MoE TP 8, vLLM 0.24.0 (Triton's MXFP4 kernel on Hopper):
    # 8,192 x 2 x 99,567,360 / 8 = 203.914 GFLOP a rank, compute-bound. Rows per expert
    # 8,192 x 4 / 128 = 256. Off: the bf16 table's first point, 0.34 -> 0.6061 ms; on: the
    # MXFP4 table at width 2,880 / 8 = 360, 256 rows: 0.25 -> 0.8243 ms.
    eff = engine_efficiency("vllm", device_efficiency(get_gpu("H100")), version="0.24.0")
    flops = 8192 * 2 * ACTIVE / 8
    assert _experts_ms(eff) == pytest.approx(flops / (H100_BF16 * 0.34) * 1e3, rel=1e-6)
    on = replace(eff, mxfp4_experts_shape=MXFP4_EXPERTS_SHAPE)
    assert _experts_ms(on) == pytest.approx(flops / (H100_BF16 * 0.25) * 1e3, rel=1e-6)


def test_marlin_keeps_the_bf16_table() -> None:
    # Marlin (mma.sync) is not the table's kernel: the flag moves nothing there.
    eff = engine_efficiency("vllm", device_efficiency(get_gpu("H100")), version="0.18.0")
    kernels = eff.moe_kernel
    assert kernels is not None
    marlin = replace(eff, moe_kernel=replace(kernels, mxfp4_chosen="marlin"))
    on = replace(marlin, mxfp4_experts_shape=MXFP4_EXPERTS_SHAPE)
    assert _experts_ms(on) == _experts_ms(marlin)


def test_implied_fraction_of_one_kernel_row_by_hand() -> None:
    # The fit's unit: aiconfigurator's H100 vLLM 0.24.0 row, gpt-oss-120b shape, MoE TP 8,
    # 8,192 tokens, 0.6051787 ms (tests/data/moe_mxfp4). Its compute at the whole bf16 peak:
    # 203.914 GFLOP / 989.5 TFLOPS = 0.206078 ms; the rest kvplan prices, 4 small kernels
    # (top-k, align and two MOE_EXTRA_KERNELS) at the 4 us floor = 0.016 ms; implied fraction
    # 0.206078 / (0.605179 - 0.016) = 0.34977.
    from tests.benches.mxfp4tab65 import implied, rows

    [row] = [r for r in rows() if r.engine == "vllm" and r.version == "0.24.0"
             and r.gpu == "H100" and r.shape == (2880, 2880, 128, 4)
             and (r.moe_tp, r.moe_ep) == (8, 1) and r.tokens == 8192]
    assert row.measured_ms == pytest.approx(0.6051787, rel=1e-6)
    compute = 8192 * 2 * ACTIVE / 8 / H100_BF16 * 1e3
    assert implied(row) == pytest.approx(compute / (row.measured_ms - 4 * 0.004), rel=1e-4)
