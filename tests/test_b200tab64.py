"""b200tab64's scale lookup and patch (tests/benches/b200tab64.py), worked by hand."""

from __future__ import annotations

import pytest

from tests.benches import b200tab64 as b


def test_point_and_scale_by_hand() -> None:
    # Below MIN_TOKENS (512) a decode step: unscaled. From 512 to under sqrt(1,024 x 8,192)
    # = 2,896.3 the 1,024-token point, from 2,897 the 8,192 one.
    assert [b.point(n) for n in (1, 511, 512, 2896, 2897, 16384)] == [
        None, None, 1024, 1024, 8192, 8192]
    scales = {1024: {"x": 2.0}, 8192: {"x": 3.0}}
    assert [b.scale(scales, "x", n) for n in (100, 1000, 5000)] == [1.0, 2.0, 3.0]


def test_table_scales_are_table_over_kvplan() -> None:
    # The scale is aggfaith64.table_ops' table ms / kvplan ms: TP 2, 8,192 tokens, the
    # projections at 2.2 - 2.9 (kvplan / table 0.35 - 0.45, aggfaith64's FINDING).
    k, t = b.faith.table_ops("B200", 2, 8192)["attention projections"]
    s = b.table_scales(2)[8192]["attention projections"]
    assert s == pytest.approx(t / k)
    assert 2.2 < s < 2.9


def test_patch_adds_the_scaled_op_and_is_undone() -> None:
    # Inside at_tables(2, all-reduce only) a 1,024-token step's seconds grow by (scale - 1) x
    # its tp_all_reduce op and nothing else; a 256-token step (decode-sized) is unchanged;
    # on exit mixed_step.step_time is the original again.
    from kvplan.hardware.gpus import get_gpu
    from kvplan.perf import mixed_step as ms
    from kvplan.perf.efficiency import device_efficiency
    from kvplan.perf.engine_traits import engine_efficiency
    from kvplan.perf.layout import Layout

    orig = ms.step_time
    gpu = get_gpu("B200")
    kw = {"context": 1, "requests": 1, "layout": Layout(tp=2),
          "eff": engine_efficiency("vllm", device_efficiency(gpu), version="0.19.0")}
    spec = b.faith._spec(*b.faith.OP_MODEL)
    base = {n: orig(spec, gpu, tokens=n, **kw) for n in (256, 1024)}
    with b.at_tables(2, ("TP all-reduce",)):
        got = {n: ms.step_time(spec, gpu, tokens=n, **kw).seconds for n in (256, 1024)}
    s = b.table_scales(2)[1024]["TP all-reduce"]
    assert s > 1.1
    assert got[256] == base[256].seconds
    assert got[1024] == pytest.approx(base[1024].seconds
                                      + (s - 1) * base[1024].by_op["tp_all_reduce"])
    assert ms.step_time is orig
