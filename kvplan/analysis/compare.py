"""`kvplan compare`: one model's dimensions rewritten as MHA, GQA, MQA and MLA, side by side.

Rewrites keep everything but the attention's KV layout:
- per-head dim d_h: the model's head_dim (K) and v_head_dim (V); for an MLA model, its
  qk_nope_head_dim and v_head_dim (DeepSeek-V2's d_h = 128, as in the paper's Table 1);
- MHA: KV heads = query heads; GQA: `groups` KV heads (and the model's own count when it differs);
  MQA: one KV head;
- MLA: the model's own dims when it is MLA, else kv_lora_rank = 4·d_h and qk_rope_head_dim =
  d_h / 2 (DeepSeek-V2's choices, d_c = 4·d_h and d_h^R = d_h / 2), queries uncompressed.
  Shown in three forms: absorbed (cache the latent; decode over the latent), naive (cache the
  latent; up-project it at every step) and decompressed (cache per-head K and V).

DeepSeek-V2 paper Table 1 per token: MHA 2·n_h·d_h·l, GQA 2·n_g·d_h·l, MQA 2·d_h·l,
MLA (d_c + d_h^R)·l = 4.5·d_h·l, i.e. MLA equals GQA with 2.25 groups.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import build_inputs, platform_fields
from kvplan.capacity.plan import plan_capacity
from kvplan.hardware.gpus import GPU
from kvplan.kv.cache import rank_caches
from kvplan.model.attention import AttentionKind, HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec, with_share_every
from kvplan.perf.costmodel import CostInputs, predict
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.flops import (
    AttentionFlops,
    MLAForm,
    absorbed_crossover_context,
    attention_flops,
    decode_cost,
    mla_cache_elements,
    with_attention,
)
from kvplan.perf.layout import Layout


@dataclass(frozen=True, kw_only=True)
class SchemeRow:
    """One row of `kvplan compare`. Field names are the JSON contract."""

    scheme: str
    native: bool
    kv_heads: int | None
    elements_per_token_per_layer: int
    bytes_per_token: int
    ratio_vs_mha: float
    bytes_per_request: int
    max_requests: int | None
    decode_flops_per_token: int
    attention_flops_per_token: int
    prefill_flops_per_token: int
    # One layer, one decoded token at the context, by term (q_proj, kv_proj, kv_up_proj, absorb,
    # scores, values, o_proj): the breakdown behind attention_flops_per_token.
    attention_flops_per_layer: dict[str, int]
    kv_read_bytes_per_token: int
    weight_read_bytes_per_step: int
    arithmetic_intensity: float
    # One decode step for the batch: max(FLOPs / bf16 peak, bytes / bandwidth) at 100 % of the
    # datasheet, the simple bound kept for comparison. roofline_ms_per_token is the same number
    # under its former (misleading) name, kept for the JSON contract.
    roofline_ms_per_step: float | None
    roofline_ms_per_token: float | None
    compute_bound_batch: int | None
    # Predictions of kvplan.perf.costmodel (None without a GPU): time per output token of one
    # request, prefill of one --context prompt, output tokens/s per GPU, USD per million output
    # tokens.
    tpot_ms: float | None = None
    decode_step_ms: float | None = None
    ttft_ms: float | None = None
    output_tokens_per_s_per_gpu: float | None = None
    cost_per_million_tokens_usd: float | None = None
    decode_ms_by_op: dict[str, float] | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _head_dims(spec: ModelSpec) -> tuple[int, int]:
    att = spec.attention
    if isinstance(att, LatentAttention):
        return att.qk_nope_head_dim, att.v_head_dim
    return att.head_dim, att.v_head_dim


DEFAULT_GQA_GROUPS = 8  # the GQA row's KV heads when --groups is not given


def check_gqa_groups(spec: ModelSpec, groups: int) -> None:
    """A GQA row needs 1 < groups < heads, dividing the query heads; a --groups given that is
    not one is refused (it was silently dropped from `compare`'s table, issue 32)."""
    heads = spec.attention.num_attention_heads
    if not (1 < groups < heads and heads % groups == 0):
        raise InputError(f"--groups: {groups} KV heads is not a GQA layout for {heads} query "
                         f"heads (need 1 < groups < {heads}, dividing {heads})")


def scheme_variants(spec: ModelSpec, *, groups: int = 8, kv_lora_rank: int | None = None,
                    rope_dim: int | None = None,
                    ) -> list[tuple[str, HeadAttention | LatentAttention, MLAForm | None]]:
    """(label, attention, MLA form) for every scheme `compare` shows, MHA first."""
    att = spec.attention
    heads = att.num_attention_heads
    d_k, d_v = _head_dims(spec)
    if groups < 1:
        raise InputError(f"--groups: must be >= 1, got {groups}")

    def head(kind: AttentionKind, kv: int) -> HeadAttention:
        return HeadAttention(kind=kind, num_attention_heads=heads, num_key_value_heads=kv,
                             head_dim=d_k, v_head_dim=d_v,
                             attention_bias=getattr(att, "attention_bias", False),
                             o_proj_bias=getattr(att, "o_proj_bias", False))

    out: list[tuple[str, HeadAttention | LatentAttention, MLAForm | None]] = [
        ("MHA", head(AttentionKind.mha, heads), None)]
    gqa_counts = [groups]
    if isinstance(att, HeadAttention) and att.kind is AttentionKind.gqa:
        gqa_counts.append(att.num_key_value_heads)
    for g in sorted(set(gqa_counts), reverse=True):
        if 1 < g < heads and heads % g == 0:
            out.append((f"GQA-{g}", head(AttentionKind.gqa, g), None))
    out.append(("MQA", head(AttentionKind.mqa, 1), None))
    if isinstance(att, LatentAttention) and kv_lora_rank is None and rope_dim is None:
        mla = att
    else:
        base = att if isinstance(att, LatentAttention) else None
        mla = LatentAttention(
            num_attention_heads=heads,
            kv_lora_rank=kv_lora_rank or (base.kv_lora_rank if base else 4 * d_k),
            qk_rope_head_dim=rope_dim or (base.qk_rope_head_dim if base else max(1, d_k // 2)),
            qk_nope_head_dim=d_k,
            v_head_dim=d_v,
            q_lora_rank=base.q_lora_rank if base else None,
        )
    for form in (MLAForm.absorbed, MLAForm.naive, MLAForm.decompressed):
        out.append((f"MLA ({form.value})", mla, form))
    return out


def _is_native(spec: ModelSpec, attention: HeadAttention | LatentAttention,
               form: MLAForm | None) -> bool:
    if isinstance(attention, LatentAttention):
        return attention == spec.attention and form is MLAForm.absorbed
    return attention == spec.attention or (
        isinstance(spec.attention, HeadAttention)
        and attention.kind == spec.attention.kind
        and attention.num_key_value_heads == spec.attention.num_key_value_heads
        and (attention.head_dim, attention.v_head_dim)
        == (spec.attention.head_dim, spec.attention.v_head_dim)
    )


@dataclass(frozen=True, kw_only=True)
class Comparison:
    rows: tuple[SchemeRow, ...]
    mla_equivalent_gqa_groups: float  # MLA's cache per token expressed in GQA groups
    mla_absorbed_crossover_context: int | None  # absorbed cheaper than naive from here on
    # The memory fraction max_requests was planned at: the engine's default for its version,
    # as `kvplan estimate` and `kvplan plan` take it (None without a GPU).
    mem_fraction: float | None = None


def compare_schemes(spec: ModelSpec, *, context: int, kv_dtype: str = "bf16", batch: int = 1,
                    groups: int | None = None, kv_lora_rank: int | None = None,
                    rope_dim: int | None = None, block_size: int | None = None, tp: int = 1,
                    gpu: GPU | None = None, share_layers: int = 1,
                    layout: Layout | None = None, efficiency: Efficiency | None = None,
                    draft_tokens: int = 0, acceptance: float | None = None,
                    gpu_hour_usd: float | None = None, fp8_attention: bool = False,
                    platform: str | None = None, cpu_amx: bool | None = None) -> Comparison:
    """Every scheme for `spec`; `share_layers` k > 1 applies cross-layer sharing (CLA x k) to all
    of them (the model's own sharing, if any, is replaced). With a `gpu`, each row also carries
    kvplan.perf.costmodel's predictions on `layout` (default: plain TP over `tp` ranks).
    `groups`: the GQA row's KV heads (refused when not a GQA layout of the model's heads);
    None: 8, left out where it is not one. `block_size` None: each row at the engine's default
    block for its variant (vLLM: 16, MLA's by GPU and KV dtype, the sparse indexer's), as
    `kvplan estimate` takes it. `platform`, `cpu_amx`: vLLM's platform and the CPU host's AMX, as
    estimate's --platform and --cpu-amx (kvplan.analysis.inputs.platform_fields)."""
    if spec.layer_attention or spec.kind in (AttentionKind.none, AttentionKind.csa):
        raise InputError(f"compare: {spec.id} has "
                         + ("attention shapes that differ by layer type" if spec.layer_attention
                            else "no attention layer" if spec.kind is AttentionKind.none
                            else "DeepSeek-V4's compressed sparse attention (no MHA / GQA / MQA "
                            "/ MLA rewrite of it is modelled)")
                         + "; its schemes are not rewritten (use estimate)")
    heads = spec.attention.num_attention_heads
    if tp < 1 or (tp > 1 and heads % tp):
        # Every scheme keeps the model's query heads; vLLM and SGLang need TP to divide them.
        raise InputError(f"--tp: {tp} does not divide num_attention_heads ({heads}) of "
                         f"{spec.id}; vLLM and SGLang refuse this layout")
    if block_size is not None and block_size < 1:
        raise InputError(f"--block-size: must be >= 1, got {block_size}")
    if groups is None:
        groups = DEFAULT_GQA_GROUPS
    else:
        check_gqa_groups(spec, groups)
    par = layout or Layout(tp=tp)
    cost_kw: dict[str, object] = {"layout": par, "draft_tokens": draft_tokens,
                                  "gpu_hour_usd": gpu_hour_usd, "fp8_attention": fp8_attention}
    if efficiency is not None:
        cost_kw["efficiency"] = efficiency
    if acceptance is not None:
        cost_kw["acceptance"] = acceptance
    spec = with_share_every(spec, share_layers) if share_layers > 1 else spec
    rows = []
    fraction: float | None = None
    mha_bytes = None
    variants = scheme_variants(spec, groups=groups, kv_lora_rank=kv_lora_rank, rope_dim=rope_dim)
    for label, attention, form in variants:
        variant = with_attention(spec, attention)
        # The decompressed MLA cache is laid out like MHA with K = nope + rope, V = v dims.
        sized = variant
        if isinstance(attention, LatentAttention) and form is MLAForm.decompressed:
            sized = with_attention(spec, HeadAttention(
                kind=AttentionKind.mha, num_attention_heads=attention.num_attention_heads,
                num_key_value_heads=attention.num_attention_heads,
                head_dim=attention.qk_nope_head_dim + attention.qk_rope_head_dim,
                v_head_dim=attention.v_head_dim))
            assert sized.attention.elements_per_token() == mla_cache_elements(attention, form)
        # The same caches `kvplan estimate` sums (kvplan.kv.kinds), the attention rewritten: a
        # layer's window or chunk, the indexer's keys and recurrent state (only attention is
        # rewritten) count in every row's bytes per request as in estimate's per sequence.
        caches = rank_caches(sized, kv_dtype=kv_dtype, tp=tp)
        if mha_bytes is None:
            mha_bytes = caches.attention_bytes_per_token
        # The simple roofline uses the bf16 peak: attention runs in bf16 even in FP8 models,
        # and the cost model below prices FP8 GEMMs at the FP8 peak separately.
        cost = decode_cost(variant, context=context, batch=batch, kv_dtype=kv_dtype,
                           mla_form=form or MLAForm.absorbed, tp=par.attention_tp,
                           hbm_bytes_per_s=gpu.hbm_bytes_per_s if gpu else None,
                           peak_flops_per_s=gpu.peak_bf16_flops_per_s if gpu else None)
        pred = None
        if gpu is not None:
            pred = predict(variant, gpu, CostInputs(
                context=context, batch=batch, kv_dtype=kv_dtype,
                mla_form=form or MLAForm.absorbed, **cost_kw))  # type: ignore[arg-type]
        max_requests = None
        inputs = build_inputs(context=context, gpu=gpu, kv_dtype=kv_dtype,
                              block_size=block_size, tp=tp, dp_attention=par.dp_attention,
                              **platform_fields(platform, cpu_amx))
        block = block_size
        if gpu is not None:
            capacity = plan_capacity(sized, inputs)
            max_requests, fraction = capacity.max_requests, capacity.mem_fraction
            block = block or capacity.requested_block_size
        if block is None:
            # The engine's block for this variant before any raising for recurrent state, as
            # `kvplan estimate` sizes a sequence.
            config = inputs.engine.rules.estimate_config(sized, inputs)
            block = (config.requested_block_size if config is not None  # type: ignore[attr-defined]
                     else inputs.resolved_block_size)
        rows.append(SchemeRow(
            scheme=label + (f" + CLA x{share_layers}" if share_layers > 1 else ""),
            native=_is_native(spec, attention, form),
            kv_heads=None if isinstance(sized.attention, LatentAttention)
            else sized.attention.num_key_value_heads,
            elements_per_token_per_layer=sized.attention.elements_per_token(),
            bytes_per_token=caches.attention_bytes_per_token,
            ratio_vs_mha=caches.attention_bytes_per_token / mha_bytes,
            bytes_per_request=int(caches.sequence_bytes(context, block)),
            max_requests=max_requests,
            decode_flops_per_token=cost.decode_flops_per_token,
            attention_flops_per_token=cost.attention_flops_per_token,
            prefill_flops_per_token=cost.prefill_flops_per_token,
            attention_flops_per_layer=_terms(attention_flops(
                variant, context=context, mla_form=form or MLAForm.absorbed)),
            kv_read_bytes_per_token=cost.kv_read_bytes_per_token,
            weight_read_bytes_per_step=cost.weight_read_bytes_per_step,
            arithmetic_intensity=cost.arithmetic_intensity,
            roofline_ms_per_step=None if cost.step_seconds is None
            else cost.step_seconds * 1e3,
            roofline_ms_per_token=None if cost.step_seconds is None
            else cost.step_seconds * 1e3,
            compute_bound_batch=cost.compute_bound_batch,
            tpot_ms=pred.tpot_ms if pred else None,
            decode_step_ms=pred.decode_step_ms if pred else None,
            ttft_ms=pred.ttft_ms if pred else None,
            output_tokens_per_s_per_gpu=pred.output_tokens_per_s_per_gpu if pred else None,
            cost_per_million_tokens_usd=pred.cost_per_million_tokens_usd if pred else None,
            decode_ms_by_op=pred.decode_ms_by_op if pred else None,
        ))
    mla = next(a for _, a, form in variants if isinstance(a, LatentAttention))
    d_k, _ = _head_dims(spec)
    return Comparison(
        rows=tuple(rows), mem_fraction=fraction,
        # GQA with n_g groups caches 2·n_g·d_h per token per layer (K and V of d_h each).
        mla_equivalent_gqa_groups=mla.elements_per_token() / (2 * d_k),
        mla_absorbed_crossover_context=absorbed_crossover_context(with_attention(spec, mla)),
    )


def _terms(flops: AttentionFlops) -> dict[str, int]:
    """The per-layer breakdown by term, which adds up to the layer's FLOPs: AttentionFlops's
    `replicated` (the part of the projections each TP rank runs whole, mlaproj62) is a subset of
    the projection terms, not a term of its own, so it is left out."""
    return {k: v for k, v in asdict(flops).items() if k != "replicated"}
