"""The known families' covered cache fields, one row per ``model_type`` (the design and the
readers: kvplan.sources.hf_fields; the config-class defaults: kvplan.sources.hf_defaults).

Each row names the vLLM 0.32 file that builds the family's layers, and every field whose name
says it may shape the cache (`kvplan.sources.hf_unknown.CACHE_WORDS`) that kvplan covers, with
why: read as that file reads it, or shown to change no cache size there. A covered field may
accept only some values (`only`): any other is refused.
"""

from __future__ import annotations

from kvplan.sources.hf_fields_groups import (
    _GPT2,
    _HEAD_DIM_UNREAD,
    _HYBRID_LINEAR,
    _KV,
    _LAYER_NAMES,
    _MAMBA,
    _MLA,
    _MLA_RANKS,
    _MTP,
    _NEMOTRON_H_UNREAD,
    _NO_WINDOW_HYBRID,
    _NOT_BIDIRECTIONAL,
    _NUM_LAYERS,
    _QWEN_WINDOWS,
    _SSM_CFG,
    _TEXT_WINDOW,
    _WEIGHTS,
    _WINDOW_EVERY_LAYER,
    _WINDOW_PER_LAYER,
    AK,
    LZ,
    Covered,
    FamilyFields,
    _ak,
    _fields,
    _gemma3n_layers,
    _lz,
    _why,
    only,
)

__all__ = ["AK", "FAMILY_FIELDS", "LZ", "Covered", "FamilyFields", "only"]

# model_type (as kvplan names the family after unwrapping, kvplan.sources.hf_config) -> its row.

# models/mimo_v2.py MiMoV2FlashDecoderLayer: shapes per layer type
# (kvplan.sources.hf_layer_shapes); mimo_v2.py never reads sliding_window (it clears
# CacheConfig's), attention_chunk_size, add_full_attention_sink_bias nor layer_types.
_MIMO_V2_FIELDS = _ak("models/mimo_v2.py", _KV | _why(
    "read: shapes per layer type (kvplan.sources.hf_layer_shapes)", "v_head_dim",
    "hybrid_layer_pattern", "sliding_window_size", "swa_num_attention_heads",
    "swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim") | _why(
    "not read by models/mimo_v2.py (no cache size)", "sliding_window",
    "attention_chunk_size", "add_full_attention_sink_bias") | _why(
    "a sink logit per head, a rotary base or a V scale (no cache size)",
    "add_swa_attention_sink_bias", "swa_rope_theta", "attention_value_scale") | _why(
    "the q/k/v weights fused or split (unread by 0.32; from 0.33 it pads an fp8 checkpoint's "
    "fused K|V rows to whole scale blocks: weights only)", "attention_projection_layout"))

# DeepSeek's sparse attention (models/deepseek_v32/attention.py): every layer keeps an indexer
# unless IndexCache's index_topk_freq / index_skip_topk_offset / index_topk_pattern skip it
# (attention.py:166-190: no indexer, no indexer cache); kvplan.sources.hf_index_cache reads them.
_DSA = _why("read: the indexer cache", "index_head_dim", "index_n_heads", "index_topk") | _why(
    "rotary layout (no cache size)", "indexer_rope_interleave") | _why(
    "read: the layers with no indexer (IndexCache, kvplan.sources.hf_index_cache)",
    "index_topk_freq", "index_topk_pattern", "index_skip_topk_offset") | _why(
    "read: above 1 refused (pooled indexer keys, kvplan.sources.hf_index_cache)",
    "index_kpool") | {
    # NVIDIA's GLM-5.3-NVFP4: a runtime toggle of an MTP draft's indexer (v1/spec_decode/
    # llm_base_proposer.py:1592-1603, step 0 computes the top-k, later steps reuse it); an MTP
    # layer builds its indexer and its cache whatever it says (attention.py:179-199,
    # deepseek_v2.py:1158-1168), and the target's layers never read it.
    "index_share_for_mtp_iteration": Covered("read only by an MTP draft's proposer; every "
                                             "MTP layer builds its indexer either way"),
    # NVIDIA's GLM-5.x NVFP4 exports list "full" / "shared" per layer; vLLM 0.32's DSA model
    # reads no such field (0.34 reads it instead of index_topk_freq): hf_index_cache refuses a
    # list that disagrees with the layers index_topk_freq skips. SGLang 0.5.20+ reads it first,
    # a layer past its end keeping its indexer (kvplan.engines.sglang.index_cache: its length).
    "indexer_types": Covered("unread by vLLM 0.32's DSA model; checked against the layers "
                             "index_topk_freq skips (kvplan.sources.hf_index_cache); its "
                             "length read for SGLang 0.5.20+"),
    # NVIDIA's GLM-5.3-NVFP4 names every layer "deepseek_sparse_attention"; neither
    # models/deepseek_v32 nor deepseek_v2.py reads layer_types (every layer is sparse MLA).
    "layer_types": Covered("unread by vLLM 0.32's DSA model; every layer is sparse MLA",
                           lambda v: isinstance(v, list)
                           and all(t == "deepseek_sparse_attention" for t in v),
                           "a list of 'deepseek_sparse_attention' only")}

FAMILY_FIELDS: dict[str, FamilyFields] = {
    # ---- Model types A-K (audit-ak).
    # models/apertus.py ApertusAttention: num_key_value_heads, head_dim, layer_types' windows.
    "apertus": _ak("models/apertus.py", _KV | _WINDOW_PER_LAYER),
    # Transformers backend (models/transformers/base.py): config num_key_value_heads, head_dim,
    # per-layer windows from layer_types.
    "arcee": _ak("models/transformers/base.py (ArceeConfig)", _KV | _WINDOW_PER_LAYER),
    "cwm": _ak("models/transformers/base.py (CwmConfig)", _KV | _WINDOW_PER_LAYER),
    # models/afmoe.py: KV heads, head_dim, layer_types' windows (AfmoeConfig's period 4: hf_text)
    "afmoe": _ak("models/afmoe.py", _KV | _WINDOW_PER_LAYER | {"global_attn_every_n_layers": only(
        4, why="AfmoeConfig's layer_types period, as kvplan builds them")} | _why("MoE only",
        "num_dense_layers", "n_group", "num_shared_experts", "num_expert_groups",
        "num_limited_groups", "topk_group", "use_grouped_mm")),
    "glm": _ak("models/transformers/base.py (GlmConfig)", _KV | _WINDOW_PER_LAYER),
    "hunyuan_v1_dense": _ak("models/transformers/base.py (HunYuanDenseV1Config)",
        _KV | _WINDOW_PER_LAYER | _why(
        "not read by HunYuanDenseV1Config nor the backend (no KV shared across layers)",
        "attention_head_dim", "cla_share_factor", "use_cla") | _why(
        "a classification head (weights only)", "add_classification_head")),
    # HYV3Attention: no per-layer window. HYV3DecoderLayer raises "first_k_dense_replace not
    # exist" when the config lacks it (models/hy_v3.py:391-392, every release 0.20.2-0.34.0),
    # and transformers 5.19's HYV3Config has no such field (it builds mlp_layer_types): blind
    # batch 11's hf-internal-testing/HYV3-tiny-random stopped vLLM's CPU build there.
    "hy_v3": _ak("models/hy_v3.py", _KV | _WINDOW_EVERY_LAYER | _why("MoE or precision only",
        "num_shared_experts", "use_grouped_mm", "enable_attention_fp32_softmax",
        "enable_lm_head_fp32", "mlp_layer_types"), required=("first_k_dense_replace",)),
    # models/hyperclovax.py HyperCLOVAXAttention: num_key_value_heads, config.head_dim; no
    # per-layer window (Attention takes CacheConfig's).
    "hyperclovax": _ak("models/hyperclovax.py", _KV | _WINDOW_EVERY_LAYER | _why(
        "training-time dropout (HyperCLOVAX-SEED's remote config; not read by vLLM)",
        "attn_pdrop")),
    # models/bailing_moe.py BailingAttention (Ling; remote BailingMoeConfig, no class
    # defaults): num_key_value_heads, head_dim or hidden / heads; no per-layer window.
    "bailing_moe": _ak("models/bailing_moe.py", _KV | _WINDOW_EVERY_LAYER | _why(
        "weights or compute only (biases, lm_head's norm, shared experts)", "use_qkv_bias",
        "norm_head", "moe_shared_expert_intermediate_size")),
    # models/bloom.py: MHA of hidden / n_head whatever the config says.
    "bloom": _ak("models/bloom.py", _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | _LAYER_NAMES | {
        "num_key_value_heads": Covered("not read (BloomAttention is MHA)")} | _why(
        "weights or compute only", "apply_residual_connection_post_layernorm",
        "attention_softmax_in_fp32", "skip_bias_add", "skip_bias_add_qkv")),
    # models/chatglm.py GLMAttention: multi_query_group_num KV heads when multi_query_attention,
    # head size hidden / heads (kv_channels unread for the cache).
    "chatglm": _ak("models/chatglm.py", _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | _NUM_LAYERS | _why(
        "read: KV heads", "multi_query_attention", "multi_query_group_num") | {
        "num_key_value_heads": Covered("not read by chatglm.py (multi_query_group_num is)"),
        "kv_channels": Covered("not read for the cache (head size hidden / heads)")} | _why(
        "weights or compute only", "add_bias_linear", "add_qkv_bias",
        "apply_query_key_layer_scaling", "apply_residual_connection_post_layernorm",
        "attention_softmax_in_fp32", "post_layer_norm", "fp32_residual_connection")),
    # models/commandr.py, v1 (CohereConfig): no per-layer window.
    "cohere": _ak("models/commandr.py", _KV | _WINDOW_EVERY_LAYER),
    # models/commandr.py, v2: layer_types' sliding layers take sliding_window + 1; the
    # Cohere2Config builds layer_types from sliding_window_pattern.
    "cohere2": _ak("models/commandr.py", _KV | _WINDOW_PER_LAYER | {
        "sliding_window_pattern": Covered("read: layer_types when absent")} | _why(
        "not read by Cohere2Config nor commandr.py", "layer_switch",
        "order_of_interleaved_layers", "use_parallel_block")),
    # models/dbrx.py: attn_config.kv_n_heads (hf_config._dbrx_fields), head size d_model / n_heads.
    "dbrx": _ak("models/dbrx.py", _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | {
        "attn_config": Covered("read: kv_n_heads (clip_qkv, rope_theta: no cache size)"),
        "n_heads": Covered("read: query heads"), "n_layers": Covered("read: layers"),
        "num_key_value_heads": Covered("set from attn_config.kv_n_heads")}),
    # models/nemotron_nas.py: every layer's shape from block_configs.
    # (head size: config.head_dim or hidden / heads, as LlamaAttention takes it.)
    "nemotron-nas": _ak("models/nemotron_nas.py",
        {"block_configs": Covered("read: each layer's attention and FFN"),
                     "head_dim": Covered("read: head size"),
                     "num_key_value_heads": only(None, why="each layer's KV heads come from "
                                                           "block_configs")}),
    # models/deepseek_v2.py DeepseekAttention (model_type deepseek): MHA/GQA of hidden / heads.
    "deepseek": _ak("models/deepseek_v2.py (DeepseekAttention)",
        _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | {
        "num_key_value_heads": Covered("read: KV heads")}),
    "deepseek_v2": _ak("models/deepseek_v2.py", _MLA),
    "deepseek_v3": _ak("models/deepseek_v2.py", _MLA),
    "kimi_k2": _ak("models/deepseek_v2.py", _MLA),
    # DeepSeek-V3.2: the indexer's own cache (kvplan.sources.hf_config reads index_*).
    "deepseek_v32": _ak("models/deepseek_v2.py", _MLA | _DSA),
    # GLM-5 (GlmMoeDsaForCausalLM): on CUDA vLLM builds DeepSeek-V3.2's model for it
    # (models/deepseek_v32/__init__.py, nvidia/model.py), the same MLA + indexer caches.
    "glm_moe_dsa": _ak("models/deepseek_v32/attention.py", _MLA | _DSA),
    "glm4_moe_lite": _ak("models/glm4_moe_lite.py", _MLA),
    # models/ernie45.py is models/llama.py (layer_types' windows). PaddleOCR-VL's flat config
    # (read as ernie4_5: kvplan.sources.hf_config) carries its Paddle code's own fields, which
    # neither models/paddleocr_vl.py nor ernie45.py / llama.py reads (nor transformers 5.19's
    # PaddleOCR-VL classes).
    "ernie4_5": _ak("models/ernie45.py", _KV | _WINDOW_PER_LAYER | _why(
        "PaddleOCR-VL's Paddle-code fields: training dropout, loss index, kernel choice, bias "
        "sharing, image compression (vLLM 0.32 reads none)", "attention_probs_dropout_prob",
        "ignored_index", "use_flash_attention", "weight_share_add_bias", "compression_ratio")),
    # models/ernie45_moe.py: no per-layer window.
    "ernie4_5_moe": _ak("models/ernie45_moe.py", _KV | _WINDOW_EVERY_LAYER | _why(
        "which layers are MoE, shared experts (weights only)", "moe_layer_start_index",
        "moe_layer_end_index", "moe_layer_interval", "moe_num_shared_experts")),
    # models/exaone4.py: layer_types' windows; Exaone4Config builds them from the pattern.
    "exaone4": _ak("models/exaone4.py", _KV | _WINDOW_PER_LAYER | {
        "sliding_window_pattern": Covered("read: layer_types when absent"),
        "mtp_share_layers": Covered("EXAONE-4.5's MTP flag: read by no vLLM 0.32 code")}),
    # models/exaone.py ExaoneBlockAttention: head_dim or hidden / heads, no per-layer window.
    "exaone": _ak("models/exaone.py", _KV | _WINDOW_EVERY_LAYER | _NUM_LAYERS),
    # models/exaone_moe.py ExaoneMoeAttention: num_key_value_heads, head_dim or hidden / heads,
    # each layer's window from layer_types and sliding_windows / sliding_window
    # (kvplan.sources.hf_layer_windows); the MTP fields shape the draft only.
    "exaone_moe": _ak("models/exaone_moe.py", _KV | _WINDOW_PER_LAYER | _why(
        "read: per-layer windows (kvplan.sources.hf_layer_windows)", "sliding_windows",
        "sliding_window_pattern") | _why(
        "the MTP draft's layers (exaone_moe_mtp.py), not the target's cache",
        "mtp_layer_types", "mtp_sliding_windows") | _why(
        "dense versus MoE MLP, expert groups (weights only)", "mlp_layer_types",
        "first_k_dense_replace", "n_group", "topk_group", "num_shared_experts")),
    # models/falcon.py: num_kv_heads (new_decoder_architecture) or multi_query, head size hidden
    # / heads; a config's n_head_kv is not read by FalconConfig (model_type falcon).
    "falcon": _ak("models/falcon.py",
        _WINDOW_EVERY_LAYER | _why("read: KV heads", "num_kv_heads", "multi_query") | _why(
        "weights or compute only", "parallel_attn", "num_ln_in_parallel_attn",
        "apply_residual_connection_post_layernorm")),
    # models/falcon_h1.py: attention and Mamba2 on every layer (attn_layer_indices unread).
    "falcon_h1": _ak("models/falcon_h1.py", _KV | _MAMBA | _NO_WINDOW_HYBRID | {
        "attn_layer_indices": Covered("not read by falcon_h1.py (every layer has both)")} | _why(
        "a scalar multiplier (no cache size)", "attention_in_multiplier",
        "attention_out_multiplier", "ssm_in_multiplier", "ssm_multipliers",
        "ssm_out_multiplier", "lm_head_multiplier", "key_multiplier")),
    # models/mamba.py: the Mamba1 state.
    "falcon_mamba": _ak("models/mamba.py",
        _why("read: Mamba state", "state_size", "conv_kernel") | _why(
        "weights or compute only", "use_conv_bias", "use_mambapy", "use_falcon_mambapy")),
    # models/gpt2.py: MHA of hidden / n_head (head_dim not covered: kvplan's reader would take
    # it). GPT2Model.__init__ (vLLM 0.32 gpt2.py:201-202) asserts both attention-score options
    # false: a config setting either does not start.
    "gpt2": _ak("models/gpt2.py", _WINDOW_EVERY_LAYER | _GPT2 | {
        name: only(None, False, why="a scalar or dtype of the attention scores; vLLM's gpt2.py "
                   "asserts it false (true does not start)")
        for name in ("reorder_and_upcast_attn", "scale_attn_by_inverse_layer_idx")}),
    # Transformers backend (vLLM 0.32 registry.py:715: GPTBigCodeForCausalLM ->
    # TransformersForCausalLM; 0.32 has no gpt_bigcode.py); GPTBigCodeConfig: one KV head when
    # multi_query.
    "gpt_bigcode": _ak("models/transformers/base.py (GPTBigCodeConfig)",
        _WINDOW_PER_LAYER | _GPT2 | {
        "multi_query": Covered("read: KV heads"),
        "num_key_value_heads": Covered("overwritten by GPTBigCodeConfig from multi_query")} | _why(
        "the dtype of the attention scores", "attention_softmax_in_fp32",
        "scale_attention_softmax_in_fp32") | _why(
        # GPT-2's attention-score options, left in GPT-2-derived files
        # (hf-internal-testing/tiny-random-GPTBigCodeForCausalLM): read by neither
        # GPTBigCodeConfig nor modeling_gpt_bigcode.py (transformers 5.19), which the Transformers
        # backend builds, nor by any vLLM 0.32 file but gpt2.py; no cache, weight or numeric
        # change at any value.
        "GPT-2's attention-score options, read by nothing that builds GPTBigCode",
        "reorder_and_upcast_attn", "scale_attn_by_inverse_layer_idx")),
    # models/gpt_j.py: MHA of hidden / n_head.
    "gptj": _ak("models/gpt_j.py", _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | _GPT2),
    # models/gpt_neox.py: MHA of hidden / heads (head_dim not covered: kvplan's reader would
    # take it).
    "gpt_neox": _ak("models/gpt_neox.py", _WINDOW_EVERY_LAYER),
    # models/gemma.py: num_key_value_heads, head_dim; no per-layer window.
    "gemma": _ak("models/gemma.py", _KV | _WINDOW_EVERY_LAYER | _NOT_BIDIRECTIONAL),
    # models/gemma2.py: layer_types' windows (Gemma2Config builds them, alternating).
    "gemma2": _ak("models/gemma2.py", _KV | _WINDOW_PER_LAYER | _NOT_BIDIRECTIONAL | {
        "sliding_window_size": Covered("not read by Gemma2Config nor gemma2.py "
                                       "(sliding_window is)")}),
    # models/gemma3.py: layer_types' windows (Gemma3TextConfig builds them from the pattern).
    "gemma3": _ak("models/gemma3.py", _KV | _WINDOW_PER_LAYER | _NOT_BIDIRECTIONAL | {
        "sliding_window_pattern": Covered("read: layer_types when absent")} | _why(
        "a special token's id", "boi_token_index", "eoi_token_index", "image_token_index")),
    "gemma3_text": _ak("models/gemma3.py", _KV | _WINDOW_PER_LAYER | _NOT_BIDIRECTIONAL | {
        "sliding_window_pattern": Covered("read: layer_types when absent")}),
    # models/gemma3n.py: layer_types' windows, the last num_kv_shared_layers share KV.
    "gemma3n": _ak("models/gemma3n.py", _KV | _WINDOW_PER_LAYER | {
        "num_kv_shared_layers": Covered("read: cross-layer KV sharing")} | _why(
        "compute only", "activation_sparsity_pattern") | _why(
        "read: weights (kvplan.sources.hf_gemma_blocks)", "hidden_size_per_layer_input",
        "vocab_size_per_layer_input", "altup_num_inputs", "laurel_rank"),
        default_layer_types=_gemma3n_layers),
    # models/gemma4.py: sliding and global layer shapes, KV sharing.
    "gemma4": _ak("models/gemma4.py", _KV | _WINDOW_PER_LAYER | _why(
        "read: the global layers' shape", "global_head_dim", "num_global_key_value_heads",
        "attention_k_eq_v") | {
        "num_kv_shared_layers": Covered("read: cross-layer KV sharing"),
        "use_bidirectional_attention": Covered("read: 'all' refused; 'vision' touches image "
                                               "tokens only")} | _why(
        "weights or compute only", "enable_moe_block", "hidden_size_per_layer_input",
        "vocab_size_per_layer_input")),
    # models/glm4.py and glm4_moe.py: no per-layer window.
    "glm4": _ak("models/glm4.py", _KV | _WINDOW_EVERY_LAYER),
    "glm4_moe": _ak("models/glm4_moe.py", _KV | _WINDOW_EVERY_LAYER),
    # models/gpt_oss.py: even layers take sliding_window whatever layer_types says
    # (kvplan.sources.hf_families._gpt_oss_windows).
    "gpt_oss": _ak("models/gpt_oss.py",
        _KV | _why("read: as gpt_oss.py places the windows", "sliding_window",
                          "layer_types")),
    # models/granite.py, granitemoe.py (granite_layer_attn_params): layer_types' windows.
    "granite": _ak("models/granite.py", _KV | _WINDOW_PER_LAYER | _why(
        "a rotary base or sink logits (no cache size)", "layer_rope_theta", "attention_sinks")),
    # MiMoV2FlashForCausalLM: models/mimo_v2.py (_MIMO_V2_FIELDS, above the table).
    "mimo_v2_flash": _MIMO_V2_FIELDS,
    # MiMoV2ForCausalLM (model_type mimo_v2): the same decoder layers (kvplan.sources.
    # hf_layer_shapes).
    "mimo_v2": _MIMO_V2_FIELDS,
    # GraniteSWAForCausalLM: models/granite.py as granite (kvplan.sources.hf_text).
    "granite_swa": _ak("models/granite.py (GraniteSWAConfig)", _KV | _WINDOW_PER_LAYER | _why(
        "a rotary base or sink logits (no cache size)", "layer_rope_theta", "attention_sinks")),
    "granitemoe": _ak("models/granitemoe.py", _HEAD_DIM_UNREAD | _WINDOW_PER_LAYER | {
        "num_key_value_heads": Covered("read: KV heads")} | _why(
        "a rotary base or sink logits (no cache size)", "layer_rope_theta", "attention_sinks")),
    # GraniteMoeSWAForCausalLM: models/granitemoeshared.py over granitemoe.py (kvplan.sources.
    # hf_text): attention of hidden / heads, layer_types' windows.
    "granitemoe_swa": _ak("models/granitemoeshared.py (GraniteMoeSWAConfig)",
                          _HEAD_DIM_UNREAD | _WINDOW_PER_LAYER | {
        "num_key_value_heads": Covered("read: KV heads")} | _why(
        "a rotary base or sink logits (no cache size)", "layer_rope_theta", "attention_sinks")),
    # models/granitemoehybrid.py: attention of hidden / heads (head_dim not covered: kvplan's
    # reader would take it), Mamba2 layers from layer_types.
    "granitemoehybrid": _ak("models/granitemoehybrid.py", _MAMBA | _NO_WINDOW_HYBRID | {
        "num_key_value_heads": Covered("read: KV heads"),
        "layer_types": Covered("read: mamba or attention")}),
    # models/internlm2.py: hidden / heads, no per-layer window.
    "internlm2": _ak("models/internlm2.py", _HEAD_DIM_UNREAD | _WINDOW_EVERY_LAYER | {
        "num_key_value_heads": Covered("read: KV heads"),
        "attn_implementation": Covered("transformers' kernel choice")}),
    # InternLM3ForCausalLM: models/llama.py.
    "internlm3": _ak("models/llama.py (InternLM3ForCausalLM)",
        _KV | _WINDOW_PER_LAYER | {"qkv_bias": Covered("biases (weights only)")}),
    # models/jamba.py: attention of hidden / heads every attn_layer_period-th layer from
    # attn_layer_offset (head_dim not covered: kvplan's reader would take it).
    "jamba": _ak("models/jamba.py", _MAMBA | _NO_WINDOW_HYBRID | _why(
        "read: which layers are attention", "attn_layer_offset", "attn_layer_period") | {
        "num_key_value_heads": Covered("read: KV heads")} | _why(
        "which layers are MoE (weights only)", "expert_layer_offset", "expert_layer_period") | {
        # Jamba-v0.1's remote-code fields: vLLM's MambaMixer always builds the inner RMS norms
        # (models/jamba.py use_rms_norm=True), so only true is what vLLM loads; n_ctx is a
        # context length vLLM 0.32 does not read (model_arch_config_convertor.py's position
        # keys: JambaConfig's max_position_embeddings, default 262144, sets the limit).
        "mamba_inner_layernorms": only(True, why="inner RMS norms of the Mamba mixer (weights "
                                       "only; vLLM builds them always)"),
        "n_ctx": Covered("a context length vLLM does not read")}),
    # models/kimi_linear.py: MLA full layers, KDA layers from linear_attn_config.
    "kimi_linear": _ak("models/kimi_linear.py", _MLA | {
        "linear_attn_config": Covered("read: KDA layers and state"),
        "mla_use_nope": Covered("rotary use of the MLA layers (the oracle case kimi-linear-48b-a3b "
                                "has it true: the latent row is unchanged)")} | _why(
        "MoE routing (compute only)", "num_expert_group", "use_grouped_topk")),
    # models/longcat_flash.py FlashDecoderLayer: two DeepseekV2MLAAttention per decoder layer
    # (kvplan.sources.hf_renamed reads num_layers x 2 MLA layers), the MoE's own field names.
    "longcat_flash": _ak("models/longcat_flash.py", _MLA | {
        "num_layers": Covered("read: decoder layers, two MLA attentions each"),
        "attention_method": only("MLA", why="LongCat's remote-code switch; vLLM builds MLA "
                                             "whatever it says"),
        "moe_topk": Covered("read: experts per token (weights only)")} | _why(
        "a scale folded into the q / kv_a norms' weights at load (no cache size)",
        "mla_scale_q_lora", "mla_scale_kv_lora") | _why(
        "set by kvplan's LongCat reading: which layers are MoE (weights only)",
        "moe_layer_freq", "first_k_dense_replace", "num_experts_per_tok")),
    # ---- Model types L-Z (audit-lz).
    # models/llama.py LlamaAttention (also LLaMAForCausalLM, the text model of llava and
    # llava_next): num_key_value_heads (default the heads), head_dim or hidden / heads,
    # sliding_window per layer_types' sliding layers, else CacheConfig's on every layer
    # (oracle cases llama-3.1-8b-sliding, llama-3.1-8b-layer-types). `use_sliding_window` is a
    # Qwen switch llama.py never reads: refused (kvplan would drop the window).
    "llama": _lz(source="models/llama.py",
                 covered=_fields(_KV, _WINDOW_PER_LAYER, ("qkv_bias",))),
    # models/mistral.py MistralAttention is LlamaAttention. MistralConfig defaults
    # num_key_value_heads 8 and sliding_window 4096 (null: none).
    "mistral": _lz(source="models/mistral.py (LlamaAttention)",
                   covered=_fields(_KV, _WINDOW_PER_LAYER),
                   # hf_defaults' MistralConfig entry, which wrappers' text models take too.
                   shared_defaults=("num_key_value_heads", "sliding_window")),
    # models/phi3.py is LlamaForCausalLM; Phi3Config's sliding_window defaults to null.
    # Phi-4-mini's remote-config fields full_attn_mod (1: every layer full) and lm_head_bias
    # are read by neither (oracle case phi-4-mini).
    "phi3": _lz(source="models/phi3.py (models/llama.py)",
                covered=_fields(_KV, _WINDOW_PER_LAYER, ("full_attn_mod", "lm_head_bias"))),
    # models/phi3v.py builds LlamaForCausalLM (models/llama.py, as "llama") over the whole flat
    # config; embd_layer configures the image embedding (no KV cache).
    "phi3_v": _lz(source="models/phi3v.py (models/llama.py)",
                  covered=_fields(_KV, _WINDOW_PER_LAYER, ("embd_layer",))),
    # models/mixtral.py MixtralAttention: num_key_value_heads, head_dim or hidden / heads, no
    # per-layer window (CacheConfig's sliding_window on every layer). layer_types is not read:
    # refused. MixtralConfig defaults num_key_value_heads 8.
    "mixtral": _lz(source="models/mixtral.py",
                   covered=_fields(_KV, ("sliding_window",), _WEIGHTS)),
    # models/qwen2.py Qwen2Attention: head_dim = hidden / heads (config.head_dim unread),
    # num_key_value_heads (Qwen2Config default 32), windows as _qwen_windows. Also the text
    # model of qwen2_audio and qwen2_5_vl.
    "qwen2": _lz(source="models/qwen2.py", covered=_fields(_KV, _QWEN_WINDOWS)),
    # models/mimo.py: Qwen2Model plus MTP layers.
    "mimo": _lz(source="models/mimo.py (models/qwen2.py)",
                covered=_fields(_KV, _QWEN_WINDOWS, _MTP)),
    # models/qwen2_moe.py Qwen2MoeAttention: head_dim = hidden / heads, num_key_value_heads
    # (Qwen2MoeConfig default 16).
    "qwen2_moe": _lz(source="models/qwen2_moe.py",
                     covered=_fields(_KV, _QWEN_WINDOWS, _WEIGHTS)),
    # models/qwen3.py Qwen3Attention: head_dim (Qwen3Config default 128, not hidden / heads),
    # num_key_value_heads (default 32). Also the text model of qwen3_vl.
    "qwen3": _lz(source="models/qwen3.py",
                 covered=_fields(_KV, _QWEN_WINDOWS)),
    # models/qwen3_moe.py Qwen3MoeAttention: head_dim or hidden / heads (Qwen3MoeConfig has
    # none), num_key_value_heads (default 4). Also the text model of qwen3_vl_moe.
    "qwen3_moe": _lz(source="models/qwen3_moe.py",
                     covered=_fields(_KV, _QWEN_WINDOWS, _WEIGHTS)),
    # models/minicpm.py, models/orion.py: head_dim = hidden / heads (head_dim unread),
    # num_key_value_heads, no per-layer window (CacheConfig's window on every layer).
    "minicpm": _lz(source="models/minicpm.py", covered=_fields(_KV, _TEXT_WINDOW)),
    "orion": _lz(source="models/orion.py", covered=_fields(_KV, _TEXT_WINDOW)),
    # models/minicpm3.py MiniCPM3Attention: MLA from kv_lora_rank, q_lora_rank,
    # qk_nope_head_dim, qk_rope_head_dim, v_head_dim; num_key_value_heads and head_dim unread.
    "minicpm3": _lz(source="models/minicpm3.py",
                    covered=_fields(_MLA_RANKS, ("num_key_value_heads", "head_dim",
                                                  # MiniCPM3Config's nope + rope
                                                  "qk_head_dim"))),
    # models/nemotron.py NemotronAttention: num_key_value_heads, head_dim or hidden / heads, no
    # per-layer window. NemotronConfig leaves num_key_value_heads null when absent, and vLLM
    # 0.32 then fails its ModelConfig validation (transformers' default NemotronConfig, run).
    "nemotron": _lz(source="models/nemotron.py", required=("num_key_value_heads",),
                    covered=_fields(_KV, _TEXT_WINDOW,
                                    # Megatron's name; nemotron.py reads head_dim.
                                    ("kv_channels",))),
    # models/phimoe.py PhiMoEAttention: num_key_value_heads, head_dim or hidden / heads, no
    # per-layer window.
    "phimoe": _lz(source="models/phimoe.py",
                  covered=_fields(_KV, _TEXT_WINDOW, ("lm_head_bias",), _WEIGHTS)),
    # models/plamo3.py Plamo3AttentionMixer: num_key_value_heads, head_dim, each layer's window
    # from the remote Plamo3Config's interleaved_sliding_window (kvplan.sources.
    # hf_layer_windows: window_size, sliding_window_pattern).
    "plamo3": _lz(source="models/plamo3.py",
                  covered=_fields(_KV, _WEIGHTS) | _why(
                      "read: per-layer windows (kvplan.sources.hf_layer_windows)",
                      "window_size", "sliding_window_pattern", "sliding_window") | _why(
                      "RoPE of the sliding / full layers (no cache size)", "rope_local_theta",
                      "rope_global_theta")),
    # models/openpangu.py OpenPanguEmbeddedAttention (kvplan.sources.hf_text "PanguEmbedded"):
    # KV heads, head_dim or hidden / heads, CacheConfig's window on every layer. Its other
    # layouts are refused: MLA (all four MLA fields, lines 790-812: their cache words refuse
    # them here), sink attention (param_sink_number > 0: OpenPanguSinkAttention's sink_len),
    # interleaved_sliding_window (a window per layer index: cache words), a bidirectional
    # encoder (is_causal false) and the sandwich norms (two more norms a layer: weights).
    "PanguEmbedded": _lz(source="models/openpangu.py (OpenPanguEmbeddedAttention)",
                         covered=_fields(_KV, _WINDOW_EVERY_LAYER) | {
        "qkv_bias": Covered("q/k/v biases (weights only: kvplan.sources.hf_families)"),
        "param_sink_number": only(None, 0, why="no sink attention (OpenPanguSinkAttention's "
                                               "sink_len is not modelled)"),
        "is_causal": only(None, True, why="a causal decoder (false builds an encoder)"),
        "sandwich_norm": only(None, False, why="no extra norms (weights)")}),
    # models/olmoe.py, models/stablelm.py: head_dim = hidden / heads, num_key_value_heads, no
    # window.
    "olmoe": _lz(source="models/olmoe.py",
                 covered=_fields(_KV, ("clip_qkv",), _WEIGHTS)),
    "stablelm": _lz(source="models/stablelm.py",
                    covered=_fields(_KV, _WEIGHTS)),
    # models/minimax_m2.py MiniMaxM2Attention: head_dim (MiniMaxM2Config default 128),
    # num_key_value_heads (default 8); no window; MTP modules only for speculative decoding.
    "minimax_m2": _lz(source="models/minimax_m2.py",
                      covered=_fields(_KV, _WEIGHTS, _MTP, (
                          "num_mtp_modules", "mtp_transformer_layers", "use_mtp",
                          # MiniMax-M1's lightning-attention switch per layer;
                          # minimax_m2.py never reads it (every layer full).
                          "attn_type_list"))),
    # models/step3p5.py (kvplan.sources.hf_step3p5, hf_layer_shapes): KV heads
    # num_attention_groups (read as num_key_value_heads), head_dim, attention_other_setting's
    # shape on layer_types' sliding layers, sliding_window on them; moe_layers_enum picks the
    # MoE layers, share_expert_dim the shared expert. moe_every_n_layer / moe_layer_offset /
    # use_moe are Step3p5Config fields models/step3p5.py never reads; use_head_wise_attn_gate
    # adds g_proj (weights only).
    "step3p5": _lz(source="models/step3p5.py",
                   covered=_fields(_KV, _WINDOW_PER_LAYER, _WEIGHTS, (
                       "num_attention_groups", "attention_other_setting", "moe_layers_enum",
                       "share_expert_dim", "n_shared_experts", "moe_every_n_layer",
                       "moe_layer_offset", "use_head_wise_attn_gate", "att_impl_type",
                       "swiglu_limits_shared", "use_rope_layers", "yarn_only_types"))),
    # models/opt.py OPTAttention: one KV head per query head of hidden / heads; no window.
    "opt": _lz(source="models/opt.py",
               covered=_fields(("do_layer_norm_before", "layerdrop",
                                "layer_norm_elementwise_affine"))),
    # Served by the Transformers backend (models/transformers/base.py): KV heads and head size
    # from ModelConfig (model_arch_config_convertor.py get_total_num_kv_heads: n_head_kv,
    # num_kv_heads, num_key_value_heads, the first present -- the aliases are refused here;
    # get_head_size: head_dim, else hidden_size_per_head, else hidden / heads), a window on
    # layer_types' sliding layers. SeedOssConfig defaults num_key_value_heads 8 and head_dim
    # 128 (not hidden / heads).
    "olmo": _lz(source="models/transformers/base.py (OlmoConfig)",
                covered=_fields(_KV, _WINDOW_PER_LAYER, ("clip_qkv",))),
    "olmo3": _lz(source="models/transformers/base.py (Olmo3Config)",
                 covered=_fields(_KV, _WINDOW_PER_LAYER)),
    "seed_oss": _lz(source="models/transformers/base.py (SeedOssConfig)",
                    covered=_fields(_KV, _WINDOW_PER_LAYER, ("attention_out_bias",))),
    "smollm3": _lz(source="models/transformers/base.py (SmolLM3Config)",
                   covered=_fields(_KV, _WINDOW_PER_LAYER, (
                       "use_sliding_window", "no_rope_layers",
                       "no_rope_layer_interval"))),
    # Olmo2, Phi, Starcoder2: the Transformers backend as above; kvplan reads them through
    # kvplan.sources.hf_text (use_sliding_window unread by either).
    "olmo2": _lz(source="models/transformers/base.py (Olmo2Config)",
                 covered=_fields(_KV, _WINDOW_PER_LAYER, _TEXT_WINDOW)),
    "phi": _lz(source="models/transformers/base.py (PhiConfig)",
               covered=_fields(_KV, _WINDOW_PER_LAYER, _TEXT_WINDOW)),
    "starcoder2": _lz(source="models/transformers/base.py (Starcoder2Config)",
                      covered=_fields(_KV, _WINDOW_PER_LAYER, _TEXT_WINDOW)),
    "vaultgemma": _lz(source="models/transformers/base.py (VaultGemmaConfig)",
                      covered=_fields(_KV, _WINDOW_PER_LAYER, _TEXT_WINDOW)),
    # models/qwen3_next.py, qwen3_5.py: attention layers of num_key_value_heads x head_dim on
    # layer_types' full layers (the config class builds them from full_attention_interval),
    # gated delta-net states from linear_*; no window (use_sliding_window unread; a
    # sliding_window is refused). MTP layers only for speculative decoding.
    "qwen3_next": _lz(source="models/qwen3_next.py",
                      covered=_fields(_KV, _HYBRID_LINEAR, _WEIGHTS, _MTP,
                                      ("use_sliding_window",))),
    "qwen3_5": _lz(source="models/qwen3_5.py",
                   covered=_fields(_KV, _HYBRID_LINEAR, _WEIGHTS, _MTP),
                   config_class="qwen3_5_text"),
    "qwen3_5_moe": _lz(source="models/qwen3_5.py",
                       covered=_fields(_KV, _HYBRID_LINEAR, _WEIGHTS, _MTP),
                       config_class="qwen3_5_moe_text"),
    # models/olmo_hybrid.py: head size hidden / heads (head_dim unread), num_key_value_heads,
    # gated delta-net layers from layer_types and linear_*.
    "olmo_hybrid": _lz(source="models/olmo_hybrid.py", head_dim_is_hidden=True,
                       covered=_fields(_KV, _HYBRID_LINEAR, (
                           # the delta rule's sign, A_log and dt ranges (compute)
                           "linear_allow_neg_eigval", "linear_a_log_min",
                           "linear_a_log_max", "linear_dt_min", "linear_dt_max",
                           "linear_dt_init_floor"))),
    # models/nemotron_h.py: attention layers of num_key_value_heads x head_dim where
    # hybrid_override_pattern (layers_block_type first: hf_hybrid) says "*", Mamba-2 states from
    # ssm_state_size, mamba_num_heads, mamba_head_dim, n_groups, conv_kernel; config.sliding_window
    # (every attention layer's window) is not read: refused when set.
    "nemotron_h": _lz(source="models/nemotron_h.py",
                      covered=_fields(_KV, _WEIGHTS, _MTP, (
                          "hybrid_override_pattern", "layers_block_type", "ssm_state_size",
                          "mamba_num_heads", "mamba_head_dim", "n_groups", "conv_kernel",
                          "chunk_size", "use_conv_bias", "mamba_hidden_act", "mamba_proj_bias",
                          "use_mamba_kernels", "mamba_ssm_cache_dtype",
                          "moe_shared_expert_intermediate_size", "moe_latent_size",
                          "moe_shared_expert_overlap", "mtp_hybrid_override_pattern",
                          "mtp_layers_block_type"), _NEMOTRON_H_UNREAD)),
    # models/llama4.py Llama4Attention: num_key_value_heads x config.head_dim; chunked local
    # attention over attention_chunk_size on the layers no_rope_layers marks 1 (RoPE), global
    # on the others (kvplan.sources.hf_hybrid._llama4). layer_types is read by neither.
    # Llama4TextConfig defaults head_dim 128, num_key_value_heads 8, attention_chunk_size 8192.
    "llama4": _lz(source="models/llama4.py",
                  covered=_fields(_KV, _WEIGHTS, (
                      "attention_chunk_size", "no_rope_layers", "no_rope_layer_interval",
                      "layer_types", "attn_scale", "moe_layers", "for_llm_compressor"), {
                      # Llama4TextConfig (transformers 5.19, which vLLM 0.32 loads) types it
                      # bool and refuses the file on another value (Meta's first files: 4).
                      "attn_temperature_tuning": only(True, False, why=(
                          "query temperature tuning, no cache; transformers 5.19 refuses a "
                          "non-boolean, so vLLM 0.32 does not start")),
                      # Meta's pre-release name (ktransformers' Maverick config, blind batch
                      # 18): Llama4TextConfig's field is no_rope_layer_interval
                      # (configuration_llama4.py:168-183 builds no_rope_layers from it); this
                      # one is read by neither it nor models/llama4.py (:184, :324 read
                      # no_rope_layers), whatever its value.
                      "nope_layer_interval": Covered(
                          "not read: Llama4TextConfig's is no_rope_layer_interval, vLLM's "
                          "no_rope_layers")} | _why(
                      "a special token's id (Llama4Config)", "boi_token_index",
                      "eoi_token_index", "image_token_index")),
                  config_class="llama4_text"),
    # models/lfm2.py, lfm2_moe.py: attention layers of num_key_value_heads x hidden / heads
    # (head_dim unread) where layer_types says full_attention (Lfm2Config builds them from
    # full_attn_idxs), short-conv states of conv_L_cache (kvplan.sources.hf_hybrid._lfm2);
    # block_* and conv_* the rest are the MLP's and the conv's weights.
    "lfm2": _lz(source="models/lfm2.py", head_dim_is_hidden=True,
                covered=_fields((
                    "num_key_value_heads", "head_dim", "num_heads", "layer_types",
                    "full_attn_idxs", "conv_L_cache", "conv_bias", "conv_dim", "conv_dim_out",
                    "conv_use_xavier_init", "block_auto_adjust_ff_dim", "block_dim",
                    "block_ff_dim", "block_ffn_dim_multiplier", "block_multiple_of",
                    "block_norm_eps", "block_mlp_init_scale", "block_out_init_scale",
                    "block_use_swiglu", "block_use_xavier_init"))),
    "lfm2_moe": _lz(source="models/lfm2_moe.py", head_dim_is_hidden=True,
                    covered=_fields(_WEIGHTS, ("num_key_value_heads", "head_dim", "layer_types",
                                               "conv_L_cache", "conv_bias", "num_dense_layers"))),
    # models/zamba2.py (kvplan.sources.hf_hybrid._zamba2): one MHA cache of
    # num_attention_heads x attention_head_dim per "hybrid" layer of layers_block_type (KV
    # heads and num_key_value_heads unread; hybrid_layer_ids rebuilt from layers_block_type
    # by Zamba2Config), Mamba-2 states from the mamba_* fields; adapters and the shared
    # blocks' count are weights.
    "zamba2": _lz(source="models/zamba2.py",
                  covered=_fields((
                      "num_key_value_heads", "attention_head_dim", "attention_hidden_size",
                      "layers_block_type", "hybrid_layer_ids", "mamba_d_conv", "mamba_d_state",
                      "mamba_expand", "mamba_headdim", "mamba_ngroups", "n_mamba_heads",
                      "chunk_size", "use_conv_bias", "add_bias_linear", "num_mem_blocks",
                      "use_mem_rope", "use_shared_attention_adapter", "adapter_rank",
                      "kv_channels", "num_query_groups", "use_mamba_kernels", "use_mem_eff_path",
                      # Zamba2Config's alias of layers_block_type, read as such
                      # (its other alias, head_dim -> attention_head_dim, is not:
                      # refused).
                      "layer_types"))),
    # models/mamba.py, mamba2.py: no attention; states from state_size and conv_kernel (Mamba-2:
    # num_heads x head_dim, n_groups); chunk_size is the scan's (compute only).
    "mamba": _lz(source="models/mamba.py",
                 covered=_fields(("state_size", "conv_kernel", "use_conv_bias", "use_mambapy",
                                  "n_layer"), _SSM_CFG)),
    "mamba2": _lz(source="models/mamba2.py",
                  covered=_fields(("state_size", "conv_kernel", "use_conv_bias", "num_heads",
                                   "head_dim", "n_groups", "chunk_size"))),
}
