"""SGLang's shared-expert fusion for DeepSeek-V3 on ROCm (kvplan.engines.sglang.shared_fusion):
the one shared expert runs inside the fused MoE as a 257th expert, so its MLP launches nothing of
its own, where the engine, release, GPU, architecture, expert counts, quantization and MoE
communication say, and nowhere else."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvplan import load_spec
from kvplan.engines.sglang.shared_fusion import SGLANG_ROCM_SHARED_EXPERT_FUSION
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import eager_ops, engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.perf.shared_fusion import engine_folds_shared_expert

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
DEEPSEEK = load_spec(str(CONFIGS / "deepseek-v3.1.json"))  # 3 dense + 58 MoE layers, 256 + 1
KIMI_K2 = load_spec(str(CONFIGS / "kimi-k2.json"))  # DeepseekV3ForCausalLM, 384 routed experts
US = 1e-6
TP8 = Layout(tp=8)


def _eff(gpu: str, version: str | None = "0.5.7", engine: str = "sglang"):
    return engine_efficiency(engine, device_efficiency(get_gpu(gpu)), version=version)


def _eff_with_deepep():
    # --moe-a2a-backend deepep: the engine's all-to-all rule (kvplan.engines.sglang.deepep).
    from kvplan.engines.sglang.deepep import DeepEp
    return replace(_eff("MI300X"), moe_a2a=DeepEp(mode="auto", nvfp4_dispatch=False))


def _step(gpu: str, *, tokens: int = 1, spec=DEEPSEEK, eff=None, **kw):
    device = get_gpu(gpu)
    return step_time(spec, device, tokens=tokens, context=1000, requests=tokens,
                     layout=Layout(tp=8), eff=eff if eff is not None else _eff(gpu),
                     quantization="fp8", **kw)


def test_the_declaration_is_the_code_read_one():
    # deepseek_v2.py:3357-3369: DeepseekV3ForCausalLM first, 256 routed experts, one shared,
    # HIP capability >= (9, 4) (gfx942; gfx950 is (9, 5)); :3376 w4afp8 keeps it apart.
    f = SGLANG_ROCM_SHARED_EXPERT_FUSION
    assert (f.platform, f.compute_capabilities, f.architectures, f.routed_experts) == (
        "rocm", ((9, 4), (9, 5)), ("DeepseekV3ForCausalLM",), 256)
    assert f.not_quantizations == ("w4afp8",) and f.since == "0.5.7"


def test_deepseek_on_mi300x_under_sglang_057_drops_the_shared_mlp():
    # Batch 1, TP 8, MI300X (4 us floor): each of the 58 MoE layers' shared expert was two w8a8
    # GEMMs (gate_up 7168 x 512 and down 256 x 7168 a rank, FP8: 5.5 MB, 1.4 us at 0.77 x 5.3
    # TB/s, under the floor), each a quantize + GEMM kernel: 4 x 4 us = 16 us a layer, 58 x 16 =
    # 928 us a step. Inside the fused MoE its 5.5 MB join the routed experts', whose one-token
    # time stays at the preset's 67.4 us moe floor (9 experts x 5.5 MB = 49.5 MB, 12 us): the
    # experts' op is unchanged. The 3 dense layers' MLPs stay.
    fused = _step("MI300X")
    apart = _step("MI300X", eff=replace(_eff("MI300X"), shared_expert_fusion=()))
    assert apart.by_op["mlp"] - fused.by_op["mlp"] == pytest.approx(928 * US)
    assert fused.by_op["experts"] == pytest.approx(apart.by_op["experts"])
    assert fused.by_op["experts"] == pytest.approx(58 * 67.4 * US)
    assert apart.seconds - fused.seconds == pytest.approx(928 * US)


def test_at_64_tokens_its_bytes_join_the_experts():
    # 64 tokens: the shared expert's 5.5 MB a layer (7168 x 256 x 3 bytes, FP8 weights) move
    # from the mlp op into the experts' op, which is above its floor there.
    fused = _step("MI300X", tokens=64)
    apart = _step("MI300X", tokens=64, eff=replace(_eff("MI300X"), shared_expert_fusion=()))
    assert fused.by_op["experts"] > apart.by_op["experts"]
    assert fused.by_op["mlp"] < apart.by_op["mlp"]


@pytest.mark.parametrize("case", [
    {"gpu": "B200"},  # SM 10.x: not declared (flashinfer_trtllm keeps it apart)
    {"gpu": "MI300X", "version": "0.5.6"},  # before the release read
    {"gpu": "MI300X", "engine": "vllm"},  # vLLM's own MoE code
    {"gpu": "MI300X", "spec": KIMI_K2},  # 384 routed experts: not 256
])
def test_not_folded_elsewhere(case):
    gpu = case.pop("gpu")
    spec = case.pop("spec", DEEPSEEK)
    eff = _eff(gpu, **case)
    assert not engine_folds_shared_expert(eff, spec, get_gpu(gpu), TP8, "fp8")
    assert _step(gpu, spec=spec, eff=eff).seconds == pytest.approx(
        _step(gpu, spec=spec, eff=replace(eff, shared_expert_fusion=())).seconds)


def test_deepep_and_w4afp8_keep_it_apart():
    # deepseek_v2.py:3374-3377: DeepEP's all-to-all or a w4afp8 checkpoint disables it; plain
    # expert parallelism on HIP keeps it (:3370-3373).
    eff, device = _eff("MI300X"), get_gpu("MI300X")
    assert engine_folds_shared_expert(eff, DEEPSEEK, device, TP8, "fp8")
    assert engine_folds_shared_expert(eff, DEEPSEEK, get_gpu("MI355X"), TP8, None)
    assert engine_folds_shared_expert(eff, DEEPSEEK, device, Layout(tp=8, ep=8), "fp8")
    deepep = _eff_with_deepep()
    assert deepep.moe_a2a is not None
    assert not engine_folds_shared_expert(deepep, DEEPSEEK, device, Layout(tp=8, ep=8), "fp8")
    assert not engine_folds_shared_expert(eff, DEEPSEEK, device, TP8, "w4afp8")


def test_the_eager_prefill_launches_no_shared_expert_ops():
    # kvplan.perf.op_counts._moe_block_ops: an FP8 shared expert apart is 2 w8a8 GEMMs (a
    # quantize + GEMM each: 4), its activation (1) and the add to the routed output (1): 6 ops
    # a MoE layer, 58 x 6 = 348 fewer in an eager prefill step when it is folded in.
    device = get_gpu("MI300X")
    eff = _eff("MI300X")
    fused = eager_ops(DEEPSEEK, TP8, eff, "fp8", platform="rocm", gpu=device)
    apart = eager_ops(DEEPSEEK, TP8, replace(eff, shared_expert_fusion=()), "fp8",
                      platform="rocm", gpu=device)
    assert apart - fused == 348


def test_the_forensic_reads_the_triton_gemm_lead_per_layer():
    # tests/benches/mi300x_forensic.py item 6: ROCm/aiter PR 1930's median TPOT at concurrency
    # 4, 28.76 -> 22.05 ms, over DeepSeek's 61 layers (the fused q_a + kv_a GEMM runs once a
    # layer): 6.71 ms / 61 = 110.0 us a layer; at 16, 16.34 ms / 61 = 267.9 us.
    from tests.benches import mi300x_forensic

    per_layer = dict(mi300x_forensic.triton_gemm_per_layer_us())
    assert per_layer[4] == pytest.approx(110.0, abs=0.1)
    assert per_layer[16] == pytest.approx(267.9, abs=0.1)
    assert any("a412b355" in read for _, read in mi300x_forensic.CHECKED)
