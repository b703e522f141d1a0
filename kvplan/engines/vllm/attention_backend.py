"""The attention kernel vLLM runs on full-attention (non-latent) layers, as the time model needs
it (kvplan.engines.attention_kernel.VarlenAttentionKernel, priced by kvplan.perf.attention_kernel).

Which backend: vllm/platforms/cuda.py `_get_backend_priorities` (0.19.1, 0.20.2; the same order
in 0.15-0.34) puts FLASH_ATTN first on every CUDA GPU but SM 10.x (FlashInfer first there), and
vllm/v1/attention/backends/fa_utils.py `get_flash_attn_version` gives FlashAttention 3 on SM 9.x,
4 on SM 10.x and 2 on the rest (SM 8.x: A100, A10, L40S; SM 12.x: RTX-5090, RTX PRO 6000).
FlashAttention 2 does not take an FP8 cache (fa_utils `flash_attn_supports_fp8`: FA3 only), so
an FP8 KV cache on those GPUs runs another backend: the kernel applies to 16-bit caches only;
FlashAttentionBackend.supports_head_size: head sizes that are multiples of 8, up to 256.

What FA2 computes (vllm-project/flash-attention csrc/flash_attn/flash_api.cpp at 04325b6,
`mha_varlen_fwd`; src/flash_fwd_launch_template.h at fcc8a21): vLLM calls
flash_attn_varlen_func with the block table (vllm/v1/attention/backends/flash_attn.py
FlashAttentionImpl.forward: max_seqlen_q = the step's longest query, causal), so `paged_KV` and
`run_mha_fwd(params, stream, /*force_split_kernel=*/paged_KV)` always runs the split-KV kernel,
`run_mha_fwd_splitkv_dispatch`: kBlockM = 64 "Fixed for all head dimensions", one thread block
per 64 query rows of one query head of one sequence (grid (m_blocks, b, h)), whose MMAs cover the
whole 64-row tile whether its rows hold queries or not. Only when max_seqlen_q == 1 (causal is
then dropped) and the layer has no window does `seqlenq_ngroups_swapped` fold the query heads of
a KV head into the tile's rows (q reshaped to (b * ngroups, num_heads_k, d), max_seqlen_q =
ngroups). So in a step that mixes a prefill chunk with decodes, every decode token costs 64 rows
per query head; in a decode-only step, ceil(ngroups / 64) x 64 rows per KV head.

A model with attention sinks (gpt-oss: ModelSpec.attention_sinks) does not run FlashAttention 2:
vLLM 0.11.0 platforms/cuda.py:358-362 returns TRITON_ATTN on SM 8.0+ but 9.0 when the layer has
sinks (or an FP8 cache); in 0.15.1 FlashAttentionBackend.supports_sink is
fa_utils.flash_attn_supports_sinks (fa_utils.py:105-109: FA3 only) and FlashInfer's needs SM 10.x's
TRT-LLM kernels (flashinfer.py:360-366), so `_get_backend_priorities` (FLASH_ATTN, FLASHINFER,
TRITON_ATTN: cuda.py:76-82) lands on TRITON_ATTN too. Its kernel (vllm 0.11.0
attention/ops/triton_unified_attention.py; 0.15.1 v1/attention/ops/triton_unified_attention.py:
940-943 the same rule) folds the g query heads of a KV head into the tile's rows in every call:
BLOCK_M = 16 when g <= 16 (else the next power of two of g), BLOCK_Q = BLOCK_M / g tokens of
one sequence a program (:728-730; rows `offs_m // num_queries_per_kv` tokens by
`offs_m % num_queries_per_kv` heads: kernel_unified_attention_2d :123-127, the 3d (split) kernel
:410-414), grid (q blocks, KV heads) (:751-753), each program's tl.dot over its whole 16-row tile
(:255-256, :523-524). gpt-oss (g = 64 / 8 = 8): two
tokens a tile, a decode token 8 of 16 rows, 2x its exact FLOPs, in mixed and decode-only steps
alike; prefill chunks' tiles full. Not priced: each program re-reads its sequence's keys and
values for its BLOCK_Q tokens (a 2,048-token chunk reads its prefix 1,024 times per KV head,
FlashAttention 2's 64-row tiles 32 times per query head): counted as served by L2, as above.
kvplan.perf.attention_kernel.prefill_kv_reads counts those loads from the code (gpt-oss-20b, a
2,048-token chunk after 32,768 keys: 70.9 GB a full-attention layer, 854.8 GB the chunk, 0.47 s
at the A100's HBM rate against 0.073 s of FLOPs at kvplan's rate); whether they reach HBM is the
L2's, not priced (the grid's q-block axis is first: programs in flight share one KV head's
prefix, 8.9 MB there, under the A100's 40 MB L2 if dispatched in grid order).

FlashAttention 3 (SM 9.x) is not declared: hopper/heuristics.h `should_pack_gqa` returns true for
every varlen call, so a decode's query heads share one tile (128 rows at head dim 128,
hopper/tile_size.h) in mixed and decode-only steps alike: 128 x (2 d_qk + 2 d_v) FLOPs per key per
KV head against (d_qk + d_v) x 2 bytes, 128 FLOPs per byte, below the H100's and H200's ratio of
attention FLOPs to HBM bytes at kvplan's fractions (989.5 x 0.60 / (3.35 x 0.90) = 197; / 4.8 TB/s:
137): the exact pairs price it already.
"""

from __future__ import annotations

from kvplan.engines.attention_kernel import SparseMlaKernel, SplitDecode, VarlenAttentionKernel

FLASH_ATTENTION_2 = VarlenAttentionKernel(
    name="FlashAttention 2 (vllm-flash-attn split-KV kernel)",
    tile_rows=64,
    packs_gqa="single_token_steps",
    compute_capability_majors=(8, 12),
    kv_dtypes=("bf16", "fp16"),
    max_head_dim=256,  # flash_attn.py FlashAttentionBackend.supports_head_size (FA2: <= 256)
    sinks=False,  # a model with sinks runs TRITON_UNIFIED_ATTENTION (module docstring)
    source="vllm-project/flash-attention csrc/flash_attn/flash_api.cpp mha_varlen_fwd "
           "(seqlenq_ngroups_swapped, run_mha_fwd force_split_kernel); "
           "src/flash_fwd_launch_template.h run_mha_fwd_splitkv_dispatch (kBlockM = 64); "
           "vllm 0.19.1 / 0.20.2 fa_utils.get_flash_attn_version, platforms/cuda.py",
)

# Models with attention sinks on SM 8.x / 12.x (module docstring): the Triton unified attention
# kernel, 16-row tiles packing a KV head's query heads (g <= 16 or a power of two).
TRITON_UNIFIED_ATTENTION = VarlenAttentionKernel(
    name="Triton unified attention (TRITON_ATTN), models with attention sinks",
    tile_rows=16,
    packs_gqa="always",
    compute_capability_majors=(8, 12),
    kv_dtypes=("bf16", "fp16"),
    max_head_dim=256,  # any head size from 32 (triton_attn.py:147-153), padded to a power of 2
    sinks=True,
    source="vllm 0.11.0 platforms/cuda.py:358-362; attention/ops/triton_unified_attention.py:"
           "123-127, 255-256, 410-414, 523-524, 728-753; 0.15.1 fa_utils.py:105-109, "
           "v1/attention/ops/triton_unified_attention.py:940-943",
    split_decode=SplitDecode(
        # vllm 0.11.0 attention/ops/triton_unified_attention.py `unified_attention`: the 2D
        # kernel when max_seqlen_q > 1 or total_num_q_blocks * num_kv_heads > 128 (:741,
        # :750-753; total_num_q_blocks = q.shape[0] // BLOCK_Q + num_seqs), else
        # kernel_unified_attention_3d over (q blocks, KV heads, NUM_SEGMENTS = 16) (:800-873),
        # each program of a segment holding keys storing its float32 partial output (the head
        # size's elements: dim_mask, :418), maximum and exp-sum (:584-595; an empty segment
        # returns first, :402-405), then reduce_segments over (tokens, query heads) (:874-894)
        # reading them back over act_num_segments = cdiv(seq_len, tiles_per_segment *
        # TILE_SIZE), tiles_per_segment = cdiv(seq_len, 16 * TILE_SIZE) (:632-638);
        # TILE_SIZE_DECODE 16 for a 16-bit query (:747). vLLM 0.20.0 takes the
        # threshold and segments from the backend (v1/attention/ops/
        # triton_unified_attention.py:617-623, 651-658): not this rule; releases between not read.
        segments=16, max_programs=128, tile=16, releases=("0.11.0",),
        source="vllm 0.11.0 attention/ops/triton_unified_attention.py:402-405, 418, 584-595, "
               "632-638, 741-753, 800-894"),
    # vllm 0.11.0 attention/ops/triton_unified_attention.py:746 TILE_SIZE_PREFILL = 32, passed
    # to kernel_unified_attention_2d (:778), which every call with a prefill runs (:750).
    prefill_key_tile=32,
)

# DeepSeek's sparse attention (a spec with an indexer) on a 16-bit cache: FlashMLA's sparse
# prefill kernel runs every token, prefill and decode, as MQA over the 576 / 512 latent
# (vllm 0.13.0 v1/attention/backends/mla/flashmla_sparse.py:960 "MQA 576/512 approach for both
# prefill and decode", :1009 `_forward_bf16_kv` when the cache is not fp8_ds_mla), and pads the
# rank's query heads to 64 on Hopper, 128 on Blackwell (:722 `self.padding`, :930-937: "kernel
# requires num_local_head to be a multiple of 64 on hopper and 128 on blackwell"; q_padded
# holds `self.padding` heads, the output keeps the rank's own). DeepSeek-V3.2 at TP 8: 16 heads
# per rank computed as 64.
#
# Every index slot is computed (`all_slots`): vLLM hands the kernel index_topk slots a token,
# -1 in those beyond the keys seen (deepseek_v2.py:659), and calls it with no valid length per
# row (attention/ops/flashmla.py:237 `sparse_prefill_fwd(q, kv, indices, sm_scale, d_v)`).
# The kernel (vllm-project/FlashMLA 46d64a8, the fork vLLM builds; the pin itself is in vLLM's
# cmake, not in the wheel, and was not read) loops over all topk / 64 blocks of slots for every
# query token (csrc/sm90/prefill/sparse/fwd.cu:172 `num_topk_blocks = params.topk / B_TOPK`,
# :391; sm100/prefill/sparse/fwd.cu:207 `num_k_blocks`) and masks the invalid ones after the
# q.k and before p.v (:565 `is_token_valid = t >= 0 && t < params.s_kv` only predicates the
# load: no bytes for them, the MMAs run). So a token's main attention costs 2,048 keys' FLOPs at
# any context (a decode at 1,000 keys as at 100,000), its bytes the keys seen.
FLASHMLA_SPARSE_BF16 = SparseMlaKernel(
    name="FlashMLA sparse prefill kernel (flash_mla_sparse_prefill), 16-bit latent cache",
    head_multiple=((9, 64), (10, 128)),
    kv_dtypes=("bf16", "fp16"),
    all_slots=True,
    source="vllm 0.13.0 v1/attention/backends/mla/flashmla_sparse.py:722, :930-945, :960, "
           ":1009; attention/ops/flashmla.py:237; vllm-project/FlashMLA 46d64a8 "
           "csrc/sm90/prefill/sparse/fwd.cu:172, :391, :565; sm100/prefill/sparse/fwd.cu:207",
)

# The fp8_ds_mla cache with fewer than 32 query heads a rank (flashmla_sparse.py:56
# MIN_HEADS_FOR_BF16_PREFILL = 32, :663 `fp8_use_mixed_batch`; DeepSeek-V3.2 at TP 8 and up):
# every token, prefill and decode, runs FlashMLA's sparse FP8 decode kernel as one batch
# (:858 `_forward_fp8_kv_mixed_batch`, :897 `flash_mla_with_kvcache(..., is_fp8_kvcache=True,
# indices=...)`), the docstring's "avoids the BF16 prefill kernel which has head padding
# overhead" notwithstanding: on Hopper the kernel (FlashMLA 46d64a8 csrc/sm90/decode/
# sparse_fp8/splitkv_mla.cu:587 `num_m_block = ceil_div(q_head_per_hk, 2*BLOCK_M) * 2`,
# components/config.h:14 BLOCK_M = 64; grid (num_m_block, s_q, num_sm_parts), :602) runs a
# cluster of two 64-row CTAs per query token, each token's rank heads padded to 128 (16 -> 128
# at TP 8: 8x), both CTAs computing (they share the K loads). It computes every slot too: the
# scheduler is planned on cache_seqlens = index_topk for every token (flashmla_sparse.py:607)
# and :195 runs ceil(topk / 64) blocks, the -1 slots masked (:484, :522). Bf16 MMAs on the
# dequantized latent (components/dequant.h). Declared on Hopper only: SM 10.x's fp8 path is
# release-dependent (0.32 runs FLASHINFER_MLA_SPARSE there, kvplan.engines.vllm.kv_dtype) and
# was not priced; with 32 or more heads a rank the decode tokens run this kernel and the prefill
# tokens the 16-bit kernel above on an upconverted copy (:757, :838): not declared (exact heads).
FLASHMLA_SPARSE_FP8_MIXED = SparseMlaKernel(
    name="FlashMLA sparse FP8 decode kernel (flash_mla_with_kvcache), fp8_ds_mla cache, "
         "mixed batch",
    head_multiple=((9, 128),),
    kv_dtypes=("fp8",),
    all_slots=True,
    below_heads=32,
    source="vllm 0.13.0 v1/attention/backends/mla/flashmla_sparse.py:56, :607, :663, :858, "
           ":897; vllm-project/FlashMLA 46d64a8 csrc/sm90/decode/sparse_fp8/splitkv_mla.cu:195, "
           ":484, :587, :602; components/config.h:14",
)

VLLM_ATTENTION_KERNELS = (FLASH_ATTENTION_2, TRITON_UNIFIED_ATTENTION, FLASHMLA_SPARSE_BF16,
                          FLASHMLA_SPARSE_FP8_MIXED)
