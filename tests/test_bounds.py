"""Bounds set before work and closed forms (issue 32, item 2), and the one exit-code policy's
library half (item 4). The CLI contract of each is in tests/hostile/."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.units import GiB, MiB
from kvplan.analysis.plan_search import smallest_serving
from kvplan.analysis.plan_types import PlanRequest
from kvplan.analysis.planner import _larger_gpu
from kvplan.analysis.simulate.rate_search import _layouts
from kvplan.analysis.sweep import (
    HELD_POINT_BYTES,
    MAX_POINTS,
    SweepGrid,
    check_points,
    evaluate_models,
    iter_frames,
)
from kvplan.engines.base import Engine
from kvplan.hardware.gpus import GPUS, get_gpu
from kvplan.perf.costmodel import tokens_per_step
from kvplan.present.sweep_view import csv_chunks, json_chunks, to_csv_text, to_json_text
from kvplan.sources.resolve import load_model


def test_tokens_per_step_closed_form() -> None:
    # 1 + a + ... + a^k = (1 - a^(k+1)) / (1 - a): a = 0.5 at k = 2^40 is 2 (0.5^(2^40+1)
    # underflows to 0); a = 1 is k + 1; a = 0.85 at k = 2000 is 1 / 0.15 (0.85^2001 ~ 1e-141).
    assert tokens_per_step(1 << 40, 0.5) == 2.0
    assert tokens_per_step(1 << 40, 1.0) == float((1 << 40) + 1)
    assert tokens_per_step(2000, 0.85) == pytest.approx(1 / 0.15, rel=1e-15)
    assert tokens_per_step(1 << 40, 0.0) == 1.0


@settings(max_examples=60, deadline=None)
@given(k=st.integers(0, 1024), a=st.floats(0, 1))
def test_tokens_per_step_unchanged_up_to_1024(k: int, a: float) -> None:
    """Up to 1024 draft tokens the terms are added as before: the same float, bit for bit."""
    assert tokens_per_step(k, a) == sum(a ** i for i in range(k + 1))


def test_check_points_bounds() -> None:
    check_points(MAX_POINTS, held=None)  # streamed: up to MAX_POINTS
    with pytest.raises(InputError, match="at most 20,000,000 by default.*--max-points"):
        check_points(MAX_POINTS + 1, held=None)
    check_points(MAX_POINTS + 1, held=None, max_points=MAX_POINTS + 1)  # the way past it
    # Held whole: half the available memory over the output's bytes per point. 1 GiB available,
    # a table at 800 B a point: 536,870,912 // 800 = 671,088 points.
    assert HELD_POINT_BYTES["table"] == 800
    check_points(671_088, held="table", available_bytes=GiB)
    with pytest.raises(InputError, match=r"holds 671,088: write CSV or JSON"):
        check_points(671_089, held="table", available_bytes=GiB)
    with pytest.raises(InputError, match="more than --max-points 10"):
        check_points(11, held="table", available_bytes=GiB, max_points=10)


@pytest.mark.parametrize("chunk", [1, 5, 64, 10_000])
def test_streamed_text_is_the_held_text(chunk: int) -> None:
    specs = [load_model(m)[0] for m in ("llama-3.1-8b", "qwen3-next-80b-a3b")]
    grid = SweepGrid(contexts=(1, 4096, 131072), batches=(1, 7), kv_dtypes=("bf16", "fp8"),
                     gpus=("H100-80GB", "A100-80GB"), mem_fractions=(0.8, 0.9), tps=(1, 2))
    df = evaluate_models(specs, grid)
    assert "".join(csv_chunks(iter_frames(specs, grid, chunk_rows=chunk))) == to_csv_text(df)
    assert "".join(json_chunks(iter_frames(specs, grid, chunk_rows=chunk))) == to_json_text(df)
    assert max(len(f) for f in iter_frames(specs, grid, chunk_rows=chunk)) <= chunk


def test_rate_layouts_are_generated_in_order_and_bounded() -> None:
    # By GPU count, then the smaller TP; replicas stop at the requests in the stream.
    assert [(s.tp, s.dp, s.rank) for s in _layouts((1, 2, 4, 8), 8, 3)] == [
        (1, 1, None), (1, 2, None), (2, 1, None), (1, 3, None), (2, 2, None), (4, 1, None),
        (2, 3, None), (4, 2, None), (8, 1, None)]
    huge = _layouts((1, 2, 4, 8), 1 << 40, 1 << 40)  # generated, never listed
    first = next(huge)
    assert (first.tp, first.dp, first.rank) == (1, 1, None)


def test_cpu_ranks_are_bounded() -> None:
    pytest.importorskip("torch")
    from kvplan.analysis.device.ranks import RANK_PROCESS_BYTES, check_cpu_ranks

    check_cpu_ranks(2, cpus=2, free_bytes=8 * GiB, budget_bytes=4 * MiB)
    with pytest.raises(InputError, match="16 CPU ranks on 2 usable CPUs.*--oversubscribe"):
        check_cpu_ranks(16, cpus=2, free_bytes=64 * GiB, budget_bytes=4 * MiB)
    check_cpu_ranks(16, cpus=2, free_bytes=64 * GiB, budget_bytes=4 * MiB, oversubscribe=True)
    # 4 ranks of 256 MiB + 4 MiB each need 1,040 MiB; 1 GiB available holds 3.
    assert RANK_PROCESS_BYTES == 256 * MiB
    with pytest.raises(InputError, match="at most 3 ranks here"):
        check_cpu_ranks(4, cpus=8, free_bytes=GiB, budget_bytes=4 * MiB)


def test_unmodelled_is_an_input_error_exit_2() -> None:
    assert issubclass(UnmodelledError, InputError) and UnmodelledError.exit_code == 2


def test_larger_gpu_is_the_one_needing_the_fewest() -> None:
    """The no-fit alternative "a larger GPU" is, of every larger preset, one that serves the
    target on the fewest GPUs (it was the next larger preset that served it at all)."""
    spec = load_model("llama-3.1-8b")[0]
    tried = get_gpu("L4")
    req = PlanRequest(concurrency=400, context=32768, gpu=tried, engine=Engine("vllm"),
                      gpus_per_node=2)
    alt = _larger_gpu(spec, req, (tried,))
    assert alt is not None and alt.candidate is not None
    for gpu in GPUS.values():
        if gpu.total_bytes > tried.total_bytes and not gpu.unified_memory:
            best = smallest_serving(spec, replace(req, gpu=gpu), gpu)
            assert best is None or best.layout.gpus >= alt.gpus, (gpu.name, best.layout.gpus)


def test_simulate_requests_are_bounded_before_any_work() -> None:
    # Issue 32: `simulate --num-requests 10**12` would run for ~18 years at the measured ~0.56 ms
    # of CPU per request (examples/simulate-speed.md: 100,000 requests in 56.1 s of CPU).
    from kvplan.analysis.simulate.workload import (
        MAX_REQUESTS,
        WorkloadOptions,
        requests_from,
    )

    with pytest.raises(InputError, match=r"--num-requests: 1,000,000,000,000 is over .* "
                                         r"2,000,000 .*--max-sim-requests"):
        requests_from(WorkloadOptions(num_requests=10**12, rate=10.0))
    # At the bound it is a lazy stream: nothing is built before the simulator pulls it.
    stream = requests_from(WorkloadOptions(num_requests=MAX_REQUESTS, rate=10.0))
    assert next(iter(stream)).prompt_len == 1024
    # Raised on purpose, it is the user's call.
    assert next(iter(requests_from(WorkloadOptions(num_requests=MAX_REQUESTS + 1, rate=10.0,
                                                   max_requests=MAX_REQUESTS + 1))))
