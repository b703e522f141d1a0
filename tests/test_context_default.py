"""The context `plan`, `simulate`, `report`, `check` and kvplan.plan() take when none is given:
the engine's own maximum (kvplan.engines.context.default_context: its rules' `max_context`), as
vLLM (max_model_len), SGLang (--context-length) and TensorRT-LLM (max_seq_len) each default to
the maximum they derive, not max_position_embeddings. Numbers from tests/test_context_limit*.py."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import kvplan
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.context import default_context
from kvplan.sources.hf_config import load_config
from tests.test_sglang_arrivals import renamed

DATA = Path(__file__).parent / "data" / "configs"
COMMAND_R = str(DATA / "command-r-v01.json")
runner = CliRunner()


def _plan_context(model: str, engine: str) -> int:
    result = runner.invoke(app, ["plan", model, "--gpu", "H200", "--engine", engine, "-f",
                                 "json"])
    assert result.exit_code in (0, 3), result.stderr
    return json.loads(result.stdout)["context"]


def command_r_as_llama(tmp_path: Path) -> str:
    """Command-R v01's config under LlamaForCausalLM: TensorRT-LLM's PyTorch registry has no
    CohereForCausalLM (kvplan/engines/trtllm/registry.json), so its context rule (which reads
    the config's position fields, not its class) is checked on a name the registry has."""
    return str(renamed(Path(COMMAND_R), tmp_path, "LlamaForCausalLM"))


def test_plan_defaults_to_each_engines_maximum(tmp_path: Path) -> None:
    # CohereForAI/c4ai-command-r-v01: max_position_embeddings 8192, model_max_length 131072:
    # vLLM and SGLang start at 131,072 (model_max_length), TensorRT-LLM at 8,192
    # (max_position_embeddings only). The default was 8,192 for all three.
    assert {e: _plan_context(COMMAND_R, e) for e in ("vllm", "sglang")} == {
        "vllm": 131072, "sglang": 131072}
    assert _plan_context(command_r_as_llama(tmp_path), "trtllm") == 8192


def _short_seq_config(tmp_path: Path) -> Path:
    # A constructed config (meta-llama/Llama-3.1-8B's, without rope_scaling) stating
    # seq_length 2048 below max_position_embeddings 8192: vLLM's maximum is the smallest
    # (2,048), SGLang's the first of its order (seq_length, 2,048), TensorRT-LLM's
    # max_position_embeddings (8,192).
    config = json.loads((DATA / "llama-3.1-8b.json").read_text())
    config.pop("rope_scaling", None)
    config.update(max_position_embeddings=8192, seq_length=2048)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


def test_default_no_longer_refuses_itself(tmp_path: Path) -> None:
    path = str(_short_seq_config(tmp_path))
    spec, _ = load_config(Path(path))
    assert [default_context(spec, e) for e in Engine] == [2048, 2048, 8192]
    # Before: the default 8,192 (max_position_embeddings) was above vLLM's 2,048 and refused.
    assert _plan_context(path, "vllm") == 2048
    assert _plan_context(path, "trtllm") == 8192
    sim = runner.invoke(app, ["simulate", path, "--gpu", "H200", "--num-requests", "2", "-n", "1",
                              "--input-len", "64", "--output-len", "4", "-f", "json"])
    assert sim.exit_code == 0, sim.stderr
    assert json.loads(sim.stdout)["context"] == 2048
    assert kvplan.plan(spec, gpu="H200").context == 2048
    assert kvplan.plan(spec, gpu="H200", engine="trtllm").context == 8192
