"""A discrete-event simulation of vLLM V1's scheduler over kvplan's KV pool.

Follows vLLM 0.32 ``vllm/v1/core/sched/scheduler.py`` `Scheduler.schedule` (policy FCFS, no
speculative decoding, no KV connector, chunked prefill on, `long_prefill_token_threshold` 0):

1. The running requests, in order, each get min(num_tokens - num_computed, token budget)
   tokens (a decode 1, a prefill its next chunk); the budget starts at max_num_batched_tokens.
   When the pool cannot give a request its slots, the last running request is preempted
   (`self.running.pop()`): its blocks are freed, its computed tokens reset to 0 (recompute),
   and it goes to the front of the waiting queue; this repeats until the request fits or it
   preempted itself, and then no further running request is scheduled this step.
2. Only if nothing was preempted, waiting requests are admitted in order while budget is left
   and fewer than max_num_seqs run: a prefix-cache lookup (first admission and after a
   preemption alike), the whole-sequence fit check, then its first chunk. The first that does
   not fit stops admission (FCFS).
3. After the step (its time from kvplan.perf.mixed_step), every scheduled request advances by
   its tokens; one whose computed tokens reach its length samples a token (the first one is
   its TTFT), and a request with all its output tokens finishes and frees its blocks.

Synchronous: the step's time is the forward pass (async scheduling, which overlaps the CPU's
scheduling with it, is not modelled). Each step loops over the running requests only; between
arrivals, whole runs of decode-only steps that change nothing but the contexts are advanced
without re-running the scheduler (`_decode_stretch`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from kvplan._util.errors import InputError
from kvplan._util.units import cdiv
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.workload import RequestSpec


class SimRequest:
    """A request inside the simulator (vllm/v1/request.py Request, the fields the scheduler
    reads)."""

    __slots__ = ("rid", "sent_s", "prompt_len", "output_len", "segments", "num_computed",
                 "num_output", "alloc", "freed", "blocks", "cached_blocks", "first_token_s",
                 "last_token_s", "finish_s", "preemptions", "_hashes", "admitted")

    def __init__(self, rid: int, spec: RequestSpec, sent_s: float, groups: int) -> None:
        self.rid = rid
        self.sent_s = sent_s
        self.prompt_len = spec.prompt_len
        self.output_len = spec.output_len
        self.segments = spec.segments
        self.num_computed = 0
        self.num_output = 0
        self.alloc = [0] * groups
        self.freed = [0] * groups
        self.blocks: list[list[object]] = []
        self.cached_blocks = 0
        self.first_token_s = -1.0
        self.last_token_s = -1.0
        self.finish_s = -1.0
        self.preemptions = 0
        self.admitted = False
        self._hashes: list[int] = []

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + self.num_output

    def block_hash(self, index: int, block_size: int) -> int:
        """The chained hash of full block `index` (vllm/v1/core/kv_cache_utils.py
        hash_block_tokens: hash(parent hash, the block's tokens)). A block's tokens are named
        by the shared segments they come from (key, offset) or, past them and in the output, by
        the request itself."""
        hashes = self._hashes
        while len(hashes) <= index:
            j = len(hashes)
            start, end = j * block_size, (j + 1) * block_size
            content: list[Hashable] = []
            offset = 0
            for key, length in self.segments:
                lo, hi = max(start, offset), min(end, offset + length)
                if lo < hi:
                    content.append((key, lo - offset, hi - offset))
                offset += length
                if offset >= end:
                    break
            if end > offset:
                content.append(("own", self.rid, max(start, offset)))
            hashes.append(hash((hashes[-1] if hashes else 0, tuple(content))))
        return hashes[index]


@dataclass(frozen=True, kw_only=True)
class SchedulerConfig:
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int


@dataclass(kw_only=True)
class StepRecord:
    """One step, for the timeline."""

    start_s: float
    seconds: float
    tokens: int
    running: int
    waiting: int
    kv_usage: float


@dataclass(kw_only=True)
class SimState:
    """What a run leaves: the finished requests and the counters."""

    finished: list[SimRequest] = field(default_factory=list)
    itl_values: list[float] = field(default_factory=list)
    itl_weights: list[int] = field(default_factory=list)
    steps: int = 0
    preemptions: int = 0
    usage_sum: float = 0.0
    usage_max: float = 0.0
    prefix_queries: int = 0
    prefix_hits: int = 0
    clock_s: float = 0.0
    first_arrival_s: float = 0.0
    timeline: list[StepRecord] | None = None


class StepCost(Protocol):
    """The time of one step (kvplan.perf.mixed_step.MixedStepCost)."""

    @property
    def full_attention_only(self) -> bool: ...

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float: ...

    def decode_seconds(self, requests: int, sum_contexts: int) -> float: ...


class Simulator:
    """One engine (one data-parallel replica): the pool, the queues, the clock."""

    def __init__(self, pool: KVPool, config: SchedulerConfig, step_cost: StepCost, *,
                 timeline: bool = False, bulk_decode: bool = True) -> None:
        self.pool = pool
        self.config = config
        self.step_cost = step_cost
        self.running: list[SimRequest] = []
        self.waiting: deque[SimRequest] = deque()
        self.state = SimState(timeline=[] if timeline else None)
        self.bulk_decode = bulk_decode

    # -- one scheduling step -----------------------------------------------------------

    def _preempt(self, req: SimRequest) -> None:
        self.pool.free(req)
        req.num_computed = 0
        req.preemptions += 1
        self.state.preemptions += 1
        self.waiting.appendleft(req)

    def schedule(self) -> list[tuple[SimRequest, int]]:
        """Scheduler.schedule: the requests of the next step and their tokens."""
        pool, running = self.pool, self.running
        budget = self.config.max_num_batched_tokens
        scheduled: list[tuple[SimRequest, int]] = []
        preempted = False
        i = 0
        while i < len(running) and budget > 0:
            req = running[i]
            n = min(req.num_tokens - req.num_computed, budget)
            fits = pool.allocate(req, n)
            while not fits:
                victim = running.pop()
                self._preempt(victim)
                preempted = True
                if victim is req:
                    break
                fits = pool.allocate(req, n)
            if not fits:
                break
            scheduled.append((req, n))
            budget -= n
            i += 1
        if preempted:
            return scheduled
        waiting = self.waiting
        while budget > 0 and waiting and len(running) < self.config.max_num_seqs:
            req = waiting[0]
            hit = pool.find_hit(req)
            hit_tokens = len(hit) * pool.groups[0].block_size if hit else 0
            n = min(req.num_tokens - hit_tokens, budget)
            if not pool.allocate(req, n, hit=hit, admission=True):
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
        return scheduled

    # -- the clock ---------------------------------------------------------------------

    def _record(self, start: float, seconds: float, tokens: int) -> None:
        st = self.state
        usage = self.pool.usage()
        st.steps += 1
        st.usage_sum += usage
        if usage > st.usage_max:
            st.usage_max = usage
        if st.timeline is not None:
            st.timeline.append(StepRecord(start_s=start, seconds=seconds, tokens=tokens,
                                          running=len(self.running), waiting=len(self.waiting),
                                          kv_usage=usage))

    def _finish_step(self, scheduled: list[tuple[SimRequest, int]], start: float,
                     seconds: float) -> int:
        """Advance the scheduled requests; returns how many finished."""
        st = self.state
        end = start + seconds
        done = 0
        prev_count = 0
        prev_gap = -1.0
        for req, n in scheduled:
            req.num_computed += n
            if req.num_computed < req.num_tokens:
                continue  # a partial prefill chunk: no token
            if req.num_output == 0:
                req.first_token_s = end
            else:
                gap = seconds if req.last_token_s == start else end - req.last_token_s
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
                req.finish_s = end
                self.pool.free(req)
                st.finished.append(req)
                done += 1
        if prev_count:
            st.itl_values.append(prev_gap)
            st.itl_weights.append(prev_count)
        if done:
            self.running = [r for r in self.running if r.finish_s < 0]
        return done

    def _decode_stretch(self, until_s: float | None, can_admit: bool) -> bool:
        """Advance decode-only steps in bulk while nothing but the contexts changes: every
        running request decodes, none finishes before the stretch ends, the pool gives the
        blocks without preempting, and no arrival would be admitted. Each step is O(1): the
        contexts all grow by one (their sum by the batch), and a request takes a new block
        every `block_size` steps, at a phase set by the slots it has left. Returns whether it
        advanced (the per-step path gives the same result, tests/test_simulate.py)."""
        running = self.running
        cost = self.step_cost
        if (not running or not cost.full_attention_only
                or len(running) > self.config.max_num_batched_tokens):
            return False
        pool = self.pool
        if len(pool.groups) != 1 or pool.groups[0].kind != "full" or pool.caching:
            return False
        if self.waiting and can_admit:
            return False
        bs = pool.groups[0].block_size
        # Step j (from 0) needs slot num_computed + 1 + j; a request with u free slots left
        # takes a block at steps u, u + bs, u + 2 bs, ...
        phase = [0] * bs
        total = 0
        for r in running:
            if r.num_computed != r.num_tokens - 1:
                return False
            left = r.alloc[0] * bs - r.num_computed
            if left < 0 or left >= bs or r.num_output < 1:
                return False
            phase[left % bs] += 1
            total += r.num_computed + 1
        # Steps before the first finish: a request with k outputs left finishes at step k.
        k = min(r.output_len - r.num_output for r in running) - 1
        if k < 2:
            return False
        st = self.state
        batch = len(running)
        clock = st.clock_s
        steps = 0
        while steps < k:
            if until_s is not None and clock >= until_s:
                break
            needy = phase[steps % bs]
            if needy > pool.free_uncached:
                break
            pool.free_uncached -= needy
            seconds = cost.decode_seconds(batch, total)
            self._record(clock, seconds, batch)
            clock += seconds
            st.itl_values.append(seconds)
            st.itl_weights.append(batch)
            total += batch
            steps += 1
        if not steps:
            return False
        for r in running:
            r.num_computed += steps
            r.num_output += steps
            r.last_token_s = clock
            r.alloc[0] = max(r.alloc[0], cdiv(r.num_computed, bs))
        st.clock_s = clock
        return True

    def run(self, specs: Iterable[RequestSpec], *, concurrency: int | None = None) -> SimState:
        """Serve `specs` (in arrival order); `concurrency`: at most this many requests in
        flight, the next sent when one finishes (a closed loop, `vllm bench serve
        --max-concurrency`)."""
        st = self.state
        source: Iterator[RequestSpec] = iter(specs)
        upcoming: deque[tuple[float, RequestSpec]] = deque()
        in_flight = 0
        next_id = 0
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
            if spec.arrival_s < last_arrival:
                raise InputError(f"request {next_id}: arrives at {spec.arrival_s} s, before the "
                                 f"one before it ({last_arrival} s): requests must be in "
                                 "arrival order")
            last_arrival = spec.arrival_s
            if spec.prompt_len + spec.output_len > self.config.max_model_len:
                raise InputError(
                    f"request {next_id}: {spec.prompt_len} prompt + {spec.output_len} output "
                    f"tokens exceed the max model length ({self.config.max_model_len})")
            upcoming.append((spec.arrival_s, spec))

        def admit_arrivals(now: float) -> None:
            nonlocal in_flight, next_id
            while True:
                pull()
                if not upcoming or upcoming[0][0] > now:
                    return
                if concurrency is not None and in_flight >= concurrency:
                    return
                _, spec = upcoming.popleft()
                req = SimRequest(next_id, spec, now if concurrency is not None else spec.arrival_s,
                                 len(self.pool.groups))
                next_id += 1
                in_flight += 1
                self.waiting.append(req)

        pull()
        if upcoming:
            st.clock_s = st.first_arrival_s = upcoming[0][0]
        while True:
            admit_arrivals(st.clock_s)
            if not self.running and not self.waiting:
                pull()
                if not upcoming:
                    break
                st.clock_s = max(st.clock_s, upcoming[0][0])
                continue
            if self.bulk_decode:
                pull()
                slot = concurrency is None or in_flight < concurrency
                until = upcoming[0][0] if upcoming and slot else None
                can_admit = len(self.running) < self.config.max_num_seqs
                if self._decode_stretch(until, can_admit):
                    continue
            scheduled = self.schedule()
            if not scheduled:
                head = self.waiting[0]
                raise InputError(f"request {head.rid}: {head.num_tokens} tokens do not fit in "
                                 f"the KV pool even alone ({self.pool.usable} blocks)")
            decodes = [r.num_computed + 1 for r, n in scheduled
                       if n == 1 and r.num_computed == r.num_tokens - 1]
            chunks = [(r.num_computed, n) for r, n in scheduled
                      if not (n == 1 and r.num_computed == r.num_tokens - 1)]
            seconds = self.step_cost.seconds(decode_contexts=decodes, chunks=chunks)
            start = st.clock_s
            st.clock_s = start + seconds
            done = self._finish_step(scheduled, start, seconds)
            self._record(start, seconds, sum(n for _, n in scheduled))
            in_flight -= done
        return st
