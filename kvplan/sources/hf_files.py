"""Reading a HuggingFace checkpoint's config files from disk (`read_config`): config.json (a file
or the folder holding it) with JSON's rules kept strict (NaN and infinities refused, but where a
published config carries one in a field kvplan reads nothing from), and ModelOpt's
hf_quant_config.json beside it (`read_quant_file`), taken as vLLM 0.32 takes it. The mapping it
returns is converted by kvplan.sources.hf_config.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvplan._util.errors import SpecError
from kvplan.sources.files import parse_json, path_kind, read_text, shown_path
from kvplan.sources.hf_wrappers import TEXT_KEYS


def _config_path(path: Path) -> Path:
    return path / "config.json" if path_kind(path) == "dir" else path


def read_config(path: Path) -> tuple[dict, str]:
    """Read a config.json (or a folder holding one); returns (mapping, shown path). The file
    must be a regular file (kvplan.sources.files.read_text); JSON's NaN and Infinity are
    refused here, and a number no float or int can hold is a one-line error."""
    file = _config_path(Path(path))
    shown = shown_path(file)
    text = read_text(file)

    def constant(name: str) -> Any:
        return _NonFinite(name)

    try:
        data = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise SpecError(shown, None,
                        f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
                        ) from None
    except (ValueError, RecursionError) as exc:
        # A 5,000-digit integer (Python's int-string limit), arrays nested too deep to parse.
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise SpecError(shown, None, f"malformed JSON: {reason.splitlines()[0][:200]}"
                        ) from None
    if not isinstance(data, dict):
        raise SpecError(shown, None, "expected a JSON object at the top level")
    data = _drop_non_finite(data, shown)
    if data.get("quantization_config") is None and (
            path_kind(Path(path)) == "dir" or file.name == "config.json"):
        quant = read_quant_file(file.parent)
        if quant is not None:
            _refuse_two_quantizations(data, shown, *quant)
            data["quantization_config"], data[QUANT_FILE_KEY] = quant
    if data.get("quantization_config") is None and isinstance(data.get("compression_config"), dict):
        # compressed-tensors' older key, read by vLLM 0.32 (model_arch_config_convertor.py:264)
        data["quantization_config"] = data.pop("compression_config")
    return data, shown


# ModelOpt 0.29 and older write the quantization config beside config.json, not in it.
QUANT_FILE = "hf_quant_config.json"
# Where read_config notes that quantization_config came from QUANT_FILE (its shown path).
QUANT_FILE_KEY = "_quantization_file"


def _refuse_two_quantizations(data: Mapping[str, Any], shown: str, quant: Mapping[str, Any],
                              quant_file: str) -> None:
    """One line where a text sub-config holds a quantization_config and hf_quant_config.json
    sits beside config.json too: vLLM 0.32 takes the file as hf_config.quantization_config
    (get_config) and selects its method and --kv-cache-dtype auto from it alone
    (config/model.py _parse_quant_hf_config, utils/torch_utils.py
    resolve_kv_cache_dtype_string), not the text_config's the weights were saved with (checked
    with vLLM 0.32's own EngineArgs.create_model_config: Kimi-K2.5's compressed-tensors
    text_config beside a ModelOpt FP8 file gives quantization modelopt, KV fp8_e4m3), so the
    two disagree on the weights and kvplan does not guess which holds."""
    for key in TEXT_KEYS:
        sub = data.get(key)
        if isinstance(sub, Mapping) and sub.get("quantization_config") not in (None, quant):
            raise SpecError(shown, f"{key}.quantization_config",
                            f"set, and {quant_file} beside it, which vLLM takes instead for the "
                            "weights' format and the KV dtype (transformers_utils/config.py "
                            "get_config): remove one of them")


def read_quant_file(folder: Path) -> tuple[dict, str] | None:
    """`folder`'s hf_quant_config.json as (mapping, shown path); None when there is none.

    vLLM 0.32 transformers_utils/config.py get_config: when config.json has no
    quantization_config (absent or null) and the model's folder or Hub repo holds
    hf_quant_config.json (file_or_path_exists), its content (get_hf_file_to_dict) becomes
    config.quantization_config, read from then on as if config.json held it (its
    --kv-cache-dtype auto included). A file kvplan cannot read as a JSON object is one line
    naming it."""
    file = folder / QUANT_FILE
    if path_kind(file) != "file":  # vLLM: (local_path / config_name).is_file()
        return None
    shown = shown_path(file)
    data = parse_json(read_text(file), shown)
    if not isinstance(data, dict):
        raise SpecError(shown, None, "expected a JSON object at the top level (ModelOpt's "
                                     "{\"producer\", \"quantization\"})")
    return data, shown


# Fields where a published config carries JSON's Infinity and kvplan reads nothing: dropped.
# Anywhere else NaN and infinities are refused (one line), as before.
_NON_FINITE_OK = {"time_step_limit": "Mamba2's clamp of the time step (compute only; "
                                     "mistralai/Mamba-Codestral-7B-v0.1 has [0.0, Infinity])"}


class _NonFinite:
    def __init__(self, name: str) -> None:
        self.name = name


def _non_finite(value: Any) -> _NonFinite | None:
    if isinstance(value, _NonFinite):
        return value
    if isinstance(value, list):
        return next((v for v in map(_non_finite, value) if v is not None), None)
    if isinstance(value, dict):
        return next((v for v in map(_non_finite, value.values()) if v is not None), None)
    return None


def _drop_non_finite(data: dict, shown: str) -> dict:
    out = {}
    for key, value in data.items():
        bad = _non_finite(value)
        if bad is None:
            out[key] = value
        elif key in _NON_FINITE_OK:
            continue
        elif isinstance(value, dict):
            out[key] = _drop_non_finite(value, shown)
        else:
            raise SpecError(shown, None, f"{bad.name} is not a JSON number (NaN and infinities "
                                         "have no place in a model config)")
    return out
