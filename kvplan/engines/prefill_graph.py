"""An engine's CUDA-graph capture of prefill (extend) steps, as plain data (`PrefillGraph`):
the releases that have it and turn it on by default, the architectures it is turned off for,
the steps it captures and what such a step still launches from Python. kvplan.perf.engine_traits
decides whether a step replays it; kvplan.perf.op_counts.graph_prefill_ops counts its launches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvplan._util.versions import version_key
from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class PrefillGraph:
    """Piecewise CUDA graphs over a prefill step: the model's code between its attention calls
    is captured per token count and replayed, one graph launch per piece; each attention call
    (the split op) runs eagerly between the pieces."""

    since: str  # the first release that has it (opt-in before `default_since`)
    default_since: str  # the first release that turns it on by default
    disabled_architectures: frozenset[str]  # config.json `architectures` it is turned off for
    # Steps of an MLA model are captured up to this many tokens; other models' up to the
    # chunked prefill size (every step, as no prefill step is longer).
    mla_max_tokens: int
    attention_split_ops: int  # ops launched per attention layer by the eager split op
    prepare_ops: int  # ops launched before the replay (the static input buffers' copies)
    # The engine's own further rule: True where it turns the graphs off for this model on this
    # GPU (SGLang: a MoE runner it picks by default that the graphs do not take).
    turned_off: Callable[[ModelSpec, GPU], bool] | None = None
    turned_off_before: str | None = None  # the first release without that rule (None: every)
    # Architectures whose decoder prefill the engine validated for capture from release
    # `validated_since` on although they are multimodal (the vision tower runs eagerly outside
    # the graphs) and, where they have them, with their recurrent mixers as split ops, each
    # launching its attention backend's ops eagerly (kvplan.perf.op_counts.graph_prefill_ops).
    validated_architectures: frozenset[str] = frozenset()
    validated_since: str | None = None
    # Ops a recurrent split op launches besides its backend's: the copy of its output into the
    # graph's buffer.
    recurrent_split_copy_ops: int = 0

    def validated(self, spec: ModelSpec, version: str | None) -> bool:
        """Whether release `version` captures `spec`'s prefill as a validated architecture
        (config.json's `architectures`); None, no release named: not."""
        if self.validated_since is None or version is None:
            return False
        return (bool(self.validated_architectures.intersection(spec.architectures))
                and version_key(version) >= version_key(self.validated_since))

    def is_turned_off(self, spec: ModelSpec, gpu: GPU, version: str | None) -> bool:
        """The engine's `turned_off` rule for `spec` on `gpu` at release `version` (None: no
        release named, the rule applies)."""
        if self.turned_off is None:
            return False
        if (self.turned_off_before is not None and version is not None
                and version_key(version) >= version_key(self.turned_off_before)):
            return False
        return self.turned_off(spec, gpu)
