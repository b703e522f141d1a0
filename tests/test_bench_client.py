"""sa-bench's rounds by date (kvplan.analysis.simulate.bench_client), read from srt-slurm's
bench.sh history: `num_prompts=$((concurrency * 5))` at 7da82281 (2025-12-20), `* 8` at
55698764 (2026-01-21), `* 10` at 88ff268d (2026-01-23)."""

from __future__ import annotations

import datetime as dt

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
