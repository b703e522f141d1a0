"""An engine's attention kernel as plain data (`VarlenAttentionKernel`): the engines declare
theirs in CostTraits.attention_kernels (kvplan.engines.base), kvplan.perf.attention_kernel
prices its query tiles."""

from __future__ import annotations

from dataclasses import dataclass

from kvplan.model.attention import HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class VarlenAttentionKernel:
    """A FlashAttention-style varlen attention kernel an engine runs by default, as plain data
    (kvplan.perf.attention_kernel prices its query tiles): one thread block computes a tile of
    `tile_rows` query rows against every key it attends, whether the rows hold queries or
    padding. `packs_gqa`: "always" (the query heads sharing a KV head fill one tile's rows),
    "single_token_steps" (only when every query of the kernel call is one token long and the
    layer has no window; otherwise each query head has tiles of its own), "never". Where:
    GPUs of these compute-capability majors, non-latent attention, these KV dtypes, head
    dimensions that are multiples of 8 up to `max_head_dim`, and models with attention sinks
    (`sinks` True), without them (False) or either (None)."""

    name: str
    tile_rows: int
    packs_gqa: str
    compute_capability_majors: tuple[int, ...]
    kv_dtypes: tuple[str, ...]
    max_head_dim: int
    source: str
    sinks: bool | None = None
    split_decode: SplitDecode | None = None  # its split-KV path for small decode-only calls
    # Keys a program loads per step of its loop over the sequence's keys in a call with a
    # prefill (kvplan.perf.attention_kernel.prefill_kv_reads); None: not read.
    prefill_key_tile: int | None = None


@dataclass(frozen=True, kw_only=True)
class SplitDecode:
    """A varlen kernel's split-KV path for a call of single-token queries with few programs,
    as plain data (kvplan.perf.split_decode prices it): when every query is one token long and
    (tokens // (tile_rows / g) + sequences) x KV heads <= `max_programs` (g: query heads per
    KV head), each sequence's keys are cut into `segments` segments of whole `tile`-key tiles,
    each program of a segment that holds keys writes its float32 partial output (the head
    size's elements), maximum and exp-sum, and a second kernel reads them back to reduce. In
    the engine releases `releases` (those read) only."""

    segments: int
    max_programs: int
    tile: int
    releases: tuple[str, ...]
    source: str


@dataclass(frozen=True, kw_only=True)
class SparseMlaKernel:
    """A sparse MLA kernel (DeepSeek's sparse attention: a spec with an indexer) that computes
    a whole multiple of `head_multiple` query heads per rank, whatever the rank holds: the heads
    beyond the rank's own are padding, computed and dropped (kvplan.perf.attention_kernel
    prices them). Where: GPUs of the compute-capability majors in `head_multiple` (major ->
    multiple), these KV dtypes, ranks holding fewer than `below_heads` query heads (None: any).
    `all_slots`: the kernel computes every one of the index_topk index slots a token is handed,
    the -1 ones (fewer keys seen than index_topk) masked, not skipped: its FLOPs are index_topk
    keys' a token whatever the context, its bytes the keys seen (no load for a -1 slot)."""

    name: str
    head_multiple: tuple[tuple[int, int], ...]
    kv_dtypes: tuple[str, ...]
    source: str
    all_slots: bool = False
    below_heads: int | None = None

    def multiple(self, major: int) -> int | None:
        """The head multiple on a GPU of compute-capability `major`; None: not run there."""
        return dict(self.head_multiple).get(major)


@dataclass(frozen=True, kw_only=True)
class KvDtypeAttention:
    """An attention kernel an engine runs in its KV cache's dtype, not the model's, as plain data
    (kvplan.perf.attention_kernel.attention_math prices it): in `phases` steps, on GPUs of these
    compute-capability majors, with a cache of one of `kv_dtypes`, from engine version `since`
    on, for the models `applies` names: `latent` True, dense latent-attention (MLA, no sparse
    indexer) models whose config.json names one of `architectures` first; `latent` False,
    per-head (non-latent) attention whose K and V head dims are both in `head_dims` (the
    backend's sizes: another backend runs the rest), any architecture. Before it the engine
    launches one elementwise cast to that dtype of each of its bf16 inputs named in `casts`
    ("q", "k", "v"), per attention layer."""

    name: str
    phases: tuple[str, ...]
    compute_capability_majors: tuple[int, ...]
    kv_dtypes: tuple[str, ...]
    since: str
    casts: tuple[str, ...]
    source: str
    architectures: tuple[str, ...] = ()
    latent: bool = True
    head_dims: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.latent and self.casts:  # kvplan.perf.roofline sizes MLA's casts only
            raise ValueError(f"{self.name}: casts are declared for latent attention only")

    def applies(self, spec: ModelSpec, *, major: int, kv_dtype: str, phase: str) -> bool:
        """Whether the kernel computes `spec`'s attention in a `phase` step on a GPU of
        compute-capability `major` with a `kv_dtype` cache (the release already filtered)."""
        if phase not in self.phases or major not in self.compute_capability_majors \
                or kv_dtype not in self.kv_dtypes:
            return False
        att = spec.attention
        if self.latent:
            arch = spec.architectures[0] if spec.architectures else None
            return isinstance(att, LatentAttention) and spec.indexer is None \
                and arch in self.architectures
        return isinstance(att, HeadAttention) and att.head_dim in self.head_dims \
            and att.v_head_dim in self.head_dims


@dataclass(frozen=True, kw_only=True)
class MlaDecodeLaunches:
    """Kernels an engine's absorbed-MLA decode layer launches beyond the ones kvplan.perf.roofline
    counts for it (its projections' GEMMs, one RoPE kernel, the KV write, one attention kernel),
    as plain data: on `platform` GPUs of these compute capabilities, for models whose config.json
    names one of `architectures` first and states a rope_scaling (the engine's YaRN rotary
    class), where the rank holds one of `heads_per_rank` query heads (the attention backend the
    engine picks by it), from engine version `since` on. `extra_kernels` per attention layer,
    each charged at the kernel floor in a decode step (kvplan.perf.attention_kernel.
    mla_decode_extra_kernels); the engine's declaration names the code of each."""

    name: str
    platform: str
    compute_capabilities: tuple[tuple[int, int], ...]
    architectures: tuple[str, ...]
    heads_per_rank: tuple[int, ...]
    since: str
    extra_kernels: int
    source: str


@dataclass(frozen=True, kw_only=True)
class SharedExpertFusion:
    """An engine that runs a MoE model's one shared expert inside its fused MoE, as one more
    expert every token picks (top_k + 1), as plain data: on `platform` GPUs of these compute
    capabilities, for models whose config.json names one of `architectures` first with
    `routed_experts` routed experts and one shared expert, from engine version `since` on,
    unless the launch runs an all-to-all MoE (DeepEP), one of `not_quantizations`, or experts
    split over EP > 1 ranks where `under_ep` is False. The shared MLP then launches no GEMM of
    its own (kvplan.perf.shared_fusion.engine_folds_shared_expert); the engine's declaration
    names the code."""

    name: str
    platform: str
    compute_capabilities: tuple[tuple[int, int], ...]
    architectures: tuple[str, ...]
    routed_experts: int
    not_quantizations: tuple[str, ...]
    since: str
    source: str
    under_ep: bool = True  # kept with expert parallelism (EP > 1)
