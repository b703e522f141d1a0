"""TensorRT-LLM's attention-DP request balancing: which attention-DP rank each new request goes
to (`enable_attention_dp: true`; the 1.2 line's PyTorch executor).

Each executor iteration fetches the new requests and gives every rank its share
(tensorrt_llm/_torch/pyexecutor/executor_request_queue.py, `_fetch_new_requests_attention_dp`,
`_schedule_attention_dp_requests`, `_balance_requests_across_ranks`, as GitHub stores the 1.1 -
1.2 line): the ranks' active requests and active tokens (the sum of their requests'
`py_orig_prompt_len`) are all-gathered; at most max_num_active_requests x ranks - the active
requests are taken from the queue (max_num_active_requests: max_batch_size); a request naming a
rank (scheduling params, none here) goes there; the others are balanced: expected = max(ceil(
(active + new) / ranks), the most active on a rank); the ranks below `expected` go on a heap
keyed (active tokens, active requests, rank); the new requests, sorted by prompt length
(longest first, a stable sort), each go to the heap's top, which takes its tokens and one
request and goes back while still below `expected`. The attention-DP balance that holds context
requests back (attention_dp_config.enable_balance) is off by default; where a run turns it on,
`AdpContextGate` holds them as py_executor.py does (trtdp56).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence
from dataclasses import dataclass

from kvplan.engines.handover import PrefillRankState


def trtllm_adp_ranks(active_requests: Sequence[int], active_tokens: Sequence[int],
                     prompt_lens: Sequence[int]) -> list[int]:
    """The rank each new request (prompt lengths in queue order) goes to; the caller takes
    no more than the free seats (`_get_from_waiting_queue`). Every request is placed: the
    ranks below `expected` have room for all of them (expected x ranks >= active + new)."""
    n = len(active_requests)
    expected = max(-(-(sum(active_requests) + len(prompt_lens)) // n), max(active_requests))
    heap = [(active_tokens[r], active_requests[r], r) for r in range(n)
            if active_requests[r] < expected]
    heapq.heapify(heap)
    out = [-1] * len(prompt_lens)
    for i in sorted(range(len(prompt_lens)), key=lambda i: -prompt_lens[i]):
        tokens, reqs, rank = heapq.heappop(heap)
        out[i] = rank
        if reqs + 1 < expected:
            heapq.heappush(heap, (tokens + prompt_lens[i], reqs + 1, rank))
    return out


@dataclass(frozen=True, kw_only=True)
class AdpBalance:
    """`attention_dp_config` with `enable_balance: true` (llmapi/llm_args.py AttentionDpConfig:
    enable_balance False, timeout_iters 50, batching_wait_iters 10 by default; the 1.2 line as
    GitHub stores it). None in its place (the default): no context request is held back."""

    timeout_iters: int = 50
    batching_wait_iters: int = 10


class AdpContextGate:
    """TensorRT-LLM's attention-DP balance of context requests, one executor iteration at a
    time (tensorrt_llm/_torch/pyexecutor/py_executor.py `_schedule`, which calls
    `_balance_adp_requests` only when enable_attention_dp and attention_dp_enable_balance; a
    1.2-line py_executor.py as GitHub stores it). After every rank's scheduler has picked its
    step, the ranks all-gather (context requests picked, generation requests picked); a rank
    with no active request joins with one dummy generation request
    (`_pad_attention_dp_dummy_request`, padded before `_schedule`). Then, with the counters
    every rank keeps alike (the same all-gathered numbers):
    - every rank has a context request and every rank fewer than max_batch_size generation
      requests: the wait counter goes back to 0; if every rank also has a generation request,
      the context requests are held while the batching counter is below batching_wait_iters
      (it counts up; at the limit it goes back to 0 and they run);
    - otherwise the context requests are held and the wait counter counts up, unless it has
      reached timeout_iters or some rank has no generation request: then they run and it goes
      back to 0.
    Held: every rank's step runs its generation requests only; the context requests stay
    active for the next iteration."""

    def __init__(self, balance: AdpBalance, max_batch_size: int) -> None:
        self.balance = balance
        self.max_batch_size = max_batch_size
        self.waiting_iters = 0  # adp_ctx_waiting_iters_count
        self.batching_iters = 0  # adp_ctx_batching_wait_iters_count

    def release(self, context: Sequence[int], generation: Sequence[int]) -> bool:
        """Whether this iteration's context requests run (each rank's picked counts)."""
        all_context = all(n > 0 for n in context)
        all_generation = all(n > 0 for n in generation)
        if all(n < self.max_batch_size for n in generation) and all_context:
            self.waiting_iters = 0
            if all_generation:
                if self.batching_iters < self.balance.batching_wait_iters:
                    self.batching_iters += 1
                    return False
                self.batching_iters = 0
            return True
        self.waiting_iters += 1
        if self.waiting_iters >= self.balance.timeout_iters or not all_generation:
            self.waiting_iters = 0
            return True
        return False
@dataclass(frozen=True)
class TrtllmAdpBalance:
    """The balancing above as a disaggregated context server's (`enable_attention_dp` on the
    context workers: the same executor fetches their requests), for the closed-loop simulation
    (kvplan.analysis.simulate.disagg_sim): each rank's active requests (waiting and running)
    and their prompts' tokens, one new request at a time."""

    by_load: bool = True

    def rank(self, ranks: Sequence[PrefillRankState], prompt_len: int,
             rng: random.Random) -> int:
        return trtllm_adp_ranks([r.waiting + r.running for r in ranks],
                                [r.prompt_tokens for r in ranks], [prompt_len])[0]


TRTLLM_ADP_BALANCE = TrtllmAdpBalance()
