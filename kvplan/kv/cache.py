"""A model's caches on one rank (kvplan.kv.kinds, one type per kind) and `kvplan estimate`'s sizes:
per token per layer, per token, per paged block, per sequence, per batch.

Pure functions over a ModelSpec; exact integer bytes. Storage is counted in bits and rounded up
to bytes once per token per layer (the unit an engine lays out), so sub-byte dtypes stay exact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

from kvplan._util.dtypes import DTYPES, DType
from kvplan._util.errors import InputError, UnmodelledError, one_of
from kvplan.kv.compressed import v4_rank_layers
from kvplan.kv.kinds import (
    FP8_DS_MLA_ROW_BYTES,
    ChunkedLocalCache,
    FullAttentionCache,
    IndexerCache,
    LayerCaches,
    MLACache,
    RankCaches,
    RecurrentState,
    SlidingWindowCache,
    StateTensor,
)
from kvplan.model.attention import Attention, CompressedSparseAttention, LatentAttention
from kvplan.model.spec import ModelSpec, RecurrentSpec

DEFAULT_BLOCK_SIZE = 16


def check_tp(spec: ModelSpec, tp: int) -> None:
    """Refuse a tensor-parallel degree that vLLM and SGLang refuse, with the engine's own rule.

    1. The query heads split evenly: vLLM ``ModelConfig.verify_with_parallel_config``
       (vllm/config/model.py): "Total number of attention heads (H) must be divisible by tensor
       parallel size (T)"; SGLang's ModelConfig checks the same.
    2. KV heads split evenly or are replicated evenly: vLLM's ``QKVParallelLinear``
       (vllm/model_executor/layers/linear.py) shards ``divide(num_kv_heads, tp)`` when
       tp < num_kv_heads and replicates ``divide(tp, num_kv_heads)`` times otherwise, and
       ``divide`` asserts exact division (vllm/distributed/utils.py); SGLang's
       QKVParallelLinear is the same code. So 24 heads / 6 KV heads at TP 4 is refused.
    MLA has no KV heads to split (the latent is replicated on every rank): rule 1 only.
    """
    if tp < 1:
        raise InputError(f"--tp: must be >= 1, got {tp}")
    if tp == 1:
        return
    heads = spec.attention.num_attention_heads
    if heads % tp:
        raise InputError(
            f"--tp: {tp} does not divide num_attention_heads ({heads}) of {spec.id}; "
            "vLLM and SGLang refuse this layout")
    for att in spec.attention_shapes:
        _check_kv_heads(spec, getattr(att, "num_key_value_heads", None), tp)


def _check_kv_heads(spec: ModelSpec, kv: int | None, tp: int) -> None:
    if kv and kv % tp and tp % kv:
        raise InputError(
            f"--tp: {tp} neither divides nor is a multiple of num_key_value_heads ({kv}) of "
            f"{spec.id}; vLLM and SGLang refuse this layout (KV heads are split or replicated "
            "evenly across ranks)")


def check_token_sized(spec: ModelSpec, what: str) -> None:
    """Refuse `what` (a command or option whose rules read the KV cache per token, or the time
    model) in one line for a model whose caches have no whole bytes per token: DeepSeek-V4's
    compressed rows (kvplan.kv.compressed), which `estimate` and `plan` size by vLLM's pages.
    The caches answer (`CacheKind.per_token`), not the attention's type."""
    if not rank_caches(spec).per_token:
        raise UnmodelledError(
            f"{what}: {spec.id} has DeepSeek-V4's compressed sparse attention (one row per 4 or "
            "128 tokens in pages of its own), which kvplan sizes with estimate and plan on "
            "vLLM only")


def resolve_kv_dtype(name: str) -> DType:
    """The KV-cache dtype named `name`; a one-line InputError if kvplan does not know it."""
    return one_of(DTYPES, name, "--kv-dtype")


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """`kvplan estimate`'s numbers. Field names are the JSON contract."""

    model: str
    model_name: str
    attention_kind: str
    context: int
    batch: int
    kv_dtype: str
    block_size: int  # effective: vLLM raises it so a page holds a recurrent state
    tp: int
    num_layers: int
    num_kv_layers: int
    num_sliding_layers: int
    num_kv_shared_layers: int
    sliding_window: int | None
    # None where a cache has no whole bytes per token (DeepSeek-V4: kvplan.kv.compressed).
    elements_per_token_per_layer: int | None
    bytes_per_token_per_layer: int | None
    bytes_per_token: int | None
    bytes_per_block_per_layer: int | None
    bytes_per_block: int | None
    blocks_per_sequence: int
    bytes_per_sequence_unpaged: int
    bytes_per_sequence: int
    bytes_per_batch: int
    requested_block_size: int = 0
    num_chunked_layers: int = 0
    num_recurrent_layers: int = 0
    num_draft_layers: int = 0
    state_bytes_per_request: int = 0  # recurrent state, one copy, all layers, this rank
    state_padding_percent: float | None = None
    mamba_cache_mode: str | None = None
    blocks_per_request: int | None = None  # the engine's pages per request at `context`
    kv_cache_groups: tuple[dict[str, object], ...] = ()
    engine: str | None = None
    engine_version: str | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class EngineKVConfig(Protocol):
    """What `estimate` reads of an engine's own KV allocator (the engine implements it; kv/
    never imports an engine)."""

    block_size: int
    requested_block_size: int
    state_padding_percent: float | None
    mamba_cache_mode: str | None

    @property
    def engine(self) -> str: ...

    @property
    def profile(self) -> Any: ...

    def describe_groups(self) -> list[dict[str, Any]]: ...

    def pages_per_request(self, context: Any) -> Any: ...

    def steady_pool_blocks(self, context: Any) -> Any: ...

    @property
    def bytes_per_block(self) -> int: ...


def estimate(spec: ModelSpec, *, context: int, batch: int = 1, kv_dtype: str = "bf16",
             block_size: int = DEFAULT_BLOCK_SIZE, requested_block_size: int | None = None,
             tp: int = 1, engine_config: EngineKVConfig | None = None,
             num_draft_layers: int = 0, ssm_dtype: str = "auto", num_spec_tokens: int = 0,
             conv_dtype: str | None = None) -> Estimate:
    """Sizes per token, block and sequence on one rank, paged by `block_size` (the block asked:
    `requested_block_size`, None: the same). `engine_config` (the engine's own allocator for
    this model, e.g. kvplan.engines.vllm.alloc.VllmKVConfig) adds the engine's groups and its
    effective block size (raised for recurrent state)."""
    if context < 1:
        raise InputError(f"--context: must be >= 1, got {context}")
    if batch < 1:
        raise InputError(f"--batch: must be >= 1, got {batch}")
    check_tp(spec, tp)
    requested = block_size if requested_block_size is None else requested_block_size
    groups: tuple[dict[str, object], ...] = ()
    extra: dict[str, Any] = {}
    if engine_config is not None:
        block_size = engine_config.block_size
        requested = engine_config.requested_block_size
        groups = tuple(engine_config.describe_groups())
        extra = {"state_padding_percent": engine_config.state_padding_percent,
                 "mamba_cache_mode": engine_config.mamba_cache_mode,
                 "blocks_per_request": int(engine_config.pages_per_request(context)),
                 "engine": engine_config.engine, "engine_version": engine_config.profile.version}
    if block_size < 1:
        raise InputError(f"--block-size: must be >= 1, got {block_size}")
    dtype = resolve_kv_dtype(kv_dtype)
    caches = rank_caches(spec, kv_dtype=kv_dtype, tp=tp, ssm_dtype=ssm_dtype,
                         num_draft_layers=num_draft_layers, num_spec_tokens=num_spec_tokens,
                         conv_dtype=conv_dtype)
    per_sequence = int(caches.sequence_bytes(context, block_size))
    blocks = int(caches.pages_per_sequence(context, block_size))
    pool_blocks = None if engine_config is None else engine_config.steady_pool_blocks(context)
    if pool_blocks is not None:
        # A packed pool (DeepSeek-V4 on vLLM): a request holds whole pool blocks.
        blocks, per_sequence = int(pool_blocks), int(pool_blocks) * engine_config.bytes_per_block
    per_layer = attention_token_bytes(spec, kv_dtype, tp) if caches.per_token else None
    per_token = caches.bytes_per_token if caches.per_token else None
    return Estimate(
        model=spec.id,
        model_name=spec.name,
        attention_kind=spec.kind.value,
        context=context,
        batch=batch,
        kv_dtype=dtype.name,
        block_size=block_size,
        tp=tp,
        num_layers=spec.num_hidden_layers,
        num_kv_layers=caches.num_attention_layers,
        num_sliding_layers=sum(1 for w in spec.layer_windows if w is not None),
        num_kv_shared_layers=spec.num_kv_shared_layers,
        sliding_window=spec.sliding_window,
        elements_per_token_per_layer=(spec.attention.elements_per_token(tp) if caches.per_token
                                      else None),
        bytes_per_token_per_layer=per_layer,
        bytes_per_token=per_token,
        bytes_per_block_per_layer=None if per_layer is None else block_size * per_layer,
        bytes_per_block=None if per_token is None else block_size * per_token,
        blocks_per_sequence=blocks,
        bytes_per_sequence_unpaged=int(caches.sequence_bytes_unpaged(context)),
        bytes_per_sequence=per_sequence,
        bytes_per_batch=per_sequence * batch,
        requested_block_size=requested,
        num_chunked_layers=sum(1 for c in spec.layer_chunks if c is not None),
        num_recurrent_layers=spec.num_recurrent_layers,
        num_draft_layers=num_draft_layers,
        state_bytes_per_request=caches.state_bytes,
        kv_cache_groups=groups,
        **extra,
    )


# ---------------------------------------------------------------------------------------------
# Per-layer cache specs (every cache kind, one rank).

STATE_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}



def activation_dtype(spec: ModelSpec) -> str:
    """The dtype the engine computes in (its conv state and 'auto' SSM state use it): the
    weight dtype, except that float32 checkpoints are downcast to bf16 by dtype=auto in vLLM and
    SGLang, and quantized weights compute in bf16."""
    return "float16" if spec.weight_dtype == "fp16" else "bfloat16"


def _divide(n: int, tp: int, what: str) -> int:
    if n % tp:
        raise InputError(f"--tp: {tp} does not divide the {what} ({n}); vLLM refuses this "
                         "layout (vllm.distributed.divide)")
    return n // tp


def recurrent_state(rec: RecurrentSpec, *, tp: int, conv_dtype: str,
                    ssm_dtype: str = "auto", num_spec: int = 0) -> RecurrentState:
    """One request's recurrent state on one rank, as vLLM's MambaStateShapeCalculator shapes it
    (``vllm/model_executor/layers/mamba/mamba_utils.py``, 0.32) and MambaStateDtypeCalculator
    types it: the conv state in the model dtype; the SSM state in ``ssm_dtype`` ('auto': the
    config's ssm_dtype, else the conv dtype; KDA's recurrent state defaults to float32)."""
    if ssm_dtype == "auto":
        ssm_dtype = rec.default_ssm_dtype(conv_dtype)
    dtypes = {"conv": conv_dtype}
    tensors = tuple(
        StateTensor(name=name, shape=shape, dtype=dtypes.get(name, ssm_dtype),
                    dtype_bytes=STATE_DTYPE_BYTES[dtypes.get(name, ssm_dtype)])
        for name, shape in rec.state_shapes(tp, num_spec, _divide))
    return RecurrentState(kind=rec.kind, tensors=tensors,
                          checkpoint_pages=rec.checkpoint_pages)


def attention_token_bytes(spec: ModelSpec, kv_dtype: str, tp: int,
                          att: Attention | None = None) -> int:
    """Bytes per token of one attention layer's cache on one rank (MLA: the latent row; with
    the sparse indexer at fp8, the 656-byte fp8_ds_mla row, unless the engine's backend keeps
    the standard one-byte row: `LatentAttention.standard_fp8_row`). `att`: a layer's own shape
    (`ModelSpec.attention_at`); default the spec's."""
    att = spec.attention if att is None else att
    dtype = resolve_kv_dtype(kv_dtype)
    if isinstance(att, LatentAttention) and spec.indexer is not None and dtype.name == "fp8" \
            and not att.standard_fp8_row:
        if att.kv_lora_rank != 512 or att.qk_rope_head_dim != 64:
            raise InputError("--kv-dtype fp8: the fp8_ds_mla layout is defined for a 512 + 64 "
                             "latent only")
        return FP8_DS_MLA_ROW_BYTES
    return dtype.bytes_for(att.elements_per_token(tp))


def _caches_latent(spec: ModelSpec) -> bool:
    att = spec.attention
    return isinstance(att, LatentAttention) and not att.decompressed_cache


def attention_cache(spec: ModelSpec, index: int, token_bytes: int) -> FullAttentionCache:
    """Layer `index`'s attention cache kind. A window or chunk decides it whatever the
    attention (no released MLA model has either; `kvplan compare`'s MLA rewrite of a
    sliding-window model keeps its local layers local)."""
    window = spec.layer_windows[index] if spec.layer_windows else None
    if window is not None:
        return SlidingWindowCache(token_bytes=token_bytes, window=window)
    chunk = spec.chunk(index)
    if chunk is not None:
        return ChunkedLocalCache(token_bytes=token_bytes, chunk=chunk)
    if _caches_latent(spec):
        return MLACache(token_bytes=token_bytes)
    return FullAttentionCache(token_bytes=token_bytes)


def layer_caches(spec: ModelSpec, *, kv_dtype: str = "bf16", tp: int = 1,
                 layer_range: range | None = None, ssm_dtype: str = "auto",
                 num_draft_layers: int = 0, num_spec_tokens: int = 0,
                 conv_dtype: str | None = None) -> tuple[LayerCaches, ...]:
    """Every layer's caches on one rank, in layer order; draft layers (speculative decoding)
    follow the main stack. `layer_range` selects a pipeline stage (draft layers go to the
    last stage, as vLLM places the MTP module). `conv_dtype`: the recurrent conv state's dtype
    (None: the model's compute dtype, as vLLM keeps it; SGLang keeps bfloat16)."""
    if isinstance(spec.attention, CompressedSparseAttention):
        # DeepSeek-V4 keeps its own kinds in its own pages, fp8_ds_mla whatever `kv_dtype`
        # (the engine refuses a KV dtype it does not run): kvplan.kv.compressed.
        return v4_rank_layers(spec.attention, spec.num_hidden_layers, layer_range=layer_range,
                              num_draft_layers=num_draft_layers)
    token_bytes = attention_token_bytes(spec, kv_dtype, tp)
    indexer = None
    if spec.indexer is not None:
        indexer = IndexerCache.for_head_dim(spec.indexer.index_head_dim)
    state = None
    if spec.recurrent is not None:
        state = recurrent_state(spec.recurrent, tp=tp,
                                conv_dtype=conv_dtype or activation_dtype(spec),
                                ssm_dtype=ssm_dtype, num_spec=num_spec_tokens)
    owners = spec.kv_owner_flags
    out = []
    n = spec.num_hidden_layers
    for i in range(n):
        if layer_range is not None and i not in layer_range:
            continue
        caches = []
        if spec.has_attention(i) and owners[i]:
            own = token_bytes if not spec.layer_attention else attention_token_bytes(
                spec, kv_dtype, tp, spec.attention_at(i))
            caches.append(attention_cache(spec, i, own))
            if indexer is not None and spec.indexer is not None and spec.indexer.keeps(i):
                caches.append(indexer)
        if spec.has_recurrent(i):
            assert state is not None
            caches.append(state)
        out.append(LayerCaches(index=i, caches=tuple(caches)))
    last_stage = layer_range is None or layer_range.stop == n
    if num_draft_layers and last_stage:
        draft = [MLACache(token_bytes=token_bytes) if _caches_latent(spec)
                 else FullAttentionCache(token_bytes=token_bytes)]
        if indexer is not None:
            draft.append(indexer)
        for j in range(num_draft_layers):
            out.append(LayerCaches(index=n + j, caches=tuple(draft), draft=True))
    return tuple(out)


def rank_caches(spec: ModelSpec, *, kv_dtype: str = "bf16", tp: int = 1,
                layer_range: range | None = None, ssm_dtype: str = "auto",
                num_draft_layers: int = 0, num_spec_tokens: int = 0,
                conv_dtype: str | None = None) -> RankCaches:
    """`layer_caches` as one rank's whole (kvplan.kv.kinds.RankCaches): bytes per token, per
    request at a context, state bytes."""
    return RankCaches(layers=layer_caches(
        spec, kv_dtype=kv_dtype, tp=tp, layer_range=layer_range, ssm_dtype=ssm_dtype,
        num_draft_layers=num_draft_layers, num_spec_tokens=num_spec_tokens,
        conv_dtype=conv_dtype))
