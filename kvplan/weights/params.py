"""Parameter counts from a spec's architecture, per layer, so that pipeline stages can be weighed.

Counted: token embeddings, learned position embeddings (gpt2), per-layer attention projections
(MLA: q_a/q_b or q, kv_a (latent + RoPE key), kv_b (per-head K_nope and V up-projections), o, and
the latent/query norms), dense MLP, MoE routed and shared experts and the router, norms (RMSNorm:
weight; LayerNorm: weight and bias; two per layer, four with ModelSpec.sandwich_norms), per-head
q/k norms (or full-width ones), attention sinks, the attention output gate and routed-expert
biases where the spec has them, the final norm and an untied lm_head. Not counted: DeepSeek-V3's
multi-token-prediction module (not in num_hidden_layers), quantisation scales, MiMo-V2's sliding
layers' sink logits. Family details as vLLM 0.32 builds them (kvplan.sources.features): DBRX's
LayerNorms without bias, GPT-J's / Phi-2's / Falcon-7B's one norm per parallel block, GPT-J's and
Phi-MoE's lm_head bias, BLOOM's embedding LayerNorm, OPT's 2 offset position rows, OLMoE's q / k
norms over all heads. DeepSeek-V4
(attention kind csa) is counted by `csa_params`, as kvplan.weights.csa prices it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import UnmodelledError
from kvplan._util.memo import pure_cache
from kvplan.model.attention import (
    Attention,
    CompressedSparseAttention,
    HeadAttention,
    LatentAttention,
)
from kvplan.model.spec import ModelSpec
from kvplan.weights.gemma_blocks import elements, layer_tensors, outer_tensors
from kvplan.weights.routers import router_params


@dataclass(frozen=True, kw_only=True)
class LayerParams:
    attention: int
    mlp: int  # dense MLP, or the shared experts of an MoE layer
    routed_experts: int  # all routed experts of this layer
    routed_active: int  # the num_experts_per_tok experts one token uses
    router: int
    norms: int

    @property
    def total(self) -> int:
        return self.attention + self.mlp + self.routed_experts + self.router + self.norms

    @property
    def active(self) -> int:
        return self.attention + self.mlp + self.routed_active + self.router + self.norms


@dataclass(frozen=True, kw_only=True)
class ParamCount:
    embedding: int  # token embeddings
    position_embedding: int  # learned position embeddings (gpt2), else 0
    lm_head: int  # 0 when tied to the embeddings
    final_norm: int
    layers: tuple[LayerParams, ...]
    # Gemma-3n's / Gemma-4's per-layer embeddings, Gemma-3n's AltUp projections
    # (kvplan.weights.gemma_blocks); which pipeline stages hold them: EngineRules.stage_outer.
    per_layer_embedding: int = 0

    @property
    def total(self) -> int:
        return self._outer + sum(x.total for x in self.layers)

    @property
    def _outer(self) -> int:
        return (self.embedding + self.position_embedding + self.lm_head + self.final_norm
                + self.per_layer_embedding)

    @property
    def active(self) -> int:
        """Parameters one token touches (MoE: the routed top-k plus shared experts)."""
        return self._outer + sum(x.active for x in self.layers)


def _norm(spec: ModelSpec, width: int) -> int:
    """One norm over `width`: RMSNorm a weight, LayerNorm a weight and a bias, unless the
    family drops its biases (ModelSpec.layernorm_without_bias: DBRX, kvplan.sources.features)."""
    return width * (2 if spec.norm_type == "layernorm" and not spec.layernorm_without_bias
                    else 1)


def lm_head_bias_rows(spec: ModelSpec, rows: int) -> int:
    """The bias of an untied lm_head over `rows` (the rank's padded vocabulary rows, as
    ParallelLMHead._register_bias sizes it: vLLM 0.32 layers/vocab_parallel_embedding.py:628-
    629), where the family builds one (ModelSpec.lm_head_bias: GPT-J, Phi-MoE)."""
    return rows if spec.lm_head_bias and not spec.tie_word_embeddings else 0


def embedding_norm_params(spec: ModelSpec) -> int:
    """A LayerNorm over the token embeddings, held with them (ModelSpec.embedding_layernorm:
    BLOOM's word_embeddings_layernorm, bloom.py:253-255)."""
    return _norm(spec, spec.hidden_size) if spec.embedding_layernorm else 0


def output_gate_rows(spec: ModelSpec, att: HeadAttention, heads: int) -> int:
    """Rows the attention output gate adds to the query projection for `heads` query heads
    (ModelSpec.attention_output_gate): one logit per head dimension, so as many rows as the
    queries. vLLM 0.32 models/qwen3_next.py:317-321 (Qwen3.5 reuses it) fuses them into qkv_proj
    (`total_num_heads * (1 + attn_output_gate)` query heads); models/afmoe.py:216-222 builds a
    ColumnParallelLinear gate_proj(hidden, num_heads x head_dim) of the same size."""
    return heads * att.head_dim if spec.attention_output_gate else 0


def qk_norm_params(spec: ModelSpec, att: HeadAttention, q_out: int, k_out: int, *,
                   kv: bool = True) -> int:
    """q_norm and k_norm of one layer on a rank whose query and key projections have `q_out`
    and `k_out` rows: RMSNorms of head_dim each, whole on every rank
    (ModelSpec.per_head_qk_norm: models/qwen3.py Qwen3Attention, qwen3_next.py:370-371,
    afmoe.py:225-226, gemma3.py:149-150); or one norm over all of the rank's query rows and one
    over its key rows (ModelSpec.full_width_qk_norm: vLLM 0.32 models/minimax_m2.py:215-231
    MiniMaxText01RMSNormTP(head_dim x heads), its weight split like the heads); or those two
    over all heads, whole on every rank (ModelSpec.replicated_qk_norm: olmoe.py:164-165); or
    one row of head_dim per head of the rank (ModelSpec.headwise_qk_norm: commandr.py:257-263),
    as many weights as the full-width norms."""
    if spec.replicated_qk_norm:
        return (att.num_attention_heads + kv * att.num_key_value_heads) * att.head_dim
    if spec.full_width_qk_norm or spec.headwise_qk_norm:
        return q_out + k_out
    return (1 + kv) * att.head_dim if spec.per_head_qk_norm else 0


def sink_params(spec: ModelSpec, heads: int) -> int:
    """Attention sinks of one layer on a rank with `heads` query heads
    (ModelSpec.attention_sinks): one learned logit per head, in the compute dtype (vLLM 0.32
    models/gpt_oss.py:130-132 `torch.empty(num_attention_heads // tp_size)`)."""
    return heads if spec.attention_sinks else 0


def expert_bias_params(spec: ModelSpec, width: int) -> int:
    """Biases of one routed expert whose (rank's) intermediate width is `width`
    (ModelSpec.expert_biases): gate_up (2 x width, or width ungated) and down (hidden, whole on
    every rank). vLLM 0.32 layers/fused_moe/unquantized_fused_moe_method.py:99-127
    (has_bias: w13_bias (experts, w13_up_dim), w2_bias (experts, hidden)) in the compute
    dtype; layers/quantization/mxfp4.py:271-291 the same shapes in bfloat16."""
    if not spec.expert_biases:
        return 0
    return (2 if spec.mlp.gated else 1) * width + spec.hidden_size


def attention_params(spec: ModelSpec, att: Attention | None = None, *, kv: bool = True) -> int:
    """One layer's attention projections; `att`: that layer's shape (default the spec's); `kv`
    False: a layer that builds no key/value projections and no k_norm (ModelSpec.projects_kv)."""
    h = spec.hidden_size
    att = spec.attention if att is None else att
    if isinstance(att, LatentAttention):
        q_dim = att.num_attention_heads * att.q_head_dim
        if att.q_lora_rank:
            # q_a_proj, q_a_layernorm, q_b_proj
            q = h * att.q_lora_rank + att.q_lora_rank + att.q_lora_rank * q_dim
        else:
            q = h * q_dim
        kv_a = h * (att.kv_lora_rank + att.qk_rope_head_dim)  # latent + shared RoPE key
        kv_norm = att.kv_lora_rank
        kv_b = att.kv_lora_rank * att.num_attention_heads * (att.qk_nope_head_dim + att.v_head_dim)
        o = att.num_attention_heads * att.v_head_dim * h
        return q + kv_a + kv_norm + kv_b + o
    assert isinstance(att, HeadAttention)  # DeepSeek-V4 (csa): `csa_params`, whole model
    q_out = att.num_attention_heads * att.head_dim
    k_out = att.num_key_value_heads * att.head_dim * kv
    v_out = att.num_key_value_heads * att.v_head_dim * kv
    n = h * (q_out + k_out + v_out) + att.num_attention_heads * att.v_head_dim * h
    n += (h * output_gate_rows(spec, att, att.num_attention_heads)
          + qk_norm_params(spec, att, q_out, k_out, kv=kv)
          + sink_params(spec, att.num_attention_heads))
    if att.attention_bias:
        n += q_out + k_out + v_out
    if att.o_proj_bias:
        n += h
    if spec.head_wise_attn_gate:
        n += h * att.num_attention_heads  # g_proj (Step-3.5): one gate logit per query head
    return n


def _ffn(spec: ModelSpec, width: int, *, bias: bool = False) -> int:
    h = spec.hidden_size
    if width == 0:
        return 0
    matrices = 3 if spec.mlp.gated else 2
    n = matrices * h * width
    if bias:
        n += (2 if spec.mlp.gated else 1) * width + h
    return n


# Mamba-1 families whose mixer normalises dt, B and C with weighted RMSNorms (Jamba; Falcon-Mamba's
# have no weight: models/mamba.py:72 rms_norm_has_weight=not is_falcon_mamba).
_MAMBA1_DT_BC_NORMS = frozenset({"jamba"})


def recurrent_params(spec: ModelSpec) -> int:
    """One recurrent mixer's weights (`RecurrentSpec.params`, kvplan.model.recurrent)."""
    rec = spec.recurrent
    if rec is None:
        return 0
    return rec.params(spec.hidden_size, dt_bc_norms=spec.model_type in _MAMBA1_DT_BC_NORMS)


def _csa(spec: ModelSpec) -> CompressedSparseAttention:
    att = spec.attention
    assert isinstance(att, CompressedSparseAttention)
    return att


def hyper_connection_params(spec: ModelSpec) -> int:
    """A DeepSeek-V4 decoder layer's hyper-connections (float32 in vLLM): hc_attn_fn and
    hc_ffn_fn of (mix, m x hidden), their bases (mix) and scales (3), mix = (2 + m) m, m =
    hc_mult (vLLM 0.32 models/deepseek_v4/nvidia/model.py:1097-1141)."""
    m = _csa(spec).hc_mult
    mix = (2 + m) * m
    return 2 * mix * m * spec.hidden_size + 2 * mix + 2 * 3


def head_hyper_connection_params(spec: ModelSpec) -> int:
    """hc_head_fn (m, m x hidden), hc_head_base (m) and hc_head_scale (1), float32, once
    (nvidia/model.py:1359-1378)."""
    m = _csa(spec).hc_mult
    return m * m * spec.hidden_size + m + 1


def csa_params(spec: ModelSpec) -> ParamCount:
    """DeepSeek-V4's parameters (elements, whole model): the tensors kvplan.weights.csa
    prices, each counted once; the token -> expert table and the float32 hyper-connections
    included (they are parameters in vLLM), the rotary tables not (buffers)."""
    att = _csa(spec)
    moe = spec.moe
    if moe is None:
        raise UnmodelledError(f"{spec.source}: DeepSeek-V4 without MoE layers is not modelled")
    # Imported here: only DeepSeek-V4 needs the quantization formats (estimate's start-up).
    from kvplan.weights.csa_format import csa_formats

    csa_formats(spec, 16)  # a checkpoint layout kvplan does not price is refused here
    h = spec.hidden_size
    expert = 3 * h * moe.moe_intermediate_size
    layers = []
    for i in range(spec.num_hidden_layers):
        ratio = att.compress_ratio(i)
        n = (att.num_attention_heads + h * (att.q_lora_rank + att.head_dim) + att.q_lora_rank
             + att.head_dim + att.q_lora_rank * att.num_attention_heads * att.head_dim
             + att.o_lora_rank * att.num_attention_heads * att.head_dim  # wo_a
             + att.o_groups * att.o_lora_rank * h)  # wo_b
        for head in ((att.head_dim,) if ratio > 1 else ()) + (
                (att.index_head_dim,) if ratio == 4 else ()):
            coff = 2 if ratio == 4 else 1
            n += ratio * coff * head + 2 * coff * head * h + head
        if ratio == 4:
            n += att.q_lora_rank * att.index_n_heads * att.index_head_dim + att.index_n_heads * h
        router = moe.n_routed_experts * h + (
            spec.vocab_size * moe.num_experts_per_tok if i < att.num_hash_layers
            else moe.n_routed_experts if moe.score_bias else 0)
        layers.append(LayerParams(
            attention=n, mlp=moe.n_shared_experts * expert,
            routed_experts=moe.n_routed_experts * expert,
            routed_active=moe.num_experts_per_tok * expert, router=router,
            norms=2 * h + hyper_connection_params(spec)))
    return ParamCount(embedding=spec.vocab_size * h, position_embedding=0,
                      lm_head=spec.vocab_size * h,
                      final_norm=h + head_hyper_connection_params(spec), layers=tuple(layers))


# Gated-DeltaNet families whose vLLM layer builds A_log in the model dtype (vLLM 0.32
# layers/mamba/gdn/olmo_gdn_linear_attn.py:139-143 `torch.empty(num_v_heads // tp)`); the
# others' is float32 (qwen_gdn_linear_attn.py:555-560, used by qwen3_next.py and qwen3_5.py).
_GDN_A_LOG_IN_MODEL_DTYPE = frozenset({"olmo_hybrid"})


def recurrent_float32_params(spec: ModelSpec) -> int:
    """Of one recurrent mixer's parameters (`recurrent_params`), those vLLM 0.32 holds in
    float32 whatever the model dtype, split over tensor-parallel ranks like the heads
    (`RecurrentSpec.float32_params`, kvplan.model.recurrent: Mamba2's and Mamba1's A, Gated
    DeltaNet's A_log except in `_GDN_A_LOG_IN_MODEL_DTYPE`, KDA's dt_bias, short convolutions
    and A_log)."""
    rec = spec.recurrent
    if rec is None:
        return 0
    return rec.float32_params(
        a_log_in_model_dtype=spec.model_type in _GDN_A_LOG_IN_MODEL_DTYPE)


# The cost model counts the same spec's parameters for every step it times (kvplan.perf): a
# pure function of the frozen, hashable spec (its `checkpoint`, outside its equality, is not
# read), so cached.
@pure_cache(maxsize=256)
def count_params(spec: ModelSpec) -> ParamCount:
    if isinstance(spec.attention, CompressedSparseAttention):
        return csa_params(spec)
    h = spec.hidden_size
    full_att = attention_params(spec)
    rec_params = recurrent_params(spec)
    layers = []
    for i in range(spec.num_hidden_layers):
        own_att = full_att if not spec.layer_attention and spec.projects_kv(i) else (
            attention_params(spec, spec.attention_at(i), kv=spec.projects_kv(i)))
        att = (own_att if spec.has_attention(i) else 0) + (
            rec_params if spec.has_recurrent(i) else 0)
        has_mixer = spec.mixer(i) != "mlp"
        has_mlp = spec.has_mlp(i)
        # One norm before each block the layer has (mixer, MLP), and one after each with
        # sandwich norms (models/afmoe.py:327-332: post_attention_layernorm, post_mlp_layernorm);
        # one for both blocks of a parallel block (ModelSpec.parallel_block_norm: gpt_j.py:167).
        blocks = 1 if spec.parallel_block_norm and has_mixer and has_mlp else (
            int(has_mixer) + int(has_mlp))
        norms = blocks * (2 if spec.sandwich_norms else 1) * _norm(spec, h)
        # Gemma-3n's AltUp and LAuReL, Gemma-3n's / Gemma-4's per-layer input gate, Gemma-4's
        # dense MLP beside the experts (kvplan.weights.gemma_blocks)
        extra = layer_tensors(spec, i)
        norms += elements(extra, "norms")
        moe = spec.moe
        if not has_mlp:
            layers.append(LayerParams(attention=att, mlp=0, routed_experts=0, routed_active=0,
                                      router=0, norms=norms))
        elif moe is not None and moe.is_moe_layer(i):
            expert = _ffn(spec, moe.moe_intermediate_size) + expert_bias_params(
                spec, moe.moe_intermediate_size)
            shared = moe.n_shared_experts * expert + _ffn(spec, moe.shared_expert_intermediate_size)
            # One router column per routed and per zero (identity) expert, and the shared
            # expert's gate where the family builds one (kvplan.weights.routers).
            router = router_params(spec)
            layers.append(LayerParams(
                attention=att, mlp=shared + elements(extra, "dense_mlp"),
                routed_experts=moe.n_routed_experts * expert,
                routed_active=moe.num_experts_per_tok * expert, router=router, norms=norms,
            ))
        else:
            layers.append(LayerParams(
                attention=att, mlp=_ffn(spec, spec.mlp_width(i), bias=spec.mlp.bias)
                + elements(extra, "dense_mlp"),
                routed_experts=0, routed_active=0, router=0, norms=norms,
            ))
    position = 0
    if spec.position_embedding == "learned" and spec.max_position_embeddings:
        # OPT's table: 2 rows more (ModelSpec.learned_position_offset, opt.py:60-66); its
        # max_position_embeddings stays the context limit.
        position = (spec.max_position_embeddings + 2 * spec.learned_position_offset) * h
    return ParamCount(
        embedding=spec.vocab_size * h + embedding_norm_params(spec),
        position_embedding=position,
        lm_head=0 if spec.tie_word_embeddings else (
            spec.vocab_size * h + lm_head_bias_rows(spec, spec.vocab_size)),
        final_norm=_norm(spec, h),
        layers=tuple(layers),
        per_layer_embedding=elements(outer_tensors(spec)),
    )
