"""A Mistral3ForConditionalGeneration file whose top-level model_type is the text class
`ministral3` (mlc-ai/mlc-llm's MODEL_PRESETS["ministral3_3b_2512"], blind batch 16): vLLM 0.32
does not start on it, so kvplan refuses it in one line; the Hub layout (model_type mistral3 over
a ministral3 text_config) is answered.

vLLM 0.32 with transformers 5.19: AutoConfig takes the class from the top-level model_type, and
`ministral3` is Ministral3Config (transformers/models/ministral3/configuration_ministral3.py:28,
model_type line 54), a text config with no sub-configs, so the file's text_config stays a plain
dict; vllm/transformers_utils/config.py:1195-1208 get_hf_text_config then finds no
num_attention_heads on it and raises "The text_config extracted from the model config does not
have `num_attention_heads` attribute" (the CPU build's run of the shrunk copy:
tests/data/blind26/shrunk/ministral-3-3b-2512-mlc/results.json)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kvplan.cli import app

REAL = Path(__file__).parent / "data" / "blind26" / "real" / "ministral-3-3b-2512-mlc.json"


def test_text_model_type_under_the_wrapper_is_refused_in_one_line() -> None:
    result = CliRunner().invoke(app, ["estimate", str(REAL), "-c", "4096"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "model_type: Mistral3ForConditionalGeneration with model_type 'ministral3'" in lines[0]
    assert "num_attention_heads" in lines[0]


def test_the_hub_layout_of_the_same_file_is_answered(tmp_path: Path) -> None:
    config = json.loads(REAL.read_text())
    config["model_type"] = "mistral3"  # Ministral-3-3B-Instruct-2512's own top-level type
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["estimate", str(path), "-c", "4096", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    # text_config: 26 layers x (K + V) x 8 KV heads x head_dim 128 x 2 B (bf16) = 106,496 B/token
    assert json.loads(result.stdout)["bytes_per_token"] == 26 * 2 * 8 * 128 * 2 == 106_496
