"""TensorRT-LLM's disaggregated flow, the time side (issue 29): how a context (prefill) server
batches prompts, where the client's first token comes from, and how a generation (decode)
server takes a transferred request in, for the closed-loop simulation
(kvplan.analysis.simulate.disagg_sim). Read from the PyTorch backend's executor
(tensorrt_llm/_torch/pyexecutor/py_executor.py, the 1.2 line as GitHub stores it: the
release aiconfigurator's dynamo matrix pins to dynamo 0.8.1, 1.2.0rc6.post1,
src/aiconfigurator/generator/facts/runtimes/dynamo.yaml at 095f58a5) and its LLM API
defaults (tensorrt_llm/llmapi/llm_args.py).

- The context server (a): each rank's scheduler (one per attention-DP rank) takes, per
  step, waiting prompts up to `max_batch_size` requests and `max_num_tokens` tokens (the
  micro-batch scheduler), the capacity scheduler's GUARANTEED_NO_EVICT admitting a prompt
  only with its KV; without `enable_chunked_prefill` (llm_args default False) a prompt runs
  whole. Defaults: max_batch_size 2048, max_num_tokens 8192 (llm_args BaseLlmArgs). The
  context servers run `disable_overlap_scheduler: true` (aiconfigurator's generator,
  generator/rule_plugin/trtllm.rule at 095f58a5: `prefill disable_overlap_scheduler =
  true`): `_executor_loop`, the next step formed after the last one ends (no lookahead).
- The first token (b): the context server samples it (a context-only request's step), and
  the KV and that token go to the generation server; the generation server returns it to the
  client when it first schedules the request after the transfer completes:
  `_executor_loop_overlap` calls `_prepare_disagg_gen_transmission_complete` then
  `_handle_first_token_response(scheduled_batch)` ("Return the first token to the client":
  each generation request with py_decoding_iter == 1 gets a response) before that step's
  forward, which makes the second token. So the first token comes at the generation
  server's first step boundary at or after the KV is there: `FIRST_TOKEN_STEPS` 0 (the
  request decodes from that step: O - 1 steps to its last token).
  When the KV is there is polled (trtgap54, issue 29; the 1.1 / 1.2 line's py_executor.py
  as GitHub stores it, with ctx_in_transmission_requests a dict and batch_wait_timeout_iters,
  the nearest to 1.2.0rc6.post1 found): a new generation-only request enters at a step
  boundary (`_prepare_and_schedule_batch` -> `_fetch_and_activate_new_requests`), the
  capacity scheduler fits it (`fitting_disagg_gen_init_requests`) and
  `_prepare_disagg_gen_init` allocates its blocks and starts the transfer there
  (`_recv_disagg_gen_cache` -> `request_and_receive_async`); its completion is checked at the
  start of each later iteration (`_check_disagg_gen_transfer_status` before `_schedule`,
  at_least_num 0 while any active request is not in transmission: non-blocking), so the
  request joins at the first boundary after the one that took it in, at or after start +
  transfer: `TRANSFER_POLLED` (the simulation's `transfer_polled`, about one decode step
  more than a transfer counted from the handover). With nothing else active the check blocks
  (`_recv_disagg_gen_cache`: `block_transfer`, at_least_num 1) and the request is scheduled
  as the transfer ends. The context server does not wait for the send: after its step a
  context-only request's response goes out (`_handle_responses`), it leaves
  active_requests for ctx_in_transmission_requests (its blocks held, its seat and sequence
  slot freed: `_send_disagg_ctx_cache`), and the send is checked non-blocking
  (`check_context_transfer_status(0)`); it blocks (at least one) only when no request fits.
- The generation server's admission (c): a transferred request enters as
  DISAGG_GENERATION_INIT; the capacity scheduler (GUARANTEED_NO_EVICT) admits it only with
  the KV for its whole prompt + max_tokens and a seat under max_batch_size, then the
  transfer runs (DISAGG_GENERATION_TRANS_IN_PROGRESS). It is admitted after its prefill
  (no hold before the context server, unlike SGLang's preallocation): `decode_admission`
  None, the running requests bounded by requests of I + O tokens the pool holds (the
  reservation) and by max_batch_size. (The simulation transfers first and seats second;
  with a free seat, as at every replayed row's load, the two orders agree.)
- Attention DP (d): new requests go to the ranks by a heap on their active tokens, then
  requests (executor_request_queue.py `_balance_requests_across_ranks`: "prioritizing ranks
  with fewer tokens"), each up to an even share of the active requests, the ranks stepping
  together (a dummy request on an idle one): near the simulation's least-loaded pick (prompt
  tokens queued on a prefill rank, requests held on a decode rank) and lockstep ranks. No
  replayed row runs attention DP (kvplan refuses TensorRT-LLM's attention DP with an MoE
  model), so this part is not tested by the rows.
Read by trtdisttft55 and modelled since trtctx68 (kvplan.engines.trtllm.transceiver_queue, the
simulation's kvplan.analysis.simulate.disagg_queue): the cache transceiver's buffers
(cpp/tensorrt_llm/batch_manager/cacheTransBuffer.cpp: one receive buffer per generation rank
unless TRTLLM_REQUEST_KV_CACHE_CONCURRENT, one send buffer per context rank unless
TRTLLM_PARALLEL_CACHE_SEND), which put one rank's transfers one after another, and the context
server's blocks held until the send ends (below). Read and not modelled: the
attention-DP balance (`_balance_adp_requests`, only with attention_dp_config.enable_balance,
releasing a context-only server's prompts at once) and batch waiting (`_waiting_requests`,
batch_wait_*; off under attention DP, and unset by aiconfigurator's generator).
Read by trtdis57 (the same section, from the measured side) and modelled since trtctx68: the
context server holds a prompt's KV blocks after its step until `check_context_transfer_status`
sees the send done (`_terminate_disagg_ctx_finished_requests` frees them; its seat and sequence
slot are free at once), so a pool full of prompts awaiting transfer stops its capacity
scheduler; at the rows' rates the prompts so held (Little's law, at most X x TTFT a rank) are
under 1% of the pool at the median row (tests.benches.disagg_trtllm_load). Taking prompts in
under attention DP
(executor_request_queue.py `_fetch_new_requests_attention_dp`: up to ranks x
max_num_active_requests, the engine's max_batch_size a rank, less the active ones, each
iteration, waiting on the queue only when every rank is idle) is rule (a) per rank.
Not read here: MTP / speculative decoding (kvplan times a decode step without a draft),
CUDA-graph padding of the decode batch, the overlap scheduler's one step of
lookahead on the generation server (its step time is the cost model's).
"""

from __future__ import annotations

from kvplan.engines.handover import ContextScheduler
from kvplan.engines.trtllm.budget import TRTLLM_MAX_NUM_TOKENS

# py_executor.py `_handle_first_token_response` before the forward (module docstring, (b)).
FIRST_TOKEN_STEPS = 0.0
# py_executor.py `_prepare_disagg_gen_init` / `_check_disagg_gen_transfer_status` (module
# docstring, (b)): the transfer starts at a boundary and is seen done at a later one.
TRANSFER_POLLED = True
# llm_args.py BaseLlmArgs: max_batch_size default 2048, enable_chunked_prefill False;
# max_num_tokens 8192 (kvplan.engines.trtllm.budget TRTLLM_MAX_NUM_TOKENS).
MAX_BATCH_SIZE = 2048
CHUNKED_PREFILL = False


def context_scheduler() -> ContextScheduler:
    """A context rank's default step limits (module docstring, (a))."""
    return ContextScheduler(max_num_tokens=TRTLLM_MAX_NUM_TOKENS, max_batch_size=MAX_BATCH_SIZE,
                            chunked=CHUNKED_PREFILL)
