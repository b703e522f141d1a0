"""vLLM 0.11.0's Triton unified attention split-KV decode path (kvplan.perf.split_decode,
declared in kvplan.engines.vllm.attention_backend TRITON_UNIFIED_ATTENTION.split_decode),
worked by hand from gpt-oss-120b's config.json (tests/data/configs/gpt-oss-120b.json: 64 query
heads, 8 KV heads, head_dim 64, 36 layers alternating a 128-token window and full attention,
attention sinks; issue 30, gptoss61)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan.engines.vllm.attention_backend import TRITON_UNIFIED_ATTENTION
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_kernel import varlen_kernel
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from kvplan.perf.split_decode import SplitDecodeCost
from kvplan.sources.resolve import load_model

CONFIG = "tests/data/configs/gpt-oss-120b.json"
BW = 2.039e12 * 0.90  # the A100-80GB's HBM at kvplan's fraction
FLOOR = 4e-6  # the kernel floor (device_efficiency)


def _vllm(version: str):
    return engine_efficiency("vllm", device_efficiency(get_gpu("A100-80GB")), version=version)


def _split(version: str = "0.11.0", tp: int = 1) -> SplitDecodeCost | None:
    spec = load_model(CONFIG)[0]
    kernel = varlen_kernel(_vllm(version), spec, get_gpu("A100-80GB"), "bf16")
    assert kernel is TRITON_UNIFIED_ATTENTION
    return SplitDecodeCost.of(kernel, spec, tp, version)


def test_which_calls_split_by_hand() -> None:
    # BLOCK_Q = 16 / (64 / 8) = 2 tokens a tile (triton_unified_attention.py:728-730); the split
    # path when (tokens // 2 + sequences) x KV heads <= 128 (:741, :750).
    s = _split()
    assert s is not None and s.block_q == 2 and s.kv_heads == 8 and s.q_heads == 64
    assert s.runs(8, 8)  # (4 + 8) x 8 = 96
    assert s.runs(10, 10)  # (5 + 10) x 8 = 120
    assert s.runs(11, 11)  # (5 + 11) x 8 = 128, not > 128: split
    assert not s.runs(12, 12)  # (6 + 12) x 8 = 144
    assert not s.runs(16, 16)  # (8 + 16) x 8 = 192
    # TP 8: one KV head a rank, 8 query heads, BLOCK_Q 2: (B // 2 + B) <= 128 up to B = 85.
    s8 = _split(tp=8)
    assert s8 is not None and s8.kv_heads == 1 and s8.q_heads == 8
    assert s8.runs(85, 85) and not s8.runs(86, 86)  # 42 + 85 = 127; 43 + 86 = 129


def test_segments_by_hand() -> None:
    # act = ceil(L / (t x 16)), t = ceil(L / 256) (:632-638).
    s = _split()
    assert s is not None
    assert s.segments(32_000) == 16  # t = 125, ceil(32,000 / 2,000) = 16
    assert s.segments(1_025) == 13  # t = 5, ceil(1,025 / 80) = 12.8 -> 13
    assert s.segments(300) == 10  # t = 2, ceil(300 / 32) = 9.4 -> 10
    assert s.segments(100) == 7  # t = 1, ceil(100 / 16) = 6.25 -> 7
    assert s.segments(1) == 1 and s.segments(0) == 0
    # Four decodes of 32,000 keys: 4 x 16 segments x 64 heads x (64 x 4 + 8) B = 1,081,344 B.
    assert s.partial_bytes([32_000] * 4) == 1_081_344


def test_only_the_release_read() -> None:
    # 0.11.0 read; 0.20.0 takes its threshold and segments from the backend (not this rule);
    # the releases between were not read.
    assert _split("0.11.0") is not None and _split("0.11") is not None
    for version in ("0.10.2", "0.15.1", "0.20.0"):
        assert _split(version) is None


def test_mixed_step_decode_only_by_hand() -> None:
    # Four decodes at 32,000 keys, decode-only, on one A100 under vLLM 0.11.0 (CUDA graph of 4:
    # split). Without the path: full layers (18) read 128,000 KV rows of 2,048 B = 262,144,000 B
    # (bytes win over 4 x 32,000 x 16,384 x 2 FLOPs / 187.2e12 = 22.4 us); sliding (18) 512
    # rows, 1,048,576 B = 0.571 us, the 4 us floor. The path adds P = 1,081,344 B a layer to the
    # attention kernel's bytes and a reduce kernel of max(P / BW, floor): 1,081,344 / 1.8351e12
    # = 0.589 us -> the 4 us floor, in all 36 layers.
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("A100-80GB")
    p = 1_081_344
    full = (262_144_000 + p) / BW
    sliding = max((1_048_576 + p) / BW, FLOOR)
    expected = 18 * (full + FLOOR) + 18 * (sliding + FLOOR)
    cost = MixedStepCost(spec, gpu, eff=_vllm("0.11.0"), graph_sizes=(1, 2, 4, 8, 16))
    assert cost.attention_seconds([32_000] * 4, []) == pytest.approx(expected, rel=1e-9)
    before = 18 * 262_144_000 / BW + 18 * FLOOR
    assert expected - before == pytest.approx(18 * (p / BW + FLOOR) + 18 * FLOOR, rel=1e-9)
    # A step with a chunk, or 16 decodes ((8 + 16) x 8 = 192 programs), runs the one-pass
    # kernel: nothing added.
    plain = MixedStepCost(spec, gpu, eff=_vllm("0.15.1"), graph_sizes=(1, 2, 4, 8, 16))
    assert cost.attention_seconds([32_000] * 16, []) == plain.attention_seconds([32_000] * 16,
                                                                                 [])
    assert cost.attention_seconds([32_000] * 4, [(0, 2)]) == plain.attention_seconds(
        [32_000] * 4, [(0, 2)])
    # Three decodes pad to the graph of 4: (2 + 4) x 8 = 48, split, their own partials.
    assert cost._split_partials(3, [32_000] * 3, False) == 3 * 16 * 64 * 264


def test_from_sums_uses_the_mean_keys() -> None:
    # A model with sinks and full attention in every layer (gpt-oss-120b without its windows):
    # seconds_from_sums prices the split path from the decodes' mean keys, here equal to
    # `seconds` for four decodes of 32,000 keys.
    spec = replace(load_model(CONFIG)[0], layer_windows=None)
    cost = MixedStepCost(spec, get_gpu("A100-80GB"), eff=_vllm("0.11.0"), graph_sizes=(1, 2, 4))
    assert cost.full_attention_only
    assert cost.seconds_from_sums(4, 128_000, []) == pytest.approx(
        cost.seconds(decode_contexts=[32_000] * 4, chunks=[]), rel=1e-12)
    plain = MixedStepCost(spec, get_gpu("A100-80GB"), eff=_vllm("0.15.1"), graph_sizes=(1, 2, 4))
    # 36 full layers, each P / BW more bytes and a reduce at the floor.
    assert cost.seconds_from_sums(4, 128_000, []) - plain.seconds_from_sums(
        4, 128_000, []) == pytest.approx(36 * (1_081_344 / BW + FLOOR), rel=1e-9)


def test_estimate_decode_step_equals_the_simulators() -> None:
    # One rule, two callers (kvplan.perf.split_decode.decode_partials): roofline.step_time's
    # decode step (estimate, plan) of four requests at 32,000 keys on one A100 under vLLM
    # 0.11.0 charges the split path as the simulator's decode-only step does. The attention
    # by hand (test_mixed_step_decode_only_by_hand): 18 full layers of (262,144,000 + P) / BW
    # and 18 sliding ones at the floor, each with a reduce kernel at the floor, P = 1,081,344.
    spec = load_model(CONFIG)[0]
    gpu = get_gpu("A100-80GB")
    eff = _vllm("0.11.0")
    p = 1_081_344
    expected = 18 * ((262_144_000 + p) / BW + FLOOR) + 18 * (FLOOR + FLOOR)
    decode = step_time(spec, gpu, tokens=4, context=32_000, requests=4, eff=eff)
    assert decode.by_op["attention"] == pytest.approx(expected, rel=1e-9)
    sim = MixedStepCost(spec, gpu, eff=eff, graph_sizes=(1, 2, 4, 8, 16))
    assert decode.seconds == pytest.approx(
        sim.seconds(decode_contexts=[32_000] * 4, chunks=[]), rel=1e-12)
    # Without the path (0.15.1's kernel reads no partials): the attention is P / BW and 36
    # floors less (18 full layers' bytes and reduces, 18 sliding reduces).
    plain = step_time(spec, gpu, tokens=4, context=32_000, requests=4, eff=_vllm("0.15.1"))
    assert decode.by_op["attention"] - plain.by_op["attention"] == pytest.approx(
        18 * (p / BW + FLOOR) + 18 * FLOOR, rel=1e-9)
    # Sixteen requests ((8 + 16) x 8 = 192 programs) or two draft tokens a request (queries
    # three tokens long) run the one-pass kernel: nothing added.
    for tokens, requests in ((16, 16), (12, 4)):
        assert step_time(spec, gpu, tokens=tokens, context=32_000, requests=requests,
                         eff=eff).by_op["attention"] == step_time(
            spec, gpu, tokens=tokens, context=32_000, requests=requests,
            eff=_vllm("0.15.1")).by_op["attention"]
