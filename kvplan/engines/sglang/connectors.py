"""SGLang's disaggregated prefill/decode (`--disaggregation-mode prefill|decode`): what one
request's handover moves, as python/sglang/srt/disaggregation/ selects it, read from
sgl-project/sglang main as stored in 2026 (prefill.py, common/conn.py, mooncake/conn.py; the
NIXL backend, nixl/conn.py, moves the same buffers, its Mamba and SWA-pool ones from 0.5.9).
Push mode: the prefill ranks WRITE into the pages the decode rank allocated and registered.

- What is registered (prefill.py `_init_kv_manager`): the token pool's
  `get_contiguous_buf_infos()`: one buffer per layer for K and one for V (MLA: one latent
  buffer per layer), `kv_item_len` = one page of one layer; hybrid pools add `state_*`
  buffers (`setup_state_kv_args`: the sliding-window pool, the Mamba pool, the NSA indexer
  keys), sent by `maybe_send_extra`. The aux metadata (output ids, logprobs) is not KV and
  not counted.
- How many tokens (prefill.py `pop_bootstrapped`): `kv_to_page_num(len(origin_input_ids))`,
  every page of the prompt (T = I, the last page whole: `send_kvcache` moves `item_len x
  pages`). The first output token travels in the aux buffers.
- Sliding window, in SGLang's separate SWA pool only (`is_hybrid_swa`: gpt-oss from 0.5.8,
  Llama 4; kvplan.engines.sglang.pools.hybrid_swa): prefill.py `send_kv_chunk` `_swa_payload`
  sends the pages of [floor(max(0, T - w) / page) x page, T), w = the model's
  `get_attention_sliding_window_size` (gpt-oss: sliding_window - 1, "SGLang assumes
  exclusive"). Without that pool (gemma-2/3) the sliding layers live in the full pool: every
  page. Llama 4's chunked layers are that pool's local layers, w = attention_chunk_size (the
  pages of the last chunk-size tokens; kvplan.engines.sglang.state_transfer).
- Mamba (`_mamba_payload`): the request's one state slot per layer, conv + SSM, whole.
- These hybrid payloads from 0.5.4 (mooncake) and 0.5.9 (NIXL) only: refused before
  (kvplan.engines.sglang.state_transfer).
- NSA indexer keys (`_nsa_payload`): every page of the prompt, like the latent.
- Heterogeneous TP (common/conn.py `CommonKVReceiver`, mooncake/conn.py
  `send_kvcache_slice`): MLA (and the indexer) from one prefill rank, the rest dummies;
  MHA/GQA with decode TP larger: from prefill rank `d x P / D`, the decode rank's
  `max(1, H / D)` heads of every token slot of every page; with prefill TP larger: from
  every one of the P / D prefill ranks, each its `max(1, H / P)` heads -- no deduplication,
  so when H < P replicated heads are written once per replica. The SWA pool's pages likewise
  from 0.5.22 (refused before); the Mamba slot cut on its TP axis, each decode rank its own
  slot's bytes (from one prefill rank, or 1 / (P / D) from each of P / D), from 0.5.9 on
  mooncake and 0.5.11 on NIXL (refused before): kvplan.engines.sglang.state_transfer.

The time side (`Handover.first_token_steps`, `prefill_lookahead`, `prefill_random_rank`), read
in the releases the measured rows ran (0.5.5.post2, 0.5.8, 0.5.8.post1; the same code in
0.5.0rc0 and 0.5.2) and written after those rows' TTFT came out below the measured (issue 29):
- Decode (decode.py `event_loop_overlap_disagg_decode`, the default overlap loop): each
  iteration polls the transfer queue (`process_decode_queue` -> `pop_transferred`) as the
  previous step starts on the GPU, so a finished transfer is seen on the first step boundary
  after it; that iteration runs the request as a "prebuilt" batch (`get_new_prebuilt_batch`:
  no forward, its first token is the one the prefill sampled and sent in the aux buffers),
  and its result (`process_batch_result` -> stream_output, the first token to the client) is
  processed by the next iteration, after the running step ends: first_token_steps = 1.
  SGLang's prefill server streams nothing the client sees (its `stream_output` closes the
  request with FINISH_LENGTH(0) once the transfer is done).
- Prefill (prefill.py `event_loop_overlap_disagg_prefill`): an iteration forms and launches
  its batch, then waits for the previous batch's result; so step k + 1 is formed when step k
  starts, and a prompt arriving during step k runs in step k + 2 at the earliest (when no step
  was formed ahead, the next iteration forms one when step k ends). Through 0.5.21; 0.5.22
  rewrote the loop (continuous input polling, two forwards in flight): not read, not applied.
- DP attention on the prefill (data_parallel_controller.py): a request goes to rank
  `bootstrap_room % dp_size` (0.5.0-0.5.5: `round_robin_scheduler` under disaggregation; from
  0.5.8 `load_balance_method` auto -> "follow_bootstrap_room" in prefill mode), the room a
  random 63-bit id the router draws: a uniform random rank, whatever the ranks' queues.
  (kvplan.engines.sglang.dp_balance, `prefill_balance` below.)
The bootstrap (a prompt enters the prefill's waiting queue once the decode worker has
preallocated its pages, `pop_bootstrapped`) and the decode worker's admission by free pages
(`pop_preallocated`): kvplan.engines.sglang.decode_admission (`decode_admission` below).

Read in 0.5.8.post1 (0.5.5.post2 alike) as the prefill-side cause of the rows' high-concurrency
TTFT misses (cfg527) and ruled out, so nothing is modelled for them: the prompts a prefill rank
holds until its transfer succeeds (metadata buffers, 2 x max_running_requests, scheduler.py:
910-913, freed at prefill.py:590; max_num_reqs >= 2048 by default,
model_runner_kv_cache_mixin.py:257-265; the KV pool: ~430k bf16 tokens a B200 DEP4 rank) bind
at over 10x the ~30 prompts a rank held; max_new_tokens 1 on the prefill (prefill.py:221-225);
the chunk budget 16,384 // dp_size (server_args.py:955-958, :1937) is what the simulation
takes; the overlap loop is kept in prefill mode (scheduler.py:2980-2983; server_args.py:2328-
2341 only turns CUDA graphs off, and kvplan prices SGLang's eager prefill launches); mooncake
moves the KV off the scheduler's thread (conn.py:173-195, 4 queues). These defaults are the
same on B200, GB200 and GB300 (all >= 160 GiB), whose DEP4 workers served 15.6 and 17.2
(B200, cfg527 / cfg532, 122 and 131 prompts in flight), 41.5 (GB200 0.5.8, cfg483) and 42.7
(GB300, cfg576, 105 each at c4096) 1,024-token prompts a second (Little's law over the measured
times): the gap is the deployment's, not a rule of this code.

Read in 0.5.8.post1 for one request at low load (issue 29, pd52: the TP-attention prefill rows
at ISL 8,192, median TTFT ratio 0.51) and ruled out as the missing ~200 ms, so nothing more is
modelled: no loop sleeps (`--sleep-on-idle` off, server_args.py:352; an idle loop only checks
memory, scheduler_runtime_checker_mixin.py:317-335, scheduler.py:2791-2793) and input is read
without blocking (scheduler.py:1197, 1206), so an idle loop spins; the decode worker polls its
preallocation and transfer queues every iteration (decode.py:1001-1026,
`disaggregation_decode_polling_interval` 1, server_args.py:642), preallocating the request's
pages on its first iteration after arrival (the handshake is immediate once the receiver has
not started, nixl/conn.py:814-822) and sending the page indices in one ZMQ message
(nixl/conn.py:775-812); the bootstrap HTTP lookups happen once per prefill address
(common/conn.py:254-433, `connection_pool`); the prefill's polls are one gloo all-reduce of a
uint8 a queued request per iteration (prefill.py:249, :536, utils.py:39-52); its overlap loop
posts the send on the iteration after the forward, at once when no batch follows
(prefill.py:364-399, :427, :478); completion is a NIXL notification read without blocking
(nixl/conn.py:631-665, :836-851) or mooncake's status message (mooncake/conn.py:890-975,
1271-1295); the heartbeat (5 s, environ.py:233) and the 300 s timeouts (:232, :235) run on
their own threads or only bound failures. Together at most a decode step or two beyond what
`first_token_steps` and the transfer already price. At concurrency 4 the FP4 rows are inside
the band (cfg535 / 481 / 569: 1.14, 1.02, 1.00) and the FP8 rows are not (cfg455 / 536 / 519:
0.60, 0.60, 0.58), which a flow cost would hit alike: the gap is the FP8 prefill's time, unread.
Nor the prefill's CUDA graphs or logits: a prefill server runs eager unless piecewise graphs
are on (server_args.py:2337-2341), so no capture rounding; its lm_head runs on each prompt's last
position only (logits_processor.py:421-440), one row of 7,168 x 129,280 a prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kvplan._util.errors import InputError
from kvplan._util.units import cdiv
from kvplan._util.versions import version_key
from kvplan.engines.handover import Handover, assemble, handover_tps, pick_connector
from kvplan.engines.launch import LaunchLayout
from kvplan.engines.sglang.decode_admission import SglangDecodeAdmission, sglang_decode_admission
from kvplan.engines.sglang.dp_balance import BOOTSTRAP_ROOM, SglangBootstrapRoom
from kvplan.engines.sglang.index_cache import check_index_cache_offload
from kvplan.engines.sglang.pools import hybrid_swa
from kvplan.engines.sglang.state_transfer import (
    check_hybrid_transfer,
    check_state_slices,
    state_slice_note,
)
from kvplan.engines.sglang.swa_split import sglang_window
from kvplan.kv.kinds import (
    CacheKind,
    ChunkedLocalCache,
    IndexerCache,
    LayerCaches,
    MLACache,
    RecurrentState,
    SlidingWindowCache,
)
from kvplan.model.spec import ModelSpec

# The rules above are read from 2026 main; the M-to-N head slicing (send_kvcache_slice)
# and the SWA / Mamba state payloads are 0.5-era code: a named version before 0.5 is refused.
DISAGG_SINCE = (0, 5)
BACKENDS = ("mooncake", "nixl")
# Decode steps after the boundary that sees the transfer done, to the first token (module
# docstring): the overlap loop streams the prebuilt batch's token one iteration later.
FIRST_TOKEN_STEPS = 1.0
# The last release whose prefill overlap loop forms one step ahead as read (module docstring).
PREFILL_LOOKAHEAD_UNTIL = (0, 5, 21)


@dataclass(frozen=True)
class SglangDisagg:
    """SGLang's `--disaggregation-mode` with one transfer backend (mooncake, the default, or
    nixl): the same buffers move whichever backend carries them."""

    backend: str = "mooncake"

    @property
    def name(self) -> str:
        return f"sglang-{self.backend}"

    def _check_version(self, version: str | None) -> None:
        if version_key(version) < DISAGG_SINCE:
            raise InputError(f"--disagg: kvplan models SGLang's disaggregation from 0.5 (read "
                             f"from 2026 main's srt/disaggregation/), not {version}")

    def launch_groups(self, role: str, version: str | None, block_size: int | None
                      ) -> tuple[tuple[str, ...], ...]:
        # docs/advanced_features/pd_disaggregation.md: both roles name their mode and the
        # same backend; the page size must match (the bootstrap server publishes it).
        self._check_version(version)
        page = (("--page-size", str(block_size)),) if block_size is not None else ()
        return page + (("--disaggregation-mode", role),
                       ("--disaggregation-transfer-backend", self.backend))

    def launch_env(self, role: str, version: str | None, spec: ModelSpec
                   ) -> tuple[tuple[str, str], ...]:
        return ()

    def launch_yaml(self, role: str, version: str | None, block_size: int | None) -> str:
        return ""

    def decode_admission(self, *, pool_tokens: int, max_num_reqs: int, page_tokens: int,
                         dp_attention: int, user_max_running: int | None,
                         recv_interval: int = 1) -> SglangDecodeAdmission:
        # The preallocation that gates the prefill (kvplan.engines.sglang.decode_admission).
        return sglang_decode_admission(pool_tokens=pool_tokens, max_num_reqs=max_num_reqs,
                                       page_tokens=page_tokens, dp_attention=dp_attention,
                                       user_max_running=user_max_running,
                                       recv_interval=recv_interval)

    def context_scheduler(self, version: str | None) -> None:
        return None  # its scheduler is simulated (EngineRules.prefill_step_defaults)

    def no_decode_connector(self, version: str | None, hold_env_s: float | None = None
                            ) -> None:
        return None  # a decode worker without the connector: not read for this engine

    def prefill_balance(self) -> SglangBootstrapRoom:
        return BOOTSTRAP_ROOM  # the prefill's DP rank by the bootstrap room (dp_balance)

    def handover(self, spec: ModelSpec, *, input_len: int, prefill: LaunchLayout,
                 decode: LaunchLayout, decode_stages: tuple[tuple[LayerCaches, ...], ...],
                 block_size: int, version: str | None, inputs: Any = None) -> Handover:
        self._check_version(version)
        check_index_cache_offload(spec, version, "--disagg --engine sglang")
        p_tp, d_tp = handover_tps(input_len, prefill, decode, "SGLang's disaggregation")
        caches = [c for stage in decode_stages for lc in stage for c in lc.caches]
        swa_pool = inputs is not None and hybrid_swa(spec, inputs)
        local = (SlidingWindowCache, ChunkedLocalCache)
        states = [c for c in caches if isinstance(c, RecurrentState)]
        # Which releases send the Mamba slot and the SWA pool's pages, and between unequal TP
        # sizes how (kvplan.engines.sglang.state_transfer).
        check_hybrid_transfer(backend=self.backend, version=version, p_tp=p_tp, d_tp=d_tp,
                              pp=decode.pp, mamba=bool(states),
                              swa_pool=swa_pool and any(isinstance(c, local) for c in caches))
        for state in dict.fromkeys(states):
            check_state_slices(spec, state, p_tp, d_tp)
        tokens = input_len
        page = block_size
        heads = getattr(spec.attention, "num_key_value_heads", None) or p_tp

        def units(cache: CacheKind) -> tuple[int, str]:
            if cache.is_state:
                return 1, "the request's state slot (_mamba_payload)"
            if swa_pool and isinstance(cache, local):
                # _swa_payload: the pages of the last w tokens, w = the runner's
                # sliding_window_size (Llama 4's chunked layers: attention_chunk_size).
                w = sglang_window(cache.window if isinstance(cache, SlidingWindowCache)
                                  else cache.chunk, spec.model_type)
                start = max(0, tokens - w) // page * page
                return cdiv(tokens - start, page), (
                    f"pages of tokens [{start:,}, {tokens:,}): window {w} (_swa_payload)")
            return cdiv(tokens, page), f"cdiv({tokens}, {page}) pages, the last whole"

        def sources(cache: CacheKind, d_rank: int, nbytes: int) -> list[tuple[int, int]]:
            if cache.is_state and p_tp > d_tp:
                # _send_mamba_state_slice, aggregation: each of the P / D prefill ranks writes
                # its whole slot, 1 / (P / D) of the decode rank's (check_state_slices).
                ratio = p_tp // d_tp
                return [(d_rank * ratio + k, nbytes // ratio) for k in range(ratio)]
            if cache.is_state or isinstance(cache, (MLACache, IndexerCache)) or p_tp <= d_tp:
                return [(d_rank * p_tp // d_tp, nbytes)]
            # send_kvcache_slice (the SWA pool's pages alike from 0.5.22, _send_swa_state_slice):
            # each of the P / D prefill ranks writes its own max(1, H / P) heads into the
            # decode rank's max(1, H / D)-head slots.
            ratio = p_tp // d_tp
            src_heads, dst_heads = max(1, heads // p_tp), max(1, heads // d_tp)
            return [(d_rank * ratio + k, nbytes * src_heads // dst_heads)
                    for k in range(ratio)]

        notes = (f"SGLang ({self.backend}): the prefill ranks write {tokens:,} prompt tokens' "
                 f"pages of {page} into the decode rank's pages.",) + tuple(
            state_slice_note(state, version) for state in dict.fromkeys(states)
            if p_tp != d_tp)
        handover = assemble(connector=self.name, version=version, input_len=input_len,
                            tokens=tokens, block_size=page, decode_stages=decode_stages,
                            d_tp=d_tp, p_tp=p_tp, units=units, sources=sources, notes=notes,
                            first_token_steps=FIRST_TOKEN_STEPS)
        return replace(handover, prefill_random_rank=True, prefill_lookahead=(
            version_key(version) <= PREFILL_LOOKAHEAD_UNTIL))


def sglang_connector(name: str | None) -> SglangDisagg:
    return SglangDisagg(backend=pick_connector(name, BACKENDS,
                                               "SGLang transfer backends kvplan models"))
