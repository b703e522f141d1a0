"""`python -m tests.benches.trtctxops65`: kvplan's per-op price of issue 29's TensorRT-LLM context
step (DeepSeek-R1 FP8, H200, TP 8 EP 8 without attention DP as the H200 8k recipes run it, two
8,192-token prompts: the saturated server's ~700 ms a step, 2.85 prompts/s measured), with and
without kvplan.perf.trtllm_bytes (the small kernels' bytes, trtctxops65's rule). Printed only,
on no generated page.

The op inventory, read in TensorRT-LLM's PyTorch backend (the 1.1 / 1.2 lines as the code index
stores them; no release tag readable here: kvplan.perf.trtllm_ops, kvplan.perf.trtllm_bytes
name the files and index ids). On one rank, T = 16,384 tokens, 61 layers (3 dense, 58 MoE),
kvplan's price summed over the step:

- kv_a_proj_with_mqa (q_a + kv_a fused, a Linear with no TP mode): 2 x 7,168 x 2,112 FLOPs a
  token, FP8, whole on every rank; q_b_proj (COLUMN), o_proj (ROW): split. kvplan:
  attention_proj 49.8 ms (the down-projections whole on each rank, projections_on_rank).
- kv_b_proj in context (forward_context_default: the MHA-style decompression of the latent,
  512 -> 16 heads x 256 a rank): priced, mla_up_proj 6.1.
- The context FMHA (192 / 128 head dims, causal; FP8 context MLA on SM 90 with the recipes' FP8
  KV cache, faster: trtctx62): attention 70.6, at the bf16 rate.
- The gate (DeepseekV3Gate: cublas_mm, bf16 in, float32 out) and noaux_tc routing: whole on
  every rank, 2 x 7,168 x 256 FLOPs a token. kvplan prices its weights' bytes, not its FLOPs
  (~5 ms at T = 16,384, 58 layers; every engine's omission, left as it is here).
- fused_moe (CUTLASS on SM 90: DeepGEMM-class grouped FP8 GEMMs, permute, quantize,
  finalize), 32 of 256 experts a rank, T x 8 / 8 rows on average: experts 192.2
  (kvplan.perf.moe_kernel's traffic, its FP8 fraction).
- The shared expert (GatedMLP split 2,048 / 8) and the dense MLPs of layers 0-2: mlp 11.1.
- The TP 8 all-reduces, after attention and after the MoE (235 MB a call at T = 16,384):
  tp_all_reduce 140.5.
- The residual RMSNorm after each all-reduce (NCCL past the 8 MB workspace, then
  residualRmsNorm: 8 x 7,168 B a token, twice a layer); the FP8 1x128 quantize before each FP8
  linear (3.03 B an input element); q_a / kv_a layernorms, the latent concat, the k_nope copy,
  the q / k / v concat, the SwiGLU (4 B an element, 6 for SwiGLU): small_kernels, priced at
  the 4 us floor alone before this rule (2.6 ms), their bytes with it (51.4).
- The eager launch (no CUDA graph for a step holding a context request; every op from Python,
  67 us each, kvplan.perf.trtllm_ops): prefill_launch 105.7.

What it showed (trtctxops65; the rule committed at 0eea96a2 before any replay): small_kernels
2.6 -> 51.4 ms, the two-prompt step 580.8 -> 629.6 ms of the ~700 measured; what is left
(~70 ms) is not in the code read: the kernels' own rates (aiconfigurator's tables, trtctx62)
and host time between steps. Replayed (tests.benches.disagg_trtllm_hopper, every row read
before by trtttft61 / trtctx62: SHAPED, none held out), TTFT median ratio kvplan / measured
and rows with TTFT inside [0.75, 1.33], before -> after: H100 FP8 (8) 0.81 -> 0.82, 5 -> 5;
H200 FP8 (25) 0.78 -> 0.87, 10 -> 10; B200 FP8 (18) 0.65 -> 0.70, 6 -> 7; TPOT medians
unchanged (0.86, 0.93, 0.92). The H200 TP 8 EP 8 8k rows move most (cfg675 c128 0.37 -> 0.44,
cfg679 c768 0.37 -> 0.66, cfg673 c512 0.83 -> 1.02, cfg301 c48 0.88 -> 1.05).
Section 3j whole (`python -m tests.benches.disagg_trtllm`, 123 rows, all read before: SHAPED;
before = examples/disagg-bench.md at 38738b15): both inside 56 -> 61, TTFT 63 -> 67, TPOT
98 -> 97, median TTFT 0.86 -> 0.91, TPOT 1.07 -> 1.06; by group (both; TTFT median): b200 fp4
9 -> 10, 1.09 -> 1.14; b200 fp8 6 -> 7, 0.65 -> 0.70; gb200 fp4 8 -> 8, 0.99 -> 1.04 (TPOT
15 -> 14); gb200 fp8 5 -> 5, 0.82 -> 0.87; gb300 fp4 6 -> 7, 1.10 -> 1.10; gb300 fp8 7 -> 9,
1.08 -> 1.08; h100 fp8 5 -> 5; h200 fp8 10 -> 10, 0.78 -> 0.87. The aggregated TensorRT-LLM
rows (aiconfig_agg_parts --trt-prefill) could not be replayed on the shared host in time.
"""

from __future__ import annotations

from contextlib import ExitStack
from unittest.mock import patch

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf import roofline, trtllm_bytes
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout


def breakdown(rule: bool) -> dict[str, float]:
    """kvplan's step in ms by op, with the small kernels' bytes (`rule`) or at the floor."""
    with ExitStack() as stack:
        if not rule:
            stack.enter_context(patch.object(trtllm_bytes, "attention_kernels",
                                             lambda *a, **k: []))
            stack.enter_context(patch.object(roofline, "mlp_kernel_bytes", lambda *a, **k: []))
            stack.enter_context(patch.object(roofline, "separate_norm", lambda *a: False))
        gpu = get_gpu("H200")
        eff = engine_efficiency("trtllm", device_efficiency(gpu), version="1.2.0rc6.post1")
        res = roofline.step_time(load_spec("deepseek-v3"), gpu, tokens=16384, context=8192,
                                 requests=2, phase="prefill", logits=2, kv_dtype="fp8",
                                 layout=Layout(tp=8, ep=8), eff=eff)
    return {"total": res.seconds * 1e3, **{k: v * 1e3 for k, v in res.by_op.items()}}


def main() -> None:
    before, after = breakdown(False), breakdown(True)
    print("| op | floor only ms | with the bytes ms |\n|---|---|---|")
    for k in sorted(after, key=lambda k: -after[k]):
        print(f"| {k} | {before.get(k, 0.0):.1f} | {after[k]:.1f} |")


if __name__ == "__main__":
    main()
