"""`python -m tests.benches.trtllm_context62 [--kv-fp8] [--fp8-context-mla]`: what a TensorRT-LLM
context-only server does per prompt, read in its code for section 3j's DeepSeek-R1 FP8 rows on
H200 / B200 (issue 29: kvplan's context servers clear prompts about 1.8x faster than measured;
trtctx62). A forensic: no rule changes here, nothing is on a generated page. It prints
disagg_trtllm_hopper's table (the H100 / H200 / B200 FP8 rows, the default replay) under the
counterfactuals the flags name, each a patch of this process only:

- `--kv-fp8`: the rows' KV cache in FP8, as every srt-slurm recipe the rows are matched to
  runs it (tests/data/disagg/srt_slurm_trtllm_recipes.json's 141 versions, read in NVIDIA/
  srt-slurm at their commits: `kv_cache_config: dtype: fp8` on both roles, all of them); the
  replay keeps disagg_rows.MODELS's bf16 for DeepSeek-V3 / R1 FP8 (the checkpoint has no
  kv_cache_quant_algo, TensorRT-LLM's `auto`).
- `--fp8-context-mla` (with `--kv-fp8`): TensorRT-LLM's context MLA in FP8
  (cpp/tensorrt_llm/thop/attentionOp.cpp: `mFP8ContextMLA = (getSMVersion() == 90 || 100 || 103
  || 120) && mKVCacheQuantMode.hasFp8KvCache()`; common/attentionOp.cpp enqueueContext runs
  `invokeMLAContextFp8Quantize` after `invokeMLARopeContext` where it is set, one
  quantizeCopyInputToFp8Kernel over q, k and v, kernels/mlaKernels.cu; merged to main as
  "Hopper Fp8 context mla (#7116)", 2025-08-26, and "FP8 Context MLA integration (#7610)",
  2025-09-19, so in the 1.2 line the rows ran), as kvplan.engines.attention_kernel.
  KvDtypeAttention on compute-capability majors 9 and 10 (its three casts stand for the one
  kernel: two eager launches a layer too many, 61 x 2 x 70 us = 8.5 ms a context step; Hopper's
  FP8 attention fraction is unmeasured: kvplan's `attention` of the FP8 peak).

What they showed (trtctx62, at ddc492c9; the 51 H100 / H200 / B200 FP8 rows of 3j, all read
before: SHAPED; TTFT / TPOT inside [0.75, 1.33], median ratios):

| run | H100 (8) | H200 (25) | B200 FP8 (18) |
|---|---|---|---|
| default | 6 / 6, 0.81 / 0.81 | 3 / 23, 0.54 / 0.97 | 1 / 13, 0.55 / 0.92 |
| --kv-fp8 | 5 / 6, 0.75 / 0.80 | 3 / 23, 0.54 / 0.94 | 0 / 15, 0.55 / 0.92 |
| --kv-fp8 --fp8-context-mla | 5 / 6, 0.75 / 0.80 | 3 / 23, 0.54 / 0.94 | 0 / 15, 0.54 / 0.92 |
| --fitted-kernels | 5 / 6, 0.85 / 0.81 | 12 / 23, 0.87 / 0.96 | 12 / 13, 0.93 / 0.92 |

The recipes' FP8 KV cache doubles kvplan's decode pools, and the rows whose TTFT overshot
because kvplan's generation side ran out of KV come down (h200 cfg334 c512 4.05 -> 0.70,
cfg673 c512 4.22 -> 0.56, b200 cfg549 c4096 1.17 -> 0.49, h100 cfg503 c154 1.29 -> 0.28);
the transfer halves (12 -> 6 ms, 92 -> 46 ms to the TP 8 decoders). FP8 context MLA shortens
the 8,192-token prefills (kvplan's prefill phase of TTFT: h200 DP 8 cfg291 1,007 -> 904 ms,
TP 8 cfg675 351 -> 340) and lengthens the 1,024-token ones by its casts' launches (cfg303
153 -> 166 ms).
Neither narrows the gap: what the engine runs is, if anything, faster than what the replay
prices; the H200 / B200 context servers' missing ~0.3 s a two-prompt 8k step (measured 2.85
prompts/s a TP 8 EP 8 server, about 700 ms a step of two; kvplan's two-prompt 16,384-token
step 435 ms: launch 110, TP all-reduce 141, attention 71, experts 60, projections 31, MLP 11)
is not in any code read. What does close it is measured, not read: `--fitted-kernels`, the
opt-in fitted FP8 fractions (experts FP8_MOE_GEMM 0.20 / MOE_GEMM 0.33 and dense
FP8_DENSE_GEMM 0.48, fitted on aiconfigurator's H100 kernel tables; the TensorRT-LLM 1.2.0rc5
H200 tables put kvplan at 0.35 of its block-FP8 MoE op and 0.64 of its block-FP8 GEMMs at
4k-16k rows: examples/moe-op-bench.md, examples/dense-op-bench.md), moves 47 of the 51 rows
(trtttft61's experts alone: H200 0.81, B200 0.91); they stay opt-in (trtfp8moe61: the held-out
aggregated Qwen3-235B-FP8 H100 rows get worse with the experts' fraction).

What was read (TensorRT-LLM files as the code index stores them, the 1.1 / 1.2 line; no tagged
copy of 1.2.0rc6.post1 could be fetched: PyPI holds a stub, pypi.nvidia.com is unreachable, the
GitHub mirror is 2.5 GB), each candidate of the issue:

1. Context-phase MLA: the prefill runs the decompressed (MHA) form, kv_b_proj then an FMHA over
   192 / 128 head dims, as kvplan prices it (naive form, `attention` of the bf16 peak); with the
   recipes' FP8 KV cache it computes in FP8 on SM 90 and SM 100 (above). Confirmed as a
   difference, ruled out as the gap: it makes the engine's context step shorter, not longer.
2. FP8 block-scale GEMMs on SM 90: the CUTLASS MoE backend (the H200 recipes' moe_config
   backend CUTLASS) runs its grouped GEMMs through TensorRT-LLM's port of DeepGEMM
   (cutlass_kernels/fp8_blockscale_gemm/fp8_blockscale_gemm_kernel.cuh `fp8_grouped_gemm_run`:
   a scale_1x128 activation-quantize kernel, then `grouped_gemm_dispatch`: DeepGEMM's JIT
   GroupedWithOffset kernel, its tile chosen by `get_best_gemm_config(expected_m, ...)`,
   swap-AB below 32 rows an expert on H100 / H200); the dense FP8 linears the same file's
   `fp8_gemm_run` (scale_1x128 then DeepGEMM's normal GEMM). A DeepGEMM-class kernel: nothing
   in the code sets a rate, so kvplan's `gemm` fraction is not contradicted by the code;
   aiconfigurator's measured op (examples/moe-op-bench.md: kvplan 0.35 of it at 4k-16k tokens on
   H200) is the only evidence the op is slower, and it stays the opt-in fitted fraction
   (kvplan.engines.trtllm.moe_kernel). Not decided by code.
3. The context server's batching: the recipes set enable_chunked_prefill false,
   max_batch_size 2 / max_num_tokens 16,640 (H200 8k), 8 / 8,192 (H200 1k), 1 / 8,320 (B200
   8k, attention DP), cuda_graph_config null or enable_padding false (context steps eager in
   any case), disable_overlap_scheduler true: the replay already steps those (sglseat58,
   trtprefill57). Confirmed modelled.
4. The KV transceiver: as trtgap54 / trtdisttft55 read it (py_executor.py
   `_send_disagg_ctx_cache`, `_handle_responses`, `_terminate_ctx_finished_requests`): a
   context-only request leaves active_requests for ctx_in_transmission_requests after its
   step and holds only its KV blocks until the generation side pulls them; the send is polled
   non-blocking. Ruled out as a per-prompt cost (the held KV at the measured rates is under 1%
   of the pool, disagg_trtllm_load).
5. Attention DP / MoE layout: the H200 8k recipes run the context server TP 8 EP 8 without
   attention DP, the H200 1k ones DP 8 EP 8, the B200 8k ones DP 8 with MoE TP 8
   (moe_expert_parallel_size 1), moe_config backend TRTLLM (DEEPGEMM on two): the replay takes
   the recipe's layout where the row is matched to one. Confirmed modelled.
6. MTP: no recipe's prefill or decode sets speculative_config (all named mtp0). Ruled out.
7. Found on the way, not TensorRT-LLM's alone: MLA's down-projections (q_a and
   kv_a_proj_with_mqa, fused) run whole on every TP rank (TensorRT-LLM _torch/modules/
   attention.py class MLA: `kv_a_proj_with_mqa = Linear(hidden_size, q_lora_rank + kv_lora_rank
   + qk_rope_head_dim, ...)` with no mapping or tensor_parallel_mode, where q_b_proj is
   TensorParallelMode.COLUMN; SGLang's ReplicatedLinear and vLLM's the same, kvplan.perf.
   weight_bytes / kvplan.weights.breakdown already count their bytes whole), but kvplan.perf.
   roofline's attention_proj divides their FLOPs by the TP size: 30.3 MFLOPs a token a layer
   counted as 3.8 at TP 8 (an 8,192-token prompt on H200 TP 8: attention_proj 15.4 -> 24.9 ms).
   Tried in place (trtctx62, not committed): it shifts PREFILL_LAUNCH_FIT's refit 70 -> 67 us
   (its fit rows are SGLang DeepSeek TP 8 prefills), and with both the 3j H200 FP8 TTFT median
   stays 0.54, B200 FP8 0.55 -> 0.54 (its context servers run attention DP: only the refit
   moves them). Real, small, and it moves every engine's MLA prefill at TP > 1: left for a task
   of its own.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from dataclasses import replace
from typing import Any
from unittest.mock import patch

from kvplan.engines.attention_kernel import KvDtypeAttention

# The counterfactual's kernel (module docstring, `--fp8-context-mla`).
FP8_CONTEXT_MLA = KvDtypeAttention(
    name="TensorRT-LLM FP8 context MLA (counterfactual)", phases=("prefill",),
    architectures=("DeepseekV3ForCausalLM",), compute_capability_majors=(9, 10),
    kv_dtypes=("fp8",), since="1.2", casts=("q", "k", "v"),
    source="TensorRT-LLM cpp/tensorrt_llm/thop/attentionOp.cpp mFP8ContextMLA; "
           "common/attentionOp.cpp invokeMLAContextFp8Quantize")
DEEPSEEK_FP8 = (("deepseek-ai/DeepSeek-R1", "fp8"), ("deepseek-ai/DeepSeek-V3", "fp8"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kv-fp8", action="store_true", help="the recipes' FP8 KV cache")
    ap.add_argument("--fp8-context-mla", action="store_true",
                    help="TensorRT-LLM's FP8 context MLA on SM 9.x / 10.x (with --kv-fp8)")
    ap.add_argument("--fitted-kernels", action="store_true",
                    help="the opt-in fitted FP8 fractions: experts and dense GEMMs")
    args = ap.parse_args()
    from kvplan.analysis.simulate import engine_setups
    from kvplan.perf import engine_traits
    from tests.benches import disagg_rows
    from tests.benches import disagg_trtllm_hopper as hopper

    models = dict(disagg_rows.MODELS)
    for key in DEEPSEEK_FP8:
        config, _, note = models[key]
        models[key] = (config, "fp8", note)
    real = engine_traits.engine_efficiency

    def with_mla(engine: str, *a: Any, **kw: Any) -> Any:
        eff = real(engine, *a, **kw)
        return replace(eff, kv_dtype_attention=(FP8_CONTEXT_MLA,)) if engine == "trtllm" else eff

    with ExitStack() as stack:
        if args.kv_fp8:
            stack.enter_context(patch.object(disagg_rows, "MODELS", models))
        if args.fitted_kernels:
            from kvplan.perf import efficiency
            from tests.benches import fraction_counterfactual as fc
            from tests.benches.moe_gemm_bench import MODES

            stack.enter_context(fc.patched_presets(
                lambda gpu: gpu.platform == "cuda", fp8_dense_gemm=efficiency.FP8_DENSE_GEMM,
                **MODES["fitted"]))
        if args.fp8_context_mla:
            stack.enter_context(patch.object(engine_traits, "engine_efficiency", with_mla))
            stack.enter_context(patch.object(engine_setups, "engine_efficiency", with_mla))
        lines, done = hopper.table()
    print("\n".join([*hopper.summary(done), "", *lines]))


if __name__ == "__main__":
    main()
