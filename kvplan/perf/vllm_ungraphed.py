"""vLLM's steps above its largest CUDA graph: the kernels the torch.compile'd model launches
with no graph, and the host time per launch (opt-in, `Efficiency.ungraphed_launch_s`).

What runs (vLLM 0.15.1, read at /tmp/vllmcore58/v0.15.1, tag v0.15.1; 0.11.0 the same paths):
- v1/cudagraph_dispatcher.py:207-211 `dispatch`: a step of more tokens than
  `max_cudagraph_capture_size` gets CUDAGraphMode.NONE (0.11.0: v1/worker/gpu_model_runner.py
  :1926-1935 pads only steps up to the largest size, and v1/cudagraph_dispatcher.py:96-126
  finds no key for a larger one: NONE too), so the piecewise backend
  (compilation/piecewise_backend.py:276 `__call__`) runs each Inductor-compiled piece directly
  and the split ops between them eagerly. The largest size is min(2 x max_num_seqs, 512,
  max_num_batched_tokens) by default (config/vllm.py:1122-1136;
  kvplan.engines.vllm.budget.vllm_cuda_graph_sizes).
- The pieces are split at the attention ops (config/compilation.py:623-636 `_attention_ops`,
  set at :949) and, in 0.15.1, at `vllm::unified_kv_cache_update` (:957): per attention layer
  two eager ops, the KV write (reshape_and_cache_flash) and the attention kernel (0.11.0:
  one split op, v1/attention/backends/flash_attn.py:498 writes the KV inside it: the same two
  kernels).
- With the Inductor backend and compilation on, custom_ops defaults to "none"
  (config/vllm.py:698-703; compilation.py:1086-1091 `is_custom_op_enabled`; 0.11.0:
  model_executor/custom_op.py:128-139 `default_on`, off at level PIECEWISE with Inductor):
  RMSNorm (with
  its residual add), RoPE and SiluAndMul run their forward_native, and Inductor generates one
  Triton kernel for each (the residual add fuses into the norm's reduction; the norm cannot
  fuse across the GEMMs, which stay extern cuBLAS calls). The fusion passes that need the
  custom ops (fuse_norm_quant, fuse_act_quant: config/vllm.py:88-102, 124-125) are off; the
  all-reduce + RMSNorm fusion is off by default (fuse_allreduce_rms False, :126).

Counted per decoder layer (`vllm_ungraphed_ops`): input norm (1), qkv_proj (g), [q_norm,
k_norm: 2, Qwen3's per-head norms], rotary (1), KV write (1), attention (1), o_proj (g),
[the TP all-reduce, 1], post-attention norm (1); a dense MLP gate_up_proj (g), SiluAndMul (1),
down_proj (g), [all-reduce]; g = 1 GEMM, 2 for a w8a8 GEMM (its activation quant). A fused-MoE
layer as kvplan.perf.op_counts counts SGLang's (router GEMM, top-k, moe_align_block_size and
its zeroing, the two grouped GEMMs, the activation, moe_sum; +2 quants under FP8; shared
experts): vLLM's fused_moe runs the same kernels as custom ops the compiler does not fuse
(0.15.1 model_executor/layers/fused_moe/fused_moe.py:1600 fused_experts_impl: :1813
moe_align_block_size -> ops.moe_align_block_size (moe_align_block_size.py:90), the w13
invoke_fused_moe_kernel, :1853 apply_moe_activation, the w2 kernel, :1892 ops.moe_sum;
router/fused_topk_router.py:21 ops.topk_softmax).
Plus the embedding, the final norm and the lm_head (3, + an all-gather under TP). Not counted
(None, charged nothing, as before): MLA, recurrent layers, vision towers.

Host time per launch, `VLLM_UNGRAPHED_LAUNCH_S`, derived from a measured public comparison, not
fitted to any serving row: vLLM PR #20059 (github.com/vllm-project/vllm/pull/20059, fhl2000,
2025-06-29), Qwen2.5-1.5B-Instruct, ShareGPT, QPS 1: median TPOT 5.42 ms with piecewise graphs,
5.09 / 5.02 ms with a full graph, 0.33 .. 0.40 ms a step. Piecewise decode launches from the
host what a full graph does not: per attention layer (28) the KV write and the attention (2
launches, the split op) and one graph replay per piece (29 for 28 splits), 28 x 2 + 29 = 85
launches against 1: (0.33 .. 0.40 ms) / 84 = 3.9 .. 4.8 us a launch, 4.4 us taken (the
midpoint). That is a launch from compiled code / a torch custom op with no Python module
around it; SGLang's 70 us per op (PREFILL_LAUNCH_FIT) holds the Python module calls of its
eager model code, which Inductor's wrapper does not run.

Why opt-in (evaluated at commit e1abab3f, frozen before any serving row was run with it;
first evaluation, median |error| default -> with the price). Prospective sets' mean TTFT / mean
TPOT (tests.benches.ttft_forensic): held out 30 79.4 -> 75.6 / 48.3 -> 48.0 %, 31 68.8 -> 68.0 /
62.8 -> 61.9, 53 45.7 -> 45.7 / 45.2 -> 43.5, 53b 82.7 -> 82.7 / 43.5 -> 43.5, 56 39.8 -> 38.3 /
7.4 -> 7.9, 57 72.0 -> 69.6 / 23.1 -> 21.9; 54 55.4 -> 52.4 / 16.5 -> 16.0 and 58 54.4 -> 49.7 /
14.2 -> 14.2 (shaped the hypothesis: ttftwhy59). The sim-to-real sets (vLLM 0.15.1, every stage
and the whole run) get worse: the study's 30 rows TTFT mean 5.0 -> 5.5 %, E2E mean 2.7 -> 5.0 %
(ITL 3.7 -> 2.7); prospective 9 rows ITL 1.8 -> 6.2, E2E 1.2 -> 7.1 (TTFT 16.9 -> 12.1); blind 11
ITL 2.5 -> 6.0, E2E 1.9 -> 5.6 (TTFT 14.0 -> 8.7); offload 24 ITL 1.9 -> 5.5, E2E 2.7 -> 6.9
(TTFT 21.3 -> 18.4). AccelMark (24 levels) unchanged (p50 TTFT 55.0 %, p50 TPOT 19.9 -> 20.1 %).
The launches are also added to the step's GPU time here, though a step this large keeps the GPU
busier than its host: Llama-3.1-8B's 8,192-token step on an H100 is 197 ms of GPU time against
1.4 ms of launches (600 tokens: 14.5 ms), so the CPU runs ahead and the launches hide behind
the kernels; the sum is itself an upper bound of this price. The TTFT gap ttftwhy59 measured
is not vLLM's ungraphed launches, priced as its compiled code launches them.
"""

from __future__ import annotations

from kvplan._util.dtypes import GemmMath
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.layout import ONE_GPU, Layout, check_layout
from kvplan.perf.op_counts import _moe_block_ops
from kvplan.perf.weight_bytes import bytes_per_param
from kvplan.weights.params import count_params

US = 1e-6
# (0.33 + 0.40) / 2 ms over 84 launches (module docstring): 4.35 us, 4.4 us rounded.
VLLM_UNGRAPHED_LAUNCH_S = 4.4 * US


def _g(fp8: bool) -> int:
    return 2 if fp8 else 1


def vllm_ungraphed_ops(spec: ModelSpec, layout: Layout = ONE_GPU,
                       quantization: str | None = None) -> int | None:
    """Kernels one rank of `layout` launches from the host in a vLLM step above its largest
    CUDA graph (module docstring); None where not counted (MLA, recurrent layers, vision)."""
    check_layout(spec, layout)
    if (isinstance(spec.attention, LatentAttention) or spec.recurrent is not None
            or spec.vision is not None):
        return None
    tp = layout.attention_tp
    reduce = 1 if tp > 1 else 0
    fp8, fp8_exp = ({g: m is not GemmMath.bf16
                     for g, m in bytes_per_param(spec, ranks, quantization)[1].items()}
                    for ranks in (tp, layout.expert_shards))
    g = _g(fp8["attention"])
    qk_norm = 2 if spec.per_head_qk_norm else 0
    attention = 1 + g + qk_norm + 1 + 2 + g + reduce + 1
    counts = count_params(spec)
    total = 0
    for i in range(spec.num_hidden_layers):
        if spec.has_attention(i):
            total += attention
        if not spec.has_mlp(i):
            continue
        lp = counts.layers[i]
        if lp.routed_experts and spec.moe is not None:
            total += _moe_block_ops(spec, layout, fp8=fp8_exp["experts"],
                                    shared_fp8=fp8["dense_mlp"])
        elif lp.mlp:
            total += 2 * _g(fp8["dense_mlp"]) + 1 + reduce
    return total + 3 + reduce
