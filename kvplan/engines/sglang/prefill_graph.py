"""SGLang's piecewise CUDA graphs for prefill / extend steps (`SGLANG_PIECEWISE_PREFILL`), read
from the pip wheels (sglang==X, sglang/srt/):

- 0.5.4-0.5.9: opt-in, `enable_piecewise_cuda_graph: bool = False` (server_args.py:450 0.5.4,
  :495 0.5.5.post2, :579 0.5.8.post1, :604 0.5.9); 0.5.3 has no such runner.
- 0.5.10 on: on by default, `disable_piecewise_cuda_graph: bool = False` (server_args.py:637
  0.5.10 and 0.5.10.post1, :665 0.5.11, :765 0.5.13; `--enable-piecewise-cuda-graph` is
  "Deprecated: Piecewise cuda graph is enabled by default", :5479-5481 0.5.10.post1). 0.5.14
  moved it into `cuda_graph_config` with the prefill backend `tc_piecewise` by default
  (model_executor/cuda_graph_config.py:90-91 0.5.14); 0.5.23's default prefill backend is
  `breakable` on CUDA (cuda_graph_config.py:119-123, "Enable BCG by default on CUDA"), whose
  eager ops were not re-counted: the 0.5.10 count stands in for it.
- Turned off (0.5.10.post1 server_args.py:1078-1139 `_handle_piecewise_cuda_graph`; 0.5.13
  :1340-1400 the same list less speculative decoding) for the architectures of
  configs/model_config.py:1352-1358 (0.5.10.post1: DeepseekV32ForCausalLM,
  Qwen3NextForCausalLM, GlmMoeDsaForCausalLM, BailingMoeV2_5ForCausalLM, LLaDAModelLM), DP
  attention, --enable-torch-compile, pipeline parallelism, non-CUDA GPUs (ROCm), an MoE
  all-to-all backend (--moe-a2a-backend, DeepEP), LoRA, multimodal models, GGUF, CPU offload /
  hierarchical cache, deterministic inference, PD disaggregation (`disaggregation_mode !=
  "null"`: a prefill server runs eagerly, and its decode CUDA graphs are turned off too,
  :3251-3254), symmetric memory, EPLB, context parallelism; and for the flashinfer_trtllm /
  flashinfer_mxfp4 MoE runners (:2722-2731, "bypassed topk is incompatible with
  torch.compile"), which SGLang picks by default on SM 10.x (is_sm100_supported: capability
  major 10, utils/common.py:259-262) with no MoE all-to-all (`_sm100_trtllm_moe`).
- Captured steps: up to `piecewise_cuda_graph_max_tokens`, by default the chunked prefill size,
  or 2,048 with an MLA backend (server_args.py:1254-1261); a step is padded to the next
  captured size (model_executor/piecewise_cuda_graph_runner.py:752-759 `replay`) and runs
  eagerly above the largest (`can_run`, :415-430: also with input embeddings or logprobs of
  the prompt).
- What still runs from Python in a captured step (piecewise_cuda_graph_runner.py `replay` and
  `replay_prepare`, model_runner.py:2644-2668 `forward_extend`): the static buffers' copies of
  input_ids, positions and out_cache_loc and the zeroing of their padding (6 ops,
  :600-620); one graph launch per piece -- the model's code between attention calls, so
  attention layers + 1 -- (compilation/compilation_config.py: the split ops are those
  registered by `register_split_op`, only layers/radix_attention.py:139
  `unified_attention_with_output` and radix_linear_attention.py:105); each attention call
  eagerly: `attn_backend.forward` (the KV-cache write, the attention kernel) and the copy into
  the graph's output buffer (radix_attention.py:165-175): 3 ops; the MoE runs inside the
  graph (layers/moe/fused_moe_triton/layer.py:969-979 `moe_forward_piecewise_cuda_graph_impl`
  is a custom op, not a split op); and the logits processor after the compiled model (the
  lm_head and, under TP, its all-gather). Not modelled: a recurrent mixer's split op (Mamba /
  linear attention layers keep the eager count) and the MLA prefill's switch to the absorbed
  path under the graph ("Piecewise CUDA graph is enabled, use MLA for prefill", :1598-1600),
  which changes the GPU time, not the launches.
- The flashinfer_trtllm / flashinfer_mxfp4 rule above is last in 0.5.12 (server_args.py
  :3172-3186, "bypassed topk is incompatible with torch.compile"); 0.5.13's
  `_handle_piecewise_cuda_graph` (server_args.py:1342-1380) has no MoE-runner condition, nor
  0.5.14-0.5.16's (0.5.16 :3688-3760 `_disable_tc_piecewise_cudagraph_if_incompatible`,
  :3762-3815 `_disable_breakable_cudagraph_if_incompatible`): `turned_off_before` 0.5.13.
- Qwen3.5 (`Qwen3_5ForConditionalGeneration`, `Qwen3_5MoeForConditionalGeneration`: multimodal,
  with Gated DeltaNet layers), read from the pip wheels 0.5.15 and 0.5.16 (sglbw65, issue 30):
  0.5.15 makes the breakable CUDA graph (segments between eager break points, no
  torch.compile) the prefill default on CUDA (model_executor/cuda_graph_config.py:95-101
  `default_prefill_backend`) and turns it off for every multimodal model (server_args.py:3374
  0.5.15, "multimodal model"). 0.5.16 keeps it for the architectures of
  `multimodal_breakable_cuda_graph_supported_model_archs` (configs/model_config.py:1785-1788
  0.5.16: exactly these two; :463-468 `is_multimodal_breakable_cuda_graph_supported`),
  "Multimodal prefill replay faults under BCG; allowlisted archs opt back in"
  (server_args.py:3801-3805 0.5.16; the default at cuda_graph_config.py:95-104). A text-only
  batch replays it (model_executor/runner/prefill_cuda_graph_runner.py:675-720 `can_run_graph`:
  eager with input embeddings, a prefix under an MLA model's MHA companion layers, return
  logprob without the eager tail, or above the largest captured size, by default the chunked
  prefill size, server_args.py:4014-4024 0.5.16). Each full-attention layer breaks as before
  (layers/radix_attention.py:235-236, :401 `breakable_unified_attention_with_output =
  eager_on_graph(True)`); each linear-attention layer breaks at
  `bcg_unified_linear_attention_with_output` (layers/radix_linear_attention.py:96-103, :159),
  which runs the backend's forward_extend eagerly and copies its output into the graph's buffer
  (:154, one op: `recurrent_split_copy_ops`). The backend's ops are GatedDeltaNetOps's count
  (kvplan.perf.op_counts), read at 0.5.6: 0.5.16's layers/attention/linear/gdn_backend.py
  :445-653 forward_extend (a fused q/k/v split kernel, the state gathers only for a strided
  pool) was not re-counted; the 0.5.6 count stands in."""

from __future__ import annotations

from kvplan.engines.prefill_graph import PrefillGraph
from kvplan.engines.sglang.quant_methods import sglang_method
from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec

# Where SGLang 0.5.10.post1 sets --moe-runner-backend flashinfer_trtllm by default on SM 10.x
# (server_args.py `_handle_model_specific_adjustments`), by config.json architecture: the
# quantizations (SGLang's name for the checkpoint's method, None: unquantized) it does so for.
# DeepSeek-V3 family (:1507-1512, :1614-1657): fp8, modelopt_fp8, modelopt_fp4, modelopt_mixed,
# and an unquantized DeepseekV3ForCausalLM checkpoint is taken as fp8 (:1634-1638; the Kimi
# K2 / K2.5 thinking int4 checkpoints it also picks it for are not told apart here); Llama 4
# (:1859-1864): fp8, modelopt_fp8; Qwen3 MoE / Qwen3.5 (:1952-1976): fp8, modelopt_fp4 or
# none; GLM-4.5 / 4.6 MoE (:2007-2024): modelopt_fp4.
_DEEPSEEK_QUANT = frozenset({"fp8", "modelopt_fp8", "modelopt_fp4", "modelopt_mixed"})
_SM100_TRTLLM_MOE: dict[str, frozenset[str | None]] = {
    "DeepseekV3ForCausalLM": _DEEPSEEK_QUANT | {None},
    **dict.fromkeys(("KimiK25ForConditionalGeneration", "MistralLarge3ForCausalLM",
                     "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM"),
                    _DEEPSEEK_QUANT),
    "Llama4ForConditionalGeneration": frozenset({"fp8", "modelopt_fp8"}),
    **dict.fromkeys(("Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration",
                     "Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration",
                     "Qwen3_5ForConditionalGeneration"),
                    frozenset({"fp8", "modelopt_fp4", None})),
    "Glm4MoeForCausalLM": frozenset({"modelopt_fp4"}),
}


def _sm100_trtllm_moe(spec: ModelSpec, gpu: GPU) -> bool:
    """Whether SGLang runs `spec`'s MoE with flashinfer_trtllm by default on `gpu` (SM 10.x),
    which turns the piecewise prefill graphs off (server_args.py:2722-2731, 0.5.10.post1). The
    architecture is config.json's first (`hf_config.architectures[0]`)."""
    cap = gpu.compute_capability
    if cap is None or cap[0] != 10 or spec.moe is None or not spec.architectures:
        return False
    quants = _SM100_TRTLLM_MOE.get(spec.architectures[0])
    if quants is None:
        return False
    qc = spec.quantization_config
    return (sglang_method(qc) if qc else None) in quants


SGLANG_PIECEWISE_PREFILL = PrefillGraph(
    since="0.5.4", default_since="0.5.10",
    disabled_architectures=frozenset({
        "DeepseekV32ForCausalLM", "Qwen3NextForCausalLM", "GlmMoeDsaForCausalLM",
        "BailingMoeV2_5ForCausalLM", "LLaDAModelLM"}),
    mla_max_tokens=2048, attention_split_ops=3, prepare_ops=6, turned_off=_sm100_trtllm_moe,
    turned_off_before="0.5.13",
    validated_architectures=frozenset({"Qwen3_5ForConditionalGeneration",
                                       "Qwen3_5MoeForConditionalGeneration"}),
    validated_since="0.5.16", recurrent_split_copy_ops=1)
