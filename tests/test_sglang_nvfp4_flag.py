"""SGLang's `--quantization modelopt_fp4` for a ModelOpt NVFP4 checkpoint (kvplan.engines.sglang.
quant_methods.sglang_quantization_flag): the releases that claim such a checkpoint for
modelopt_fp4 only when told so, by checkpoint layout; read from the sglang wheels on PyPI:

- hf_quant_config.json: 0.4.5.post1-0.4.7.post1 python/sglang/srt/model_loader/weight_utils.py
  get_quant_config passes the file to ModelOptFp8Config.from_config (layers/quantization/
  modelopt_quant.py), which raises "ModelOpt only supports static FP8 quantization" for
  quant_algo NVFP4; 0.4.8's get_quant_config checks `"FP4" in quant_algo` and takes
  ModelOptFp4Config (0.5.4 on: configs/model_config.py _parse_modelopt_quant_config).
- config.json's flat quantization_config (quant_method "modelopt", quant_algo "NVFP4"): read from
  0.5.1; 0.5.1-0.5.9 settle on "modelopt" (ModelOptFp8Config raises as above) unless started with
  the flag (configs/model_config.py _verify_quantization: compatible_quantization_methods
  ["modelopt_fp4"] == ["modelopt"]); 0.5.10's ModelOptFp4Config.override_quantization_method
  adds `or quant_cfg["quant_method"] == "modelopt"` and claims it without one.
The plan answer (sizes, KV bytes) is the same with and without the flag: only the line changes."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.sglang.quant_methods import _why_not, sglang_quantization_flag
from tests.launch_flags import parse
from tests.test_sglang_arrivals import renamed

DATA = Path(__file__).parent / "data"
# nvidia/Kimi-K2.6-NVFP4's published config.json (blind batch 5): a flat quantization_config
# {"quant_method": "modelopt", "quant_algo": "NVFP4", ...} inside config.json.
KIMI = DATA / "blind26" / "real" / "kimi-k2.6-nvfp4.json"
# nvidia/Qwen3-235B-A22B-NVFP4: config.json without quantization_config, hf_quant_config.json
# beside it ({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", ...}}).
QWEN = DATA / "hf_quant" / "qwen3-235b-a22b-nvfp4"
# meta-llama's Llama-3.1-70B-Instruct-FP8 from nvidia: hf_quant_config.json, quant_algo FP8.
LLAMA_FP8 = DATA / "hf_quant" / "llama-3.1-70b-instruct-fp8"
FLAG = ("--quantization", "modelopt_fp4")


def _load(path: Path):
    import kvplan

    return kvplan.load_model(str(path))


@pytest.mark.parametrize(("version", "flag"), [
    ("0.5.1", True), ("0.5.3", True), ("0.5.4.post2", True), ("0.5.9", True),
    ("0.5.9.post1", True), ("0.5.10", False), (None, False)])
def test_flat_config_json_layout(version: str | None, flag: bool) -> None:
    spec = _load(KIMI)
    assert spec.quantization_file is None
    assert sglang_quantization_flag(spec.quantization_json, spec.quantization_file,
                                    version) == (FLAG if flag else ())


@pytest.mark.parametrize(("version", "flag"), [
    ("0.4.5.post1", True), ("0.4.6", True), ("0.4.7.post1", True), ("0.4.8", False),
    ("0.5.3", False), ("0.5.9", False), (None, False)])
def test_hf_quant_config_json_layout(version: str | None, flag: bool) -> None:
    spec = _load(QWEN)
    assert spec.quantization_file == "hf_quant_config.json"
    assert sglang_quantization_flag(spec.quantization_json, spec.quantization_file,
                                    version) == (FLAG if flag else ())


def test_modelopt_fp8_and_unquantized_need_no_flag() -> None:
    fp8 = _load(LLAMA_FP8)
    assert sglang_quantization_flag(fp8.quantization_json, fp8.quantization_file, "0.4.6") == ()
    assert sglang_quantization_flag(None, None, "0.5.3") == ()


def _command(model: Path, version: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, [
        "plan", str(model), "-n", "1", "-c", "8k", "--gpu", "B200", "--engine", "sglang",
        "--engine-version", version, "--kv-dtype", "fp8", "-f", "json"])
    if result.exit_code != 0:
        return result.exit_code, result.stderr
    return 0, _find_command(json.loads(result.stdout))


def _find_command(obj: object) -> str:
    """The first "command" string of plan's JSON (the head node's line)."""
    if isinstance(obj, dict):
        if isinstance(obj.get("command"), str):
            return obj["command"]
        obj = list(obj.values())
    for item in obj if isinstance(obj, list) else ():
        found = _find_command(item)
        if found:
            return found
    return ""


# Each release here has the checkpoint's model class (kvplan/engines/sglang/arrivals.json):
# KimiK25ForConditionalGeneration from 0.5.9, Qwen3MoeForCausalLM from 0.4.5.post2.
@pytest.mark.parametrize(("model", "version", "flag"), [
    (KIMI, "0.5.9", True), (KIMI, "0.5.9.post1", True), (KIMI, "0.5.10", False),
    (QWEN, "0.4.5.post2", True), (QWEN, "0.4.7.post1", True), (QWEN, "0.4.8", False)])
def test_plan_launch_line(model: Path, version: str, flag: bool) -> None:
    code, line = _command(model, version)
    assert code == 0, line
    argv = shlex.split(line)
    assert argv[:3] == ["python", "-m", "sglang.launch_server"], line
    # The flag table of the nearest release at or below (tests/data/launch_flags) declares it.
    ns = parse("sglang", version, argv[3:])
    assert ns.quantization == ("modelopt_fp4" if flag else None), line


@pytest.mark.parametrize(("model", "version", "served_as", "arrives", "says"), [
    # 0.5.0's modelopt_quant.py from_config reads only the nested layout. 0.5.0 has no
    # KimiK25ForConditionalGeneration (from 0.5.9): the quantization rule is checked on the
    # config under Kimi-K2's DeepseekV3ForCausalLM, a class every release read has.
    (KIMI, "0.5.0", "DeepseekV3ForCausalLM", "0.5.9",
     "reads ModelOpt's quantization config only in hf_quant_config.json's"),
    # 0.4.5's wheel never opens hf_quant_config.json. 0.4.5 has no Qwen3MoeForCausalLM (from
    # 0.4.5.post2): checked under Qwen2MoeForCausalLM, which 0.4.5 has.
    (QWEN, "0.4.5", "Qwen2MoeForCausalLM", "0.4.5.post2",
     "hf_quant_config.json beside it: SGLang 0.4.5 does not read the file")])
def test_older_releases_refused_as_before(model: Path, version: str, served_as: str,
                                          arrives: str, says: str, tmp_path: Path) -> None:
    code, err = _command(model, version)
    assert code == 2 and f"--engine-version {arrives} or newer" in err, err
    code, err = _command(renamed(model, tmp_path, served_as), version)
    assert code == 2 and says in err, err


def test_modelopt_fp4_registered_from_0_4_5_post1() -> None:
    # layers/quantization/__init__.py QUANTIZATION_METHODS: "modelopt_fp4" from 0.4.5.post1
    # (sglang PR #3972); 0.4.5's has none.
    assert "PR #3972" in (_why_not("modelopt_fp4", "0.4.5") or "")
    assert _why_not("modelopt_fp4", "0.4.5.post1") is None
