"""KV offload tiers: what a user asks (`OffloadSettings`, every engine's flags), what a rule reads
of the HBM pool it offloads from (`OffloadFacts`, one rank of the limiting stage), what it answers
(`OffloadTier`: tokens and blocks in the engine's own unit, the host or disk bytes per rank, the
line the engine logs) and the protocol each engine's rule follows (`OffloadRule`,
``kvplan.engines.<name>.offload.OFFLOAD``, loaded by `Engine.offload`).

An offload tier is a second pool beside HBM: the engines copy KV blocks there and back; none of
them takes the tier out of the GPU's KV budget, so the HBM capacity is the same with or without it
(tests/test_offload.py holds that as a property).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Protocol

from kvplan._util.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec


class OffloadLayout(Protocol):
    """The PlanInputs fields the tiers read (kvplan.engines.base.PlanInputs has them)."""

    tp: int
    pp: int
    dp_attention: bool
    speculative_method: str | None
    platform: str

# Each setting's flag, and the engine whose rule reads it (the others refuse it).
FLAGS = {
    "kv_offloading_size_gib": ("--kv-offloading-size", "vllm"),
    "kv_offloading_backend": ("--kv-offloading-backend", "vllm"),
    "lmcache_chunk_size": ("--lmcache-chunk-size", "vllm"),
    "lmcache_cpu_gib": ("--lmcache-cpu-gib", "vllm"),
    "lmcache_disk_gib": ("--lmcache-disk-gib", "vllm"),
    "hierarchical_cache": ("--enable-hierarchical-cache", "sglang"),
    "hicache_ratio": ("--hicache-ratio", "sglang"),
    "hicache_size_gb": ("--hicache-size", "sglang"),
    "hicache_storage_backend": ("--hicache-storage-backend", "sglang"),
    "host_cache_size_gib": ("--host-cache-size", "trtllm"),
}


@dataclass(frozen=True, kw_only=True)
class OffloadSettings:
    """The offload flags of every engine, as given (defaults: the engines' own)."""

    kv_offloading_size_gib: float | None = None  # vLLM: GiB over all TP x PP ranks
    kv_offloading_backend: str = "native"  # vLLM: native | lmcache
    lmcache_chunk_size: int = 256  # LMCache chunk_size (tokens)
    lmcache_cpu_gib: float | None = None  # LMCache max_local_cpu_size, per rank
    lmcache_disk_gib: float | None = None  # LMCache max_local_disk_size, per rank
    hierarchical_cache: bool = False  # SGLang --enable-hierarchical-cache
    hicache_ratio: float = 2.0  # SGLang: host pool tokens / device pool tokens
    hicache_size_gb: float = 0.0  # SGLang: host pool in GB (10^9 B) per rank; 0: the ratio
    hicache_storage_backend: str | None = None  # SGLang's L3 (file, mooncake, hf3fs, nixl...)
    host_cache_size_gib: float | None = None  # TRT-LLM kv_cache_config.host_cache_size

    def given(self) -> dict[str, object]:
        """The settings that differ from their defaults."""
        default = OffloadSettings()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(default, f.name)}

    @property
    def asked(self) -> bool:
        return bool(self.given())

    def refuse_others(self, engine: str) -> None:
        """Refuse, in one line, a flag another engine reads."""
        for name in self.given():
            flag, owner = FLAGS[name]
            if owner != engine:
                raise InputError(f"{flag}: is a --engine {owner} setting, not {engine}'s")


@dataclass(frozen=True, kw_only=True)
class OffloadFacts:
    """One rank of the stage the tiers offload from (the limiting stage's HBM pool)."""

    bytes_per_token: int  # every cached layer of the stage, this rank's slice
    page_bytes: int  # one layer's block on this rank
    group_size: int  # tensors (layers) per KV-cache group
    num_groups: int
    block_size: int  # tokens per HBM block (SGLang: page)
    device_tokens: int  # the HBM pool's tokens (SGLang: max_total_num_tokens)
    pool_kind: str = "token"  # SGLang's pool type (token, hybrid_swa, mamba, ...)


@dataclass(frozen=True, kw_only=True)
class OffloadTier:
    """One offload tier on one rank, in the engine's own unit. Tokens are request tokens (every
    rank holds its slice of the same tokens); None where the engine does not bound the tier."""

    name: str
    medium: str  # cpu | disk | storage
    offload_tokens: int | None
    offload_blocks: int | None
    unit: str  # blocks | chunks | pages
    unit_tokens: int  # tokens per block / chunk / page
    host_bytes_per_rank: int  # DRAM the tier takes per GPU
    disk_bytes_per_rank: int = 0
    rule: str = ""
    log: str | None = None  # the line the engine prints for it, as kvplan predicts it
    flags: tuple[str, ...] = ()  # the engine's launch flags for the tier

    def to_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class OffloadRule(Protocol):
    """An engine's offload tiers."""

    def tiers(self, spec: ModelSpec, inputs: OffloadLayout, facts: OffloadFacts,
              settings: OffloadSettings) -> tuple[OffloadTier, ...]:
        """The tiers `settings` ask for, sized from the stage's pool (refuse, in one line,
        flags of another engine and layouts the engine's offload does not run)."""
