"""Bytes per parameter that one rank streams for each weight group (attention, dense MLP, routed
experts, lm_head), and the type each group's GEMMs run at (`GemmMath`): from the weight breakdown
of kvplan.capacity.weights.weights_breakdown, so that quantization formats and scales count as
they load."""

from __future__ import annotations

from kvplan._util.dtypes import GemmMath
from kvplan._util.memo import spec_cache
from kvplan.capacity.weights import weights_breakdown
from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec
from kvplan.weights.params import count_params


def _asked_maths(spec: ModelSpec, quantization: str | None) -> frozenset[GemmMath]:
    """The GEMM types the checkpoint's formats ask for (each scheme's `math`)."""
    if quantization == "bitsandbytes":
        return frozenset()  # load-time bitsandbytes: weight-only
    if spec.quantization_json is not None:
        from kvplan.model.quant_config import parse_quantization_config

        quant = parse_quantization_config(spec.quantization_config, spec.path)
        return frozenset(rule.scheme.math for rule in quant.rules)
    # A legacy spec that states torch_dtype float8 runs its weights as FP8 GEMMs.
    return frozenset({GemmMath.fp8}) if spec.weight_dtype == "fp8" else frozenset()


def group_math(bytes_per_param: float, asked: frozenset[GemmMath]) -> GemmMath:
    """The type a weight group's GEMMs run at, from the bytes one parameter of the group holds
    on the whole model (one rank) and the types the checkpoint's formats ask for: about one
    byte (0.6-1.6) is a W8A8 FP8 GEMM where a format asks for FP8; at most 0.6 (4-bit
    elements, their scales) a W4A4 FP4 GEMM where one asks for FP4; anything else -- bf16
    weights (2 B), or 4-bit weights of a weight-only format -- runs in bf16. Judged by bytes
    because one config mixes formats by module (Kimi-K2.5-NVFP4 keeps attention in bf16, its
    ignore list; DeepSeek-V3's FP8 checkpoint its lm_head)."""
    if GemmMath.fp8 in asked and 0.6 < bytes_per_param < 1.6:
        return GemmMath.fp8
    if GemmMath.fp4 in asked and bytes_per_param <= 0.6:
        return GemmMath.fp4
    return GemmMath.bf16


def bytes_per_param(spec: ModelSpec, tp: int, quantization: str | None = None
                    ) -> tuple[dict[str, float], dict[str, GemmMath]]:
    """Per-rank bytes per (total) parameter of each weight group, and the type its GEMMs run
    at where the device has the tensor cores (`group_math`; the device's answer: `gemm_math`).
    Memoised (the cost model asks it several times a step); each caller gets its own dicts."""
    bpp, maths = _bytes_per_param(spec, tp, quantization)
    return dict(bpp), dict(maths)


@spec_cache(maxsize=1024)
def _bytes_per_param(spec: ModelSpec, tp: int, quantization: str | None
                     ) -> tuple[dict[str, float], dict[str, GemmMath]]:
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
    # Judged on the whole model (one rank), not on this rank's share: DeepSeek's q_a / kv_a
    # projections are replicated on every TP rank (SGLang models/deepseek_v2.py:
    # ReplicatedLinear fused_qkv_a_proj_with_mqa), so at TP 8 the attention group holds 0.22 B
    # per parameter, 1.75 x the 1/8 share.
    whole = bpp if tp == 1 else bytes_per_param(spec, 1, quantization)[0]
    asked = _asked_maths(spec, quantization)
    return bpp, {g: group_math(v, asked) for g, v in whole.items()}


def gemm_math(spec: ModelSpec, tp: int, gpu: GPU, quantization: str | None = None
              ) -> dict[str, GemmMath]:
    """The type each weight group's GEMMs really run at on `gpu` (GPU.runs: a W4A4 GEMM on a
    card without FP4 tensor cores runs weight-only, in bf16)."""
    return {g: gpu.runs(m) for g, m in bytes_per_param(spec, tp, quantization)[1].items()}
