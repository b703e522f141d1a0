"""KV layouts, one type per attention kind, each answering "how many elements per token per layer".

Follows the shape of vLLM's ``vllm/v1/kv_cache_interface.py``: a frozen spec per layout, with
derived sizes as methods rather than ``if kind == ...`` chains at every call site.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kvplan._util.errors import UnmodelledError


class AttentionKind(str, Enum):
    mha = "mha"
    gqa = "gqa"
    mqa = "mqa"
    mla = "mla"
    none = "none"  # no attention layer at all (Mamba, Mamba2): `HeadAttention.none()`
    csa = "csa"  # DeepSeek-V4's compressed sparse attention (`CompressedSparseAttention`)


@dataclass(frozen=True, kw_only=True)
class HeadAttention:
    """MHA, GQA and MQA: every KV head caches one K vector and one V vector per token.

    Per token per layer: ``num_key_value_heads * (head_dim + v_head_dim)`` elements.
    MHA has ``num_key_value_heads == num_attention_heads``; MQA has 1; GQA anything between that
    divides the query heads.
    """

    kind: AttentionKind
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int
    attention_bias: bool = False
    o_proj_bias: bool = False

    def kv_heads_per_rank(self, tp: int = 1) -> int:
        # vLLM (`ModelConfig.get_num_kv_heads`) and SGLang both use max(1, kv // tp): with fewer
        # KV heads than ranks each rank keeps a replica of one head.
        return max(1, self.num_key_value_heads // tp)

    def elements_per_token(self, tp: int = 1) -> int:
        return self.kv_heads_per_rank(tp) * (self.head_dim + self.v_head_dim)

    @classmethod
    def none(cls) -> HeadAttention:
        """A model with no attention layer (pure Mamba / Mamba2): no heads, nothing cached per
        token; its recurrent state is the spec's `recurrent` section."""
        return cls(kind=AttentionKind.none, num_attention_heads=0, num_key_value_heads=0,
                   head_dim=0, v_head_dim=0)

    @property
    def q_head_dim(self) -> int:
        return self.head_dim

    def short(self) -> str:
        if self.kind is AttentionKind.none:
            return "none"
        return f"{self.num_key_value_heads}x({self.head_dim}+{self.v_head_dim})"

    def describe(self) -> str:
        if self.kind is AttentionKind.none:
            return "no attention (recurrent state only)"
        return (
            f"{self.kind.value.upper()}: {self.num_key_value_heads} KV heads x "
            f"(K {self.head_dim} + V {self.v_head_dim})"
        )


@dataclass(frozen=True, kw_only=True)
class LatentAttention:
    """MLA (DeepSeek-V2, arXiv 2405.04434 sec. 2.1): per token per layer the cache holds one
    compressed latent c_kv (``kv_lora_rank`` = d_c) and one decoupled RoPE key shared by all heads
    (``qk_rope_head_dim`` = d_h^R): ``d_c + d_h^R`` elements, no K/V pair, no per-head factor.

    The latent is not split across tensor-parallel ranks: every rank holds all of it (vLLM treats
    MLA as a single KV head; SGLang likewise), so TP does not shrink MLA's per-GPU cache.
    """

    num_attention_heads: int
    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None
    kind: AttentionKind = AttentionKind.mla
    # Set by an engine whose implementation of the model up-projects the latent and caches
    # per-head K and V instead (vLLM's MiniCPM3: a plain Attention layer with
    # num_kv_heads = the query heads and K, V of qk_nope + qk_rope dims, V zero-padded;
    # vllm/model_executor/models/minicpm3.py). The weights are MLA's either way.
    decompressed_cache: bool = False
    # Set by an engine whose sparse MLA backend (DeepSeek's sparse attention: a spec with an
    # indexer) keeps an fp8 cache as the standard row, kv_lora_rank + qk_rope_head_dim values
    # of one byte each, not DeepSeek's 656-B fp8_ds_mla row (vLLM's FLASHINFER_MLA_SPARSE on
    # SM 10.x: kvplan.engines.vllm.kv_dtype).
    standard_fp8_row: bool = False

    def kv_heads_per_rank(self, tp: int = 1) -> int:
        return max(1, self.num_attention_heads // tp) if self.decompressed_cache else 1

    def elements_per_token(self, tp: int = 1) -> int:
        if self.decompressed_cache:
            return self.kv_heads_per_rank(tp) * 2 * self.q_head_dim
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def q_head_dim(self) -> int:
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    def as_cached_heads(self) -> HeadAttention:
        """The per-head attention a decompressed cache holds (for allocating it on a device)."""
        d = self.q_head_dim
        return HeadAttention(kind=AttentionKind.mha, num_attention_heads=self.num_attention_heads,
                             num_key_value_heads=self.num_attention_heads, head_dim=d,
                             v_head_dim=d)

    def short(self) -> str:
        if self.decompressed_cache:
            return f"{self.num_attention_heads}x({self.q_head_dim}+{self.q_head_dim}) decompressed"
        return f"{self.kv_lora_rank}+{self.qk_rope_head_dim} latent"

    def describe(self) -> str:
        if self.decompressed_cache:
            return (f"MLA weights, cached decompressed: {self.num_attention_heads} heads x "
                    f"(K {self.q_head_dim} + V {self.q_head_dim}, V zero-padded)")
        return f"MLA: latent {self.kv_lora_rank} + RoPE key {self.qk_rope_head_dim}"


@dataclass(frozen=True, kw_only=True)
class CompressedSparseAttention:
    """DeepSeek-V4's attention (model card: Compressed Sparse Attention + Heavily Compressed
    Attention): one KV head of ``head_dim`` (NoPE + ``qk_rope_head_dim`` RoPE) per token, kept
    raw for the last ``sliding_window`` tokens of every layer and, on a layer whose
    ``compress_ratios`` entry r is 4 (CSA) or 128 (HCA), also compressed to one row per r
    tokens; CSA layers add a lightning indexer (``index_n_heads`` x ``index_head_dim`` queries,
    one ``index_head_dim`` key per compressed row, ``index_topk`` rows selected).
    ``compress_ratios`` lists the main layers then the MTP layers (0: window only)."""

    num_attention_heads: int
    head_dim: int
    qk_rope_head_dim: int
    sliding_window: int
    compress_ratios: tuple[int, ...]
    q_lora_rank: int
    o_lora_rank: int
    o_groups: int
    index_head_dim: int
    index_n_heads: int
    index_topk: int
    # The V4 block's other weight-shaping fields, read with its attention from the same
    # config.json (kvplan.sources.hf_dsv4) for its weights (kvplan.weights.csa): the
    # hyper-connection width (hc_mult residual streams), the first `num_hash_layers` MoE layers
    # routed by a token-id table, and the routed experts' checkpoint format (vLLM 0.32
    # models/deepseek_v4/quant_config.py: "fp4" MXFP4, the default, or "fp8" blocks).
    hc_mult: int = 1
    num_hash_layers: int = 0
    expert_dtype: str = "fp4"

    def compress_ratio(self, layer: int) -> int:
        """Layer `layer`'s ratio as vLLM reads it (DeepseekV4Attention: max(1, ratio); layers
        past the list, the MTP ones, keep the window only)."""
        if layer < len(self.compress_ratios):
            return max(1, self.compress_ratios[layer])
        return 1

    @property
    def kind(self) -> AttentionKind:
        return AttentionKind.csa

    @property
    def q_head_dim(self) -> int:
        return self.head_dim

    def kv_heads_per_rank(self, tp: int = 1) -> int:
        """One KV head on every rank: vLLM's V4 cache specs are replicated across tensor-parallel
        ranks (kv_cache_interface.py max_tp_shards=1)."""
        return 1

    def elements_per_token(self, tp: int = 1) -> int:
        """No whole number: a compressed layer keeps one row per 1 or 128 tokens and a window
        (kvplan.kv.compressed sizes it by pages)."""
        raise UnmodelledError(
            "DeepSeek-V4's compressed sparse attention has no whole elements per token (one row "
            "per 4 or 128 tokens, plus a window): kvplan sizes it by vLLM's pages")

    def short(self) -> str:
        return f"csa {self.head_dim} (window {self.sliding_window}, 1:4 / 1:128)"

    def describe(self) -> str:
        return (f"compressed sparse attention: window {self.sliding_window} + rows of "
                f"{self.head_dim} compressed 1:4 (indexed) or 1:128")


Attention = HeadAttention | LatentAttention | CompressedSparseAttention
