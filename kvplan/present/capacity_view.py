"""Capacity on a GPU (`kvplan estimate --gpu ...`) and the serving plan (`kvplan plan`)."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from kvplan._util.units import human_bytes
from kvplan.analysis.answers import plan_headline
from kvplan.engines.base import Engine
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.present.answers import EXPLAIN_HINT, plan_answer
from kvplan.present.estimate_view import assumption_records, assumptions_views, groups_view
from kvplan.present.launch_text import launch_lines
from kvplan.present.render import JSON_SCHEMA_VERSION, Column, View
from kvplan.present.text import commas, gib_text

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.analysis.estimate_run import ReverseAnswers
    from kvplan.capacity.plan import CapacityPlan
    from kvplan.kv.cache import Estimate


def _dp_text(plan: CapacityPlan) -> str:
    """The layout's DP attention as the KV-per-token row says it ("" without)."""
    if not plan.dp_attention:
        return ""
    n = plan.attention_dp_size
    return ", dp-attention" + (f" ({n} ranks of {plan.tp // n} GPUs)" if n else "")

def capacity_view(spec: ModelSpec, plan: CapacityPlan, *, device: str,
                  reverse: ReverseAnswers | None = None) -> View:
    rules = Engine(plan.engine).rules
    engine = rules.display_name
    frac_name = rules.fraction_name
    rows: list[list[str]] = []

    def row(label: str, value: str, n: int | None = None, how: str = "") -> None:
        rows.append([label, value, "" if n is None else commas(n), how])

    if plan.total_bytes is not None and not plan.kv_budget_given:
        row("device total", gib_text(plan.total_bytes), plan.total_bytes, device)
        row(frac_name, f"{plan.mem_fraction:.3f}", None, plan.mem_fraction_rule)
    quant = "" if plan.quantization == "none" else f", {plan.quantization}"
    weights_how = (f"{plan.params / 1e9:,.2f}B params ({plan.params_active / 1e9:,.2f}B active) "
                   f"at {plan.weight_dtype}{quant}"
                   + (f" / tp {plan.tp}" if plan.tp > 1 else "")
                   + (f", stage {plan.limiting_stage} of pp {plan.pp}" if plan.pp > 1 else ""))
    if not plan.kv_budget_given:
        row("weights per GPU", gib_text(plan.weights_bytes), plan.weights_bytes, weights_how)
        row("reserve", gib_text(plan.reserve_bytes), plan.reserve_bytes,
            f"{engine} {plan.engine_version or ''}".rstrip()
            + ": the parts below")
        for name, part in plan.reserve_breakdown.items():
            row(f"  {name.replace('_', ' ')}", gib_text(int(part["bytes"])), int(part["bytes"]),
                str(part["rule"]))
    row("KV budget per GPU", gib_text(plan.kv_budget_bytes), plan.kv_budget_bytes,
        plan.budget_formula)
    if plan.per_gpu_bytes_per_token is not None:
        row("KV bytes per token per GPU", human_bytes(plan.per_gpu_bytes_per_token),
            plan.per_gpu_bytes_per_token, f"tp {plan.tp}" + _dp_text(plan))
    stage = plan.stages[plan.limiting_stage]
    label, how = rules.page_row(plan, stage.page_bytes, stage.group_size, stage.num_groups)
    row(label, human_bytes(stage.page_bytes), stage.page_bytes, how)
    row("num_blocks", commas(plan.num_blocks), None, "KV budget // page // layers per slot")
    row("token_capacity", commas(plan.token_capacity), None, "num_blocks // groups x block size")
    if plan.swa_max_total_num_tokens is not None:
        row("sliding-window pool tokens", commas(plan.swa_max_total_num_tokens), None,
            "SGLang's swa_layer_tokens: full tokens x swa_full_tokens_ratio "
            f"{plan.sglang_pool.get('swa_full_tokens_ratio')}")
    if plan.draft_max_total_num_tokens is not None:
        row("draft pool tokens", commas(plan.draft_max_total_num_tokens), None,
            f"SGLang's draft worker ({plan.sglang_pool.get('draft_layers')} layer(s), "
            f"{plan.sglang_pool.get('speculative_rule')} rule)")
        row("draft pool", gib_text(plan.draft_kv_bytes), plan.draft_kv_bytes,
            "its own KV pool" + (", inside the budget" if plan.sglang_pool.get("draft_in_budget")
                                 else ", outside the fraction's budget"))
    if plan.max_mamba_cache_size is not None:
        row("recurrent-state slots", commas(plan.max_mamba_cache_size), None,
            "SGLang's max_mamba_cache_size (mamba_full_memory_ratio "
            f"{plan.sglang_pool.get('mamba_full_memory_ratio')})")
    for label, count, how in rules.view_rows(plan):
        row(label, commas(count), None, how)
    if plan.state_bytes_per_request:
        row("recurrent state per request", human_bytes(plan.state_bytes_per_request),
            plan.state_bytes_per_request,
            f"mamba cache mode {plan.mamba_cache_mode}" if plan.mamba_cache_mode else "")
    row("blocks per request", commas(plan.blocks_per_request), None,
        f"{plan.context:,} tokens" + (f", {stage.shared_prefix_blocks:,} shared prefix blocks"
                                      if stage.shared_prefix_blocks else ""))
    # Engines that do not print it print the pool in tokens; this is that pool over one
    # request's need.
    printed = f"{engine} prints this" if rules.prints_max_concurrency() else (
        f"not printed by {engine}")
    row("max_concurrency", f"{plan.max_concurrency:,.2f}x", None,
        f"requests of {plan.context:,} tokens ({printed})")
    if plan.max_running_requests is not None:
        row("max_running_requests", commas(plan.max_running_requests), None,
            "SGLang's cap on running requests" + (
                f" (state slots // {plan.sglang_pool['slots_per_request']})"
                if "slots_per_request" in plan.sglang_pool else ""))
    row("max_requests", commas(plan.max_requests), None, "whole requests that fit")
    if plan.dp_attention:
        row("max_requests, all DP ranks", commas(plan.total_max_requests), None,
            f"{plan.attention_dp_size or plan.tp} attention-DP ranks x per-rank requests")
    records: dict[str, object] = {
        key: value for key, value in plan.to_dict().items() if key != "stages"
    }
    records["stages"] = [asdict(s) for s in plan.stages]
    if reverse is not None:
        if reverse.longest_context is None:
            row(f"longest context for {reverse.requests:,} requests", "none fits")
        else:
            row(f"longest context for {reverse.requests:,} requests",
                commas(reverse.longest_context), None,
                "tokens (the model's max; its windows bound the cache)"
                if reverse.longest_context_capped else "tokens")
        if reverse.fraction_needed is not None:
            need = reverse.fraction_needed
            row(f"fraction for {reverse.requests:,} x {plan.context:,}",
                f"{need:.3f}", None, "does not fit: > 1" if need > 1 else "")
        records |= {
            "requests": reverse.requests,
            "longest_context_for_requests": reverse.longest_context,
            "mem_fraction_for_requests": reverse.fraction_needed,
        }
    notes = [f"Capacity in {engine}'s accounting: {plan.budget_formula}."]
    if isinstance(spec.attention, LatentAttention) and plan.tp > 1:
        notes.append(
            "MLA's latent is not sharded by tensor parallelism: each of the "
            f"{plan.tp} ranks holds the whole latent for every token, so TP does not shrink the "
            "per-GPU cache." + ("" if plan.dp_attention else
                                " --dp-attention gives each rank only its own requests."))
    notes += rules.capacity_notes(spec, plan)
    if plan.weights_breakdown and not plan.kv_budget_given and plan.weights_source != "given":
        b = plan.weights_breakdown
        parts = ", ".join(f"{k.replace('_', ' ')} {gib_text(v)}" for k, v in b.items()
                          if k != "total" and v)
        notes.append("Weights per GPU as the engine loads them (kvplan.weights): "
                     f"{parts}.")
    more = (groups_view(plan.kv_cache_groups, context=plan.context,
                        version=plan.engine_version),) if rules.shows_groups(plan) else ()
    return View(
        more=more,
        title=f"Capacity on {device}: {engine}, context {plan.context:,}, {plan.kv_dtype} KV",
        columns=[Column(header="quantity"), Column(header="value", numeric=True),
                 Column(header="bytes", numeric=True, optional=True), Column(header="how")],
        rows=rows,
        records=records,
        notes=notes,
    )


def capacity_summary_view(spec: ModelSpec, plan: CapacityPlan, *, device: str,
                          est: Estimate, reverse: ReverseAnswers | None = None) -> View:
    """`estimate --gpu` without --explain: the budget in a few rows (the reserve whole, not its
    parts), one request's size, the capacity, and the rules' provenance line."""
    rules = Engine(plan.engine).rules
    rows: list[list[str]] = []
    if plan.total_bytes is not None and not plan.kv_budget_given:
        rows += [["device total", gib_text(plan.total_bytes), device],
                 ["memory fraction", f"{plan.mem_fraction:.3f}", plan.mem_fraction_rule],
                 ["weights per GPU", gib_text(plan.weights_bytes),
                  f"{plan.params / 1e9:,.2f}B params at {plan.weight_dtype}"
                  + (f" / tp {plan.tp}" if plan.tp > 1 else "")],
                 ["reserve", gib_text(plan.reserve_bytes),
                  f"{len(plan.reserve_breakdown)} parts (--explain)"
                  if plan.reserve_breakdown else ""]]
    rows += [["KV budget per GPU", gib_text(plan.kv_budget_bytes), plan.budget_formula]]
    if plan.per_gpu_bytes_per_token is not None:
        rows += [["KV per token per GPU", human_bytes(plan.per_gpu_bytes_per_token),
                  f"tp {plan.tp}" + _dp_text(plan)]]
    rows += [["KV per request", human_bytes(est.bytes_per_sequence),
              f"{plan.context:,} tokens, block-rounded"
              + (", per GPU" if plan.tp > 1 else "") + (", all stages" if plan.pp > 1 else "")],
             ["max_concurrency", f"{plan.max_concurrency:,.2f}x",
              f"requests of {plan.context:,} tokens"],
             ["max_requests", commas(plan.max_requests), "whole requests that fit"]]
    if plan.dp_attention:
        rows.append(["max_requests, all DP ranks", commas(plan.total_max_requests),
                     f"{plan.attention_dp_size or plan.tp} attention-DP ranks"])
    if reverse is not None:
        rows.append([f"longest context for {reverse.requests:,} requests",
                     "none fits" if reverse.longest_context is None
                     else commas(reverse.longest_context), "tokens"])
        if reverse.fraction_needed is not None:
            rows.append([f"fraction for {reverse.requests:,} x {plan.context:,}",
                         f"{reverse.fraction_needed:.3f}",
                         "does not fit: > 1" if reverse.fraction_needed > 1 else ""])
    return View(
        title=f"Capacity per GPU: {rules.display_name} {plan.engine_version or ''}".rstrip()
              + f", context {plan.context:,}, {plan.kv_dtype} KV",
        columns=[Column(header="quantity"), Column(header="value", numeric=True),
                 Column(header="how")],
        rows=rows, records={},
        notes=[*rules.capacity_notes(spec, plan), EXPLAIN_HINT],
        more=assumptions_views(spec))


def plan_view(spec: ModelSpec, result: Any) -> View:
    """`kvplan plan`: the verdict, the numbers behind it, the command, the alternatives."""
    c = result.chosen
    rows: list[list[str]] = [["verdict", result.verdict]]
    target = f"{result.concurrency:,} requests x {result.context:,} tokens"
    rows.append(["target", target])
    m = result.margin
    if m is not None:
        err = m.expected_error
        rows += [
            ["margin", f"{gib_text(m.margin_bytes)} of KV per GPU, {m.margin_requests:+,} "
                       "requests"],
            ["kvplan's error", f"+-{gib_text(m.band_bytes)} here (max({err['relative']:.1%} "
                               f"of the KV budget, {gib_text(err['bytes'])}): 90 % of "
                               f"{err['logs']} held-out engine logs)"],
        ]
    if c is not None:
        lay = c.layout
        rows += [
            ["GPUs", f"{lay.gpus} x {result.gpu} ({lay.nodes} node{'s' if lay.nodes > 1 else ''})"],
            ["layout", result.layout_text],
            ["KV dtype", c.kv_dtype],
            ["memory fraction", f"{c.mem_fraction:g}"],
            ["weights per GPU", gib_text(c.capacity.weights_bytes)],
            ["KV budget per GPU", gib_text(c.capacity.kv_budget_bytes)],
            ["block size", f"{c.capacity.block_size}"],
            ["max concurrency", f"{c.max_concurrency:,.2f}x ({c.requests:,} whole requests) "
                                "at the engine's default max-num-seqs"
                                if result.max_num_seqs_given is None else
                                f"{c.max_concurrency:,.2f}x ({c.requests:,} whole requests) at "
                                f"max-num-seqs {result.max_num_seqs_given:,}"],
        ]
        if result.max_num_seqs is not None:
            per_engine = result.max_num_seqs != result.concurrency
            rows.append(["max-num-seqs", (
                f"{result.max_num_seqs:,} per engine (recommended: the target over "
                f"{lay.dp} data-parallel engines)" if per_engine else
                f"{result.max_num_seqs:,} (recommended: the target)")
                         if result.max_num_seqs_given is None else
                         f"{result.max_num_seqs:,} (given)"])
        if result.cost_per_hour_usd is not None:
            rows.append(["cost", f"${result.cost_per_hour_usd:,.2f} per hour ({lay.gpus} "
                                 f"GPU{'s' if lay.gpus > 1 else ''})"])
        if result.prediction is not None:
            p = result.prediction
            rows += [["predicted TPOT", f"{p.tpot_ms:,.1f} ms at the target load"],
                     ["predicted TTFT", f"{p.ttft_ms:,.0f} ms (prefill of one request)"],
                     ["throughput", f"{p.output_tokens_per_s_per_gpu:,.0f} tokens/s per GPU"]]
            if p.cost_per_million_tokens_usd is not None:
                rows.append(["cost per output", f"${p.cost_per_million_tokens_usd:,.2f} per "
                                                "million tokens"])
    notes = [f"{result.verdict}: {result.reason}."] if result.reason else []
    notes += list(result.launch.notes) if result.launch else []
    code = launch_lines(result.launch) if result.launch else []
    for a in result.alternatives:
        cost = ("" if a.cost_per_hour_usd is None or "$" in a.label or a.command is None
                else f" (${a.cost_per_hour_usd:,.2f}/h)")
        notes.append(("Alternative: " if a.fits else "Closest: ") + a.label + cost)
    if result.none_reason:
        notes.append(f"No alternative: {result.none_reason}.")
    if result.ranking:
        notes.append(result.ranking)
    notes.append(f"{result.searched:,} candidate plans evaluated with the same code as `kvplan "
                 "estimate`; exit code 0: fits or borderline, 3: does not fit.")
    view = View(
        title=f"Plan: {spec.name} on {result.gpu}, {result.engine} "
              f"{result.engine_version or ''}".rstrip(),
        columns=[Column(header="", min_width=17), Column(header="")],
        rows=rows,
        records={"schema_version": JSON_SCHEMA_VERSION, **result.to_dict(),
                 **assumption_records(spec)},
        notes=notes,
        code=code,
        more=assumptions_views(spec),
    )
    # --explain: the chosen (or closest) layout's capacity, derived as `kvplan estimate` does.
    derived = () if c is None else (capacity_view(spec, c.capacity, device=result.gpu),)
    return replace(view, answer=plan_answer(plan_headline(result)), summary=view,
                   more=(*view.more, *derived))
