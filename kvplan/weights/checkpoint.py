"""Weight bytes from a checkpoint: `checkpoint_breakdown` takes the tensors one GPU holds, as
vLLM loads them, from the safetensors headers (kvplan.sources.checkpoint), split over the
tensor-, expert- and pipeline-parallel ranks by module name and shape, plus what the engine adds
beyond the stored tensors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kvplan._util.dtypes import get_dtype
from kvplan._util.errors import SpecError, UnmodelledError
from kvplan._util.units import cdiv
from kvplan.model.attention import HeadAttention, LatentAttention
from kvplan.model.checkpoint import CheckpointWeights, TensorInfo
from kvplan.model.quant import round_up
from kvplan.model.quant_formats import Mxfp4
from kvplan.model.spec import ModelSpec
from kvplan.sources.checkpoint import DTYPE_BITS, categorise
from kvplan.weights.base import (
    VOCAB_PADDING,
    DpAttentionWeights,
    WeightBreakdown,
    experts_module,
    rope_cache_bytes,
    stage_has_attention,
)
from kvplan.weights.expert_layout import busiest_rank_experts, moe_tp_size
from kvplan.weights.params import count_params
from kvplan.weights.routers import FLOAT32_BITS, router_build, router_columns

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.quant_config import QuantConfig


# Module names vLLM builds as ColumnParallelLinear / MergedColumnParallelLinear /
# QKVParallelLinear (output rows split over TP) and as RowParallelLinear (input columns split),
# as the Hugging Face checkpoints name them (llama.py, qwen2.py, deepseek_v2.py, gpt_oss.py,
# mixtral.py, gpt2.py, gpt_neox.py, mamba2 / qwen3_next mixers, the vision towers' blocks).
_COLUMN = frozenset({
    "q_proj", "k_proj", "v_proj", "qkv_proj", "query_key_value", "c_attn", "wq", "wk", "wv",
    "wqkv", "gate_proj", "up_proj", "gate_up_proj", "c_fc", "fc1", "w1", "w3", "q_b_proj",
    "kv_b_proj", "in_proj", "in_proj_qkvz", "in_proj_ba", "conv1d", "qkv", "dense_h_to_4h",
})
_ROW = frozenset({"o_proj", "down_proj", "out_proj", "dense", "c_proj", "fc2", "w2", "wo",
                  "proj", "dense_4h_to_h"})
# Per-head vectors of recurrent mixers, split with the heads (vLLM MambaMixer2, Qwen3-Next).
_HEAD_VECTORS = frozenset({"A_log", "D", "dt_bias"})
# Packed integer formats stored (in, out): GPTQ / AWQ qweight, qzeros, scales (gptq.py, awq.py:
# input_dim 0, output_dim 1), so the TP split runs along the other axis.
_TRANSPOSED = frozenset({"qweight", "qzeros", "scales"})
_VOCAB = ("embed_tokens", "lm_head", "embed_out", "wte", "word_embeddings", "tok_embeddings",
          "shared_head")
_FLOAT = frozenset({"F64", "F32", "F16", "BF16"})
_EXPERT_INDEX = re.compile(r"\.experts\.(\d+)\.")
_LAYER_INDEX = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def _elements(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _shard(shape: tuple[int, ...], dim: int, rows: int, bits: int) -> int:
    """Bytes of ``shape`` with dimension ``dim`` cut to ``rows``."""
    cut = shape[:dim] + (rows,) + shape[dim + 1:]
    return cdiv(_elements(cut) * bits, 8)


@dataclass(frozen=True, kw_only=True)
class _Placement:
    spec: ModelSpec
    tp: int  # the TP width of attention, dense MLP, embeddings, lm_head (1 under DP attention)
    expert_tp: int  # the TP width of routed experts (1 under EP)
    ep: int  # expert-parallel ranks holding whole experts

    def vocab_rows(self) -> int:
        return cdiv(round_up(self.spec.vocab_size, VOCAB_PADDING), self.tp)

    def kv_rows(self, rows: int) -> int:
        att = self.spec.attention
        if isinstance(att, HeadAttention) and self.tp > att.num_key_value_heads > 0:
            # Fewer KV heads than ranks: each rank holds one whole head (vLLM QKVParallelLinear
            # replicates KV heads, num_kv_head_replicas = tp // num_kv_heads).
            return cdiv(rows, att.num_key_value_heads)
        return cdiv(rows, self.tp)


def _tensor_rank_bytes(t: TensorInfo, bits: int, where: _Placement, expert: bool) -> int:
    """The bytes of tensor ``t`` one rank holds, ``bits`` per stored element."""
    shape = t.shape
    whole = cdiv(_elements(shape) * bits, 8)
    parts = t.name.split(".")
    leaf = parts[-1]
    module = parts[-2] if len(parts) > 1 else ""
    if not shape or _elements(shape) <= 1:
        return whole  # per-tensor scales, global scales: on every rank
    if any(k in t.name for k in _VOCAB) and len(shape) >= 2 and not expert:
        # VocabParallelEmbedding / ParallelLMHead: the vocabulary padded to 64, then split.
        vocab = where.spec.vocab_size
        dim = shape.index(vocab) if vocab in shape else 0
        return _shard(shape, dim, cdiv(round_up(shape[dim], VOCAB_PADDING), where.tp), bits)
    if expert:
        if where.ep > 1:
            # Whole experts per rank (vLLM FusedMoE with expert parallelism): per-expert tensors
            # are counted by `checkpoint_breakdown`; fused ones hold E/ep of their first axis.
            if module == "experts" and where.spec.moe is not None and (
                    shape[0] == where.spec.moe.n_routed_experts):
                return _shard(shape, 0, busiest_rank_experts(shape[0], where.ep), bits)
            return whole
        tp = where.expert_tp
        if module == "experts" and where.spec.moe is not None:
            # Fused experts (gpt-oss gate_up_proj_blocks (E, 2I, H/32, 16), Llama-4 / Qwen-VL
            # gate_up_proj (E, H, 2I)): split the axis that carries the intermediate size.
            i = where.spec.moe.moe_intermediate_size
            sizes = (2 * i, i) if leaf.startswith("gate_up") else (i, cdiv(i, 32))
            for dim in range(1, len(shape)):
                if shape[dim] in sizes:
                    return _shard(shape, dim, cdiv(shape[dim], tp), bits)
            return whole  # the down projection's bias (E, H): on every rank
    else:
        tp = where.tp
    if tp == 1:
        return whole
    column = module in _COLUMN
    if leaf in ("g_idx", "weight_g_idx"):
        # Act-order indices run along the input: split by row-parallel layers only.
        return whole if column else _shard(shape, 0, cdiv(shape[0], tp), bits)
    if leaf in _HEAD_VECTORS:
        return _shard(shape, 0, cdiv(shape[0], tp), bits)
    if leaf == "sinks" and where.spec.attention_sinks and len(shape) == 1:
        # gpt-oss's attention sinks, one logit per query head: vLLM 0.32 models/gpt_oss.py:130-132
        # builds `torch.empty(num_attention_heads // tp_size)` and its loader narrows the stored
        # vector to the rank's heads (:723-729), as `sink_params` counts them.
        return _shard(shape, 0, shape[0] // tp, bits)
    if not column and module not in _ROW:
        return whole  # norms, routers, MLA's q_a / kv_a, MTP's eh_proj: replicated
    if leaf in _TRANSPOSED and len(shape) == 2:
        dim = 1 if column else 0
    elif column:
        dim = 0
    elif len(shape) >= 2:
        dim = 1
    else:
        return whole  # row-parallel biases and per-output scales: on every rank
    if dim == 0 and column and module in ("k_proj", "v_proj") and not expert:
        return _shard(shape, 0, where.kv_rows(shape[0]), bits)
    return _shard(shape, dim, cdiv(shape[dim], tp), bits)


def _owner(name: str, layers: int) -> str:
    """The group of the module a tensor belongs to (a scale is grouped with its weight)."""
    module = name.rsplit(".", 1)[0]
    return categorise(module + ".weight", layers)


# Stored dtypes in which one element is one parameter. Packed integer and 4/6-bit formats (GPTQ
# and AWQ's I32, mxfp4/nvfp4's U8, bitsandbytes' U8) hold a format-dependent number per element.
_ONE_PARAMETER = frozenset({"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"})
# A whole checkpoint stores at least the parameters `count_params` counts: that count leaves out
# only small tensors (q/k norms, a few biases), and it is within 2 % of the published totals
# (Llama-3-70B 70.55 B, Qwen3-8B 8.19 B, DeepSeek-V3 671.0 B, gpt-oss-120b 116.8 B). Below 90 %
# of it, parameters are missing (a truncated file; a shard that the names did not say was gone).
MIN_STORED_FRACTION = 0.9


def check_parameter_count(ckpt: CheckpointWeights, spec: ModelSpec) -> None:
    """A checkpoint whose weights are stored one parameter per element must hold about the
    parameters of the architecture config.json describes (vision tower, MTP layers and scales
    aside); packed formats are held only to the shard and layer checks of
    kvplan.sources.checkpoint."""
    main = [t for t in ckpt.tensors if t.category not in ("vision", "mtp",
                                                          "quantization_scales")]
    if not main or any(t.dtype not in _ONE_PARAMETER for t in main):
        return
    stored = sum(_elements(t.shape) for t in main)
    expected = count_params(spec).total
    if stored < MIN_STORED_FRACTION * expected:
        raise SpecError(ckpt.folder, None, f"the checkpoint holds {stored:,} parameters, "
                                           f"{stored / expected:.1%} of the {expected:,} of the "
                                           "architecture in config.json: an incomplete "
                                           "checkpoint? (--weights-from config sizes weights "
                                           "from config.json)")


def checkpoint_breakdown(ckpt: CheckpointWeights, spec: ModelSpec, quant: QuantConfig | None,
                         *, dtype: str, tp: int = 1, ep: int = 1, dp_attention: bool = False,
                         layers: range | None = None, first: bool = True, last: bool = True,
                         vision: bool = True, mtp: bool = False, lm_head: bool | None = None,
                         dp_split: DpAttentionWeights | None = None) -> WeightBreakdown:
    """The checkpoint's tensors one GPU holds, as vLLM loads them, by group.

    Each tensor is split over ``tp`` by its module name and shape (vLLM's parallel layers):
    q/k/v/gate/up projections along their output rows (dim 0; GPTQ/AWQ's (in, out) packing along
    dim 1), o/down along their inputs (dim 1), embeddings and lm_head along the vocabulary padded
    to 64, KV heads replicated when fewer than ranks; norms, routers and MLA's q_a/kv_a are whole
    on every rank. Routed experts are split over ``tp`` too, or with ``ep`` > 1 held whole,
    ceil(E/ep) per rank. ``dp_attention``: everything but the routed experts is whole, except
    the dense MLPs (with the shared experts) and the lm_head where ``dp_split`` keeps them split
    over ``tp`` (the engine's `dp_attention_weights`; None: whole).
    ``layers``/``first``/``last``/``lm_head``: one pipeline stage, as `weight_breakdown`.

    Floating tensors are held in the compute ``dtype`` (vLLM casts a float32 checkpoint to the
    model dtype); quantized tensors and their scales as stored. The vision tower is counted when
    ``vision`` (vLLM loads it for a multimodal architecture unless --limit-mm-per-prompt is 0),
    MTP layers when ``mtp``. What the engine adds beyond the stored tensors (the Marlin padding of
    mxfp4 experts, the W_UK/W_UV copies of quantized MLA) is added to its group, in
    ``engine_added``, and named in the notes."""
    if tp < 1 or ep < 1:
        raise ValueError(f"tp and ep must be >= 1, got tp={tp}, ep={ep}")
    if ep > 1 and moe_tp_size(max(tp, ep), ep) > 1:
        # Held experts split over MoE TP too (kvplan.weights.expert_layout): the per-expert
        # tensors' split under it is not read from vLLM's loader, which cannot launch it.
        raise UnmodelledError(f"--ep {ep} under --tp {tp}: a checkpoint's experts under MoE TP "
                              "x EP are not measured; size it from its config.json")
    compute = get_dtype(dtype)
    num_layers = spec.num_hidden_layers
    where = _Placement(spec=spec, tp=1 if dp_attention else tp,
                       expert_tp=1 if ep > 1 else tp, ep=ep)
    split = replace(where, tp=tp)
    dp_split = dp_split or DpAttentionWeights()
    # The groups the engine keeps split over the TP group under DP attention.
    placed = {"dense_mlp": split if dp_split.mlp_split else where,
              "lm_head": split if dp_split.lm_head_split else where}
    moe = spec.moe
    experts_per_rank = busiest_rank_experts(moe.n_routed_experts, ep) if moe is not None else 0
    groups = dict.fromkeys(("embeddings", "attention", "dense_mlp", "experts", "lm_head",
                            "norms", "vision", "mtp"), 0)
    scales = expert_scales = 0
    group_scales = dict.fromkeys(placed, 0)
    has_lm_head = False
    head = last if lm_head is None else lm_head
    converted = False
    router_fp32 = router_build(spec).weight_fp32
    for t in ckpt.tensors:
        owner = _owner(t.name, num_layers) if t.category == "quantization_scales" else t.category
        if (owner == "vision" and not vision) or (owner == "mtp" and not mtp):
            continue
        if owner == "lm_head":
            has_lm_head = True
        match = _LAYER_INDEX.search(t.name)
        if owner == "mtp":
            if not last:
                continue  # vLLM runs the MTP module after the last stage's layers
        elif owner == "vision":
            pass  # qwen2_5_vl.py and peers build the tower on every pipeline rank
        elif match is not None:
            if layers is not None and int(match.group(1)) not in layers:
                continue
        elif ((owner == "embeddings" and not first) or (owner == "lm_head" and not head)
                or (owner == "other" and not last)):
            continue
        expert = ".experts." in t.name or t.name.endswith(".experts")
        if expert and ep > 1:
            index = _EXPERT_INDEX.search(t.name)
            if index is not None and int(index.group(1)) >= experts_per_rank:
                continue  # another EP rank's expert (vLLM places experts in order)
        bits = DTYPE_BITS[t.dtype]
        if (t.dtype in _FLOAT and not expert and t.category != "quantization_scales"
                and _is_router(t, spec, router_fp32)):
            bits = FLOAT32_BITS  # held in float32 whatever the stored dtype (routers.py)
        elif (t.dtype in _FLOAT and t.category != "quantization_scales"
                and not t.name.endswith("e_score_correction_bias")):
            converted = converted or bits != compute.element_bits
            bits = compute.element_bits
        nbytes = _tensor_rank_bytes(t, bits, placed.get(owner, where), expert)
        if t.category == "quantization_scales":
            scales += nbytes
            if expert:
                expert_scales += nbytes
            elif owner in placed:
                group_scales[owner] += nbytes
            continue
        groups["norms" if owner == "other" else owner] += nbytes
    notes: list[str] = []
    if converted:
        notes.append(f"floating checkpoint tensors held in {compute.name}, the compute dtype")
    if vision and groups["vision"]:
        notes.append("vision tower counted: vLLM loads it unless --limit-mm-per-prompt is 0")
    if head and not has_lm_head and spec.tie_word_embeddings and not first:
        # A tied lm_head on a last stage that is not the first holds its own embedding copy.
        groups["lm_head"] += cdiv(placed["lm_head"].vocab_rows() * spec.hidden_size
                                  * compute.element_bits, 8)
    added = _engine_added(ckpt, spec, quant, compute.element_bits, where, layers, notes)
    for group, extra in added.items():
        groups[group] += extra
    return WeightBreakdown(
        embeddings=groups["embeddings"], attention=groups["attention"],
        dense_mlp=groups["dense_mlp"], experts=groups["experts"], lm_head=groups["lm_head"],
        norms=groups["norms"], quantization_scales=scales, vision=groups["vision"],
        mtp=groups["mtp"], dtype=compute.name,
        method=quant.description if quant is not None else "none",
        notes=(quant.notes if quant is not None else ()) + tuple(notes),
        expert_scales=expert_scales, dense_mlp_scales=group_scales["dense_mlp"],
        lm_head_scales=group_scales["lm_head"], source="checkpoint",
        engine_added=sum(added.values()),
        # Not a checkpoint tensor: vLLM computes the rotary table at start-up (as on the
        # architecture path, `rope_cache_elements`).
        rope_cache=rope_cache_bytes(spec, compute.element_bits)
        if stage_has_attention(spec, layers) else 0)


def _is_router(t: TensorInfo, spec: ModelSpec, weight_fp32: bool) -> bool:
    """Whether vLLM holds `t` in float32 as part of a router (kvplan.weights.routers): a
    score-correction bias (float32 in every family that builds one), or, where the family's gate
    is float32, the (router columns x hidden) gate matrix of an MoE layer."""
    if t.name.endswith(("e_score_correction_bias", "expert_bias")):
        return True
    return (weight_fp32 and t.name.endswith(".weight")
            and t.shape == (router_columns(spec), spec.hidden_size))


def _engine_added(ckpt: CheckpointWeights, spec: ModelSpec, quant: QuantConfig | None,
                  bits: int, where: _Placement, layers: range | None,
                  notes: list[str]) -> dict[str, int]:
    """Bytes vLLM allocates beyond the stored tensors, by group (see `checkpoint_breakdown`)."""
    added: dict[str, int] = {}
    if quant is None:
        return added
    names = {t.name for t in ckpt.tensors}
    stage = [i for i in range(spec.num_hidden_layers) if layers is None or i in layers]
    moe = spec.moe
    if moe is not None:
        pad = 0
        for i in stage:
            scheme = quant.scheme_for(experts_module(spec, i))
            if not isinstance(scheme, Mxfp4) or not moe.is_moe_layer(i):
                continue
            # Mxfp4MoEMethod.create_weights pads the expert shapes for the backend's kernel;
            # the checkpoint holds them unpadded.
            experts = busiest_rank_experts(moe.n_routed_experts, where.ep)
            inter = cdiv(moe.moe_intermediate_size, where.expert_tp)
            args = (experts, spec.hidden_size, inter, spec.mlp.gated)
            pad += (scheme.experts_bytes(*args).total
                    - scheme.experts_bytes(*args, padded=False).total)
            backend = scheme.backend.value
        if pad:
            added["experts"] = pad
            notes.append(f"+{pad:,} bytes: vLLM pads the mxfp4 experts for its {backend} "
                         "MoE kernel (mxfp4.py, Mxfp4MoEMethod.create_weights)")
    att = spec.attention
    if isinstance(att, LatentAttention):
        heads = cdiv(att.num_attention_heads, where.tp)
        copies = 0
        for i in stage:
            name = f"model.layers.{i}.self_attn.kv_b_proj"
            if f"{name}.weight" in names and quant.scheme_for(name) is not None:
                # MLACommonImpl.process_weights_after_loading dequantizes kv_b_proj into
                # W_UK_T / W_UV in the compute dtype, kept beside the quantized weight.
                rows = heads * (att.qk_nope_head_dim + att.v_head_dim)
                copies += cdiv(rows * att.kv_lora_rank * bits, 8)
        if copies:
            added["attention"] = copies
            notes.append(f"+{copies:,} bytes: vLLM's MLA keeps dequantized W_UK/W_UV copies of "
                         "the quantized kv_b_proj (mla/common.py)")
    return added
