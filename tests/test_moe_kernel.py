"""vLLM's Triton fused MoE (kvplan.engines.vllm.moe_kernel, priced by kvplan.perf.moe_kernel):
padded rows and the activations between its kernels, worked by hand from Mixtral-8x7B's
config.json (hidden 4096, intermediate 14336, 8 experts, top-2, 32 layers; issue 30)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from dataclasses import replace as _replace

import pytest

from kvplan.capacity.weights import routed_expert_bits
from kvplan.engines.vllm.moe_kernel import (
    VLLM_MOE_KERNELS,
    VLLM_TRITON_FP8_BLOCK_MOE,
    VLLM_TRITON_FP8_BLOCK_MOE_0_12,
    VLLM_TRITON_MOE,
)
from kvplan.hardware.gpus import GPU, get_gpu
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.efficiency import device_efficiency as _device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.moe_kernel import (
    activation_bytes,
    block_rows,
    expected_blocks,
    gemm_activation_bytes,
    padded_rows_factor,
    quantize_bytes,
    sum_bytes,
)
from kvplan.perf.roofline import step_time
from kvplan.perf.weight_bytes import bytes_per_param
from kvplan.sources.resolve import load_model


def device_efficiency(gpu: GPU) -> Efficiency:
    """The GPU's efficiency with the experts at the one fraction per format: these hand-worked
    prices are of the MoE kernels' rules, derived before moedefault63 made the experts' shape
    table the CUDA default (the table's own prices: tests/test_moe_gemm_shape.py,
    tests/test_cost_rules_cli.py), so the table is pinned off here."""
    return _replace(_device_efficiency(gpu), moe_gemm_shape=None)



def test_block_rows_follow_vllm_default_config() -> None:
    # vllm 0.15.1 fused_moe.py get_default_config:1270: BLOCK_SIZE_M 16 when M <= E, else 64.
    assert block_rows(VLLM_TRITON_MOE, 8, 8) == 16
    assert block_rows(VLLM_TRITON_MOE, 9, 8) == 64
    assert engine_efficiency("vllm").moe_kernel is VLLM_MOE_KERNELS
    # Block FP8 (get_default_config's block branch, 0.17.0-0.20.0): 16 up to 64 tokens
    # whatever the experts, else 64; 0.12.0: 64 at every size.
    assert block_rows(VLLM_TRITON_FP8_BLOCK_MOE, 64, 256) == 16
    assert block_rows(VLLM_TRITON_FP8_BLOCK_MOE, 65, 256) == 64
    assert block_rows(VLLM_TRITON_FP8_BLOCK_MOE_0_12, 8, 256) == 64
    assert engine_efficiency("sglang").moe_kernel is None
    # TensorRT-LLM declares its CUTLASS block-FP8 MoE for its fraction only (trtfp8moe61):
    # no activations priced (tests/test_trtllm_moe_kernel.py).
    assert engine_efficiency("trtllm").moe_kernel is not None


def test_padded_rows_by_hand() -> None:
    # 4 tokens, 8 experts, top-2 (M <= E: 16-row blocks): an expert holds X ~ Bin(4, 1/4) rows,
    # always under one block, so it takes one block when X >= 1: E[ceil(X / 16)] = 1 - 0.75^4
    # = 0.68359375, and 16 x that over E[X] = 1 row: 10.9375 rows computed per row routed.
    assert expected_blocks(4, 0.25, 16) == pytest.approx(0.68359375)
    assert padded_rows_factor(VLLM_TRITON_MOE, 4, 8, 2) == pytest.approx(10.9375)
    # 40 decodes (M > E: 64-row blocks): X <= 40 < 64, one block when X >= 1:
    # 64 x (1 - 0.75^40) / 10 = 6.4 (0.75^40 = 1.0e-5).
    assert padded_rows_factor(VLLM_TRITON_MOE, 40, 8, 2) == pytest.approx(
        6.4 * (1 - 0.75 ** 40))
    # A 491-token prefill step: X ~ Bin(491, 1/4), mean 122.75, sd 9.6, so 65 <= X <= 192
    # (6 sd either side) and ceil(X / 64) = 2 + [X >= 129]: E = 2 + P(X >= 129), the tail
    # summed exactly here (normal approximation: z = (128.5 - 122.75) / 9.595 = 0.60, 0.27).
    tail = sum(math.comb(491, x) * 0.25 ** x * 0.75 ** (491 - x) for x in range(129, 492))
    assert tail == pytest.approx(0.27, abs=0.01)
    assert expected_blocks(491, 0.25, 64) == pytest.approx(2 + tail, rel=1e-9)
    assert padded_rows_factor(VLLM_TRITON_MOE, 491, 8, 2) == pytest.approx(
        64 * (2 + tail) / 122.75, rel=1e-9)  # 1.186


def test_activation_bytes_by_hand() -> None:
    # Mixtral-8x7B at TP 2: I = 14336 / 2 = 7168 columns a rank, H = 4096; 491 tokens, top-2:
    # P = 982 pairs. bf16 (2 B).
    # GEMMs: input 491 x 4096 = 2,011,136; cache1 982 x 14336 = 14,077,952; cache2 read
    # 982 x 7168 = 7,038,976; cache3 982 x 4096 = 4,022,272: 27,150,336 elements.
    assert gemm_activation_bytes(491, 2, 4096, 7168) == 2 * 27_150_336
    # silu_and_mul: 982 x (14336 + 7168) = 21,116,928 elements.
    assert activation_bytes(491, 2, 7168) == 2 * 21_116_928
    # moe_sum: 982 x 4096 read + 491 x 4096 written = 6,033,408 elements.
    assert sum_bytes(491, 2, 4096) == 2 * 6_033_408


def test_prefill_step_of_mixtral_tp2_by_hand() -> None:
    # vLLM 0.19 (Triton for 16-bit experts; 0.20 runs FlashInfer on Hopper) on one H100 rank
    # of TP 2 (989.5 dense bf16 TFLOPS x 0.70, 3.35 TB/s x 0.90), a 491-token prefill step
    # (study run 28's 451-token chunk and 40 decodes).
    spec = load_model("mixtral-8x7b")[0]
    gpu = get_gpu("H100-80GB")
    with_kernel = engine_efficiency("vllm", device_efficiency(gpu), version="0.19.0")
    without = replace(with_kernel, moe_kernel=None)
    kw = {"tokens": 491, "context": 1, "requests": 1, "logits": 1, "layout": Layout(tp=2)}
    new = step_time(spec, gpu, eff=with_kernel, **kw)
    old = step_time(spec, gpu, eff=without, **kw)
    bw = 3.35e12 * 0.90
    # Experts, per layer: the rank's weights 8 x 3 x 4096 x 7168 x 2 B = 1,409,286,144 B and
    # the replicated router 8 x 4096 x 2 B = 65,536 B (every expert touched), memory-bound
    # before and after: 491 x 2 x (2 x 3 x 4096 x 7168) x 1.186 FLOPs = 205 GFLOP take 296 us
    # at 692.7 TFLOPS, the bytes 467 us. The kernel adds 54,300,672 B a layer: 18.0 us.
    weights = 1_409_286_144 + 65_536
    assert old.by_op["experts"] == pytest.approx(32 * weights / bw, rel=1e-6)
    assert new.by_op["experts"] - old.by_op["experts"] == pytest.approx(
        32 * 54_300_672 / bw, rel=1e-6)  # 0.576 ms
    # silu_and_mul: 42,233,856 B = 14.0 us in place of a 4 us floor; moe_sum 12,066,816 B =
    # 4.002 us in place of one: 32 x 10.0 us = 0.320 ms more.
    extra = 32 * (42_233_856 / bw - 4e-6 + 12_066_816 / bw - 4e-6)
    assert new.by_op["small_kernels"] - old.by_op["small_kernels"] == pytest.approx(extra)
    assert new.seconds - old.seconds == pytest.approx(
        32 * 54_300_672 / bw + extra, rel=1e-6)  # 0.90 ms of 19.4
    # A 40-token decode step: the activations are small (3.4 MB a layer), the experts stay
    # weight-bound: 32 x 4.4 MB / 3.015 TB/s = 47 us more.
    dec = {**kw, "tokens": 40, "requests": 40, "logits": 40}
    delta = (step_time(spec, gpu, eff=with_kernel, **dec).seconds
             - step_time(spec, gpu, eff=without, **dec).seconds)
    assert delta == pytest.approx(32 * gemm_activation_bytes(40, 2, 4096, 7168) / bw, rel=1e-6)


def test_block_fp8_experts_quantize_their_activations_by_hand() -> None:
    # vLLM 0.19 runs TritonExperts for block-FP8 experts on Hopper without EP (oracle/fp8.py
    # moves TRITON to the front, ep_size 1): the layer's input and every pair's gated product
    # are quantized to FP8 per 128-element group (kvplan.engines.vllm.moe_kernel).
    fp8 = json.dumps({"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                      "weight_block_size": [128, 128]})
    spec = replace(load_model("mixtral-8x7b")[0], quantization_json=fp8)
    gpu = get_gpu("H100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.19.0")
    kw = {"tokens": 491, "context": 1, "requests": 1, "logits": 1, "layout": Layout(tp=2)}
    # Mixtral-8x7B at TP 2: H 4,096, I 7,168 a rank, 491 tokens, top-2: P = 982 pairs.
    # Quantize a1: 491 x (4,096 x 2 B read + 4,096 x 1 B + 32 scales x 4 B written) =
    # 491 x 12,416 = 6,096,256 B; a2: 982 x (7,168 x 2 + 7,168 + 56 x 4) = 982 x 21,728 =
    # 21,336,896 B.
    assert quantize_bytes(491, 2, 4096, 7168, 2, 128) == (6_096_256, 21_336_896)
    # The GEMMs: the FP8 input and its scales 491 x 4,224 = 2,073,984; cache1 (bf16)
    # 982 x 14,336 x 2 = 28,155,904; the FP8 cache2 and its scales 982 x 7,392 = 7,258,944;
    # cache3 (bf16) 982 x 4,096 x 2 = 8,044,544: 45,533,376 B.
    assert gemm_activation_bytes(491, 2, 4096, 7168, 2, 1, 128) == 45_533_376
    new = step_time(spec, gpu, eff=eff, **kw)
    old = step_time(spec, gpu, eff=replace(eff, moe_kernel=None), **kw)
    # Experts a layer: 8 x 3 x 4,096 x 7,168 x 1 B = 704,643,072 B of weights, memory-bound
    # (205 GFLOP of padded rows at 0.70 x 1,979 FP8 TFLOPS: 148 us; the bytes ~306 us at
    # 0.69 x 3.35 TB/s): the GEMMs' activations add 45,533,376 B at that rate, and the a2
    # quantize 21,336,896 B / (0.90 x 3.35 TB/s) = 7.077 us, 3.077 us past its floor (a1's
    # 2.02 us stays under its floor).
    bw, fp8_bw = 3.35e12 * 0.90, 3.35e12 * 0.69
    assert new.by_op["experts"] - old.by_op["experts"] == pytest.approx(
        32 * (45_533_376 / fp8_bw + 21_336_896 / bw - 4e-6), rel=1e-6)
    # silu_and_mul and moe_sum as for 16-bit experts (test_prefill_step_of_mixtral_tp2).
    extra = 32 * (42_233_856 / bw - 4e-6 + 12_066_816 / bw - 4e-6)
    assert new.by_op["small_kernels"] - old.by_op["small_kernels"] == pytest.approx(extra)
    # (and the checkpoint is read as FP8: its experts move half the bf16 bytes)
    bf16 = step_time(load_model("mixtral-8x7b")[0], gpu, eff=replace(eff, moe_kernel=None), **kw)
    assert old.bytes < 0.6 * bf16.bytes


def test_vllm_020_runs_flashinfer_for_16_bit_experts_on_hopper() -> None:
    # 0.20.0's unquantized oracle tries FlashInfer first (kvplan.engines.vllm.moe_ep): on an
    # H100 FlashInfer's CUTLASS MoE runs (kvplan.perf.moe_kernel.cutlass_traffic); on an A100
    # (SM 8.0, no FlashInfer CUTLASS) Triton still runs.
    spec = load_model("mixtral-8x7b")[0]
    kw = {"tokens": 491, "context": 1, "requests": 1, "logits": 1, "layout": Layout(tp=2)}
    a100 = get_gpu("A100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(a100), version="0.20.0")
    bare = step_time(spec, a100, eff=replace(eff, moe_kernel=None), **kw).seconds
    assert step_time(spec, a100, eff=eff, **kw).seconds > bare
    # H100, Mixtral-8x7B on TP 2: H 4,096, I 14,336 / 2 = 7,168 a rank, top-2 of 8, 491 tokens:
    # P = 982 pairs, all the rank's (no EP). The GEMMs read the 982 permuted rows (982 x 4,096),
    # write the gated 982 x 14,336, read 982 x 7,168 and write 982 x 4,096: 982 x 29,696 =
    # 29,161,472 elements, 58,322,944 B beside the weights (memory-bound, as the Triton case:
    # 1,409,286,144 B of experts, 467 us, against 173 GFLOP unpadded, 250 us), at 0.90 x
    # 3.35 TB/s. Triton's GEMMs read the 491 unpermuted rows instead (54,300,672 B).
    h100 = get_gpu("H100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(h100), version="0.20.0")
    new = step_time(spec, h100, eff=eff, **kw)
    old = step_time(spec, h100, eff=replace(eff, moe_kernel=None), **kw)
    bw = 3.35e12 * 0.90
    assert new.by_op["experts"] - old.by_op["experts"] == pytest.approx(
        32 * 58_322_944 / bw, rel=1e-6)
    # The permute 982 x 4,096 read and written (16,089,088 B, 5.34 us), the activation 982 x
    # (14,336 + 7,168) (42,233,856 B) and the finalize 982 x 4,096 read, 491 x 4,096 written
    # (12,066,816 B), each in place of a 4 us floor.
    extra = 32 * (16_089_088 / bw + 42_233_856 / bw + 12_066_816 / bw - 3 * 4e-6)
    assert new.by_op["small_kernels"] - old.by_op["small_kernels"] == pytest.approx(extra)
    assert new.flops == old.flops  # the exact rows: no padding priced


def test_expert_dtype_read_from_the_quantization() -> None:
    # The rule asks whether a layer's routed experts load as 16-bit weights
    # (kvplan.capacity.weights.routed_expert_bits), read by the experts' module name from the
    # quantization the engine loads. Mixtral-8x7B's config.json (torch_dtype bfloat16, no
    # quantization_config): 16 on all 32 layers; load-time bitsandbytes quantizes them: None.
    mixtral = load_model("mixtral-8x7b")[0]
    assert set(routed_expert_bits(mixtral, range(32)).values()) == {16}
    assert set(routed_expert_bits(mixtral, range(32), "bitsandbytes").values()) == {None}
    # DeepSeek-V3's config.json (quant_method fp8, weight_block_size [128, 128], no ignore list):
    # its 58 MoE layers (first_k_dense_replace 3 of 61) hold FP8 experts.
    dsv3 = load_model("tests/data/configs/deepseek-v3.json")[0]
    moe_layers = [i for i in range(61) if dsv3.moe is not None and dsv3.moe.is_moe_layer(i)]
    assert len(moe_layers) == 58
    assert set(routed_expert_bits(dsv3, moe_layers).values()) == {None}


def test_expert_dtype_is_not_a_product_of_floats() -> None:
    # hf-internal-testing's tiny-random DeepSeek-V2 (hidden 8, 160 experts of width 4, gated, one
    # MoE layer of 2, torch_dtype bfloat16, no quantization_config): at TP 8 a rank holds
    # cdiv(4, 8) = 1 column of each expert, 160 x 3 x 8 x 1 x 2 B = 7,680 B, and the router whole,
    # 160 x 8 x 2 B = 2,560 B: 10,240 B over 160 x 3 x 8 x 4 + 1,280 = 16,640 parameters. The
    # former test, round(bytes per parameter x ranks) == 2, read 0.615 x 8 = 4.92 as not 16-bit;
    # the experts are bf16.
    spec = load_model("tests/data/blind26/real/deepseek-v2-tiny-random.json")[0]
    assert bytes_per_param(spec, 8)[0]["experts"] * 8 == pytest.approx(10_240 / 16_640 * 8)
    assert routed_expert_bits(spec, (1,)) == {1: 16}
