"""The quantized weight formats vLLM loads, one ``QuantScheme`` type each, and the parser of
config.json's ``quantization_config`` (`parse_quantization_config`) that picks them per linear
module. The unquantized base (``MatrixBytes``, ``Unquantized``) and the breakdowns that price a
model with these schemes are in kvplan.weights.breakdown, which imports this module only for a quantized
checkpoint (start-up: examples/startup-bench.md). Each format follows the tensors vLLM allocates in
``vllm/model_executor/layers/quantization/*.py``: see kvplan.weights.breakdown' docstring."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.units import cdiv
from kvplan._util.validate import MAX_SIZE, checked_int
from kvplan.weights.breakdown import (
    FP32_BYTES,
    INT32_BYTES,
    MatrixBytes,
    QuantScheme,
    _FusedExperts,
    round_up,
)


@dataclass(frozen=True, kw_only=True)
class Fp8PerTensor(_FusedExperts):
    """FP8 e4m3, one fp32 scale per matrix (vLLM Fp8LinearMethod.create_weights: ``weight_scale``
    PerTensorScaleParameter, float32; static activations add one fp32 ``input_scale``)."""

    static_activations: bool = False
    name: str = "fp8 per-tensor"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        scales = FP32_BYTES * (2 if self.static_activations else 1)
        return MatrixBytes(weight=out_features * in_features, scales=scales)


@dataclass(frozen=True, kw_only=True)
class Fp8PerChannel(_FusedExperts):
    """FP8 with one fp32 scale per output channel (compressed-tensors ``strategy: channel``;
    vLLM compressed_tensors_w8a8_fp8.py creates a ChannelQuantScaleParameter of float32)."""

    name: str = "fp8 per-channel"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        return MatrixBytes(weight=out_features * in_features, scales=out_features * FP32_BYTES)


@dataclass(frozen=True, kw_only=True)
class Fp8Block(_FusedExperts):
    """FP8 with one fp32 scale per [block_n, block_k] tile (DeepSeek-V3's
    ``weight_block_size: [128, 128]``). vLLM fp8.py: ``weight_scale_inv`` BlockQuantScaleParameter
    of shape (cdiv(out, block_n), cdiv(in, block_k)), float32; MoE: w13/w2_weight_scale_inv of
    shape (E, cdiv(2I, bn), cdiv(H, bk)) and (E, cdiv(H, bn), cdiv(I, bk))."""

    block_n: int = 128
    block_k: int = 128
    name: str = "fp8 block"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        tiles = cdiv(out_features, self.block_n) * cdiv(in_features, self.block_k)
        return MatrixBytes(weight=out_features * in_features, scales=tiles * FP32_BYTES)


class Mxfp4Backend(str, Enum):
    """The MoE kernel vLLM picks for MXFP4 (vllm/model_executor/layers/quantization/mxfp4.py,
    get_mxfp4_backend); each pads the expert shapes differently in Mxfp4MoEMethod.create_weights."""

    marlin = "marlin"  # GPUs without native FP4 (Ampere, Ada; Hopper when VLLM_MXFP4_USE_MARLIN)
    triton = "triton"  # Hopper with triton_kernels installed
    flashinfer_sm90 = "flashinfer_sm90"  # SM90_FI_MXFP4_BF16
    flashinfer_sm100 = "flashinfer_sm100"  # SM100 TRTLLM / BF16 paths

    @property
    def padding(self) -> tuple[int, int]:
        """(intermediate multiple, hidden multiple); 1 = not padded."""
        return _MXFP4_PADDING[self]


# mxfp4.py, Mxfp4MoEMethod.create_weights: Marlin needs n % 256 == 0 and k % 128 == 0
# (intermediate -> 128, hidden -> 256); SM100 TRTLLM/BF16 pad both to 256; SM90 FlashInfer and
# SM100 CUTLASS to 128; the other (Triton) path pads the intermediate size to 64 only.
_MXFP4_PADDING: dict[Mxfp4Backend, tuple[int, int]] = {
    Mxfp4Backend.marlin: (128, 256),
    Mxfp4Backend.triton: (64, 1),
    Mxfp4Backend.flashinfer_sm90: (128, 128),
    Mxfp4Backend.flashinfer_sm100: (256, 256),
}


def default_mxfp4_backend(compute_capability: tuple[int, int] | None) -> Mxfp4Backend:
    """vLLM's choice by GPU generation: Blackwell (10.x) FlashInfer; everything else Marlin.

    Hopper picks Triton only when the ``triton_kernels`` package is installed, which the
    logs kvplan was checked against did not have (vllm issue #23278 shows the Marlin warning on
    an H100), so Marlin, the larger layout, is the default there too."""
    if compute_capability is not None and compute_capability[0] >= 10:
        return Mxfp4Backend.flashinfer_sm100
    return Mxfp4Backend.marlin


class MixedPrecisionKernel(str, Enum):
    """The kernel vLLM's choose_mp_linear_kernel picks for GPTQ / AWQ / compressed-tensors WNA16
    linears (vllm/model_executor/kernels/linear/mixed_precision/); it decides which of the
    tensors the quantization method allocated survive process_weights_after_loading."""

    marlin = "marlin"  # Ampere, Ada, Blackwell, and Hopper when Machete cannot
    machete = "machete"  # Hopper (compute capability 9.0), logged "Using MacheteLinearKernel"


@dataclass(frozen=True, kw_only=True)
class Mxfp4(_FusedExperts):
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
class Nvfp4(_FusedExperts):
    """NVFP4: 4-bit e2m1 elements, one fp8 e4m3 scale per 16 along the input dimension, and one
    fp32 global scale per tensor (``weight_scale_2``) plus one fp32 ``input_scale``.

    vLLM modelopt.py (ModelOptNvFp4LinearMethod) and compressed_tensors_w4a4_nvfp4.py allocate
    uint8 ``weight`` (out, in/2), fp8 ``weight_scale`` (out, in/16); for the CUTLASS kernels the
    block scales are swizzled (``swizzle_blockscale``), which pads rows to 128 and scale columns
    to 4."""

    group: int = 16
    swizzle: bool = True
    name: str = "nvfp4"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        rows, cols = out_features, cdiv(in_features, self.group)
        if self.swizzle:
            rows, cols = round_up(rows, 128), round_up(cols, 4)
        return MatrixBytes(weight=cdiv(out_features * in_features, 2),
                           scales=rows * cols + 2 * FP32_BYTES)


@dataclass(frozen=True, kw_only=True)
class IntGrouped(_FusedExperts):
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
        marlin = replace(self, kernel=MixedPrecisionKernel.marlin)
        return _FusedExperts.experts_bytes(marlin, num_experts, hidden, intermediate, gated)


@dataclass(frozen=True, kw_only=True)
class Int8PerChannel(_FusedExperts):
    """W8A8 int8 (compressed-tensors int-quantized; vLLM compressed_tensors_w8a8_int8.py): int8
    weight, one fp32 scale per output channel (``per_tensor``: one per matrix)."""

    per_tensor: bool = False
    name: str = "int8"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        scales = FP32_BYTES if self.per_tensor else out_features * FP32_BYTES
        return MatrixBytes(weight=out_features * in_features, scales=scales)


@dataclass(frozen=True, kw_only=True)
class Bnb4bit(_FusedExperts):
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
class Bnb8bit(_FusedExperts):
    """bitsandbytes LLM.int8(): int8 weight, one fp32 row scale (``SCB``) per output channel."""

    name: str = "bnb 8-bit"

    def matrix_bytes(self, out_features: int, in_features: int) -> MatrixBytes:
        return MatrixBytes(weight=out_features * in_features, scales=out_features * FP32_BYTES)


# ---------------------------------------------------------------------------------------------
# Which modules a config quantizes.


def _name_matches(pattern: str, name: str) -> bool:
    """vLLM's is_layer_skipped and compressed-tensors' should_ignore_layer: ``re:`` patterns are
    regexes (re.match); otherwise an exact module name or any dotted suffix/prefix of it
    (``lm_head``, ``gate``, ``model.layers.0.mlp``); ``*`` is a glob (gpt-oss's
    ``model.layers.*.self_attn``)."""
    if pattern.startswith("re:"):
        return re.match(pattern[3:], name) is not None
    parts = name.split(".")
    if "*" in pattern:
        return any(fnmatch.fnmatchcase(".".join(parts[:k]), pattern)
                   for k in range(1, len(parts) + 1))
    return (name == pattern or name.startswith(pattern + ".") or name.endswith("." + pattern)
            or f".{pattern}." in f".{name}.")


@dataclass(frozen=True, kw_only=True)
class Rule:
    """Linear modules matching ``targets`` (compressed-tensors: ``Linear`` = every linear layer)
    use ``scheme``."""

    targets: tuple[str, ...]
    scheme: QuantScheme

    def covers(self, name: str) -> bool:
        return any(t == "Linear" or _name_matches(t, name) for t in self.targets)


@dataclass(frozen=True, kw_only=True)
class QuantConfig:
    """A parsed ``quantization_config``: which linear modules get which scheme.

    ``rules`` are tried in order; a module in ``ignore`` or matched by no rule stays in the
    compute dtype. Embeddings are never quantized by these formats in vLLM (they are
    VocabParallelEmbedding, not LinearBase, which every quant config above dispatches on); the
    lm_head likewise, except GPTQ checkpoints with ``lm_head: true`` (vLLM gptq.py,
    ``lm_head_quantized``)."""

    method: str
    rules: tuple[Rule, ...]
    ignore: tuple[str, ...] = ()
    quantize_lm_head: bool = False
    notes: tuple[str, ...] = ()

    def scheme_for(self, name: str) -> QuantScheme | None:
        if name == "lm_head" and not self.quantize_lm_head:
            return None
        if any(_name_matches(p, name) for p in self.ignore):
            return None
        for rule in self.rules:
            if rule.covers(name):
                return rule.scheme
        return None

    @property
    def description(self) -> str:
        names = sorted({r.scheme.name for r in self.rules})
        return f"{self.method} ({', '.join(names)})" if names else self.method


def _field(path: str, key: str) -> str:
    return f"quantization_config.{key}"


def _get_int(qc: Mapping[str, Any], key: str, path: str, default: int) -> int:
    """An integer field (kvplan._util.validate's rules); -1 is allowed (GPTQ's group_size -1: one
    group per channel)."""
    value = qc.get(key, default)
    if value is None:
        return default
    return checked_int(value, path=path, field=_field(path, key), minimum=-1)


def _get_bool(qc: Mapping[str, Any], key: str, path: str, default: bool) -> bool:
    value = qc.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise SpecError(path, _field(path, key), f"expected true or false, got {value!r}")
    return value


def _str_list(qc: Mapping[str, Any], keys: tuple[str, ...], path: str) -> tuple[str, ...]:
    out: list[str] = []
    for key in keys:
        value = qc.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SpecError(path, _field(path, key), "expected a list of module names")
        out.extend(value)
    return tuple(out)


_ALL_LINEAR = ("Linear",)
_EXPERTS_ONLY = ("re:.*\\.experts(\\.|$)",)


def _parse_fp8(qc: Mapping[str, Any], path: str) -> QuantConfig:
    # vllm/model_executor/layers/quantization/fp8.py, Fp8Config.from_config: weight_block_size,
    # activation_scheme, ignored_layers (HF FineGrainedFP8Config: modules_to_not_convert).
    block = qc.get("weight_block_size")
    static = qc.get("activation_scheme", "dynamic") == "static"
    scheme: QuantScheme
    if block is None:
        scheme = Fp8PerTensor(static_activations=static)
    else:
        if (not isinstance(block, list) or len(block) != 2
                or not all(isinstance(b, int) and not isinstance(b, bool) and 0 < b <= MAX_SIZE
                           for b in block)):
            raise SpecError(path, _field(path, "weight_block_size"),
                            f"expected two positive integers, got {block!r}")
        scheme = Fp8Block(block_n=block[0], block_k=block[1])
    ignore = _str_list(qc, ("ignored_layers", "modules_to_not_convert"), path)
    return QuantConfig(method="fp8", rules=(Rule(targets=_ALL_LINEAR, scheme=scheme),),
                       ignore=ignore)


def _parse_mxfp4(qc: Mapping[str, Any], path: str, backend: Mxfp4Backend) -> QuantConfig:
    # vLLM's Mxfp4Config quantizes FusedMoE layers only; linear layers stay unquantized.
    ignore = _str_list(qc, ("modules_to_not_convert", "ignore"), path)
    return QuantConfig(method="mxfp4",
                       rules=(Rule(targets=_EXPERTS_ONLY, scheme=Mxfp4(backend=backend)),),
                       ignore=ignore,
                       notes=(f"mxfp4 experts laid out for vLLM's {backend.value} MoE kernel",))


def _parse_modelopt(qc: Mapping[str, Any], path: str) -> QuantConfig:
    # vLLM modelopt.py: ModelOptFp8Config / ModelOptNvFp4Config read either the flat HF form
    # (quant_algo, exclude_modules, group_size) or hf_quant_config.json's {"quantization": {...}}.
    inner = qc.get("quantization") if isinstance(qc.get("quantization"), Mapping) else qc
    algo = str(inner.get("quant_algo", "")).upper()
    ignore = _str_list(inner, ("exclude_modules", "ignore", "modules_to_not_convert"), path)
    scheme: QuantScheme
    if algo == "NVFP4":
        scheme = Nvfp4(group=_get_int(inner, "group_size", path, 16))
    elif algo == "FP8":
        scheme = Fp8PerTensor(static_activations=True)
    elif algo in ("FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO"):
        scheme = Fp8PerChannel()
    else:
        raise SpecError(path, "quantization_config.quant_algo",
                        f"modelopt algorithm {algo or 'missing'!r} not modelled "
                        "(known: NVFP4, FP8, FP8_PER_CHANNEL_PER_TOKEN)")
    return QuantConfig(method=f"modelopt {algo.lower()}",
                       rules=(Rule(targets=_ALL_LINEAR, scheme=scheme),), ignore=ignore)


def _ct_scheme(weights: Mapping[str, Any], path: str, key: str) -> QuantScheme:
    """One compressed-tensors config group's ``weights`` args (compressed_tensors
    QuantizationArgs: num_bits, type int|float, strategy tensor|channel|group|block|
    tensor_group, group_size, block_structure, symmetric, actorder)."""
    bits = _get_int(weights, "num_bits", path, 8)
    kind = weights.get("type", "int")
    strategy = weights.get("strategy", "tensor")
    group = _get_int(weights, "group_size", path, 0)
    if kind == "float" and bits == 8:
        if strategy == "channel":
            return Fp8PerChannel()
        if strategy == "block":
            block = weights.get("block_structure") or [128, 128]
            if (not isinstance(block, list) or len(block) != 2
                    or not all(isinstance(x, int) and not isinstance(x, bool)
                               and 0 < x <= MAX_SIZE for x in block)):
                raise SpecError(path, f"quantization_config.config_groups.{key}.weights."
                                      "block_structure", f"expected two positive integers, "
                                                         f"got {block!r}")
            return Fp8Block(block_n=block[0], block_k=block[1])
        return Fp8PerTensor()
    if kind == "float" and bits == 4:
        return Nvfp4(group=group or 16)
    if kind == "int" and bits == 8 and strategy in ("channel", "tensor"):
        return Int8PerChannel(per_tensor=strategy == "tensor")
    if kind == "int" and bits in (2, 3, 4, 8):
        return IntGrouped(
            bits=bits, group_size=group if strategy == "group" else -1,
            zero_points=not weights.get("symmetric", True),
            act_order=weights.get("actorder") in ("group", "weight", True),
            name=f"w{bits}a16" + (f" g{group}" if strategy == "group" else " per-channel"),
        )
    raise SpecError(path, f"quantization_config.config_groups.{key}.weights",
                    f"num_bits {bits} type {kind} strategy {strategy} not modelled")


def _parse_compressed_tensors(qc: Mapping[str, Any], path: str) -> QuantConfig:
    groups = qc.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        raise SpecError(path, "quantization_config.config_groups",
                        "missing: compressed-tensors needs at least one config group")
    rules = []
    for key, group in groups.items():
        if not isinstance(group, Mapping) or not isinstance(group.get("weights"), Mapping):
            raise SpecError(path, f"quantization_config.config_groups.{key}.weights",
                            "missing or not a mapping")
        targets = group.get("targets") or ["Linear"]
        if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
            raise SpecError(path, f"quantization_config.config_groups.{key}.targets",
                            "expected a list of strings")
        rules.append(Rule(targets=tuple(targets),
                          scheme=_ct_scheme(group["weights"], path, str(key))))
    ignore = _str_list(qc, ("ignore",), path)
    return QuantConfig(method="compressed-tensors", rules=tuple(rules), ignore=ignore)


def _parse_gptq(qc: Mapping[str, Any], path: str,
                kernel: MixedPrecisionKernel = MixedPrecisionKernel.marlin) -> QuantConfig:
    # auto-gptq / gptqmodel QuantLinear, vLLM gptq.py and gptq_marlin.py: bits, group_size,
    # desc_act, sym, lm_head; modules_in_block_to_quantize / dynamic are not modelled.
    bits = _get_int(qc, "bits", path, 4)
    if bits not in (2, 3, 4, 8):
        raise SpecError(path, "quantization_config.bits", f"expected 2, 3, 4 or 8, got {bits}")
    scheme = IntGrouped(bits=bits, group_size=_get_int(qc, "group_size", path, 128),
                        zero_points=not _get_bool(qc, "sym", path, True),
                        act_order=_get_bool(qc, "desc_act", path, False),
                        name=f"gptq int{bits}", kernel=kernel, format_g_idx=True,
                        format_qzeros=True)
    return QuantConfig(method="gptq", rules=(Rule(targets=_ALL_LINEAR, scheme=scheme),),
                       ignore=_str_list(qc, ("modules_to_not_convert",), path),
                       quantize_lm_head=_get_bool(qc, "lm_head", path, False))


def _parse_awq(qc: Mapping[str, Any], path: str,
               kernel: MixedPrecisionKernel = MixedPrecisionKernel.marlin) -> QuantConfig:
    # AutoAWQ WQLinear_GEMM, vLLM awq.py / awq_marlin.py: qweight int32 (in, out/8), qzeros int32
    # (in/G, out/8), scales fp16 (in/G, out); zero_point true is the AutoAWQ default.
    bits = _get_int(qc, "bits", path, _get_int(qc, "w_bit", path, 4))
    group = _get_int(qc, "group_size", path, _get_int(qc, "q_group_size", path, 128))
    scheme = IntGrouped(bits=bits, group_size=group,
                        zero_points=_get_bool(qc, "zero_point", path, True), name=f"awq int{bits}",
                        kernel=kernel)
    return QuantConfig(method="awq", rules=(Rule(targets=_ALL_LINEAR, scheme=scheme),),
                       ignore=_str_list(qc, ("modules_to_not_convert",), path))


def _parse_bitsandbytes(qc: Mapping[str, Any], path: str) -> QuantConfig:
    # transformers BitsAndBytesConfig; vLLM bitsandbytes.py (llm_int8_skip_modules).
    ignore = _str_list(qc, ("llm_int8_skip_modules", "modules_to_not_convert"), path)
    scheme: QuantScheme
    if _get_bool(qc, "load_in_8bit", path, False):
        scheme = Bnb8bit()
    else:
        quant_type = qc.get("bnb_4bit_quant_type", "fp4")
        scheme = Bnb4bit(double_quant=_get_bool(qc, "bnb_4bit_use_double_quant", path, False),
                         quant_type=str(quant_type), name=f"bnb {quant_type}")
    return QuantConfig(method="bitsandbytes", rules=(Rule(targets=_ALL_LINEAR, scheme=scheme),),
                       ignore=ignore)


QUANT_METHODS = ("fp8", "mxfp4", "modelopt", "modelopt_fp4", "compressed-tensors", "gptq",
                 "gptq_marlin", "awq", "awq_marlin", "bitsandbytes")


def parse_quantization_config(qc: Mapping[str, Any], path: str, *,
                              mxfp4_backend: Mxfp4Backend = Mxfp4Backend.marlin,
                              mp_kernel: MixedPrecisionKernel = MixedPrecisionKernel.marlin,
                              ) -> QuantConfig:
    """A config.json ``quantization_config`` (or hf_quant_config.json) as a `QuantConfig`.
    ``mxfp4_backend`` / ``mp_kernel``: the kernels vLLM picks for the GPU (their layouts differ;
    kvplan's planner does not know the GPU generation and keeps the Marlin defaults).

    Unknown methods raise SpecError naming ``quantization_config.quant_method``."""
    if not isinstance(qc, Mapping):
        raise SpecError(path, "quantization_config", "expected a mapping")
    method = str(qc.get("quant_method", "")).lower().replace("_", "-")
    if not method and isinstance(qc.get("quantization"), Mapping):
        method = "modelopt"  # hf_quant_config.json from ModelOpt has no quant_method
    if method == "fp8":
        return _parse_fp8(qc, path)
    if method == "mxfp4":
        return _parse_mxfp4(qc, path, mxfp4_backend)
    if method in ("modelopt", "modelopt-fp4"):
        return _parse_modelopt(qc, path)
    if method == "compressed-tensors":
        return _parse_compressed_tensors(qc, path)
    if method in ("gptq", "gptq-marlin"):
        return _parse_gptq(qc, path, mp_kernel)
    if method in ("awq", "awq-marlin"):
        return _parse_awq(qc, path, mp_kernel)
    if method == "bitsandbytes":
        return _parse_bitsandbytes(qc, path)
    shown = qc.get("quant_method")
    raise SpecError(path, "quantization_config.quant_method",
                    f"{shown!r} is not a format kvplan models (known: {', '.join(QUANT_METHODS)})")


def bitsandbytes_config(*, bits: int = 4, double_quant: bool = True) -> QuantConfig:
    """bitsandbytes chosen at load time (``--quantization bitsandbytes``): vLLM quantizes a 16-bit
    checkpoint in-flight to NF4 with double quantization, whatever BitsAndBytesConfig's own
    defaults say: ``quantize_4bit(loaded_weight, compress_statistics=True, quant_type="nf4")``
    in vllm/model_executor/model_loader/bitsandbytes_loader.py (``_unquantized_generator``; the
    same call since vLLM 0.5's loader.py). Without double quantization Llama-3.1-8B would be
    5.65 GiB, not the 5.34 GiB vLLM 0.5.4 logs (tests/data/weights/logs.json)."""
    qc: dict[str, Any] = {"quant_method": "bitsandbytes", "bnb_4bit_quant_type": "nf4",
                          "load_in_4bit": bits == 4, "load_in_8bit": bits == 8,
                          "bnb_4bit_use_double_quant": double_quant}
    return parse_quantization_config(qc, "--quantization bitsandbytes")
