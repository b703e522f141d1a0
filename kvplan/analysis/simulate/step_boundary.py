"""When a closed loop's next request can first be scheduled: the step boundary rule (issue 30,
frontlat64b).

A closed-loop client sends its next request when it has its previous request's last token. Every
engine kvplan simulates takes new requests only at the top of its loop, between steps, and hands
a step's outputs out only after it has made the loop's next decision; so a request sent at the
instant its predecessor's step ended is never seen by the scheduling made at that instant while
the engine has other work (the first step after the finish): synchronously it runs in the step
after next (k + 2 for a finish in step k), with the overlap / async loop one step later (k + 3,
the simulator's `cutoff = prev_start`). An engine with no work blocks on its input and takes it
at once.

- vLLM (0.32.0 wheel, vllm/v1/engine/core.py): `run_busy_loop` (:1547-1556) drains the input
  queue (`_process_input_queue`, :1573-1601: it blocks only while `not self.has_work()`, :1576,
  :1588), then `_process_engine_step` (:1603-1609) runs `step_fn` and only then puts the
  step's outputs on the output queue (:1608-1609). Synchronously (`step`, :657) the replacement
  can reach the input queue only while the next step runs; with the batch queue
  (`step_with_batch_queue`, :698) the call that returns step k's outputs has already scheduled
  and queued k + 1 (:725, :753), and the next call schedules k + 2 before it blocks on k + 1.
- SGLang (0.5.9 python/sglang/srt/managers/scheduler.py): `event_loop_normal` (:1108) calls
  `recv_requests` at the top (:1112), then `get_next_batch_to_run` (:1118), `run_batch` and
  `process_batch_result` (:1123-1124), which streams the outputs; `event_loop_overlap` (:1135)
  receives (:1148), forms and launches batch k + 1 (:1154, :1165-1166) and only then processes
  batch k's result (`pop_and_process`, :1141, called at :1173 after the launch). The same order.
- TensorRT-LLM (tensorrt_llm/_torch/pyexecutor/py_executor.py as GitHub stores it, commit
  0004396720054fd8e205cbf616f21f0b57c6b412, read by name, line numbers not taken; `_executor_loop` /
  `_executor_loop_overlap`): new requests are fetched at the top of each iteration
  (`_fetch_and_activate_new_requests`), the responses enqueued after the step
  (`_handle_responses`; in the overlap loop after step k + 1 is launched). The same order.

Each engine's simulator answers `finish_reply_misses_next_step` (kvplan.analysis.simulate.
scheduler.Simulator and its subclasses); the arrival loops (scheduler.Simulator.run,
dp_lockstep.run_lockstep) ask `taken` below.
"""

from __future__ import annotations


def taken(seen_s: float, cutoff_s: float, *, reply_to_finish: bool) -> bool:
    """Whether a request the engine can see from `seen_s` is taken by the scheduling whose
    arrivals end at `cutoff_s` (the step's own start synchronously, the previous step's start
    with async scheduling). `reply_to_finish`: it is a closed loop's reply to a finish, and the
    engine has a step to run at that instant: a reply seen exactly at the cutoff (sent when the
    step before it ended) came after the loop's drain, so only a later scheduling takes it."""
    return seen_s < cutoff_s if reply_to_finish else seen_s <= cutoff_s
