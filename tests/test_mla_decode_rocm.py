"""SGLang's absorbed-MLA decode on gfx942 (kvplan.engines.sglang.mla_decode): the kernels its
DeepSeek-V2/V3 code launches per layer beyond kvplan's count, charged at the floor in a decode
step where the engine, release, GPU, architecture and heads per rank say, and nowhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.engines.sglang.mla_decode import SGLANG_GFX942_MLA_DECODE
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_kernel import mla_decode_extra_kernels
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
DEEPSEEK = load_spec(str(CONFIGS / "deepseek-v3.1.json"))  # 61 layers, 128 heads, FP8 blocks
KIMI_K2 = load_spec(str(CONFIGS / "kimi-k2.json"))  # the same architecture, 64 heads
US = 1e-6


def _small_kernels_s(gpu: str, *, engine: str = "sglang", version: str | None = "0.5.7",
                     spec=DEEPSEEK, tp: int = 8, phase: str = "decode") -> float:
    device = get_gpu(gpu)
    eff = engine_efficiency(engine, device_efficiency(device), version=version)
    st = step_time(spec, device, tokens=1, context=1000, requests=1, phase=phase,
                   layout=Layout(tp=tp), eff=eff)
    return st.by_op["small_kernels"]


def test_the_count_is_the_code_read_one():
    # Per gfx942 decode layer (the module docstring's lines): RoPE as PyTorch ops, the cos /
    # sin gather 1 + two repeat_interleave 2 + per q and k (mul, neg, stack, mul, add) 10 + two
    # casts 2 = 15, kvplan counting 1: 14; each absorb bmm cast + scale + bf16 bmm = 3 where
    # kvplan counts quantize + bmm = 2: 2 for the two; q and k torch.cat: 2. 14 + 2 + 2 = 18.
    assert SGLANG_GFX942_MLA_DECODE.extra_kernels == 18
    assert SGLANG_GFX942_MLA_DECODE.compute_capabilities == ((9, 4),)


def test_deepseek_on_mi300x_under_sglang_057_pays_them_at_the_floor():
    # DeepSeek-V3.1 at TP 8 on MI300X (gfx942, 9.4): 128 / 8 = 16 heads a rank (aiter), a
    # rope_scaling (YaRN), DeepseekV3ForCausalLM: 18 kernels on each of its 61 layers at the
    # MI300X preset's 4 us floor = 61 x 18 x 4 us = 4,392 us more small-kernel time per decode
    # step than SGLang 0.5.6 (not read: not charged) on the same GPU.
    added = _small_kernels_s("MI300X") - _small_kernels_s("MI300X", version="0.5.6")
    assert added == pytest.approx(4392 * US)
    assert _small_kernels_s("MI300X", version=None) == _small_kernels_s("MI300X")  # the newest
    assert _small_kernels_s("MI325X") - _small_kernels_s("MI325X", version="0.5.6") == (
        pytest.approx(4392 * US))  # the MI300X die (gfx942) with HBM3E


@pytest.mark.parametrize("case", [
    # CUDA: FlashMLA / FA3 paths, one RoPE kernel (the H20: SGLang 0.5.7's SM 9.0 all-reduce +
    # RMSNorm fusion, kvplan.engines.sglang.allreduce_fusion, leaves it out; on the H200 it
    # takes 121 norm floors off the same op)
    {"gpu": "H20"},
    {"gpu": "MI355X"},  # gfx950 (9.5): aiter's fused rope + cat + cache and FP8 bmm
    {"gpu": "MI300X", "engine": "vllm"},  # vLLM's ROCm MLA is its own code
    {"gpu": "MI300X", "spec": KIMI_K2},  # 64 / 8 = 8 heads a rank: the triton backend
    {"gpu": "MI300X", "phase": "prefill"},  # the extend step runs MHA, not the absorbed path
])
def test_not_charged_elsewhere(case):
    gpu = case.pop("gpu")
    before = _small_kernels_s(gpu, version="0.5.6", **case)
    assert _small_kernels_s(gpu, **case) == before


def test_kimi_k2_at_tp4_has_16_heads_a_rank_and_pays_them():
    # 64 / 4 = 16 heads a rank: SGLang picks aiter there, so the rule applies (61 layers).
    device = get_gpu("MI300X")
    eff = engine_efficiency("sglang", device_efficiency(device), version="0.5.7")
    assert mla_decode_extra_kernels(eff, KIMI_K2, device, 4, "decode") == 18
    assert mla_decode_extra_kernels(eff, KIMI_K2, device, 8, "decode") == 0


def test_the_simulator_prices_the_same_step():
    # `simulate --engine sglang --engine-version 0.5.7 --gpu MI300X --tp 8`: its decode step
    # (MixedStepCost) is roofline's, so it grows by the same 4,392 us a step, less the shared
    # expert's 58 x 4 x 4 us = 928 us that 0.5.7's fused MoE takes in on ROCm
    # (kvplan.engines.sglang.shared_fusion, tests/test_shared_fusion_rocm.py): 3,464 us.
    def decode_s(version: str) -> float:
        inputs = estimate_inputs(DEEPSEEK, context=8192, gpu="MI300X", tp=8,
                                 engine=Engine.sglang, engine_version=version)
        sim, _ = setup(DEEPSEEK, inputs)
        return sim.cost.seconds(decode_contexts=[1000], chunks=[])

    assert decode_s("0.5.7") - decode_s("0.5.6") == pytest.approx((4392 - 928) * US)


def test_the_forensic_decomposes_the_replays_step():
    # tests/benches/mi300x_forensic.py: prospective59's DeepSeek-V3.1 1000/1000 run at
    # concurrency 1 (10 prompts, 6,101 input and 4,220 generated tokens): batch 1 at 610.1 +
    # 422.0 / 2 = 821 tokens; its step is the simulator's decode price there, and the rules it
    # shaped add 61 x 18 x 4 us = 4,392 us to it and take the shared expert's 58 x 4 x 4 us =
    # 928 us away (kvplan.engines.sglang.shared_fusion).
    from tests.benches import mi300x_forensic, prospective_runs
    from tests.benches.prospective59_runs import DATA

    run = prospective_runs.runs_by_id(DATA)[
        "sgl-cookbook DeepSeek-V3.1 MI300X TP8 random 1000/1000 conc 1"]
    point = mi300x_forensic.decompose(run)
    assert (point.batch, point.context, point.layers) == (1, 821, 61)
    assert point.step.seconds - point.before_rule.seconds == pytest.approx((4392 - 928) * US)
    inputs = estimate_inputs(DEEPSEEK, context=run["max_model_len"], gpu="MI300X", tp=8,
                             engine=Engine.sglang, engine_version="0.5.7")
    sim, _ = setup(DEEPSEEK, inputs)
    assert sim.cost.seconds(decode_contexts=[821], chunks=[]) == pytest.approx(
        point.step.seconds)
    assert mi300x_forensic.RULE_KERNELS == 18 and mi300x_forensic.CODE_READ_KERNELS == 19
