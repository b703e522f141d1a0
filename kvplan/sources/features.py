"""Architecture features that a config.json does not state, by model_type: the one table of
them, applied where every spec is built (kvplan.sources.spec_yaml.parse_spec), so that a bundled
YAML spec and an imported config.json of one architecture get the same fields.

Each feature is a ModelSpec field of the same name (kvplan.model.spec), default False, read by
the cost model (kvplan.perf.op_counts, kvplan.perf.roofline). A spec file may set one
(model_specs/README.md); otherwise it takes this table's value for the spec's model_type. The
engines pick a model class by the architecture, so the architecture's code decides: each entry
names the engine code that establishes it (SGLang 0.5.6, pip wheel sglang==0.5.6, unless said).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.sources.hf_reader import ConfigReader

# The feature fields, as ModelSpec and the spec YAML name them:
# - per_head_qk_norm: RMSNorm of q and of k per head, before RoPE;
# - full_width_qk_norm: one RMSNorm of q (and of k) over all heads (a weight of num_heads x
#   head_dim), so that under attention TP the sum of squares is reduced over the ranks;
# - attention_output_gate: a sigmoid gate per head on the attention output, its logits from the
#   query projection (doubled);
# - shared_expert_gate: a sigmoid gate on the shared expert's output (a linear of one output);
# - shared_expert_in_fused_moe: SGLang runs the one shared expert inside fused_moe (CUDA, no EP);
# - compiled_grouped_topk: the router's biased grouped top-k has no fused SGLang kernel on CUDA
#   (more than 32 experts per group): a torch.compile'd graph of several kernels;
# - triton_causal_conv: SGLang's Mamba2 layers run the Triton causal conv;
# - mtp_own_head: each MTP draft layer holds its own lm head and a replicated eh_proj (read by
#   the weights, kvplan.weights.breakdown, with --speculative-method mtp);
# - head_wise_attn_gate: a g_proj linear (hidden_size -> num_attention_heads, column-split)
#   whose sigmoid scales each query head's attention output (read by the weights);
# - sandwich_norms: each decoder layer normalises the attention and the MLP outputs too, four
#   hidden-size norms instead of two (read by the weights, kvplan.weights.params);
# - rope_table_float32: vLLM builds the rotary cos/sin table in float32 whatever the model dtype
#   (read by the weights, kvplan.weights.base.rope_cache_bytes);
# - attention_sinks: a learned sink logit per query head on every attention layer;
# - expert_biases: each routed expert has gate_up and down biases (both read by the weights,
#   kvplan.weights.params sink_params / expert_bias_params).
# Weights only (kvplan.weights.params; each read in vLLM 0.32.0, models/<file>.py):
# - layernorm_without_bias: every LayerNorm holds a weight and no bias;
# - parallel_block_norm: attention and MLP read one input norm, one norm per layer, not two;
# - lm_head_bias: the untied lm_head (a ParallelLMHead) holds a bias, one value per (padded)
#   vocabulary row of the rank;
# - embedding_layernorm: a LayerNorm (weight and bias) over the token embeddings, held with them;
# - learned_position_offset: the learned position table holds max_position_embeddings + 2 rows;
# - replicated_qk_norm: a q_norm over all query heads and a k_norm over all KV heads (num_heads x
#   head_dim, num_kv_heads x head_dim), whole on every tensor-parallel rank.
# - headwise_qk_norm: a q_norm of (query heads, head_dim) and a k_norm of (KV heads, head_dim),
#   one weight row per head, each rank holding its own heads' rows (a norm per head, no
#   reduction across heads or ranks: not the cost model's full_width_qk_norm).
# The weights also read per_head_qk_norm (q_norm and k_norm of head_dim each) and
# attention_output_gate (num_heads x head_dim more query-projection rows; kvplan.weights.params).
# (A router held in float32, as Step-3.5's, is kvplan.weights.routers' table, by architecture.)
FEATURE_FIELDS = (
    "per_head_qk_norm",
    "full_width_qk_norm",
    "attention_output_gate",
    "shared_expert_gate",
    "shared_expert_in_fused_moe",
    "compiled_grouped_topk",
    "triton_causal_conv",
    "mtp_own_head",
    "head_wise_attn_gate",
    "sandwich_norms",
    "rope_table_float32",
    "attention_sinks",
    "expert_biases",
    "layernorm_without_bias",
    "parallel_block_norm",
    "lm_head_bias",
    "embedding_layernorm",
    "learned_position_offset",
    "replicated_qk_norm",
    "headwise_qk_norm",
)

# A table value that follows the config's `use_qk_norm` (ModelSpec.qk_norm) instead of a fixed
# true or false.
USE_QK_NORM = "use_qk_norm"

ARCHITECTURE_FEATURES: dict[str, dict[str, bool | str]] = {
    # per_head_qk_norm: models/qwen3.py (Qwen3Attention.q_norm / k_norm, `_apply_qk_norm`).
    "qwen3": {"per_head_qk_norm": True},
    # per_head_qk_norm: models/qwen3_moe.py (the same Qwen3Attention norms).
    "qwen3_moe": {"per_head_qk_norm": True},
    # models/qwen3_next.py: per_head_qk_norm (Qwen3HybridAttentionDecoderLayer.q_norm / k_norm,
    # GemmaRMSNorm); attention_output_gate (qkv_proj built with `total_num_heads * (1 +
    # attn_output_gate)` query heads, attn_output_gate defaulting to True as Qwen3-Next's
    # config.json does not set it; `attn_output = attn_output * torch.sigmoid(gate)`);
    # shared_expert_gate (its MoE layers are qwen2_moe.py's Qwen2MoeSparseMoeBlock, below).
    "qwen3_next": {"per_head_qk_norm": True, "attention_output_gate": True,
                   "shared_expert_gate": True},
    # vLLM 0.32 models/qwen3_5.py: Qwen3_5DecoderLayer builds qwen3_next.py's Qwen3NextAttention
    # (q_norm / k_norm of head_dim; qkv_proj with `total_num_heads * (1 + attn_output_gate)`
    # query heads, attn_output_gate true in every Qwen3.5 / 3.6 config.json): per_head_qk_norm,
    # attention_output_gate, as Qwen3-Next (the weight-bytes oracle: qwen3.6-35b-a3b-text).
    "qwen3_5": {"per_head_qk_norm": True, "attention_output_gate": True},
    "qwen3_5_moe": {"per_head_qk_norm": True, "attention_output_gate": True},
    # vLLM 0.32 models/afmoe.py (Trinity): AfmoeAttention builds `gate_proj`, a
    # ColumnParallelLinear(hidden, num_heads x head_dim) whose sigmoid gates the attention output
    # (:216-222), and q_norm / k_norm of head_dim (:225-226); AfmoeDecoderLayer four RMSNorms
    # (input, post_attention, pre_mlp, post_mlp: :327-332).
    "afmoe": {"per_head_qk_norm": True, "attention_output_gate": True, "sandwich_norms": True},
    # sandwich_norms: vLLM 0.32 models/gemma2.py:213-222 Gemma2DecoderLayer (input,
    # post_attention, pre_feedforward and post_feedforward GemmaRMSNorms); models/gemma3.py:
    # the same four (:241-250) and q_norm / k_norm of head_dim (:149-150); models/glm4.py:176-183
    # Glm4DecoderLayer (input, post_attention, post_self_attn, post_mlp). The weight-bytes
    # oracle shrinks gemma-2-9b, gemma-3-27b and glm-4-9b-0414 list them (wgaps2).
    "gemma2": {"sandwich_norms": True},
    "gemma3": {"sandwich_norms": True, "per_head_qk_norm": True},
    "gemma3_text": {"sandwich_norms": True, "per_head_qk_norm": True},
    "glm4": {"sandwich_norms": True},
    # vLLM 0.32 models/gemma4.py:618-627 Gemma4DecoderLayer (the same four norms) and
    # :432-446 q_norm / k_norm of the layer's head_dim (the oracle shrink gemma-4-31b).
    "gemma4": {"sandwich_norms": True, "per_head_qk_norm": True},
    # vLLM 0.32 models/gemma3n.py:511-530 Gemma3nDecoderLayer (the same four norms; its fifth,
    # post_per_layer_input_norm, is counted with kvplan.weights.gemma_blocks) and :347 q_norm, :336
    # k_norm of head_dim (none on KV-shared layers: ModelSpec.projects_kv).
    "gemma3n": {"sandwich_norms": True, "per_head_qk_norm": True},
    # rope_table_float32: vLLM 0.32 models/gpt_oss.py:110-113 OAIAttention builds
    # `get_rope(..., dtype=torch.float32)` (the weight-bytes oracle's gpt-oss-20b: a float32
    # cos_sin_cache of 131,072 x 64). attention_sinks: gpt_oss.py:130-132 OAIAttention.sinks
    # (num_attention_heads // tp). expert_biases: gpt_oss.py:390-401 MLPBlock builds its
    # FusedMoE with has_bias=True (w13_bias, w2_bias). The oracle shrink's 148,224 B kvplan
    # missed: 6 layers x (64 sinks + 4 experts x (2 x 2,048 + 1,024)) x 2 B (wgaps2).
    "gpt_oss": {"rope_table_float32": True, "attention_sinks": True, "expert_biases": True},
    # shared_expert_gate: models/qwen2_moe.py Qwen2MoeSparseMoeBlock._forward_shared_experts,
    # `F.sigmoid(self.shared_expert_gate(hidden_states)) * shared_output`.
    "qwen2_moe": {"shared_expert_gate": True},
    # models/glm4_moe.py (the bench's GLM-4.6 rows ran 0.5.6.post1):
    # - per_head_qk_norm as the config's use_qk_norm: Glm4MoeAttention builds q_norm / k_norm and
    #   runs `q, k = self._apply_qk_norm(q, k)` under `if self.use_qk_norm` (GLM-4.5 / 4.6: true;
    #   GLM-4.5-Air: false).
    # - compiled_grouped_topk: Glm4MoeSparseMoeBlock builds `TopK(use_grouped_topk=True,
    #   num_expert_group=config.n_group, correction_bias=self.gate.e_score_correction_bias,
    #   ...)`; layers/moe/topk.py biased_grouped_topk_gpu takes the fused `moe_fused_gate` only
    #   when `gating_output.shape[1] // num_expert_group <= 32` and
    #   `is_power_of_two(correction_bias.shape[0])` (DeepSeek-V3: 256 experts in 8 groups, 32 per
    #   group) and `kimi_k2_moe_fused_gate` only for 384 experts in one group (Kimi-K2); GLM-4.5 /
    #   4.6 (160 experts, n_group 1) and GLM-4.5-Air (128, n_group 1) have more than 32 experts
    #   per group, so they take `biased_grouped_topk_impl`, decorated
    #   `@torch.compile(dynamic=True)`. Qwen3-MoE (`fused_topk`: topk_softmax) and MiniMax-M2
    #   (`use_grouped_topk` off: topk_sigmoid) launch one kernel.
    # - shared_expert_in_fused_moe: the one shared expert joins fused_moe as an extra expert that
    #   every token picks (top_k + 1): `num_fused_shared_experts = 0 if
    #   disable_shared_experts_fusion else config.n_shared_experts`, kept by
    #   Glm4MoeForCausalLM.determine_num_fused_shared_experts on CUDA (SM 80 or newer) without
    #   expert parallelism or DeepEP; server_args.py sets --disable-shared-experts-fusion only
    #   with the flashinfer_trtllm MoE runner (FP8 / FP4). The shared MLP then launches nothing
    #   of its own and its add to the routed output goes (forward_normal, `shared_output` None);
    #   the dual-stream path is not taken. Not DeepSeek's (models/deepseek_v2.py decides apart;
    #   the bench's DeepSeek rows count the shared expert apart).
    # - mtp_own_head (vLLM models/glm4_moe_mtp.py, as deepseek_mtp.py below): each
    #   Glm4MoeMultiTokenPredictorLayer builds `eh_proj = nn.Linear(2 x hidden, hidden)` and a
    #   SharedHead whose `head` is a ParallelLMHead of its own.
    "glm4_moe": {"per_head_qk_norm": USE_QK_NORM, "compiled_grouped_topk": True,
                 "shared_expert_in_fused_moe": True, "mtp_own_head": True},
    # mtp_own_head: vLLM models/deepseek_mtp.py DeepSeekMultiTokenPredictorLayer (`eh_proj`, an
    # nn.Linear whole on every rank, and `shared_head.head`, a ParallelLMHead per MTP layer; the
    # v1 EAGLE proposer shares only the embedding with the target, as DeepSeekMTP has no
    # top-level lm_head to replace). DeepSeek-V3.2 loads the same DeepSeekMTP. Qwen3-Next and
    # Qwen3.5 do not: qwen3_next_mtp.py's `fc` is a ColumnParallelLinear and its lm_head is the
    # target's (eagle.py: "Detected MTP model. Sharing target model lm_head weights").
    "deepseek_v3": {"mtp_own_head": True},
    # per_head_qk_norm: models/exaone_moe.py ExaoneMoeAttention and models/plamo3.py
    # Plamo3AttentionMixer (q_norm / k_norm = RMSNorm(head_dim)).
    "exaone_moe": {"per_head_qk_norm": True},
    "plamo3": {"per_head_qk_norm": True},
    # per_head_qk_norm: vLLM 0.32 models/lfm2.py:161-162 and lfm2_moe.py:242-243 Lfm2Attention
    # q_layernorm / k_layernorm = RMSNorm(head_dim) (the oracle shrink lfm2-8b-a1b: 512 B).
    "lfm2": {"per_head_qk_norm": True},
    "lfm2_moe": {"per_head_qk_norm": True},
    "deepseek_v32": {"mtp_own_head": True},
    # full_width_qk_norm: MiniMax-M2's q / k RMSNorm spans all heads (config.json "qk_norm_type":
    # "per_layer"): models/minimax_m2.py MiniMaxM2QKRMSNorm._forward_naive (the default; the
    # fused kernel needs SGLANG_USE_FUSED_PARALLEL_QKNORM): `q, k = q.contiguous(),
    # k.contiguous()`, `rms_sumsq_serial(q, k)`, `attn_tp_all_reduce(sum_sq)` (under TP),
    # `rms_apply_serial(...)`; vLLM models/minimax_m2.py likewise all-reduces the variance
    # (MiniMaxText01RMSNormTP). Kept in this table, not read from qk_norm_type, so that `kvplan
    # import` writes the same spec as before.
    "minimax_m2": {"full_width_qk_norm": True},
    # triton_causal_conv: models/nemotron_h.py NemotronHMambaDecoderLayer.forward passes
    # use_triton_causal_conv=True to its MambaMixer2.
    "nemotron_h": {"triton_causal_conv": True},
    # vLLM models/step3p5.py (kvplan.sources.hf_step3p5, which refuses a config without
    # use_head_wise_attn_gate): per_head_qk_norm (Step3p5Attention.q_norm / k_norm, GemmaRMSNorm
    # of head_dim, applied to every layer); head_wise_attn_gate (`self.g_proj =
    # ColumnParallelLinear(hidden_size, self.total_num_heads, bias=False)`, `attn_output *
    # extra_dims.unsqueeze(-1).sigmoid()`). Its float32 router: kvplan.weights.routers.
    "step3p5": {"per_head_qk_norm": True, "head_wise_attn_gate": True},
    # The weight-bytes oracle's gaps (issue 26, wgap26; tests/data/oracle/weight-bytes.json),
    # each read in vLLM 0.32.0 models/<file>.py:
    # - dbrx.py:286-287 (norm_1, norm_2), :352 (norm_f) build nn.LayerNorms, and :353-356 then
    #   drop every module's bias ("Remove the bias term in Linear and LayerNorm").
    "dbrx": {"layernorm_without_bias": True},
    # - gpt_j.py:167 GPTJBlock builds one LayerNorm, ln_1, which feeds attention and MLP alike
    #   (:179); :265-271 the lm_head with bias=True (read at :296).
    "gptj": {"parallel_block_norm": True, "lm_head_bias": True},
    # - PhiForCausalLM is served by the Transformers backend (registry.py:725): transformers'
    #   PhiDecoderLayer builds one input_layernorm (models/phi/modeling_phi.py:257), and the
    #   backend's lm_head is a ParallelLMHead without a bias (models/transformers/causal.py:48-53).
    "phi": {"parallel_block_norm": True},
    # - commandr.py:309 CohereDecoderLayer builds one input_layernorm (weight only) for its
    #   parallel attention and MLP (:319-326); cohere2_moe.py:367 the same. Found by the
    #   command-r-v01 shrink's PP 2 probe (kvplan 32,768 B over on each stage; wgap26).
    # - commandr.py:207 `self.use_qk_norm = getattr(config, "use_qk_norm", False)`, :257-263
    #   q_norm = norm_cls(param_shape=(self.num_heads, self.head_dim)) and k_norm of
    #   (self.num_kv_heads, head_dim), the rank's heads (:184-199: total // tp, KV heads at least
    #   one a rank); LayerNorm (:78-83) or RMSNorm (:104-108), a weight alone. Cohere2 is the
    #   same class (registry.py:85); cohere2_moe.py builds no q / k norm. Found by the
    #   command-r-plus shrink's probe (wgap26b).
    "cohere": {"parallel_block_norm": True, "headwise_qk_norm": USE_QK_NORM},
    "cohere2": {"parallel_block_norm": True, "headwise_qk_norm": USE_QK_NORM},
    "cohere2_moe": {"parallel_block_norm": True},
    # - phimoe.py:551-557 PhiMoEForCausalLM.lm_head = ParallelLMHead(..., bias=True).
    "phimoe": {"lm_head_bias": True},
    # - bloom.py:253-255 BloomModel.word_embeddings_layernorm, an nn.LayerNorm over hidden.
    "bloom": {"embedding_layernorm": True},
    # - opt.py:60-66 OPTLearnedPositionalEmbedding: nn.Embedding(num_embeddings + 2) ("offset
    #   the embedding ids by 2"), built with max_position_embeddings (:215-217).
    "opt": {"learned_position_offset": True},
    # - olmoe.py:164-165 q_norm = RMSNorm(total_num_heads x head_dim), k_norm =
    #   RMSNorm(total_num_kv_heads x head_dim); _apply_qk_norm (:190-202) all-gathers q and k
    #   under TP, so each rank holds both norms whole.
    "olmoe": {"replicated_qk_norm": True},
    # - OLMo-2 and OLMo-3 run on vLLM 0.32's Transformers modeling backend (registry.py
    #   _TRANSFORMERS_SUPPORTED_MODELS: Olmo2ForCausalLM, Olmo3ForCausalLM), which builds
    #   transformers' own attention: transformers 5.19 models/olmo2/modeling_olmo2.py:213-214
    #   (olmo3/modeling_olmo3.py:161-162) q_norm = RMSNorm(num_attention_heads x head_dim),
    #   k_norm = RMSNorm(num_key_value_heads x head_dim), and its TP plan (configuration_olmo2.py:
    #   55-63) gathers q / k / v to full width for them, so each rank holds both norms whole.
    #   Found by the sweep57 weight probe: OLMo-2-0325-32B's shrink held 6,144 more parameters a
    #   layer than kvplan counted (49,152 B over 4 layers), olmo2-7b's and olmo3-7b's 8,192.
    "olmo2": {"replicated_qk_norm": True},
    "olmo3": {"replicated_qk_norm": True},
    # - hy_v3.py:260 `self.use_qk_norm = getattr(config, "qk_norm", False)`, :301-306 q_norm and
    #   k_norm = RMSNorm(head_dim) (float32 only with the HPC attention backend, chosen by hand:
    #   layers/hpc/rope_norm.py:177-182); config.json's qk_norm: `config_features`.
    "hy_v3": {"per_head_qk_norm": USE_QK_NORM},
}


def config_features(c: ConfigReader) -> dict[str, bool]:
    """The spec fields a config.json states beside its model_type's table entry: `qk_norm` (the
    config's use_qk_norm; Hy3's qk_norm, hy_v3.py:260), Granite's attention_sinks
    (`GRANITE_SINK_TYPES`) and Falcon's parallel_block_norm. vLLM
    0.32 models/falcon.py:284-303 FalconDecoderLayer: without parallel_attn an input and a
    post-attention LayerNorm; with it ln_attn and ln_mlp when num_ln_in_parallel_attn is 2 (its
    default under new_decoder_architecture, :287-288: Falcon-40B / 180B), else one
    input_layernorm (Falcon-7B: parallel_attn, FalconConfig's default, true)."""
    out: dict[str, bool] = {}
    if c.bool("use_qk_norm", False) or (c.model_type == "hy_v3" and c.bool("qk_norm", False)):
        out["qk_norm"] = True
    if c.model_type == "falcon" and c.bool("parallel_attn", True):
        stated = c.int("num_ln_in_parallel_attn")
        lns = stated if stated is not None else (
            2 if c.bool("new_decoder_architecture", False) else None)
        if lns != 2:
            out["parallel_block_norm"] = True
    if c.model_type in GRANITE_SINK_TYPES and c.bool(
            "attention_sinks", c.model_type in _GRANITE_SWA_TYPES or c.has("layer_types")):
        out["attention_sinks"] = True
    return out


# Granite's learned sink logits (vLLM 0.32 models/granite.py:83-110 granite_layer_attn_params:
# `has_sink = getattr(config, "attention_sinks", layer_types is not None)`; granite.py:219-221
# and granitemoe.py:208-210 `self.sinks = nn.Parameter(torch.empty(self.num_heads))`, the
# rank's heads, in the model dtype, on every attention layer; granitemoeshared.py:37, :91 builds
# granitemoe.py's GraniteMoeAttention). GraniteSWAConfig and GraniteMoeSWAConfig (transformers
# 5.19 configuration_granitemoe_swa.py:112-117) fill layer_types when the file has none, so
# their layers hold sinks unless `attention_sinks` is false; GraniteConfig, GraniteMoeConfig and
# GraniteMoeSharedConfig define no layer_types: sinks only where the file states layer_types or
# attention_sinks. Granite-4.0-H (granitemoehybrid.py) builds none. The SWA classes are
# registered from vLLM 0.29 (arrivals.json), the release that brought these lines. Found by the
# granite-swash-3b-a600m shrink (tests/data/oracle/weight-bytes.json): vLLM held 8 layers x 20
# heads x 2 B = 320 B more parameters than kvplan counted.
GRANITE_SINK_TYPES = frozenset({"granite", "granitemoe", "granitemoeshared", "granite_swa",
                                "granitemoe_swa"})
_GRANITE_SWA_TYPES = frozenset({"granite_swa", "granitemoe_swa"})


def architecture_features(model_type: str, *, qk_norm: bool) -> dict[str, bool]:
    """Every feature field for `model_type`: the table's value, else False. `qk_norm`: the
    spec's (the config's use_qk_norm), for the entries that follow it (`USE_QK_NORM`)."""
    features = dict.fromkeys(FEATURE_FIELDS, False)
    for name, value in ARCHITECTURE_FEATURES.get(model_type, {}).items():
        features[name] = qk_norm if value == USE_QK_NORM else bool(value)
    return features
