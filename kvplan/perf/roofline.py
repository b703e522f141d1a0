"""Predicted decode and prefill time: a roofline summed over the operations of a step.

Every operation of a step (per layer: the attention projections, the attention over the cache,
the MLP or the experts, the collectives; then the lm_head) costs

    max(FLOPs / (peak of its dtype x gemm or attention efficiency),
        bytes / (HBM bandwidth x hbm efficiency),
        kernel floor)

and the step is the sum, plus a floor for each small kernel (norms, RoPE, activation, top-k)
that moves too little to register. This is not the old one-max-per-step roofline: a step whose
attention is compute-bound and whose weights are memory-bound pays for both.

The efficiencies and the fitted constants, with their sources, are kvplan.perf.efficiency's
(`Efficiency`, `device_efficiency`); what each architecture launches, kvplan.perf.op_counts's.

Kernels:

- The kernel floor is per *kernel*: an operation that the engines run as k GEMM kernels costs at
  least k floors (with its bytes split evenly over them, exactly max(FLOPs / rate, bytes /
  bandwidth, k x floor)). Per layer: GQA/MHA projections are 2 kernels (the fused QKVParallelLinear
  and o_proj, vLLM model_executor/models/llama.py); MLA's are 3 (fused q_a + kv_a, q_b, o_proj:
  SGLang models/deepseek_v2.py `fused_qkv_a_proj_with_mqa`) plus the absorbed form's two batched
  matmuls (W_UK before attention, W_UV after) or the decompressed form's kv_b GEMM; a dense MLP and
  the routed experts are 2 each (merged gate_up, then down; fused_moe's w13 and w2). At decode
  sizes on TP 8 many of these GEMMs move less than a floor's worth of bytes (DeepSeek-V3's q_b_proj
  is 4.7 MB per rank, 1.4 us at 3.35 TB/s), so lumping them under one floor undercounts.
  The router's top-k is one kernel, except where SGLang has no fused kernel for the
  architecture's routing (GLM-4.5 / 4.6: a torch.compile'd biased grouped top-k of ~10 kernels,
  kvplan.perf.op_counts.topk_kernels); GLM-4.5's one shared expert runs inside fused_moe on
  CUDA (kvplan.perf.op_counts.fused_shared_expert), with no kernels or prefill ops of its own.
  Both read from SGLang 0.5.6's code (ModelSpec.compiled_grouped_topk and
  ModelSpec.shared_expert_in_fused_moe, set by kvplan.sources.features), not fitted.
- FP8 (w8a8) and FP4 (w4a4) GEMMs are two kernels each: the activations are quantized first (SGLang
  layers/quantization/fp8_utils.py `apply_w8a8_block_fp8_linear` runs `per_token_group_quant_fp8`
  before the block-FP8 GEMM; fused_moe quantizes before each of its two grouped GEMMs; vLLM's
  W8A8BlockFp8LinearOp likewise), so such an operation costs at least 2k floors.
- A collective is a kernel too: at least one floor.
- An engine that runs a MoE layer's shared experts on a second CUDA stream beside the router
  and routed experts in a decode step it replays from a graph (`captured`; SGLang's DeepSeek
  where its shared experts stay out of the fused MoE: kvplan.engines.sglang.shared_stream)
  pays the shared experts' op only where it outlasts the routed experts' op, and at least its
  weights' streaming time (the two streams share HBM).
- An engine's fused MoE (Efficiency.moe_kernel, kvplan.perf.moe_kernel; vLLM's Triton fused_moe
  where the release runs it for the experts' format and GPU, kvplan.engines.vllm.moe_kernel: 16-bit
  experts before 0.20 or below SM 9.0, block FP8 on Hopper without EP with its quantize kernels;
  under EP on TP ranks, zeros for the other ranks' pairs, kvplan.engines.vllm.moe_ep; FlashInfer's
  CUTLASS MoE where the release runs it, its own pairs permuted and finalized, cutlass_traffic): its
  GEMMs compute each expert's rows padded to its block (FLOPs times `padded_rows_factor`) and move
  the activations between its kernels besides the weights; the gated activation and the top-k sum
  are kernels of their bytes. Engines that declare none keep the weights and exact FLOPs.

DeepSeek's sparse attention (DSA; kvplan.perf.attention_cost, read in vLLM 0.13.0): each layer
with an indexer adds its replicated projections (`indexer_proj`, 3 GEMMs of the whole weights on
every rank), the FP8 logits of every token over every key it sees (`indexer`: the attention
fraction of the FP8 peak; the 132-B keys read and the fp32 logits written) and the top-k reading
the logits back (`indexer_topk`); the main attention computes over min(seen, index_topk) keys,
MLA absorbed in prefill too, its FLOPs times the engine's sparse-kernel head padding
(kvplan.perf.attention_kernel.sparse_head_factor), or index_topk keys' FLOPs a token where the
kernel computes every index slot (`sparse_slots`; the bytes stay the keys seen).

Recurrent layers (Gated DeltaNet, Mamba2 and the other kinds of
kvplan.model.recurrent.RECURRENT_KINDS): the mixer's projections are GEMMs over its weights
(kvplan.perf.op_counts.RecurrentMixerOps.decode_gemm_kernels kernels in a decode step), and its
state update reads and writes every request's conv and SSM state once per step
(kvplan.kv.cache.recurrent_state, in the dtypes the engine keeps: SGLang a float32 SSM state by
default, server_args.py --mamba-ssm-dtype; vLLM the model dtype unless the config fixes it), with
kvplan.perf.flops.recurrent_state_flops_per_token (Gated DeltaNet's prefill in its chunked form).
An eager SGLang prefill launches `RecurrentMixerOps.extend_ops` per mixer, counted from SGLang
0.5.6's code for Gated DeltaNet and Mamba2; the other kinds keep a five-op placeholder
(`counted_from_code` is False).

A GEMM runs at the peak of the type its format asks for where the card has those tensor cores
(kvplan.perf.weight_bytes.group_math, kvplan.hardware.gpus.GPU.runs / peak_flops): W8A8 FP8
weights at the FP8 peak (Hopper, Ada, Blackwell), W4A4 NVFP4 weights at the FP4 peak (Blackwell:
B200 9,000, GB200 10,000, B300 13,125, GB300 15,000 dense TFLOPS, gpus.json's sources),
weight-only formats (GPTQ / AWQ / Marlin int4, MXFP4 experts, NVFP4A16, and W4A4 NVFP4 on a card
without FP4 tensor cores, which the engines run with the FP4 Marlin kernel) at the bf16 peak.
W4A4 GEMMs are two kernels as w8a8 ones (the activations quantized first: scaled_fp4_quant) and
stream at `hbm` (NVFP4's block scales are native to Blackwell's tensor cores; `fp8_gemm_hbm` is
DeepGEMM's Hopper FP8 measurement). Attention runs in bf16 (DeepSeek runs MLA in bf16) unless
`fp8_attention` or the engine's kernel computes in the KV cache's dtype
(kvplan.perf.attention_kernel.attention_math: SGLang's trtllm_mla prefill with an fp8 cache on
SM 10.x, which first casts q, k and v, one small kernel each, launched eagerly too); FP8
attention runs at `Efficiency.fp8_attention` of the FP8 peak where the preset sets it.
A decode step of single-token queries whose varlen kernel takes a split-KV path at the
engine's release (kvplan.perf.split_decode: vLLM 0.11.0's Triton unified attention, gpt-oss on
SM 8.x / 12.x) adds its float32 partials to every attention layer's bytes and a reduce kernel
reading them back: `decode_partials`, the rule the simulator's steps (kvplan.perf.mixed_step)
charge, here over the batch unpadded.

Layouts (`tp`, `dp_attention`, `ep`, MoE TP x EP), their collectives and the engines' fused
all-reduce + RMSNorm: kvplan.perf.step_comm's docstring. Each operation's charge: kvplan.perf.
step_ops (`_Step`), whose names, with kvplan.perf.step_comm's, this module re-exports.
"""

from __future__ import annotations

import itertools

from kvplan._util.dtypes import GemmMath
from kvplan.engines.cost_traits import PrefillOpCount
from kvplan.engines.moe_kernel import MXFP4_EXPERTS
from kvplan.hardware.gpus import GPU
from kvplan.hardware.interconnect import Interconnect
from kvplan.kv.cache import activation_dtype, attention_token_bytes, recurrent_state
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.attention_cost import attention_cost
from kvplan.perf.attention_kernel import (
    attention_math,
    decode_flop_factor,
    kv_dtype_kernel,
    mla_decode_extra_kernels,
    sparse_head_factor,
    sparse_slots,
    varlen_kernel,
)
from kvplan.perf.efficiency import Efficiency, device_efficiency
from kvplan.perf.engine_traits import (
    fuses_allreduce_norm,
    prefill_launch_ops,
    shared_expert_overlap,
)
from kvplan.perf.flops import (
    AttentionFlops,
    MLAForm,
    attended_tokens,
    attention_flops,
    prefill_form,
    recurrent_state_flops_per_token,
)
from kvplan.perf.launch_model import launch_spill_s
from kvplan.perf.layout import ONE_GPU, Layout, check_layout, link
from kvplan.perf.moe_kernel import (
    fused_moe_traffic,
    kernel_shape,
    layer_kernel,
    routed_expert_formats,
)
from kvplan.perf.norm_traffic import fp32_copy_bytes, quant_input_bytes, rms_norm_bytes
from kvplan.perf.op_counts import (
    ATTN_KERNELS,
    FULL_WIDTH_QK_NORM_KERNELS,
    MLA_EXTRA_KERNELS,
    MLP_KERNELS,
    MOE_EXTRA_KERNELS,
    RECURRENT_KERNELS,
    absorbed_norms,
    fused_shared_expert,
    output_gate_ops,
    recurrent_mixer_ops,
    topk_kernels,
)
from kvplan.perf.router_cost import fp32_router, fp32_router_runs
from kvplan.perf.shared_fusion import engine_folds_shared_expert
from kvplan.perf.split_decode import SplitDecodeCost, decode_partials
from kvplan.perf.step_comm import _logits_gather, _vocab_gather
from kvplan.perf.step_ops import OpTime, StepTime, _indexer_ops, _projection_kernels, _Step
from kvplan.perf.trtllm_bytes import (
    attention_layer_kernels,
    context_moe_kernel,
    mlp_kernel_bytes,
    moe_output_bytes,
    norm_bytes,
    separate_norm,
)
from kvplan.perf.weight_bytes import bytes_per_param
from kvplan.weights.params import count_params, recurrent_params

__all__ = ["OpTime", "StepTime", "_Step", "_indexer_ops", "_logits_gather", "_projection_kernels",
           "step_time"]


def step_time(spec: ModelSpec, gpu: GPU, *, tokens: int, context: int, requests: int,
              phase: str = "decode", kv_dtype: str = "bf16", mla_form: MLAForm = MLAForm.absorbed,
              layout: Layout = ONE_GPU, eff: Efficiency | None = None, gathered: int | None = None,
              fp8_attention: bool = False, quantization: str | None = None,
              layers: range | None = None, logits: int | None = None,
              conv_dtype: str | None = None, ssm_dtype: str = "auto",
              sum_len: bool | None = None, gathered_logits: int | None = None,
              captured: bool = False, context_tokens: int | None = None) -> StepTime:
    """One forward step on one GPU (rank) of `layout`.

    decode: `requests` requests per rank, `tokens` = requests x (1 + draft tokens) query tokens,
    each attending `context` cached tokens; prefill: one prompt of `tokens` = `context` tokens
    (causal). `layers`: only these decoder layers (the MTP draft module); `logits`: rows through
    the lm_head (default: one per request). `conv_dtype` / `ssm_dtype`: the recurrent state's
    dtypes as the engine keeps them (EngineRules.state_dtypes; None / "auto": vLLM's rule,
    kvplan.kv.cache.recurrent_state; SGLang keeps the SSM state in float32 by default). `eff`
    None: the device's (`device_efficiency`). `gathered`: the tokens entering a MoE layer over
    the DP ranks (None: as many as this rank's on each, `moe_tokens` below). `sum_len`: the DP
    gather's mode under DP attention (kvplan.perf.step_comm: True the ranks' tokens summed and
    all-reduced, SUM_LEN; False padded, all-gathered and reduce-scattered, MAX_LEN; None: by
    the phase, SUM_LEN in prefill). `gathered_logits`: the logit rows a split lm_head runs on
    over the DP ranks (None: `logits` x the ranks, as many as this rank's on each).
    `captured`: a decode step the engine replays from a CUDA graph (the shared experts' second
    stream, engine_traits.shared_expert_overlap, is taken only then).
    `context_tokens`: of the `tokens`, those of context requests (None: all in prefill, none in
    decode); a step holding any runs TensorRT-LLM's context-step kernels
    (kvplan.perf.trtllm_bytes: MLA's context path over these tokens alone, the rest over all;
    kvplan.perf.mixed_step prices a mixed step's prefill tokens so)."""
    check_layout(spec, layout)
    if eff is None:
        eff = device_efficiency(gpu)
    s = _Step(gpu, eff, eff.kernel_floor_s)
    h = spec.hidden_size
    att_tp = layout.attention_tp
    counts = count_params(spec)
    bpp_attn, math = bytes_per_param(spec, att_tp, quantization)
    # The ranks the routed experts spread over (Layout.expert_shards: ep x moe_tp; the TP group
    # without EP, the EP ranks with whole experts, both under MoE TP x EP).
    expert_ranks = layout.expert_shards
    bpp_exp, math_exp = bytes_per_param(spec, expert_ranks, quantization)
    att = spec.attention
    latent = isinstance(att, LatentAttention)
    form = mla_form if phase == "decode" else prefill_form(spec, mla_form)
    # The attention kind's keys and indexer (kvplan.perf.attention_cost), and the heads its
    # sparse kernel computes per rank (kvplan.perf.attention_kernel.sparse_head_factor).
    cost = attention_cost(spec)
    heads_factor = sparse_head_factor(eff, spec, gpu, kv_dtype, att_tp)
    # A sparse kernel computing every index slot: index_topk keys' FLOPs a token, any context.
    slots = sparse_slots(eff, spec, gpu, kv_dtype, att_tp)
    # Replicated projections (the indexer's) stream the whole model's bytes per parameter.
    bpp_whole = bytes_per_param(spec, 1, quantization)[0] if cost.indexer is not None else bpp_attn
    # KV bytes one request reads per attended token per layer, on this rank.
    kv_layer = attention_token_bytes(spec, kv_dtype, att_tp)
    if latent and form is MLAForm.decompressed and not att.decompressed_cache:
        # (An engine that caches the model decompressed already says how: attention_token_bytes.)
        heads = att.num_attention_heads // att_tp
        kv_layer = heads * (att.qk_nope_head_dim + att.qk_rope_head_dim + att.v_head_dim) * (
            2 if kv_dtype in ("bf16", "fp16") else 1 if kv_dtype in ("fp8", "int8") else 4)
    attn_link = link(layout, gpu, att_tp)  # the attention-TP group (the TP group without DP)
    links = {att_tp: attn_link}  # a group's link, found once a step (simspeed67: pure)

    def link_of(ranks: int) -> Interconnect:
        got = links.get(ranks)
        if got is None:
            got = links[ranks] = link(layout, gpu, ranks)
        return got

    # Opt-in B200 kernel-table rates (kvplan.perf.sm100_tables): the TP all-reduce of an eager
    # step, a GQA prefill's attention floor (bf16 cache).
    tables = eff.sm100_tables
    tp_ar = tables.all_reduce_s(att_tp, tokens * spec.hidden_size * 2, tokens) if (
        tables is not None) else None
    ctx_floor = tables.context_floor_s(tokens) if (
        tables is not None and phase == "prefill" and kv_dtype == "bf16"
        and not isinstance(spec.attention, LatentAttention)) else None
    # Tokens entering a MoE layer across the ranks that share its experts: every
    # data-parallel rank's (`Layout.dp_ranks`: the DP-attention ranks, or the TP groups an EP
    # wider than TP spans, vLLM's EP = TP x DP), as many as this rank's (balanced or padded).
    moe_tokens = tokens * layout.dp_ranks if gathered is None else gathered
    # Under DP attention the engine keeps the dense MLPs (with the shared experts) and the
    # lm_head whole on every rank or split over the TP group (`Efficiency.dp_attention_weights`,
    # the engine's EngineRules.dp_attention_weights; kvplan.perf.step_comm): split, a rank streams
    # its 1 / tp of their weights and runs them on every DP rank's gathered tokens / rows.
    mlp_tp, mlp_tokens, head_tp, head_gather = att_tp, tokens, att_tp, 1
    split = eff.dp_attention_weights if layout.dp_attention else None
    bpp_mlp = bpp_head = bpp_attn
    if split is not None and (split.mlp_split or split.lm_head_split):
        bpp_tp = bpp_exp if expert_ranks == layout.tp else bytes_per_param(
            spec, layout.tp, quantization)[0]
        if split.mlp_split:
            mlp_tp, mlp_tokens, bpp_mlp = layout.tp, moe_tokens, bpp_tp
        if split.lm_head_split:
            head_tp, head_gather, bpp_head = layout.tp, layout.dp_ranks, bpp_tp
    act_bytes = 2  # bf16 activations
    # The TP all-reduce of a layer's output, the same in every layer (found once: simspeed67).
    tp_ar_s = tp_ar if tp_ar is not None else attn_link.all_reduce_s(att_tp,
                                                                     tokens * h * act_bytes)
    chosen = layers if layers is not None else range(spec.num_hidden_layers)
    # The engine's fused all-reduce + residual + RMSNorm (engine_traits.AllReduceNormFusion): the
    # norm after each fused all-reduce costs no kernel of its own.
    fused = fuses_allreduce_norm(spec, gpu, layout, tokens, eff)
    # The engine's shared experts on a second stream beside the routed ones in a captured
    # decode step (engine_traits.shared_expert_overlap): the routed path hides their time,
    # all but their weights' streaming (the two streams share HBM).
    two_streams = captured and phase == "decode" and shared_expert_overlap(spec, gpu, layout,
                                                                           eff)
    # The engine's varlen attention kernel (kvplan.perf.attention_kernel): a decode step's
    # queries are `tokens / requests` tokens per request (1: single-token calls).
    kernel = varlen_kernel(eff, spec, gpu, kv_dtype) if phase == "decode" else None
    # Its split-KV path in a decode step of single-token queries (kvplan.perf.split_decode: vLLM
    # 0.11.0's Triton unified attention): the partial bytes a layer, by the rule the simulator
    # charges (decode_partials; the batch unpadded, as step_time pads nothing).
    split_kv = SplitDecodeCost.of(kernel, spec, att_tp, eff.engine_version) if (
        tokens == requests) else None
    partials = decode_partials(split_kv, requests, itertools.repeat(context, requests))
    # The math attention runs in, and the engine's kernel that computes in the KV cache's
    # dtype, with the casts of q, k and v it launches before it (kvplan.perf.attention_kernel).
    att_math = attention_math(eff, spec, gpu, kv_dtype, phase, fp8_attention=fp8_attention)
    in_kv = kv_dtype_kernel(eff, spec, gpu, kv_dtype, phase)
    extra_mla = mla_decode_extra_kernels(eff, spec, gpu, att_tp, phase)  # the engine's, a layer
    # A step whose MLP layers gather every DP rank's tokens, no all-to-all (kvplan.perf.step_comm).
    gather = layout.world > 1 and (eff.prefill_mlp_all_reduce if phase == "prefill"
                                   else eff.decode_mlp_gather)
    a2a = eff.moe_a2a if layout.ep > 1 and layout.moe_tp == 1 else None
    dense_split = split is None or split.mlp_split  # an engine that gathers: unless said whole
    query_len = max(1, tokens // max(1, requests))
    sum_len = phase == "prefill" if sum_len is None else sum_len
    state = None
    rec_weights = rec_proj_flops = rec_state_flops = 0
    if spec.recurrent is not None:
        # One request's recurrent state on this rank (kvplan.kv.cache.recurrent_state: vLLM's
        # shapes; SGLang's are the same, configs/mamba_utils.py).
        state = recurrent_state(spec.recurrent, tp=att_tp,
                                conv_dtype=conv_dtype or activation_dtype(spec),
                                ssm_dtype=ssm_dtype)
        rec_weights = recurrent_params(spec)
        rec_proj_flops = 2 * rec_weights
        rec_state_flops = recurrent_state_flops_per_token(spec, phase)
    # The routed experts' format per layer, where the fused MoE kernel may run (below).
    expert_fmt = routed_expert_formats(spec, chosen, quantization) if (
        spec.moe is not None and eff.moe_kernel is not None) else {}
    # TensorRT-LLM's context step: its small kernels move their bytes (kvplan.perf.trtllm_bytes;
    # each charged beyond the floor it already costs below).
    ctx_tokens = (tokens if phase == "prefill" else 0) if context_tokens is None else (
        context_tokens)
    ctx_bytes = ctx_tokens > 0 and eff.prefill_op_count is PrefillOpCount.trtllm
    own_norm = ctx_bytes and separate_norm(h, tokens, att_tp)
    # Elsewhere the norms and the qkv input's FP8 quantization, whole rows on every rank
    # (kvplan.perf.norm_traffic); TensorRT-LLM's context step counts its own (trtllm_bytes).
    row_kernels = not ctx_bytes
    flops_at: dict[int, AttentionFlops] = {}
    for i in chosen:
        lp = counts.layers[i]
        s.fixed("layer_overhead", eff.layer_overhead_s)
        # This layer's MLP gathers every DP rank's tokens (kvplan.perf.step_comm); with an
        # attention-TP group (SGLang --tp T --dp-size D < T) its attention output stays partial
        # and the gather sums it (communicator.py `_gather_hidden_states_and_residual` ->
        # dp_gather_partial; 0.5.6 :734-761), the output coming back by dp_scatter: the group's
        # two all-reduces a layer are the gather's.
        gathers = spec.has_mlp(i) and (a2a is None if lp.routed_experts
                                       else dense_split and bool(lp.mlp))
        in_gather = gather and layout.dp_attention and att_tp > 1 and gathers
        fused_input, fused_post = absorbed_norms(spec, i, chosen.start) if fused else (False, False)
        if spec.has_attention(i):
            span = attended_tokens(spec, i, context)
            f = flops_at.get(span)  # the same for every layer of a span (simspeed67: pure)
            if f is None:
                f = flops_at[span] = attention_flops(spec, context=span, phase=phase,
                                                     mla_form=form)
            # MLA's q_a / kv_a run whole on every attention-TP rank, the rest split
            # (AttentionFlops.projections_on_rank, read in each engine's MLA module).
            # The input norm and the qkv input's FP8 quantization, whole rows on every rank
            # (kvplan.perf.norm_traffic), beyond the floors counted below and in the GEMM's.
            if row_kernels and not fused_input:
                s.over_floor("small_kernels", rms_norm_bytes(tokens, h, act_bytes, residual=i > 0))
            if row_kernels and gpu.runs(math["attention"]) is GemmMath.fp8:
                s.over_floor("small_kernels", quant_input_bytes(tokens, h, act_bytes))
            s.op("attention_proj", flops=tokens * f.projections_on_rank(att_tp),
                 nbytes=(lp.attention - (rec_weights if spec.has_recurrent(i) else 0))
                 * bpp_attn["attention"], math=math["attention"],
                 kernels=_projection_kernels(latent, form, f.absorb), rows=tokens)
            if slots is not None:
                f_slots = attention_flops(spec, context=slots, mla_form=form)
                core = (f_slots.scores + f_slots.values) / att_tp * heads_factor
            else:
                core = (f.scores + f.values) / att_tp * heads_factor
            if kernel is not None:
                core *= decode_flop_factor(
                    kernel, spec, att_tp, query_len=query_len, single_token_call=query_len == 1,
                    windowed=bool(spec.layer_windows) and spec.layer_windows[i] is not None)
            if phase == "decode":
                kv_read = requests * cost.main_keys(span) * kv_layer
            else:
                kv_read = tokens * kv_layer  # prefill writes the cache once
            if f.kv_up_proj:
                # Naive MLA: up-project every cached latent (a GEMM growing with the context),
                # write the per-head K/V and read them back in attention (bf16).
                up_tokens = requests * span if phase == "decode" else tokens
                up_bytes = up_tokens * att.num_attention_heads // att_tp * (
                    att.qk_nope_head_dim + att.v_head_dim) * act_bytes
                # Decode: once per request over its `span` latents (f.kv_up_proj already counts
                # them); prefill: once per prompt token.
                up_flops = (requests if phase == "decode" else tokens) * f.kv_up_proj / att_tp
                s.op("mla_up_proj", flops=up_flops, nbytes=up_bytes)
                kv_read += up_bytes
            s.op("attention", flops=tokens * core, nbytes=kv_read + partials, attention=True,
                 math=att_math, least_s=None if ctx_floor is None else max(
                     ctx_floor, eff.kernel_floor_s))
            if partials:
                # The split path's reduce kernel reads the partials back (split_decode).
                s.op("attention", flops=0.0, nbytes=partials, attention=True, math=att_math)
            ind = cost.layer_indexer(i)
            if ind is not None:
                _indexer_ops(s, ind, span=span, tokens=tokens, requests=requests, phase=phase,
                             bpp=bpp_whole["attention"], math=math["attention"])
            for cast in in_kv.casts if in_kv is not None else ():
                # A kernel each, reading its bf16 tensor and writing it in the KV dtype (1 byte):
                # q and k of qk_nope + qk_rope values per head per token, v of v_head_dim.
                width = att.v_head_dim if cast == "v" else (
                    att.qk_nope_head_dim + att.qk_rope_head_dim)
                s.kernels("small_kernels", 1)
                s.over_floor("small_kernels", tokens * att.num_attention_heads // att_tp * width
                             * (act_bytes + 1))
            s.kernels("small_kernels", ATTN_KERNELS + (MLA_EXTRA_KERNELS if latent else 0)
                      + extra_mla + output_gate_ops(spec, att_tp) - (1 if fused_input else 0))
            if spec.full_width_qk_norm:
                s.kernels("small_kernels", FULL_WIDTH_QK_NORM_KERNELS)
                # fp32 sums of squares of q and k, one each per token
                s.collective("qk_norm_all_reduce", attn_link.all_reduce_s(att_tp, tokens * 2 * 4))
            if not in_gather:
                s.collective("tp_all_reduce", tp_ar_s)
            for b, ctx_only in attention_layer_kernels(
                    spec, gpu, att_tp=att_tp, math=gpu.runs(math["attention"]), norm=own_norm,
                    kv_dtype=kv_dtype, version=eff.engine_version) if ctx_bytes else ():
                s.over_floor("small_kernels", (ctx_tokens if ctx_only else tokens) * b)
        if spec.has_recurrent(i):
            assert spec.recurrent is not None and state is not None
            # The projections (in_proj .. out_proj: GEMMs over the mixer's weights), then the
            # state update: the conv state and the SSM / delta-rule state of every request are
            # read and written back once per step (decode: causal_conv1d_update and
            # fused_sigmoid_gating_delta_rule_update / selective_state_update update them in
            # place; prefill: the initial state gathered, the final one scattered back), in the
            # state dtypes the engine keeps (`conv_dtype`, `ssm_dtype`).
            s.op("recurrent", flops=tokens * rec_proj_flops / att_tp,
                 nbytes=rec_weights * bpp_attn["attention"],
                 kernels=recurrent_mixer_ops(spec.recurrent).decode_gemm_kernels, rows=tokens)
            s.op("recurrent_state", flops=tokens * rec_state_flops / att_tp,
                 nbytes=requests * 2 * state.state_bytes, attention=True)
            s.kernels("small_kernels", RECURRENT_KERNELS)
        if not spec.has_mlp(i):
            continue
        s.kernels("small_kernels", MLP_KERNELS - (1 if fused_post else 0))
        # The post-attention norm's bytes, with the float32 copy of a float32 router's input its
        # output feeds (kvplan.perf.norm_traffic), beyond the norm's floor.
        post = 0.0 if fused_post or not row_kernels else rms_norm_bytes(tokens, h, act_bytes,
                                                                       residual=True)
        if lp.routed_experts and lp.router and fp32_router_runs(spec, gpu, eff):
            post += fp32_copy_bytes(moe_tokens, h)
        s.over_floor("small_kernels", post)
        # A shared expert folded into fused_moe (`fused_shared_expert`) is read by the routed
        # experts' two grouped GEMMs: its bytes and FLOPs join them, with no kernels of its own.
        # So is one the engine folds in (kvplan.perf.shared_fusion: SGLang's DeepSeek-V3 on ROCm).
        folded = bool(lp.routed_experts) and (
            fused_shared_expert(spec, layout, gpu.platform)
            or engine_folds_shared_expert(eff, spec, gpu, layout, quantization))
        shared_s = s.by_op.get("mlp", 0.0)
        if lp.mlp and not folded:
            s.op("mlp", flops=mlp_tokens * 2 * lp.mlp / mlp_tp,
                 nbytes=lp.mlp * bpp_mlp["dense_mlp"], math=math["dense_mlp"], kernels=2,
                 rows=mlp_tokens)
        shared_s = s.by_op.get("mlp", 0.0) - shared_s
        if ctx_bytes:
            for b in mlp_kernel_bytes(spec, mlp_params=0 if folded else lp.mlp, mlp_tp=mlp_tp,
                                      math=gpu.runs(math["dense_mlp"])):
                s.over_floor("small_kernels", mlp_tokens * b)
            if own_norm:
                s.over_floor("small_kernels", tokens * norm_bytes(spec))
        if lp.routed_experts and spec.moe is not None:
            moe = spec.moe
            n, k = moe.n_routed_experts, moe.num_experts_per_tok
            touched = 1 - (1 - k / n) ** moe_tokens
            shared_flops = moe_tokens * 2 * lp.mlp / expert_ranks if folded else 0.0
            shared_bytes = lp.mlp * bpp_mlp["dense_mlp"] if folded else 0.0
            # The engine's fused MoE, as its release runs it for the experts' format on this GPU
            # (kvplan.perf.moe_kernel.layer_kernel), on TP ranks or TP-attention EP: its GEMMs
            # compute padded rows (Marlin's at the mma.sync rate; fitted_fp8_experts: the FP8
            # fraction) and move the activations; its gated activation and top-k sum, at a floor
            # each (MLP_KERNELS, MOE_EXTRA_KERNELS), take their bytes' time where it is longer.
            moe_kernel, fp8_fit = layer_kernel(eff.moe_kernel, fmt=expert_fmt.get(i), gpu=gpu,
                                               version=eff.engine_version, layout=layout)
            if moe_kernel is None and ctx_bytes:  # TensorRT-LLM's CUTLASS MoE (trtllm_bytes)
                moe_kernel = context_moe_kernel(expert_fmt.get(i), gpu, layout)
            pad, extra = 1.0, 0.0
            # A kernel with zero-padded weights (Marlin's MXFP4) at its padded shapes: FLOPs,
            # weights and activations grow by `grown` (moe_kernel.kernel_shape).
            width_k, h_k, grown = kernel_shape(moe_kernel, moe.moe_intermediate_size
                                               // layout.moe_tp, h)
            if moe_kernel is not None:
                pad, extra = fused_moe_traffic(
                    s, moe_kernel, tokens=moe_tokens, experts=n, top_k=k, hidden=h_k,
                    width=width_k, act_bytes=act_bytes, ep=layout.ep)
            s.op("experts",
                 flops=moe_tokens * 2 * lp.routed_active / expert_ranks * pad * grown
                 + shared_flops,
                 nbytes=(lp.routed_experts * grown + lp.router) * bpp_exp["experts"] * touched
                 + shared_bytes + extra, math=math_exp["experts"], kernels=2,
                 least_s=eff.moe_floor_s, expert_rows=moe_tokens * k / n,
                 mma_sync=moe_kernel is not None and moe_kernel.mma_sync, fp8_fit=fp8_fit,
                 mxfp4_width=moe.moe_intermediate_size // layout.moe_tp
                 if expert_fmt.get(i) == MXFP4_EXPERTS else 0)
            if two_streams and shared_s > 0:
                routed_s = s.events[-1][0]  # the experts' op just charged
                stream_s = s.stream_seconds(lp.mlp * bpp_mlp["dense_mlp"], math["dense_mlp"])
                s.overlap("mlp", shared_s - max(shared_s - routed_s, stream_s))
            fp32_router(s, spec, gpu, eff, router_params=lp.router, tokens=moe_tokens)
            for b in moe_output_bytes(spec, shared=bool(lp.mlp) and not folded,
                                      math=gpu.runs(math_exp["experts"])) if ctx_bytes else ():
                s.over_floor("small_kernels", tokens * b)
            # Not Qwen2-MoE's shared-expert gate (ModelSpec.shared_expert_gate): a decode step
            # (CUDA-graph capture, <= 1,024 tokens) runs the shared expert and its gate on the
            # current stream while the router and the routed experts run on alt_stream
            # (models/qwen2_moe.py forward_normal_dual_stream), so its kernels overlap them.
            s.kernels("small_kernels", MOE_EXTRA_KERNELS + topk_kernels(spec, gpu.platform))
            if a2a is not None or (not gather and layout.ep > 1 and layout.moe_tp == 1 and (
                    layout.dp_ranks > 1 or not eff.ep_all_to_all_needs_dp)):
                # The launch's own all-to-all (`a2a`, own time; no gather: step_comm), else FP8
                # dispatch and bf16 combine. An engine that runs it only with DP ranks (vLLM 0.19.0
                # fused_moe/config.py:945-946 `use_all2all_kernels = dp_size > 1 and use_ep`;
                # TensorRT-LLM) reduces TP-attention EP's outputs in the TP all-reduce below.
                ep_link = link_of(layout.ep)
                sent = tokens * (k * h * (1 + act_bytes) * (layout.ep - 1) / layout.ep)
                s.collective("ep_all_to_all", 2 * ep_link.latency_s + sent / ep_link.bytes_per_s
                             if a2a is None else a2a.seconds(tokens, moe, h, layout.ep, phase,
                                                             gpu.name, ep_link))
            elif gather:
                pass  # the gather's all-reduces below; TP attention: the TP all-reduce
            # MoE TP x EP (moe_tp > 1) runs no all-to-all in any engine: SGLang's all-to-all
            # backends set ep_size = tp_size (server_args.py `_handle_a2a_moe`, 0.5.9), so with
            # EP below the TP group FusedMoE all-reduces its output over the TP group
            # (fused_moe_triton/layer.py 0.5.9 lines 1010-1011), the TP all-reduce below;
            # TensorRT-LLM's CutlassFusedMoE selects NotEnabled where moe_tp_size != 1
            # (kvplan.engines.trtllm.moe_alltoall).
            elif layout.dp_attention and layout.tp > 1:
                # TP-MoE under DP attention: gather every rank's tokens, reduce-scatter after.
                s.collective("dp_gather_scatter", link_of(layout.tp).all_reduce_s(
                    layout.tp, moe_tokens * h * act_bytes))
        if gather and layout.dp_attention and gathers:
            gather_link = link_of(layout.world)
            if sum_len:
                # SUM_LEN gather of every rank's tokens, then the output's all-reduce (step_comm).
                ar = gather_link.all_reduce_s(layout.world, moe_tokens * h * act_bytes)
                s.collective("dp_gather_all_reduce", ar)
                s.collective("dp_gather_all_reduce", ar)
            else:
                # MAX_LEN: all-gather in, reduce-scatter out, each half a ring (step_comm).
                half = gather_link.latency_s + (layout.world - 1) / layout.world * (
                    moe_tokens * h * act_bytes) / gather_link.bytes_per_s
                s.collective("dp_gather_all_gather", half)
                s.collective("dp_gather_reduce_scatter", half)
                if att_tp > 1:
                    # The attention-TP group's share (layers/dp_attention.py 0.5.6: in,
                    # `_dp_gather_via_all_gather` :478-495 reduce-scatters the rank's partial
                    # tokens over the group before the TP all-gather; out,
                    # `dp_reduce_scatter_tensor` :552-560 all-gathers them back): a ring half
                    # each of this rank's tokens.
                    part = attn_link.latency_s + (att_tp - 1) / att_tp * (
                        tokens * h * act_bytes) / attn_link.bytes_per_s
                    s.collective("dp_gather_all_gather", part)
                    s.collective("dp_gather_reduce_scatter", part)
        if (lp.mlp or lp.routed_experts) and not spec.has_attention(i):
            s.collective("tp_all_reduce", tp_ar_s)
        if spec.has_attention(i) and not in_gather:
            s.collective("tp_all_reduce", tp_ar_s)
    rows = requests if logits is None else logits
    head = counts.lm_head or counts.embedding
    # The split lm_head runs on every DP rank's logit rows (step_comm, `logits gather`).
    head_rows = rows * head_gather if gathered_logits is None or head_gather == 1 else (
        gathered_logits)
    s.op("lm_head", flops=head_rows * 2 * head / head_tp,
         nbytes=head * bpp_head["lm_head"], math=math["lm_head"], rows=head_rows)
    if head_gather > 1:
        # Decode and prefill alike: an extend's rows are its requests' last tokens, gathered at
        # SUM_LEN (step_comm, `logits gather`).
        _logits_gather(s, spec, link_of(layout.world), ranks=layout.world,
                       rows=head_rows, act_bytes=act_bytes)
    elif head_gather == 1 and head_tp > 1:
        # The lm_head split over its TP group: every engine all-gathers the rows' vocabulary
        # shards before sampling, prefill and decode (kvplan.perf.step_comm, `TP logits gather`).
        _vocab_gather(s, spec, link_of(head_tp), ranks=head_tp, rows=rows,
                      act_bytes=act_bytes)
    if phase == "prefill" and eff.prefill_launch_s and layers is None:
        # Launched eagerly (SGLang): the CPU time of every op, added to the GPU time (docstring);
        # a step replayed from piecewise CUDA graphs launches fewer (prefill_launch_ops).
        # (The KV-dtype kernel's casts are launched too, per attention layer.)
        # (Efficiency.prefill_launch_model: the counterfactual models, kvplan.perf.launch_model.)
        casts = len(in_kv.casts) * sum(map(spec.has_attention, chosen)) if in_kv else 0
        ops = prefill_launch_ops(spec, gpu, layout, tokens, eff, quantization,
                                 fused_norms=fused) + casts
        s.fixed("prefill_launch", launch_spill_s(s.events, ops, eff.prefill_launch_s,
                                                 eff.prefill_launch_model))
    return s.result()
