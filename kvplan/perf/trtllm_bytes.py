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

Not counted (each under 1% of the above at DeepSeek-V3's shapes, or priced elsewhere): RoPE and
the KV-cache write (inside the attention op), the first layer's input norm, the router's top-k
(its bytes: T x experts x 4), the embedding, the routed experts' permute / finalize
(moe_kernel).
"""

from __future__ import annotations

from kvplan._util.dtypes import GemmMath
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec

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


def _quant(math: GemmMath, width: float) -> float:
    return QUANT_BYTES * width if math is GemmMath.fp8 else 0.0


def attention_kernel_bytes(spec: ModelSpec, *, att_tp: int, math: GemmMath,
                           norm: bool) -> list[float]:
    """Bytes per token of each small kernel of one attention block on a rank (docstring)."""
    h, att = spec.hidden_size, spec.attention
    out = [norm_bytes(spec)] if norm else []
    if isinstance(att, LatentAttention):
        heads = att.num_attention_heads // att_tp
        q_lora = att.q_lora_rank or 0
        qk = att.qk_nope_head_dim + att.qk_rope_head_dim
        out += [_quant(math, h), COPY_BYTES * att.kv_lora_rank,
                COPY_BYTES * (att.kv_lora_rank + att.qk_rope_head_dim),
                _quant(math, att.kv_lora_rank),
                COPY_BYTES * heads * att.qk_nope_head_dim,
                COPY_BYTES * heads * (2 * qk + att.v_head_dim),
                _quant(math, heads * att.v_head_dim)]
        if q_lora:
            out += [COPY_BYTES * q_lora, _quant(math, q_lora)]
    else:
        out += [_quant(math, h), _quant(math, att.num_attention_heads // att_tp * att.head_dim)]
    return [b for b in out if b]


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
