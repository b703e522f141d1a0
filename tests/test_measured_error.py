"""kvplan/engines/measured_error.json is what the engine bench measures: recomputed here from the
bench's rows (tests/benches/measured_error.py), so the figure `kvplan plan` prints beside every
verdict is never typed by hand and never drifts from examples/engine-bench.md."""

from __future__ import annotations

import json

from kvplan.engines.accuracy import DATA_FILE, measured_error
from kvplan.engines.base import Engine
from tests.benches import measured_error as bench


def test_stored_figures_equal_the_bench() -> None:
    assert json.loads(DATA_FILE.read_text()) == json.loads(json.dumps(bench.figures()))


def test_every_engine_has_a_figure_from_held_out_logs() -> None:
    for engine in Engine:
        err = measured_error(engine)
        assert err.logs >= 5 and 0 < err.relative < 0.2 and err.bytes > 0


def test_quantile_is_a_measured_row() -> None:
    # Nearest rank: of ten misses, the 90th percentile is the ninth smallest.
    assert bench.quantile([float(i) for i in range(10, 0, -1)]) == 9.0
    assert bench.quantile([0.5]) == 0.5


def test_band_is_the_bench_tolerance_scaled() -> None:
    # vLLM: 90 % of the held-out logs within max(relative x budget, bytes); a 60 GiB budget's
    # band is its relative part, a 1 GiB budget's the absolute part, a negative budget's too.
    err = measured_error(Engine.vllm)
    gib = 1 << 30
    assert err.band_bytes(60 * gib) == int(err.relative * 60 * gib)
    assert err.band_bytes(1 * gib) == err.bytes
    assert err.band_bytes(-5 * gib) == err.bytes
