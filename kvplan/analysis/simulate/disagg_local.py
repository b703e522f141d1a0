"""The disaggregated simulation (kvplan.analysis.simulate.disagg_sim) of a deployment whose
decode workers run without a KV connector (dynnocon67, issue 29): the prefill workers prefill
and keep each prompt's blocks, and the decode workers prefill every prompt again themselves.

The engine's rules (the connector's `KvConnector.no_decode_connector`, e.g. vLLM NIXL's:
kvplan.engines.vllm.connectors) give the hold; the flow here:

(a) The decode worker prefills locally. A handed-over request (nothing is pulled: no
    transfer) takes a seat on the decode rank holding the fewest requests, as a pulled one
    would, and its whole prompt is prefilled in that rank's steps beside the running decodes:
    each step the rank's token budget (`decode_token_budget`, the decode role's
    max_num_batched_tokens) less one token per running decode goes to the prefilling
    requests in the order they joined (vLLM's scheduler: the running requests first, each
    decode one token of the budget, a prompt's chunk what is left). A step with chunks is
    priced as the aggregated simulator prices a mixed step (`decode_mixed_s(decodes,
    chunks)`, chunks as (start, tokens): kvplan.perf.mixed_step.MixedStepCost.seconds on the
    decode role, the busiest rank's); one without, the decode step's time at its batch. The
    request's first decode-engine token ends the step that finishes its prompt; its last,
    O - 1 steps later.
(b) The prefill worker's pool holds each finished prompt's blocks for `hold_s` after its
    prefill ends (nothing reads them), then frees them. A waiting prompt is admitted only
    when the rank's free blocks hold its whole prompt (`blocks`), FCFS: the head waits and
    with it every prompt behind it (vLLM 0.20.1 v1/core/sched/scheduler.py:744-756, the
    `scheduler_reserve_full_isl` gate, default True at config/scheduler.py:140-144, and
    :769-776 the break on no blocks). A prompt larger than the pool is refused.
(c) The client's first token (`first_token_at_prefill`): True, when the prefill worker
    returns (the frontend streams the prefill's one token); False, the decode engine's first.
    The TPOT is (last - first) / (O - 1) from that first token.

Not modelled: the decode worker's own pool beyond its seats (decode_max_seqs), prefix-cache
hits, the expiry's polling (freed at the deadline, not the next step after it).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

from kvplan._util.errors import InputError
from kvplan._util.units import cdiv
from kvplan.analysis.simulate.disagg_sim import (
    _DECODE_END,
    _DECODE_KICK,
    _PREFILL_KICK,
    DisaggSimInputs,
    DisaggSimResult,
    _Req,
    _Run,
)

_EXPIRE = _DECODE_KICK + 1  # a prefill rank's held blocks freed (payload: (rank, blocks))


@dataclass(frozen=True, kw_only=True)
class LocalPrefillFlow:
    """A deployment whose decode workers run without a connector (module docstring)."""

    hold_s: float  # (b): a finished prompt's blocks held this long on its prefill rank
    pool_blocks: int  # (b): one prefill rank's KV pool, blocks
    block_tokens: int  # (b): tokens per block
    decode_token_budget: int  # (a): one decode rank's tokens per step
    # (a): one decode rank's step of `decodes` running decodes and prefill chunks (start,
    # tokens), s.
    decode_mixed_s: Callable[[int, tuple[tuple[int, int], ...]], float]
    first_token_at_prefill: bool = True  # (c)

    def blocks(self, tokens: int) -> int:
        return cdiv(tokens, self.block_tokens)


def simulate_disagg_local(inp: DisaggSimInputs, flow: LocalPrefillFlow, *,
                          prefill_step_s: Callable[[int, int], float],
                          decode_step_s: Callable[[int], float]) -> DisaggSimResult:
    """`simulate_disagg` of the deployment with `flow` (module docstring): no transfer, no
    decode-side admission, no polled transfer (the flows of a connector the decode lacks)."""
    if inp.decode_admission is not None or inp.transfer_polled:
        raise ValueError("no decode connector: no decode-side admission or polled transfer")
    if min(flow.pool_blocks, flow.block_tokens, flow.decode_token_budget) < 1:
        raise ValueError("no decode connector: pool, block and budget must be >= 1")
    longest = max((i for i, _ in inp.lengths), default=0) if inp.lengths else inp.input_len
    if flow.blocks(longest) > flow.pool_blocks:
        raise InputError(f"a prompt of {longest:,} tokens needs {flow.blocks(longest):,} "
                         f"blocks; a prefill rank's pool has {flow.pool_blocks:,}")
    inp = replace(inp, transfer_s=0.0, first_token_steps=None)
    return _LocalRun(inp, flow, prefill_step_s, decode_step_s).run()


class _LocalRun(_Run):
    def __init__(self, inp: DisaggSimInputs, flow: LocalPrefillFlow,
                 prefill_step_s: Callable[[int, int], float],
                 decode_step_s: Callable[[int], float]) -> None:
        super().__init__(inp, prefill_step_s, decode_step_s)
        self.flow = flow
        self.p_free = [flow.pool_blocks] * len(self.p_queue)  # free blocks per prefill rank
        self.p_rank: dict[int, int] = {}  # request id -> its prefill rank
        nd = inp.decode_workers * inp.decode_ranks
        self.local: list[deque[_Req]] = [deque() for _ in range(nd)]  # prefilling, by join
        self.left: dict[int, int] = {}  # request id -> prompt tokens the decode has left

    def _fits(self, rank: int, req: _Req) -> bool:
        need = self.flow.blocks(req.prompt_len)
        if need > self.p_free[rank]:
            return False
        self.p_free[rank] -= need
        self.p_rank[req.rid] = rank
        return True

    def _event(self, kind: int, w: int, t: float, payload: object) -> None:
        assert kind == _EXPIRE
        rank, blocks = payload  # type: ignore[misc]
        self.p_free[rank] += blocks
        self._push(t, _PREFILL_KICK, w, None)

    def _handover(self, req: _Req, t: float) -> None:
        p_rank = self.p_rank.pop(req.rid)
        self._push(t + self.flow.hold_s, _EXPIRE, p_rank // self.inp.prefill_ranks,
                   (p_rank, self.flow.blocks(req.prompt_len)))
        rank = self._decode_rank()
        self.d_held[rank] += 1
        req.rank, req.ready_s, req.handed_s = rank, t, t
        if self.flow.first_token_at_prefill:
            req.first_s = t
        w = rank // self.inp.decode_ranks
        self.d_wait[w].append(req)
        self._push(t, _DECODE_KICK, w, None)

    def _decode_step(self, w: int, t: float) -> None:
        inp, flow = self.inp, self.flow
        step, keep = self.d_step[w], []
        for req in self.d_wait[w]:
            if req.ready_s <= t and self.d_running[req.rank] < inp.decode_max_seqs:
                self.d_running[req.rank] += 1
                self.local[req.rank].append(req)
                self.left[req.rid] = req.prompt_len
            else:
                keep.append(req)
        self.d_wait[w] = keep
        ranks = range(w * inp.decode_ranks, (w + 1) * inp.decode_ranks)
        decoding = max(self.d_running[r] - len(self.local[r]) for r in ranks)
        mixed_s, finished, chunked = 0.0, [], False
        for r in ranks:
            running = self.d_running[r] - len(self.local[r])
            budget, chunks = flow.decode_token_budget - running, []
            for req in self.local[r]:
                take = min(self.left[req.rid], budget)
                if take <= 0:
                    break
                budget -= take
                chunks.append((req.prompt_len - self.left[req.rid], take))
                self.left[req.rid] -= take
                if self.left[req.rid] == 0:
                    finished.append(req)
            if chunks:
                chunked = True
                mixed_s = max(mixed_s, flow.decode_mixed_s(running, tuple(chunks)))
        if decoding == 0 and not chunked:
            self.d_busy[w] = False
            return
        self.d_busy[w] = True
        # The busiest rank's step: its mixed step, or a decode step at the largest batch.
        dur = max(mixed_s, self.d_cost(decoding) if decoding else 0.0)
        for req in finished:
            self.local[req.rank].popleft()
            del self.left[req.rid]
            if not flow.first_token_at_prefill:
                req.first_s = t + dur
            # Its first token ends this step, each of the next O - 1 steps one more.
            req.end_step = step + req.output_len - 1
            self._push_end(w, req)
        if decoding:
            self.d_steps += 1
            self.d_batch_sum += decoding
        self._push(t + dur, _DECODE_END, w, None)

    def _push_end(self, w: int, req: _Req) -> None:
        heapq.heappush(self.d_ends[w], (req.end_step, req.rid, req))
