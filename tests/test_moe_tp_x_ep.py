"""MoE TP x EP layouts (issue 30, moehybrid55): EP below the TP group, each of a rank's E / ep
experts split over moe_tp = tp / ep ranks (kvplan.weights.expert_layout), as SGLang --ep-size
with --tp and TensorRT-LLM --ep_size below --tp_size build it; vLLM cannot."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan import load_spec
from kvplan._util.dtypes import GemmMath
from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.capacity.weights import weights_breakdown
from kvplan.cli.app import app
from kvplan.engines.base import Engine
from kvplan.engines.launch import LaunchLayout, LaunchSettings
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.weights.expert_layout import moe_tp_size

# DeepSeek-V3's config.json (tests/data/configs/deepseek-v3.json, model_specs/deepseek-v3):
# 61 layers, the first 3 dense (first_k_dense_replace 3): 58 MoE layers; 256 routed experts,
# top-8, moe_intermediate_size 2048, hidden 7168; block FP8 weights (weight_block_size
# [128, 128], one float32 scale a block); the router (models/deepseek_v2.py GateLinear in the
# compute dtype, bf16: 256 x 7168 x 2 B = 3,670,016 B, plus the float32 e_score_correction_bias
# 256 x 4 B = 1,024 B) = 3,671,040 B a layer, whole on every rank.
MOE_LAYERS = 58
ROUTER = 256 * 7168 * 2 + 256 * 4


def test_moe_tp_size_rule() -> None:
    assert moe_tp_size(16, 4) == 4  # SGLang --tp 16 --ep-size 4: moe_tp_size 4
    assert moe_tp_size(64, 8) == 8
    assert moe_tp_size(8, 1) == 8  # no EP: every expert over the TP group
    assert moe_tp_size(8, 8) == 1  # EP = TP: experts whole
    assert moe_tp_size(4, 16) == 1  # vLLM's EP over TP x DP: whole
    with pytest.raises(InputError):
        moe_tp_size(8, 3)


def test_deepseek_v3_tp16_ep4_expert_bytes_per_gpu() -> None:
    # TP 16, EP 4: moe_tp 4. A rank holds 256 / 4 = 64 experts, each a 1/4 slice:
    #   w13 (gate + up) 2 x 2048 / 4 = 1,024 rows x 7,168 = 7,340,032 B (FP8, 1 B)
    #   w2 (down) 7,168 x 512 = 3,670,016 B; an expert 11,010,048 B; 64 of them 704,643,072 B
    #   a layer, + the router 3,671,040 B = 708,314,112 B; x 58 = 41,082,218,496 B.
    # Scales: w13 1,024 / 128 x 7,168 / 128 = 8 x 56 = 448, w2 56 x 512 / 128 = 224: 672 x 4 B
    #   = 2,688 B an expert, x 64 = 172,032 B a layer, x 58 = 9,977,856 B.
    # (All whole: 64 x 3 x 2048 x 7168 B = 2,818,572,288 B a layer, 4x the weights: what the
    # pre-stop-55 rule, experts whole under any EP, gave.)
    spec = load_spec("deepseek-v3")
    w = weights_breakdown(spec, tp=16, ep=4)
    assert w.experts == MOE_LAYERS * (64 * (1024 * 7168 + 7168 * 512) + ROUTER) == 41_082_218_496
    assert w.expert_scales == MOE_LAYERS * 64 * 672 * 4 == 9_977_856


def test_deepseek_v3_tp64_ep8_scales_follow_the_moe_tp_slice() -> None:
    # TP 64, EP 8: moe_tp 8. 32 experts, each 2 x 256 x 7,168 + 7,168 x 256 = 5,505,024 B:
    #   176,160,768 + 3,671,040 = 179,831,808 B a layer, x 58 = 10,430,244,864 B (the weights
    #   equal TP 64's, 1/64 of every expert). Their scales do not: an expert's 1/8 slice has
    #   512 / 128 x 56 + 56 x 256 / 128 = 224 + 112 = 336 blocks, x 4 B x 32 = 43,008 B a layer
    #   (2,494,464 B), where TP 64's 1/64 slices (32 columns) each round up to a whole block:
    #   (56 + 56) x 4 B x 256 = 114,688 B a layer (6,651,904 B).
    spec = load_spec("deepseek-v3")
    w = weights_breakdown(spec, tp=64, ep=8)
    assert w.experts == MOE_LAYERS * (32 * 3 * 256 * 7168 + ROUTER) == 10_430_244_864
    assert w.expert_scales == MOE_LAYERS * 32 * 336 * 4 == 2_494_464
    assert weights_breakdown(spec, tp=64).expert_scales == MOE_LAYERS * 256 * 112 * 4


def test_deepseek_v3_tp16_ep4_moe_flops_per_gpu() -> None:
    # A 32,768-token prefill on H200, compute-bound: each token runs 8 experts of 3 x 2,048 x
    # 7,168 weights, 2 FLOPs a weight: 704,643,072 FLOPs a token a layer over the 256 experts'
    # 4 EP groups x 4 MoE TP ranks: on average 8 / 4 = 2 of its experts in this rank's group,
    # each a 1/4 slice: 2 x 2 x 3 x 512 x 7,168 = 44,040,192 FLOPs a token a layer per GPU,
    # x 32,768 x 58. Block-FP8 experts run FP8 GEMMs (at fraction fp8_gemm, set to 1).
    spec = load_spec("deepseek-v3")
    h200 = get_gpu("H200")
    eff = Efficiency(kernel_floor_s=0.0, gemm=1.0, fp8_gemm=1.0)
    tokens = 32768
    hybrid = step_time(spec, h200, tokens=tokens, context=tokens, requests=1, phase="prefill",
                       layout=Layout(tp=16, ep=4), eff=eff).by_op
    flops = MOE_LAYERS * tokens * 2 * 2 * 3 * 512 * 7168
    assert flops == MOE_LAYERS * tokens * 44_040_192
    assert hybrid["experts"] == pytest.approx(flops / h200.peak_flops(GemmMath.fp8))
    # No all-to-all under MoE TP x EP (the expert outputs join the TP all-reduce); EP = TP
    # with an engine that dispatches without DP attention (the default traits) runs one.
    assert "ep_all_to_all" not in hybrid
    whole = step_time(spec, h200, tokens=tokens, context=tokens, requests=1, phase="prefill",
                      layout=Layout(tp=16, ep=16), eff=eff).by_op
    assert "ep_all_to_all" in whole


def _inputs(engine: Engine, version: str, ep: int, tp: int = 16):
    return estimate_inputs(load_spec("deepseek-v3"), context=4096, kv_dtype=None, engine=engine,
                           gpu="B200", tp=tp, engine_version=version, ep=ep)


def test_engines_that_launch_it_and_those_that_cannot() -> None:
    cap = _inputs(Engine("sglang"), "0.5.9", 4).capacity
    assert cap is not None and cap.ep == 4 and cap.tp == 16
    assert _inputs(Engine("trtllm"), "1.2.0rc6.post2", 4).capacity is not None
    with pytest.raises(InputError, match="vLLM has no MoE TP under expert parallelism"):
        _inputs(Engine("vllm"), "0.12.0", 4)
    with pytest.raises(InputError, match="read from 0.5.9 on"):
        _inputs(Engine("sglang"), "0.5.8", 4)
    with pytest.raises(InputError, match="read from 1.2 on"):
        _inputs(Engine("trtllm"), "1.1.0rc2.post2", 4)
    with pytest.raises(InputError, match="MoE TP x EP needs EP to divide"):
        _inputs(Engine("sglang"), "0.5.9", 3)


def test_launch_commands_name_the_ep_below_the_tp() -> None:
    lay = LaunchLayout(tp=16, ep=4)
    settings = LaunchSettings(context=4096, fraction=0.85, kv_dtype="fp8", concurrency=8,
                              version="0.5.9")
    sglang = Engine("sglang").rules.launch_plan("deepseek-ai/DeepSeek-V3", lay, settings)
    text = " ".join(" ".join(g) for c in sglang.commands for g in c.groups)
    assert "--tp-size 16" in text and "--ep-size 4" in text


SIM = ["simulate", "deepseek-v3", "--gpu", "B200", "--engine", "sglang", "--engine-version",
       "0.5.9", "--concurrency", "4", "--num-requests", "8", "--input-len", "512",
       "--output-len", "16", "--format", "json"]


def _tpot(runner: CliRunner, args: list[str]) -> float:
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.stderr
    return float(json.loads(out.stdout)["tpot_ms"]["mean"])


def test_simulate_takes_an_ep_below_the_tp() -> None:
    # --tp 16 --ep 4 (moe_tp 4) holds and runs a 1/16 share of the experts per GPU, as EP 16
    # does. SGLang reduces either in the TP all-reduce (no all-to-all backend by default): the
    # same TPOT. TensorRT-LLM 1.2 runs it too (no all-to-all: test above).
    runner = CliRunner()
    sglang = [_tpot(runner, [*SIM, "--tp", "16", "--ep", str(ep)]) for ep in (4, 16)]
    assert sglang[0] == pytest.approx(sglang[1], rel=1e-9)
    trt = [*SIM[:5], "trtllm", "--engine-version", "1.2.0rc6.post2", *SIM[8:]]
    assert _tpot(runner, [*trt, "--tp", "16", "--ep", "4"]) > 0
    vllm = runner.invoke(app, [*SIM[:5], "vllm", *SIM[8:], "--tp", "16", "--ep", "4"])
    assert vllm.exit_code == 2 and "vLLM has no MoE TP" in vllm.stderr


def test_simulate_refuses_an_ep_that_does_not_divide_the_tp() -> None:
    out = CliRunner().invoke(app, [*SIM, "--tp", "8", "--ep", "3"])
    assert out.exit_code == 2
    assert "--ep 3" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
