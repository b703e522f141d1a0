"""The KV dtypes an engine runs, engine-agnostic: which it supports (on a GPU), which `kvplan plan`
searches, the refusal of one it cannot run, and the one it runs a model at when asked (`auto`,
ENGINE_AUTO: the engine's own, from each engine's `EngineRules.auto_kv_dtype`; the per-engine
rules live in kvplan.engines.vllm.kv_dtype and kvplan.engines.sglang.kv_dtype). Every command's
--kv-dtype goes through here, so estimate, sweep, compare, report, check and plan agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import Engine
    from kvplan.hardware.gpus import GPU
    from kvplan.model.spec import ModelSpec


def supported_kv_dtypes(engine: Engine, gpu: GPU | None) -> tuple[str, ...]:
    """KV dtypes `engine` runs (on `gpu`): fp8 only on GPUs with fp8 tensor cores (Ada, Hopper,
    Blackwell, MI300), where vLLM's and SGLang's fp8 KV kernels are documented (not Ampere)."""
    dtypes = engine.rules.kv_dtypes
    if gpu is not None and not gpu.peak_fp8_flops_per_s:
        dtypes = tuple(d for d in dtypes if d != "fp8")
    return dtypes


def planned_kv_dtypes(engine: Engine, spec: ModelSpec, gpu: GPU | None) -> tuple[str, ...]:
    """The KV dtypes `kvplan plan` searches for `spec` by default: `supported_kv_dtypes`, its
    16-bit one named as the engine's model dtype (EngineRules.model_dtype: fp16 for a float16
    checkpoint), so that a 16-bit plan is what the engine runs without a --kv-cache-dtype."""
    model = engine.rules.model_dtype(spec)
    return tuple(model if d == "bf16" else d for d in supported_kv_dtypes(engine, gpu))


def check_kv_dtype(engine: Engine, kv_dtype: str, gpu: GPU | None) -> None:
    """Refuse, in one line, a KV dtype the engine cannot run (on this GPU)."""
    allowed = supported_kv_dtypes(engine, gpu)
    if kv_dtype in ("fp32", "fp16"):
        return  # the engines accept the model's own dtype; kvplan sizes it as asked
    if kv_dtype not in allowed:
        where = f" on {gpu.name}" if gpu is not None and kv_dtype == "fp8" else ""
        raise InputError(f"--kv-dtype: {engine.value} cannot run KV cache dtype {kv_dtype}{where} "
                         f"(supported here: {', '.join(allowed)})")


# The KV dtype the engine picks itself, as vLLM spells it (--kv-cache-dtype auto, its default):
# every command's --kv-dtype default, resolved for a model by `run_kv_dtype`.
ENGINE_AUTO = "auto"


def asked_kv_dtype(text: str) -> str | None:
    """The KV dtype a --kv-dtype spelling asks for: ENGINE_AUTO for `auto` (vLLM's spelling of
    its default, the engine's own), else the dtype of an engine's spelling (fp8_e4m3 -> fp8);
    None: unknown. (KV_DTYPE_ALIASES' "auto" -> bf16 is the running-server readers': *.live.)"""
    from kvplan._util.dtypes import KV_DTYPE_ALIASES

    key = text.strip().lower()
    return ENGINE_AUTO if key == ENGINE_AUTO else KV_DTYPE_ALIASES.get(key)


def run_kv_dtype(engine: Engine, spec: ModelSpec, kv_dtype: str | None = ENGINE_AUTO,
                 version: str | None = None, gpu: GPU | None = None) -> tuple[str, str | None]:
    """The KV dtype `engine` (`version`; None: the newest) runs `spec` at on `gpu` (None: not
    named) when asked for `kv_dtype`, and the line saying the checkpoint or the engine chose it
    (None: nothing to say). None or ENGINE_AUTO: the engine's own default
    (EngineRules.auto_kv_dtype: vLLM takes the checkpoint's declared KV dtype, else the model
    dtype (EngineRules.model_dtype: bf16, fp16 for a float16 checkpoint), but fp8 for GLM-5 on
    SM 10.x and for DeepSeek's sparse attention on SM 12.x; SGLang and TensorRT-LLM where their
    code settles it, else they refuse to guess; SGLang's for DeepSeek's sparse attention by the
    GPU); any other dtype as the engine runs it when told (EngineRules.given_kv_dtype: as given,
    but SGLang 0.5.3-0.5.4's fp8 for DeepSeek's sparse attention on SM10+). Every command's
    default goes through here, so estimate, sweep, compare, report and plan agree."""
    if kv_dtype is None or kv_dtype == ENGINE_AUTO:
        return engine.rules.auto_kv_dtype(spec, version, gpu)
    return engine.rules.given_kv_dtype(spec, kv_dtype, version, gpu)


def known_auto_kv_dtype(engine: Engine, spec: ModelSpec, version: str | None,
                        gpu: GPU | None) -> str | None:
    """What `engine`'s --kv-cache-dtype auto runs `spec` at on `gpu`, None where that is not
    known (auto_kv_dtype refuses to guess): a launch line names a planned dtype auto would
    not run (LaunchSettings.auto_kv_dtype)."""
    try:
        return engine.rules.auto_kv_dtype(spec, version, gpu)[0]
    except InputError:
        return None
