"""SGLang's TokenizerManager between the client and the scheduler: the one asyncio loop that
tokenizes every text prompt and streams every output back (opt-in: `kvplan simulate --frontend
--engine sglang`). Pure: a version in, a stage out.

Read in the 0.5.9 sdist (python/sglang/srt/..., PyPI sglang-0.5.9.tar.gz; line numbers are its):
- one TokenizerManager, in the HTTP server's process, on its event loop: `tokenizer_worker_num`
  defaults to 1 (server_args.py:289; more workers are the opt-in multi-tokenizer mode).
- per request, `TokenizerManager.generate_request` (managers/tokenizer_manager.py:490) awaits
  `_tokenize_one_request` (:666), whose text prompt goes to `_tokenize_texts`; with the dynamic
  batch tokenizer off (`enable_dynamic_batch_tokenizer` False, server_args.py:642) it calls
  `self.tokenizer(tokenizer_input)` (:657), a synchronous Rust encode inside a coroutine: the
  loop runs nothing else meanwhile. `enable_tokenizer_batch_encode` (False, server_args.py:590)
  batches only a request that carries several texts, not requests sent together. The
  tokenized request is then pickled onto the scheduler's ZMQ socket, one request at a time
  (`_send_one_request`, :1066 `send_to_scheduler.send_pyobj`), before the coroutine first
  yields the loop (`_wait_one_response`, :1100). So requests sent together reach the scheduler
  one by one, each after its own and every earlier prompt's tokenizing.
- outputs: the scheduler sends each step's tokens to the detokenizer process
  (managers/detokenizer_manager.py:144 `event_loop`, :148 recv, its batch decode at :200/:215,
  :151 send), every step (`stream_interval` 1, server_args.py:354); the TokenizerManager's
  `handle_loop` (:1467), a task on the same loop, receives them (`recv_from_detokenizer`) and
  `_handle_batch_output` (:1476) wakes each request's `_wait_one_response`, which streams its
  chunk. A step's tokens therefore reach the client only when the loop is free: while it is
  tokenizing a burst of prompts, the outputs of the requests already running wait (the
  prospective61 Qwen3-8B 8,192-token runs: the first 50 requests' first tokens at one moment).

kvplan's stage (`TokenizerManagerStage`), on kvplan.analysis.simulate.frontend.ServerQueue: the
ingestion a FIFO single server of `s_per_prompt_token` x prompt tokens per request (no
per-request time, no latency: not measured, a lower bound), and after every engine step an
output stage of no time of its own that waits for the loop (the step's tokens reach the client
when the tokenizing booked before them is done). The per-output work (`_handle_batch_output`,
the chunk's JSON) is not measured: 0, a lower bound. The detokenizer's own process is not
modelled (it does not hold the loop).

The constant is measured, not fitted to a serving row: tests/benches/sglang_frontend_cost.py
times `self.tokenizer([text])` and the ids' pickling on bench_serving's random-dataset text,
with a 32,000-token byte-level BPE (no checkpoint's tokenizer is on this machine), on one core
of this host (`SGLANG_TOKENIZE_S_PER_TOKEN_FIT` says which); a serving host's CPU and Qwen3's
own tokenizer differ. The same path is in the 0.5.3 sdist (tokenizer_manager.py:540 the
synchronous `self.tokenizer(...)`, :815 `send_pyobj(tokenized_obj)`, :1294 `handle_loop`;
server_args.py:160 tokenizer_worker_num 1, :208 stream_interval 1, :386 / :423 batch encode and
the dynamic batch tokenizer off); other releases are not read, and kvplan applies the rule to
every SGLang release.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.fitted import Fitted
from kvplan.engines.vllm.frontend import VLLM_API_OUTPUT_HOST, ApiOutputCost, ApiServerCost

# Measured by tests/benches/sglang_frontend_cost.py: tokenize + pickle per prompt token on
# bench_serving's prose text of 1,024 / 4,096 / 8,192 tokens, one core, thread CPU time,
# median of 5 prompts each; three runs gave 1.102 / 1.106 / 1.085, 0.879 / 1.109 / 0.997 and
# 0.897 / 0.992 / 1.075 us per token (tokenizing all but 0.015-0.034 of it; `vllm bench
# serve`'s vocabulary-id text 0.96-1.27). The constant is the median of the nine: 1.075 us.
SGLANG_TOKENIZE_S_PER_TOKEN = 1.075e-6  # s per prompt token
SGLANG_TOKENIZE_S_PER_TOKEN_FIT = Fitted(
    value=SGLANG_TOKENIZE_S_PER_TOKEN,
    source="tests/benches/sglang_frontend_cost.py: SGLang 0.5.9's TokenizerManager tokenizing "
           f"(a fast tokenizer's __call__) and pickling per prompt token, measured on "
           f"{VLLM_API_OUTPUT_HOST}; no serving row",
    fitted_on=())


@dataclass(frozen=True, kw_only=True)
class TokenizerManagerStage:
    """SGLang's TokenizerManager loop (module docstring): each text prompt tokenized in turn,
    `s_per_prompt_token` x its tokens, and each step's outputs delivered when the loop is
    free. `source`: where the constant comes from (the output states it)."""

    s_per_prompt_token: float
    source: str

    def ingestion(self) -> ApiServerCost:
        """The serial ingestion: the prompt's tokens only (no per-request time or latency)."""
        return ApiServerCost(s_per_request=0.0, s_per_prompt_token=self.s_per_prompt_token,
                             latency_s=0.0, source=self.source)

    def output(self) -> ApiOutputCost:
        """The output stage: no time of its own (unmeasured, a lower bound), after the loop's
        earlier work."""
        return ApiOutputCost(s_per_step=0.0, s_per_output=0.0, source=self.source)

    def note(self) -> str:
        """What the stage assumes, for the simulation's notes."""
        return (f"SGLang TokenizerManager (--frontend): {self.s_per_prompt_token * 1e6:.3f} us "
                "per prompt token, one prompt at a time on the loop that also streams every "
                "step's tokens (which wait for it); per-request and per-output work not "
                f"counted; {self.source}")


SGLANG_TOKENIZER_MANAGER = TokenizerManagerStage(
    s_per_prompt_token=SGLANG_TOKENIZE_S_PER_TOKEN,
    source=f"measured per prompt token on {VLLM_API_OUTPUT_HOST} with a 32,000-token BPE "
           "(tests/benches/sglang_frontend_cost.py); a serving host's CPU and the model's "
           "tokenizer differ")
