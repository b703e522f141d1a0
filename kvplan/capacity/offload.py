"""KV beyond HBM: the offload tiers of a capacity plan (each engine's rule,
``kvplan.engines.<name>.offload``), the host memory they take per node against the node's DRAM,
and prefix reuse across HBM and the tiers (what stays resident, what is reloaded, what is
computed). Pure; exact integer bytes.

Prefix reuse, per request of `prompt` tokens:

* ``--shared-prefix-tokens S`` (alias ``--shared-prefix``): S tokens every request shares. Their
  FULL blocks are cached once in HBM (the engines share whole blocks only: vLLM's prefix caching
  hashes full blocks; SGLang's radix cache whole pages) and stay resident; the max concurrency
  already counts them once (kvplan.capacity.stages).
* ``--prefix-hit-rate H``: the share of each prompt found in the prefix cache. The hit is
  block-aligned (``H x prompt`` rounded down to whole blocks, at least the resident shared
  blocks); what is not resident in HBM is reloaded from the offload tiers, up to what they hold;
  the rest is computed. A reloaded prefix takes the request's own HBM blocks while it runs, so
  the HBM concurrency does not change with H.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan.engines.offload import OffloadFacts, OffloadSettings, OffloadTier

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.capacity.plan import CapacityPlan
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class HostMemory:
    """The host side of the GPUs: DRAM per node and GPUs per node (None: not known)."""

    host_mem_bytes: int | None
    gpus_per_node: int | None
    source: str = ""


@dataclass(frozen=True, kw_only=True)
class PrefixReuse:
    """One request's prompt across the tiers (tokens), and its KV in HBM."""

    prompt_tokens: int
    shared_prefix_tokens: int
    prefix_hit_rate: float
    resident_tokens: int  # the shared prefix's full blocks, held once in HBM
    hit_tokens: int  # block-aligned tokens found in a cache (HBM or offload)
    reloaded_tokens: int  # hit tokens not resident: copied back from the offload tiers
    computed_tokens: int  # prompt tokens prefilled
    hbm_kv_bytes_per_request: int  # the request's own HBM blocks (the shared ones apart)
    hbm_kv_bytes_shared: int  # the shared prefix's blocks, once per GPU
    prefixes_in_offload: int | None  # reloaded prefixes of this length the tiers hold


@dataclass(frozen=True, kw_only=True)
class OffloadPlan:
    """The offload tiers of one plan (per rank of the limiting stage) and the host they take."""

    engine: str
    tiers: tuple[OffloadTier, ...]
    offload_tokens: int  # bounded tiers together, request tokens
    offload_blocks: int  # in the engine's unit (vLLM, TRT-LLM: blocks; LMCache: chunks;
    #                      SGLang: pages)
    bytes_per_token: int  # one rank's KV per token (what a reload copies over its link)
    ranks_per_node: int
    host_mem_bytes_per_rank: int
    host_mem_bytes_per_node: int
    host_mem_bytes: int | None  # the node's DRAM (None: unknown)
    gpus_per_node: int | None  # the node's GPUs (None: unknown)
    host_mem_source: str
    host_mem_fits: bool | None
    hbm_token_capacity: int  # the HBM pool's tokens, unchanged by the tiers
    hbm_max_requests: int
    prefix: PrefixReuse
    flags: tuple[str, ...] = ()
    timing: dict[str, object] = field(default_factory=dict)  # set by kvplan.perf.offload_time

    def to_dict(self) -> dict[str, object]:
        return {
            "engine": self.engine, "offload_tokens": self.offload_tokens,
            "offload_blocks": self.offload_blocks, "bytes_per_token": self.bytes_per_token,
            "tiers": [t.to_dict() for t in self.tiers],
            "ranks_per_node": self.ranks_per_node,
            "host_mem_bytes_per_rank": self.host_mem_bytes_per_rank,
            "host_mem_bytes_per_node": self.host_mem_bytes_per_node,
            "host_mem_bytes": self.host_mem_bytes, "gpus_per_node": self.gpus_per_node,
            "host_mem_source": self.host_mem_source,
            "host_mem_fits": self.host_mem_fits,
            "hbm_token_capacity": self.hbm_token_capacity,
            "hbm_max_requests": self.hbm_max_requests,
            "prefix": dict(self.prefix.__dict__), "flags": list(self.flags),
            **self.timing,
        }


def offload_facts(plan: CapacityPlan) -> OffloadFacts:
    """The limiting stage's pool, one rank, as the tiers read it."""
    stage = plan.stages[plan.limiting_stage]
    pool = stage.sglang_pool
    return OffloadFacts(
        bytes_per_token=pool.cell if pool is not None else stage.per_gpu_bytes_per_token,
        page_bytes=stage.page_bytes, group_size=stage.group_size, num_groups=stage.num_groups,
        block_size=stage.block_size or plan.block_size, device_tokens=stage.token_capacity,
        pool_kind=pool.kind if pool is not None else "token")


def prefix_reuse(spec: ModelSpec, inputs: PlanInputs, plan: CapacityPlan, *, prompt: int,
                 hit_rate: float, offload_tokens: int) -> PrefixReuse:
    """Where one request's prompt lives (module docstring)."""
    if not 0 <= hit_rate <= 1:
        raise InputError(f"--prefix-hit-rate: must be in [0, 1], got {hit_rate}")
    stage = plan.stages[plan.limiting_stage]
    block = stage.block_size or plan.block_size
    rules = inputs.engine.rules
    shared = min(inputs.shared_prefix, plan.context)
    resident = min(shared, prompt) // block * block
    hit = max(resident, int(hit_rate * prompt) // block * block)
    reloaded = min(hit - resident, offload_tokens // block * block)
    hit = resident + reloaded
    own = (rules.kv_bytes_needed(stage, 1, plan.context, shared)
           - rules.kv_bytes_needed(stage, 0, plan.context, shared))
    return PrefixReuse(
        prompt_tokens=prompt, shared_prefix_tokens=shared, prefix_hit_rate=hit_rate,
        resident_tokens=resident, hit_tokens=hit, reloaded_tokens=reloaded,
        computed_tokens=prompt - hit, hbm_kv_bytes_per_request=own,
        hbm_kv_bytes_shared=rules.kv_bytes_needed(stage, 0, plan.context, shared),
        prefixes_in_offload=offload_tokens // reloaded if reloaded else None)


def offload_plan(spec: ModelSpec, inputs: PlanInputs, plan: CapacityPlan,
                 settings: OffloadSettings, host: HostMemory, *, prompt: int | None = None,
                 hit_rate: float = 0.0) -> OffloadPlan:
    """The tiers `settings` ask for on `plan`'s limiting stage, the host memory they take per
    node, and one request's prompt (`prompt` tokens, default the plan's context) across HBM and
    the tiers."""
    facts = offload_facts(plan)
    tiers = inputs.engine.offload.tiers(spec, inputs, facts, settings) if settings.asked else ()
    bounded = [t for t in tiers if t.offload_tokens is not None]
    tokens = sum(t.offload_tokens or 0 for t in bounded)
    ranks = inputs.tp * inputs.pp
    per_node = min(ranks, host.gpus_per_node) if host.gpus_per_node else ranks
    per_rank = sum(t.host_bytes_per_rank for t in tiers)
    used = per_rank * per_node
    return OffloadPlan(
        engine=inputs.engine.value, tiers=tiers, offload_tokens=tokens,
        offload_blocks=sum(t.offload_blocks or 0 for t in bounded),
        bytes_per_token=facts.bytes_per_token, ranks_per_node=per_node,
        host_mem_bytes_per_rank=per_rank, host_mem_bytes_per_node=used,
        host_mem_bytes=host.host_mem_bytes, gpus_per_node=host.gpus_per_node,
        host_mem_source=host.source,
        host_mem_fits=None if host.host_mem_bytes is None else used <= host.host_mem_bytes,
        hbm_token_capacity=plan.token_capacity, hbm_max_requests=plan.max_requests,
        prefix=prefix_reuse(spec, inputs, plan, prompt=plan.context if prompt is None else prompt,
                            hit_rate=hit_rate, offload_tokens=tokens),
        flags=tuple(f for t in tiers for f in t.flags))
