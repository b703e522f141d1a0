"""Which of a Gemma wrapper's towers vLLM builds, given --limit-mm-per-prompt.

vLLM 0.32 models/interfaces.py:339-380 `_mark_tower_model`: a tower built inside it becomes a
StageMissingLayer, with no weights, when the prompt limit of every modality it serves is 0. The
wrappers mark their towers so: gemma3n_mm.py:616-627 (the vision tower for "image", the audio
tower for "audio") and gemma4_mm.py:1095-1133 (the vision tower for "image" and "video", the audio
tower for "audio"). The oracle shrink gemma-4-26b-a4b, started with image, video and audio 0,
holds no vision tower: its parameters are its text model's to the byte
(tests/data/oracle/weight-bytes.json).

Gemma-4's towers are counted in the weights (kvplan.weights.gemma4_towers), Gemma-3n's and a
quantized Gemma-4 wrapper's are not (GemmaBlocksSpec.towers: a budget from the device is refused
without them, kvplan.capacity.stages.refuse_uncounted_towers); a tower vLLM does not build is
neither counted nor refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from kvplan.model.spec import ModelSpec

# Wrapper architecture -> tower sub-config -> the modalities whose limits must all be 0.
TOWER_MODALITIES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "Gemma3nForConditionalGeneration": {"vision_config": ("image",),
                                        "audio_config": ("audio",)},
    "Gemma4ForConditionalGeneration": {"vision_config": ("image", "video"),
                                       "audio_config": ("audio",)},
}


def without_skipped_towers(spec: ModelSpec, limits: tuple[tuple[str, int], ...]) -> ModelSpec:
    """`spec` without the towers vLLM skips at these prompt limits (and, when none is left, without
    the assumption about their weights or encoder profile)."""
    blocks = spec.gemma_blocks
    if blocks is None or not blocks.towers or not limits:
        return spec
    by_tower = next((TOWER_MODALITIES[a] for a in spec.architectures if a in TOWER_MODALITIES),
                    None)
    if by_tower is None:
        return spec
    given = dict(limits)
    kept = tuple(t for t in blocks.towers
                 if t not in by_tower or any(given.get(m) != 0 for m in by_tower[t]))
    if kept == blocks.towers:
        return spec
    assumptions = spec.assumptions if kept else tuple(
        a for a in spec.assumptions
        if not (a.affects == "weights" and a.field == ", ".join(blocks.towers)))
    return replace(spec, gemma_blocks=replace(blocks, towers=kept), assumptions=assumptions)


def ple_buffer_bytes(spec: ModelSpec, *, max_num_batched_tokens: int, element_bytes: int) -> int:
    """The wrapper's per-layer-embedding buffer: a plain tensor (no parameter, no buffer) of
    max_num_batched_tokens x num_layers x hidden_size_per_layer_input in the model dtype, made
    while the model loads (so inside vLLM's "Model loading took"), whole on every rank
    (gemma3n_mm.py:636-643; gemma4_mm.py:1143-1156, where hidden_size_per_layer_input > 0); the
    text models (Gemma3nForCausalLM, Gemma4ForCausalLM) make none. 0 for any other spec."""
    blocks = spec.gemma_blocks
    if (blocks is None or not blocks.hidden_size_per_layer_input
            or not any(a in TOWER_MODALITIES for a in spec.architectures)):
        return 0
    return (max_num_batched_tokens * spec.num_hidden_layers * blocks.hidden_size_per_layer_input
            * element_bytes)
