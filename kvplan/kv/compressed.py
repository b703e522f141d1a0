"""DeepSeek-V4's caches: compressed sparse attention (one type per kind, as kvplan.kv.kinds).

DeepSeek-V4 (vLLM ``vllm/models/deepseek_v4/``; read at 0.32, the same in 0.33 and 0.34) keeps,
per layer of ``compress_ratios`` r (0 or 1: none; 4: CSA with an indexer; 128: HCA):

- every layer: a sliding window of ``sliding_window`` uncompressed rows (``DeepseekV4SWACache``,
  a ``SlidingWindowMLASpec`` of its own block, 64);
- r > 1: the compressed KV, one row per r tokens (``DeepseekV4Attention.get_kv_cache_spec``, an
  ``MLAAttentionSpec`` with ``tokens_per_state=r`` over the cache block) and the compressor's
  running state (``CompressorStateCache``: fp32 kv + score rows of the last ``coff x r``
  tokens, coff = 2 when r = 4 else 1; a ``SlidingWindowMLASpec`` of block 4 (r = 4) or 8);
- r = 4: the indexer's compressed keys (``DeepseekV4IndexerCache``, ``tokens_per_state=4``) and
  the indexer compressor's state (head 128, so a quarter of the main one).

With DeepSeek's ``fp8_ds_mla`` format (FlashMLA, the CPU backend) a row is 584 bytes: 448 fp8
NoPE values, 64 bf16 RoPE values (128 B) and 8 B of UE8M0 scales
(``state_content_bytes=584``), and every page is padded up to a multiple of 576 B
(``alignment=576``, kv_cache_interface.py ``_apply_alignment_padding``).

Unlike kvplan.kv.kinds, a page here is a fixed block of the kind's own (``block_size``; None: the
cache block, 256 for V4), and a compressed cache has no whole number of bytes per token: these
kinds answer page questions (`page_bytes`, `pages_per_request`, `steady_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from kvplan._util.errors import UnmodelledError
from kvplan._util.units import cdiv
from kvplan.kv.kinds import CacheKind, LayerCaches, RequestShape, _minimum
from kvplan.model.attention import CompressedSparseAttention

# DeepseekV4SWACache (v1/attention/backends/mla/sparse_swa.py): packed_bytes_per_token=584,
# packed_page_alignment=576, block_size=64; the main compressor's state block (compressor.py
# CompressorStateCache): 4 tokens at ratio 4, 8 at ratio 128; fp32 state elements.
FP8_DS_MLA_V4_ROW_BYTES = 584
FP8_DS_MLA_V4_PAGE_ALIGNMENT = 576
V4_SWA_BLOCK = 64
V4_STATE_BLOCKS = {4: 4, 128: 8}
V4_STATE_ELEMENT_BYTES = 4  # torch.float32


def _round_up(n: int, multiple: int) -> int:
    return cdiv(n, multiple) * multiple


@dataclass(frozen=True, kw_only=True)
class PagedRowCache(CacheKind):
    """Rows of ``row_bytes`` in pages of ``block_size`` tokens (None: the cache block), one row
    per ``tokens_per_state`` tokens, each page padded to ``alignment`` bytes."""

    row_bytes: int
    tokens_per_state: int = 1
    alignment: int = 1
    block_size: int | None = None
    per_token: ClassVar[bool] = False

    @property
    def bytes_per_token(self) -> int:
        raise UnmodelledError(
            f"{self.describe()}: a cache paged in fixed blocks has no whole bytes per token; "
            "kvplan sizes it by pages")

    def block(self, cache_block: int) -> int:
        """Tokens one page of this kind covers."""
        return self.block_size or cache_block

    def page_bytes(self, block_size: int) -> int:
        """AttentionSpec.page_size_bytes: 1 head x (block // tokens_per_state) rows x row bytes,
        rounded up to the alignment (the page_size_padded of _apply_alignment_padding)."""
        rows = self.block(block_size) // self.tokens_per_state
        return _round_up(rows * self.row_bytes, self.alignment)

    def group_key(self) -> tuple[Any, ...]:
        return (type(self).__name__, self.label, self.row_bytes, self.tokens_per_state,
                self.alignment, self.block_size)

    def steady_bytes(self, context: Any, block_size: int) -> Any:
        return self.steady_pages(context, block_size) * self.page_bytes(block_size)

    def unpaged_bytes(self, context: Any) -> Any:
        return self.tokens_held(context, RequestShape()) // self.tokens_per_state * self.row_bytes


@dataclass(frozen=True, kw_only=True)
class CompressedKVCache(PagedRowCache):
    """The compressed KV of a CSA (ratio 4) or HCA (ratio 128) layer: one row per
    ``tokens_per_state`` tokens for the whole context. vLLM ``MLAAttentionSpec(tokens_per_state=
    r)``, a full-attention spec: ``cdiv(max_model_len, block)`` pages per request
    (FullAttentionSpec.max_memory_usage_bytes)."""

    label: str = "compressed"
    is_attention: ClassVar[bool] = True

    @property
    def shares_prefix(self) -> bool:
        return True

    def pages_per_request(self, context: Any, block_size: int, shape: RequestShape) -> Any:
        return cdiv(context, self.block(block_size))

    def tokens_held(self, context: Any, shape: RequestShape) -> Any:
        return context

    def steady_pages(self, context: Any, block_size: int) -> Any:
        return cdiv(context, self.block(block_size))

    def describe(self) -> str:
        return f"compressed KV 1:{self.tokens_per_state} ({self.row_bytes} B/row)"


@dataclass(frozen=True, kw_only=True)
class CompressedIndexerCache(CompressedKVCache):
    """The sparse indexer's compressed keys (CSA layers): ``index_head_dim`` fp8 values and one
    fp32 scale per 128 (132 B; MXFP4 with ``indexer_kv_dtype=mxfp4``: 64 + 4 = 68 B) per 4
    tokens. vLLM ``DeepseekV4IndexerCache``: an ``MLAAttentionSpec`` like the compressed KV."""

    label: str = "indexer"
    is_attention: ClassVar[bool] = False

    def describe(self) -> str:
        return f"indexer keys 1:{self.tokens_per_state} ({self.row_bytes} B/row)"


@dataclass(frozen=True, kw_only=True)
class SlidingRowCache(PagedRowCache):
    """The last ``window`` rows of a layer in its own pages. vLLM ``SlidingWindowMLASpec``
    (a SlidingWindowSpec): ``cdiv(min(window - 1 + in_flight_tokens, context), block) + 1``
    pages per request (max_admission_blocks_per_request; extra_retained_tokens is 0 without
    speculative decoding)."""

    window: int
    label: str = "sliding"
    is_attention: ClassVar[bool] = True

    def pages_per_request(self, context: Any, block_size: int, shape: RequestShape) -> Any:
        tokens = _minimum(self.window - 1 + shape.in_flight_tokens, context)
        return cdiv(tokens, self.block(block_size)) + 1

    def tokens_held(self, context: Any, shape: RequestShape) -> Any:
        return _minimum(self.window, context)

    def steady_pages(self, context: Any, block_size: int) -> Any:
        block = self.block(block_size)
        return _minimum(cdiv(context, block), cdiv(self.window - 1, block) + 1)

    def group_key(self) -> tuple[Any, ...]:
        return (*super().group_key(), self.window)

    def describe(self) -> str:
        return f"sliding window {self.window:,} ({self.row_bytes} B/row)"


@dataclass(frozen=True, kw_only=True)
class CompressorState(SlidingRowCache):
    """A compressor's running state: fp32 kv and score rows of the last ``coff x ratio``
    tokens (``CompressorStateCache``: state_dim = 2 x coff x head_dim, sliding_window = coff x
    ratio), a sliding window of its own block (4 at ratio 4, 8 at ratio 128)."""

    label: str = "compressor state"
    is_attention: ClassVar[bool] = False

    def describe(self) -> str:
        return f"compressor state, window {self.window} ({self.row_bytes} B/row)"


def v4_layer_caches(att: CompressedSparseAttention, layer: int, *,
                    indexer_row_bytes: int | None = None) -> tuple[PagedRowCache, ...]:
    """Layer `layer`'s caches in the fp8_ds_mla format, in vLLM's registration order
    (attention.py DeepseekV4Attention.__init__: the indexer with its keys and its compressor's
    state, the SWA cache, then the compressed KV and the compressor's state). Ratio 1 (0 in
    the config, and the MTP layers): the sliding window only. `indexer_row_bytes`: None for
    the default fp8 indexer keys (DeepseekV4Indexer: index_head_dim + index_head_dim // 128
    x 4 = 132 B)."""
    if att.head_dim != 512 or att.qk_rope_head_dim != 64:
        raise UnmodelledError(
            f"head_dim {att.head_dim} / qk_rope_head_dim {att.qk_rope_head_dim}: the fp8_ds_mla "
            "V4 row (448 fp8 NoPE + 64 bf16 RoPE + 8 B scales = 584 B) is defined for 512 / 64")
    swa = SlidingRowCache(row_bytes=FP8_DS_MLA_V4_ROW_BYTES, window=att.sliding_window,
                          alignment=FP8_DS_MLA_V4_PAGE_ALIGNMENT, block_size=V4_SWA_BLOCK)
    ratio = att.compress_ratio(layer)
    if ratio == 1:
        return (swa,)
    coff = 2 if ratio == 4 else 1  # DeepseekCompressor: overlap (coff 2) at ratio 4

    def state(dim: int) -> CompressorState:
        return CompressorState(row_bytes=2 * coff * dim * V4_STATE_ELEMENT_BYTES,
                               window=coff * ratio, alignment=FP8_DS_MLA_V4_PAGE_ALIGNMENT,
                               block_size=V4_STATE_BLOCKS[ratio])

    kv = CompressedKVCache(row_bytes=FP8_DS_MLA_V4_ROW_BYTES, tokens_per_state=ratio,
                           alignment=FP8_DS_MLA_V4_PAGE_ALIGNMENT)
    caches: list[PagedRowCache] = []
    if ratio == 4:
        keys = indexer_row_bytes or att.index_head_dim + att.index_head_dim // 128 * 4
        caches.append(CompressedIndexerCache(row_bytes=keys, tokens_per_state=ratio,
                                             alignment=FP8_DS_MLA_V4_PAGE_ALIGNMENT))
        caches.append(state(att.index_head_dim))
    caches += [swa, kv, state(att.head_dim)]
    return tuple(caches)


def v4_layers(att: CompressedSparseAttention, num_hidden_layers: int
              ) -> tuple[LayerCaches, ...]:
    """Every main layer's caches (one rank holds them all: each spec has max_tp_shards=1, so
    tensor parallelism replicates them)."""
    return tuple(LayerCaches(index=i, caches=v4_layer_caches(att, i))
                 for i in range(num_hidden_layers))


def v4_rank_layers(att: CompressedSparseAttention, num_hidden_layers: int, *,
                   layer_range: range | None = None, num_draft_layers: int = 0
                   ) -> tuple[LayerCaches, ...]:
    """`v4_layers` for kvplan.kv.cache.layer_caches: a pipeline stage's layers (`layer_range`;
    None: all); the MTP draft layers' caches are refused (not checked against vLLM)."""
    if num_draft_layers:
        raise UnmodelledError("DeepSeek-V4 with speculative decoding (MTP): the draft layers' "
                              "caches are not modelled")
    return tuple(lc for lc in v4_layers(att, num_hidden_layers)
                 if layer_range is None or lc.index in layer_range)
