"""vLLM's full-allocation fallback for MLA models with sliding-window layers (issue 26).

When the layers' pages cannot be unified (``unify_kv_cache_spec_page_size`` raises
NotImplementedError: an ``MLAAttentionSpec`` page, the DSA indexer's included, that does not
divide the largest page cannot be padded, sparse MLA indexing whole token rows),
``get_kv_cache_groups`` tries ``_try_get_full_allocation_fallback_groups``: with an MLA layer and
a sliding-window layer, no chunked-local (and no hidden-state) layer, it promotes every
sliding-window layer to full attention (``SlidingWindowMLASpec`` -> ``MLAAttentionSpec``,
``_promote_local_kv_cache_specs``) and, when the result is one uniform type (no recurrent state),
puts every layer in one group (``_get_kv_cache_groups_uniform_type``), logging "KV cache page
sizes cannot be unified; treating sliding-window layers as full attention for cache allocation".

- 0.32.0 v1/core/kv_cache_utils.py:1765-1796 and 0.33.0 v1/core/kv_cache_planning.py:819-850:
  the fallback returns None when any layer is a ``SlidingWindowMLASpec``, so it serves only
  non-MLA sliding layers (a sliding-window draft next to an MLA target) and vLLM fails to start.
- 0.34.0 v1/core/kv_cache_planning.py:859-894 (called at :1213-1219): ``SlidingWindowMLASpec``
  layers are taken too.

A sliding layer of a model whose attention is MLA is vLLM's ``SlidingWindowMLASpec``
(model_executor/layers/attention/mla_attention.py: an MLAAttention given a window), so kvplan
applies the fallback where the profile says (``VllmProfile.sliding_mla_full_fallback``) and
refuses the model before. No bundled or golden config reaches it: kvplan's config reader drops
``sliding_window`` for MLA (vLLM's DeepSeek-V2 family passes none to its MLA layers), and MLA
and sliding-window MLA pages of one model are equal; a spec with MLA, the DSA indexer and
sliding layers does (its indexer page, 132 B a token, does not divide the 1,152-B MLA page).
"""

from __future__ import annotations

from typing import Any

from kvplan._util.errors import UnmodelledError
from kvplan.kv.kinds import ChunkedLocalCache, MLACache, RecurrentState, SlidingWindowCache


def full_allocation_fallback(entries: list[tuple[int, Any]], *, version: str,
                             sliding_mla: bool) -> list[tuple[int, Any]]:
    """`entries` (layer index, cache kind) whose MLA page cannot be unified, with every sliding
    layer allocated as MLA full attention, as vLLM `version` falls back (`sliding_mla`: it takes
    sliding-window MLA layers); refused where vLLM fails."""
    caches = [c for _, c in entries]
    sliding = any(isinstance(c, SlidingWindowCache) for c in caches)
    blocked = any(isinstance(c, (ChunkedLocalCache, RecurrentState)) for c in caches)
    if sliding and not blocked and not sliding_mla:
        raise UnmodelledError(
            f"vLLM {version} cannot start this model: its MLA pages cannot be unified and "
            "_try_get_full_allocation_fallback_groups takes sliding-window MLA layers only "
            "from 0.34 (there, every layer is allocated as full attention)")
    if not sliding or blocked:
        raise UnmodelledError(
            "vLLM cannot unify this model's page sizes (an MLA page that does "
            "not divide the largest page); kvplan refuses to guess")
    return [(i, MLACache(token_bytes=c.token_bytes) if isinstance(c, SlidingWindowCache) else c)
            for i, c in entries]
