"""vLLM's data-parallel load balancer: which DP engine a new request goes to.

`vllm serve --data-parallel-size D` (internal load balancing, the default) runs D engine cores,
each its own scheduler and KV pool; the API server's client (`DPLBAsyncMPClient`) picks one per
request. vLLM 0.19.0 vllm/v1/engine/core_client.py:1337-1363 `get_core_engine_for_request`
(the same rule since the DP coordinator landed, 0.10; read in the 0.19.0 wheel): over the
engines in rank order from the client's start index (`eng_start_index`, 0 for the first API
server), the one with the lowest `waiting * 4 + running` (strictly lower: a tie keeps the
earlier engine), then its waiting count is raised at once (`current_counts[eng_index][0] +=
self.client_count`) so that the requests routed before the next snapshot spread out.

The counts are the DP coordinator's snapshot of each engine's scheduler queues (published every
100 ms when they change, vllm/v1/engine/coordinator.py:155-178, :263-272) plus those local
increments; kvplan reads each engine's queues when the request is routed (no snapshot lag), and
one API server (vLLM 0.19 defaults `--api-server-count` to the DP size, entrypoints/cli/serve.py
:83-103; each server balancing its own requests over the same snapshot is not modelled).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from kvplan.engines.handover import PrefillRankState

# vllm/v1/engine/core_client.py:1354 `score = waiting * 4 + running` (0.19.0).
WAITING_WEIGHT = 4


def vllm_dp_engine(waiting: Sequence[int], running: Sequence[int], start: int = 0) -> int:
    """The DP engine a new request goes to: the lowest 4 x waiting + running, scanning from
    `start` (the API server's `eng_start_index`), the first of equal scores kept."""
    n = len(waiting)
    best, best_score = start % n, None
    for i in range(n):
        idx = (start + i) % n
        score = waiting[idx] * WAITING_WEIGHT + running[idx]
        if best_score is None or score < best_score:
            best, best_score = idx, score
    return best


@dataclass(frozen=True)
class VllmDpBalance:
    """vLLM's balancer as a disaggregated prefill worker's (`vllm serve --data-parallel-size D`
    with a KV connector: the same API server client routes its requests), for the closed-loop
    simulation (kvplan.analysis.simulate.disagg_sim): each rank's waiting and running prompts,
    the new one counted waiting where it goes (the simulation queues it at once)."""

    by_load: bool = True

    def rank(self, ranks: Sequence[PrefillRankState], prompt_len: int,
             rng: random.Random) -> int:
        return vllm_dp_engine([r.waiting for r in ranks], [r.running for r in ranks])


VLLM_DP_BALANCE = VllmDpBalance()
