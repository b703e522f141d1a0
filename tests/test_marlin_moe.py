"""vLLM's Marlin fused MoE for MXFP4 experts (kvplan.engines.vllm.moe_kernel
VLLM_MARLIN_MXFP4_MOE, priced by kvplan.perf.moe_kernel): its block chosen by the mean rows per
expert, the padded rows and the activations between its kernels, worked by hand from
gpt-oss-120b's config.json (tests/data/configs/gpt-oss-120b.json: hidden 2,880, intermediate
2,880, 128 experts, top-4, 36 layers, MXFP4 experts; issue 30, gptossa100)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from kvplan._util.dtypes import GemmMath
from kvplan.engines.moe_kernel import MXFP4_EXPERTS, FixedMoeKernels
from kvplan.engines.vllm.moe_kernel import VLLM_MARLIN_MXFP4_MOE, VLLM_MOE_KERNELS
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import MOE_GEMM_SHAPE, device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.moe_kernel import block_rows, padded_rows_factor, routed_expert_formats
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

CONFIG = "tests/data/configs/gpt-oss-120b.json"


def test_marlin_block_follows_the_rows_per_expert() -> None:
    # vllm 0.11.0 fused_marlin_moe.py:99-103: the first b of [8, 16, 32, 48, 64] with
    # M x topk / E / b < 0.9, else 64. gpt-oss-120b (E 128, top-4):
    k = VLLM_MARLIN_MXFP4_MOE
    assert block_rows(k, 100, 128, 4) == 8  # 3.125 rows an expert: 3.125 / 8 = 0.39
    assert block_rows(k, 300, 128, 4) == 16  # 9.375: / 8 = 1.17, / 16 = 0.59
    assert block_rows(k, 1024, 128, 4) == 48  # 32: / 32 = 1.0, / 48 = 0.67
    assert block_rows(k, 2048, 128, 4) == 64  # 64: / 64 = 1.0, none below 0.9: the last
    # gpt-oss-20b (E 32): a 2,048-token step averages 256 rows an expert, block 64.
    assert block_rows(k, 2048, 32, 4) == 64


def test_marlin_padded_rows_by_hand() -> None:
    # A 2,048-token step of gpt-oss-120b: each expert gets X ~ Binomial(2048, 4 / 128) rows,
    # padded to blocks of 64: E[ceil(X / 64)] = 1 + P(X > 64) + P(X > 128) + ... blocks of 64
    # rows against E[X] = 64. Summed here from the binomial pmf directly (math.comb, not the
    # module's log-space sum): P(X > 64) = 0.46682, P(X > 128) < 1e-12, so the GEMMs compute
    # 1.4668x the exact rows.
    n, p = 2048, 4 / 128

    def cdf(m: int) -> float:
        return sum(math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(m + 1))

    blocks = 1 + (1 - cdf(64)) + (1 - cdf(128))
    assert blocks == pytest.approx(1.46682, abs=1e-5)
    assert padded_rows_factor(VLLM_MARLIN_MXFP4_MOE, 2048, 128, 4) == pytest.approx(blocks)


def test_vllm_runs_marlin_for_mxfp4_where_its_backend_says_so() -> None:
    # get_mxfp4_backend (vllm 0.11.0 quantization/mxfp4.py:94-99): Marlin below SM 9.0; Hopper
    # too before 0.11.1 (no triton_kernels in the wheel: kvplan.engines.vllm.mxfp4_backend);
    # SM 10.x FlashInfer (:66-85); SM 12.x Marlin (Triton needs 9.0 <= capability < 11.0 from
    # 0.11.1, 0.15.1 mxfp4.py:152-165).
    def pick(gpu: str, version: str) -> object:
        return VLLM_MOE_KERNELS.kernel(MXFP4_EXPERTS, version=version, gpu=get_gpu(gpu), ep=1,
                                       dp_ranks=1)

    assert pick("A100-80GB", "0.11.0") is VLLM_MARLIN_MXFP4_MOE
    assert pick("A100-80GB", "0.15.1") is VLLM_MARLIN_MXFP4_MOE
    assert pick("H100-80GB", "0.11.0") is VLLM_MARLIN_MXFP4_MOE
    assert pick("H100-80GB", "0.15.1") is None  # Triton's kernel: not priced
    assert pick("MI300X", "0.11.0") is None  # ROCm: not Marlin
    assert pick("B200", "0.11.0") is None  # SM 10.0: FlashInfer's MXFP4 kernels
    assert pick("RTX-5090", "0.15.1") is VLLM_MARLIN_MXFP4_MOE  # SM 12.0: Triton needs < 11.0
    spec = load_model(CONFIG)[0]
    assert set(routed_expert_formats(spec, range(36)).values()) == {MXFP4_EXPERTS}


# The routed experts' fraction in these prefills (moedefault63: the experts' shape table is the
# CUDA presets' default): 2,048 tokens x top-4 / 128 experts = 64 rows per expert, below the
# bf16 table's first point (512 rows), so its first value, 0.34 (MOE_GEMM_SHAPE_BF16; below the
# dense 0.70 it replaces). Marlin dequantizes the MXFP4 experts to bf16 math: the bf16 table.
EXPERTS_FRACTION = 0.34
# Marlin's GEMMs at its padded shapes, TP 1 (tpslope66; tests/test_marlin_padded_shapes.py):
# 2,944 x 3,072 for 2,880 x 2,880.
PADDED_TP1 = 2944 * 3072 / (2880 * 2880)


def test_prefill_step_of_gpt_oss_120b_on_a100_by_hand() -> None:
    # vLLM 0.11.0 on one A100 80GB (312 dense bf16 TFLOPS x 0.34 for the experts, 2.039 TB/s x
    # 0.90), a 2,048-token prefill step (the release's --max-num-batched-tokens on an A100).
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("A100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.11.0")
    kw = {"tokens": 2048, "context": 1, "requests": 1, "logits": 1}
    new = step_time(spec, gpu, eff=eff, **kw)
    old = step_time(spec, gpu, eff=replace(eff, moe_kernel=None), **kw)
    # Experts, per layer and token: 4 experts x (2,880 x 5,760 + 5,760 + 2,880 x 2,880 +
    # 2,880) = 99,567,360 active parameters (weights and biases), 2 FLOPs each: 36 layers x
    # 2,048 x 199,134,720 = 14.68 TFLOP at 312 x 0.34 = 106.08 TFLOPS = 138.4 ms, compute-bound
    # (the MXFP4 weights, ~61 GB, take ~33 ms); Marlin's padded rows multiply it by 1.4668:
    # 203.0 ms; and its padded shapes (tpslope66: intermediate 2,880 -> 2,944, hidden -> 3,072;
    # tests/test_marlin_padded_shapes.py) by 9,043,968 / 8,294,400 = 1.09037: 221.4 ms.
    assert MOE_GEMM_SHAPE.bf16.fraction(2048 * 4 / 128) == EXPERTS_FRACTION
    exact = 36 * 2048 * 2 * 99_567_360 / (312e12 * EXPERTS_FRACTION)
    assert exact == pytest.approx(0.1384, rel=1e-3)
    assert old.by_op["experts"] == pytest.approx(exact, rel=1e-3)
    assert new.by_op["experts"] == pytest.approx(exact * 1.46682 * PADDED_TP1, rel=1e-3)
    assert new.by_op["experts"] == pytest.approx(0.2214, rel=1e-3)
    # swigluoai_and_mul at the padded width: 8,192 pairs x (5,888 read + 2,944 written) x 2 B =
    # 144,703,488 B, the top-k sum at the padded hidden size 8,192 x 3,072 x 2 + 2,048 x 3,072 x
    # 2 = 62,914,560 B, each past its 4 us floor: 36 x (74.85 + 30.28) us = 3.78 ms more.
    bw = 2.039e12 * 0.90
    extra = 36 * (144_703_488 / bw - 4e-6 + 62_914_560 / bw - 4e-6)
    assert new.by_op["small_kernels"] - old.by_op["small_kernels"] == pytest.approx(extra)


def test_marlin_runs_at_hoppers_mma_sync_rate_by_hand() -> None:
    # Marlin issues only Ampere's mma.sync (vllm 0.11.0 csrc/moe/marlin_moe_wna16/
    # marlin_template.h:89-141), which reaches about 2/3 of Hopper's dense peak (gpus.json
    # mma_sync_bf16_dense: H100 SXM 989.5 x 2/3 = 659.667 TFLOPS). The prefill step above on
    # one H100 under vLLM 0.11.0 (Marlin: no triton_kernels in its wheel): 14.68 TFLOP x the
    # padded rows' 1.46682 x the padded shapes' 1.09037 (PADDED_TP1) = 23.48 TFLOP at 659.667
    # x 0.34 (the experts' table at 64 rows, EXPERTS_FRACTION) = 224.3 TFLOPS: 104.7 ms,
    # compute-bound (the ~66 GB of padded MXFP4 weights take ~22 ms at 3.35 TB/s x 0.90); at
    # the wgmma peak it would be 989.5 x 0.34: 69.8 ms, 2/3 of it.
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("H100-80GB")
    assert gpu.peak_mma_sync_bf16_flops_per_s == 659_667 * 10**9
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.11.0")
    assert eff.gemm == 0.70 and eff.moe_gemm is None and eff.moe_gemm_shape is MOE_GEMM_SHAPE
    kw = {"tokens": 2048, "context": 1, "requests": 1, "logits": 1}
    st = step_time(spec, gpu, eff=eff, **kw)
    flops = 36 * 2048 * 2 * 99_567_360 * 1.46682 * PADDED_TP1
    assert st.by_op["experts"] == pytest.approx(flops / (659.667e12 * EXPERTS_FRACTION),
                                                rel=1e-3)
    assert st.by_op["experts"] == pytest.approx(0.10470, rel=1e-3)
    # The same kernel declared wgmma-capable runs at the full peak: 1.5x faster.
    at_peak = step_time(spec, gpu, eff=replace(eff, moe_kernel=FixedMoeKernels(
        ((MXFP4_EXPERTS, replace(VLLM_MARLIN_MXFP4_MOE, mma_sync=False)),))), **kw)
    assert at_peak.by_op["experts"] == pytest.approx(flops / (989.5e12 * EXPERTS_FRACTION),
                                                     rel=1e-3)
    # 0.15.1 runs Triton's triton_kernels on Hopper, not Marlin: no mma.sync kernel priced.
    assert VLLM_MOE_KERNELS.kernel(MXFP4_EXPERTS, version="0.15.1", gpu=gpu, ep=1,
                                   dp_ranks=1) is None


def test_marlin_on_ampere_and_ada_keeps_the_bf16_peak() -> None:
    # mma.sync is Ampere's and Ada's native instruction: no lower rate there (gpus.json sets
    # none), so the A100 test above is unchanged; H20 has no figure read (None).
    for name in ("A100-80GB", "L40S", "RTX-4090", "H20"):
        gpu = get_gpu(name)
        assert gpu.peak_mma_sync_bf16_flops_per_s is None
        assert gpu.peak_flops(GemmMath.bf16, mma_sync=True) == gpu.peak_bf16_flops_per_s
