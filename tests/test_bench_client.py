"""sa-bench's rounds by date (kvplan.analysis.simulate.bench_client), read from srt-slurm's
bench.sh history: `num_prompts=$((concurrency * 5))` at 7da82281 (2025-12-20), `* 8` at
55698764 (2026-01-21), `* 10` at 88ff268d (2026-01-23)."""

from __future__ import annotations

import datetime as dt

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.bench_client import sa_bench, vllm_bench_serve
from tests.benches import disagg_public, prospdis65_runs
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


def test_vllm_bench_serve_rounds_by_hand() -> None:
    # Anyscale's run_bm.sh: --num-prompts 5 x C at --max-concurrency C; at C = 4, 20 prompts:
    # 20 / 4 = 5 requests a user, every one averaged (calculate_metrics over all outputs), the
    # lengths fixed (prefix_repetition at prefix 0, suffix I).
    c = vllm_bench_serve(20, 4)
    assert (c.name, c.rounds, c.measures_first_round, c.lengths) == (
        "vllm bench serve", 5, True, None)
    assert vllm_bench_serve(4, 4).rounds == 1
    for prompts, conc in ((21, 4), (3, 4), (4, 0)):
        with pytest.raises(InputError, match="whole number of rounds"):
            vllm_bench_serve(prompts, conc)


def test_public_runs_take_the_client_their_points_state() -> None:
    # prospdis65's points state `vllm bench serve` and their prompts: that client, 5 rounds at
    # every concurrency (5 x C prompts); logs29's runs state no prompt count: none (the
    # simulation's default measurement), so their replay does not move.
    run = prospdis65_runs.load()["runs"][0]
    for p in run["points"]:
        got = client({**run["row"], "silicon_data_source": "",
                      **disagg_public.client_fields(run, p)})
        assert got == vllm_bench_serve(5 * p["concurrency"], p["concurrency"])
        assert got is not None and got.rounds == 5
    for old in disagg_public.runs():
        assert all(disagg_public.client_fields(old, p) == {} for p in old["points"])
