"""The model's maximum context, as vLLM 0.32 derives it (kvplan.model.context_limit, following
vllm/transformers_utils/model_arch_config_convertor.py derive_max_model_len_and_key, lines
394-427, and vllm/config/model.py _get_and_verify_max_len, lines 2527-2668), and what plan,
estimate, simulate and sweep do with a context above it (kvplan.engines.context).

Each number is worked out by hand from the published config.json named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.model.context_limit import ContextLimit, context_limit_from_config
from kvplan.sources.hf_config import load_config
from kvplan.sources.spec_yaml import parse_spec

DATA = Path(__file__).parent / "data"
runner = CliRunner()


def _limit(name: str) -> ContextLimit | None:
    spec, _ = load_config(DATA / "configs" / f"{name}.json")
    return spec.max_context


# Qwen/Qwen3-8B config.json: max_position_embeddings 40960, with the rope_scaling its model card
# adds for long texts: {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings":
# 32768}. Smallest position key: max_position_embeddings 40,960; YaRN is in vLLM's list of rope
# types whose factor does not multiply (config/model.py ~2598: "YaRN variants leave
# max_position_embeddings already scaled") -> 40,960, not 163,840.
QWEN3_8B_YARN = {"model_type": "qwen3", "max_position_embeddings": 40960,
                 "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                  "original_max_position_embeddings": 32768}}


def test_qwen3_yarn_keeps_the_stated_maximum() -> None:
    assert context_limit_from_config(QWEN3_8B_YARN, "qwen3") == ContextLimit(
        tokens=40960, source="config.json max_position_embeddings")


def test_linear_factor_multiplies() -> None:
    # The same config with a linear rope_scaling of factor 4 (rope type not in the list):
    # 40,960 x 4 = 163,840.
    config = {**QWEN3_8B_YARN, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    assert context_limit_from_config(config, "qwen3") == ContextLimit(
        tokens=163840, source="config.json max_position_embeddings x rope_scaling.factor 4")
    # A null factor is 1 (vLLM: "Falling back the value to 1.0").
    config = {**QWEN3_8B_YARN, "rope_scaling": {"rope_type": "linear", "factor": None}}
    assert context_limit_from_config(config, "qwen3").tokens == 40960


def test_nested_rope_parameters_last_factor() -> None:
    # rope_parameters per layer type (transformers 5): each a dict; the loop keeps the last
    # stated factor of a multiplying type: 8,192 x 2 = 16,384.
    config = {"max_position_embeddings": 8192, "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6}}}
    assert context_limit_from_config(config, "x").tokens == 16384


def test_llama31_llama3_rope_keeps_131072() -> None:
    # meta-llama/Llama-3.1-405B config.json: max_position_embeddings 131072, rope_scaling
    # {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192, ...}:
    # llama3 is in the list -> 131,072 (not 1,048,576).
    assert _limit("llama-3.1-405b") == ContextLimit(
        tokens=131072, source="config.json max_position_embeddings")


def test_deepseek_v3_legacy_type_yarn() -> None:
    # deepseek-ai/DeepSeek-V3 config.json: max_position_embeddings 163840, rope_scaling
    # {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096}: the legacy
    # "type" key read as rope_type (patch_legacy_rope_type) -> 163,840.
    assert _limit("deepseek-v3").tokens == 163840


def test_internlm2_dynamic_factor_multiplies() -> None:
    # internlm/internlm2-chat-1_8b config.json: max_position_embeddings 32768, rope_scaling
    # {"type": "dynamic", "factor": 2.0}: dynamic is not in the list -> 32,768 x 2 = 65,536
    # (the vLLM 0.32 CPU oracle starts at 65,536 and refuses 65,537: examples/vllm_oracle.py).
    assert _limit("internlm2-chat-1.8b") == ContextLimit(
        tokens=65536, source="config.json max_position_embeddings x rope_scaling.factor 2")


def test_gemma3_factor_is_not_applied() -> None:
    # google/gemma-3-27b-it: text_config rope_scaling {"rope_type": "linear", "factor": 8.0},
    # max_position_embeddings from Gemma3TextConfig (131072); vLLM skips the factor for any
    # model_type containing "gemma3" ("Gemma3's max_model_len (128K) is already scaled").
    assert _limit("gemma-3-27b").tokens == 131072


def test_seq_length_and_model_max_length() -> None:
    # THUDM/glm-4v-9b config.json: seq_length 8192, no max_position_embeddings -> 8,192.
    assert _limit("glm-4v-9b") == ContextLimit(tokens=8192, source="config.json seq_length")
    # CohereForAI/c4ai-command-r-v01: max_position_embeddings 8192, model_max_length 131072;
    # the smallest is 8,192, then a truthy model_max_length overrides it -> 131,072.
    assert _limit("command-r-v01") == ContextLimit(tokens=131072,
                                                   source="config.json model_max_length")
    # gpt2: n_positions 1024 -> 1,024.
    assert _limit("gpt2") == ContextLimit(tokens=1024, source="config.json n_positions")


def test_smallest_key_wins() -> None:
    # Two keys: the smaller names the maximum (4,096 from seq_length, not 8,192).
    config = {"max_position_embeddings": 8192, "seq_length": 4096}
    assert context_limit_from_config(config, "x") == ContextLimit(
        tokens=4096, source="config.json seq_length")


def test_no_position_key_no_limit() -> None:
    # transformers' default BloomConfig (ALiBi; the oracle case default-bloom) states none of the
    # keys and BloomConfig defines none: vLLM takes any max_model_len given (config/model.py
    # ~2561: "If max_model_len is specified, we use it"); the recorded oracle run starts at
    # 8,192. (The published bigscience/bloomz-560m file states seq_length 2048: limited below.)
    spec, _ = load_config(DATA / "oracle" / "default-bloom")
    assert spec.max_context is None
    bloomz, _ = load_config(DATA / "oracle" / "bloomz-560m")
    assert bloomz.max_context_tokens == 2048
    assert context_limit_from_config({"hidden_size": 8}, "bloom") is None


def test_yaml_spec_states_the_maximum() -> None:
    base = {"name": "x", "source": "x", "num_hidden_layers": 2, "hidden_size": 64,
            "vocab_size": 100, "tie_word_embeddings": False, "max_position_embeddings": 4096,
            "attention": {"kind": "gqa", "num_attention_heads": 4, "num_key_value_heads": 2,
                          "head_dim": 16},
            "mlp": {"intermediate_size": 128}}
    spec = parse_spec(base, path="x.yaml", spec_id="x")
    assert spec.max_context == ContextLimit(tokens=4096, source="spec max_position_embeddings")
    spec = parse_spec({**base, "max_model_len": 2048, "max_model_len_source":
                       "config.json seq_length"}, path="x.yaml", spec_id="x")
    assert spec.max_context == ContextLimit(tokens=2048, source="config.json seq_length")


EXAONE = str(DATA / "configs" / "exaone-3.0-7.8b.json")
# LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct config.json: max_position_embeddings 4096, no rope_scaling.
REFUSAL = ("--context 8192: above LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct's maximum of 4,096 "
           "tokens (config.json max_position_embeddings); vLLM refuses to start with it "
           "(VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 overrides; kvplan: --allow-long-context)")


def test_plan_refuses_a_context_above_the_maximum() -> None:
    result = runner.invoke(app, ["plan", EXAONE, "--context", "8192"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == f"kvplan: error: {REFUSAL}"
    sglang = runner.invoke(app, ["plan", EXAONE, "-c", "8192", "--engine", "sglang"])
    assert sglang.exit_code == 2 and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in sglang.stderr


def test_plan_allowed_carries_the_override() -> None:
    result = runner.invoke(app, ["plan", EXAONE, "-c", "8192", "--allow-long-context",
                                 "-f", "json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["command"].startswith("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve ")
    assert data["launch"]["env"] == {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    within = json.loads(runner.invoke(app, ["plan", EXAONE, "-c", "4096", "-f", "json"]).stdout)
    assert within["command"].startswith("vllm serve ") and "env" not in within["launch"]


def test_estimate_warns_and_records() -> None:
    result = runner.invoke(app, ["estimate", EXAONE, "-c", "8192", "-f", "json"])
    assert result.exit_code == 0
    assert f"kvplan: warning: {REFUSAL}" in result.stderr
    assert json.loads(result.stdout)["above_max_context"] == {
        "max_context": 4096, "source": "config.json max_position_embeddings",
        "engine_refuses": True, "override_env": "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"}
    within = runner.invoke(app, ["estimate", EXAONE, "-c", "4096", "-f", "json"])
    assert "above_max_context" not in json.loads(within.stdout) and "refuses" not in within.stderr


@pytest.mark.parametrize("flag", ["--max-model-len", "--context"])
def test_simulate_refuses(flag: str) -> None:
    result = runner.invoke(app, ["simulate", EXAONE, flag, "8192", "--num-requests", "2"])
    assert result.exit_code == 2
    assert "--max-model-len 8192: above LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct's maximum" in (
        result.stderr)


def test_vllm_oracle_refuses_above_and_starts_at_the_maximum() -> None:
    # Recorded runs of vLLM 0.32's CPU build on the shrunk internlm2-chat-1.8b (rope_scaling
    # dynamic x2): --max-model-len 65537 is refused with the derived 65536.0, 65536 starts.
    record = json.loads((DATA / "oracle" / "internlm2-chat-1.8b" / "max_model_len.json")
                        .read_text())
    above, at = (run["output"] for run in record["runs"])
    limit = load_config(DATA / "oracle" / "internlm2-chat-1.8b")[0].max_context
    assert limit is not None and limit.tokens == 65536
    assert not above["ok"] and above["settings"]["max_model_len"] == limit.tokens + 1
    assert ("greater than the derived max_model_len (max_position_embeddings=65536.0"
            in above["error"])
    assert at["ok"] and at["settings"]["max_model_len"] == limit.tokens


def test_disagg_refuses_input_plus_output_above_the_maximum() -> None:
    # Each role runs with max_model_len I + O = 4,096 + 1,024 = 5,120 > 4,096.
    args = ["plan", EXAONE, "--disagg", "--input-len", "4k", "--output-len", "1k", "--gpu",
            "H100"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2
    assert "--input-len + --output-len 5120: above" in refused.stderr
    allowed = runner.invoke(app, [*args, "--allow-long-context", "-f", "json"])
    assert allowed.exit_code == 0, allowed.stderr
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve" in allowed.stdout


def test_longest_context_is_capped_at_the_derived_maximum() -> None:
    # internlm/internlm3-8b-instruct: max_position_embeddings 32768, rope_scaling dynamic factor
    # 6 -> 196,608; one request of it fits on an H200, so the answer is the cap itself (it was
    # capped at 32,768 before).
    result = runner.invoke(app, ["estimate", str(DATA / "configs" / "internlm3-8b.json"),
                                 "--gpu", "H200", "--requests", "1", "-f", "json"])
    assert json.loads(result.stdout)["longest_context_for_requests"] == 32768 * 6
