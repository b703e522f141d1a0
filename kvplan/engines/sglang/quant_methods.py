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

Not modelled (found, left open): ModelOpt's other quant_algo values (FP8_PER_CHANNEL_PER_TOKEN,
FP8_PB_WO, W4A16_NVFP4, MIXED_PRECISION), whose handling changed between releases."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import release_post_key

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
    if why is None:
        return
    where = (f"{spec.path}: quantization_config.quant_method" if spec.quantization_file is None
             else f"{spec.path}: {spec.quantization_file} quantization.quant_algo")
    raise UnmodelledError(f"{where}: {shown} cannot load a {method!r} checkpoint "
                          f"(layers/quantization/__init__.py QUANTIZATION_METHODS): {why}")


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
    if load_quantization is None or method == load_quantization:
        return
    where = (f"{spec.path}: quantization_config" if spec.quantization_file is None
             else f"{spec.path}: {spec.quantization_file}")
    raise UnmodelledError(
        f"--quantization {load_quantization}: {where}: the checkpoint is already quantized "
        f"({method or 'no quant_method'}) and SGLang does not re-quantize it: 'Quantization "
        f"method specified in the model config ({method or None}) does not match the "
        f"quantization method specified in the `quantization` argument ({load_quantization})' "
        "(configs/model_config.py _verify_quantization): drop --quantization")


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
