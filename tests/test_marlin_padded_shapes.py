"""vLLM's Marlin MXFP4 MoE at its padded shapes (kvplan.engines.vllm.moe_kernel
VLLM_MARLIN_MXFP4_MOE pad_width / pad_hidden, kvplan.perf.moe_kernel.kernel_shape; issue 30,
tpslope66), worked by hand from gpt-oss-120b's config.json (tests/data/configs/gpt-oss-120b.json:
hidden 2,880, intermediate 2,880, 128 experts, top-4, 36 layers).

vLLM 0.18.0: quantization/mxfp4.py:321-342 rounds the per-rank intermediate size up to 128 and
the hidden size up to 256 for Marlin; fused_moe/layer.py:245-269 pads gpt-oss's MoE hidden size
alike and runner/default_moe_runner.py:418-424 zero-pads the input to it; fused_marlin_moe.py
:88-199 runs the w13 GEMM at (n 2N, k K) and the w2 GEMM at (n K, k N) with N read from the padded
w2 and K the padded input's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan.engines.moe_kernel import MXFP4_EXPERTS, FixedMoeKernels
from kvplan.engines.vllm.moe_kernel import (
    VLLM_MARLIN_MXFP4_MOE,
    VLLM_TRITON_FP8_BLOCK_MOE,
    VLLM_TRITON_MOE,
)
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import MOE_GEMM_SHAPE, device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.moe_kernel import kernel_shape
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

CONFIG = "tests/data/configs/gpt-oss-120b.json"


def test_marlin_shapes_by_tp_by_hand() -> None:
    # Per-rank intermediate 2,880 / TP rounded up to 128, hidden 2,880 up to 256 (3,072):
    # TP 1: 2,880 -> 2,944 (23 x 128), 2,944 x 3,072 / 2,880^2 = 9,043,968 / 8,294,400 = 1.09037;
    # TP 2: 1,440 -> 1,536; TP 4: 720 -> 768; TP 8: 360 -> 384 (3 x 128): each 16 / 15 x 16 / 15
    # = 256 / 225 = 1.13778.
    k = VLLM_MARLIN_MXFP4_MOE
    assert (k.pad_width, k.pad_hidden) == (128, 256)
    assert kernel_shape(k, 2880, 2880) == (2944, 3072, pytest.approx(9_043_968 / 8_294_400))
    for tp, width in ((2, 1536), (4, 768), (8, 384)):
        assert kernel_shape(k, 2880 // tp, 2880) == (width, 3072, pytest.approx(256 / 225))
    # Already a multiple: no growth (Mixtral-like 14,336 / 8 = 1,792 = 14 x 128, 4,096).
    assert kernel_shape(k, 1792, 4096) == (1792, 4096, 1.0)
    # The Triton kernels pad nothing; no kernel at all, nothing.
    for other in (VLLM_TRITON_MOE, VLLM_TRITON_FP8_BLOCK_MOE, None):
        assert kernel_shape(other, 360, 2880) == (360, 2880, 1.0)


def test_marlin_prefill_step_at_padded_shapes_by_hand() -> None:
    # One H100 of TP 8 under vLLM 0.11.0 (Marlin, no triton_kernels in its wheel), one
    # 2,048-token prefill. Exact shapes: 36 layers x 2,048 tokens x 2 x 99,567,360 active expert
    # parameters / 8 x the padded rows' 1.46682 (64 rows an expert, block 64:
    # tests/test_marlin_moe.py) = 2.69193 TFLOP at the mma.sync rate 659.667 TFLOPS x 0.34
    # (the experts' table at 64 rows) = 224.287 TFLOPS: 12.002 ms, compute-bound (7.6 GB of
    # MXFP4 weights a rank take ~2.5 ms at 3.35 TB/s x 0.90). At Marlin's shapes (384 x 3,072
    # for 360 x 2,880) the FLOPs grow by 256 / 225: 13.656 ms.
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("H100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.11.0")
    # the experts' table at 64 rows an expert (tests/test_marlin_moe.py EXPERTS_FRACTION)
    assert MOE_GEMM_SHAPE.bf16.fraction(2048 * 4 / 128) == 0.34
    kw = {"tokens": 2048, "context": 1, "requests": 1, "logits": 1, "layout": Layout(tp=8)}
    new = step_time(spec, gpu, eff=eff, **kw)
    exact = replace(VLLM_MARLIN_MXFP4_MOE, pad_width=1, pad_hidden=1)
    old = step_time(spec, gpu, eff=replace(eff, moe_kernel=FixedMoeKernels(
        ((MXFP4_EXPERTS, exact),))), **kw)
    flops = 36 * 2048 * 2 * 99_567_360 / 8 * 1.46682
    assert old.by_op["experts"] == pytest.approx(flops / (659.667e12 * 0.34), rel=1e-4)
    assert old.by_op["experts"] == pytest.approx(0.012002, rel=1e-4)
    assert new.by_op["experts"] == pytest.approx(0.013656, rel=1e-4)
    assert new.by_op["experts"] / old.by_op["experts"] == pytest.approx(256 / 225)
    # The activation and the top-k sum at the padded widths: 8,192 pairs x 3 x (384 - 360) x 2 B
    # = 1,179,648 B and 2 x (8,192 + 2,048) x (3,072 - 2,880) = 3,932,160 B more, both kernels
    # past their 4 us floors (17.7 MB and 59.0 MB at 3.015 TB/s: 5.9 and 19.6 us): 36 x
    # 5,111,808 B / (3.35e12 x 0.90) = 61.04 us more.
    assert new.by_op["small_kernels"] - old.by_op["small_kernels"] == pytest.approx(
        36 * 5_111_808 / (3.35e12 * 0.90))
    assert new.by_op["small_kernels"] - old.by_op["small_kernels"] == pytest.approx(61.04e-6,
                                                                                    rel=1e-3)
    # Nothing else in the step moves.
    for op in set(new.by_op) - {"experts", "small_kernels"}:
        assert new.by_op[op] == old.by_op[op], op


def test_marlin_decode_reads_the_padded_weights_by_hand() -> None:
    # A memory-bound decode step (8 requests, one token each) on the same rank reads the touched
    # experts' weights: at 384 x 3,072 in place of 360 x 2,880, 256 / 225 of the bytes. The
    # step's experts op is bytes-bound both ways (8 tokens x top-4 of 128: ~29 experts touched),
    # so it grows by that factor exactly.
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("H100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.11.0")
    kw = {"tokens": 8, "context": 1024, "requests": 8, "phase": "decode",
          "layout": Layout(tp=8)}
    new = step_time(spec, gpu, eff=eff, **kw)
    exact = replace(VLLM_MARLIN_MXFP4_MOE, pad_width=1, pad_hidden=1)
    old = step_time(spec, gpu, eff=replace(eff, moe_kernel=FixedMoeKernels(
        ((MXFP4_EXPERTS, exact),))), **kw)
    assert new.by_op["experts"] > old.by_op["experts"]
    assert new.by_op["experts"] / old.by_op["experts"] == pytest.approx(256 / 225, rel=0.02)
