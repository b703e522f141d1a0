"""UbiquitousLearning/mllm's export keys (blind batch 15, issue 26): max_cache_length (its QNN
KV length), linear_impl_type and linear_block_size (its kernels) sit beside the standard fields
of the Qwen2 / Qwen3 / Qwen3-MoE / Llama configs it ships. No code under vLLM 0.32's vllm/ reads
any of them (nor a transformers 5.19 config class), so vLLM sizes the cache from the standard
fields, and so does kvplan. Files: tests/data/blind26/real (byte-exact git blobs of mllm's
examples/*/config_*.json). Two files of the batch vLLM 0.32 does not start on are refused in
one line since: a float rope_scaling (mllm's Qwen3-30B-A3B edit) and an mrope_section that is not
half the rotary width (KsanaLLM's tiny Qwen2-VL test config).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app

REAL = Path(__file__).parent / "data" / "blind26" / "real"


def estimate(name: str | Path) -> tuple[int, dict, str]:
    file = name if isinstance(name, Path) else REAL / f"{name}.json"
    result = CliRunner().invoke(app, ["estimate", str(file), "-f", "json", "-c", "4096"])
    return result.exit_code, json.loads(result.stdout) if result.exit_code == 0 else {}, \
        result.stderr


@pytest.mark.parametrize(("name", "expected"), [
    # Qwen3-1.7B: 28 layers x (K + V) x 8 KV heads x head_dim 128 x 2 B (bf16).
    ("qwen3-1.7b-qnn-mllm", 28 * 2 * 8 * 128 * 2),  # 114,688
    # A Qwen2.5-1.5B edit: 28 layers x 2 x 2 KV heads x 128 x 2 B.
    ("qwen2-1.5b-qnn-mllm", 28 * 2 * 2 * 128 * 2),  # 28,672
])
def test_mllm_keys_leave_the_standard_cache(name: str, expected: int) -> None:
    code, plan, err = estimate(name)
    assert code == 0, err
    assert plan["bytes_per_token"] == expected and plan["kv_dtype"] == "bf16"


def test_without_model_type_still_one_line() -> None:
    # mllm's Qwen3-4B edit states no model_type: transformers cannot pick a config class.
    code, _, err = estimate("qwen3-4b-qnn-mllm")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "model_type" in lines[0], err


def test_a_float_rope_scaling_is_refused_as_vllm_refuses_it(tmp_path: Path) -> None:
    # mllm's Qwen3-30B-A3B edit states rope_scaling 1.0: transformers 5.19's Qwen3MoeConfig
    # raises (rope_parameters must be a mapping or null), and vLLM 0.32's CPU build stopped on it
    # (tests/data/blind26/shrunk/qwen3-30b-a3b-gguf-mllm/results.json).
    code, _, err = estimate("qwen3-30b-a3b-gguf-mllm")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "rope_scaling: 1.0" in lines[0], err
    # With null there, the standard fields: 48 layers x 2 x 4 KV heads x 128 x 2 B = 98,304.
    data = json.loads((REAL / "qwen3-30b-a3b-gguf-mllm.json").read_text())
    data["rope_scaling"] = None
    file = tmp_path / "config.json"
    file.write_text(json.dumps(data))
    code, plan, err = estimate(file)
    assert code == 0 and plan["bytes_per_token"] == 48 * 2 * 4 * 128 * 2, err


def test_an_mrope_section_vllm_cannot_build_is_refused(tmp_path: Path) -> None:
    # KsanaLLM's tiny Qwen2-VL test config (blind batch 15): hidden 128 / 2 heads = 64-wide
    # heads, mrope_section [16, 24, 24] sums to 64, not 64 / 2: vLLM 0.32's mrope.py:364
    # assertion stopped its CPU build (results.json), as it would on any platform.
    tiny = REAL / "qwen2-vl-tiny-ksanallm.json"
    code, _, err = estimate(tiny)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "rope_scaling.mrope_section" in lines[0], err
    # Halved to [8, 12, 12] (sum 32): 2 layers x 2 x 2 KV heads x 64 x 2 B (fp16) = 1,024.
    data = json.loads(tiny.read_text())
    data["rope_scaling"]["mrope_section"] = [8, 12, 12]
    file = tmp_path / "config.json"
    file.write_text(json.dumps(data))
    code, plan, err = estimate(file)
    assert code == 0 and plan["bytes_per_token"] == 2 * 2 * 2 * 64 * 2, err
