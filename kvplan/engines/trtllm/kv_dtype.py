"""TensorRT-LLM's kv_cache_config.dtype (PyTorch backend) for a checkpoint that declares a
KV-cache dtype: what its default `auto` runs, and which plans its options file can launch. Read
from NVIDIA/TensorRT-LLM, tensorrt_llm/_torch/ (every stored version of the files named; the
1.x tags themselves could not be pinned from here):

- model_config.py ModelConfig.from_pretrained: a checkpoint with hf_quant_config.json is read by
  load_modelopt_quant_config, ``quant_config.kv_cache_quant_algo =
  json_quant_configs.get('kv_cache_quant_algo')`` (before config.json's quantization_config,
  which goes to load_hf_quant_config; which inline formats that reads -- ModelOpt's flat
  kv_cache_scheme, compressed-tensors -- changed between releases: not modelled).
- pyexecutor (model_engine.py, later model_loader.py) validate_and_set_kv_cache_quant: with
  dtype "auto" it returns at once, "Using checkpoint KV quantization"; the values it accepts are
  _VALID_KV_CACHE_DTYPES ("fp8", "auto"; later "nvfp4" too) -- no 16-bit value -- and an
  explicit one other than the checkpoint's raises "Attempting to override KV cache
  quantization" (later releases warn and override, still only to fp8 / nvfp4).
- pyexecutor/_util.py get_cache_size_per_token: 1 byte per element when quant_mode
  has_fp8_kv_cache, else 2.

- Otherwise the KV cache takes the model dtype: pyexecutor/_util.py builds the KV cache manager
  with ``kv_cache_dtype = str_dtype_to_binding(torch_dtype_to_str(model_engine.dtype))`` where
  the checkpoint declares no fp8 / nvfp4 KV cache, and model_config.py ModelConfig.torch_dtype
  is ``self.pretrained_config.torch_dtype or torch.bfloat16``: float16 for a float16
  checkpoint, bfloat16 for a bfloat16 one or one without a dtype (`trtllm_model_dtype`; the
  same 2 B; transformers leaves an absent torch_dtype None, ModelSpec.weight_dtype_stated).
  kv_cache_config.dtype has no 16-bit value, so a 16-bit --kv-dtype other than that model dtype
  is refused by every command, estimate as much as plan's launch (`check_trtllm_kv_dtype` from
  `trtllm_given_kv_dtype` and from launch.py).

- A float32 config.json is refused (`check_trtllm_float32`): nothing casts it, in the stored
  versions read (0.20-era and 1.x _util.py / model_engine.py, a 1.2+ resource_manager.py, the
  newest model_config.py; tags not pinned). The PyTorch backend reads config.json through
  transformers.AutoConfig (pyexecutor/config_utils.py load_pretrained_config),
  PyTorchModelEngine keeps ``self.dtype = self.model.config.torch_dtype`` (float32), and no use
  of the LLM API's dtype ("auto") was found under _torch (the hits are llmapi/llm_utils.py's
  TensorRT-engine ModelLoader); a few models pin bfloat16 themselves (Gemma-3's VLM,
  MiniMax-M3), not the generic decoders. So weights and KV cache are float32
  (_util.py: DataType.FLOAT; resource_manager.py get_cache_bytes_per_token accepts FLOAT, 4 B
  per element), but the estimate sizes its pool at 2 B per element
  (KVCacheManager.get_cache_size_per_token: ``mem_per_token *= 2`` for any unquantized cache,
  "fp16/bf16 kv cache"; 0.20's _util.py ``mem_per_token = 2``) and calculate_max_num_blocks then
  takes min(that max_tokens, free_gpu_memory_fraction x free memory after the estimate / the
  4-B row). Neither kvplan's 2-B weights nor its budget is that pool, so kvplan sizes no
  TensorRT-LLM KV cache for a float32 checkpoint (vLLM serves one in bfloat16, SGLang in
  float16: kvplan.weights.base.engine_dtype, both 2 B).

So an FP8 kv_cache_quant_algo in hf_quant_config.json is an fp8 KV cache by default, and a
checkpoint that declares a KV dtype cannot be run at 16 bits: auto takes the checkpoint's, and a
16-bit kv_cache_config.dtype ("bf16", "bfloat16", "float16"; llmapi/llm_args.py
KvCacheConfig.dtype is a free string, default "auto") fails validate_and_set_kv_cache_quant
("Overriding KV cache quantization with an invalid type llm_args.KvCacheConfig.dtype=...
Accepted types are ('fp8', 'auto')", later ('fp8', 'nvfp4', 'auto')), in every stored version,
before and after the override became a warning. Every command asking for another dtype
(estimate's --kv-dtype as much as plan's launch) is refused in one line
(`trtllm_given_kv_dtype`, `check_trtllm_kv_dtype`), not sized at a dtype the server never runs.
That holds with ``quant_algo: null`` too (a ModelOpt export of the KV cache alone):
load_modelopt_quant_config reads kv_cache_quant_algo whatever quant_algo is (newer releases:
_build_modelopt_quant_config, "modelopt hf_quant_config.json may spell 'no quantization' as JSON
null"), where vLLM and SGLang quantize nothing (kvplan.model.quant_config.modelopt_unquantized).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.engines.launch import declared_kv_cache

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec


def _trtllm_declared(spec: ModelSpec) -> tuple[str, str] | None:
    """(field, KV dtype) TensorRT-LLM reads as the checkpoint's: `declared_kv_cache`, or an FP8
    kv_cache_quant_algo in an hf_quant_config.json whose quant_algo is null (see the module)."""
    declared = declared_kv_cache(spec)
    if declared is not None or spec.quantization_file is None:
        return declared
    from kvplan.model.quant_config import modelopt_unquantized

    qc = spec.quantization_config or {}
    if modelopt_unquantized(qc):
        if str(qc["quantization"].get("kv_cache_quant_algo")).upper() == "FP8":
            return f"{spec.quantization_file} quantization.kv_cache_quant_algo", "fp8"
    return declared


def check_trtllm_float32(spec: ModelSpec) -> None:
    """Refuse, in one line, a checkpoint whose config.json states float32 (the text part's or a
    wrapper's own): TensorRT-LLM runs it, KV cache included, in float32 and sizes the pool by
    another rule (see the module). An absent torch_dtype is bfloat16 there, and sized."""
    stated = [d for d in (spec.weight_dtype if spec.weight_dtype_stated else None,
                          spec.wrapper_dtype) if d is not None]
    if "fp32" in stated:
        raise UnmodelledError(
            f"{spec.path}: torch_dtype: float32: TensorRT-LLM's PyTorch backend keeps a float32 "
            "checkpoint in float32 (weights and KV cache 4 B per element; "
            "_torch/model_config.py torch_dtype) and sizes its KV pool at 2 B per element "
            "(get_cache_size_per_token), then by free memory: not modelled; expected "
            "bfloat16 or float16 (a converted checkpoint), or --engine vllm / sglang")


def trtllm_model_dtype(spec: ModelSpec) -> str:
    """The 16-bit dtype TensorRT-LLM keeps `spec`'s KV cache in when the checkpoint declares
    none (see the module): fp16 for a float16 checkpoint, else bf16."""
    return "fp16" if spec.weight_dtype == "fp16" else "bf16"


def trtllm_auto_kv_dtype(spec: ModelSpec) -> tuple[str, str | None]:
    """The KV dtype TensorRT-LLM runs `spec` at with kv_cache_config.dtype auto, and the line
    saying the checkpoint chose it: fp8 where hf_quant_config.json declares it; the model's
    16-bit dtype (`trtllm_model_dtype`) where nothing is declared; refused in one line for a
    KV dtype declared in config.json, or for a float32 checkpoint (see the module)."""
    check_trtllm_float32(spec)
    declared = _trtllm_declared(spec)
    if declared is None:
        return trtllm_model_dtype(spec), None
    field, dtype = declared
    if spec.quantization_file is not None and dtype == "fp8":
        return "fp8", (f"KV cache fp8: {field} declares it, and TensorRT-LLM's default "
                       "kv_cache_config.dtype auto uses it (_torch/model_config.py "
                       "load_modelopt_quant_config); --kv-dtype overrides")
    raise UnmodelledError(f"{field}: the checkpoint declares an {dtype} KV cache; whether "
                          "TensorRT-LLM reads it from config.json by default is not modelled: "
                          "give --kv-dtype")


def trtllm_runnable_kv_dtypes(spec: ModelSpec) -> tuple[str, ...] | None:
    """Only the declared KV dtype where the checkpoint declares one (`check_trtllm_kv_dtype`),
    else every one kvplan plans."""
    declared = _trtllm_declared(spec)
    return None if declared is None else (declared[1],)


def check_trtllm_kv_dtype(kv_dtype: str, declared: str | None, auto: str | None = None,
                          field: str | None = None) -> None:
    """Refuse, in one line, a KV dtype TensorRT-LLM cannot be told to run: one other than the
    one the checkpoint declares (`field`, where known; kv_cache_config.dtype takes only auto,
    which uses the checkpoint's, fp8 and nvfp4; see the module), or a 16/32-bit one other than
    the model dtype its auto runs (`auto`, known: bf16 or fp16)."""
    if (auto in ("bf16", "fp16") and kv_dtype in ("bf16", "fp16", "fp32")
            and kv_dtype != auto):
        raise InputError(f"--engine trtllm: kv_cache_config.dtype takes auto (the model dtype, "
                         f"here {auto}), fp8 or nvfp4, so it cannot run a {kv_dtype} KV cache: "
                         f"give --kv-dtype {auto}")
    if declared is not None and kv_dtype != declared:
        where = f"{field}: " if field else "--engine trtllm: the checkpoint "
        raise InputError(f"{where}declares an {declared} KV cache and "
                         "TensorRT-LLM's kv_cache_config.dtype takes auto (the checkpoint's), "
                         f"fp8 or nvfp4, so it cannot run a {kv_dtype} one: give --kv-dtype "
                         f"{declared}")


def trtllm_given_kv_dtype(spec: ModelSpec, kv_dtype: str) -> tuple[str, str | None]:
    """The KV dtype TensorRT-LLM runs `spec` at when told `kv_dtype`: as told, or refused in
    one line where the checkpoint declares another, or where it is a 16-bit one other than the
    model dtype auto runs (`check_trtllm_kv_dtype`, the rule plan's launch applies too): every
    command, not only plan's launch, so estimate never sizes a cache the server cannot run (issue
    26: estimate sized bf16 on a float16 checkpoint that plan refused); a float32 checkpoint is
    refused whatever is told (`check_trtllm_float32`)."""
    check_trtllm_float32(spec)
    declared = _trtllm_declared(spec)
    if declared is None:
        check_trtllm_kv_dtype(kv_dtype, None, trtllm_model_dtype(spec))
    else:
        check_trtllm_kv_dtype(kv_dtype, declared[1], field=f"{spec.path}: {declared[0]}")
    return kv_dtype, None
