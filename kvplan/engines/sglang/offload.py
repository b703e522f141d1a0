"""SGLang's hierarchical cache (HiCache): ``--enable-hierarchical-cache --hicache-ratio R |
--hicache-size GB`` and an optional ``--hicache-storage-backend`` (L3).

The host pool (``srt/mem_cache/memory_pool_host.py: HostKVCache.__init__``), per rank (each TP
or DP-attention rank builds its own beside its device pool)::

    size_per_token = head_dim x head_num x layer_num x itemsize x 2      (MHA: K and V)
                   = (kv_lora_rank + qk_rope_head_dim) x layer_num x itemsize   (MLA)
                   -- the device pool's bytes per token (its cell)
    size = int(hicache_size x 1e9 // size_per_token)   if hicache_size > 0  (GB, 10^9 B)
         = int(device_pool.size x hicache_ratio)        otherwise            (default ratio 2)
    page_num = size // page_size + 1;  size = page_num x page_size    (always one page more)
    assert size > device_pool.size

and it logs ``Allocating {size x size_per_token / 1e9:.2f} GB host memory for hierarchical KV
cache.``. ``device_pool.size`` is the device pool's max_total_num_tokens. The storage backend
(L3: file, mooncake, hf3fs, nixl, ...) is bounded by that backend, not by SGLang. The ``file``
backend (``srt/mem_cache/hicache_storage.py: HiCacheFile``, sgl-project/sglang main as stored in
2026) writes one ``.bin`` file per page under ``SGLANG_HICACHE_FILE_BACKEND_STORAGE_DIR``
(default ``/tmp/hicache``) on each rank's machine, with no size limit or eviction of its own: a
local-disk tier, bounded by the disk, whose reload runs at the disk's read rate
(``--disk-read-gbps``); the others are remote stores (medium "storage").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan.engines.offload import OffloadFacts, OffloadSettings, OffloadTier
from kvplan.engines.sglang.index_cache import check_index_cache_offload

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec


LOCAL_DISK_BACKEND = "file"  # HiCacheFile: the one backend that is the machine's own disk


def hicache_host_tokens(device_tokens: int, size_per_token: int, page_size: int, *,
                        ratio: float = 2.0, size_gb: float = 0.0) -> int:
    """The host pool's tokens (memory_pool_host.py, above): from --hicache-size in GB when
    given, else device tokens x ratio; then one page more than the whole pages."""
    if size_gb > 0:
        size = int(size_gb * 1e9 // size_per_token)
    else:
        size = int(device_tokens * ratio)
    return (size // page_size + 1) * page_size


def hicache_log(host_bytes: int) -> str:
    return f"Allocating {host_bytes / 1e9:.2f} GB host memory for hierarchical KV cache."


class SglangOffload:
    """SGLang's HiCache host pool (L2) and its storage backend (L3)."""

    def tiers(self, spec: ModelSpec, inputs: PlanInputs, facts: OffloadFacts,
              settings: OffloadSettings) -> tuple[OffloadTier, ...]:
        settings.refuse_others("sglang")
        if not settings.hierarchical_cache:
            raise InputError("--hicache-*: needs --enable-hierarchical-cache")
        if settings.hicache_ratio <= 0 or settings.hicache_size_gb < 0:
            raise InputError("--hicache-ratio / --hicache-size: must be > 0 / >= 0")
        if facts.pool_kind != "token":
            raise InputError(f"--enable-hierarchical-cache: {spec.id} runs SGLang's "
                             f"{facts.pool_kind} pools; kvplan models HiCache over the plain "
                             "token pool only")
        if inputs.speculative_method is not None:
            raise InputError("--enable-hierarchical-cache: kvplan does not model HiCache with "
                             "a speculative draft pool")
        check_index_cache_offload(spec, inputs.engine_version, "--enable-hierarchical-cache")
        cell, page = facts.bytes_per_token, facts.block_size
        size = hicache_host_tokens(facts.device_tokens, cell, page,
                                   ratio=settings.hicache_ratio, size_gb=settings.hicache_size_gb)
        if size <= facts.device_tokens:
            raise InputError(f"--hicache-size: the host pool ({size:,} tokens) must be larger "
                             f"than the device pool ({facts.device_tokens:,}); SGLang asserts it")
        how = (f"int({settings.hicache_size_gb:g}e9 // {cell:,} B)"
               if settings.hicache_size_gb > 0
               else f"int({facts.device_tokens:,} x {settings.hicache_ratio:g})")
        flags = ["--enable-hierarchical-cache"]
        flags += (["--hicache-size", f"{settings.hicache_size_gb:g}"]
                  if settings.hicache_size_gb > 0
                  else ["--hicache-ratio", f"{settings.hicache_ratio:g}"])
        tiers = [OffloadTier(
            name="SGLang HiCache host", medium="cpu", offload_tokens=size,
            offload_blocks=size // page, unit="pages", unit_tokens=page,
            host_bytes_per_rank=size * cell,
            rule=f"({how} // {page} + 1) x {page} (srt/mem_cache/memory_pool_host.py)",
            log=hicache_log(size * cell), flags=tuple(flags))]
        backend = settings.hicache_storage_backend
        if backend:
            local = backend.strip().lower() == LOCAL_DISK_BACKEND
            tiers.append(OffloadTier(
                name=f"SGLang HiCache storage ({backend})",
                medium="disk" if local else "storage", offload_tokens=None,
                offload_blocks=None, unit="pages", unit_tokens=page, host_bytes_per_rank=0,
                rule=("one file per page of this rank's KV under "
                      "SGLANG_HICACHE_FILE_BACKEND_STORAGE_DIR, no size limit in SGLang: "
                      "bounded by the disk (hicache_storage.py HiCacheFile)" if local
                      else "bounded by the storage backend, not by SGLang"),
                flags=("--hicache-storage-backend", backend)))
        return tuple(tiers)


OFFLOAD = SglangOffload()
