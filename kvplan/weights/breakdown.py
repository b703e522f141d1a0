"""Weight bytes from the architecture: `weight_breakdown` lays the model's matrices out from a
`ModelSpec` (shapes, per tensor-parallel rank) and prices each one with the storage format that
covers it (kvplan.model.quant, and for a quantized model kvplan.model.quant_config's
`QuantConfig`). Embeddings, norms, routers and biases stay in the compute dtype unless a scheme
says otherwise (see each scheme and `QuantConfig`).

Matrix names follow the Hugging Face checkpoints (``model.layers.3.self_attn.q_proj``,
``model.layers.3.mlp.experts``, ``lm_head``) so that ``ignore`` / ``modules_to_not_convert`` lists
from config.json match them the way vLLM's ``is_layer_skipped`` and compressed-tensors'
``should_ignore_layer`` do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.dtypes import get_dtype
from kvplan._util.errors import UnmodelledError
from kvplan._util.memo import pure_cache
from kvplan._util.units import cdiv
from kvplan.model.attention import CompressedSparseAttention, HeadAttention, LatentAttention
from kvplan.model.quant import MatrixBytes, QuantScheme, Unquantized, round_up
from kvplan.model.spec import ModelSpec, Qwen2ViTSpec, QwenViTSpec, VisionTowerSpec
from kvplan.weights.base import (
    VOCAB_PADDING,
    WeightBreakdown,
    experts_module,
    rope_cache_bytes,
    stage_has_attention,
)
from kvplan.weights.gemma4_towers import tower_bytes
from kvplan.weights.gemma_blocks import Tensor, elements, layer_tensors, outer_tensors
from kvplan.weights.params import (
    count_params,
    embedding_norm_params,
    expert_bias_params,
    lm_head_bias_rows,
    output_gate_rows,
    qk_norm_params,
    recurrent_float32_params,
    recurrent_params,
    sink_params,
)
from kvplan.weights.routers import router_bytes

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.quant_config import QuantConfig


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
    att = spec.attention_at(layer)
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
    # KV heads are replicated when fewer than ranks; a KV-shared Gemma-3n / Gemma-4 layer has none.
    kv_heads = att.kv_heads_per_rank(tp) * spec.projects_kv(layer)
    k_out, v_out = kv_heads * att.head_dim, kv_heads * att.v_head_dim
    # vLLM fuses q/k/v into one QKVParallelLinear (one block-scale grid over the fused rows),
    # with the output gate's rows where the family has one (kvplan.weights.params).
    gate = output_gate_rows(spec, att, _split(att.num_attention_heads, tp))
    t.linear("attention", f"{pre}.q_proj", q_out + gate + k_out + v_out, h)
    t.vector("attention", qk_norm_params(spec, att, q_out, k_out, kv=spec.projects_kv(layer))
             + sink_params(spec, _split(att.num_attention_heads, tp)))
    t.linear("attention", f"{pre}.o_proj", h, _split(att.num_attention_heads, tp) * att.v_head_dim)
    if att.attention_bias:
        t.vector("attention", q_out + k_out + v_out)
    if att.o_proj_bias:
        t.vector("attention", h)
    if spec.head_wise_attn_gate:
        # Step-3.5 (models/step3p5.py Step3p5Attention.g_proj): ColumnParallelLinear(hidden,
        # num_heads), one logit per query head of the rank.
        t.linear("attention", f"{pre}.g_proj", _split(att.num_attention_heads, tp), h)


def _recurrent(t: _Tally, spec: ModelSpec, layer: int, tp: int) -> None:
    # The mixer's projections dominate its weights (in_proj, out_proj); kvplan.weights.params
    # counts its parameters as a whole, so they are priced as one (n / hidden, hidden) matrix
    # split over TP; the part vLLM holds in float32 (A, A_log, KDA's dt_bias and convolutions:
    # kvplan.weights.params.recurrent_float32_params) at 4 B, split over TP too.
    fp32 = recurrent_float32_params(spec)
    n = recurrent_params(spec) - fp32
    h = spec.hidden_size
    t.linear("attention", f"model.layers.{layer}.mixer.in_proj", _split(n // h, tp), h)
    t.vector("attention", n % h)
    t.add("attention", MatrixBytes(weight=_split(fp32, tp) * 4))


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


def _gemma_blocks(t: _Tally, tensors: list[Tensor]) -> None:
    """Gemma-3n's and Gemma-4's extra tensors (kvplan.weights.gemma_blocks): matrices through
    the quantization rules, vectors in the compute dtype, correct_output_scale in float32."""
    for x in tensors:
        if x.float32:
            t.add(x.group, MatrixBytes(weight=x.rows * x.cols * 4))
        elif x.name is None:
            t.vector(x.group, x.rows * x.cols)
        else:
            t.linear(x.group, x.name, x.rows, x.cols)


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


def _llama4_vision(t: _Tally, tower: VisionTowerSpec, text_hidden: int, tp: int) -> None:
    """Llama-4's vision model and projector, per tensor-parallel rank, in group "vision"
    (vllm/model_executor/models/mllama4.py, 0.15.1 and 0.19.0: Llama4ForConditionalGeneration
    builds Llama4VisionModel and Llama4MultiModalProjector with ``quant_config=None``, so they
    stay in the compute dtype whatever the checkpoint's quantization). Split over TP (the default
    --mm-encoder-tp-mode weights): the patch embedding (Llama4UnfoldConvolution, a
    ColumnParallelLinear of channels x patch^2 -> hidden, no bias), each block like `_vit_block`
    (QKVParallelLinear and RowParallelLinear o_proj, ColumnParallelLinear fc1 and RowParallelLinear
    fc2, all with bias; two LayerNorms), the pixel-shuffle adapter (Llama4VisionPixelShuffleMLP: fc1
    intermediate -> projector_input_dim column, fc2 -> projector_output_dim row, bias
    multi_modal_projector_bias: false in every Llama-4 config) and the projector's linear_1
    (vision_output_dim -> text hidden, column, no bias). Replicated: class_embedding (hidden),
    positional_embedding_vlm ((patches + 1) x hidden), layernorm_pre and layernorm_post. The
    blocks' complex64 rotary table ((patches + 1) x head_dim / 4 x 8 B, 0.2 MB for Llama-4) is
    left out."""
    h, inter = tower.hidden_size, tower.intermediate_size
    plain = t.plain

    def linear(out_features: int, in_features: int) -> None:
        t.add("vision", plain.matrix_bytes(out_features, in_features))

    linear(_split(h, tp), tower.num_channels * tower.patch_size ** 2)
    t.vector("vision", h + (tower.num_positions + 1) * h + 2 * 2 * h)
    for _ in range(tower.num_hidden_layers):
        linear(3 * _split(h, tp), h)
        linear(h, _split(h, tp))
        linear(_split(inter, tp), h)
        linear(h, _split(inter, tp))
        t.vector("vision", 3 * _split(h, tp) + h + _split(inter, tp) + h)  # biases
        t.vector("vision", 2 * 2 * h)  # the two LayerNorms
    linear(_split(tower.projector_input_dim, tp), inter)
    linear(tower.projector_output_dim, _split(tower.projector_input_dim, tp))
    linear(_split(text_hidden, tp), tower.vision_output_dim)


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


def _qwen2_vit(t: _Tally, vit: Qwen2ViTSpec, tp: int) -> None:
    """A Qwen2-VL / Qwen2.5-VL vision transformer, per tensor-parallel rank, in group "vision"
    (vLLM 0.32 models/qwen2_vl.py Qwen2VisionTransformer, :525-602; models/qwen2_5_vl.py
    Qwen2_5_VisionTransformer, :622-719; both built with the model's quant_config). Named as
    transformers >= 4.52 saves them, ``model.visual.``, which an ignore list's ``visual`` or
    ``model.visual`` both match (vLLM maps the latter onto its ``visual.``). Replicated: the
    Conv3d patch embedding (hidden x in_channels x temporal_patch x patch^2, no bias:
    qwen2_vl.py:461-467, qwen2_5_vl.py:554-560),
    each block's two norms (Qwen2-VL LayerNorm, weight and bias; Qwen2.5-VL RMSNorm, weight
    only), the merger's ln_q over hidden, and the blocks' rotary table (get_rope over head_dim
    / 2 rotary dimensions, 8,192 positions, in the model dtype). Split over TP: each block's qkv
    (Qwen2-VL ColumnParallelLinear 3 x hidden, Qwen2.5-VL QKVParallelLinear; bias) and proj
    (RowParallelLinear, bias whole); its MLP, Qwen2-VL's fc1 (column) / fc2 (row) of
    int(hidden x mlp_ratio) or Qwen2.5-VL's gate_up (MergedColumnParallelLinear, 2 x
    intermediate) / down (row), all with bias; the merger's mlp.0 (hidden x merge^2 squared,
    column) and mlp.2 (to out_hidden_size, row), with bias. Window attention (Qwen2.5-VL's
    window_size, fullatt_block_indexes) builds nothing."""
    h, inter = vit.hidden_size, vit.intermediate_size
    norm = h if vit.rms_norm else 2 * h
    merged = h * vit.spatial_merge_size ** 2
    pre = "model.visual"
    t.vector("vision", vit.pixels_per_patch * h)  # patch_embed.proj, no bias
    t.vector("vision", QWEN_VIT_ROPE_POSITIONS * (h // vit.num_heads // 2))  # rotary table
    # input_norm: FusedMMInputNorm's float32 weight and bias buffers, one value per channel
    # (layers/fusion/mm_input_norm.py:236-248), built since both classes set
    # supports_mm_device_do_normalize (on by default, config/model.py:1071-1085) and the
    # published preprocessor configs normalise (CLIP mean / std, rescale 1/255).
    t.add("vision", MatrixBytes(weight=2 * vit.in_channels * 4))
    for i in range(vit.depth):
        block = f"{pre}.blocks.{i}"
        t.vector("vision", 2 * norm)  # norm1, norm2
        t.linear("vision", f"{block}.attn.qkv", 3 * _split(h, tp), h)
        t.linear("vision", f"{block}.attn.proj", h, _split(h, tp))
        t.vector("vision", 3 * _split(h, tp) + h)  # their biases
        ups = ("gate_proj", "up_proj") if vit.gated_mlp else ("fc1",)
        for up in ups:
            t.linear("vision", f"{block}.mlp.{up}", _split(inter, tp), h)
        down = "down_proj" if vit.gated_mlp else "fc2"
        t.linear("vision", f"{block}.mlp.{down}", h, _split(inter, tp))
        t.vector("vision", len(ups) * _split(inter, tp) + h)  # their biases
    t.vector("vision", norm)  # merger.ln_q
    t.linear("vision", f"{pre}.merger.mlp.0", _split(merged, tp), merged)
    t.linear("vision", f"{pre}.merger.mlp.2", vit.out_hidden_size, _split(merged, tp))
    t.vector("vision", _split(merged, tp) + vit.out_hidden_size)  # biases


def _mtp_layers(t: _Tally, spec: ModelSpec, tp: int, held_experts: int | None = None,
                expert_tp: int | None = None) -> int:
    """The MTP draft's weights on one rank, as vLLM loads them with --speculative-method mtp.
    Per MTP layer: a whole decoder layer like the target's last (attention and MoE, quantized
    like the target's) and three hidden-size norms; then, by architecture
    (ModelSpec.mtp_own_head, kvplan.sources.features):

    - DeepSeek-V3 / GLM-4.5 (models/deepseek_mtp.py, glm4_moe_mtp.py: enorm, hnorm,
      shared_head.norm): ``eh_proj``, a plain nn.Linear(2 x hidden, hidden) in the compute dtype
      whole on every rank, and ``shared_head.head``, a vocab-parallel ParallelLMHead of its own;
    - Qwen3-Next / Qwen3.5 (models/qwen3_next_mtp.py: norm, pre_fc_norm_hidden,
      pre_fc_norm_embedding): ``fc``, a ColumnParallelLinear(2 x hidden, hidden) split over TP
      and quantized like the model; the lm head is the target's.

    The draft's own embedding is dropped for the target's when there is one pipeline stage
    (v1/spec_decode/eagle.py load_model: "Detected MTP model. Sharing target model embedding
    weights"; read at the 0.11-0.12 line), so it is not counted. Routed experts are held as
    the target's layers hold theirs (``held_experts``, each split over ``expert_tp``, as
    `weight_breakdown` takes them: the draft builds a DeepseekV2DecoderLayer, its FusedMoE
    under the same parallel config). Quantization scales go to `t`'s scales, as the checkpoint
    path counts them."""
    n = spec.num_nextn_predict_layers
    if not n:
        return 0
    h = spec.hidden_size
    m = _Tally(t.quant, t.bits)
    like = spec.num_hidden_layers - 1  # the block is a decoder layer like the last one
    counts = count_params(spec)
    moe = spec.moe
    for j in range(n):
        i = spec.num_hidden_layers + j
        _attention(m, spec, i, tp)
        m.vector("mtp", counts.layers[like].norms + 3 * h)
        if moe is not None and moe.is_moe_layer(like):
            scheme = m.scheme(experts_module(spec, i))
            m.add("mtp", scheme.experts_bytes(
                moe.n_routed_experts if held_experts is None else held_experts, h,
                _split(moe.moe_intermediate_size, tp if expert_tp is None else expert_tp),
                spec.mlp.gated))
            m.add("mtp", MatrixBytes(weight=router_bytes(spec, m.bits)))
            _ffn(m, spec, "mtp", f"model.layers.{i}.mlp.shared_experts",
                 moe.n_shared_experts * moe.moe_intermediate_size, tp)
            _ffn(m, spec, "mtp", f"model.layers.{i}.mlp.shared_expert",
                 moe.shared_expert_intermediate_size, tp)
        else:
            _ffn(m, spec, "mtp", f"model.layers.{i}.mlp", spec.mlp.intermediate_size, tp)
        if spec.mtp_own_head:
            m.vector("mtp", 2 * h * h)  # eh_proj
            m.vector("mtp", _split(round_up(spec.vocab_size, VOCAB_PADDING), tp) * h)  # head
        else:
            m.linear("mtp", "mtp.fc", _split(h, tp), 2 * h)
    t.scales += m.scales
    t.group_scales["mtp"] = t.group_scales.get("mtp", 0) + m.scales
    return sum(m.groups.values())


def weight_breakdown(spec: ModelSpec, quant: QuantConfig | None, *, dtype: str,
                     tp: int = 1, layers: range | None = None, first: bool = True,
                     last: bool = True, vision: bool = True, mtp: bool = False,
                     lm_head: bool | None = None, held_experts: int | None = None,
                     expert_tp: int | None = None) -> WeightBreakdown:
    """Weight bytes as vLLM holds them, by group, for one tensor-parallel rank.

    ``dtype``: the compute dtype (kvplan name or config spelling; see `engine_dtype`), used for
    everything the quantization config leaves unquantized. ``quant`` None: every weight in
    ``dtype``. Embeddings and lm_head are vocab-parallel (padded to a multiple of 64, then split);
    attention heads, MLP and expert widths are split over ``tp``; replicated pieces (MLA's q_a and
    kv_a, norms, routers, KV heads when fewer than ranks) are counted whole on every rank.
    ``layers``/``first``/``last``: one pipeline stage, holding the embeddings (``first``) and
    the final norm and lm_head (``last``): Llama's split puts them on the first and last stages
    (a tied lm_head on a last stage that is not the first keeps its own copy of the embedding
    matrix); which stages hold them is the engine's rule (EngineRules.stage_outer: vLLM's
    Gemma-4 builds both on every stage, its tied head sharing the stage's embeddings);
    ``lm_head``: whether the stage holds the lm_head, where that differs from ``last`` (vLLM's
    Qwen3-Next builds it on every stage, the final norm on the last alone).
    ``vision``: a vision tower the spec describes (`VisionTowerSpec`) is counted on every stage,
    as `checkpoint_breakdown` counts it (gemma3_mm.py, like qwen2_5_vl.py and its peers, builds
    the tower on every pipeline rank; vLLM loads it unless --limit-mm-per-prompt is 0). ``mtp``:
    the MTP draft layers (--speculative-method mtp), on the last stage (`_mtp_layers`).
    ``held_experts``: the routed experts a MoE layer's rank holds (expert parallelism: the
    busiest rank's, kvplan.weights.expert_layout.busiest_rank_experts; the router whole); None:
    all of them. ``expert_tp``: the ranks each routed expert's GEMMs and biases are split over
    (expert parallelism: kvplan.weights.expert_layout.moe_tp_size, 1 unless MoE TP x EP); None:
    ``tp``."""
    # The cost model asks this for every step it times (kvplan.perf), the same few layouts
    # thousands of times in one simulation: the answer is a pure function of these arguments
    # (frozen, hashable specs; `spec.checkpoint`, left out of a spec's equality, is never read
    # here: `weights_breakdown` measures checkpoints apart), so it is cached on all of them.
    return _weight_breakdown(spec, quant, dtype, tp, layers, first, last, vision, mtp, lm_head,
                             held_experts, expert_tp)


@pure_cache(maxsize=512)
def _weight_breakdown(spec: ModelSpec, quant: QuantConfig | None, dtype: str, tp: int,
                      layers: range | None, first: bool, last: bool, vision: bool, mtp: bool,
                      lm_head: bool | None, held_experts: int | None = None,
                      expert_tp: int | None = None) -> WeightBreakdown:
    if tp < 1:
        raise ValueError(f"tp must be >= 1, got {tp}")
    if isinstance(spec.attention, CompressedSparseAttention):
        # DeepSeek-V4's blocks are its own (kvplan.weights.csa), in its own checkpoint format.
        if quant is not None and spec.quantization_json is None:
            raise UnmodelledError(f"{spec.source}: DeepSeek-V4 with load-time quantization "
                                  f"({quant.method}) is not modelled")
        from kvplan.weights.csa import csa_weight_breakdown  # V4 only: keeps start-up lean

        return csa_weight_breakdown(spec, dtype=dtype, tp=tp, layers=layers, first=first,
                                    last=last, held_experts=held_experts, expert_tp=expert_tp)
    bits = get_dtype(dtype).element_bits
    t = _Tally(quant, bits)
    if vision and spec.vision is not None:
        if spec.vision.kind == "llama4":
            _llama4_vision(t, spec.vision, spec.hidden_size, tp)
        else:
            _vision_tower(t, spec.vision, spec.hidden_size, tp)
    if vision and spec.qwen_vit is not None:
        _qwen_vit(t, spec.qwen_vit, tp)
    if vision and spec.qwen2_vit is not None:
        _qwen2_vit(t, spec.qwen2_vit, tp)
    if vision:  # Gemma-4's towers, replicated (kvplan.weights.gemma4_towers)
        t.add("vision", MatrixBytes(weight=tower_bytes(spec, bits)))
    counts = count_params(spec)
    h = spec.hidden_size
    vocab_rank = _split(round_up(spec.vocab_size, VOCAB_PADDING), tp)
    if first:
        t.vector("embeddings", vocab_rank * h + embedding_norm_params(spec))
        if counts.position_embedding:
            t.vector("embeddings", counts.position_embedding)
        _gemma_blocks(t, outer_tensors(spec, tp))
    norms = counts.final_norm if last else 0
    moe = spec.moe
    for i, layer in enumerate(counts.layers):
        if layers is not None and i not in layers:
            continue
        norms += layer.norms - elements(layer_tensors(spec, i), "norms")
        _gemma_blocks(t, layer_tensors(spec, i, tp))
        if spec.has_attention(i):
            _attention(t, spec, i, tp)
        if spec.has_recurrent(i):
            _recurrent(t, spec, i, tp)
        if not spec.has_mlp(i):
            continue
        if moe is not None and moe.is_moe_layer(i):
            scheme = t.scheme(experts_module(spec, i))
            held = moe.n_routed_experts if held_experts is None else held_experts
            width = _split(moe.moe_intermediate_size, tp if expert_tp is None else expert_tp)
            t.add("experts", scheme.experts_bytes(held, h, width, spec.mlp.gated))
            if not getattr(scheme, "expert_bias", False):  # Mxfp4 prices its padded biases
                t.vector("experts", held * expert_bias_params(spec, width))
            # The router (gate) stays unquantized, in the dtype vLLM builds it in.
            t.add("experts", MatrixBytes(weight=router_bytes(spec, t.bits)))
            shared = f"model.layers.{i}.mlp.shared_experts"
            _ffn(t, spec, "dense_mlp", shared, moe.n_shared_experts * moe.moe_intermediate_size,
                 tp)
            _ffn(t, spec, "dense_mlp", f"model.layers.{i}.mlp.shared_expert",
                 moe.shared_expert_intermediate_size, tp)
        else:
            _ffn(t, spec, "dense_mlp", f"model.layers.{i}.mlp", spec.mlp_width(i), tp,
                 bias=spec.mlp.bias)
    t.vector("norms", norms)
    head = last if lm_head is None else lm_head
    if head and spec.tie_word_embeddings and not first:
        t.vector("lm_head", vocab_rank * h)
    if head and not spec.tie_word_embeddings:
        scheme = t.quant.scheme_for("lm_head") if t.quant is not None else None
        if scheme is None:
            t.vector("lm_head", vocab_rank * h)
        else:
            t.add("lm_head", scheme.matrix_bytes(vocab_rank, h))
        t.vector("lm_head", lm_head_bias_rows(spec, vocab_rank))
    mtp_bytes = _mtp_layers(t, spec, tp, held_experts, expert_tp) if mtp and last else 0
    g = t.groups
    return WeightBreakdown(
        embeddings=g.get("embeddings", 0), attention=g.get("attention", 0),
        dense_mlp=g.get("dense_mlp", 0), experts=g.get("experts", 0),
        lm_head=g.get("lm_head", 0), norms=g.get("norms", 0), quantization_scales=t.scales,
        vision=g.get("vision", 0), mtp=mtp_bytes, dtype=get_dtype(dtype).name,
        method=quant.description if quant is not None else "none",
        notes=quant.notes if quant is not None else (),
        expert_scales=t.group_scales.get("experts", 0),
        dense_mlp_scales=t.group_scales.get("dense_mlp", 0),
        lm_head_scales=t.group_scales.get("lm_head", 0),
        mtp_scales=t.group_scales.get("mtp", 0),
        rope_cache=rope_cache_bytes(spec, bits)
        if stage_has_attention(spec, layers) else 0,
    )
