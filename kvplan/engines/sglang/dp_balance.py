"""SGLang's attention-DP rank for a request of a disaggregated prefill worker
(`--disaggregation-mode prefill` with `--enable-dp-attention`), read in the releases the measured
rows ran (kvplan.engines.sglang.connectors, "the time side"): data_parallel_controller.py sends
the request to rank `bootstrap_room % dp_size` (0.5.0-0.5.5: `round_robin_scheduler` under
disaggregation; from 0.5.8 `load_balance_method` auto -> "follow_bootstrap_room" in prefill
mode), the room a random 63-bit id the router draws: a uniform random rank, whatever the ranks'
queues. The closed-loop simulation (kvplan.analysis.simulate.disagg_sim) draws that rank from
its own seeded generator: the same distribution (2**63 mod dp_size of bias aside).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from kvplan.engines.handover import PrefillRankState


@dataclass(frozen=True)
class SglangBootstrapRoom:
    """bootstrap_room % dp_size (module docstring): not by load."""

    by_load: bool = False

    def rank(self, ranks: Sequence[PrefillRankState], prompt_len: int,
             rng: random.Random) -> int:
        return rng.randrange(len(ranks))


BOOTSTRAP_ROOM = SglangBootstrapRoom()
