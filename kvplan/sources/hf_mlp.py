"""config.json fields -> the spec's dense MLP section, family by family (weights only: no
cache size depends on it); split from kvplan.sources.hf_families."""

from __future__ import annotations

from kvplan._util.validate import checked_int_list
from kvplan.sources.hf_families import GPT2_NAMES, KNOWN_MODEL_TYPES, NON_GATED_MLP
from kvplan.sources.hf_reader import ConfigReader
from kvplan.sources.hf_text import TEXT_FAMILIES


def mlp_section(c: ConfigReader, hidden: int) -> dict:
    """The dense MLP section: width, gated or not, bias, by family."""
    mt = c.model_type
    if mt in GPT2_NAMES:
        width = c.int("n_inner") or 4 * hidden
        return {"intermediate_size": width, "gated": False, "bias": True}
    if mt == "falcon":
        width = c.int("ffn_hidden_size") or 4 * hidden
        if not c.has("ffn_hidden_size"):
            c.warn(f"ffn_hidden_size absent: FalconConfig default 4 * hidden_size = {width}")
        return {"intermediate_size": width, "gated": False, "bias": c.bool("bias", False)}
    if mt == "opt":
        width = c.int("ffn_dim", required="ffn_dim", what="missing: needed for the weight count")
        return {"intermediate_size": width, "gated": False, "bias": c.bool("enable_bias", True)}
    if mt == "gpt_neox":
        width = c.int("intermediate_size") or 4 * hidden
        return {"intermediate_size": width, "gated": False, "bias": True}
    if mt == "llama4" and c.has("intermediate_size_mlp"):
        # Llama-4: intermediate_size is one expert's width; dense layers use intermediate_size_mlp.
        return {"intermediate_size": c.int("intermediate_size_mlp"), "gated": True,
                "bias": False}
    if mt == "lfm2":
        return {"intermediate_size": _lfm2_ff_dim(c), "gated": True, "bias": False}
    if mt == "nemotron_h":
        # Nemotron-H's MLP layers are relu^2, two matrices (mlp_hidden_act relu2).
        return {"intermediate_size": c.int("intermediate_size", required="intermediate_size"),
                "gated": False, "bias": c.bool("mlp_bias", False)}
    raw = c.data.get("intermediate_size")
    if isinstance(raw, list) and raw:
        # gemma-3n lists one width per layer; kvplan keeps one dense width.
        checked_int_list(raw, path=c.path, field="intermediate_size", minimum=1)
        if len(set(raw)) > 1:
            c.warn(f"intermediate_size varies by layer ({min(raw)}-{max(raw)}): the largest "
                   "is counted for every layer")
        return {"intermediate_size": max(raw), "gated": True, "bias": c.bool("mlp_bias", False)}
    if mt in NON_GATED_MLP:
        family = TEXT_FAMILIES.get(mt)
        if family is not None and family.mlp_hidden_multiple is not None:
            return {"intermediate_size": family.mlp_hidden_multiple * hidden, "gated": False,
                    "bias": bool(family.mlp_bias)}
        bias = c.bool("mlp_bias", False) if family is None or family.mlp_bias is None else (
            family.mlp_bias)
        return {"intermediate_size": c.int("intermediate_size", required="intermediate_size"),
                "gated": False, "bias": bias}
    width = c.int("intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size")
    if width is None:
        width = 4 * hidden
        # No dense width on a model whose every layer is MoE (Qwen3.5-MoE: qwen3_5.py builds
        # Qwen3NextSparseMoeBlock on every layer; its config class has no intermediate_size):
        # the placeholder is never counted, so nothing is assumed.
        if not _all_layers_moe(c):
            c.assume("intermediate_size", f"{width} (4 * hidden_size)",
                     "absent; the MLP's width changes weights only", affects="weights")
    if mt not in KNOWN_MODEL_TYPES:
        c.assume("mlp", "gated MLP", "the SwiGLU MLP of Llama-style decoders (weights only)",
                 affects="weights")
    return {"intermediate_size": width, "gated": True, "bias": c.bool("mlp_bias", False)}


def _all_layers_moe(c: ConfigReader) -> bool:
    """Experts on every layer: no field that makes a layer dense holds another value."""
    every = {"first_k_dense_replace": (0,), "mlp_only_layers": ([],), "num_dense_layers": (0,),
             "decoder_sparse_step": (1,), "moe_layer_freq": (1,)}
    return c.has("moe_intermediate_size") and all(
        c.data.get(k) is None or c.data.get(k) in ok for k, ok in every.items())


def _lfm2_ff_dim(c: ConfigReader) -> int:
    """LFM2's MLP width as vLLM builds it (models/lfm2.py Lfm2MLP): with
    block_auto_adjust_ff_dim (Lfm2Config default true) intermediate_size becomes
    int(2 * intermediate_size / 3), times block_ffn_dim_multiplier (default 1.0), rounded up to
    block_multiple_of (default 256). LFM2-VL-1.6B's published 12,288 is 8,192 wide.
    The width itself: block_ff_dim before intermediate_size (transformers' Lfm2Config, which
    vLLM 0.32 loads: `self.intermediate_size = kwargs.pop("block_ff_dim", ...)`), so the first
    LFM2 releases, which state block_ff_dim alone, are read as vLLM reads them."""
    width = c.int("block_ff_dim", "intermediate_size", required="intermediate_size",
                  what="missing (nor block_ff_dim): needed for the weight count")
    if not c.bool("block_auto_adjust_ff_dim", True):
        return width
    width = int(2 * width / 3)
    multiplier = c.data.get("block_ffn_dim_multiplier", 1.0)
    if multiplier is not None:
        width = int(float(multiplier) * width)
    multiple = c.int("block_multiple_of") or 256
    return multiple * -(-width // multiple)
