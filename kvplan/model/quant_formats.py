"""The quantized weight formats vLLM loads, one ``QuantScheme`` type each. The unquantized base
(``MatrixBytes``, ``Unquantized``) is kvplan.model.quant; kvplan.model.quant_config's
`parse_quantization_config` picks these formats per linear module, and kvplan.weights prices a
model with them (loaded for a quantized model only; start-up: examples/startup-bench.md). Each
format follows the tensors vLLM allocates in ``vllm/model_executor/layers/quantization/*.py``:
see kvplan.model.quant's docstring."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import ClassVar

from kvplan._util.dtypes import GemmMath
from kvplan._util.units import cdiv
from kvplan.model.quant import FP32_BYTES, INT32_BYTES, FusedExperts, MatrixBytes, round_up


@dataclass(frozen=True, kw_only=True)
class Fp8PerTensor(FusedExperts):
    """FP8 e4m3, one fp32 scale per matrix (vLLM Fp8LinearMethod.create_weights: ``weight_scale``
    PerTensorScaleParameter, float32; static activations add one fp32 ``input_scale``)."""

    static_activations: bool = False
    name: str = "fp8 per-tensor"
    # W8A8: the activations are quantized to FP8 per token (group) before each GEMM (vLLM
    # fp8.py Fp8LinearMethod.apply, W8A8BlockFp8LinearOp; SGLang fp8_utils.py).
    math: ClassVar[GemmMath] = GemmMath.fp8

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        scales = FP32_BYTES * (2 if self.static_activations else 1)
        return MatrixBytes(weight=out_features * in_features, scales=scales)


@dataclass(frozen=True, kw_only=True)
class Fp8PerChannel(FusedExperts):
    """FP8 with one fp32 scale per output channel (compressed-tensors ``strategy: channel``;
    vLLM compressed_tensors_w8a8_fp8.py creates a ChannelQuantScaleParameter of float32)."""

    name: str = "fp8 per-channel"
    math: ClassVar[GemmMath] = GemmMath.fp8  # W8A8, as Fp8PerTensor

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        return MatrixBytes(weight=out_features * in_features, scales=out_features * FP32_BYTES)


@dataclass(frozen=True, kw_only=True)
class Fp8Block(FusedExperts):
    """FP8 with one fp32 scale per [block_n, block_k] tile (DeepSeek-V3's
    ``weight_block_size: [128, 128]``). vLLM fp8.py: ``weight_scale_inv`` BlockQuantScaleParameter
    of shape (cdiv(out, block_n), cdiv(in, block_k)), float32; MoE: w13/w2_weight_scale_inv of
    shape (E, cdiv(2I, bn), cdiv(H, bk)) and (E, cdiv(H, bn), cdiv(I, bk))."""

    block_n: int = 128
    block_k: int = 128
    # 1: ue8m0 scales (float8_e8m0fnu), as vLLM 0.32 fp8.py create_weights takes them where the
    # config says so (DeepSeek-V4's FP4-expert checkpoints: models/deepseek_v4/quant_config.py
    # DeepseekV4FP8Config.is_scale_e8m0).
    scale_bytes: int = FP32_BYTES
    name: str = "fp8 block"
    math: ClassVar[GemmMath] = GemmMath.fp8  # W8A8, as Fp8PerTensor

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        tiles = cdiv(out_features, self.block_n) * cdiv(in_features, self.block_k)
        return MatrixBytes(weight=out_features * in_features, scales=tiles * self.scale_bytes)


class Mxfp4Backend(str, Enum):
    """The MoE kernel vLLM picks for MXFP4 (vllm/model_executor/layers/quantization/mxfp4.py,
    get_mxfp4_backend); each pads the expert shapes differently in Mxfp4MoEMethod.create_weights."""

    # GPUs without native FP4 (Ampere, Ada); Hopper before vLLM 0.11.1 or with
    # VLLM_MXFP4_USE_MARLIN=1 / --moe-backend marlin (kvplan.engines.vllm.mxfp4_backend)
    marlin = "marlin"
    triton = "triton"  # Hopper with triton_kernels (vendored in vLLM's wheel from 0.11.1)
    flashinfer_sm90 = "flashinfer_sm90"  # SM90_FI_MXFP4_BF16
    flashinfer_sm100 = "flashinfer_sm100"  # SM100 TRTLLM / BF16 paths

    @property
    def padding(self) -> tuple[int, int]:
        """(intermediate multiple, hidden multiple); 1 = not padded."""
        return _MXFP4_PADDING[self]


# mxfp4.py, Mxfp4MoEMethod.create_weights: Marlin needs n % 256 == 0 and k % 128 == 0
# (intermediate -> 128, hidden -> 256); SM100 TRTLLM/BF16 pad both to 256; SM90 FlashInfer and
# SM100 CUTLASS to 128; the other (Triton) path pads the intermediate size to 64 only (vLLM 0.32
# fused_moe/oracle/mxfp4.py:894-895), but that is not what it holds once loaded: its
# process_weights_after_loading swizzles the experts into triton_kernels' Hopper layouts
# (HopperMXValueLayout / HopperMXScaleLayout, padded again, triton_kernels tensor_details/
# layout_details/hopper_value.py) and which tensors it frees varies by release (0.32: "TRITON
# backends free w13/w2_weight_scale after swizzling", quantization/mxfp4.py:411-412). Measured on
# the one Triton log read (llm-d-planner, vLLM 0.19.0, H100, TP 2, gpt-oss-20b, "Using 'TRITON'
# Mxfp4 MoE backend", "Model loading took 7.01 GiB"): create_weights' layout gives 6.55 GiB
# (-6.6 %), Marlin's 7.10 (+1.2 %). Until the swizzled bytes are read, Triton is sized with
# Marlin's padding, the measured stand-in (tests/benches/fitted_rows.py SHAPED_BY: mxfp4be58).
_MXFP4_PADDING: dict[Mxfp4Backend, tuple[int, int]] = {
    Mxfp4Backend.marlin: (128, 256),
    Mxfp4Backend.triton: (128, 256),
    Mxfp4Backend.flashinfer_sm90: (128, 128),
    Mxfp4Backend.flashinfer_sm100: (256, 256),
}


class MixedPrecisionKernel(str, Enum):
    """The kernel vLLM's choose_mp_linear_kernel picks for GPTQ / AWQ / compressed-tensors WNA16
    linears (vllm/model_executor/kernels/linear/mixed_precision/); it decides which of the
    tensors the quantization method allocated survive process_weights_after_loading."""

    marlin = "marlin"  # Ampere, Ada, Blackwell, and Hopper when Machete cannot
    machete = "machete"  # Hopper (compute capability 9.0), logged "Using MacheteLinearKernel"


@dataclass(frozen=True, kw_only=True)
class Mxfp4(FusedExperts):
    """OCP MXFP4: 4-bit e2m1 elements, one e8m0 (uint8) scale per 32 along the input dimension.

    vLLM holds only MoE experts in MXFP4 (Mxfp4Config.get_quant_method returns
    UnquantizedLinearMethod for every linear layer), as uint8 ``w13_weight`` (E, 2I', H'/2),
    ``w13_weight_scale`` (E, 2I', H'/32), bf16 ``w13_bias`` (E, 2I') and the matching w2 tensors,
    where I', H' are the sizes padded for the backend's kernel (`Mxfp4Backend.padding`)."""

    backend: Mxfp4Backend = Mxfp4Backend.marlin
    block: int = 32
    expert_bias: bool = True  # gpt-oss: vLLM always allocates w13_bias / w2_bias (bf16)
    name: str = "mxfp4"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        return MatrixBytes(weight=cdiv(out_features * in_features, 2),
                           scales=out_features * cdiv(in_features, self.block))

    def experts_bytes(self, num_experts: int, hidden: int, intermediate: int,
                      gated: bool, *, padded: bool = True) -> MatrixBytes:
        pad_i, pad_h = self.backend.padding if padded else (1, 1)
        i = round_up(intermediate, pad_i)
        h = round_up(hidden, pad_h)
        n13 = (2 if gated else 1) * i
        one = self.matrix_bytes(n13, h) + self.matrix_bytes(h, i)
        if self.expert_bias:
            one = one + MatrixBytes(weight=2 * (n13 + h))
        return one.times(num_experts)


@dataclass(frozen=True, kw_only=True)
class Nvfp4(FusedExperts):
    """NVFP4: 4-bit e2m1 elements, one fp8 e4m3 scale per 16 along the input dimension, and one
    fp32 global scale per tensor (``weight_scale_2``) plus one fp32 ``input_scale``.

    vLLM modelopt.py (ModelOptNvFp4LinearMethod) and compressed_tensors_w4a4_nvfp4.py allocate
    uint8 ``weight`` (out, in/2), fp8 ``weight_scale`` (out, in/16); for the CUTLASS kernels the
    block scales are swizzled (``swizzle_blockscale``), which pads rows to 128 and scale columns
    to 4."""

    group: int = 16
    swizzle: bool = True
    # W4A4 (modelopt NVFP4; compressed-tensors with 4-bit float input_activations): the
    # activations are quantized to NVFP4 before each GEMM (vLLM ModelOptNvFp4LinearMethod.apply
    # and SGLang modelopt_quant.py ModelOptFp4LinearMethod.apply: scaled_fp4_quant, then
    # cutlass_scaled_fp4_mm). False: W4A16 (compressed-tensors NVFP4A16, a Marlin kernel).
    fp4_activations: bool = True
    name: str = "nvfp4"

    @property
    def math(self) -> GemmMath:  # type: ignore[override]
        return GemmMath.fp4 if self.fp4_activations else GemmMath.bf16

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        rows, cols = out_features, cdiv(in_features, self.group)
        if self.swizzle:
            rows, cols = round_up(rows, 128), round_up(cols, 4)
        return MatrixBytes(weight=cdiv(out_features * in_features, 2),
                           scales=rows * cols + 2 * FP32_BYTES)


@dataclass(frozen=True, kw_only=True)
class IntGrouped(FusedExperts):
    """Integer weights with one scale (and optional zero point) per ``group_size`` inputs:
    GPTQ, AWQ and compressed-tensors' pack-quantized (WNA16) formats as vLLM keeps them.

    - weight: ``bits`` per element packed into int32 (GPTQ ``qweight`` (in/pack, out), AWQ
      ``qweight`` (in, out/pack), compressed-tensors ``weight_packed`` (out, in/pack)); Marlin and
      Machete repack to the same number of bytes (gptq_marlin.py, awq_marlin.py,
      kernels/mixed_precision/marlin.py).
    - scales: one per (group, output) in the compute dtype (fp16/bf16, ``scales_bytes``).
    - zero points: int32-packed ``bits``-wide, one per (group, output), only when asymmetric
      (AWQ ``qzeros``; GPTQ sym=False). For symmetric GPTQ the Marlin kernels replace qzeros with
      an empty tensor after loading (MarlinLinearKernel.process_weights_after_loading).
    - act order (GPTQ ``desc_act``): int32 ``g_idx`` and ``g_idx_sort_indices`` per input.
    - group_size -1 (or 0): one group spanning all inputs (per-channel).
    - ``kernel`` machete (Hopper): MacheteLinearKernel.process_weights_after_loading (machete.py)
      repacks the weight and scales but drops nothing, so GPTQ's int32 ``g_idx`` (one per input,
      ``format_g_idx``) and packed ``qzeros`` (``format_qzeros``, even when symmetric) stay; zero
      points it turns into ``-scales * zp`` in the compute dtype, one per (group, output); with
      act order it keeps the g_idx and its argsort ``perm`` (int32 per input) instead of
      Marlin's sort indices. Marlin replaces the unused ones with empty tensors."""

    bits: int = 4
    group_size: int = 128
    zero_points: bool = False
    act_order: bool = False
    scales_bytes: int = 2
    name: str = "int grouped"
    kernel: MixedPrecisionKernel = MixedPrecisionKernel.marlin
    format_g_idx: bool = False  # the method allocates g_idx whatever desc_act (gptq_marlin.py)
    format_qzeros: bool = False  # the method allocates qzeros whatever sym (gptq_marlin.py)
    # compressed-tensors' pack-quantized linears also hold `weight_shape`, the unpacked shape
    # as 2 int64 (vLLM 0.32 compressed_tensors_wNa16.py:219-225), which no kernel's
    # process_weights_after_loading drops: 16 B a matrix. 0: none (GPTQ, AWQ). The fused MoE's
    # w13 / w2_weight_shape (compressed_tensors_moe_wna16.py:346-356, experts x 2 in the
    # default dtype) are not counted.
    shape_tensor_bytes: int = 0

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        pack = 32 // self.bits if 32 % self.bits == 0 else 0
        if pack:
            weight = cdiv(in_features, pack) * out_features * INT32_BYTES
        else:  # 3-bit GPTQ packs 32 values into 3 int32 words
            weight = cdiv(in_features * self.bits, 32) * out_features * INT32_BYTES
        group = self.group_size if self.group_size > 0 else in_features
        groups = cdiv(in_features, group)
        scales = groups * out_features * self.scales_bytes
        packed_zeros = groups * cdiv(out_features * self.bits, 32) * INT32_BYTES
        scales += self.shape_tensor_bytes
        if self.kernel is MixedPrecisionKernel.marlin:
            if self.zero_points:
                scales += packed_zeros
            if self.act_order:
                scales += 2 * in_features * INT32_BYTES
            return MatrixBytes(weight=weight, scales=scales)
        if self.zero_points:
            scales += groups * out_features * self.scales_bytes
        elif self.format_qzeros:
            scales += packed_zeros
        if self.act_order:
            scales += 2 * in_features * INT32_BYTES
        elif self.format_g_idx:
            scales += in_features * INT32_BYTES
        return MatrixBytes(weight=weight, scales=scales)

    def experts_bytes(self, num_experts: int, hidden: int, intermediate: int,
                      gated: bool) -> MatrixBytes:
        # MoE experts run the fused Marlin MoE methods (gptq_marlin.py GPTQMarlinMoEMethod,
        # awq_marlin.py AWQMarlinMoEMethod), never Machete: the Marlin layout.
        marlin = replace(self, kernel=MixedPrecisionKernel.marlin, shape_tensor_bytes=0)
        return FusedExperts.experts_bytes(marlin, num_experts, hidden, intermediate, gated)


@dataclass(frozen=True, kw_only=True)
class Int8PerChannel(FusedExperts):
    """W8A8 int8 (compressed-tensors int-quantized; vLLM compressed_tensors_w8a8_int8.py): int8
    weight, one fp32 scale per output channel (``per_tensor``: one per matrix)."""

    per_tensor: bool = False
    name: str = "int8"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        scales = FP32_BYTES if self.per_tensor else out_features * FP32_BYTES
        return MatrixBytes(weight=out_features * in_features, scales=scales)


@dataclass(frozen=True, kw_only=True)
class Bnb4bit(FusedExperts):
    """bitsandbytes NF4/FP4 (bitsandbytes/functional.py quantize_4bit): two 4-bit values per
    byte, one absmax per ``blocksize`` (64) elements: fp32, or with double quantization
    (``bnb_4bit_use_double_quant``) uint8 plus one fp32 absmax and offset per 256 blocks and a
    256-entry fp32 code book per tensor. vLLM (bitsandbytes.py, BitsAndBytesLinearMethod and the
    bitsandbytes loader) keeps exactly these tensors on the GPU."""

    blocksize: int = 64
    double_quant: bool = False
    quant_type: str = "nf4"
    name: str = "bnb 4-bit"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        n = out_features * in_features
        blocks = cdiv(n, self.blocksize)
        if self.double_quant:
            scales = blocks + cdiv(blocks, 256) * FP32_BYTES + FP32_BYTES + 256 * FP32_BYTES
        else:
            scales = blocks * FP32_BYTES
        return MatrixBytes(weight=cdiv(n, 2), scales=scales)


@dataclass(frozen=True, kw_only=True)
class Bnb8bit(FusedExperts):
    """bitsandbytes LLM.int8(): int8 weight, one fp32 row scale (``SCB``) per output channel."""

    name: str = "bnb 8-bit"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        return MatrixBytes(weight=out_features * in_features, scales=out_features * FP32_BYTES)
