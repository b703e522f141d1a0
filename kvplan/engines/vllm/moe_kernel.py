"""The fused-MoE kernel vLLM runs for bf16 / fp16 experts on CUDA, as the time model needs it
(kvplan.engines.moe_kernel.FusedMoeKernel, priced by kvplan.perf.moe_kernel). Read in the
0.15.1 wheel, vllm/model_executor/layers/fused_moe/:

- which backend: oracle/unquantized.py:50-104 `select_unquantized_moe_backend` picks
  FLASHINFER_CUTLASS only with VLLM_USE_FLASHINFER_MOE_FP16=1 (default 0, envs.py:1241) and
  expert parallelism without DP; every other CUDA case (Mixtral on TP ranks) runs TRITON, the
  modular kernel of oracle/unquantized.py:160-169 with TritonExperts.
- TritonExperts.apply (fused_moe.py:1984-2125): moe_align_block_size (2060) sorts the
  (token, expert) pairs by expert and pads each expert's list to a multiple of BLOCK_SIZE_M;
  the w13 grouped GEMM writes intermediate_cache1 (tokens, top_k, 2 x I per rank: 2053);
  self.activation (2087, silu_and_mul) reads it and writes intermediate_cache2 (tokens x
  top_k, I: 2055); the w2 grouped GEMM reads that and writes intermediate_cache3 (tokens,
  top_k, hidden: 2058); moe_sum (2125) reduces it into the output.
- fused_moe_kernel (fused_moe.py:315-572): one program per BLOCK_SIZE_M x BLOCK_SIZE_N tile of
  one expert's sorted rows, its fp32 accumulator the whole tile (499) and `tl.dot` over it
  (529) whether the rows are tokens or padding (masked on load and store: 431, 571): padded
  rows cost MMA work, not bytes. Programs walk the M blocks of one N column before the next
  ("grouped ordering to promote L2 data reuse", 400-409), so an expert's weight tile read by
  its first M block is served from L2 to the others: its weights cross HBM once a step.
- BLOCK_SIZE_M: try_get_optimal_moe_config (1289-1318) takes the tuned table for (E, N, device)
  (configs/, the entry nearest the call's tokens) and else get_default_config (1223-1287): 16
  when the call has at most as many tokens as experts (1270), 64 otherwise. The default is what
  is declared here; the tables shipped for Mixtral's shapes on H100 (E=8, N=7168 / 3584 / 2048,
  i.e. 8x7B at TP 2 / TP 4 and 8x22B at TP 8) agree with it at the sizes of a chunked prefill
  step (64 at their 256 / 512 entries but N=3584's 256: 128) and pick 128 from 1,024 tokens
  (N=3584: from 1,536), 16 or 32 at decode sizes.
- Under expert parallelism on TP ranks (kvplan.engines.vllm.moe_ep, read in 0.12.0-0.20.0):
  the same kernels over every pair of the step, other ranks' experts' blocks writing zeros.
"""

from __future__ import annotations

from kvplan.engines.moe_kernel import FusedMoeKernel
from kvplan.engines.vllm.moe_ep import TRITON_EP

VLLM_TRITON_MOE = FusedMoeKernel(
    name="vLLM fused_moe (Triton, TritonExperts)",
    small_block_rows=16,
    block_rows=64,
    source="vllm 0.15.1 model_executor/layers/fused_moe/fused_moe.py get_default_config "
           "(1223-1287), fused_moe_kernel (315-572), TritonExperts.apply (1984-2125); "
           "oracle/unquantized.py select_unquantized_moe_backend (50-104)",
    # Under TP-attention EP: every pair walked, zeros for other ranks' (moe_ep.TRITON_EP).
    ep_all_pairs=TRITON_EP.all_pairs,
)
