"""`kvplan compare`: attention schemes side by side, with the roofline and predicted times."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kvplan._util.units import human_bytes
from kvplan.analysis.answers import compare_headline
from kvplan.model.spec import ModelSpec
from kvplan.present.answers import EXPLAIN_HINT, compare_answer
from kvplan.present.estimate_view import layer_mix
from kvplan.present.render import Column, View
from kvplan.present.text import BYTES_NOTE, commas

if TYPE_CHECKING:  # compare (and the cost model it imports) loads only for `compare`
    from kvplan.analysis.compare import Comparison
    from kvplan.hardware.gpus import GPU

FLOPS_NOTE = ("FLOPs count 2 per multiply-add, matmuls only (softmax, RoPE, norms and "
              "activations excluded).")


def _flops(n: float) -> str:
    for name, size in (("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {name}"
    return f"{n:,.0f} FLOP"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def compare_view(spec: ModelSpec, comparison: Comparison, *, context: int, batch: int,
                 kv_dtype: str, tp: int, gpu: GPU | None, share_layers: int = 1) -> View:
    rows = comparison.rows
    crossover = comparison.mla_absorbed_crossover_context
    costed = any(r.cost_per_million_tokens_usd is not None for r in rows)
    table_rows = []
    for r in rows:
        table_rows.append([
            r.scheme + (" *" if r.native else ""),
            commas(r.elements_per_token_per_layer),
            commas(r.bytes_per_token),
            f"{r.ratio_vs_mha:.4f}",
            human_bytes(r.bytes_per_request),
            *([commas(r.max_requests) if r.max_requests is not None else "-"] if gpu else []),
            _flops(r.decode_flops_per_token),
            _flops(r.attention_flops_per_token),
            human_bytes(r.kv_read_bytes_per_token),
            f"{r.arithmetic_intensity:,.2f}",
            *([f"{r.roofline_ms_per_step:,.3f}" if r.roofline_ms_per_step is not None else "-",
               commas(r.compute_bound_batch) if r.compute_bound_batch else "never",
               _ms(r.tpot_ms), _ms(r.ttft_ms),
               "-" if r.output_tokens_per_s_per_gpu is None
               else f"{r.output_tokens_per_s_per_gpu:,.1f}",
               *([f"{r.cost_per_million_tokens_usd:,.3f}"] if costed else [])]
              if gpu else []),
        ])
    columns = [
        Column(header="scheme"),
        Column(header="KV elem/token/layer", numeric=True, optional=True),
        Column(header="B/token", numeric=True),
        Column(header="vs MHA", numeric=True, optional=True),
        Column(header="KV/req", numeric=True),
    ]
    if gpu:
        columns.append(Column(header="max req", numeric=True))
    columns += [
        Column(header="FLOP/tok", numeric=True),
        Column(header="attention FLOPs/token", numeric=True, optional=True),
        Column(header="KV read/token", numeric=True, optional=True),
        Column(header=f"FLOP/byte @ batch {batch}", numeric=True, optional=True),
    ]
    if gpu:
        columns += [Column(header=f"roofline ms/step @ batch {batch}", numeric=True,
                           optional=True),
                    Column(header="compute-bound batch", numeric=True, optional=True),
                    Column(header="TPOT ms", numeric=True),
                    Column(header=f"TTFT ms @ {context:,}", numeric=True, optional=True),
                    Column(header="output tok/s/GPU", numeric=True, optional=True)]
        if costed:
            columns.append(Column(header="USD / M output tokens", numeric=True))
    notes = ["* the model's native scheme. " + FLOPS_NOTE,
             "Decode FLOPs per token at the given context: attention layers + MLP/experts + "
             "lm_head; attention FLOPs include Q/KV/O projections. KV read: one request's cache "
             "read per decode step; weights are read once per step for the whole batch."]
    mla = next(r for r in rows if r.scheme.startswith("MLA"))
    notes.append(f"MLA caches {mla.elements_per_token_per_layer:,} elements per token per layer "
                 f"= GQA with {comparison.mla_equivalent_gqa_groups:.2f} groups (DeepSeek-V2 "
                 "Table 1: d_c + d_h^R = 4.5 d_h, i.e. 2.25 groups).")
    if crossover is not None:
        notes.append(f"Absorbed MLA costs fewer decode FLOPs than naive MLA from a context of "
                     f"{crossover:,} tokens on (computed).")
    if gpu:
        fraction = ("for its version" if comparison.mem_fraction is None
                    else f"{comparison.mem_fraction:g}")
        notes.append(f"Roofline on {gpu.name}: max(FLOPs / bf16 peak, bytes / "
                     f"{gpu.hbm_bytes_per_s / 1e12:.2f} TB/s) per decode step at 100 % of the "
                     "datasheet (JSON roofline_ms_per_step; roofline_ms_per_token is the same "
                     "number under its former name); max requests in vLLM's accounting at "
                     f"gpu_memory_utilization {fraction} (its default, as in `kvplan "
                     f"estimate`) with estimated weights and reserve, tp {tp}.")
        notes.append("TPOT / TTFT / tok/s: kvplan.perf.costmodel, a sum over each step's "
                     "operations of max(FLOPs / achievable FLOP/s of its dtype, bytes / achievable "
                     "bandwidth, a kernel floor), plus TP all-reduce / EP all-to-all over the "
                     "interconnect; TTFT is the prefill of one prompt of the context's length.")
    if share_layers > 1:
        notes.append(f"Every scheme with cross-layer KV sharing x{share_layers}.")
    mix = layer_mix(spec)
    if spec.num_recurrent_layers or spec.num_attention_layers < spec.num_hidden_layers:
        notes.append(f"Layers by cache kind: {mix}. Only the {spec.num_attention_layers} "
                     "attention layers are rewritten; recurrent layers keep their state (in "
                     "KV/request, and read and written once per decode step in KV read).")
    notes.append(BYTES_NOTE)
    terms = ("q_proj", "kv_proj", "kv_up_proj", "absorb", "scores", "values", "o_proj")
    breakdown = View(
        title=f"Attention FLOPs per layer per decoded token at context {context:,}, by term",
        columns=[Column(header="scheme"),
                 *(Column(header=t, numeric=True, optional=t not in ("scores", "values"))
                   for t in terms),
                 Column(header="prefill FLOPs/token", numeric=True)],
        rows=[[r.scheme, *(_flops(r.attention_flops_per_layer[t]) if
                           r.attention_flops_per_layer[t] else "-" for t in terms),
               _flops(r.prefill_flops_per_token)] for r in rows],
        records=[],
        notes=["q_proj: query projection (MLA: through q_lora_rank when present); kv_proj: K/V "
               "projections (MLA: down-projection to the latent + RoPE key; decompressed: plus "
               "the new token's up-projection); kv_up_proj: naive MLA's up-projection of every "
               "cached latent; absorb: absorbed MLA's q_nope W_UK and W_UV; scores: q K^T; "
               "values: softmax(.) V; o_proj: output projection. Prefill: per prompt token of a "
               f"causal {context:,}-token prompt, whole model (MLA prefill uses the naive form)."],
    )
    view = View(
        more=(breakdown,),
        title=f"Attention schemes for {spec.name}: context {context:,}, {kv_dtype} KV"
              + (f", tp {tp}" if tp > 1 else ""),
        columns=columns,
        rows=table_rows,
        records=[r.to_dict() for r in rows],
        notes=notes,
    )
    # Without --explain: the schemes' table with its first note, no FLOPs breakdown.
    summary = replace(view, more=(), notes=[notes[0], EXPLAIN_HINT])
    return replace(view, answer=compare_answer(compare_headline(comparison)), summary=summary)
