"""Turn core results into Views (rows of strings plus JSON records). Pure: no rich, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.units import GiB, human_bytes, human_bytes_decimal
from kvplan.capacity.plan import CapacityPlan
from kvplan.engines.base import Engine
from kvplan.kv.cache import Estimate, rank_caches
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.present.render import JSON_SCHEMA_VERSION, Column, View

if TYPE_CHECKING:  # compare (and the cost model it imports) loads only for `compare`
    from kvplan.analysis.compare import Comparison
    from kvplan.hardware.gpus import GPU

BYTES_NOTE = (
    "Bytes are exact integers. KiB/MiB/GiB are binary (2^10/2^20/2^30 B); "
    "kB/MB/GB are decimal (10^3/10^6/10^9 B)."
)


def _int(n: int) -> str:
    return f"{n:,}"




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


def specs_view(specs: Sequence[ModelSpec], *, kv_dtype: str = "bf16") -> View:
    rows = []
    records = []
    for spec in specs:
        caches = rank_caches(spec, kv_dtype=kv_dtype)
        token_bytes, state_bytes = caches.bytes_per_token, caches.state_bytes
        mix = layer_mix(spec)
        rows.append([
            spec.id, spec.name, spec.kind.value, str(spec.num_hidden_layers),
            spec.attention.short(), mix, _int(token_bytes),
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


def estimate_view(spec: ModelSpec, est: Estimate) -> View:
    def row(label: str, n: int, how: str) -> list[str]:
        return [label, _int(n), human_bytes(n), human_bytes_decimal(n), how]

    rows = [
        row("per token per layer", est.bytes_per_token_per_layer,
            f"{est.elements_per_token_per_layer:,} elements x {est.kv_dtype}"),
        row("per token (all layers)", est.bytes_per_token,
            f"x {est.num_kv_layers} cache-owning layers"),
        row("per block per layer (page)", est.bytes_per_block_per_layer,
            f"{est.block_size} tokens"),
        row("per block (all layers)", est.bytes_per_block, f"{est.block_size} tokens"),
        row("per sequence", est.bytes_per_sequence,
            f"{est.context:,} tokens, block-rounded, {est.blocks_per_sequence:,} layer-blocks"),
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
    records = {"schema_version": JSON_SCHEMA_VERSION, **est.to_dict(), "source": spec.source}
    more = (groups_view(est.kv_cache_groups, context=est.context,
                        version=est.engine_version),) if len(est.kv_cache_groups) > 1 else ()
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


def groups_view(groups: Sequence[dict[str, object]], *, context: int,
                version: str | None) -> View:
    """vLLM's KV-cache groups: kind, how many groups, layers, page, pages per request."""
    rows = []
    for g in groups:
        rows.append([str(g["kind"]), _int(int(g["groups"])), _int(int(g["layers"]))
                     + (f" +{g['padding_layers']} pad" if g["padding_layers"] else ""),
                     _int(int(g["block_size"])), human_bytes(int(g["page_bytes"])),
                     _int(int(g["pages_per_request"])), str(g.get("describe", ""))])
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




def _gib(n: int | float) -> str:
    return f"{n / GiB:,.2f} GiB"


@dataclass(frozen=True, kw_only=True)
class ReverseAnswers:
    requests: int
    longest_context: int | None
    longest_context_capped: bool
    fraction_needed: float | None


def capacity_view(spec: ModelSpec, plan: CapacityPlan, *, device: str,
                  reverse: ReverseAnswers | None = None) -> View:
    rules = Engine(plan.engine).rules
    engine = rules.display_name
    frac_name = rules.fraction_name
    rows: list[list[str]] = []

    def row(label: str, value: str, n: int | None = None, how: str = "") -> None:
        rows.append([label, value, "" if n is None else _int(n), how])

    if plan.total_bytes is not None and not plan.kv_budget_given:
        row("device total", _gib(plan.total_bytes), plan.total_bytes, device)
        row(frac_name, f"{plan.mem_fraction:.3f}", None, plan.mem_fraction_rule)
    quant = "" if plan.quantization == "none" else f", {plan.quantization}"
    weights_how = (f"{plan.params / 1e9:,.2f}B params ({plan.params_active / 1e9:,.2f}B active) "
                   f"at {plan.weight_dtype}{quant}"
                   + (f" / tp {plan.tp}" if plan.tp > 1 else "")
                   + (f", stage {plan.limiting_stage} of pp {plan.pp}" if plan.pp > 1 else ""))
    if not plan.kv_budget_given:
        row("weights per GPU", _gib(plan.weights_bytes), plan.weights_bytes, weights_how)
        row("reserve", _gib(plan.reserve_bytes), plan.reserve_bytes,
            f"{engine} {plan.engine_version or ''}".rstrip()
            + ": the parts below")
        for name, part in plan.reserve_breakdown.items():
            row(f"  {name.replace('_', ' ')}", _gib(int(part["bytes"])), int(part["bytes"]),
                str(part["rule"]))
    row("KV budget per GPU", _gib(plan.kv_budget_bytes), plan.kv_budget_bytes,
        plan.budget_formula)
    row("KV bytes per token per GPU", human_bytes(plan.per_gpu_bytes_per_token),
        plan.per_gpu_bytes_per_token, f"tp {plan.tp}" + (", dp-attention" if plan.dp_attention
                                                        else ""))
    stage = plan.stages[plan.limiting_stage]
    label, how = rules.page_row(plan, stage.page_bytes, stage.group_size, stage.num_groups)
    row(label, human_bytes(stage.page_bytes), stage.page_bytes, how)
    row("num_blocks", _int(plan.num_blocks), None, "KV budget // page // layers per slot")
    row("token_capacity", _int(plan.token_capacity), None, "num_blocks // groups x block size")
    if plan.swa_max_total_num_tokens is not None:
        row("sliding-window pool tokens", _int(plan.swa_max_total_num_tokens), None,
            "SGLang's swa_layer_tokens: full tokens x swa_full_tokens_ratio "
            f"{plan.sglang_pool.get('swa_full_tokens_ratio')}")
    if plan.draft_max_total_num_tokens is not None:
        row("draft pool tokens", _int(plan.draft_max_total_num_tokens), None,
            f"SGLang's draft worker ({plan.sglang_pool.get('draft_layers')} layer(s), "
            f"{plan.sglang_pool.get('speculative_rule')} rule)")
        row("draft pool", _gib(plan.draft_kv_bytes), plan.draft_kv_bytes,
            "its own KV pool" + (", inside the budget" if plan.sglang_pool.get("draft_in_budget")
                                 else ", outside the fraction's budget"))
    if plan.max_mamba_cache_size is not None:
        row("recurrent-state slots", _int(plan.max_mamba_cache_size), None,
            "SGLang's max_mamba_cache_size (mamba_full_memory_ratio "
            f"{plan.sglang_pool.get('mamba_full_memory_ratio')})")
    for label, count, how in rules.view_rows(plan):
        row(label, _int(count), None, how)
    if plan.state_bytes_per_request:
        row("recurrent state per request", human_bytes(plan.state_bytes_per_request),
            plan.state_bytes_per_request,
            f"mamba cache mode {plan.mamba_cache_mode}" if plan.mamba_cache_mode else "")
    row("blocks per request", _int(plan.blocks_per_request), None,
        f"{plan.context:,} tokens" + (f", {stage.shared_prefix_blocks:,} shared prefix blocks"
                                      if stage.shared_prefix_blocks else ""))
    # Engines that do not print it print the pool in tokens; this is that pool over one
    # request's need.
    printed = f"{engine} prints this" if rules.prints_max_concurrency() else (
        f"not printed by {engine}")
    row("max_concurrency", f"{plan.max_concurrency:,.2f}x", None,
        f"requests of {plan.context:,} tokens ({printed})")
    if plan.max_running_requests is not None:
        row("max_running_requests", _int(plan.max_running_requests), None,
            "SGLang's cap on running requests" + (
                f" (state slots // {plan.sglang_pool['slots_per_request']})"
                if "slots_per_request" in plan.sglang_pool else ""))
    row("max_requests", _int(plan.max_requests), None, "whole requests that fit")
    if plan.dp_attention:
        row("max_requests, all DP ranks", _int(plan.total_max_requests), None,
            f"{plan.tp} attention-DP ranks x per-rank requests")
    records: dict[str, object] = {
        key: value for key, value in plan.to_dict().items() if key != "stages"
    }
    records["stages"] = [asdict(s) for s in plan.stages]
    if reverse is not None:
        if reverse.longest_context is None:
            row(f"longest context for {reverse.requests:,} requests", "none fits")
        else:
            row(f"longest context for {reverse.requests:,} requests",
                _int(reverse.longest_context), None,
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
        parts = ", ".join(f"{k.replace('_', ' ')} {_gib(v)}" for k, v in b.items()
                          if k != "total" and v)
        notes.append(f"Weights per GPU as the engine loads them (kvplan.weights.breakdown): {parts}.")
    more = (groups_view(plan.kv_cache_groups, context=plan.context,
                        version=plan.engine_version),) if rules.shows_groups(plan) else ()
    return View(
        more=more,
        title=f"Capacity on {device}: {engine}, context {plan.context:,}, {plan.kv_dtype} KV",
        columns=[Column(header="quantity"), Column(header="value", numeric=True),
                 Column(header="bytes", numeric=True), Column(header="how")],
        rows=rows,
        records=records,
        notes=notes,
    )


def gpus_view(gpus: Sequence[GPU]) -> View:
    rows, records = [], []
    for g in gpus:
        rows.append([
            g.name, g.full_name, _gib(g.memory_bytes),
            _gib(g.reported_total_bytes) if g.reported_total_bytes else "(unknown)",
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
            _int(r.elements_per_token_per_layer),
            _int(r.bytes_per_token),
            f"{r.ratio_vs_mha:.4f}",
            human_bytes(r.bytes_per_request),
            *([_int(r.max_requests) if r.max_requests is not None else "-"] if gpu else []),
            _flops(r.decode_flops_per_token),
            _flops(r.attention_flops_per_token),
            human_bytes(r.kv_read_bytes_per_token),
            f"{r.arithmetic_intensity:,.2f}",
            *([f"{r.roofline_ms_per_step:,.3f}" if r.roofline_ms_per_step is not None else "-",
               _int(r.compute_bound_batch) if r.compute_bound_batch else "never",
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
        notes.append(f"Roofline on {gpu.name}: max(FLOPs / bf16 peak, bytes / "
                     f"{gpu.hbm_bytes_per_s / 1e12:.2f} TB/s) per decode step at 100 % of the "
                     "datasheet (JSON roofline_ms_per_step; roofline_ms_per_token is the same "
                     "number under its former name); max requests in vLLM's accounting at "
                     f"gpu_memory_utilization 0.9 with estimated weights and reserve, tp {tp}.")
        notes.append("TPOT / TTFT / tok/s: kvplan.perf.costmodel, a sum over each step's operations "
                     "of max(FLOPs / achievable FLOP/s of its dtype, bytes / achievable "
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
    return View(
        more=(breakdown,),
        title=f"Attention schemes for {spec.name}: context {context:,}, {kv_dtype} KV"
              + (f", tp {tp}" if tp > 1 else ""),
        columns=columns,
        rows=table_rows,
        records=[r.to_dict() for r in rows],
        notes=notes,
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


def plan_view(spec: ModelSpec, result: Any) -> View:
    """`kvplan plan`: the verdict, the numbers behind it, the command, the alternatives."""
    c = result.chosen
    verdict = "FITS" if result.fits else "DOES NOT FIT"
    rows: list[list[str]] = [["verdict", verdict]]
    target = f"{result.concurrency:,} requests x {result.context:,} tokens"
    rows.append(["target", target])
    if c is not None:
        lay = c.layout
        parts = [f"tp {lay.tp}"] + ([f"pp {lay.pp}"] if lay.pp > 1 else []) + (
            [f"dp-attention {lay.dp}"] if lay.dp_attention else
            [f"dp {lay.dp}"] if lay.dp > 1 else []) + ([f"ep {lay.ep}"] if lay.ep > 1 else [])
        rows += [
            ["GPUs", f"{lay.gpus} x {result.gpu} ({lay.nodes} node{'s' if lay.nodes > 1 else ''})"],
            ["layout", ", ".join(parts)],
            ["KV dtype", c.kv_dtype],
            ["memory fraction", f"{c.mem_fraction:g}"],
            ["weights per GPU", _gib(c.capacity.weights_bytes)],
            ["KV budget per GPU", _gib(c.capacity.kv_budget_bytes)],
            ["block size", f"{c.capacity.block_size}"],
            ["max concurrency", f"{c.max_concurrency:,.2f}x ({c.requests:,} whole requests)"],
        ]
        if result.prediction is not None:
            p = result.prediction
            rows += [["predicted TPOT", f"{p.tpot_ms:,.1f} ms at the target load"],
                     ["predicted TTFT", f"{p.ttft_ms:,.0f} ms (prefill of one request)"],
                     ["throughput", f"{p.output_tokens_per_s_per_gpu:,.0f} tokens/s per GPU"]]
    notes = []
    if result.command:
        notes.append("Launch: " + result.command)
    for a in result.alternatives:
        notes.append(("Alternative: " if a.fits else "Closest: ") + a.label)
    notes.append(f"{result.searched:,} candidate plans evaluated with the same code as `kvplan "
                 "estimate`; exit code 0: fits, 3: does not fit.")
    return View(
        title=f"Plan: {spec.name} on {result.gpu}, {result.engine} "
              f"{result.engine_version or ''}".rstrip(),
        columns=[Column(header="", min_width=17), Column(header="")],
        rows=rows,
        records={"schema_version": JSON_SCHEMA_VERSION, **result.to_dict()},
        notes=notes,
    )
