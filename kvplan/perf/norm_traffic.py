"""The bytes of a layer's token-wide small kernels that run whole on every TP rank (issue 30,
hopperops65): the two RMSNorms, the FP8 quantization of the attention block's input, and the
float32 copy of the MoE router's input.

kvplan.perf.roofline counts these kernels at the kernel floor only (op_counts.ATTN_KERNELS /
MLP_KERNELS: the input and post-attention norms; roofline's w8a8 GEMMs: their quantize kernel),
which a decode step's few tokens stay under, but a prefill step's do not: each reads and writes
every token's full hidden row, on every TP rank (the hidden states entering a layer are
replicated over the TP group; the projections split, the norms do not). Read in vLLM 0.16.0 /
0.18.0 / 0.19.0, the releases of the Hopper rows (aggfaith64):

- The decoder layer (models/minimax_m2.py 0.16.0 / 0.18.0 / 0.19.0 :299-308; models/gpt_oss.py
  0.16.0 :230-236, 0.18.0 :253-259, 0.19.0 :250-256) runs `input_layernorm(hidden_states,
  residual)` and `post_attention_layernorm(hidden_states, residual)` over all the step's
  tokens: the fused add + RMSNorm (layers/layernorm.py 0.18.0 :72-84 `fused_add_rms_norm`,
  in place: reads the hidden states and the residual, writes both; the compiled forward_native
  :268 the same tensors) moves 4 x hidden x act_bytes a token. The first layer has no residual
  (`residual = hidden_states`: reads and writes the row once, 2 x hidden x act_bytes).
  Sequence parallelism, which would split the norms over the ranks, is off by default at these
  releases (config/vllm.py 0.16.0 :79, 0.18.0 :82, 0.19.0 :85 `IS_DENSE = False`, the O2
  default "enable_sp": IS_DENSE).
- A block-FP8 (w8a8) attention block quantizes its input before the fused qkv GEMM
  (layers/quantization/utils/fp8_utils.py 0.16.0 / 0.18.0 :422-513, 0.19.0 :429-520
  W8A8BlockFp8LinearOp, each path's
  `input_quant_op` / per_token_group_quant_fp8): reads the bf16 row, writes its FP8 copy and a
  float32 scale per 128 columns (moe_kernel.input_row_bytes), whole on every rank. (o_proj's
  input quantization is split by TP: not charged here, nor rotary and the q / k norms, whose
  rows are the rank's heads.)
- MiniMax-M2's router runs in float32 (`fp32_router`, kvplan.perf.router_cost): `self.gate(
  hidden_states.to(torch.float32))` (models/minimax_m2.py 0.16.0 / 0.18.0 / 0.19.0 :132) writes a
  float32 copy of every token's row (4 x hidden bytes a token); charged as written only, the
  cast fused into the post-attention norm that produces its input (vLLM compiles the forward
  with Inductor, custom ops "none": config/vllm.py 0.18.0 :835).

SGLang runs the same norms on the rank's tokens (layers/communicator.py 0.5.6 :450-453
`prepare_attn`, `input_layernorm(hidden_states, residual)` on CUDA; :487-503 `prepare_mlp`, the
post-attention norm after the all-reduce, fused with it where kvplan.engines.sglang says) and
quantizes a block-FP8 GEMM's input the same way (roofline's docstring); TensorRT-LLM's were not
read here, the rule (the bytes of a norm over rows every rank holds) applied alike.

Priced at HBM bandwidth beyond the floor each kernel already pays (`_Step.over_floor`); where
an engine's fused all-reduce + RMSNorm absorbs a norm (kvplan.perf.op_counts.absorbed_norms),
that norm's bytes are not charged (the collective moves them). A decode step's few rows stay
under the floor, so only large batches and prefill steps move. Not charged: the final norm and
the embedding (one each a step), rotary and the per-head norms (split by TP), and the input
norm of a layer with no attention (a recurrent mixer's, counted in RECURRENT_KERNELS).
"""

from __future__ import annotations

from kvplan.perf.moe_kernel import input_row_bytes

FP32_BYTES = 4
QUANT_GROUP = 128  # per_token_group_quant_fp8's group: block FP8's [128, 128] blocks


def rms_norm_bytes(tokens: int, hidden: int, act_bytes: int, *, residual: bool) -> float:
    """One RMSNorm over `tokens` rows of `hidden`: with the residual (fused add + norm, in
    place) reads the row and the residual and writes both; without, reads and writes the row."""
    return tokens * hidden * act_bytes * (4 if residual else 2)


def quant_input_bytes(tokens: int, hidden: int, act_bytes: int) -> float:
    """The FP8 per-token-group quantization of a GEMM's `hidden`-wide input: reads the rows,
    writes their FP8 copy and a float32 scale per QUANT_GROUP columns."""
    return tokens * (hidden * act_bytes + input_row_bytes(hidden, act_bytes, QUANT_GROUP))


def fp32_copy_bytes(tokens: int, hidden: int) -> float:
    """The float32 copy of the router's input written (the cast fused into the norm)."""
    return tokens * hidden * FP32_BYTES
