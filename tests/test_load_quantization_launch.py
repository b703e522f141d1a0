"""`plan --quantization` (load-time quantization) in the launch lines (issue 26): plan sized the
weights with it, so each engine's line carries it as that engine and version spell it, or the
engine refuses it in one line (kvplan.engines.*.quant_methods, kvplan.engines.trtllm.launch).

Read, per engine (the only --quantization kvplan takes is bitsandbytes, vLLM's in-flight NF4):
- vLLM 0.10.0 and 0.27.1 wheels, engine/arg_utils.py: `--quantization` takes bitsandbytes, and
  EngineArgs.create_load_config sets load_format "bitsandbytes" itself (no --load-format);
  0.28.0 dropped the method (refused already, tests/test_quant_versions.py).
- SGLang 0.4.5, 0.5.3, 0.5.8 and 0.5.14 wheels: server_args.py offers bitsandbytes for both
  --quantization and --load-format, and model_loader/loader.py get_model_loader picks the
  BitsAndBytesModelLoader by load_format alone: `--quantization bitsandbytes --load-format
  bitsandbytes`.
- TensorRT-LLM: trtllm-serve has no --quantization (tests/data/launch_flags/trtllm-1.2.json) and
  QuantAlgo no bitsandbytes: refused, estimate and plan alike.
- A quantized checkpoint: vLLM's config/model.py _verify_quantization (0.10.0, 0.27.1, 0.32) and
  SGLang's configs/model_config.py (0.4.5, 0.5.14) raise "Quantization method specified in the
  model config (X) does not match the quantization method specified in the `quantization`
  argument (Y)": refused; the same method (a bitsandbytes checkpoint) is sized as the checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from tests.launch_flags import parse

DATA = Path(__file__).parent / "data"
# mistralai/Devstral-2-123B-Instruct-2512's published config.json: quantization_config fp8.
FP8 = str(DATA / "configs" / "devstral-2-123b-instruct-2512.json")
# A published Granite-3.1-2B fine-tune saved by bitsandbytes (blind batch, verbatim):
# quantization_config {quant_method: bitsandbytes, load_in_4bit: true, nf4, double quant}.
BNB = str(DATA / "blind26" / "real" / "granite-3.1-2b-bnb-companio.json")
BASE = ("llama-3.1-8b", "-n", "1", "-c", "4k", "--gpu", "L4")


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def plan(*args: str) -> dict:
    result = run("plan", *args, "-f", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def refusal(result) -> str:
    assert result.exit_code == 2 and result.stdout == "", result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("kvplan: error: ")
    return line


@pytest.mark.parametrize("version", ["0.10.0", "0.27.1"])
def test_vllm_line_carries_quantization(version: str) -> None:
    plain = plan(*BASE, "--engine-version", version)
    nf4 = plan(*BASE, "--engine-version", version, "--quantization", "bitsandbytes")
    argv = nf4["launch"]["commands"][0]["argv"]
    # The one change: the flag, after the settings, nothing else (no --load-format).
    assert argv == plain["launch"]["commands"][0]["argv"] + ["--quantization", "bitsandbytes"]
    assert parse("vllm", version, argv[2:]).quantization == "bitsandbytes"
    assert nf4["weights_bytes"] < plain["weights_bytes"] / 2  # the NF4 weights plan sized


@pytest.mark.parametrize("version", [None, "0.5.3", "0.5.8", "0.4.5"])
def test_sglang_line_carries_quantization_and_load_format(version: str | None) -> None:
    pinned = ("--engine-version", version) if version else ()
    nf4 = plan(*BASE, "--engine", "sglang", "--quantization", "bitsandbytes", *pinned)
    argv = nf4["launch"]["commands"][0]["argv"]
    i = argv.index("--quantization")
    assert argv[i:i + 4] == ["--quantization", "bitsandbytes", "--load-format", "bitsandbytes"]
    ns = parse("sglang", version, argv[3:])
    assert (ns.quantization, ns.load_format) == ("bitsandbytes", "bitsandbytes")
    assert "--quantization" not in plan(*BASE, "--engine", "sglang", *pinned)["command"]


def test_trtllm_refuses_quantization_in_estimate_and_plan() -> None:
    for args in (("estimate", "llama-3.1-8b", "-c", "4k"), ("plan", *BASE)):
        line = refusal(run(*args, "--engine", "trtllm", "--quantization", "bitsandbytes"))
        assert line == (
            "kvplan: error: --engine trtllm --quantization bitsandbytes: trtllm-serve has no "
            "--quantization and TensorRT-LLM no such method (quantization/mode.py QuantAlgo): "
            "it loads the checkpoint's own quantization; drop --quantization, or give a "
            "checkpoint quantized beforehand (ModelOpt)")


@pytest.mark.parametrize(("engine", "where"), [
    (("--engine-version", "0.27.1"), "vLLM"), (("--engine", "sglang"), "SGLang")])
def test_quantized_checkpoint_refuses_another_method(engine: tuple[str, ...], where: str
                                                     ) -> None:
    for args in (("estimate", FP8, "-c", "4k"), ("plan", FP8, "-n", "1", "-c", "4k", "--gpu",
                                                  "H100")):
        line = refusal(run(*args, *engine, "--quantization", "bitsandbytes"))
        assert line.startswith(f"kvplan: error: --quantization bitsandbytes: {FP8}: "
                               "quantization_config: the checkpoint is already quantized (fp8) "
                               f"and {where} does not re-quantize it: 'Quantization method "
                               "specified in the model config (fp8) does not match")
        assert line.endswith("drop --quantization")


@pytest.mark.parametrize("engine", [("--engine-version", "0.27.1"), ("--engine", "sglang")])
def test_bitsandbytes_checkpoint_keeps_its_own_weights(engine: tuple[str, ...]) -> None:
    # The same method: accepted by both engines, and the weights are the checkpoint's (its
    # quantization_config, not the load-time NF4 default), as without the flag.
    args = (BNB, "-n", "4", "-c", "4096", "--gpu", "H100", *engine)
    assert plan(*args, "--quantization", "bitsandbytes")["weights_bytes"] == plan(
        *args)["weights_bytes"]


def test_rate_plan_refuses_quantization() -> None:
    # The simulator behind --rate sizes 16-bit weights: refused, not ignored.
    line = refusal(run("plan", *BASE, "--rate", "1", "--slo-tpot-ms", "50", "--engine",
                       "sglang", "--quantization", "bitsandbytes"))
    assert "--rate:" in line and "--quantization" in line
