"""How vLLM's V1 scheduler admits a waiting request under chunked prefill: on its first chunk's
blocks, or only when its whole prompt fits (the simulator's SchedulerConfig.full_isl_admission,
kvplan.analysis.simulate.scheduler). Read at every release tag 0.16.0 ... 0.32.0 (the PyPI
sdists; vllm/config/scheduler.py, vllm/engine/arg_utils.py, vllm/v1/core/sched/scheduler.py,
vllm/v1/core/kv_cache_manager.py).

- To 0.18.1, the first chunk: Scheduler.schedule admits a waiting request when allocate_slots
  finds blocks for its scheduled tokens, and allocate_slots counts the blocks of
  num_computed_tokens + num_new_tokens (+ lookahead) only. 0.11.0 v1/core/sched/scheduler.py:
  471-483, v1/core/kv_cache_manager.py:260-266; 0.16.0 v1/core/sched/scheduler.py:713-722;
  0.18.1 v1/core/sched/scheduler.py:722-731, v1/core/kv_cache_manager.py:322-326. No release
  0.16.0-0.18.1 has a full-prompt gate, option or env var (no scheduler_reserve_full_isl,
  full_sequence_must_fit nor can_fit_full_sequence anywhere in the vllm/ tree of
  0.16.0, 0.17.0, 0.17.1, 0.18.0, 0.18.1; envs.py has no such variable). A long prompt admitted
  beside running requests can then run the pool dry mid-prefill, and the scheduler preempts
  the last running request (recompute): vLLM PR #37307 ("[Core] add option to schedule
  requests based on full ISL", merged 2026-03-17, in no release before 0.19.0) describes it;
  its description offers the gate by env var, but 0.19.0 ships it as a config field, on.
- From 0.19.0, the whole prompt, by default: SchedulerConfig.scheduler_reserve_full_isl = True
  (0.19.0 config/scheduler.py:139; 0.20.0-0.26.0 :140; 0.32.0 :190), a `vllm serve` flag
  --[no-]scheduler-reserve-full-isl (0.19.0 engine/arg_utils.py:1250-1253; 0.32.0 :1760-1763).
  No release had it as an option that was off by default. 0.19.0-0.20.2 check it apart before
  allocate_slots: KVCacheManager.can_fit_full_sequence, the blocks of min(num_tokens,
  max_model_len) less the prefix hits against the free blocks (0.19.0 v1/core/kv_cache_manager.
  py:218-255, called at v1/core/sched/scheduler.py:732-744; 0.20.0 :225 and :744-756). From
  0.21.0 allocate_slots takes it as full_sequence_must_fit (0.21.0 v1/core/sched/scheduler.py:
  711, v1/core/kv_cache_manager.py:335; 0.32.0 v1/core/sched/scheduler.py:1270,
  v1/core/kv_cache_manager.py:522, which adds the watermark blocks kvplan does not model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.versions import version_key
from kvplan.engines.vllm.options import vllm_options

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs

# The last release that admits on the first chunk (0.18.1); 0.19.0 added
# scheduler_reserve_full_isl, default True (module docstring).
FIRST_CHUNK_ADMISSION_UNTIL = "0.18.1"


def vllm_full_isl_admission(version: str | None) -> bool:
    """Whether vLLM `version` (None: the newest) admits a waiting request only when its whole
    prompt fits in the free blocks by default (module docstring); False: on its first chunk."""
    return version is None or version_key(version) > version_key(FIRST_CHUNK_ADMISSION_UNTIL)


def vllm_admission(inputs: PlanInputs) -> bool:
    """Whether the vLLM engine `inputs` describe admits on the whole prompt: --[no-]scheduler-
    reserve-full-isl where given (`--engine-arg`, kvplan.engines.vllm.engine_args: from 0.19.0
    only), else its release's default (vllm_full_isl_admission)."""
    asked = vllm_options(inputs).reserve_full_isl
    return vllm_full_isl_admission(inputs.engine_version) if asked is None else asked
