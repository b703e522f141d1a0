"""A discrete-event simulation of vLLM V1's scheduler over kvplan's KV pool.

Follows vLLM 0.32 ``vllm/v1/core/sched/scheduler.py`` `Scheduler.schedule` (policy FCFS, no
KV connector, chunked prefill on, `long_prefill_token_threshold` 0; speculative decoding's
drafts, lookahead slots and rollback: the subclass kvplan.analysis.simulate.spec_sim):

1. The running requests, in order, each get min(num_tokens - num_computed, token budget)
   tokens (a decode 1, a prefill its next chunk); the budget starts at max_num_batched_tokens.
   When the pool cannot give a request its slots, the last running request is preempted
   (`self.running.pop()`): its blocks are freed, its computed tokens reset to 0 (recompute),
   and it goes to the front of the waiting queue; this repeats until the request fits or it
   preempted itself, and then no further running request is scheduled this step.
2. Only if nothing was preempted, waiting requests are admitted in order while budget is left
   and fewer than max_num_seqs run: a prefix-cache lookup (first admission and after a
   preemption alike), the whole-sequence fit check (SchedulerConfig.full_isl_admission; vLLM
   to 0.18.1 checks the first chunk only: kvplan.engines.vllm.admission), its first chunk; the
   first that does not fit stops admission (FCFS).
3. After the step (its time: kvplan.perf.mixed_step) each scheduled request advances by its tokens;
   at its length it samples a token (the first: TTFT); at its last it finishes, freeing its blocks.

The step's time is the forward pass, with vLLM's engine-core host work after it or beside it
(kvplan.analysis.simulate.engine_core; `run` builds the step cost). Async scheduling
(`SchedulerConfig.async_scheduling`, vLLM's default from 0.14:
kvplan.engines.vllm.alloc.vllm_async_scheduling_default) schedules step k+1 as soon as step k is
launched (vllm/v1/engine/core.py `step_with_batch_queue`, a queue of two batches): step k+1 sees
only the requests that arrived before step k started, so a request that arrives while step k runs is
first scheduled in step k+2. A step scheduled after the engine was idle sees every arrival up to its
own start. Its tokens still reach the client when their step ends (the engine blocks on k while k+1
runs). Not modelled: a request finished in step k keeps its seat and blocks while step k+1 is
scheduled. A closed loop's reply to a finish in step k is not taken by the scheduling at step k's
end while the engine has work (kvplan.analysis.simulate.step_boundary): step k+2, async k+3.

Before the engine: a server whose tokenizer batches prompts (`SchedulerConfig.tokenizer_batching`,
vLLM's API server from 0.11 to 0.23: kvplan.engines.vllm.frontend) hands a request to the engine
core only when its batch is released (kvplan.analysis.simulate.frontend); its TTFT and E2E count
from when it was sent. With `SchedulerConfig.api_server` (`kvplan simulate --frontend`), the API
server's serial CPU stage (frontend.ServerQueue) comes first: the batcher, or the engine, takes
the request when it leaves it. With `SchedulerConfig.api_output` (`kvplan simulate --api-output`)
the same loop takes each step's outputs after the step (ServerQueue.deliver_s): the step's
tokens (first tokens, gaps, finishes) count when the loop is done with them, and in a closed
loop the client sends its next request when it sees a finish, not when the engine made it.

For speed the decodes are one collective batch whenever the scheduler's outcome for them is known
without looking at each (`_batch_step`): a step costs O(1) plus the requests joining, leaving or
taking a block in it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence

from kvplan._util.errors import InputError
from kvplan._util.progress import report
from kvplan.analysis.simulate.frontend import ServerQueue, TokenizerBatcher, given_tokens
from kvplan.analysis.simulate.hybrid_pool import HybridPool
from kvplan.analysis.simulate.kv_pool import KVPool

# The request, settings, run-state and step-cost types live in sim_types; the engines, the
# runner and the tests import them from here too.
from kvplan.analysis.simulate.sim_types import (
    SchedulerConfig,
    SimRequest,
    SimState,
    StepCost,
    StepRecord,
)
from kvplan.analysis.simulate.step_boundary import taken
from kvplan.analysis.simulate.workload import RequestSpec, check_pulled
from kvplan.engines.sglang.dp_balance import DpGathered


class Simulator:
    """One engine (one data-parallel replica): the pool, the queues, the clock."""

    # A closed loop's reply to a finish misses the scheduling at the finish's instant (vLLM's
    # busy loop: kvplan.analysis.simulate.step_boundary, which cites the code).
    finish_reply_misses_next_step = True

    def __init__(self, pool: KVPool | HybridPool, config: SchedulerConfig,
                 step_cost: StepCost, *, timeline: bool = False, bulk_decode: bool = True) -> None:
        self.pool = pool
        self.config = config
        self.step_cost = step_cost
        self.running: list[SimRequest] = []
        self.waiting: deque[SimRequest] = deque()
        self.state = SimState(timeline=[] if timeline else None)
        self.bulk_decode = bulk_decode
        self._in_batch = False
        self._step = 0
        self._batch_size = self._batch_keys = 0
        self._need_at: dict[int, list[SimRequest]] = {}
        self._finish_at: dict[int, list[SimRequest]] = {}
        # Members whose last token is older than the step before their first batch step (not
        # scheduled in it): their first gap is timed one by one.
        self._late: list[SimRequest] = []
        # The API server's output stage (`SchedulerConfig.api_output`, set by `run`): when each
        # step's tokens reach the client, by the step's end (engine time); pruned as it grows.
        self._server: ServerQueue | None = None
        self._shown: dict[float, float] = {}
        self._shown_limit = 4096
        self._last_shown = 0.0
        # KV slots every allocation reserves past the scheduled tokens (vLLM's
        # num_lookahead_tokens: a speculative drafter's, kvplan.analysis.simulate.spec_sim).
        self.lookahead = 0

    # -- one scheduling step -----------------------------------------------------------

    def _preempt(self, req: SimRequest) -> None:
        self.pool.free(req)
        req.num_computed = 0
        req.preemptions += 1
        self.state.preemptions += 1
        self.waiting.appendleft(req)

    def gathered(self, steps: Sequence[tuple[Simulator, list[tuple[SimRequest, int]]]]
                 ) -> DpGathered | None:
        """Attention DP (kvplan.analysis.simulate.dp_lockstep): the tokens every rank's MoE
        layers see in a step whose busy ranks run `steps` (each rank, its batch); None: each
        rank's own tokens x the ranks (the cost model's count), the busiest rank's setting the
        step (vLLM pads every rank's batch to the most tokens; TensorRT-LLM's ranks are priced
        alike)."""
        return None

    def step_seconds(self, scheduled: list[tuple[SimRequest, int]],
                     gathered: DpGathered | None = None) -> float:
        """The cost model's time for a step: its decodes at their contexts, its prompt chunks
        (`gathered`: an engine's own count of the MoE layers' tokens, `gathered`; not this
        one's)."""
        if gathered is not None:
            raise ValueError("step_seconds: this engine's MoE layers see its own tokens x ranks")

        contexts: list[int] = []
        chunks: list[tuple[int, int]] = []
        for r, n in scheduled:  # a decode: one token, its last (the others are chunks)
            if n == 1 and r.num_computed == r.num_tokens - 1:
                contexts.append(r.num_computed + 1)
            else:
                chunks.append((r.num_computed, n))
        return self.step_cost.seconds(decode_contexts=contexts, chunks=chunks)

    def schedule(self) -> list[tuple[SimRequest, int]]:
        """Scheduler.schedule: the requests of the next step and their tokens."""
        pool, running = self.pool, self.running
        budget = self.config.max_num_batched_tokens
        scheduled: list[tuple[SimRequest, int]] = []
        preempted = False
        i = 0
        while i < len(running) and budget > 0:
            req = running[i]
            n = self._running_tokens(req, budget)
            if n == 0:  # all its tokens in a batch still in flight (pipeline parallelism)
                i += 1
                continue
            fits = pool.allocate(req, n + self.lookahead)
            while not fits:
                victim = running.pop()
                self._preempt(victim)
                preempted = True
                if victim is req:
                    break
                fits = pool.allocate(req, n + self.lookahead)
            if not fits:
                break
            scheduled.append((req, n))
            budget -= n
            i += 1
        if preempted:
            return scheduled
        self._admit(budget, scheduled)
        return scheduled

    def _running_tokens(self, req: SimRequest, budget: int) -> int:
        """A running request's tokens this step: the rest of its prompt or its next token,
        within the budget (speculative decoding adds drafts: kvplan.analysis.simulate.
        spec_sim)."""
        return min(req.num_tokens - req.num_computed, budget)

    def _admit(self, budget: int, scheduled: list[tuple[SimRequest, int]]) -> int:
        """The waiting requests admitted in order while budget and seats last (FCFS: the
        first that does not fit stops admission); returns the budget left."""
        pool, running = self.pool, self.running
        waiting = self.waiting
        while budget > 0 and waiting and len(running) < self.config.max_num_seqs:
            req = waiting[0]
            hit = pool.find_hit(req)
            hit_tokens = pool.hit_tokens(hit)
            n = min(req.num_tokens - hit_tokens, budget)
            if not pool.allocate(req, n + self.lookahead, hit=hit,
                                 admission=self.config.full_isl_admission):
                break
            waiting.popleft()
            running.append(req)
            if pool.caching and req.preemptions == 0:
                # KVCacheManager.record_prefix_cache_stats: first admissions only.
                self.state.prefix_queries += req.num_tokens
                self.state.prefix_hits += hit_tokens
            req.num_computed = hit_tokens
            req.admitted = True
            scheduled.append((req, n))
            budget -= n
        return budget

    def has_work(self) -> bool:
        """Attention DP: whether this rank runs a batch of its own in the next lockstep step
        (a request running or waiting; TensorRT-LLM's carried requests are not counted there,
        as the lockstep was built)."""
        return bool(self.running or self.waiting)

    def dummy_step(self, end: float) -> None:
        """Attention DP: this rank ran a dummy batch in a step other ranks' work set, ending at
        `end` (kvplan.analysis.simulate.dp_lockstep); nothing of its own changes."""

    def _receives(self) -> bool:  # the requests sent taken before this step (SGLang: not all)
        return True

    def _decode_run(self, horizon_s: float, arrival_s: float) -> float | None:
        """Decode-only steps at once, before `horizon_s` and `arrival_s`: the last start or None."""
        return None

    def _release(self, req: SimRequest) -> None:
        """A finished request's blocks go back to the pool (an engine may hold them longer)."""
        self.pool.free(req)

    def _busy(self) -> bool:
        """Whether the engine holds a request to step (running or waiting)."""
        return bool(self.running or self.waiting)

    # -- the clock ---------------------------------------------------------------------

    def _record(self, start: float, seconds: float, tokens: int,
                usage: float | None = None) -> None:
        st = self.state
        if usage is None:
            usage = self.pool.usage()
        st.steps += 1
        st.usage_sum += usage
        if usage > st.usage_max:
            st.usage_max = usage
        if st.timeline is not None:
            st.timeline.append(StepRecord(start_s=start, seconds=seconds, tokens=tokens,
                                          running=len(self.running), waiting=len(self.waiting),
                                          kv_usage=usage))

    def _delivery(self, end: float, outputs: int, primed: int = 0) -> float | None:
        """When the step ending at `end`'s tokens (`outputs` requests given one, `primed` prompt
        tokens of first ones) reach the client via the API server; None without it (at `end`)."""
        server = self._server
        if server is None or server.output is None:
            return None
        shown = server.deliver_s(end, outputs, primed)
        self._last_shown = shown
        table = self._shown
        table[end] = shown
        if len(table) > self._shown_limit:  # keep the steps a running request's last token
            oldest = min((r.last_token_s for r in self.running), default=end)  # may be in
            for key in [k for k in table if k < oldest]:
                del table[key]
            self._shown_limit = 2 * len(table) + 4096
        return shown

    def _client_s(self, t: float) -> float:
        """When a token made at engine time `t` reached the client (`t` without the stage)."""
        return self._shown.get(t, t)

    def _finish_step(self, scheduled: list[tuple[SimRequest, int]], start: float,
                     seconds: float, shown: float | None = None) -> int:
        """Advance the scheduled requests; returns how many finished. `shown`: when the step's
        tokens reach the client, where the caller booked the step's output stage (None: booked
        here, when the stage is simulated)."""
        st = self.state
        end = start + seconds
        if shown is None and self._server is not None:
            # (requests given a token, prompt tokens primed: frontend.given_tokens)
            shown = self._delivery(end, *given_tokens(scheduled))
        seen = end if shown is None else shown
        done = 0
        prev_count = 0
        prev_gap = -1.0
        for req, n in scheduled:
            req.num_computed += n
            if req.num_computed < req.num_tokens:
                continue  # a partial prefill chunk: no token
            if req.num_output == 0:
                req.first_token_s = seen
            else:
                if shown is None:
                    gap = seconds if req.last_token_s == start else end - req.last_token_s
                else:
                    gap = shown - self._client_s(req.last_token_s)
                if gap == prev_gap:
                    prev_count += 1
                else:
                    if prev_count:
                        st.itl_values.append(prev_gap)
                        st.itl_weights.append(prev_count)
                    prev_gap, prev_count = gap, 1
            req.last_token_s = end
            req.num_output += 1
            if req.num_output >= req.output_len:
                req.finish_s = seen
                self._release(req)
                st.finished.append(req)
                done += 1
        if prev_count:
            st.itl_values.append(prev_gap)
            st.itl_weights.append(prev_count)
        if done:
            self.running = [r for r in self.running if r.finish_s < 0]
        return done

    # -- the collective decode batch ----------------------------------------------------
    #
    # Between preemptions, the running list is decodes followed by at most one request still
    # prefilling (a chunk stops admission: the budget is spent), and every decode takes one
    # token a step. The batch keeps those decodes collectively: their keys' sum grows by the
    # batch size a step, a decode takes a new block every block_size steps at a phase set by
    # its free slots (`_need_at`), and its last token falls on a known step (`_finish_at`);
    # only the prefilling request, the admissions and those events are handled one by one.
    # Steps whose decodes the pool cannot serve, or any model with windows, chunks or several
    # KV groups, take the exact per-request path (`schedule`), on materialised requests; the
    # two give the same runs (tests/test_simulate.py).

    def _batch_ok(self) -> bool:
        pool = self.pool
        return (self.bulk_decode and self.step_cost.full_attention_only
                and len(pool.groups) == 1 and pool.groups[0].kind == "full")

    def _join_batch(self, r: SimRequest) -> None:
        bs = self.pool.groups[0].block_size
        step = self._step
        r.in_batch = True
        r.anchor_step, r.anchor_computed, r.anchor_output = step, r.num_computed, r.num_output
        self._batch_size += 1
        self._batch_keys += r.num_computed + 1
        need = step + r.alloc[0] * bs - r.num_computed
        self._need_at.setdefault(need, []).append(r)
        self._finish_at.setdefault(step + r.output_len - r.num_output - 1, []).append(r)

    def _sync(self, r: SimRequest) -> None:
        """Materialise a batch member's counters (it leaves the batch)."""
        done = self._step - r.anchor_step
        r.num_computed = r.anchor_computed + done
        r.num_output = r.anchor_output + done
        if done:
            r.last_token_s = self.state.clock_s
        r.in_batch = False

    def _leave_batch(self) -> None:
        if not self._in_batch:
            return
        for r in self.running:
            if r.in_batch:
                self._sync(r)
        self._need_at.clear()
        self._finish_at.clear()
        self._late.clear()
        self._batch_size = self._batch_keys = 0
        self._in_batch = False

    def _enter_batch(self) -> bool:
        running = self.running
        if not running:
            return False
        for r in running[:-1]:
            if r.num_computed != r.num_tokens - 1 or r.num_output < 1:
                return False
        self._in_batch = True
        for r in running:
            if r.num_computed == r.num_tokens - 1 and r.num_output >= 1:
                self._join_batch(r)
                if r.last_token_s != self.state.clock_s:
                    self._late.append(r)
        return True

    def _batch_step(self) -> int | None:
        """One step with the decodes taken collectively; None, with nothing changed, when the
        exact path must take it. Returns the requests finished."""
        if not self._in_batch and not self._enter_batch():
            return None
        pool, st, step = self.pool, self.state, self._step
        size = self._batch_size
        needy = self._need_at.get(step, ())
        if size > self.config.max_num_batched_tokens or len(needy) > pool.num_free:
            return None
        bs = pool.groups[0].block_size
        for r in self._need_at.pop(step, ()):
            if r.finish_s >= 0 or not r.in_batch:
                continue
            if pool.caching:
                r.blocks.append(pool._new_block())
            else:
                pool.free_uncached -= 1
            r.alloc[0] += 1
            self._need_at.setdefault(step + bs, []).append(r)
        budget = self.config.max_num_batched_tokens - size
        scheduled: list[tuple[SimRequest, int]] = []
        tail = self.running[-1] if self.running and not self.running[-1].in_batch else None
        preempted = False
        if tail is not None and budget > 0:
            n = min(tail.num_tokens - tail.num_computed, budget)
            if pool.allocate(tail, n):
                scheduled.append((tail, n))
                budget -= n
            else:
                self.running.pop()  # vLLM preempts the last running request: this one
                self._preempt(tail)
                preempted = True
        if not preempted:
            budget = self._admit(budget, scheduled)
        if not size and not scheduled:
            head = self.waiting[0]
            raise InputError(f"request {head.rid}: {head.num_tokens} tokens do not fit in "
                             f"the KV pool even alone ({pool.usable} blocks)")
        decodes, keys, chunks = size, self._batch_keys, []
        for r, n in scheduled:
            if n == 1 and r.num_computed == r.num_tokens - 1:
                decodes += 1
                keys += r.num_computed + 1
            else:
                chunks.append((r.num_computed, n))
        seconds = self.step_cost.seconds_from_sums(decodes, keys, chunks)
        start = st.clock_s
        st.clock_s = start + seconds
        shown = None if self._server is None else self._delivery(
            st.clock_s, *given_tokens(scheduled, size))
        seen = st.clock_s if shown is None else shown
        on_time = size
        for r in self._late:
            if r.in_batch:
                st.itl_values.append(seen - self._client_s(r.last_token_s))
                st.itl_weights.append(1)
                on_time -= 1
        self._late.clear()
        if on_time:
            st.itl_values.append(seconds if shown is None else shown - self._client_s(start))
            st.itl_weights.append(on_time)
        self._step = step + 1
        self._batch_keys += size
        done = 0
        for r in self._finish_at.pop(step, ()):
            if not r.in_batch:
                continue
            self._sync(r)
            r.finish_s = seen
            pool.free(r)
            st.finished.append(r)
            self._batch_size -= 1
            self._batch_keys -= r.num_computed + 1
            done += 1
        if done:
            self.running = [r for r in self.running if r.finish_s < 0]
        done += self._finish_step(scheduled, start, seconds, shown)
        for r, _ in scheduled:
            if (r.finish_s < 0 and not r.in_batch and r.num_computed == r.num_tokens - 1
                    and r.num_output >= 1):
                self._join_batch(r)
                if r.last_token_s != st.clock_s:
                    # A recompute after a preemption that stopped one token short: no token
                    # this step, so its next gap is timed from its last one (issue #30).
                    self._late.append(r)
        self._record(start, seconds, sum(n for _, n in scheduled) + size)
        return done

    def _execute(self) -> int:
        """One step on the exact path: scheduled, run (the clock moves to its end) and its
        tokens given; returns the requests finished (a pipeline's engine core runs batches in
        flight instead: kvplan.analysis.simulate.pipeline)."""
        st = self.state
        scheduled = self.schedule()
        if not scheduled:
            head = self.waiting[0]
            raise InputError(f"request {head.rid}: {head.num_tokens} tokens do not fit in "
                             f"the KV pool even alone ({self.pool.usable} blocks)")
        seconds = self.step_seconds(scheduled)
        start = st.clock_s
        st.clock_s = start + seconds
        done = self._finish_step(scheduled, start, seconds)
        self._record(start, seconds, sum(n for _, n in scheduled))
        return done

    def run(self, specs: Iterable[RequestSpec], *, concurrency: int | None = None,
            first_id: int = 0) -> SimState:
        """Serve `specs` (in arrival order); `concurrency`: at most this many requests in
        flight, the next sent when one finishes (a closed loop, `vllm bench serve
        --max-concurrency`). `first_id`: the first request's id (a later call on an engine that
        served earlier requests numbers on: kvplan.analysis.simulate.warm_start)."""
        st = self.state
        source: Iterator[RequestSpec] = iter(specs)
        upcoming: deque[tuple[float, RequestSpec]] = deque()
        sent: deque[SimRequest] = deque()  # sent, not yet seen by the scheduler (async)
        batcher = TokenizerBatcher(r) if (r := self.config.tokenizer_batching) else None
        output = self.config.api_output
        client = c.loop() if (c := self.config.bench_client) else None  # client_loop
        server = (ServerQueue(self.config.api_server, output)
                  if self.config.api_server or output else None)
        self._server = server
        # Output stage / client loop: a slot frees when the client sees (sends after) a finish.
        unseen: deque[tuple[float, int]] = deque()
        freed: deque[float] = deque()
        in_flight = 0
        next_id = first_id
        last_arrival = 0.0
        exhausted = False

        def pull() -> None:
            nonlocal exhausted, last_arrival
            if exhausted or upcoming:
                return
            spec = next(source, None)
            if spec is None:
                exhausted = True
                return
            check_pulled(spec, next_id, last_arrival, self.config.max_model_len)
            last_arrival = spec.arrival_s
            upcoming.append((spec.arrival_s, spec))

        def finished(done: int) -> None:
            nonlocal in_flight
            if done:
                report("simulate: requests served", len(st.finished))
            if (output is None and client is None) or concurrency is None:
                in_flight -= done
            elif done:  # the client sees the ends when the output stage shows them
                seen = self._last_shown if output is not None else st.clock_s
                unseen.extend(client.sends(seen, done) if client else [(seen, done)])

        def admit_arrivals(now: float) -> None:
            nonlocal in_flight, next_id
            while unseen and unseen[0][0] <= now:
                when, count = unseen.popleft()
                in_flight -= count
                freed.extend([when] * count)
            while True:
                pull()
                if not upcoming or upcoming[0][0] > now:
                    return
                if concurrency is not None and in_flight >= concurrency:
                    return
                _, spec = upcoming.popleft()
                sent_s = now if concurrency is not None else spec.arrival_s
                if freed:  # sent when the client saw the finish (and its loop sent it)
                    sent_s = freed.popleft()
                req = SimRequest(next_id, spec, sent_s, len(self.pool.groups))
                next_id += 1
                in_flight += 1
                ready = (req.sent_s if server is None
                         else server.leave_s(req.sent_s, req.prompt_len))
                req.seen_s = ready
                if batcher is not None:
                    batcher.admit(req, ready)
                sent.append(req)

        pull()
        if upcoming:
            st.clock_s = st.first_arrival_s = upcoming[0][0]
        # Async scheduling: the start of the step before the one being scheduled (None after
        # an idle engine); arrivals after it wait for the next step (module docstring).
        lookahead = self.config.async_scheduling
        prev_start: float | None = None
        while True:
            admit_arrivals(st.clock_s)
            cutoff = st.clock_s if prev_start is None else prev_start
            reply = (concurrency is not None and self.finish_reply_misses_next_step
                     and self._busy())  # an idle engine blocks on its input: step_boundary
            if self._receives():  # once an iteration (SGLang's skipper counts them)
                while sent and taken(sent[0].seen_s, cutoff, reply_to_finish=reply):
                    self.waiting.append(sent.popleft())
            if not self._busy():
                prev_start = None  # the engine idles: the next step sees every arrival
                if sent:  # still in the server's tokenizer batch: idle until it is released
                    st.clock_s = max(st.clock_s, sent[0].seen_s)
                    continue
                if unseen and concurrency is not None and in_flight >= concurrency:
                    st.clock_s = max(st.clock_s, unseen[0][0])  # a finish reaches the client
                    continue
                pull()
                if not upcoming:
                    break
                st.clock_s = max(st.clock_s, upcoming[0][0])
                continue
            # Decode-only steps up to the next arrival it could see (SGLang: `_decode_run`).
            arrival = (upcoming[0][0] if upcoming and (
                concurrency is None or in_flight < concurrency) else float("inf"))
            last = self._decode_run(-1.0 if sent else arrival, arrival)
            if last is not None:
                prev_start = last if lookahead else None
                continue
            if lookahead:
                prev_start = st.clock_s
            if self._batch_ok():
                done = self._batch_step()
                if done is not None:
                    finished(done)
                    continue
                self._leave_batch()
            finished(self._execute())
        if output is not None:  # the run ends when the client has the last tokens
            st.clock_s = max(st.clock_s, self._last_shown)
        return st
