"""Packaging and the public surface: extras, set-up commands, --version, help text, the Python API
and its README example, lazy imports, one JSON schema_version everywhere."""

from __future__ import annotations

import doctest
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kvplan
from kvplan.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
tomllib = pytest.importorskip("tomllib")  # Python >= 3.11; CI runs 3.11
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
runner = CliRunner()


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 3)
    return README[start:end if end != -1 else None]


def test_torch_is_an_extra_and_matplotlib_too() -> None:
    project = PYPROJECT["project"]
    assert not any(d.startswith("torch") for d in project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(d.startswith("torch") for d in extras["verify"])
    assert any(d.startswith("matplotlib") for d in extras["plot"])
    assert not any(d.startswith(("torch", "matplotlib")) for d in extras["dev"])


def test_readme_setup_and_ci_install_every_extra_the_tests_need() -> None:
    setup = _section("Set-up")
    first = re.search(r"```bash\n(.*?)\n```", setup, re.S)
    assert first is not None
    command = first.group(1)
    # torch from local disk first (the CPU build), then the project with its extras.
    assert command.index("torch==2.13.0") < command.index("-e '.[dev,verify,plot]'")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.index("torch==2.13.0") < ci.index("-e '.[dev,verify,plot]'")


def test_version_everywhere_agrees() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"kvplan {kvplan.__version__}\n"
    assert PYPROJECT["project"]["version"] == kvplan.__version__


def test_help_keeps_brackets_that_rich_would_eat() -> None:
    result = runner.invoke(app, ["sweep", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    assert "pip install 'kvplan[plot]'" in result.stdout


def test_verify_without_torch_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    result = runner.invoke(app, ["verify", "gpt2", "--device", "cpu"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "kvplan: error: verify needs torch, which is not installed: pip install "
        "'kvplan[verify]' (on a GPU machine, install your CUDA build of torch first)"]
    # --help needs no torch.
    assert runner.invoke(app, ["verify", "--help"]).exit_code == 0


def test_readme_library_example_runs() -> None:
    """The README's Python API section and examples/python-api.md, run as doctests: the
    documented API really works."""
    guide = (ROOT / "examples" / "python-api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", _section("Python API"), re.S)
    assert blocks and ">>> p = kvplan.plan(" in blocks[0]
    more = re.findall(r"```python\n(.*?)```", guide, re.S)
    assert more and ">>> from kvplan import load_model, estimate, plan_capacity" in more[0]
    parser = doctest.DocTestParser()
    runner_ = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks + more):
        test = parser.get_doctest(block, {}, f"README-library-{i}", "README.md", 0)
        runner_.run(test)
    assert runner_.failures == 0 and runner_.tries >= 12


def test_api_names_and_laziness() -> None:
    for name in ("load_model", "estimate", "plan_capacity", "compare", "sweep"):
        assert callable(getattr(kvplan, name)), name
        assert name in kvplan.__all__
    code = ("import sys, kvplan; from kvplan import load_model, estimate, compare, sweep; "
            "heavy = [m for m in ('torch', 'pandas', 'numpy', 'rich', 'typer', 'matplotlib') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"


def test_package_docstring_doctest_runs_plan_included() -> None:
    # Issue 28 item 8: `kvplan.plan` is documented by a doctest in the package docstring.
    import doctest

    assert "kvplan.plan(" in (kvplan.__doc__ or "")
    result = doctest.testmod(kvplan, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 4


def test_plan_api_is_the_plan_command() -> None:
    import json

    from kvplan.cli.app import app

    p = kvplan.plan("llama-3.1-8b", concurrency=16, context="8k", gpu="h100")
    assert isinstance(p, kvplan.ServingPlan)
    out = CliRunner().invoke(app, ["plan", "llama-3.1-8b", "--concurrency", "16", "--context",
                                   "8k", "--gpu", "h100", "--format", "json"]).stdout
    cli = json.loads(out)
    for key, value in p.to_dict().items():
        assert cli[key] == value, key
    with pytest.raises(kvplan.InputError, match="engine"):
        kvplan.plan("llama-3.1-8b", engine="tgi")
    with pytest.raises(kvplan.InputError, match="kv_dtype"):
        kvplan.plan("llama-3.1-8b", kv_dtype="fp7")


def test_import_kvplan_exposes_only_api_names() -> None:
    import types

    assert dir(kvplan) == sorted(kvplan.__all__)
    namespace: dict[str, object] = {}
    exec("from kvplan import *", namespace)  # noqa: S102
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(kvplan.__all__)
    # No stray helper (typing names, importlib, ...) under a public name: what is neither an
    # API name nor underscored is a subpackage the import system bound while loading.
    stray = [n for n, v in vars(kvplan).items() if not n.startswith("_")
             and n not in kvplan.__all__ and not isinstance(v, types.ModuleType)]
    assert stray == []
    for name in kvplan.__all__:
        assert getattr(kvplan, name) is not None, name


def test_api_functions_are_plain_functions_apart_from_their_modules() -> None:
    # Issue 25: no module swaps its class to be callable; the API names are not module names.
    import types

    import kvplan.analysis.compare as compare_module
    import kvplan.analysis.sweep as sweep_module

    for name, module in (("sweep", sweep_module), ("compare", compare_module)):
        assert isinstance(getattr(kvplan, name), types.FunctionType)
        assert type(module) is types.ModuleType


@pytest.mark.parametrize("args", [
    ["specs"], ["gpus"], ["engines"], ["estimate", "gpt2"],
    ["estimate", "llama-3-8b", "--gpu", "H100-80GB"], ["compare", "llama-3-8b"],
    ["sweep", "llama-3-8b", "--context", "1k,2k"],
])
def test_every_json_output_carries_the_same_schema_version(args: list[str]) -> None:
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    rows = data if isinstance(data, list) else [data]
    assert rows and all(row["schema_version"] == kvplan.SCHEMA_VERSION for row in rows)
