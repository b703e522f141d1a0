"""SGLang's attention-DP ranks: which rank takes a request, and the tokens their MoE layers see.

Aggregated serving (`--dp D --enable-dp-attention`, no disaggregation): the data-parallel
controller deals the requests round-robin, the i-th request it receives (0-based) to rank
i mod D, whatever the ranks' queues. `--load-balance-method` defaults to round_robin
(server_args.py 0.5.3:257, 0.5.6:345; from 0.5.9 "auto", which resolves to round_robin outside
a prefill worker: 0.5.9 server_args.py:805-815, 0.5.23 arg_groups/serving_hook.py:217-236), and
round_robin_scheduler sends the request to `workers[round_robin_counter]` and advances the
counter by one (managers/data_parallel_controller.py 0.5.3:339-349, 0.5.9:513-527; 0.5.23
:880-899 over the active ranks, all of them here). The counter starts at 0 with the server.
(shortest_queue / minimum_tokens, 0.5.3 - 0.5.6, and total_requests / total_tokens from 0.5.9
are opt-in: not simulated.)

Each rank schedules on its own (its scheduler, its pool) and the ranks join every forward: in
`prepare_mlp_sync_batch_raw` (managers/scheduler_dp_attn_mixin.py 0.5.9:129-223; 0.5.3
scheduler.py:2145-2246) they all-gather their token counts, and while any rank has tokens a rank
without a batch runs an idle one (`get_idle_batch`). The MLP / MoE layers then see the tokens
gathered over the ranks (layers/dp_attention.py `get_dp_padding_mode`, 0.5.3:58-70 and
0.5.9:64-76 the same; model_executor/forward_batch_info.py 0.5.9:754-768 `global_dp_buffer_len`):
when any rank's batch is an extend, SUM_LEN, the ranks' tokens summed; in a decode-only step
MAX_LEN, every rank's padded to the busiest rank's (the CUDA-graph mode,
`get_default_mode_in_cuda_graph`, cuda_graph_runner.py 0.5.9:673: the decode batches kvplan
prices). (0.5.23 keeps SUM_LEN for an extend step but for hybrid-SSM models with an idle rank;
an eager decode step of very uneven ranks takes SUM_LEN: neither is modelled.)

Disaggregated prefill: SGLang's attention-DP rank for a request of a disaggregated prefill worker
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


def sglang_round_robin_rank(index: int, dp: int) -> int:
    """The rank of the `index`-th request (0-based) the controller receives: round_robin
    (module docstring)."""
    return index % dp


@dataclass(frozen=True)
class DpGathered:
    """A SUM_LEN step's gathered buffers over the attention-DP ranks: the tokens entering the
    MLP / MoE layers and the logit rows through the split lm_head, each the ranks' summed."""

    tokens: int
    rows: int


def sglang_gathered(tokens: Sequence[int], rows: Sequence[int], extend: bool
                    ) -> DpGathered | None:
    """What the ranks gather in a step where they hold `tokens` and `rows` logit rows each
    (`extend`: some rank's batch is an extend): the sums (SUM_LEN, module docstring; the
    logits' rows: a rank's requests, an extend's last token each, summed by
    `dp_gather_replicate` at SUM_LEN in every step: kvplan.perf.step_comm, `logits gather`);
    None in a decode-only step (MAX_LEN: every rank's padded to the busiest rank's, the cost
    model's own count, its logits' buffer the captured batch x the ranks)."""
    return DpGathered(sum(tokens), sum(rows)) if extend else None
