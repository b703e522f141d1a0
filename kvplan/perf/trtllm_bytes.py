"""The bytes of the small (elementwise) kernels of a TensorRT-LLM context step, per decoder layer
and rank (`context_kernel_bytes`): kvplan.perf.roofline charges each its bytes' time beyond the
kernel floor (`_Step.over_floor`) where `Efficiency.prefill_op_count` names TensorRT-LLM's model
code (the code whose ops kvplan.perf.trtllm_ops counts: the same kernels, there launched from
Python, here moving their bytes). Elsewhere kvplan prices these kernels at the floor alone, which
holds for decode steps; at a prefill's thousands of rows each moves hundreds of MB (issue 29,
trtctxops65: an 8,192-token DeepSeek-R1 prompt's residual RMSNorm alone reads and writes 470 MB a
call on every rank).

Read at the TensorRT-LLM 1.1 line's files as the code index stores them (the repository is too
large to fetch here; no release tag could be read; search-index file ids named):

- Residual add + RMSNorm after the attention block and after the MLP (the next layer's input
  norm, the last layer's the model's final norm): the decoder layer hands both to the TP
  all-reduce (AllReduceFusionOp.RESIDUAL_RMS_NORM), whose kernel does the norm in its epilogue
  only on its one-shot / two-shot paths; a message over the custom all-reduce's workspace
  (common/customAllReduceUtils.h `getMaxRequiredWorkspaceSize`: 16,000,000 B on 2 ranks,
  8,000,000 beyond; id 52214226274) falls back to NCCL (thop/allreduceOp.cpp
  `ifFallbackToNCCL`) and then runs `fallbackRunSubsequentOps`: one `residualRmsNorm` kernel
  reading the reduced output and the residual and writing the norm's output and the new
  residual (ids 425956671, 15047896877). Without a TP all-reduce (one rank, or attention DP) the
  layer's RMSNorm(hidden, residual) is the same fused add + norm. Each: 4 x T x hidden bf16
  tensors, 8 x T x hidden bytes.
- FP8 block-scale linears quantize their input first (modules/linear.py `fp8_quantize_1x128`,
  kvplan.perf.trtllm_ops `_linear_ops`): reads T x K bf16, writes T x K FP8 and a float32
  scale per 128: (2 + 1 + 4 / 128) bytes an element. MLA's linears: kv_a_proj_with_mqa (input
  hidden), q_b_proj (q_lora_rank), kv_b_proj (kv_lora_rank), o_proj (heads x v_head_dim on the
  rank); GQA's qkv_proj (hidden) and o_proj (heads x head_dim on the rank); a dense MLP's or
  shared expert's gate_up_proj (hidden) and down_proj (its intermediate on the rank). The routed
  experts' quantization is kvplan.perf.moe_kernel's (fused_moe_traffic).
- MLA's context path (modules/attention.py MLA, the 1.1 line's, id 26175533973):
  q_a_layernorm and kv_a_layernorm (read and write q_lora_rank / kv_lora_rank bf16 elements);
  the latent cache `torch.concat([compressed_kv, k_pe])` (read and write kv_lora + rope);
  forward_context_default's copy of k_nope into the k buffer (read and write heads x
  qk_nope_head_dim) and `_maybe_concat_qkv`'s `torch.concat([q, k, v])` (read and write q and
  k of heads x (qk_nope + qk_rope) each and v of heads x v_head_dim). All bf16: 4 bytes an
  element (2 read, 2 written).
- A dense MLP's or shared expert's SwiGLU (modules/gated_mlp.py, swiglu): reads 2 x I, writes I
  bf16 on the rank: 6 x I bytes.

Added at trtctx66 (issue 29 / 30; read after trtctxops65's inventory left ~70 ms of the
DeepSeek-R1 H200 step unexplained, tests/benches/trtctx66.py):

- NVFP4 linears quantize their input first (modules/linear.py NVFP4 path:
  torch.ops.trtllm.fp4_quantize, then nvfp4_gemm; thop/fp4Quantize.cpp, index id 2461052605):
  reads T x K bf16, writes T x K / 2 bytes of e2m1 pairs and one-byte scale factors in the
  swizzled 128 x 4 layout, computeSwizzledLayoutSFSize(T, K / 16) = padUp(T, 128) x
  padUp(K / 16, 4) (common/quantization.h, id 94708205): (2 + 1/2) x K + padUp(K / 16, 4)
  bytes a token (`FP4_QUANT`; the rows' padding to 128, under 128 rows a call, left out).
  The same linears as the FP8 quantize above, where they run NVFP4 (DeepSeek-R1-FP4: the MLPs
  and shared experts; its attention is excluded from quantization); and the routed experts'
  input before the fused MoE (fused_moe_cutlass.py CutlassFusedMoE.forward_chunk:
  fp4_quantize of x, the op kvplan.perf.trtllm_ops counts), T x hidden.
- MLA's RoPE kernel inside the attention op (common/attentionOp.cpp enqueueContext:
  invokeMLARopeContext where latent_cache is given, id 190937516; kernels/mlaKernels.cu
  applyMLARopeAndAssignQKVKernelOptContext, id 1194704289): each head's block reads the
  token's q rope part (qk_rope values) and writes it back rotated, and writes the rotated
  k_pe into k's rope part; it reads k_pe (qk_rope) and the latent (kv_lora_rank) once; the
  cache write (kv_lora + rope in the cache's dtype) stays priced with the attention op:
  2 x (3 x heads x qk_rope + qk_rope + kv_lora) bytes a token.
- FP8 context MLA (thop/attentionOp.cpp `mFP8ContextMLA = (SM 90 || 100 || 103 || 120) &&
  hasFp8KvCache()`, id 60284347387; "Hopper Fp8 context mla", NVIDIA/TensorRT-LLM#7116, merged
  2025-08-26, SM 100 by #7581, opened 2025-09-06: taken from the 1.2 line, the first whose
  branch is known to hold both): invokeMLAContextFp8Quantize's quantizeCopyInputToFp8Kernel
  (mlaKernels.cu) reads q, k (heads x (qk_nope + qk_rope)) and v (heads x v_head_dim) bf16
  and writes their FP8 copies: 3 x heads x (2 x qk + v) bytes a token. The FMHA's FP8 rate is
  not taken (trtctx62 left it out; kvplan's context attention stays at the bf16 peak).
- DeepSeek-V3's MoE output: Deepseekv3MoE.forward (modeling_deepseekv3.py, id 53161961507)
  with do_finalize (every CUTLASS step; the TRTLLM-gen NVFP4 min-latency path only up to
  MoEAllReduce's max_token) adds the shared expert's output to the routed one,
  `shared_output + routed_output`: 3 x T x hidden bf16, 6 x hidden bytes a token, on every
  layer with routed and shared experts (as kvplan.perf.trtllm_ops counts the add).
- The CUTLASS block-FP8 MoE's own kernels on Hopper (kvplan.engines.trtllm.moe_kernel: block
  FP8 experts run CutlassFusedMoE on SM 9.x in every release read): its permute, two 1 x 128
  quantize kernels, activation and finalize, as kvplan.perf.moe_kernel.cutlass_traffic
  prices the declared kernel (TRTLLM_CUTLASS_FP8_BLOCK_MOE) — until now priced only behind the
  opt-in fitted fraction (prices_traffic False there) and left at the floors in TensorRT-LLM's
  default (`context_moe_kernel`), at the layouts moe_kernel prices (not EP over DP ranks).

A mixed step (trtsim67: context requests and generation requests in one batch, the overlap
scheduler's usual step; kvplan.analysis.simulate.trtllm_scheduler) runs one forward over all
its tokens, the context requests' first (attn_metadata.num_ctx_tokens of attn_metadata.
num_tokens), eagerly (kvplan.perf.trtllm_ops: no CUDA graph for a batch with a context request).
Every kernel above runs over the whole batch (the decoder layer's norms and all-reduce, the
linears' input quantizations, the SwiGLU, the MoE's kernels and output add take the layer's
hidden states, every token), except MLA's context path: MLA.forward_impl (modules/attention.py;
index ids 38582874, 54044235741, and the 1.1 line's 26175533973) runs kv_a_proj_with_mqa, the
q_a / kv_a layernorms, q_b_proj and the latent-cache concat over num_tokens, then hands
`q[:num_ctx_tokens]` and the context requests' latents to forward_context (kv_b_proj, the
k_nope copy, `_maybe_concat_qkv`, the attention op) and the rest to forward_generation; the
attention op's context kernels (the RoPE kernel, the FP8 q / k / v copies) run in its context
pass, `runner->run(..., is_context=true, ..., num_tokens=num_ctx_tokens, ...)` under `if
((num_contexts > 0) && (attn_input_type != AttentionInputType::GenerationOnly))`
(thop/attentionOp.cpp `attention`, ids 395912496, 55092483877). So `attention_layer_kernels`
marks kv_b_proj's input quantization, the k_nope copy, the qkv concat and the attention op's
kernels as the context tokens' alone; the generation path's own kernels (the absorbed BMMs'
operands, the generation RoPE) are not charged, as in a decode step.

Not counted (each under 1% of the above at DeepSeek-V3's shapes, or priced elsewhere): the first
layer's input norm, the router's top-k (its bytes: T x experts x 4) and the gate's sigmoid /
bias (torch.compile'd get_scores, T x experts float32), the router GEMM's activations (the
gate's cublas_mm: kvplan prices its weights, every engine alike), the embedding, the sampler
and the last tokens' lm_head (two rows a two-prompt step).
"""

from __future__ import annotations

from kvplan._util.dtypes import GemmMath
from kvplan._util.units import cdiv
from kvplan._util.versions import version_key
from kvplan.engines.moe_kernel import CutlassMoeKernel
from kvplan.engines.trtllm.moe_kernel import runs_cutlass_fp8
from kvplan.hardware.gpus import GPU
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.layout import Layout
from kvplan.perf.moe_kernel import priced_layout

ACT = 2  # bf16 activations
# fp8_quantize_1x128: read bf16, write FP8, a float32 scale per 128 elements.
QUANT_BYTES = ACT + 1 + 4 / 128
# A read and a write of a bf16 element (copies, concats, norms without a residual).
COPY_BYTES = 2 * ACT


def allreduce_workspace_bytes(ranks: int) -> int:
    """The custom all-reduce's workspace (customAllReduceUtils.h, the 1.1 line): a message over
    it runs NCCL and then the separate residual RMSNorm kernel."""
    return 16_000_000 if ranks <= 2 else 8_000_000


def separate_norm(hidden: int, tokens: int, tp_ranks: int) -> bool:
    """Whether a layer's residual add + RMSNorm is a kernel of its own: no TP all-reduce before
    it (one rank; attention DP), or the all-reduce's message over the workspace (NCCL)."""
    return tp_ranks <= 1 or tokens * hidden * ACT > allreduce_workspace_bytes(tp_ranks)


def fp4_quant_bytes(width: int) -> float:
    """fp4_quantize's bytes a token over `width` input columns (docstring): the bf16 row read,
    its e2m1 pairs and its swizzled scale factors (one byte per 16, padded to 4) written."""
    return ACT * width + width / 2 + 4 * cdiv(cdiv(width, 16), 4)


def _quant(math: GemmMath, width: float) -> float:
    """The input quantization before a linear of `width` input columns running at `math`."""
    if math is GemmMath.fp8:
        return QUANT_BYTES * width
    return fp4_quant_bytes(int(width)) if math is GemmMath.fp4 else 0.0


# Compute capabilities where the attention op runs FP8 context MLA with an FP8 KV cache
# (thop/attentionOp.cpp mFP8ContextMLA, docstring), and the release line it is taken from.
FP8_CONTEXT_MLA_CC = frozenset({(9, 0), (10, 0), (10, 3), (12, 0)})
FP8_CONTEXT_MLA_SINCE = (1, 2)


def fp8_context_mla(gpu: GPU, kv_dtype: str, version: str | None) -> bool:
    """Whether TensorRT-LLM `version` (None: the newest) quantizes MLA's context q / k / v to FP8
    on `gpu` with a `kv_dtype` cache (docstring)."""
    return (kv_dtype == "fp8" and gpu.compute_capability in FP8_CONTEXT_MLA_CC
            and version_key(version) >= FP8_CONTEXT_MLA_SINCE)


def attention_op_bytes(spec: ModelSpec, *, att_tp: int, fp8_context: bool) -> list[float]:
    """Bytes a token of the kernels MLA's attention op launches before its context FMHA on a rank
    (docstring): the RoPE kernel, and the FP8 q / k / v copies where `fp8_context`; none for
    GQA (its RoPE and cache write run in the fused QKV preprocessing, not read here)."""
    att = spec.attention
    if not isinstance(att, LatentAttention):
        return []
    heads, rope = att.num_attention_heads // att_tp, att.qk_rope_head_dim
    out = [ACT * (3 * heads * rope + rope + att.kv_lora_rank)]
    if fp8_context:
        qk = att.qk_nope_head_dim + rope
        out.append((ACT + 1) * heads * (2 * qk + att.v_head_dim))
    return out


def context_moe_kernel(fmt: str | None, gpu: GPU, layout: Layout) -> CutlassMoeKernel | None:
    """The CUTLASS block-FP8 MoE whose kernels' traffic TensorRT-LLM's context step charges
    (docstring), where it runs and kvplan.perf.moe_kernel prices that layout; else None."""
    kernel = runs_cutlass_fp8(fmt, gpu)
    if kernel is None or not priced_layout(kernel, ep=layout.ep, dp_ranks=layout.dp_ranks):
        return None
    return kernel


def moe_output_bytes(spec: ModelSpec, *, shared: bool, math: GemmMath) -> list[float]:
    """Bytes a token of the MoE layer's own small kernels (docstring): the routed experts'
    NVFP4 input quantize (`math` fp4), the shared + routed add (`shared`: a shared expert runs
    beside the routed ones)."""
    h = spec.hidden_size
    out = [fp4_quant_bytes(h)] if math is GemmMath.fp4 else []
    if shared:
        out.append(3 * ACT * h)
    return out


def attention_kernels(spec: ModelSpec, *, att_tp: int, math: GemmMath,
                      norm: bool) -> list[tuple[float, bool]]:
    """Each small kernel of one attention block on a rank (docstring): its bytes per token, and
    whether it runs on the step's context tokens alone (MLA's context path: docstring, mixed
    steps)."""
    h, att = spec.hidden_size, spec.attention
    out = [(norm_bytes(spec), False)] if norm else []
    if isinstance(att, LatentAttention):
        heads = att.num_attention_heads // att_tp
        q_lora = att.q_lora_rank or 0
        qk = att.qk_nope_head_dim + att.qk_rope_head_dim
        out += [(_quant(math, h), False), (COPY_BYTES * att.kv_lora_rank, False),
                (COPY_BYTES * (att.kv_lora_rank + att.qk_rope_head_dim), False),
                # forward_context_default: kv_b_proj's input, the k_nope copy, the qkv concat.
                (_quant(math, att.kv_lora_rank), True),
                (COPY_BYTES * heads * att.qk_nope_head_dim, True),
                (COPY_BYTES * heads * (2 * qk + att.v_head_dim), True),
                (_quant(math, heads * att.v_head_dim), False)]
        if q_lora:
            out += [(COPY_BYTES * q_lora, False), (_quant(math, q_lora), False)]
    else:
        out += [(_quant(math, h), False),
                (_quant(math, att.num_attention_heads // att_tp * att.head_dim), False)]
    return [(b, only) for b, only in out if b]


def attention_kernel_bytes(spec: ModelSpec, *, att_tp: int, math: GemmMath,
                           norm: bool) -> list[float]:
    """Bytes per token of each small kernel of one attention block on a rank (docstring)."""
    return [b for b, _ in attention_kernels(spec, att_tp=att_tp, math=math, norm=norm)]


def attention_layer_kernels(spec: ModelSpec, gpu: GPU, *, att_tp: int, math: GemmMath,
                            norm: bool, kv_dtype: str,
                            version: str | None) -> list[tuple[float, bool]]:
    """Every small kernel of one attention layer of a TensorRT-LLM step holding a context
    request, on a rank of `att_tp` (`math`: the type its linears run at on `gpu`): bytes per
    token, and whether it runs on the step's context tokens alone rather than on every token of
    the step (docstring, mixed steps). kvplan.perf.roofline.step_time charges each over its tokens;
    kvplan.perf.mixed_step the context-only ones over a mixed step's prefill tokens."""
    fp8 = fp8_context_mla(gpu, kv_dtype, version)
    return [*attention_kernels(spec, att_tp=att_tp, math=math, norm=norm),
            *((b, True) for b in attention_op_bytes(spec, att_tp=att_tp, fp8_context=fp8))]


def norm_bytes(spec: ModelSpec) -> float:
    """Bytes per token of one residual add + RMSNorm kernel (docstring): 4 bf16 tensors."""
    return 4 * ACT * spec.hidden_size


def mlp_kernel_bytes(spec: ModelSpec, *, mlp_params: int, mlp_tp: int,
                     math: GemmMath) -> list[float]:
    """Bytes per token of each small kernel of a dense MLP or shared expert on a rank
    (`mlp_params`: its gate, up and down weights): its quantizations and SwiGLU."""
    h = spec.hidden_size
    out: list[float] = []
    if mlp_params:
        inter = mlp_params / (3 * h) / mlp_tp
        out += [_quant(math, h), 3 * ACT * inter, _quant(math, inter)]
    return [b for b in out if b]
