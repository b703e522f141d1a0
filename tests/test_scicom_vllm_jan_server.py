"""Scicom's January vLLM length servers (tests.benches.scicom_vllm_jan_server, janwarm62): each
run after its server's earlier lengths, whole, with no test prompt, worked by hand."""

from __future__ import annotations

import pytest

from kvplan.analysis.simulate.workload import RequestSpec
from tests.benches import prospective62_runs, prospective_runs, scicom_vllm_jan_server

_runs = prospective_runs.runs_by_id(prospective62_runs.DATA)


def _at(n: int) -> list[RequestSpec]:
    return [RequestSpec(arrival_s=0.0, prompt_len=n, output_len=128) for _ in range(2)]


def test_a_run_follows_its_servers_earlier_lengths_whole() -> None:
    """The 4,096-token run follows the 1,024 and 2,048 runs, each whole (2 prompts here) and
    no test prompt (ready_check_timeout_sec=0); request 1 is cut at 1,024 and 2,048, the
    lengths it has on the server: (0, 1,024) 1,024, (1,024, 2,048) 1,024, (2,048, 4,096)
    2,048 tokens. The 1,024 run is its server's first: nothing before it."""
    earlier, mine = scicom_vllm_jan_server.server_batches(_at, 4096)
    assert [len(b) for b in earlier] == [2, 2]
    assert earlier[0][1].segments == (((1, 0, 1024), 1024),)
    assert earlier[1][1].segments == (((1, 0, 1024), 1024), ((1, 1024, 2048), 1024))
    assert mine[1].segments == (((1, 0, 1024), 1024), ((1, 1024, 2048), 1024),
                                ((1, 2048, 4096), 2048))
    assert scicom_vllm_jan_server.server_batches(_at, 1024)[0] == []


def test_only_the_january_length_runs_are_on_a_shared_server() -> None:
    january = [r for r in _runs.values() if r["source"] == scicom_vllm_jan_server.SOURCE]
    assert len(january) == 12
    assert all(scicom_vllm_jan_server.served_on_shared_server(r) for r in january)
    assert not any(scicom_vllm_jan_server.served_on_shared_server(r) for r in _runs.values()
                   if r["source"] != scicom_vllm_jan_server.SOURCE)
    other = {**january[0], "workload": {**january[0]["workload"], "num_prompts": 1000}}
    assert not scicom_vllm_jan_server.served_on_shared_server(other)


@pytest.mark.parametrize(("n", "hit"), [(2048, 1024 / 2048), (15000, 8192 / 15000)])
def test_the_replay_finds_the_earlier_lengths_cached(n: int, hit: float) -> None:
    """The H100 run at `n` tokens: request i's tokens up to the server's previous length were
    served before (1,024 of 2,048; 8,192 of 15,000, both whole 16-token blocks), so the
    replay's prefix hit rate is that share: 0.5 and 0.546."""
    run = _runs[f"scicom vLLM Qwen3-32B H100 TP8 random {n}/128 conc 100 (100 prompts)"]
    assert prospective_runs.run_one(run).prefix_hit_rate == pytest.approx(hit, abs=1e-3)
