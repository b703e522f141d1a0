"""The block vLLM runs with no --block-size, by release: CacheConfig.DEFAULT_BLOCK_SIZE as the
attention backends take it (issue 26: 64 from vLLM 0.34).

platforms/interface.py update_block_size_for_backend, phase 1 (0.18 on; a --block-size given is
kept): _preferred_block_size_for_backends offers DEFAULT_BLOCK_SIZE to the model's non-SSM
attention backends. One backend: its get_preferred_block_size(default) (v1/attention/backend.py,
0.32.0 :152-160, 0.34.0 :158-166): the default where supports_block_size takes it (a multiple of
one of its kernel blocks, :125-141), else its smallest kernel block. Several: the default where
every one takes it. A model with no attention backend (pure Mamba) keeps the default itself
(model_executor/models/config.py MambaModelConfig: mamba_block_size = cache_config.block_size
with prefix caching on).

- DEFAULT_BLOCK_SIZE: 16 to 0.33 (0.32.0 config/cache.py:72, 0.33.0 :185), 64 from 0.34 (0.34.0
  config/cache.py:185, read by platforms/interface.py:777-791). So on CUDA a standard-attention
  model runs 64-token blocks at 0.34 (FLASH_ATTN MultipleOf(16), flash_attn.py:357-372;
  FLASHINFER [16, 32, 64], flashinfer.py:587-606; TRITON_ATTN and FLEX_ATTENTION multiples of
  16), and dense MLA its backend's preference of 64 (MLA_KERNEL_BLOCKS).
- ROCm standard attention: ROCM_ATTN, first on Instinct GPUs (platforms/rocm.py:557 / :562),
  returns 16 whatever the default (0.34.0 v1/attention/backends/rocm_attn.py:166-172: "Keep the
  native kernel for default-sized runs"; 0.33.0 has no override, so the default 16). RDNA's
  gfx1100 / gfx1201 and KV connectors put TRITON_ATTN first (64 at 0.34): not kvplan's ROCm
  GPUs. TRITON_MLA and the sparse pair (ROCM_AITER_MLA_SPARSE, the ROCm indexer: [1,
  MultipleOf(16)], mla/rocm_aiter_mla_sparse.py:361-362, mla/indexer.py:237-238) take the
  default: 64 at 0.34.
- CPU: platforms/cpu.py passes 128 in place of the default (0.33.0 :561-563, 0.34.0 :560-562;
  0.32.0 check_and_update_config :292-293): unchanged, kvplan.engines.vllm.alloc PLATFORMS.
"""

from __future__ import annotations

from kvplan._util.versions import version_key
from kvplan.engines.vllm.profiles import DEFAULT_VLLM_VERSION

# (first release, CacheConfig.DEFAULT_BLOCK_SIZE, where read), oldest first.
DEFAULT_BLOCK_SIZES: tuple[tuple[tuple[int, ...], int, str], ...] = (
    ((0,), 16, "0.10.0 - 0.33.0 config/cache.py (0.32.0 :72, 0.33.0 :185)"),
    ((0, 34), 64, "0.34.0 config/cache.py:185"),
)
# Dense MLA backends on CUDA: their kernel blocks (get_supported_kernel_block_sizes; a
# MultipleOf(16) as 16, since supports_block_size tests divisibility either way), 0.32.0 and
# 0.34.0 alike: mla/flashinfer_mla.py:204-205 [32, 64], mla/cutlass_mla.py:49-50 [128],
# mla/flashattn_mla.py:49-50 MultipleOf(16), mla/flashmla.py:57-58 [64], mla/triton_mla.py:126-133
# MultipleOf(16).
MLA_KERNEL_BLOCKS: dict[str, tuple[int, ...]] = {
    "FLASHINFER_MLA": (32, 64), "CUTLASS_MLA": (128,), "FLASH_ATTN_MLA": (16,),
    "FLASHMLA": (64,), "TRITON_MLA": (16,)}
# ROCm's standard-attention backend (ROCM_ATTN) prefers this block whatever the default.
ROCM_ATTN_BLOCK = 16


def cache_default_block(version: str | None) -> int:
    """CacheConfig.DEFAULT_BLOCK_SIZE of vLLM `version` (None: the default release's,
    kvplan.engines.vllm.profiles.DEFAULT_VLLM_VERSION, whose budget kvplan models)."""
    key = version_key(version or DEFAULT_VLLM_VERSION)
    return [size for since, size, _ in DEFAULT_BLOCK_SIZES if key >= since][-1]


def preferred_block(kernel_blocks: tuple[int, ...], default: int) -> int:
    """AttentionBackend.get_preferred_block_size: `default` where a kernel block divides it,
    else the smallest kernel block."""
    return default if any(default % k == 0 for k in kernel_blocks) else min(kernel_blocks)


def attention_default_block(platform: str, platform_block: int, version: str | None) -> int:
    """The block a standard-attention model runs on `platform` at vLLM `version` with no
    --block-size (`platform_block`: the platform's own, CPU's 128)."""
    if platform == "cuda":
        return cache_default_block(version)
    if platform == "rocm":
        return ROCM_ATTN_BLOCK
    return platform_block
