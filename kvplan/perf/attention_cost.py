"""What one attention kind costs the time model, one type per kind (`attention_cost` picks it
from the spec, once): the keys a query's main attention computes over, whether its prefill runs
MLA absorbed, and the lightning indexer where the kind has one. The callers (kvplan.perf.flops,
kvplan.perf.roofline, kvplan.perf.mixed_step) ask the type; none tests the kind.

`FullAttentionCost` (MHA, GQA, MLA; windows and chunks are the cache kind's, kvplan.kv.kinds):
a query computes over every key it sees; MLA's prefill runs the naive form.

`SparseIndexedCost`: DeepSeek Sparse Attention (DSA: DeepSeek-V3.2, GLM-5; a spec with an
indexer), read in vLLM 0.13.0 (model_executor/models/deepseek_v2.py, v1/attention/backends/mla/
flashmla_sparse.py). Per layer and query token:

1. the indexer's projections, replicated on every TP rank, not split (deepseek_v2.py:821 "no
   tensor parallel, just replicated"): wq_b q_lora_rank -> index_n_heads x index_head_dim
   (:822), wk hidden -> index_head_dim (:829), weights_proj hidden -> index_n_heads (:837);
2. its key, quantized into the indexer cache: index_head_dim fp8 values + an fp32 scale per
   128 (:850, 132 B for V3.2; `ops.indexer_k_quant_and_cache`);
3. the logits: DeepGEMM's FP8 MQA logits, every indexer head's q . k against every key the
   token sees, index_n_heads x index_head_dim multiply-adds per (query, key) pair at FP8, one
   fp32 logit per pair out (prefill: the sequence's keys gathered from the cache once,
   `cp_gather_indexer_k_quant_cache` :673, then `fp8_mqa_logits` :685, causal per row by
   cu_seqlen_ks / ke; decode: `fp8_paged_mqa_logits` :737 over the cache pages): O(n^2) over a
   prompt, O(n) per decode token, on every rank alike (the heads are not split);
4. the top-k: `top_k_per_row_prefill` / `_decode` (:696 / :749) read the logits and keep
   index_topk indices per token. The decode logits tensor is max_model_len wide per token
   (163,840 for V3.2; :744 `max_model_len=max_model_len`), but allocated, not filled:
   DeepGEMM's `fp8_paged_mqa_logits` makes it with torch::empty, its work planned over each
   row's context_lens (the kernel body was not read), and its `clean_logits` (the -inf fill
   of the rest) defaults to false, not passed by vLLM (deepseek-ai/DeepGEMM csrc/apis/
   attention.hpp:203 / :217 / :237 at 239112c, :234 / :248 / :273 at 38f8ef7; the ref vLLM
   0.13 installs was not read); the top-k takes `seq_lens` for each row's end (its CUDA source
   is not in the wheel; read in a later vLLM's csrc/sampler.cu, where only the sort algorithm
   depends on the width). So the logits' bytes are the pairs', 4 B each, written once and read
   once, whatever max_model_len;
5. the main attention: MLA over those keys only, min(seen, index_topk) (fewer seen: all of
   them), in the absorbed MQA 576 / 512 form for every token, prefill included
   (flashmla_sparse.py:960 "MQA 576/512 approach for both prefill and decode"), so with
   index_topk or fewer keys in sight it is dense MLA's absorbed attention, key for key. The
   kernel is handed index_topk index slots a token whatever the context, -1 where fewer keys
   are seen (:659); whether it computes those is the kernel's (vLLM 0.13's FlashMLA sparse
   kernels do: kvplan.perf.attention_kernel.sparse_slots, kvplan.engines.vllm.
   attention_backend), as is its head padding (kvplan.perf.attention_kernel.sparse_head_factor).

SGLang (python/sglang/srt/layers/attention/dsa_backend.py, 0.5.23; nsa_indexer.py) runs the same
indexer (DeepGEMM's fp8 logits, a top-k of index_topk) and sparse MLA kernels. Its default
kernels in 0.5.23 (arg_groups/overrides.py:601-741 `_dsa_split_backend_resolution`, after
:491 `_dsa_kv_cache_dtype_default`: an auto KV dtype is fp8_e4m3 on SM 10.x and up, bfloat16
below): a bf16 cache runs flashmla_sparse for prefill, fa3 for decode on Hopper (trtllm on
SM 10.x); an fp8_e4m3 cache runs flashmla_kv on Hopper, trtllm on SM 10.x, prefill and decode.
Its flashmla_sparse prefill pads the rank's heads to 64 on Hopper, 128 on SM 10.x
(dsa_backend.py:2819-2837) and passes each row's valid length (`topk_length`, :2853-2858: the
kernel skips the -1 tail, unlike vLLM 0.13's). Not declared: the defaults differ by release
(0.5.4-0.5.8 server_args.py `nsa_prefill_backend` "flashmla_sparse", switched to flashmla_kv
or flashmla_auto by the KV dtype and device; 0.5.3 "flashmla_prefill") and kvplan's
SparseMlaKernel has no release bound nor phase; kvplan prices SGLang's steps with the keys
seen and no head padding.

Efficiencies: the logits kernel runs at the GPU's FP8 peak x the attention fraction (as an FP8
attention), its bytes at the HBM fraction; nothing fitted here.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan.model.attention import LatentAttention
from kvplan.model.spec import IndexerSpec, ModelSpec

# DeepSeek's indexer cache: one fp32 scale per 128 fp8 values (deepseek_v2.py:846-850, vLLM
# 0.13.0: quant_block_size = 128, head_dim + head_dim // quant_block_size * 4 bytes).
INDEXER_QUANT_BLOCK = 128
INDEXER_SCALE_BYTES = 4
LOGIT_BYTES = 4  # fp8_mqa_logits / fp8_paged_mqa_logits write float32 logits


def causal_pairs(start: int, count: int, window: int | None = None,
                 chunk: int | None = None) -> int:
    """Query-key pairs of tokens at positions start .. start + count - 1 (each attends to
    itself and the keys before it), within a window of `window` keys or the current chunk of
    `chunk` tokens; neither: the whole prefix."""
    if count <= 0:
        return 0
    end = start + count  # token at position p attends min(p + 1, W) keys
    if chunk is not None:
        # Position p attends (p mod C) + 1 keys: sum over whole and partial chunks.
        def upto(n: int) -> int:  # pairs of positions 0 .. n - 1
            full, rest = divmod(n, chunk)
            return full * chunk * (chunk + 1) // 2 + rest * (rest + 1) // 2

        return upto(end) - upto(start)
    if window is None or end <= window:
        return (start + 1 + end) * count // 2
    if start >= window:
        return count * window
    # Positions start .. window - 1 grow, window .. end - 1 are capped.
    grow = window - start
    return (start + 1 + window) * grow // 2 + (count - grow) * window


@dataclass(frozen=True, kw_only=True)
class IndexerCost:
    """The lightning indexer's work (module docstring, steps 1-4): per (query, key) pair
    `pair_flops` FP8 FLOPs and one fp32 logit written and read back by the top-k; per key seen,
    `key_bytes` read; per token, `proj_params` replicated projection weights (2 FLOPs each)."""

    n_heads: int
    head_dim: int
    proj_params: int

    @property
    def pair_flops(self) -> int:
        return 2 * self.n_heads * self.head_dim

    @property
    def key_bytes(self) -> int:
        return self.head_dim + self.head_dim // INDEXER_QUANT_BLOCK * INDEXER_SCALE_BYTES

    @property
    def proj_kernels(self) -> int:
        return 3  # wq_b, wk, weights_proj (deepseek_v2.py:822-841, 0.13.0)


class FullAttentionCost:
    """Every key a query sees is computed over (module docstring)."""

    indexer: IndexerCost | None = None
    absorbed_prefill = False  # MLA's prefill: the naive form (kvplan.perf.flops.prefill_form)
    selects_keys = False  # the main attention's keys are the keys seen

    def main_keys(self, seen: float) -> float:
        """Keys one decode token's main attention computes over, of `seen` it could."""
        return seen

    def prompt_mean_keys(self, prompt: int) -> float:
        """Mean keys per token of a causal prompt of `prompt` tokens: (prompt + 1) / 2."""
        return (prompt + 1) / 2

    def chunk_pairs(self, start: int, count: int) -> int:
        """Main-attention pairs of a prefill chunk of `count` tokens from position `start`."""
        return causal_pairs(start, count)

    def layer_indexer(self, layer: int) -> IndexerCost | None:
        """The indexer layer `layer` runs; None: none."""
        return None


@dataclass(frozen=True, kw_only=True)
class SparseIndexedCost(FullAttentionCost):
    """DeepSeek Sparse Attention (module docstring): the indexer over every key seen, the main
    attention over min(seen, topk) of them, MLA absorbed in prefill too."""

    topk: int
    indexer: IndexerCost | None = None
    # IndexCache (kvplan.model.spec.IndexerSpec.skipped_layers): layers that reuse an earlier
    # layer's top-k and run no indexer.
    skipped_layers: frozenset[int] = frozenset()
    absorbed_prefill = True
    selects_keys = True

    def main_keys(self, seen: float) -> float:
        return min(seen, self.topk)

    def prompt_mean_keys(self, prompt: int) -> float:
        """Position p (1-based) computes over min(p, topk) keys; their mean."""
        return causal_pairs(0, prompt, window=self.topk) / prompt if prompt > 0 else 0.0

    def chunk_pairs(self, start: int, count: int) -> int:
        # min(p + 1, topk) keys at position p: the pairs of a window of topk keys.
        return causal_pairs(start, count, window=self.topk)

    def layer_indexer(self, layer: int) -> IndexerCost | None:
        return None if layer in self.skipped_layers else self.indexer


FULL_ATTENTION = FullAttentionCost()


def indexer_cost(spec: ModelSpec, indexer: IndexerSpec) -> IndexerCost:
    """`indexer`'s costs on `spec` (module docstring, step 1: its projections' weights)."""
    att = spec.attention
    q_in = att.q_lora_rank if isinstance(att, LatentAttention) and att.q_lora_rank else \
        spec.hidden_size
    n, d, h = indexer.index_n_heads, indexer.index_head_dim, spec.hidden_size
    return IndexerCost(n_heads=n, head_dim=d, proj_params=q_in * n * d + h * d + h * n)


def attention_cost(spec: ModelSpec) -> FullAttentionCost:
    """The cost type of `spec`'s attention (module docstring)."""
    if spec.indexer is None or not isinstance(spec.attention, LatentAttention):
        return FULL_ATTENTION
    return SparseIndexedCost(topk=spec.indexer.index_topk,
                             indexer=indexer_cost(spec, spec.indexer),
                             skipped_layers=spec.indexer.skipped_layers)
