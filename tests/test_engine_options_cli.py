"""An engine's own option given with another engine is refused in one line (exit 2), not
ignored (kvplan.cli.engine_opts over kvplan.engines.option_readers.OPTION_READERS)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.cli.engine_opts import refusal
from kvplan.cli.vocab import ENGINE_PANELS
from kvplan.engines.option_readers import OPTION_READERS
from kvplan.engines.rules import Engine

runner = CliRunner()
COMMANDS = ("estimate", "compare", "plan", "sweep", "check", "simulate")
LLAMA_H100 = ["estimate", "llama-3.1-8b", "--gpu", "H100"]


def _run(args: list[str]):  # noqa: ANN202
    return runner.invoke(app, args, env={"COLUMNS": "200"})


def _json(args: list[str]) -> dict:
    r = _run([*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _refused(args: list[str], says: str) -> None:
    r = _run(args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and r.stdout == ""
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and err == f"kvplan: error: {says}", err


def _engine_params(name: str) -> list:
    command = typer.main.get_command(app).commands[name]
    return [p for p in command.params if getattr(p, "rich_help_panel", None) in ENGINE_PANELS]


# --- the refusals ---

@pytest.mark.parametrize(("args", "says"), [
    # The two of the brief: each exited 0 and ignored the option.
    (["estimate", "llama-3.1-8b", "--engine", "sglang", "--kv-transfer"],
     "--kv-transfer: a vLLM option; --engine sglang does not read it"),
    (["estimate", "llama-3.1-8b", "--engine", "vllm", "--max-mamba-cache-size", "4"],
     "--max-mamba-cache-size: an SGLang option; --engine vllm does not read it"),
    # The default engine (vLLM) is the engine in play when --engine is left out.
    (["estimate", "llama-3.1-8b", "--max-mamba-cache-size", "4"],
     "--max-mamba-cache-size: an SGLang option; --engine vllm does not read it"),
    # Read by two engines, refused with the third: both named.
    (["estimate", "llama-3.1-8b", "--max-total-tokens", "4000"],
     "--max-total-tokens: an SGLang / TensorRT-LLM option; --engine vllm does not read it"),
    # In vLLM's panel, read by SGLang too: refused with TensorRT-LLM only.
    (["estimate", "llama-3.1-8b", "--engine", "trtllm", "--platform", "rocm"],
     "--platform: a vLLM / SGLang option; --engine trtllm does not read it"),
    (["estimate", "llama-3.1-8b", "--engine", "sglang", "--enforce-eager"],
     "--enforce-eager: a vLLM / TensorRT-LLM option; --engine sglang does not read it"),
    # simulate's scheduler options (TensorRT-LLM's --schedule-policy used to be ignored).
    (["simulate", "llama-3.1-8b", "--engine", "trtllm", "--gpu", "H100", "--concurrency", "2",
      "--schedule-policy", "lpm"],
     "--schedule-policy: an SGLang option; --engine trtllm does not read it"),
    (["simulate", "llama-3.1-8b", "--engine", "sglang", "--gpu", "H100", "--concurrency", "2",
      "--enable-chunked-prefill"],
     "--enable-chunked-prefill: a TensorRT-LLM option; --engine sglang does not read it"),
    (["plan", "llama-3.1-8b", "--engine", "sglang", "--concurrency", "4",
      "--mxfp4-backend", "marlin"],
     "--mxfp4-backend: a vLLM option; --engine sglang does not read it"),
    (["sweep", "llama-3.1-8b", "--engine", "trtllm", "--cpu-amx"],
     "--cpu-amx: a vLLM option; --engine trtllm does not read it"),
])
def test_another_engines_option_is_refused_in_one_line(args: list[str], says: str) -> None:
    _refused(args, says)


def test_nothing_is_written_when_refused(tmp_path: Path) -> None:
    out = tmp_path / "timeline.csv"
    _refused(["simulate", "llama-3.1-8b", "--engine", "trtllm", "--gpu", "H100",
              "--concurrency", "2", "--schedule-policy", "lpm", "--timeline", str(out)],
             "--schedule-policy: an SGLang option; --engine trtllm does not read it")
    assert not out.exists()


def test_the_refusal_names_every_reader_and_passes_a_reader() -> None:
    both = frozenset({Engine.sglang, Engine.trtllm})
    assert refusal("--x", both, Engine.trtllm) is None
    assert refusal("--x", both, Engine.vllm) == (
        "--x: an SGLang / TensorRT-LLM option; --engine vllm does not read it")


# --- options read by several engines: accepted with each, and each really reads them ---

@pytest.mark.parametrize(("base", "option", "engines"), [
    # SglangOptions.max_total_tokens / TrtllmOptions.max_total_tokens cap the pool.
    ([], ["--max-total-tokens", "20000"], ("sglang", "trtllm")),
    # vLLM's and TensorRT-LLM's CUDA-graph reserve (vllm/budget.py, trtllm/budget.py).
    ([], ["--enforce-eager"], ("vllm", "trtllm")),
    # vLLM's rules by platform; SGLang's preload table by platform at TP 2 (sglang/budget.py).
    (["--tp", "2"], ["--platform", "rocm"], ("vllm", "sglang")),
    # PlanInputs.attention_dp_ranks: the attention-DP ranks every engine's layout takes.
    (["--tp", "4", "--dp-attention"], ["--dp-size", "2"], ("vllm", "sglang", "trtllm")),
])
def test_an_option_several_engines_read_is_accepted_and_read_by_each(
        base: list[str], option: list[str], engines: tuple[str, ...]) -> None:
    assert {e.value for e in OPTION_READERS[option[0]]} == set(engines)
    for engine in engines:
        without = _json([*LLAMA_H100, "--engine", engine, *base])
        assert _json([*LLAMA_H100, "--engine", engine, *base, *option]) != without, engine


def test_an_option_every_engine_reads_is_accepted_with_each() -> None:
    for engine in Engine:
        r = _run([*LLAMA_H100, "--engine", engine.value, "--enable-prefix-caching",
                  "--format", "json"])
        assert r.exit_code == 0, r.output


def test_a_default_value_is_never_refused() -> None:
    # Every SGLang-only option of estimate left at its default: accepted with vLLM.
    assert _json(["estimate", "llama-3.1-8b", "--engine", "vllm"])


# --- the table: complete, and true to the engines' option types ---

@pytest.mark.parametrize("command", COMMANDS)
def test_every_engine_panel_option_has_a_row(command: str) -> None:
    missing = [p.opts[0] for p in _engine_params(command) if p.opts[0] not in OPTION_READERS]
    assert missing == []
    for readers in OPTION_READERS.values():
        assert readers and readers <= set(Engine)


# estimate's parameter -> the EngineOptions field it fills, where the names differ.
_FIELD_OF = {"hybrid_manager": "hybrid_kv_cache_manager",
             "disable_hybrid": "hybrid_kv_cache_manager"}


def test_rows_of_engine_options_fields_name_the_engines_whose_options_hold_them() -> None:
    """An option that fills an engine's own options field (VllmOptions, SglangOptions,
    TrtllmOptions) is read by exactly the engines whose options type has that field:
    plan_inputs drops it for the others."""
    own = {e: {f.name for f in fields(e.options_type)} for e in Engine}
    checked = 0
    for param in _engine_params("estimate"):
        field = _FIELD_OF.get(param.name, param.name)
        holders = frozenset(e for e in Engine if field in own[e])
        if holders:
            assert OPTION_READERS[param.opts[0]] == holders, param.opts[0]
            checked += 1
    assert checked >= 15
