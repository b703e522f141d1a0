"""What a varlen attention kernel computes for its query tiles (kvplan.engines.attention_kernel.
VarlenAttentionKernel, declared by the engine that runs it: vLLM's FlashAttention 2,
kvplan.engines.vllm.attention_backend).

The exact pairs (kvplan.perf.flops.attention_flops) count one query row per query head per
token. A FlashAttention kernel computes whole tiles of `tile_rows` query rows: a sequence
with q query tokens in a call costs, per query head, ceil(q / T) x T rows against every key it
attends; where the kernel folds the g query heads of a KV head into the rows (`packs_gqa`),
ceil(q x g / T) x T rows per KV head. The FLOPs of a token are then the exact ones times

    unpacked: ceil(q / T) x T / q        packed: ceil(q x g / T) x T / (q x g)

A decode token in a step that also holds a prefill chunk (FlashAttention 2: 64-row tiles, not
packed) is charged 64x its exact FLOPs; in a decode-only step (packed), ceil(g / 64) x 64 / g
(16x for Llama-3-8B's g = 4). The KV bytes stay the cache rows read once per KV head: the g
query heads' thread blocks of one sequence re-read the same rows, and kvplan counts them as
served by L2 (an assumption: nothing read here measures it). Prefill chunks keep their exact
pairs (a chunk wastes less than one tile of rows, and the causal diagonal's masked half-tile).

A sparse MLA kernel (kvplan.engines.attention_kernel.SparseMlaKernel, DeepSeek's sparse
attention) computes the rank's query heads padded to a whole multiple: its FLOPs are the exact
pairs' times ceil(heads / m) x m / heads (`sparse_head_factor`; vLLM's FlashMLA sparse prefill
kernel on a 16-bit cache, m = 64 on Hopper: DeepSeek-V3.2 at TP 8, 16 heads per rank, 4x). The
bytes stay the latent rows read once (the padded heads share them). A kernel that computes
every index slot (`SparseMlaKernel.all_slots`: FlashMLA's sparse kernels as vLLM 0.13 calls
them, with no valid-length per row) costs index_topk keys' FLOPs a token whatever the context
(`sparse_slots`): a decode at 1,000 keys computes 2,048 slots, a prompt's every token 2,048; the
bytes stay the keys seen.

The math attention runs in (`attention_math`): bf16, unless the engine declares a kernel that
computes in the KV cache's dtype for the step (CostTraits.kv_dtype_attention: SGLang's
trtllm_mla prefill with an fp8 cache on SM 10.x, kvplan.engines.sglang.mla_prefill; vLLM's FP8
query on SM 10.x, non-latent attention, prefill and decode, kvplan.engines.vllm.fp8_query) or
the user asks for FP8 attention (--fp8-attention). FP8 attention runs at `Efficiency.fp8_attention`
of the FP8 peak where the device preset sets it (kvplan.perf.efficiency).

An engine whose absorbed-MLA decode launches more kernels per layer than kvplan.perf.roofline
counts declares them (kvplan.engines.attention_kernel.MlaDecodeLaunches; SGLang on gfx942,
kvplan.engines.sglang.mla_decode): `mla_decode_extra_kernels`, each charged at the floor.
"""

from __future__ import annotations

from kvplan._util.dtypes import GemmMath
from kvplan.engines.attention_kernel import (
    KvDtypeAttention,
    SparseMlaKernel,
    VarlenAttentionKernel,
)
from kvplan.hardware.gpus import GPU
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import Efficiency


def varlen_kernel(eff: Efficiency, spec: ModelSpec, gpu: GPU,
                  kv_dtype: str) -> VarlenAttentionKernel | None:
    """The kernel `eff`'s engine runs for `spec`'s attention on `gpu` with a `kv_dtype` cache
    (the first declared for the GPU's compute-capability major and the model's attention
    sinks, VarlenAttentionKernel.sinks), or None: exact pairs."""
    att = spec.attention
    if isinstance(att, LatentAttention) or gpu.compute_capability is None:
        return None
    major = gpu.compute_capability[0]
    for kernel in eff.attention_kernels:
        if not isinstance(kernel, VarlenAttentionKernel):
            continue
        if major not in kernel.compute_capability_majors:
            continue
        if kernel.sinks is not None and kernel.sinks != spec.attention_sinks:
            continue
        dims = (att.head_dim, att.v_head_dim)
        fits = all(d % 8 == 0 and d <= kernel.max_head_dim for d in dims)
        return kernel if kv_dtype in kernel.kv_dtypes and fits else None
    return None


def _ceil_to(n: int, tile: int) -> int:
    return -(-n // tile) * tile


def decode_flop_factor(kernel: VarlenAttentionKernel | None, spec: ModelSpec, att_tp: int, *,
                       query_len: int, single_token_call: bool, windowed: bool) -> float:
    """The kernel's FLOPs for a token of a sequence with `query_len` query tokens in the call,
    over its exact pairs' FLOPs (module docstring). `single_token_call`: every query of the
    call is one token long; `windowed`: the layer has a sliding window."""
    if kernel is None or query_len < 1:
        return 1.0
    tile = kernel.tile_rows
    att = spec.attention
    heads = max(1, att.num_attention_heads // att_tp)
    groups = max(1, heads // att.kv_heads_per_rank(att_tp))
    packs = kernel.packs_gqa == "always" or (
        kernel.packs_gqa == "single_token_steps" and single_token_call and not windowed)
    rows = query_len * groups if packs else query_len
    return _ceil_to(rows, tile) / rows


def _sparse_kernel(eff: Efficiency, spec: ModelSpec, gpu: GPU, kv_dtype: str,
                   att_tp: int) -> tuple[SparseMlaKernel, int, int] | None:
    """`eff`'s sparse MLA kernel for `spec` on `gpu` with a `kv_dtype` cache, its head multiple
    there and the rank's heads; None: none declared (or no indexer)."""
    att = spec.attention
    if spec.indexer is None or not isinstance(att, LatentAttention) \
            or gpu.compute_capability is None:
        return None
    major = gpu.compute_capability[0]
    heads = max(1, att.num_attention_heads // att_tp)
    for kernel in eff.attention_kernels:
        if not isinstance(kernel, SparseMlaKernel) or kv_dtype not in kernel.kv_dtypes:
            continue
        if kernel.below_heads is not None and heads >= kernel.below_heads:
            continue
        multiple = kernel.multiple(major)
        if multiple is not None:
            return kernel, multiple, heads
    return None


def sparse_head_factor(eff: Efficiency, spec: ModelSpec, gpu: GPU, kv_dtype: str,
                       att_tp: int) -> float:
    """The heads `eff`'s sparse MLA kernel computes on a rank over the rank's own (module
    docstring): 1.0 for a model without the indexer or where the engine declares no such kernel
    for the GPU, KV dtype and heads per rank."""
    found = _sparse_kernel(eff, spec, gpu, kv_dtype, att_tp)
    if found is None:
        return 1.0
    _, multiple, heads = found
    return _ceil_to(heads, multiple) / heads


def sparse_slots(eff: Efficiency, spec: ModelSpec, gpu: GPU, kv_dtype: str,
                 att_tp: int) -> int | None:
    """The keys a token's main attention computes over whatever the context, where `eff`'s
    sparse MLA kernel computes every index slot (module docstring): index_topk; None: the keys
    the attention kind selects (kvplan.perf.attention_cost)."""
    found = _sparse_kernel(eff, spec, gpu, kv_dtype, att_tp)
    if found is None or not found[0].all_slots or spec.indexer is None:
        return None
    return spec.indexer.index_topk


_KV_MATH = {"fp8": GemmMath.fp8}  # the KV dtypes a kernel can compute in, as the GEMM math


def kv_dtype_kernel(eff: Efficiency, spec: ModelSpec, gpu: GPU, kv_dtype: str,
                    phase: str) -> KvDtypeAttention | None:
    """The kernel `eff`'s engine computes `spec`'s attention with in the `kv_dtype` cache's
    dtype in a `phase` step on `gpu` (CostTraits.kv_dtype_attention, the first that applies:
    KvDtypeAttention.applies), or None: bf16."""
    if gpu.compute_capability is None or kv_dtype not in _KV_MATH:
        return None
    major = gpu.compute_capability[0]
    return next((k for k in eff.kv_dtype_attention
                 if k.applies(spec, major=major, kv_dtype=kv_dtype, phase=phase)), None)


def attention_math(eff: Efficiency, spec: ModelSpec, gpu: GPU, kv_dtype: str, phase: str, *,
                   fp8_attention: bool = False) -> GemmMath:
    """The math a `phase` step's attention runs in (module docstring): FP8 where the user asks
    for it (`fp8_attention`) or the engine's kernel computes in the fp8 cache's dtype."""
    if fp8_attention:
        return GemmMath.fp8
    kernel = kv_dtype_kernel(eff, spec, gpu, kv_dtype, phase)
    return GemmMath.bf16 if kernel is None else _KV_MATH[kv_dtype]


def mla_decode_extra_kernels(eff: Efficiency, spec: ModelSpec, gpu: GPU, att_tp: int,
                             phase: str) -> int:
    """Kernels a `phase` step's absorbed-MLA attention layer launches on a rank of `att_tp` beyond
    kvplan.perf.roofline's count, per `eff`'s engine (CostTraits.mla_decode_launches, already
    filtered to its release): a decode step of a dense latent-attention model (no indexer)
    whose first architecture, rope_scaling, GPU (platform and compute capability) and query
    heads per rank the declaration names; else 0."""
    att = spec.attention
    if phase != "decode" or not isinstance(att, LatentAttention) or spec.indexer is not None:
        return 0
    fields = spec.position_fields
    if fields is None or fields.rope_scaling is None or not spec.architectures:
        return 0
    heads = att.num_attention_heads // att_tp
    return sum(k.extra_kernels for k in eff.mla_decode_launches
               if k.platform == gpu.platform and gpu.compute_capability in k.compute_capabilities
               and spec.architectures[0] in k.architectures and heads in k.heads_per_rank)


def prefill_kv_reads(kernel: VarlenAttentionKernel, spec: ModelSpec, att_tp: int, *,
                     context: int, count: int, window: int | None, kv_bytes: float) -> float:
    """K and V bytes the programs of a GQA-packing kernel (`packs_gqa` "always", g <= tile_rows;
    `prefill_key_tile` declared) load for one sequence's prefill chunk of `count` tokens after
    `context` cached ones, on one layer of one rank (all its KV heads), the cache's elements
    `kv_bytes` each. Read in vLLM 0.11.0 attention/ops/triton_unified_attention.py
    (kernel_unified_attention_2d): a program covers BLOCK_Q = tile_rows / g tokens (:728-730),
    grid (q blocks, KV heads) (:750-753); program b walks the key tiles from `tile_start` to
    `num_tiles` = cdiv(min(context + b x BLOCK_Q + BLOCK_Q, context + count), TILE) (:174-185,
    BLOCK_Q = (BLOCK_M - 1) // g + 1), loading each tile's K and V (:210-245, head_dim
    elements: dim_mask); with a sliding window W (SLIDING_WINDOW = 1 + window_size[0] = W,
    :785, backends/triton_attn.py:218) tile_start = (context + b x BLOCK_Q - W + 1) // TILE
    and tile_end = (context + last query) // TILE + 1 (:191-207): the tiles outside the window
    are skipped.

    These are the loads the programs issue, each program its prefix again (1,024 programs per
    KV head for a 2,048-token chunk of gpt-oss, g = 8): how many reach HBM rather than L2 is
    not answered here. The grid's first axis is the q block, so programs launched together
    belong to one KV head and start from its first tile (an assumption on the hardware's block
    dispatch order, not read in any code): their working set is one KV head's prefix, not
    every head's."""
    tile = kernel.prefill_key_tile
    att = spec.attention
    heads = max(1, att.num_attention_heads // att_tp)
    kv_heads = att.kv_heads_per_rank(att_tp)
    groups = max(1, heads // kv_heads)
    if tile is None or count < 1 or kernel.packs_gqa != "always" or groups > kernel.tile_rows:
        raise ValueError(f"{kernel.name}: its prefill key loads are not read for g = {groups}")
    block_q = kernel.tile_rows // groups
    tiles = 0
    for lo in range(0, count, block_q):
        hi = min(lo + block_q, count) - 1  # the block's last query, 0-based in the chunk
        end = -(-(context + hi + 1) // tile)  # num_tiles: cdiv(longest prefix, TILE)
        start = 0
        if window is not None:
            start = max(0, (context + lo - window + 1) // tile)
            end = min((context + hi) // tile + 1, end)
        tiles += max(0, end - start)
    return tiles * tile * kv_heads * (att.head_dim + att.v_head_dim) * kv_bytes
