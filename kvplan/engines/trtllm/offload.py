"""TensorRT-LLM's host cache: ``kv_cache_config.host_cache_size`` (bytes; kvplan's
``--host-cache-size`` takes GiB), the secondary block pool.

``tensorrt_llm/_torch/pyexecutor/resource_manager.py: calculate_max_num_blocks`` (and the C++
``KVCacheManager::calculateMaxNumBlocks``, the same rule)::

    max_tokens_secondary     = host_cache_size / cache_size_bytes_per_token
    blocks_in_secondary_pool = max(0, int(max_tokens_secondary / tokens_per_block))

with ``cache_size_bytes_per_token`` every local layer's K and V on the rank (the primary pool's
bytes per token). It logs ``Number of blocks in KV cache secondary pool: N, onboard blocks to
primary memory before reuse: true``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan.engines.offload import OffloadFacts, OffloadSettings, OffloadTier

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec


def secondary_blocks(host_cache_bytes: int, bytes_per_token: int, tokens_per_block: int) -> int:
    """TRT-LLM's blocks_in_secondary_pool (above)."""
    return max(0, int(host_cache_bytes / bytes_per_token / tokens_per_block))


def secondary_log(blocks: int) -> str:
    return (f"Number of blocks in KV cache secondary pool: {blocks}, onboard blocks to primary "
            "memory before reuse: true")


class TrtllmOffload:
    """TensorRT-LLM's secondary (host) block pool."""

    def tiers(self, spec: ModelSpec, inputs: PlanInputs, facts: OffloadFacts,
              settings: OffloadSettings) -> tuple[OffloadTier, ...]:
        settings.refuse_others("trtllm")
        gib = settings.host_cache_size_gib
        if gib is None:
            raise InputError("--host-cache-size: needed for TensorRT-LLM's host cache (GiB)")
        host = int(gib * GiB)
        block = facts.block_size
        blocks = secondary_blocks(host, facts.bytes_per_token, block)
        return (OffloadTier(
            name="TRT-LLM secondary pool", medium="cpu", offload_tokens=blocks * block,
            offload_blocks=blocks, unit="blocks", unit_tokens=block,
            host_bytes_per_rank=blocks * block * facts.bytes_per_token,
            rule=f"int({host:,} B / {facts.bytes_per_token:,} B / {block}) "
                 "(_torch/pyexecutor/resource_manager.py)",
            log=secondary_log(blocks),
            flags=("kv_cache_config.host_cache_size:", str(host))),)


OFFLOAD = TrtllmOffload()
