"""Weights one GPU holds, as the engine loads them: the checkpoint's quantization, the compute
dtype, tensor, expert and data parallelism, and the pipeline stage's layers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.model.spec import ModelSpec
from kvplan.weights.expert_layout import busiest_rank_experts, moe_tp_size

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.quant_config import QuantConfig
    from kvplan.weights.base import DpAttentionWeights, WeightBreakdown


def loaded_formats(spec: ModelSpec, quantization: str | None = None, dtype: str | None = None,
                   mxfp4: tuple[str, str] | None = None
                   ) -> tuple[QuantConfig | None, str]:
    """The quantization config the engine loads `spec` with (the checkpoint's
    quantization_config, or load-time --quantization bitsandbytes; None: none) and the compute
    dtype of every weight it leaves plain (--dtype, else the engines' auto rule). `mxfp4`: the
    MXFP4 MoE kernel the engine runs (an Mxfp4Backend value) and why (EngineRules.mxfp4_backend;
    None: Marlin's layout, the parser's default)."""
    from kvplan.weights.base import engine_dtype

    # Load-time quantization re-quantizes a 16-bit checkpoint only: the engines take a quantized
    # checkpoint's own method and refuse another --quantization (each engine's quant_methods),
    # so a bitsandbytes checkpoint given --quantization bitsandbytes keeps its own config.
    quant = None
    if spec.quantization_json is not None:
        from kvplan.model.quant_config import parse_quantization_config
        from kvplan.model.quant_formats import Mxfp4Backend

        kernel = {} if mxfp4 is None else {"mxfp4_backend": Mxfp4Backend(mxfp4[0]),
                                           "mxfp4_reason": mxfp4[1]}
        quant = parse_quantization_config(spec.quantization_config, spec.path, **kernel)
    elif quantization == "bitsandbytes":
        from kvplan.model.quant_config import (
            bitsandbytes_config,  # the quantized formats: for these only
        )

        quant = bitsandbytes_config()
    if dtype is None:
        # Legacy specs that state a quantized dtype (torch_dtype: float8) keep it for every
        # weight; a floating checkpoint dtype follows the engines' auto rule.
        dtype = spec.weight_dtype if spec.weight_dtype in ("fp8", "int8", "int4") else (
            engine_dtype(spec.weight_dtype))
    return quant, dtype


def routed_expert_bits(spec: ModelSpec, layers: Iterable[int], quantization: str | None = None
                       ) -> dict[int, int | None]:
    """Bits per element of each of `layers`' routed-expert weights as the engine loads them
    (kvplan.weights.breakdown prices them so): the compute dtype's where no quantization scheme
    covers the layer's experts (kvplan.weights.base.experts_module: the config's rules and
    ignore list), None where a format holds them, as DeepSeek-V4's MXFP4 / FP8 experts always
    are (kvplan.weights.csa)."""
    from kvplan._util.dtypes import get_dtype
    from kvplan.model.attention import CompressedSparseAttention
    from kvplan.weights.base import experts_module

    if isinstance(spec.attention, CompressedSparseAttention):
        return dict.fromkeys(layers)
    quant, dtype = loaded_formats(spec, quantization)
    bits = get_dtype(dtype).element_bits
    return {i: None if quant is not None and quant.scheme_for(experts_module(spec, i))
            is not None else bits for i in layers}


def weights_breakdown(spec: ModelSpec, *, tp: int, dtype: str | None = None,
                      quantization: str | None = None, layers: range | None = None,
                      first: bool = True, last: bool = True, dp_attention: bool = False,
                      ep: int = 1, mtp: bool = False, vision: bool = True,
                      lm_head: bool | None = None,
                      dp_split: DpAttentionWeights | None = None,
                      expert_map_entry_bytes: int = 0,
                      mxfp4: tuple[str, str] | None = None,
                      attention_scale_bytes: int = 0,
                      redundant_experts: int = 0, attention_tp: int = 1) -> WeightBreakdown:
    """Weights one GPU holds, as the engine loads them (kvplan.weights.breakdown): the checkpoint's
    quantization_config (or --quantization bitsandbytes), the rest in the compute dtype (--dtype,
    else the engines' auto rule: float32 is served in bf16). With data-parallel attention every
    rank holds all attention and embedding weights, and the dense-MLP and lm_head weights
    whole or split over the TP group as ``dp_split`` (the engine's `dp_attention_weights`;
    None: whole, vLLM's DP + EP); routed experts are split over the ranks.

    A spec loaded with its checkpoint (a folder or Hub repo with safetensors) is measured from
    the tensor headers (`checkpoint_breakdown`, source "checkpoint"): experts held whole over
    ``ep`` ranks when ``ep`` > 1, the vision tower when ``vision``, MTP layers when ``mtp``.
    Load-time bitsandbytes re-quantizes the stored weights, so it keeps the architecture
    model. ``expert_map_entry_bytes``: what the engine holds per routed expert and MoE layer to
    map global to local experts under EP (the engine's `expert_map_entry_bytes`;
    `expert_map_bytes`); ``mxfp4``: the MXFP4 MoE kernel and why (`loaded_formats`), whose
    padding of the expert shapes the weights follow; ``attention_scale_bytes``: what it
    holds per attention layer in scale buffers (the engine's `attention_scale_bytes`;
    `attention_scales_bytes`); ``redundant_experts``: the extra physical experts of each MoE
    layer the engine builds for its expert placement (SGLang --ep-num-redundant-experts,
    `redundant_experts_held`). ``attention_tp``: with data-parallel attention, the GPUs of each
    attention-DP rank (SGLang --tp T --dp-size D: T / D), over which the attention is split
    (`_dp_weights`)."""
    # The weight rules load on first use: `kvplan estimate` without a GPU never needs them.
    from kvplan.weights.breakdown import weight_breakdown

    if spec.quantization_json is not None:
        quantization = None  # the checkpoint's own (loaded_formats)
    quant, dtype = loaded_formats(spec, quantization, dtype, mxfp4)
    kw = {"dtype": dtype, "layers": layers, "first": first, "last": last, "vision": vision,
          "lm_head": lm_head}
    if spec.checkpoint is not None and quantization != "bitsandbytes":
        if dp_attention and attention_tp > 1:
            raise UnmodelledError(
                f"attention TP {attention_tp} under DP attention: not read for a model sized "
                "from its checkpoint's tensors (kvplan places them on a config or model spec)")
        if redundant_experts:
            raise UnmodelledError(
                f"--ep-num-redundant-experts {redundant_experts}: not read for a model sized "
                "from its checkpoint's tensors (kvplan counts the redundant experts on a config "
                "or model spec)")
        from kvplan.weights.checkpoint import (  # with a checkpoint only
            check_parameter_count,
            checkpoint_breakdown,
        )

        check_parameter_count(spec.checkpoint, spec)
        measured = checkpoint_breakdown(spec.checkpoint, spec, quant, tp=tp, ep=ep,
                                        dp_attention=dp_attention, dp_split=dp_split, mtp=mtp,
                                        **kw)
        return replace(measured, expert_map=expert_map_bytes(
            spec, ep, expert_map_entry_bytes, layers=layers, mtp=mtp and last),
            attention_scales=attention_scales_bytes(spec, attention_scale_bytes,
                                                    layers=layers, mtp=mtp and last))
    if redundant_experts and (ep <= 1 or spec.moe is None):
        raise UnmodelledError(f"--ep-num-redundant-experts {redundant_experts}: priced for a MoE "
                              "model under expert parallelism only (EP > 1)")
    held: dict[str, int] = {}
    if ep > 1 and spec.moe is not None:
        # Expert parallelism (vLLM --enable-expert-parallel, SGLang --ep-size, TensorRT-LLM
        # --ep_size): the busiest rank holds ceil(E / ep) routed experts
        # (`busiest_rank_experts`), each split over the moe_tp ranks of its EP group (1, whole,
        # unless MoE TP x EP: kvplan.weights.expert_layout), with what each held expert brings
        # (its biases, the kernel's padding of its width), and the router whole; the MTP
        # block's experts likewise. The shared experts are no routed experts: they stay in the
        # dense MLP, split over the TP group (vLLM 0.32 models/deepseek_v2.py:243-276
        # DeepseekV2MLP and :359-372; whole under DP attention as `_dp_weights` places them).
        # Redundant experts (`redundant_experts_held`) are more physical experts to spread.
        held = {"held_experts": redundant_experts_held(spec.moe.n_routed_experts,
                                                       redundant_experts, ep),
                "expert_tp": moe_tp_size(max(tp, ep), ep)}
    split = weight_breakdown(spec, quant, tp=tp, mtp=mtp, **held, **kw)
    placed = _dp_weights(spec, quant, kw, split, tp=tp, dp_attention=dp_attention,
                         dp_split=dp_split, attention_tp=attention_tp)
    return replace(placed, expert_map=expert_map_bytes(
        spec, ep, expert_map_entry_bytes, layers=layers, mtp=mtp and last),
        attention_scales=attention_scales_bytes(spec, attention_scale_bytes, layers=layers,
                                                mtp=mtp and last))


def redundant_experts_held(n_routed: int, redundant: int, ep: int) -> int:
    """The routed experts one EP rank of `ep` holds in each MoE layer when the engine builds
    `redundant` copies beside the `n_routed` experts (SGLang --ep-num-redundant-experts, read in
    0.5.8.post1): every layer's FusedMoE is built over n_routed + redundant physical experts
    (models/deepseek_v2.py:413-416, and qwen2_moe / qwen3_moe / glm4_moe / gpt_oss / minimax_m2
    alike), (n_routed + redundant) / ep a rank, SGLang asserting that ep divides them
    (layers/moe/fused_moe_triton/layer.py:194-197; eplb/expert_location.py:199-205); each
    physical expert loads the weights of the logical one it copies (the trivial placement,
    expert_location.py:88-112: physical p holds logical p mod n_routed; --init-expert-location
    or EPLB's rebalancing move copies, not their count). So the redundant experts cost every
    rank redundant / ep experts' weights per MoE layer, out of its KV pool. Without redundant
    experts, `busiest_rank_experts`."""
    if redundant < 0:
        raise InputError(f"--ep-num-redundant-experts {redundant}: expected >= 0")
    if redundant and (n_routed + redundant) % ep:
        raise InputError(f"--ep-num-redundant-experts {redundant}: SGLang needs the {n_routed} "
                         f"routed + {redundant} redundant experts to divide over EP {ep} "
                         "(eplb/expert_location.py:204)")
    return busiest_rank_experts(n_routed + redundant, ep)


def attention_scales_bytes(spec: ModelSpec, per_layer: int, *,
                           layers: Iterable[int] | None = None, mtp: bool = False) -> int:
    """The scale buffers one rank holds: `per_layer` bytes (the engine's
    `attention_scale_bytes`) for every attention layer of `layers` (all when None) and, with
    `mtp`, for each MTP draft layer (a decoder layer with its own attention). Whole on every
    tensor-parallel rank: one scalar each, whatever the heads.

    vLLM 0.32 (16 B): every Attention and MLAAttention layer runs _init_kv_cache_quant
    (model_executor/layers/attention/attention.py:465, mla_attention.py:547), which registers
    four float32 scalar buffers, _k_scale, _v_scale, _q_scale and _prob_scale
    (attention.py:133-139, set_default_quant_scales(register_buffer=True) at :188), built
    inside the loader's target-device context, so on the GPU and in the bytes the loading
    measures (v1/worker/gpu_model_runner.py:5050-5137). The same function's _k_scale_cpu /
    _v_scale_cpu (:152-153) are replaced by host tensors in process_weights_after_loading
    (:589-601) before the loading is measured; not counted. Older releases'
    vllm/attention/layer.py (read at two commits of the 0.1x line, not every release) build
    the same four float32 scalars, first as plain `torch.tensor(1.0)` attributes of
    Attention.__init__, then as these buffers, both under the loader's device context (so on
    the GPU): the same 16 B, taken for every release kvplan follows (0.10.0 on); some also kept
    q_range / k_range / v_range scalars (12 B a layer more), not counted.

    The CUDA caching allocator's 512-B rounding is not modelled, here or for any tensor. It
    gives each allocation a block of round_size(n) bytes, at least kMinBlockSize 512 and a
    multiple of 512 (c10/cuda/CUDACachingAllocator.cpp), and its `allocated_bytes` statistic
    counts blocks (`requested_bytes` the sizes asked), so torch.cuda.max_memory_allocated,
    vLLM's weights figure (platforms/cuda.py:367-372 -> DeviceMemoryProfiler ->
    "Model loading took X GiB"), holds these four scalars as 2,048 B a layer. But that figure
    is printed to 0.01 GiB (utils/mem_utils.py:30-31 format_gib), and from 0.27 the KV budget
    does not read it: non_kv_cache_memory is the free-memory delta since start-up
    (total_consumed) plus the transient peak (mem_utils.py:312-321; weights_memory is only
    printed, :206-225), and that delta sees the allocator's segments (2 MiB for small
    blocks, 2 MiB-rounded or 20 MiB for large ones), not its 512-B blocks. Before 0.27 the
    budget subtracted weights_memory itself, rounding included: on Llama-3.1-8B, whose
    parameter tensors are all multiples of 512 B, 32 layers x 4 x (512 - 4) B = 65,024 B,
    3 % of one 16-token block (2 MiB)."""
    if not per_layer:
        return 0
    chosen = range(spec.num_hidden_layers) if layers is None else layers
    count = sum(spec.has_attention(i) for i in chosen)
    if mtp:
        count += spec.num_nextn_predict_layers
    return count * per_layer


def expert_map_bytes(spec: ModelSpec, ep: int, entry_bytes: int, *,
                     layers: Iterable[int] | None = None, mtp: bool = False) -> int:
    """The expert maps one rank holds under expert parallelism (`ep` > 1): `entry_bytes` per
    routed expert (E entries, the global experts, whatever the rank holds) for every MoE layer
    of `layers` (all when None) and, with `mtp`, of the MTP draft layers (a decoder layer like
    the last: its FusedMoE builds its own map).

    vLLM 0.32 (entry 4 B, `expert_map_entry_bytes`): FusedMoE's expert map manager builds
    ``torch.full((global_num_experts,), -1, dtype=torch.int32)`` (layers/fused_moe/
    expert_map_manager.py:72, `determine_expert_map`, when ep_size > 1) and the layer registers
    it as the ``_expert_map`` buffer at construction (layers/fused_moe/routed_experts.py:133,
    :262-268), inside the model loader's target-device context (model_loader/base_loader.py:
    72-74), so it is on the GPU and in the bytes the loading measures as the weights
    (v1/worker/gpu_model_runner.py:5050-5137 DeviceMemoryProfiler -> model_memory_usage,
    v1/worker/gpu_worker.py:681 weights_memory). Its ``expert_mask`` is None unless ROCm's AITER
    is on, and round-robin routing tables are built only for the DeepEP low-latency / NIXL EP
    backends with round-robin placement (expert_map_manager.py:458-470): neither is counted.
    The CUDA caching allocator's rounding of each map up to 512 B is not counted either (as
    for every other tensor)."""
    moe = spec.moe
    if ep <= 1 or moe is None or not entry_bytes:
        return 0
    chosen = range(spec.num_hidden_layers) if layers is None else layers
    count = sum(spec.has_mlp(i) and moe.is_moe_layer(i) for i in chosen)
    if mtp and spec.num_nextn_predict_layers and moe.is_moe_layer(spec.num_hidden_layers - 1):
        count += spec.num_nextn_predict_layers
    return count * moe.n_routed_experts * entry_bytes


def _dp_weights(spec: ModelSpec, quant: QuantConfig | None, kw: dict[str, Any],
                split: WeightBreakdown, *, tp: int, dp_attention: bool,
                dp_split: DpAttentionWeights | None, attention_tp: int = 1) -> WeightBreakdown:
    """`split` (one rank's weights, TP- or EP-split) as data-parallel attention holds them.
    `attention_tp` > 1 (SGLang --tp T --dp-size D, T / D GPUs a rank): the attention split over
    those GPUs (its heads: DeepseekV2AttentionMLA and the other models' attention take
    get_attention_tp_size(), layers/dp_attention.py), the token embeddings still whole
    (VocabParallelEmbedding `enable_tp=not is_dp_attention_enabled()`: models/deepseek_v2.py
    0.5.6 :3139-3143), the rest as with attention TP 1."""
    from kvplan.weights.breakdown import weight_breakdown

    if not dp_attention or tp == 1 or attention_tp == tp:
        return split
    # The MTP block keeps `split`'s count: its experts split over the ranks (its attention,
    # whole on each rank with DP attention, is counted split: at most its share of one layer).
    whole = weight_breakdown(spec, quant, tp=1, **kw)
    if attention_tp > 1:
        whole = replace(weight_breakdown(spec, quant, tp=attention_tp, **kw),
                        embeddings=whole.embeddings)
    # Its scales likewise (`mtp_scales`): `whole` is built without the MTP block, so without
    # them its scales lacked the block's (until sizefix57).
    kept = {"experts": split.experts, "mtp": split.mtp, "expert_scales": split.expert_scales,
            "mtp_scales": split.mtp_scales}
    if dp_split is not None and dp_split.mlp_split:
        kept.update(dense_mlp=split.dense_mlp, dense_mlp_scales=split.dense_mlp_scales)
    if dp_split is not None and dp_split.lm_head_split:
        kept.update(lm_head=split.lm_head, lm_head_scales=split.lm_head_scales)
    scales = whole.quantization_scales + sum(
        kept[k] - getattr(whole, k) for k in kept if k.endswith("_scales"))
    return replace(whole, quantization_scales=scales, **kept)
