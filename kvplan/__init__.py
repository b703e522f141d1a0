"""kvplan: plan LLM inference KV-cache memory.

The public API is pure (no typer, rich, torch or pandas):

>>> from kvplan import load_spec, estimate
>>> estimate(load_spec("deepseek-v2"), context=4096).bytes_per_token
69120
"""

from .attention import AttentionKind, HeadAttention, LatentAttention
from .cache import DEFAULT_BLOCK_SIZE, Estimate, KVLayout, estimate, kv_layout
from .dtypes import DTYPES, DType
from .errors import InputError, KvplanError, SpecError
from .spec import ModelSpec, load_spec, parse_spec

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BLOCK_SIZE", "DTYPES", "AttentionKind", "DType", "Estimate", "HeadAttention",
    "InputError", "KVLayout", "KvplanError", "LatentAttention", "ModelSpec", "SpecError",
    "estimate", "kv_layout", "load_spec", "parse_spec",
]
