"""How a DeepSeek-V4 checkpoint stores its linears and routed experts, as vLLM 0.32 loads it
(models/deepseek_v4/quant_config.py DeepseekV4FP8Config): read once here for its weights
(kvplan.weights.csa) and its parameter count (kvplan.weights.params.csa_params, which counts
only what kvplan can price: any other layout is refused in one line)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kvplan._util.errors import UnmodelledError
from kvplan.model.attention import CompressedSparseAttention
from kvplan.model.quant import QuantScheme, Unquantized
from kvplan.model.quant_formats import Fp8Block, Mxfp4
from kvplan.model.spec import ModelSpec

FP32_BYTES = 4
E8M0_BYTES = 1
_GIVE = ": give --kv-budget-gib, or --weights-gib and --reserve-gib"


@dataclass(frozen=True)
class CsaFormats:
    """The linears' and routed experts' formats (the compute dtype of ``bits`` for an
    unquantized config); ``mxfp4``: the experts are MXFP4."""

    linear: QuantScheme
    experts: QuantScheme
    mxfp4: bool
    bits: int


def csa_formats(spec: ModelSpec, bits: int) -> CsaFormats:
    att = spec.attention
    assert isinstance(att, CompressedSparseAttention)
    qc = spec.quantization_config
    if qc is None:
        plain = Unquantized(bits=bits)
        return CsaFormats(linear=plain, experts=plain, mxfp4=False, bits=bits)
    return _checkpoint_formats(qc, spec.path, att, bits)


def _checkpoint_formats(qc: Mapping[str, Any], path: str, att: CompressedSparseAttention,
                        bits: int) -> CsaFormats:
    where = "quantization_config"
    method = qc.get("quant_method")
    if method not in ("fp8", "deepseek_v4_fp8"):
        raise UnmodelledError(f"{path}: {where}.quant_method: {method!r} for DeepSeek-V4: "
                              "kvplan counts its fp8 checkpoints (DeepseekV4FP8Config) only"
                              + _GIVE)
    block = qc.get("weight_block_size")
    if (not isinstance(block, list) or len(block) != 2
            or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)):
        raise UnmodelledError(f"{path}: {where}.weight_block_size: expected two positive "
                              f"integers (V4's fp8 blocks), got {block!r}" + _GIVE)
    for field in ("ignored_layers", "modules_to_not_convert", "moe_quant_algo"):
        if qc.get(field):
            raise UnmodelledError(f"{path}: {where}.{field}: not modelled for DeepSeek-V4 "
                                  "(kvplan counts the published fp8 / fp4-expert layout)" + _GIVE)
    fp4 = att.expert_dtype == "fp4"
    # quant_config.py is_scale_e8m0: FP4-expert checkpoints store the linears' block scales as
    # e8m0 (one byte), FP8-expert ones as float32.
    linear = Fp8Block(block_n=block[0], block_k=block[1],
                      scale_bytes=E8M0_BYTES if fp4 else FP32_BYTES)
    if fp4:  # Mxfp4MoEMethod: no expert bias
        return CsaFormats(linear=linear, experts=Mxfp4(expert_bias=False), mxfp4=True,
                          bits=bits)
    # expert_dtype fp8: Fp8Config's Fp8MoEMethod, float32 block scales.
    return CsaFormats(linear=linear, experts=Fp8Block(block_n=block[0], block_k=block[1]),
                      mxfp4=False, bits=bits)
