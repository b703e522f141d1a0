"""IndexCache (GLM-5.2/5.3's ``index_topk_freq`` > 1, kvplan.sources.hf_index_cache) in SGLang's
releases: on which layers the DSA pool keeps the indexer's index-K cache. Read from the wheels
(python/sglang/srt/...; "0.5.18 x.py:N" is that release's file and line):

- before 0.5.18 every layer keeps it: 0.5.17 mem_cache/memory_pool.py:4398-4410
  (DSATokenToKVPool, one index_k_with_scale_buffer per layer) and
  model_executor/pool_configurator.py:225-247 (the cell counts num_layers indexers), though
  models/deepseek_v2.py:1846-1858 already skips the top-k on the layers the config shares.
- from 0.5.18 a layer that reuses the top-k gets a 0-row index-K buffer
  (0.5.18 mem_cache/index_key_cache.py:40-43, kv_cache_configurator.py:1333-1338) and the cell
  counts only the others (pool_configurator.py:352-412), whichever layers
  configs/model_config.py:200 ``dsa_layer_skips_topk`` marks: LongCat's ``cli_factor`` (which
  kvplan does not read), then ``index_topk_pattern``, else
  ``index_topk_freq`` / ``index_skip_topk_offset`` (offset absent: max(i - 1, 0) % freq, the
  rule kvplan.sources.hf_index_cache reads).
- from 0.5.20 ``dsa_layer_skips_topk`` reads ``indexer_types`` first (0.5.20
  configs/model_config.py:311-319): a layer past the list's end is not "shared", so keeps its
  indexer (NVIDIA's GLM-5.3-NVFP4 lists 74 of its 78 layers: 75-77 keep theirs). transformers'
  GlmMoeDsaConfig (5.12.1 and 5.19.0, the pins of 0.5.20-0.5.23) derives the list from
  index_topk_freq / index_skip_topk_offset (default 2) when the file has none: the same layers.
- the draft worker keeps every draft layer's indexer (``is_draft_worker``, 0.5.18
  kv_cache_configurator.py:94-101); from 0.5.18 the target budgets it apart
  (pool_configurator.py:186-209, kvplan.engines.sglang.draft.SglangDraft.budget_cell).

Not modelled: HiSparse (--enable-hisparse, every release: the pool keeps every indexer; kvplan
has no such option). HiCache and PD disaggregation with an IndexCache model from 0.5.18 are
refused (`check_index_cache_offload`): 0.5.18-0.5.21 then keep every layer's index-K on the
device (0.5.18 kv_cache_configurator.py:94-101), 0.5.22+ elide it and leave the shared layers
out of the host pool and the transfer (0.5.22 :126-140, mem_cache/pool_host/dsa.py:121-125),
neither of which kvplan's HiCache tiers or handover read.
"""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.kv.kinds import IndexerCache, LayerCaches
from kvplan.model.spec import ModelSpec

INDEX_CACHE_SINCE = (0, 5, 18)  # the first release whose skipped layers keep no index-K cache
INDEXER_TYPES_SINCE = (0, 5, 20)  # dsa_layer_skips_topk reads indexer_types first
DSA_DRAFT_SINCE = (0, 5, 18)  # the target budgets a DSA draft's latent and index-K apart


def index_cache_served(spec: ModelSpec, version: str | None) -> ModelSpec:
    """`spec` with the indexer on the layers SGLang `version` (None: the newest) keeps its
    index-K cache on."""
    if spec.indexer is None or not spec.indexer.skipped_layers:
        return spec
    release = version_key(version)
    skipped = spec.indexer.skipped_layers
    if release < INDEX_CACHE_SINCE:
        skipped = frozenset()
    elif release >= INDEXER_TYPES_SINCE and spec.indexer.indexer_types_length is not None:
        # hf_index_cache refused a list that disagrees with `skipped` on its entries.
        skipped = frozenset(i for i in skipped if i < spec.indexer.indexer_types_length)
    return replace(spec, indexer=replace(spec.indexer, skipped_layers=skipped))


def check_index_cache_offload(spec: ModelSpec, version: str | None, what: str) -> None:
    """Refuse `what` (HiCache, PD disaggregation) where SGLang `version` leaves some layers of
    `spec` (served or not) without index-K (see the module)."""
    indexer = index_cache_served(spec, version).indexer
    if indexer is not None and indexer.skipped_layers:
        raise UnmodelledError(
            f"{what}: {spec.id}: kvplan does not model SGLang's IndexCache layers (no index-K "
            "on the layers sharing the top-k) with it: 0.5.18-0.5.21 keep every layer's index-K "
            "on the device then, 0.5.22+ leave the shared layers out of the host pool and the "
            "transfer")


def dsa_indexer_cells(caches: tuple[LayerCaches, ...]) -> tuple[int, int] | None:
    """(the target's, the draft's) index-K bytes per token among one rank's caches; None for
    a model with no DSA indexer."""
    keys = [(lc.draft, c.bytes_per_token) for lc in caches for c in lc.caches
            if isinstance(c, IndexerCache)]
    if not keys:
        return None
    return (sum(b for draft, b in keys if not draft), sum(b for draft, b in keys if draft))


def dsa_budget_cell(cell: int, indexers: tuple[int, int], draft_layers: int,
                    target_layers: int) -> int:
    """The bytes per token a DSA target's pool is sized with beside its draft, from 0.5.18
    (pool_configurator.py:186-209, ``is_deepseek_dsa``): the target's cell, the draft's latent
    scaled from the target's (the cell less its index-K, int(kv x draft / target layers)), and
    the draft's index-K on every draft layer (``allocate_all_layers=True``). Before, and for
    other models, int(cell x (1 + draft / target layers)), which IndexCache's uneven layers
    make differ."""
    target, draft = indexers
    return cell + int((cell - target) * draft_layers / target_layers) + draft
