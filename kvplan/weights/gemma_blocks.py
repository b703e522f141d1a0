"""Gemma-3n's and Gemma-4's weights beyond attention and MLP (ModelSpec.gemma_blocks), per
tensor-parallel rank, as vLLM 0.32 models/gemma3n.py and models/gemma4.py build them: the shapes,
written once, that kvplan.weights.params counts (tp 1) and kvplan.weights.breakdown prices.

Outside the layers (Gemma3nSelfDecoder, gemma3n.py:567-612, and Gemma3nTextModel, :838-851;
Gemma4Model, gemma4.py:1016-1072), where hidden_size_per_layer_input > 0:
- embed_tokens_per_layer, a VocabParallelEmbedding of vocab_size_per_layer_input rows (padded
  to 64, split over TP) x num_layers x hidden_size_per_layer_input;
- per_layer_model_projection, a ColumnParallelLinear(hidden, num_layers x per-layer width) and
  per_layer_projection_norm, an RMSNorm of the per-layer width;
- Gemma-3n only: altup_projections and altup_unembed_projections, altup_num_inputs - 1
  ColumnParallelLinear (hidden, hidden) each.
In each decoder layer (gemma3n.py:437-530; gemma4.py:654-690):
- Gemma-3n's AltUp (:83-121): ReplicatedLinear correction_coefs (n x n), prediction_coefs
  (n -> n^2), modality_router (hidden -> n), router_norm (hidden), and correct_output_scale, a
  float32 parameter of hidden;
- Gemma-3n's LAuReL (:195-219): ColumnParallelLinear linear_left (hidden -> rank),
  RowParallelLinear linear_right (rank -> hidden), post_laurel_norm (hidden);
- ReplicatedLinear per_layer_input_gate (hidden -> width) and per_layer_projection
  (width -> hidden), and post_per_layer_input_norm (hidden), where the width is > 0;
- Gemma-4's MoE layers (dense_mlp_beside_moe, gemma4.py:605-651): the dense MLP
  (MergedColumnParallelLinear gate_up_proj, RowParallelLinear down_proj of intermediate_size)
  beside the experts, and post_feedforward_layernorm_1, post_feedforward_layernorm_2,
  pre_feedforward_layernorm_2 (hidden each).
Not counted here: the sandwich norms and q/k norms (kvplan.sources.features), the KV-shared
layers' missing k/v projections (ModelSpec.projects_kv), the double-wide MLP of Gemma-4's
KV-shared layers (ModelSpec.mlp_width), Gemma-4's router scales (kvplan.weights.routers); nor
Gemma-4's one-element `layer_scalar` buffer per layer (gemma4.py:693, 2 B a layer at bf16). The
wrappers' towers are not counted here (Gemma-4's: kvplan.weights.gemma4_towers).
"""

from __future__ import annotations

from typing import NamedTuple

from kvplan._util.units import cdiv
from kvplan.model.quant import round_up
from kvplan.model.spec import GemmaBlocksSpec, ModelSpec
from kvplan.weights.base import VOCAB_PADDING


class Tensor(NamedTuple):
    group: str  # WeightBreakdown group: "embeddings", "dense_mlp" or "norms"
    name: str | None  # the checkpoint module of a matrix (quantization rules match it); None: a
    # vector in the compute dtype
    rows: int
    cols: int = 1
    float32: bool = False


def _blocks(spec: ModelSpec) -> GemmaBlocksSpec | None:
    return spec.gemma_blocks


def outer_tensors(spec: ModelSpec, tp: int = 1) -> list[Tensor]:
    """The per-layer embeddings and AltUp projections outside the layers, on one rank."""
    b = _blocks(spec)
    if b is None or not b.hidden_size_per_layer_input:
        return []
    h, width = spec.hidden_size, spec.num_hidden_layers * b.hidden_size_per_layer_input
    copies = max(b.altup_num_inputs - 1, 0)
    return [
        Tensor("embeddings", None, cdiv(round_up(b.vocab_size_per_layer_input, VOCAB_PADDING),
                                        tp) * width),
        Tensor("embeddings", "model.per_layer_model_projection", cdiv(width, tp), h),
        Tensor("norms", None, b.hidden_size_per_layer_input),
        *(Tensor("embeddings", f"model.{which}.{j}", cdiv(h, tp), h)
          for which in ("altup_projections", "altup_unembed_projections")
          for j in range(copies)),
    ]


def layer_tensors(spec: ModelSpec, layer: int, tp: int = 1) -> list[Tensor]:
    """AltUp, LAuReL, the per-layer input gate and the dense MLP beside the experts of decoder
    layer `layer`, on one rank."""
    b = _blocks(spec)
    if b is None:
        return []
    h, n, width = spec.hidden_size, b.altup_num_inputs, b.hidden_size_per_layer_input
    pre = f"model.layers.{layer}"
    out: list[Tensor] = []
    if n:
        out += [
            Tensor("dense_mlp", f"{pre}.altup.correction_coefs", n, n),
            Tensor("dense_mlp", f"{pre}.altup.prediction_coefs", n * n, n),
            Tensor("dense_mlp", f"{pre}.altup.modality_router", n, h),
            Tensor("norms", None, h),  # altup.router_norm
            Tensor("norms", None, h, float32=True),  # altup.correct_output_scale
        ]
    if b.laurel_rank:
        out += [
            Tensor("dense_mlp", f"{pre}.laurel.linear_left", cdiv(b.laurel_rank, tp), h),
            Tensor("dense_mlp", f"{pre}.laurel.linear_right", h, cdiv(b.laurel_rank, tp)),
            Tensor("norms", None, h),  # laurel.post_laurel_norm
        ]
    if width:
        out += [
            Tensor("dense_mlp", f"{pre}.per_layer_input_gate", width, h),
            Tensor("dense_mlp", f"{pre}.per_layer_projection", h, width),
            Tensor("norms", None, h),  # post_per_layer_input_norm
        ]
    moe = spec.moe
    if b.dense_mlp_beside_moe and moe is not None and moe.is_moe_layer(layer):
        inter = cdiv(spec.mlp_width(layer), tp)
        out += [
            Tensor("dense_mlp", f"{pre}.mlp.gate_proj", inter, h),
            Tensor("dense_mlp", f"{pre}.mlp.up_proj", inter, h),
            Tensor("dense_mlp", f"{pre}.mlp.down_proj", h, inter),
            *(Tensor("norms", None, h) for _ in range(3)),  # the MoE branch's three norms
        ]
    return out


def elements(tensors: list[Tensor], *groups: str) -> int:
    """Elements of `tensors` (of `groups` only, if given)."""
    return sum(x.rows * x.cols for x in tensors if not groups or x.group in groups)
