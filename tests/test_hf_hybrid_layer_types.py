"""kvplan.sources.hf_hybrid: a hybrid model's layer_types read as kvplan's layer kinds, one rule
(`_mapped_types`) for Granite-4.0-H, Qwen3-Next / Qwen3.5, OLMo Hybrid and LFM2: a list of
num_hidden_layers names, each one the class builds; a name kvplan does not know is refused in one
line, never sized as the engine's fallback (vLLM builds full attention for any OLMo Hybrid entry
but "linear_attention", models/olmo_hybrid.py 0.32)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kvplan._util.errors import SpecError
from kvplan.model.spec import FULL, RECURRENT
from kvplan.sources.hf_config import spec_mapping_from_config

CONFIGS = Path(__file__).parent / "data" / "configs"

# (fixture, its num_hidden_layers, what the class calls a recurrent layer, the message for a list
# of the wrong length, with {n} the layer count)
CASES = [
    ("granite-4.0-h-micro", 40, "mamba",
     "missing: a list of {n} entries ('mamba' or 'attention') is needed"),
    ("qwen3-next-80b-a3b", 48, "linear_attention", "expected {n} entries, got 47"),
    ("olmo-hybrid-7b", 32, "linear_attention", "expected a list of {n} entries"),
    ("lfm2-1.2b", 16, "conv", "expected a list of {n} entries"),
]


def _read(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


@pytest.mark.parametrize(("name", "layers", "recurrent", "wrong_length"), CASES)
def test_layer_types_read_refused_and_mapped(name: str, layers: int, recurrent: str,
                                             wrong_length: str) -> None:
    config = _read(name)
    assert config["num_hidden_layers"] == layers
    full = "attention" if name.startswith("granite") else "full_attention"
    # Layer 0 recurrent, then full attention, alternating: mapped one to one.
    config["layer_types"] = [recurrent if i % 2 == 0 else full for i in range(layers)]
    spec, _ = spec_mapping_from_config(config, path=name)
    assert spec["layer_types"] == [RECURRENT if i % 2 == 0 else FULL for i in range(layers)]
    # A name the class does not build (a sliding layer) is refused, not sized as full attention.
    config["layer_types"] = ["sliding_attention", *config["layer_types"][1:]]
    with pytest.raises(SpecError, match="layer type 'sliding_attention' is not one kvplan models"):
        spec_mapping_from_config(config, path=name)
    # One entry short.
    config["layer_types"] = config["layer_types"][1:]
    with pytest.raises(SpecError, match="layer_types: " + re.escape(wrong_length.format(n=layers))):
        spec_mapping_from_config(config, path=name)

