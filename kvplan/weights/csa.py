"""DeepSeek-V4's weights (attention kind csa) as vLLM 0.32 builds them on a CUDA GPU, per
tensor-parallel rank: models/deepseek_v4/nvidia/model.py (DeepseekV4MLP, DeepseekV4MoE,
DeepseekV4DecoderLayer, DeepseekV4Model, DeepseekV4ForCausalLM), attention.py
(DeepseekV4Attention, DeepseekV4Indexer), compressor.py (DeepseekCompressor), nvidia/flashmla.py
(the attention sink's padded heads) and quant_config.py (DeepseekV4FP8Config). Line numbers
below are 0.32.0's.

Per decoder layer i, with H hidden, n heads of d, q rank q, o groups g of rank o, t TP ranks:

- attention.py:243-282: attn_sink (float32, the heads padded to 64 or 128: flashmla.py:78-85);
  fused_wqa_wkv, a replicated linear H -> q + d; q_norm (q) and kv_norm (d); wq_b q -> n d / t
  (column); wo_a n d / g -> g o / t (column); wo_b g o / t -> H (row). These take the
  checkpoint's FP8 blocks.
- compressor.py:262-280, on a layer of ratio r > 1 (coff = 2 for r = 4, else 1): ape (float32,
  r x coff d), fused_wkv_wgate H -> 2 coff d replicated and unquantized (quant_config=None),
  its norm (d).
- attention.py:975-1031, on a ratio-4 layer: the indexer's wq_b q -> index_n_heads x
  index_head_dim (replicated, FP8), weights_proj H -> index_n_heads (replicated, unquantized)
  and a compressor of its own over index_head_dim.
- nvidia/model.py:724-790: the router GateLinear H -> E in the compute dtype; on the first
  num_hash_layers layers tid2eid, an int32 (vocab x top-k) token -> experts table, else (noaux_tc)
  a float32 score-correction bias of E; the shared expert, DeepseekV4MLP, its width rounded up so
  that each rank holds whole 128-blocks (:150-155); the routed experts of the checkpoint's
  expert_dtype: MXFP4 (uint8 w13 (E, 2I/t, H/2) and w2 (E, H, I/t/2), one e8m0 scale per 32
  along the input, no bias; quantization/mxfp4.py Mxfp4MoEMethod.create_weights) or FP8 blocks.
- nvidia/model.py:1091-1141: attn_norm and ffn_norm (H), and the hyper-connections in float32:
  hc_attn_fn and hc_ffn_fn ((2 + m) m x m H each, m = hc_mult), their bases ((2 + m) m) and
  scales (3).

Once: embed_tokens and lm_head (vocab padded to 64, split; compute dtype), the final norm (H) and
hc_head_fn (m x m H), hc_head_base (m) and hc_head_scale (1), float32 (:1331-1378, :1831-1835).
The rotary tables (common/rope.py, rotary_embedding/deepseek_scaling_rope.py:224-255
DeepseekV4ScalingRotaryEmbedding: cos_sin_cache in float32 of original_max_position x factor
rows of qk_rope_head_dim): one for the window-only layers (plain RoPE, max_position_embeddings
rows) and one for the compressed layers (the config's YaRN), each shared by its layers.

FP8 checkpoints (quant_method fp8, which vLLM runs as deepseek_v4_fp8): block scales of one
e8m0 byte for FP4-expert checkpoints, float32 for FP8-expert ones (DeepseekV4FP8Config
.is_scale_e8m0). These are the parameters as loaded; the GPU kernels' own re-layouts of the
scales in process_weights_after_loading (DeepGEMM's float32 or packed-ue8m0 scale layouts) are
not modelled. Not counted: the MTP layers (loaded only with speculative decoding, which kvplan
refuses for V4), the indexer's shared top-k buffer (max_num_batched_tokens x index_topk int32,
allocated beside the weights: 16 MiB at 8,192 tokens).
"""

from __future__ import annotations

from kvplan._util.dtypes import get_dtype
from kvplan._util.errors import UnmodelledError
from kvplan._util.units import cdiv
from kvplan.model.attention import CompressedSparseAttention
from kvplan.model.quant import MatrixBytes, round_up
from kvplan.model.quant_formats import Fp8Block
from kvplan.model.spec import ModelSpec
from kvplan.weights.base import VOCAB_PADDING, WeightBreakdown
from kvplan.weights.csa_format import CsaFormats, csa_formats
from kvplan.weights.params import head_hyper_connection_params, hyper_connection_params

FP32_BYTES = 4
INT32_BYTES = 4
# Every MXFP4 MoE kernel vLLM 0.32 picks on CUDA pads the hidden size to at most 256 and the
# per-rank intermediate size to at most 128 (fused_moe/oracle/mxfp4.py:816-895
# mxfp4_round_up_hidden_size_and_intermediate_size: Marlin and TRT-LLM 256 / 128, DeepGEMM and
# CUTLASS 128 / 128, the rest 64 or less): sizes that are such multiples are held as they are,
# whatever the kernel.
MXFP4_PAD_HIDDEN = 256
MXFP4_PAD_INTERMEDIATE = 128
# nvidia/flashmla.py:78-85: the FP8 decode kernel takes 64 or 128 query heads.
SINK_HEADS = (64, 128)


def _att(spec: ModelSpec) -> CompressedSparseAttention:
    att = spec.attention
    assert isinstance(att, CompressedSparseAttention)
    return att


class _Tally:
    def __init__(self) -> None:
        self.groups: dict[str, int] = {}
        self.scales = 0
        self.expert_scales = 0

    def add(self, group: str, b: MatrixBytes) -> None:
        self.groups[group] = self.groups.get(group, 0) + b.weight
        self.scales += b.scales
        if group == "experts":
            self.expert_scales += b.scales

    def raw(self, group: str, n_bytes: int) -> None:
        self.add(group, MatrixBytes(weight=n_bytes))


def _compressor_bytes(f: CsaFormats, h: int, ratio: int, head: int) -> int:
    """compressor.py:258-280: ape (float32, ratio x coff head), fused_wkv_wgate (hidden ->
    2 coff head, unquantized, replicated) and its norm (head)."""
    coff = 2 if ratio == 4 else 1
    return (ratio * coff * head * FP32_BYTES
            + cdiv(2 * coff * head * h * f.bits, 8) + cdiv(head * f.bits, 8))


def _shared_width(spec: ModelSpec, f: CsaFormats, tp: int) -> int:
    """The shared expert's width on one rank (nvidia/model.py:150-155: with FP8 blocks the
    width is rounded up to whole 128-blocks per rank)."""
    moe = spec.moe
    assert moe is not None
    width = moe.moe_intermediate_size * moe.n_shared_experts
    if isinstance(f.linear, Fp8Block):
        block = f.linear.block_n
        width = cdiv(width // block, tp) * block * tp
    return cdiv(width, tp)


def _layer(t: _Tally, spec: ModelSpec, f: CsaFormats, i: int, tp: int,
           held: int | None, expert_tp: int) -> None:
    att = _att(spec)
    moe = spec.moe
    if moe is None:
        raise UnmodelledError(f"{spec.source}: DeepSeek-V4 without MoE layers is not modelled")
    h = spec.hidden_size
    heads = att.num_attention_heads // tp
    # Attention (attention.py:243-282).
    t.raw("attention", (SINK_HEADS[0] if heads <= SINK_HEADS[0] else SINK_HEADS[1])
          * FP32_BYTES)
    t.add("attention", f.linear.matrix_bytes(att.q_lora_rank + att.head_dim, h))
    t.raw("attention", cdiv((att.q_lora_rank + att.head_dim) * f.bits, 8))  # q_norm, kv_norm
    t.add("attention", f.linear.matrix_bytes(heads * att.head_dim, att.q_lora_rank))
    wo_a_in = att.num_attention_heads * att.head_dim // att.o_groups
    t.add("attention", f.linear.matrix_bytes(att.o_groups * att.o_lora_rank // tp, wo_a_in))
    t.add("attention", f.linear.matrix_bytes(h, att.o_groups * att.o_lora_rank // tp))
    ratio = att.compress_ratio(i)
    if ratio > 1:
        t.raw("attention", _compressor_bytes(f, h, ratio, att.head_dim))
    if ratio == 4:  # the lightning indexer (attention.py:975-1031)
        t.add("attention", f.linear.matrix_bytes(att.index_n_heads * att.index_head_dim,
                                                 att.q_lora_rank))
        t.raw("attention", cdiv(att.index_n_heads * h * f.bits, 8))  # weights_proj
        t.raw("attention", _compressor_bytes(f, h, ratio, att.index_head_dim))
    # MoE (nvidia/model.py:724-790).
    e = moe.n_routed_experts
    t.raw("experts", cdiv(e * h * f.bits, 8))  # the router, compute dtype
    if i < att.num_hash_layers:
        t.raw("experts", spec.vocab_size * moe.num_experts_per_tok * INT32_BYTES)  # tid2eid
    elif moe.score_bias:
        t.raw("experts", e * FP32_BYTES)  # e_score_correction_bias
    inter = cdiv(moe.moe_intermediate_size, expert_tp)
    if f.mxfp4 and (h % MXFP4_PAD_HIDDEN or inter % MXFP4_PAD_INTERMEDIATE):
        raise UnmodelledError(
            f"{spec.source}: DeepSeek-V4's MXFP4 experts of hidden {h} and width {inter} per "
            f"rank (tp {expert_tp}): the MoE kernel's padding (to {MXFP4_PAD_HIDDEN} / "
            f"{MXFP4_PAD_INTERMEDIATE}, by kernel) is not modelled")
    t.add("experts", f.experts.experts_bytes(e if held is None else held, h, inter, True))
    shared = _shared_width(spec, f, tp)
    t.add("dense_mlp", f.linear.matrix_bytes(2 * shared, h) + f.linear.matrix_bytes(h, shared))
    # Norms and hyper-connections (nvidia/model.py:1091-1141).
    t.raw("norms", cdiv(2 * h * f.bits, 8) + hyper_connection_params(spec) * FP32_BYTES)


def rope_tables_bytes(spec: ModelSpec) -> int:
    """The float32 rotary tables: one for the window-only layers (max_position_embeddings rows)
    and one for the compressed ones (original_max_position_embeddings x factor rows under the
    config's YaRN, else max_position_embeddings), qk_rope_head_dim values a row (common/rope.py;
    deepseek_scaling_rope.py:244-255). The two differ in theta (rope_theta, compress_rope_theta),
    so vLLM's get_rope cache keeps both."""
    att = _att(spec)
    ratios = {att.compress_ratio(i) for i in range(spec.num_hidden_layers)}
    positions = spec.max_position_embeddings or 0
    rows = 0
    if 1 in ratios:
        rows += positions
    if ratios - {1}:
        scaling = spec.position_fields.rope_scaling if spec.position_fields else None
        rope = None if scaling is None else (scaling.rope_type or scaling.type)
        if rope not in (None, "default") and scaling is not None and scaling.factor and (
                scaling.original_max_position_embeddings):
            rows += int(scaling.original_max_position_embeddings * scaling.factor)
        else:
            rows += positions
    return rows * att.qk_rope_head_dim * FP32_BYTES


def csa_weight_breakdown(spec: ModelSpec, *, dtype: str, tp: int = 1,
                         layers: range | None = None, first: bool = True,
                         last: bool = True, held_experts: int | None = None,
                         expert_tp: int | None = None) -> WeightBreakdown:
    """DeepSeek-V4's weights on one tensor-parallel rank (the module docstring), in the
    checkpoint's quantization (spec.quantization_config) or the compute dtype ``dtype``.
    ``held_experts``: the routed experts a MoE layer's rank holds, each split over
    ``expert_tp`` (expert parallelism, as `weight_breakdown` takes them); None: all of them,
    over ``tp``."""
    att = _att(spec)
    if att.num_attention_heads % tp or att.o_groups % tp:
        raise UnmodelledError(f"{spec.source}: tp {tp} does not divide DeepSeek-V4's "
                              f"{att.num_attention_heads} heads and {att.o_groups} output "
                              "groups (attention.py asserts it)")
    bits = get_dtype(dtype).element_bits
    f = csa_formats(spec, bits)
    t = _Tally()
    h = spec.hidden_size
    vocab_rank = cdiv(round_up(spec.vocab_size, VOCAB_PADDING), tp)
    if first:
        t.raw("embeddings", cdiv(vocab_rank * h * bits, 8))
    for i in range(spec.num_hidden_layers):
        if layers is None or i in layers:
            _layer(t, spec, f, i, tp, held_experts, tp if expert_tp is None else expert_tp)
    if last:
        t.raw("norms", cdiv(h * bits, 8) + head_hyper_connection_params(spec) * FP32_BYTES)
        t.raw("lm_head", cdiv(vocab_rank * h * bits, 8))
    g = t.groups
    described = "none" if spec.quantization_config is None else (
        f"deepseek_v4_fp8 ({'mxfp4' if f.mxfp4 else 'fp8'} experts)")
    return WeightBreakdown(
        embeddings=g.get("embeddings", 0), attention=g.get("attention", 0),
        dense_mlp=g.get("dense_mlp", 0), experts=g.get("experts", 0),
        lm_head=g.get("lm_head", 0), norms=g.get("norms", 0), quantization_scales=t.scales,
        expert_scales=t.expert_scales, dtype=get_dtype(dtype).name, method=described,
        rope_cache=rope_tables_bytes(spec) if layers is None or len(layers) else 0)
