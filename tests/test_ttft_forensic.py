"""The TTFT forensic's split (tests/benches/ttft_forensic.py): worked by hand on a two-request
run, and its replay of a prospective run equal to prospective_runs.run_one's."""

from __future__ import annotations

import pytest

from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from tests.benches import ttft_forensic as tf
from tests.benches.prospective_runs import DATA, run_one, runs_by_id


class _TokenCost:
    """1 ms a step + 10 us a scheduled token (decode or prompt)."""

    full_attention_only = True

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return 1e-3 + (len(decode_contexts) + sum(n for _, n in chunks)) * 1e-5

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return 1e-3 + (decodes + sum(n for _, n in chunks)) * 1e-5


@pytest.mark.parametrize("bulk", [True, False])
def test_split_by_hand(bulk: bool) -> None:
    # Token budget 100, synchronous, no server stage; A (150 prompt tokens) and B (50), both
    # sent at t = 0. Step 0-2 ms: A's first chunk of 100 (1 + 100 x 0.01 ms), B waits (no
    # budget). Step 2-4 ms: A's last 50 and B's 50 (1 + 100 x 0.01 = 2 ms); both first tokens
    # at 4 ms. A: queue 0, own 2 + 1.5 = 3.5 ms (its chunks alone: 1 + 1, 1 + 0.5), its steps
    # 4 ms so 0.5 ms behind B's chunk. B: queue 2 ms, own 1.5 ms, behind 0.5 ms.
    pool = KVPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    sim = Simulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=100,
                                          max_model_len=512), _TokenCost(), bulk_decode=bulk)
    trace = tf.Trace()
    trace.watch(sim)
    st = sim.run([RequestSpec(arrival_s=0.0, prompt_len=150, output_len=2),
                  RequestSpec(arrival_s=0.0, prompt_len=50, output_len=2)])
    split = {r.rid: {k: round(v * 1e3, 9) for k, v in trace.parts(r).items()}
             for r in st.finished}
    assert split[0] == {"host": 0, "queue": 0, "own": 3.5, "behind": 0.5, "rest": 0}
    assert split[1] == {"host": 0, "queue": 2, "own": 1.5, "behind": 0.5, "rest": 0}


def test_replay_is_run_ones() -> None:
    # prospective30's rate-16 seed-42 row (Qwen3-0.6B, 500 requests): the traced replay gives
    # run_one's mean and median TTFT and mean TPOT, and the split sums to the mean TTFT.
    run = runs_by_id(DATA)["kvcached-h100 Qwen3-0.6B rate 16 seed 42"]
    row = tf.replay("prospective30", run)
    sim = run_one(run).simulated
    assert row.ttft_mean_ms == pytest.approx(sim["ttft_ms.mean"], rel=1e-12)
    assert row.ttft_p50_ms == pytest.approx(sim["ttft_ms.p50"], rel=1e-12)
    assert row.tpot_mean_ms == pytest.approx(sim["tpot_ms.mean"], rel=1e-12)
    assert sum(row.parts_ms.values()) == pytest.approx(row.ttft_mean_ms, rel=1e-9)
    # A request alone at 16 req/s: `vllm serve`'s default API-server stage first (frontdef67:
    # VLLM_API_LOOP_MEASURED, 97.8 us + 512 prompt tokens x 2.168 us = 1.208 ms), then vLLM
    # 0.19's tokenizer batcher's whole 2 ms wait: 3.208 ms.
    assert row.parts_ms["host"] == pytest.approx(2.0 + 0.0978 + 512 * 2.168e-3, abs=0.05)


class _Fixed:
    """A step of `s` seconds whatever it holds."""

    full_attention_only = True

    def __init__(self, s: float) -> None:
        self.s = s

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return self.s

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return self.s


def test_above_graphs_prices_only_steps_past_the_largest_graph() -> None:
    # Largest graph 512 tokens: 500 decodes + a 12-token chunk (512) replay a graph (1 s);
    # 500 decodes + a 13-token chunk (513) do not (2 s); so does one 513-token chunk.
    cost = tf.AboveGraphs(graphed=_Fixed(1.0), eager=_Fixed(2.0), max_graph_tokens=512)
    assert cost.seconds_from_sums(500, 10_000, [(0, 12)]) == 1.0
    assert cost.seconds_from_sums(500, 10_000, [(0, 13)]) == 2.0
    assert cost.seconds(decode_contexts=[], chunks=[(0, 513)]) == 2.0
    assert cost.seconds(decode_contexts=[5] * 512, chunks=[]) == 1.0


def test_ungraphed_launch_prices_vllm_only() -> None:
    # The opt-in price set only for vLLM's step costs, and restored after.
    from kvplan.analysis.simulate import engine_setups as run  # the step costs are built there
    from kvplan.perf.vllm_ungraphed import VLLM_UNGRAPHED_LAUNCH_S
    from tests.benches.ttft_forensic import ungraphed_launch

    with ungraphed_launch():
        assert run.engine_efficiency("vllm").ungraphed_launch_s == VLLM_UNGRAPHED_LAUNCH_S
        assert run.engine_efficiency("sglang").ungraphed_launch_s == 0.0
    assert run.engine_efficiency("vllm").ungraphed_launch_s == 0.0
