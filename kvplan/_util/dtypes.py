"""Element types for the KV cache and for weights, with widths in BITS.

Widths are kept in bits so that sub-byte formats are exact (int4 is 4 bits, not ``4 // 8 == 0``
bytes); callers sum bits and round up to bytes once, at the end.

Scales: ``fp8`` and ``int8`` as vLLM and SGLang store them use one scale per tensor (per layer),
which is negligible and not counted per token. ``int4`` here is packed 4-bit with a per-tensor
scale as well. ``nvfp4`` is NVIDIA's FP4 format: 4-bit elements plus one fp8 (8-bit) scale per
16 elements, i.e. 4.5 bits per element, and that scale IS counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kvplan._util.units import cdiv


@dataclass(frozen=True, kw_only=True)
class DType:
    name: str
    element_bits: int
    # One scale of `scale_bits` for every `scale_group_size` elements (0 = per-tensor, not counted).
    scale_bits: int = 0
    scale_group_size: int = 0
    description: str = ""

    def bits_for(self, elements: int) -> int:
        """Exact storage bits for `elements` values, scales included."""
        bits = elements * self.element_bits
        if self.scale_group_size:
            bits += cdiv(elements, self.scale_group_size) * self.scale_bits
        return bits

    def bytes_for(self, elements: int) -> int:
        """Storage bytes for `elements` contiguous values (rounded up to a whole byte once)."""
        return cdiv(self.bits_for(elements), 8)


class KVDType(str, Enum):
    """KV-cache element types a user can ask for (``--kv-dtype``)."""

    fp32 = "fp32"
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"
    int8 = "int8"
    int4 = "int4"
    nvfp4 = "nvfp4"


DTYPES: dict[str, DType] = {
    "fp32": DType(name="fp32", element_bits=32, description="IEEE float32"),
    "bf16": DType(name="bf16", element_bits=16, description="bfloat16"),
    "fp16": DType(name="fp16", element_bits=16, description="IEEE float16"),
    "fp8": DType(name="fp8", element_bits=8, description="fp8 e4m3/e5m2, per-tensor scale"),
    "int8": DType(name="int8", element_bits=8, description="int8, per-tensor scale"),
    "int4": DType(name="int4", element_bits=4, description="packed int4, per-tensor scale"),
    "nvfp4": DType(
        name="nvfp4", element_bits=4, scale_bits=8, scale_group_size=16,
        description="fp4 e2m1 + one fp8 scale per 16 elements (4.5 bits/element)",
    ),
}

# config.json `torch_dtype` spellings -> our dtype names (weights).
WEIGHT_DTYPE_ALIASES: dict[str, str] = {
    "float32": "fp32", "fp32": "fp32",
    "bfloat16": "bf16", "bf16": "bf16",
    "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "float8": "fp8", "fp8": "fp8", "float8_e4m3fn": "fp8",
    "int8": "int8", "int4": "int4",
}


def get_dtype(name: str) -> DType:
    """Look up a dtype by kvplan name or config.json spelling; KeyError if unknown."""
    key = WEIGHT_DTYPE_ALIASES.get(name, name)
    return DTYPES[key]


# vLLM --kv-cache-dtype / SGLang --kv-cache-dtype spellings -> kvplan's names (the CLI's
# --kv-dtype parser and `kvplan check`, reading a server's cache_dtype, both use it).
KV_DTYPE_ALIASES = {
    "auto": "bf16", "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16",
    "half": "fp16", "float32": "fp32", "fp32": "fp32", "fp8": "fp8", "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8", "int8": "int8", "int4": "int4", "nvfp4": "nvfp4",
}


class GemmMath(str, Enum):
    """The tensor-core input type a GEMM over quantized weights runs at: the activations' type
    where the engine quantizes them too (W8A8 FP8, W4A4 NVFP4), the compute dtype (bf16) where
    it only dequantizes the weights (weight-only W4A16 / W8A16: Marlin, Machete). What a
    checkpoint's format asks for (kvplan.model.quant.QuantScheme.math); what a device really
    runs it at, falling back where it lacks those tensor cores: kvplan.hardware.gpus.GPU.runs."""

    bf16 = "bf16"
    fp8 = "fp8"
    fp4 = "fp4"
