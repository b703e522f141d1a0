"""What TensorRT-LLM's PyTorch backend launches from Python in an eager prefill (context) step,
counted from its model code (`trtllm_eager_prefill_ops`); kvplan.perf.engine_traits charges
each op `Efficiency.prefill_launch_s`, as it charges SGLang's (kvplan.perf.op_counts).

Why the step is eager: the executor replays CUDA graphs for generation-only batches alone.
_torch/pyexecutor/model_engine.py `_maybe_get_cuda_graph` returns None unless
`batch.is_generation_only` (an earlier stored version, search-index file id 5661567389) or,
at the 1.0-era version (id 1034563403), unless `batch.can_run_cuda_graph`, which
_torch/pyexecutor/scheduler.py ScheduledRequests defines as `not self.context_requests` (ids
43209202335, 3881317923): any step that holds a context request runs the model's forward from
Python, op by op. Nothing compiles it by default:
llmapi/llm_args.py `torch_compile_config: Optional[TorchCompileConfig] = None`, and
TorchCompileConfig's `enable_piecewise_cuda_graph` defaults to False (index ids 292162234,
1520735490, 1090804222: the 1.0 - 1.2 lines' llm_args.py), so no piecewise graph captures a
prefill either. The files were read at the search index's stored versions nearest the bench
rows' releases (1.0.0rc3, 1.1.0rc2, 1.2.0rc2 / rc6), not at the release tags: the repository
is too large to fetch here, and no release wheel carries the sources on the package index.

An op is, as for SGLang, a Python-level call that launches GPU work (a GEMM, a norm, a copy, a
collective, a custom op); a custom op that launches several kernels from C++ is one
(torch.ops.trtllm.fused_moe: routing permute, both grouped GEMMs, activation, finalize).
Views, splits, `torch.empty`, CUDA events and stream switches launch none.

Per decoder layer (`_attention_ops`, `_mlp_ops`, the norms in `trtllm_eager_prefill_ops`):

- a linear layer is its GEMM, plus the activations' quantization before it where the GEMM
  runs on quantized activations (modules/linear.py: FP8 block scales
  `fp8_quantize_1x128` + `fp8_block_scaling_gemm`, per-tensor FP8
  `static_quantize_e4m3_per_tensor` + the GEMM, NVFP4 `fp4_quantize` + `nvfp4_gemm`): 2.
- GQA attention (modules/attention.py Attention.forward): qkv_proj, the fused per-head q / k
  RMSNorm + RoPE where the model has one (modeling_qwen3.py Qwen3Attention.apply_qk_norm_rope:
  torch.ops.trtllm.fused_qk_norm_rope, one op; without q / k norms RoPE runs inside the
  attention op), the attention op (torch.ops.trtllm.attention: RoPE, the KV-cache write and
  the context FMHA), o_proj.
- MLA attention, a context request without cached KV (modules/attention.py MLA.forward_impl
  -> forward_context_default, the 1.1 line's, index id 26175533973): kv_a_proj_with_mqa (q_a
  and kv_a fused), q_a_layernorm and kv_a_layernorm (two streams, two ops), q_b_proj, the
  latent cache `torch.concat([compressed_kv, k_pe])`, kv_b_proj, the copy of k_nope into the k
  buffer (k_pe's copy only where RoPE runs outside the attention op: not TRT-LLM's attention
  backend), `_maybe_concat_qkv`'s concat, the attention op, o_proj. Without q_lora (lite)
  only kv_a_proj and kv_a_layernorm before the attention (q is the hidden state).
- MoE (modeling_qwen3_moe.py Qwen3MoE, modeling_deepseekv3.py Deepseekv3MoE, the 1.1 line's,
  index id 227015512; modeling_gpt_oss.py MLPBlock): the router GEMM (cublas_mm /
  dsv3_router_gemm_op / a Linear: one op); the routing (modules/fused_moe/routing.py: the
  fused renorm_moe_routing_op, one op, up to 128 experts and top-k 8, beyond them torch.topk,
  `.to(int32)`, `.float()`, softmax: 4; DeepSeek's noaux_tc_op then `topk_indices.to(int32)`:
  2); CutlassFusedMoE.forward_chunk (fused_moe_cutlass.py, index id 865441512): the input's
  quantization (fp4_quantize / mxfp8_quantize; none for FP8 block scales, which the kernel
  quantizes: `use_deepseek_fp8_block_scale`), torch.ops.trtllm.fused_moe; under attention DP
  the tokens' all-gather before and reduce-scatter after (2); DeepSeek's shared expert
  (GatedMLP, on the aux stream: gate_up_proj, the SwiGLU, down_proj) and its add to the
  routed output.
- a dense MLP (modules/gated_mlp.py GatedMLP): gate_up_proj, the SwiGLU op, down_proj.
- the norms and all-reduces: Qwen3-MoE, DeepSeek-V3 and gpt-oss (`NEXT_LAYER_NORM`) end each
  decoder layer with the next layer's input RMSNorm (the last layer's is the model's final
  norm) and, on a TP group without attention DP, run each all-reduce fused with the residual
  add and the RMSNorm after it (AllReduceFusionOp.RESIDUAL_RMS_NORM: `PRE_MOE_FUSION` /
  `POST_MOE_FUSION` from `enable_fusion`, on unless TRTLLM_*_EAGER_FUSION_DISABLED; gpt-oss
  TransformerBlock.forward_tp): two ops a layer, plus the first layer's input norm. Other
  architectures as modeling_qwen3.py's Qwen3DecoderLayer (the 1.1 line's, index id
  2464033405): input_layernorm and post_attention_layernorm (fused add + RMSNorm, one op each),
  o_proj's and down_proj's all-reduces inside their row-parallel Linear under TP, and the
  model's final norm. Architectures whose TensorRT-LLM file was not read (Llama's has its own
  fusions) are counted as Qwen3DecoderLayer is.

The step's head, as SGLang's is counted (kvplan.perf.op_counts.eager_prefill_ops): the
embedding (+ its all-gather under TP: modules/embedding.py, `gather_output=True`), the lm_head
with the gather of each context request's last token before it (+ its all-gather under TP),
and the final norm where no layer ends with it. Not counted: the attention metadata's
per-step preparation and the sampler, as for SGLang.

Not modelled: the MoE's chunking above `moe_max_num_tokens` (more ops a layer for a step of
more tokens: fused_moe_cutlass.py forward_impl `num_chunks`), the all-to-all's prepare and
expert-id memset under attention DP with it on, the shared expert's output scale where its TP
is capped, DeepSeek's dense layers' fused all-reduce + norm + NVFP4 quantization (counted as
the MoE layers' fused all-reduce + norm), and the MTP layers. A recurrent mixer (Mamba2, Gated
DeltaNet) is counted as SGLang launches it (kvplan.perf.op_counts.recurrent_mixer_ops): no
TensorRT-LLM mixer was read.
"""

from __future__ import annotations

from kvplan._util.dtypes import GemmMath
from kvplan._util.memo import spec_cache
from kvplan.hardware.gpus import GPU
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.layout import ONE_GPU, Layout, check_layout
from kvplan.perf.op_counts import recurrent_mixer_ops
from kvplan.perf.weight_bytes import bytes_per_param, gemm_math
from kvplan.weights.params import count_params

# config.json `model_type`s whose TensorRT-LLM decoder layer ends with the next layer's input
# norm and fuses its all-reduces with the norms under TP (module docstring):
# modeling_qwen3_moe.py Qwen3MoEDecoderLayer (Qwen3MoeForCausalLM), modeling_deepseekv3.py
# DeepseekV3DecoderLayer (DeepseekV3ForCausalLM), modeling_gpt_oss.py TransformerBlock
# (GptOssForCausalLM). By model_type, as kvplan.perf.engine_traits.fusion_applies keys
# SGLang's fusion: specs written as YAML carry no `architectures`.
NEXT_LAYER_NORM = frozenset({"qwen3_moe", "deepseek_v3", "gpt_oss"})

# The fused routing kernels' limits (modules/fused_moe/routing.py
# RenormalizeMoeRoutingMethod.apply: the PyTorch path where `num_experts > 128 or top_k > 8`).
_FUSED_ROUTING_MAX_EXPERTS, _FUSED_ROUTING_MAX_TOP_K = 128, 8


def _linear_ops(math: GemmMath) -> int:
    """A linear layer: the GEMM, and the activations' quantization where it takes them."""
    return 1 if math is GemmMath.bf16 else 2


def _attention_ops(spec: ModelSpec, attention: GemmMath) -> int:
    """qkv (or MLA's projections) to o_proj, one layer; no norm or all-reduce."""
    g = _linear_ops(attention)
    att = spec.attention
    if isinstance(att, LatentAttention):
        # kv_a_proj_with_mqa; q_a_layernorm, kv_a_layernorm; q_b_proj; latent-cache concat;
        # kv_b_proj; k_nope copy; qkv concat; attention; o_proj.
        q_side = g + 2 + g if att.q_lora_rank else g + 1  # lite: kv_a_proj, kv_a_layernorm
        return q_side + 1 + g + 1 + 1 + 1 + g
    qk_norm_rope = 1 if spec.per_head_qk_norm else 0
    return g + qk_norm_rope + 1 + g


def _routing_ops(spec: ModelSpec) -> int:
    assert spec.moe is not None
    if spec.moe.score_bias:
        return 2  # the biased grouped top-k: DeepSeek's noaux_tc_op, then .to(torch.int32)
    if (spec.moe.n_routed_experts > _FUSED_ROUTING_MAX_EXPERTS
            or spec.moe.num_experts_per_tok > _FUSED_ROUTING_MAX_TOP_K):
        return 4  # torch.topk, .to(int32), .float(), softmax
    return 1  # renorm_moe_routing_op


def _moe_ops(spec: ModelSpec, layout: Layout, four_bit: bool, shared: GemmMath) -> int:
    """Router GEMM to the routed (+ shared) output, one layer; no norm or TP all-reduce."""
    assert spec.moe is not None
    # A 4-bit expert format launches one op on the input first (NVFP4 fp4_quantize, MXFP4's
    # mxfp8_quantize or, weight-only, its F.pad to the padded hidden size); FP8 block scales
    # none (the kernel quantizes).
    quant = 1 if four_bit else 0
    dp_comm = 2 if layout.dp_attention and layout.tp > 1 else 0
    ops = 1 + _routing_ops(spec) + quant + 1 + dp_comm
    if spec.moe.n_shared_experts or spec.moe.shared_expert_intermediate_size:
        ops += 2 * _linear_ops(shared) + 1 + 1  # gate_up, SwiGLU, down; the add
    return ops


def _mlp_ops(dense: GemmMath) -> int:
    return 2 * _linear_ops(dense) + 1  # gate_up_proj, SwiGLU, down_proj


@spec_cache(maxsize=1024)  # pure; asked for every simulated prefill step
def trtllm_eager_prefill_ops(spec: ModelSpec, layout: Layout = ONE_GPU,
                             quantization: str | None = None, *, gpu: GPU | None = None) -> int:
    """Ops TensorRT-LLM's PyTorch backend launches in one eager prefill step of `spec` on one
    rank of `layout` (module docstring), the GEMMs at the types they run at on `gpu` (without
    one, as the checkpoint's format asks)."""
    check_layout(spec, layout)
    att_tp = layout.attention_tp
    att = (gemm_math(spec, att_tp, gpu, quantization) if gpu is not None
           else bytes_per_param(spec, att_tp, quantization)[1])
    # The experts' format, judged on the whole model (bytes per parameter on one GPU).
    four_bit = bytes_per_param(spec, 1, quantization)[0]["experts"] < 1
    # The TP group's all-reduces: none under attention DP (each rank its own tokens; the MoE's
    # gather / reduce-scatter is counted in `_moe_ops`).
    reduce = att_tp > 1 and not layout.dp_attention
    next_norm = spec.model_type in NEXT_LAYER_NORM
    counts = count_params(spec)
    total = 0
    for i in range(spec.num_hidden_layers):
        if spec.has_attention(i):
            total += _attention_ops(spec, att["attention"])
        if spec.has_recurrent(i):  # SGLang's count of the mixer stands in (not read here)
            assert spec.recurrent is not None
            total += recurrent_mixer_ops(spec.recurrent).extend_ops(
                spec, tp=att_tp, fp8=att["attention"] is not GemmMath.bf16)
        if spec.has_mlp(i):
            lp = counts.layers[i]
            if lp.routed_experts and spec.moe is not None:
                total += _moe_ops(spec, layout, four_bit, att["dense_mlp"])
            elif lp.mlp:
                total += _mlp_ops(att["dense_mlp"])
        if next_norm:
            # post-attention and next-layer norms, each fused with its all-reduce under TP
            total += 2
        else:
            # input and post-attention norms; o_proj's and down_proj's all-reduces
            total += 2 + (2 if reduce else 0)
    first_norm = 1 if next_norm else 0  # layer 0's input norm (residual None)
    final_norm = 0 if next_norm else 1
    head = 3 + final_norm + (2 if att_tp > 1 and not layout.dp_attention else 0)
    return total + first_norm + head
