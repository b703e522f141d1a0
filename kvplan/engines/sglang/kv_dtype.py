"""SGLang's --kv-cache-dtype for a checkpoint that declares a KV-cache dtype: what its default
`auto` runs, and the flag a plan names its dtype with, by version. Read from each release's
wheel (sglang==X from PyPI), python/sglang/srt/:

- model_executor/model_runner.py, 0.4.5 to 0.5.2 (0.5.2: line 1231): ``if kv_cache_dtype ==
  "auto": self.kv_cache_dtype = self.dtype`` -- the model dtype, whatever the checkpoint declares.
- From 0.5.3 (0.5.3: line 1397; 0.5.14: configure_kv_cache_dtype, line 2337): auto takes
  float8_e4m3fn when ``getattr(self.model, "quant_config", None).kv_cache_quant_algo.upper() ==
  "FP8"``, else the model dtype. Only ModelOpt's configs carry that attribute
  (layers/quantization/modelopt_quant.py; Petit's NVFP4 on ROCm): a flat quantization_config's
  kv_cache_scheme {type: float, num_bits: 8}, or hf_quant_config.json's kv_cache_quant_algo. In
  0.5.3 only ModelOptFp4Config sets it (ModelOptFp8Config keeps it as ``kv_cache_quant_method``,
  line 107); from 0.5.4 both (ModelOptQuantConfig, line 93). And it is read off the model object,
  which not every model class keeps (0.5.14: Qwen2_5_VLForConditionalGeneration,
  Olmo2ForCausalLM, HunYuanMoEV1ForCausalLM set no ``self.quant_config``): whether a ModelOpt fp8
  KV cache is taken depends on the model class, so kvplan does not guess it.
- compressed-tensors' kv_cache_scheme: CompressedTensorsConfig (compressed_tensors.py) has no
  kv_cache_quant_algo, so auto stays the model dtype in every version; likewise a ModelOpt NVFP4
  KV cache ("NVFP4" is not "FP8").
- DeepSeek's sparse attention (DSA: DeepSeek-V3.2, GLM-5; kvplan: a spec with an indexer),
  server_args.py, whatever the checkpoint declares, by the GPU's compute capability
  (``torch.cuda.get_device_capability()``; kvplan.hardware.gpus.GPU.compute_capability):
  0.5.3-0.5.4 (_handle_model_specific_adjustments; 0.5.3 line 829, 0.5.4 line 1029): ``if
  major >= 10: self.kv_cache_dtype = "fp8_e4m3"`` -- on Blackwell every --kv-cache-dtype is
  turned to fp8; below, auto is left to model_runner.py (above). 0.5.5-0.5.14 (0.5.5 line 1083;
  0.5.9-0.5.14 _set_default_nsa_kv_cache_dtype / _set_default_dsa_kv_cache_dtype, 0.5.14 line
  3416) and 0.5.15-0.5.23 (arg_groups/overrides.py _dsa_kv_cache_dtype_default, 0.5.23 line
  532): only auto is switched, to "fp8_e4m3" if major >= 10 else "bfloat16" (so below SM10 a
  declared fp8 KV cache is not taken either). (0.5.20+ keeps bfloat16 on SM10 for a config with
  ``learnable_sink``: neither DeepSeek-V3.2's nor GLM-5's has one.) ROCm reports the gfx
  version (MI300X 9.4): bfloat16. Which architectures: configs/model_config.py
  is_deepseek_nsa / is_deepseek_dsa (index_topk set) within the server_args.py list; DeepSeek-
  V3.2 in every version (to 0.5.11 utils/hf_transformers get_config renames the
  DeepseekV32ForCausalLM that transformers does not know to DeepseekV3ForCausalLM; from 0.5.12
  the list names it); GlmMoeDsaForCausalLM from 0.5.9, the first release with the model
  (models/glm4_moe.py EntryClass; earlier releases cannot load GLM-5).
- The model dtype (`sglang_model_dtype`), configs/model_config.py _get_and_verify_dtype (every
  release read, 0.4.5-0.5.23; 0.5.23 line 2284), with --dtype auto: hf_text_config's dtype /
  torch_dtype, float32 where absent; float32 becomes float16 ("Following the common practice,
  we use float16 for float32 models"), bfloat16 for a model_type starting with "gemma"; float16
  and bfloat16 are kept. server_args.py then forces --dtype bfloat16 for some architectures,
  whatever config.json says: GptOssForCausalLM with an mxfp4 quantization_config ("use bf16 for
  mxfp4 triton kernels", 0.5.0rc0 on; 0.5.23 arg_groups/model_overrides/gpt_oss.py), and
  MistralLarge3ForCausalLM / PixtralForConditionalGeneration (0.5.14 line 3508; 0.5.23
  model_override_base.py MODEL_OVERRIDES), published in bfloat16 (kvplan does not tell them
  apart). model_runner.py's auto (above) takes that dtype: a float16 checkpoint's KV cache is
  float16, and so is a float32 one's (2 B either way, as bf16).
- server_args.py --kv-cache-dtype choices: "auto", "fp8_e5m2", "fp8_e4m3" to 0.5.3; "bf16",
  "bfloat16" from 0.5.4 (line 1786); "fp4_e2m1" from 0.5.5.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.versions import version_key
from kvplan.engines.launch import declared_kv_cache

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.hardware.gpus import GPU
    from kvplan.model.spec import ModelSpec

AUTO_READS_CHECKPOINT_SINCE = (0, 5, 3)  # model_runner.py: auto takes kv_cache_quant_algo FP8
BF16_CHOICE_SINCE = (0, 5, 4)  # server_args.py: --kv-cache-dtype bf16 / bfloat16
DSA_BY_GPU_SINCE = (0, 5, 3)  # server_args.py: fp8_e4m3 on SM10+ for DeepSeek's sparse attention
DSA_AUTO_ONLY_SINCE = (0, 5, 5)  # server_args.py: only auto switched, bfloat16 below SM10
GLM_DSA_SINCE = (0, 5, 9)  # GlmMoeDsaForCausalLM: the model and its server_args.py entry
GLM_DSA_MODEL_TYPE = "glm_moe_dsa"


def sglang_model_dtype(spec: ModelSpec) -> str:
    """The 16-bit dtype SGLang computes `spec` in under --dtype auto, which its
    --kv-cache-dtype auto takes where nothing else decides (see the module): bf16 for a
    bfloat16 checkpoint, fp16 for a float16 one, and for a float32 one (or no dtype) fp16, but
    bf16 for Gemma; bf16 for GPT-OSS in MXFP4 (server_args.py's override)."""
    if spec.model_type == "gpt_oss" and (
            spec.quantization_config or {}).get("quant_method") == "mxfp4":
        return "bf16"
    if spec.weight_dtype in ("bf16", "fp16"):
        return spec.weight_dtype
    if spec.weight_dtype == "fp32":
        return "bf16" if spec.model_type.startswith("gemma") else "fp16"
    return "bf16"  # a quantized torch_dtype kvplan reads as bfloat16 (hf_config._dtype)


def _dsa_rule(spec: ModelSpec, version: str | None, gpu: GPU | None) -> str | None:
    """The KV dtype server_args.py sets for DeepSeek's sparse attention (see the module) on
    `gpu`, whatever --kv-cache-dtype says (0.5.3-0.5.4, SM10+) or for auto (0.5.5+); None
    where it sets none. Refused in one line where it depends on a GPU not named."""
    key = version_key(version)
    if spec.indexer is None or key < DSA_BY_GPU_SINCE:
        return None
    where = f"--engine sglang{' ' + version if version else ''}"
    if spec.model_type == GLM_DSA_MODEL_TYPE and key < GLM_DSA_SINCE:
        raise InputError(f"{where}: SGLang runs GlmMoeDsaForCausalLM (GLM-5) from 0.5.9 "
                         "(models/, server_args.py): give --engine-version 0.5.9 or newer")
    capability = None if gpu is None else gpu.compute_capability
    if capability is None:
        raise UnmodelledError(
            f"{where}: SGLang's --kv-cache-dtype for DeepSeek's sparse attention is fp8_e4m3 on "
            "SM10+ GPUs (Blackwell) and bfloat16 below (server_args.py, by "
            "torch.cuda.get_device_capability()): give --gpu or --kv-dtype")
    if capability[0] >= 10:
        return "fp8"
    return "bf16" if key >= DSA_AUTO_ONLY_SINCE else None


def _dsa_note(dtype: str, gpu: GPU | None, version: str | None) -> str:
    assert gpu is not None and gpu.compute_capability is not None
    major, minor = gpu.compute_capability
    how = ("sets every --kv-cache-dtype to it" if version_key(version) < DSA_AUTO_ONLY_SINCE
           else "takes it for --kv-cache-dtype auto")
    return (f"KV cache {dtype}: SGLang {how} for DeepSeek's sparse attention on SM{major}{minor} "
            f"({gpu.name}; server_args.py, fp8_e4m3 from SM100, bfloat16 below); "
            + ("no --kv-dtype changes it before 0.5.5" if how.startswith("sets")
               else "--kv-dtype overrides"))


def _model_dtype_note(spec: ModelSpec, field: str, dtype: str, why: str) -> str:
    return (f"KV cache {sglang_model_dtype(spec)}: {field} declares {dtype}, but SGLang's default "
            "--kv-cache-dtype auto "
            f"keeps the model dtype ({why}); --kv-dtype overrides")


def sglang_auto_kv_dtype(spec: ModelSpec, version: str | None, gpu: GPU | None = None
                         ) -> tuple[str, str | None]:
    """The KV dtype SGLang `version` runs `spec` at on `gpu` with --kv-cache-dtype auto, and the
    line saying why where the checkpoint or server_args.py chose it; refused in one line where
    that depends on the model class (a ModelOpt fp8 KV cache from 0.5.3) or on a GPU not named
    (DeepSeek's sparse attention): see the module."""
    dsa = _dsa_rule(spec, version, gpu)
    if dsa == "fp8" or (dsa == "bf16" and declared_kv_cache(spec) is not None):
        return dsa, _dsa_note(dsa, gpu, version)
    if dsa is not None:
        return dsa, None
    declared = declared_kv_cache(spec)
    model = sglang_model_dtype(spec)
    if declared is None:
        return model, None
    field, dtype = declared
    if version_key(version) < AUTO_READS_CHECKPOINT_SINCE:
        return model, _model_dtype_note(spec, field, dtype, f"model_runner.py before 0.5.3, "
                                        f"here {version}")
    if (spec.quantization_config or {}).get("quant_method") == "compressed-tensors":
        return model, _model_dtype_note(spec, field, dtype, "model_runner.py reads only "
                                        "ModelOpt's kv_cache_quant_algo")
    if dtype != "fp8":
        return model, _model_dtype_note(spec, field, dtype, "model_runner.py takes only FP8")
    raise UnmodelledError(
        f"{field}: the checkpoint declares an {dtype} KV cache; SGLang's default --kv-cache-dtype "
        "auto takes it only where the model class keeps its quant_config (model_runner.py "
        "configure_kv_cache_dtype), which kvplan does not model: give --kv-dtype")


def sglang_given_kv_dtype(spec: ModelSpec, kv_dtype: str, version: str | None,
                          gpu: GPU | None = None) -> tuple[str, str | None]:
    """The KV dtype SGLang `version` runs `spec` at on `gpu` when told `kv_dtype`: as told, but
    fp8 for DeepSeek's sparse attention on SM10+ in 0.5.3-0.5.4 (server_args.py sets it
    whatever was asked, see the module), with the line that says so. A GPU not named: as told
    (kvplan cannot see the override; `plan` always has the GPU)."""
    if (kv_dtype != "fp8" and gpu is not None and version_key(version) < DSA_AUTO_ONLY_SINCE
            and _dsa_rule(spec, version, gpu) == "fp8"):
        return "fp8", _dsa_note("fp8", gpu, version)
    return kv_dtype, None


def sglang_runnable_kv_dtypes(spec: ModelSpec, version: str | None, gpu: GPU | None = None
                              ) -> tuple[str, ...] | None:
    """Only fp8 in 0.5.3 for a checkpoint that declares an fp8 KV cache (`sglang_kv_dtype_flag`
    refuses the others) and, in 0.5.3-0.5.4, for DeepSeek's sparse attention on SM10+
    (server_args.py sets fp8 whatever is asked); else every one kvplan plans."""
    declared = declared_kv_cache(spec)
    key = version_key(version)
    if (key < DSA_AUTO_ONLY_SINCE and gpu is not None
            and _dsa_rule(spec, version, gpu) == "fp8"):
        return ("fp8",)
    if (declared is not None and declared[1] == "fp8"
            and AUTO_READS_CHECKPOINT_SINCE <= key < BF16_CHOICE_SINCE):
        return ("fp8",)
    return None


def sglang_kv_dtype_flag(kv_dtype: str, declared: str | None, version: str | None,
                         auto: str | None = None) -> tuple[str, ...]:
    """The --kv-cache-dtype flag that makes SGLang `version` run the planned `kv_dtype` (none:
    its auto runs it). fp8 is named always. A declared fp8 can turn auto away from the model
    dtype (from 0.5.3), and so does server_args.py for DeepSeek's sparse attention on SM10+
    (`auto`: what auto runs there, see the module), and auto runs the model dtype (fp16 for a
    float16 checkpoint, `sglang_model_dtype`), not another 16-bit one: a bf16 plan is then named
    bfloat16 from 0.5.4 and refused before, which has no bf16 choice (also for a
    compressed-tensors scheme, whose fp8 auto would not take: the launch knows the declared
    dtype only); any other (fp16, fp32) is refused, --kv-cache-dtype having no choice for it."""
    if kv_dtype == "fp8":
        return ("--kv-cache-dtype", "fp8_e4m3")
    key = version_key(version)
    where = f"--engine sglang{' ' + version if version else ''}"
    if auto == "fp8" and key < DSA_AUTO_ONLY_SINCE:
        raise InputError(f"{where}: server_args.py sets an fp8 KV cache for DeepSeek's sparse "
                         "attention on this GPU whatever --kv-cache-dtype says: give --kv-dtype "
                         "fp8 or --engine-version 0.5.5 or newer")
    declared_moves = declared == "fp8" and key >= AUTO_READS_CHECKPOINT_SINCE
    if auto != "fp8" and not declared_moves and auto in (None, kv_dtype):
        return ()
    if kv_dtype == "bf16" and key >= BF16_CHOICE_SINCE:
        return ("--kv-cache-dtype", "bfloat16")
    newer = " or --engine-version 0.5.4 or newer" if kv_dtype == "bf16" else ""
    if auto == "fp8" or declared_moves:
        raise InputError(f"{where}: the checkpoint declares an fp8 KV cache, which "
                         "--kv-cache-dtype auto may take, and this version's --kv-cache-dtype "
                         f"cannot name {kv_dtype} (server_args.py): give --kv-dtype fp8{newer}")
    raise InputError(f"{where}: --kv-cache-dtype auto runs the model dtype ({auto}, "
                     "model_runner.py) and this version's --kv-cache-dtype cannot name "
                     f"{kv_dtype} (server_args.py): give --kv-dtype {auto} or fp8{newer}")


NULL_QUANT_ALGO_SINCE = (0, 5, 4)  # configs/model_config.py _parse_modelopt_quant_config


def check_sglang_quant_file(spec: ModelSpec, version: str | None) -> None:
    """Refuse, in one line, an hf_quant_config.json with ``quant_algo: null`` before SGLang
    0.5.4: configs/model_config.py (0.5.3: _parse_quant_hf_config) reads any such file as
    quant_method "modelopt", and layers/quantization/modelopt_quant.py ModelOptFp8Config.
    from_config raises "Cannot find 'quant_algo' in the model's quantization config". From 0.5.4
    _parse_modelopt_quant_config returns None for it: weights and KV cache unquantized
    (kvplan.model.quant_config.modelopt_unquantized)."""
    if spec.quantization_file is None or version_key(version) >= NULL_QUANT_ALGO_SINCE:
        return
    from kvplan.model.quant_config import modelopt_unquantized

    if modelopt_unquantized(spec.quantization_config or {}):
        raise InputError(f"{spec.quantization_file}: quantization.quant_algo is null, which "
                         f"SGLang {version} refuses at start-up (ModelOptFp8Config: Cannot find "
                         "'quant_algo'): give --engine-version 0.5.4 or newer")
