"""How vLLM's V1 scheduler admits a waiting request under chunked prefill: on its first chunk's
blocks, or only when its whole prompt fits (the simulator's SchedulerConfig.full_isl_admission,
kvplan.analysis.simulate.scheduler).

- vLLM 0.11.0: Scheduler.schedule admits a waiting request when allocate_slots finds blocks for
  its scheduled tokens (v1/core/sched/scheduler.py:471-483); allocate_slots counts the blocks of
  num_computed_tokens + num_new_tokens (+ lookahead) only (v1/core/kv_cache_manager.py:260-266):
  the first chunk. A long prompt admitted beside running requests can then run the pool dry
  mid-prefill, and the scheduler preempts the last running request (recompute). 0.15.1 the
  same (no full-sequence argument to allocate_slots: v1/core/sched/scheduler.py:710).
- vLLM PR #37307 ("[Core] add option to schedule requests based on full ISL", merged
  2026-03-17) added the gate, describing 0.11-era behaviour: "The default behaviour of vLLM is
  to schedule requests if the first chunk of a request fits", and the preemption cycle it
  causes. vLLM 0.32: SchedulerConfig.scheduler_reserve_full_isl, default True
  (config/scheduler.py:190-194), passed as allocate_slots(full_sequence_must_fit=...)
  (v1/core/sched/scheduler.py:1270).

Which release first made it the default is not read: releases after 0.15.1 keep the 0.32 rule
(an assumption for 0.16-0.31).
"""

from __future__ import annotations

from kvplan._util.versions import version_key

# The last release read that admits on the first chunk.
FIRST_CHUNK_ADMISSION_UNTIL = "0.15.1"


def vllm_full_isl_admission(version: str | None) -> bool:
    """Whether vLLM `version` (None: the newest) admits a waiting request only when its whole
    prompt fits in the free blocks (module docstring); False: on its first chunk."""
    return version is None or version_key(version) > version_key(FIRST_CHUNK_ADMISSION_UNTIL)
