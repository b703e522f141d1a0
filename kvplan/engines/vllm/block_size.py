"""vLLM's ``--block-size N`` as 0.32 takes it: the block it runs, or the one-line refusal where
vLLM refuses to start (issue 26: no wrong number with exit 0). Read from vLLM 0.32:

- config/cache.py CacheConfig: ``block_size: int = Field(default=None, gt=0)``; a value given
  sets ``user_specified_block_size`` (no list of sizes, unlike the ``BlockSize = Literal[1, 8,
  16, 32, 64, 128(, 256)]`` of older releases' config/cache.py).
- v1/attention/selector.py get_attn_backend passes that block to the platform (None when not
  given). platforms/cuda.py get_attn_backend_cls keeps the backends of the device's priority
  list (_get_backend_priorities) whose validate_configuration passes; v1/attention/backend.py
  ``supports_block_size``: N is a multiple of one of get_supported_kernel_block_sizes (an int
  or MultipleOf(base): ``block_size % base == 0``). None left: ``ValueError("No valid
  attention backend found ...")``. One left behind a better one: a warning ("--block-size %d
  precluded higher-priority backend(s)") and the block as given. So on CUDA the block is
  never changed, only refused (platforms/interface.py update_block_size_for_backend skips its
  phase 1 when the user gave one; phase 2 still raises it for recurrent state:
  kvplan.engines.vllm.alloc).
- Every CUDA list ends in a backend that takes any multiple of 16 and none takes less:
  standard attention FLASH_ATTN (MultipleOf(16), or one fixed FA4 page), FLASHINFER (16, 32,
  64; up to 1024 on SM 10.x GQA), TRITON_ATTN (``block_size % 16 == 0``), FLEX_ATTENTION
  (MultipleOf(16)); dense MLA FLASH_ATTN_MLA (MultipleOf(16)), FLASHMLA (64), FLASHINFER_MLA
  (32, 64), CUTLASS_MLA (128), TRITON_MLA (``% 16``, last on SM 8.x, 9.x, 10.x and first on
  12.x). DeepSeek's sparse attention (an indexer): the sparse backends take MultipleOf(64)
  (FLASHMLA_SPARSE, FLASH_ATTN_MLA_SPARSE, FLASHINFER_MLA_SPARSE_SM90/_SM120) or MultipleOf(32)
  (FLASHINFER_MLA_SPARSE), and the indexer's DeepseekV32IndexerBackend (mla/indexer.py) takes
  the kernel block [64] alone: v1/worker/utils.py select_common_block_size (the latent and the
  indexer share one group) finds no kernel block for N % 64 != 0 ("No common block size").
- ROCm (platforms/rocm.py, vLLM's default VLLM_ROCM_USE_AITER=0): ROCM_ATTN MultipleOf(16),
  TRITON_ATTN ``% 16``; MLA TRITON_MLA ``% 16``; sparse ROCM_AITER_MLA_SPARSE and the ROCm
  indexer [1, MultipleOf(16)] (1 is left out here: a refusal, never a wrong number).
- CPU (platforms/cpu.py): get_attn_backend_cls checks no block (CPU_ATTN whatever N);
  check_and_update_config keeps a given block (128 only when none is given) and warns "CPU
  backend prefers block_size is multiples of 32", but the worker's kernel block
  (select_common_block_size, CPU_ATTN MultipleOf(32)) has none for N % 32 != 0 and vLLM stops:
  ``ValueError: No common block size for 16 (CPU_ATTN: [MultipleOf(32)])`` (run on vLLM 0.32's
  CPU build, Llama-3.1-8B shrunk, --block-size 16). MLA depends on the host: without AMX the
  reference CPU_MLA overrides any block to 16 ("CPU MLA backend requires block_size=16,
  overriding user-specified block_size"), with AMX (AMX_MLA, MultipleOf(32)) it keeps N
  (DeepSeek-V2-Lite shrunk, --block-size 64 on an AMX host: block 64, 310,656 tokens at 1 GiB),
  and takes 128 when none is given; kvplan cannot tell the host, so it is told (--cpu-amx /
  --no-cpu-amx) or refuses MLA there (`cpu_mla_block`, with the releases). Sparse attention:
  ``NotImplementedError("Sparse Attention is not supported on CPU.")``.

With no --block-size (CacheConfig.block_size None; config/cache.py DEFAULT_BLOCK_SIZE 16, 64
from 0.34: kvplan.engines.vllm.default_block, which takes the backends' kernel blocks below):
v1/attention/selector.py picks the backend with block None (every backend's supports_block_size
passes it), then platforms/interface.py update_block_size_for_backend phase 1 sets the block to
_preferred_block_size_for_backends: one backend, its get_preferred_block_size(16)
(v1/attention/backend.py: 16 if the backend takes it, else the smallest of its kernel blocks);
several (MLA + indexer), 16 if all take it, else the smallest lcm all take. Dense MLA on CUDA
(`cuda_mla_backend`, platforms/cuda.py _get_backend_priorities, each backend's
validate_configuration: compute capability, kv_cache_dtype, supports_combination):
- SM 10.x: FLASHINFER_MLA (kernel blocks [32, 64], auto/bf16/fp8; supports_combination:
  qk_nope_head_dim in [64, 128, 192]) -> 32. Otherwise TOKENSPEED_MLA (fp8 and qk_nope 128
  only, so never here), CUTLASS_MLA ([128], any KV dtype; head size 320, 512 or 576,
  mla_attention.py MLACommonBackend) -> 128.
- SM 9.x: FLASH_ATTN_MLA (MultipleOf(16); kv_cache_dtype auto/float16/bfloat16 only) -> 16;
  at fp8 FLASHMLA ([64], fp8 taken, ops/flashmla.py is_flashmla_dense_supported: Hopper) -> 64.
- any other (SM 8.x, 12.x; a head size outside 320/512/576 anywhere): TRITON_MLA (% 16) -> 16.
No --gpu (no compute capability): Hopper's (SM 9.0). ROCm: TRITON_MLA 16 (dense), sparse 16
(both backends take MultipleOf(16)); CPU: CPU_MLA 16 or AMX_MLA 128 by host (dense), sparse
refused as above.

Older releases (issue 26), read in every release's PyPI wheel from 0.10.0 to 0.32.0 (the files
and lines are in MLA_BLOCK_RULES, one row per range where the code changes):
- 0.10.0 to 0.17.x: platforms/cuda.py check_and_update_config sets the MLA block itself, after
  defaulting None to 16, and whether or not --block-size was given (user_specified_block_size
  is not read there):
  FlashMLA's 64 on SM 9.x (attention/ops/flashmla.py: Hopper only, and _flashmla_C ships in the
  wheel); from 0.10.1 CUTLASS_MLA's 128 on SM 10.0 exactly (is_device_capability(100); B300's
  10.3 keeps 16), on SM 10.x from 0.13; from 0.15 FLASHINFER_MLA's 64 (any block but 32 or a
  multiple of 64) on SM 10.x when qk_nope_head_dim is 128, CUTLASS_MLA's 128 otherwise. Until
  0.11.0 any other block is replaced (``!= 64``), from 0.11.1 only a non-multiple (``% 64``).
  Elsewhere (SM 8.x, 12.x; SM 10.x in 0.10.0, B300's 10.3 before 0.13) TRITON_MLA runs the
  block, 16 by default. Start-up logs print the forcing: "[cuda.py:162] Forcing kv cache block
  size to 64 for FlashMLA backend" (8 x H100, 0.10.0's line; code index file id 56876437070),
  "[cuda.py:210] ..." (DeepSeek-V2-Lite, 0.11.1's and 0.11.2's line; id 56715473834). A 0.11.2
  DeepSeek-R1 log on 8 x H200 (tests/data/engine_logs, "GPU KV cache size: 635,648 tokens" =
  9,932 x 64) agrees with 64 (and with 16: its 41.60 GiB is rounded), a 0.19.0 DeepSeek-V2-Lite
  log on H100 (1,505,552 = 94,097 x 16, not a multiple of 32) with 0.18's 16. DeepSeek's
  sparse attention (from 0.11.0): 64, forced likewise (``block_size != 64``).
- fp8 KV: TRITON_MLA takes none before 0.18 (triton_mla.py "TritonMLA V1 with FP8 KV cache not
  yet supported", then kv dtypes ["auto"(, "bfloat16")] and "No valid attention backend"),
  FlashMLA and CUTLASS_MLA none before 0.10.2; vLLM does not start there (off SM 9.x and 10.0,
  0.10.0 and 0.10.1 fall back to the V0 engine instead, not modelled): refused, and `kvplan
  plan` searches bf16 alone there (VllmEngine.runnable_kv_dtypes).
- 0.18 on: the 0.32 rule above (platforms/interface.py update_block_size_for_backend, the first
  layer's backend: DeepSeek-V3.2's indexer cache is built before its MLA layer, so 64), except
  FLASHINFER_MLA's qk_nope_head_dim list ([64, 128] in 0.18.x) and MLACommonBackend's head
  sizes ([320, 576] before 0.30).
- ROCm: 16 in every release (check_and_update_config; TRITON_MLA, fp8 from 0.18 only); sparse
  MLA not before 0.18 (0.11.x: "Sparse Attention is not supported on ROCm"; 0.12-0.17:
  ``assert block_size == 1``): refused.
- MLA + recurrent hybrids (Kimi-Linear; issue 26, read in every wheel it is registered in,
  0.11.2 on): the block is raised until one MLA page holds the recurrent state, in steps of an
  alignment (MLA_HYBRID_ALIGNMENT; kvplan.engines.vllm.alloc raises it):
  0.11.2-0.19.1: model_executor/models/config.py HybridAttentionMambaModelConfig, in VllmConfig's
  __post_init__ before the platform's check: 64 (128 only for a CUTLASS_MLA named with
  --attention-backend), from CacheConfig's 16 whatever the GPU; 0.11.2-0.17.1's
  platforms/cuda.py then forces a block that is not a multiple of its backend's (FlashMLA 64,
  CUTLASS_MLA 128, FLASHINFER_MLA 64): the MLA page no longer matches the padded state page and
  vLLM does not start (refused); 0.18-0.19's update_block_size_for_backend resets a hybrid to 16
  in the worker, and get_kv_cache_configs scales the MLA spec back up to the padded state page
  (unify_kv_cache_spec_page_size), so the aligned block stands. A --block-size takes another
  path there (the alignment ignores it, then keeps a larger one): refused. Prefix caching does
  not: Kimi-Linear has no mamba prefix caching, so MambaModelConfig turns it off (0.11.2-0.14)
  or sets mode 'align' (0.15 on), and only mode 'all' aligns to the mamba chunk size.
  0.20.2-0.26.0: platforms/interface.py update_block_size_for_backend picks the MLA backend's
  block as for a plain MLA model (phase 1), then _align_hybrid_block_size aligns to max(the
  backend's smallest kernel block, that block): no floor of its own.
  0.27.1-0.32.0: the same, at least 128 (0.32 also a multiple of every non-SSM backend's
  smallest kernel block: for one MLA backend a divisor of 128).

Refused as UnmodelledError: no layout would do (`kvplan plan`'s search re-raises it rather
than skipping the layout). The rule is checked on the block asked for where the backend is
chosen by it (CUDA, ROCm) and on the block run (after raising for recurrent state) everywhere.
Read in 0.32 only: an older version is held to the sizes every release's config/cache.py
BlockSize listed as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import newest_at, version_key
from kvplan.engines.vllm.default_block import (
    DEFAULT_BLOCK_SIZES,
    MLA_KERNEL_BLOCKS,
    attention_default_block,
    cache_default_block,
    preferred_block,
)
from kvplan.engines.vllm.profiles import DEFAULT_VLLM_VERSION
from kvplan.kv.kinds import IndexerCache, MLACache, RecurrentState
from kvplan.model.attention import LatentAttention

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.engines.vllm.alloc import Platform, VllmKVConfig
    from kvplan.kv.kinds import LayerCaches
    from kvplan.model.spec import ModelSpec

READ_IN = (0, 32)
# MLA + recurrent hybrids (see the module): (first release, least block aligned to, where read).
MLA_HYBRID_ALIGNMENT: tuple[tuple[tuple[int, int, int, int], int, str], ...] = (
    ((0, 10, 0, 0), 64, "0.11.2 model_executor/models/config.py:349 (`128 if use_cutlass_mla "
                        "else 64`), :423; 0.15.1 :421, :495; 0.19.1 :210, :273"),
    ((0, 20, 0, 0), 0, "0.20.2 platforms/interface.py:499 _align_hybrid_block_size, :577 "
                       "max(smallest kernel block, block_size); 0.26.0 :645, :876"),
    ((0, 27, 0, 0), 128, "0.27.1 platforms/interface.py:888 max(kernel_block_alignment_size, "
                         "128); 0.31.0 :963; 0.32.0 :1082"),
)
# From this release the hybrid's block starts from the MLA backend's own (update_block_size_
# for_backend's phase 1, platforms/interface.py); before, from CacheConfig's 16.
HYBRID_BACKEND_BLOCK_SINCE = (0, 20, 0, 0)
# Sizes in every older release's BlockSize Literal (config/cache.py: [1, 8, 16, 32, 64, 128],
# later with 256) that some backend of theirs takes.
OLDER_RELEASE_SIZES = (16, 32, 64, 128)

_SOURCES = {
    ("cuda", "attention"): "v1/attention/backends/ FLASH_ATTN, FLASHINFER, TRITON_ATTN, "
                           "FLEX_ATTENTION; platforms/cuda.py get_attn_backend_cls: 'No valid "
                           "attention backend found'",
    ("cuda", "mla"): "v1/attention/backends/mla/ FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, "
                     "CUTLASS_MLA, TRITON_MLA; platforms/cuda.py get_attn_backend_cls: 'No valid "
                     "attention backend found'",
    ("cuda", "sparse"): "the indexer's kernel block is 64, mla/indexer.py "
                        "DeepseekV32IndexerBackend; v1/worker/utils.py "
                        "select_common_block_size: 'No common block size'",
    ("rocm", "attention"): "ROCM_ATTN, TRITON_ATTN kernel blocks; platforms/rocm.py",
    ("rocm", "mla"): "TRITON_MLA supports_block_size; platforms/rocm.py",
    ("rocm", "sparse"): "ROCM_AITER_MLA_SPARSE and the ROCm indexer, MultipleOf(16)",
    ("cpu", "attention"): "CPU_ATTN's kernel block MultipleOf(32), cpu_attn.py; "
                          "v1/worker/utils.py select_common_block_size: 'No common block size'",
}
_LABELS = {"attention": "standard attention", "mla": "MLA",
           "sparse": "DeepSeek's sparse MLA (an indexer)"}


# Dense MLA on CUDA (see the module): each backend's smallest kernel block, its block with no
# --block-size to 0.33 (0.34: default_block.preferred_block of 64).
HOPPER = (9, 0)  # no --gpu: the capability kvplan assumes
MLA_BACKEND_BLOCKS = {name: min(blocks) for name, blocks in MLA_KERNEL_BLOCKS.items()}
# The newest CacheConfig default: (first release, shown as, block).
NEWEST_DEFAULT = (DEFAULT_BLOCK_SIZES[-1][0], "0.34", DEFAULT_BLOCK_SIZES[-1][1])
# The blocks platforms/cuda.py check_and_update_config forces before 0.18: FlashMLA 64,
# CUTLASS_MLA 128, FLASHINFER_MLA 64 (it keeps 32 too).
FORCED_BLOCKS = {"FLASHMLA": 64, "CUTLASS_MLA": 128, "FLASHINFER_MLA": 64}
FORCED_SPARSE_BLOCK = 64  # cuda.py: ``if use_sparse and cache_config.block_size != 64``


@dataclass(frozen=True, kw_only=True)
class MlaBlockRule:
    """How the vLLM releases from `since` (to the next row) set a dense MLA model's block on
    CUDA (see the module); `read`: the releases read, with the file and line of each rule."""

    since: tuple[int, int, int, int]
    read: str
    # platforms/cuda.py check_and_update_config sets the block, given or not (before 0.18).
    forced: bool
    # Forced only when the block is not a multiple of the backend's (0.11.1 on); else any other.
    keeps_multiples: bool = True
    # SM 10.x: the backend forced there (None: none), on 10.0 alone or on every 10.x.
    sm10_backend: str | None = None
    sm10_family: bool = True
    # FLASHINFER_MLA's qk_nope_head_dim: forced era, the values that force it on SM 10.x;
    # from 0.18, those its supports_combination takes.
    flashinfer_qk_nope: tuple[int, ...] = ()
    head_sizes: tuple[int, ...] = (320, 512, 576)  # MLACommonBackend.get_supported_head_sizes
    fp8_backends: frozenset[str] = frozenset(
        {"FLASHINFER_MLA", "CUTLASS_MLA", "FLASHMLA", "TRITON_MLA"})


_FP8_BEFORE_TRITON = frozenset({"FLASHINFER_MLA", "CUTLASS_MLA", "FLASHMLA"})
# Oldest first; a release takes the last row at or below it. Lines are each wheel's
# (vllm-X-cp38-abi3-manylinux1_x86_64.whl, `pip download vllm==X --no-deps`).
MLA_BLOCK_RULES: tuple[MlaBlockRule, ...] = (
    MlaBlockRule(since=(0, 10, 0, 0), forced=True, keeps_multiples=False,
                 fp8_backends=frozenset(),
                 read="0.10.0 platforms/cuda.py:152-170 (VLLM_ATTENTION_BACKEND unset: FlashMLA, "
                      ":159 block forced to 64 when is_flashmla_supported, attention/ops/"
                      "flashmla.py:29 SM 9.x only; CUTLASS_MLA only when named); :209 TRITON_MLA "
                      "for any other block; v1/attention/backends/mla/flashmla.py:149, "
                      "triton_mla.py:69 'FP8 KV cache not yet supported'"),
    MlaBlockRule(since=(0, 10, 1, 0), forced=True, keeps_multiples=False,
                 sm10_backend="CUTLASS_MLA", sm10_family=False, fp8_backends=frozenset(),
                 read="0.10.1, 0.10.1.1 platforms/cuda.py:152 is_device_capability(100) -> "
                      "CUTLASS_MLA, :175 forced to 128; mla/cutlass_mla.py:113, flashmla.py:171 "
                      "'FP8 KV cache not yet supported'"),
    MlaBlockRule(since=(0, 10, 2, 0), forced=True, keeps_multiples=False,
                 sm10_backend="CUTLASS_MLA", sm10_family=False, fp8_backends=_FP8_BEFORE_TRITON,
                 read="0.10.2, 0.11.0 platforms/cuda.py:172 (0.11.0 :163; :181 sparse forced to "
                      "64); mla/flashmla.py refuses no fp8, cutlass_mla.py:194 takes it, "
                      "triton_mla.py:69 still refuses it"),
    MlaBlockRule(since=(0, 11, 1, 0), forced=True, sm10_backend="CUTLASS_MLA",
                 sm10_family=False, fp8_backends=_FP8_BEFORE_TRITON,
                 read="0.11.1, 0.11.2, 0.12.0 platforms/cuda.py:186 is_device_capability(100) "
                      "(0.12.0 :184), :207 'block_size % 64 != 0', :212 '% 128', :229 sparse; "
                      "mla/triton_mla.py:31 kv dtypes ['auto']"),
    MlaBlockRule(since=(0, 13, 0, 0), forced=True, sm10_backend="CUTLASS_MLA",
                 fp8_backends=_FP8_BEFORE_TRITON,
                 read="0.13.0, 0.14.0, 0.14.1 platforms/cuda.py:185 "
                      "is_device_capability_family(100) and not use_sparse"),
    MlaBlockRule(since=(0, 15, 0, 0), forced=True, sm10_backend="CUTLASS_MLA",
                 flashinfer_qk_nope=(128,), fp8_backends=_FP8_BEFORE_TRITON,
                 read="0.15.0 platforms/cuda.py:192 'qk_nope_head_dim == 128' -> FLASHINFER_MLA, "
                      ":234 forced to 64 unless 32 or a multiple of 64, :205 FlashMLA; 0.16.0, "
                      "0.17.0, 0.17.1 (cuda.py:212, :270 sparse), triton_mla.py:31 ['auto', "
                      "'bfloat16']"),
    MlaBlockRule(since=(0, 18, 0, 0), forced=False, flashinfer_qk_nope=(64, 128),
                 head_sizes=(320, 576),
                 read="0.18.0, 0.18.1 platforms/interface.py:427 update_block_size_for_backend "
                      "(a --block-size given is kept), v1/attention/backend.py:189 "
                      "get_preferred_block_size, platforms/cuda.py:48 _get_backend_priorities, "
                      "mla/flashinfer_mla.py:87 qk_nope_head_dim [64, 128], triton_mla.py:32 "
                      "fp8, layers/attention/mla_attention.py:1154 head sizes [320, 576]"),
    MlaBlockRule(since=(0, 19, 0, 0), forced=False, flashinfer_qk_nope=(64, 128, 192),
                 head_sizes=(320, 576),
                 read="0.19.0 mla/flashinfer_mla.py:87 [64, 128, 192]; 0.19.1 to 0.29.0 the "
                      "same priorities, kernel blocks, KV dtypes and capabilities "
                      "(mla_attention.py:1473 in 0.29.0)"),
    MlaBlockRule(since=(0, 30, 0, 0), forced=False, flashinfer_qk_nope=(64, 128, 192),
                 read="0.30.0 layers/attention/mla_attention.py:1596 [320, 512, 576]; 0.31.0, "
                      "0.32.0 (TOKENSPEED_MLA after FLASHINFER_MLA, fp8 and qk_nope 128 only: "
                      "never first; SM 12.x: TRITON_MLA first); 0.33.0 and 0.34.0 the same "
                      "dense priorities (platforms/cuda.py:84 / :81), kernel blocks and head "
                      "sizes (mla_attention.py:1624 / :1828); sparse on SM 10.x at bf16 with "
                      "<= 16 heads tries FLASH_ATTN_MLA_SPARSE_FA4 first (cuda.py:112 / :109), "
                      "MultipleOf(64) as before (mla/flashattn_mla_sparse.py:284)"),
)
ROCM_SPARSE_SINCE = (0, 18, 0, 0)  # platforms/rocm.py: 0.11.0 :201, 0.12.0 :228, 0.17.1 :369


def _release(version: str | None) -> tuple[int, ...]:
    """The release padded to four parts, so 0.11 is 0.11.0.0 (None: the newest)."""
    key = version_key(version)
    return key + (0,) * (4 - len(key))


# MLA on vLLM's CPU platform (platforms/cpu.py), by release: none before 0.28 (0.27.1 :83-84
# get_attn_backend_cls: NotImplementedError("MLA is not supported on CPU.")); 0.28.0 the
# reference CPU_MLA, its block forced to 16 (:140-147, "CPU MLA backend requires block_size=16,
# overriding user-specified block_size"); from 0.29.0 AMX_MLA where the host has AMX tiles
# (x86 and torch.cpu._is_amx_tile_supported(): 0.29.0 :145-160 and :215-231, 0.32.0 :151-164 and
# :251-292), which keeps a given block and else takes 128 (0.32.0 :291-292; 0.33.0 :561-563
# update_block_size_for_backend: AMX_MLA's preferred block for 128), its kernels MultipleOf(32)
# (v1/attention/backends/mla/amx_mla.py:134); CPU_MLA (16) elsewhere. Which one runs depends on
# the host, which kvplan is told (--cpu-amx / --no-cpu-amx) or refuses to guess. Held to vLLM
# 0.32's CPU build on an AMX host (DeepSeek-V2-Lite and LongCat-ShortCat shrunk, 128 by default
# and 64 given) and without it (the oracle's MLA cases, 16): tests/test_vllm_profiles.py.
CPU_MLA_SINCE = (0, 28, 0, 0)
CPU_AMX_MLA_SINCE = (0, 29, 0, 0)
CPU_MLA_BLOCK = 16
CPU_128_BEHIND_BACKENDS = (0, 33, 0, 0)  # a model with no attention backend keeps the default
AMX_MLA_BLOCK = 128
AMX_MLA_MULTIPLE = 32


def cpu_mla_block(given: int | None, version: str | None, amx: bool | None) -> int:
    """The block vLLM `version` runs a dense MLA model at on the CPU platform, on a host with
    AMX tiles or not (`amx` None: not known); refused in one line where vLLM runs no MLA there,
    where the answer depends on the host and `amx` is None, or where AMX_MLA takes no such
    block (see CPU_MLA_SINCE)."""
    key = _release(version)
    at = f"vLLM {version or DEFAULT_VLLM_VERSION}"
    if key < CPU_MLA_SINCE:
        raise UnmodelledError(
            f"--platform cpu: {at} runs no MLA there (platforms/cpu.py get_attn_backend_cls: "
            "'MLA is not supported on CPU' before 0.28): give --engine-version 0.28 or later")
    if key < CPU_AMX_MLA_SINCE or amx is False:
        return CPU_MLA_BLOCK
    if amx is None:
        raise UnmodelledError(
            f"--platform cpu: {at} runs MLA with AMX_MLA (block {given or AMX_MLA_BLOCK}) on a "
            f"host with AMX tiles and with CPU_MLA (block {CPU_MLA_BLOCK}, whatever "
            "--block-size) on one without (platforms/cpu.py, torch.cpu._is_amx_tile_supported()"
            "); kvplan cannot tell the host: give --cpu-amx or --no-cpu-amx")
    block = given or AMX_MLA_BLOCK
    if block % AMX_MLA_MULTIPLE:
        raise UnmodelledError(
            f"--block-size {block}: vLLM's AMX_MLA takes only multiples of {AMX_MLA_MULTIPLE} "
            "(v1/attention/backends/mla/amx_mla.py; 'No common block size for 16 (AMX_MLA: "
            f"[MultipleOf(32)])' on an AMX host): give {_nearest(block, AMX_MLA_MULTIPLE)}")
    return block


def mla_block_rule(version: str | None) -> MlaBlockRule:
    """The MLA_BLOCK_RULES row that describes `version` (None: the newest)."""
    return newest_at(MLA_BLOCK_RULES, _release(version), lambda rule: rule.since)


def cuda_mla_backend(att: LatentAttention, kv_dtype: str,
                     capability: tuple[int, int] | None, version: str | None = None) -> str:
    """The dense MLA backend vLLM `version` (None: the newest) picks on CUDA with no
    --block-size; before 0.18, the one whose block platforms/cuda.py forces (see the module)."""
    rule = mla_block_rule(version)
    major, minor = capability or HOPPER
    if rule.forced:
        if major == 10 and (rule.sm10_family or minor == 0):
            if att.qk_nope_head_dim in rule.flashinfer_qk_nope:
                return "FLASHINFER_MLA"
            if rule.sm10_backend is not None:
                return rule.sm10_backend
        return "FLASHMLA" if major == 9 else "TRITON_MLA"
    head_size = att.kv_lora_rank + att.qk_rope_head_dim
    if head_size in rule.head_sizes:
        if major == 10:
            return ("FLASHINFER_MLA" if att.qk_nope_head_dim in rule.flashinfer_qk_nope
                    else "CUTLASS_MLA")
        if major == 9:
            return "FLASHMLA" if kv_dtype == "fp8" else "FLASH_ATTN_MLA"
    return "TRITON_MLA"


def _forced(block: int, backend: str, rule: MlaBlockRule) -> int:
    """The block platforms/cuda.py check_and_update_config leaves for `backend` (see the
    module): its own unless `block` is a multiple of it (or FLASHINFER_MLA's 32)."""
    own = FORCED_BLOCKS.get(backend)
    if own is None or block == own or (backend == "FLASHINFER_MLA" and block == 32):
        return block
    return block if rule.keeps_multiples and block % own == 0 else own


# 0.10.0, 0.10.1 engine/arg_utils.py _is_v1_supported_oracle: --kv-cache-dtype fp8 where
# platforms/cuda.py is_kv_cache_dtype_supported says no (not SM 10.0, no FlashAttention fp8: not
# Hopper) falls back to the V0 engine, which kvplan does not model.
V0_FALLBACK = " (off SM 9.x and 10.0 it falls back to the V0 engine, which kvplan does not model)"


def mla_fp8_missing(att: LatentAttention, version: str | None, platform: str,
                    capability: tuple[int, int] | None) -> str | None:
    """The dense MLA backend, and where, that vLLM `version` runs with no fp8 KV cache (see the
    module: vLLM does not start); None where it takes fp8 (or is the newest, or not CUDA/ROCm)."""
    if version is None or platform not in ("cuda", "rocm"):
        return None
    rule = mla_block_rule(version)
    if platform == "rocm":
        backend, where = "TRITON_MLA", "ROCm"
    else:
        backend = cuda_mla_backend(att, "fp8", capability, version)
        major, minor = capability or HOPPER
        where = f"SM {major}.{minor}"
    return None if backend in rule.fp8_backends else f"{backend} on {where}"


def _refuse_fp8(att: LatentAttention, inputs: PlanInputs) -> None:
    missing = mla_fp8_missing(att, inputs.engine_version, inputs.platform,
                              inputs.compute_capability)
    if inputs.kv_dtype == "fp8" and missing is not None:
        raise UnmodelledError(
            f"--kv-dtype fp8: vLLM {inputs.engine_version} runs MLA with {missing}, which takes "
            "no fp8 KV cache ('FP8 KV cache not yet supported', v1/attention/backends/mla/; "
            "TRITON_MLA takes it from 0.18, FlashMLA and CUTLASS_MLA from 0.10.2), so vLLM does "
            f"not start{V0_FALLBACK if _release(inputs.engine_version) < (0, 10, 2, 0) else ''}"
            ": give --kv-dtype bf16 or a later --engine-version")


def vllm_block(caches: tuple[LayerCaches, ...], spec: ModelSpec, inputs: PlanInputs,
               platform: Platform) -> int:
    """The block vLLM `inputs.engine_version` runs these caches at, --block-size given or not
    (see the module), before any raising for recurrent state; refused in one line where
    kvplan cannot size it or vLLM does not start."""
    kind = _kind(caches)
    given = inputs.block_size
    version = inputs.engine_version
    rule = mla_block_rule(version)
    default = cache_default_block(version)  # 64 from 0.34: kvplan.engines.vllm.default_block
    if kind == "sparse":
        if platform.sparse_mla_block_multiple is None:
            if given:
                return given  # check_block_size refuses it, naming the block
            raise UnmodelledError(
                f"--platform {platform.name}: vLLM 0.32 runs no sparse MLA there "
                "(DeepSeek-V3.2 / GLM-5: platforms/cpu.py get_attn_backend_cls, 'Sparse "
                "Attention is not supported on CPU')")
        if platform.name == "rocm" and _release(version) < ROCM_SPARSE_SINCE:
            raise UnmodelledError(
                f"--engine-version {version}: vLLM runs DeepSeek's sparse attention on ROCm "
                "from 0.18 (platforms/rocm.py: 0.11 'Sparse Attention is not supported on "
                "ROCm', 0.12-0.17 'assert block_size == 1'): give --engine-version 0.18")
        if platform.name == "cuda" and rule.forced:
            return FORCED_SPARSE_BLOCK
        return given or preferred_block((platform.sparse_mla_block,), default)
    att = spec.attention
    hybrid = any(isinstance(c, RecurrentState) for lc in caches for c in lc.caches)
    if kind == "mla" and platform.name == "cpu":
        return cpu_mla_block(given, version, inputs.cpu_amx)
    if kind is None:
        # No attention backend (pure Mamba): CacheConfig's default; the CPU's 128 to 0.32 (0.32.0
        # platforms/cpu.py:292-293), which 0.33 moved behind the backends (0.33.0 :550-565).
        return given or (platform.default_block if platform.name == "cpu" and _release(
            version or DEFAULT_VLLM_VERSION) < CPU_128_BEHIND_BACKENDS else default)
    if kind != "mla" or not isinstance(att, LatentAttention):
        return given or (default if kind == "mla" else attention_default_block(
            platform.name, platform.default_block, version))
    _refuse_fp8(att, inputs)
    if platform.name == "rocm" or (
            hybrid and _release(version) < HYBRID_BACKEND_BLOCK_SINCE):
        # ROCm: TRITON_MLA takes the default (16; 64 from 0.34). MLA + recurrent hybrids before
        # 0.20: CacheConfig's 16, then raised for the state (see the module).
        return given or default
    backend = cuda_mla_backend(att, inputs.kv_dtype, inputs.compute_capability, version)
    if rule.forced:
        return _forced(given or default, backend, rule)
    return given or preferred_block(MLA_KERNEL_BLOCKS[backend], default)


def mla_hybrid_alignment(version: str | None) -> int:
    """The least block vLLM `version` aligns an MLA + recurrent hybrid's to (0: the backend's
    own block alone; see the module)."""
    key = _release(version)
    return [align for since, align, _ in MLA_HYBRID_ALIGNMENT if since <= key][-1]


def check_hybrid_mla_block(caches: tuple[LayerCaches, ...], spec: ModelSpec,
                           inputs: PlanInputs, config: VllmKVConfig) -> None:
    """Refuse, in one line, an MLA + recurrent hybrid on CUDA where vLLM `version` does not run
    the aligned block kvplan sizes (see the module): before 0.20 a --block-size (another path),
    or a block its MLA backend forces (before 0.18) or has no kernel block for. Prefix caching
    takes the same path for Kimi-Linear: off before 0.15 (no mamba prefix caching support:
    MambaModelConfig disables it), mamba cache mode 'align' from 0.15 (the chunk-aligned branch
    is mode 'all' only)."""
    hybrid = any(isinstance(c, RecurrentState) for lc in caches for c in lc.caches)
    att = spec.attention
    if (not hybrid or _kind(caches) != "mla" or config.platform.name != "cuda"
            or not isinstance(att, LatentAttention)):
        return
    version = inputs.engine_version
    key = _release(version)
    where = f"vLLM {version or 'newest'}: an MLA + recurrent hybrid"
    if key < HYBRID_BACKEND_BLOCK_SINCE and inputs.block_size is not None:
        raise UnmodelledError(
            f"{where} with --block-size takes another path (model_executor/models/config.py "
            "HybridAttentionMambaModelConfig aligns to 64 whatever block is given, then keeps a "
            "larger one), not modelled: leave it out or give --engine-version 0.20 or later")
    rule = mla_block_rule(version)
    backend = cuda_mla_backend(att, inputs.kv_dtype, inputs.compute_capability, version)
    need = FORCED_BLOCKS.get(backend, 1) if rule.forced else MLA_BACKEND_BLOCKS[backend]
    if config.block_size % need:
        how = ("platforms/cuda.py forces it to" if rule.forced else "its kernels take only")
        raise UnmodelledError(
            f"{where} is aligned to block {config.block_size}, and {backend} ({how} multiples "
            f"of {need}) leaves an MLA page that no longer matches the padded recurrent-state "
            "page: vLLM does not start (v1/core/kv_cache_utils.py: the pages do not unify)")


def mla_block_note(platform: str | None, profile: str | None = None,
                   hybrid: bool = False) -> str | None:
    """What decides a dense MLA model's block on `platform` under the vLLM profile `profile`
    (kvplan.engines.vllm.profiles.VLLM_PROFILES; see the module)."""
    older = profile is not None and _release(profile) < (0, 19, 0, 0)
    if hybrid and profile is not None and _release(profile) < (*READ_IN, 0, 0):
        return ("MLA block: an MLA + recurrent hybrid's block is raised until one MLA page holds "
                "the recurrent state, aligned to 64 before vLLM 0.20 "
                "(HybridAttentionMambaModelConfig), to the MLA backend's own block in 0.20-0.26 "
                "and to at least 128 from 0.27 (platforms/interface.py).")
    if profile is not None and _release(profile) >= (*NEWEST_DEFAULT[0], 0, 0) and platform in (
            "cuda", "rocm"):
        return (f"MLA block: with no --block-size vLLM {NEWEST_DEFAULT[1]} offers its "
                f"CacheConfig default {NEWEST_DEFAULT[2]} to the MLA backend (platforms/"
                "interface.py), which every one takes but CUTLASS_MLA (128; SM 10.x when "
                "qk_nope_head_dim is not 64, 128 or 192). A --block-size given runs as given.")
    if platform == "cuda":
        note = ("MLA block: with no --block-size vLLM 0.32 takes its first MLA backend's "
                "(platforms/cuda.py): FLASHINFER_MLA 32 on SM 10.x (B200), FLASH_ATTN_MLA 16 on "
                "SM 9.x (H100) or FlashMLA 64 there at fp8 KV, TRITON_MLA 16 on SM 8.x and 12.x; "
                "no --gpu: Hopper's. A --block-size given runs as given.")
        if older:
            note += (" vLLM 0.18 on: the same. Before 0.18 platforms/cuda.py forces the block, "
                     "given or not: FlashMLA 64 on SM 9.x; CUTLASS_MLA 128 on SM 10.0 from "
                     "0.10.1 (SM 10.x from 0.13); from 0.15 FLASHINFER_MLA 64 on SM 10.x when "
                     "qk_nope_head_dim is 128; else 16 (TRITON_MLA, no fp8 KV).")
        return note
    if platform == "rocm":
        return "MLA block: 16 (TRITON_MLA, platforms/rocm.py); a --block-size given runs as given."
    return None


def _kind(caches: tuple[LayerCaches, ...]) -> str | None:
    """The attention whose backends decide: sparse MLA (an indexer), MLA, standard attention;
    None for attention-free models (no attention backend: vLLM takes any block)."""
    kinds = [c for lc in caches for c in lc.caches if not isinstance(c, RecurrentState)]
    if not kinds:
        return None
    if any(isinstance(c, IndexerCache) for c in kinds):
        return "sparse"
    if any(isinstance(c, MLACache) for c in kinds):
        # A model mixing MLA and standard layers: each backend holds, as on CUDA both are 16.
        return "mla"
    return "attention"


def _multiple(platform: Platform, kind: str) -> int | None:
    return {"attention": platform.attention_block_multiple, "mla": platform.mla_block_multiple,
            "sparse": platform.sparse_mla_block_multiple}[kind]


def _refuse_no_sparse(requested: int, platform: Platform) -> None:
    """A platform with no sparse MLA (CPU; its dense MLA: cpu_mla_block)."""
    raise UnmodelledError(
        f"--block-size {requested}: vLLM 0.32's {platform.name} platform runs no sparse "
        "MLA (DeepSeek-V3.2 / GLM-5: platforms/cpu.py get_attn_backend_cls, 'Sparse "
        "Attention is not supported on CPU')")


def _nearest(requested: int, multiple: int) -> str:
    low = requested // multiple * multiple
    high = low + multiple
    return f"{low} or {high}" if low else f"{high}"


def check_block_size(caches: tuple[LayerCaches, ...], inputs: PlanInputs,
                     config: VllmKVConfig) -> None:
    """Refuse, in one line, a --block-size vLLM refuses to start with for these caches on the
    platform (see the module); nothing when no block was given (the platform's own)."""
    requested = inputs.block_size
    if requested is None:
        return
    kind = _kind(caches)
    if kind is None:
        return
    platform = config.platform
    if kind == "mla" and platform.name == "cpu":
        return  # cpu_mla_block: the block asked, by host and release
    multiple = _multiple(platform, kind)
    if multiple is None:
        _refuse_no_sparse(requested, platform)
        return
    asked = (requested,) if platform.selects_backend_by_block else ()
    for block in (*asked, config.block_size):
        if block % multiple:
            shown = "" if block == requested else f" (raised to {block} for recurrent state)"
            raise UnmodelledError(
                f"--block-size {requested}{shown}: vLLM 0.32 on {platform.name} runs "
                f"{_LABELS[kind]} only at multiples of {multiple} "
                f"({_SOURCES[(platform.name, kind)]}): give {_nearest(block, multiple)}")
    version = inputs.engine_version
    if (version is not None and version_key(version) < READ_IN
            and requested not in OLDER_RELEASE_SIZES):
        raise UnmodelledError(
            f"--block-size {requested}: which blocks vLLM {version} takes was read in 0.32 only "
            "(older releases list them in config/cache.py BlockSize): give one of "
            f"{', '.join(str(s) for s in OLDER_RELEASE_SIZES if s % multiple == 0)} or "
            "--engine-version 0.32")
