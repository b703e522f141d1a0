"""A discrete-event simulation of TensorRT-LLM's PyTorch-backend scheduler (`--engine trtllm`).

Follows the 1.2 line as GitHub stores it (the defaults of tensorrt_llm/llmapi/llm_args.py; the
executor's SimpleScheduler = a capacity scheduler, then a micro-batch scheduler, each step,
tensorrt_llm/_torch/pyexecutor/scheduler.py `SimpleScheduler.schedule_request`; the C++ rules
it binds, cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp (read at 02a10fed),
microBatchScheduler.cpp (0a949d31), scheduledBlocksManager.cpp (ca64fd93), kvCacheManager.cpp;
scheduler.py's Python port of both, PyCapacityScheduler / PyMicroBatchScheduler at 034fffb0,
says the same; the overlap loop, py_executor.py `_executor_loop_overlap`), over kvplan's
TensorRT-LLM pool (one pool of `tokens_per_block` blocks, kvplan.engines.trtllm.budget; no
null block). No speculative decoding, beam width 1, pipeline 1; one attention-DP rank (its
ranks in lockstep and the ADP balance: kvplan.analysis.simulate.dp_lockstep). The 1.0 and
1.1 lines: kvplan.analysis.simulate.trtllm_lines (what was read for them; the one rule that
differs, 4).

1. The capacity scheduler, over the active requests in arrival order (a paused one keeps its
   place), at most `max_batch_size` of them (max_num_sequences = max_batch_size x pp).
   GUARANTEED_NO_EVICT (CapacitySchedulerPolicy default, llm_args SchedulerConfig;
   `GuaranteedNoEvictScheduler::impl`): the pool's free blocks (a cached block with no user
   counts free: NoEvictScheduledBlocksManager from getNumFreeBlocksPerWindowSize) less, for
   every request in generation, its remaining blocks to completion
   (KVCacheManager::getRemainingBlocksToCompletion: cdiv(prompt + max_new_tokens, block)
   less the blocks it holds); then the other requests (a prompt mid-chunk, then the new ones)
   in order, each taken while its remaining blocks to completion fit what is left, the first
   that does not stopping the rest (FCFS). Nothing is ever evicted. A prefix hit is not
   subtracted from the reservation (getRemainingBlocksToCompletion ignores reuse). Its result
   lists the generation requests first, then the prompts taken (impl fills scheduledRequests
   in those two passes): the micro-batch scheduler sees them in that order. With block reuse
   on, beneficialToSkip skips for the step a new prompt whose first uncached full block
   (findNewContextBlock) a prompt taken before it this step, or one mid-chunk, is contributing
   (`continue`, not a stop: the prompts behind it are still looked at), so that it reuses the
   block the step after. MAX_UTILIZATION asks the same (`MaxUtilizationScheduler::
   operator()`), again each time it retries a request after pausing one: a new prompt that
   paused a request to fit is then skipped itself (its block is in the set since its first
   try), and the requests behind it are looked at.
   MAX_UTILIZATION (`MaxUtilizationScheduler::operator()`): each request in order takes the
   blocks of its next step only (getNeededBlocksOneStep: a new prompt its prompt's blocks, a
   generation request the block its next token opens); one that does not fit pauses the last
   started request from the end of the list (its blocks freed, recomputed with its tokens so
   far as a prompt when it is scheduled again) and is retried; with none left to pause, the
   step stops there.
2. The micro-batch scheduler (`MicroBatchScheduler::operator()`) over those, in that order
   (the C++ schedulers are the PyTorch executor's default: _torch/pyexecutor/_util.py builds
   BindCapacityScheduler / BindMicroBatchScheduler unless SchedulerConfig.use_python_scheduler
   (TLLM_USE_PYTHON_SCHEDULER, off by default) picks the Python port, SimpleUnifiedScheduler,
   whose loop is the same): a generation request takes 1 token, a prompt without chunked
   prefill (enable_chunked_prefill False by default, llmapi/llm_args.py) all its tokens
   (getNumTokens: the whole prompt, a prefix hit included); the first request of either kind
   that would pass `max_num_tokens` (8192) ends the step (`break`: no later request is looked
   at, however short). So at the defaults a prompt of 8,192 tokens runs only in a step with no
   generation request: it waits until the requests ahead of it have finished, and the
   requests behind it wait too. `max_batch_size` requests at most. A prompt longer than
   max_num_tokens is refused: at submission (llmapi/llm.py `LLM._check_arguments`, PyTorch
   backend without chunked prefill: prompt + query tokens > max_num_tokens raises; max_seq_len
   is checked there only on the TensorRT-engine path) and by the scheduler (TLLM_CHECK "The
   number of context tokens exceeds the limit value": maxContextLength is max_num_tokens);
   kvplan refuses the run. py_executor.py `_schedule` keeps the scheduler's picks: batch
   waiting (batch_wait_timeout_iters, 0 by default) holds none back, nor does the
   attention-DP balance where it is off (the default; on: `hold_context`, set by
   kvplan.analysis.simulate.dp_lockstep, drops the step's context requests). With chunked
   prefill the prompts are taken whole first, then, where they pass what the generation
   requests left, chunked FIRST_COME_FIRST_SERVED (the PyTorch executor's policy, unit
   tokens_per_block): each in order gets min(remaining, capacity left), cut down to a multiple
   of the unit where cut.
3. Block reuse (KvCacheConfig.enable_block_reuse, default True): a new prompt's hit is the
   longest run of cached full blocks over its first prompt - 1 tokens (loadOrAllocateBlocks:
   usableSize = input length - 1), kvplan.analysis.simulate.kv_pool's lookup, LRU eviction of
   free cached blocks. Partial-block reuse (enable_partial_reuse) is not simulated: a hit
   falls short of TensorRT-LLM's by less than one block.
4. The overlap scheduler (on: disable_overlap_scheduler False) is SchedulerConfig.
   async_scheduling (py_executor.py `_executor_loop_overlap` forms step k+1 while step k runs,
   with the same `_schedule` over active_requests, so the same order: it sees the requests
   that arrived before step k began). A context step's requests decode
   from the next step (`_update_request_states` right after the forward). From 1.2 a request
   that reaches its max_tokens is not scheduled after its last token (the early exit, PR
   #8587: GENERATION_TO_COMPLETE; not simulated: its blocks are still held while the next
   step is scheduled). In 1.0 and 1.1 (`TrtllmSchedule.early_exit` False) the step after its
   last token still carries it: the capacity scheduler counts it as a generation request, the
   micro-batch scheduler gives it one token (its slot allocated, a new block where that token
   opens one), the step's cost counts it, and its blocks go back after that step; its client
   saw the last token when the step before ended. Only with the overlap scheduler on.
5. CUDA graphs (cuda_graph_config on, enable_padding False by default): a generation-only batch
   is not padded to a captured size (the cost model's step time, no padding); with
   enable_padding on, it is padded to the next captured batch size (kvplan.engines.trtllm.
   engine `decode_graph_sizes`, priced by kvplan.perf.graph_padding's rule as vLLM's), a step
   with a context request never (MixedStepCost `graph_mixed` False).
6. Batch waiting (batch_wait_timeout_iters / batch_wait_max_tokens_ratio, off by default; the
   library only: TrtllmOptionsSim.batch_wait): without attention DP, a step that picked both
   context and generation requests runs its generation requests only until the counter
   reaches the timeout or the tokens the ratio (kvplan.engines.trtllm.batch_wait).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan._util.units import cdiv
from kvplan.analysis.simulate.kv_pool import OWN, KVPool
from kvplan.analysis.simulate.scheduler import Simulator
from kvplan.analysis.simulate.sim_types import SchedulerConfig, SimRequest, StepCost
from kvplan.engines.trtllm.batch_wait import BatchWait, BatchWaitGate
from kvplan.engines.trtllm.dp_balance import AdpBalance

GUARANTEED_NO_EVICT = "guaranteed_no_evict"
MAX_UTILIZATION = "max_utilization"
POLICIES = (GUARANTEED_NO_EVICT, MAX_UTILIZATION)


@dataclass(frozen=True, kw_only=True)
class TrtllmSchedule:
    """TensorRT-LLM's scheduler settings (llm_args.py)."""

    max_batch_size: int  # requests a step (and requests scheduled), default 2048
    max_num_tokens: int  # tokens a step, default 8192
    chunked_prefill: bool = False  # enable_chunked_prefill
    policy: str = GUARANTEED_NO_EVICT  # scheduler_config.capacity_scheduler_policy
    # The overlap scheduler's early exit (kvplan.analysis.simulate.trtllm_lines, from 1.2);
    # False: a request is scheduled once more after its last token (1.0, 1.1).
    early_exit: bool = True
    # attention_dp_config.enable_balance (None: off, the default): the attention-DP ranks'
    # context requests held back (kvplan.engines.trtllm.dp_balance.AdpContextGate).
    adp_balance: AdpBalance | None = None
    # batch_wait_timeout_iters / batch_wait_max_tokens_ratio (None: off, the default; read
    # without attention DP only): kvplan.engines.trtllm.batch_wait.
    batch_wait: BatchWait | None = None


class TrtllmSimulator(Simulator):
    """One TensorRT-LLM executor (a DP replica): the module docstring's rules."""

    # _fetch_and_activate_new_requests at the top of _executor_loop / _executor_loop_overlap,
    # the responses after the step (overlap: after the next is launched): step_boundary.
    finish_reply_misses_next_step = True

    def __init__(self, pool: KVPool, config: SchedulerConfig, step_cost: StepCost,
                 schedule: TrtllmSchedule, *, timeline: bool = False) -> None:
        super().__init__(pool, config, step_cost, timeline=timeline, bulk_decode=False)
        if schedule.policy not in POLICIES:
            raise ValueError(f"unknown capacity scheduler policy {schedule.policy!r}")
        self.schedule_cfg = schedule
        # Requests whose last token the previous step sampled, still active for this step (the
        # overlap scheduler without its early exit: module docstring, 4).
        self._carry: list[SimRequest] = []
        self._carries = config.async_scheduling and not schedule.early_exit
        # This iteration's context requests held by the attention-DP balance (set by the
        # lockstep, kvplan.analysis.simulate.dp_lockstep): the step runs its generation only.
        self.hold_context = False
        wait = schedule.batch_wait
        self._batch_wait = (BatchWaitGate(wait, schedule.max_num_tokens)
                            if wait is not None and wait.on else None)

    def _batch_ok(self) -> bool:
        return False

    # -- the step after a request's last token (overlap scheduler, no early exit) --------

    def _release(self, req: SimRequest) -> None:
        if self._carries:
            self._carry.append(req)  # its blocks held, itself scheduled once more
        else:
            self.pool.free(req)

    def _busy(self) -> bool:
        return bool(self._carry) or super()._busy()

    def _finish_step(self, scheduled: list[tuple[SimRequest, int]], start: float,
                     seconds: float) -> int:
        """The carried requests' extra token computes nothing the client sees; their blocks
        go back once the step that carried them ran (step k's results handled after step k+1
        is launched)."""
        if not self._carry:
            return super()._finish_step(scheduled, start, seconds)
        carried = {r.rid for r in self._carry}
        previous, self._carry = self._carry, []
        done = super()._finish_step([(r, n) for r, n in scheduled if r.rid not in carried],
                                    start, seconds)
        for req in previous:
            self.pool.free(req)
        return done

    # -- the capacity scheduler ---------------------------------------------------------

    @staticmethod
    def _generating(req: SimRequest) -> bool:
        return req.num_output >= 1 and req.num_computed == req.num_tokens - 1

    def _remaining_to_completion(self, req: SimRequest) -> int:
        """getRemainingBlocksToCompletion: the blocks of prompt + max new tokens less held."""
        bs = self.pool.groups[0].block_size
        return cdiv(req.prompt_len + req.output_len, bs) - req.alloc[0]

    def _active(self) -> list[SimRequest]:
        """The active requests in arrival order (a paused request keeps its place; a carried
        one too, generating)."""
        active = [*self.running, *self._carry, *self.waiting]
        if self.state.preemptions or self._carry:
            active.sort(key=lambda r: r.rid)
        return active

    def _no_evict(self, active: list[SimRequest]) -> Iterator[SimRequest]:
        """The requests GUARANTEED_NO_EVICT takes, in the order the micro-batch scheduler sees
        them. Lazy past the generation requests: the prompts are looked at one by one as the
        micro-batch scheduler asks for them, so a step whose token budget stops at the first
        prompt does not check the hundreds queued behind it (the same requests, in the same
        order, as checking them all first: nothing here changes the pool or the queues)."""
        cap = self.schedule_cfg.max_batch_size
        available = self.pool.num_free
        bs = self.pool.groups[0].block_size
        if cap < 1:
            return
        generating: list[SimRequest] = []
        stop = len(active)  # the requests after the cap's last generation request: not looked at
        for i, req in enumerate(active):
            out = req.num_output
            if out >= 1 and req.num_computed == req.prompt_len + out - 1:  # _generating
                generating.append(req)
                # _remaining_to_completion
                available -= cdiv(req.prompt_len + req.output_len, bs) - req.alloc[0]
                if len(generating) >= cap:
                    stop = i + 1
                    break
        yield from generating
        taken = len(generating)
        if stop == taken or taken >= cap:
            return  # no prompt among them, or no seat left
        # beneficialToSkip (block reuse on): the blocks prompts mid-chunk are contributing
        # (prefillWithChunkedContextsAlreadyExecuting), then each new prompt's in turn.
        reuse = self.pool.caching
        contributed = {h for r in active if r.admitted and not self._generating(r)
                       if (h := self._new_context_block(r)) is not None} if reuse else set()
        for req in itertools.islice(active, stop):
            out = req.num_output
            if out >= 1 and req.num_computed == req.prompt_len + out - 1:
                continue  # in generation: taken above
            if reuse and not req.admitted:
                h = self._new_context_block(req)
                if h is not None:
                    if h in contributed:
                        continue  # skipped for this step, not a stop: the next is looked at
                    contributed.add(h)
            if taken >= cap:
                return
            need = self._remaining_to_completion(req)
            if need > available:
                return
            # The generation requests first, then the prompts taken (GuaranteedNoEvict
            # Scheduler::impl fills scheduledRequests in these two passes): the micro-batch
            # scheduler sees them in this order, not in arrival order.
            yield req
            taken += 1
            available -= need

    def _new_context_block(self, req: SimRequest) -> int | None:
        """findNewContextBlock (kvCacheManager.cpp): the chained hash of the first full block
        of the request's tokens not in the cache, None where every one is. A block past the
        shared segments holds the request's own tokens (cached only as a paused request's
        kept blocks, as kv_pool.find_hit reads them): its key is the request's alone, so it
        makes only the request itself skip, on a retry."""
        bs = self.pool.groups[0].block_size
        by_hash = self.pool.by_hash
        own = req.own_from(bs)
        kept = req.kept
        for j in range(req.num_tokens // bs):
            if j < own:
                h = req.block_hash(j, bs)
                if h not in by_hash:
                    return h
            elif not (j < len(kept) and kept[j][0] is OWN):
                return req.block_hash(j, bs)
        return None

    def _one_step_blocks(self, req: SimRequest) -> int:
        """getNeededBlocksOneStep: a new prompt's blocks, or the block its next token opens
        (a prompt mid-chunk: the blocks its next chunk opens, kvplan allocating by chunk)."""
        bs = self.pool.groups[0].block_size
        if self._generating(req):
            return cdiv(req.num_computed + 1, bs) - req.alloc[0]
        return max(cdiv(req.num_tokens, bs) - req.alloc[0], 0)

    def _max_utilization(self, active: list[SimRequest]) -> list[SimRequest]:
        cap = self.schedule_cfg.max_batch_size
        fitting: list[SimRequest] = []
        scheduled_blocks = 0
        end = len(active)
        i = 0
        reuse = self.pool.caching
        contributed = {h for r in active if reuse and r.admitted and not self._generating(r)
                       if (h := self._new_context_block(r)) is not None}
        while i < end:
            req = active[i]
            if reuse and not req.admitted:  # beneficialToSkip, asked again on each retry
                h = self._new_context_block(req)
                if h is not None:
                    if h in contributed:
                        i += 1
                        continue
                    contributed.add(h)
            need = self._one_step_blocks(req)
            if len(fitting) < cap and scheduled_blocks + need <= self.pool.num_free:
                fitting.append(req)
                scheduled_blocks += need
                i += 1
                continue
            # Pause the last started request in active[i:end] (schedulingRemoveSequence).
            # (A carried request, done but for its extra step, is not paused: kvplan's choice,
            # not read.)
            j = end - 1
            while j >= i and (not active[j].admitted or active[j].finish_s >= 0):
                j -= 1
            if j < i:
                break
            victim = active[j]
            self.running.remove(victim)
            self.pool.free(victim)
            victim.num_computed = 0
            victim.admitted = False
            victim.preemptions += 1
            self.state.preemptions += 1
            self.waiting.appendleft(victim)
            end = j
        return fitting

    # -- the micro-batch scheduler ------------------------------------------------------

    def _micro_batch(self, fitting: Iterable[SimRequest]) -> list[tuple[SimRequest, int]]:
        cfg = self.schedule_cfg
        budget = cfg.max_num_tokens
        used = count = 0
        picked: list[tuple[SimRequest, int]] = []
        to_chunk: list[SimRequest] = []
        chunk_tokens = 0
        for req in fitting:
            if self._generating(req):
                if used + 1 > budget:
                    break
                picked.append((req, 1))
                used += 1
            elif not cfg.chunked_prefill:
                tokens = req.num_tokens  # getNumTokens: the whole prompt
                if tokens > budget:
                    # A request paused by MAX_UTILIZATION recomputes its prompt and the tokens
                    # it had generated: past the budget, it never fits a step again.
                    what = ("prompt tokens" if tokens == req.prompt_len
                            else "tokens (prompt and output, recomputed after a pause)")
                    raise InputError(
                        f"request {req.rid}: {tokens:,} {what} exceed max_num_tokens "
                        f"({budget:,}) without chunked prefill: TensorRT-LLM rejects it "
                        "(raise --max-num-batched-tokens or --enable-chunked-prefill)")
                if used + tokens > budget:
                    break
                picked.append((req, tokens))
                used += tokens
            else:
                to_chunk.append(req)
                chunk_tokens += req.num_tokens - req.num_computed
            count += 1
            if count >= cfg.max_batch_size:
                break
        if to_chunk:
            capacity = budget - used
            unit = self.pool.groups[0].block_size
            fits = chunk_tokens <= capacity
            for req in to_chunk:
                left = req.num_tokens - req.num_computed
                n = left if fits else min(left, capacity)
                if n < left:
                    n = n // unit * unit  # FIRST_COME_FIRST_SERVED: cut to the chunk unit
                capacity -= n
                if n > 0:
                    picked.append((req, n))
        return picked

    # -- one step --------------------------------------------------------------------------

    def schedule(self) -> list[tuple[SimRequest, int]]:
        # An iteration that only paused requests (MAX_UTILIZATION: the prompt that paused one
        # then skipped, beneficialToSkip) runs nothing; the executor loops again at once.
        # Each such round leaves fewer requests started, so it ends.
        while True:
            paused = self.state.preemptions
            scheduled = self._schedule_once()
            if scheduled or self.state.preemptions == paused:
                return scheduled

    def picked_counts(self) -> tuple[int, int]:
        """(context, generation) requests the schedulers would pick this iteration, nothing
        changed: what py_executor.py `_balance_adp_requests` all-gathers (GUARANTEED_NO_EVICT
        only: MAX_UTILIZATION pauses requests as it picks)."""
        if self.schedule_cfg.policy != GUARANTEED_NO_EVICT:
            raise InputError("attention_dp_config.enable_balance: simulated under the "
                             "GUARANTEED_NO_EVICT capacity policy only")
        picks = self._micro_batch(self._no_evict(self._active()))
        generation = sum(1 for req, _ in picks if self._generating(req))
        return len(picks) - generation, generation

    def _schedule_once(self) -> list[tuple[SimRequest, int]]:
        active = self._active()
        fitting = (self._no_evict(active) if self.schedule_cfg.policy == GUARANTEED_NO_EVICT
                   else self._max_utilization(active))
        scheduled: list[tuple[SimRequest, int]] = []
        pool, waiting = self.pool, self.waiting
        started: set[int] = set()
        picks = self._micro_batch(fitting)
        if self.hold_context:  # py_executor.py `_schedule`: the context requests dropped
            picks = [(req, n) for req, n in picks if self._generating(req)]
        elif self._batch_wait is not None:  # `_waiting_requests` (batch_wait)
            context = [req for req, _ in picks if not self._generating(req)]
            generation = len(picks) - len(context)
            if context and generation and not self._batch_wait.release(
                    sum(r.num_tokens for r in context), generation):
                picks = [(req, n) for req, n in picks if self._generating(req)]
        for req, n in picks:
            if req.admitted:  # running: a seat held since its first step
                if self._generating(req):
                    ok = pool.allocate(req, 1)
                else:
                    n = min(n, req.num_tokens - req.num_computed)
                    ok = pool.allocate(req, n)
                if not ok:  # the reservation holds under GUARANTEED_NO_EVICT
                    break
                scheduled.append((req, n))
                continue
            # A new (or paused) prompt: its prefix hit, then its blocks (addSequence).
            hit = pool.find_hit(req)
            hit_tokens = pool.hit_tokens(hit)
            n = min(n, req.num_tokens - hit_tokens)
            if n <= 0 or not pool.allocate(req, n, hit=hit):
                break
            if pool.caching and req.preemptions == 0:
                self.state.prefix_queries += req.num_tokens
                self.state.prefix_hits += hit_tokens
            req.num_computed = hit_tokens
            req.admitted = True
            self.running.append(req)
            started.add(req.rid)
            scheduled.append((req, n))
        if started:
            self.waiting = type(waiting)(r for r in waiting if r.rid not in started)
            self.running.sort(key=lambda r: r.rid)
        return scheduled


@dataclass(frozen=True, kw_only=True)
class TrtllmOptionsSim:
    """What a user sets of TensorRT-LLM's scheduler (`kvplan simulate --engine trtllm`):
    enable_chunked_prefill and scheduler_config.capacity_scheduler_policy (llm_args.py);
    attention_dp_config.enable_balance with its iteration counts (`adp_balance`; the library
    only, with attention DP)."""

    chunked_prefill: bool = False
    policy: str = GUARANTEED_NO_EVICT
    adp_balance: AdpBalance | None = None
    batch_wait: BatchWait | None = None  # the library only, without attention DP
