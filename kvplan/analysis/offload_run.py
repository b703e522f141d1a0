"""The offload answer `estimate` and `plan` share: the engine's tiers on a capacity plan
(kvplan.capacity.offload), the host side from the GPU's presets (kvplan.hardware.hosts: the link,
the reference node's DRAM) or as given, and per request the reload of the offloaded prefix
against its recompute (kvplan.perf.offload_time)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan._util.units import GB, GiB
from kvplan.capacity.offload import HostMemory, OffloadPlan, offload_plan
from kvplan.engines.offload import OffloadSettings
from kvplan.kv.cache import check_token_sized

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.analysis.plan_types import PlanRequest, ServingPlan
    from kvplan.capacity.plan import CapacityPlan
    from kvplan.engines.base import PlanInputs
    from kvplan.hardware.gpus import GPU
    from kvplan.model.spec import ModelSpec
    from kvplan.perf.cost_rules import CostRules


@dataclass(frozen=True, kw_only=True)
class OffloadAsk:
    """What a user asked of the tiers and the host (cli/offload_opts.py builds it)."""

    settings: OffloadSettings = OffloadSettings()
    host_mem_gib: float | None = None  # the node's DRAM (default: the GPU's node preset)
    host_link: str | None = None  # default: the GPU preset's link
    disk_read_gbps: float | None = None  # a disk tier's read rate, GB/s (no default)
    prefix_hit_rate: float = 0.0

    @property
    def asked(self) -> bool:
        return self.settings.asked or self.prefix_hit_rate > 0


def _host(ask: OffloadAsk, gpu: GPU | None) -> HostMemory:
    from kvplan.hardware.hosts import gpu_host

    preset = gpu_host(gpu.name) if gpu is not None else None
    node = preset.node if preset is not None else None
    if ask.host_mem_gib is not None:
        return HostMemory(host_mem_bytes=int(ask.host_mem_gib * GiB),
                          gpus_per_node=node.gpus_per_node if node else None,
                          source="--host-mem-gib")
    if node is not None:
        return HostMemory(host_mem_bytes=node.host_mem_bytes, gpus_per_node=node.gpus_per_node,
                          source=f"{node.name}: {node.source}")
    return HostMemory(host_mem_bytes=None, gpus_per_node=None,
                      source="unknown: give --host-mem-gib")


def _timing(spec: ModelSpec, inputs: PlanInputs, gpu: GPU | None, ask: OffloadAsk,
            off: OffloadPlan, context: int, cost_rules: CostRules | None = None
            ) -> dict[str, object]:
    from kvplan.hardware.hosts import get_link, gpu_host

    link = None
    if ask.host_link is not None:
        link = get_link(ask.host_link)
    elif gpu is not None and (preset := gpu_host(gpu.name)) is not None:
        link = preset.link
    out: dict[str, object] = {
        "host_link": link.name if link else None,
        "host_link_bytes_per_s": link.bytes_per_s if link else None,
        "host_link_source": link.source if link else "unknown: give --host-link",
        "reload_ms": None, "recompute_ms": None, "reload_wins_above_tokens": None,
        "prefill_saved_ms": None, "reload_wins_in_prompt_above_tokens": None,
        "disk_read_bytes_per_s": None if ask.disk_read_gbps is None
        else int(ask.disk_read_gbps * GB),
        "disk_reload_ms": None, "disk_reload_wins_above_tokens": None}
    if gpu is None or not gpu.peak_bf16_flops_per_s or link is None:
        return out  # no time model for a device known only by its memory
    from kvplan.perf.cost_rules import opt_in
    from kvplan.perf.layout import Layout
    from kvplan.perf.offload_time import Recompute, reload_ms, reload_wins_above_tokens

    recompute = Recompute(spec, gpu, kv_dtype=inputs.kv_dtype,
                          layout=Layout(tp=inputs.tp, dp_attention=inputs.dp_attention,
                                        attn_tp=inputs.attention_tp if inputs.dp_attention
                                        else 1),
                          eff=None if cost_rules is None else opt_in(cost_rules, gpu))
    block = off.tiers[0].unit_tokens if off.tiers else inputs.resolved_block_size
    n = off.prefix.reloaded_tokens
    bpt = off.bytes_per_token
    out["reload_ms"] = reload_ms(n, bpt, link.bytes_per_s) if n else 0.0
    out["recompute_ms"] = recompute.ms(n) if n else 0.0
    prompt = off.prefix.prompt_tokens
    out["prefill_saved_ms"] = recompute.saved_ms(n, prompt) if n else 0.0
    out["reload_wins_above_tokens"] = reload_wins_above_tokens(
        recompute.ms, bytes_per_token=bpt, link_bytes_per_s=link.bytes_per_s, block=block,
        max_tokens=context)
    out["reload_wins_in_prompt_above_tokens"] = reload_wins_above_tokens(
        lambda k: recompute.saved_ms(k, prompt), bytes_per_token=bpt,
        link_bytes_per_s=link.bytes_per_s, block=block, max_tokens=prompt - 1)
    disk = out["disk_read_bytes_per_s"]
    if isinstance(disk, int) and any(t.medium == "disk" for t in off.tiers):
        out["disk_reload_ms"] = reload_ms(n, bpt, disk) if n else 0.0
        out["disk_reload_wins_above_tokens"] = reload_wins_above_tokens(
            recompute.ms, bytes_per_token=bpt, link_bytes_per_s=disk, block=block,
            max_tokens=context)
    return out


def run_offload(spec: ModelSpec, inputs: PlanInputs, plan: CapacityPlan, gpu: GPU | None,
                ask: OffloadAsk, *, prompt: int | None = None, cost_rules: CostRules | None = None
                ) -> OffloadPlan | None:
    """The offload answer for `plan` (None: no tier and no prefix reuse asked); `spec` as the
    engine serves it (EngineRules.served_spec). `cost_rules`: the time model's opt-in rules
    (kvplan.perf.cost_rules.CostRules) for the recompute it is weighed against; None: none."""
    if not ask.asked:
        return None
    check_token_sized(spec, "the offload tiers")
    if ask.disk_read_gbps is not None and ask.disk_read_gbps <= 0:
        raise InputError("--disk-read-gbps: must be > 0")
    off = offload_plan(spec, inputs, plan, ask.settings, _host(ask, gpu), prompt=prompt,
                       hit_rate=ask.prefix_hit_rate)
    return replace(off, timing=_timing(spec, inputs, gpu, ask, off, plan.context, cost_rules))


def plan_offload(spec: ModelSpec, req: PlanRequest, plan: ServingPlan, ask: OffloadAsk | None
                 ) -> tuple[ServingPlan, OffloadPlan | None]:
    """`kvplan plan`'s tiers on the chosen layout, and the plan with its verdict turned to DOES
    NOT FIT when the tiers' host memory does not fit the node (the engines refuse to start:
    SGLang checks the DRAM free, vLLM and TensorRT-LLM fail to pin it)."""
    if ask is None or not ask.asked or plan.chosen is None:
        return plan, None
    check_token_sized(spec, "the offload tiers")
    from kvplan.analysis.plan_search import plan_inputs_for
    from kvplan.analysis.plan_types import DOES_NOT_FIT

    c = plan.chosen
    inputs = plan_inputs_for(req, c.gpu, c.layout, c.kv_dtype, c.mem_fraction, c.context)
    off = run_offload(req.engine.rules.served_spec(spec, inputs), inputs, c.capacity, c.gpu, ask,
                      cost_rules=req.cost_rules)
    if off is None:
        return plan, None
    if off.host_mem_fits is False:
        return replace(plan, verdict=DOES_NOT_FIT, fits=False, reason=(
            f"the offload tiers take {off.host_mem_bytes_per_node / GiB:,.2f} GiB of host memory "
            f"per node, more than its {(off.host_mem_bytes or 0) / GiB:,.2f} GiB")), off
    tiers = ", ".join(f"{t.offload_tokens:,} tokens in {t.name}" for t in off.tiers
                      if t.offload_tokens is not None)
    if tiers:
        host = ("" if off.host_mem_bytes is None else
                f" of {off.host_mem_bytes / GiB:,.0f} GiB")
        plan = replace(plan, reason=f"{plan.reason}; beyond HBM: {tiers} "
                       f"({off.host_mem_bytes_per_node / GiB:,.2f} GiB host per node{host})")
    return _with_flags(plan, off), off


def _with_flags(plan: ServingPlan, off: OffloadPlan) -> ServingPlan:
    """The plan's serve commands (those running the head's program) with the tiers' command-line
    flags appended as one more line; flags that are not command-line options (TensorRT-LLM's
    host_cache_size, an extra-options key) stay in the offload table's notes."""
    from kvplan.analysis.launch import command_text

    argv = tuple(f for f in off.flags)
    if plan.launch is None or not argv or not argv[0].startswith("--"):
        return plan
    program = plan.launch.head.argv[0]
    commands = tuple(replace(c, groups=(*c.groups, argv)) if c.argv[:1] == [program] else c
                     for c in plan.launch.commands)
    launch = replace(plan.launch, commands=commands)
    return replace(plan, launch=launch, command=command_text(launch))
