"""`kvplan verify`'s result as a View: kvplan's own plan beside what the allocator took (the
allocator-overhead check, `verify.CHECK`; not agreement with an engine). Pure: no torch, no rich.

JSON: the `planned_*` keys are the plan; `predicted_*`, their former names, are kept as aliases.
"""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.units import human_bytes
from kvplan.analysis.answers import verify_headline
from kvplan.analysis.device.verify import CHECK, VerifyResult
from kvplan.present.answers import EXPLAIN_HINT, verify_answer
from kvplan.present.render import JSON_SCHEMA_VERSION, Column, View


def _int(n: int) -> str:
    return f"{n:,}"


def _bytes(n: int) -> str:
    # Two lines in the table (80 columns); one in Markdown (render joins a cell's lines).
    return f"{n:,} B\n({human_bytes(n)})"


# The widest figure the measured column holds ("186,654,720 B", "(178.01 MiB)", "20,175.05 ms").
DEVICE_NAME_WIDTH = 16


def _folded(text: str, width: int = DEVICE_NAME_WIDTH) -> str:
    """A device name wrapped at words to `width` columns (a longer word stays whole), so the
    measured column stays as narrow as its numbers whatever the device reports (a CPU's model name
    with its clock and count is 46 characters)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_long_words=False)) or text


def _seconds(s: float | None) -> str:
    return "" if s is None else f"{s * 1e3:,.2f} ms"


def verify_view(r: VerifyResult) -> View:
    rows: list[list[str]] = []

    def row(label: str, planned: str, measured: str, how: str = "") -> None:
        rows.append([label, planned, measured, how])

    sign = "+" if r.difference_bytes >= 0 else "-"
    row("device", r.device, _folded(r.device_name),
        f"total {human_bytes(r.total_bytes)}, free {human_bytes(r.free_bytes)} before the run")
    row("budget (hard limit on the peak)", _bytes(r.budget_bytes), "", r.budget_source)
    row("KV budget", _bytes(r.kv_budget_bytes), "",
        f"budget - {human_bytes(r.decode_workspace_bytes)} decode workspace")
    row("page (largest)", _bytes(r.page_bytes), "",
        f"{r.block_size} tokens; {r.group_size} tensor(s)"
        + (f", {r.num_groups} groups" if r.num_groups > 1 else ""))
    row("KV cache bytes", _bytes(r.predicted_bytes), _bytes(r.measured_bytes),
        f"{sign}{abs(r.difference_bytes):,} B ({r.difference_pct:+.3f}%)")
    row("tensor bytes (sum of nbytes)", _bytes(r.predicted_bytes), _bytes(r.tensor_bytes),
        "exact" if r.tensor_bytes == r.predicted_bytes else "MISMATCH")
    if r.cuda_allocated_bytes is not None and r.cuda_reserved_bytes is not None:
        row("torch memory_allocated / reserved", "", f"{_int(r.cuda_allocated_bytes)} /\n"
            f"{_int(r.cuda_reserved_bytes)} B", "deltas over the run's baseline")
    row("allocator overhead", "", _bytes(r.allocator_overhead_bytes),
        "reserved - allocated" if r.cuda_reserved_bytes is not None
        else "RSS growth - tensor bytes")
    row("num_blocks", _int(r.predicted_num_blocks), _int(r.measured_num_blocks),
        f"measured: searched to {r.search_limit}")
    row("token_capacity", _int(r.predicted_token_capacity), _int(r.measured_token_capacity),
        "num_blocks // groups x block size")
    row("max_concurrency", f"{r.predicted_max_concurrency:,.3f}x",
        f"{r.measured_max_concurrency:,.3f}x",
        f"requests of {r.context:,} tokens ({r.blocks_per_request:,} blocks each)")
    row("peak over the start", f"<= {r.peak_limit_bytes:,} B", _bytes(r.peak_bytes),
        ("within" if r.peak_ok else "OVER") + " the budget + allocator granularity")
    row("decode step", "", _seconds(r.decode_step_seconds),
        f"{r.decode_batch} request(s) x {r.decode_context:,} tokens, all layers, "
        f"{r.decode_compute_dtype}, chunks of {r.decode_chunk_tokens:,} tokens; output "
        + ("finite" if r.decode_output_finite else "NOT FINITE"))
    if r.absorbed_vs_naive_max_rel_error is not None:
        ok = "within" if r.absorbed_vs_naive_ok else "OUTSIDE"
        row("MLA absorbed vs naive", f"<= {r.absorbed_vs_naive_tolerance:g}",
            f"{r.absorbed_vs_naive_max_rel_error:.2e}", f"max relative error, {ok} tolerance")
        row("MLA naive / absorbed (layer 0)", "",
            f"{_seconds(r.mla_naive_seconds)} /\n{_seconds(r.mla_absorbed_seconds)}",
            f"{r.mla_check_requests} request(s)")
    row("freed", "", "yes" if r.freed_ok else "NO",
        f"{r.live_tensors_after_free} tensors alive; {r.freed_residual_bytes:+,} B over the "
        "baseline")
    for rank in r.ranks if len(r.ranks) > 1 else ():
        row(f"rank {rank['rank']} num_blocks", _int(int(rank["predicted_num_blocks"])),
            _int(int(rank["measured_num_blocks"])),
            f"stage {rank['stage']} (layers {rank['first_layer']}+{rank['num_layers']}), "
            f"peak {human_bytes(int(rank['peak_bytes']))}")
    records = {"schema_version": JSON_SCHEMA_VERSION, "check": CHECK, **r.to_dict()}
    for name in ("bytes", "num_blocks", "token_capacity", "max_concurrency"):
        records[f"planned_{name}"] = records[f"predicted_{name}"]
    records["notes"] = list(r.notes)
    view = View(
        title=f"Verify: {r.model_name} on {r.device}, context {r.context:,}, {r.kv_dtype}, "
              f"block {r.block_size}" + (f", tp {r.tp}" if r.tp > 1 else "")
              + (f", pp {r.pp}" if r.pp > 1 else ""),
        columns=[Column(header="quantity"), Column(header="planned (kvplan)", numeric=True),
                 Column(header="measured", numeric=True), Column(header="difference / how")],
        rows=rows,
        records=records,
        notes=list(r.notes),
    )
    # Without --explain: planned against measured, without the how column and the notes.
    summary = replace(view, columns=view.columns[:3], rows=[row[:3] for row in rows],
                      notes=[EXPLAIN_HINT])
    return replace(view, answer=verify_answer(verify_headline(r)), summary=summary)
