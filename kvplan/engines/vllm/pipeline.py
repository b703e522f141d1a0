"""vLLM V1's pipeline parallelism as its engine core runs it (`--pipeline-parallel-size`), the
rules the serving simulator's pipeline executor follows (kvplan.analysis.simulate.pipeline).

Read in the vLLM 0.32.0 wheel (vllm/; the oracle's install):

- The batch queue: EngineCore keeps ``vllm_config.max_concurrent_batches`` batches in flight
  (v1/engine/core.py:220-226) and steps with ``step_with_batch_queue`` (:698-813): while the
  queue is not full and the scheduler has requests it schedules a new batch and returns without
  blocking (:733-759); when nothing more can be scheduled, or the queue is full, it blocks on
  the oldest batch (:768) and updates the scheduler from its output (:783). A batch's outputs
  therefore reach the scheduler when its last stage ends, in order.
- max_concurrent_batches (config/vllm.py:577-588): PP; PP + 1 with async scheduling on model
  runner V2; async scheduling is turned off at PP > 1 on the V1 runner (:1634-1644).
- No double scheduling: the scheduler advances ``num_computed_tokens`` when it schedules
  (`_update_after_schedule`), so a request whose tokens are all scheduled but not yet back
  gets ``num_new_tokens == 0`` and is skipped (v1/core/sched/scheduler.py:755-771, case
  "PP>1 and we have already scheduled all prompt tokens but they are not finished yet"): a
  decode is in at most one batch at a time, a prompt's next chunk may follow its previous one
  into the pipeline.
- Each stage's layers (distributed/utils.py:126-169 get_pp_indices): ``layers // pp`` each,
  the remainder one a stage from the second-to-last stage backwards (the last stage and, for
  pp > 2, the first keep the smaller share); VLLM_PP_LAYER_PARTITION overrides it.
- The inter-stage send: every non-last rank returns IntermediateTensors (v1/worker/
  gpu_model_runner.py:4224-4229) that the worker sends with ``isend_tensor_dict(...,
  all_gather_group=tp_group)`` (v1/worker/gpu_worker.py:1352-1356): each TP rank sends its
  1 / tp slice, the receiver all-gathers it. The tensors are ``hidden_states`` and
  ``residual`` (model_executor/models/llama.py:400 make_empty_intermediate_tensors), each
  tokens x hidden_size in the activation dtype.
- Logits and sampling run on the last rank only (gpu_model_runner.py:4226-4242).
- CUDA graphs: every stage's runner captures the same sizes over its own layers.

Earlier releases (wheels read: 0.10.0, 0.11.0, 0.12.0, 0.16.0, 0.19.0):

- the batch queue is the executor's max_concurrent_batches (v1/engine/core.py 0.10.0 :129,
  0.11.0 :145, 0.12.0 :177, 0.16.0 :181, 0.19.0 :185): the multiproc executor's PP, 2 with async
  scheduling to 0.12 (v1/executor/multiproc_executor.py 0.10.0 :295-298, 0.11.0 :330-333, 0.12.0
  :415-418), PP at PP > 1 from 0.16 (0.16.0 :432-435, 0.19.0 :469-472);
- step_with_batch_queue (0.10.0 :276-325, 0.11.0 :300-360, 0.12.0 :366-450, 0.16.0 :434-530,
  0.19.0 :421-510) schedules while the queue has room; from 0.11.0 to 0.19.0 it also stops
  scheduling when the oldest batch is already done (``not batch_queue[-1][0].done()``, 0.11.0
  :333, 0.12.0 :426, 0.16.0 :496, 0.19.0 :481) and takes its output first; 0.10.0 and 0.32.0 have
  no such check (`vllm_pp_drains_done`; 0.20 - 0.31 not read, taken as 0.19);
- the no-double-scheduling skip is the same (scheduler.py 0.10.0 :235, 0.11.0 :242, 0.12.0 :292,
  0.16.0 :413, 0.19.0 :446), and get_pp_indices the same split (distributed/utils.py 0.10.0
  :89-124, 0.11.0 :89-124, 0.19.0 :95-129).
"""

from __future__ import annotations

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key

ACTIVATION_BYTES = 2  # bf16 activations (roofline.step_time's act_bytes)
PP_TENSORS = 2  # hidden_states and residual (llama.py:400)


def vllm_pp_partition(num_hidden_layers: int, pp: int,
                      partition: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Layers per stage (distributed/utils.py 0.32.0 :126-169 get_pp_indices); `partition`:
    VLLM_PP_LAYER_PARTITION's, checked as vLLM does (one per stage, summing to the layers)."""
    if pp < 1:
        raise InputError(f"--pp: expected >= 1, got {pp}")
    if partition is not None:
        if len(partition) != pp or sum(partition) != num_hidden_layers or min(partition) < 0:
            raise InputError(f"VLLM_PP_LAYER_PARTITION {','.join(map(str, partition))}: "
                             f"expected {pp} stages summing to {num_hidden_layers} layers")
        return partition
    if num_hidden_layers < pp:
        raise InputError(f"--pp {pp}: the model has {num_hidden_layers} layers")
    parts = [num_hidden_layers // pp] * pp
    for i in range(2, num_hidden_layers % pp + 2):
        parts[-i] += 1
    return tuple(parts)


def vllm_pp_ranges(num_hidden_layers: int, pp: int,
                   partition: tuple[int, ...] | None = None) -> tuple[range, ...]:
    """Each stage's layers as a range (start_layer, end_layer of get_pp_indices)."""
    out, start = [], 0
    for n in vllm_pp_partition(num_hidden_layers, pp, partition):
        out.append(range(start, start + n))
        start += n
    return tuple(out)


def vllm_pp_batch_queue(pp: int, *, async_scheduling: bool, v2_runner: bool) -> int:
    """EngineCore's batch queue at `pp` stages (config/vllm.py 0.32.0 :577-588): PP + 1 with
    async scheduling on the V2 runner, else PP."""
    return pp + 1 if async_scheduling and v2_runner else pp


def vllm_pp_drains_done(version: str | None) -> bool:
    """Whether step_with_batch_queue takes a finished oldest batch's output before scheduling
    again while the queue has room: 0.11 to 0.31 (see the module); not 0.10 nor from 0.32."""
    return (0, 11) <= version_key(version) < (0, 32)


def vllm_pp_send_bytes(tokens: int, hidden_size: int) -> int:
    """The bytes a stage hands the next for a batch of `tokens` tokens (all TP ranks
    together): hidden_states and residual, tokens x hidden_size each, bf16."""
    return PP_TENSORS * tokens * hidden_size * ACTIVATION_BYTES
