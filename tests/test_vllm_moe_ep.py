"""vLLM's expert-parallel MoE on TP ranks (kvplan.engines.vllm.moe_ep): which kernel a rank
runs by expert format, release and GPU, and what kvplan charges for it, worked by hand from
Mixtral-8x7B's and MiniMax-M2.5's config.json (issues 29 / 30)."""

from __future__ import annotations

import json
from dataclasses import replace
from dataclasses import replace as _replace

import pytest

from kvplan.engines.moe_kernel import BF16_EXPERTS, FP8_BLOCK_EXPERTS, FixedMoeKernels
from kvplan.engines.vllm.moe_ep import (
    FI_CUTLASS_EP,
    FI_TRTLLM_EP,
    TRITON_EP,
    vllm_ep_experts,
    vllm_moe_experts,
)
from kvplan.engines.vllm.moe_kernel import (
    VLLM_FI_CUTLASS_FP8_BLOCK_MOE,
    VLLM_FI_CUTLASS_MOE,
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
from kvplan.perf.moe_kernel import gemm_activation_bytes, moe_traffic, priced_kernel
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

MINIMAX = "tests/data/sim_to_real/aiconfig_configs/MiniMaxAI--MiniMax-M2.5.json"
H100_BW = 3.35e12

def device_efficiency(gpu: GPU) -> Efficiency:
    """The GPU's efficiency with the experts at the one fraction per format: these hand-worked
    prices are of the MoE kernels' rules, derived before moedefault63 made the experts' shape
    table the CUDA default (the table's own prices: tests/test_moe_gemm_shape.py,
    tests/test_cost_rules_cli.py), so the table is pinned off here."""
    return _replace(_device_efficiency(gpu), moe_gemm_shape=None)



def test_kernel_by_format_release_and_gpu() -> None:
    # 16-bit experts: Triton (every pair walked) in every release read before 0.20, whose
    # unquantized oracle tries FlashInfer first: CUTLASS on Hopper (its own pairs).
    assert vllm_ep_experts("16-bit", version="0.19.0", capability=(9, 0)) is TRITON_EP
    assert vllm_ep_experts("16-bit", version="0.20.0", capability=(9, 0)) is FI_CUTLASS_EP
    # Block FP8 on Hopper under EP: FlashInfer CUTLASS from 0.17.0 (oracle/fp8.py moves it to
    # the front when ep_size > 1), the rank's own pairs only; 0.12.0 Triton; 0.13-0.16 unread.
    for version in ("0.17.0", "0.18.0", "0.19.0", "0.20.0", None):
        assert vllm_ep_experts("fp8-block", version=version, capability=(9, 0)) is FI_CUTLASS_EP
    assert vllm_ep_experts("fp8-block", version="0.12.0", capability=(9, 0)) is TRITON_EP
    assert vllm_ep_experts("fp8-block", version="0.15.1", capability=(9, 0)) is None
    # SM 10.0 block FP8, NVFP4: not read to the line.
    assert vllm_ep_experts("fp8-block", version="0.19.0", capability=(10, 0)) is None
    assert vllm_ep_experts("nvfp4", version="0.19.0", capability=(10, 0)) is None
    assert TRITON_EP.all_pairs and not FI_CUTLASS_EP.all_pairs
    assert VLLM_TRITON_MOE.ep_all_pairs


def test_kernel_by_release_gpu_and_layout_without_ep() -> None:
    # oracle/unquantized.py 0.20.0:47-80: FLASHINFER_TRTLLM (SM 10.x family only), then
    # FLASHINFER_CUTLASS (SM 9.0+, moved behind TRITON with DP ranks), then TRITON.
    def bf16(version: str | None, cap: tuple[int, int], **kw: object) -> object:
        return vllm_moe_experts("16-bit", version=version, capability=cap, **kw)

    assert bf16("0.19.0", (9, 0)) is TRITON_EP
    assert bf16("0.20.0", (9, 0)) is FI_CUTLASS_EP
    assert bf16(None, (9, 0)) is FI_CUTLASS_EP
    assert bf16("0.20.0", (9, 0), dp_ranks=2) is TRITON_EP
    assert bf16("0.20.0", (10, 0)) is FI_TRTLLM_EP
    assert bf16("0.20.0", (8, 0)) is TRITON_EP  # A100: FlashInfer's kernels want SM 9.0+
    assert bf16("0.20.0", (9, 4), platform="rocm") is TRITON_EP  # MI300X: as before
    # Block FP8 on Hopper, 0.17.0+: "prefer Triton for TP and FI CUTLASS for EP".
    fp8 = {"version": "0.19.0", "capability": (9, 0)}
    assert vllm_moe_experts("fp8-block", **fp8) is TRITON_EP
    assert vllm_moe_experts("fp8-block", **fp8, ep=8) is FI_CUTLASS_EP
    # The priced kernels, by release and GPU.
    h100, b200 = get_gpu("H100-80GB"), get_gpu("B200")
    k = VLLM_MOE_KERNELS.kernel
    assert k(BF16_EXPERTS, version="0.19.0", gpu=h100, ep=1, dp_ranks=1) is VLLM_TRITON_MOE
    assert k(BF16_EXPERTS, version="0.20.0", gpu=h100, ep=1, dp_ranks=1) is VLLM_FI_CUTLASS_MOE
    assert k(BF16_EXPERTS, version="0.20.0", gpu=b200, ep=1, dp_ranks=1) is None  # TRT-LLM-gen
    assert k(FP8_BLOCK_EXPERTS, version="0.19.0", gpu=h100, ep=1,
             dp_ranks=1) is VLLM_TRITON_FP8_BLOCK_MOE
    assert k(FP8_BLOCK_EXPERTS, version="0.12.0", gpu=h100, ep=8,
             dp_ranks=1) is VLLM_TRITON_FP8_BLOCK_MOE_0_12
    assert k(FP8_BLOCK_EXPERTS, version="0.19.0", gpu=h100, ep=8,
             dp_ranks=1) is VLLM_FI_CUTLASS_FP8_BLOCK_MOE
    assert k(FP8_BLOCK_EXPERTS, version="0.19.0", gpu=b200, ep=1, dp_ranks=1) is None


def test_where_the_kernel_is_priced() -> None:
    kernels = FixedMoeKernels(((BF16_EXPERTS, VLLM_TRITON_MOE),))
    h100 = get_gpu("H100-80GB")

    def priced(fmt: str | None, ep: int, dp_ranks: int, ks: object = kernels) -> object:
        return priced_kernel(ks, fmt=fmt, version="0.19.0", gpu=h100, ep=ep,
                             dp_ranks=dp_ranks)

    k = VLLM_TRITON_MOE
    assert priced(BF16_EXPERTS, 1, 1) is k
    assert priced(BF16_EXPERTS, 8, 1) is k  # TP-attention EP: every pair
    assert priced(BF16_EXPERTS, 8, 2) is None  # EP over DP ranks: not read
    assert priced(None, 8, 1) is None  # another format
    no_walk = FixedMoeKernels(((BF16_EXPERTS, replace(k, ep_all_pairs=False)),))
    assert priced(BF16_EXPERTS, 2, 1, no_walk) is None


def test_ep_activation_bytes_by_hand() -> None:
    # MiniMax-M2.5's shapes as bf16 experts at EP 8, 64 tokens: H 3,072, I 1,536 whole
    # (EP: no TP split), top-8: P = 512 pairs. Input 64 x 3,072 = 196,608; cache1 written for
    # every pair 512 x 3,072 = 1,572,864; cache2 read by the w2 GEMM for the rank's own pairs
    # only, 512 / 8 x 1,536 = 98,304; cache3 written for every pair (zeros for the others')
    # 512 x 3,072 = 1,572,864: 3,440,640 elements, 6,881,280 B.
    assert gemm_activation_bytes(64, 8, 3072, 1536, 2, 8) == 6_881_280
    # At EP 1 the w2 GEMM reads all 512 x 1,536 = 786,432: 4,128,768 elements.
    assert gemm_activation_bytes(64, 8, 3072, 1536) == 2 * 4_128_768


def test_mixtral_bf16_prefill_at_ep2_by_hand() -> None:
    # vLLM 0.19 on one H100 rank of TP 2 with --enable-expert-parallel: 4 of Mixtral-8x7B's 8
    # experts whole (H 4,096, I 14,336), a 491-token prefill step (top-2: P = 982 pairs).
    spec = load_model("mixtral-8x7b")[0]
    gpu = get_gpu("H100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.19.0")
    kw = {"tokens": 491, "context": 1, "requests": 1, "logits": 1,
          "layout": Layout(tp=2, ep=2)}
    new = step_time(spec, gpu, eff=eff, **kw)
    old = step_time(spec, gpu, eff=replace(eff, moe_kernel=None), **kw)
    bw = H100_BW * 0.90
    # Experts, per layer: 4 x 3 x 4,096 x 14,336 x 2 B = 1,409,286,144 B of weights and the
    # router 65,536 B, memory-bound (205 GFLOP of padded rows at 692.7 TFLOPS: 296 us; the
    # bytes 467 us). The walk over every pair adds: input 491 x 4,096 = 2,011,136; cache1
    # 982 x 28,672 = 28,155,904; the rank's own cache2 rows 982 / 2 x 14,336 = 7,038,976;
    # cache3 982 x 4,096 = 4,022,272: 41,228,288 elements, 82,456,576 B: 27.3 us a layer.
    assert new.by_op["experts"] - old.by_op["experts"] == pytest.approx(
        32 * 82_456_576 / bw, rel=1e-6)
    # silu_and_mul over every pair: 982 x (28,672 + 14,336) x 2 B = 84,467,712 B, 28.0 us in
    # place of a 4 us floor; moe_sum 982 x 4,096 read + 491 x 4,096 written, x 2 B =
    # 12,066,816 B, 4.002 us in place of one.
    extra = 32 * (84_467_712 / bw - 4e-6 + 12_066_816 / bw - 4e-6)
    assert new.by_op["small_kernels"] - old.by_op["small_kernels"] == pytest.approx(extra)
    # Before this rule the EP step was priced as the bare weights (old == the moe_kernel-less
    # price), the way an EP 1 step is not.
    assert new.seconds - old.seconds == pytest.approx(32 * 82_456_576 / bw + extra, rel=1e-6)


def test_minimax_fp8_block_ep8_decode_by_hand() -> None:
    # MiniMax-M2.5 (block FP8, 256 experts of I 1,536, H 3,072, top-8) on one H100 rank of
    # TP 8 + EP 8, vLLM 0.20.0, a 64-request decode step. The kernel is FlashInfer's CUTLASS
    # MoE (vllm_ep_experts), which permutes and computes the rank's own pairs only: kvplan
    # charges the rank's 32 experts' weights and FLOPs and its own pairs' activations.
    spec = load_model(MINIMAX)[0]
    gpu = get_gpu("H100-80GB")
    assert vllm_ep_experts("fp8-block", version="0.20.0",
                           capability=gpu.compute_capability) is FI_CUTLASS_EP
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.20.0")
    kw = {"tokens": 64, "context": 1, "requests": 64, "layout": Layout(tp=8, ep=8),
          "layers": range(0, 1)}
    step = step_time(spec, gpu, eff=eff, **kw)
    # FLOPs: 64 tokens x 8 experts x 3 x 3,072 x 1,536 x 2 / 8 ranks = 1.812e9, 1.3 us at
    # 0.70 x 1,979 TFLOPS: memory-bound. Bytes a layer: 32 experts x 3 x 3,072 x 1,536 x 1 B =
    # 452,984,832, their 128 x 128 block scales 32 x (24 x 24 + 24 x 12) x 4 B = 110,592, the
    # replicated float32 gate 256 x 3,072 x 4 B = 3,145,728 and its score bias 256 x 4 B =
    # 1,024 (kvplan.weights.routers: MiniMax-M2's): 456,242,176 B, of which the step touches
    # 1 - (1 - 8 / 256)^64 = 0.868916 (every expert equally likely), at 0.69 x 3.35 TB/s
    # (fp8_gemm_hbm). (kvplan's per-layer mean of the whole checkpoint's expert bytes is
    # 12,288 B, 3e-5, over this layer's hand count.) The CUTLASS kernel's own pairs, 64 x 8 / 8
    # = 64: GEMM1 reads their FP8 rows 3,072 + 24 scales x 4 B = 3,168 B and writes 2 x 1,536
    # x 2 B = 6,144 B; GEMM2 reads 1,536 + 12 x 4 = 1,584 B and writes 3,072 x 2 = 6,144 B:
    # 64 x 17,040 = 1,090,560 B with the weights.
    touched = 1 - (1 - 8 / 256) ** 64
    assert touched == pytest.approx(0.868916, abs=1e-6)
    assert step.by_op["experts"] == pytest.approx(
        (456_242_176 * touched + 1_090_560) / (H100_BW * 0.69), rel=1e-4)
    # The permute (64 x 3,072 x 2 x 2 B = 786,432), the two quantize kernels (64 x (6,144 +
    # 3,168) = 595,968 and 64 x (3,072 + 1,584) = 297,984), the activation (64 x 4,608 x 2 B
    # = 589,824) and the finalize (64 + 64 rows x 6,144 B = 786,432) are each under a 4 us
    # floor (0.26 us at 0.90 x 3.35 TB/s): the rest of the step is the bare weights' price.
    bare = step_time(spec, gpu, eff=replace(eff, moe_kernel=None), **kw)
    assert {k: v for k, v in step.by_op.items() if k != "experts"} == {
        k: v for k, v in bare.by_op.items() if k != "experts"}


def test_fp8_expert_rows_do_not_take_the_triton_walk() -> None:
    # Mixtral with block-FP8 experts at EP 2, vLLM 0.19 on H100: FlashInfer's CUTLASS MoE
    # (its own pairs), not Triton's walk of every pair, which would move more bytes.
    fp8 = json.dumps({"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                      "weight_block_size": [128, 128]})
    spec = replace(load_model("mixtral-8x7b")[0], quantization_json=fp8)
    gpu = get_gpu("H100-80GB")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.19.0")
    assert priced_kernel(eff.moe_kernel, fmt=FP8_BLOCK_EXPERTS, version="0.19.0", gpu=gpu,
                         ep=2, dp_ranks=1) is VLLM_FI_CUTLASS_FP8_BLOCK_MOE
    kw = {"tokens": 491, "context": 1, "requests": 1, "logits": 1,
          "layout": Layout(tp=2, ep=2)}
    walk = FixedMoeKernels(((FP8_BLOCK_EXPERTS, VLLM_TRITON_FP8_BLOCK_MOE),))
    assert step_time(spec, gpu, eff=eff, **kw).bytes < step_time(
        spec, gpu, eff=replace(eff, moe_kernel=walk), **kw).bytes


def test_cutlass_traffic_under_ep_by_hand() -> None:
    # Qwen3-30B-A3B's experts (tests/data/configs/qwen3-30b-a3b.json: hidden 2,048,
    # moe_intermediate_size 768, 128 experts, top-8) as block FP8 on one rank of TP 4 + EP 4,
    # 1,024 tokens: the CUTLASS MoE's own pairs 1,024 x 8 / 4 = 2,048, its experts whole (768).
    t = moe_traffic(VLLM_FI_CUTLASS_FP8_BLOCK_MOE, tokens=1024, experts=128, top_k=8,
                    hidden=2048, width=768, act_bytes=2, ep=4)
    # GEMM1 reads each permuted row's FP8 copy, 2,048 + 16 scales x 4 B = 2,112 B, and writes
    # 2 x 768 x 2 B = 3,072; GEMM2 reads 768 + 6 x 4 = 792 and writes 2,048 x 2 = 4,096:
    # 2,048 x 10,072 = 20,627,456 B. No padding priced.
    assert (t.pad, t.gemm_bytes) == (1.0, 20_627_456)
    # permute 2,048 x 2,048 x 2 x 2 B; activation 2,048 x 3 x 768 x 2 B; finalize (2,048 read
    # + 1,024 written) x 2,048 x 2 B.
    assert t.small_kernel_bytes == (16_777_216, 9_437_184, 12_582_912)
    # The quantize kernels over the permuted rows: 2,048 x (4,096 + 2,112) and 2,048 x
    # (1,536 + 792).
    assert t.experts_kernel_bytes == (12_713_984, 4_767_744)
    # vLLM's Triton walk of the same step reads the 1,024 unpermuted FP8 rows (x 2,112 B) and
    # the own pairs' gated rows (2,048 x 792 B) but writes every pair's (8,192 x (3,072 +
    # 4,096) B): 62,504,960 B, about 3x the CUTLASS GEMMs'.
    walk = moe_traffic(VLLM_TRITON_FP8_BLOCK_MOE, tokens=1024, experts=128, top_k=8,
                       hidden=2048, width=768, act_bytes=2, ep=4)
    assert walk.gemm_bytes == 62_504_960
    # 16-bit experts: the same flow without the quantize kernels, the GEMMs reading bf16 rows.
    bf16 = moe_traffic(VLLM_FI_CUTLASS_MOE, tokens=1024, experts=128, top_k=8, hidden=2048,
                       width=768, act_bytes=2, ep=4)
    assert bf16.experts_kernel_bytes == ()
    assert bf16.gemm_bytes == 2048 * 2 * (2048 + 2 * 768 + 768 + 2048)
