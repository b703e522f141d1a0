"""SGLang's own maximum context of a model and the variable that lets it start above it.

python/sglang/srt/hf_transformers_utils.py `get_context_length` (0.4.8 lines 159-185, 0.4.10
179-205, 0.5.2 236-262; moved to srt/utils/hf_transformers_utils.py in 0.5.3: 0.5.6 lines
327-353, 0.5.10 680-706, the same code in each):
- rope_scaling (only that attribute) truthy: factor = rope_scaling.get("factor", 1), set back to
  1 when rope_scaling names original_max_position_embeddings or its "rope_type" (not "type") is
  llama3; so YaRN WITH original_max_position_embeddings keeps the stated maximum, YaRN without
  it, linear, dynamic (and Gemma-3's linear 8) multiply;
- the FIRST stated of CONTEXT_LENGTH_KEYS (max_sequence_length, seq_length, max_seq_len,
  model_max_length, max_position_embeddings), not the smallest (vLLM's): int(factor * value);
- none stated: 2048. SGLang reads the transformers config object, so a config class's own
  default stands before that; kvplan does not hold those defaults and keeps the spec's maximum.
"""

from __future__ import annotations

from kvplan.model.context_limit import ContextLimit, PositionFields, scaled_limit

OVERRIDE_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
# get_context_length's CONTEXT_LENGTH_KEYS, in its order (the first stated one wins).
CONTEXT_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                "max_position_embeddings")


def sglang_context_limit(fields: PositionFields) -> ContextLimit | None:
    """SGLang's derived context_len; None when the config states none of its keys."""
    found = fields.first_of(CONTEXT_KEYS)
    if found is None:
        return None
    rope = fields.rope_scaling
    factor = 1 if rope is None or rope.original_max_position_embeddings is not None else (
        rope.scaled(unless_types=("llama3",)))
    return scaled_limit(*found, factor)
