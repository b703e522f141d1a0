"""kvplan.perf.launch_model: the three ways an eager step's launches join its GPU time, by hand;
the default ("sum") leaves every step as it was; the refit of tests/benches/launch_models.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan._util.errors import InputError
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import PREFILL_LAUNCH_FIT, Efficiency
from kvplan.perf.launch_model import launch_spill_s
from kvplan.perf.layout import Layout
from kvplan.perf.op_counts import eager_prefill_ops
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model
from tests.benches import launch_models

US = 1e-6
# Two floor kernels (2 us each), one 300 us GEMM, 20 us of GPU time launched by no op of its own;
# 6 ops of 50 us: 300 us of launch over 3 kernels, 100 us a kernel.
EVENTS = [(4 * US, 2), (300 * US, 1), (20 * US, 0)]


def test_sum_is_ops_times_launch() -> None:
    assert launch_spill_s(EVENTS, 6, 50 * US, "sum") == pytest.approx(300 * US)


def test_op_max_by_hand() -> None:
    # The two floor kernels: max(2 x 100, 4) - 4 = 196 us idle; the GEMM hides its 100 us.
    assert launch_spill_s(EVENTS, 6, 50 * US, "op_max") == pytest.approx(196 * US)


def test_stream_by_hand() -> None:
    # Launch ends at 100, 200, 300 us: kernels run 100-102, 200-202, 300-600, then 20 us: 620
    # us in all, 324 of GPU time, so 296 us beyond it.
    assert launch_spill_s(EVENTS, 6, 50 * US, "stream") == pytest.approx(296 * US)


def test_stream_runs_ahead_under_a_long_kernel() -> None:
    # GEMM first: launched by 100 us, runs 100-400; the floor kernels, launched at 200 and
    # 300, wait for it and run 400-404: 404 - 304 = 100 us. op_max charges them 196 us.
    events = [(300 * US, 1), (4 * US, 2)]
    assert launch_spill_s(events, 3, 100 * US, "stream") == pytest.approx(100 * US)
    assert launch_spill_s(events, 3, 100 * US, "op_max") == pytest.approx(196 * US)


def test_unknown_model_refused() -> None:
    with pytest.raises(InputError):
        Efficiency(prefill_launch_model="max")


def test_default_step_unchanged_and_the_others_below_the_sum() -> None:
    # DeepSeek-V3 on 8 H200s, one 1,000-token prompt (a PREFILL_LAUNCH_FIT row): the default
    # charges ops x 70 us, as before; the others charge less (long GEMMs hide launches).
    spec, _ = load_model("deepseek-v3")
    gpu, layout = get_gpu("H200"), Layout(tp=8)
    eff = Efficiency()
    ops = eager_prefill_ops(spec, layout, platform=gpu.platform, gpu=gpu)
    kwargs = {"tokens": 1000, "context": 1000, "requests": 1, "phase": "prefill",
              "layout": layout}
    base = step_time(spec, gpu, eff=eff, **kwargs).by_op["prefill_launch"]
    assert base == pytest.approx(ops * PREFILL_LAUNCH_FIT.value)
    for model in ("op_max", "stream"):
        spill = step_time(spec, gpu, eff=replace(eff, prefill_launch_model=model),
                          **kwargs).by_op["prefill_launch"]
        assert 0 < spill < base


def test_refit_on_the_same_rows() -> None:
    # The 4 PREFILL_LAUNCH_FIT rows, median exact value (launchfit53's table): sum 67.0 -> 67 us
    # at the constant's fit (69.6 -> 70 before mlaproj62 charged MLA's q_a / kv_a whole on every
    # TP rank), op_max 87.9 -> 88, stream 89.2 -> 89. Since moedefault63 made the experts' shape
    # table the CUDA default, today's model gives sum 61 us and op_max 80 us (stream 89): the
    # constant was not refitted with it (tests.benches.cost_bench.AS_FITTED; its test in
    # tests/test_costmodel.py keeps it at its fit's model). hopperops65 charged the norms' bytes
    # and refitted the sum on its fit's model, 67.04 -> 63.19 us; today's op_max 80 -> 79 us.
    assert PREFILL_LAUNCH_FIT.value == pytest.approx(63.2 * US)
    assert launch_models.fitted_launch_s("sum") == pytest.approx(61 * US)
    assert launch_models.fitted_launch_s("op_max") == pytest.approx(79 * US)
    assert launch_models.fitted_launch_s("stream") == pytest.approx(89 * US)
