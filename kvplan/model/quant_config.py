"""config.json's ``quantization_config`` (or hf_quant_config.json) as a `QuantConfig`: which
linear modules get which storage format (kvplan.model.quant_formats). A pure parser of a mapping:
kvplan.sources checks a spec's quantization_config with it, kvplan.weights prices the result."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_SIZE, checked_int
from kvplan.model.quant import QuantScheme
from kvplan.model.quant_formats import (
    Bnb4bit,
    Bnb8bit,
    Fp8Block,
    Fp8PerChannel,
    Fp8PerTensor,
    Int8PerChannel,
    IntGrouped,
    MixedPrecisionKernel,
    Mxfp4,
    Mxfp4Backend,
    Nvfp4,
)

# ---------------------------------------------------------------------------------------------
# Which modules a config quantizes.


# A multimodal checkpoint names its language model's modules under the wrapper:
# ``language_model.model.layers.0.self_attn.q_proj`` (Llama-4, Gemma-3, Mistral-3) or
# ``model.language_model.layers.0...`` (Qwen2.5-VL / Qwen3-VL, transformers >= 4.52). vLLM builds
# the text model under that prefix (mllama4.py: maybe_prefix(prefix, "language_model"); the
# others map the checkpoint names onto it, hf_to_vllm_mapper, and their quantization config's
# ignore list with it), so an ignore list or target naming the wrapped module names kvplan's
# ``model.layers.0.self_attn.q_proj``. (old prefix, what it stands for in kvplan's names)
_TEXT_MODEL_PREFIXES = (("language_model.model.", "model."), ("language_model.lm_head", "lm_head"),
                        ("model.language_model.", "model."))


def _text_model_name(pattern: str) -> str:
    """`pattern` with a multimodal wrapper's language-model prefix replaced by kvplan's name for
    the same module; other patterns (the vision tower's, regexes) unchanged."""
    for old, new in _TEXT_MODEL_PREFIXES:
        if pattern.startswith(old):
            return new + pattern[len(old):]
    return pattern


@lru_cache(maxsize=1 << 20)  # pure; the cost model asks it for every module of every step
def _name_matches(pattern: str, name: str) -> bool:
    """vLLM's is_layer_skipped and compressed-tensors' should_ignore_layer: ``re:`` patterns are
    regexes (re.match); otherwise an exact module name or any dotted suffix/prefix of it
    (``lm_head``, ``gate``, ``model.layers.0.mlp``); ``*`` is a glob (gpt-oss's
    ``model.layers.*.self_attn``). A wrapper's language-model prefix is read as kvplan's
    (`_text_model_name`)."""
    if pattern.startswith("re:"):
        return re.match(pattern[3:], name) is not None
    pattern = _text_model_name(pattern)
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
    # False: the weights' pricing rests on a reading kvplan has not checked against vLLM
    # (ModelOpt MIXED_PRECISION); the config reader lists it as an assumption on weights.
    weights_exact: bool = True

    def scheme_for(self, name: str) -> QuantScheme | None:
        """The scheme of module `name` (None: the compute dtype). Memoised per config: the cost
        model asks it for every module of every step, over ignore lists of hundreds of names."""
        memo = self.__dict__.get("_schemes")
        if memo is None:
            memo = self.__dict__["_schemes"] = {}  # not a field: eq, hash and repr ignore it
        if name not in memo:
            memo[name] = self._scheme_for(name)
        return memo[name]  # type: ignore[no-any-return]

    def _scheme_for(self, name: str) -> QuantScheme | None:
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


def _parse_mxfp4(qc: Mapping[str, Any], path: str, backend: Mxfp4Backend,
                 reason: str | None = None) -> QuantConfig:
    # vLLM's Mxfp4Config quantizes FusedMoE layers only; linear layers stay unquantized.
    ignore = _str_list(qc, ("modules_to_not_convert", "ignore"), path)
    why = "" if reason is None else f" ({reason})"
    return QuantConfig(method="mxfp4",
                       rules=(Rule(targets=_EXPERTS_ONLY, scheme=Mxfp4(backend=backend)),),
                       ignore=ignore,
                       notes=(f"mxfp4 experts laid out for vLLM's {backend.value} MoE "
                              f"kernel{why}",))


def modelopt_unquantized(qc: Mapping[str, Any]) -> bool:
    """hf_quant_config.json's layout ({"producer": {"name": "modelopt"}, "quantization": {...}})
    with ``quant_algo: null`` (a ModelOpt export that quantized no weights, e.g. an FP8 KV cache
    alone). vLLM 0.32 runs the weights unquantized: model_arch_config_convertor.py
    _normalize_quantization_config sets quant_method "" for it, so config/model.py selects no
    quantization (ModelConfig.quantization None) and utils/torch_utils.py
    get_kv_cache_quant_algo_string, which reads kv_cache_quant_algo for a modelopt* quant_method
    only, leaves --kv-cache-dtype auto at the model dtype (tests/data/hf_quant/vllm.json,
    kv-only-modelopt). SGLang 0.5.4+ likewise (configs/model_config.py
    _parse_modelopt_quant_config returns None for it); TensorRT-LLM reads kv_cache_quant_algo
    whatever quant_algo is (kvplan.engines.trtllm.kv_dtype)."""
    inner = qc.get("quantization")
    producer = qc.get("producer")
    name = producer.get("name") if isinstance(producer, Mapping) else None
    return (isinstance(inner, Mapping) and (name == "modelopt" or "modelopt_quant_config" in inner)
            and "quant_algo" in inner and inner["quant_algo"] is None)


def _parse_modelopt(qc: Mapping[str, Any], path: str) -> QuantConfig:
    # vLLM modelopt.py: ModelOptFp8Config / ModelOptNvFp4Config read either the flat HF form
    # (quant_algo, exclude_modules, group_size) or hf_quant_config.json's {"quantization": {...}}.
    if modelopt_unquantized(qc):
        return QuantConfig(method="modelopt, quant_algo null: weights not quantized", rules=())
    inner = qc.get("quantization") if isinstance(qc.get("quantization"), Mapping) else qc
    algo = str(inner.get("quant_algo", "")).upper()
    ignore = _str_list(inner, ("exclude_modules", "ignore", "modules_to_not_convert"), path)
    if algo == "MIXED_PRECISION":
        return _parse_modelopt_mixed(qc, inner, ignore)
    scheme = _modelopt_scheme(algo, _get_int(inner, "group_size", path, 16))
    if scheme is None:
        raise SpecError(path, "quantization_config.quant_algo",
                        f"modelopt algorithm {algo or 'missing'!r} not modelled "
                        "(known: NVFP4, FP8, FP8_PER_CHANNEL_PER_TOKEN, MIXED_PRECISION)")
    return QuantConfig(method=f"modelopt {algo.lower()}",
                       rules=(Rule(targets=_ALL_LINEAR, scheme=scheme),), ignore=ignore)


def _modelopt_scheme(algo: str, group: int) -> QuantScheme | None:
    # W4A16_NVFP4 stores its weights as NVFP4 does (vLLM modelopt.py: the same
    # ModelOptNvFp4Config, Marlin GEMM with 16-bit activations).
    if algo in ("NVFP4", "W4A16_NVFP4"):
        return Nvfp4(group=group)
    if algo == "FP8":
        return Fp8PerTensor(static_activations=True)
    if algo in ("FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO"):
        return Fp8PerChannel()
    return None


def _parse_modelopt_mixed(qc: Mapping[str, Any], inner: Mapping[str, Any],
                          ignore: tuple[str, ...]) -> QuantConfig:
    """ModelOpt MIXED_PRECISION (vLLM 0.32 modelopt.py ModelOptMixedPrecisionConfig): each
    module's algorithm from quantized_layers (in quantization_config, else under
    ``quantization``). It describes the weights only: the KV cache is set apart
    (kv_cache_scheme, `declared_kv_cache_dtype`). Priced here per prefix with kvplan's module
    names, which are not checked against vLLM's per-layer lookup, so the weights are marked
    not exact (`weights_exact`) and never block a KV answer; an algorithm kvplan does not
    model leaves its modules in the model dtype."""
    layers = qc.get("quantized_layers") or inner.get("quantized_layers") or {}
    by_scheme: dict[QuantScheme, list[str]] = {}
    for prefix, recipe in layers.items() if isinstance(layers, Mapping) else ():
        if not isinstance(recipe, Mapping):
            continue
        group = recipe.get("group_size", 16)
        scheme = _modelopt_scheme(str(recipe.get("quant_algo", "")).upper(),
                                  group if isinstance(group, int) and group > 0 else 16)
        if scheme is not None:
            by_scheme.setdefault(scheme, []).append(str(prefix))
    rules = tuple(Rule(targets=tuple(names), scheme=scheme)
                  for scheme, names in by_scheme.items())
    return QuantConfig(method="modelopt mixed_precision", rules=rules, ignore=ignore,
                       quantize_lm_head=any(n == "lm_head" for ns in by_scheme.values()
                                            for n in ns),
                       weights_exact=False)


def _ct_scheme(weights: Mapping[str, Any], path: str, key: str,
               activations: object = None) -> QuantScheme:
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
        # W4A4 when the group quantizes its input activations to 4-bit floats too
        # (compressed_tensors_w4a4_nvfp4.py), else NVFP4A16 (compressed_tensors_w4a16_nvfp4.py).
        w4a4 = (isinstance(activations, Mapping) and activations.get("type") == "float"
                and activations.get("num_bits") == 4)
        return Nvfp4(group=group or 16, fp4_activations=w4a4)
    if kind == "int" and bits == 8 and strategy in ("channel", "tensor"):
        return Int8PerChannel(per_tensor=strategy == "tensor")
    if kind == "int" and bits in (2, 3, 4, 8):
        return IntGrouped(
            bits=bits, group_size=group if strategy == "group" else -1,
            zero_points=not weights.get("symmetric", True),
            # Only group-wise activation ordering gives the layer a g_idx (int32 per input,
            # with Marlin's sort indices beside it): vLLM's CompressedTensorsWNA16 sets
            # `has_g_idx = actorder == ActivationOrdering.GROUP` (0.10-0.31); "weight" (alias
            # "static") reorders the columns once when the checkpoint is written and stores
            # nothing. compressed-tensors reads `true` as "group" and "dynamic" as its alias.
            # vLLM 0.32 compressed_tensors.py:336-344 refuses group / dynamic outright and its
            # compressed_tensors_wNa16.py:103-236 create_weights makes weight_packed,
            # weight_scale, weight_shape (and weight_zero_point when asymmetric), no g_idx.
            # The command-r7b shrink ("actorder": "weight") on vLLM 0.32: 0 B of g_idx, where
            # kvplan counted 2 x in x 4 B a linear (819,200 B over its 8 layers).
            act_order=weights.get("actorder") in ("group", "dynamic", True),
            shape_tensor_bytes=2 * 8,
            name=f"w{bits}a16" + (f" g{group}" if strategy == "group" else " per-channel"),
        )
    raise SpecError(path, f"quantization_config.config_groups.{key}.weights",
                    f"num_bits {bits} type {kind} strategy {strategy} not modelled")


def compressed_tensors_family(group: Mapping[str, Any]) -> str | None:
    """The scheme family of one compressed-tensors config group (its ``weights`` and
    ``input_activations`` QuantizationArgs), for the families engines took up release by release
    (kvplan.engines.vllm.quant_methods, kvplan.engines.sglang.quant_methods): "fp8 block" (float 8,
    strategy block), "mxfp4" / "mxfp8" (float 4 / 8, strategy group, group_size 32), "nvfp4"
    (other float 4 with float 4 activations, W4A4) and "nvfp4a16" (without activations), "w4a8
    int" / "w4a8 fp8" (int 4 weights, 8-bit int / float activations). None: any other group."""
    weights, acts = group.get("weights"), group.get("input_activations")
    if not isinstance(weights, Mapping):
        return None
    kind, bits = weights.get("type", "int"), weights.get("num_bits", 8)
    strategy, group_size = weights.get("strategy", "tensor"), weights.get("group_size")
    act_bits = acts.get("num_bits") if isinstance(acts, Mapping) else None
    if kind == "float" and strategy == "group" and group_size == 32 and bits in (4, 8):
        return f"mxfp{bits}"
    if kind == "float" and bits == 8 and strategy == "block":
        return "fp8 block"
    if kind == "float" and bits == 4:
        return "nvfp4a16" if act_bits is None else "nvfp4"
    if kind == "int" and bits == 4 and act_bits == 8 and isinstance(acts, Mapping):
        return "w4a8 fp8" if acts.get("type") == "float" else "w4a8 int"
    return None


def compressed_tensors_covers_experts(group: Mapping[str, Any]) -> bool:
    """Whether a compressed-tensors config group reaches a fused-MoE layer's experts: its targets
    hold "Linear" (llm-compressor's default, which the engines match against fused experts) or a
    name / regex naming experts."""
    targets = group.get("targets") or ["Linear"]
    return any(t == "Linear" or "expert" in str(t).lower() for t in targets)


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
                          scheme=_ct_scheme(group["weights"], path, str(key),
                                            group.get("input_activations"))))
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


# ModelOpt's quant_algo values vLLM 0.32 gives a quant_method when it meets ModelOpt's own
# {"producer", "quantization"} layout (`quant_method`).
_MODELOPT_METHOD = {"FP8": "modelopt", "FP8_PER_CHANNEL_PER_TOKEN": "modelopt",
                    "FP8_PB_WO": "modelopt", "NVFP4": "modelopt_fp4"}


def quant_method(qc: Mapping[str, Any], path: str = "quantization_config") -> str:
    """The quant_method vLLM 0.32 reads `qc` as (lower case), "" where it names none.

    hf_quant_config.json (ModelOpt 0.29 and older, which vLLM's transformers_utils/config.py
    get_config takes as the quantization config when config.json has none) names no
    quant_method: vLLM's transformers_utils/model_arch_config_convertor.py
    _normalize_quantization_config sets it, in place, when producer.name is "modelopt" (or
    ``quantization`` holds ``modelopt_quant_config``) from quantization.quant_algo: FP8,
    FP8_PER_CHANNEL_PER_TOKEN and FP8_PB_WO are "modelopt", NVFP4 "modelopt_fp4", any other
    algorithm a ValueError at start-up (refused here, in one line). Every later reader (the
    KV dtype of --kv-cache-dtype auto, the weights' format) sees that quant_method."""
    inner = qc.get("quantization")
    producer = qc.get("producer")
    name = producer.get("name") if isinstance(producer, Mapping) else None
    legacy = isinstance(inner, Mapping) and "modelopt_quant_config" in inner
    if (name == "modelopt" or legacy) and isinstance(inner, Mapping):
        algo = inner.get("quant_algo")
        if algo is not None:
            method = _MODELOPT_METHOD.get(str(algo).upper())
            if method is None:
                raise SpecError(path, "quantization.quant_algo",
                                f"ModelOpt algorithm {algo!r}: vLLM 0.32 refuses it in this "
                                f"layout (model_arch_config_convertor.py: Unknown ModelOpt "
                                f"quant algo; known: {', '.join(_MODELOPT_METHOD)})")
            return method
    method = qc.get("quant_method", "")
    return str(method).lower().replace("compressed_tensors", "compressed-tensors")


QUANT_METHODS = ("fp8", "mxfp4", "modelopt", "modelopt_fp4", "compressed-tensors", "gptq",
                 "gptq_marlin", "awq", "awq_marlin", "bitsandbytes")


def parse_quantization_config(qc: Mapping[str, Any], path: str, *,
                              mxfp4_backend: Mxfp4Backend = Mxfp4Backend.marlin,
                              mp_kernel: MixedPrecisionKernel = MixedPrecisionKernel.marlin,
                              mxfp4_reason: str | None = None,
                              ) -> QuantConfig:
    """A config.json ``quantization_config`` (or hf_quant_config.json) as a `QuantConfig`.
    ``mxfp4_backend`` / ``mp_kernel``: the kernels vLLM picks for the GPU (their layouts differ;
    the planner asks the engine for the MXFP4 one, EngineRules.mxfp4_backend, and says why in
    the notes with ``mxfp4_reason``; the mixed-precision kernel keeps the Marlin default).

    Unknown methods raise SpecError naming ``quantization_config.quant_method``."""
    if not isinstance(qc, Mapping):
        raise SpecError(path, "quantization_config", "expected a mapping")
    method = quant_method(qc, path).replace("_", "-")
    if not method and isinstance(qc.get("quantization"), Mapping):
        method = "modelopt"  # a ModelOpt {"quantization": ...} layout without its producer
    if method == "fp8":
        return _parse_fp8(qc, path)
    if method == "mxfp4":
        return _parse_mxfp4(qc, path, mxfp4_backend, mxfp4_reason)
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


def declared_kv_cache_dtype(qc: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """(field, KV dtype) a checkpoint's quantization_config declares for the KV cache, as vLLM
    0.32 reads it when started with its default --kv-cache-dtype auto; None: the model dtype.

    ModelOpt (quant_method modelopt*): utils/torch_utils.py get_kv_cache_quant_algo_string,
    called by engine/arg_utils.py resolve_kv_cache_dtype_string: kv_cache_scheme (under
    ``quantization`` or top level) before kv_cache_quant_algo; a scheme {dynamic: false,
    num_bits: 8, type: float} is fp8 (fp8_e4m3), {num_bits: 4, type: float} nvfp4; the strings
    fp8 / nvfp4 likewise; anything else falls back to auto. compressed-tensors (llm-compressor):
    model_executor/layers/attention/attention.py turns auto into fp8 when kv_cache_scheme is
    not null."""
    if not isinstance(qc, Mapping):
        return None
    method = quant_method(qc)
    if method.startswith("modelopt"):
        inner = qc.get("quantization", qc)
        inner = inner if isinstance(inner, Mapping) else qc
        for key, where in (("kv_cache_scheme", inner), ("kv_cache_scheme", qc),
                           ("kv_cache_quant_algo", inner), ("kv_cache_quant_algo", qc)):
            value = where.get(key)
            if not value:
                continue
            field = ("quantization_config.quantization." if where is not qc
                     else "quantization_config.") + key
            if isinstance(value, Mapping):
                if (value.get("dynamic") is False and value.get("num_bits") == 8
                        and value.get("type") == "float"):
                    return field, "fp8"
                if value.get("num_bits") == 4 and value.get("type") == "float":
                    return field, "nvfp4"
                return None
            dtype = {"fp8": "fp8", "nvfp4": "nvfp4"}.get(str(value).lower())
            return None if dtype is None else (field, dtype)
        return None
    if method == "compressed-tensors" and qc.get("kv_cache_scheme") is not None:
        return "quantization_config.kv_cache_scheme", "fp8"
    return None
