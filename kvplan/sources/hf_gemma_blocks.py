"""Gemma-3n's and Gemma-4's config fields that size weights (ModelSpec.gemma_blocks) and
Gemma-3n's rotary tables: read from config.json into the spec mapping, and parsed back from that
mapping or a spec YAML's ``gemma_blocks`` section.

vLLM 0.32 models/gemma3n.py reads `altup_num_inputs`, `laurel_rank`,
`hidden_size_per_layer_input` and `vocab_size_per_layer_input` from Gemma3nTextConfig, whose
defaults (transformers 5.19 configuration_gemma3n.py:121-128) stand where the file is silent.
models/gemma4.py reads `hidden_size_per_layer_input` (PLE where > 0) and
`vocab_size_per_layer_input` (:1021-1026), `use_double_wide_mlp` (:570-582) and builds a dense
MLP beside every MoE block (:605-651); Gemma4TextConfig's defaults (transformers 5.19
configuration_gemma4.py:175-181: 256, 262,144, false) stand where the file is silent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import checked_int
from kvplan.model.spec import GemmaBlocksSpec
from kvplan.sources.hf_gemma4_towers import parse_tower_shapes, tower_shapes

# The families whose vLLM decoder layer is Gemma3nDecoderLayer (models/gemma3n.py).
GEMMA3N_FAMILIES = frozenset({"gemma3n"})

# The families whose vLLM decoder layer is Gemma4DecoderLayer (models/gemma4.py).
GEMMA4_FAMILIES = frozenset({"gemma4"})

# Gemma3nTextConfig's defaults (transformers 5.19 configuration_gemma3n.py:121-128).
DEFAULTS = {"altup_num_inputs": 4, "laurel_rank": 64, "hidden_size_per_layer_input": 256,
            "vocab_size_per_layer_input": 262_144}
# Gemma4TextConfig's (configuration_gemma4.py:175-176): no AltUp, no LAuReL.
GEMMA4_DEFAULTS = {"hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262_144}
# The section's optional keys and their types (GemmaBlocksSpec).
FLAGS = ("double_wide_shared_mlp", "dense_mlp_beside_moe")


def gemma_blocks(data: Mapping[str, Any], model_type: str, path: str,
                 towers: list[str], wrapper: Mapping[str, Any] | None = None
                 ) -> dict[str, Any] | None:
    """The `gemma_blocks` mapping of a Gemma-3n or Gemma-4 text config, else None; `towers`:
    the wrapper's tower sub-configs (kvplan.sources.hf_wrappers.untouched_towers), whose
    weights kvplan counts only for Gemma-4 (`wrapper`: the whole config.json, whose
    vision_config / audio_config give `tower_shapes`, kvplan.sources.hf_gemma4_towers)."""
    gemma4 = model_type in GEMMA4_FAMILIES
    if model_type not in GEMMA3N_FAMILIES and not gemma4:
        return None
    # null stands for the class default (Gemma4TextConfig's dataclass fields).
    blocks: dict[str, Any] = {
        key: checked_int(default if data.get(key) is None else data[key], path=path, field=key,
                         minimum=0)
        for key, default in (GEMMA4_DEFAULTS if gemma4 else DEFAULTS).items()}
    if gemma4:
        double = data.get("use_double_wide_mlp", False)
        if not isinstance(double, bool):
            raise SpecError(path, "use_double_wide_mlp", "expected true or false")
        blocks.update(altup_num_inputs=0, laurel_rank=0, double_wide_shared_mlp=double,
                      dense_mlp_beside_moe=True)
    if towers:
        blocks["towers"] = list(towers)
        shapes = tower_shapes(wrapper) if gemma4 and wrapper is not None else None
        if shapes is not None:
            blocks["tower_shapes"] = shapes
    return blocks


def parse_gemma_blocks(value: Any, path: str) -> GemmaBlocksSpec | None:
    """A spec's `gemma_blocks` section (the four sizes, optionally the two Gemma-4 flags and
    `towers`, a list of tower names), else None."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not set(DEFAULTS) <= set(value) <= {
            *DEFAULTS, *FLAGS, "towers", "tower_shapes"}:
        raise SpecError(path, "gemma_blocks", "expected a mapping of " + ", ".join(DEFAULTS)
                        + " (and " + ", ".join(FLAGS) + ", towers)")
    towers = value.get("towers", [])
    if not isinstance(towers, list) or not all(isinstance(t, str) for t in towers):
        raise SpecError(path, "gemma_blocks.towers", "expected a list of names")
    for flag in FLAGS:
        if not isinstance(value.get(flag, False), bool):
            raise SpecError(path, f"gemma_blocks.{flag}", "expected true or false")
    return GemmaBlocksSpec(**{key: checked_int(value[key], path=path,
                                               field=f"gemma_blocks.{key}", minimum=0)
                              for key in DEFAULTS},
                           **{flag: value.get(flag, False) for flag in FLAGS},
                           towers=tuple(towers),
                           tower_shapes=parse_tower_shapes(value.get("tower_shapes"), path))


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
