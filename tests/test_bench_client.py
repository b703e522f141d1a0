"""sa-bench's rounds by date (kvplan.analysis.simulate.bench_client), read from srt-slurm's
bench.sh history: `num_prompts=$((concurrency * 5))` at 7da82281 (2025-12-20), `* 8` at
55698764 (2026-01-21), `* 10` at 88ff268d (2026-01-23)."""

from __future__ import annotations

import datetime as dt

import pytest

from kvplan.analysis.simulate.bench_client import sa_bench
from tests.benches.disagg_client import client, routing


def test_sa_bench_rounds_by_date() -> None:
    assert sa_bench(dt.date(2025, 12, 19)) is None
    got = {d: sa_bench(d) for d in (dt.date(2025, 12, 21), dt.date(2026, 1, 22),
                                    dt.date(2026, 3, 23))}
    assert [c.rounds if c else None for c in got.values()] == [5, 8, 10]
    assert all(c is not None and c.measures_first_round for c in got.values())


def test_rows_through_srt_slurm_only() -> None:
    row = {"backend": "trtllm", "silicon_data_source":
           "db-dump/2026-04-27; config_id=549; measured=2026-03-23T00:00:00.000Z"}
    c = client(row)
    assert c is not None and c.rounds == 10
    r = routing(row)
    assert r is not None and not r.by_load
    vllm = dict(row, backend="vllm")
    assert client(vllm) is None and routing(vllm) is None
    public = dict(row, silicon_data_source="")  # disagg-bench section 4: not srt-slurm's
    assert client(public) is None and routing(public) is None


def test_sa_bench_draws_its_lengths_as_numpy_does() -> None:
    # bench.sh's RANDOM_RANGE_RATIO 0.8 and benchmark_serving.py's --seed 0 (srt-slurm
    # cc158081): np.random.seed(0), then randint(int(1024 x 0.8) = 819, 1025, size=N) for the
    # prompts and the same for the outputs; the client's list order is its send order.
    np = pytest.importorskip("numpy")
    c = sa_bench(dt.date(2026, 3, 23))
    assert c is not None and c.lengths is not None and c.seed == 0
    drawn = c.lengths.lengths(40, 1024, 8192, c.seed)
    state = np.random.RandomState(0)
    ins, outs = state.randint(819, 1025, size=40), state.randint(6553, 8193, size=40)
    assert drawn == list(zip(ins.tolist(), outs.tolist(), strict=True))
    off = client({"backend": "trtllm", "silicon_data_source": "measured=2026-03-23"},
                 lengths=False)
    assert off is not None and off.lengths is None and off.rounds == 10
