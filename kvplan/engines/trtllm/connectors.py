"""TensorRT-LLM's cache transceiver (disaggregated serving: a context worker and a generation
worker, `cache_transceiver_config` in each worker's options): what one request's handover
moves, read from NVIDIA/TensorRT-LLM main as stored in 2026
(cpp/tensorrt_llm/batch_manager/cacheFormatter.cpp, mlaCacheFormatter.cpp,
cpp/include/tensorrt_llm/batch_manager/kvCacheUtils.h).

- The unit is the block: a pool block holds every layer of its pool, `[layers, 2 (K, V; MLA
  1), heads, tokens_per_block, head_dim]`, so per layer it is one page of the rank's heads
  (`BlockRange::fromAllBlockIds`: the request's block ids, beam 0, each window's pool).
- How many blocks (`getBlockRangeForSending`): every block of the context request, cdiv(I, B)
  (the prompt's KV; the first token goes with the context phase's response). With one window
  size every block moves; with several (VSWA: gpt-oss's 128-token and full layers) each
  window's pool sends its last `window / tokens_per_block + 1` blocks (integer division),
  all of them when fewer, unless TRTLLM_KVCACHE_TRANSFER_ALL_BLOCKS_FOR_WINDOW is set. The
  full layers' window is max_attention_window (the context): every block.
- Heterogeneous TP (`targetIRanks`, `needSendCache`, `pickRecvConnections`): each generation
  rank receives its own heads; from one context rank when its TP is the larger, else from
  the P / D context ranks holding distinct heads (a context rank duplicating a head,
  `mDupHeadFactor`, does not send). MLA (`MLACacheFormatter::needSendCache`,
  `pickRecvConnections`): the latent from one context rank per generation rank.
- `kvCacheMeasureHelper.appendKVCacheTransfer(requestId, ms, size)`: one size per buffer sent
  to one connection, i.e. one transfer per (context rank, generation rank) pair.
Recurrent state, chunked attention, the sparse indexer and draft layers are refused by
kvplan's TensorRT-LLM sizing before this runs (TrtllmRules.refuse_unmodelled).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kvplan._util.errors import InputError
from kvplan._util.units import cdiv
from kvplan._util.versions import version_key
from kvplan.engines.handover import (
    ContextScheduler,
    Handover,
    assemble,
    check_no_recv_interval,
    handover_tps,
    pick_connector,
    unique_head_sources,
)
from kvplan.engines.launch import LaunchLayout
from kvplan.engines.trtllm.disagg_flow import (
    FIRST_TOKEN_STEPS,
    TRANSFER_POLLED,
    context_scheduler,
)
from kvplan.engines.trtllm.dp_balance import TRTLLM_ADP_BALANCE, TrtllmAdpBalance
from kvplan.engines.trtllm.transceiver_queue import transceiver_queue
from kvplan.kv.kinds import CacheKind, LayerCaches, MLACache, SlidingWindowCache
from kvplan.model.spec import ModelSpec

# Read from 2026 main. Before 1.0 the formatter took each window pool's FIRST window / B
# blocks (cacheFormatter.cpp at commit 00c77b3, `maxBlockThisWindow`): a named version
# before 1.0 is refused rather than sized by a rule it did not run.
TRANSCEIVER_SINCE = (1, 0)
BACKENDS = ("default", "ucx", "nixl", "mpi")


@dataclass(frozen=True)
class TrtllmTransceiver:
    """The cache transceiver with one backend (`cache_transceiver_config.backend`; DEFAULT
    picks UCX or NIXL): the same blocks move whichever backend carries them."""

    backend: str = "default"

    @property
    def name(self) -> str:
        return f"trtllm-{self.backend}"

    def _check_version(self, version: str | None) -> None:
        if version is not None and version_key(version) < TRANSCEIVER_SINCE:
            raise InputError(f"--disagg: kvplan models TensorRT-LLM's cache transceiver from "
                             f"1.0 (read from 2026 main), not {version}")

    def launch_groups(self, role: str, version: str | None, block_size: int | None
                      ) -> tuple[tuple[str, ...], ...]:
        self._check_version(version)
        return ()

    def launch_env(self, role: str, version: str | None, spec: ModelSpec
                   ) -> tuple[tuple[str, str], ...]:
        return ()

    def launch_yaml(self, role: str, version: str | None, block_size: int | None) -> str:
        # docs/source/features/disagg-serving.md: each worker's --extra_llm_api_options
        # carries cache_transceiver_config; tokens_per_block must match on both sides.
        self._check_version(version)
        text = f"cache_transceiver_config:\n  backend: {self.backend.upper()}\n"
        if block_size is not None:
            text += f"kv_cache_config:\n  tokens_per_block: {block_size}\n"
        return text

    def decode_admission(self, *, pool_tokens: int, max_num_reqs: int, page_tokens: int,
                         dp_attention: int, user_max_running: int | None,
                         recv_interval: int = 1) -> None:
        check_no_recv_interval(recv_interval)
        # The generation server admits a request after its prefill, with its whole
        # reservation (kvplan.engines.trtllm.disagg_flow, (c)): no hold before the prefill.
        return None

    def context_scheduler(self, version: str | None) -> ContextScheduler:
        self._check_version(version)
        return context_scheduler()  # kvplan.engines.trtllm.disagg_flow, (a)

    def no_decode_connector(self, version: str | None, hold_env_s: float | None = None
                            ) -> None:
        return None  # a decode worker without the connector: not read for this engine

    def prefill_balance(self) -> TrtllmAdpBalance:
        return TRTLLM_ADP_BALANCE  # the executor's attention-DP balancing (dp_balance)

    def handover(self, spec: ModelSpec, *, input_len: int, prefill: LaunchLayout,
                 decode: LaunchLayout, decode_stages: tuple[tuple[LayerCaches, ...], ...],
                 block_size: int, version: str | None, inputs: Any = None) -> Handover:
        self._check_version(version)
        p_tp, d_tp = handover_tps(input_len, prefill, decode, "TensorRT-LLM's cache transceiver")
        caches = {c for stage in decode_stages for lc in stage for c in lc.caches}
        windows = {c.window for c in caches if isinstance(c, SlidingWindowCache)}
        several = len(windows) + any(not isinstance(c, SlidingWindowCache)
                                     for c in caches) > 1
        blocks = cdiv(input_len, block_size)
        heads = getattr(spec.attention, "num_key_value_heads", None)

        def units(cache: CacheKind) -> tuple[int, str]:
            if isinstance(cache, SlidingWindowCache) and several:
                tail = cache.window // block_size + 1
                if tail < blocks:
                    return tail, (f"the window pool's last {cache.window} // {block_size} "
                                  "+ 1 blocks (getBlockRangeForSending)")
            return blocks, f"cdiv({input_len}, {block_size}) blocks, the last whole"

        def sources(cache: CacheKind, d_rank: int, nbytes: int) -> list[tuple[int, int]]:
            ranks = ([d_rank * p_tp // d_tp] if isinstance(cache, MLACache)
                     else unique_head_sources(d_rank, d_tp, p_tp, heads))
            return [(r, nbytes // len(ranks)) for r in ranks]

        notes = (f"TensorRT-LLM cache transceiver ({self.backend}): the context ranks send "
                 f"{input_len:,} prompt tokens' blocks of {block_size}.",)
        handover = assemble(connector=self.name, version=version, input_len=input_len,
                            tokens=input_len, block_size=block_size,
                            decode_stages=decode_stages, d_tp=d_tp, p_tp=p_tp, units=units,
                            sources=sources, notes=notes, first_token_steps=FIRST_TOKEN_STEPS)
        # disagg_flow (b); one transfer at a time per rank on each end (transceiver_queue).
        return replace(handover, transfer_polled=TRANSFER_POLLED,
                       transfer_queue=transceiver_queue())


def trtllm_connector(name: str | None) -> TrtllmTransceiver:
    return TrtllmTransceiver(backend=pick_connector(
        name, BACKENDS, "TensorRT-LLM cache transceiver backends"))
