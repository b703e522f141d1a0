"""sglfix65's decomposition (tests/benches/sglfix65.py), worked by hand."""

from __future__ import annotations

import pytest

from kvplan.analysis.simulate.run import replica_step_cost
from kvplan.perf.efficiency import PREFILL_LAUNCH_FIT
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import sglfix65 as s


def test_read_rows_are_the_four_servers_and_lengths() -> None:
    got = [(r["model_path"], r["backend_version"], r["system"], r["isl"], agg.layout(r))
           for r in s.read_rows()]
    assert got == [("Qwen/Qwen3.5-397B-A17B", "0.5.9", "b200_sxm", "1024", (4, 1, 4, 1)),
                   ("Qwen/Qwen3.5-397B-A17B", "0.5.9", "b200_sxm", "8192", (4, 1, 4, 1)),
                   ("deepseek-ai/DeepSeek-V3", "0.5.9", "b200_sxm", "1024", (8, 1, 8, 1)),
                   ("deepseek-ai/DeepSeek-V3", "0.5.9", "b200_sxm", "8192", (8, 1, 8, 1))]


def test_the_fixed_part_is_the_eager_launch() -> None:
    # kvplan's SGLang 0.5.9 prefill step of a Qwen3.5-397B FP8 TP 4 B200 server: 2,840 ops
    # launched from Python (kvplan.perf.op_counts) x 63.2 us (PREFILL_LAUNCH_FIT, refit by
    # hopperops65; 67 us when sglfix65 read it: 190.28 ms) = 179.49 ms, the same at 1 and at
    # 1,024 tokens; priced at 0 (no_launch), a 1-token step loses exactly that and a 1,024-token
    # step too.
    row = s.read_rows()[0]
    cost = replica_step_cost(agg.row_setup(row, "0.5.9"))
    assert PREFILL_LAUNCH_FIT.value == pytest.approx(63.2e-6)
    assert cost.launch_seconds(1) == pytest.approx(2840 * 63.2e-6)
    assert cost.launch_seconds(1024) == pytest.approx(0.179488)
    with_launch = [cost.seconds(decode_contexts=[], chunks=[(0, n)]) for n in (1, 1024)]
    with s.no_launch():
        bare = replica_step_cost(agg.row_setup(row, "0.5.9"))
        assert bare.launch_seconds(1024) == 0.0
        without = [bare.seconds(decode_contexts=[], chunks=[(0, n)]) for n in (1, 1024)]
    assert [a - b for a, b in zip(with_launch, without, strict=True)] == pytest.approx(
        [0.179488, 0.179488])
    assert agg.row_setup(row, "0.5.9") is not None  # the cache was cleared on the way out


def test_split_adds_up_to_the_ttft() -> None:
    # DeepSeek-V3 FP8 TP 8, 1,024 / 1,024 at 4 users: the parts of each request sum to its
    # TTFT (means of sums are sums of means); the launch is 1,986 ops x 63.2 us = 125.52 ms a
    # prefill step (133.06 at sglfix65's 67 us), and a request sits through one or more.
    sim, result = s.replay(s.read_rows()[2])
    parts = s.split(sim, result)
    assert (parts["intake"] + parts["waiting for steps"] + parts["prefill launch"]
            + parts["prefill GPU"] + parts["output"]) == pytest.approx(parts["TTFT"])
    assert parts["intake"] == 0.0 and parts["output"] == pytest.approx(0.0, abs=1e-9)
    assert parts["prefill launch"] >= 125.5152 - 1e-6


def test_cells_by_hand() -> None:
    # kvplan 10, 20, 30, 40 ms against measured 30, 50, 70, 90 (measured = 2 x kvplan + 10):
    # median kvplan (20 + 30) / 2 = 25; ratios 1/3, 0.4, 3/7, 4/9, median (0.4 + 3/7) / 2 =
    # 0.414; the line a 2, b 10. Under 4 rows no line.
    arm = {str(i): {"ttft": x, "m_ttft": 2 * x + 10} for i, x in enumerate((10, 20, 30, 40))}
    assert s.cells(arm, list(arm)) == "25 / 0.41 / 2.00 / 10"
    assert s.cells(arm, ["0", "1", "2"]) == "20 / 0.40 / - / -"
