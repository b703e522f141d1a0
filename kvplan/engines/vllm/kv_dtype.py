"""vLLM's --kv-cache-dtype auto: the checkpoint's declared KV dtype, else the model's 16-bit
dtype, except where vLLM's own rule for a model and GPU decides it. Read from vLLM 0.32
(vllm/model_executor/models/config.py, engine/arg_utils.py, config/model.py):

- The model dtype (`vllm_model_dtype`), config/model.py _get_and_verify_dtype with --dtype auto:
  ModelArchConfigConvertorBase.get_torch_dtype reads config.json's dtype / torch_dtype (float32
  where absent; kvplan reads an absent one as float32 too, kvplan.sources.hf_config._dtype) --
  a multimodal wrapper's outer one first, then its text config's (``hf_config.dtype``, then
  ``hf_config.get_text_config().dtype``; kvplan.sources.hf_wrappers.dtype_fields, the spec's
  wrapper_dtype: LLaVA-OneVision's float16 wrapper around a bfloat16 Qwen2 runs float16), and
  _resolve_auto_dtype keeps it where the platform supports it, downcasts float32 to the
  platform's first supported dtype (CUDA SM 8.0+ and ROCm: [bfloat16, float16, float32],
  platforms/cuda.py / interface.py supported_dtypes), and falls back to that first dtype for
  float16 on the model types _FLOAT16_NOT_SUPPORTED_MODELS lists (gemma2, gemma3, gemma3_text,
  glm4: "Numerical instability"). So float16 -> float16, bfloat16 -> bfloat16, float32 ->
  bfloat16 (a pooling model would take float16: kvplan plans generation only). cache_config's
  auto is that dtype (utils/torch_utils.py kv_cache_dtype_str_to_dtype: ``return
  model_config.dtype``): a float16 checkpoint's KV cache is float16, the same 2 B as bfloat16.
  Below SM 8.0 (no preset has one) vLLM casts bfloat16 to float16; not modelled.

- engine/arg_utils.py create_engine_config, utils/torch_utils.py
  resolve_kv_cache_dtype_string: auto takes the dtype the checkpoint's quantization_config
  declares, before any model rule runs (kvplan.model.quant_config.declared_kv_cache_dtype). A
  compressed-tensors kv_cache_scheme acts in Attention.__init__ only (layers/attention/
  attention.py); MLA layers read cache_config.cache_dtype (mla_attention.py), so an MLA model
  keeps auto (its 16-bit cache, unless the rule below turns it).
- models/config.py GlmMoeDsaForCausalLM.verify_and_update_config (GLM-5, model_type
  glm_moe_dsa): ``if cache_config.cache_dtype == "auto" and current_platform.is_cuda() and
  current_platform.is_device_capability_family(100): cache_config.cache_dtype = "fp8_e4m3"``.
  platforms/interface.py is_device_capability_family: ``capability.to_int() // 10 == 100 //
  10``, i.e. any SM 10.x (B200, GB200 10.0; B300, GB300 10.3), not SM 12.x (RTX 5090, RTX PRO
  6000, GB10) and not Hopper; ROCm is not CUDA (MI300X: bf16). Only auto is switched: a
  --kv-cache-dtype given is run as given. DeepSeek-V3.2 (DeepseekV32ForCausalLM) has no such
  rule. The rule was read in 0.32 only (an older models/config.py's GlmMoeDsaForCausalLM sets
  only the DCP defaults), so on SM 10.x an older version's auto is refused, not guessed. A
  declared KV dtype is resolved first (VllmConfig runs the rule after), so it wins.
- DeepSeek's sparse attention (a spec with an indexer: DeepSeek-V3.2, GLM-5) runs on the sparse
  MLA backend platforms/cuda.py _get_backend_priorities picks by the device capability, and
  the latent row is that backend's (model_executor/layers/attention/mla_attention.py
  _canonicalize_sparse_mla_kv_cache_dtype, get_kv_cache_spec). kvplan sizes bf16 (576 x 2 B)
  and FlashMLA-sparse's fp8_ds_mla row (656 B). SM 12.x: FLASHINFER_MLA_SPARSE_SM120 is the
  only sparse backend (TRITON_MLA is not sparse); it takes auto, fp8 and fp8_e4m3 and runs them
  as fp8_ds_mla, and has no bfloat16: auto is fp8, bf16 is refused. SM 10.x at fp8:
  FLASHINFER_MLA_SPARSE comes first (FlashInferMLASparseTRTLLMBackend, major 10 only; it
  refuses fp8_ds_mla) and mla_attention.py leaves fp8 / fp8_e4m3 as given ("Using standard
  fp8 KV cache format"): get_kv_cache_spec builds MLAAttentionSpec(head_size 576, dtype fp8,
  state_content_bytes None), so state_content_size_bytes = (576 + head_size_v 0) x 1 = 576 B
  (v1/kv_cache_interface.py AttentionSpec), kv_quant_mode FP8_PER_TENSOR (no inline scales:
  MLACommonBackend.customize_spec adds them for per-token-head modes only, and this backend's
  customize_spec does not call it). Its customize_spec, align_blocks_to_rows(spec, 32)
  (sparse_utils.py; kernel blocks MultipleOf(32)), sets block_stride_alignment = 32 x 576 =
  18,432 B. The indexer's DeepseekV32IndexerBackend takes kernel block [64] only, so the
  platform's block (interface.py _preferred_block_size_for_backends: lcm(32, 64)) is 64, and
  any block either backend takes is a multiple of 32: a page (64 x 576 = 36,864 B) is whole
  rows of 32, and v1/core/kv_cache_utils.py _get_kv_cache_bytes_per_block pads nothing
  (layer-outer LBNHC, the default preference's first block-compact layout, attention/
  backends/utils.py: round_up(page, 18,432) = page; block-outer would round the sum to
  lcm(18,432, 1)). The indexer (deepseek_v2.py DeepseekV32IndexerCache, 128 + 4 B uint8) is
  the backend's own, unchanged. So kvplan sizes it as the 576-B row (`sparse_mla_served`):
  576 + 132 = 708 B per token per layer. Read in 0.32 only: an older version is refused.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.engines.launch import declared_kv_cache
from kvplan.model.attention import CompressedSparseAttention, LatentAttention

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.hardware.gpus import GPU
    from kvplan.model.spec import ModelSpec

# config/model.py _FLOAT16_NOT_SUPPORTED_MODELS: --dtype auto runs these in bfloat16 even when
# config.json says float16 (see the module).
FLOAT16_NOT_SUPPORTED_MODEL_TYPES = frozenset({"gemma2", "gemma3", "gemma3_text", "glm4"})
GLM_DSA_MODEL_TYPE = "glm_moe_dsa"  # GlmMoeDsaForCausalLM (vllm_registry.json)
GLM_DSA_FP8_READ_IN = (0, 32)  # models/config.py GlmMoeDsaForCausalLM: the fp8 rule, as read
GLM_DSA_FAMILY = 10  # is_device_capability_family(100): SM 10.x
SPARSE_FLASHINFER_FP8_MAJOR = 10  # platforms/cuda.py: FLASHINFER_MLA_SPARSE first for fp8
SPARSE_FLASHINFER_FP8_READ_IN = (0, 32)  # its standard fp8 row and alignment, as read
SPARSE_SM120_MAJOR = 12  # platforms/cuda.py: FLASHINFER_MLA_SPARSE_SM120, fp8_ds_mla only
# The CPU platform refuses a quantized KV cache for MLA from 0.33 (0.33.0 and 0.34.0
# platforms/cpu.py:157-162 get_attn_backend_cls: "--kv-cache-dtype fp8 is not supported by MLA
# attention on CPU"; 0.32.0 :150-175 checks none, and CPU_MLA lists "auto" alone).
CPU_MLA_FP8_REFUSED_SINCE = (0, 33)


def _sparse_major(spec: ModelSpec, platform: str, capability: tuple[int, int] | None
                  ) -> int | None:
    """The CUDA major version whose sparse MLA backend decides `spec`'s latent row (see the
    module), None for a model without the indexer, off CUDA or with no capability known."""
    if spec.indexer is None or platform != "cuda" or capability is None:
        return None
    return capability[0]


def check_sparse_mla_backend(spec: ModelSpec, inputs: PlanInputs) -> None:
    """Refuse, in one line, DeepSeek's sparse attention at a KV dtype whose row vLLM's sparse
    MLA backend on the GPU lays out otherwise than kvplan sizes it (see the module)."""
    major = _sparse_major(spec, inputs.platform, inputs.compute_capability)
    if major == SPARSE_FLASHINFER_FP8_MAJOR and inputs.kv_dtype == "fp8" and (
            inputs.engine_version is not None
            and version_key(inputs.engine_version) < SPARSE_FLASHINFER_FP8_READ_IN):
        raise UnmodelledError(
            f"--engine-version {inputs.engine_version}: KV cache fp8 on SM 10.x (given, "
            "declared by the checkpoint, or GLM-5's auto): which sparse MLA backend and fp8 "
            "row this vLLM runs DeepSeek-V3.2 / GLM-5 on was read in 0.32 only "
            "(FLASHINFER_MLA_SPARSE, standard 576-B row): give --engine-version 0.32 or "
            "--kv-dtype bf16")
    if major == SPARSE_SM120_MAJOR and inputs.kv_dtype != "fp8":
        raise UnmodelledError(
            f"--kv-dtype {inputs.kv_dtype}: on SM 12.x vLLM 0.32's only sparse MLA backend "
            "(FLASHINFER_MLA_SPARSE_SM120, platforms/cuda.py) runs DeepSeek-V3.2 / GLM-5 at "
            "fp8_ds_mla and takes no 16-bit cache: give --kv-dtype fp8")


def check_cpu_mla_kv_dtype(spec: ModelSpec, inputs: PlanInputs) -> None:
    """Refuse, in one line, an fp8 KV cache for MLA on vLLM's CPU platform where vLLM stops
    (CPU_MLA_FP8_REFUSED_SINCE; no version: the default release, 0.32, which starts)."""
    if (inputs.platform != "cpu" or inputs.kv_dtype != "fp8" or inputs.engine_version is None
            or not isinstance(spec.attention, LatentAttention)
            or version_key(inputs.engine_version) < CPU_MLA_FP8_REFUSED_SINCE):
        return
    raise UnmodelledError(
        f"--kv-dtype fp8 --platform cpu: vLLM {inputs.engine_version} does not start MLA with "
        "an fp8 KV cache on CPU ('--kv-cache-dtype fp8 is not supported by MLA attention on "
        "CPU', platforms/cpu.py get_attn_backend_cls, from 0.33): give --kv-dtype bf16")


def sparse_mla_served(spec: ModelSpec, inputs: PlanInputs) -> ModelSpec:
    """`spec` with its latent row as vLLM's sparse MLA backend keeps it at `inputs`' KV dtype on
    its device: the standard fp8 row (576 x 1 B) for DeepSeek's sparse attention at fp8 on
    SM 10.x (FLASHINFER_MLA_SPARSE, see the module), else fp8_ds_mla's (the default)."""
    att = spec.attention
    if not isinstance(att, LatentAttention):
        return spec
    standard = (inputs.kv_dtype == "fp8" and _sparse_major(
        spec, inputs.platform, inputs.compute_capability) == SPARSE_FLASHINFER_FP8_MAJOR)
    if att.standard_fp8_row == standard:
        return spec
    return replace(spec, attention=replace(att, standard_fp8_row=standard))


def vllm_runnable_kv_dtypes(spec: ModelSpec, gpu: GPU | None) -> tuple[str, ...] | None:
    """The KV dtypes kvplan sizes vLLM running `spec` at on `gpu`: fp8 only for DeepSeek's
    sparse attention on SM 12.x (see the module); None: every one."""
    if isinstance(spec.attention, CompressedSparseAttention):
        return ("fp8",)  # DeepSeek-V4: fp8_ds_mla only (kvplan.engines.vllm.compressed)
    major = None if gpu is None else _sparse_major(spec, gpu.platform, gpu.compute_capability)
    if major == SPARSE_SM120_MAJOR:
        return ("fp8",)
    return None


def _glm_dsa_rule(spec: ModelSpec, version: str | None, gpu: GPU | None) -> str | None:
    """fp8 where models/config.py turns GLM-5's auto to fp8_e4m3 on `gpu` (see the module),
    None where it leaves auto alone; refused in one line where that depends on a GPU not named
    or on a version whose rule was not read."""
    if spec.model_type != GLM_DSA_MODEL_TYPE:
        return None
    where = f"--engine vllm{' ' + version if version else ''}"
    capability = None if gpu is None else gpu.compute_capability
    if gpu is None or (capability is None and gpu.platform == "cuda"):
        raise UnmodelledError(
            f"{where}: vLLM's --kv-cache-dtype auto for GlmMoeDsaForCausalLM (GLM-5) is "
            "fp8_e4m3 on SM 10.x GPUs (B200, B300) and bf16 elsewhere (models/config.py, by "
            "the device capability family): give --gpu or --kv-dtype")
    if gpu.platform != "cuda" or capability is None or capability[0] != GLM_DSA_FAMILY:
        return None
    if version is not None and version_key(version) < GLM_DSA_FP8_READ_IN:
        raise UnmodelledError(
            f"{where}: vLLM 0.32 turns GlmMoeDsaForCausalLM's (GLM-5) --kv-cache-dtype auto "
            "to fp8_e4m3 on SM 10.x (models/config.py); whether this version does was not "
            "read: give --kv-dtype or --engine-version 0.32")
    return "fp8"


def vllm_model_dtype(spec: ModelSpec) -> str:
    """The 16-bit dtype vLLM 0.32 computes `spec` in under --dtype auto, which its
    --kv-cache-dtype auto takes where nothing else decides (see the module): fp16 for a float16
    checkpoint (a wrapper's outer dtype first; but bf16 for the model types
    FLOAT16_NOT_SUPPORTED_MODEL_TYPES lists), else bf16 (bfloat16, float32 or no dtype)."""
    dtype = spec.wrapper_dtype or spec.weight_dtype
    if dtype == "fp16" and spec.model_type not in FLOAT16_NOT_SUPPORTED_MODEL_TYPES:
        return "fp16"
    return "bf16"


def vllm_auto_kv_dtype(spec: ModelSpec, version: str | None, gpu: GPU | None = None
                       ) -> tuple[str, str | None]:
    """The KV dtype vLLM `version` runs `spec` at on `gpu` with --kv-cache-dtype auto, and the
    line saying why where the checkpoint or models/config.py chose it (see the module)."""
    declared = declared_kv_cache(spec)
    if declared is not None and not (
            isinstance(spec.attention, LatentAttention)
            and declared[0] == "quantization_config.kv_cache_scheme"
            and (spec.quantization_config or {}).get("quant_method") == "compressed-tensors"):
        field, dtype = declared
        return dtype, (f"KV cache {dtype}: {field} declares it, and vLLM's default "
                       "--kv-cache-dtype auto uses it (engine/arg_utils.py "
                       "resolve_kv_cache_dtype_string); --kv-dtype overrides")
    if isinstance(spec.attention, CompressedSparseAttention):
        return "fp8", ("KV cache fp8: vLLM stores DeepSeek-V4's caches as fp8_ds_mla with "
                       "--kv-cache-dtype auto (models/deepseek_v4/attention.py "
                       "_resolve_dsv4_kv_cache_dtype)")
    if gpu is not None and _sparse_major(spec, gpu.platform, gpu.compute_capability) \
            == SPARSE_SM120_MAJOR:
        return "fp8", (f"KV cache fp8: vLLM runs DeepSeek's sparse attention on {gpu.name} "
                       "(SM 12.x) on FLASHINFER_MLA_SPARSE_SM120 alone, which runs "
                       "--kv-cache-dtype auto as fp8_ds_mla (mla_attention.py)")
    if _glm_dsa_rule(spec, version, gpu) == "fp8":
        assert gpu is not None and gpu.compute_capability is not None
        major, minor = gpu.compute_capability
        return "fp8", (f"KV cache fp8: vLLM's --kv-cache-dtype auto takes fp8_e4m3 for "
                       f"GlmMoeDsaForCausalLM on SM{major}{minor} ({gpu.name}; "
                       "models/config.py, SM 10.x only); --kv-dtype overrides")
    return vllm_model_dtype(spec), None
