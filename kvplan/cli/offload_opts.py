"""The KV offload and prefix-reuse options `estimate` and `plan` share (issue 29): each engine's
own flags, spelled as its CLI spells them, the host side, and the prefix reuse. One builder,
`offload_ask`, turns them into the library's `OffloadAsk`."""

import inspect
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.analysis.offload_run import OffloadAsk


class OffloadBackend(str, Enum):
    native = "native"
    lmcache = "lmcache"


KvOffloadingSizeOpt = Annotated[float | None, typer.Option(
    "--kv-offloading-size", min=0.0, metavar="GIB", rich_help_panel="KV offload",
    help="vLLM: CPU offload tier in GiB over ALL TP x PP ranks (vLLM's own flag).")]
KvOffloadingBackendOpt = Annotated[OffloadBackend, typer.Option(
    "--kv-offloading-backend", rich_help_panel="KV offload",
    help="vLLM: native (its OffloadingConnector) or lmcache.")]
LmcacheChunkOpt = Annotated[int, typer.Option(
    "--lmcache-chunk-size", min=1, rich_help_panel="KV offload",
    help="LMCache chunk_size in tokens (256).")]
LmcacheCpuOpt = Annotated[float | None, typer.Option(
    "--lmcache-cpu-gib", min=0.0, metavar="GIB", rich_help_panel="KV offload",
    help="LMCache max_local_cpu_size per rank, GiB (LMCache multiplies by 1024^3); default "
         "--kv-offloading-size / (TP x PP).")]
LmcacheDiskOpt = Annotated[float | None, typer.Option(
    "--lmcache-disk-gib", min=0.0, metavar="GIB", rich_help_panel="KV offload",
    help="LMCache max_local_disk_size per rank, GiB (a local-disk tier).")]
HicacheOpt = Annotated[bool, typer.Option(
    "--enable-hierarchical-cache", rich_help_panel="KV offload",
    help="SGLang HiCache: a host pool per rank beside the device pool.")]
HicacheRatioOpt = Annotated[float, typer.Option(
    "--hicache-ratio", min=0.0, rich_help_panel="KV offload",
    help="SGLang: host pool tokens / device pool tokens (2.0).")]
HicacheSizeOpt = Annotated[float, typer.Option(
    "--hicache-size", min=0.0, metavar="GB", rich_help_panel="KV offload",
    help="SGLang: host pool per rank in GB (10^9 B, as SGLang reads it); overrides the ratio.")]
HicacheStorageOpt = Annotated[str | None, typer.Option(
    "--hicache-storage-backend", metavar="NAME", rich_help_panel="KV offload",
    help="SGLang HiCache L3 (file, mooncake, hf3fs, nixl, ...), bounded by the backend; "
         "file is a local-disk tier (reload at --disk-read-gbps).")]
HostCacheOpt = Annotated[float | None, typer.Option(
    "--host-cache-size", min=0.0, metavar="GIB", rich_help_panel="KV offload",
    help="TensorRT-LLM kv_cache_config.host_cache_size, in GiB (the secondary pool).")]
HostMemOpt = Annotated[float | None, typer.Option(
    "--host-mem-gib", min=0.0, metavar="GIB", rich_help_panel="KV offload",
    help="DRAM per node, GiB (default: the GPU's reference node, e.g. DGX H100 2 TiB).")]
HostLinkOpt = Annotated[str | None, typer.Option(
    "--host-link", metavar="NAME", rich_help_panel="KV offload",
    help="GPU-host link for reloads: pcie-gen4, pcie-gen5, nvlink-c2c (default: the GPU's).")]
DiskReadOpt = Annotated[float | None, typer.Option(
    "--disk-read-gbps", min=0.0, metavar="GB/S", rich_help_panel="KV offload",
    help="Read rate of a disk tier per GPU, GB/s (10^9 B/s); no default.")]
PrefixHitOpt = Annotated[float, typer.Option(
    "--prefix-hit-rate", min=0.0, max=1.0, rich_help_panel="KV offload",
    help="Share of each prompt found in a prefix cache (whole blocks): resident shared "
         "blocks first, the rest reloaded from the offload tiers.")]


def offload_ask(*, kv_offloading_size: float | None = None,
                kv_offloading_backend: OffloadBackend = OffloadBackend.native,
                lmcache_chunk_size: int = 256, lmcache_cpu_gib: float | None = None,
                lmcache_disk_gib: float | None = None, hierarchical_cache: bool = False,
                hicache_ratio: float = 2.0, hicache_size: float = 0.0,
                hicache_storage_backend: str | None = None,
                host_cache_size: float | None = None, host_mem_gib: float | None = None,
                host_link: str | None = None, disk_read_gbps: float | None = None,
                prefix_hit_rate: float = 0.0) -> "OffloadAsk | None":
    """The library's question; None when every option is at its default (the types load here,
    on first use: `estimate` without a tier never builds them)."""
    given = dict(locals())
    if all(given[k] == v for k, v in _DEFAULTS.items()):
        return None
    from kvplan.analysis.offload_run import OffloadAsk
    from kvplan.engines.offload import OffloadSettings

    return OffloadAsk(
        settings=OffloadSettings(
            kv_offloading_size_gib=kv_offloading_size,
            kv_offloading_backend=kv_offloading_backend.value,
            lmcache_chunk_size=lmcache_chunk_size, lmcache_cpu_gib=lmcache_cpu_gib,
            lmcache_disk_gib=lmcache_disk_gib, hierarchical_cache=hierarchical_cache,
            hicache_ratio=hicache_ratio, hicache_size_gb=hicache_size,
            hicache_storage_backend=hicache_storage_backend,
            host_cache_size_gib=host_cache_size),
        host_mem_gib=host_mem_gib, host_link=host_link, disk_read_gbps=disk_read_gbps,
        prefix_hit_rate=prefix_hit_rate)


# Each option's default, as offload_ask's signature writes it (the commands' signatures repeat
# them: typer reads a default from the parameter), and the commands' parameter names.
_DEFAULTS = {k: p.default for k, p in inspect.signature(offload_ask).parameters.items()}
ASK_KEYS = tuple(_DEFAULTS)
