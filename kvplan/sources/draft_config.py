"""A speculative drafter's own config.json (`kvplan simulate --spec-draft-config`): its decoder
layer read as a Llama layer (vLLM builds every EAGLE / EAGLE-3 head it prices here from
model_executor/models/llama_eagle.py / llama_eagle3.py, subclasses of llama.py's
LlamaDecoderLayer), with the EAGLE-specific fields kept raw for the engine's rule
(kvplan.engines.vllm.eagle_head)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvplan._util.errors import SpecError
from kvplan.model.spec import ModelSpec
from kvplan.sources.hf_config import spec_mapping_from_config
from kvplan.sources.hf_files import read_config
from kvplan.sources.spec_yaml import parse_spec

# The architectures a Llama-layer EAGLE head's config.json carries (yuhuili's heads keep
# LlamaForCausalLM; SGLang's and SpecForge's copies LlamaForCausalLMEagle / Eagle3; vLLM's own
# names Eagle(3)LlamaForCausalLM): all read as LlamaForCausalLM's layer.
_LLAMA_HEADS = frozenset({"LlamaForCausalLM", "LlamaForCausalLMEagle", "LlamaForCausalLMEagle3",
                          "EagleLlamaForCausalLM", "Eagle3LlamaForCausalLM"})
# The raw fields the engine's rule reads beyond the layer (kvplan.engines.vllm.eagle_head).
EAGLE_FIELDS = ("draft_vocab_size", "target_hidden_size", "num_aux_hidden_states",
                "vocab_size", "hidden_size", "num_hidden_layers")


@dataclass(frozen=True, kw_only=True)
class DraftConfig:
    """The drafter's decoder layer (`layer`: its widths, the config's vocabulary), its raw EAGLE
    fields (`fields`) and the file it came from (`shown`)."""

    layer: ModelSpec
    fields: dict[str, Any]
    shown: str


def load_draft_config(path: str) -> DraftConfig:
    """Read `path` (a config.json or a folder holding one) as an EAGLE head's config; a config
    whose layer is not a Llama layer is refused (one line naming the file and the field)."""
    data, shown = read_config(Path(path))
    if not isinstance(data, dict):
        raise SpecError(shown, None, "expected a JSON object")
    archs = data.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs else None
    if arch not in _LLAMA_HEADS or data.get("model_type", "llama") != "llama":
        raise SpecError(shown, "architectures",
                        f"{arch!r}: expected a Llama-layer EAGLE head (one of "
                        f"{', '.join(sorted(_LLAMA_HEADS))}, model_type llama)")
    for name in ("hidden_size", "num_hidden_layers"):
        value = data.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SpecError(shown, name, f"{value!r}: expected a positive integer")
    for name in ("draft_vocab_size", "target_hidden_size", "num_aux_hidden_states"):
        value = data.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < 1):
            raise SpecError(shown, name, f"{value!r}: expected a positive integer or null")
    mapping, _ = spec_mapping_from_config({**data, "architectures": ["LlamaForCausalLM"]},
                                          path=shown)
    layer = parse_spec(mapping, path=shown, spec_id=Path(shown).stem)
    return DraftConfig(layer=layer, fields={k: data.get(k) for k in EAGLE_FIELDS}, shown=shown)
