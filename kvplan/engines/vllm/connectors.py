"""vLLM's KV connectors for disaggregated prefill/decode: what one request's handover moves, as
the connector's own code selects it (read from vLLM 0.32.0's
vllm/distributed/kv_transfer/kv_connector/v1/nixl/).

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
  Chunked local attention (Llama 4): to 0.13 it turns the hybrid manager off by default
  (vllm/config/vllm.py, VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE "0"), and
  `unify_hybrid_kv_cache_specs` then makes every local layer full attention: every block
  moves; from 0.14.1 the manager stays on (NixlConnector is SupportsHMA) and kvplan refuses.
  Recurrent (Mamba, GDN) layers: the one state slot (`clip_ssm_state_blocks`), conv and SSM
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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.units import cdiv
from kvplan._util.versions import version_key
from kvplan.engines.handover import (
    Handover,
    assemble,
    handover_tps,
    pick_connector,
    unique_head_sources,
)
from kvplan.engines.launch import LaunchLayout
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
# 0.11.0, the first release with that log line. Sliding-window clipping, the recurrent state
# slot and the recurrent backoff are read from 0.32.0 only.
NIXL_SINCE = (0, 11)
HYBRID_RULES_SINCE = (0, 32)
# Decode steps beside the transfer before the first token (module docstring): half a step to
# be scheduled, one to recompute the last prompt token.
FIRST_TOKEN_STEPS = 0.5 + 1


def _replicated(cache: CacheKind) -> bool:
    # base_worker.py register_kv_caches: `is_mla_region` for MLAAttentionSpec (the indexer's
    # cache is an MLAAttentionSpec too, vllm/model_executor/models/deepseek_v2.py).
    return isinstance(cache, (MLACache, IndexerCache))


def _units(cache: CacheKind, tokens: int, block: int) -> tuple[int, str]:
    if cache.is_state:
        return 1, "the state slot (clip_ssm_state_blocks)"
    blocks = cdiv(tokens, block)
    if isinstance(cache, SlidingWindowCache):
        window = cdiv(cache.window, block) + 1
        if window < blocks:
            return window, f"in-window tail: cdiv({cache.window}, {block}) + 1 (blocks_per_sw)"
        return blocks, f"cdiv({tokens}, {block}): the prompt is inside the window"
    if isinstance(cache, ChunkedLocalCache):
        return blocks, (f"cdiv({tokens}, {block}): chunked local runs as full attention "
                        "(hybrid manager off by default to 0.13)")
    return blocks, f"cdiv({tokens}, {block}), the last block whole"


@dataclass(frozen=True)
class NixlConnector:
    """vLLM's NixlConnector (pull), with `--kv-transfer-config '{"kv_connector":
    "NixlConnector","kv_role":"kv_both"}'` on both roles (docs/features/nixl_connector_usage.md)."""

    name: str = "NixlConnector"

    def launch_groups(self, role: str, version: str | None, block_size: int | None
                      ) -> tuple[tuple[str, ...], ...]:
        self._check_version(version)
        config = json.dumps({"kv_connector": self.name, "kv_role": "kv_both"},
                            separators=(",", ":"))
        block = (("--block-size", str(block_size)),) if block_size is not None else ()
        return block + (("--kv-transfer-config", config),)

    def _check_version(self, version: str | None) -> None:
        if version_key(version) < NIXL_SINCE:
            raise InputError(f"--disagg: kvplan models vLLM's NixlConnector from 0.11 (read from "
                             f"0.32.0's source), not {version}")

    def launch_yaml(self, role: str, version: str | None, block_size: int | None) -> str:
        return ""

    def decode_admission(self, *, pool_tokens: int, max_num_reqs: int, page_tokens: int,
                         dp_attention: int, user_max_running: int | None) -> None:
        # The request reaches the decode scheduler after its prefill (the proxy's flow).
        return None

    def context_scheduler(self, version: str | None) -> None:
        return None  # its scheduler is simulated (EngineRules.prefill_step_defaults)

    def handover(self, spec: ModelSpec, *, input_len: int, prefill: LaunchLayout,
                 decode: LaunchLayout, decode_stages: tuple[tuple[LayerCaches, ...], ...],
                 block_size: int, version: str | None, inputs: PlanInputs | None = None
                 ) -> Handover:
        self._check_version(version)
        p_tp, d_tp = handover_tps(input_len, prefill, decode,
                                  "vLLM's NIXL (kv_connector/utils.py tp_ratio)")
        caches = [c for stage in decode_stages for lc in stage for c in lc.caches]
        hybrid = any(c.is_state or isinstance(c, (SlidingWindowCache, IndexerCache))
                     for c in caches)
        if hybrid and version_key(version) < HYBRID_RULES_SINCE:
            raise InputError(f"--engine-version {version}: kvplan reads NIXL's sliding-window, "
                             "recurrent and indexer rules from vLLM 0.32 only; give 0.32 or "
                             "newer")
        if (any(isinstance(c, ChunkedLocalCache) for c in caches)
                and vllm_profile(version).chunked_local_hybrid):
            # From 0.14.1 chunked local attention keeps the hybrid manager on, and NixlConnector
            # is SupportsHMA (config/vllm.py 0.32.0 :2148-2185): its chunked groups are handed
            # over by rules (get_exchange_clipped_blocks clips sliding groups only) not read.
            raise UnmodelledError(
                f"--disagg: {spec.id}'s chunked local attention layers keep vLLM's hybrid "
                f"KV-cache manager on (vLLM {version or 'default'}, from 0.14.1), and what "
                "NixlConnector hands over for a chunked group is not read; give "
                "--engine-version 0.13 or older")
        recurrent = any(c.is_state for c in caches)
        tokens = input_len - 1 if recurrent and input_len > 1 else input_len
        kv_heads = getattr(spec.attention, "num_key_value_heads", None)

        def sources(cache: CacheKind, d_rank: int, nbytes: int) -> list[tuple[int, int]]:
            if cache.is_state:
                # Recurrent state: read from every one of the P / D ranks when prefill TP is
                # larger (each holds a slice of the heads), else from one.
                ranks = ([d_rank * (p_tp // d_tp) + k for k in range(p_tp // d_tp)]
                         if p_tp > d_tp else [d_rank * p_tp // d_tp])
            elif _replicated(cache):
                ranks = [d_rank * p_tp // d_tp]
            else:
                ranks = unique_head_sources(d_rank, d_tp, p_tp, kv_heads)
            return [(r, nbytes // len(ranks)) for r in ranks]

        notes = (f"{self.name}: the decode ranks read {tokens:,} prompt tokens' blocks"
                 + (" (the last token is recomputed on decode: recurrent layers)"
                    if tokens != input_len else "") + ".",)
        return assemble(connector=self.name, version=version, input_len=input_len,
                        tokens=tokens, block_size=block_size, decode_stages=decode_stages,
                        d_tp=d_tp, p_tp=p_tp, units=lambda c: _units(c, tokens, block_size),
                        sources=sources, notes=notes,
                        first_token_steps=FIRST_TOKEN_STEPS)


CONNECTORS = {"nixl": NixlConnector()}  # the first is the default


def vllm_connector(name: str | None) -> NixlConnector:
    return CONNECTORS[pick_connector(
        name, tuple(CONNECTORS), "vLLM connectors kvplan models", strip="connector",
        suffix="; P2P NCCL, Mooncake and LMCache are not modelled yet")]
