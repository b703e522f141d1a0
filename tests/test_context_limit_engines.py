"""Each engine's own maximum context (kvplan.engines.sglang.context, kvplan.engines.trtllm.context
over the spec's engine-neutral position_fields; asked of the engine's rules, `max_context`),
where it differs from vLLM 0.32's (tests/test_context_limit.py), and what each does with a
longer context.

- SGLang: python/sglang/srt/hf_transformers_utils.py `get_context_length` (0.4.8 lines 159-185;
  0.5.6 srt/utils/hf_transformers_utils.py lines 327-353, the same code): the FIRST stated of
  max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings, times
  rope_scaling["factor"] unless rope_scaling names original_max_position_embeddings or its
  rope_type is llama3; above it configs/model_config.py raises unless
  SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (0.5.1 on).
- TensorRT-LLM: tensorrt_llm/_torch/models/modeling_utils.py `infer_max_seq_len`:
  max_position_embeddings only, times rope_scaling factor unless its type (type, else
  rope_type) is su, longrope, llama3 or yarn, rounded up; above it
  _torch/pyexecutor/model_engine.py `_init_max_seq_len` lowers max_seq_len to it unless
  TLLM_ALLOW_LONG_MAX_MODEL_LEN=1.

Each number is worked out by hand from the published config.json named."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.analysis.sweep import SweepGrid, skipped_contexts
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.sglang.context import sglang_context_limit as _sglang
from kvplan.engines.trtllm.context import trtllm_context_limit as _trtllm
from kvplan.model.context_limit import ContextLimit, PositionFields, context_limit_from_config
from kvplan.sources.hf_config import load_config
from kvplan.sources.spec_context import position_fields_from_config
from kvplan.sources.spec_yaml import parse_spec
from tests.test_context_default import command_r_as_llama

DATA = Path(__file__).parent / "data"
runner = CliRunner()


def _fields(config: dict) -> PositionFields:
    """The position fields a config mapping states (no class default)."""
    return position_fields_from_config(config, None) or PositionFields()


def sglang_context_limit(config: dict) -> ContextLimit | None:
    return _sglang(_fields(config))


def trtllm_context_limit(config: dict) -> ContextLimit | None:
    return _trtllm(_fields(config))


def _limits(name: str) -> tuple[ContextLimit | None, ...]:
    """(vLLM, SGLang, TensorRT-LLM) maximum of a bundled test config."""
    spec, _ = load_config(DATA / "configs" / f"{name}.json")
    return tuple(e.rules.max_context(spec) for e in (Engine.vllm, Engine.sglang, Engine.trtllm))


def test_gemma3_linear_factor_multiplies_for_sglang_and_trtllm() -> None:
    # google/gemma-3-12b-it text_config: max_position_embeddings 131072, rope_scaling
    # {"rope_type": "linear", "factor": 8.0}. vLLM skips the factor for gemma3 -> 131,072.
    # SGLang: no original_max_position_embeddings, rope_type not llama3 -> 131,072 x 8 =
    # 1,048,576. TensorRT-LLM: type (rope_type) linear is not in (su, longrope, llama3, yarn)
    # -> ceil(131,072 x 8.0) = 1,048,576.
    scaled = ContextLimit(tokens=1048576,
                          source="config.json max_position_embeddings x rope_scaling.factor 8")
    assert _limits("gemma-3-12b") == (
        ContextLimit(tokens=131072, source="config.json max_position_embeddings"), scaled, scaled)


def test_command_r_model_max_length() -> None:
    # CohereForAI/c4ai-command-r-v01: max_position_embeddings 8192, model_max_length 131072, no
    # rope_scaling. vLLM: truthy model_max_length overrides -> 131,072. SGLang: model_max_length
    # comes before max_position_embeddings in its order -> 131,072. TensorRT-LLM reads
    # max_position_embeddings only -> 8,192.
    vllm, sglang, trtllm = _limits("command-r-v01")
    assert vllm == sglang == ContextLimit(tokens=131072, source="config.json model_max_length")
    assert trtllm == ContextLimit(tokens=8192, source="config.json max_position_embeddings")


def test_first_key_not_smallest() -> None:
    # OrionStarAI/Orion-14B-Base: max_sequence_length 4096 and max_position_embeddings 4096:
    # SGLang names the first of its keys (max_sequence_length), vLLM the smallest, first in
    # its own order (max_position_embeddings); both 4,096.
    vllm, sglang, trtllm = _limits("orion-14b")
    assert sglang == ContextLimit(tokens=4096, source="config.json max_sequence_length")
    assert vllm == trtllm == ContextLimit(tokens=4096, source="config.json max_position_embeddings")
    # Both seq_length and max_position_embeddings, disagreeing (a constructed config: no
    # bundled one has both): seq_length 2048, max_position_embeddings 8192: vLLM the smallest
    # (2,048), SGLang the first of its order (seq_length, 2,048), TensorRT-LLM
    # max_position_embeddings
    # (8,192). The other way round (seq_length 32768, max_position_embeddings 8192): vLLM 8,192,
    # SGLang seq_length 32,768.
    config = {"seq_length": 2048, "max_position_embeddings": 8192}
    assert context_limit_from_config(config, "qwen").tokens == 2048
    assert sglang_context_limit(config) == ContextLimit(tokens=2048,
                                                        source="config.json seq_length")
    assert trtllm_context_limit(config).tokens == 8192
    config = {"seq_length": 32768, "max_position_embeddings": 8192}
    assert context_limit_from_config(config, "x").tokens == 8192
    assert sglang_context_limit(config).tokens == 32768


# Qwen/Qwen3-8B config.json (max_position_embeddings 40960) with its model card's YaRN.
QWEN3_8B_YARN = {"model_type": "qwen3", "max_position_embeddings": 40960,
                 "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                  "original_max_position_embeddings": 32768}}


def test_yarn_with_and_without_original_max_position_embeddings() -> None:
    # With original_max_position_embeddings: SGLang sets the factor back to 1 -> 40,960;
    # TensorRT-LLM: yarn in its list -> 40,960; vLLM: YaRN in its list -> 40,960.
    for rule in (sglang_context_limit, trtllm_context_limit):
        assert rule(QWEN3_8B_YARN) == ContextLimit(
            tokens=40960, source="config.json max_position_embeddings")
    # Without it (the same YaRN, {"rope_type": "yarn", "factor": 4.0}): SGLang multiplies ->
    # 40,960 x 4 = 163,840; TensorRT-LLM and vLLM still 40,960.
    bare = {**QWEN3_8B_YARN, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
    assert sglang_context_limit(bare) == ContextLimit(
        tokens=163840, source="config.json max_position_embeddings x rope_scaling.factor 4")
    assert trtllm_context_limit(bare).tokens == 40960
    assert context_limit_from_config(bare, "qwen3").tokens == 40960


def test_llama31_llama3_rope_same_everywhere() -> None:
    # meta-llama/Llama-3.1-8B: max_position_embeddings 131072, rope_scaling {"rope_type":
    # "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}: SGLang skips the
    # factor (original_max_position_embeddings present, and rope_type llama3); TensorRT-LLM
    # (llama3 in its list) and vLLM too -> 131,072 for all three.
    same = ContextLimit(tokens=131072, source="config.json max_position_embeddings")
    assert _limits("llama-3.1-8b") == (same, same, same)


def test_dynamic_and_legacy_type() -> None:
    # internlm/internlm2-chat-1_8b: max_position_embeddings 32768, rope_scaling {"type":
    # "dynamic", "factor": 2.0}: all three multiply -> 65,536.
    assert {lim.tokens for lim in _limits("internlm2-chat-1.8b")} == {65536}
    # deepseek-ai/DeepSeek-V3: 163840, {"type": "yarn", "factor": 40,
    # "original_max_position_embeddings": 4096}: SGLang (original present), TensorRT-LLM
    # (type yarn) and vLLM keep 163,840.
    assert {lim.tokens for lim in _limits("deepseek-v3")} == {163840}
    # SGLang reads "rope_type" only for llama3: {"type": "llama3", "factor": 8} without
    # original_max_position_embeddings multiplies there (4,096 x 8), not in TensorRT-LLM.
    legacy = {"max_position_embeddings": 4096, "rope_scaling": {"type": "llama3", "factor": 8}}
    assert sglang_context_limit(legacy).tokens == 32768
    assert trtllm_context_limit(legacy).tokens == 4096


def test_no_key_keeps_vllms() -> None:
    # transformers' default BloomConfig states no key: SGLang's 2048 and TensorRT-LLM's 2048
    # stand only where the config class has none either; kvplan holds no class defaults and
    # keeps vLLM's answer (no limit). Falcon-7B (no key, FalconConfig default 2048): 2,048.
    spec, _ = load_config(DATA / "oracle" / "default-bloom")
    assert all(e.rules.max_context(spec) is None for e in Engine)
    assert sglang_context_limit({"hidden_size": 8}) is None
    assert trtllm_context_limit({"hidden_size": 8}) is None
    # max_position_embeddings alone (the spec holds no position_fields): every engine keeps it.
    assert position_fields_from_config({"max_position_embeddings": 4096}, 4096) is None
    assert trtllm_context_limit({"max_position_embeddings": 4096}).tokens == 4096
    falcon, _ = load_config(DATA / "configs" / "falcon-7b.json")
    assert {e.rules.max_context(falcon).tokens for e in Engine} == {2048}
    # gpt2: n_positions 1024 (GPT2Config maps max_position_embeddings to it) -> 1,024 each.
    gpt2 = _limits("gpt2")
    assert {lim.tokens for lim in gpt2} == {1024}
    assert {lim.source for lim in gpt2} == {"config.json n_positions"}


def test_yaml_spec_states_position_fields() -> None:
    # A YAML spec's position_fields (engine-neutral, as config.json states them): seq_length
    # 4096 and max_position_embeddings 32768 (a constructed pair): vLLM keeps the spec's
    # max_model_len (4,096, the smallest); SGLang the first of its order (seq_length, 4,096,
    # named as the spec names it); TensorRT-LLM max_position_embeddings (32,768).
    base = {"name": "x", "source": "x", "num_hidden_layers": 2, "hidden_size": 64,
            "vocab_size": 100, "max_position_embeddings": 32768, "max_model_len": 4096,
            "max_model_len_source": "config.json seq_length",
            "attention": {"kind": "gqa", "num_attention_heads": 4, "num_key_value_heads": 2,
                          "head_dim": 16},
            "mlp": {"intermediate_size": 128},
            "position_fields": {"max_position_embeddings": 32768, "seq_length": 4096}}
    spec = parse_spec(base, path="x.yaml", spec_id="x")
    stated = ContextLimit(tokens=4096, source="config.json seq_length")
    assert Engine.vllm.rules.max_context(spec) == Engine.sglang.rules.max_context(spec) == stated
    assert Engine.trtllm.rules.max_context(spec) == ContextLimit(
        tokens=32768, source="config.json max_position_embeddings")
    # Without position_fields every engine keeps the spec's maximum.
    del base["position_fields"]
    spec = parse_spec(base, path="x.yaml", spec_id="x")
    assert {e.rules.max_context(spec) for e in Engine} == {stated}


def test_bundled_gemma3_27b_yaml() -> None:
    # model_specs/gemma-3-27b.yaml position_fields: google/gemma-3-27b-it text_config
    # max_position_embeddings 131072, rope_scaling {"rope_type": "linear", "factor": 8.0}:
    # vLLM 131,072 (gemma3 skips the factor), SGLang and TensorRT-LLM 131,072 x 8 = 1,048,576.
    from kvplan.sources.resolve import load_spec

    spec = load_spec("gemma-3-27b")
    assert [e.rules.max_context(spec).tokens for e in (Engine.vllm, Engine.sglang,
                                                       Engine.trtllm)] == [131072, 1048576, 1048576]


def test_position_fields_yaml_refusals() -> None:
    base = {"name": "x", "source": "x", "num_hidden_layers": 2, "hidden_size": 64,
            "vocab_size": 100, "attention": {"kind": "gqa", "num_attention_heads": 4,
                                             "num_key_value_heads": 2, "head_dim": 16},
            "mlp": {"intermediate_size": 128}}
    for bad, field in (({"context_length": 8}, "position_fields.context_length"),
                       ({"seq_length": "8k"}, "position_fields.seq_length"),
                       ({"rope_scaling": {"alpha": 1}}, "position_fields.rope_scaling")):
        with pytest.raises(SpecError, match=field):
            parse_spec({**base, "position_fields": bad}, path="x.yaml", spec_id="x")


GEMMA = str(DATA / "configs" / "gemma-3-12b.json")
COMMAND_R = str(DATA / "configs" / "command-r-v01.json")


def test_plan_asks_the_engine() -> None:
    # 200,000 tokens on Gemma-3-12B: above vLLM's 131,072, within SGLang's 1,048,576.
    vllm = runner.invoke(app, ["plan", GEMMA, "-c", "200000", "--gpu", "H200"])
    assert vllm.exit_code == 2 and "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in vllm.stderr
    sglang = runner.invoke(app, ["plan", GEMMA, "-c", "200000", "--gpu", "H200", "--engine",
                                 "sglang", "-f", "json"])
    assert sglang.exit_code == 0, sglang.stderr
    assert "SGLANG_ALLOW" not in json.loads(sglang.stdout)["command"]


def test_trtllm_refusal_names_its_variable(tmp_path: Path) -> None:
    # 16,384 tokens on Command-R: within vLLM's 131,072, above TensorRT-LLM's 8,192. Checked
    # for TensorRT-LLM under LlamaForCausalLM (tests/test_context_default.command_r_as_llama:
    # its PyTorch registry has no CohereForCausalLM).
    assert runner.invoke(app, ["plan", COMMAND_R, "-c", "16384", "--gpu", "H200"]).exit_code == 0
    as_llama = command_r_as_llama(tmp_path)
    result = runner.invoke(app, ["plan", as_llama, "-c", "16384", "--gpu", "H200", "--engine",
                                 "trtllm"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "kvplan: error: --context 16384: above HF_Final_weight_tie's maximum of 8,192 "
        "tokens (config.json max_position_embeddings); TensorRT-LLM lowers max_seq_len to it "
        "(TLLM_ALLOW_LONG_MAX_MODEL_LEN=1 overrides; kvplan: --allow-long-context)")
    estimate = runner.invoke(app, ["estimate", as_llama, "-c", "16384", "--engine", "trtllm",
                                   "-f", "json"])
    assert json.loads(estimate.stdout)["above_max_context"] == {
        "max_context": 8192, "source": "config.json max_position_embeddings",
        "engine_refuses": False, "override_env": "TLLM_ALLOW_LONG_MAX_MODEL_LEN=1"}


def test_sweep_leaves_out_by_the_engines_maximum() -> None:
    # Gemma-3-12B at 200,000 tokens: vLLM leaves it out (above 131,072), SGLang keeps it
    # (1,048,576), and both leave out 2,000,000.
    spec, _ = load_config(Path(GEMMA))
    grid = SweepGrid(contexts=(4096, 200000, 2000000), skip_long_contexts=True)
    assert skipped_contexts(spec, grid) == (200000, 2000000)
    assert skipped_contexts(spec, replace(grid, engine=Engine.sglang)) == (2000000,)


def test_import_writes_position_fields_only_where_they_say_more() -> None:
    # `kvplan import` keeps config.json's position fields (engine-neutral) where they say more
    # than max_position_embeddings: Gemma-3-12B's linear x8, Llama-3.1-8B's llama3 scaling;
    # Mistral-7B-v0.1 (max_position_embeddings 32768, no rope_scaling) states none.
    from kvplan.sources.hf_config import spec_mapping_from_config
    from kvplan.sources.hf_files import read_config

    def fields(name: str) -> object:
        data, shown = read_config(DATA / "configs" / f"{name}.json")
        return spec_mapping_from_config(data, path=shown)[0].get("position_fields")

    assert fields("gemma-3-12b") == {"max_position_embeddings": 131072,
                                     "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    assert fields("llama-3.1-8b") == {"max_position_embeddings": 131072, "rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}}
    assert fields("mistral-7b-v0.1") is None
