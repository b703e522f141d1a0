"""TensorRT-LLM's cache transceiver, how many transfers each rank runs at once (issue 29,
trtctx68; found by dis3trt68, tests/benches/dis3trt68.py item 1), for the closed-loop simulation
(kvplan.engines.handover.TransferQueue, kvplan.analysis.simulate.disagg_queue).

Read from NVIDIA/TensorRT-LLM as the search index stores it (commit 012f8ad2,
cpp/tensorrt_llm/batch_manager/cacheTransBuffer.cpp, `CacheTransBufferManager`; the 1.1 / 1.2
line's code, the same lines at a2b02652's copy):

- `mRecvBufferCount = common::getEnvRequestKVCacheConcurrent() ?
  common::getEnvKVCacheRecvBufferCount() : 1` and `mSendBufferCount =
  common::getEnvParallelCacheSend() ? common::getEnvKVCacheSendMaxConcurrenceNum() : 1`.
  cpp/tensorrt_llm/common/envUtils.cpp: getEnvRequestKVCacheConcurrent() is
  getBoolEnv("TRTLLM_REQUEST_KV_CACHE_CONCURRENT"), getEnvParallelCacheSend() is
  getBoolEnv("TRTLLM_PARALLEL_CACHE_SEND") (both false unset), getEnvKVCacheRecvBufferCount()
  getUInt64Env("TRTLLM_KVCACHE_RECV_BUFFER_COUNT").value_or(2) and
  getEnvKVCacheSendMaxConcurrenceNum() getUInt64Env("TRTLLM_KVCACHE_SEND_MAX_CONCURRENCY_NUM")
  .value_or(2).
- `assignBufferIndex` waits (`mBuffersCV.wait(... mConcurrence < bufferCount)`) before a send
  or a receive takes a buffer, unless `mOnlyUseDynamicBuffer` (a transfer buffer of 0 bytes:
  cache_transceiver_config.max_tokens_in_buffer x the KV per token, which every recipe read sets
  above 0). So with none of those variables set, each context rank sends one request's KV at a
  time and each generation rank receives one at a time; TensorRT-LLM's disaggregated-service
  docs (environment variables) say the same of the receive side ("reuse the same resource to
  process KV cache transfer for each request sequentially").
- No recipe read sets any of them (dis3trt68: prefill_environment / decode_environment hold
  TLLM_OVERRIDE_LAYER_NUM, TLLM_LOG_LEVEL, TRTLLM_*_DISABLE_GC, TRTLLM_ENABLE_PDL,
  NCCL_GRAPH_MIXING_SUPPORT only).

The context server keeps a context-only request's KV blocks after its step until
`check_context_transfer_status` sees the send done (py_executor.py
`_terminate_disagg_ctx_finished_requests`; kvplan.engines.trtllm.disagg_flow, "read and not
modelled" before trtctx68), and its capacity scheduler (GUARANTEED_NO_EVICT, the default) admits
a prompt only with the blocks of its prompt + max_tokens, which Dynamo's TensorRT-LLM worker sets
to 1 on a prefill request (components/src/dynamo/trtllm/request_handlers/handler_base.py "For
PREFILL mode, set max_tokens=1"; dis3trt68 item 2): `HELD_EXTRA_TOKENS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvplan.engines.handover import TransferQueue

RECV_CONCURRENT_ENV = "TRTLLM_REQUEST_KV_CACHE_CONCURRENT"
RECV_COUNT_ENV = "TRTLLM_KVCACHE_RECV_BUFFER_COUNT"
PARALLEL_SEND_ENV = "TRTLLM_PARALLEL_CACHE_SEND"
SEND_COUNT_ENV = "TRTLLM_KVCACHE_SEND_MAX_CONCURRENCY_NUM"
ENV_COUNT_DEFAULT = 2  # envUtils.cpp: value_or(2) for both counts
HELD_EXTRA_TOKENS = 1  # a prefill request's max_tokens (module docstring)
SOURCE = ("TensorRT-LLM cacheTransBuffer.cpp (012f8ad2): one send and one receive buffer per "
          "rank unless TRTLLM_PARALLEL_CACHE_SEND / TRTLLM_REQUEST_KV_CACHE_CONCURRENT")


def _bool_env(env: Mapping[str, str], name: str) -> bool:
    # envUtils.cpp getBoolEnv: "true if the env variable exists and is set to \"1\"" (`env &&
    # env[0] == '1' && env[1] == '\0'`).
    return env.get(name, "") == "1"


def _count_env(env: Mapping[str, str], name: str) -> int:
    text = env.get(name, "")
    return int(text) if text else ENV_COUNT_DEFAULT


def transceiver_queue(env: Mapping[str, str] | None = None) -> TransferQueue:
    """The transfers per rank at once on each end under the deployment's environment `env`
    (None: none of the variables set, as every recipe read)."""
    env = env or {}
    send = _count_env(env, SEND_COUNT_ENV) if _bool_env(env, PARALLEL_SEND_ENV) else 1
    recv = _count_env(env, RECV_COUNT_ENV) if _bool_env(env, RECV_CONCURRENT_ENV) else 1
    return TransferQueue(send_slots=max(1, send), recv_slots=max(1, recv), sender_holds_kv=True,
                         held_extra_tokens=HELD_EXTRA_TOKENS, source=SOURCE)
