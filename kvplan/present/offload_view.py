"""The offload tiers beside HBM (`kvplan estimate` / `kvplan plan` with --kv-offloading-size,
--enable-hierarchical-cache, --host-cache-size or --prefix-hit-rate): each tier in the engine's
own unit, the host memory per node, one request's prompt across the tiers, reload vs recompute."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kvplan.present.render import Column, View
from kvplan.present.text import commas, gib_text

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.capacity.offload import OffloadPlan


def _ms(value: object) -> str:
    return "-" if not isinstance(value, float) else f"{value:,.2f} ms"


def _gpus(n: int) -> str:
    return f"{n} GPU" + ("s" if n != 1 else "")


def offload_view(off: OffloadPlan) -> View:
    rows: list[list[str]] = []

    def row(label: str, value: str, how: str = "") -> None:
        rows.append([label, value, how])

    row("HBM tier", f"{commas(off.hbm_token_capacity)} tokens",
        f"{off.hbm_max_requests:,} requests; unchanged by the tiers below")
    for t in off.tiers:
        if t.offload_tokens is None:
            row(t.name, "unbounded", t.rule)
            continue
        size = (gib_text(t.host_bytes_per_rank) if t.medium == "cpu"
                else gib_text(t.disk_bytes_per_rank))
        row(t.name, f"{commas(t.offload_tokens)} tokens",
            f"{commas(t.offload_blocks or 0)} {t.unit} of {t.unit_tokens}; {size} per GPU")
    if off.host_mem_bytes is None:
        row("host memory per node", gib_text(off.host_mem_bytes_per_node),
            f"{_gpus(off.ranks_per_node)}; node DRAM unknown: give --host-mem-gib")
    else:
        fits = "fits" if off.host_mem_fits else "DOES NOT FIT"
        row("host memory per node", gib_text(off.host_mem_bytes_per_node),
            f"{fits} in {gib_text(off.host_mem_bytes)} ({_gpus(off.ranks_per_node)})")
    p = off.prefix
    row("prompt", f"{commas(p.prompt_tokens)} tokens",
        f"hit rate {p.prefix_hit_rate:g}, shared prefix {commas(p.shared_prefix_tokens)}")
    row("  resident in HBM", f"{commas(p.resident_tokens)} tokens",
        "the shared prefix's full blocks, once per GPU")
    row("  reloaded", f"{commas(p.reloaded_tokens)} tokens", "from the offload tiers")
    row("  computed", f"{commas(p.computed_tokens)} tokens", "prefilled")
    row("HBM KV per request", gib_text(p.hbm_kv_bytes_per_request),
        f"own blocks; + {gib_text(p.hbm_kv_bytes_shared)} shared once")
    t = off.timing
    if t.get("host_link"):
        if p.reloaded_tokens:
            row("reload / recompute",
                f"{_ms(t.get('reload_ms'))} / {_ms(t.get('recompute_ms'))}",
                f"{commas(p.reloaded_tokens)} tokens over {t['host_link']}")
            row("  prefill it saves", _ms(t.get("prefill_saved_ms")),
                f"in the {commas(p.prompt_tokens)}-token prompt (weights read anyway)")
        above = t.get("reload_wins_above_tokens")
        row("reload wins above", "never" if above is None else f"{commas(int(above))} tokens",
            "of prefix (the time model's prefill)")
        inside = t.get("reload_wins_in_prompt_above_tokens")
        row("  within the prompt", "never" if inside is None else f"{commas(int(inside))} "
            "tokens", "against the prefill a hit saves")
    notes = [f"{tier.name}: {tier.rule}." for tier in off.tiers]
    notes += [f"{tier.name} logs: {tier.log}" for tier in off.tiers if tier.log]
    if off.flags:
        notes.append("Launch flags: " + " ".join(off.flags))
    return View(title=f"KV offload tiers ({off.engine}), per GPU",
                columns=[Column(header="tier"), Column(header="size", numeric=True),
                         Column(header="how")],
                rows=rows, records={"offload": off.to_dict()}, notes=notes)


def with_offload(view: View, off: OffloadPlan | None) -> View:
    """`view` with the offload table after it (in its summary too) and its records under
    "offload"."""
    if off is None:
        return view
    tiers = offload_view(off)
    records = dict(view.records) if isinstance(view.records, dict) else {}
    summary = view.summary and replace(view.summary, more=(*view.summary.more, tiers))
    return replace(view, records={**records, **tiers.records}, more=(*view.more, tiers),
                   summary=summary)
