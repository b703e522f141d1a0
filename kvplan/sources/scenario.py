"""A `kvplan plan` scenario file: the question a team keeps and diffs (model, target, hardware
list, prices, engine options) as YAML. Read and checked here, field by field: a bad field is
one SpecError naming the file and the field; the command line's flags override the file's
values (kvplan.cli.plan_cmd). The schema: examples/plan-scenario.yaml."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_SIZE
from kvplan.sources.files import shown_path
from kvplan.sources.resolve import read_yaml

# field -> (what it holds, as the error says it)
_INT = "a positive integer"
_NUMBER = "a number >= 0"
_TEXT = "a string"
_TOKENS = "a token count (4096, 32k, 1m)"
FIELDS: dict[str, str] = {
    "model": _TEXT, "concurrency": _INT, "context": _TOKENS, "gpu": "a GPU name or a list",
    "gpus_per_node": _INT, "nodes": _INT, "prices": "a mapping GPU: USD per hour",
    "engine": _TEXT, "engine_version": "a quoted version string (\"0.11\")",
    "kv_dtype": _TEXT, "mem_fraction": "a number in (0, 1]", "max_num_seqs": _INT,
    "max_num_batched_tokens": _TOKENS, "speculative_method": _TEXT,
    "num_speculative_tokens": "an integer >= 0", "quantization": _TEXT, "dtype": _TEXT,
    "gpu_mem_gib": _NUMBER, "weights_gib": _NUMBER, "reserve_gib": _NUMBER,
}


def _number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _check(path: str, key: str, value: Any) -> Any:
    kind = FIELDS[key]

    def bad() -> SpecError:
        return SpecError(path, key, f"expected {kind}, got {value!r}")

    if kind == _INT or key == "num_speculative_tokens":
        least = 0 if key == "num_speculative_tokens" else 1
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_SIZE:
            raise bad()
        return value
    if kind == _NUMBER or key == "mem_fraction":
        if not _number(value) or value < 0 or value > 1e12 or (
                key == "mem_fraction" and not 0 < value <= 1):
            raise bad()
        return float(value)
    if kind == _TOKENS:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise bad()
        return str(value)
    if key == "gpu":
        names = value if isinstance(value, list) else [value]
        if not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise bad()
        return ",".join(n.strip() for n in names)
    if key == "prices":
        if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and _number(v) and v >= 0 for k, v in value.items()):
            raise bad()
        return {k: float(v) for k, v in value.items()}
    if not isinstance(value, str) or not value.strip():
        raise bad()
    return value.strip()


def read_scenario(path: Path) -> dict[str, Any]:
    """The scenario's fields, checked (None values dropped). A relative model path is taken
    from the file's folder when it names a file there."""
    shown = shown_path(path)
    data = read_yaml(path)
    if not isinstance(data, Mapping):
        raise SpecError(shown, None, "expected a mapping of fields (see "
                                     "examples/plan-scenario.yaml)")
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in FIELDS:
            raise SpecError(shown, str(key), "unknown field (expected one of "
                                             f"{', '.join(FIELDS)})")
        if value is not None:
            out[key] = _check(shown, key, value)
    model = out.get("model")
    if model is not None and not Path(model).is_absolute():
        beside = path.parent / model
        if beside.exists():
            out["model"] = str(beside)
    return out


def read_prices(path: Path) -> dict[str, float]:
    """A prices file (--prices): a YAML or JSON mapping GPU: USD per GPU-hour."""
    return _check(shown_path(path), "prices", read_yaml(path))
