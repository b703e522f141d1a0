"""What an architecture launches, counted from SGLang's model code: the small kernels of a
decode step besides the GEMMs and attention (`ATTN_KERNELS` ..., `topk_kernels`), the ops of an
eager prefill step (`eager_prefill_ops`), and each recurrent mixer's (`RecurrentMixerOps`).
kvplan.perf.roofline charges them at the kernel floor; an eager prefill also pays
`prefill_launch_s` per op (kvplan.perf.efficiency). Which architecture has which feature is a
ModelSpec field (kvplan.sources.features names the code behind each)."""

from __future__ import annotations

from kvplan._util.dtypes import GemmMath
from kvplan._util.memo import spec_cache
from kvplan.engines.prefill_graph import PrefillGraph
from kvplan.hardware.gpus import GPU
from kvplan.model.attention import LatentAttention
from kvplan.model.recurrent import RecurrentSpec
from kvplan.model.spec import ModelSpec
from kvplan.perf.layout import ONE_GPU, Layout, check_layout
from kvplan.perf.weight_bytes import bytes_per_param, gemm_math
from kvplan.weights.params import count_params

# Small kernels per layer besides the matmuls and attention (each costs the kernel floor):
# attention block: input norm, RoPE (+ q/k norm), KV-cache write, residual add;
# MLP: post-attention norm, activation; MoE: + permute, unpermute/reduce, and the router's
# top-k (`topk_kernels`); MLA: + q_a and kv_a norms; recurrent mixer (decode, CUDA graph): input
# norm, the split of the projections (Qwen3-Next's fused_qkvzba_split_reshape_cat), the
# conv-state update, the gated norm (Mamba2: the output copy instead of the split).
ATTN_KERNELS, MLA_EXTRA_KERNELS, MLP_KERNELS, MOE_EXTRA_KERNELS, RECURRENT_KERNELS = 4, 2, 2, 2, 4

# Kernels per decode step of the compiled biased grouped top-k of an architecture that SGLang
# serves with no fused kernel (ModelSpec.compiled_grouped_topk: GLM-4.5 / 4.6, GLM-4.5-Air;
# kvplan.sources.features names the code): the three torch.topk calls of biased_grouped_topk_impl
# (top-2 per group, top-k_group groups unsorted, the top-k experts, sorted when the shared expert
# is fused) are aten fallbacks; PyTorch's CUDA topk
# (aten/src/ATen/native/cuda/TensorTopK.cpp, index file id 6394919336) runs one gatherTopK
# kernel for slices this small (TensorTopK.cu should_use_multiblock: single-block below 5,000
# elements, index file id 1580386956) "if (sorted && values.numel() > 1)" a sortKeyValueInplace
# after it: 2 + 1 + 2 = 5. Inductor fuses the rest into 4 kernels (sigmoid + bias; the group
# sums; the mask scatter and masked_fill; gather, the shared-expert slot and renormalisation:
# counted in its generated code for the function, torch 2.13 with the CPU backend, as no GPU
# was at hand), and its RNG seeds for `torch.randint` (the fused shared expert's slot) are one
# more: 10. An estimate of the CUDA code, not a profile. A profile agrees: when SGLang replaced
# the same PyTorch path with moe_fused_gate for DeepSeek-V3 (H200, TP 8, bench_serving with
# --profile), "Only one kernel now. 36us->8us." (https://github.com/sgl-project/sglang/pull/5371):
# 36 us for the PyTorch top-k, against 10 x 4 us here. Not fitted to it.
_COMPILED_GROUPED_TOPK_KERNELS = 10


def topk_kernels(spec: ModelSpec, platform: str = "cuda") -> int:
    """Kernels the router's top-k launches in one decode step (CUDA graph) on `platform`.
    ROCm keeps one: its biased grouped top-k is aiter's kernel under SGLANG_USE_AITER, and no
    ROCm GLM row was read."""
    if platform == "cuda" and spec.compiled_grouped_topk:
        return _COMPILED_GROUPED_TOPK_KERNELS
    return 1


def fused_shared_expert(spec: ModelSpec, layout: Layout, platform: str = "cuda") -> bool:
    """Whether SGLang runs `spec`'s one shared expert inside fused_moe on `platform`
    (ModelSpec.shared_expert_in_fused_moe)."""
    return (platform == "cuda" and layout.ep == 1
            and spec.shared_expert_in_fused_moe
            and spec.moe is not None and spec.moe.n_shared_experts == 1)


# Kernels per layer of a q / k RMSNorm over all heads (ModelSpec.full_width_qk_norm: MiniMax-M2)
# under SGLang: the two copies, sum of squares, apply; the all-reduce of the sums comes on top.
FULL_WIDTH_QK_NORM_KERNELS = 4


def absorbed_norms(spec: ModelSpec, i: int, first: int) -> tuple[bool, bool]:
    """(input norm, post-attention norm) of layer `i` that a fused all-reduce absorbs, in a step
    whose first layer is `first`: the post-attention norm takes the attention's all-reduce; the
    input norm the previous layer's MLP all-reduce (none before the step's first layer)."""
    attn = spec.has_attention(i)
    return (attn and i != first and spec.has_mlp(i - 1), attn and spec.has_mlp(i))


# Ops SGLang launches per decoder layer in an eager prefill step (each costs
# `prefill_launch_s` of CPU), counted in its model code (CUDA, no DeepEP; the file named at
# each block), read at sgl-project/sglang 008af3a6 (models/qwen3_moe.py) and 00cc79fa
# (deepseek_common/attention_forward_methods/forward_mha.py). The bench's rows ran releases
# 0.4.x-0.5.7, not compared op by op; options that fuse ops (a fused q/k-norm + RoPE kernel,
# the KV write fused into RoPE, shared-expert fusion) are counted unfused. An "op" is a call
# that launches GPU work: a GEMM, a norm, a copy, a collective; a block-FP8 (w8a8) GEMM is two
# (per_token_group_quant_fp8, then the GEMM: layers/quantization/fp8_utils.py
# apply_w8a8_block_fp8_linear). Views and splits launch none.

def _gemm_ops(fp8: bool) -> int:
    return 2 if fp8 else 1


def _attention_block_ops(spec: ModelSpec, *, tp: int, fp8: bool) -> int:
    """Input norm to post-attention norm, one layer."""
    g = _gemm_ops(fp8)
    reduce = 1 if tp > 1 else 0  # communicator: tensor_model_parallel_all_reduce of o_proj
    att = spec.attention
    if isinstance(att, LatentAttention):
        # models/deepseek_v2.py + deepseek_common/attention_forward_methods/forward_mha.py
        # forward_normal_prepare (prefill without a prefix runs MHA): with q_lora,
        # fused_qkv_a_proj_with_mqa (g), q_a_layernorm (1), q_b_proj (g); without, q_proj and
        # kv_a_proj_with_mqa (2g); then kv_a_layernorm, rotary_emb, the q_pe copy into q,
        # _set_mla_kv_buffer, kv_b_proj (g), concat_mla_k, attn_mha, o_proj (g).
        q_side = 2 * g + 1 if att.q_lora_rank else 2 * g
        return 1 + q_side + 4 + g + 2 + g + reduce + 1
    # models/llama.py, qwen3.py, qwen3_moe.py: input_layernorm (fused add), qkv_proj,
    # [q_norm, k_norm: apply_qk_norm], rotary_emb, set_kv_buffer, attn, o_proj,
    # post_attention_layernorm.
    # models/qwen3_next.py Qwen3HybridAttentionDecoderLayer.self_attention: the same, plus
    # its output gate (`output_gate_ops`).
    qk_norm = _qk_norm_ops(spec)
    if spec.full_width_qk_norm:  # copies, sum of squares, (all-reduce,) apply
        qk_norm = FULL_WIDTH_QK_NORM_KERNELS + reduce
    return 1 + g + qk_norm + 3 + output_gate_ops(spec, tp) + g + reduce + 1


# A per-head RMSNorm of q and k (ModelSpec.per_head_qk_norm: Qwen3, Qwen3-MoE, Qwen3-Next; GLM-4.5
# / 4.6 by use_qk_norm) is two ops in an eager prefill (q_norm, k_norm); decode lumps it with
# RoPE (`ATTN_KERNELS`) for all. Not counted (here as for Qwen3): the copy
# `q.reshape(-1, head_dim)` makes of the strided q (and of k with more than one KV head per rank)
# before the norm.
#
# A per-head output gate (ModelSpec.attention_output_gate: Qwen3-Next's gated attention,
# models/qwen3_next.py) splits q from the gate with `torch.chunk(q_gate.view(T, heads, -1), 2,
# dim=-1)` and `reshape`s both back to (T, heads x head_dim) -- a copy each when a rank holds
# more than one head, as the halves are strided -- and after attention runs
# `gate = torch.sigmoid(gate)` and `attn_output = attn_output * gate` (two ops).


def _qk_norm_ops(spec: ModelSpec) -> int:
    return 2 if spec.per_head_qk_norm else 0


def output_gate_ops(spec: ModelSpec, tp: int) -> int:
    """Ops (and decode kernels) of the attention's output gate on a rank of `tp`."""
    if not spec.attention_output_gate:
        return 0
    heads = spec.attention.num_attention_heads // tp
    return (2 if heads > 1 else 0) + 2


def _dense_mlp_ops(*, tp: int, fp8: bool) -> int:
    """gate_up_proj, SiluAndMul, down_proj (+ the all-reduce): models/llama.py LlamaMLP."""
    return 2 * _gemm_ops(fp8) + 1 + (1 if tp > 1 else 0)


def _moe_block_ops(spec: ModelSpec, layout: Layout, *, fp8: bool, shared_fp8: bool,
                   platform: str = "cuda", shared_folded: bool = False) -> int:
    """Router GEMM, top-k, fused_moe, shared experts, the reduction over ranks.

    fused_moe_triton (layers/moe/fused_moe_triton/fused_moe.py fused_experts_impl):
    moe_align_block_size and the zeroing of its counts (2), the w13 grouped GEMM, silu_and_mul,
    the w2 grouped GEMM, moe_sum_reduce (4), with FP8 a quantization before each grouped GEMM
    (2). Top-k is one fused kernel (layers/moe/topk.py: topk_softmax with renormalize for
    Qwen3-MoE, moe_fused_gate for DeepSeek's biased grouped top-k; GLM-4.5's torch.compile'd
    biased_grouped_topk_impl, ModelSpec.compiled_grouped_topk, is one call from the model
    code too: its kernels are launched by Inductor's generated wrapper, not op by op through
    module calls, and are not charged apart). Shared experts
    (models/deepseek_v2.py DeepseekV2MoE.forward_normal; models/qwen2_moe.py
    Qwen2MoeSparseMoeBlock.forward for Qwen3-Next's one shared expert): an MLP plus the add to
    the routed output, and Qwen2-MoE's sigmoid gate on it (`_shared_expert_gate_ops`). Not
    modelled: later SGLang releases can fold DeepSeek's one shared expert into fused_moe
    (`num_fused_shared_experts`, off with --disable-shared-experts-fusion), which removes those
    ops (DeepSeek-V3 TP 8: 1,759 instead of 2,107); they are counted apart, as
    the early-2025 engines of three of the four fit rows ran them. GLM-4.5's is folded in
    (`fused_shared_expert`): no ops of its own; so is one the engine folds in (`shared_folded`:
    SGLang's DeepSeek-V3 on ROCm, kvplan.perf.shared_fusion)."""
    assert spec.moe is not None
    experts = 6 + (2 if fp8 else 0)
    shared = 0
    if shared_folded or fused_shared_expert(spec, layout, platform):
        shared = 0
    elif spec.moe.n_shared_experts or spec.moe.shared_expert_intermediate_size:
        shared = 2 * _gemm_ops(shared_fp8) + 1 + 1 + _shared_expert_gate_ops(spec)
    if layout.ep > 1 and layout.moe_tp == 1:
        reduce = 2  # dispatch and combine (MoE TP x EP: none, the TP all-reduce as below)
    elif layout.dp_attention and layout.tp > 1:
        reduce = 2  # gather every rank's tokens, reduce-scatter after
    else:
        reduce = 1 if layout.tp > 1 else 0
    return 1 + 1 + experts + shared + reduce


# A gated shared expert (ModelSpec.shared_expert_gate: models/qwen2_moe.py
# Qwen2MoeSparseMoeBlock._forward_shared_experts, which Qwen3-Next's MoE layers use):
# `F.sigmoid(self.shared_expert_gate(hidden_states)) * shared_output` -- a torch.nn.Linear of one
# output (unquantized), the sigmoid and the product: three ops beside the shared MLP and its add
# to the routed output.
def _shared_expert_gate_ops(spec: ModelSpec) -> int:
    return 3 if spec.shared_expert_gate else 0


class RecurrentMixerOps:
    """What one recurrent mixer kind launches, as SGLang runs it: ops of an eager prefill
    (extend) step from its in_proj to its out_proj (`extend_ops`), and the GEMM kernels of a
    decode step besides the state update and the small kernels (`decode_gemm_kernels`). The
    base class is a kind not counted from SGLang's code (Mamba1, KDA, short conv, lightning
    attention): its itemised kernels in_proj, conv, scan, gated norm, out_proj."""

    counted_from_code = False
    decode_gemm_kernels = 1

    def extend_ops(self, spec: ModelSpec, *, tp: int, fp8: bool) -> int:
        return 5

    def backend_ops(self) -> int | None:
        """Ops its attention backend's forward_extend launches (what a prefill CUDA graph leaves
        eager at the mixer's split op); None: not counted."""
        return None


class GatedDeltaNetOps(RecurrentMixerOps):
    """Qwen3-Next's Gated DeltaNet, read at SGLang 0.5.6 (the release of the bench's Qwen3-Next
    rows; pip wheel sglang==0.5.6): models/qwen3_next.py Qwen3GatedDeltaNet._forward and
    layers/attention/hybrid_linear_attn_backend.py GDNAttnBackend.forward_extend (CUDA,
    piecewise CUDA graphs off, the default)."""

    counted_from_code = True
    # Decode: in_proj_qkvz and out_proj; in_proj_ba runs beside in_proj_qkvz on the alt
    # stream while CUDA graphs capture (qwen3_next.py _forward_input_proj).
    decode_gemm_kernels = 2

    def extend_ops(self, spec: ModelSpec, *, tp: int, fp8: bool) -> int:
        rec = spec.recurrent
        assert rec is not None
        g = _gemm_ops(fp8)
        # _forward_input_proj: in_proj_qkvz (g) and in_proj_ba (built with quant_config=None:
        # one op); under 1,024 tokens the second runs on the alt stream, still one launch.
        proj = g + 1
        # fix_query_key_value_ordering (eager steps do not take the fused split kernel, which
        # runs only when forward_mode.is_cuda_graph()): q, k, v, z, b, a are torch.split
        # slices of the (T, key heads / tp, ...) view, and the reshapes that merge the key-head
        # dimension copy each of the six when a rank holds more than one key head (v, z, b, a
        # in fix_query_key_value_ordering, q and k in `x.reshape(x.shape[0], -1)`); then
        # torch.cat((q, k, v)).
        split = (6 if rec.num_key_heads // tp > 1 else 0) + 1
        # RMSNormGated (fla/layernorm_gated.py: one Triton kernel on contiguous inputs),
        # out_proj (g; reduce_results=False: the layer's communicator all-reduces).
        return proj + split + self.backend_ops() + 1 + g

    def backend_ops(self) -> int:
        """GDNAttnBackend.forward_extend: `extend_prefix_lens > 0` (1); causal_conv1d_fn
        (mamba/causal_conv1d.py: `x.contiguous()` of the transposed (dim, T) input, then
        sgl_kernel causal_conv1d_fwd: 2); fused_gdn_gating (fla/fused_gdn_gating.py, one
        Triton kernel); `ssm_states[cache_indices]` (a gather, 1); chunk_gated_delta_rule
        (`chunk_ops`); `ssm_states[cache_indices] = last_recurrent_state` (1). The `.to(ssm
        dtype, copy=False)` before it launches nothing at SGLang's default --mamba-ssm-dtype
        float32 (server_args.py), the dtype fla returns the final state in."""
        return 1 + 2 + 1 + 1 + self.chunk_ops() + 1

    @staticmethod
    def chunk_ops() -> int:
        """fla/chunk.py ChunkGatedDeltaRuleFunction.forward: @input_guard makes every tensor
        argument contiguous, which copies q, k and v (strided torch.split slices of the conv
        output: 3); l2norm_fwd of q and of k (2); chunk_gated_delta_rule_fwd: chunk_local_cumsum
        (1), chunk_scaled_dot_kkt_fwd (1), solve_tril (solve_tril_16x16_kernel and
        merge_16x16_to_64x64_inverse_kernel: 2), recompute_w_u_fwd (1),
        chunk_gated_delta_rule_fwd_h (1), chunk_fwd_o (`torch.zeros_like(v)` and its kernel:
        2). Not counted: prepare_chunk_indices / prepare_chunk_offsets, which @tensor_cache
        computes once per step for all layers."""
        return 3 + 2 + 1 + 1 + 2 + 1 + 1 + 2


class Mamba2Ops(RecurrentMixerOps):
    """Mamba2 (Nemotron-H, Falcon-H1, granite-4.0-h), read at SGLang 0.5.6:
    layers/attention/mamba/mamba.py MambaMixer2.forward on a prefill-only batch without a
    cached prefix (no initial states). Not counted: Falcon-H1's muP multipliers around the
    mixer (models/falcon_h1.py)."""

    counted_from_code = True
    decode_gemm_kernels = 2  # in_proj, out_proj

    def extend_ops(self, spec: ModelSpec, *, tp: int, fp8: bool) -> int:
        rec = spec.recurrent
        assert rec is not None
        g = _gemm_ops(fp8)
        # in_proj (g); the causal conv: mamba/causal_conv1d.py causal_conv1d_fn
        # (`x.contiguous()` of the transposed input + the kernel: 2), or with
        # use_triton_causal_conv (ModelSpec.triton_causal_conv) causal_conv1d_triton.py's,
        # which reads the strided input as it is (1); mamba_chunk_scan_combined (ops/ssd_combined.py
        # _mamba_chunk_scan_combined_fwd: B and C are strided slices of the transposed conv
        # output and are made contiguous (2); _chunk_cumsum_fwd, _chunk_state_fwd,
        # _state_passing_fwd, _bmm_chunk_fwd, _chunk_scan_fwd, chunk_state_varlen (6));
        # `ssm_state[state_indices_tensor_p] = varlen_state` (1).
        conv = 1 if spec.triton_causal_conv else 2
        mixer = g + conv + 2 + 6 + 1
        # mixer2_rms_norm_gated.py Mixer2RMSNormGated.forward_cuda: one fused kernel
        # (rms_norm_gated) only with one group on one GPU (it returns forward_native when
        # `n_groups % tp_size != 0 or n_groups != 1`). forward_native: gate.to(float32), silu,
        # x * silu (3); with several groups [an all-gather when they do not split over the
        # ranks], pow, mean, + eps, rsqrt, x * (5); with one group over TP ranks pow, sum, the
        # all-reduce of the sums, / count, + eps, rsqrt, x * (7); then .to(dtype), weight * x.
        if rec.n_groups == 1:
            norm = 1 if tp == 1 else 3 + 7 + 2
        else:
            norm = 3 + 5 + 2 + (1 if rec.n_groups % tp else 0)
        # out_proj (g) and `output[:num_actual_tokens], _ = self.out_proj(...)`, a copy (1).
        return mixer + norm + g + 1


# One entry per recurrent kind whose ops are counted from SGLang's code; other kinds
# (RECURRENT_KINDS in kvplan/model/recurrent.py) get the base class.
RECURRENT_MIXER_OPS: dict[str, RecurrentMixerOps] = {
    "gated_delta_net": GatedDeltaNetOps(),
    "mamba2": Mamba2Ops(),
}


def recurrent_mixer_ops(rec: RecurrentSpec) -> RecurrentMixerOps:
    return RECURRENT_MIXER_OPS.get(rec.kind, RecurrentMixerOps())


def _recurrent_layer_ops(spec: ModelSpec, index: int, *, tp: int, fp8: bool) -> int:
    """A recurrent layer's ops, input norm to post-mixer norm. A layer whose only mixer is the
    recurrent one (Qwen3-Next's linear_attention layers: Qwen3HybridLinearDecoderLayer with
    its LayerCommunicator, as the attention layers; Nemotron-H's Mamba layers) adds its input
    norm, the all-reduce of the mixer output under TP and, when an MLP follows in the same
    layer, the post-mixer norm. Falcon-H1's parallel hybrid (attention and Mamba2 side by side)
    shares the attention block's."""
    assert spec.recurrent is not None
    ops = recurrent_mixer_ops(spec.recurrent).extend_ops(spec, tp=tp, fp8=fp8)
    if spec.has_attention(index):
        return ops
    return 1 + ops + (1 if tp > 1 else 0) + (1 if spec.has_mlp(index) else 0)


@spec_cache(maxsize=1024)  # pure; asked for every simulated prefill step
def eager_prefill_ops(spec: ModelSpec, layout: Layout = ONE_GPU,
                      quantization: str | None = None, *, platform: str = "cuda",
                      fused_norms: bool = False, gpu: GPU | None = None,
                      shared_folded: bool = False) -> int:
    """Ops SGLang launches in one prefill step of `spec` on one rank of `layout` (on
    `platform`, GPU.platform: "cuda" or "rocm"): every decoder layer, plus embedding (+ its
    all-reduce under TP, layers/vocab_parallel_embedding.py),
    the final norm and the lm_head (+ its all-gather under TP, layers/logits_processor.py).
    `fused_norms`: the step runs the fused all-reduce + RMSNorm
    (kvplan.perf.engine_traits.fuses_allreduce_norm), one op (layernorm.py
    forward_with_allreduce_fusion) for each all-reduce and the norm after it. `shared_folded`:
    the engine runs the one shared expert inside its fused MoE (kvplan.perf.shared_fusion)."""
    check_layout(spec, layout)
    att_tp = layout.attention_tp
    expert_ranks = layout.expert_shards  # ep x moe_tp (kvplan.perf.layout.Layout)
    # A GEMM that quantizes its activations first (w8a8, w4a4 where the card runs it so:
    # `gpu`; without one, as its format asks) launches that op too.
    fp8, fp8_exp = ({g: m is not GemmMath.bf16 for g, m in (
        gemm_math(spec, tp, gpu, quantization) if gpu is not None
        else bytes_per_param(spec, tp, quantization)[1]).items()}
        for tp in (att_tp, expert_ranks))
    counts = count_params(spec)
    total = 0
    for i in range(spec.num_hidden_layers):
        if spec.has_attention(i):
            total += _attention_block_ops(spec, tp=att_tp, fp8=fp8["attention"])
        if spec.has_recurrent(i):
            total += _recurrent_layer_ops(spec, i, tp=att_tp, fp8=fp8["attention"])
        if not spec.has_mlp(i):
            continue
        lp = counts.layers[i]
        if lp.routed_experts and spec.moe is not None:
            total += _moe_block_ops(spec, layout, fp8=fp8_exp["experts"],
                                    shared_fp8=fp8["dense_mlp"], platform=platform,
                                    shared_folded=shared_folded)
        elif lp.mlp:
            total += _dense_mlp_ops(tp=att_tp, fp8=fp8["dense_mlp"])
        if fused_norms:
            total -= sum(absorbed_norms(spec, i, 0))
    head = 3 + (2 if att_tp > 1 else 0)
    return total + head


def graph_prefill_ops(spec: ModelSpec, layout: Layout, graph: PrefillGraph) -> int:
    """Ops a prefill step of `spec` launches from Python on one rank of `layout` when it
    replays `graph`'s piecewise CUDA graphs (kvplan.engines.sglang.prefill_graph reads them):
    the static buffers' copies (`prepare_ops`), per attention layer its eager split op
    (`attention_split_ops`: KV write, attention, the copy into the graph's buffer) and one graph
    launch, per recurrent layer (a validated architecture's: PrefillGraph.validated) its split
    op (the mixer's backend ops, RecurrentMixerOps.backend_ops, and
    `recurrent_split_copy_ops`) and one graph launch, one more graph launch for the last
    piece, then the lm_head (+ its all-gather under TP) outside the graph."""
    check_layout(spec, layout)
    attention = sum(map(spec.has_attention, range(spec.num_hidden_layers)))
    head = 1 + (1 if layout.attention_tp > 1 else 0)
    recurrent = 0
    if spec.recurrent is not None:
        backend = recurrent_mixer_ops(spec.recurrent).backend_ops()
        if backend is not None:
            layers = sum(map(spec.has_recurrent, range(spec.num_hidden_layers)))
            recurrent = layers * (backend + graph.recurrent_split_copy_ops + 1)
    return (graph.prepare_ops + attention * (graph.attention_split_ops + 1) + recurrent + 1
            + head)
