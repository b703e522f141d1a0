"""An engine's own routed experts' fraction of the peak by rows per expert (issue 30,
moeeng64), as plain data: each engine declares its table in CostTraits.experts_shape, and
kvplan.perf.engine_traits.engine_efficiency puts it in place of the pooled table
(kvplan.perf.efficiency.MOE_GEMM_SHAPE) where `Efficiency.moe_gemm_by_engine` is set
(kvplan.perf.moe_gemm_shape: what a table is, how it is read).

Why per engine: the pooled table is fitted on the three engines' H100 fused-MoE kernel tables
together, and their kernels differ (bf16 at 1,024 rows an expert: SGLang's Triton kernel 0.23,
vLLM's Triton fused_moe 0.50, TensorRT-LLM's CUTLASS MoE 0.62 of the peak, in the tables below).

Each table is fitted by the pooled table's rule (tests.benches.moe_shape_fit.fit_table: the
cases compute-bound by the measured latency's growth with the tokens, a point per power of two
of rows per expert where most of the bucket's cases are fit cases, its value the median
implied fraction, adjacent violators pooled) on that engine's own H100 rows only
(github.com/ai-dynamo/aiconfigurator at 095f58a51, systems/data/h100_sxm/moe/<engine>/
<version>/moe_perf.parquet, balanced routing: tests/data/moe_op/SOURCES.md), by
tests.benches.moe_shape_fit.engine_table; kept to two places. Where the engine's rows make no
point the pooled table has (too few of its cases there are compute-bound), the point is the
pooled table's (marked below). The rule admits points below 512 rows an expert where the
engine's cases are compute-bound there (SGLang bf16, vLLM and TensorRT-LLM block FP8 at 256);
below a table's first point its first value holds (as in the pooled table). H200 and B200
tables held out (tests.benches.moe_shape_fit prints their per-engine tables by the same rule).
The tables are the releases aiconfigurator measured (vLLM 0.19.0, SGLang 0.5.9, TensorRT-LLM
1.2.0rc5) and stand for every release of the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.fitted import Fitted

Points = tuple[tuple[int, float], ...]  # (rows per expert, fraction of the peak), by rows

_TABLE = ("aiconfigurator 095f58a51 systems/data/h100_sxm/moe/{}/moe_perf.parquet, balanced, "
          "the engine's own cases compute-bound by the measured latency's growth with the tokens "
          "(tests.benches.moe_shape_fit.engine_table)")


@dataclass(frozen=True, kw_only=True)
class ExpertsShapeTables:
    """An engine's experts' fraction by rows per expert, a table per math the experts run at
    (bf16; FP8, w8a8 block experts): (rows per expert, fraction of the peak) per point."""

    bf16: Points
    fp8: Points


# vLLM 0.19.0's Triton fused_moe (kernel_source vllm_fused_moe), every point its own: bf16
# 0.464 / 0.496 / 0.542 / 0.542 (28 / 20 / 7 / 7 fit cases), block FP8 0.253 / 0.261 / 0.262 /
# 0.304 / 0.304 (35 / 31 / 18 / 7 / 7).
VLLM_EXPERTS_BF16 = ((512, 0.46), (1024, 0.50), (2048, 0.54), (4096, 0.54))
VLLM_EXPERTS_FP8 = ((256, 0.25), (512, 0.26), (1024, 0.26), (2048, 0.30), (4096, 0.30))
# SGLang 0.5.9's Triton fused MoE (sglang_fused_moe_triton): bf16 0.190 / 0.225 / 0.235 (1,024
# to 4,096 pooled); block FP8 0.315 / 0.330 / 0.485 / 0.494 from 512 rows, and at 256 rows the
# POOLED table's 0.18: 11 of SGLang's 41 block-FP8 cases there are compute-bound, too few for
# a point of its own.
SGLANG_EXPERTS_BF16 = ((256, 0.19), (512, 0.23), (1024, 0.23), (2048, 0.23), (4096, 0.23))
SGLANG_EXPERTS_FP8 = ((256, 0.18), (512, 0.32), (1024, 0.33), (2048, 0.49), (4096, 0.49))
# TensorRT-LLM 1.2.0rc5's PyTorch-flow CUTLASS MoE (moe_torch_flow_cutlass): bf16 0.421 / 0.620
# / 0.793 / 0.797 (above the dense GEMMs' 0.70, which caps it: Efficiency.experts_fraction);
# block FP8 0.175 / 0.202 / 0.217 / 0.346 / 0.346.
TRTLLM_EXPERTS_BF16 = ((512, 0.42), (1024, 0.62), (2048, 0.79), (4096, 0.80))
TRTLLM_EXPERTS_FP8 = ((256, 0.18), (512, 0.20), (1024, 0.22), (2048, 0.35), (4096, 0.35))
VLLM_EXPERTS_BF16_FIT = Fitted(value=VLLM_EXPERTS_BF16, fitted_on=(),
                               source="bf16 experts, " + _TABLE.format("vllm/0.19.0"))
VLLM_EXPERTS_FP8_FIT = Fitted(value=VLLM_EXPERTS_FP8, fitted_on=(),
                              source="block-FP8 experts, " + _TABLE.format("vllm/0.19.0"))
SGLANG_EXPERTS_BF16_FIT = Fitted(value=SGLANG_EXPERTS_BF16, fitted_on=(),
                                 source="bf16 experts, " + _TABLE.format("sglang/0.5.9"))
SGLANG_EXPERTS_FP8_FIT = Fitted(value=SGLANG_EXPERTS_FP8, fitted_on=(),
                                source="block-FP8 experts, " + _TABLE.format("sglang/0.5.9")
                                + "; 256 rows: the pooled table's point")
TRTLLM_EXPERTS_BF16_FIT = Fitted(value=TRTLLM_EXPERTS_BF16, fitted_on=(),
                                 source="bf16 experts, " + _TABLE.format("trtllm/1.2.0rc5"))
TRTLLM_EXPERTS_FP8_FIT = Fitted(value=TRTLLM_EXPERTS_FP8, fitted_on=(),
                                source="block-FP8 experts, " + _TABLE.format("trtllm/1.2.0rc5"))
VLLM_EXPERTS_SHAPE = ExpertsShapeTables(bf16=VLLM_EXPERTS_BF16, fp8=VLLM_EXPERTS_FP8)
SGLANG_EXPERTS_SHAPE = ExpertsShapeTables(bf16=SGLANG_EXPERTS_BF16, fp8=SGLANG_EXPERTS_FP8)
TRTLLM_EXPERTS_SHAPE = ExpertsShapeTables(bf16=TRTLLM_EXPERTS_BF16, fp8=TRTLLM_EXPERTS_FP8)
