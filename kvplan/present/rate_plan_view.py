"""`kvplan plan --rate`: the fewest GPUs that meet the SLOs, and the layouts tried, as a table and
JSON records (issue 30, item 5: `rate`, `slo`, `gpus`, `layout`, `replicas`, `goodput`, then
what the search returned; `dp_attention` and `ep` of each layout, and the answer's
`layout_text`, the engine's own words for it; since planrep63 `servers` (the independent
servers the stream is dealt to: replicas, or copies of an attention-DP engine) and `ranks`
(attention-DP ranks of each), and `search`: the GPUs one engine was tried on and what was not
searched). `replicas` keeps its meaning: the schedulers that split the requests (replicas, or
all attention-DP ranks of all copies)."""

from __future__ import annotations

from typing import Any

from kvplan.analysis.answers import rate_plan_headline
from kvplan.analysis.rate_plan import RatePlan
from kvplan.analysis.simulate.rate_search import LayoutTrial
from kvplan.present.answers import rate_plan_answer
from kvplan.present.launch_text import launch_lines
from kvplan.present.render import Column, View


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _trial(plan: RatePlan, t: LayoutTrial) -> dict[str, Any]:
    key = f"p{plan.percentile}"
    return {"tp": t.tp, "replicas": t.dp, "gpus": t.gpus, "meets": t.meets,
            f"ttft_ms_{key}": plan.at(t, "ttft_ms"), f"tpot_ms_{key}": plan.at(t, "tpot_ms"),
            "goodput": None if t.metrics is None else t.metrics.goodput,
            "refused": t.refused or None, "dp_attention": t.dp_attention, "ep": t.ep,
            # The running-request cap each scheduler (replica, attention-DP rank) simulated.
            "running_cap": t.running_cap,
            # The independent servers the stream is dealt to (replicas, attention-DP engines)
            # and the attention-DP ranks of each (1 without attention DP).
            "servers": t.servers, "ranks": t.ranks,
            # Pipeline stages of each replica, only where the layout has some.
            **({"pp": t.pp} if t.pp > 1 else {})}


def _label(t: LayoutTrial, plain: str = "{tp} x {dp}") -> str:
    """A table row's layout: "TP x replicas", or "N DP-attn" for one engine of N attention-DP
    ranks (a note gives the engine's words), "2 x (N DP-attn)" for two such engines, ", TP 2"
    after it where each rank is 2 GPUs."""
    if not t.dp_attention:
        return plain.format(tp=t.tp, dp=t.dp) + (f", PP {t.pp}" if t.pp > 1 else "")
    one = f"{t.ranks} DP-attn" + (f", TP {t.tp}" if t.tp > 1 else "")
    return f"{t.engines} x ({one})" if t.engines > 1 else one


# What plan --rate does not search, and why.
NOT_SEARCHED = ("replicas of an attention-DP engine over a node and a part of another (no "
                "engine's launch places one so), an engine over a number of nodes above the "
                "model's attention heads or routed experts in GPUs (every engine's check "
                "refuses it), pipeline parallelism other than vLLM's TP = the GPUs of a node x "
                "PP = nodes for a model no TP engine within a node holds (SGLang's and "
                "TensorRT-LLM's pipelines are not simulated)")


def rate_plan_records(plan: RatePlan) -> dict[str, Any]:
    best = plan.best
    fewer = plan.fewer
    # The engine's flags as applied, only where --engine-arg gave some.
    flags = {"engine_args": list(plan.engine_args)} if plan.engine_args else {}
    return {
        "rate": plan.rate,
        "slo": {"ttft_ms": plan.slo_ttft_ms, "tpot_ms": plan.slo_tpot_ms,
                "percentile": plan.percentile},
        "gpus": None if best is None else best.gpus,
        "layout": None if best is None else {"tp": best.tp, "pp": best.pp,
                                             "dp_attention": best.dp_attention, "ep": best.ep},
        "replicas": None if best is None else best.dp,
        "goodput": None if best is None or best.metrics is None else best.metrics.goodput,
        "headroom_ms": plan.headroom_ms(),
        "meets": best is not None,
        "best": None if best is None else _trial(plan, best),
        "one_fewer": _trial(plan, fewer[-1]) if best is not None and fewer else None,
        "trials": [_trial(plan, t) for t in plan.search.trials],
        "model": plan.model, "gpu": plan.gpu, "engine": plan.engine, "context": plan.context,
        "max_gpus": plan.max_gpus, "workload": plan.workload, **flags,
        # The answer as the engine's launch command spells it (EngineRules.layout_text).
        "layout_text": None if best is None else plan.layout_text(best),
        # Its commands, as plan's static answer gives them (LaunchPlan.to_dict).
        "launch": None if plan.launch is None else plan.launch.to_dict(),
        **({"launch_refused": plan.launch_refused} if plan.launch_refused else {}),
        "servers": None if best is None else best.servers,
        # The GPUs one engine was tried on (TP, or attention DP), and what was not searched.
        "search": {"engine_gpus": list(plan.sizes), "not_searched": NOT_SEARCHED,
                   # The fabric between nodes, only where --link named another than ib-ndr.
                   **({"link": plan.link} if plan.link_named else {}),
                   # The (TP, PP) pipeline engines tried, only where some were.
                   **({"pipelines": [{"tp": tp, "pp": pp} for tp, pp in plan.search.pipelines]}
                      if plan.search.pipelines else {})},
    }


def rate_plan_view(plan: RatePlan) -> View:
    key = f"p{plan.percentile}"
    rows = [[_label(t), str(t.gpus), _ms(plan.at(t, "ttft_ms")),
             _ms(plan.at(t, "tpot_ms")),
             "-" if t.metrics is None or t.metrics.goodput is None
             else f"{t.metrics.goodput:,.2f}",
             "yes" if t.meets else ("refused" if t.refused else "no")]
            for t in plan.search.trials]
    slos = ", ".join(f"{name} <= {v:g} ms" for name, v in (("TTFT", plan.slo_ttft_ms),
                                                            ("TPOT", plan.slo_tpot_ms))
                     if v is not None)
    best = plan.best
    if best is None:
        notes = [f"DOES NOT MEET: no layout of up to {plan.max_gpus} {plan.gpu} GPUs serves "
                 f"{plan.rate:g} req/s within {slos} at {key} in the simulator."]
    else:
        room = plan.headroom_ms()
        shown = ", ".join(f"{name} {_ms(room[k])} ms" for name, k in (("TTFT", "ttft_ms"),
                                                                      ("TPOT", "tpot_ms"))
                          if room[k] is not None)
        goodput = best.metrics.goodput if best.metrics is not None else None
        shape = (f"one engine ({plan.layout_text(best)})"
                 if best.dp_attention and best.engines == 1
                 else f"{best.engines} engines: {plan.layout_text(best)}" if best.dp_attention
                 else f"TP {best.tp} x {best.dp} replica(s)" if best.pp == 1
                 else f"TP {best.tp} x PP {best.pp} x {best.dp} replica(s)")
        notes = [f"MEETS: {best.gpus} {plan.gpu} GPU(s), {shape}, serve {plan.rate:g} req/s "
                 f"within {slos} at {key}"
                 + ("" if goodput is None else f", goodput {goodput:,.2f} req/s")
                 + (f"; headroom {shown}." if shown else ".")]
        if plan.fewer:
            last = plan.fewer[-1]
            why = last.refused or (f"{key} TTFT {_ms(plan.at(last, 'ttft_ms'))} ms, TPOT "
                                   f"{_ms(plan.at(last, 'tpot_ms'))} ms")
            shape = _label(last, "TP {tp} x {dp}")
            notes.append(f"One fewer: {last.gpus} GPU(s) ({shape}) misses ({why}).")
    notes.append("Each layout simulated on the same request stream (`kvplan simulate`'s "
                 "scheduler and cost model); fewest GPUs first.")
    if plan.search.pipelines:
        tp = plan.search.pipelines[0][0]
        stages = ", ".join(str(pp) for _, pp in plan.search.pipelines)
        notes.append(f"PP: no TP engine within a node of {plan.gpus_per_node} GPUs holds the "
                     f"model, so engines of TP {tp} x PP {stages} (vLLM's guide: TP within a "
                     "node, PP across nodes) were tried after the layouts without PP of each "
                     "GPU count (`kvplan simulate --pp`; not validated against a measured PP "
                     "run).")
    attention_dp = [t for t in plan.search.trials if t.dp_attention]
    # The note's example: one engine of N ranks on N GPUs (attention TP 1), as it says.
    one = [t for t in attention_dp if t.engines == 1 and t.tp == 1]
    if attention_dp:
        notes.append(f"N DP-attn: one {plan.engine_name} engine on N GPUs, attention "
                     "data-parallel over N ranks in lockstep, experts over the GPUs (e.g. "
                     f"{plan.layout_text(one[-1] if one else attention_dp[-1])}; `kvplan simulate "
                     "--dp-attention`).")
    if any(t.engines > 1 or t.tp > 1 for t in attention_dp):
        notes.append("R x (N DP-attn): R such engines, several on a node or each on its own "
                     "whole nodes, the stream dealt round-robin; \", TP T\": ranks of T GPUs "
                     f"(attention TP T). Not searched: {NOT_SEARCHED}.")
    if plan.engine_args:
        notes.append("Engine flags on every layout: "
                     + ", ".join(a["given"] for a in plan.engine_args) + ".")
    code: list[str] = []
    if best is not None and plan.launch is not None:
        code = launch_lines(plan.launch)
        schedulers = (f"{best.dp} attention-DP ranks" if best.dp_attention
                      else f"{best.dp} replica(s)")
        notes.append(f"The launch's running-request flag gives each of the {schedulers} the "
                     f"{best.running_cap:,} running requests it was simulated with, in "
                     f"{plan.engine_name}'s own unit; the memory fraction and KV dtype are the "
                     "simulated ones.")
        notes += list(plan.launch.notes)
    elif plan.launch_refused:
        notes.append(f"No launch command: {plan.launch_refused}")
    return View(
        answer=rate_plan_answer(rate_plan_headline(plan)),
        title=f"{plan.model} at {plan.rate:g} req/s on {plan.gpu}: fewest GPUs within the SLOs",
        columns=[Column(header="TP x replicas"), Column(header="GPUs", numeric=True),
                 Column(header=f"TTFT {key} (ms)", numeric=True),
                 Column(header=f"TPOT {key} (ms)", numeric=True),
                 Column(header="goodput (req/s)", numeric=True), Column(header="meets")],
        rows=rows, records=rate_plan_records(plan), notes=tuple(notes), code=tuple(code))
