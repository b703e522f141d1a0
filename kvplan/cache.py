"""KV-cache sizes: per token per layer, per token, per paged block, per sequence, per batch.

Pure functions over a ModelSpec; exact integer bytes. Storage is counted in bits and rounded up
to bytes once per token per layer (the unit an engine lays out), so sub-byte dtypes stay exact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .dtypes import DTYPES, DType
from .errors import InputError
from .spec import ModelSpec
from .units import cdiv

DEFAULT_BLOCK_SIZE = 16


@dataclass(frozen=True, kw_only=True)
class LayerKV:
    """The cache one layer holds on one rank."""

    index: int
    elements_per_token: int
    bytes_per_token: int
    sliding_window: int | None  # None: full attention

    def blocks_for_context(self, context: int, block_size: int) -> int:
        """Blocks this layer holds for one sequence of `context` tokens.

        Full attention keeps every token: ceil(context / block_size) blocks.
        A sliding window of W tokens needs the last W tokens, which straddle at most
        ceil((W - 1) / block_size) + 1 blocks (e.g. W = 16, block 16: 2 blocks when the window
        is not block-aligned) -- "the window plus one block", as vLLM's SlidingWindowSpec counts it.
        """
        full = cdiv(context, block_size)
        if self.sliding_window is None:
            return full
        return min(full, cdiv(self.sliding_window - 1, block_size) + 1)


@dataclass(frozen=True, kw_only=True)
class KVLayout:
    """A model's KV cache on one rank, for one dtype, tensor-parallel degree and block size."""

    spec: ModelSpec
    kv_dtype: DType
    block_size: int
    tp: int
    elements_per_token_per_layer: int
    bytes_per_token_per_layer: int
    layers: tuple[LayerKV, ...]  # the layers that own a cache on this rank

    @property
    def num_kv_layers(self) -> int:
        return len(self.layers)

    @property
    def bytes_per_token(self) -> int:
        """Every layer's cache for one token (what SGLang calls the cell size)."""
        return sum(layer.bytes_per_token for layer in self.layers)

    @property
    def bytes_per_block_per_layer(self) -> int:
        """vLLM's page: one layer's slice of one block."""
        return self.block_size * self.bytes_per_token_per_layer

    @property
    def bytes_per_block(self) -> int:
        """One block across all layers."""
        return self.block_size * self.bytes_per_token

    def blocks_per_sequence(self, context: int) -> int:
        """Layer-blocks (pages) one sequence holds, summed over layers."""
        return sum(layer.blocks_for_context(context, self.block_size) for layer in self.layers)

    def bytes_per_sequence(self, context: int) -> int:
        """One sequence of `context` tokens, block-rounded, sliding windows honoured."""
        return sum(
            layer.blocks_for_context(context, self.block_size) * self.block_size
            * layer.bytes_per_token
            for layer in self.layers
        )


def check_tp(spec: ModelSpec, tp: int) -> None:
    """vLLM (ModelConfig.verify_with_parallel_config) and SGLang refuse a tensor-parallel degree
    that does not divide the query heads."""
    heads = spec.attention.num_attention_heads
    if tp > 1 and heads % tp:
        raise InputError(
            f"--tp: {tp} does not divide num_attention_heads ({heads}) of {spec.id}; "
            "vLLM and SGLang refuse this layout")


def kv_layout(spec: ModelSpec, *, kv_dtype: str = "bf16", block_size: int = DEFAULT_BLOCK_SIZE,
              tp: int = 1, layer_range: range | None = None) -> KVLayout:
    """The per-rank KV layout; `layer_range` selects a pipeline stage's layers (default all)."""
    if block_size < 1:
        raise InputError(f"--block-size: must be >= 1, got {block_size}")
    if tp < 1:
        raise InputError(f"--tp: must be >= 1, got {tp}")
    try:
        dtype = DTYPES[kv_dtype]
    except KeyError:
        raise InputError(
            f"--kv-dtype: expected one of {', '.join(DTYPES)}, got {kv_dtype!r}"
        ) from None
    elements = spec.attention.elements_per_token(tp)
    per_layer_bytes = dtype.bytes_for(elements)
    # Layers that reuse another layer's cache (cross-layer sharing) allocate nothing.
    layers = tuple(
        LayerKV(index=i, elements_per_token=elements, bytes_per_token=per_layer_bytes,
                sliding_window=window)
        for i, (window, owns) in enumerate(zip(spec.layer_windows, spec.kv_owner_flags,
                                               strict=True))
        if owns and (layer_range is None or i in layer_range)
    )
    return KVLayout(spec=spec, kv_dtype=dtype, block_size=block_size, tp=tp,
                    elements_per_token_per_layer=elements,
                    bytes_per_token_per_layer=per_layer_bytes, layers=layers)


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """`kvplan estimate`'s numbers. Field names are the JSON contract."""

    model: str
    model_name: str
    attention_kind: str
    context: int
    batch: int
    kv_dtype: str
    block_size: int
    tp: int
    num_layers: int
    num_kv_layers: int
    num_sliding_layers: int
    num_kv_shared_layers: int
    sliding_window: int | None
    elements_per_token_per_layer: int
    bytes_per_token_per_layer: int
    bytes_per_token: int
    bytes_per_block_per_layer: int
    bytes_per_block: int
    blocks_per_sequence: int
    bytes_per_sequence_unpaged: int
    bytes_per_sequence: int
    bytes_per_batch: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def estimate(spec: ModelSpec, *, context: int, batch: int = 1, kv_dtype: str = "bf16",
             block_size: int = DEFAULT_BLOCK_SIZE, tp: int = 1) -> Estimate:
    if context < 1:
        raise InputError(f"--context: must be >= 1, got {context}")
    if batch < 1:
        raise InputError(f"--batch: must be >= 1, got {batch}")
    check_tp(spec, tp)
    layout = kv_layout(spec, kv_dtype=kv_dtype, block_size=block_size, tp=tp)
    per_sequence = layout.bytes_per_sequence(context)
    return Estimate(
        model=spec.id,
        model_name=spec.name,
        attention_kind=spec.kind.value,
        context=context,
        batch=batch,
        kv_dtype=layout.kv_dtype.name,
        block_size=block_size,
        tp=tp,
        num_layers=spec.num_hidden_layers,
        num_kv_layers=layout.num_kv_layers,
        num_sliding_layers=sum(1 for w in spec.layer_windows if w is not None),
        num_kv_shared_layers=spec.num_kv_shared_layers,
        sliding_window=spec.sliding_window,
        elements_per_token_per_layer=layout.elements_per_token_per_layer,
        bytes_per_token_per_layer=layout.bytes_per_token_per_layer,
        bytes_per_token=layout.bytes_per_token,
        bytes_per_block_per_layer=layout.bytes_per_block_per_layer,
        bytes_per_block=layout.bytes_per_block,
        blocks_per_sequence=layout.blocks_per_sequence(context),
        bytes_per_sequence_unpaged=sum(
            min(context, layer.sliding_window or context) * layer.bytes_per_token
            for layer in layout.layers
        ),
        bytes_per_sequence=per_sequence,
        bytes_per_batch=per_sequence * batch,
    )
