"""What a config.json says that kvplan's spec does not hold, said as warnings so the user
knows (weights not counted, partial rotary, MTP modules outside num_hidden_layers)."""

from __future__ import annotations

from kvplan.sources.hf_reader import ConfigReader


def family_notes(c: ConfigReader) -> None:
    """Things a config.json says that the schema does not hold, so the user knows."""
    mt = c.model_type
    if mt == "opt":
        proj = c.data.get("word_embed_proj_dim")
        hidden = c.data.get("hidden_size")
        if proj is not None and proj != hidden:
            c.warn(f"word_embed_proj_dim {proj} != hidden_size {hidden}: the project_in/out "
                   "matrices are not counted, and the embeddings are counted hidden_size wide")
    if mt == "gpt_neox" and c.data.get("rotary_pct") not in (None, 1, 1.0):
        c.warn(f"rotary_pct {c.data['rotary_pct']}: only part of each head rotates; "
               "KV size unchanged")
    nextn = c.data.get("num_nextn_predict_layers")
    if nextn and mt == "deepseek_v4":
        c.warn(f"num_nextn_predict_layers {nextn}: the multi-token-prediction module is not "
               "part of num_hidden_layers, and kvplan does not size DeepSeek-V4 with "
               "--speculative-method mtp (refused)")
    elif nextn:
        c.warn(f"num_nextn_predict_layers {nextn}: the multi-token-prediction module is not "
               "part of num_hidden_layers; its KV counts with --speculative-method mtp, its "
               "weights are not counted")
    moe_freq = c.data.get("moe_layer_freq")
    if moe_freq not in (None, 1) and c.has("first_k_dense_replace"):
        c.warn("moe_layer_freq > 1: kvplan counts every moe_layer_freq-th layer after "
               "first_k_dense_replace as MoE")
