"""tests/benches/trtllm_arrivals_dump.py on a tiny git repository shaped as TensorRT-LLM's (the
real mirror, 2.5 GB, is not fetched in CI): which release tags it reads, in which order, and the
register_auto_model names of each."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.benches.trtllm_arrivals_dump import arrivals, registered_names

# The decorator form of TensorRT-LLM's modeling_llama.py (1.0.0):
#     @register_auto_model("LlamaForCausalLM")
#     class LlamaForCausalLM(SpecDecOneEngineForCausalLM[LlamaModel, LlamaConfig]):
LLAMA = b'''
from .modeling_utils import register_auto_model

@register_auto_model("LlamaForCausalLM")
class LlamaForCausalLM:
    pass

@register_auto_model("Llama4ForConditionalGeneration")
class Llama4ForConditionalGeneration:
    pass
'''
# A call form and a module that registers nothing.
QWEN3 = b'''
from . import modeling_utils

class Qwen3ForCausalLM:
    pass

modeling_utils.register_auto_model("Qwen3ForCausalLM")(Qwen3ForCausalLM)
'''
UTILS = b"def register_auto_model(name):\n    return lambda cls: cls\n"


def test_registered_names() -> None:
    assert registered_names(LLAMA, "modeling_llama.py") == [
        "LlamaForCausalLM", "Llama4ForConditionalGeneration"]
    assert registered_names(QWEN3, "modeling_qwen3.py") == ["Qwen3ForCausalLM"]
    assert registered_names(UTILS, "modeling_utils.py") == []
    with pytest.raises(SystemExit, match="m.py:3: register_auto_model of a name"):
        registered_names(b"name = 'X'\n\nregister_auto_model(name)(object)\n", "m.py")


def _commit(repo: Path, files: dict[str, bytes], tag: str) -> None:
    models = repo / "tensorrt_llm" / "_torch" / "models"
    models.mkdir(parents=True, exist_ok=True)
    for old in models.glob("*.py"):
        old.unlink()
    for name, text in files.items():
        (models / name).write_bytes(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
           "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"]
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", tag, "--allow-empty"], check=True, capture_output=True)
    subprocess.run([*git, "tag", tag], check=True, capture_output=True)


def test_release_tags_in_order(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _commit(tmp_path, {"modeling_llama.py": LLAMA}, "v0.19.0")  # below the oldest: not read
    _commit(tmp_path, {"modeling_llama.py": LLAMA}, "v1.0.0")
    _commit(tmp_path, {"modeling_llama.py": LLAMA, "modeling_qwen3.py": QWEN3}, "v1.1.0rc2")
    _commit(tmp_path, {"modeling_qwen3.py": QWEN3}, "v1.1.0rc10")  # rc10 after rc2
    _commit(tmp_path, {"modeling_qwen3.py": QWEN3}, "v1.1.0")
    _commit(tmp_path, {"modeling_qwen3.py": QWEN3}, "v1.2.0rc0")  # above the newest: not read
    data = arrivals(tmp_path / ".git", "0.20.0", "1.1.0")
    assert data["releases"] == ["1.0.0", "1.1.0rc2", "1.1.0rc10", "1.1.0"]
    assert data["counts"] == {"1.0.0": 2, "1.1.0rc2": 3, "1.1.0rc10": 1, "1.1.0": 1}
    assert data["architectures"] == {
        "Llama4ForConditionalGeneration": {"served": [["1.0.0", "1.1.0rc2"]]},
        "LlamaForCausalLM": {"served": [["1.0.0", "1.1.0rc2"]]},
        "Qwen3ForCausalLM": {"served": [["1.1.0rc2", None]]},
    }
