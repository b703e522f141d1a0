"""vLLM's OpenAI API server between the client and the engine core: what delays a request before
the scheduler can see it, by version. Pure: a version in, a rule (or None) out.

`vllm serve` tokenizes a text prompt through `AsyncMicrobatchTokenizer`
(vllm/utils/async_utils.py; the OpenAI serving layer's `_async_tokenizer_pool` in
vllm/entrypoints/openai/serving_engine.py, then the renderers' `get_async_tokenizer`): one
batcher task per kind of call takes the first queued prompt, then keeps collecting until
`batch_wait_timeout_s` (0.002 s, the constructor's default, which the server never overrides)
has passed since it took the first one, or until `max_batch_size` (32) prompts are held, and only
then tokenizes the batch on its single worker thread. A request that finds the batcher idle
therefore waits the whole 2 ms before its tokens exist; one that joins an open batch waits for
that batch's deadline. The microbatcher came with vllm-project/vllm PR 19334 (mid-2025) and was
removed by PR 45759 (merged 2026-06-16: "uses a 2ms wait_timeout, which is too large for
preprocessing, as the normal time for most tokenizer.encode calls is ~0.1ms"); it is in the
documented source of 0.15.0 and 0.22.1 and gone from 0.24.0's (vllm/utils/async_utils.py) and
from the 0.32 wheel read here (whose renderers run the tokenizer on a thread pool, no wait).
kvplan applies it from 0.11 (the earliest release it takes async scheduling's era from; releases
before 0.11 not checked) to 0.23.

Not modelled: the tokenizer's own time, HTTP parsing, the ZMQ hop to the engine core, and the
output path (detokenization, server-sent events), for which the code gives no cost. An engine
run in process (`AsyncLLM.generate` with a text prompt, as AccelMark's runner does) tokenizes
synchronously in its input processor: no batch wait.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.versions import version_key

_MICROBATCH_SINCE = (0, 11)
_MICROBATCH_REMOVED = (0, 24)


@dataclass(frozen=True, kw_only=True)
class TokenizerBatching:
    """A tokenizer batcher in front of the engine: a batch opens with the first prompt that
    finds the batcher idle and is tokenized when `wait_s` has passed since, or as soon as it
    holds `max_batch` prompts."""

    wait_s: float
    max_batch: int


# AsyncMicrobatchTokenizer.__init__ defaults (vllm/utils/async_utils.py, 0.15.0 to 0.22.1).
VLLM_API_TOKENIZER_BATCHING = TokenizerBatching(wait_s=0.002, max_batch=32)


def vllm_api_tokenizer_batching(version: str | None) -> TokenizerBatching | None:
    """The tokenizer batcher of `vllm serve` at `version` (module docstring), None where it has
    none. No version: the newest kvplan knows (none)."""
    key = version_key(version)
    if _MICROBATCH_SINCE <= key < _MICROBATCH_REMOVED:
        return VLLM_API_TOKENIZER_BATCHING
    return None
