"""A closed-loop simulation of a disaggregated deployment (issue 29): x prefill workers batch the
waiting prompts into steps as their engine's scheduler does, hand each request's KV to one of y
decode workers, whose steps decode every request they hold; `concurrency` users each send their
next request when the last one's final token arrives (a benchmark client at a stated
concurrency: aiperf / genai-perf / vllm bench's closed loop).

- Prefill worker: `ranks` ranks (attention-DP ranks or DP engines) stepping in lockstep (a MoE
  model's DP ranks run each forward together, an idle one a dummy batch: vLLM's
  DPEngineCoreProc, SGLang's DP attention), each with its own FCFS queue. A new request goes to
  the rank with the fewest prompt tokens queued, over every worker's ranks; where the engine's
  rule is given (`prefill_balance`: kvplan.engines.handover.PrefillBalance), that rank's
  worker takes it and the engine's DP balancer picks its rank there (vLLM's and TensorRT-LLM's
  from the ranks' waiting and running prompts: on the bench's rows the least-loaded rank at
  every pick), or, for a rule not by load (SGLang's bootstrap room), the least-loaded worker
  takes it (the router) and the engine's rule draws the rank. A
  step starts when the worker is idle and a prompt arrives (with every prompt arriving at that
  instant), or when its last step ends and one waits (synchronous scheduling). Each rank
  takes waiting prompts in order while its token budget
  (`SchedulerConfig.max_num_batched_tokens`: vLLM's max_num_batched_tokens, SGLang's chunked
  prefill size) and seats (`max_num_seqs`) last, as kvplan.analysis.simulate.scheduler admits
  (step 2 of its docstring); with chunked prefill the prompt crossing the budget takes what is
  left and continues next step, without it admission stops there. Where the engine has an
  input budget besides (`prefill_input_budget`: SGLang's --max-prefill-tokens,
  kvplan.engines.sglang.options.MAX_PREFILL_TOKENS), a prompt after the first of the step joins
  only while its tokens left are below what is left of that budget (the first always, the
  chunked one included), and stops admission otherwise, as SGLang's PrefillAdder.add_one_req
  does; each prompt taken lowers it by the tokens it takes. (SGLang rounds both sides up to the
  page; prompts here are whole pages where it matters, not rounded.) The step takes
  `prefill_step_s(tokens, prompts)` of the busiest rank (most tokens).
- Handover: a prompt done at t is assigned to the decode rank holding the fewest requests
  (running or arriving); its KV is there at t + transfer. Where the connector's flow is read
  (`first_token_steps`, e.g. vLLM NIXL's 1.5): the decode worker sees the KV on its first step
  boundary at or after that (it steps while any request is on its way), the request joins that
  step's batch and its first token comes first_token_steps x that step's time later
  (kvplan.analysis.disagg_ratio.handover_s, the same rule on real step boundaries; 0: the
  first token at that boundary, the request decoding its second in that step). Without it:
  the first token at t + transfer (the prefill samples it), the request decoding from the next
  boundary.
- Decode admission, where the engine's flow is read (`decode_admission`, e.g. SGLang's
  preallocation: kvplan.engines.sglang.decode_admission): a prompt is first put on a decode
  rank (the one holding the fewest requests, queued included) and waits in that rank's FIFO
  queue until the rank admits it, on the decode worker's step boundaries (at once when it is
  idle); only then does it join the prefill queue. An admitted request holds its prompt's
  pages and a slot until it ends, and one more token a decode step it runs (its pages
  whole); the rule reads the rank's free tokens, running and pending counts and the running
  requests' tokens (kvplan.engines.handover.DecodeRankState). Its TTFT includes the wait.
  Where the rule takes requests in only at some boundaries (`DecodeAdmission.recv_interval`
  N > 1: SGLang's --scheduler-recv-interval, kvplan.engines.sglang.decode_admission), a worker
  takes the prompts sent to it at the N-th boundary since its last take while it decodes, at
  once at a boundary where handed-over requests join or while nothing runs on it; a prompt
  waits for that take before its admission.
- Decode worker: `ranks` ranks in lockstep; each holds at most `decode_max_seqs` running
  requests (more wait, ready, for a seat); a step takes `decode_step_s(batch)` at the largest
  rank's batch, and each running request gains one token.
- Polled transfer (`transfer_polled`, e.g. TensorRT-LLM's generation server:
  kvplan.engines.trtllm.disagg_flow, (b)): the decode worker takes a handed-over request in at
  its first step boundary at or after the handover, its transfer starting there, and sees it
  done at a later boundary (at or after start + transfer), where the request joins. A worker
  with nothing running waits for the transfer instead of stepping, the request joining as it
  ends.

Measured: TTFT (sent -> first token) and TPOT ((last - first) / (O - 1)) averaged over the
requests of every round but each user's first (the start-up burst) and last (the drain), as a
benchmark's steady state; the same requests' TTFT split into its phases (`TtftPhases`).
Step times are given (callables): nothing here is fitted.

Client and frontend (both off by default): `measure_all_rounds` averages every request, each
user's first included: a client whose measured run starts with all its users at once and
averages all of them, as sa-bench does (kvplan.analysis.simulate.bench_client). With
`random_workers` the worker of each role a request goes to is drawn uniformly (seeded), not
the least loaded: a frontend that does not route by load (kvplan.engines.dynamo_frontend);
within the drawn worker the rank is chosen as without it (the engine's DP rule, else the
least loaded rank).

Lengths (`lengths`, off by default: every request `input_len` / `output_len`): each request's
own prompt and output, in send order (the client's list order: sa-bench's requests wait on one
semaphore, FIFO, so the i-th sent is the i-th drawn). Every rule above takes the request's own:
its prefill tokens, the decode rank's pages and admission (`DecodeAdmission.admits_each`), its
end step, and its TPOT over its own output (the mean over requests of more than one token, as
the clients' calculate_metrics). Its transfer is the row's scaled by prompt / input_len (the KV
is per token; the block padding of the shorter prompt is not recomputed).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from kvplan._util.units import cdiv
from kvplan.analysis.simulate.sim_types import SchedulerConfig
from kvplan.engines.handover import (
    DecodeAdmission,
    DecodeRankState,
    PrefillBalance,
    PrefillRankState,
)

# Events. A kick starts an idle worker's step; it is queued rather than run inline so that every
# request arriving at the same instant (a closed loop's resends after one decode step, the
# prompts one prefill step ends) is in the queue when the step is formed.
_PREFILL_END, _DECODE_END, _PREFILL_KICK, _DECODE_KICK = range(4)


@dataclass(frozen=True, kw_only=True)
class DisaggSimInputs:
    concurrency: int
    input_len: int
    output_len: int
    prefill_workers: int
    prefill_ranks: int  # lockstep ranks per prefill worker
    decode_workers: int
    decode_ranks: int
    prefill: SchedulerConfig  # per prefill rank: token budget and seats per step
    chunked_prefill: bool
    decode_max_seqs: int  # running requests per decode rank
    transfer_s: float
    first_token_steps: float | None
    rounds: int = 4  # requests per user (the first and last are not measured)
    prefill_lookahead: bool = False  # module docstring
    prefill_balance: PrefillBalance | None = None  # module docstring; None: least loaded
    decode_admission: DecodeAdmission | None = None  # module docstring
    prefill_input_budget: int | None = None  # per rank and step (module docstring); None: none
    transfer_polled: bool = False  # module docstring
    # The client's measurement and the frontend's routing (module docstring, "Client and
    # frontend"): every round averaged, the first burst included (sa-bench); the worker of
    # each role drawn uniformly (a frontend not routing by load).
    measure_all_rounds: bool = False
    random_workers: bool = False
    # (prompt, output) tokens of each request in send order (a client's length spread:
    # kvplan.analysis.simulate.range_ratio), at least concurrency x rounds of them, each prompt
    # at most input_len; None: every request input_len / output_len ("Lengths", docstring).
    lengths: tuple[tuple[int, int], ...] | None = None


@dataclass(frozen=True, kw_only=True)
class TtftPhases:
    """The measured requests' mean TTFT, ms, by where it went (they sum to `ttft_ms`): the
    wait for the decode side's admission before the prefill (`decode_admission`), the wait in
    the prefill rank's queue until its first step starts, the prefill steps to its last
    (chunks and the step it shares included), the transfer, and the decode side from the KV's
    arrival to the first token (the step boundary, a seat, `first_token_steps`). For the
    forensic of the replayed rows (tests/benches/disagg_forensic.py)."""

    admission_ms: float
    prefill_queue_ms: float
    prefill_ms: float
    transfer_ms: float
    decode_side_ms: float


@dataclass(frozen=True, kw_only=True)
class DisaggSimResult:
    ttft_ms: float
    tpot_ms: float
    measured: int  # requests averaged
    prefill_prompts_per_step: float  # mean prompts finishing per busiest-rank step
    decode_batch: float  # mean largest-rank batch per decode step
    phases: TtftPhases | None = None  # TTFT by phase (None: built by hand, not simulated)


@dataclass(eq=False)
class _Req:
    rid: int
    user: int
    round: int
    sent_s: float
    remaining: int  # prompt tokens not yet prefilled
    prompt_len: int
    output_len: int
    transfer_s: float
    queued_s: float = 0.0  # when it joined the prefill queue
    started_s: float = 0.0  # when its first prefill step started
    handed_s: float = 0.0  # when its last prefill step ended (the handover)
    join_step: int = 0  # the decode step it joined the running batch at
    rank: int = -1  # decode rank
    ready_s: float = 0.0
    join_from: float = 0.0  # the decode step it may join from (`transfer_polled`)
    end_step: int = 0
    first_s: float = -1.0
    last_s: float = -1.0


def simulate_disagg(inp: DisaggSimInputs, *, prefill_step_s: Callable[[int, int], float],
                    decode_step_s: Callable[[int], float]) -> DisaggSimResult:
    """Run the closed loop to the end (module docstring) and average the measured requests."""
    if min(inp.concurrency, inp.input_len, inp.output_len, inp.prefill_workers,
           inp.prefill_ranks, inp.decode_workers, inp.decode_ranks, inp.rounds) < 1:
        raise ValueError("disaggregated simulation: every count must be >= 1")
    if inp.lengths is not None and (
            len(inp.lengths) < inp.concurrency * inp.rounds
            or not all(1 <= i <= inp.input_len and o >= 1 for i, o in inp.lengths)):
        raise ValueError("disaggregated simulation: lengths: one (prompt <= input_len, "
                         "output) pair of positive counts per request")
    return _Run(inp, prefill_step_s, decode_step_s).run()


class _Run:
    def __init__(self, inp: DisaggSimInputs, prefill_step_s: Callable[[int, int], float],
                 decode_step_s: Callable[[int], float]) -> None:
        self.inp, self.p_cost, self.d_cost = inp, prefill_step_s, decode_step_s
        np, nd = inp.prefill_workers * inp.prefill_ranks, inp.decode_workers * inp.decode_ranks
        self.p_queue: list[deque[_Req]] = [deque() for _ in range(np)]
        self.p_tokens = [0] * np  # prompt tokens queued per prefill rank
        self.p_whole = [0] * np  # the whole prompts of the queued requests, per prefill rank
        self.p_running = [0] * np  # queued prompts scheduled at least once, per prefill rank
        self.p_busy = [False] * inp.prefill_workers
        self.p_started = [0.0] * inp.prefill_workers  # when each worker's running step began
        self.rng = random.Random(0)  # the draws of a rank rule not by load
        self.route_rng = random.Random(1)  # the frontend's draws (`random_workers`)
        self.d_held = [0] * nd  # requests per decode rank (running, arriving or seated-waiting)
        self.d_running = [0] * nd
        self.d_wait: list[list[_Req]] = [[] for _ in range(inp.decode_workers)]  # by ready_s
        self.d_ends: list[list[tuple[int, int, _Req]]] = [[] for _ in range(inp.decode_workers)]
        self.d_step = [0] * inp.decode_workers
        self.d_busy = [False] * inp.decode_workers
        self.events: list[tuple[float, int, int, int, object]] = []
        self.seq = 0
        self.next_rid = 0
        self.done: list[_Req] = []
        self.p_steps = self.p_prompts = 0
        self.d_steps = 0
        self.d_batch_sum = 0
        # Decode admission (module docstring): per rank, the queue before admission, the pool
        # tokens held, requests admitted but not running, the running requests' tokens, and
        # the running requests by join step modulo the page (they take a new page together).
        self.admission = inp.decode_admission
        page = self.admission.page_tokens if self.admission is not None else 1
        self.d_queue: list[deque[_Req]] = [deque() for _ in range(nd)]
        self.d_alloc = [0] * nd
        self.d_pending = [0] * nd
        self.d_tokens = [0] * nd
        self.d_by_phase = [[0] * page for _ in range(nd)]
        # With `lengths`: per rank, the running requests' `single_need` values (count each)
        # and their largest (kept as they join and end).
        self.d_needs: list[dict[int, int]] = [{} for _ in range(nd)]
        self.d_need_max = [0] * nd
        # Per decode worker, boundaries since its last take and when that was (`_take`).
        self.d_recv = [0] * inp.decode_workers
        self.d_taken_s = [0.0] * inp.decode_workers

    def _push(self, t: float, kind: int, worker: int, payload: object) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, kind, worker, payload))

    # prefill role
    def _send(self, user: int, round_: int, t: float) -> None:
        inp = self.inp
        prompt, out = ((inp.input_len, inp.output_len) if inp.lengths is None
                       else inp.lengths[self.next_rid])
        req = _Req(rid=self.next_rid, user=user, round=round_, sent_s=t, remaining=prompt,
                   prompt_len=prompt, output_len=out,
                   transfer_s=inp.transfer_s if prompt == inp.input_len
                   else inp.transfer_s * prompt / inp.input_len)
        self.next_rid += 1
        if self.admission is None:
            self._enqueue_prefill(req, t)
            return
        rank = self._decode_rank()
        self.d_held[rank] += 1
        req.rank = rank
        self.d_queue[rank].append(req)
        self._push(t, _DECODE_KICK, rank // self.inp.decode_ranks, None)

    def _enqueue_prefill(self, req: _Req, t: float) -> None:
        req.queued_s = t
        ranks, rule = self.inp.prefill_ranks, self.inp.prefill_balance
        if self.inp.random_workers:
            # The frontend's draw of the worker; its rank as the engine picks it.
            w = self.route_rng.randrange(self.inp.prefill_workers)
            if rule is not None and ranks > 1:
                rank = w * ranks + rule.rank(self._rank_states(w), req.remaining, self.rng)
            else:
                rank = min(range(w * ranks, (w + 1) * ranks), key=lambda r: (self.p_tokens[r], r))
        elif rule is not None and not rule.by_load:
            # The worker as the router picks it (least loaded), the rank by the engine's draw.
            w = min(range(self.inp.prefill_workers),
                    key=lambda w: (sum(self.p_tokens[w * ranks:(w + 1) * ranks]), w))
            rank = w * ranks + rule.rank(self._rank_states(w), req.remaining, self.rng)
        else:
            rank = min(range(len(self.p_queue)), key=lambda r: (self.p_tokens[r], r))
            if rule is not None and ranks > 1:
                # That rank's worker; its engine's DP balancer picks the rank.
                w = rank // ranks
                rank = w * ranks + rule.rank(self._rank_states(w), req.remaining, self.rng)
        self.p_queue[rank].append(req)
        self.p_tokens[rank] += req.remaining
        self.p_whole[rank] += req.prompt_len
        self._push(t, _PREFILL_KICK, rank // self.inp.prefill_ranks, None)

    def _rank_states(self, w: int) -> list[PrefillRankState]:
        """Worker w's ranks as the engine's balancer sees them (their whole prompts)."""
        lo = w * self.inp.prefill_ranks
        return [PrefillRankState(waiting=len(self.p_queue[r]) - self.p_running[r],
                                 running=self.p_running[r],
                                 prompt_tokens=self.p_whole[r])
                for r in range(lo, lo + self.inp.prefill_ranks)]

    def _prefill_step(self, w: int, t: float, cutoff: float = math.inf) -> None:
        """Form and start worker w's next step at t from the prompts sent by `cutoff` (the
        running step's start, with `prefill_lookahead`), or from all queued where none was."""
        cfg, ranks = self.inp.prefill, self.inp.prefill_ranks
        lo, hi = w * ranks, (w + 1) * ranks
        if cutoff < math.inf and not any(q and q[0].queued_s <= cutoff
                                         for q in self.p_queue[lo:hi]):
            cutoff = math.inf  # no step was formed ahead: the loop forms one now
        taken: list[tuple[int, list[tuple[_Req, int]]]] = []
        most = (0, 0)
        for rank in range(lo, hi):
            budget, seats, sched = cfg.max_num_batched_tokens, cfg.max_num_seqs, []
            left = self.inp.prefill_input_budget  # SGLang's rem_input_tokens (docstring)
            for req in self.p_queue[rank]:
                if budget <= 0 or seats <= 0 or req.queued_s > cutoff:
                    break
                if left is not None and sched and req.remaining >= left:
                    break  # schedule_policy.py add_one_req: OTHER, the step ends
                take = min(req.remaining, budget)
                if take < req.remaining and not self.inp.chunked_prefill and sched:
                    break  # without chunked prefill a prompt runs whole (the first always)
                if req.remaining == req.prompt_len and not self._fits(rank, req):
                    break  # the pool's admission (disagg_local), FCFS: the head waits
                take = take if self.inp.chunked_prefill else req.remaining
                if req.remaining == req.prompt_len:
                    self.p_running[rank] += 1  # its first step: running from here
                    req.started_s = t
                sched.append((req, take))
                budget -= take
                seats -= 1
                if left is not None:
                    left -= take
            if sched:
                taken.append((rank, sched))
                tokens = sum(n for _, n in sched)
                finishing = sum(n == r.remaining for r, n in sched)
                most = max(most, (tokens, max(1, finishing)))
        if not taken:
            self.p_busy[w] = False
            return
        self.p_busy[w] = True
        self.p_started[w] = t
        self.p_steps += 1
        self.p_prompts += most[1]
        self._push(t + self.p_cost(*most), _PREFILL_END, w, taken)

    def _prefill_end(self, w: int, t: float, taken: list[tuple[int, list[tuple[_Req, int]]]]
                     ) -> None:
        for rank, sched in taken:
            for req, n in sched:
                req.remaining -= n
                self.p_tokens[rank] -= n
            queue = self.p_queue[rank]
            while queue and queue[0].remaining == 0:
                self.p_running[rank] -= 1
                self.p_whole[rank] -= queue[0].prompt_len
                self._handover(queue.popleft(), t)
        self._prefill_step(w, t, self.p_started[w] if self.inp.prefill_lookahead else math.inf)

    def _fits(self, rank: int, req: _Req) -> bool:
        return True  # no pool bound here (kvplan.analysis.simulate.disagg_local's is)

    def _event(self, kind: int, w: int, t: float, payload: object) -> None:
        raise AssertionError(f"event kind {kind}: no handler")  # a subclass's own kinds

    # handover and decode role
    def _decode_rank(self) -> int:
        ranks = range(len(self.d_held))
        if self.inp.random_workers:  # the frontend's draw; the least-held rank within it
            w, n = self.route_rng.randrange(self.inp.decode_workers), self.inp.decode_ranks
            ranks = range(w * n, (w + 1) * n)
        return min(ranks, key=lambda r: (self.d_held[r], r))

    def _admit(self, w: int, t: float) -> None:
        """Each of worker w's ranks admits from its queue's head what its rule allows."""
        adm = self.admission
        assert adm is not None
        inp = self.inp
        admitted: list[_Req] = []
        for rank in range(w * inp.decode_ranks, (w + 1) * inp.decode_ranks):
            queue = self.d_queue[rank]
            if not queue or queue[0].sent_s > self.d_taken_s[w]:
                continue
            state = DecodeRankState(
                free_tokens=adm.pool_tokens - self.d_alloc[rank],
                running=self.d_running[rank], pending=self.d_pending[rank],
                running_tokens=self.d_tokens[rank])
            if inp.lengths is None:
                n = adm.admits(state, len(queue), inp.input_len, inp.output_len)
            else:
                n = adm.admits_each(state, ((r.prompt_len, r.output_len) for r in queue),
                                    self.d_need_max[rank])
            n = min(n, sum(1 for r in queue if r.sent_s <= self.d_taken_s[w]))  # taken in
            for _ in range(n):
                req = queue.popleft()
                self.d_alloc[rank] += cdiv(req.prompt_len, adm.page_tokens) * adm.page_tokens
                self.d_pending[rank] += 1
                admitted.append(req)
        # The prefill holds every prompt in its bootstrap queue in arrival order and moves
        # those its decode rank has admitted on to its waiting queue in that order (prefill.py:253
        # pop_bootstrapped), whichever decode rank admitted them.
        for req in sorted(admitted, key=lambda r: r.rid):
            self._enqueue_prefill(req, t)

    def _take(self, w: int, t: float) -> None:
        """Worker w's boundary at t: whether it takes the prompts sent to it so far in (module
        docstring, `recv_interval`): at the N-th boundary since its last take, or at once where
        nothing runs on it (an idle loop) or handed-over requests join here (a prebuilt step)."""
        assert self.admission is not None
        inp, n = self.inp, self.admission.recv_interval
        lo, step = w * inp.decode_ranks, self.d_step[w]
        self.d_recv[w] += 1
        if (n > 1 and self.d_busy[w] and max(self.d_running[lo:lo + inp.decode_ranks]) > 0
                and self.d_recv[w] < n
                and not any(r.ready_s <= t and r.join_from <= step
                            and self.d_running[r.rank] < inp.decode_max_seqs
                            for r in self.d_wait[w])):
            return
        self.d_recv[w], self.d_taken_s[w] = 0, t

    def _handover(self, req: _Req, t: float) -> None:
        if self.admission is None:
            rank = self._decode_rank()
            self.d_held[rank] += 1
        else:
            rank = req.rank
        req.rank, req.ready_s, req.handed_s = rank, t + req.transfer_s, t
        if self.inp.transfer_polled:  # taken in (and its transfer started) at a boundary
            req.ready_s = req.join_from = math.inf
        if self.inp.first_token_steps is None:
            req.first_s = req.ready_s
        w = rank // self.inp.decode_ranks
        self.d_wait[w].append(req)
        self._push(t, _DECODE_KICK, w, None)

    def _decode_step(self, w: int, t: float) -> None:
        inp = self.inp
        if self.admission is not None:
            self._take(w, t)
            self._admit(w, t)
        joined: list[_Req] = []
        keep: list[_Req] = []
        step = self.d_step[w]
        for req in self.d_wait[w]:
            if (req.ready_s <= t and req.join_from <= step
                    and self.d_running[req.rank] < inp.decode_max_seqs):
                self.d_running[req.rank] += 1
                joined.append(req)
                if self.admission is not None:
                    self.d_pending[req.rank] -= 1
                    self.d_tokens[req.rank] += req.prompt_len
                    req.join_step = step
                    self.d_by_phase[req.rank][self._phase(req)] += 1
                    if inp.lengths is not None:
                        self._need(req, +1)
            else:
                keep.append(req)
        self.d_wait[w] = keep
        if inp.transfer_polled:  # module docstring: taken in here, seen done from the next step
            for req in keep:
                if req.join_from == math.inf:
                    self._start_transfer(req, t, step)
        lo = w * inp.decode_ranks
        batch = max(self.d_running[lo:lo + inp.decode_ranks])
        if batch == 0 and not keep:
            self.d_busy[w] = False
            return
        self.d_busy[w] = True
        if batch == 0 and inp.transfer_polled:  # nothing runs: it waits for the first transfer
            dur = max(0.0, min(req.ready_s for req in keep) - t)
            if dur == math.inf:  # every transfer queued: blocked until one ends (a subclass's)
                self._blocked(w)
                return
        else:
            dur = self.d_cost(max(1, batch))
        fts = inp.first_token_steps
        # Steps the request is in the batch for: to its first token, then O - 1 more tokens.
        # (0: the first token at the boundary it joins, that step making the second:
        # TensorRT-LLM's generation server, kvplan.engines.trtllm.disagg_flow.)
        to_first = 0 if fts is None else math.ceil(fts)
        for req in joined:
            if fts is not None:
                req.first_s = t + fts * dur
            req.end_step = step + to_first + req.output_len - 1 - 1
            if req.end_step < step:  # one output token, sampled by the prefill: no decode step
                req.end_step = step
            heapq.heappush(self.d_ends[w], (req.end_step, req.rid, req))
        if batch:
            self.d_steps += 1
            self.d_batch_sum += batch
        self._push(t + dur, _DECODE_END, w, None)

    def _blocked(self, w: int) -> None:
        raise AssertionError("no transfer ends at an unknown time here")  # a subclass's queues

    def _start_transfer(self, req: _Req, t: float, step: int) -> None:
        """A polled transfer taken in at boundary t of `step`: seen done from the next step."""
        req.join_from, req.ready_s = step + 1, t + req.transfer_s

    def _decode_end(self, w: int, t: float) -> None:
        step = self.d_step[w]
        if self.admission is not None:
            self._grow(w, step)
        ends = self.d_ends[w]
        while ends and ends[0][0] <= step:
            _, _, req = heapq.heappop(ends)
            req.last_s = t
            self.d_running[req.rank] -= 1
            self.d_held[req.rank] -= 1
            if self.admission is not None:
                self._free(req, step)
            self.done.append(req)
            if req.round + 1 < self.inp.rounds:
                self._send(req.user, req.round + 1, t)
        self.d_step[w] = step + 1
        self._decode_step(w, t)

    def _phase(self, req: _Req) -> int:
        """The step modulo the page at which a running request takes a new page: joined at
        step j with a prompt of I tokens, it holds I + (step - j) tokens before `step`, a
        whole number of pages where step = j - I modulo the page."""
        assert self.admission is not None
        return (req.join_step - req.prompt_len) % self.admission.page_tokens

    def _grow(self, w: int, step: int) -> None:
        """Every running request of worker w gained a token in `step`; those of `step`'s
        phase (`_phase`) take a new page, all at once."""
        adm = self.admission
        assert adm is not None
        page = adm.page_tokens
        for rank in range(w * self.inp.decode_ranks, (w + 1) * self.inp.decode_ranks):
            self.d_tokens[rank] += self.d_running[rank]
            self.d_alloc[rank] += page * self.d_by_phase[rank][step % page]

    def _free(self, req: _Req, step: int) -> None:
        adm = self.admission
        assert adm is not None
        tokens = req.prompt_len + step + 1 - req.join_step
        self.d_tokens[req.rank] -= tokens
        self.d_alloc[req.rank] -= cdiv(tokens, adm.page_tokens) * adm.page_tokens
        self.d_by_phase[req.rank][self._phase(req)] -= 1
        if self.inp.lengths is not None:
            self._need(req, -1)

    def _need(self, req: _Req, change: int) -> None:
        """A running request of `lengths` joins (+1) or ends (-1): its rank's needs and their
        largest."""
        assert self.admission is not None
        need = self.admission.single_need(req.prompt_len, req.output_len)
        needs, rank = self.d_needs[req.rank], req.rank
        needs[need] = needs.get(need, 0) + change
        if needs[need] == 0:
            del needs[need]
            if need == self.d_need_max[rank]:
                self.d_need_max[rank] = max(needs, default=0)
        elif change > 0:
            self.d_need_max[rank] = max(self.d_need_max[rank], need)

    def run(self) -> DisaggSimResult:
        for user in range(self.inp.concurrency):
            self._send(user, 0, 0.0)
        while self.events:
            t, _, kind, w, payload = heapq.heappop(self.events)
            if kind == _PREFILL_END:
                self._prefill_end(w, t, payload)  # type: ignore[arg-type]
            elif kind == _DECODE_END:
                self._decode_end(w, t)
            elif kind == _PREFILL_KICK and not self.p_busy[w]:
                self._prefill_step(w, t)
            elif kind == _DECODE_KICK and not self.d_busy[w]:
                self._decode_step(w, t)
            elif kind > _DECODE_KICK:
                self._event(kind, w, t, payload)
        rounds = self.inp.rounds
        measured = self.done if self.inp.measure_all_rounds else (
            [r for r in self.done if 0 < r.round < rounds - 1] or [
                r for r in self.done if r.round > 0] or self.done)
        ttft = sum(r.first_s - r.sent_s for r in measured) / len(measured)
        # TPOT per request over its own output, averaged over those of more than one token
        # (the benchmark clients' calculate_metrics); 0 where none has.
        decoded = [r for r in measured if r.output_len > 1]
        tpot = (sum((r.last_s - r.first_s) / (r.output_len - 1) for r in decoded)
                / len(decoded) if decoded else 0.0)
        n = len(measured)
        xfers = {r.transfer_s for r in measured}  # one value unless the prompts differ
        xfer = xfers.pop() if len(xfers) == 1 else sum(r.transfer_s for r in measured) / n
        phases = TtftPhases(
            admission_ms=sum(r.queued_s - r.sent_s for r in measured) / n * 1e3,
            prefill_queue_ms=sum(r.started_s - r.queued_s for r in measured) / n * 1e3,
            prefill_ms=sum(r.handed_s - r.started_s for r in measured) / n * 1e3,
            transfer_ms=xfer * 1e3,
            decode_side_ms=sum(r.first_s - r.handed_s - xfer for r in measured) / n * 1e3)
        return DisaggSimResult(
            ttft_ms=ttft * 1e3, tpot_ms=tpot * 1e3, measured=len(measured),
            prefill_prompts_per_step=self.p_prompts / max(1, self.p_steps),
            decode_batch=self.d_batch_sum / max(1, self.d_steps), phases=phases)
