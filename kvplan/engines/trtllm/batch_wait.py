"""TensorRT-LLM's batch waiting: context requests held back while a step's tokens are few
(`batch_wait_timeout_iters`, `batch_wait_max_tokens_ratio`, llmapi/llm_args.py; both 0 by
default: off).

tensorrt_llm/_torch/pyexecutor/py_executor.py, read in the search index's stored copies (no
release tag readable here: the repository is too large to fetch; ids 736889464, a 1.1 - 1.2
line version, and 46304110896, a later one with the same rule split into its own method):
`_schedule` calls `_waiting_requests` only where attention DP is off, batch waiting is on
(`batch_wait_timeout_iters > 0 or batch_wait_max_tokens_ratio > 0`) and the scheduler picked
both context and generation requests ("if no generation requests, no need to wait, to avoid
dead waiting"). `_waiting_requests`: the step's tokens are every picked context request's
tokens (`len(ctx_req.get_tokens(0))`: its whole prompt, not its chunk) plus one a generation
request (+ its draft tokens: none here); the waiting stops when the counter has reached
`batch_wait_timeout_iters` or the tokens reach `batch_wait_max_tokens_ratio x max_num_tokens`:
then the context requests run and the counter goes back to 0; otherwise the counter counts up
and the step runs its generation requests only (the context requests stay active). With
`batch_wait_timeout_iters` 0 the counter is always at the limit: nothing waits.
(The later version counts a context request's tokens less its reusable prefix,
`_compute_scheduled_tokens`; the 1.2 line's whole prompt is taken here.)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class BatchWait:
    """batch_wait_timeout_iters and batch_wait_max_tokens_ratio as a launch sets them."""

    timeout_iters: int = 0
    max_tokens_ratio: float = 0.0

    @property
    def on(self) -> bool:
        return self.timeout_iters > 0 or self.max_tokens_ratio > 0


class BatchWaitGate:
    """One executor's `_waiting_requests` counter (module docstring)."""

    def __init__(self, wait: BatchWait, max_num_tokens: int) -> None:
        self.wait = wait
        self.max_num_tokens = max_num_tokens
        self.iters = 0  # batch_wait_iters_count

    def release(self, context_tokens: int, generation: int) -> bool:
        """Whether a step that picked context requests of `context_tokens` prompt tokens and
        `generation` generation requests (both > 0) runs its context requests."""
        tokens = context_tokens + generation
        if (self.iters >= self.wait.timeout_iters
                or tokens >= self.wait.max_tokens_ratio * self.max_num_tokens):
            self.iters = 0
            return True
        self.iters += 1
        return False
