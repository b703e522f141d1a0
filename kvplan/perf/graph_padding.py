"""A step replayed from a CUDA graph runs at the graph's size: the step's tokens padded up to the
next captured size, the padding rows attending nothing.

vLLM 0.11.0 (read in the 0.11.0 wheel; `kvplan simulate` pads every vLLM release alike):
v1/worker/gpu_model_runner.py:1927-1935 `_get_num_input_tokens` pads the step's scheduled tokens
to `pad_for_cudagraph` (config/__init__.py:240-245: `bs_to_padded_graph_size`, the next capture
size) whenever CUDA graphs are on and the step holds at most the largest capture size; above it
the step runs eagerly at its own size (:1937-1944). The logits are taken on the real rows only
(:2330-2331 `hidden_states[logits_indices]`). The capture sizes are the engine's
(kvplan.engines.vllm.budget.vllm_cuda_graph_sizes).

So a padded step's time is its dense part (every GEMM, the MoE, the norms, the collectives) at
the padded tokens, and its attention core and its head (the ops that depend on the requests and
their contexts, `ATTENTION_CORE_OPS`) at the real ones: `kvplan simulate`'s step
(kvplan.perf.mixed_step.MixedStepCost.dense_seconds) and the cost model's decode step
(kvplan.perf.costmodel.predict, given `CostInputs.graph_sizes`) compose it here alike.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence

# by_op entries of roofline.step_time that depend on the requests rather than the step's token
# rows (the attention core over the requests' contexts; the naive MLA up-projection, whose share
# is in the prefill form's FLOPs; the lm_head and its gathers over the logit rows; the recurrent
# state; DeepSeek's indexer): a padded step charges them at the real requests.
ATTENTION_CORE_OPS = ("attention", "mla_up_proj", "lm_head", "tp_logits_gather",
                      "logits_gather", "recurrent_state", "indexer", "indexer_topk")


def padded_tokens(tokens: int, graph_sizes: Sequence[int]) -> int:
    """The tokens a step of `tokens` runs at: the smallest captured size >= `tokens`, or
    `tokens` itself above the largest (eager) or with no graphs (`graph_sizes` empty).
    `graph_sizes` ascending."""
    i = bisect_left(graph_sizes, tokens)
    return graph_sizes[i] if i < len(graph_sizes) else tokens


def padded_step(padded_s: float, padded_by_op: Mapping[str, float],
                real_by_op: Mapping[str, float]) -> tuple[float, dict[str, float]]:
    """(seconds, by_op) of a padded step (module docstring): the step timed at the padded
    tokens (`padded_s`, `padded_by_op`) with its ATTENTION_CORE_OPS taken from the step timed at
    the real ones (`real_by_op`). Units are the caller's (both maps in the same)."""
    by_op = {k: v for k, v in padded_by_op.items() if k not in ATTENTION_CORE_OPS}
    core = {k: v for k, v in real_by_op.items() if k in ATTENTION_CORE_OPS}
    seconds = (padded_s - sum(v for k, v in padded_by_op.items() if k in ATTENTION_CORE_OPS)
               + sum(core.values()))
    return seconds, {**by_op, **core}
