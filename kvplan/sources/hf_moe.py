"""config.json fields -> the spec's MoE section (experts, experts per token, widths, shared
experts, which layers are MoE), family by family (kvplan.sources.hf_families reads attention and
the dense MLP)."""

from __future__ import annotations

from typing import Any

from kvplan._util.errors import SpecError
from kvplan.sources.hf_reader import ConfigReader

# MoE families whose intermediate_size is one routed expert's width (no moe_intermediate_size).
_EXPERT_WIDTH_IS_INTERMEDIATE = {"mixtral", "gpt_oss", "llama4", "granitemoehybrid",
                                 "minimax_m2", "olmoe", "granitemoe", "phimoe",
                                 "granitemoeshared", "granitemoe_swa", "dbrx"}


def moe_section(c: ConfigReader, layers: int, dense_width: int) -> dict | None:
    """The MoE section (experts, experts per token, widths, shared experts and which layers are
    MoE), or None for a dense model."""
    ernie = c.model_type == "ernie4_5_moe"  # moe_* names (vLLM 0.32 models/ernie45_moe.py)
    key, experts = c.first("n_routed_experts", "num_local_experts", "num_experts",
                           *(("moe_num_experts",) if ernie else ()))
    if key is None or (experts == 0 and not isinstance(experts, bool)):
        return None
    experts = c.int(key)
    per_tok = c.int("num_experts_per_tok", "num_experts_per_token", "experts_per_token",
                    "top_k_experts", *(("moe_k",) if ernie else ()),
                    required="num_experts_per_tok",
                    what="missing: needed for MoE active parameters")
    width = c.int("moe_intermediate_size")
    if width is None and c.model_type in _EXPERT_WIDTH_IS_INTERMEDIATE:
        width = c.int("intermediate_size", required="intermediate_size")
    if width is None:
        width = dense_width  # mixtral: intermediate_size is the width of one expert
        if c.model_type != "mixtral":
            c.warn(f"moe_intermediate_size absent: experts assumed intermediate_size "
                   f"({width}) wide")
    moe: dict[str, Any] = {
        "n_routed_experts": experts,
        "num_experts_per_tok": per_tok,
        "moe_intermediate_size": width,
    }
    shared_key, _ = c.first("n_shared_experts", "num_shared_experts",
                            *(("moe_num_shared_experts",) if ernie else ()))
    shared = c.int(shared_key, minimum=0) if shared_key else 0
    if c.model_type == "llama4":
        shared = 1  # Llama-4 adds one shared expert of the experts' width to every MoE layer
    if shared:
        moe["n_shared_experts"] = shared
    width_key, _ = c.first("shared_expert_intermediate_size", "shared_intermediate_size")
    shared_width = c.int(width_key, minimum=0) if width_key else 0
    if shared_width:
        moe["shared_expert_intermediate_size"] = shared_width
    # 0 and null both mean "unset" in these config classes.
    first_k = c.int_or("first_k_dense_replace", 0)
    kinds = c.data.get("mlp_layer_types")
    if isinstance(kinds, list) and c.model_type == "exaone_moe":
        # models/exaone_moe.py: MoE where mlp_layer_types[layer_idx] == "sparse" (the list
        # takes precedence over first_k_dense_replace in ExaoneMoeConfig).
        first_k = next((i for i, k in enumerate(kinds) if k == "sparse"), len(kinds))
        if len(kinds) < layers or any(k != "sparse" for k in kinds[first_k:layers]):
            raise SpecError(c.path, "mlp_layer_types", "MoE layers other than every layer "
                                                       "from the first sparse one on: not "
                                                       "expressible in kvplan's MoE section; "
                                                       "refused")
    freq = 1
    if c.model_type in ("mimo_v2_flash", "mimo_v2"):
        # models/mimo_v2.py is_moe_layer (MiMoV2FlashForCausalLM and its subclass
        # MiMoV2ForCausalLM): MoE where a *list* moe_layer_freq says so (an int, or none: every
        # layer dense).
        if not isinstance(c.data.get("moe_layer_freq"), list):
            return None
        flags = c.int_list("moe_layer_freq")[:layers]
        first_k = next((i for i, f in enumerate(flags) if f), len(flags))
        if not all(flags[first_k:]) or len(flags) < layers:
            raise SpecError(c.path, "moe_layer_freq", "MoE layers other than every layer from "
                                                      "the first MoE one on: not expressible "
                                                      "in kvplan's MoE section; refused")
    else:
        freq = c.int_or("moe_layer_freq", 1) or 1
    if c.model_type == "llama4":
        # moe_layers = every interleave_moe_layer_step-th layer (1-based).
        step = c.int_or("interleave_moe_layer_step", 1) or 1
        first_k, freq = step - 1, step
    if c.model_type in ("lfm2_moe", "afmoe"):
        # lfm2_moe.py, afmoe.py (`moe_enabled = layer_idx >= config.num_dense_layers`): dense
        # below num_dense_layers (Lfm2MoeConfig default 2, AfmoeConfig 1).
        first_k = c.int_or("num_dense_layers", 2 if c.model_type == "lfm2_moe" else 1)
    if ernie:
        # Ernie4_5_MoeDecoderLayer: MoE when moe_layer_start_index <= i <= moe_layer_end_index
        # (default the last layer) and (i + 1) % moe_layer_interval == 0.
        first_k = c.int_or("moe_layer_start_index", 0)
        freq = c.int_or("moe_layer_interval", 1) or 1
        end = c.int_or("moe_layer_end_index", layers - 1)
        if end < layers - 1 or freq > 1:
            c.warn(f"MoE layers {first_k}..{end} every {freq}: counted as every layer from "
                   f"{first_k} on (weights only)")
    if c.model_type == "jamba":
        # Layer i is MoE when i % expert_layer_period == expert_layer_offset.
        freq = c.int_or("expert_layer_period", 1) or 1
        first_k = c.int_or("expert_layer_offset", 0)
    step = c.int("decoder_sparse_step", minimum=0)
    if step is not None and step > 1:
        # qwen*_moe: layer i is MoE when (i + 1) % step == 0, i.e. layers step-1, 2*step-1, ...
        first_k, freq = step - 1, step
    mlp_only = c.int_list("mlp_only_layers")
    if mlp_only:
        if sorted(mlp_only) == list(range(len(mlp_only))) and freq == 1 and first_k == 0:
            first_k = len(mlp_only)
        else:
            shown = mlp_only if len(mlp_only) <= 16 else f"{mlp_only[:16]}..."
            c.warn(f"mlp_only_layers {shown} use the dense MLP, which kvplan cannot express "
                   "(it has first_k_dense_replace and moe_layer_freq only): counted as MoE layers")
    if first_k > layers:
        raise SpecError(c.path, "first_k_dense_replace", f"must be <= num_hidden_layers ({layers})")
    moe["first_k_dense_replace"] = first_k
    moe["moe_layer_freq"] = freq
    zero = c.int_or("zero_expert_num", 0)  # LongCat-Flash's identity experts: router columns
    if zero:
        moe["zero_experts"] = zero
    # A float32 per-expert score-correction bias of the router, where the config switches it on
    # (DeepSeek-V3's topk_method noaux_tc, MiniMax-M2's use_routing_bias, LFM2-MoE's
    # use_expert_bias, Ling's moe_router_enable_expert_bias); which families build it so, and
    # which build it always: kvplan.weights.routers.
    if (c.data.get("topk_method") == "noaux_tc"
            or any(c.data.get(k) is True for k in ("use_routing_bias", "use_expert_bias",
                                                   "moe_router_enable_expert_bias"))):
        moe["score_bias"] = True
    return moe
