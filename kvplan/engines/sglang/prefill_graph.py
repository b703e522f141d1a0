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
  flashinfer_mxfp4 MoE runners (:2722-2731), which SGLang picks on SM 10.x for some
  architectures (Kimi K2 int4, DeepSeek-V3 FP4, Llama 4, GLM-4.x MoE: :1633-1657, :1861,
  :1971, :2022; not modelled: kvplan keeps the graph there).
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
  which changes the GPU time, not the launches."""

from __future__ import annotations

from kvplan.engines.prefill_graph import PrefillGraph

SGLANG_PIECEWISE_PREFILL = PrefillGraph(
    since="0.5.4", default_since="0.5.10",
    disabled_architectures=frozenset({
        "DeepseekV32ForCausalLM", "Qwen3NextForCausalLM", "GlmMoeDsaForCausalLM",
        "BailingMoeV2_5ForCausalLM", "LLaDAModelLM"}),
    mla_max_tokens=2048, attention_split_ops=3, prepare_ops=6)
