"""vLLM V1 with pipeline parallelism (`kvplan simulate --pp N`): the engine core's batch queue
over a pipeline of stages (the rules and their lines: kvplan.engines.vllm.pipeline).

`PipelineCost` prices a batch stage by stage: each stage is the cost model on its own layers
(kvplan.perf.mixed_step.MixedStepCost.for_stage; the lm_head on the last stage only, where
vLLM computes logits and samples), and between stages the send of hidden_states + residual
(each TP rank its 1 / tp slice over the link between the stages, the receiver's TP group
all-gathering it). Stage k of a batch starts when stage k - 1 has finished it and its
activations have arrived, and stage k has finished the batch before (each stage runs its
batches in order).

`PipelineSimulator` is the scheduler of kvplan.analysis.simulate.scheduler (the same schedule,
pool, preemption and token bookkeeping) with EngineCore.step_with_batch_queue's loop in place of
one step at a time: while fewer than `depth` batches are in flight it schedules a new one at
the present clock (a request's scheduled tokens count as computed at once, so a decode whose
token is in flight is not scheduled again, a prompt's next chunk may be); when nothing more can
be scheduled or the queue is full, the clock moves to the oldest batch's last stage and its
tokens are given. A request preempted while a batch holding it is in flight keeps that batch's
token when it comes back (its stale output, delivered but not counted as computed: the request
recomputes it), and is not admitted again until its stale batches have drained (vLLM 0.32
v1/core/sched/scheduler.py:1596-1606 _preempt_request, :2084-2104 update_from_output, :934-938
the waiting queue's skip; earlier releases not read).

With async scheduling (vLLM's default at PP > 1 from 0.16 on the V1 runner, from 0.31 on V2
only: kvplan.engines.vllm.pipeline_async) a request that samples in a batch gets an output
placeholder: its next token is scheduled before the batch's output is back (V1: in the next
batch; V2: `stagger` batches later), vLLM's skip once the placeholders reach its last token
kept; and a batch's first stage waits for the last stage's sampled ids of the batch `lag`
batches before it (the sampled-token broadcast, over the link between stages). A preempted
request's placeholders are zeroed; its stale batches are delivered as without async.

The engine core's host work (kvplan.engines.vllm.engine_core.EngineCoreCost, the rule PP 1
charges: `s_per_step` + `s_per_request` x the batch's requests) runs on the engine core's one
thread before a batch enters the first stage: the next batch is scheduled when it is done. At
PP 1 this is PP 1's rule (after the GPU step without async scheduling; beside it, the longer
of the two, with it). Not modelled: the embedding lookup on the first stage (not priced by the
cost model at PP 1 either). Not validated against a measured PP run (none found).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.hybrid_pool import HybridPool
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.scheduler import Simulator
from kvplan.analysis.simulate.sim_types import SchedulerConfig, SimRequest, StepCost
from kvplan.engines.vllm.engine_core import EngineCoreCost
from kvplan.engines.vllm.pipeline import (
    vllm_pp_batch_queue,
    vllm_pp_drains_done,
    vllm_pp_ranges,
    vllm_pp_send_bytes,
)
from kvplan.engines.vllm.pipeline_async import PipelineAsync, vllm_pp_async
from kvplan.engines.vllm.runner import vllm_runs_v2
from kvplan.perf.layout import link
from kvplan.perf.mixed_step import MixedStepCost

if TYPE_CHECKING:
    from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class PipelineCost:
    """A batch's time stage by stage, and the batches the engine core keeps in flight."""

    stages: tuple[MixedStepCost, ...]
    depth: int  # EngineCore's batch queue (max_concurrent_batches)
    hidden_size: int
    tp: int
    send_latency_s: float  # the link between stages: one send's fixed time
    send_bytes_per_s: float  # and one GPU's rate
    gather_latency_s: float  # the receiving TP group's all-gather (tp > 1)
    gather_bytes_per_s: float
    # Whether the engine core takes a finished oldest batch before scheduling again with room
    # in the queue (kvplan.engines.vllm.pipeline.vllm_pp_drains_done).
    drains_done: bool = False
    async_mode: PipelineAsync | None = None  # async scheduling (None: synchronous)
    host: EngineCoreCost | None = None  # the engine core's host work a batch (None: none)

    @classmethod
    def of(cls, cost: MixedStepCost, spec: ModelSpec, pp: int, depth: int,
           partition: tuple[int, ...] | None = None, *, drains_done: bool = False,
           async_mode: PipelineAsync | None = None, host: EngineCoreCost | None = None
           ) -> PipelineCost:
        """`cost` (the whole model on one rank of the TP group) split into `pp` stages as vLLM
        splits the layers (kvplan.engines.vllm.pipeline.vllm_pp_ranges); the send over the
        link a group of tp x pp GPUs takes (the scale-out link when they span hosts)."""
        ranges = vllm_pp_ranges(spec.num_hidden_layers, pp, partition)
        stages = tuple(cost.for_stage(r, head=k == pp - 1) for k, r in enumerate(ranges))
        tp = cost.layout.tp
        send = link(cost.layout, cost.gpu, tp * pp)
        gather = link(cost.layout, cost.gpu, tp)
        return cls(stages=stages, depth=depth, hidden_size=spec.hidden_size, tp=tp,
                   send_latency_s=send.latency_s, send_bytes_per_s=send.bytes_per_s,
                   gather_latency_s=gather.latency_s, gather_bytes_per_s=gather.bytes_per_s,
                   drains_done=drains_done, async_mode=async_mode, host=host)

    def stage_seconds(self, decode_contexts: list[int], chunks: list[tuple[int, int]]
                      ) -> tuple[float, ...]:
        """Each stage's time for the batch (MixedStepCost.seconds on its layers)."""
        return tuple(c.seconds(decode_contexts=decode_contexts, chunks=chunks)
                     for c in self.stages)

    def send_seconds(self, tokens: int) -> float:
        """One stage's activations to the next for `tokens` tokens: each TP rank sends its
        1 / tp slice (latency + bytes / rate), the receiving group all-gathers the whole
        ((tp - 1) / tp x bytes over its link, + its latency)."""
        if tokens == 0:
            return 0.0
        nbytes = vllm_pp_send_bytes(tokens, self.hidden_size)
        t = self.send_latency_s + nbytes / self.tp / self.send_bytes_per_s
        if self.tp > 1:
            t += self.gather_latency_s + (self.tp - 1) / self.tp * nbytes / (
                self.gather_bytes_per_s)
        return t


@dataclass(frozen=True, kw_only=True)
class _Batch:
    # (request, tokens, its preemptions then, its computed tokens with this batch's, whether
    # it samples a token in this batch)
    items: tuple[tuple[SimRequest, int, int, int, bool], ...]
    start_s: float  # scheduled
    seconds: float  # until its last stage ends


class PipelineSimulator(Simulator):
    """One vLLM engine of `pipeline`'s stages (module docstring)."""

    def __init__(self, pool: KVPool | HybridPool, config: SchedulerConfig,
                 step_cost: StepCost, pipeline: PipelineCost, *, timeline: bool = False) -> None:
        if config.async_scheduling != (pipeline.async_mode is not None):
            raise ValueError("PipelineSimulator: async scheduling is the pipeline's async_mode")
        # The batch queue is this loop's (the run loop's PP 1 lookahead stays off).
        super().__init__(pool, replace(config, async_scheduling=False), step_cost,
                         timeline=timeline, bulk_decode=False)
        self.pipeline = pipeline
        self._stage_free = [0.0] * len(pipeline.stages)
        self._queue: deque[_Batch] = deque()
        self._holding: dict[SimRequest, int] = {}  # batches in flight holding each request
        self._stale: dict[SimRequest, int] = {}  # of those, the ones from before a preemption
        self._cpu_free = 0.0  # when the engine core's thread is done with the last batch
        self._step = 0  # schedule() calls (vLLM's current_step)
        self._placeholders: dict[SimRequest, int] = {}  # async: tokens sampled, not back yet
        self._eligible: dict[SimRequest, int] = {}  # async V2: the step of its next decode
        # async: the last stage's end of the latest batches (None: no sampled-id broadcast)
        self._sampled: deque[float | None] = deque(maxlen=pipeline.async_mode.lag
                                                   if pipeline.async_mode else 1)

    def _preempt(self, req: SimRequest) -> None:
        super()._preempt(req)
        if self._holding.get(req):
            self._stale[req] = self._holding[req]
        self._placeholders.pop(req, None)  # zeroed (0.32.0 scheduler.py:1607)

    def _running_tokens(self, req: SimRequest, budget: int) -> int:
        """With async scheduling, a running request's tokens count its placeholders
        (num_tokens + placeholders - computed: 0.16.0 scheduler.py:371-374), none once they
        reach its last token (:355-365) or, on V2, before its next eligible step."""
        held = self._placeholders.get(req, 0)
        if held and req.num_computed + 2 - held >= req.prompt_len + req.output_len:
            return 0
        if self._step < self._eligible.get(req, 0):
            return 0
        return min(req.num_tokens + held - req.num_computed, budget)

    def schedule(self) -> list[tuple[SimRequest, int]]:
        """Scheduler.schedule with the requests whose stale output is in flight skipped in the
        waiting queue (they keep their places)."""
        self._step += 1
        if not any(r in self._stale for r in self.waiting):
            return super().schedule()
        order = list(self.waiting)
        self.waiting = deque(r for r in order if r not in self._stale)
        scheduled = super().schedule()
        left = set(self.waiting)
        fresh = [r for r in self.waiting if r not in order]  # preempted in this schedule
        self.waiting = deque(fresh + [r for r in order if r in left or r in self._stale])
        return scheduled

    def _batch_ok(self) -> bool:
        return False  # every batch on the exact path

    def _submit(self, scheduled: list[tuple[SimRequest, int]]) -> None:
        """Put the batch into the pipeline once the engine core's thread has done its host
        work; its tokens count as computed (vLLM's _update_after_schedule), a request that
        samples gets a placeholder with async scheduling."""
        st, pipe, mode = self.state, self.pipeline, self.pipeline.async_mode
        decodes, chunks, samples = [], [], []
        for r, n in scheduled:
            held = self._placeholders.get(r, 0)
            if n == 1 and r.num_computed >= r.num_tokens - 1:
                decodes.append(r.num_computed + 1)
            else:
                chunks.append((r.num_computed, n))
            samples.append(r.num_computed + n >= r.num_tokens + held)
        stage_s = pipe.stage_seconds(decodes, chunks)
        tokens = sum(n for _, n in scheduled)
        send = pipe.send_seconds(tokens)
        start = st.clock_s
        host = pipe.host.host_s(len(scheduled)) if pipe.host is not None else 0.0
        ready = self._cpu_free = max(start, self._cpu_free) + host
        st.clock_s = ready  # the engine core schedules again when its thread is free
        if mode is not None and len(self._sampled) == mode.lag and self._sampled[0] is not None:
            ready = max(ready, self._sampled[0] + pipe.send_latency_s)  # the ids' broadcast
        end = ready
        for k, c in enumerate(stage_s):
            begin = max(ready, self._stage_free[k])
            end = self._stage_free[k] = begin + c
            ready = end + send
        self._record(start, end - start, tokens)
        if mode is not None:
            self._sampled.append(end if mode.every_batch or any(samples) else None)
        for (r, n), sampled in zip(scheduled, samples, strict=True):
            r.num_computed += n
            self._holding[r] = self._holding.get(r, 0) + 1
            if mode is not None and sampled:
                self._placeholders[r] = self._placeholders.get(r, 0) + 1
                self._eligible[r] = self._step + mode.stagger if mode.stagger > 1 else 0
        self._queue.append(_Batch(
            items=tuple((r, n, r.preemptions, r.num_computed, sampled)
                        for (r, n), sampled in zip(scheduled, samples, strict=True)),
            start_s=start, seconds=end - start))

    def _execute(self) -> int:
        """EngineCore.step_with_batch_queue (v1/engine/core.py 0.32.0 :698-813): schedule while
        the queue has room and a batch comes out; else wait for the oldest and give its
        tokens. Returns the requests finished."""
        st = self.state
        if len(self._queue) < self.pipeline.depth:
            scheduled = self.schedule()
            if scheduled:
                self._submit(scheduled)
                oldest = self._queue[0]
                done = oldest.start_s + oldest.seconds <= st.clock_s
                if len(self._queue) < self.pipeline.depth and not (
                        done and self.pipeline.drains_done):
                    return 0  # not blocking: the loop takes arrivals, then schedules again
        if not self._queue and any(self._step < self._eligible.get(r, 0) for r in self.running):
            return 0  # V2: an empty schedule counts a step (its empty batch is done at once)
        if not self._queue:
            head = self.waiting[0]
            raise InputError(f"request {head.rid}: {head.num_tokens} tokens do not fit in "
                             f"the KV pool even alone ({self.pool.usable} blocks)")
        batch = self._queue.popleft()
        end = batch.start_s + batch.seconds
        st.clock_s = max(st.clock_s, end)
        for r, *_ in batch.items:
            self._holding[r] -= 1
            if not self._holding[r]:
                del self._holding[r]
        stale = [(r, after) for r, _, p, after, _ in batch.items if r.preemptions != p]
        items = [(r, n, after) for r, n, p, after, _ in batch.items
                 if r.preemptions == p and r.finish_s < 0]
        for r, _, p, _, sampled in batch.items:  # its token is back: one placeholder fewer
            if sampled and r.preemptions == p and self._placeholders.get(r):
                self._placeholders[r] -= 1
        # Each request as this batch left it (later chunks of its prompt may be in flight
        # too): _finish_step advances it by the batch's tokens and gives any token; the later
        # batches' tokens are put back after.
        ahead = [r.num_computed - after for r, _, after in items]
        for r, n, after in items:
            r.num_computed = after - n
        done = self._finish_step([(r, n) for r, n, _ in items], batch.start_s, batch.seconds)
        for (r, _, _), extra in zip(items, ahead, strict=True):
            r.num_computed += extra
        return done + self._deliver_stale(stale, end)

    def _deliver_stale(self, stale: list[tuple[SimRequest, int]], end: float) -> int:
        """The tokens of preempted requests' batches coming back at `end`: a batch that had
        reached the end of its request's sequence gives its token (the first, a gap, or the
        last: the request finishes from the waiting queue). Returns the requests finished."""
        st, done = self.state, 0
        for r, after in stale:
            self._stale[r] -= 1
            if not self._stale[r]:
                del self._stale[r]
            if r.finish_s >= 0 or after != r.num_tokens:
                continue  # a prompt chunk short of its end: no token
            if r.num_output == 0:
                r.first_token_s = end
            else:
                st.itl_values.append(end - r.last_token_s)
                st.itl_weights.append(1)
            r.last_token_s = end
            r.num_output += 1
            if r.num_output >= r.output_len:
                r.finish_s = end
                self.waiting.remove(r)  # its blocks went back when it was preempted
                st.finished.append(r)
                done += 1
        return done


def pipeline_async(spec: ModelSpec, *, version: str | None, pp: int,
                   asked: bool | None) -> tuple[PipelineAsync | None, str]:
    """Async scheduling at `pp` > 1 as vLLM `version` resolves it for `spec` unless `asked`
    (kvplan.engines.vllm.pipeline_async.vllm_pp_async, which refuses it before 0.16 as vLLM
    does), and the note saying so; None: synchronous."""
    return vllm_pp_async(version, pp, asked=asked, v2_runner=vllm_runs_v2(version, spec, pp=pp))


def pipelined(cost: MixedStepCost, spec: ModelSpec, pp: int, *, version: str | None,
              partition: tuple[int, ...] | None = None, async_mode: PipelineAsync | None = None,
              host: EngineCoreCost | None = None) -> tuple[PipelineCost, str]:
    """The `pp`-stage pipeline of the engine whose step `cost` prices (`async_mode`: async
    scheduling as `pipeline_async` resolved it; `host`: the engine core's host work a batch,
    None: not charged), and its note."""
    v2 = vllm_runs_v2(version, spec, pp=pp)
    depth = vllm_pp_batch_queue(pp, async_scheduling=async_mode is not None, v2_runner=v2)
    pipe = PipelineCost.of(cost, spec, pp, depth, partition,
                           drains_done=vllm_pp_drains_done(version), async_mode=async_mode,
                           host=host)
    layers = ", ".join(str(len(c.layers or ())) for c in pipe.stages)
    one = ("a request in one batch at a time" if async_mode is None
           else "a request's next token scheduled before its last is back (async)")
    charged = ("engine-core host work not charged" if host is None else
               "the engine core's host work before each batch enters the first stage")
    note = (f"pipeline parallelism: {pp} stages of {layers} layers (vLLM get_pp_indices), up to "
            f"{depth} batches in flight (EngineCore's batch queue), {one}; each stage the cost "
            "model on its layers, the lm_head on the last, "
            f"{pipe.send_seconds(1) * 1e6:.1f} us to send one token's hidden state + residual "
            f"between stages; {charged}; not validated against a measured PP run (none found) "
            "(kvplan.analysis.simulate.pipeline)")
    return pipe, note
