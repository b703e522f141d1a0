"""The listings: bundled model specs (`kvplan specs`), GPU presets (`kvplan gpus`) and engine
profiles (`kvplan engines`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from kvplan.engines.base import Engine
from kvplan.kv.cache import rank_caches
from kvplan.model.spec import ModelSpec
from kvplan.present.estimate_view import layer_mix
from kvplan.present.render import Column, View
from kvplan.present.text import BYTES_NOTE, commas, gib_text

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.hardware.gpus import GPU


def specs_view(specs: Sequence[ModelSpec], *, kv_dtype: str = "bf16") -> View:
    rows = []
    records = []
    for spec in specs:
        caches = rank_caches(spec, kv_dtype=kv_dtype)
        token_bytes, state_bytes = caches.bytes_per_token, caches.state_bytes
        mix = layer_mix(spec)
        rows.append([
            spec.id, spec.name, spec.kind.value, str(spec.num_hidden_layers),
            spec.attention.short(), mix, commas(token_bytes),
        ])
        records.append({
            "id": spec.id,
            "name": spec.name,
            "attention_kind": spec.kind.value,
            "num_layers": spec.num_hidden_layers,
            "elements_per_token_per_layer": spec.attention.elements_per_token(),
            "sliding_layers": sum(w is not None for w in spec.layer_windows),
            "sliding_window": spec.sliding_window,
            "kv_dtype": kv_dtype,
            "bytes_per_token": token_bytes,
            "state_bytes_per_request": state_bytes,
            "layer_mix": mix,
            "source": spec.source,
        })
    return View(
        title=f"Bundled model specs (KV bytes per token at {kv_dtype}, all layers)",
        columns=[Column(header="id", no_wrap=True), Column(header="name", optional=True),
                 Column(header="kind"), Column(header="layers", numeric=True),
                 Column(header="KV elements/token/layer", optional=True),
                 Column(header="layers by cache kind"),
                 Column(header="KV B/token", numeric=True)],
        rows=rows,
        records=records,
        notes=[BYTES_NOTE],
    )


def gpus_view(gpus: Sequence[GPU]) -> View:
    rows, records = [], []
    for g in gpus:
        rows.append([
            g.name, g.full_name, gib_text(g.memory_bytes),
            gib_text(g.reported_total_bytes) if g.reported_total_bytes else "(unknown)",
            f"{g.hbm_bytes_per_s / 1e12:,.2f} TB/s",
            f"{g.peak_bf16_flops_per_s / 1e12:,.0f}",
            f"{g.peak_fp8_flops_per_s / 1e12:,.0f}" if g.peak_fp8_flops_per_s else "-",
        ])
        records.append(asdict(g) | {"total_bytes": g.total_bytes})
    return View(
        title="GPU presets (--gpu)",
        columns=[Column(header="name", no_wrap=True), Column(header="product", optional=True),
                 Column(header="memory", numeric=True),
                 Column(header="reported total", numeric=True, optional=True),
                 Column(header="bandwidth", numeric=True),
                 Column(header="bf16 TFLOP/s", numeric=True),
                 Column(header="fp8 TFLOP/s", numeric=True)],
        rows=rows,
        records=records,
        notes=["Capacity planning uses the reported total (what torch.cuda.mem_get_info and "
               "vLLM's total_gpu_memory show) where a public log gives it, else the nominal "
               "memory. FLOP/s are dense peaks (no 2:4 sparsity); TB/s is 10^12 B/s.",
               BYTES_NOTE],
    )


def engines_view() -> View:
    """The engine profiles kvplan models and the rules that change between versions."""
    rows: list[list[str]] = []
    records: list[dict[str, object]] = []
    notes: list[str] = []
    for engine in Engine:
        more_rows, more_records, more_notes = engine.rules.profile_view()
        rows += more_rows
        records += more_records
        notes += more_notes
    return View(
        title="Engine profiles (--engine-version)",
        columns=[Column(header="profile"), Column(header="group size"),
                 Column(header="KV cache size: N tokens"), Column(header="in flight (async)"),
                 Column(header="chunked hybrid"), Column(header="mamba mode")],
        rows=rows, records=records, notes=notes)
