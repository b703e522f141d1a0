"""vLLM's rules for DeepSeek-V4's compressed sparse attention: which releases, KV dtypes,
platforms and block sizes kvplan sizes, and the pool they give (kvplan.engines.vllm.packed).

Read in vLLM 0.32 (the same in 0.33 and 0.34):
- model_executor/models/registry.py first lists DeepseekV4ForCausalLM in 0.20 (0.20.2 in the
  releases read); the packed KV-cache groups (kv_cache_utils.py _get_packed_kv_cache_groups)
  replaced 0.26's DeepSeek-V4 path (group_and_unify_kv_cache_specs) in 0.29, and 0.32 is the
  first release whose whole path kvplan read and checked (CPU oracle), so 0.20-0.31 are refused;
- models/deepseek_v4/attention.py _resolve_dsv4_kv_cache_dtype: the FlashMLA layout (CUDA but
  SM 12.x, and the CPU backend) stores fp8_ds_mla whatever fp8 flag is given, and "auto" means
  fp8 too; a bf16 KV cache is refused there ("only supports fp8 kv-cache"). SM 12.x (FlashInfer,
  plain bf16 / fp8 rows) and ROCm (its own classes) are not modelled;
- v1/attention/backends/mla/indexer.py DeepseekV4IndexerBackend.get_supported_kernel_block_sizes
  is [256] and platforms/interface.py _preferred_block_size_for_backends takes the smallest size
  every backend accepts: the cache block is 256 (the SWA cache, 64, and the compressor states, 4
  and 8, keep their own blocks); the CPU platform sets 256 over any --block-size;
- the pool is packed (kv_cache_utils.py _get_packed_kv_cache_groups needs a block-outermost
  layout): DeepseekV4IndexerBackend.supported_kv_cache_layouts is (BLHNC, BLNHC), both
  block-outermost, and v1/attention/backends/utils.py resolve_kv_cache_layout keeps a layout
  every backend supports (vLLM's CPU build logs "Using BLHNC KV cache layout");
- config/vllm.py max_in_flight_tokens = max_concurrent_batches x max_num_batched_tokens (2
  batches with async scheduling at PP 1: kvplan.engines.vllm.in_flight).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.engines.vllm.alloc import Platform, VllmKVConfig, get_platform
from kvplan.engines.vllm.in_flight import vllm_max_concurrent_batches
from kvplan.engines.vllm.packed import vllm_packed_config
from kvplan.engines.vllm.profiles import vllm_profile
from kvplan.kv.compressed import v4_layers
from kvplan.model.attention import AttentionKind, CompressedSparseAttention

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec

FIRST_REGISTERED = "0.20"
FIRST_CHECKED = "0.32"
V4_CACHE_BLOCK = 256
# --kv-cache-dtype values the FlashMLA layout turns into fp8_ds_mla.
FP8_DS_MLA_FLAGS = frozenset({"auto", "fp8", "fp8_e4m3", "fp8_ds_mla"})


def check_v4_version(version: str | None) -> None:
    """Refuse a release that predates DeepSeek-V4 or that kvplan has not checked, in one line."""
    key = version_key(version)
    if key < version_key(FIRST_REGISTERED):
        raise UnmodelledError(
            f"--engine-version: vLLM {version} does not serve DeepseekV4ForCausalLM (first "
            f"registered in vLLM {FIRST_REGISTERED})")
    if key < version_key(FIRST_CHECKED):
        raise UnmodelledError(
            f"--engine-version: kvplan sizes DeepSeek-V4 on vLLM {FIRST_CHECKED} and later "
            f"(its packed KV-cache groups, checked against vLLM's CPU build); vLLM {version} "
            "is not checked")


def check_v4_layout(kv_cache_dtype: str, *, platform: str,
                    compute_capability: tuple[int, int] | None) -> None:
    """The FlashMLA fp8_ds_mla layout only."""
    if platform not in ("cuda", "cpu"):
        raise UnmodelledError(f"--platform {platform}: DeepSeek-V4's caches are modelled on "
                              "CUDA and CPU only (vLLM's ROCm classes are not read)")
    if platform == "cuda" and compute_capability is not None and compute_capability[0] == 12:
        raise UnmodelledError(
            "DeepSeek-V4 on SM 12.x: vLLM picks FlashInfer's plain-row KV cache there "
            "(models/deepseek_v4/nvidia/model.py _select_dsv4_attn_cls), not modelled")
    if kv_cache_dtype not in FP8_DS_MLA_FLAGS:
        raise UnmodelledError(
            f"--kv-dtype {kv_cache_dtype}: vLLM's FlashMLA DeepSeek-V4 layout stores fp8_ds_mla "
            "only (auto or fp8; attention.py _resolve_dsv4_kv_cache_dtype refuses the rest)")


def vllm_v4_kv_config(att: CompressedSparseAttention, num_hidden_layers: int, *, context: int,
                      platform: Platform, version: str | None = None,
                      kv_cache_dtype: str = "auto", block_size: int | None = None,
                      compute_capability: tuple[int, int] | None = None,
                      max_num_batched_tokens: int = 8192, async_scheduling: bool | None = None,
                      pp: int = 1, num_spec_tokens: int = 0) -> VllmKVConfig:
    """vLLM's pool for DeepSeek-V4 on one rank (every rank holds every layer's caches: the
    specs say max_tp_shards=1). `async_scheduling` None: the platform's default."""
    check_v4_version(version)
    check_v4_layout(kv_cache_dtype, platform=platform.name,
                    compute_capability=compute_capability)
    if block_size not in (None, V4_CACHE_BLOCK) and platform.name != "cpu":
        # The CPU platform overrides any --block-size to 256 for V4 (platforms/cpu.py
        # check_and_update_config: "DeepSeek-V4 CPU backend requires block_size=256,
        # overriding user-specified block_size"); CUDA keeps the user's size and the worker's
        # kernel-block check then finds no size the indexer takes.
        raise UnmodelledError(
            f"--block-size {block_size}: vLLM's DeepSeek-V4 indexer takes block "
            f"{V4_CACHE_BLOCK} only (DeepseekV4IndexerBackend)")
    if num_spec_tokens:
        raise UnmodelledError("DeepSeek-V4 with speculative decoding (MTP / DSpark): the draft "
                              "layers' caches are not modelled")
    if pp != 1:
        raise UnmodelledError("DeepSeek-V4 with pipeline parallelism: not modelled")
    profile = vllm_profile(version)
    on = platform.async_scheduling if async_scheduling is None else async_scheduling
    batches = vllm_max_concurrent_batches(version, async_scheduling=on, pp=pp)
    return vllm_packed_config(v4_layers(att, num_hidden_layers), context=context,
                              cache_block=V4_CACHE_BLOCK, profile=profile, platform=platform,
                              in_flight_tokens=max_num_batched_tokens * batches)


def vllm_v4_stage_config(spec: ModelSpec, att: CompressedSparseAttention, inputs: PlanInputs,
                         context: int) -> VllmKVConfig:
    """`vllm_v4_kv_config` for a plan's inputs (kvplan.engines.vllm.engine.vllm_stage_config):
    the KV dtype kvplan resolved (fp8 for auto: kv_dtype.py), --block-size as given, the
    device's compute capability, the scheduler's batch; the whole model (no pipeline stages)."""
    if inputs.shared_prefix:
        # Prefix blocks of the compressed rows shared across requests in the packed pool (and
        # the windows' and states' own copies) were not checked against vLLM.
        raise UnmodelledError("--shared-prefix: a prefix shared by DeepSeek-V4's requests in "
                              "vLLM's packed pool is not modelled")
    return vllm_v4_kv_config(
        att, spec.num_hidden_layers, context=context, platform=get_platform(inputs.platform),
        version=inputs.engine_version, kv_cache_dtype=inputs.kv_dtype,
        block_size=inputs.block_size, compute_capability=inputs.compute_capability,
        max_num_batched_tokens=inputs.max_num_batched_tokens, pp=inputs.pp,
        num_spec_tokens=inputs.num_speculative_tokens)


def refuse_v4_profile_peaks(spec: ModelSpec, inputs: PlanInputs) -> None:
    """Refuse vLLM's budget from the device for DeepSeek-V4 unless the reserve (or the budget)
    is given: its weights are counted (kvplan.weights.csa), but its profile run holds
    workspaces kvplan's activation model (kvplan.engines.reserve.activation_bytes: the widest
    dense layer, and the fused-MoE buffers) does not have, read in 0.32:
    - layers/sparse_attn_indexer.py:445-472, the indexer's dummy run: a K-gather workspace of
      max_total_seq_len rows (indexer.py get_max_prefill_buffer_size over the ratio, 132 B a
      row), the radix top-k workspace and a VLLM_SPARSE_INDEXER_MAX_LOGITS_MB (512 MiB) logits
      tensor, and the top-k row-exchange transient;
    - models/deepseek_v4/nvidia/flashmla.py:104-128: a bf16 prefill gather of
      PREFILL_CHUNK_SIZE (4) x (max_model_len / ratio + window + max_num_batched_tokens) x
      head_dim, with top-k and length index buffers;
    - nvidia/model.py:1413-1419: a residual stream hc_mult times the hidden size wide.
    Which of these are live together at the peak was not measured (no GPU log of V4 read)."""
    if spec.attention.kind is not AttentionKind.csa:
        return
    if inputs.reserve_bytes is not None or inputs.kv_budget_bytes is not None:
        return
    raise UnmodelledError(
        f"{spec.source}: DeepSeek-V4's profile-run workspaces in vLLM (the sparse indexer's "
        "512 MiB logits and K-gather buffers, FlashMLA's bf16 prefill gather over "
        "max_model_len / ratio rows, the hc_mult-wide residual stream) are not modelled, so "
        "the budget from the GPU is not derived: give --reserve-gib (kvplan counts the "
        "weights) or --kv-budget-gib")

