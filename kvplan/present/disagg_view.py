"""`kvplan plan --disagg`: both roles side by side, the KV handed over and the xPyD options."""

from __future__ import annotations

from typing import Any

from kvplan.model.spec import ModelSpec
from kvplan.present.launch_text import launch_lines
from kvplan.present.render import JSON_SCHEMA_VERSION, Column, View
from kvplan.present.text import gib_text


def _mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.1f} MiB"


def _ms(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f} ms"


def disagg_view(spec: ModelSpec, result: Any) -> View:
    p, d, h = result.prefill, result.decode, result.handover
    rows: list[list[str]] = []
    for label, fn in (
            ("GPUs per worker", lambda r: f"{r.candidate.layout.gpus} x {result.gpu}"),
            ("layout", lambda r: r.layout_text),
            ("KV dtype", lambda r: r.candidate.kv_dtype),
            ("memory fraction", lambda r: f"{r.candidate.mem_fraction:g}"),
            ("weights per GPU", lambda r: gib_text(r.candidate.capacity.weights_bytes)),
            ("KV budget per GPU", lambda r: gib_text(r.candidate.capacity.kv_budget_bytes)),
            ("block size", lambda r: f"{r.candidate.capacity.block_size}"),
            ("max concurrency", lambda r: f"{r.max_concurrency:,.2f}x "
                                          f"({r.candidate.requests:,})")):
        rows.append([label, fn(p), fn(d)])
    rows.append(["time", f"prefill {_ms(p.prefill_ms, 0)}",
                 f"TPOT {_ms(d.tpot_ms)} at {d.batch:,}/rank"])
    rows.append(["KV handed over", f"{_mib(h.bytes_per_request)} per request",
                 f"{_mib(max(h.bytes_per_rank))} per rank"])
    rows.append(["transfer", f"{result.transfer_ms:,.2f} ms",
                 f"{result.link.name}, {result.link.bytes_per_s / 1e9:,.1f} GB/s per GPU"])
    notes = [f"Connector {h.connector}: {len(h.transfer_bytes)} transfer"
             f"{'s' if len(h.transfer_bytes) != 1 else ''} of "
             + ", ".join(sorted({_mib(b) for b in h.transfer_bytes}))
             + f" ({h.tokens_moved:,} tokens, block {h.block_size})."]
    for m in h.moves:
        notes.append(f"  {m.kind}: {m.layers} layers x {m.units:,} x {m.unit_bytes:,} B "
                     f"({m.rule})")
    notes += list(result.notes)
    code: list[str] = []
    for role in (p, d):
        lines = launch_lines(role.launch)
        code += [lines[0].replace("# launch", f"# {role.role} worker"), *lines[1:]]
    more = []
    r = result.ratio
    if r is not None:
        opt_rows = [[o.label, f"{o.gpus}", "-" if o.cost_per_hour_usd is None
                     else f"${o.cost_per_hour_usd:,.2f}", f"{o.rate_rps:,.2f}",
                     f"{o.ttft_ms:,.0f}", f"{o.tpot_ms:,.1f}", f"{o.prefill_utilization:.0%}",
                     "yes" if o.meets_slo else "no"] for o in r.options]
        chosen = (f"chosen: {r.chosen.label} ({r.chosen.gpus} GPUs)" if r.chosen
                  else f"nothing serves the target: {r.reason}")
        more.append(View(
            title=f"xPyD for {r.target}: {chosen}",
            columns=[Column(header="xPyD"), Column(header="GPUs", numeric=True),
                     Column(header="$/h", numeric=True), Column(header="req/s", numeric=True),
                     Column(header="TTFT ms", numeric=True),
                     Column(header="TPOT ms", numeric=True),
                     Column(header="P util", numeric=True), Column(header="SLO")],
            rows=opt_rows, records=[o.to_dict() for o in r.options],
            notes=[f"TTFT = M/D/1 queue + prefill {r.prefill_ms:,.0f} ms + transfer "
                   f"{r.transfer_ms:,.2f} ms" + (
                       "" if h.first_token_steps is None else
                       f", ended on a decode step's boundary, + {h.first_token_steps:g} decode "
                       "steps to the first token")
                   + f"; a decode worker holds {r.decode_kv_requests:,} "
                   "requests of I + O tokens (a hard limit, counting those in flight from "
                   "prefill)." + ("" if r.slo_ttft_ms is not None else
                                  " Without --slo-ttft-ms: prefill workers until the mean "
                                  "queue is at most one prefill (utilisation <= 67%).")]))
    handed = f"{_mib(h.bytes_per_request)} handed over per request ({result.transfer_ms:,.2f} ms)"
    if r is not None and r.chosen is None:
        answer = f"No xPyD serves {r.target}: {r.reason}"
    elif r is not None:
        answer = f"{r.chosen.label} on {r.chosen.gpus} x {result.gpu} serves {r.target}; {handed}"
    else:
        answer = (f"Prefill {p.candidate.layout.gpus} x {result.gpu} ({p.layout_text}), decode "
                  f"{d.candidate.layout.gpus} ({d.layout_text}) holding "
                  f"{d.candidate.requests:,}; {handed}")
    return View(
        answer=answer,
        title=f"Disaggregated: {spec.name} on {result.gpu}, {result.engine} "
              f"{result.engine_version or ''}, {result.input_len:,} in / "
              f"{result.output_len:,} out".replace("  ", " "),
        columns=[Column(header="", min_width=17), Column(header="prefill"),
                 Column(header="decode")],
        rows=rows, records={"schema_version": JSON_SCHEMA_VERSION, **result.to_dict()},
        notes=notes, code=code, more=tuple(more))
