"""`kvplan estimate`'s KV-cache table and vLLM's KV-cache groups beside it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace

from kvplan._util.units import human_bytes, human_bytes_decimal
from kvplan.kv.cache import Estimate
from kvplan.model.spec import ModelSpec
from kvplan.present.answers import EXPLAIN_HINT
from kvplan.present.render import JSON_SCHEMA_VERSION, Column, View
from kvplan.present.text import BYTES_NOTE, commas


def layer_mix(spec: ModelSpec) -> str:
    """The layers by cache kind, e.g. '36 gated_delta_net + 12 full' ('' when all full)."""
    counts: dict[str, int] = {}
    owners = spec.kv_owner_flags
    for i in range(spec.num_hidden_layers):
        kinds = []
        if spec.has_attention(i):
            window, chunk = spec.layer_windows[i], spec.chunk(i)
            kinds.append(f"sliding {window}" if window is not None else
                         f"chunked {chunk}" if chunk is not None else "full")
            if not owners[i]:
                kinds[-1] = "shared"
        if spec.has_recurrent(i):
            assert spec.recurrent is not None
            kinds.append(spec.recurrent.kind)
        key = "+".join(kinds) or "mlp"
        counts[key] = counts.get(key, 0) + 1
    if list(counts) == ["full"]:
        return ""
    return " + ".join(f"{n} {k}" for k, n in counts.items())


def estimate_view(spec: ModelSpec, est: Estimate) -> View:
    def row(label: str, n: int, how: str) -> list[str]:
        return [label, commas(n), human_bytes(n), human_bytes_decimal(n), how]

    if est.bytes_per_token is None or est.elements_per_token_per_layer is None:
        # DeepSeek-V4: rows of one per 4 or 128 tokens in pages of their own (kvplan.kv.
        # compressed): no whole bytes per token; vLLM's groups size it.
        why = "no whole bytes per token: paged by kind (the groups, --explain)"
        rows = [[label, "-", "-", "-", why] for label in ("per token", "per block")]
        blocks = "pool blocks"  # vLLM's packed pool: whole pool blocks (kv.cache.estimate)
    else:
        blocks = "layer-blocks"
        rows = [
            row("per token per layer", est.bytes_per_token_per_layer or 0,
                f"{est.elements_per_token_per_layer:,} elements x {est.kv_dtype}"),
            row("per token (all layers)", est.bytes_per_token,
                f"x {est.num_kv_layers} cache-owning layers"),
            row("per block per layer (page)", est.bytes_per_block_per_layer or 0,
                f"{est.block_size} tokens"),
            row("per block (all layers)", est.bytes_per_block or 0, f"{est.block_size} tokens"),
        ]
    rows += [
        row("per sequence", est.bytes_per_sequence,
            f"{est.context:,} tokens, block-rounded, {est.blocks_per_sequence:,} {blocks}"),
        row(f"batch of {est.batch:,}", est.bytes_per_batch, f"{est.batch:,} x per sequence"),
    ]
    if est.state_bytes_per_request:
        rows.insert(2, row("recurrent state per request", est.state_bytes_per_request,
                           f"{est.num_recurrent_layers} layers, whatever the context"))
    notes = [
        f"{spec.name} ({spec.id}): {spec.attention.describe()}, {spec.num_hidden_layers} layers"
        + (f", tp={est.tp} (per-rank KV heads: {spec.attention.kv_heads_per_rank(est.tp)})"
           if est.tp > 1 else ""),
    ]
    for att in spec.attention_shapes[1:]:
        which = sorted({"sliding" if spec.layer_windows[i] is not None else "full-attention"
                        for i in range(spec.num_hidden_layers) if spec.attention_at(i) is att})
        notes.append(f"The {' and '.join(which)} layers have their own shape: {att.describe()} "
                     "(the per-layer rows above are the first shape's).")
    if est.num_sliding_layers:
        notes.append(
            f"{est.num_sliding_layers} of {est.num_layers} layers use a sliding window of "
            f"{est.sliding_window:,} tokens and hold at most the window plus one block."
        )
    if est.num_kv_shared_layers:
        notes.append(
            f"{est.num_kv_shared_layers} of {est.num_layers} layers reuse an earlier layer's KV "
            "cache (cross-layer sharing) and allocate nothing.")
    mix = layer_mix(spec)
    if mix:
        notes.append(f"Layers by cache kind: {mix}.")
    if est.num_draft_layers:
        notes.append(f"{est.num_draft_layers} speculative-decoding draft layer(s) included.")
    if est.state_padding_percent is not None and est.block_size != est.requested_block_size:
        notes.append(
            f"vLLM raises the attention block from {est.requested_block_size} to "
            f"{est.block_size} tokens so one page holds a recurrent state, and pads the state "
            f"page by {est.state_padding_percent:.2f}% (vLLM logs both lines).")
    notes.append(BYTES_NOTE)
    records = {"schema_version": JSON_SCHEMA_VERSION, **est.to_dict(), "source": spec.source,
               **assumption_records(spec)}
    more = (groups_view(est.kv_cache_groups, context=est.context,
                        version=est.engine_version),) if len(est.kv_cache_groups) > 1 else ()
    more += assumptions_views(spec)
    return View(
        title=f"KV cache: {spec.name}, context {est.context:,}, batch {est.batch:,}, "
              f"{est.kv_dtype}, block {est.block_size}",
        columns=[Column(header="quantity"), Column(header="bytes", numeric=True),
                 Column(header="binary", numeric=True),
                 Column(header="decimal", numeric=True, optional=True),
                 Column(header="how")],
        rows=rows,
        records=records,
        notes=notes,
        more=more,
    )


def estimate_summary(spec: ModelSpec, view: View) -> View | None:
    """`estimate` without a device and without --explain: the KV table and the assumptions,
    without vLLM's KV-cache groups (None: nothing to leave out)."""
    kept = assumptions_views(spec)
    if len(kept) == len(view.more):
        return None
    return replace(view, more=kept, notes=[*view.notes, EXPLAIN_HINT])


def groups_view(groups: Sequence[dict[str, object]], *, context: int,
                version: str | None) -> View:
    """vLLM's KV-cache groups: kind, how many groups, layers, page, pages per request."""
    rows = []
    for g in groups:
        rows.append([str(g["kind"]), commas(int(g["groups"])), commas(int(g["layers"]))
                     + (f" +{g['padding_layers']} pad" if g["padding_layers"] else ""),
                     commas(int(g["block_size"])), human_bytes(int(g["page_bytes"])),
                     commas(int(g["pages_per_request"])), str(g.get("describe", ""))])
    return View(
        title=f"vLLM {version or ''} KV-cache groups (pages per request at {context:,} tokens)",
        columns=[Column(header="kind"), Column(header="groups", numeric=True),
                 Column(header="layers", numeric=True), Column(header="block", numeric=True),
                 Column(header="page", numeric=True), Column(header="pages/req", numeric=True),
                 Column(header="cache", optional=True)],
        rows=rows, records={"kv_cache_groups": list(groups)},
        notes=["Each group holds one page per block slot for each of its layers; a request "
               "takes its pages/req from every group of its kind (vllm/v1/core/"
               "kv_cache_utils.py)."])




def assumption_records(spec: ModelSpec) -> dict[str, object]:
    """`exact` and `assumptions` of the JSON of estimate and plan: whether the sizes rest only on
    what the config states for a family kvplan reads, and else what was assumed."""
    return {"exact": spec.exact, "kv_exact": spec.kv_exact,
            "assumptions": [asdict(a) for a in spec.assumptions]}


def assumptions_views(spec: ModelSpec) -> tuple[View, ...]:
    """The table "Assumptions" (none when the spec is exact)."""
    if spec.exact:
        return ()
    return (View(
        title="Assumptions",
        columns=[Column(header="field"), Column(header="assumed"), Column(header="why")],
        rows=[[a.field, a.value, a.why] for a in spec.assumptions],
        records={},
        notes=[_not_exact_note(spec)]),)


def _not_exact_note(spec: ModelSpec) -> str:
    if any(a.field == "model_type" for a in spec.assumptions):
        return (f"Not exact: model_type {spec.model_type!r} is read from its standard fields; "
                "each value above was taken, not read.")
    if spec.kv_exact:
        return ("Not exact: the weights rest on the values above (a GPU's KV budget with "
                "them); every cache size is read from the config.")
    return "Not exact: each value above was taken, not read."
