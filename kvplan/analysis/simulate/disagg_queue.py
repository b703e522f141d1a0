"""The disaggregated simulation (kvplan.analysis.simulate.disagg_sim) with a connector's transfers
queued on each end (trtctx68, issue 29): the connector's `TransferQueue`
(kvplan.engines.handover; TensorRT-LLM's cache transceiver: kvplan.engines.trtllm.
transceiver_queue) bounds the transfers one prefill rank sends at once and one decode rank (a TP
server's ranks together) receives at once, and the prefill rank keeps a prompt's blocks until
its send ends. Polled transfers only (`transfer_polled`: the decode worker takes a request in at
a step boundary, kvplan.engines.trtllm.disagg_flow (b)).

(a) Receiving: a request taken in at a decode boundary joins its decode rank's FIFO; while the
    rank runs fewer than `recv_slots` receives, the head's receive starts and its request goes
    to its prefill rank's send queue (the generation side asks for the KV when its receive
    begins: the sender answers request infos as they arrive). The receive slot is held until
    the transfer ends.
(b) Sending: while the prefill rank runs fewer than `send_slots` sends, the head of its send
    queue is sent; the transfer takes the request's transfer time (kvplan.analysis.disagg.
    transfer_seconds), both slots free at its end.
(c) The end: the request is seen done at the first decode boundary at or after it, after the
    one that took it in (disagg_sim's polled rule); a decode worker with nothing running and
    only queued transfers blocks until one ends (py_executor.py `_recv_disagg_gen_cache`'s
    block_transfer, at_least_num 1: no new request is taken in meanwhile), and its next
    boundary is then, as disagg_sim's wait for a transfer whose end it knows.
(d) The prefill pool (`pool_blocks`, None: unbounded): a prompt is admitted to a prefill step
    only while the rank's free blocks hold its prompt + `held_extra_tokens`, FCFS (the head
    waits, and every prompt behind it); the blocks are freed when its send ends.

With unbounded slots and pool, the timeline is disagg_sim's (a test checks it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

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

_XFER_END = _DECODE_KICK + 1  # a transfer ends (payload: the request)


@dataclass(frozen=True, kw_only=True)
class QueuedTransferFlow:
    """The connector's transfer queues and the prefill pool they hold (module docstring)."""

    send_slots: int  # (b) transfers one prefill rank sends at once
    recv_slots: int  # (a) transfers one decode rank receives at once
    pool_blocks: int | None  # (d) one prefill rank's pool, blocks; None: unbounded
    block_tokens: int  # (d) tokens per block
    held_extra_tokens: int = 0  # (d) tokens a prompt reserves beyond itself

    def blocks(self, prompt_tokens: int) -> int:
        return cdiv(prompt_tokens + self.held_extra_tokens, self.block_tokens)


def simulate_disagg_queued(inp: DisaggSimInputs, flow: QueuedTransferFlow, *,
                           prefill_step_s: Callable[[int, int], float],
                           decode_step_s: Callable[[int], float]) -> DisaggSimResult:
    """`simulate_disagg` with `flow`'s queues (module docstring)."""
    if not inp.transfer_polled or inp.decode_admission is not None:
        raise ValueError("queued transfers: polled transfers, no decode-side admission")
    if min(flow.send_slots, flow.recv_slots, flow.block_tokens) < 1:
        raise ValueError("queued transfers: slots and block must be >= 1")
    longest = max((i for i, _ in inp.lengths), default=0) if inp.lengths else inp.input_len
    if flow.pool_blocks is not None and flow.blocks(longest) > flow.pool_blocks:
        raise InputError(f"a prompt of {longest:,} tokens needs {flow.blocks(longest):,} "
                         f"blocks; a prefill rank's pool has {flow.pool_blocks:,}")
    return _QueuedRun(inp, flow, prefill_step_s, decode_step_s).run()


class _QueuedRun(_Run):
    def __init__(self, inp: DisaggSimInputs, flow: QueuedTransferFlow,
                 prefill_step_s: Callable[[int, int], float],
                 decode_step_s: Callable[[int], float]) -> None:
        super().__init__(inp, prefill_step_s, decode_step_s)
        self.flow = flow
        npr, nd = len(self.p_queue), inp.decode_workers * inp.decode_ranks
        self.p_free = [flow.pool_blocks or 0] * npr  # (d) free blocks per prefill rank
        self.p_rank: dict[int, int] = {}  # request id -> its prefill rank
        self.recv_q: list[deque[_Req]] = [deque() for _ in range(nd)]
        self.recv_busy = [0] * nd
        self.send_q: list[deque[_Req]] = [deque() for _ in range(npr)]
        self.send_busy = [0] * npr
        self.blocked = [False] * inp.decode_workers  # (c) waiting for a queued transfer

    def _blocked(self, w: int) -> None:
        self.blocked[w] = True  # still busy: its kicks are ignored until a transfer ends

    def _fits(self, rank: int, req: _Req) -> bool:
        if self.flow.pool_blocks is not None:
            need = self.flow.blocks(req.prompt_len)
            if need > self.p_free[rank]:
                return False
            self.p_free[rank] -= need
        self.p_rank[req.rid] = rank
        return True

    def _start_transfer(self, req: _Req, t: float, step: int) -> None:
        # (c): seen from the next boundary once done; when it is done is known at its end.
        req.join_from, req.ready_s = step + 1, float("inf")
        self.recv_q[req.rank].append(req)
        self._receive(req.rank, t)

    def _receive(self, d_rank: int, t: float) -> None:
        """(a): the rank's queued receives start while it has slots; each asks its sender."""
        queue = self.recv_q[d_rank]
        while queue and self.recv_busy[d_rank] < self.flow.recv_slots:
            req = queue.popleft()
            self.recv_busy[d_rank] += 1
            p_rank = self.p_rank[req.rid]
            self.send_q[p_rank].append(req)
            self._send_next(p_rank, t)

    def _send_next(self, p_rank: int, t: float) -> None:
        """(b): the rank's queued sends start while it has slots."""
        queue = self.send_q[p_rank]
        while queue and self.send_busy[p_rank] < self.flow.send_slots:
            req = queue.popleft()
            self.send_busy[p_rank] += 1
            self._push(t + req.transfer_s, _XFER_END, req.rank // self.inp.decode_ranks, req)

    def _event(self, kind: int, w: int, t: float, payload: object) -> None:
        assert kind == _XFER_END
        req = payload
        assert isinstance(req, _Req)
        p_rank = self.p_rank.pop(req.rid)
        self.send_busy[p_rank] -= 1
        self.recv_busy[req.rank] -= 1
        if self.flow.pool_blocks is not None:  # (d): its blocks freed, the rank may admit
            self.p_free[p_rank] += self.flow.blocks(req.prompt_len)
            self._push(t, _PREFILL_KICK, p_rank // self.inp.prefill_ranks, None)
        req.ready_s = t
        if self.blocked[w]:  # (c): the blocked worker's boundary is now
            self.blocked[w] = False
            self._push(t, _DECODE_END, w, None)
        self._send_next(p_rank, t)
        self._receive(req.rank, t)
