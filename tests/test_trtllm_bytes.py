"""The bytes of TensorRT-LLM's context-step small kernels (kvplan.perf.trtllm_bytes), worked by
hand for DeepSeek-V3 FP8 (hidden 7,168; MLA: 128 heads, q_lora 1,536, kv_lora 512, qk_nope 128,
qk_rope 64, v 128; 3 dense layers of intermediate 18,432, 58 MoE layers with one shared expert of
2,048) on a TP 8 rank: 16 heads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from unittest.mock import patch

import pytest

from kvplan import load_spec
from kvplan._util.dtypes import GemmMath
from kvplan.engines.base import PrefillOpCount
from kvplan.hardware.gpus import get_gpu
from kvplan.perf import roofline, trtllm_bytes
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.perf.trtllm_bytes import (
    attention_kernel_bytes,
    mlp_kernel_bytes,
    norm_bytes,
    separate_norm,
)

H = 7168
# Per token, one MLA block at TP 8, FP8 linears (quantize: 2 + 1 + 4 / 128 = 3.03125 B an
# element; copies 4 B an element):
#   residual RMSNorm 8 x 7,168 = 57,344; kv_a_proj's input quantize 3.03125 x 7,168 = 21,728;
#   kv_a_layernorm 4 x 512 = 2,048; latent concat 4 x 576 = 2,304; kv_b_proj's quantize
#   3.03125 x 512 = 1,552; k_nope copy 4 x 16 x 128 = 8,192; q, k, v concat
#   4 x 16 x (192 + 192 + 128) = 32,768; o_proj's quantize 3.03125 x 16 x 128 = 6,208;
#   q_a_layernorm 4 x 1,536 = 6,144; q_b_proj's quantize 3.03125 x 1,536 = 4,656.
MLA_TP8 = 57344 + 21728 + 2048 + 2304 + 1552 + 8192 + 32768 + 6208 + 6144 + 4656  # 142,944
# The shared expert on a TP 8 rank (2,048 / 8 = 256): gate_up's quantize 21,728, SwiGLU
# 6 x 256 = 1,536, down's quantize 3.03125 x 256 = 776.
SHARED_TP8 = 21728 + 1536 + 776  # 24,040
# A dense MLP (18,432 / 8 = 2,304): 21,728 + 6 x 2,304 = 13,824 + 3.03125 x 2,304 = 6,984.
DENSE_TP8 = 21728 + 13824 + 6984  # 42,536


@contextmanager
def without_ctx66() -> Iterator[None]:
    """kvplan.perf.roofline without trtctx66's kernels (the attention op's RoPE / FP8 copies,
    the CUTLASS MoE's traffic, the MoE output's add and NVFP4 quantize)."""
    with ExitStack() as stack:
        # (the attention op's kernels reach roofline through trtllm_bytes.attention_layer_kernels)
        stack.enter_context(patch.object(trtllm_bytes, "attention_op_bytes", lambda *a, **k: []))
        stack.enter_context(patch.object(roofline, "moe_output_bytes", lambda *a, **k: []))
        stack.enter_context(patch.object(roofline, "context_moe_kernel", lambda *a: None))
        yield


def test_kernel_bytes_by_hand() -> None:
    spec = load_spec("deepseek-v3")
    assert sum(attention_kernel_bytes(spec, att_tp=8, math=GemmMath.fp8, norm=True)) == MLA_TP8
    assert len(attention_kernel_bytes(spec, att_tp=8, math=GemmMath.fp8, norm=True)) == 10
    # bf16 linears quantize nothing: the norm and the five copies only.
    assert sum(attention_kernel_bytes(spec, att_tp=8, math=GemmMath.bf16, norm=False)) == (
        2048 + 2304 + 8192 + 32768 + 6144)
    assert norm_bytes(spec) == 57344
    shared = 3 * H * 2048
    assert sum(mlp_kernel_bytes(spec, mlp_params=shared, mlp_tp=8, math=GemmMath.fp8)) == (
        SHARED_TP8)
    assert sum(mlp_kernel_bytes(spec, mlp_params=3 * H * 18432, mlp_tp=8,
                                math=GemmMath.fp8)) == DENSE_TP8
    assert mlp_kernel_bytes(spec, mlp_params=0, mlp_tp=8, math=GemmMath.fp8) == []


def test_separate_norm_past_the_workspace() -> None:
    # 8,000,000 B beyond 2 ranks: 557 x 7,168 x 2 = 7,985,152 fits, 559 x 7,168 x 2 = 8,013,824
    # does not; 16,000,000 on 2 ranks: 1,116 x 14,336 = 15,998,976 fits, 1,117 not.
    assert not separate_norm(H, 557, 8) and separate_norm(H, 559, 8)
    assert not separate_norm(H, 1116, 2) and separate_norm(H, 1117, 2)
    assert separate_norm(H, 1, 1)  # no all-reduce: the add + norm is its own kernel


def test_step_charges_the_bytes() -> None:
    # DeepSeek-V3 FP8, H200, TP 8 EP 8, two 8,192-token prompts (issue 29's context step).
    # Per token: 58 MoE layers x (142,944 + 24,040 + 57,344) + 3 dense x (142,944 + 42,536 +
    # 57,344) = 13,011,024 + 728,472 = 13,739,496 B; each of the 61 x 14 kernels (10 + 3 + 1)
    # charged its bytes' time beyond the 4 us floor it already cost, but the shared expert's
    # down_proj quantize (776 x 16,384 B = 12.7 MB, 2.9 us at 4.32 TB/s) stays at its floor.
    spec = load_spec("deepseek-v3")
    gpu = get_gpu("H200")
    eff = engine_efficiency("trtllm")
    assert eff.prefill_op_count is PrefillOpCount.trtllm
    tokens, layout = 16384, Layout(tp=8, ep=8)
    kw = {"tokens": tokens, "context": 8192, "requests": 2, "phase": "prefill",
          "layout": layout, "kv_dtype": "fp8"}
    per_token = 58 * (MLA_TP8 + SHARED_TP8 + 57344) + 3 * (MLA_TP8 + DENSE_TP8 + 57344)
    assert per_token == 13_739_496
    # trtctxops65's kernels alone: trtctx66's (tests/test_trtllm_ctx66.py) switched off.
    with without_ctx66():
        with_bytes = step_time(spec, gpu, eff=eff, **kw).by_op["small_kernels"]
    floor_only = step_time(spec, gpu, eff=replace(eff, prefill_op_count=PrefillOpCount.sglang),
                           **kw).by_op["small_kernels"]
    bw = gpu.hbm_bytes_per_s * eff.hbm
    assert tokens * 776 / bw < eff.kernel_floor_s
    expected = tokens * (per_token - 58 * 776) / bw - (61 * 14 - 58) * eff.kernel_floor_s
    # About 49 ms on the H200 (4.8 TB/s x 0.90): 2.25e11 B / 4.32e12 B/s = 52.1 ms less 3.4.
    assert 0.045 < expected < 0.050
    # The other engines' prefill charges kvplan.perf.norm_traffic's row kernels instead (TensorRT-
    # LLM's context step counts its own): per token the input norm (layer 0 without a residual:
    # 2 x 7,168 x 2 B; the other 60: 4 x 7,168 x 2), the qkv input's FP8 quantization (7,168 x 2
    # read + 7,168 FP8 + 56 float32 scales) and the post-attention norm (4 x 7,168 x 2) on all 61
    # layers: 183 kernels, each beyond its floor.
    rows = 2 * H * 2 + 60 * 4 * H * 2 + 61 * (H * 2 + H + 56 * 4) + 61 * 4 * H * 2
    expected -= tokens * rows / bw - 183 * eff.kernel_floor_s
    assert with_bytes - floor_only == pytest.approx(expected, rel=1e-9)
    # Decode steps keep the floors.
    dec = {"tokens": 64, "context": 8192, "requests": 64, "layout": layout}
    assert step_time(spec, gpu, eff=eff, **dec).by_op["small_kernels"] == step_time(
        spec, gpu, eff=replace(eff, prefill_op_count=PrefillOpCount.sglang),
        **dec).by_op["small_kernels"]
