"""What each vLLM release does differently in its KV-cache allocator: `VllmProfile`, one row per
release where a rule changed, each change placed at the release whose wheel first has it (read in
every PyPI wheel 0.10.0 - 0.34.0 under vllm/, one patch release per minor: a row named X.Y
stands for the X.Y patch read; a row named X.Y.Z where the wheels of one minor differ). The
rules themselves are kvplan.engines.vllm.alloc's; the mamba prefix-caching modes of the older
releases that kvplan does not size are refused here (`check_mamba_prefix_caching`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import newest_at, version_key

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class VllmProfile:
    """What one vLLM version does differently. `source` names where each rule is read."""

    version: str
    # Mixed attention types: group size = the smaller type's layer count, or the larger's when
    # it is under `group_size_ratio` x the smaller (None: always the smaller).
    group_size_ratio: float | None
    # "GPU KV cache size: N tokens": "blocks" = num_blocks // num_groups x the groups' smallest
    # block (<= 0.20.1), "concurrency" = int(max_concurrency x max_model_len) (>= 0.20.2).
    reported_tokens: str
    # Hybrid KV-cache manager on for Llama-4's chunked local attention by default: envs.py's
    # VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default, which config/vllm.py reads
    # (unset to "0": need_disable_hybrid_kv_cache_manager when attention_chunk_size is set).
    # Off: chunked layers become FullAttentionSpec (kv_cache_utils unify_hybrid_kv_cache_specs).
    chunked_local_hybrid: bool
    # Prefix caching on by default for recurrent-state hybrids (then mamba cache mode 'align').
    hybrid_prefix_caching: bool
    # Mamba cache mode 'align' exists (prefix caching keeps extra state pages); before it, a
    # request held one state page whatever prefix caching said.
    mamba_align_mode: bool = True
    # Attention-free models (pure Mamba) report one request's max_model_len as the block: 0.32
    # model_executor/models/config.py MambaModelConfig (mamba_block_size = max_model_len with
    # prefix caching off), v1/engine/core.py (cache_config.block_size = the groups' smallest).
    attention_free_block_is_max_len: bool = False
    # The "blocks" print takes the groups' smallest block (min_block_size) for every model; False:
    # a single-type model (_get_kv_cache_config_uniform_type) prints num_blocks x CacheConfig's
    # block instead (0.10.x), which for a pure Mamba model is not its state block.
    reported_block_is_groups_min: bool = True
    # Mamba2 layers keep one prefill checkpoint page per request in mode 'align' (0.32.0
    # model_executor/layers/mamba/mamba_mixer2.py:1098-1108 num_prefill_checkpoint_blocks=1;
    # 0.31.0 and older: no such spec field set, 2 pages).
    mamba2_prefill_checkpoint: bool = False
    # Gated DeltaNet layers export prefill checkpoints in mamba cache mode 'align' where their
    # prefill runs on FlashInfer (CUDA SM 9.0; see vllm_gdn_checkpoints): one more state page
    # per request and an attention block that is a multiple of 64 tokens (0.33.0
    # model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:691-696 and :746-750,
    # platforms/interface.py:1089-1094, v1/attention/backends/gdn_attn.py:34).
    gdn_prefill_checkpoint: bool = False
    # An MLA model whose pages cannot be unified allocates its sliding-window MLA layers as
    # full attention (kvplan.engines.vllm.mla_fallback); before, vLLM fails to start.
    sliding_mla_full_fallback: bool = False
    notes: str = ""


# One row per release where a rule changed, each built from the one before with only what that
# release changed (dataclasses.replace); the comment above a row names the change and where it is
# read. Ordered oldest to newest; a version resolves to the newest profile at or below it.

# 0.10.0: no switch (only EAGLE turns the manager off); 0.10.1.1 adds the variable, default
# "0" (envs.py:1142; other releases' lines: tests/test_vllm_chunked_hybrid.py). 0.10.0 -
# 0.10.2 kv_cache_utils.py _get_kv_cache_config_uniform_type (0.10.0 :831, 0.10.2 :856):
# "GPU KV cache size" = num_blocks x cache_config.block_size for a single-type model.
_V0_10 = VllmProfile(version="0.10", mamba_align_mode=False, reported_block_is_groups_min=False,
                     group_size_ratio=None, reported_tokens="blocks",
                     chunked_local_hybrid=True,
                     hybrid_prefix_caching=False,
                     notes="group size = the smaller type's layer count; tokens = blocks x size")
# 0.10.1.1 envs.py: VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE, default "0".
_V0_10_1 = replace(_V0_10, version="0.10.1", chunked_local_hybrid=False,
                   notes="chunked local attention turns the hybrid manager off by default")
# 0.11.0 kv_cache_utils.py:1080 (_report_kv_cache_config): every model's print is
# num_blocks // groups x min(group block sizes); a Mamba group's block is mamba_block_size,
# max_model_len with prefix caching off (0.11.0 gpu_model_runner / 0.11.2
# model_executor/models/config.py:291).
_V0_11 = replace(_V0_10_1, version="0.11", reported_block_is_groups_min=True,
                 notes="'GPU KV cache size' takes the groups' smallest block for every model")
# 0.12.0 kv_cache_utils.py:1017 `max_num_layers < min_num_layers * 1.25` (0.11.2: none; the
# same line to 0.17.1 :1043). 0.13.0 envs.py:1432-1434 still "0", read by config/vllm.py
# :905-925: Llama-4's chunked layers run as full attention.
_V0_12 = replace(_V0_11, version="0.12", group_size_ratio=1.25,
                 notes="group size: the larger count when under 1.25x the smaller")
# 0.14.1 envs.py:1468-1470 turns the default to "1" (config/vllm.py:956-976: only EAGLE
# with chunked attention still turns it off); kept to 0.32.0 (envs.py:1941; config/vllm.py
# :2148-2168; every release's line: tests/test_vllm_chunked_hybrid.py).
_V0_14 = replace(_V0_12, version="0.14", chunked_local_hybrid=True,
                 notes="chunked local attention (Llama 4) keeps the hybrid KV-cache manager on "
                       "by default (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1)")
# 0.15.1 model_executor/models/config.py:332-347 (MambaModelConfig, run for every hybrid by
# config/vllm.py:1300-1301): --enable-prefix-caching sets mamba cache mode 'align' ('all'
# for the classes with mamba prefix caching: `check_mamba_prefix_caching`); 0.14.1 :332-349
# turned prefix caching off for the others instead. Still opt-in (hybrids: prefix caching
# off by default to 0.27.1, engine/arg_utils.py).
_V0_15 = replace(_V0_14, version="0.15", mamba_align_mode=True,
                 notes="--enable-prefix-caching on a recurrent hybrid: mamba cache mode 'align'")
# 0.18.1 kv_cache_utils.py:1043 `max_num_layers < min_num_layers * 1.5` (0.17.1 :1043:
# 1.25). Held to the 0.24 logs of tests/data/engine_logs/vllm_hybrid_logs.json:
# Qwen3.6-35B-A3B (club-3090 #652: 300 blocks / (63 + 3 x 2) = 4.35x, 569,878 tokens) and
# Qwen3.6-27B + MTP 3 (club-3090 #295: 424 / (164 + 3 x (2 + 3)) = 2.37x, 620,944 tokens);
# mode 'none' gives 4.55x and 2.41x.
_V0_18 = replace(_V0_15, version="0.18", group_size_ratio=1.5,
                 notes="group size: under 1.5x (gpt-oss-20b + EAGLE: 12 sw + 13 full)")
# 0.19.1 v1/engine/core.py:273 sets cache_config.block_size to the groups' smallest block
# (0.17.1 and 0.18.1: not there): a pure Mamba model's block is max_model_len.
_V0_19 = replace(_V0_18, version="0.19", attention_free_block_is_max_len=True,
                 notes="the block reported is the groups' smallest (pure Mamba: max_model_len)")
# 0.20.2 kv_cache_utils.py:1706 `num_tokens = int(max_concurrency * max_model_len)` (0.19.1
# :1302-1306: blocks // groups x block). 0.20.0 and 0.20.1 are not read: a 0.20.1rc1.dev16
# build still printed the blocks form (vllm_hybrid_logs.json, club-3090 #37: 67,728 tokens
# at 1.06x of 180,000), 0.20.2rc1.dev9 the concurrency form (#75: 188,838 at 1.02x of
# 185,000); vllm issue 43308 (Gemma 4: ~55k tokens on 0.20.0, ~525k on 0.21.0) agrees.
_V0_20_2 = replace(_V0_19, version="0.20.2", reported_tokens="concurrency",
                   notes="'KV cache size: N tokens' = int(max_concurrency x max_model_len)")
# 0.28.0 engine/arg_utils.py:2650 `default_prefix_caching = is_prefix_caching_supported`
# (0.27.1 :2605 `... and not model_config.is_hybrid`; config/model.py: hybrids supported
# from 0.26.0), and models/config.py drops mode 'all' (every hybrid takes 'align').
_V0_28 = replace(_V0_20_2, version="0.28", hybrid_prefix_caching=True,
                 notes="prefix caching on for hybrids: mamba cache mode 'align'")
# 0.32.0 mamba_mixer2.py:1098-1108: Mamba2's prefill checkpoint page in mode 'align'
# (0.20.2 - 0.31.0 mamba_mixer2.py: none).
_V0_32 = replace(_V0_28, version="0.32", mamba2_prefill_checkpoint=True,
                 notes="Mamba2 keeps a prefill checkpoint page per request in mode 'align'")
# 0.33.0 and 0.34.0 read against 0.32.0 (kv_cache_utils.py split into kv_cache_planning.py
# and kv_cache_config_builder.py; grouping, page unification, num_blocks = budget // the
# pool's block and the concurrency print unchanged): the allocator moves only for Gated
# DeltaNet hybrids in mode 'align' on FlashInfer's GDN prefill (0.33.0
# model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:691-696). Their budgets are not
# modelled (kvplan.engines.vllm.unsized.VLLM_UNSIZED_BUDGETS).
_V0_33 = replace(_V0_32, version="0.33", gdn_prefill_checkpoint=True,
                 notes="Gated DeltaNet in mode 'align' on FlashInfer's prefill: a prefill "
                       "checkpoint page per request, block a multiple of 64")
# 0.34.0 v1/core/kv_cache_planning.py:859-894: MLA pages that cannot be unified put
# sliding-window MLA layers in full attention (0.33.0 :819-850: not SlidingWindowMLASpec; see
# kvplan.engines.vllm.mla_fallback). 0.34.0 config/cache.py:185 CacheConfig.DEFAULT_BLOCK_SIZE
# 64 (0.33.0 :185: 16): the block with no --block-size (kvplan.engines.vllm.default_block).
_V0_34 = replace(_V0_33, version="0.34", sliding_mla_full_fallback=True,
                 notes="the allocator as 0.33 at a default block of 64 (16 before), and MLA "
                       "pages that cannot be unified put "
                       "sliding-window MLA layers in full attention; the KV cache sized after "
                       "warm-up on CUDA and ROCm (extensible KV cache): budget not modelled")
VLLM_PROFILES: tuple[VllmProfile, ...] = (
    _V0_10, _V0_10_1, _V0_11, _V0_12, _V0_14, _V0_15, _V0_18, _V0_19, _V0_20_2, _V0_28, _V0_32,
    _V0_33, _V0_34)
# The default: the newest release whose KV budget kvplan models. 0.33 and 0.34 are modelled for
# their allocators but not their budgets (kvplan.engines.vllm.unsized.VLLM_UNSIZED_BUDGETS), so a
# plan with no --engine-version keeps 0.32's rules.
DEFAULT_VLLM_VERSION = "0.32"
# The newest release whose sizing code kvplan has read (kvplan.engines.base.flag_unread_version).
NEWEST_READ_VLLM = "0.34.0"


def vllm_profile(version: str | None) -> VllmProfile:
    """The profile that models `version` (default: DEFAULT_VLLM_VERSION's; a release newer than
    the newest profile: the newest). V1 only: before 0.10 refused."""
    if version is None:
        version = DEFAULT_VLLM_VERSION
    key = version_key(version)
    if key < version_key(VLLM_PROFILES[0].version):
        raise UnmodelledError(
            f"--engine-version: vLLM {version} predates the V1 engine rules kvplan "
            f"models (from {VLLM_PROFILES[0].version})")
    return newest_at(VLLM_PROFILES, key, lambda profile: version_key(profile.version))


# The classes that declare SupportsMambaPrefixCaching (0.11.2 - 0.27.1 model_executor/models:
# bamba, falcon_h1, granitemoehybrid, jamba, mamba (FalconMamba too), mamba2, nemotron_h,
# zamba2), by the names registry.py maps to them. With prefix caching on they keep a state page
# per block of the request: 0.11.2 - 0.14.1 kv_cache_interface.py MambaSpec.max_memory_usage_bytes
# (cdiv(max_model_len, block_size) pages, models/config.py:332-343 keeping prefix caching on for
# them), 0.15.1 - 0.27.1 mamba cache mode 'all' (models/config.py:334-336 "all" if
# supports_mamba_prefix_caching else "align"; 0.20.2 :352-357: 'align' with a drafter). 0.28.0
# drops the branch (every hybrid: 'align').
MAMBA_PREFIX_CACHING_CLASSES = frozenset({
    "BambaForCausalLM", "FalconH1ForCausalLM", "FalconMambaForCausalLM",
    "GraniteMoeHybridForCausalLM", "JambaForCausalLM", "JambaForSequenceClassification",
    "Mamba2ForCausalLM", "MambaForCausalLM", "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM", "Zamba2ForCausalLM"})
MAMBA_ALL_MODE = ((0, 11, 2), (0, 28))


# 0.15.1 and 0.16.0 models/config.py:357-360: `assert not vllm_config.speculative_config`
# ("Mamba cache mode 'align' is currently not compatible with speculative decoding"); gone in
# 0.17.1.
ALIGN_WITHOUT_DRAFTER = ((0, 15), (0, 17))
# 0.20.2 models/config.py:352-357: with a drafter, mode 'align' for those classes too.
ALL_MODE_DRAFTER_ALIGN = (0, 20, 2)


def check_mamba_prefix_caching(spec: ModelSpec, version: str | None,
                               prefix_caching: bool | None, drafter: bool = False) -> None:
    """Refuse, in one line, prefix caching on a class with mamba prefix caching in the releases
    that keep a state page per block for it (see MAMBA_PREFIX_CACHING_CLASSES): kvplan does not
    size mode 'all'; and mode 'align' with a drafter where vLLM asserts it away. Off by default
    there, so only an explicit --enable-prefix-caching."""
    if not prefix_caching or spec.recurrent is None:
        return
    key = version_key(version or DEFAULT_VLLM_VERSION)
    name = next((n for n in spec.architectures if n in MAMBA_PREFIX_CACHING_CLASSES), None)
    since, until = ALIGN_WITHOUT_DRAFTER
    if drafter and since <= key < until and name is None:
        raise UnmodelledError(
            f"--enable-prefix-caching with a drafter: vLLM {version} does not start on a "
            "recurrent hybrid ('Mamba cache mode 'align' is currently not compatible with "
            "speculative decoding', model_executor/models/config.py MambaModelConfig; "
            "allowed from 0.17)")
    since, until = MAMBA_ALL_MODE
    if not since <= key < until or (drafter and key >= ALL_MODE_DRAFTER_ALIGN):
        return
    if name is not None:
        raise UnmodelledError(
            f"{spec.path}: architectures: {name} with --enable-prefix-caching at vLLM {version}"
            ": vLLM 0.11.2 - 0.27 keeps a recurrent-state page per block of each request for it "
            "(mamba cache mode 'all', model_executor/models/config.py MambaModelConfig), which "
            "kvplan does not size: give --no-enable-prefix-caching or --engine-version 0.28")
