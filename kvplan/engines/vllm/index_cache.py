"""IndexCache (GLM-5.2/5.3's ``index_topk_freq`` > 1, kvplan.sources.hf_index_cache) in vLLM's
releases: which layers build the DSA indexer, and with it the indexer cache.

- 0.24.0-0.33.0: a skipped layer builds no indexer (0.24.0 model_executor/models/deepseek_v2.py
  :1029 ``if self.is_v32 and (not _skip_topk or is_mtp_layer)``; 0.29.0+ on CUDA and ROCm
  models/deepseek_v32/attention.py, 0.32.0 :166-199). Its MLA cache stays (a sparse MLA layer
  reading the shared top-k buffer), so the MLA caches of every layer and the kept layers'
  indexer caches, all MLAAttentionSpec, share one UniformTypeKVCacheSpecs group as before
  (0.32.0 v1/core/kv_cache_utils.py:2186-2190; is_uniform_type checks the block size and the spec
  type only, kv_cache_interface.py:1282-1295): the group's page is the sum of its layers' pages.
- before 0.24.0 every layer builds its indexer and its cache: 0.21.0-0.23.0 read the fields only
  to skip the top-k computation (0.21.0 deepseek_v2.py:1007-1019, 0.23.0 :1021-1034, after the
  Indexer is built); earlier releases do not read them.
- 0.34.0 reads ``indexer_types`` first (model_executor/models/utils.py:1019-1056
  compute_skip_topk_layers, raising when its length is not num_hidden_layers, as in NVIDIA's
  GLM-5.3-NVFP4: 74 entries for 78 layers) and refuses a pipeline stage that starts on a skipped
  layer (:1059-1084); not modelled, refused.
"""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.model.spec import ModelSpec

INDEX_CACHE_SINCE = (0, 24)  # the first release whose skipped layers build no indexer
INDEX_CACHE_READ_UNTIL = (0, 33)  # the last release read


def index_cache_served(spec: ModelSpec, version: str | None, default: str) -> ModelSpec:
    """`spec` with the indexer on the layers vLLM `version` (None: `default`) builds it on."""
    if spec.indexer is None or not spec.indexer.skipped_layers:
        return spec
    release = version_key(version or default)[:2]
    if release < INDEX_CACHE_SINCE:
        return replace(spec, indexer=replace(spec.indexer, skipped_layers=frozenset()))
    if release > INDEX_CACHE_READ_UNTIL:
        raise UnmodelledError(
            f"--engine-version {version}: {spec.id}: vLLM 0.34 chooses IndexCache's indexer "
            "layers from indexer_types before index_topk_freq (model_executor/models/utils.py "
            "compute_skip_topk_layers), which kvplan read in 0.24-0.33 only; give "
            "--engine-version 0.33 or older")
    return spec
