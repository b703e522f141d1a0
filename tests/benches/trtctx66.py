"""`python -m tests.benches.trtctx66`: issue 29's TensorRT-LLM context step (DeepSeek-R1 FP8, H200,
TP 8 EP 8 without attention DP, two 8,192-token prompts, the recipes' FP8 KV cache, 1.2.0rc6.post1:
~700 ms a step measured, 2.85 prompts/s) priced by op with trtctxops65's rule alone and with
trtctx66's kernels (kvplan.perf.trtllm_bytes, "Added at trtctx66"), each of trtctx66's three
parts switched on alone; then issue 30's NVFP4 step (DeepSeek-R1 NVFP4, B200, TP 8 EP 8, one
8,192-token prompt) without and with fp4_quantize's bytes. Printed only, on no generated page.

What TensorRT-LLM's PyTorch backend runs for a DeepseekV3 context step, op by op (the code
index's copies of the 1.1 / 1.2 lines, ids in kvplan.perf.trtllm_bytes / trtllm_ops), against
kvplan's price (T = 16,384 tokens on every rank, 61 layers, 58 MoE):

- MLA (modules/attention.py forward_impl -> forward_context_default): kv_a_proj_with_mqa (whole
  on every rank), q_a / kv_a layernorms, q_b_proj, the latent concat, kv_b_proj (the k / v
  up-projection of the whole context: mla_up_proj), the k_nope copy and q / k / v concat
  (trtctxops65's bytes), then the attention op: invokeMLARopeContext (RoPE of q's and k's rope
  parts, the latent copied into the paged cache) and, FP8 KV on SM 90 / 100,
  invokeMLAContextFp8Quantize (q / k / v to FP8) before the 192 / 128 FMHA; o_proj. Before
  trtctx66 the RoPE kernel and the FP8 copies were floors only (RoPE: ~1.7 ms of bytes; FP8
  copies: ~5.7 ms). The FMHA itself stays at the bf16 peak (`attention`), as trtctx62 left it.
- MoE (modeling_deepseekv3.py Deepseekv3MoE): the gate (cublas_mm, bf16 -> float32), noaux_tc
  routing, CutlassFusedMoE -> torch.ops.trtllm.fused_moe (block FP8 on Hopper: permute, 1 x 128
  quantize, grouped GEMM, SwiGLU, quantize, grouped GEMM, finalize over all T rows) beside the
  shared expert on the aux stream, then `shared_output + routed_output`. Before trtctx66 only
  the grouped GEMMs were priced (`experts`): the CUTLASS kernel's permute / activation /
  finalize and its quantize kernels (declared in kvplan.engines.trtllm.moe_kernel, priced only
  behind the opt-in fitted fraction) sat at their floors, and the add was a floor.
- The TP all-reduces (NCCL past the 8 MB workspace, then residualRmsNorm: trtctxops65) and the
  eager launches (prefill_launch) unchanged; the sampler and lm_head see two rows.

Not found in the code read: anything more of the size of what is left (the table's last line).

What it showed (trtctx66; the rule committed at de24cc3d before any row was re-evaluated):
the step 623.6 -> 660.0 ms of the ~700 measured (attention op +6.9, CUTLASS MoE kernels +20.3,
MoE output add +9.2; `experts` 192.2 -> 197.9 with the CUTLASS quantize kernels), ~40 ms left:
not in the code read (the kernels' own rates, trtctx62's fitted fractions, and host time between
steps). NVFP4 (issue 30), B200 1 x 8k: fp4_quantize's bytes 197.5 -> 199.5 ms.

Re-evaluated (tests.benches.trtctx66_eval, before = main at b299323e, after = de24cc3d):
- Section 3j (123 rows, all read before by trtttft61 / trtctx62 / trtctxops65: SHAPED, none
  held out): both inside 62 -> 62, TTFT 68 -> 68, TPOT 97 -> 97; median ratio TTFT 0.90 ->
  0.93, TPOT 1.06 -> 1.06; 90 rows move. By group (TTFT median): h200 fp8 (25) 0.85 -> 0.92,
  b200 fp8 (18) 0.69 -> 0.72, b200 fp4 (15) 1.09 -> 1.13, gb200 fp8 0.85 -> 0.88, gb200 fp4
  1.02 -> 1.04, gb300 fp4 / fp8 and h100 fp8 unchanged at two places; inside counts unchanged
  in every group. Band crossings: cfg679 c768 (H200 8k, TP 8) TTFT 0.60 -> 0.92 in, cfg673
  c512 0.99 -> 1.45 out (the longer context step lengthens the queue at the row's load).
- The aggregated page's TensorRT-LLM rows (493 replayed, fixed mode): identical record for
  record: both 115, TTFT 167, TPOT 342, medians 1.50 / 1.11. The simulator's steps price their
  dense part at the decode phase (kvplan.perf.mixed_step MixedStepCost.dense_seconds calls
  step_time without a phase; only the eager launch is read off a prefill step), so neither
  trtctxops65's nor trtctx66's context-step bytes reach them: a gap left open (TensorRT-LLM's
  mixed steps run these kernels too; closed at trtsim67: tests/benches/trtsim67.py).
  CLIENT_WORKLOAD mode on the H200 and B200 rows (193 replayed): identical record for record
  (both 34, TTFT 85, TPOT 79, medians 0.99 / 1.41); its H100 rows not run.
- Light page moved: examples/moe-op-bench.md (kvplan's MoE op vs aiconfigurator's measured
  TensorRT-LLM 1.2.0rc5 kernel tables, not looked at before the freeze): block-FP8 at the dense
  fraction, H100 4k-16k 0.32 -> 0.42, 512-2k 0.78 -> 0.85; H200 4k-16k 0.35 -> 0.41, 512-2k
  0.65 -> 0.69 (closer to 1, still under).
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

VERSION = "1.2.0rc6.post1"
PARTS = {"attention op (RoPE, FP8 q/k/v)": ("attention_op_bytes", lambda *a, **k: []),
         "CUTLASS MoE kernels": ("context_moe_kernel", lambda *a: None),
         "MoE output (add, NVFP4 input quantize)": ("moe_output_bytes", lambda *a, **k: [])}


def breakdown(on: tuple[str, ...], *, model: str = "deepseek-v3", gpu_name: str = "H200",
              tokens: int = 16384, requests: int = 2, fp4: bool = True) -> dict[str, float]:
    """kvplan's step in ms by op with trtctx66's parts `on` (PARTS' keys) and, `fp4` False,
    without fp4_quantize's bytes."""
    with ExitStack() as stack:
        for name, (attr, off) in PARTS.items():
            if name not in on:
                # The attention op's kernels reach roofline through trtllm_bytes
                # (attention_layer_kernels).
                mod = trtllm_bytes if attr == "attention_op_bytes" else roofline
                stack.enter_context(patch.object(mod, attr, off))
        if not fp4:
            stack.enter_context(patch.object(trtllm_bytes, "fp4_quant_bytes", lambda w: 0.0))
        gpu = get_gpu(gpu_name)
        eff = engine_efficiency("trtllm", device_efficiency(gpu), version=VERSION)
        res = roofline.step_time(load_spec(model), gpu, tokens=tokens, context=tokens // requests,
                                 requests=requests, phase="prefill", logits=requests,
                                 kv_dtype="fp8", layout=Layout(tp=8, ep=8), eff=eff)
    return {"total": res.seconds * 1e3, **{k: v * 1e3 for k, v in res.by_op.items()}}


def main() -> None:
    before, after = breakdown(()), breakdown(tuple(PARTS))
    print("DeepSeek-R1 FP8, H200, TP 8 EP 8, 2 x 8,192 tokens (ms)\n")
    print("| op | trtctxops65 | trtctx66 |\n|---|---|---|")
    for k in sorted(after, key=lambda k: -after[k]):
        print(f"| {k} | {before.get(k, 0.0):.1f} | {after[k]:.1f} |")
    print("\n| trtctx66 part alone | step ms | + ms |\n|---|---|---|")
    for name in PARTS:
        t = breakdown((name,))["total"]
        print(f"| {name} | {t:.1f} | {t - before['total']:+.1f} |")
    print(f"\nmeasured ~700 ms a step; left: {700 - after['total']:.0f} ms")
    fp4_model = "tests/data/disagg/deepseek-r1-nvfp4.json"
    kw = {"model": fp4_model, "gpu_name": "B200", "tokens": 8192, "requests": 1}
    b4, a4 = breakdown(tuple(PARTS), fp4=False, **kw), breakdown(tuple(PARTS), **kw)
    print("\nDeepSeek-R1 NVFP4, B200, TP 8 EP 8, 1 x 8,192 tokens: without / with fp4_quantize's "
          f"bytes: step {b4['total']:.1f} -> {a4['total']:.1f} ms, small_kernels "
          f"{b4['small_kernels']:.1f} -> {a4['small_kernels']:.1f}")
    b0 = breakdown((), fp4=False, **kw)
    print(f"(trtctxops65's rule alone there: {b0['total']:.1f} ms)")


if __name__ == "__main__":
    main()
