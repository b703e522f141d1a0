"""vLLM's KV offload tiers: ``--kv-offloading-size GIB --kv-offloading-backend native|lmcache``.

native, vLLM 0.32 (read in the installed 0.32.0 wheel): ``vllm/config/vllm.py:
_post_init_kv_transfer_config`` sets the OffloadingConnector with ``cpu_bytes_to_use =
kv_offloading_size * (1 << 30)``, the GiB over ALL ranks of the engine;
``distributed/kv_transfer/kv_connector/v1/offloading/config.py: build_offloading_config`` and
``v1/kv_offload/cpu/spec.py: CPUOffloadingSpec``::

    worker_kv_bytes_per_block = kv_cache_tensors[0].size // num_blocks   (one rank's block slot:
                                every layer's page, kvplan's page x layers per slot)
    num_copies  = 1 if replicated_layout else world_size (TP x PP)
    chunk_bytes = round_up(worker_kv_bytes_per_block x num_copies x blocks_per_chunk,
                           mmap.PAGESIZE)                      (blocks_per_chunk 1 by default)
    num_chunks  = int(cpu_bytes_to_use) // chunk_bytes

``replicated_layout``: an MLA model at TP > 1, TP only, one node, the mp executor, on CUDA (not
ROCm): every rank's latent is the same, so one copy is kept. The chunks live in one shared
``/dev/shm`` region per engine (``cpu/shared_offload_region.py``), ``num_chunks x chunk_bytes``
bytes, logged as ``Created mmap file /dev/shm/vllm_offload_<engine>.mmap (X.XX GB)``. kvplan
takes mmap.PAGESIZE as 4096 B (x86-64; a 64 KiB-page kernel rounds larger chunks).

lmcache: vLLM's LMCacheConnectorV1 mapping (``vllm/config/vllm.py`` before the
LMCacheMPConnector default) gives each rank ``max_local_cpu_size = kv_offloading_size / (TP x
PP)``; vLLM 0.32 starts LMCacheMPConnector and leaves the size to the LMCache server
(``--lmcache-cpu-gib`` states it per rank). LMCache allocates ``int(max_local_cpu_size x
1024**3)`` bytes per worker (``lmcache/v1/cache_engine.py: _Create_memory_allocator``; the disk
backend ``max_local_disk_size x 1024**3``) and stores chunks of ``chunk_size`` tokens (256),
each every layer's K and V of the rank: ``chunks = bytes // (chunk_size x bytes_per_token)``.
LMCache logs its config (``'max_local_cpu_size': 5.0``), not a chunk count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan._util.units import GiB, cdiv
from kvplan.engines.offload import OffloadFacts, OffloadSettings, OffloadTier

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec

BACKENDS = ("native", "lmcache")
MMAP_PAGE_BYTES = 4096  # mmap.PAGESIZE on x86-64 Linux
_LMCACHE_FLAGS = ("lmcache_cpu_gib", "lmcache_disk_gib", "lmcache_chunk_size")


def _gib_bytes(gib: float) -> int:
    """``int(size x 2^30)`` as vLLM (``kv_offloading_size * (1 << 30)``) and LMCache
    (``int(max_local_cpu_size * 1024**3)``) compute it from a float."""
    return int(gib * GiB)


class VllmOffload:
    """vLLM's native CPU offloading and LMCache's CPU and local-disk tiers."""

    def tiers(self, spec: ModelSpec, inputs: PlanInputs, facts: OffloadFacts,
              settings: OffloadSettings) -> tuple[OffloadTier, ...]:
        settings.refuse_others("vllm")
        backend = settings.kv_offloading_backend
        if backend not in BACKENDS:
            raise InputError(f"--kv-offloading-backend: {backend!r}: expected native or lmcache")
        given = settings.given()
        lmcache = [n for n in _LMCACHE_FLAGS if n in given]
        if backend == "native" and lmcache:
            raise InputError("--lmcache-*: needs --kv-offloading-backend lmcache")
        if settings.kv_offloading_size_gib is None and not (
                backend == "lmcache" and settings.lmcache_cpu_gib is not None):
            raise InputError("--kv-offloading-size: needed for vLLM's offloading (GiB over all "
                             "TP x PP ranks)")
        if backend == "lmcache" and facts.num_groups != 1:
            raise InputError(f"--kv-offloading-backend lmcache: {spec.id} runs "
                             f"{facts.num_groups} KV-cache groups; kvplan sizes LMCache's "
                             "chunks for one")
        if inputs.pp > 1 or inputs.dp_attention:
            raise InputError("--kv-offloading-size: kvplan models vLLM's offloading without "
                             "--pp or --dp-attention")
        if backend == "native":
            return (self._native(spec, inputs, facts, settings),)
        return self._lmcache(inputs, facts, settings)

    def _native(self, spec: ModelSpec, inputs: PlanInputs, facts: OffloadFacts,
                settings: OffloadSettings) -> OffloadTier:
        assert settings.kv_offloading_size_gib is not None
        world = inputs.tp * inputs.pp
        cpu_bytes = _gib_bytes(settings.kv_offloading_size_gib)
        worker_block = facts.page_bytes * facts.group_size
        # One latent copy for an MLA model at TP > 1 on one node (kvplan plans TP within a node
        # and refuses --pp here); ROCm keeps a private buffer per rank.
        replicated = (spec.kind.value == "mla" and inputs.tp > 1
                      and inputs.platform == "cuda")
        copies = 1 if replicated else world
        chunk = cdiv(worker_block * copies, MMAP_PAGE_BYTES) * MMAP_PAGE_BYTES
        chunks = cpu_bytes // chunk
        total = chunks * chunk
        how = "one MLA copy" if replicated else f"{world} rank{'s' if world > 1 else ''}"
        return OffloadTier(
            name="vLLM native CPU", medium="cpu", offload_tokens=chunks * facts.block_size,
            offload_blocks=chunks, unit="blocks", unit_tokens=facts.block_size,
            host_bytes_per_rank=total // world,
            rule=f"{cpu_bytes:,} B // round_up({worker_block:,} B a block x {how}, 4 KiB) "
                 "(vLLM 0.32 kv_offload/cpu/spec.py)",
            log=f"Created mmap file /dev/shm/vllm_offload_<engine>.mmap ({total / 1e9:.2f} GB)",
            flags=("--kv-offloading-size", f"{settings.kv_offloading_size_gib:g}",
                   "--kv-offloading-backend", "native"))

    def _lmcache(self, inputs: PlanInputs, facts: OffloadFacts,
                 settings: OffloadSettings) -> tuple[OffloadTier, ...]:
        chunk = settings.lmcache_chunk_size
        if chunk < 1:
            raise InputError("--lmcache-chunk-size: must be >= 1")
        ranks = inputs.tp * inputs.pp
        if settings.lmcache_cpu_gib is not None:
            cpu_gib, how = settings.lmcache_cpu_gib, "--lmcache-cpu-gib"
        else:
            assert settings.kv_offloading_size_gib is not None
            cpu_gib = settings.kv_offloading_size_gib / ranks
            how = f"--kv-offloading-size / {ranks} ranks (LMCacheConnectorV1 mapping)"
        chunk_bytes = chunk * facts.bytes_per_token
        flags = ("--kv-offloading-size", f"{settings.kv_offloading_size_gib:g}",
                 "--kv-offloading-backend", "lmcache") \
            if settings.kv_offloading_size_gib is not None else ()
        tiers = []
        cpu_bytes = _gib_bytes(cpu_gib)
        chunks = cpu_bytes // chunk_bytes
        tiers.append(OffloadTier(
            name="LMCache CPU", medium="cpu", offload_tokens=chunks * chunk,
            offload_blocks=chunks, unit="chunks", unit_tokens=chunk,
            host_bytes_per_rank=cpu_bytes,
            rule=f"int({cpu_gib:g} x 1024^3) // ({chunk} tokens x {facts.bytes_per_token:,} B) "
                 f"({how}; lmcache/v1/cache_engine.py)",
            log=f"'chunk_size': {chunk}, 'local_cpu': True, 'max_local_cpu_size': {cpu_gib}",
            flags=flags))
        if settings.lmcache_disk_gib is not None:
            disk_bytes = _gib_bytes(settings.lmcache_disk_gib)
            disk_chunks = disk_bytes // chunk_bytes
            tiers.append(OffloadTier(
                name="LMCache local disk", medium="disk", offload_tokens=disk_chunks * chunk,
                offload_blocks=disk_chunks, unit="chunks", unit_tokens=chunk,
                host_bytes_per_rank=0, disk_bytes_per_rank=disk_bytes,
                rule=f"int({settings.lmcache_disk_gib:g} x 1024^3) // ({chunk} x "
                     f"{facts.bytes_per_token:,} B) (local_disk_backend.py)"))
        return tuple(tiers)


OFFLOAD = VllmOffload()
