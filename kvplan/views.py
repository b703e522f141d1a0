"""Turn core results into Views (rows of strings plus JSON records). Pure: no rich, no I/O."""

from __future__ import annotations

from collections.abc import Sequence

from .cache import Estimate, kv_layout
from .render import JSON_SCHEMA_VERSION, Column, View
from .spec import ModelSpec
from .units import human_bytes, human_bytes_decimal

BYTES_NOTE = (
    "Bytes are exact integers. KiB/MiB/GiB are binary (2^10/2^20/2^30 B); "
    "kB/MB/GB are decimal (10^3/10^6/10^9 B)."
)


def _int(n: int) -> str:
    return f"{n:,}"




def specs_view(specs: Sequence[ModelSpec], *, kv_dtype: str = "bf16") -> View:
    rows = []
    records = []
    for spec in specs:
        layout = kv_layout(spec, kv_dtype=kv_dtype)
        windows = sorted({w for w in spec.layer_windows if w is not None})
        sliding = (
            f"{sum(w is not None for w in spec.layer_windows)}/{spec.num_hidden_layers} @ "
            + ",".join(str(w) for w in windows)
            if windows else ""
        )
        rows.append([
            spec.id, spec.name, spec.kind.value, str(spec.num_hidden_layers),
            spec.attention.short(), sliding, _int(layout.bytes_per_token),
        ])
        records.append({
            "id": spec.id,
            "name": spec.name,
            "attention_kind": spec.kind.value,
            "num_layers": spec.num_hidden_layers,
            "elements_per_token_per_layer": layout.elements_per_token_per_layer,
            "sliding_layers": sum(w is not None for w in spec.layer_windows),
            "sliding_window": spec.sliding_window,
            "kv_dtype": kv_dtype,
            "bytes_per_token": layout.bytes_per_token,
            "source": spec.source,
        })
    return View(
        title=f"Bundled model specs (KV bytes per token at {kv_dtype}, all layers)",
        columns=[Column(header="id"), Column(header="name"), Column(header="kind"),
                 Column(header="layers", numeric=True), Column(header="KV elements/token/layer"),
                 Column(header="sliding layers"),
                 Column(header=f"KV bytes/token ({kv_dtype})", numeric=True)],
        rows=rows,
        records=records,
        notes=[BYTES_NOTE],
    )


def estimate_view(spec: ModelSpec, est: Estimate) -> View:
    def row(label: str, n: int, how: str) -> list[str]:
        return [label, _int(n), human_bytes(n), human_bytes_decimal(n), how]

    rows = [
        row("per token per layer", est.bytes_per_token_per_layer,
            f"{est.elements_per_token_per_layer:,} elements x {est.kv_dtype}"),
        row("per token (all layers)", est.bytes_per_token, f"x {est.num_kv_layers} layers"),
        row("per block per layer (page)", est.bytes_per_block_per_layer,
            f"{est.block_size} tokens"),
        row("per block (all layers)", est.bytes_per_block, f"{est.block_size} tokens"),
        row("per sequence", est.bytes_per_sequence,
            f"{est.context:,} tokens, block-rounded, {est.blocks_per_sequence:,} layer-blocks"),
        row(f"batch of {est.batch:,}", est.bytes_per_batch, f"{est.batch:,} x per sequence"),
    ]
    notes = [
        f"{spec.name} ({spec.id}): {spec.attention.describe()}, {spec.num_hidden_layers} layers"
        + (f", tp={est.tp} (per-rank KV heads: {spec.attention.kv_heads_per_rank(est.tp)})"
           if est.tp > 1 else ""),
    ]
    if est.num_sliding_layers:
        notes.append(
            f"{est.num_sliding_layers} of {est.num_layers} layers use a sliding window of "
            f"{est.sliding_window:,} tokens and hold at most the window plus one block."
        )
    notes.append(BYTES_NOTE)
    records = {"schema_version": JSON_SCHEMA_VERSION, **est.to_dict(), "source": spec.source}
    return View(
        title=f"KV cache: {spec.name}, context {est.context:,}, batch {est.batch:,}, "
              f"{est.kv_dtype}, block {est.block_size}",
        columns=[Column(header="quantity"), Column(header="bytes", numeric=True),
                 Column(header="binary", numeric=True), Column(header="decimal", numeric=True),
                 Column(header="how")],
        rows=rows,
        records=records,
        notes=notes,
    )


__all__ = ["estimate_view", "specs_view"]
