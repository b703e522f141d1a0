"""A discrete-event simulation of SGLang's scheduler over kvplan's KV pool (`--engine sglang`).

Follows SGLang 0.4.9 - 0.5.x, python/sglang/srt/managers/scheduler.py (`get_next_batch_to_run`,
`get_new_batch_prefill`, `update_running_batch`), schedule_policy.py (`PrefillAdder`,
`SchedulePolicy`), schedule_batch.py (`check_decode_mem`, `retract_decode`) and global_config.py
(the new-token-ratio constants), with a radix cache of page size one token (the CUDA default);
no mixed chunks (`--enable-mixed-chunk` off), no priority scheduling (speculative decoding: the
subclass kvplan.analysis.simulate.sglang_spec_sim):

1. Prefill first. Each step first tries a prefill batch: the chunked request's next chunk, then
   the waiting requests in policy order (FCFS; LPM, longest cached prefix first, while at most
   128 wait, else FCFS), each admitted whole while the budgets last, the one crossing the chunk
   budget cut to it (it becomes the chunked request). The budgets (PrefillAdder): the pool's
   free and evictable tokens less what the running requests are expected to still decode,
   min(max_new - out, 4,096) x new_token_ratio each, and less each admission's prompt plus its
   min(max_new, 4,096) (a request needing as much or more stops admission); `max_prefill_tokens`
   (16,384) input tokens, except for the first; `chunked_prefill_size` tokens; the running
   requests at most `max_running_requests`.
2. Else a decode step of every running request (one token each). When the pool cannot give each
   a token (evicting cached prefixes first), requests are retracted, least output first and then
   longest prompt, until the rest have 20 tokens each (`retract_decode_steps`); they free their
   KV and go to the end of the waiting queue (recomputed on readmission), and new_token_ratio
   becomes min(1, (decoded tokens + 20 x running) / max new tokens of the running). A decode
   step without retraction lowers new_token_ratio by (init - min) / 600, to min; an idle engine
   resets it to init. init = min(0.7 x --schedule-conservativeness, 1), min = 0.14 x init.

3. --scheduler-recv-interval N (default 1: every step) takes the requests sent to the scheduler
   only at some steps (SGLang 0.5.9 / 0.5.10.post1 managers/scheduler.py `recv_requests`
   (0.5.9:1222-1227): `recv_skipper.handle(last_batch.forward_mode)` or nothing;
   managers/scheduler_recv_skipper.py): before each step a counter grows by the weight of the
   last step's forward mode, 1 after a decode step or with no last batch, 1,000 after any other
   (an extend), and the requests are taken when it reaches N (then it restarts from 0).
   So after a prefill step they are taken at once, and while only decodes run, every N
   decode steps. An idle engine's loop spins with no last batch (weight 1): it takes them
   after N spins of no work, at once here. SGLang refuses it under DP attention
   (SchedulerRecvSkipper.__init__: `assert not server_args.enable_dp_attention`).

4. Requests sent with ignore_eos while the radix cache is disabled (`--disable-radix-cache`:
   the tree cache is a ChunkCache or a radix cache whose `disable` is set) are admitted by
   PrefillAdder.add_one_req_ignore_eos (schedule_policy.py `add_one_req`: `if
   req.sampling_params.ignore_eos and getattr(self.tree_cache, "disable", True)`, 0.5.6:578,
   0.5.9:731, 0.5.10.post1:751), not by rule 1's checks: no refusal of a prompt at or above
   the input budget left (only `budget_state` after each, so a step takes prompts until the
   chunk or input budget reaches 0, the last cut to the chunk left: two 8,192-token prompts
   at a 16,384 budget, not one), a prompt refused only where its tokens exceed the free or the
   total budget or where the running requests could not all decode to max_new_tokens
   (`_ignore_eos_fits`), and its budget charged min(max_new_tokens, 4,096). kvplan's requests
   always decode their whole output, as ignore_eos makes SGLang's; whether the client sent the
   flag is the user's (SglangOptionsSim.ignore_eos, `simulate --ignore-eos`, off by default).

A prefill step's first tokens are sampled at its end (TTFT); its requests decode from the next
step. The overlap scheduler (on by default) is SchedulerConfig.async_scheduling: the next batch
is formed while the current one runs (kvplan.analysis.simulate.scheduler).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.scheduler import Simulator
from kvplan.analysis.simulate.sglang_mamba_radix import MambaRadixTree
from kvplan.analysis.simulate.sglang_swa import SwaWindow
from kvplan.analysis.simulate.sim_types import (
    GatheredStepCost,
    SchedulerConfig,
    SimRequest,
    StepCost,
)
from kvplan.engines.sglang.dp_balance import DpGathered, sglang_gathered
from kvplan.engines.sglang.options import MAX_PREFILL_TOKENS

# python/sglang/srt/managers/schedule_policy.py
CLIP_MAX_NEW_TOKENS = 4096
IGNORE_EOS_RESERVE_TOKENS = 1  # 0.5.9:74, 0.5.10.post1:77
LPM_QUEUE_LIMIT = 128  # SchedulePolicy._determine_active_policy: FCFS above this queue
# python/sglang/srt/global_config.py (0.4.9; environment variables SGLANG_* since)
INIT_NEW_TOKEN_RATIO = 0.7
MIN_NEW_TOKEN_RATIO_FACTOR = 0.14
NEW_TOKEN_RATIO_DECAY_STEPS = 600
RETRACT_DECODE_STEPS = 20
POLICIES = ("fcfs", "lpm")
# python/sglang/srt/environ.py (0.5.9:232-235, 0.5.10.post1:230-233)
# SGLANG_SCHEDULER_RECV_SKIPPER_WEIGHT_*: what a step adds to the recv skipper's counter by its
# forward mode: DEFAULT (an extend or mixed batch), DECODE, NONE (no last batch).
RECV_WEIGHT_EXTEND = 1000
RECV_WEIGHT_DECODE = 1
RECV_WEIGHT_NONE = 1


@dataclass(frozen=True, kw_only=True)
class SglangSchedule:
    """SGLang's scheduler settings (server_args.py)."""

    chunked_prefill_size: int | None  # None: chunked prefill off (-1)
    max_prefill_tokens: int = MAX_PREFILL_TOKENS
    max_running_requests: int
    schedule_conservativeness: float = 1.0
    policy: str = "fcfs"
    # --scheduler-recv-interval (server_args.py 0.5.9:630, default 1: the skipper is not made)
    recv_interval: int = 1
    # Rule 4: the requests are sent with ignore_eos and the radix cache is disabled.
    ignore_eos_path: bool = False


@dataclass(frozen=True, kw_only=True)
class SglangOptionsSim:
    """What a user sets of SGLang's scheduler (`kvplan simulate --engine sglang`):
    --chunked-prefill-size (None: SGLang's default for the GPU; <= 0: off),
    --schedule-conservativeness, --schedule-policy, its piecewise prefill CUDA graphs
    (--enable- / --disable-piecewise-cuda-graph; None: the release's default,
    kvplan.engines.sglang.prefill_graph), --max-prefill-tokens (None: its default,
    MAX_PREFILL_TOKENS) and --scheduler-recv-interval (the module docstring's rule 3)."""

    chunked_prefill_size: int | None = None
    schedule_conservativeness: float = 1.0
    schedule_policy: str = "fcfs"
    piecewise_cuda_graph: bool | None = None
    max_prefill_tokens: int | None = None
    scheduler_recv_interval: int = 1
    # The requests are sent with ignore_eos (a bench client's --ignore-eos); with the radix
    # cache disabled, SGLang then admits them by the module docstring's rule 4.
    ignore_eos: bool = False


class SglangSimulator(Simulator):
    """One SGLang engine (a data-parallel rank): the module docstring's rules."""

    # recv_requests at the top of event_loop_normal / event_loop_overlap, the outputs streamed
    # after the batch (overlap: after the next one is launched): step_boundary cites 0.5.9.
    finish_reply_misses_next_step = True

    def __init__(self, pool: KVPool, config: SchedulerConfig, step_cost: StepCost,
                 schedule: SglangSchedule, *, timeline: bool = False,
                 bulk_decode: bool = True, swa: SwaWindow | None = None,
                 mamba: bool = False, mamba_tree: MambaRadixTree | None = None) -> None:
        super().__init__(pool, config, step_cost, timeline=timeline, bulk_decode=False)
        # A sliding-window pool beside the token pool (kvplan.analysis.simulate.sglang_swa):
        # every allocation takes its tokens in both, the budgets see the smaller free count.
        self.swa = swa
        self.decode_runs = bulk_decode and swa is None
        # The hybrid pools' per-step use: SWA tokens held, mamba slots held by the running
        # requests (one each; the radix tree's are not counted).
        self.mamba = mamba
        # The mamba radix cache's states (kvplan.analysis.simulate.sglang_mamba_radix), with
        # its prefix hits simulated.
        self.mamba_tree = mamba_tree
        self.swa_usage_sum = self.swa_usage_max = 0.0
        self.slots_sum = self.slots_max = 0
        self.schedule_cfg = schedule
        self.init_ratio = min(INIT_NEW_TOKEN_RATIO * schedule.schedule_conservativeness, 1.0)
        self.min_ratio = min(self.init_ratio * MIN_NEW_TOKEN_RATIO_FACTOR, 1.0)
        self.decay = (self.init_ratio - self.min_ratio) / NEW_TOKEN_RATIO_DECAY_STEPS
        self.new_token_ratio = self.init_ratio
        self.chunked: SimRequest | None = None
        self._last_end = -1.0
        # The recv skipper (rule 3): its counter, and the weight the last step adds to it.
        self._recv_counter = 0
        self._recv_weight = RECV_WEIGHT_NONE
        self.extending = False  # the last `schedule` formed a prefill (extend) batch

    def _batch_ok(self) -> bool:
        return False

    def has_work(self) -> bool:
        """A rank whose only request is between two chunks of its prompt (`chunked`, in
        neither queue) still runs its next chunk."""
        return self._busy()

    def dummy_step(self, end: float) -> None:
        """An idle batch (DP attention: `get_idle_batch` while another rank has tokens) is a
        batch: the scheduler does not run self_check_during_idle after it, so the new-token
        ratio is not reset (scheduler.py 0.5.9:1164-1176, event_loop_overlap)."""
        self._last_end = end

    def gathered(self, steps: Sequence[tuple[Simulator, list[tuple[SimRequest, int]]]]
                 ) -> DpGathered | None:
        """Attention DP: the ranks' tokens and logit rows (a request each) summed when some
        rank's batch is an extend (its last `schedule` formed a prefill batch: SGLang runs
        extends and decodes apart), else None, the busiest rank's padding
        (kvplan.engines.sglang.dp_balance)."""
        extend = any(isinstance(r, SglangSimulator) and r.extending for r, _ in steps)
        return sglang_gathered([sum(n for _, n in sched) for _, sched in steps],
                               [len(sched) for _, sched in steps], extend)

    def step_seconds(self, scheduled: list[tuple[SimRequest, int]],
                     gathered: DpGathered | None = None) -> float:
        """The step on this rank (`Simulator.step_seconds`), its MLP / MoE layers, DP gathers
        and logits gather priced at the `gathered` SUM_LEN buffers over the ranks where given
        (MixedStepCost.regathered_seconds)."""
        seconds = super().step_seconds(scheduled)
        if gathered is None:
            return seconds
        cost = self.step_cost
        if not isinstance(cost, GatheredStepCost):
            raise ValueError("attention DP: this step cost does not price the gathered tokens")
        return seconds + cost.regathered_seconds(sum(n for _, n in scheduled), gathered.tokens,
                                                 requests=len(scheduled), rows=gathered.rows)

    def _busy(self) -> bool:
        # The chunked request is in neither queue between its chunks.
        return self.chunked is not None or super()._busy()

    def _record(self, start: float, seconds: float, tokens: int,
                usage: float | None = None) -> None:
        super()._record(start, seconds, tokens, usage)
        self._last_end = start + seconds
        if self.swa is not None:
            u = self.swa.usage()
            self.swa_usage_sum += u
            self.swa_usage_max = max(self.swa_usage_max, u)
        if self.mamba:
            n = len(self.running) + (self.chunked is not None)
            self.slots_sum += n
            self.slots_max = max(self.slots_max, n)

    def _finish_step(self, scheduled: list[tuple[SimRequest, int]], start: float,
                     seconds: float) -> int:
        swa, tree = self.swa, self.mamba_tree
        if swa is None and tree is None:
            return super()._finish_step(scheduled, start, seconds)
        outs = [r.num_output for r, _ in scheduled]
        done = super()._finish_step(scheduled, start, seconds)
        for (req, n), out in zip(scheduled, outs, strict=True):
            if req.finish_s >= 0:
                if swa is not None:
                    swa.release(req.rid, finished=True)
                if tree is not None:
                    tree.release(req.rid, finished=True)
            elif n > 1 or req.num_output == 1:
                if req.num_output > out:  # its prefill has ended: the tree takes the prompt
                    if swa is not None:
                        swa.prompt_done(req.rid, req.num_computed)
                    if tree is not None:  # scheduler_output_processor_mixin.py 0.5.9:183
                        tree.insert(req.rid, req.num_computed)
        return done

    def _free_tokens(self) -> int:
        """The free tokens the budgets see: the token pool's, or the smaller of the two pools'
        (SWATokenToKVPoolAllocator.available_size)."""
        free = self._tokens(self.pool.num_free)
        return free if self.swa is None else min(free, self.swa.free)

    def _allocate(self, req: SimRequest, n: int, hit: list[list[object]] | None = None) -> bool:
        """`n` tokens of `req` in the token pool and the sliding-window pool (both or none)."""
        swa = self.swa
        if swa is not None:
            swa.before_chunk(req.rid, req.num_computed)
            if hit is not None:
                # Admission: the SWA radix tree's lock on the hit comes first, and what is free
                # is checked after it (add_one_req, schedule_policy.py 0.5.9:750-753).
                swa.admitted(req, req.rid, hit)
            if not swa.can_take(req.rid, n):
                if hit is not None:
                    swa.refused(req.rid)
                return False
        ok = self.pool.allocate(req, n) if hit is None else self.pool.allocate(req, n, hit=hit)
        if ok and hit is not None and self.mamba_tree is not None:
            self.mamba_tree.admitted(req, req.rid, hit)
        if swa is not None:
            if ok:
                swa.take(req.rid, n)
            elif hit is not None:
                swa.refused(req.rid)
        return ok

    def _receives(self) -> bool:
        """SchedulerRecvSkipper.handle before this step (rule 3); an engine with no work takes
        the requests at once (its idle loop's spins)."""
        interval = self.schedule_cfg.recv_interval
        if interval <= 1:
            return True  # SchedulerRecvSkipper.maybe_create: no skipper
        if not self._busy():
            self._recv_counter = 0
            return True
        self._recv_counter += self._recv_weight
        if self._recv_counter >= interval:
            self._recv_counter = 0
            return True
        return False

    def schedule(self) -> list[tuple[SimRequest, int]]:
        if self._last_end < self.state.clock_s:
            # The engine idled since its last step (self_check_during_idle).
            self.new_token_ratio = self.init_ratio
        prefill = self._prefill_batch()
        self.extending = bool(prefill)
        self._recv_weight = RECV_WEIGHT_EXTEND if prefill else RECV_WEIGHT_DECODE
        return prefill if prefill else self._decode_batch()

    # -- prefill (get_new_batch_prefill, PrefillAdder) ------------------------------------

    def _tokens(self, blocks: int) -> int:
        return blocks * self.pool.groups[0].block_size

    def _prefix(self, req: SimRequest) -> tuple[list[list[object]], int]:
        hit = self.pool.find_hit(req)
        if self.swa is not None:  # what the SWA radix cache's match keeps of it
            hit = self.swa.match(hit)
        if self.mamba_tree is not None:  # up to its last node holding a recurrent state
            hit = self.mamba_tree.match(hit)
        return hit, self._tokens(len(hit))

    def _prefill_batch(self) -> list[tuple[SimRequest, int]]:
        cfg, pool = self.schedule_cfg, self.pool
        running_bs = len(self.running)
        if running_bs >= cfg.max_running_requests or (not self.waiting and self.chunked is None):
            return []
        free = self._free_tokens()
        # rem_total_tokens: free and evictable tokens less the running requests' expected decode.
        rem_total = free - sum(min(r.output_len - r.num_output, CLIP_MAX_NEW_TOKENS)
                               * self.new_token_ratio for r in self.running)
        rem_input, rem_chunk = cfg.max_prefill_tokens, cfg.chunked_prefill_size
        scheduled: list[tuple[SimRequest, int]] = []
        if self.chunked is not None:  # add_chunked_req
            req = self.chunked
            if self.mamba_tree is not None:  # stash_chunked_request: the last chunk's state
                self.mamba_tree.insert(req.rid, req.num_computed)
            left = req.num_tokens - req.num_computed
            n = left if rem_chunk is None else min(left, rem_chunk, int(rem_total))
            if n > 0 and self._allocate(req, n):
                scheduled.append((req, n))
                truncated = n < left
                rem_total -= n + (0 if truncated else min(req.output_len - req.num_output,
                                                          CLIP_MAX_NEW_TOKENS))
                rem_input -= n
                if rem_chunk is not None:
                    rem_chunk -= n
                if not truncated:
                    self.chunked = None
                    self.running.append(req)
            else:
                return []
        if self.chunked is not None:
            if self.mamba_tree is not None:
                self.mamba_tree.prefill_batch(len(scheduled), 0)
            return scheduled
        order = list(self.waiting)
        if cfg.policy == "lpm" and pool.caching and len(order) <= LPM_QUEUE_LIMIT:
            order.sort(key=lambda r: -self._prefix(r)[1])  # stable: FCFS among equals
        admitted: set[int] = set()
        for req in order:
            if len(admitted) + running_bs >= cfg.max_running_requests:
                break
            hit, hit_tokens = self._prefix(req)
            extend = req.num_tokens - hit_tokens
            max_new = min(req.output_len - req.num_output, CLIP_MAX_NEW_TOKENS)
            if cfg.ignore_eos_path:  # rule 4
                max_new = min(req.output_len, CLIP_MAX_NEW_TOKENS)
                cur_rem = free - sum(k for _, k in scheduled)
                if not self._ignore_eos_fits(req, extend, cur_rem, rem_total, scheduled):
                    break  # NO_TOKEN
            elif extend + max_new >= rem_total:
                break  # NO_TOKEN
            elif scheduled and extend >= rem_input:
                # OTHER: the input budget, chunked prefill on or off (schedule_policy.py
                # add_one_req, 0.5.8.post1:715-716; kvplan.engines.sglang.options
                # MAX_PREFILL_TOKENS)
                break
            whole = rem_chunk is None or extend <= rem_chunk
            n = extend if whole else rem_chunk
            assert n is not None
            if n <= 0 or not self._allocate(req, n, hit=hit):
                break
            if pool.caching and req.preemptions == 0:
                self.state.prefix_queries += req.num_tokens
                self.state.prefix_hits += hit_tokens
            req.num_computed = hit_tokens
            req.admitted = True
            admitted.add(req.rid)
            scheduled.append((req, n))
            rem_total -= n + (max_new if whole else 0)
            rem_input -= n
            if rem_chunk is not None:
                rem_chunk -= n
            if whole:
                self.running.append(req)
            else:
                self.chunked = req
            if rem_total <= 0 or free - sum(k for _, k in scheduled) <= 0:
                break  # NO_TOKEN
            if rem_input <= 0 or (rem_chunk is not None and rem_chunk <= 0):
                break  # OTHER
        if admitted:
            self.waiting = type(self.waiting)(r for r in self.waiting if r.rid not in admitted)
        if scheduled and self.mamba_tree is not None:
            self.mamba_tree.prefill_batch(len(scheduled), len(admitted))
        return scheduled

    def _ignore_eos_fits(self, req: SimRequest, extend: int, cur_rem: float, rem_total: float,
                         scheduled: list[tuple[SimRequest, int]]) -> bool:
        """PrefillAdder.add_one_req_ignore_eos's checks (rule 4; schedule_policy.py
        0.5.9:632-687, 0.5.10.post1:641-696): the prompt's tokens within the free tokens left
        by this step's admissions (`cur_rem`) and the total budget left, then, but with a
        sliding-window pool, whether
        the running, this step's and this request's decodes to their last token all fit as the
        shortest finish first and free their tokens: each request's (tokens left, tokens held)
        = (max_new_tokens - outputs, prompt + outputs), ascending by tokens left; at the i-th,
        with bs = the i-th and those after it, the free tokens after this prompt plus those
        freed before less tokens left x bs must stay above IGNORE_EOS_RESERVE_TOKENS x bs.
        (SGLang builds the list at the step's first request and inserts the later ones; it is
        rebuilt here, this request first among equal tokens left, as its first build puts it.)"""
        if extend > min(cur_rem, rem_total):
            return False
        if self.swa is not None:  # `if not self.is_hybrid_swa`
            return True
        # The running batch and this step's admissions (those taken whole are already in
        # `running`; the chunked one is not).
        others = [*self.running, *(r for r, _ in scheduled if r not in self.running)]
        states = sorted(((r.output_len - r.num_output, r.num_tokens) for r in (req, *others)
                         if r.output_len - r.num_output > 0), key=lambda x: x[0])
        cur_rem -= extend
        freed = 0
        for i, (left, held) in enumerate(states):
            bs = len(states) - i
            if cur_rem + freed - left * bs <= IGNORE_EOS_RESERVE_TOKENS * bs:
                return False
            freed += held
        return True

    # -- decode (update_running_batch) ----------------------------------------------------

    def _decode_run(self, horizon_s: float, arrival_s: float) -> float | None:
        """The decode steps that follow while nothing waits (no prefill batch is formed), no
        request finishes, the pool gives every request its token (no retraction) and no
        arrival reaches the scheduler (each step starts before `horizon_s`), taken at once:
        their times from the sums of the contexts, the new-token ratio's decay, the gaps and
        the pool's usage per step as `_decode_batch` and `_finish_step` give them, and each
        request's slots allocated in one call at the end (page size 1: one block a token, so
        every step takes one block per request). The exact path takes the rest, and the steps
        after a prefill (their gaps differ). With a recv interval (rule 3) each step after the
        first passes the skipper, counted here while it takes nothing; the run stops before the
        step at which the counter would reach the interval with a request sent that it may
        see (the loop takes that step's receive), and before any step at or after the next
        request's sending (`arrival_s`: the loop sends it). Returns the last step's start, or
        None."""
        running, pool, st = self.running, self.pool, self.state
        n = len(running)
        now = st.clock_s
        if (not self.decode_runs or self.waiting or self.chunked is not None or not n
                or pool.groups[0].block_size != 1 or self._last_end != now):
            return None
        steps = pool.num_free // n  # the retraction check, n blocks a step
        keys = 0
        for r in running:
            if (r.num_computed != r.num_tokens - 1 or r.alloc[0] != r.num_computed
                    or r.num_output < 1 or r.last_token_s != now):
                return None
            steps = min(steps, r.output_len - r.num_output - 1)  # its last token: exact path
            keys += r.num_computed + 1
        if steps < 2:
            return None
        cost, full = self.step_cost, self.step_cost.full_attention_only
        free0, usable = pool.num_free, pool.usable
        taken, start = 0, now
        interval = self.schedule_cfg.recv_interval
        while taken < steps:
            if interval <= 1:
                if start >= horizon_s:
                    break
            elif start >= arrival_s:
                break
            elif taken:  # this step's receive point (the first's was the loop's)
                if self._recv_counter + RECV_WEIGHT_DECODE >= interval:
                    if start >= horizon_s:
                        break
                    self._recv_counter = 0
                else:
                    self._recv_counter += RECV_WEIGHT_DECODE
            if full:
                seconds = cost.seconds_from_sums(n, keys + n * taken, [])
            else:
                seconds = cost.seconds(decode_contexts=[r.num_computed + 1 + taken
                                                        for r in running], chunks=[])
            self.new_token_ratio = max(self.new_token_ratio - self.decay, self.min_ratio)
            taken += 1
            st.clock_s = start + seconds
            st.itl_values.append(seconds)
            st.itl_weights.append(n)
            self._record(start, seconds, n, usage=1.0 - (free0 - n * taken) / usable)
            start = st.clock_s
        if not taken:
            return None
        self._recv_weight = RECV_WEIGHT_DECODE
        for r in running:
            if not pool.allocate(r, taken):
                raise AssertionError("decode run: the pool was counted short")
            r.num_computed += taken
            r.num_output += taken
            r.last_token_s = st.clock_s
        return start - seconds

    def _retract(self, victim: SimRequest) -> None:
        """retract_decode's release of one request: its KV freed, back to the waiting queue
        (recomputed on readmission)."""
        self.pool.free(victim)
        if self.swa is not None:
            self.swa.release(victim.rid)
        if self.mamba_tree is not None:
            self.mamba_tree.release(victim.rid)
        victim.num_computed = 0
        victim.preemptions += 1
        self.state.preemptions += 1
        self.waiting.append(victim)

    def _retract_until(self, tokens_per_request: int) -> None:
        """retract_decode's loop: at least one request retracted from the back of `running`
        (one always kept) and more until the free tokens cover `tokens_per_request` for each
        request kept; then new_token_ratio over the requests kept."""
        running = self.running
        first = True
        while first or self._free_tokens() < tokens_per_request * len(running):
            first = False
            if len(running) == 1:
                break
            self._retract(running.pop())
        self._ratio_after_retract()

    def _ratio_after_retract(self) -> None:
        """new_token_ratio after a retraction, over the requests kept."""
        running = self.running
        decoded = sum(r.num_output for r in running)
        max_new = sum(r.output_len for r in running)
        self.new_token_ratio = min(1.0, (decoded + RETRACT_DECODE_STEPS * len(running))
                                   / max_new)

    def _decode_batch(self) -> list[tuple[SimRequest, int]]:
        running = self.running
        if not running:
            return []
        pool, swa = self.pool, self.swa
        short = sum(pool.blocks_needed(r, r.num_computed + 1) for r in running) > pool.num_free
        if swa is not None and not short:
            short = sum(swa.pages_needed(r.rid, 1) for r in running) > swa.free
        if short:
            # retract_decode: least output (then longest prompt) goes first.
            running.sort(key=lambda r: (r.num_output, -r.prompt_len), reverse=True)
            self._retract_until(RETRACT_DECODE_STEPS)
        else:
            self.new_token_ratio = max(self.new_token_ratio - self.decay, self.min_ratio)
        scheduled = []
        for r in running:
            if swa is not None:  # prepare_for_decode: maybe_evict_swa, then the allocation
                swa.before_decode(r.rid, r.num_computed)
                if not swa.can_take(r.rid, 1):
                    break
            if not pool.allocate(r, 1):
                break  # the last request left alone cannot grow: the pool is too small
            if swa is not None:
                swa.take(r.rid, 1)
            scheduled.append((r, 1))
        return scheduled
