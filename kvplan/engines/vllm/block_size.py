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
  (DeepSeek-V2-Lite shrunk, --block-size 64 on an AMX host: block 64, 310,656 tokens at 1 GiB);
  kvplan cannot tell the host, so it refuses. Sparse attention: ``NotImplementedError("Sparse
  Attention is not supported on CPU.")``.

With no --block-size (CacheConfig.block_size None; config/cache.py DEFAULT_BLOCK_SIZE 16):
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
(both backends take MultipleOf(16)); CPU: CPU_MLA 16 (dense), sparse refused as above. Read in
0.32 only: an older version keeps kvplan's earlier 16 (FLASH_ATTN_MLA on Hopper at bf16, as
PR #20665's log shows; not read for other GPUs or fp8: issue 26 keeps it open).

Refused as UnmodelledError: no layout would do (`kvplan plan`'s search re-raises it rather
than skipping the layout). The rule is checked on the block asked for where the backend is
chosen by it (CUDA, ROCm) and on the block run (after raising for recurrent state) everywhere.
Read in 0.32 only: an older version is held to the sizes every release's config/cache.py
BlockSize listed as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.kv.kinds import IndexerCache, MLACache, RecurrentState
from kvplan.model.attention import LatentAttention

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.engines.vllm.alloc import Platform, VllmKVConfig
    from kvplan.kv.kinds import LayerCaches
    from kvplan.model.spec import ModelSpec

READ_IN = (0, 32)
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


# Dense MLA on CUDA, vLLM 0.32 (see the module): backend and its preferred block.
HOPPER = (9, 0)  # no --gpu: the capability kvplan assumes
FLASHINFER_MLA_QK_NOPE = (64, 128, 192)  # flashinfer_mla.py supports_combination
MLA_COMMON_HEAD_SIZES = (320, 512, 576)  # mla_attention.py MLACommonBackend
MLA_BACKEND_BLOCKS = {"FLASHINFER_MLA": 32, "CUTLASS_MLA": 128, "FLASH_ATTN_MLA": 16,
                      "FLASHMLA": 64, "TRITON_MLA": 16}


def cuda_mla_backend(att: LatentAttention, kv_dtype: str,
                     capability: tuple[int, int] | None) -> str:
    """The dense MLA backend vLLM 0.32 picks on CUDA with no --block-size (see the module)."""
    major = (capability or HOPPER)[0]
    head_size = att.kv_lora_rank + att.qk_rope_head_dim
    if head_size in MLA_COMMON_HEAD_SIZES:
        if major == 10:
            return ("FLASHINFER_MLA" if att.qk_nope_head_dim in FLASHINFER_MLA_QK_NOPE
                    else "CUTLASS_MLA")
        if major == 9:
            return "FLASHMLA" if kv_dtype == "fp8" else "FLASH_ATTN_MLA"
    return "TRITON_MLA"


def default_block(caches: tuple[LayerCaches, ...], spec: ModelSpec, inputs: PlanInputs,
                  platform: Platform) -> int:
    """The block vLLM 0.32 runs these caches at when no --block-size is given (see the module),
    before any raising for recurrent state; refused in one line where kvplan cannot size it."""
    kind = _kind(caches)
    if kind == "sparse":
        if platform.sparse_mla_block_multiple is None:
            raise UnmodelledError(
                f"--platform {platform.name}: vLLM 0.32 runs no sparse MLA there "
                "(DeepSeek-V3.2 / GLM-5: platforms/cpu.py get_attn_backend_cls, 'Sparse "
                "Attention is not supported on CPU')")
        return platform.sparse_mla_block
    if kind != "mla":
        return platform.default_block
    att = spec.attention
    if platform.name != "cuda" or not isinstance(att, LatentAttention):
        return platform.mla_block
    version = inputs.engine_version
    if version is not None and version_key(version) < READ_IN:
        # Not read before 0.32: kvplan keeps its earlier answer (Hopper's 16) there.
        return platform.mla_block
    return MLA_BACKEND_BLOCKS[cuda_mla_backend(att, inputs.kv_dtype, inputs.compute_capability)]


def mla_block_note(platform: str | None) -> str | None:
    """What decides a dense MLA model's block on `platform` (see the module)."""
    if platform == "cuda":
        return ("MLA block: with no --block-size vLLM 0.32 takes its first MLA backend's "
                "(platforms/cuda.py): FLASHINFER_MLA 32 on SM 10.x (B200), FLASH_ATTN_MLA 16 on "
                "SM 9.x (H100) or FlashMLA 64 there at fp8 KV, TRITON_MLA 16 on SM 8.x and 12.x; "
                "no --gpu: Hopper's. A --block-size given runs as given.")
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


def _refuse_host_dependent(requested: int, platform: Platform, kind: str) -> None:
    if kind == "sparse":
        raise UnmodelledError(
            f"--block-size {requested}: vLLM 0.32's {platform.name} platform runs no sparse "
            "MLA (DeepSeek-V3.2 / GLM-5: platforms/cpu.py get_attn_backend_cls, 'Sparse "
            "Attention is not supported on CPU')")
    raise UnmodelledError(
        f"--block-size {requested}: vLLM 0.32 on CPU runs MLA at a block that depends on the "
        "host (platforms/cpu.py: without AMX CPU_MLA overrides it to 16, with AMX AMX_MLA keeps "
        "it, multiples of 32 only); kvplan cannot tell which: leave --block-size out (kvplan "
        "then sizes CPU_MLA's 16)")


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
    multiple = _multiple(platform, kind)
    if multiple is None:
        _refuse_host_dependent(requested, platform, kind)
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
