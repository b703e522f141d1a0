"""Gemma-3n's config fields that size weights (ModelSpec.gemma3n_blocks) and its rotary tables:
read from config.json into the spec mapping, and parsed back from that mapping or a spec YAML's
``gemma3n_blocks`` section.

vLLM 0.32 models/gemma3n.py reads `altup_num_inputs`, `laurel_rank`,
`hidden_size_per_layer_input` and `vocab_size_per_layer_input` from Gemma3nTextConfig, whose
defaults (transformers 5.19 configuration_gemma3n.py:121-128) stand where the file is silent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import checked_int
from kvplan.model.spec import Gemma3nBlocksSpec

# The families whose vLLM decoder layer is Gemma3nDecoderLayer (models/gemma3n.py).
GEMMA3N_FAMILIES = frozenset({"gemma3n"})

# Gemma3nTextConfig's defaults (transformers 5.19 configuration_gemma3n.py:121-128).
DEFAULTS = {"altup_num_inputs": 4, "laurel_rank": 64, "hidden_size_per_layer_input": 256,
            "vocab_size_per_layer_input": 262_144}


def gemma3n_blocks(data: Mapping[str, Any], model_type: str, path: str,
                   towers: list[str]) -> dict[str, Any] | None:
    """The `gemma3n_blocks` mapping of a Gemma-3n text config, else None; `towers`: the
    wrapper's tower sub-configs (kvplan.sources.hf_wrappers.untouched_towers), whose weights
    kvplan does not count (Gemma3nBlocksSpec.towers)."""
    if model_type not in GEMMA3N_FAMILIES:
        return None
    blocks: dict[str, Any] = {key: checked_int(data.get(key, default), path=path, field=key)
                              for key, default in DEFAULTS.items()}
    if towers:
        blocks["towers"] = list(towers)
    return blocks


def parse_gemma3n_blocks(value: Any, path: str) -> Gemma3nBlocksSpec | None:
    """A spec's `gemma3n_blocks` section (the four sizes, and optionally `towers`, a list of
    tower names), else None."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not set(DEFAULTS) <= set(value) <= {*DEFAULTS,
                                                                             "towers"}:
        raise SpecError(path, "gemma3n_blocks", "expected a mapping of "
                                                + ", ".join(DEFAULTS) + " (and towers)")
    towers = value.get("towers", [])
    if not isinstance(towers, list) or not all(isinstance(t, str) for t in towers):
        raise SpecError(path, "gemma3n_blocks.towers", "expected a list of names")
    return Gemma3nBlocksSpec(**{key: checked_int(value[key], path=path,
                                                 field=f"gemma3n_blocks.{key}")
                                for key in DEFAULTS}, towers=tuple(towers))


def gemma3n_rope_tables(data: Mapping[str, Any], max_pos: int, path: str) -> list[int]:
    """Rows of Gemma-3n's rotary tables (ModelSpec.rope_tables), head_dim wide each.

    vLLM 0.32 models/gemma3n.py:365-373 Gemma3nAttention calls get_rope(head_dim,
    max_position_embeddings, config.rope_parameters[layer_type]); Gemma3nTextConfig
    (configuration_gemma3n.py:182-201) sets the full layers' rope_theta (default 1e6) and the
    sliding layers' rope_local_base_freq (default 1e4), both "default" RoPE. get_rope caches one
    table per distinct parameter set: two tables of max_position_embeddings rows when the two
    bases differ (the oracle shrink gemma-3n-e4b-text holds two cos_sin_cache buffers)."""
    if data.get("rope_scaling") is not None or data.get("rope_parameters") is not None:
        field = "rope_scaling" if data.get("rope_scaling") is not None else "rope_parameters"
        raise SpecError(path, field, "given for Gemma-3n: its rotary tables' rows are sized "
                                     "only for default RoPE (rope_theta, rope_local_base_freq)")
    full = data.get("rope_theta", 1_000_000.0)
    local = data.get("rope_local_base_freq", 10_000.0)
    types = set(data.get("layer_types") or ("sliding_attention", "full_attention"))
    bases = {full if t == "full_attention" else local for t in types}
    return [max_pos] * len(bases)
