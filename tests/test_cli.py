"""The CLI through typer's CliRunner: every command, every format, stdout and stderr apart."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.present.render import OutputFormat

runner = CliRunner()

ESTIMATE_KEYS = {
    "bytes_per_token_per_layer", "bytes_per_token", "bytes_per_block", "bytes_per_sequence",
    "model", "context", "batch", "kv_dtype", "block_size",
}


def test_estimate_json_contract() -> None:
    result = runner.invoke(app, ["estimate", "llama-3-70b", "--context", "8192", "--batch", "4",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert ESTIMATE_KEYS <= data.keys()
    assert data["bytes_per_token"] == 327_680
    assert data["bytes_per_block"] == 16 * 327_680
    assert data["bytes_per_sequence"] == 8192 * 327_680
    assert data["bytes_per_batch"] == 4 * 8192 * 327_680
    assert (data["model"], data["context"], data["batch"]) == ("llama-3-70b", 8192, 4)
    assert all(isinstance(data[k], int) for k in ESTIMATE_KEYS - {"model", "kv_dtype"})


def test_estimate_csv_is_one_record() -> None:
    result = runner.invoke(app, ["estimate", "falcon-7b", "-f", "csv"])
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 1
    assert rows[0]["bytes_per_token"] == "8192"


def test_estimate_table_names_units() -> None:
    result = runner.invoke(app, ["estimate", "deepseek-v2", "--context", "4096"],
                           env={"COLUMNS": "160"})
    assert result.exit_code == 0
    out = result.stdout
    assert "69,120" in out and "67.50 KiB" in out
    assert "2^30" in out and "10^9" in out
    assert "MLA: latent 512 + RoPE key 64" in out


def test_estimate_markdown() -> None:
    result = runner.invoke(app, ["estimate", "gemma-2-9b", "-c", "8192", "-f", "markdown"])
    assert result.exit_code == 0
    assert "| per token (all layers) | 344,064 |" in result.stdout
    assert "21 of 42 layers use a sliding window of 4,096 tokens" in result.stdout


@pytest.mark.parametrize("fmt", list(OutputFormat))
@pytest.mark.parametrize(
    "args",
    [["specs"], ["specs", "--kv-dtype", "fp8"], ["gpus"],
     ["estimate", "deepseek-v3", "--kv-dtype", "fp8", "--block-size", "64"],
     ["estimate", "gemma-3-27b", "--gpu", "H100-80GB", "--requests", "8"],
     ["estimate", "deepseek-v2-lite", "--gpu-mem-gib", "80", "--engine", "sglang"],
     ["estimate", "llama-3-70b", "--gpu", "A100-80GB", "--tp", "4", "--pp", "2",
      "--engine", "trtllm", "--shared-prefix", "1024"]],
)
def test_every_command_every_format(args, fmt) -> None:
    result = runner.invoke(app, [*args, "--format", fmt.value], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()
    assert result.stderr == ""
    if fmt is OutputFormat.json:
        json.loads(result.stdout)


def test_specs_lists_every_bundled_model() -> None:
    result = runner.invoke(app, ["specs", "--format", "json"])
    rows = json.loads(result.stdout)
    by_id = {r["id"]: r for r in rows}
    assert len(by_id) == 37
    assert by_id["deepseek-v2"]["bytes_per_token"] == 69_120
    assert by_id["falcon-7b"]["attention_kind"] == "mqa"
    assert by_id["gemma-3-27b"]["sliding_layers"] == 52


@pytest.mark.parametrize(
    "args",
    [["estimate", "gpt2", "--context", "0"], ["estimate", "gpt2", "--kv-dtype", "fp6"],
     ["estimate", "gpt2", "--block-size", "0"], ["estimate", "gpt2", "--format", "xml"]],
)
def test_bad_options_exit_2(args) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stdout == ""


def test_help_for_every_command() -> None:
    names = {c.name for c in app.registered_commands}
    assert {"specs", "gpus", "estimate", "compare", "import", "verify", "sweep"} <= names
    for cmd in names:
        result = runner.invoke(app, [cmd, "--help"])
        assert result.exit_code == 0
        assert result.stdout.strip()


def test_python_dash_m_and_no_heavy_imports() -> None:
    """`kvplan estimate` must start without importing torch or pandas."""
    code = (
        "import sys, runpy\n"
        "sys.argv = ['kvplan', 'estimate', 'deepseek-v3', '--format', 'json']\n"
        "try:\n"
        "    runpy.run_module('kvplan', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in ('torch', 'pandas') if m in sys.modules)\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert json.loads(proc.stdout)["bytes_per_token"] == 70_272
    assert "HEAVY []" in proc.stderr


CONFIGS = __import__("pathlib").Path(__file__).parent / "data" / "configs"


def test_import_to_stdout_and_file(tmp_path) -> None:
    import yaml

    from kvplan.sources.resolve import load_spec_file

    result = runner.invoke(app, ["import", str(CONFIGS / "deepseek-v2.json")])
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout)["attention"]["kv_lora_rank"] == 512
    out = tmp_path / "ds.yaml"
    result = runner.invoke(app, ["import", str(CONFIGS / "deepseek-v2.json"), "-o", str(out)])
    assert result.exit_code == 0
    spec = load_spec_file(out)
    assert spec.attention.elements_per_token() == 576
    # Refuses to overwrite without --force; leaves the file alone.
    before = out.read_text()
    result = runner.invoke(app, ["import", str(CONFIGS / "gpt2.json"), "-o", str(out)])
    assert result.exit_code == 2 and "exists" in result.stderr
    assert out.read_text() == before
    result = runner.invoke(app, ["import", str(CONFIGS / "gpt2.json"), "-o", str(out), "--force"])
    assert result.exit_code == 0
    assert load_spec_file(out).attention.num_attention_heads == 12
    assert [p.name for p in tmp_path.iterdir()] == ["ds.yaml"]  # no temporary files left


def test_config_json_and_folder_as_model(tmp_path) -> None:
    folder = tmp_path / "snapshot"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "llama-3-70b.json").read_text())
    for model in (str(CONFIGS / "llama-3-70b.json"), str(folder)):
        result = runner.invoke(app, ["estimate", model, "--format", "json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["bytes_per_token"] == 327_680


def test_bad_config_json(tmp_path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text('{"model_type": "llama", "hidden_size": 4096,')
    result = runner.invoke(app, ["import", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"kvplan: error: {bad}: malformed JSON at line 1")
    bad.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096,
                               "num_attention_heads": 32, "vocab_size": 10}))
    result = runner.invoke(app, ["estimate", str(bad)])
    assert result.exit_code == 2
    assert "num_hidden_layers" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_estimate_refuses_tp_not_dividing_heads() -> None:
    result = runner.invoke(app, ["estimate", "falcon-7b", "--tp", "2"])  # 71 heads
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "kvplan: error: --tp: 2 does not divide num_attention_heads (71) of falcon-7b; "
        "vLLM and SGLang refuse this layout")


def _views_to_fit() -> list:
    from kvplan.analysis.compare import compare_schemes
    from kvplan.capacity.plan import plan_capacity
    from kvplan.engines.base import PlanInputs
    from kvplan.hardware.gpus import GPUS, get_gpu
    from kvplan.kv.cache import estimate
    from kvplan.present.capacity_view import capacity_view
    from kvplan.present.catalog_view import engines_view, gpus_view
    from kvplan.present.compare_view import compare_view
    from kvplan.present.estimate_view import estimate_view
    from kvplan.sources.resolve import load_bundled_specs, load_spec

    views = [engines_view(), gpus_view(list(GPUS.values()))]
    for spec_id in ("llama-3.1-8b", "gemma-3-27b", "qwen3-next-80b-a3b", "deepseek-v3.2"):
        spec = load_spec(spec_id)
        est = estimate_view(spec, estimate(spec, context=8192))
        views += [est, *est.more]
        plan = plan_capacity(spec, PlanInputs(context=8192, total_bytes=get_gpu("H100").total_bytes,
                                              tp=1 if spec_id == "llama-3.1-8b" else 8))
        views.append(capacity_view(spec, plan, device="H100"))
        views.append(compare_view(spec, compare_schemes(spec, context=8192), context=8192,
                                  batch=1, kv_dtype="bf16", tp=1, gpu=get_gpu("H100")))
    assert len(load_bundled_specs()) > 30
    return views


def test_fit_rule_agrees_with_rich_rendering() -> None:
    # render.fit_columns decides whether a table fits from each column's minimum width instead
    # of rendering it; rich's own rendering (console widened as emit widens it) must agree.
    from rich.console import Console

    from kvplan.present.render import _fits, build_table, needed_width

    checked = 0
    for view in _views_to_fit():
        for width in (50, 64, 72, 80, 100, 132):
            out = io.StringIO()
            Console(file=out, width=max(width, needed_width(view, width)), markup=False,
                    highlight=False, emoji=False, color_system=None).print(build_table(view))
            rendered = max(len(line.rstrip()) for line in out.getvalue().splitlines())
            assert (rendered <= width) == _fits(view, width), (view.title, width, rendered)
            checked += 1
    assert checked > 60


def test_every_default_is_what_typer_would_make_of_it() -> None:
    """KvplanCommand hands an option's declared default to the command without typer's coercion
    (start-up: typer builds a pydantic adapter per parameter to coerce it). That is only right
    if typer's coercion maps each default to itself: checked here for every option of every
    command, so a new default that typer would change (a str for an enum, "32k") fails."""
    import typer.main

    checked = 0
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        ctx = command.context_class(command, info_name=name)
        for param in command.params:
            if param.default is None or param.required or callable(param.default):
                continue
            coerced = type(param).process_value(param, ctx, param.default)
            assert coerced == param.default and type(coerced) is type(param.default), \
                (name, param.name, param.default, coerced)
            checked += 1
    assert checked > 50


def test_an_option_given_its_default_value_is_still_parsed() -> None:
    # `--context 4k` is 4096, the default, but it came from the command line: typer parses it.
    result = runner.invoke(app, ["estimate", "llama-3.1-8b", "-c", "4k", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["context"] == 4096
    bad = runner.invoke(app, ["estimate", "llama-3.1-8b", "--engine", "nope"])
    assert bad.exit_code == 2


@pytest.mark.parametrize(("args", "unused"), [
    # Without a device: no budget rules, no SGLang pools, no weights, no quantized formats.
    (["estimate", "llama-3.1-8b"], ("kvplan.engines.vllm.budget", "kvplan.engines.sglang.pools",
                                    "kvplan.weights.breakdown", "kvplan.model.quant_formats",
                                    "kvplan.model.quant_config", "kvplan.weights.checkpoint",
                                    "kvplan.sources.checkpoint", "kvplan.capacity.plan",
                                    "kvplan.capacity.stages")),
    # A bf16 text model on a GPU with vLLM: weights and budgets, still no quantized formats
    # and no multimodal encoder profile.
    (["estimate", "llama-3.1-8b", "--gpu", "H100"], ("kvplan.engines.sglang.pools",
                                                      "kvplan.engines.vllm.mm",
                                                      "kvplan.model.quant_formats",
                                                      "kvplan.model.quant_config",
                                                      "kvplan.weights.checkpoint",
                                                      "kvplan.sources.checkpoint")),
])
def test_estimate_loads_only_the_rules_it_uses(args: list[str], unused: tuple[str, ...]) -> None:
    """Start-up (examples/startup-bench.md): building kvplan's frozen dataclasses is most of its
    import time, so the modules a command does not need stay unimported."""
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['kvplan', *{args!r}, '--format', 'json']\n"
        "try:\n"
        "    runpy.run_module('kvplan', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED', sorted(m for m in {unused!r} if m in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert json.loads(proc.stdout)["bytes_per_token"] == 131_072
    assert "LOADED []" in proc.stderr


def test_shell_completion_is_on() -> None:
    # Issue 28 item 8: `kvplan --install-completion` / `--show-completion` (typer's), and the
    # completion itself completes command names and a command's options through `main`.
    import os
    import subprocess
    import sys

    from kvplan.cli.app import app

    help_text = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    env = {**os.environ, "_KVPLAN_COMPLETE": "complete_bash", "COMP_WORDS": "kvplan plan x --con",
           "COMP_CWORD": "3"}
    out = subprocess.run([sys.executable, "-m", "kvplan"], env=env, capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    assert "--concurrency" in out and "--context" in out
    env.update(COMP_WORDS="kvplan est", COMP_CWORD="1")
    out = subprocess.run([sys.executable, "-m", "kvplan"], env=env, capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    assert out == ["estimate"]
