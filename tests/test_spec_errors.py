"""Bad input: one clear line naming the file and the field, exit code 2, no traceback."""

from __future__ import annotations

import copy

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.sources.resolve import load_bundled_specs

from .conftest import LLAMA_LIKE

runner = CliRunner()


def _broken(change) -> dict:
    data = copy.deepcopy(LLAMA_LIKE)
    change(data)
    return data


def _set(section: str | None, key: str, value):
    def change(d):
        (d[section] if section else d)[key] = value
    return change


def _del(section: str | None, key: str):
    def change(d):
        del (d[section] if section else d)[key]
    return change


def _mla_without_dims(d):
    d["attention"] = {"kind": "mla", "num_attention_heads": 8, "kv_lora_rank": 64,
                      "qk_nope_head_dim": 32, "v_head_dim": 32}


CASES = [
    (_del(None, "num_hidden_layers"), "num_hidden_layers: missing required field"),
    (_del("attention", "head_dim"), "attention.head_dim: missing required field"),
    (_set(None, "num_layers", 4), "num_layers: unknown field"),
    (_set("attention", "rope_theta", 1e4), "attention.rope_theta: unknown field"),
    (_set(None, "hidden_size", "big"), "hidden_size: expected an integer, got 'big'"),
    (_set(None, "hidden_size", 4.5), "hidden_size: expected an integer"),
    (_set(None, "num_hidden_layers", 0), "num_hidden_layers: must be >= 1, got 0"),
    (_set("attention", "head_dim", -128), "attention.head_dim: must be >= 1, got -128"),
    (_set("attention", "num_key_value_heads", 3),
     "attention.num_key_value_heads: must divide num_attention_heads (8)"),
    (_set("attention", "kind", "mla"), "attention.num_key_value_heads: not used by kind mla"),
    (_set("attention", "kind", "sparse"), "attention.kind: expected one of mha, gqa, mqa, mla"),
    (_set("attention", "kind", "mqa"), "attention.num_key_value_heads: kind mqa needs exactly 1"),
    (_set("attention", "kind", "mha"), "attention.num_key_value_heads: kind mha needs"),
    (_mla_without_dims, "attention.qk_rope_head_dim: missing required field"),
    (_set("attention", "layer_types", ["full_attention"]),
     "attention.sliding_window: missing: required with"),
    (_set(None, "mlp", [1, 2]), "mlp: expected a mapping of fields"),
    (_set(None, "tie_word_embeddings", "yes"), "tie_word_embeddings: expected true or false"),
    (_set(None, "torch_dtype", "float64"), "torch_dtype: expected one of"),
]


@pytest.mark.parametrize(("change", "expected"), CASES)
def test_bad_spec_is_one_line_exit_2(write_spec, change, expected) -> None:
    path = write_spec(_broken(change))
    result = runner.invoke(app, ["estimate", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0] == f"kvplan: error: {path}: " + lines[0].split(f"{path}: ", 1)[1]
    assert expected in lines[0]
    assert "Traceback" not in result.stderr


def test_layer_types_length_must_match(write_spec) -> None:
    data = copy.deepcopy(LLAMA_LIKE)
    data["attention"] |= {"sliding_window": 128, "layer_types": ["sliding_attention"] * 3}
    result = runner.invoke(app, ["estimate", str(write_spec(data))])
    assert result.exit_code == 2
    assert "attention.layer_types: expected a list of 4 entries" in result.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: [unclosed\n", "malformed YAML at line"),
        ("", "file is empty"),
        ("- just\n- a list\n", "expected a mapping of fields"),
    ],
)
def test_malformed_yaml(write_spec, text, expected) -> None:
    path = write_spec(text)
    result = runner.invoke(app, ["estimate", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"kvplan: error: {path}: ")
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_file_and_unknown_id(tmp_path) -> None:
    missing = tmp_path / "nope.yaml"
    result = runner.invoke(app, ["estimate", str(missing)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"kvplan: error: {missing}: file not found"
    result = runner.invoke(app, ["estimate", "llama-9"])
    assert result.exit_code == 2
    # A near miss names the closest ids (issue 28); nothing close lists them all.
    assert "llama-9: no such file or bundled spec (did you mean llama-3-8b," in result.stderr
    result = runner.invoke(app, ["estimate", "zzzz"])
    assert "zzzz: no such file or bundled spec (bundled: deepseek-v2" in result.stderr


def test_every_bundled_spec_loads_and_names_its_source() -> None:
    specs = load_bundled_specs()
    assert {s.id for s in specs} >= {
        "deepseek-v2", "deepseek-v2-lite", "deepseek-v3", "kimi-k2", "minicpm3-4b", "llama-2-7b",
        "llama-2-70b", "llama-3-8b", "llama-3.1-8b", "llama-3-70b", "llama-3.1-405b",
        "mistral-7b-v0.1", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "qwen3-8b",
        "qwen3-235b-a22b", "gemma-2-9b", "gemma-3-27b", "falcon-7b", "gpt2",
    }
    for spec in specs:
        assert spec.source.startswith("https://huggingface.co/") and spec.source.endswith(
            "config.json"), spec.id


def test_attention_kind_is_declared_not_guessed(write_spec) -> None:
    # A model named like DeepSeek but declared GQA is sized as GQA.
    data = copy.deepcopy(LLAMA_LIKE) | {"name": "DeepSeek-lookalike"}
    result = runner.invoke(app, ["estimate", str(write_spec(data, "deepseek-v9.yaml")),
                                 "--format", "json"])
    assert result.exit_code == 0
    assert '"attention_kind": "gqa"' in result.stdout
