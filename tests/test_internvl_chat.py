"""InternVLChatModel (InternVL 1.5 / 2 / 2.5 checkpoints with remote code): vLLM 0.32's
models/internvl.py over llm_config (kvplan/sources/hf_wrappers.py WRAPPERS["internvl_chat"]).
The golden file (tests/data/configs/mm/internvl2-2b.json) is in tests/test_support_mm.py; these
are the rules around it, on issue 26's blind batch 14 copies (sophgo/LLM-TPU)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app

REAL = Path(__file__).parent / "data" / "blind26" / "real"
INTERNVL2_2B = REAL / "internvl2-2b-sophgo.json"
INTERNVL2_4B = REAL / "internvl2-4b-sophgo.json"


def _estimate(path: Path, *args: str):
    return CliRunner().invoke(app, ["estimate", str(path), "-f", "json", "-c", "512", *args])


def test_internvl2_4b_is_its_phi3_language_model() -> None:
    # The remote InternVLChatConfig builds llm_config as Phi3Config (architectures[0]
    # Phi3ForCausalLM); internvl.py builds vLLM's Phi3ForCausalLM over it: 32 layers x 2 x 32
    # KV heads x 3072 / 32 = 96 x 2 B = 393,216 B a token. Its sliding_window 262144 is kept on
    # every layer (phi3.py over llama.py), as vLLM's CPU build allocated the shrunken copy
    # (SlidingWindowSpec, 4 layers: 170 blocks of 128, 17,408 tokens, 34.0x at 512 tokens,
    # tests/data/blind26/shrunk/internvl2-4b-sophgo/results.json).
    result = _estimate(INTERNVL2_4B)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["bytes_per_token"] == 32 * 2 * 32 * 96 * 2 == 393216
    assert data["sliding_window"] == 262144 and data["kv_exact"] is True
    # The InternViT tower's weights are not counted: the one assumption, on the weights.
    assert [(a["field"], a["affects"]) for a in data["assumptions"]] == [
        ("vision_config", "weights")]


def test_internvl2_2b_is_its_internlm2_language_model() -> None:
    # 24 layers x 2 x 8 KV heads x 2048 / 16 = 128 x 2 B = 98,304 B (the golden's derivation).
    result = _estimate(INTERNVL2_2B)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["bytes_per_token"] == 98304


@pytest.mark.parametrize(("change", "field"), [
    # The remote class raises 'Unsupported architecture' for any other first architecture;
    # later checkpoints' remote classes take more (Qwen3), code kvplan has not read.
    ({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}, "llm_config.architectures"),
    ({"architectures": None}, "llm_config.architectures"),
    # InternLM2Config built over a file saying qwen2: not what kvplan's qwen2 reading is.
    ({"model_type": "qwen2"}, "llm_config.model_type"),
])
def test_llm_config_the_remote_class_does_not_build_as_stated_is_refused(
        tmp_path: Path, change: dict, field: str) -> None:
    config = json.loads(INTERNVL2_2B.read_text())
    config["llm_config"].update(change)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = _estimate(path)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert f"{field}:" in line and "InternVLChatModel" not in line, line
    assert "internvl.py" in line or "kvplan does not read" in line, line


def test_missing_llm_config_is_refused(tmp_path: Path) -> None:
    # InternVLChatConfig with no llm_config takes architectures [''] and raises.
    config = json.loads(INTERNVL2_2B.read_text())
    del config["llm_config"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = _estimate(path)
    assert result.exit_code == 2 and "llm_config.architectures" in result.stderr
