"""TensorRT-LLM's own maximum context of a model (PyTorch backend) and the variable that keeps a
longer max_seq_len.

tensorrt_llm/_torch/models/modeling_utils.py `DecoderModelForCausalLM.infer_max_seq_len`
("Modified from tensorrt_llm/builder.py _init_max_seq_len"):
- rope_scaling not None: its type is rope_scaling.get("type", rope_scaling.get("rope_type"));
  unless that is su, longrope, llama3 or yarn, factor = rope_scaling.get("factor", 1.0);
- max_position_embeddings only (no other key; 2048 when the config class has none: kvplan keeps
  the spec's maximum there), times the factor, rounded up (math.ceil).
"""

from __future__ import annotations

from kvplan.model.context_limit import ContextLimit, PositionFields, scaled_limit

OVERRIDE_ENV = "TLLM_ALLOW_LONG_MAX_MODEL_LEN"
# infer_max_seq_len: rope types whose factor does not multiply.
UNSCALED_ROPE_TYPES = ("su", "longrope", "llama3", "yarn")


def trtllm_context_limit(fields: PositionFields) -> ContextLimit | None:
    """TensorRT-LLM's inferred max_seq_len; None when the config states no
    max_position_embeddings."""
    found = fields.stated("max_position_embeddings")
    if found is None:
        return None
    rope = fields.rope_scaling
    factor = 1 if rope is None else rope.scaled(unless_types=UNSCALED_ROPE_TYPES,
                                                legacy_type_first=True)
    return scaled_limit(*found, factor, round_up=True)
