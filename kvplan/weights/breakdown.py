"""Weight bytes as the engines hold them: quantized layouts, their scales, and kernel padding.

One ``QuantScheme`` type per storage format, each answering ``matrix_bytes(out, in)`` for one
weight matrix of shape (out_features, in_features), scales and zero points included (counted apart
so that a breakdown can show them). Formats follow the tensors vLLM allocates in its quantization
layers (``vllm/model_executor/layers/quantization/*.py``), which is what "Model loading took X GiB"
measures: the memory held after ``process_weights_after_loading``, i.e. after any repacking for the
kernels (Marlin, Machete, CUTLASS swizzles) and after temporary tensors are freed.

The quantized schemes and `parse_quantization_config`, which reads config.json's
``quantization_config``, are in kvplan.weights.formats (imported for quantized checkpoints only); this module
holds the unquantized base (``MatrixBytes``, ``Unquantized``) and the breakdowns.
`weight_breakdown` lays the model's matrices out from a `ModelSpec` (shapes, per tensor-parallel
rank) and prices each one with the scheme that covers it. Embeddings, norms, routers and biases
stay in the compute dtype unless a scheme says otherwise (see each scheme and `QuantConfig`).

Matrix names follow the Hugging Face checkpoints (``model.layers.3.self_attn.q_proj``,
``model.layers.3.mlp.experts``, ``lm_head``) so that ``ignore`` / ``modules_to_not_convert`` lists
from config.json match them the way vLLM's ``is_layer_skipped`` and compressed-tensors'
``should_ignore_layer`` do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kvplan._util.dtypes import WEIGHT_DTYPE_ALIASES, get_dtype
from kvplan._util.units import cdiv
from kvplan.model.attention import HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec, QwenViTSpec, VisionTowerSpec
from kvplan.weights.params import count_params, recurrent_params

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.checkpoint import CheckpointWeights, TensorInfo
    from kvplan.weights.formats import QuantConfig

# The quantized formats and their parser live in kvplan.weights.formats, loaded for a quantized checkpoint
# only; their names stay importable from here (`from kvplan.weights.breakdown import QuantConfig`).
_QUANT_NAMES = frozenset({
    "Fp8PerTensor", "Fp8PerChannel", "Fp8Block", "Mxfp4Backend", "default_mxfp4_backend",
    "MixedPrecisionKernel", "Mxfp4", "Nvfp4", "IntGrouped", "Int8PerChannel", "Bnb4bit",
    "Bnb8bit", "Rule", "QuantConfig", "QUANT_METHODS", "parse_quantization_config",
    "bitsandbytes_config",
})


def __getattr__(name: str) -> Any:
    if name in _QUANT_NAMES:
        from kvplan.weights import formats as quant

        return getattr(quant, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

FP32_BYTES = 4
INT32_BYTES = 4
# vLLM's VocabParallelEmbedding / ParallelLMHead pad the vocabulary to a multiple of 64 before
# splitting it over tensor-parallel ranks (DEFAULT_VOCAB_PADDING_SIZE in
# vllm/model_executor/layers/vocab_parallel_embedding.py).
VOCAB_PADDING = 64


def round_up(n: int, multiple: int) -> int:
    return cdiv(n, multiple) * multiple


@dataclass(frozen=True, kw_only=True)
class MatrixBytes:
    """Bytes of one stored matrix: the (possibly packed) weight, and its scales/zeros/indices."""

    weight: int
    scales: int = 0

    @property
    def total(self) -> int:
        return self.weight + self.scales

    def __add__(self, other: MatrixBytes) -> MatrixBytes:
        return MatrixBytes(weight=self.weight + other.weight, scales=self.scales + other.scales)

    def times(self, n: int) -> MatrixBytes:
        return MatrixBytes(weight=self.weight * n, scales=self.scales * n)


class QuantScheme(Protocol):
    """A storage format for linear weights."""

    name: str

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        """One (out, in) matrix, scales included."""
        ...

    def experts_bytes(self, num_experts: int, hidden: int, intermediate: int,
                      gated: bool) -> MatrixBytes:
        """All experts of one MoE layer (per rank): the fused gate_up (w13) and down (w2)."""
        ...


class _FusedExperts:
    """Default expert layout: vLLM's FusedMoE stacks w13 (2I x H, or I x H ungated) and w2 (H x I)
    per expert (vllm/model_executor/layers/fused_moe/layer.py) in the scheme's matrix format."""

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        raise NotImplementedError

    def experts_bytes(self, num_experts: int, hidden: int, intermediate: int,
                      gated: bool) -> MatrixBytes:
        w13 = self.matrix_bytes((2 if gated else 1) * intermediate, hidden)
        w2 = self.matrix_bytes(hidden, intermediate)
        return (w13 + w2).times(num_experts)


@dataclass(frozen=True, kw_only=True)
class Unquantized(_FusedExperts):
    """Plain weights in the compute dtype (``bits`` per element, no scales)."""

    bits: int = 16
    name: str = "none"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        return MatrixBytes(weight=cdiv(out_features * in_features * self.bits, 8))


# ---------------------------------------------------------------------------------------------
# The engines' dtype rule.

_ENGINE_DTYPE = {"fp32": "bf16", "bf16": "bf16", "fp16": "fp16"}


def engine_dtype(torch_dtype: str | None) -> str:
    """The compute dtype vLLM and SGLang load with under ``--dtype auto``, as a kvplan name.

    vLLM ModelConfig (vllm/config/model.py, _resolve_auto_dtype) and SGLang's ModelConfig take the
    config's ``torch_dtype``/``dtype``, but a float32 config is served in bfloat16 (float16 on
    GPUs without bf16); a config without a dtype reads as float32 and so also becomes bfloat16.
    Quantized-weight dtypes in torch_dtype (rare) fall back to bfloat16 as well."""
    if torch_dtype is None:
        return "bf16"
    name = WEIGHT_DTYPE_ALIASES.get(torch_dtype, torch_dtype)
    return _ENGINE_DTYPE.get(name, "bf16")


def engine_dtype_note(torch_dtype: str | None) -> str | None:
    """The note to show when `engine_dtype` differs from what config.json says."""
    if torch_dtype is None:
        return "torch_dtype absent: the engines load bfloat16 (float32 is downcast under auto)"
    name = WEIGHT_DTYPE_ALIASES.get(torch_dtype, torch_dtype)
    if name == "fp32":
        return "torch_dtype float32: vLLM and SGLang load bfloat16 under --dtype auto"
    if name not in _ENGINE_DTYPE:
        return f"torch_dtype {torch_dtype!r}: the compute dtype is taken as bfloat16"
    return None


# ---------------------------------------------------------------------------------------------
# Laying the model out.


@dataclass(frozen=True, kw_only=True)
class WeightBreakdown:
    """Weight bytes by group (per tensor-parallel rank when ``tp`` > 1). Quantization scales,
    zero points and act-order indices of every group are in ``quantization_scales`` only."""

    embeddings: int
    attention: int  # attention projections and recurrent mixers (+ their biases and norms)
    dense_mlp: int  # dense MLPs and shared experts
    experts: int  # routed experts and routers
    lm_head: int
    norms: int  # per-layer and final norms
    quantization_scales: int
    dtype: str  # the compute dtype
    method: str  # "none" or the QuantConfig's description
    notes: tuple[str, ...] = field(default=())
    expert_scales: int = 0  # the part of quantization_scales that belongs to routed experts
    vision: int = 0  # a multimodal vision tower and projector (checkpoint, or spec.vision)
    mtp: int = 0  # multi-token-prediction layers, loaded with --speculative-method mtp
    source: str = "architecture"  # or "checkpoint" (sizes from the safetensors headers)
    engine_added: int = 0  # bytes the engine allocates beyond the checkpoint (in the groups)
    # vLLM's rotary cos/sin table (`rope_cache_elements`): held on the GPU, but a lookup table,
    # not a weight a decode step streams, so kept out of the groups the cost model reads.
    rope_cache: int = 0

    @property
    def total(self) -> int:
        return (self.embeddings + self.attention + self.dense_mlp + self.experts + self.lm_head
                + self.norms + self.quantization_scales + self.vision + self.mtp
                + self.rope_cache)

    def as_dict(self) -> dict[str, int]:
        return {"embeddings": self.embeddings, "attention": self.attention,
                "dense_mlp": self.dense_mlp, "experts": self.experts, "lm_head": self.lm_head,
                "norms": self.norms, "vision": self.vision, "mtp": self.mtp,
                "quantization_scales": self.quantization_scales, "rope_cache": self.rope_cache,
                "total": self.total}


class _Tally:
    def __init__(self, quant: QuantConfig | None, dtype_bits: int) -> None:
        self.quant = quant
        self.plain = Unquantized(bits=dtype_bits)
        self.bits = dtype_bits
        self.groups: dict[str, int] = {}
        self.scales = 0
        self.group_scales: dict[str, int] = {}

    def scheme(self, name: str) -> QuantScheme:
        found = self.quant.scheme_for(name) if self.quant is not None else None
        return found if found is not None else self.plain

    def add(self, group: str, b: MatrixBytes) -> None:
        self.groups[group] = self.groups.get(group, 0) + b.weight
        self.scales += b.scales
        self.group_scales[group] = self.group_scales.get(group, 0) + b.scales

    def linear(self, group: str, name: str, out_features: int, in_features: int) -> None:
        self.add(group, self.scheme(name).matrix_bytes(out_features, in_features))

    def vector(self, group: str, elements: int) -> None:
        self.add(group, MatrixBytes(weight=cdiv(elements * self.bits, 8)))


def _split(n: int, tp: int) -> int:
    return cdiv(n, tp)


def _attention(t: _Tally, spec: ModelSpec, layer: int, tp: int) -> None:
    h = spec.hidden_size
    pre = f"model.layers.{layer}.self_attn"
    att = spec.attention
    if isinstance(att, LatentAttention):
        heads = _split(att.num_attention_heads, tp)
        # DeepseekV2MLAAttention (vllm/model_executor/models/deepseek_v2.py): q_a_proj and
        # kv_a_proj_with_mqa are replicated on every rank, q_b/kv_b column-split, o row-split.
        if att.q_lora_rank:
            t.linear("attention", f"{pre}.q_a_proj", att.q_lora_rank, h)
            t.vector("attention", att.q_lora_rank)  # q_a_layernorm
            t.linear("attention", f"{pre}.q_b_proj", heads * att.q_head_dim, att.q_lora_rank)
        else:
            t.linear("attention", f"{pre}.q_proj", heads * att.q_head_dim, h)
        t.linear("attention", f"{pre}.kv_a_proj_with_mqa",
                 att.kv_lora_rank + att.qk_rope_head_dim, h)
        t.vector("attention", att.kv_lora_rank)  # kv_a_layernorm
        kv_b_name = f"{pre}.kv_b_proj"
        kv_b_out = heads * (att.qk_nope_head_dim + att.v_head_dim)
        t.linear("attention", kv_b_name, kv_b_out, att.kv_lora_rank)
        if not isinstance(t.scheme(kv_b_name), Unquantized):
            # MLACommonImpl.process_weights_after_loading (vllm/v1/attention/backends/mla/
            # common.py) dequantizes kv_b_proj into W_UK_T / W_UV in the compute dtype and keeps
            # them beside the quantized weight; for unquantized weights they are views.
            t.vector("attention", kv_b_out * att.kv_lora_rank)
        t.linear("attention", f"{pre}.o_proj", h, heads * att.v_head_dim)
        return
    assert isinstance(att, HeadAttention)
    q_out = _split(att.num_attention_heads, tp) * att.head_dim
    kv_heads = att.kv_heads_per_rank(tp)  # KV heads are replicated when fewer than ranks
    k_out, v_out = kv_heads * att.head_dim, kv_heads * att.v_head_dim
    # vLLM fuses q/k/v into one QKVParallelLinear (one block-scale grid over the fused rows).
    t.linear("attention", f"{pre}.q_proj", q_out + k_out + v_out, h)
    t.linear("attention", f"{pre}.o_proj", h, _split(att.num_attention_heads, tp) * att.v_head_dim)
    if att.attention_bias:
        t.vector("attention", q_out + k_out + v_out)
    if att.o_proj_bias:
        t.vector("attention", h)


def _recurrent(t: _Tally, spec: ModelSpec, layer: int, tp: int) -> None:
    # The mixer's projections dominate its weights (in_proj, out_proj); kvplan.weights.params counts its
    # parameters as a whole, so they are priced as one (n / hidden, hidden) matrix split over TP.
    n = recurrent_params(spec)
    h = spec.hidden_size
    t.linear("attention", f"model.layers.{layer}.mixer.in_proj", _split(n // h, tp), h)
    t.vector("attention", n % h)


def _ffn(t: _Tally, spec: ModelSpec, group: str, name: str, width: int, tp: int,
         bias: bool = False) -> None:
    if width == 0:
        return
    h = spec.hidden_size
    w = _split(width, tp)
    gated = spec.mlp.gated
    # MergedColumnParallelLinear gate_up_proj (2w x h) and RowParallelLinear down_proj (h x w).
    t.linear(group, f"{name}.gate_proj", (2 if gated else 1) * w, h)
    t.linear(group, f"{name}.down_proj", h, w)
    if bias:
        t.vector(group, (2 if gated else 1) * w + h)


def _vit_block(t: _Tally, names: tuple[str, str, str, str], h: int, inter: int, tp: int) -> None:
    """One pre-norm vision-transformer block, SigLIP's and Qwen3-VL's alike, in group "vision":
    a fused qkv (QKVParallelLinear) and an output projection (RowParallelLinear), an MLP of a
    column-parallel fc1 and a row-parallel fc2, all four with bias (column biases split, row
    biases whole on every rank), and two LayerNorms (weight and bias). `names`: the checkpoint's
    qkv, out, fc1 and fc2 module names (the quantization rules match them)."""
    qkv, out, fc1, fc2 = names
    t.linear("vision", qkv, 3 * _split(h, tp), h)
    t.linear("vision", out, h, _split(h, tp))
    t.linear("vision", fc1, _split(inter, tp), h)
    t.linear("vision", fc2, h, _split(inter, tp))
    t.vector("vision", 3 * _split(h, tp) + h + _split(inter, tp) + h)  # biases
    t.vector("vision", 2 * 2 * h)  # the two LayerNorms


def _vision_tower(t: _Tally, tower: VisionTowerSpec, text_hidden: int, tp: int) -> None:
    """A SigLIP encoder and its projector, per tensor-parallel rank, in group "vision".

    vllm/model_executor/models/siglip.py: SiglipVisionEmbeddings holds a Conv2d patch embedding
    (hidden x channels x patch x patch, with bias; replicated), a VocabParallelEmbedding of
    (image_size / patch_size)^2 positions (padded to 64, split like the vocabulary) and an int64
    ``position_ids`` buffer of those positions; each SiglipEncoderLayer a QKVParallelLinear
    qkv_proj and RowParallelLinear out_proj (both with bias), a ColumnParallelLinear fc1 and
    RowParallelLinear fc2 (with bias; row-parallel biases whole on every rank) and two LayerNorms
    (weight and bias); SiglipVisionTransformer a post_layernorm (kept when every encoder layer is
    built, as gemma3_mm.py builds them) and no pooling head (vision_use_head false).
    gemma3_mm.py Gemma3MultiModalProjector: mm_input_projection_weight (vision hidden x text
    hidden, a plain replicated Parameter) and mm_soft_emb_norm, a Gemma RMSNorm (weight only)."""
    h, inter = tower.hidden_size, tower.intermediate_size
    pre = "vision_tower.vision_model"
    t.vector("vision", h * tower.num_channels * tower.patch_size ** 2 + h)
    t.vector("vision", _split(round_up(tower.num_positions, VOCAB_PADDING), tp) * h)
    t.add("vision", MatrixBytes(weight=tower.num_positions * 8))  # position_ids, int64
    for i in range(tower.num_hidden_layers):
        layer = f"{pre}.encoder.layers.{i}"
        _vit_block(t, (f"{layer}.self_attn.q_proj", f"{layer}.self_attn.out_proj",
                       f"{layer}.mlp.fc1", f"{layer}.mlp.fc2"), h, inter, tp)
    t.vector("vision", 2 * h)  # post_layernorm
    t.vector("vision", h * text_hidden + h)  # projector weight and mm_soft_emb_norm


def _qwen_vit(t: _Tally, vit: QwenViTSpec, tp: int) -> None:
    """A Qwen3-VL / Qwen3.5 vision transformer, per tensor-parallel rank, in group "vision"
    (vllm/model_executor/models/qwen3_vl.py, Qwen3_VisionTransformer, 0.32; qwen3_5.py builds
    the same tower). Replicated: the Conv3d patch embedding (hidden x in_channels x
    temporal_patch x patch^2, with bias), ``pos_embed`` (an nn.Embedding of
    num_position_embeddings x hidden), every LayerNorm (weight and bias) and the rotary table of
    the blocks' attention (get_rope over head_dim / 2 rotary dimensions, 8,192 positions, in the
    model dtype). Split over TP: each block's qkv (QKVParallelLinear, bias) and proj
    (RowParallelLinear, bias whole), its MLP linear_fc1 (column, bias) and linear_fc2 (row, bias
    whole); the patch merger's and each deepstack merger's linear_fc1 (hidden x 4 squared,
    column) and linear_fc2 (to out_hidden_size, row), each after a LayerNorm over hidden (the
    main merger) or hidden x 4 (the deepstack ones, use_postshuffle_norm)."""
    h, inter = vit.hidden_size, vit.intermediate_size
    merged = h * vit.spatial_merge_size ** 2
    pre = "model.visual"
    t.vector("vision", vit.pixels_per_patch * h + h)  # patch_embed.proj
    t.vector("vision", vit.num_position_embeddings * h)  # pos_embed
    t.vector("vision", QWEN_VIT_ROPE_POSITIONS * (h // vit.num_heads // 2))  # rotary table
    for i in range(vit.depth):
        block = f"{pre}.blocks.{i}"
        _vit_block(t, (f"{block}.attn.qkv", f"{block}.attn.proj", f"{block}.mlp.linear_fc1",
                       f"{block}.mlp.linear_fc2"), h, inter, tp)
    mergers = [(f"{pre}.merger", h)] + [
        (f"{pre}.deepstack_merger_list.{i}", merged) for i in range(vit.deepstack_layers)]
    for name, norm in mergers:
        t.vector("vision", 2 * norm)  # the merger's LayerNorm
        t.linear("vision", f"{name}.linear_fc1", _split(merged, tp), merged)
        t.linear("vision", f"{name}.linear_fc2", vit.out_hidden_size, _split(merged, tp))
        t.vector("vision", _split(merged, tp) + vit.out_hidden_size)  # biases


# Qwen3_VisionTransformer's rotary table: get_rope(max_position=8192) (qwen3_vl.py, 0.32).
QWEN_VIT_ROPE_POSITIONS = 8192


def rope_cache_elements(spec: ModelSpec) -> int:
    """Elements of the rotary-embedding table vLLM builds for the model: (max_position_embeddings,
    rotary_dim), held in the model dtype on every rank and pipeline stage that has an attention
    layer, once per distinct rope configuration.

    vllm/model_executor/layers/rotary_embedding/base.py: ``RotaryEmbedding.__init__`` computes
    ``_compute_cos_sin_cache()`` (cos and sin concatenated: ``max_position_embeddings`` rows of
    ``rotary_dim`` values), casts it with ``cache.to(dtype)`` (the default dtype, i.e. the model
    dtype) and registers it as the ``cos_sin_cache`` buffer; ``get_rope`` in
    rotary_embedding/__init__.py shares one instance between the layers (``_ROPE_DICT``, keyed by
    head size, rotary dim, max position, rope parameters and dtype). It is built with the model,
    so vLLM's "Model loading took X GiB" includes it: 131,072 x 128 x 2 B = 32 MiB for Llama-3.1
    (64 MiB at --dtype float32), 2.5 GiB for Llama-4-Scout (max_position_embeddings 10,485,760).
    YaRN and DeepSeek-YaRN tables have original_max_position_embeddings x factor rows, which is
    what those configs state as max_position_embeddings. A spec that lists ``rope_tables`` gets
    one table of each listed row count instead: Gemma-3 builds two (gemma3.py Gemma3Attention:
    sliding layers use rope_local_base_freq without scaling, max_position_embeddings rows; global
    layers config.rope_scaling, and rotary_embedding/linear_scaling_rope.py
    LinearScalingRotaryEmbedding builds max_position_embeddings x factor rows: 131,072 x 8 for
    gemma-3-27b, 256 MiB in bf16). rotary_dim is head_dim (MLA: qk_rope_head_dim); a partial
    rotary factor (not in the spec) and longrope's short/long pair are not modelled. No rope
    (learned or ALiBi positions) or no max_position_embeddings: 0."""
    if spec.position_embedding != "rope" or not spec.max_position_embeddings:
        return 0
    att = spec.attention
    if isinstance(att, LatentAttention):
        rotary_dim = att.qk_rope_head_dim
    elif isinstance(att, HeadAttention):
        rotary_dim = att.head_dim
    else:
        return 0
    return sum(spec.rope_tables or (spec.max_position_embeddings,)) * rotary_dim


def _stage_has_attention(spec: ModelSpec, layers: range | None) -> bool:
    return any(spec.has_attention(i) for i in range(spec.num_hidden_layers)
               if layers is None or i in layers)


def weight_breakdown(spec: ModelSpec, quant: QuantConfig | None, *, dtype: str,
                     tp: int = 1, layers: range | None = None, first: bool = True,
                     last: bool = True, vision: bool = True) -> WeightBreakdown:
    """Weight bytes as vLLM holds them, by group, for one tensor-parallel rank.

    ``dtype``: the compute dtype (kvplan name or config spelling; see `engine_dtype`), used for
    everything the quantization config leaves unquantized. ``quant`` None: every weight in
    ``dtype``. Embeddings and lm_head are vocab-parallel (padded to a multiple of 64, then split);
    attention heads, MLP and expert widths are split over ``tp``; replicated pieces (MLA's q_a and
    kv_a, norms, routers, KV heads when fewer than ranks) are counted whole on every rank.
    ``layers``/``first``/``last``: one pipeline stage (vLLM's split: the embeddings on the first
    stage, the final norm and lm_head on the last; a tied lm_head on a last stage that is not the
    first keeps its own copy of the embedding matrix). ``vision``: a vision tower the spec
    describes (`VisionTowerSpec`) is counted on every stage, as `checkpoint_breakdown` counts it
    (gemma3_mm.py, like qwen2_5_vl.py and its peers, builds the tower on every pipeline rank; vLLM
    loads it unless --limit-mm-per-prompt is 0)."""
    if tp < 1:
        raise ValueError(f"tp must be >= 1, got {tp}")
    bits = get_dtype(dtype).element_bits
    t = _Tally(quant, bits)
    if vision and spec.vision is not None:
        _vision_tower(t, spec.vision, spec.hidden_size, tp)
    if vision and spec.qwen_vit is not None:
        _qwen_vit(t, spec.qwen_vit, tp)
    counts = count_params(spec)
    h = spec.hidden_size
    vocab_rank = _split(round_up(spec.vocab_size, VOCAB_PADDING), tp)
    if first:
        t.vector("embeddings", vocab_rank * h)
        if counts.position_embedding:
            t.vector("embeddings", counts.position_embedding)
    norms = counts.final_norm if last else 0
    moe = spec.moe
    for i, layer in enumerate(counts.layers):
        if layers is not None and i not in layers:
            continue
        norms += layer.norms
        if spec.has_attention(i):
            _attention(t, spec, i, tp)
        if spec.has_recurrent(i):
            _recurrent(t, spec, i, tp)
        if not spec.has_mlp(i):
            continue
        if moe is not None and moe.is_moe_layer(i):
            # Looked up as its first expert's gate_proj, the name checkpoints and ignore lists use.
            scheme = t.scheme(f"model.layers.{i}.mlp.experts.0.gate_proj")
            t.add("experts", scheme.experts_bytes(moe.n_routed_experts, h,
                                                  _split(moe.moe_intermediate_size, tp),
                                                  spec.mlp.gated))
            t.vector("experts", layer.router)  # the router (gate) stays unquantized
            shared = f"model.layers.{i}.mlp.shared_experts"
            _ffn(t, spec, "dense_mlp", shared, moe.n_shared_experts * moe.moe_intermediate_size,
                 tp)
            _ffn(t, spec, "dense_mlp", f"model.layers.{i}.mlp.shared_expert",
                 moe.shared_expert_intermediate_size, tp)
        else:
            _ffn(t, spec, "dense_mlp", f"model.layers.{i}.mlp", spec.mlp.intermediate_size, tp,
                 bias=spec.mlp.bias)
    t.vector("norms", norms)
    if last and spec.tie_word_embeddings and not first:
        t.vector("lm_head", vocab_rank * h)
    if last and not spec.tie_word_embeddings:
        head = t.quant.scheme_for("lm_head") if t.quant is not None else None
        if head is None:
            t.vector("lm_head", vocab_rank * h)
        else:
            t.add("lm_head", head.matrix_bytes(vocab_rank, h))
    g = t.groups
    return WeightBreakdown(
        embeddings=g.get("embeddings", 0), attention=g.get("attention", 0),
        dense_mlp=g.get("dense_mlp", 0), experts=g.get("experts", 0),
        lm_head=g.get("lm_head", 0), norms=g.get("norms", 0), quantization_scales=t.scales,
        vision=g.get("vision", 0), dtype=get_dtype(dtype).name,
        method=quant.description if quant is not None else "none",
        notes=quant.notes if quant is not None else (),
        expert_scales=t.group_scales.get("experts", 0),
        rope_cache=cdiv(rope_cache_elements(spec) * bits, 8)
        if _stage_has_attention(spec, layers) else 0,
    )


# ---------------------------------------------------------------------------------------------
# Laying a checkpoint out: the tensors one GPU holds, from the safetensors headers.

# Module names vLLM builds as ColumnParallelLinear / MergedColumnParallelLinear /
# QKVParallelLinear (output rows split over TP) and as RowParallelLinear (input columns split),
# as the Hugging Face checkpoints name them (llama.py, qwen2.py, deepseek_v2.py, gpt_oss.py,
# mixtral.py, gpt2.py, gpt_neox.py, mamba2 / qwen3_next mixers, the vision towers' blocks).
_COLUMN = frozenset({
    "q_proj", "k_proj", "v_proj", "qkv_proj", "query_key_value", "c_attn", "wq", "wk", "wv",
    "wqkv", "gate_proj", "up_proj", "gate_up_proj", "c_fc", "fc1", "w1", "w3", "q_b_proj",
    "kv_b_proj", "in_proj", "in_proj_qkvz", "in_proj_ba", "conv1d", "qkv", "dense_h_to_4h",
})
_ROW = frozenset({"o_proj", "down_proj", "out_proj", "dense", "c_proj", "fc2", "w2", "wo",
                  "proj", "dense_4h_to_h"})
# Per-head vectors of recurrent mixers, split with the heads (vLLM MambaMixer2, Qwen3-Next).
_HEAD_VECTORS = frozenset({"A_log", "D", "dt_bias"})
# Packed integer formats stored (in, out): GPTQ / AWQ qweight, qzeros, scales (gptq.py, awq.py:
# input_dim 0, output_dim 1), so the TP split runs along the other axis.
_TRANSPOSED = frozenset({"qweight", "qzeros", "scales"})
_VOCAB = ("embed_tokens", "lm_head", "embed_out", "wte", "word_embeddings", "tok_embeddings",
          "shared_head")
_FLOAT = frozenset({"F64", "F32", "F16", "BF16"})
_EXPERT_INDEX = re.compile(r"\.experts\.(\d+)\.")
_LAYER_INDEX = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def _elements(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _shard(shape: tuple[int, ...], dim: int, rows: int, bits: int) -> int:
    """Bytes of ``shape`` with dimension ``dim`` cut to ``rows``."""
    cut = shape[:dim] + (rows,) + shape[dim + 1:]
    return cdiv(_elements(cut) * bits, 8)


@dataclass(frozen=True, kw_only=True)
class _Placement:
    spec: ModelSpec
    tp: int  # the TP width of attention, dense MLP, embeddings, lm_head (1 under DP attention)
    expert_tp: int  # the TP width of routed experts (1 under EP)
    ep: int  # expert-parallel ranks holding whole experts

    def vocab_rows(self) -> int:
        return cdiv(round_up(self.spec.vocab_size, VOCAB_PADDING), self.tp)

    def kv_rows(self, rows: int) -> int:
        att = self.spec.attention
        if isinstance(att, HeadAttention) and self.tp > att.num_key_value_heads > 0:
            # Fewer KV heads than ranks: each rank holds one whole head (vLLM QKVParallelLinear
            # replicates KV heads, num_kv_head_replicas = tp // num_kv_heads).
            return cdiv(rows, att.num_key_value_heads)
        return cdiv(rows, self.tp)


def _tensor_rank_bytes(t: TensorInfo, bits: int, where: _Placement, expert: bool) -> int:
    """The bytes of tensor ``t`` one rank holds, ``bits`` per stored element."""
    shape = t.shape
    whole = cdiv(_elements(shape) * bits, 8)
    parts = t.name.split(".")
    leaf = parts[-1]
    module = parts[-2] if len(parts) > 1 else ""
    if not shape or _elements(shape) <= 1:
        return whole  # per-tensor scales, global scales: on every rank
    if any(k in t.name for k in _VOCAB) and len(shape) >= 2 and not expert:
        # VocabParallelEmbedding / ParallelLMHead: the vocabulary padded to 64, then split.
        vocab = where.spec.vocab_size
        dim = shape.index(vocab) if vocab in shape else 0
        return _shard(shape, dim, cdiv(round_up(shape[dim], VOCAB_PADDING), where.tp), bits)
    if expert:
        if where.ep > 1:
            # Whole experts per rank (vLLM FusedMoE with expert parallelism): per-expert tensors
            # are counted by `checkpoint_breakdown`; fused ones hold E/ep of their first axis.
            if module == "experts" and where.spec.moe is not None and (
                    shape[0] == where.spec.moe.n_routed_experts):
                return _shard(shape, 0, cdiv(shape[0], where.ep), bits)
            return whole
        tp = where.expert_tp
        if module == "experts" and where.spec.moe is not None:
            # Fused experts (gpt-oss gate_up_proj_blocks (E, 2I, H/32, 16), Llama-4 / Qwen-VL
            # gate_up_proj (E, H, 2I)): split the axis that carries the intermediate size.
            i = where.spec.moe.moe_intermediate_size
            sizes = (2 * i, i) if leaf.startswith("gate_up") else (i, cdiv(i, 32))
            for dim in range(1, len(shape)):
                if shape[dim] in sizes:
                    return _shard(shape, dim, cdiv(shape[dim], tp), bits)
            return whole  # the down projection's bias (E, H): on every rank
    else:
        tp = where.tp
    if tp == 1:
        return whole
    column = module in _COLUMN
    if leaf in ("g_idx", "weight_g_idx"):
        # Act-order indices run along the input: split by row-parallel layers only.
        return whole if column else _shard(shape, 0, cdiv(shape[0], tp), bits)
    if leaf in _HEAD_VECTORS:
        return _shard(shape, 0, cdiv(shape[0], tp), bits)
    if not column and module not in _ROW:
        return whole  # norms, routers, MLA's q_a / kv_a, MTP's eh_proj: replicated
    if leaf in _TRANSPOSED and len(shape) == 2:
        dim = 1 if column else 0
    elif column:
        dim = 0
    elif len(shape) >= 2:
        dim = 1
    else:
        return whole  # row-parallel biases and per-output scales: on every rank
    if dim == 0 and column and module in ("k_proj", "v_proj") and not expert:
        return _shard(shape, 0, where.kv_rows(shape[0]), bits)
    return _shard(shape, dim, cdiv(shape[dim], tp), bits)


def _owner(name: str, layers: int) -> str:
    """The group of the module a tensor belongs to (a scale is grouped with its weight)."""
    from kvplan.sources.checkpoint import (
        categorise,  # loaded with the checkpoint that is being priced
    )

    module = name.rsplit(".", 1)[0]
    return categorise(module + ".weight", layers)


def checkpoint_breakdown(ckpt: CheckpointWeights, spec: ModelSpec, quant: QuantConfig | None,
                         *, dtype: str, tp: int = 1, ep: int = 1, dp_attention: bool = False,
                         layers: range | None = None, first: bool = True, last: bool = True,
                         vision: bool = True, mtp: bool = False) -> WeightBreakdown:
    """The checkpoint's tensors one GPU holds, as vLLM loads them, by group.

    Each tensor is split over ``tp`` by its module name and shape (vLLM's parallel layers):
    q/k/v/gate/up projections along their output rows (dim 0; GPTQ/AWQ's (in, out) packing along
    dim 1), o/down along their inputs (dim 1), embeddings and lm_head along the vocabulary padded
    to 64, KV heads replicated when fewer than ranks; norms, routers and MLA's q_a/kv_a are whole
    on every rank. Routed experts are split over ``tp`` too, or with ``ep`` > 1 held whole,
    ceil(E/ep) per rank. ``dp_attention``: everything but the routed experts is whole.
    ``layers``/``first``/``last``: one pipeline stage, as `weight_breakdown`.

    Floating tensors are held in the compute ``dtype`` (vLLM casts a float32 checkpoint to the
    model dtype); quantized tensors and their scales as stored. The vision tower is counted when
    ``vision`` (vLLM loads it for a multimodal architecture unless --limit-mm-per-prompt is 0),
    MTP layers when ``mtp``. What the engine adds beyond the stored tensors (the Marlin padding of
    mxfp4 experts, the W_UK/W_UV copies of quantized MLA) is added to its group, in
    ``engine_added``, and named in the notes."""
    from kvplan.sources.checkpoint import DTYPE_BITS

    if tp < 1 or ep < 1:
        raise ValueError(f"tp and ep must be >= 1, got tp={tp}, ep={ep}")
    compute = get_dtype(dtype)
    num_layers = spec.num_hidden_layers
    where = _Placement(spec=spec, tp=1 if dp_attention else tp,
                       expert_tp=1 if ep > 1 else tp, ep=ep)
    moe = spec.moe
    experts_per_rank = cdiv(moe.n_routed_experts, ep) if moe is not None else 0
    groups = dict.fromkeys(("embeddings", "attention", "dense_mlp", "experts", "lm_head",
                            "norms", "vision", "mtp"), 0)
    scales = expert_scales = 0
    has_lm_head = False
    converted = False
    for t in ckpt.tensors:
        owner = _owner(t.name, num_layers) if t.category == "quantization_scales" else t.category
        if (owner == "vision" and not vision) or (owner == "mtp" and not mtp):
            continue
        if owner == "lm_head":
            has_lm_head = True
        match = _LAYER_INDEX.search(t.name)
        if owner == "mtp":
            if not last:
                continue  # vLLM runs the MTP module after the last stage's layers
        elif owner == "vision":
            pass  # qwen2_5_vl.py and peers build the tower on every pipeline rank
        elif match is not None:
            if layers is not None and int(match.group(1)) not in layers:
                continue
        elif (owner == "embeddings" and not first) or (owner in ("lm_head", "other")
                                                        and not last):
            continue
        expert = ".experts." in t.name or t.name.endswith(".experts")
        if expert and ep > 1:
            index = _EXPERT_INDEX.search(t.name)
            if index is not None and int(index.group(1)) >= experts_per_rank:
                continue  # another EP rank's expert (vLLM places experts in order)
        bits = DTYPE_BITS[t.dtype]
        if (t.dtype in _FLOAT and t.category != "quantization_scales"
                and not t.name.endswith("e_score_correction_bias")):
            converted = converted or bits != compute.element_bits
            bits = compute.element_bits
        nbytes = _tensor_rank_bytes(t, bits, where, expert)
        if t.category == "quantization_scales":
            scales += nbytes
            if expert:
                expert_scales += nbytes
            continue
        groups["norms" if owner == "other" else owner] += nbytes
    notes: list[str] = []
    if converted:
        notes.append(f"floating checkpoint tensors held in {compute.name}, the compute dtype")
    if vision and groups["vision"]:
        notes.append("vision tower counted: vLLM loads it unless --limit-mm-per-prompt is 0")
    if last and not has_lm_head and spec.tie_word_embeddings and not first:
        # A tied lm_head on a last stage that is not the first holds its own embedding copy.
        groups["lm_head"] += cdiv(where.vocab_rows() * spec.hidden_size * compute.element_bits,
                                  8)
    added = _engine_added(ckpt, spec, quant, compute.element_bits, where, layers, notes)
    for group, extra in added.items():
        groups[group] += extra
    return WeightBreakdown(
        embeddings=groups["embeddings"], attention=groups["attention"],
        dense_mlp=groups["dense_mlp"], experts=groups["experts"], lm_head=groups["lm_head"],
        norms=groups["norms"], quantization_scales=scales, vision=groups["vision"],
        mtp=groups["mtp"], dtype=compute.name,
        method=quant.description if quant is not None else "none",
        notes=(quant.notes if quant is not None else ()) + tuple(notes),
        expert_scales=expert_scales, source="checkpoint", engine_added=sum(added.values()),
        # Not a checkpoint tensor: vLLM computes the rotary table at start-up (as on the
        # architecture path, `rope_cache_elements`).
        rope_cache=cdiv(rope_cache_elements(spec) * compute.element_bits, 8)
        if _stage_has_attention(spec, layers) else 0)


def _engine_added(ckpt: CheckpointWeights, spec: ModelSpec, quant: QuantConfig | None,
                  bits: int, where: _Placement, layers: range | None,
                  notes: list[str]) -> dict[str, int]:
    """Bytes vLLM allocates beyond the stored tensors, by group (see `checkpoint_breakdown`)."""
    added: dict[str, int] = {}
    if quant is None:
        return added
    from kvplan.weights.formats import Mxfp4
    names = {t.name for t in ckpt.tensors}
    stage = [i for i in range(spec.num_hidden_layers) if layers is None or i in layers]
    moe = spec.moe
    if moe is not None:
        pad = 0
        for i in stage:
            scheme = quant.scheme_for(f"model.layers.{i}.mlp.experts.0.gate_proj")
            if not isinstance(scheme, Mxfp4) or not moe.is_moe_layer(i):
                continue
            # Mxfp4MoEMethod.create_weights pads the expert shapes for the backend's kernel;
            # the checkpoint holds them unpadded.
            experts = cdiv(moe.n_routed_experts, where.ep)
            inter = cdiv(moe.moe_intermediate_size, where.expert_tp)
            args = (experts, spec.hidden_size, inter, spec.mlp.gated)
            pad += (scheme.experts_bytes(*args).total
                    - scheme.experts_bytes(*args, padded=False).total)
            backend = scheme.backend.value
        if pad:
            added["experts"] = pad
            notes.append(f"+{pad:,} bytes: vLLM pads the mxfp4 experts for its {backend} "
                         "MoE kernel (mxfp4.py, Mxfp4MoEMethod.create_weights)")
    att = spec.attention
    if isinstance(att, LatentAttention):
        heads = cdiv(att.num_attention_heads, where.tp)
        copies = 0
        for i in stage:
            name = f"model.layers.{i}.self_attn.kv_b_proj"
            if f"{name}.weight" in names and quant.scheme_for(name) is not None:
                # MLACommonImpl.process_weights_after_loading dequantizes kv_b_proj into
                # W_UK_T / W_UV in the compute dtype, kept beside the quantized weight.
                rows = heads * (att.qk_nope_head_dim + att.v_head_dim)
                copies += cdiv(rows * att.kv_lora_rank * bits, 8)
        if copies:
            added["attention"] = copies
            notes.append(f"+{copies:,} bytes: vLLM's MLA keeps dequantized W_UK/W_UV copies of "
                         "the quantized kv_b_proj (mla/common.py)")
    return added
