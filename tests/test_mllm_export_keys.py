"""UbiquitousLearning/mllm's export keys (blind batch 15, issue 26): max_cache_length (its QNN
KV length), linear_impl_type and linear_block_size (its kernels) sit beside the standard fields
of the Qwen2 / Qwen3 / Qwen3-MoE / Llama configs it ships. No code under vLLM 0.32's vllm/ reads
any of them (nor a transformers 5.19 config class), so vLLM sizes the cache from the standard
fields, and so does kvplan. Files: tests/data/blind26/real (byte-exact git blobs of mllm's
examples/*/config_*.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app

REAL = Path(__file__).parent / "data" / "blind26" / "real"


def estimate(name: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(app, ["estimate", str(REAL / f"{name}.json"), "-f", "json",
                                      "-c", "4096"])
    return result.exit_code, json.loads(result.stdout) if result.exit_code == 0 else {}, \
        result.stderr


@pytest.mark.parametrize(("name", "expected"), [
    # Qwen3-1.7B: 28 layers x (K + V) x 8 KV heads x head_dim 128 x 2 B (bf16).
    ("qwen3-1.7b-qnn-mllm", 28 * 2 * 8 * 128 * 2),  # 114,688
    # Qwen3-30B-A3B: 48 layers x 2 x 4 KV heads x 128 x 2 B.
    ("qwen3-30b-a3b-gguf-mllm", 48 * 2 * 4 * 128 * 2),  # 98,304
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
