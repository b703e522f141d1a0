"""SGLang's fused TP all-reduce + residual add + RMSNorm (flashinfer's trtllm_allreduce_fusion),
by release: one `AllReduceNormFusion` a release that changed where it is on by default, each the
whole rule from its `since` on (kvplan.perf.engine_traits.engine_efficiency keeps the newest
that a launch's release has; kvplan.perf.engine_traits.fusion_applies decides a step). A step
that takes it pays no kernel for the norm after each fused all-reduce (kvplan.perf.roofline)."""

from __future__ import annotations

from kvplan.engines.cost_traits import AllReduceNormFusion

# Fused all-reduce + residual + RMSNorm (kvplan.perf.costmodel: a step that takes it pays no
# kernel for the norm after each fused all-reduce). SGLang 0.5.6 (pip wheels sglang==0.5.6, the
# release of the bench's gpt-oss-120b B200 rows, and 0.5.6.post1, its DeepSeek-R1 B200 rows',
# read alike):
# - server_args.py _handle_model_specific_adjustments: for "DeepseekV3ForCausalLM" ("common to
#   all Deepseek MoE models") `if is_cuda() and is_sm100_supported():` and for
#   "GptOssForCausalLM" `if is_blackwell_supported():`, then "# workaround for
#   https://github.com/flashinfer-ai/flashinfer/issues/2006 / if not self.enable_dp_attention
#   and self.nnodes == 1: self.enable_flashinfer_allreduce_fusion = True" ("Enable FlashInfer
#   AllReduce Fusion on sm100 for GptOssForCausalLM"); no other architecture turns it on, and
#   the flag defaults to False. Kimi-K2's config names DeepseekV3ForCausalLM (model_type
#   kimi_k2); DeepSeek-V3.2 (DeepseekV32ForCausalLM) is another architecture.
# - layers/communicator.py: LayerCommunicator.prepare_mlp (`_gather_hidden_states_and_residual`)
#   runs `layernorm.forward_with_allreduce_fusion(hidden_states, residual)` in place of
#   `tensor_model_parallel_all_reduce` + `layernorm(hidden_states, residual)` when
#   "(_is_sm100_supported or _is_sm90_supported) ... and enable_flashinfer_allreduce_fusion and
#   hidden_states.shape[0] <= 2048"; `should_fuse_mlp_allreduce_with_next_layer` (batch_size <=
#   FUSE_ALLREDUCE_MAX_BATCH_SIZE = 2048, not the last layer, tp_size > 1, no DP attention) lets
#   models/gpt_oss.py GptOssDecoderLayer.forward (and deepseek_v2.py's) skip the MLP / MoE
#   output's all-reduce and mark it `_sglang_needs_allreduce_fusion`, so that the next layer's
#   `prepare_attn` fuses it into its input_layernorm. Per step: every layer's post-attention
#   norm and every input norm but the first layer's.
# - is_sm100_supported is compute capability 10.x (utils/common.py); is_blackwell_supported also
#   admits 12.x, which the communicator's sm90 / sm100 test then refuses: the SM 10.x presets.
#   HGX B200 / B300 nodes hold 8 GPUs (nnodes == 1 up to TP 8); GB200 / GB300 are left out
#   (their node size is not in kvplan's presets).
# Measured, B200 (SGLang PR 7621, https://github.com/sgl-project/sglang/pull/7621, "[b200]
# support trt-llm allreduce fuse rms_norm_add kernel", DeepSeek-R1-FP4 TP 8: "13.5us->8.7us"):
# the fused kernel saves 4.8 us over the all-reduce and the norm, about the one 4-us kernel floor
# kvplan drops per fused all-reduce.
SGLANG_ALLREDUCE_NORM_FUSION_056 = AllReduceNormFusion(
    model_types=frozenset({"gpt_oss", "deepseek_v3", "kimi_k2"}),
    gpus=frozenset({"B200", "B300"}), max_tokens=2048, max_ranks=8, since=None,
    source="sglang 0.5.6 server_args.py _handle_model_specific_adjustments; "
           "layers/communicator.py prepare_mlp, should_fuse_mlp_allreduce_with_next_layer")

# Declared without a release (None): read at 0.5.6 and applied, as before sglh200_68, to every
# release before the next declaration.

# SGLang 0.5.7 (the pip wheel, sglang/srt): server_args.py:1470-1492 (_handle_model_specific_
# adjustments, after the per-architecture blocks) turns enable_flashinfer_allreduce_fusion on,
# where it is not already, for model_arch in DeepseekV3ForCausalLM, GptOssForCausalLM,
# Glm4MoeForCausalLM, Qwen3MoeForCausalLM "and (is_sm90_supported() or
# is_blackwell_supported()) and not self.enable_dp_attention and self.nnodes == 1 and not
# is_h20_device and self.moe_a2a_backend == 'none'" (is_h20_device: the device name holds "H20"
# and not "H200", flashinfer issue 2204). utils/common.py:237-241: is_sm90_supported is compute
# capability 9.x (CUDA 12.3+); :220-225 is_blackwell_supported 10.x and 12.x, of which
# layers/communicator.py:785-791 (prepare_mlp: "(_is_sm100_supported or _is_sm90_supported)
# ... and hidden_states.shape[0] <= 2048") and :560-585 (should_fuse_mlp_allreduce_with_next_
# layer: FUSE_ALLREDUCE_MAX_BATCH_SIZE = 2048, :79; tp_size > 1, no DP attention) keep 9.x and
# 10.x. models/glm4_moe.py:776-797 and models/qwen3_moe.py:777-797 take the fused path as
# deepseek_v2.py:2911-2938 and gpt_oss.py:453-466 do (prepare_mlp, then
# `_sglang_needs_allreduce_fusion` for the next layer's input norm): the same 2 x layers - 1
# norms a step. kvplan's presets: every SM 9.0 one but the H20 (the H100 SXM / PCIe / NVL, H800,
# H200), B200 and B300 (GB200 / GB300 left out as above); config.json model types: deepseek_v3
# and kimi_k2 (DeepseekV3ForCausalLM), gpt_oss, glm4_moe, qwen3_moe.
_SM90 = frozenset({"H100-80GB", "H100-PCIe", "H100-NVL", "H800", "H200"})
_SM100 = frozenset({"B200", "B300"})
_MODEL_TYPES_057 = frozenset({"gpt_oss", "deepseek_v3", "kimi_k2", "glm4_moe", "qwen3_moe"})
SGLANG_ALLREDUCE_NORM_FUSION_057 = AllReduceNormFusion(
    model_types=_MODEL_TYPES_057, gpus=_SM90 | _SM100, max_tokens=2048, max_ranks=8,
    since="0.5.7",
    source="sglang 0.5.7 server_args.py:1470-1492; utils/common.py:220-241; "
           "layers/communicator.py:79, :560-585, :785-791; models/glm4_moe.py:776-797, "
           "qwen3_moe.py:777-797")

# SGLang 0.5.9: server_args.py:1672-1697, the same test with `is_sm100_supported()` for
# is_blackwell_supported() (12.x out, which the communicator refused anyway: same presets) and
# two more architectures, Glm4MoeLiteForCausalLM (model type glm4_moe_lite) and
# KimiK25ForConditionalGeneration (its text config's model type kimi_k2, already named);
# layers/communicator.py:88 (FUSE_ALLREDUCE_MAX_BATCH_SIZE = 2048), :95 (sm90 or sm100).
SGLANG_ALLREDUCE_NORM_FUSION_059 = AllReduceNormFusion(
    model_types=_MODEL_TYPES_057 | {"glm4_moe_lite"}, gpus=_SM90 | _SM100, max_tokens=2048,
    max_ranks=8, since="0.5.9",
    source="sglang 0.5.9 server_args.py:1672-1697; layers/communicator.py:88, :95")

# In release order (engine_efficiency keeps the last one a release has).
SGLANG_ALLREDUCE_NORM_FUSIONS = (SGLANG_ALLREDUCE_NORM_FUSION_056,
                                 SGLANG_ALLREDUCE_NORM_FUSION_057,
                                 SGLANG_ALLREDUCE_NORM_FUSION_059)
