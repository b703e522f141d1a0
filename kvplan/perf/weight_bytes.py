"""Bytes per parameter that one rank streams for each weight group (attention, dense MLP, routed
experts, lm_head), and which groups run as FP8 (w8a8) GEMMs: from the weight breakdown of
kvplan.capacity.weights.weights_breakdown, so that quantization formats and scales count as they
load."""

from __future__ import annotations

from kvplan.capacity.weights import weights_breakdown
from kvplan.model.spec import ModelSpec
from kvplan.weights.params import count_params


def bytes_per_param(spec: ModelSpec, tp: int, quantization: str | None = None
                    ) -> tuple[dict[str, float], dict[str, bool]]:
    """Per-rank bytes per (total) parameter of each weight group, and whether it is FP8."""
    wb = weights_breakdown(spec, tp=tp, quantization=quantization)
    counts = count_params(spec)
    attn = sum(x.attention for x in counts.layers) or 1
    dense = sum(x.mlp for x in counts.layers) or 1
    experts = sum(x.routed_experts + x.router for x in counts.layers) or 1
    head = counts.lm_head or counts.embedding
    scale = wb.quantization_scales - wb.expert_scales
    bpp = {
        "attention": (wb.attention + scale * wb.attention / max(1, wb.attention + wb.dense_mlp))
        / attn,
        "dense_mlp": (wb.dense_mlp + scale * wb.dense_mlp / max(1, wb.attention + wb.dense_mlp))
        / dense,
        "experts": (wb.experts + wb.expert_scales) / experts,
        "lm_head": (wb.lm_head or wb.embeddings) / head,
    }
    fp8_method = wb.method.lower().startswith("fp8") or spec.weight_dtype == "fp8"
    # A group stored at about one byte per parameter is an FP8 GEMM (w8a8); half a byte or less
    # is weight-only int4/fp4, computed in bf16. Judged on the whole model (one rank), not on
    # this rank's share: DeepSeek's q_a / kv_a projections are replicated on every TP rank
    # (SGLang models/deepseek_v2.py: ReplicatedLinear fused_qkv_a_proj_with_mqa), so at TP 8
    # the attention group holds 0.22 B per parameter, 1.75 x the 1/8 share, and read as bf16.
    whole = bpp if tp == 1 else bytes_per_param(spec, 1, quantization)[0]
    fp8 = {g: fp8_method and 0.6 < v < 1.6 for g, v in whole.items()}
    return bpp, fp8

