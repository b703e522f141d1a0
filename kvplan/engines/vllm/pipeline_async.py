"""vLLM's async scheduling with pipeline parallelism: whether a release runs it at PP > 1, and
how its batches then follow each other (the rules the serving simulator's pipeline follows:
kvplan.analysis.simulate.pipeline). Sources read: the 0.14.1, 0.16.0 and 0.19.0 sources (sdists)
and the 0.32.0 wheel (the oracle's install); 0.20 - 0.31 not read apart from config/vllm.py
max_concurrent_batches (0.25.0 :492-502, 0.30.0 :589-599, 0.31.0 :592-602: PP + 1 on V2).

Whether it runs (VllmConfig.__post_init__'s async-scheduling block):

- to 0.15: asked with PP > 1, refused ("Async scheduling is not yet compatible with
  pipeline_parallel_size > 1", 0.14.1 config/vllm.py:562-568); by default turned off at
  PP > 1 (:590-596). 0.15 not read, taken as 0.14.
- 0.16 to 0.30: no PP condition either way (0.16.0 config/vllm.py:618-687; 0.19.0 :755-788):
  on by default with the multiprocessing executor.
- from 0.31: by default off at PP > 1 on model runner V1 ("the V1 model runner does not support
  it with pipeline parallelism", 0.32.0 config/vllm.py:1634-1641), on with V2; asked, kept on
  either runner (the explicit branch, :1553-1582, has no PP check).

How the batches follow each other when it runs:

- V1 runner (0.16 - 0.30 by default; asked from 0.31): the batch queue holds PP batches (0.16.0
  v1/executor/multiproc_executor.py:432-435, 0.19.0 :469-472; 0.32.0 config/vllm.py:577-587,
  the V1 branch falls through to PP). AsyncScheduler gives a request that samples in a batch an
  output placeholder (0.16.0 v1/core/sched/async_scheduler.py:18-35; 0.32.0 :25-50), so the
  next batch schedules its next token at once (num_tokens + placeholders - computed:
  0.16.0 v1/core/sched/scheduler.py:371-374); it skips a request whose placeholders already
  reach its last token by `num_computed + 2 - placeholders >= prompt + max_tokens` (:355-365;
  0.32.0 :664-675). The last stage broadcasts each batch's sampled ids over the PP group
  (gpu_model_runner.py `_pp_broadcast_prev_sampled_token_ids`, 0.16.0 :3671-3680 and
  :3815-3827; 0.19.0 :4170-4180, :4357-4369) and every other stage receives them in
  `sample_tokens` right after its forward of the same batch (0.16.0 :3627-3630; 0.19.0
  :4126-4131), on its compute stream: a stage's next batch starts only after the last stage
  has sampled this one. LAG 1. From 0.20 both skip the broadcast of a batch whose every
  request is a prompt chunk short of its end (`_is_all_reqs_chunked_prefill`, 0.20.0
  :3777-3784, :4378-4410; 0.32.0 :3930-3937, :4561-4595; vLLM PR 38726; 0.19.0 and 0.19.1
  have no such check), and 0.32 waits for it when the next batch takes its input ids
  (`async_op=True`, vLLM PR 51650): still before that batch's forward.
- V2 runner (from 0.22 where it runs; 0.22 - 0.31 not read beyond config, taken as 0.32): the
  queue holds PP + 1 batches (0.32.0 config/vllm.py:582-583); a request that samples in step T
  is next eligible for a decode at step T + PP (async_scheduler.py:52-57, scheduler.py:680-684;
  `current_step` counts every schedule() call, :591-592); the broadcast runs on a side stream
  and the first stage's batch T + PP waits for batch T's (v1/worker/gpu/pp_utils.py:55-63,
  :125-152: a ring of PP slots; :189-196 and :255-257: none when no request of T samples).
  LAG PP.
- A preempted request's placeholders are zeroed (0.32.0 scheduler.py:1607).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key


@dataclass(frozen=True, kw_only=True)
class PipelineAsync:
    """Async scheduling at PP > 1 as the engine runs it (module docstring)."""

    lag: int  # batch j's first stage waits for batch j - lag's sampling on the last stage
    stagger: int  # a request that sampled in step T is next scheduled at step T + stagger
    runner: str  # "V1" or "V2"
    # The sampled ids are broadcast after every batch (V1 to 0.19), else only after a batch
    # where some request samples (V1 from 0.20, V2).
    every_batch: bool = False


def vllm_pp_async(version: str | None, pp: int, *, asked: bool | None, v2_runner: bool
                  ) -> tuple[PipelineAsync | None, str]:
    """Async scheduling at `pp` > 1 in vLLM `version` (`asked`: --async-scheduling / --no-...;
    None: the release's default), and a note saying what vLLM did; None: synchronous."""
    key = version_key(version)
    if key < (0, 16):
        if asked:
            raise InputError("--async-scheduling with --pp above 1: vLLM before 0.16 refuses it "
                             "(\"Async scheduling is not yet compatible with "
                             "pipeline_parallel_size > 1\", 0.14.1 config/vllm.py:562-568)")
        if asked is None:
            return None, ("async scheduling: off, vLLM before 0.16 turns it off at PP > 1 "
                          "(0.14.1 config/vllm.py:590-596)")
        return None, ""
    if asked is False:
        return None, ""
    v2 = v2_runner and key >= (0, 22)
    if asked is None and key >= (0, 31) and not v2:
        return None, ("async scheduling: off, vLLM from 0.31 turns it off at PP > 1 on model "
                      "runner V1 (0.32.0 config/vllm.py:1634-1641)")
    if v2:
        mode = PipelineAsync(lag=pp, stagger=pp, runner="V2")
        how = (f"V2 runner: a request decodes every {pp}th batch, batch T + {pp}'s first stage "
               "waits for batch T's sampled ids")
    else:
        mode = PipelineAsync(lag=1, stagger=1, runner="V1", every_batch=key < (0, 20))
        how = ("V1 runner: a request decodes in consecutive batches (output placeholders), each "
               "batch's first stage waits for the last stage's sampled ids of the batch before")
    return mode, f"async scheduling with PP ({how}; kvplan.engines.vllm.pipeline_async)"
