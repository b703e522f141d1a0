"""Which quantization methods an SGLang release can load: a checkpoint's
quantization_config.quant_method (hf_quant_config.json's, for ModelOpt 0.29 files), or the
load-time --quantization. Where the release would stop at start-up, kvplan refuses in one line
instead of answering for a server that never starts (issue 26).

SGLang reads the method in configs/model_config.py ModelConfig._verify_quantization (adapted
from vLLM's): each registered config's override_quantization_method is tried first
(ModelOptFp4Config claims a ModelOpt checkpoint whose quant_algo names NVFP4: modelopt_fp4;
GPTQMarlinConfig / AWQMarlinConfig claim gptq / awq), then a method not in
layers/quantization/__init__.py QUANTIZATION_METHODS raises "Unknown quantization method: <m>.
Must be one of [...]".

Read from each release's wheel (sglang==X from PyPI, python/sglang/srt/layers/quantization/
__init__.py), 0.4.4 to 0.5.23 and the post releases at each boundary, for the methods kvplan
parses (kvplan.model.quant_config.QUANT_METHODS):

- fp8, modelopt, compressed-tensors, gptq, gptq_marlin, awq, awq_marlin: registered in every
  release read. (0.4.5-0.5.4.post1 take awq, awq_marlin and, to 0.4.10, gptq / gptq_marlin
  from vLLM: VLLM_QUANTIZATION_METHODS, loadable with vLLM installed; kvplan answers them.)
- modelopt_fp4 (ModelOpt NVFP4): from 0.4.5.post1 (sglang PR #3972, "FP4 weight loading and
  inference (2/2)", adds `modelopt_fp4`); 0.4.4 and 0.4.5 have no modelopt_fp4, and their
  ModelOptFp8Config refuses an NVFP4 quant_algo.
- mxfp4: from 0.5.0rc0 (gpt-oss; PyPI has no 0.5.0 final; sglang PR #8843 "Support mxfp4 for
  GPT-OSS"), on CUDA (``if is_cuda(): ... "mxfp4": Mxfp4Config``); 0.4.10.post2, the last 0.4
  release, has none.
- bitsandbytes: VLLM_QUANTIZATION_METHODS (vLLM's BitsAndBytesConfig) to 0.5.4.post1; gone from
  0.5.4.post2 to 0.5.7 (sglang PR #12268 removed the vLLM-backed methods; server_args.py still
  offers the --quantization choice, which _verify_quantization then refuses); back, native
  (layers/quantization/bitsandbytes.py), from 0.5.8 (sglang PR #15325).

- modelopt (ModelOpt FP8): from 0.4.1.post5 (modelopt_quant.py; 0.3.6-0.4.1.post4 have none).

How ModelOpt's own files are read (configs/model_config.py _parse_quant_hf_config, layers/
quantization/modelopt_quant.py from_config):

- hf_quant_config.json beside config.json (ModelOpt 0.29 and older): detected from 0.4.5.post1
  (as quant_method "modelopt"); 0.4.5 and older never open it and start the checkpoint
  unquantized.
- A flat config.json quantization_config ({"quant_method": "modelopt", "quant_algo": ...},
  ModelOpt 0.31 on): from 0.5.1; to 0.5.0rc2 from_config reads only the nested
  {"quantization": {...}} layout (get_from_keys(config, ["quantization"]) raises).

Post releases matter here (0.4.1.post5, 0.4.5.post1, 0.5.4.post2): versions compare by
kvplan._util.versions.release_post_key.

A ModelOpt NVFP4 checkpoint that SGLang claims for modelopt_fp4 only when started with
`--quantization modelopt_fp4` (sglang_quantization_flag; the launch line writes it):

- hf_quant_config.json, 0.4.5.post1-0.4.7.post1: model_loader/weight_utils.py get_quant_config
  hands the file to ModelOptFp8Config.from_config, which raises "ModelOpt only supports static
  FP8" for quant_algo NVFP4; 0.4.8 checks `"FP4" in quant_algo` there and picks ModelOptFp4Config;
  0.5.4 on, _parse_modelopt_quant_config maps it to modelopt_fp4.
- config.json's flat quantization_config ({"quant_method": "modelopt", "quant_algo": "NVFP4"}),
  0.5.1-0.5.9 and their post releases: "modelopt" wins and ModelOptFp8Config raises the same,
  until 0.5.10's ModelOptFp4Config.override_quantization_method also claims
  `quant_cfg["quant_method"] == "modelopt"`. With the flag, _verify_quantization accepts it
  (compatible_quantization_methods["modelopt_fp4"] == ["modelopt"]) and ModelOptFp4Config.
  from_config reads both layouts. (On ROCm, 0.5.3's PetitNvFp4Config.override_quantization_method
  claims a "modelopt" checkpoint for petit_nvfp4 whatever --quantization says; the flag is
  written for every GPU.)

ModelOpt's other quant_algo values (SGLANG_MODELOPT_ALGOS_SINCE and the tables beside it, read from
the same wheels; line numbers in the first release named):

- W4A16_NVFP4 alone: "FP4" in it, so it is claimed for modelopt_fp4, whose ModelOptFp4Config.
  from_config accepts it from 0.5.19 (modelopt_quant.py:1580, `quant_method not in ["FP8",
  "NVFP4", "NVFP4_AWQ", "W4A16_NVFP4"]`); 0.4.5.post1-0.5.18 raise "ModelOpt currently only
  supports: FP8, NVFP4[, NVFP4_AWQ]".
- FP8_PB_WO, FP8_PER_CHANNEL_PER_TOKEN alone: no release loads them as written. From 0.5.18
  ModelOptFp8Config.from_config raises "ModelOptFp8Config only supports regular FP8 quantization"
  (modelopt_quant.py:465, `quant_method != "FP8"`); before, its test is `"FP8" not in
  quant_method` (0.5.17 modelopt_quant.py:468), so it takes them for static per-tensor FP8, which
  their per-block / per-channel scales are not (in 0.5.18-0.5.23 FP8_PB_WO loads only as a layer of
  a MIXED_PRECISION checkpoint).
- MIXED_PRECISION: configs/model_config.py _parse_modelopt_quant_config sends it to modelopt_mixed
  (ModelOptMixedPrecisionConfig, registered from 0.5.10) when some layer is NVFP4 or W4A16_NVFP4
  from 0.5.15 (model_config.py:1155); in 0.5.10-0.5.14 only for Nemotron-H (model_type nemotron_h
  or an architecture NemotronH*); otherwise, and in every release from 0.4.9.post1 to 0.5.9, to
  w4afp8 (W4AFp8Config, for W4A8_AWQ experts), which does not read NVFP4 layers. Its
  get_quant_method leaves a layer algorithm it does not know unquantized (bf16 weights), so each
  layer algorithm has a first release (SGLANG_MIXED_LAYER_ALGOS_SINCE): NVFP4 and FP8 0.5.15
  (0.5.10 on Nemotron-H), W4A16_NVFP4 0.5.15, MXFP8 0.5.17, FP8_PB_WO 0.5.18, FP8_BLOCK_SCALES
  0.5.20. A MIXED_PRECISION file with no NVFP4 layer goes to w4afp8 in every release: not gated.
  kvplan's own reading of MIXED_PRECISION weights is not exact (kvplan.model.quant_config).

compressed-tensors config groups (SGLANG_CT_SCHEMES_SINCE; layers/quantization/compressed_tensors/
compressed_tensors.py _get_scheme_from_parts raises "No compressed-tensors compatible scheme was
found." for a group it does not claim, compressed_tensors_moe.py likewise for fused experts):
W8A8 FP8 block from 0.5.6.post1 (_is_fp8_w8a8 takes BLOCK, compressed_tensors.py:334, and the
MoE method, compressed_tensors_moe.py:220), NVFP4 W4A4 from 0.5.7 (compressed_tensors.py:469,
compressed_tensors_moe.py:108), NVFP4A16 from 0.5.22 (compressed_tensors.py:753 and :945). Not
gated (found, left open): MXFP4 (fused experts only from 0.5.17, _is_mxfp4_moe; no linear scheme
in 0.5.23), W4A8 (MoE 0.5.8, W4AFP8 MoE 0.5.16) and the 2:4 marlin-24 scheme (dropped in 0.5.4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import release_post_key
from kvplan.engines.requantize import refuse_requantization

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec


@dataclass(frozen=True)
class Window:
    """Releases that register a method: from `since` (inclusive) to `until` (exclusive; None:
    still there), as release_post_key tuples, with the release names and PRs that moved it."""

    since: tuple[int, ...] | None
    first: str | None
    added_by: str | None
    until: tuple[int, ...] | None = None
    gone_in: str | None = None
    removed_by: str | None = None
    back: str | None = None  # the release that registers it again, when one does

    def why_not(self, version: str | None) -> str | None:
        """Why release `version` cannot load the method (None: it can)."""
        key = release_post_key(version)
        if self.since is not None and key < self.since:
            return (f"it arrived in SGLang {self.first} ({self.added_by}): give --engine-version "
                    f"{self.first} or newer")
        if self.until is not None and key >= self.until:
            back = (f"; {self.back} registers it again: give --engine-version {self.back} or "
                    "newer" if self.back else "")
            return f"SGLang {self.gone_in} dropped it ({self.removed_by}){back}"
        return None


# Only the methods some release kvplan may be asked about lacks; every other one kvplan parses
# is registered in every release read (0.3.6, 0.4.0-0.4.1.post7, 0.4.2-0.5.23 and posts).
SGLANG_QUANT_WINDOWS: dict[str, tuple[Window, ...]] = {
    "modelopt": (Window((0, 4, 1, 0, 5), "0.4.1.post5", "modelopt_quant.py"),),
    "modelopt_fp4": (Window((0, 4, 5, 0, 1), "0.4.5.post1", "PR #3972"),),
    "mxfp4": (Window((0, 5, 0, 0, 0), "0.5.0rc0", "PR #8843"),),
    "bitsandbytes": (
        Window(None, None, None, until=(0, 5, 4, 0, 2), gone_in="0.5.4.post2",
               removed_by="PR #12268, with the other vLLM-backed methods", back="0.5.8"),
        Window((0, 5, 8, 0, 0), "0.5.8", "PR #15325"),
    ),
}


# ModelOpt quant_algo values other than FP8 / NVFP4 (the module's docstring gives the files).
SGLANG_MODELOPT_ALGOS_SINCE: dict[str, Window] = {
    "W4A16_NVFP4": Window((0, 5, 19, 0, 0), "0.5.19", "ModelOptFp4Config.from_config, "
                                                       "modelopt_quant.py:1580"),
}
_PER_TENSOR = ("no SGLang release loads it as written: 0.5.18 on, ModelOptFp8Config.from_config "
               "raises 'only supports regular FP8 quantization' (modelopt_quant.py:465); before, "
               "it is read as static per-tensor FP8 (the test is '\"FP8\" in quant_algo'), which "
               "its scales are not: plan it for vLLM (--engine vllm)")
SGLANG_MODELOPT_ALGOS_NEVER: dict[str, str] = {
    "FP8_PB_WO": _PER_TENSOR, "FP8_PER_CHANNEL_PER_TOKEN": _PER_TENSOR,
}
_MIXED = "ModelOptMixedPrecisionConfig.get_quant_method, modelopt_quant.py"
# A MIXED_PRECISION checkpoint's layer algorithms (quantized_layers): the first release that
# routes it to modelopt_mixed (model_config.py:1155) and quantizes a layer of that algorithm.
_ROUTED = "model_config.py:1155 _parse_modelopt_quant_config"
SGLANG_MIXED_LAYER_ALGOS_SINCE: dict[str, Window] = {
    "NVFP4": Window((0, 5, 15, 0, 0), "0.5.15", _ROUTED),
    "FP8": Window((0, 5, 15, 0, 0), "0.5.15", _ROUTED),
    "W4A16_NVFP4": Window((0, 5, 15, 0, 0), "0.5.15", f"{_MIXED}:815"),
    "MXFP8": Window((0, 5, 17, 0, 0), "0.5.17", f"{_MIXED}:835"),
    "FP8_PB_WO": Window((0, 5, 18, 0, 0), "0.5.18", f"{_MIXED}:949"),
    "FP8_BLOCK_SCALES": Window((0, 5, 20, 0, 0), "0.5.20", f"{_MIXED}, _BLOCK_FP8_ALGOS"),
}
# 0.5.10-0.5.14 route MIXED_PRECISION to modelopt_mixed for Nemotron-H only, which quantizes its
# NVFP4 and FP8 layers (0.5.10 model_config.py:810).
NEMOTRON_H_MIXED_SINCE = (0, 5, 10, 0, 0)


def _modelopt_fields(qc: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = qc.get("quantization")
    return inner if isinstance(inner, Mapping) else qc


def _check_modelopt_algo(spec: ModelSpec, qc: Mapping[str, Any], version: str | None,
                         shown: str) -> None:
    """Refuse a ModelOpt quant_algo SGLang `version` does not load as written."""
    fields = _modelopt_fields(qc)
    algo = str(fields.get("quant_algo") or "").upper()
    field = (f"{spec.path}: {spec.quantization_file} quantization.quant_algo"
             if spec.quantization_file is not None else
             f"{spec.path}: quantization_config.quant_algo")
    never = SGLANG_MODELOPT_ALGOS_NEVER.get(algo)
    if never is not None:
        raise UnmodelledError(f"{field}: {shown} cannot load ModelOpt {algo!r}: {never}")
    window = SGLANG_MODELOPT_ALGOS_SINCE.get(algo)
    why = window.why_not(version) if window is not None else None
    if why is not None:
        raise UnmodelledError(f"{field}: {shown} cannot load ModelOpt {algo!r}: {why}")
    if algo != "MIXED_PRECISION":
        return
    layers = qc.get("quantized_layers") or fields.get("quantized_layers") or {}
    algos = {str(info.get("quant_algo") or "").upper()
             for info in (layers.values() if isinstance(layers, Mapping) else ())
             if isinstance(info, Mapping)}
    if not algos & {"NVFP4", "W4A16_NVFP4"}:
        return  # w4afp8 in every release (the module's docstring): not gated
    nemotron_h = spec.model_type == "nemotron_h" or any(
        a.startswith("NemotronH") for a in spec.architectures)
    key = release_post_key(version)
    late = [(window.since or (), layer_algo, why) for layer_algo in sorted(algos)
            if not (nemotron_h and layer_algo in ("NVFP4", "FP8") and key >= NEMOTRON_H_MIXED_SINCE)
            and (window := SGLANG_MIXED_LAYER_ALGOS_SINCE.get(layer_algo)) is not None
            and (why := window.why_not(version)) is not None]
    if late:  # name the layer algorithm that needs the newest release
        _, layer_algo, why = max(late)
        raise UnmodelledError(
            f"{field}: {shown} cannot load a ModelOpt MIXED_PRECISION checkpoint with "
            f"{layer_algo} layers (quantized_layers): {why}")


# compressed-tensors groups by family (kvplan.model.quant_config.compressed_tensors_family): the
# first release with a scheme for it, linear and fused MoE alike (the module's docstring).
SGLANG_CT_SCHEMES_SINCE: dict[str, Window] = {
    "fp8 block": Window((0, 5, 6, 0, 1), "0.5.6.post1", "compressed_tensors.py:334 _is_fp8_w8a8"),
    "nvfp4": Window((0, 5, 7, 0, 0), "0.5.7", "compressed_tensors.py:469 _is_fp4a4_nvfp4"),
    "nvfp4a16": Window((0, 5, 22, 0, 0), "0.5.22", "compressed_tensors.py:753 _is_fp4a16_nvfp4"),
}
_CT_LABELS = {"fp8 block": "W8A8 FP8 block (weights float 8, strategy block)",
              "nvfp4": "NVFP4 (weights and input_activations float 4)",
              "nvfp4a16": "NVFP4A16 (weights float 4, no input_activations)"}


def _check_compressed_tensors(spec: ModelSpec, qc: Mapping[str, Any], version: str | None,
                              shown: str) -> None:
    # Imported here: only a compressed-tensors checkpoint needs it (estimate's start-up).
    from kvplan.model.quant_config import compressed_tensors_family

    groups = qc.get("config_groups")
    for key, group in (groups.items() if isinstance(groups, Mapping) else ()):
        family = compressed_tensors_family(group) if isinstance(group, Mapping) else None
        window = SGLANG_CT_SCHEMES_SINCE.get(family or "")
        why = window.why_not(version) if window is not None else None
        if why is not None:
            raise UnmodelledError(
                f"{spec.path}: quantization_config.config_groups.{key}: {shown} cannot load "
                f"compressed-tensors {_CT_LABELS[family or '']}: {why}")


QUANT_FILE_SINCE = (0, 4, 5, 0, 1)  # hf_quant_config.json detected (_parse_quant_hf_config)
FLAT_MODELOPT_SINCE = (0, 5, 1, 0, 0)  # ModelOpt's flat quantization_config (from_config)
# Where a ModelOpt NVFP4 checkpoint needs `--quantization modelopt_fp4`, by layout: [from, to).
NVFP4_FLAG_FILE = ((0, 4, 5, 0, 1), (0, 4, 8, 0, 0))  # hf_quant_config.json (get_quant_config)
NVFP4_FLAG_FLAT = ((0, 5, 1, 0, 0), (0, 5, 10, 0, 0))  # config.json's flat quantization_config


def _why_not(method: str, version: str | None) -> str | None:
    """None where some window of `method` holds `version`, else the first window's reason."""
    windows = SGLANG_QUANT_WINDOWS.get(method)
    if windows is None:
        return None
    reasons = [w.why_not(version) for w in windows]
    return None if None in reasons else reasons[0]


def sglang_method(qc: Mapping[str, Any]) -> str:
    """The quant_method SGLang settles on for `qc`: the checkpoint's (as vLLM reads it,
    kvplan.model.quant_config.quant_method), with ModelOptFp4Config's override: a ModelOpt
    quant_algo naming NVFP4 / FP4 is modelopt_fp4 (layers/quantization/modelopt_quant.py
    override_quantization_method)."""
    from kvplan.model.quant_config import quant_method

    method = quant_method(qc)
    if method == "modelopt" or (not method and isinstance(qc.get("quantization"), Mapping)):
        inner = qc.get("quantization")
        algo = str((inner if isinstance(inner, Mapping) else qc).get("quant_algo") or "").upper()
        if "FP4" in algo:
            return "modelopt_fp4"
    return method


def check_sglang_quantization(spec: ModelSpec, load_quantization: str | None,
                              version: str | None) -> None:
    """Refuse, in one line, a checkpoint quantization (or a --quantization) SGLang `version`
    (None: the newest, which registers every method kvplan parses) cannot load."""
    shown = f"SGLang {version}" if version else "SGLang"
    if load_quantization is not None:
        why = _why_not(load_quantization, version)
        if why is not None:
            raise UnmodelledError(f"--quantization: {shown} cannot quantize with "
                                  f"{load_quantization!r}: {why}")
    if spec.quantization_json is None:
        return
    qc = spec.quantization_config or {}
    check_sglang_load_quantization(spec, load_quantization, sglang_method(qc))
    key = release_post_key(version)
    if spec.quantization_file is not None and key < QUANT_FILE_SINCE:
        raise UnmodelledError(
            f"{spec.path}: {spec.quantization_file} beside it: {shown} does not read the file "
            "(configs/model_config.py _parse_quant_hf_config detects it from 0.4.5.post1) and "
            "starts the checkpoint unquantized: give --engine-version 0.4.5.post1 or newer")
    method = sglang_method(qc)
    if (method.startswith("modelopt") and spec.quantization_file is None
            and not isinstance(qc.get("quantization"), Mapping) and key < FLAT_MODELOPT_SINCE):
        raise UnmodelledError(
            f"{spec.path}: quantization_config.quant_algo: {shown} reads ModelOpt's "
            "quantization config only in hf_quant_config.json's nested {\"quantization\": "
            "{...}} layout (layers/quantization/modelopt_quant.py from_config); a flat "
            "config.json quantization_config from 0.5.1: give --engine-version 0.5.1 or newer")
    why = _why_not(method, version)
    if why is not None:
        where = (f"{spec.path}: quantization_config.quant_method"
                 if spec.quantization_file is None
                 else f"{spec.path}: {spec.quantization_file} quantization.quant_algo")
        raise UnmodelledError(f"{where}: {shown} cannot load a {method!r} checkpoint "
                              f"(layers/quantization/__init__.py QUANTIZATION_METHODS): {why}")
    if method.startswith("modelopt"):
        _check_modelopt_algo(spec, qc, version, shown)
    elif method == "compressed-tensors":
        _check_compressed_tensors(spec, qc, version, shown)


def sglang_quantization_flag(quantization_json: str | None, quantization_file: str | None,
                             version: str | None) -> tuple[str, ...]:
    """`--quantization modelopt_fp4` where SGLang `version` (None: the newest) starts a ModelOpt
    NVFP4 checkpoint only with it (the module's docstring: hf_quant_config.json on
    0.4.5.post1-0.4.7.post1, a flat config.json quantization_config on 0.5.1-0.5.9), else ().
    `quantization_json` / `quantization_file` as kvplan.model.spec.ModelSpec holds them."""
    if quantization_json is None:
        return ()
    qc = json.loads(quantization_json)
    if sglang_method(qc) != "modelopt_fp4":
        return ()
    if quantization_file is not None:
        since, until = NVFP4_FLAG_FILE
    elif not isinstance(qc.get("quantization"), Mapping):  # flat: {"quant_method": "modelopt"}
        since, until = NVFP4_FLAG_FLAT
    else:  # the nested layout inside config.json: not a layout ModelOpt writes; not read
        return ()
    key = release_post_key(version)
    return ("--quantization", "modelopt_fp4") if since <= key < until else ()


def check_sglang_load_quantization(spec: ModelSpec, load_quantization: str | None,
                                   method: str) -> None:
    """Refuse, in one line, a --quantization other than the quantized checkpoint's own method
    (`method`, `sglang_method`). SGLang's configs/model_config.py _verify_quantization (vLLM's,
    adapted; 0.4.5 and 0.5.14 wheels read) takes the checkpoint's quant_method after the
    overrides and raises "Quantization method specified in the model config (X) does not match
    the quantization method specified in the `quantization` argument (Y)" unless its
    compatible_quantization_methods pairs them (modelopt_fp8 / modelopt_fp4 / petit_nvfp4 with
    modelopt, w8a8_* with compressed-tensors: never bitsandbytes). A quantized checkpoint is so
    never re-quantized at load time; kvplan refuses every one with another --quantization (also
    the edge cases SGLang reads apart, a ModelOpt file with quant_algo null among them)."""
    refuse_requantization(spec, load_quantization, method, engine="SGLang",
                          source="configs/model_config.py _verify_quantization")


def sglang_load_quantization_flags(load_quantization: str | None) -> tuple[str, ...]:
    """The flags of plan's load-time quantization (None: ()). bitsandbytes: `--quantization
    bitsandbytes --load-format bitsandbytes`. SGLang picks its BitsAndBytesModelLoader, which
    quantizes 16-bit weights as it reads them, by the load format alone (model_loader/loader.py
    get_model_loader: ``load_config.load_format == LoadFormat.BITSANDBYTES``; nothing sets it
    from --quantization: server_args.py, configs/load_config.py and the loaders of the 0.4.5,
    0.5.3, 0.5.8 and 0.5.14 wheels read); the default loader would load the 16-bit tensors into
    the packed parameters BitsAndBytesLinearMethod creates. Both flags are choices of every
    release read (server_args.py --quantization and --load-format choices)."""
    if load_quantization is None:
        return ()
    return ("--quantization", load_quantization) + (
        ("--load-format", "bitsandbytes") if load_quantization == "bitsandbytes" else ())
