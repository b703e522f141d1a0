"""vLLM's MXFP4 MoE kernel by GPU generation and release (kvplan.engines.vllm.mxfp4_backend) and
what it sizes: gpt-oss's expert bytes per GPU and the KV pool beside them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan._util.units import GiB
from kvplan.capacity.weights import weights_breakdown
from kvplan.cli import app
from kvplan.engines.vllm.mxfp4_backend import TRITON_KERNELS_VENDORED, vllm_mxfp4_backend
from kvplan.model.quant_formats import Mxfp4Backend
from tests.test_weights import load_spec

H100, A100, B200 = (9, 0), (8, 0), (10, 0)


@pytest.mark.parametrize(("version", "capability", "expected"), [
    # 0.11.0's wheel vendors no triton_kernels: Marlin on Hopper (vllm issue #23278).
    ("0.11.0", H100, Mxfp4Backend.marlin),
    # From 0.11.1 (vllm PR #27370) the wheel ships vllm/third_party/triton_kernels: Triton on
    # Hopper; the llm-d-planner 0.19.0 H100 log prints "Using 'TRITON' Mxfp4 MoE backend".
    ("0.11.1", H100, Mxfp4Backend.triton),
    ("0.15.1", H100, Mxfp4Backend.triton),
    ("0.19.0", H100, Mxfp4Backend.triton),
    (None, H100, Mxfp4Backend.triton),
    # No Triton MXFP4 kernel below SM90: Marlin (the 0.10.1.1 A100 gpt-oss-120b log).
    ("0.19.0", A100, Mxfp4Backend.marlin),
    (None, None, Mxfp4Backend.marlin),  # GPU generation unknown
])
def test_default_backend_by_release_and_gpu(version, capability, expected) -> None:
    backend, reason = vllm_mxfp4_backend(version, capability)
    assert Mxfp4Backend(backend) is expected
    assert reason


def test_user_choice_wins_and_is_said() -> None:
    # VLLM_MXFP4_USE_MARLIN=1 (0.15.1 mxfp4.py:152-165) / --moe-backend marlin (0.32).
    backend, reason = vllm_mxfp4_backend(None, H100, chosen="marlin")
    assert backend == "marlin" and "given" in reason
    assert TRITON_KERNELS_VENDORED == "0.11.1"
    assert "0.11.1" in vllm_mxfp4_backend("0.15.1", H100)[1]


# gpt-oss-120b (tests/data/configs/gpt-oss-120b.json: hidden 2880, intermediate 2880, 128 experts,
# 36 layers) at TP 8: each rank holds I = 2880 / 8 = 360 of each expert's intermediate.
# - Marlin (and Triton, sized as Marlin): I -> 384 (x128), H -> 3072 (x256). Per expert and layer:
#   w13 2 x 384 x 3072 / 2 = 1,179,648 B + scales 768 x 3072 / 32 = 73,728; w2 3072 x 384 / 2 =
#   589,824 + 3072 x 384 / 32 = 36,864; bf16 biases 2 x (768 + 3072) = 7,680. x 128 x 36 = 4,608:
#   weights and biases 8,189,116,416 B (+ the bf16 router 36 x 128 x (2880 + 1) x 2 = 26,551,296:
#   8,215,667,712 in `experts`), scales 509,607,936.
# - Triton's create_weights layout (I -> 384, x64; H unpadded): w13 768 x 2880 / 2 = 1,105,920 +
#   69,120; w2 2880 x 384 / 2 = 552,960 + 34,560; biases 2 x (768 + 2880) = 7,296: 1,769,856 per
#   expert and layer against Marlin's 1,887,744, 117,888 less: x 4,608 = 543,227,904 B (0.51 GiB)
#   more KV pool per GPU, the error the task suspected kvplan of. It is not what Triton holds
#   (below), so kvplan does not size with it.
def test_gpt_oss_120b_tp8_expert_bytes_per_gpu() -> None:
    spec = load_spec("gpt-oss-120b")
    marlin = weights_breakdown(spec, tp=8, mxfp4=(Mxfp4Backend.marlin, "given"))
    assert marlin.experts == 8_189_116_416 + 26_551_296
    assert marlin.expert_scales == 509_607_936
    triton = weights_breakdown(spec, tp=8, mxfp4=(Mxfp4Backend.triton, "vLLM 0.32"))
    assert triton.total == marlin.total
    assert (1_887_744 - 1_769_856) * 128 * 36 == 543_227_904


# Held out (not used to fit anything; it shaped the choice to size Triton as Marlin:
# tests/benches/fitted_rows.py SHAPED_BY mxfp4be58): llm-d-planner's vLLM 0.19.0 H100 TP 2
# gpt-oss-20b log, https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a9
# 26a3ead964be97359b/accuracy/results/v0.19.0/logs/openai-gpt-oss-20b--h100-80gb--tp2pp1dp1--8192
# .log: "Loading module triton_kernels from .../vllm/third_party/triton_kernels/__init__.py",
# "[oracle/mxfp4.py:352] Using 'TRITON' Mxfp4 MoE backend.", "Peak GPU memory after loading
# weights: 6.76 GiB", "Model loading took 7.01 GiB memory". gpt-oss-20b (hidden 2880,
# intermediate 2880, 32 experts, 24 layers) at TP 2: I = 1440 per rank.
# - Marlin's layout: I -> 1536, H -> 3072: w13 3072 x 3072 / 2 = 4,718,592 + 294,912; w2
#   3072 x 1536 / 2 = 2,359,296 + 147,456; biases 12,288: 7,532,544 per expert and layer, x 768
#   = 5,784,993,792 B; kvplan's whole rank 7,618,795,136 B = 7.096 GiB, +1.2 % on 7.01.
# - Triton's create_weights layout: I -> 1472 (x64), H 2880: w13 2944 x 2880 / 2 = 4,239,360 +
#   264,960; w2 2880 x 1472 / 2 = 2,119,680 + 132,480; biases 11,648: 6,768,128, x 768 =
#   5,197,922,304 B, 587,071,488 less: 7,031,723,648 B = 6.549 GiB, -6.6 %. The swizzle
#   (process_weights_after_loading) holds more than create_weights allocated: the log's
#   loading figure is 0.25 GiB above the peak right after the checkpoint was read.
def test_triton_held_out_log_is_sized_by_marlins_layout() -> None:
    spec = load_spec("gpt-oss-20b")
    kernel = vllm_mxfp4_backend("0.19.0", H100)
    assert kernel[0] == "triton"
    w = weights_breakdown(spec, tp=2, mxfp4=kernel)
    assert w.total == 7_618_795_136
    logged = 7.01
    assert abs(w.total / GiB / logged - 1) < 0.015
    create_layout = w.total - (7_532_544 - 6_768_128) * 32 * 24
    assert create_layout == 7_031_723_648
    assert create_layout / GiB / logged - 1 < -0.06


# Read after that choice (commit 6ef65a3b), so a first evaluation of it, not used to shape it: the
# same lab's TP 1 run, https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db
# 39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/openai-gpt-oss-20b--h100-80gb--tp1pp1dp1
# --8192.FAILED.log (it failed after loading): "Using 'TRITON' Mxfp4 MoE backend.", "Peak GPU
# memory after loading weights: 12.92 GiB", "Model loading took 13.64 GiB memory". At TP 1
# (I = 2880): Marlin's layout I -> 2944, H -> 3072: w13 5888 x 3072 / 2 = 9,043,968 + 565,248;
# w2 3072 x 2944 / 2 = 4,521,984 + 282,624; biases 2 x (5888 + 3072) = 17,920: 14,431,744 per
# expert and layer; Triton's create_weights layout (I 2880, H 2880): 8,294,400 + 518,400 +
# 4,147,200 + 259,200 + 2 x (5760 + 2880) = 13,236,480, 1,195,264 less, x 768 = 917,962,752 B.
# kvplan 14,712,781,952 B = 13.70 GiB, +0.45 % on 13.64; the create_weights layout 12.85, -5.8 %.
def test_triton_tp1_log_read_after_the_choice() -> None:
    w = weights_breakdown(load_spec("gpt-oss-20b"), tp=1, mxfp4=vllm_mxfp4_backend("0.19.0", H100))
    assert w.total == 14_712_781_952
    logged = 13.64
    assert abs(w.total / GiB / logged - 1) < 0.006
    create_layout = w.total - (14_431_744 - 13_236_480) * 32 * 24
    assert create_layout / GiB / logged - 1 < -0.05


def _estimate(*extra: str) -> dict:
    result = CliRunner().invoke(app, ["estimate", "gpt-oss-120b", "--tp", "8", "--gpu", "h100",
                                      "--context", "8192", "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_estimate_json_says_which_kernel_and_why() -> None:
    default, marlin = _estimate(), _estimate("--mxfp4-backend", "marlin")
    (note,) = default["stages"][0]["weights_breakdown"]["notes"]
    assert "triton MoE kernel" in note and "triton_kernels vendored" in note
    (given,) = marlin["stages"][0]["weights_breakdown"]["notes"]
    assert "marlin MoE kernel (given (--mxfp4-backend marlin))" in given
    # Sized alike (Triton as Marlin): the same KV pool either way.
    assert default["kv_budget_bytes"] == marlin["kv_budget_bytes"]
    old = _estimate("--engine-version", "0.11.0")
    (note,) = old["stages"][0]["weights_breakdown"]["notes"]
    assert "marlin MoE kernel" in note and "before 0.11.1" in note


def test_bad_backend_is_one_line_exit_2() -> None:
    result = CliRunner().invoke(app, ["estimate", "gpt-oss-120b", "--mxfp4-backend", "bogus"])
    assert result.exit_code == 2
    assert "--mxfp4-backend" in result.output and "Traceback" not in result.output
