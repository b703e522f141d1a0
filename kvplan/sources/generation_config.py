"""A checkpoint's generation_config.json, read for the sampling defaults vLLM's server takes
from it (kvplan.engines.vllm.sampler.SamplingParams.resolve): an object; temperature, top_p
and top_k numbers where present (other keys are the checkpoint's and not read)."""

from __future__ import annotations

from pathlib import Path

from kvplan._util.errors import SpecError
from kvplan.sources.files import parse_json, read_text, shown_path

SAMPLING_KEYS = ("temperature", "top_p", "top_k")


def read_generation_config(path: str | Path) -> dict[str, float | int]:
    """The sampling keys of the generation_config.json at `path` (a one-line SpecError naming
    the file and field where it is not an object or a key is not a number)."""
    shown = shown_path(path)
    data = parse_json(read_text(Path(path)), shown)
    if not isinstance(data, dict):
        raise SpecError(shown, None, "expected a JSON object")
    out: dict[str, float | int] = {}
    for key in SAMPLING_KEYS:
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SpecError(shown, key, f"expected a number, got {value!r}")
        out[key] = value
    return out
