"""DeepSeek-V4's config.json (model_type deepseek_v4): the compressed-sparse-attention fields.

Reads what vLLM's DeepseekV4Attention reads (vllm/models/deepseek_v4/attention.py, 0.32:
head_dim, qk_rope_head_dim, sliding_window, compress_ratios[layer_id], o_groups, o_lora_rank,
q_lora_rank, index_*), each checked here and refused in one line naming the file and field.
"""

from __future__ import annotations

from typing import Any

from kvplan._util.errors import SpecError
from kvplan.model.attention import CompressedSparseAttention

_INTS = ("num_attention_heads", "head_dim", "qk_rope_head_dim", "sliding_window", "q_lora_rank",
         "o_lora_rank", "o_groups", "index_head_dim", "index_n_heads", "index_topk",
         "num_hidden_layers")
# vllm/models/deepseek_v4/compressor.py CompressorStateCache: "assert compress_ratio in
# [4, 128]"; 0 (and 1) keep the sliding window only.
RATIOS = frozenset({0, 1, 4, 128})


def _int(config: dict[str, Any], path: str, field: str) -> int:
    value = config.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SpecError(path, field, f"expected a positive integer, got {value!r}")
    return value


def read_compressed_sparse_attention(config: dict[str, Any], path: str
                                     ) -> CompressedSparseAttention:
    """The attention of a deepseek_v4 config.json, or a one-line SpecError."""
    values = {f: _int(config, path, f) for f in _INTS}
    if config.get("num_key_value_heads", 1) != 1:
        raise SpecError(path, "num_key_value_heads", "DeepSeek-V4 caches one KV head; got "
                        f"{config.get('num_key_value_heads')!r}")
    ratios = config.get("compress_ratios")
    if ratios is None:
        raise SpecError(path, "compress_ratios", "missing (a per-layer list of 0, 4 and 128; "
                        "the layer_types / compress_rates form is not read)")
    if not isinstance(ratios, list) or any(isinstance(r, bool) or r not in RATIOS
                                           for r in ratios):
        raise SpecError(path, "compress_ratios", f"expected a list of 0, 1, 4 and 128, got "
                        f"{ratios!r}")
    layers = values.pop("num_hidden_layers")
    if len(ratios) < layers:
        raise SpecError(path, "compress_ratios", f"{len(ratios)} entries for {layers} layers")
    return CompressedSparseAttention(compress_ratios=tuple(ratios), **values)
