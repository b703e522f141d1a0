"""vLLM's KV connectors for disaggregated prefill/decode: what one request's handover moves, as
the connector's own code selects it (read from vLLM 0.32.0's
vllm/distributed/kv_transfer/kv_connector/v1/nixl/ and mooncake/). The rules the two share
(which blocks, how many tokens, which prefill ranks hold a decode rank's heads) are the
functions below, written once; each connector class says where it differs.

NixlConnector (pull mode, the default): the decode worker's ranks READ the prompt's blocks from
the prefill worker's ranks once the prefill finishes.

- Which blocks (nixl/pull_scheduler.py `update_state_after_alloc`, base_scheduler.py
  `get_exchange_clipped_blocks`): the decode side allocates the blocks of the tokens it loads
  and reads every one, the last, partly filled block whole (a block is one descriptor of
  block_len bytes per layer; PR 21074 made the partial block move). Full attention, MLA and
  sparse-MLA indexer keys: cdiv(T, block) blocks per layer. Sliding window, with the hybrid
  KV cache manager on (the default: NixlConnector is `SupportsHMA`, vllm/config/vllm.py): only
  the in-window tail, `cdiv(window, block) + 1` blocks ("add 1 to conservatively account for
  boundary overlap", base_scheduler.py `blocks_per_sw`), at most the cdiv(T, block) there are.
  Before 0.22 a connector turns the hybrid manager off (kvplan.engines.vllm.kv_transfer):
  sliding layers are full attention on both roles and NIXL reads every block of every layer
  (nixl_connector.py 0.11.0 :1284-1290 "assume global attention"; the blocks_per_sw clip,
  nixl_connector.py 0.18.0 :596-609, applies only with the manager on, `_is_hma_required`
  :567-572), read from 0.11. The clip is the same code from 0.18.0 to 0.32.0
  (kvplan.engines.vllm.connector_releases): with the manager on (from 0.22, or asked from
  0.18) it holds from 0.18. NIXL 0.10.0 - 0.17.1 clips Llama 4's chunked layers to their last
  cdiv(chunk, block) blocks (`nixl_llama4_window`; gone in 0.18.0).
  Chunked local attention (Llama 4): to 0.13 it turns the hybrid manager off by default
  (vllm/config/vllm.py, VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE "0"), and
  `unify_hybrid_kv_cache_specs` then makes every local layer full attention: every block
  moves; from 0.14.1 the manager stays on without a connector, but a connector keeps it off
  to 0.21 (as above); from 0.22 it stays on (NixlConnector is SupportsHMA) and kvplan refuses.
  Recurrent (Mamba, GDN) layers, from 0.22: the one state slot (`clip_ssm_state_blocks`; from
  0.27, before it every slot with the speculative scratch: connector_releases), conv and SSM
  state (nixl/base_worker.py `_build_mamba_remote`: the state's own bytes, not the padded
  page).
- How many tokens (base_scheduler.py `_prefill_backoff`): T = I, except models with recurrent
  layers, where the prefill stops one token short and the decode worker recomputes it: T = I - 1.
- Heterogeneous TP (nixl/tp_mapping.py `compute_tp_mapping`, base_worker.py
  `_build_fa_remote`): each decode rank reads its own block length (its heads). Decode TP >=
  prefill TP: from one prefill rank (tp_rank x P / D) at a head offset; prefill TP > decode TP:
  its head slice from P / D prefill ranks, deduplicated by head when KV heads < prefill TP
  (`np.unique` over heads), one read (one transfer) per source rank, block_len / reads each.
  MLA and indexer regions are replicated: one read of the whole block from one rank. Recurrent
  state: read from every one of the P / D ranks when prefill TP is larger.
- Stats (nixl/stats.py): one "transfer" per read posted; "Avg MB per transfer" = the mean of
  bytes / 2**20 over them, rounded to 3 decimals.
- The decode side of TTFT (vllm/v1/core/sched/scheduler.py): a request reaching the decode
  worker waits for the running step to end (half a step on average), is scheduled as
  WAITING_FOR_REMOTE_KVS, and its reads are posted as that step starts (the worker's
  `start_load_kv`). The worker reports finished reads at the end of a step (`get_finished`,
  read by the next `update_from_output`: `_update_waiting_for_remote_kv` "populated on the
  previous step's update_from_output"), so the transfer ends on a step boundary: ceil(transfer
  / step) steps, at least one. With every prompt token loaded, `num_computed_tokens` is set
  one short ("if num_computed_tokens == request.num_tokens: num_computed_tokens -= 1"): the
  next step recomputes the last prompt token and samples the first output token there. So
  `Handover.first_token_steps` = 0.5 + 1 = 1.5 steps beside the quantized transfer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.units import cdiv
from kvplan._util.versions import version_key
from kvplan.engines.handover import (
    Handover,
    KvConnector,
    NoDecodeConnector,
    assemble,
    check_no_recv_interval,
    handover_tps,
    pick_connector,
    unique_head_sources,
)
from kvplan.engines.launch import LaunchLayout
from kvplan.engines.vllm.alloc import get_platform, hybrid_manager_on, mamba_cache_mode
from kvplan.engines.vllm.connector_releases import (
    INDEXER_SINCE,
    MOONCAKE_GQA_HEADS_SINCE,
    MOONCAKE_HETERO_TP_SINCE,
    MOONCAKE_HMA_SINCE,
    MOONCAKE_RECURRENT_SINCE,
    NIXL_HMA_SINCE,
    NIXL_RECURRENT_SINCE,
    mooncake_gqa_tp_runs,
    mooncake_state_slots,
    nixl_state_slots,
)
from kvplan.engines.vllm.dp_balance import VLLM_DP_BALANCE, VllmDpBalance
from kvplan.engines.vllm.nixl_hold import nixl_no_decode_connector
from kvplan.engines.vllm.options import vllm_options
from kvplan.engines.vllm.profiles import vllm_profile
from kvplan.kv.kinds import (
    CacheKind,
    ChunkedLocalCache,
    IndexerCache,
    LayerCaches,
    MLACache,
    SlidingWindowCache,
)
from kvplan.model.spec import ModelSpec

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs

# The KV Transfer metrics log line (PR 25388) and the pull rules above are read from 0.32.0;
# the rules for full attention and MLA (every block, the partial one too: PR 21074) hold from
# 0.11.0, the first release with that log line; sliding layers with the hybrid manager off (a
# connector before 0.22: every block) from 0.11.0 (nixl011_65). Sliding-window clipping, the
# recurrent state and the recurrent backoff by release: kvplan.engines.vllm.connector_releases
# (nixlmc66); the indexer's from 0.32.0 only.
NIXL_SINCE = (0, 11)
# MooncakeConnector (class docstring): in vLLM from 0.13.0; its per-rank slices for unequal TP
# sizes from 0.19.0 (connector_releases).
MOONCAKE_SINCE = (0, 13)
# Decode steps beside the transfer before the first token (module docstring): half a step to
# be scheduled, one to recompute the last prompt token.
FIRST_TOKEN_STEPS = 0.5 + 1


def _replicated(cache: CacheKind) -> bool:
    # base_worker.py register_kv_caches: `is_mla_region` for MLAAttentionSpec (the indexer's
    # cache is an MLAAttentionSpec too, vllm/model_executor/models/deepseek_v2.py).
    return isinstance(cache, (MLACache, IndexerCache))


# NIXL's Llama 4 special case (nixl_connector.py 0.11.0 :869-887, :1284-1306; 0.10.0 :633-648;
# 0.17.1 :1462-1480, :2314-2330; gone in 0.18.0): for hf_config.model_type "llama4" the decode
# worker reads, on each chunked (RoPE) layer, only the last ceil(attention_chunk_size / block)
# of the request's blocks (`local_block_ids[-block_window:]`, no "+ 1"), every block on the
# others. The worker's rule, whatever the allocator did (the layers are full attention there).
NIXL_LLAMA4_WINDOW = ((0, 10), (0, 18))


def nixl_llama4_window(spec: ModelSpec, version: str | None) -> bool:
    """NIXL clips Llama 4's chunked layers to their chunk (NIXL_LLAMA4_WINDOW)."""
    since, until = NIXL_LLAMA4_WINDOW
    model_type = spec.config_model_type or spec.model_type
    return model_type == "llama4" and since <= version_key(version) < until


def _units(cache: CacheKind, tokens: int, block: int, *, hybrid: bool = True,
           chunk_window: bool = False,
           state_slots: tuple[int, str] = (1, "the state slot (clip_ssm_state_blocks)")
           ) -> tuple[int, str]:
    """The blocks (or state slots) of `cache` one request's handover moves: `hybrid`, the
    decode pool runs vLLM's hybrid KV-cache manager (kvplan.engines.vllm.kv_transfer; off:
    sliding and chunked layers are full attention); `chunk_window`: NIXL's Llama 4 clip of
    chunked layers (`nixl_llama4_window`); `state_slots`: a recurrent layer's slots and why
    (the connector's `_state_slots`)."""
    if cache.is_state:
        return state_slots
    blocks = cdiv(tokens, block)
    if isinstance(cache, SlidingWindowCache) and hybrid:
        window = cdiv(cache.window, block) + 1
        if window < blocks:
            return window, f"in-window tail: cdiv({cache.window}, {block}) + 1 (blocks_per_sw)"
        return blocks, f"cdiv({tokens}, {block}): the prompt is inside the window"
    if isinstance(cache, SlidingWindowCache):
        return blocks, (f"cdiv({tokens}, {block}): the sliding layer runs as full attention "
                        "(hybrid KV-cache manager off with a connector before 0.22)")
    if isinstance(cache, ChunkedLocalCache) and chunk_window:
        chunk = cdiv(cache.chunk, block)
        if chunk < blocks:
            return chunk, (f"the chunk's blocks: cdiv({cache.chunk}, {block}) (NIXL's Llama 4 "
                           "block_window, to 0.17)")
        return blocks, f"cdiv({tokens}, {block}): the prompt is inside one chunk"
    if isinstance(cache, ChunkedLocalCache):
        return blocks, (f"cdiv({tokens}, {block}): chunked local runs as full attention "
                        "(hybrid KV-cache manager off)")
    return blocks, f"cdiv({tokens}, {block}), the last block whole"


def _hybrid_manager(caches: list[CacheKind], version: str | None,
                    inputs: PlanInputs | None) -> bool:
    """The decode pool's hybrid KV-cache manager, as the allocator decides it for a role with
    a KV connector (alloc.hybrid_manager_on, kv_transfer): one rule for both."""
    opts = vllm_options(inputs) if inputs is not None else None
    return hybrid_manager_on(
        [c for c in caches if not c.is_state], profile=vllm_profile(version),
        platform=get_platform(inputs.platform if inputs is not None else "cuda"),
        asked=opts.hybrid_kv_cache_manager if opts is not None else None, version=version,
        eagle_drafter=inputs is not None and inputs.speculative_method is not None,
        kv_transfer=True)


def _text(release: tuple[int, int]) -> str:
    return ".".join(map(str, release))


def _spec_and_align(version: str | None, inputs: PlanInputs | None,
                    caches: list[CacheKind]) -> tuple[int, bool]:
    """The drafter's speculative tokens (MambaSpec.num_speculative_blocks) and whether the
    recurrent groups run mamba cache mode 'align' (alloc.mamba_cache_mode: the allocator's
    rule), for a decode role launched with `inputs`."""
    if inputs is None:
        return 0, False
    mode = mamba_cache_mode(vllm_profile(version), inputs.prefix_caching,
                            has_attention=any(not c.is_state for c in caches))
    return inputs.num_speculative_tokens, mode == "align"


def _tokens_moved(input_len: int, caches: list[CacheKind]) -> int:
    """T: with recurrent layers the prefill stops one token short and the decode worker
    recomputes it (NIXL base_scheduler.py `_prefill_backoff`; Mooncake mooncake_connector.py
    0.32.0:946-953 `_get_remote_prefill_token_count`, "N-1 for Mamba models")."""
    recurrent = any(c.is_state for c in caches)
    return input_len - 1 if recurrent and input_len > 1 else input_len


def _sources(cache: CacheKind, d_rank: int, nbytes: int, d_tp: int, p_tp: int,
             kv_heads: int | None) -> list[tuple[int, int]]:
    """The prefill ranks a decode rank's `nbytes` of `cache` come from, and how many each:
    heads deduplicated when prefill TP is larger, MLA / indexer regions replicated (one rank),
    recurrent state from every one of the P / D ranks when prefill TP is larger (each holds a
    slice of the heads), else from one."""
    if cache.is_state:
        ranks = ([d_rank * (p_tp // d_tp) + k for k in range(p_tp // d_tp)]
                 if p_tp > d_tp else [d_rank * p_tp // d_tp])
    elif _replicated(cache):
        ranks = [d_rank * p_tp // d_tp]
    else:
        ranks = unique_head_sources(d_rank, d_tp, p_tp, kv_heads)
    return [(r, nbytes // len(ranks)) for r in ranks]


@dataclass(frozen=True)
class _VllmConnector:
    """What vLLM's connectors share: the launch flags (`--kv-transfer-config` with each role's
    kv_role, the shared block size), no options file, the decode scheduler reached after the
    prefill (the proxy's flow), vLLM's own scheduler on the prefill side, and the handover's
    rules (which blocks, how many tokens, from which ranks: the functions above). A connector
    names its roles, its first release, how it refuses an older one, the code that pairs its
    TP sizes, and where its handover differs (`_refuse`, `_notes`, `_unit_bytes`)."""

    name: str
    roles: tuple[str, str]  # kv_role on the prefill worker, on the decode worker
    since: tuple[int, int]
    since_text: str
    tp_rule: str  # the code that pairs prefill and decode TP sizes (handover_tps' refusals)
    short: str  # the connector as the refusal of an unread layer kind names it
    # SupportsHMA from (the manager on with it, its sliding-window clip read from there) and
    # its recurrent-state handover read from (kvplan.engines.vllm.connector_releases).
    hma_since: tuple[int, int] = (0, 0)
    recurrent_since: tuple[int, int] = (0, 32)
    # The worker clips Llama 4's chunked layers to their chunk (NIXL to 0.17:
    # `nixl_llama4_window`).
    llama4_window: bool = False
    # From this release the worker asserts VLLM_SSM_CONV_STATE_LAYOUT=DS for a model with
    # recurrent layers (NIXL: `launch_env`); None: never.
    conv_state_ds_since: tuple[int, int] | None = None

    def launch_groups(self, role: str, version: str | None, block_size: int | None
                      ) -> tuple[tuple[str, ...], ...]:
        self._check_version(version)
        kv_role = self.roles[0] if role == "prefill" else self.roles[1]
        config = json.dumps({"kv_connector": self.name, "kv_role": kv_role},
                            separators=(",", ":"))
        block = (("--block-size", str(block_size)),) if block_size is not None else ()
        return block + (("--kv-transfer-config", config),)

    def _check_version(self, version: str | None) -> None:
        if version_key(version) < self.since:
            raise InputError(f"--disagg: {self.since_text}, not {version}")

    def launch_yaml(self, role: str, version: str | None, block_size: int | None) -> str:
        return ""

    def launch_env(self, role: str, version: str | None, spec: ModelSpec
                   ) -> tuple[tuple[str, str], ...]:
        """VLLM_SSM_CONV_STATE_LAYOUT=DS on both roles where the connector's worker asserts
        it for a model with recurrent (Mamba, GDN) layers: NixlConnector from 0.22.0
        (nixl/worker.py 0.22.0:250-259, base_worker.py 0.27.0:316, 0.31.0:641, 0.32.0:600-609
        `assert is_conv_state_dim_first()`, "Set VLLM_SSM_CONV_STATE_LAYOUT=DS"; vLLM's
        default layout is "SD": model_executor/layers/mamba/mamba_utils.py 0.32.0:29-50
        `get_conv_state_layout`). MooncakeConnector asserts no layout (0.25.0 - 0.32.0)."""
        since = self.conv_state_ds_since
        if since is None or spec.num_recurrent_layers == 0 or version_key(version) < since:
            return ()
        return (("VLLM_SSM_CONV_STATE_LAYOUT", "DS"),)

    def decode_admission(self, *, pool_tokens: int, max_num_reqs: int, page_tokens: int,
                         dp_attention: int, user_max_running: int | None,
                         recv_interval: int = 1) -> None:
        check_no_recv_interval(recv_interval)
        # The request reaches the decode scheduler after its prefill (the proxy's flow).
        return None

    def context_scheduler(self, version: str | None) -> None:
        return None  # its scheduler is simulated (EngineRules.prefill_step_defaults)

    def prefill_balance(self) -> VllmDpBalance:
        return VLLM_DP_BALANCE  # the API server's DP balancer, connector or not (dp_balance)

    def no_decode_connector(self, version: str | None, hold_env_s: float | None = None
                            ) -> NoDecodeConnector | None:
        return None  # not read for this connector (NIXL's: kvplan.engines.vllm.nixl_hold)

    def handover(self, spec: ModelSpec, *, input_len: int, prefill: LaunchLayout,
                 decode: LaunchLayout, decode_stages: tuple[tuple[LayerCaches, ...], ...],
                 block_size: int, version: str | None, inputs: PlanInputs | None = None
                 ) -> Handover:
        """The release, the two TP sizes and the layer kinds read for that release checked
        (with the connector's own refusals), then the blocks both connectors move
        (`_units`) from the ranks both read or write them (`_sources`), the first token 1.5
        steps after (module docstring)."""
        self._check_version(version)
        p_tp, d_tp = handover_tps(input_len, prefill, decode, self.tp_rule)
        caches = [c for stage in decode_stages for lc in stage for c in lc.caches]
        hybrid = _hybrid_manager(caches, version, inputs)
        self._check_layer_kinds(spec, caches, version, hybrid=hybrid)
        window = self.llama4_window and nixl_llama4_window(spec, version)
        kv_heads = getattr(spec.attention, "num_key_value_heads", None)
        self._refuse(spec, caches, p_tp, d_tp, version, kv_heads)
        tokens = _tokens_moved(input_len, caches)
        slots = (self._state_slots(version, _spec_and_align(version, inputs, caches), tokens,
                                   block_size) if any(c.is_state for c in caches) else (1, ""))
        return assemble(connector=self.name, version=version, input_len=input_len,
                        tokens=tokens, block_size=block_size, decode_stages=decode_stages,
                        d_tp=d_tp, p_tp=p_tp,
                        units=lambda c: _units(c, tokens, block_size, hybrid=hybrid,
                                               chunk_window=window, state_slots=slots),
                        sources=lambda c, r, n: _sources(c, r, n, d_tp, p_tp, kv_heads),
                        notes=(self._notes(tokens, recomputed=tokens != input_len),),
                        first_token_steps=FIRST_TOKEN_STEPS,
                        unit_bytes=self._unit_bytes(caches, block_size))

    def _check_layer_kinds(self, spec: ModelSpec, caches: list[CacheKind],
                           version: str | None, *, hybrid: bool) -> None:
        """The layer kinds this connector's handover is read for at `version`, with the decode
        pool's hybrid KV-cache manager on or off (`hybrid`): the manager on only with a
        SupportsHMA connector (vLLM refuses the pair at start-up before `hma_since`);
        sliding-window groups from there (clipped) or, the manager off, as full attention
        from the connector's first release; recurrent state from `recurrent_since` (with the
        manager off vLLM does not start: the allocator refuses); the indexer from 0.32;
        chunked local groups only with the manager off (run as full attention): with it on
        (from 0.22 with a connector, or asked) neither connector's chunked handover is read
        (get_sw_clipped_blocks clips sliding groups only)."""
        key = version_key(version)
        local = any(isinstance(c, (SlidingWindowCache, ChunkedLocalCache)) for c in caches)
        if hybrid and key < self.hma_since and (local or any(c.is_state for c in caches)):
            raise InputError(
                f"--hybrid-kv-cache-manager on: vLLM {version}'s {self.name} is not "
                f"SupportsHMA (from {_text(self.hma_since)}) and vLLM stops at start-up "
                "('Connector ... does not support HMA but HMA is enabled', "
                "kv_connector/factory.py); use auto or off")
        for kind, since in (("recurrent-state", self.recurrent_since),
                            ("indexer", INDEXER_SINCE)):
            has = any(c.is_state if kind == "recurrent-state" else isinstance(c, IndexerCache)
                      for c in caches)
            if has and key < since:
                raise InputError(
                    f"--engine-version {version}: kvplan reads {self.short}'s {kind} "
                    f"handover from vLLM {_text(since)}; give {_text(since)} or newer")
        if any(isinstance(c, ChunkedLocalCache) for c in caches) and hybrid:
            raise UnmodelledError(
                f"--disagg: {spec.id}'s chunked local attention layers keep vLLM's hybrid "
                f"KV-cache manager on (vLLM {version or 'default'}), and what "
                f"{self.name} hands over for a chunked group is not read; give "
                "--engine-version 0.21 or older")

    def _refuse(self, spec: ModelSpec, caches: list[CacheKind], p_tp: int, d_tp: int,
                version: str | None, kv_heads: int | None) -> None:
        """What this connector's handover is not read for, beyond `_check_layer_kinds`."""
        return None

    def _state_slots(self, version: str | None, spec_align: tuple[int, bool], tokens: int,
                     block_size: int) -> tuple[int, str]:
        """A recurrent layer's state slots one request moves, and why (`spec_align`: the
        drafter's speculative tokens, mamba cache mode 'align': `_spec_and_align`)."""
        raise NotImplementedError

    def _notes(self, tokens: int, *, recomputed: bool) -> str:
        """The handover's note: `tokens` prompt tokens' blocks moved (`recomputed`: one short,
        recurrent layers)."""
        raise NotImplementedError

    def _unit_bytes(self, caches: list[CacheKind], block_size: int
                    ) -> Callable[[CacheKind], int] | None:
        """The bytes of one block or state slot, where the connector moves not the cache's own
        page (or the state's own bytes): None."""
        return None


@dataclass(frozen=True)
class NixlConnector(_VllmConnector):
    """vLLM's NixlConnector (pull), with `--kv-transfer-config '{"kv_connector":
    "NixlConnector","kv_role":"kv_both"}'` on both roles (docs/features/nixl_connector_usage.md)."""

    name: str = "NixlConnector"
    roles: tuple[str, str] = ("kv_both", "kv_both")
    since: tuple[int, int] = NIXL_SINCE
    since_text: str = ("kvplan models vLLM's NixlConnector from 0.11 (read from 0.32.0's "
                       "source)")
    tp_rule: str = "vLLM's NIXL (kv_connector/utils.py tp_ratio)"
    short: str = "NIXL"
    hma_since: tuple[int, int] = NIXL_HMA_SINCE
    recurrent_since: tuple[int, int] = NIXL_RECURRENT_SINCE
    llama4_window: bool = True
    conv_state_ds_since: tuple[int, int] | None = NIXL_RECURRENT_SINCE

    def no_decode_connector(self, version: str | None, hold_env_s: float | None = None
                            ) -> NoDecodeConnector | None:
        return nixl_no_decode_connector(version, hold_env_s)  # nixl_hold's docstring

    def _state_slots(self, version: str | None, spec_align: tuple[int, bool], tokens: int,
                     block_size: int) -> tuple[int, str]:
        spec_tokens, align = spec_align
        return nixl_state_slots(version, spec_tokens=spec_tokens, align=align, tokens=tokens,
                                block=block_size)

    def _notes(self, tokens: int, *, recomputed: bool) -> str:
        return (f"{self.name}: the decode ranks read {tokens:,} prompt tokens' blocks"
                + (" (the last token is recomputed on decode: recurrent layers)"
                   if recomputed else "") + ".")


@dataclass(frozen=True)
class MooncakeConnector(_VllmConnector):
    """vLLM's MooncakeConnector (push), with `--kv-transfer-config '{"kv_connector":
    "MooncakeConnector","kv_role":"kv_producer"}'` on the prefill worker and "kv_consumer" on
    the decode worker (docs/features/mooncake_connector_usage.md; `pip install
    mooncake-transfer-engine` on both). Read from vLLM 0.32.0's
    distributed/kv_transfer/kv_connector/v1/mooncake/ (mooncake_connector.py, stats.py):

    - Push: the decode worker sends its block ids to the prefill ranks it pairs with
      (`receive_kv` :2493, kv_connector/utils.py `handshake_target_ranks`), and each prefill
      rank WRITES its share into them (`send_kv_to_decode` :1498, `_send_blocks` :1946:
      `batch_transfer_sync_write`). Stats (stats.py :101-146) are recorded on the prefill
      worker: one transfer per `batch_transfer_sync_write`, i.e. per (prefill rank, decode
      rank) pair and batch of ready requests; "Avg MB per transfer" = mean bytes / 2**20,
      3 decimals (the stats line is in 0.22.0, not in 0.20.0; 0.21.0 not read).
    - Which blocks: the same as NIXL. The decode side allocates the prompt's blocks and names
      its unhashed ones (`update_state_after_alloc` :1033-1080), clipped per group by
      `get_sw_clipped_blocks` (:928-944: `blocks_per_sw = cdiv(window, block) + 1` for a
      sliding-window group when the hybrid manager is on; the connector is `SupportsHMA`,
      :703); the prefill sends the last n_remote of its own (`_build_transfer_params` :1823),
      each block a layer's whole page (`kv_block_len = layer_spec.page_size_bytes`, :2128-2139):
      cdiv(T, block) blocks, the last partly filled one whole. T = I, or I - 1 with recurrent
      layers (:946-953).
    - Recurrent state (Mamba / GDN groups): the group's non-null blocks (:1789-1806), one
      state slot a request and one per speculative scratch slot (no SSM clip: 1 +
      num_speculative_blocks; no prefill checkpoint), each the PADDED page
      (MambaSpec.page_size_bytes returns page_size_padded: the attention page, :2138-2139),
      not the state's own bytes as NIXL moves. "Mamba2 is not validated yet" (:898).
    - Heterogeneous TP (`_compute_sender_transfer_plan` :236-288, from 0.30 with its GQA head
      branch): a decode rank receives its own block length, from one prefill rank when decode
      TP >= prefill TP, else from each of the P / D prefill ranks holding a distinct head
      (replicated heads written once: `local_tp_rank % local_replica_count == 0`); MLA and the
      indexer (replicated) from one. The same bytes and sources as NIXL's pull. A prefill rank
      that writes nothing posts no transfer. Recurrent state between unequal TP sizes: the
      prefill rank's page is written at a byte offset of the decode page (:284-288), with no
      conv / SSM re-layout (NIXL's ssm_conv_transfer_utils): refused here.
    - Since: in vLLM from 0.13.0 (not in 0.12.0's wheel; vLLM PR 24718). 0.13.0-0.15.1 pair
      decode rank r with prefill rank r only (`remote_port + self.tp_rank`, 0.15.1 :850).
      By release (kvplan.engines.vllm.connector_releases, read from each sdist): SupportsHMA
      and the sliding-window clip from 0.20.0 (before 0.22 the manager is off with a
      connector unless asked: sliding and chunked layers as full attention, every block, from
      0.13), heterogeneous TP from 0.19.0 (the GQA head branch from 0.30.0; before it the TP
      pairs that lose or misplace heads are refused), the Mamba path from 0.25.0, the stats
      line in 0.22.0; the indexer read at 0.32 only.
    - The decode side of TTFT: the scheduler's flow is NIXL's (vllm/v1/core/sched/
      scheduler.py, WAITING_FOR_REMOTE_KVS, finished receives reported by `get_finished` at a
      step's end, the last prompt token recomputed): `first_token_steps` 1.5.
    """

    name: str = "MooncakeConnector"
    roles: tuple[str, str] = ("kv_producer", "kv_consumer")
    since: tuple[int, int] = MOONCAKE_SINCE
    since_text: str = ("vLLM's MooncakeConnector is in vLLM from 0.13.0 (not in 0.12.0; "
                       "kvplan reads 0.32.0's source)")
    tp_rule: str = "vLLM's MooncakeConnector (mooncake_connector.py _get_tp_ratio)"
    short: str = "MooncakeConnector"

    hma_since: tuple[int, int] = MOONCAKE_HMA_SINCE
    recurrent_since: tuple[int, int] = MOONCAKE_RECURRENT_SINCE

    def _state_slots(self, version: str | None, spec_align: tuple[int, bool], tokens: int,
                     block_size: int) -> tuple[int, str]:
        return mooncake_state_slots(spec_align[0])

    def _refuse(self, spec: ModelSpec, caches: list[CacheKind], p_tp: int, d_tp: int,
                version: str | None, kv_heads: int | None) -> None:
        key = version_key(version)
        if p_tp != d_tp and key < MOONCAKE_HETERO_TP_SINCE:
            raise InputError(
                f"--prefill-tp {p_tp} / --decode-tp {d_tp}: kvplan reads MooncakeConnector's "
                "per-rank slices from vLLM 0.19 (0.13.0-0.15.1 pair decode rank r with "
                "prefill rank r alone; 0.16.0-0.18.1 not read); give --engine-version 0.19 "
                "or newer")
        if (p_tp != d_tp and key < MOONCAKE_GQA_HEADS_SINCE and kv_heads
                and not any(_replicated(c) for c in caches)
                and not mooncake_gqa_tp_runs(p_tp, d_tp, kv_heads)):
            raise UnmodelledError(
                f"--prefill-tp {p_tp} / --decode-tp {d_tp}: vLLM {version}'s MooncakeConnector "
                f"does not move {spec.id}'s {kv_heads} KV heads whole between these TP sizes "
                "(mooncake_connector.py 0.19.0 - 0.29.0: a prefill TP >= the KV heads counts as "
                "replicated, one writer per decode rank; else the region lengths must divide, "
                "_validate_asymmetric_region_lengths); give equal TP sizes or "
                "--engine-version 0.30 or newer")
        if p_tp != d_tp and any(c.is_state for c in caches):
            raise UnmodelledError(
                f"--prefill-tp {p_tp} / --decode-tp {d_tp}: {spec.id}'s recurrent state: vLLM's "
                "MooncakeConnector writes each prefill rank's state page at a byte offset of "
                "the decode rank's (mooncake_connector.py 0.32.0 _compute_sender_transfer_plan) "
                "with no conv / SSM re-layout, so kvplan does not size it; give equal TP sizes")

    def _notes(self, tokens: int, *, recomputed: bool) -> str:
        return (f"{self.name}: the prefill ranks write {tokens:,} prompt tokens' blocks into "
                "the decode ranks' (push)"
                + (" (the last token is recomputed on decode: recurrent layers; each state "
                   "moves as its padded page)" if recomputed else "") + ".")

    def _unit_bytes(self, caches: list[CacheKind], block_size: int
                    ) -> Callable[[CacheKind], int]:
        # The allocator pads a recurrent state's page to the attention page (the widest
        # attention layer's, the indexer's aside: kvplan.engines.vllm.alloc, pad_state_to).
        attention_page = block_size * max(
            (c.bytes_per_token for c in caches
             if not c.is_state and not isinstance(c, IndexerCache)), default=0)

        def unit_bytes(cache: CacheKind) -> int:
            if cache.is_state:
                return max(cache.state_bytes, attention_page)
            return cache.page_bytes(block_size)

        return unit_bytes


CONNECTORS: dict[str, KvConnector] = {
    "nixl": NixlConnector(), "mooncake": MooncakeConnector()}  # the first is the default


def vllm_connector(name: str | None) -> KvConnector:
    return CONNECTORS[pick_connector(
        name, tuple(CONNECTORS), "vLLM connectors kvplan models", strip="connector",
        suffix="; LMCache is not modelled yet, and P2P NCCL left vLLM in 0.24.0 (PR 44854; "
               "in 0.23.0's wheel, not in 0.24.0's)")]
