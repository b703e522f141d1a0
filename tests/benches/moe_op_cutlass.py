"""The CUTLASS MoE's traffic (kvplan.perf.moe_kernel.cutlass_traffic, flashmoe60) checked on
aiconfigurator's TensorRT-LLM tables: examples/moe-op-bench.md's section of that name.

vLLM runs TensorRT-LLM's CUTLASS MoE as FlashInferExperts (kvplan.engines.vllm.moe_kernel: 16-bit
experts from 0.20 on Hopper, block FP8 under EP from 0.17); the tables hold no vLLM row of it
(aiconfigurator's vLLM collector calls the Triton fused_moe itself: tests/data/moe_op/SOURCES.md),
but TensorRT-LLM 1.2.0rc5's own rows on H100 and H200 ran the same kernel family
(kernel_source moe_torch_flow_cutlass / moe_torch_flow: CutlassFusedMoE, bf16 and block FP8).
kvplan's TensorRT-LLM engine declares no fused-MoE kernel (weights and exact FLOPs only), so each
row is priced twice by tests.benches.moe_op_bench.moe_price_s: as the engine does, and with the
CUTLASS kernel's traffic (FixedMoeKernels), nothing else changed. A check of the rule on rows
that did not shape it (the rule was frozen at 56d00a26 before this ran), not a rule for
TensorRT-LLM.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

from kvplan.engines.moe_kernel import BF16_EXPERTS, FP8_BLOCK_EXPERTS, FixedMoeKernels
from kvplan.engines.vllm.moe_kernel import VLLM_FI_CUTLASS_FP8_BLOCK_MOE, VLLM_FI_CUTLASS_MOE

CUTLASS = FixedMoeKernels(((BF16_EXPERTS, VLLM_FI_CUTLASS_MOE),
                           (FP8_BLOCK_EXPERTS, VLLM_FI_CUTLASS_FP8_BLOCK_MOE)))
GPUS = ("H100", "H200")

TEXT = (
    "vLLM runs TensorRT-LLM's CUTLASS MoE as FlashInferExperts (16-bit experts from 0.20 on "
    "Hopper, block FP8 under EP from 0.17: kvplan.engines.vllm.moe_kernel), which flashmoe60 "
    "prices as its code moves the activations (kvplan.perf.moe_kernel.cutlass_traffic, read in "
    "flashinfer 0.6.8.post1): the rank's own (token, expert) pairs permuted (read and written), "
    "the gated GEMM's output and the activation, GEMM2's output and the finalize into each "
    "token's row, block FP8's two quantize kernels over the permuted rows; no padded rows (the "
    "tiles are the autotuner's) and the untuned tactic's bytes (no fused activation or "
    "finalize). No vLLM row here ran it; TensorRT-LLM's H100 / H200 rows ran the same kernel "
    "family. kvplan's TensorRT-LLM engine declares no fused-MoE kernel, so the table prices "
    "each of those rows as the engine does (before) and with the CUTLASS traffic (after), "
    "nothing else changed (tests/benches/moe_op_cutlass.py); the rule was frozen before this "
    "ran (56d00a26), and these rows shaped nothing: this is its first evaluation. Prices at "
    "the dense fractions (the default); a ratio below 1 is kvplan pricing the op cheaper than "
    "it ran.")


def lines(rows: list) -> list[str]:
    """Rows of the section's table: TensorRT-LLM's H100 / H200 rows by GPU, experts' dtype and
    tokens a rank: cases, median kvplan / measured and median |ln ratio|, before -> after."""
    from tests.benches.moe_op_bench import QUANT, bucket, bucket_order, moe_price_s

    groups: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        if r.engine != "trtllm" or r.gpu not in GPUS:
            continue
        before = moe_price_s(r) * 1e3 / r.measured_ms
        after = moe_price_s(r, moe_kernel=CUTLASS) * 1e3 / r.measured_ms
        groups[(r.gpu, r.quant, bucket_order(r.tokens), bucket(r.tokens))].append(
            (before, after))
    out = []
    for (gpu, quant, _, name), v in sorted(groups.items()):
        med = [statistics.median(x[i] for x in v) for i in (0, 1)]
        ln = [statistics.median(abs(math.log(x[i])) for x in v) for i in (0, 1)]
        out.append(f"| {gpu} | {QUANT[quant]} | {name} | {len(v)} | {med[0]:.2f} | {med[1]:.2f} "
                   f"| {ln[0]:.3f} | {ln[1]:.3f} |")
    return out


def section(rows: list) -> str:
    head = ("## The CUTLASS MoE's traffic on TensorRT-LLM's tables (flashmoe60)\n\n" + TEXT
            + "\n\n| GPU | experts | tokens | cases | median, engine's price | median, CUTLASS "
              "traffic | median abs ln, engine's | median abs ln, CUTLASS |\n"
              "|---|---|---|---:|---:|---:|---:|---:|\n")
    return head + "\n".join(lines(rows)) + "\n"
