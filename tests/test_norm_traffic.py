"""The token-wide small kernels' bytes a prefill step moves on every TP rank
(kvplan.perf.norm_traffic, hopperops65): by hand, then in the step."""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.norm_traffic import fp32_copy_bytes, quant_input_bytes, rms_norm_bytes
from kvplan.perf.roofline import step_time

AGG_CONFIGS = "tests/data/sim_to_real/aiconfig_configs"
H200 = get_gpu("H200")


def _prefill(spec, tp: int, tokens: int):  # type: ignore[no-untyped-def]
    eff = engine_efficiency("vllm", device_efficiency(H200), version="0.18.0", spec=spec)
    # The derivations below read these: the kernel floor 4 us, HBM 4.8e12 B/s x hbm 0.9.
    assert eff.kernel_floor_s == 4e-6 and eff.hbm == 0.9
    assert H200.hbm_bytes_per_s == 4.8e12
    return step_time(spec, H200, tokens=tokens, context=tokens, requests=1, phase="prefill",
                     layout=Layout(tp=tp), eff=eff)


def test_bytes_by_hand() -> None:
    # Fused add + RMSNorm, 8,192 rows of 2,880 bf16: reads row and residual, writes both:
    # 8,192 x 2,880 x 2 x 4 = 188,743,680; no residual: read and write, 94,371,840.
    assert rms_norm_bytes(8192, 2880, 2, residual=True) == 188_743_680
    assert rms_norm_bytes(8192, 2880, 2, residual=False) == 94_371_840
    # FP8 group quantization of 10 rows of 3,072: read 10 x 3,072 x 2 = 61,440; write 10 x
    # (3,072 FP8 + 24 groups x 4 B scale) = 31,680; 93,120.
    assert quant_input_bytes(10, 3072, 2) == 93_120
    # The float32 copy of 10 rows of 3,072: 122,880.
    assert fp32_copy_bytes(10, 3072) == 122_880


def test_gpt_oss_prefill_adds_the_norms_on_every_rank() -> None:
    # gpt-oss-120b: 36 layers, hidden 2,880, bf16 attention (no quantization), bf16 router.
    # A token: 2 norms x 36 layers x 23,040 B (4 x 2,880 x 2), less layer 0's input norm with
    # no residual (23,040 - 11,520): 1,647,360 B; 8,192 tokens: 13,495,173,120 B at 4.32e12
    # B/s = 3.12388 ms, less the 72 norms' floors already counted (72 x 4 us = 0.288 ms):
    # 2.83588 ms over the 1-token step's small kernels (its norms under the floor). The same
    # at every TP degree: the norms do not split.
    spec = load_spec("tests/data/configs/gpt-oss-120b.json")
    for tp in (1, 8):
        added = (_prefill(spec, tp, 8192).by_op["small_kernels"]
                 - _prefill(spec, tp, 1).by_op["small_kernels"])
        assert added == pytest.approx(2.83588e-3, rel=1e-4)


def test_minimax_fp8_prefill_adds_quant_and_fp32_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    # MiniMax-M2.5 block FP8: 62 layers, hidden 3,072; per token and layer the input norm
    # (24,576 B; layer 0: 12,288), the qkv input's quantization (6,144 read + 3,072 + 96
    # written = 9,312), the post-attention norm (24,576) with the router's float32 copy
    # (12,288): 70,752 B, layer 0 58,464; a token 62 x 70,752 - 12,288 = 4,374,336 B; 8,192
    # tokens: 35,834,560,512 B at 4.32e12 B/s = 8.29504 ms, less the 3 kernels' floors a layer
    # already counted (3 x 62 x 4 us = 0.744 ms): 7.55104 ms more than the same step with the
    # three rules' bytes at zero (each kernel's bytes pass its floor at 8,192 tokens). The same
    # at TP 4 and 8: nothing here splits.
    spec = load_spec(f"{AGG_CONFIGS}/MiniMaxAI--MiniMax-M2.5.json")
    import kvplan.perf.roofline as roofline

    with_rule = {tp: _prefill(spec, tp, 8192).seconds for tp in (4, 8)}
    for name in ("rms_norm_bytes", "quant_input_bytes", "fp32_copy_bytes"):
        monkeypatch.setattr(roofline, name, lambda *a, **k: 0.0)
    for tp in (4, 8):
        added = with_rule[tp] - _prefill(spec, tp, 8192).seconds
        assert added == pytest.approx(7.55104e-3, rel=1e-4)
