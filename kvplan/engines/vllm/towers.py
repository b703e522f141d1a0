"""Which of a multimodal wrapper's towers vLLM builds, given --limit-mm-per-prompt, and which
tower assumptions still hold.

vLLM 0.32 models/interfaces.py:339-380 `_mark_tower_model`: a tower built inside it becomes a
StageMissingLayer, with no weights, when the prompt limit of every modality it serves is 0. Before
that helper, the wrappers that skipped a tower did so with an ``if`` on the same limits. Per
wrapper, the modalities (read in the 0.32 wheel) and the first release that skips it
(`SkippableTower.since`):

- Qwen2-VL / Qwen2.5-VL (qwen2_vl.py:1412, qwen2_5_vl.py:1434: {"image", "video"}) and Llama-4
  (mllama4.py:765: "image"): from 0.10.1.
- Qwen3-VL, Qwen3-VL-MoE, Qwen3.5, Qwen3.5-MoE (qwen3_vl.py:2010, qwen3_vl_moe.py:255,
  qwen3_5.py:513 / :736: {"image", "video"}) and Gemma-4 (gemma4_mm.py:1095-1133: the vision
  tower for {"image", "video"}, the audio tower for "audio"): every release that serves them.
- Gemma-3 (gemma3_mm.py:552: "image") and Gemma-3n (gemma3n_mm.py:616-627: the vision tower for
  "image", the audio tower for "audio"): from 0.15.1.

The oracle's weight probe at every limit 0 (tests/data/oracle/towers-unbuilt.json) holds the
text model's parameters only for the shrinks of Qwen2.5-VL-7B, Gemma-3-27B and Llama-4-Scout.

A tower vLLM does not build is neither counted nor refused (Gemma-3n's towers, which kvplan does
not count, refuse a budget from the device only while built: kvplan.capacity.stages
.refuse_uncounted_towers). With no tower left, the assumptions about towers go; with
--skip-mm-profiling, or every modality the wrapper serves limited to 0 (vLLM then profiles no
encoder: multimodal/registry.py supports_multimodal_inputs), the assumption that the encoder
profile is missing from the reserve goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from kvplan._util.versions import version_key
from kvplan.model.spec import ModelSpec
from kvplan.sources.hf_wrappers import PROFILE_NOT_RESERVED, TOWER_NOT_COUNTED

# ModelSpec fields that hold a tower kvplan describes; any other `SkippableTower.tower` names a
# Gemma wrapper's tower sub-config (GemmaBlocksSpec.towers).
_SPEC_TOWERS = ("vision", "qwen_vit", "qwen2_vit")


@dataclass(frozen=True)
class SkippableTower:
    """A tower a wrapper leaves unbuilt when every modality it serves has prompt limit 0."""

    tower: str  # a ModelSpec field in _SPEC_TOWERS, or a Gemma tower sub-config name
    modalities: tuple[str, ...]
    since: tuple[int, ...]  # the first vLLM release that skips it; (0,): every release

    def skipped(self, limits: Mapping[str, int], release: tuple[int, ...]) -> bool:
        return release >= self.since and all(limits.get(m) == 0 for m in self.modalities)

    def held_by(self, spec: ModelSpec) -> bool:
        if self.tower in _SPEC_TOWERS:
            return getattr(spec, self.tower) is not None
        return spec.gemma_blocks is not None and self.tower in spec.gemma_blocks.towers

    def dropped_from(self, spec: ModelSpec) -> ModelSpec:
        if self.tower in _SPEC_TOWERS:
            return replace(spec, **{self.tower: None})
        blocks = spec.gemma_blocks
        assert blocks is not None
        return replace(spec, gemma_blocks=replace(
            blocks, towers=tuple(t for t in blocks.towers if t != self.tower)))


_VISION = ("image", "video")
_QWEN_VL = (SkippableTower("qwen_vit", _VISION, (0,)),)
_GEMMA4 = (SkippableTower("vision_config", _VISION, (0,)),
           SkippableTower("audio_config", ("audio",), (0,)))
SKIPPABLE: Mapping[str, tuple[SkippableTower, ...]] = {
    "Qwen2VLForConditionalGeneration": (SkippableTower("qwen2_vit", _VISION, (0, 10, 1)),),
    "Qwen2_5_VLForConditionalGeneration": (SkippableTower("qwen2_vit", _VISION, (0, 10, 1)),),
    "Llama4ForConditionalGeneration": (SkippableTower("vision", ("image",), (0, 10, 1)),),
    "Qwen3VLForConditionalGeneration": _QWEN_VL,
    "Qwen3VLMoeForConditionalGeneration": _QWEN_VL,
    "Qwen3_5ForConditionalGeneration": _QWEN_VL,
    "Qwen3_5MoeForConditionalGeneration": _QWEN_VL,
    "Gemma3ForConditionalGeneration": (SkippableTower("vision", ("image",), (0, 15, 1)),),
    "Gemma3nForConditionalGeneration": (
        SkippableTower("vision_config", ("image",), (0, 15, 1)),
        SkippableTower("audio_config", ("audio",), (0, 15, 1))),
    "Gemma4ForConditionalGeneration": _GEMMA4,
}


def _towers_of(spec: ModelSpec) -> tuple[SkippableTower, ...]:
    return next((SKIPPABLE[a] for a in spec.architectures if a in SKIPPABLE), ())


def _holds_a_tower(spec: ModelSpec) -> bool:
    return any(getattr(spec, f) is not None for f in _SPEC_TOWERS) or bool(
        spec.gemma_blocks is not None and spec.gemma_blocks.towers)


def without_skipped_towers(spec: ModelSpec, limits: tuple[tuple[str, int], ...],
                           version: str | None = None, *,
                           skip_mm_profiling: bool = False) -> ModelSpec:
    """`spec` as vLLM `version` (None: the newest) builds it at these prompt limits: without the
    towers it skips, without the tower assumptions once none is left, and without the
    encoder-profile assumption when no encoder is profiled."""
    given = dict(limits)
    towers = _towers_of(spec)
    release = version_key(version)
    out = spec
    for tower in towers:
        if tower.held_by(out) and tower.skipped(given, release):
            out = tower.dropped_from(out)
    gone: tuple[str, ...] = ()
    if out is not spec and not _holds_a_tower(out):
        gone = (PROFILE_NOT_RESERVED, TOWER_NOT_COUNTED)
    elif skip_mm_profiling or (towers and all(
            given.get(m) == 0 for t in towers for m in t.modalities)):
        gone = (PROFILE_NOT_RESERVED,)
    if not gone:
        return out
    return replace(out, assumptions=tuple(
        a for a in out.assumptions if not (a.affects == "weights" and a.value in gone)))


_PLE_WRAPPERS = ("Gemma3nForConditionalGeneration", "Gemma4ForConditionalGeneration")


def ple_buffer_bytes(spec: ModelSpec, *, max_num_batched_tokens: int, element_bytes: int) -> int:
    """The wrapper's per-layer-embedding buffer: a plain tensor (no parameter, no buffer) of
    max_num_batched_tokens x num_layers x hidden_size_per_layer_input in the model dtype, made
    while the model loads (so inside vLLM's "Model loading took"), whole on every rank
    (gemma3n_mm.py:636-643; gemma4_mm.py:1143-1156, where hidden_size_per_layer_input > 0); the
    text models (Gemma3nForCausalLM, Gemma4ForCausalLM) make none. 0 for any other spec."""
    blocks = spec.gemma_blocks
    if (blocks is None or not blocks.hidden_size_per_layer_input
            or not any(a in _PLE_WRAPPERS for a in spec.architectures)):
        return 0
    return (max_num_batched_tokens * spec.num_hidden_layers * blocks.hidden_size_per_layer_input
            * element_bytes)
