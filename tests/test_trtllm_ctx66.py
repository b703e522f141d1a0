"""trtctx66's kernels of TensorRT-LLM's context step (kvplan.perf.trtllm_bytes, its docstring's
"Added at trtctx66" list), worked by hand for DeepSeek-V3 (hidden 7,168; MLA 128 heads, 16 a
TP 8 rank, qk_nope 128, qk_rope 64, v 128, kv_lora 512; 256 routed experts of 2,048, top 8, one
shared expert of 2,048; 3 dense layers, 58 MoE) and its NVFP4 checkpoint."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan._util.dtypes import GemmMath
from kvplan.engines.trtllm.moe_kernel import TRTLLM_CUTLASS_FP8_BLOCK_MOE
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.perf.trtllm_bytes import (
    attention_op_bytes,
    context_moe_kernel,
    fp4_quant_bytes,
    fp8_context_mla,
    mlp_kernel_bytes,
    moe_output_bytes,
)
from tests.test_trtllm_bytes import without_ctx66

H = 7168
# fp4_quantize a token (thop/fp4Quantize.cpp; common/quantization.h computeSwizzledLayoutSFSize):
# 2 B read + 1/2 B written an element, one scale byte per 16 padded to a multiple of 4.
FP4_H = 2 * H + H // 2 + 448  # 448 = 7,168 / 16, already a multiple of 4: 18,368
FP4_256 = 512 + 128 + 16  # the shared expert's down_proj input on a TP 8 rank: 656
# mlaKernels.cu applyMLARopeAndAssignQKVKernelOptContext on a TP 8 rank: 16 heads read and
# write their q rope part (64) and write k's rope part (64); k_pe (64) and the latent (512)
# read once: 2 x (3 x 16 x 64 + 64 + 512) = 2 x 3,648.
ROPE_TP8 = 7296
# quantizeCopyInputToFp8Kernel: q and k of 16 x 192, v of 16 x 128, read bf16 and written FP8.
FP8_QKV_TP8 = 3 * 16 * (192 + 192 + 128)  # 24,576
ADD = 3 * 2 * H  # shared_output + routed_output: two bf16 rows read, one written: 43,008


def test_fp4_quantize_bytes() -> None:
    assert fp4_quant_bytes(H) == FP4_H == 18368
    assert fp4_quant_bytes(256) == FP4_256
    # 24 columns: 48 read, 12 written, ceil(24 / 16) = 2 scales padded to 4.
    assert fp4_quant_bytes(24) == 48 + 12 + 4
    # An NVFP4 shared expert on a TP 8 rank: gate_up's quantize, SwiGLU 6 x 256, down's.
    spec = load_spec("deepseek-v3")
    assert sum(mlp_kernel_bytes(spec, mlp_params=3 * H * 2048, mlp_tp=8,
                                math=GemmMath.fp4)) == FP4_H + 1536 + FP4_256


def test_attention_op_bytes() -> None:
    spec = load_spec("deepseek-v3")
    assert attention_op_bytes(spec, att_tp=8, fp8_context=True) == [ROPE_TP8, FP8_QKV_TP8]
    assert attention_op_bytes(spec, att_tp=8, fp8_context=False) == [ROPE_TP8]
    assert attention_op_bytes(load_spec("qwen3-8b"), att_tp=1, fp8_context=True) == []


def test_fp8_context_mla_where() -> None:
    h200, b200, a100 = get_gpu("H200"), get_gpu("B200"), get_gpu("A100")
    assert fp8_context_mla(h200, "fp8", "1.2.0rc6.post1") and fp8_context_mla(b200, "fp8", None)
    assert not fp8_context_mla(h200, "fp8", "1.1.0rc2")  # before the 1.2 line: not taken
    assert not fp8_context_mla(h200, "bf16", None)  # hasFp8KvCache() only
    assert not fp8_context_mla(a100, "fp8", None)  # SM 80: not in the list


def test_context_moe_kernel_where() -> None:
    h200, b200 = get_gpu("H200"), get_gpu("B200")
    tp_ep = Layout(tp=8, ep=8)
    assert context_moe_kernel("fp8-block", h200, tp_ep) is TRTLLM_CUTLASS_FP8_BLOCK_MOE
    assert context_moe_kernel("fp8-block", b200, tp_ep) is None  # DeepGEMM on SM 10.x
    assert context_moe_kernel(None, h200, tp_ep) is None  # NVFP4 / other formats
    # EP over DP ranks: not a layout kvplan.perf.moe_kernel prices.
    assert context_moe_kernel("fp8-block", h200, Layout(tp=8, ep=8, dp_attention=True)) is None


def test_moe_output_bytes() -> None:
    spec = load_spec("deepseek-v3")
    assert moe_output_bytes(spec, shared=True, math=GemmMath.fp8) == [ADD]
    assert moe_output_bytes(spec, shared=True, math=GemmMath.fp4) == [FP4_H, ADD]
    assert moe_output_bytes(spec, shared=False, math=GemmMath.bf16) == []


def test_h200_fp8_context_step() -> None:
    # DeepSeek-V3 FP8, H200, TP 8 EP 8, two 8,192-token prompts, FP8 KV cache (issue 29's step).
    # T = 16,384; the rank's own (token, expert) pairs 16,384 x 8 / 8 = 16,384 (P_l).
    # CUTLASS MoE (moe_kernel.cutlass_traffic), a MoE layer: permute 2 x P_l x 2 x 7,168 =
    # 469,762,048; activation 2 x P_l x 3 x 2,048 = 201,326,592; finalize 2 x (P_l + T) x 7,168
    # = 469,762,048; the two 1 x 128 quantize kernels (charged to `experts`): P_l x (2 x 7,168 +
    # 7,168 + 56 x 4) = 355,991,552 and P_l x (2 x 2,048 + 2,048 + 16 x 4) = 101,711,872; the
    # shared + routed add T x 43,008 = 704,643,072. Every layer's attention op: RoPE T x 7,296 =
    # 119,537,664, FP8 copies T x 24,576 = 402,653,184. Each beyond its 4 us floor (17.28 MB at
    # 4.32 TB/s: all are above it).
    spec = load_spec("deepseek-v3")
    gpu = get_gpu("H200")
    eff = engine_efficiency("trtllm", version="1.2.0rc6.post1")
    kw = {"tokens": 16384, "context": 8192, "requests": 2, "phase": "prefill",
          "layout": Layout(tp=8, ep=8), "kv_dtype": "fp8"}
    new = step_time(spec, gpu, eff=eff, **kw).by_op
    with without_ctx66():
        old = step_time(spec, gpu, eff=eff, **kw).by_op
    bw, floor = gpu.hbm_bytes_per_s * eff.hbm, eff.kernel_floor_s

    def beyond(nbytes: int) -> float:
        assert nbytes / bw > floor
        return nbytes / bw - floor

    small = 58 * sum(map(beyond, (469_762_048, 201_326_592, 469_762_048, 704_643_072))) + (
        61 * (beyond(119_537_664) + beyond(402_653_184)))
    assert new["small_kernels"] - old["small_kernels"] == pytest.approx(small, rel=1e-9)
    # About 30.7 ms: 3.00e10 B over the MoE layers and 3.18e10 B over the attention ops.
    assert 0.030 < small < 0.0315
    quant = 58 * (beyond(355_991_552) + beyond(101_711_872))
    # The grouped GEMMs' activation bytes join the experts op's bytes; it stays FLOP-bound.
    assert new["experts"] - old["experts"] == pytest.approx(quant, rel=1e-9)
    # Before the 1.2 line no FP8 copies; decode steps keep their floors.
    old_rel = step_time(spec, gpu, eff=replace(eff, engine_version="1.1.0rc2"), **kw).by_op
    assert new["small_kernels"] - old_rel["small_kernels"] == pytest.approx(
        61 * beyond(402_653_184), rel=1e-9)
    dec = {**kw, "tokens": 64, "requests": 64, "phase": "decode"}
    with without_ctx66():
        dec_old = step_time(spec, gpu, eff=eff, **dec).by_op
    assert step_time(spec, gpu, eff=eff, **dec).by_op == dec_old


def test_b200_nvfp4_context_step() -> None:
    # DeepSeek-R1 NVFP4 (attention bf16, excluded from quantization; MLPs and experts NVFP4),
    # B200, TP 8 EP 8, one 8,192-token prompt, FP8 KV cache. trtctx66's kernels a token: per
    # MoE layer the routed experts' input quantize 18,368 and the add 43,008, and on the shared
    # expert's linears fp4_quantize where the FP8-only rule charged nothing (gate_up 18,368,
    # down 656); per dense layer (18,432 / 8 = 2,304 on the rank) gate_up 18,368 and down
    # 2 x 2,304 + 1,152 + 144 = 5,904; every layer's attention op 7,296 + 24,576 (SM 100, 1.2
    # line). No CUTLASS FP8 (NVFP4 experts). Each beyond its floor (4 us at 7.2 TB/s: 28.8 MB
    # = 3,516 B a token): the shared down_proj's 656 stays at its floor.
    spec = load_spec("tests/data/disagg/deepseek-r1-nvfp4.json")
    gpu = get_gpu("B200")
    eff = engine_efficiency("trtllm", version="1.2.0rc6.post1")
    t = 8192
    kw = {"tokens": t, "context": t, "requests": 1, "phase": "prefill",
          "layout": Layout(tp=8, ep=8), "kv_dtype": "fp8"}
    new = step_time(spec, gpu, eff=eff, **kw).by_op["small_kernels"]
    with without_ctx66(), pytest.MonkeyPatch.context() as mp:
        from kvplan.perf import trtllm_bytes
        mp.setattr(trtllm_bytes, "fp4_quant_bytes", lambda width: 0.0)
        old = step_time(spec, gpu, eff=eff, **kw).by_op["small_kernels"]
    bw, floor = gpu.hbm_bytes_per_s * eff.hbm, eff.kernel_floor_s
    assert 656 * t / bw < floor < 5904 * t / bw
    per_token_moe = [FP4_H, ADD, FP4_H]  # input quantize, add, shared gate_up quantize
    per_token_dense = [FP4_H, 5904]
    per_token_att = [ROPE_TP8, FP8_QKV_TP8]
    expected = sum(58 * (t * b / bw - floor) for b in per_token_moe) + sum(
        3 * (t * b / bw - floor) for b in per_token_dense) + sum(
        61 * (t * b / bw - floor) for b in per_token_att)
    assert new - old == pytest.approx(expected, rel=1e-9)
