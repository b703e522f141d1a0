"""What an SGLang decode worker (`--disaggregation-mode decode`) admits, per attention rank:
the preallocation that gates a prompt's prefill (issue 29). Read in SGLang 0.5.5.post2 and
0.5.8.post1 (the releases the aiconfigurator rows ran; the same code in both):

- The bootstrap: a prompt enters the prefill server's waiting queue only once the decode rank
  has preallocated its pages and told the sender where to write (prefill.py
  `PrefillBootstrapQueue.pop_bootstrapped` waits for the sender's WaitingForInput; the decode
  side's `DecodePreallocQueue.pop_preallocated`, decode.py:447-590 in 0.5.8.post1, inits the
  receiver with the page indices). The decode scheduler runs `process_decode_queue`
  (decode.py:1001) once per loop iteration, i.e. on its step boundaries (every iteration:
  `disaggregation_decode_polling_interval` 1).
- `pop_preallocated` takes the queue FIFO and stops at the first request that does not fit
  (decode.py:477-517): a free request slot (`req_to_token_pool.available_size() > 0`), and
  tokens: with R = `num_reserved_decode_tokens` (server_args.py:640, default 512) and
  `retractable` = the prompt + output tokens of the running batch,
      allocatable = free pool tokens - max(R x (running + in transfer + waiting),
                                           need_space_for_single_req)        (:598-654)
  with need_space_for_single_req = max over running of (min(max_new_tokens, CLIP) + prompt)
  - retractable (CLIP = SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION, default 4096, decode.py:73);
  a request of prompt I is admitted when max(I + R, I + min(max_new_tokens, CLIP) -
  retractable) <= allocatable, which then drops by I + R. The admitted request holds the
  pages of its I tokens at once (`_pre_alloc`, :656-696: fill_len = I, page-rounded by
  `alloc_extend`), and one more token a decode step.
- Request slots: `DecodeReqToTokenPool` (decode.py:76-121) has max_num_reqs slots plus
  `pre_alloc_size` = 2 x max_num_reqs where max_num_reqs <= 32 (model_runner_kv_cache_mixin.py
  :347-348; model_runner.py in 0.5.5.post2); max_num_reqs = --max-running-requests, else
  init_memory_pool's default (kvplan.engines.sglang.pools.default_max_running_requests). A slot
  is held from preallocation to the request's end. The metadata buffers (2 x the slots,
  scheduler.py:858) never bind before the slots do.
- Running: `get_new_prebuilt_batch` (decode.py:959) seats min(req_to_token_pool.size,
  max_running_requests) in the running batch, max_running_requests = min(max_total_num_tokens
  // 2, max_num_reqs), or --max-running-requests // dp_size under DP attention in place of
  the first (model_runner.py:558-565; tp_worker.py:281-289 in 0.5.5.post2).

- Taking requests in (disagg63; 0.5.8.post1, and the same in 0.5.5.post2 at the lines in
  brackets): the decode loop (decode.py:860-894 [806-], `event_loop_overlap_disagg_decode`)
  calls `recv_requests` before `process_decode_queue`, and with --scheduler-recv-interval
  N > 1 (server_args.py:605 [:518] `scheduler_recv_interval`, default 1: no skipper)
  `recv_requests` returns nothing unless the skipper lets it (scheduler.py:1182-1187
  [1040-1044]): managers/scheduler_recv_skipper.py `handle` adds the weight of the last
  iteration's forward mode to a counter and takes the requests when it reaches N, then
  restarts from 0; the weights (environ.py:222-225 [the skipper module's own
  _WEIGHT_OF_FORWARD_MODE, _DEFAULT_WEIGHT]) are 1 after a DECODE iteration or with no
  last batch (an idle loop: its spins reach N at once here) and 1,000 after any other, a
  PREBUILT one included (`get_next_disagg_decode_batch_to_run`, :907-: the handed-over
  requests seated in an iteration of their own before the running batch takes them). So while
  it only decodes a sent request waits for the N-th decode step since the last take, and it
  waits before its preallocation, hence before its prefill (the bootstrap above). SGLang
  refuses the skipper with DP attention (SchedulerRecvSkipper.__init__, `assert not
  server_args.enable_dp_attention`). The simulation applies it (kvplan.analysis.simulate.
  disagg_sim, `recv_interval`).

Not modelled: retraction (a running request out of pages is retracted and resumed later,
`retracted_queue`), the last prebuilt batch's reservation (:635-643, a transient of one
iteration), and the prefill's own bootstrap-queue poll (one prefill iteration at most).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat

from kvplan._util.errors import InputError
from kvplan.engines.handover import DecodeRankState

# server_args.py:640 (0.5.8.post1; :545 in 0.5.5.post2): num_reserved_decode_tokens, tokens
# kept free per held request "for future decode".
RESERVED_DECODE_TOKENS = 512
# decode.py:73: SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION, the max_new_tokens the estimate uses.
CLIP_MAX_NEW_TOKENS = 4096
# model_runner_kv_cache_mixin.py:347-348: up to this many max_num_reqs, the decode pool
# preallocates PRE_ALLOC_FACTOR x more request slots (held by preallocated requests).
PRE_ALLOC_UP_TO = 32
PRE_ALLOC_FACTOR = 2


@dataclass(frozen=True, kw_only=True)
class SglangDecodeAdmission:
    """One decode attention rank's limits (module docstring)."""

    pool_tokens: int  # max_total_num_tokens of the rank's pool
    page_tokens: int  # page_size
    max_num_reqs: int  # req_to_token_pool.size
    max_running: int  # the scheduler's max_running_requests
    reserved_tokens: int = RESERVED_DECODE_TOKENS
    clip_new_tokens: int = CLIP_MAX_NEW_TOKENS
    # --scheduler-recv-interval (module docstring, "Taking requests in"); 1: SGLang's default.
    recv_interval: int = 1

    @property
    def launch_groups(self) -> tuple[tuple[str, ...], ...]:
        """--scheduler-recv-interval N where N is not SGLang's default 1."""
        return (("--scheduler-recv-interval", str(self.recv_interval)),) if (
            self.recv_interval != 1) else ()

    @property
    def slots(self) -> int:
        """Requests the rank holds at once (preallocated, in transfer, waiting, running)."""
        extra = PRE_ALLOC_FACTOR * self.max_num_reqs if self.max_num_reqs <= PRE_ALLOC_UP_TO else 0
        return self.max_num_reqs + extra

    def admits(self, state: DecodeRankState, queued: int, input_len: int,
               max_new_tokens: int) -> int:
        """How many of `queued` requests of `input_len` prompt tokens at the head of the
        rank's preallocation queue `pop_preallocated` takes now (FIFO, stopping at the first
        that does not fit); the running requests of the same lengths."""
        return self.admits_each(state, repeat((input_len, max_new_tokens), queued),
                                self.single_need(input_len, max_new_tokens))

    def single_need(self, input_len: int, max_new_tokens: int) -> int:
        """A running request's term of need_space_for_single_req: min(max_new_tokens, CLIP)
        + its prompt (module docstring)."""
        return min(max_new_tokens, self.clip_new_tokens) + input_len

    def admits_each(self, state: DecodeRankState, heads: Iterable[tuple[int, int]],
                    running_need: int) -> int:
        """`admits` for requests of their own lengths: need_space_for_single_req is the
        running requests' largest `single_need` (`running_need`) less the retractable tokens,
        and each head request is checked and charged at its own prompt and max_new_tokens."""
        retractable = state.running_tokens
        single = running_need - retractable if state.running else 0
        allocatable = state.free_tokens - max(
            self.reserved_tokens * (state.running + state.pending), single)
        taken = 0
        for input_len, max_new in heads:
            if state.held + taken >= self.slots:
                break
            new = min(max_new, self.clip_new_tokens)
            required = input_len + self.reserved_tokens
            if max(required, input_len + new - retractable) > allocatable:
                break
            allocatable -= required
            taken += 1
        return taken


def sglang_decode_admission(*, pool_tokens: int, max_num_reqs: int, page_tokens: int,
                            dp_attention: int, user_max_running: int | None,
                            recv_interval: int = 1) -> SglangDecodeAdmission:
    """The limits of one decode rank from its pool (kvplan.engines.sglang.pools: the tokens
    and max_num_reqs it sizes) and the launch's --max-running-requests (None: unset) over
    `dp_attention` DP-attention ranks (1: none), taking requests in every `recv_interval`
    decode steps (--scheduler-recv-interval; module docstring, "Taking requests in").
    SGLang refuses an interval above 1 with DP attention (scheduler_recv_skipper.py
    `SchedulerRecvSkipper.__init__`: `assert not server_args.enable_dp_attention`; the
    skipper is made only for N > 1): so is it here, in one line."""
    if recv_interval < 1:
        raise InputError(f"--scheduler-recv-interval {recv_interval}: expected 1 or more")
    if recv_interval > 1 and dp_attention > 1:
        raise InputError(f"--scheduler-recv-interval {recv_interval}: SGLang refuses it with "
                         "DP attention (its SchedulerRecvSkipper asserts not "
                         "--enable-dp-attention); leave it at 1 or drop --decode-dp-attention")
    first = pool_tokens // 2 if user_max_running is None else user_max_running // dp_attention
    return SglangDecodeAdmission(pool_tokens=pool_tokens, page_tokens=page_tokens,
                                 max_num_reqs=max_num_reqs,
                                 max_running=max(1, min(first, max_num_reqs)),
                                 recv_interval=recv_interval)
