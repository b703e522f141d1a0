"""SGLang's piecewise prefill CUDA graphs (kvplan.engines.sglang.prefill_graph): on by default
from 0.5.10 (server_args.py:637 `disable_piecewise_cuda_graph: bool = False`, 0.5.10.post1), opt-in
from 0.5.4 (server_args.py:450 `enable_piecewise_cuda_graph: bool = False`, 0.5.4); a captured
step launches only the ops outside the graphs (kvplan.perf.op_counts.graph_prefill_ops)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan.engines.sglang.prefill_graph import SGLANG_PIECEWISE_PREFILL
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import PREFILL_LAUNCH_FIT
from kvplan.perf.engine_traits import (
    engine_efficiency,
    graph_prefill_applies,
    prefill_launch_ops,
)
from kvplan.perf.layout import Layout
from kvplan.perf.op_counts import eager_prefill_ops, graph_prefill_ops
from kvplan.perf.roofline import step_time

GB300 = get_gpu("GB300")


@pytest.mark.parametrize(("version", "flag", "on"), [
    ("0.5.9", None, False),  # opt-in: enable_piecewise_cuda_graph = False (server_args.py:604)
    ("0.5.10", None, True),  # disable_piecewise_cuda_graph = False (server_args.py:637)
    ("0.5.10.post1", None, True),
    ("0.5.23", None, True),  # cuda_graph_config.py:119-123: a prefill graph by default on CUDA
    (None, None, False),  # no release named: the fitted eager term (its rows name none)
    ("0.5.8.post1", True, True),  # --enable-piecewise-cuda-graph
    ("0.5.3", True, False),  # no piecewise runner before 0.5.4
    ("0.5.10", False, False),  # --disable-piecewise-cuda-graph, a disaggregated prefill server
])
def test_default_by_release(version: str | None, flag: bool | None, on: bool) -> None:
    eff = engine_efficiency("sglang", version=version, prefill_graph=flag)
    assert (eff.prefill_graph is SGLANG_PIECEWISE_PREFILL) is on
    assert eff.prefill_launch_s == PREFILL_LAUNCH_FIT.value  # the fitted 63.2 us, never changed


def test_other_engines_and_enforce_eager() -> None:
    assert engine_efficiency("vllm", version="0.19.0").prefill_graph is None
    # TensorRT-LLM's PyTorch backend runs prefill steps eagerly (kvplan.perf.trtllm_ops):
    # the fitted launch time, no piecewise prefill graph.
    trt = engine_efficiency("trtllm")
    assert trt.prefill_launch_s == PREFILL_LAUNCH_FIT.value and trt.prefill_graph is None
    assert engine_efficiency("sglang", version="0.5.10", enforce_eager=True).prefill_graph is None


def test_graph_ops_minimax_m2_tp2() -> None:
    # MiniMax-M2 (config.json: 62 layers, every one full attention) on a TP-2 rank:
    # 6 copies / pads of the static buffers (replay_prepare) + 62 x (3 ops of the attention
    # split op: KV write, attention, copy into the graph's buffer; + 1 graph launch) + the last
    # piece's launch + lm_head + its all-gather = 6 + 248 + 1 + 2 = 257.
    spec = load_spec("minimax-m2")
    assert graph_prefill_ops(spec, Layout(tp=2), SGLANG_PIECEWISE_PREFILL) == 257
    eff = engine_efficiency("sglang", version="0.5.10")
    assert prefill_launch_ops(spec, GB300, Layout(tp=2), 1000, eff) == 257
    # Without the graph every op is launched (the existing count).
    eager = engine_efficiency("sglang", version="0.5.9")
    assert prefill_launch_ops(spec, GB300, Layout(tp=2), 1000, eager) == eager_prefill_ops(
        spec, Layout(tp=2), platform="cuda", gpu=GB300)


def test_graph_ops_llama_one_gpu() -> None:
    # Llama-3.1-8B, 32 layers, one GPU: 6 + 32 x 4 + 1 + 1 (lm_head, no gather) = 136.
    assert graph_prefill_ops(load_spec("llama-3.1-8b"), Layout(),
                             SGLANG_PIECEWISE_PREFILL) == 136


def test_step_time_charges_graph_launches() -> None:
    spec = load_spec("minimax-m2")
    eff = engine_efficiency("sglang", version="0.5.10")
    st = step_time(spec, GB300, tokens=1000, context=1000, requests=1, phase="prefill",
                   layout=Layout(tp=2), eff=eff, logits=1)
    assert st.by_op["prefill_launch"] == pytest.approx(257 * PREFILL_LAUNCH_FIT.value)


def test_where_sglang_turns_it_off() -> None:
    eff = engine_efficiency("sglang", version="0.5.10")
    minimax, h200 = load_spec("minimax-m2"), get_gpu("H200")
    assert graph_prefill_applies(eff, minimax, h200, Layout(tp=2), 8192)
    # DP attention, an EP all-to-all (server_args.py:1091-1093, :1102-1103, 0.5.10.post1).
    assert not graph_prefill_applies(eff, minimax, h200, Layout(tp=2, dp_attention=True), 100)
    assert not graph_prefill_applies(eff, minimax, h200, Layout(tp=2, ep=2), 100)
    # Non-CUDA hardware (is_hip(), :1099-1100).
    assert not graph_prefill_applies(eff, minimax, get_gpu("MI300X"), Layout(tp=2), 100)
    # configs/model_config.py:1352-1358: DeepseekV32ForCausalLM, Qwen3NextForCausalLM.
    for name in ("deepseek-v3.2", "qwen3-next-80b-a3b"):
        assert not graph_prefill_applies(eff, load_spec(name), h200, Layout(tp=8), 100)
    # MLA: captured up to 2,048 tokens (server_args.py:1256-1261).
    v3 = load_spec("deepseek-v3")
    assert graph_prefill_applies(eff, v3, h200, Layout(tp=8), 2048)
    assert not graph_prefill_applies(eff, v3, h200, Layout(tp=8), 2049)
    # Past it, the eager count: the preset names DeepseekV3ForCausalLM (presetarch68), so at
    # 0.5.10 its shared expert runs inside fused_moe (kvplan.engines.sglang.shared_fusion): 58
    # MoE layers x 6 ops fewer than the count with it apart (tests/test_shared_fusion_rocm.py).
    apart = eager_prefill_ops(v3, Layout(tp=8), platform="cuda", gpu=h200)
    assert prefill_launch_ops(v3, h200, Layout(tp=8), 2049, eff) == apart - 58 * 6 == 1759


def test_disaggregated_prefill_server_runs_eagerly() -> None:
    # server_args.py:1113-1114 (0.5.10.post1): `disaggregation_mode != "null"` turns the graphs
    # off, so a disaggregated role's prefill keeps every launch (kvplan.analysis.disagg marks
    # its role requests `disaggregated`).
    from dataclasses import replace

    from kvplan.analysis.plan_search import _cost_setup, evaluate
    from kvplan.analysis.plan_types import Layout as PlanLayout
    from kvplan.analysis.plan_types import PlanRequest
    from kvplan.engines.base import Engine

    spec = load_spec("minimax-m2")
    req = PlanRequest(concurrency=1, context=4096, gpu=GB300, engine=Engine("sglang"),
                      engine_version="0.5.10")
    cand = evaluate(spec, req, GB300, PlanLayout(tp=2), "bf16", None, 4096)
    assert cand is not None
    assert _cost_setup(spec, req, cand)[2].efficiency.prefill_graph is SGLANG_PIECEWISE_PREFILL
    role = replace(req, disaggregated=True)
    assert _cost_setup(spec, role, cand)[2].efficiency.prefill_graph is None



def test_simulate_option() -> None:
    # `simulate --engine sglang` (kvplan.analysis.simulate.run): 0.5.10's default, and SGLang's
    # own flags either way (SglangOptionsSim.piecewise_cuda_graph; no CLI option: simulate's
    # --help is at its 80 lines).
    from kvplan.analysis.inputs import estimate_inputs
    from kvplan.analysis.simulate.run import setup
    from kvplan.analysis.simulate.sglang_scheduler import SglangOptionsSim
    from kvplan.engines.base import Engine

    spec = load_spec("minimax-m2")
    for version, flag, on in (("0.5.10", None, True), ("0.5.10", False, False),
                              ("0.5.8.post1", None, False), ("0.5.8.post1", True, True)):
        inputs = estimate_inputs(spec, context=8192, gpu="GB300", tp=2,
                                 engine=Engine("sglang"), engine_version=version)
        sim, notes = setup(spec, inputs, sglang=SglangOptionsSim(piecewise_cuda_graph=flag))
        assert (sim.cost.eff.prefill_graph is SGLANG_PIECEWISE_PREFILL) is on
        assert any("piecewise CUDA graphs" in n for n in notes) is on


def test_sm100_trtllm_moe_turns_it_off() -> None:
    # server_args.py (0.5.10.post1) sets --moe-runner-backend flashinfer_trtllm on SM 10.x for
    # DeepSeek-V3 FP8 (:1614-1657) and Qwen3 MoE unquantized (:1952-1976), and that runner turns
    # the graphs off (:2722-2731); on SM 9.0 it does not. MiniMax-M2 is on no such list.
    eff = engine_efficiency("sglang", version="0.5.10")
    b200, h200 = get_gpu("B200"), get_gpu("H200")
    v3 = load_spec("tests/data/configs/deepseek-v3.json")  # DeepseekV3ForCausalLM, fp8
    qwen = load_spec("tests/data/configs/qwen3-30b-a3b.json")  # Qwen3MoeForCausalLM, bf16
    for spec in (v3, qwen):
        assert not graph_prefill_applies(eff, spec, b200, Layout(tp=8), 1000)
        assert graph_prefill_applies(eff, spec, h200, Layout(tp=8), 1000)
    assert graph_prefill_applies(eff, load_spec("minimax-m2"), GB300, Layout(tp=2), 1000)


def test_sm100_trtllm_moe_rule_ends_at_0_5_13() -> None:
    # The flashinfer_trtllm / flashinfer_mxfp4 rule is last in 0.5.12 (server_args.py
    # :3172-3186); 0.5.13's _handle_piecewise_cuda_graph (:1342-1380) has no MoE-runner
    # condition: the graphs stay on for Qwen3 MoE bf16 on B200 from 0.5.13.
    b200 = get_gpu("B200")
    qwen = load_spec("tests/data/configs/qwen3-30b-a3b.json")  # Qwen3MoeForCausalLM, bf16
    for version, on in (("0.5.12", False), ("0.5.13", True), ("0.5.16", True)):
        eff = engine_efficiency("sglang", version=version)
        assert graph_prefill_applies(eff, qwen, b200, Layout(tp=8), 1000) is on


@pytest.mark.parametrize("config", ["qwen3.5-35b-a3b", "qwen3.5-27b"])
def test_qwen3_5_validated_from_0_5_16(config: str) -> None:
    # model_config.py:1785-1788 (0.5.16): Qwen3_5(Moe)ForConditionalGeneration keep the
    # breakable prefill graph though multimodal (server_args.py:3801-3805); 0.5.15 turns it off
    # for every multimodal model (server_args.py:3374). On H200 and on B200 (no MoE-runner
    # rule from 0.5.13).
    spec = load_spec(f"tests/data/configs/{config}.json")
    assert spec.recurrent is not None  # Gated DeltaNet layers
    for gpu in (get_gpu("H200"), get_gpu("B200")):
        for version, on in (("0.5.15", False), ("0.5.16", True)):
            eff = engine_efficiency("sglang", version=version)
            assert graph_prefill_applies(eff, spec, gpu, Layout(), 8192) is on
    # Another multimodal architecture (Qwen3-VL MoE) stays eager at 0.5.16.
    eff = engine_efficiency("sglang", version="0.5.16")
    renamed = replace(spec, architectures=("Qwen3VLMoeForConditionalGeneration",))
    assert not graph_prefill_applies(eff, renamed, get_gpu("H200"), Layout(), 8192)


def test_graph_ops_qwen3_5_35b_a3b() -> None:
    # Worked by hand: Qwen3.5-35B-A3B has 40 layers, every 4th full attention (10) and 30
    # Gated DeltaNet layers. The step launches the 6 buffer copies; per attention layer its
    # split op (3) + one graph launch = 40; per GDN layer the backend's forward_extend ops
    # (1 prefix test + 2 conv + 1 gating + 1 state gather + 13 chunk_gated_delta_rule + 1
    # state scatter = 19) + the copy into the graph's buffer (1) + one graph launch = 21, x 30
    # = 630; the last piece's launch (1); the lm_head at TP 1 (1): 6 + 40 + 630 + 1 + 1 = 678.
    spec = load_spec("tests/data/configs/qwen3.5-35b-a3b.json")
    assert graph_prefill_ops(spec, Layout(), SGLANG_PIECEWISE_PREFILL) == 678
    # At 67 us an op: 678 x 67 us = 45.4 ms where the eager step launches every op.
    eff = engine_efficiency("sglang", version="0.5.16")
    assert prefill_launch_ops(spec, get_gpu("B200"), Layout(), 8192, eff) == 678
    assert (prefill_launch_ops(spec, get_gpu("B200"), Layout(), 8192,
                               engine_efficiency("sglang", version="0.5.15"))
            == eager_prefill_ops(spec, Layout(), gpu=get_gpu("B200")))
