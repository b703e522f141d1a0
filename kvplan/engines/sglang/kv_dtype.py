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
- server_args.py --kv-cache-dtype choices: "auto", "fp8_e5m2", "fp8_e4m3" to 0.5.3; "bf16",
  "bfloat16" from 0.5.4 (line 1786); "fp4_e2m1" from 0.5.5.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.versions import version_key
from kvplan.engines.launch import declared_kv_cache

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec

AUTO_READS_CHECKPOINT_SINCE = (0, 5, 3)  # model_runner.py: auto takes kv_cache_quant_algo FP8
BF16_CHOICE_SINCE = (0, 5, 4)  # server_args.py: --kv-cache-dtype bf16 / bfloat16


def _model_dtype_note(field: str, dtype: str, why: str) -> str:
    return (f"KV cache bf16: {field} declares {dtype}, but SGLang's default --kv-cache-dtype auto "
            f"keeps the model dtype ({why}); --kv-dtype overrides")


def sglang_auto_kv_dtype(spec: ModelSpec, version: str | None) -> tuple[str, str | None]:
    """The KV dtype SGLang `version` runs `spec` at with --kv-cache-dtype auto, and the line
    saying why where the checkpoint declares one; refused in one line where that depends on the
    model class (a ModelOpt fp8 KV cache from 0.5.3: see the module)."""
    declared = declared_kv_cache(spec)
    if declared is None:
        return "bf16", None
    field, dtype = declared
    if version_key(version) < AUTO_READS_CHECKPOINT_SINCE:
        return "bf16", _model_dtype_note(field, dtype, f"model_runner.py before 0.5.3, here "
                                         f"{version}")
    if (spec.quantization_config or {}).get("quant_method") == "compressed-tensors":
        return "bf16", _model_dtype_note(field, dtype, "model_runner.py reads only ModelOpt's "
                                         "kv_cache_quant_algo")
    if dtype != "fp8":
        return "bf16", _model_dtype_note(field, dtype, "model_runner.py takes only FP8")
    raise UnmodelledError(
        f"{field}: the checkpoint declares an {dtype} KV cache; SGLang's default --kv-cache-dtype "
        "auto takes it only where the model class keeps its quant_config (model_runner.py "
        "configure_kv_cache_dtype), which kvplan does not model: give --kv-dtype")


def sglang_runnable_kv_dtypes(spec: ModelSpec, version: str | None) -> tuple[str, ...] | None:
    """Only fp8 in 0.5.3 for a checkpoint that declares an fp8 KV cache (`sglang_kv_dtype_flag`
    refuses the others), else every one kvplan plans."""
    declared = declared_kv_cache(spec)
    key = version_key(version)
    if (declared is not None and declared[1] == "fp8"
            and AUTO_READS_CHECKPOINT_SINCE <= key < BF16_CHOICE_SINCE):
        return ("fp8",)
    return None


def sglang_kv_dtype_flag(kv_dtype: str, declared: str | None, version: str | None
                         ) -> tuple[str, ...]:
    """The --kv-cache-dtype flag that makes SGLang `version` run the planned `kv_dtype` (none:
    its auto runs it). fp8 is named always. Only a declared fp8 can turn auto away from the model
    dtype (from 0.5.3, see the module): a bf16 plan for such a checkpoint is named bfloat16 from
    0.5.4 and refused in 0.5.3, which has no bf16 choice (also for a compressed-tensors scheme,
    whose fp8 auto would not take: the launch knows the declared dtype only)."""
    if kv_dtype == "fp8":
        return ("--kv-cache-dtype", "fp8_e4m3")
    key = version_key(version)
    if declared != "fp8" or key < AUTO_READS_CHECKPOINT_SINCE:
        return ()
    if kv_dtype == "bf16" and key >= BF16_CHOICE_SINCE:
        return ("--kv-cache-dtype", "bfloat16")
    newer = " or --engine-version 0.5.4 or newer" if kv_dtype == "bf16" else ""
    raise InputError(f"--engine sglang{' ' + version if version else ''}: the checkpoint "
                     f"declares an fp8 KV cache, which --kv-cache-dtype auto may take, and this "
                     f"version's --kv-cache-dtype cannot name {kv_dtype} (server_args.py): give "
                     f"--kv-dtype fp8{newer}")
