"""How a model's weights are stored: the base of kvplan's quantization model.

One ``QuantScheme`` type per storage format, each answering ``matrix_bytes(out, in)`` for one
weight matrix of shape (out_features, in_features), scales and zero points included (counted apart
so that a breakdown can show them). Formats follow the tensors vLLM allocates in its quantization
layers (``vllm/model_executor/layers/quantization/*.py``), which is what "Model loading took X GiB"
measures: the memory held after ``process_weights_after_loading``, i.e. after any repacking for the
kernels (Marlin, Machete, CUTLASS swizzles) and after temporary tensors are freed.

This module holds the unquantized base (``MatrixBytes``, ``QuantScheme``, ``Unquantized``); the
quantized schemes are in kvplan.model.quant_formats and the parser of config.json's
``quantization_config`` in kvplan.model.quant_config, both loaded for a quantized model only
(start-up: examples/startup-bench.md). kvplan.weights prices a model with these schemes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kvplan._util.dtypes import GemmMath
from kvplan._util.units import cdiv

FP32_BYTES = 4
INT32_BYTES = 4


def round_up(n: int, multiple: int) -> int:
    return cdiv(n, multiple) * multiple


@dataclass(frozen=True, kw_only=True)
class MatrixBytes:
    """Bytes of one stored matrix: the (possibly packed) weight, and its scales/zeros/indices."""

    weight: int
    scales: int = 0

    @property
    def total(self) -> int:
        return self.weight + self.scales

    def __add__(self, other: MatrixBytes) -> MatrixBytes:
        return MatrixBytes(weight=self.weight + other.weight, scales=self.scales + other.scales)

    def times(self, n: int) -> MatrixBytes:
        return MatrixBytes(weight=self.weight * n, scales=self.scales * n)


class QuantScheme(Protocol):
    """A storage format for linear weights."""

    name: str
    math: GemmMath
    """The type its GEMMs run at where the device has the tensor cores (`GemmMath`): FP8
    for W8A8, FP4 for W4A4 NVFP4, bf16 for weight-only formats and unquantized weights."""

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        """One (out, in) matrix, scales included."""
        ...

    def experts_bytes(self, num_experts: int, hidden: int, intermediate: int,
                      gated: bool) -> MatrixBytes:
        """All experts of one MoE layer (per rank): the fused gate_up (w13) and down (w2)."""
        ...


class FusedExperts:
    """Default expert layout: vLLM's FusedMoE stacks w13 (2I x H, or I x H ungated) and w2 (H x I)
    per expert (vllm/model_executor/layers/fused_moe/layer.py) in the scheme's matrix format.
    Its GEMMs run in the compute dtype (weight-only) unless the format says otherwise."""

    math: GemmMath = GemmMath.bf16

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        raise NotImplementedError

    def experts_bytes(self, num_experts: int, hidden: int, intermediate: int,
                      gated: bool) -> MatrixBytes:
        w13 = self.matrix_bytes((2 if gated else 1) * intermediate, hidden)
        w2 = self.matrix_bytes(hidden, intermediate)
        return (w13 + w2).times(num_experts)


@dataclass(frozen=True, kw_only=True)
class Unquantized(FusedExperts):
    """Plain weights in the compute dtype (``bits`` per element, no scales)."""

    bits: int = 16
    name: str = "none"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        return MatrixBytes(weight=cdiv(out_features * in_features * self.bits, 8))
