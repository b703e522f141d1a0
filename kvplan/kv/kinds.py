"""One type per cache kind: what a single layer keeps for a request, on one rank.

Follows vLLM's ``vllm/v1/kv_cache_interface.py`` (0.32), where each layer registers a spec that
answers its own page size and the most memory one request can take. Each kind here answers:

- ``bytes_per_token``: what one more token of context costs (0 for recurrent state);
- ``state_bytes``: what one request costs whatever its length (0 for token caches);
- ``page_bytes(block_size)``: one page (vLLM: one block of one layer);
- ``pages_per_request(context, block_size, ...)``: the pages one request holds at ``context``.

Every rule is written once with integer arithmetic that also works element-wise on numpy arrays
(``cdiv`` and ``minimum``), so ``kvplan sweep`` evaluates exactly the functions ``estimate`` does.
``RankCaches`` sums a model's layers: what ``estimate``, ``compare`` and ``sweep`` report.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from kvplan._util.units import cdiv


def _minimum(a: Any, b: Any) -> Any:
    """min() for ints, element-wise for numpy arrays (no numpy import for plain ints)."""
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    import numpy as np  # only when a sweep passes arrays

    return np.minimum(a, b)


@dataclass(frozen=True, kw_only=True)
class RequestShape:
    """What besides the context decides the pages a request holds (vLLM's scheduler settings).

    ``in_flight_tokens``: tokens scheduled but not yet settled; vLLM 0.32's
    ``VllmConfig.max_in_flight_tokens`` = max_concurrent_batches x max_num_batched_tokens (PP + 1
    batches with async scheduling, else the PP degree: kvplan.engines.vllm.alloc.
    vllm_max_concurrent_batches). Sliding and chunked layers keep these.
    ``mamba_align``: mamba cache mode ``align`` (prefix caching on) rather than ``none``;
    ``num_spec_tokens``: speculative tokens, one more state page each.
    """

    in_flight_tokens: int = 8192
    mamba_align: bool = False
    num_spec_tokens: int = 0


class CacheKind:
    """Base of the kinds. ``group_key`` is what must match for two layers to share a group."""

    label: str = "cache"
    # The layer's attention cache (K and V, or MLA's latent), the part `kvplan compare` rewrites;
    # not the indexer's keys nor a recurrent state.
    is_attention: ClassVar[bool] = False
    # Whether one token costs a whole number of bytes (`bytes_per_token`): not so for a cache
    # of one row per several tokens in fixed pages (kvplan.kv.compressed).
    per_token: ClassVar[bool] = True

    @property
    def bytes_per_token(self) -> int:
        return 0

    @property
    def state_bytes(self) -> int:
        return 0

    @property
    def is_state(self) -> bool:
        return False

    @property
    def shares_prefix(self) -> bool:
        """Whether a prefix cached once serves every request (whole blocks of every token):
        full attention and MLA do; windows, chunks and recurrent states are per request."""
        return False

    def page_bytes(self, block_size: int) -> int:
        raise NotImplementedError

    def pages_per_request(self, context: Any, block_size: int, shape: RequestShape) -> Any:
        raise NotImplementedError

    def tokens_held(self, context: Any, shape: RequestShape) -> Any:
        """Tokens of context whose cache this layer holds at once (its cost per request, before
        paging; 0 for recurrent state)."""
        return 0

    def steady_pages(self, context: Any, block_size: int) -> Any:
        """Pages one request holds in decode at `context` tokens, with no chunked prefill in
        flight (token caches only)."""
        raise NotImplementedError

    def steady_bytes(self, context: Any, block_size: int) -> Any:
        """Bytes one request holds in decode at `context` tokens, paged, with no chunked
        prefill in flight (what `kvplan estimate` reports per sequence)."""
        raise NotImplementedError

    def unpaged_bytes(self, context: Any) -> Any:
        """The same without block rounding."""
        raise NotImplementedError

    def group_key(self) -> tuple[Any, ...]:
        return (type(self).__name__, self.label)

    def describe(self) -> str:
        return self.label


@dataclass(frozen=True, kw_only=True)
class FullAttentionCache(CacheKind):
    """K and V (or one MLA row) for every token of the context.

    vLLM ``FullAttentionSpec``: page = block_size x bytes_per_token; one request at max_model_len
    holds ``cdiv(max_model_len, block_size)`` pages (``max_memory_usage_bytes``).
    """

    token_bytes: int
    label: str = "full"
    is_attention: ClassVar[bool] = True

    @property
    def bytes_per_token(self) -> int:
        return self.token_bytes

    @property
    def shares_prefix(self) -> bool:
        return True

    def page_bytes(self, block_size: int) -> int:
        return block_size * self.token_bytes

    def pages_per_request(self, context: Any, block_size: int, shape: RequestShape) -> Any:
        return cdiv(context, block_size)

    def tokens_held(self, context: Any, shape: RequestShape) -> Any:
        return context

    def steady_pages(self, context: Any, block_size: int) -> Any:
        return cdiv(context, block_size)

    def steady_bytes(self, context: Any, block_size: int) -> Any:
        return self.steady_pages(context, block_size) * self.page_bytes(block_size)

    def unpaged_bytes(self, context: Any) -> Any:
        return self.tokens_held(context, RequestShape()) * self.token_bytes

    def group_key(self) -> tuple[Any, ...]:
        return (type(self).__name__, self.label, self.token_bytes)

    def describe(self) -> str:
        return f"{self.label} attention"


# The indexer quantises its keys to fp8 in blocks of this many values, one fp32 scale each; so
# does DeepSeek-V3.2's fp8_ds_mla row (FlashMLA-sparse): 512 fp8 latent values, 512 / 128 = 4
# fp32 scales and 64 bf16 RoPE values = 512 + 16 + 128 = 656 bytes per token per layer.
INDEXER_QUANT_BLOCK = 128
FP8_DS_MLA_LATENT = 512
FP8_DS_MLA_ROPE = 64
FP8_DS_MLA_ROW_BYTES = (FP8_DS_MLA_LATENT + FP8_DS_MLA_LATENT // INDEXER_QUANT_BLOCK * 4
                        + FP8_DS_MLA_ROPE * 2)


@dataclass(frozen=True, kw_only=True)
class MLACache(FullAttentionCache):
    """MLA's compressed latent plus the shared RoPE key (DeepSeek-V2 sec. 2.1), one row per token,
    not split by TP. vLLM ``MLAAttentionSpec``: one "head" of ``kv_lora_rank + qk_rope_head_dim``
    elements; with DeepSeek-V3.2's ``fp8_ds_mla`` layout the row is 656 bytes (512 fp8 latent
    values, 4 fp32 scales, 64 bf16 RoPE values; FlashMLA-sparse)."""

    label: str = "mla"

    def describe(self) -> str:
        return f"MLA latent ({self.token_bytes} B/token)"


@dataclass(frozen=True, kw_only=True)
class IndexerCache(FullAttentionCache):
    """The lightning indexer's key cache of DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5):
    ``index_head_dim`` fp8 values plus one fp32 scale per 128, one row per token per layer
    (vLLM ``DeepseekV32IndexerCache``, an ``MLAAttentionSpec`` of head size 132 in uint8), in
    the same group as the layer's MLA cache."""

    label: str = "indexer"
    is_attention: ClassVar[bool] = False

    @classmethod
    def for_head_dim(cls, index_head_dim: int) -> IndexerCache:
        """vLLM DeepseekV32IndexerCache: head_size = index_head_dim + index_head_dim // 128 * 4
        bytes (128 fp8 values + 4: 132 B per token per layer for DeepSeek-V3.2)."""
        scales = cdiv(index_head_dim, INDEXER_QUANT_BLOCK)
        return cls(token_bytes=index_head_dim + scales * 4)

    def describe(self) -> str:
        return f"sparse-attention indexer keys ({self.token_bytes} B/token)"


@dataclass(frozen=True, kw_only=True)
class SlidingWindowCache(FullAttentionCache):
    """The last ``window`` tokens. vLLM ``SlidingWindowSpec.max_admission_blocks_per_request``:
    ``cdiv(min(window - 1 + in_flight_tokens, context), block_size) + 1`` -- a chunked prefill
    keeps window - 1 earlier tokens plus the tokens in flight, and the window may start inside
    a block (block 4, window 4: [XXCD][EF] holds the window [CDEF] in two blocks).
    Attention sinks (gpt-oss) are learned weights, not cache."""

    window: int
    label: str = "sliding"

    @property
    def shares_prefix(self) -> bool:
        return False

    def pages_per_request(self, context: Any, block_size: int, shape: RequestShape) -> Any:
        tokens = _minimum(self.window - 1 + shape.in_flight_tokens, context)
        return cdiv(tokens, block_size) + 1

    def tokens_held(self, context: Any, shape: RequestShape) -> Any:
        return _minimum(self.window, context)

    def steady_pages(self, context: Any, block_size: int) -> Any:
        # The last W tokens straddle at most cdiv(W - 1, block) + 1 blocks.
        return _minimum(cdiv(context, block_size), cdiv(self.window - 1, block_size) + 1)

    def group_key(self) -> tuple[Any, ...]:
        return (type(self).__name__, self.label, self.token_bytes, self.window)

    def describe(self) -> str:
        return f"sliding window {self.window:,}"


@dataclass(frozen=True, kw_only=True)
class ChunkedLocalCache(FullAttentionCache):
    """Chunked local attention (Llama-4: RoPE layers attend within fixed chunks; NoPE layers are
    global). vLLM ``ChunkedLocalAttentionSpec``: ``cdiv(min(chunk + in_flight_tokens, context),
    block_size)`` pages."""

    chunk: int
    label: str = "chunked"

    @property
    def shares_prefix(self) -> bool:
        return False

    def pages_per_request(self, context: Any, block_size: int, shape: RequestShape) -> Any:
        return cdiv(_minimum(self.chunk + shape.in_flight_tokens, context), block_size)

    def tokens_held(self, context: Any, shape: RequestShape) -> Any:
        return _minimum(self.chunk, context)

    def steady_pages(self, context: Any, block_size: int) -> Any:
        # The current chunk (at most `chunk` tokens, starting on a chunk boundary).
        return _minimum(cdiv(context, block_size), cdiv(self.chunk - 1, block_size) + 1)

    def group_key(self) -> tuple[Any, ...]:
        return (type(self).__name__, self.label, self.token_bytes, self.chunk)

    def describe(self) -> str:
        return f"chunked local {self.chunk:,}"


@dataclass(frozen=True, kw_only=True)
class StateTensor:
    name: str
    shape: tuple[int, ...]
    dtype_bytes: int
    dtype: str

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype_bytes


@dataclass(frozen=True, kw_only=True)
class RecurrentState(CacheKind):
    """A fixed-size state per request (Mamba1/2 conv + SSM state, Gated DeltaNet, KDA, short
    conv, lightning attention): vLLM ``MambaSpec``; page = the state's bytes (padded to the
    attention page by the allocator); pages per request = ``shape.state_pages``."""

    kind: str  # mamba1, mamba2, gated_delta_net, kda, short_conv, linear_attention
    tensors: tuple[StateTensor, ...]
    # Extra pages in 'align' mode: Mamba2 keeps one prefill checkpoint
    # (MambaMixer2.get_kv_cache_spec: num_prefill_checkpoint_blocks=1).
    checkpoint_pages: int = 0
    label: str = "state"

    @property
    def state_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @property
    def is_state(self) -> bool:
        return True

    def page_bytes(self, block_size: int) -> int:
        return self.state_bytes

    def steady_bytes(self, context: Any, block_size: int) -> Any:
        return self.state_bytes + 0 * context

    def unpaged_bytes(self, context: Any) -> Any:
        return self.state_bytes + 0 * context

    def pages_per_request(self, context: Any, block_size: int, shape: RequestShape) -> Any:
        """MambaSpec.max_memory_usage_bytes / page: 1 + spec tokens in mode 'none'; in 'align'
        the running state, the last block-aligned one and any checkpoint: 2 + spec (+1)."""
        if shape.mamba_align:
            return 2 + shape.num_spec_tokens + self.checkpoint_pages
        return 1 + shape.num_spec_tokens

    def group_key(self) -> tuple[Any, ...]:
        return (type(self).__name__, self.kind, self.state_bytes)

    def describe(self) -> str:
        parts = " + ".join(f"{t.name} {'x'.join(map(str, t.shape))} {t.dtype}"
                           for t in self.tensors)
        return f"{self.kind} state ({parts})"


@dataclass(frozen=True, kw_only=True)
class LayerCaches:
    """The caches one layer owns on one rank (none: MLP-only layers, layers that reuse another
    layer's KV; two: Falcon-H1's parallel attention + Mamba2, MLA + indexer keys)."""

    index: int
    caches: tuple[CacheKind, ...]
    draft: bool = False  # a speculative-decoding draft layer (MTP / EAGLE)

    @property
    def bytes_per_token(self) -> int:
        return sum(c.bytes_per_token for c in self.caches)

    @property
    def state_bytes(self) -> int:
        return sum(c.state_bytes for c in self.caches)


def _counted(layers: tuple[LayerCaches, ...]) -> Counter[CacheKind]:
    return Counter(c for lc in layers for c in lc.caches)


@dataclass(frozen=True, kw_only=True)
class RankCaches:
    """Every cache one rank holds, layer by layer (none for MLP-only layers and layers that
    reuse another's KV; draft layers last): what `kvplan estimate` sums, `kvplan compare` shows
    per scheme and `kvplan sweep` evaluates over arrays of contexts."""

    layers: tuple[LayerCaches, ...]

    @property
    def per_token(self) -> bool:
        """Whether every cache has whole bytes per token (`bytes_per_token` answers)."""
        return all(c.per_token for lc in self.layers for c in lc.caches)

    @property
    def bytes_per_token(self) -> int:
        """Every token cache, all layers, one token (SGLang's cell size)."""
        return sum(lc.bytes_per_token for lc in self.layers)

    @property
    def attention_bytes_per_token(self) -> int:
        """The attention caches alone (not indexer keys): what `kvplan compare` rewrites."""
        return sum(c.bytes_per_token for lc in self.layers for c in lc.caches if c.is_attention)

    @property
    def state_bytes(self) -> int:
        """Recurrent state, one copy, all layers."""
        return sum(lc.state_bytes for lc in self.layers)

    @property
    def num_attention_layers(self) -> int:
        """Layers of the model (not draft layers) that own an attention cache on this rank."""
        return sum(1 for lc in self.layers
                   if not lc.draft and any(c.is_attention for c in lc.caches))

    def pages_per_sequence(self, context: Any, block_size: int) -> Any:
        """Token-cache pages (one layer's block each) one request holds in decode."""
        total: Any = 0
        for cache, count in _counted(self.layers).items():
            if not cache.is_state:
                total = total + count * cache.steady_pages(context, block_size)
        return total

    def sequence_bytes(self, context: Any, block_size: int) -> Any:
        """One request at `context` tokens (ints or numpy arrays), paged, states included."""
        total: Any = 0
        for cache, count in _counted(self.layers).items():
            total = total + count * cache.steady_bytes(context, block_size)
        return total

    def sequence_bytes_unpaged(self, context: Any) -> Any:
        """The same without block rounding."""
        total: Any = 0
        for cache, count in _counted(self.layers).items():
            total = total + count * cache.unpaged_bytes(context)
        return total
