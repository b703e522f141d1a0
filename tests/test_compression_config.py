"""compressed-tensors' older key `compression_config` (blind batch 15, issue 26).

vLLM 0.32 reads it where config.json has no quantization_config: the method and its groups
(transformers_utils/model_arch_config_convertor.py:263-267 _normalize_quantization_config,
model_loader/weight_utils.py:240-242 get_quant_config), and a kv_cache_scheme turns the default
--kv-cache-dtype auto into fp8 (model_executor/layers/attention/attention.py:287-291). The files
are llm-compressor's TinyLlama-1.1B-Chat FP8 test outputs (tests/data/blind26/real, byte-exact
git blobs): 22 layers, 4 KV heads, head 2048 / 32 = 64, so 22 x 2 x 4 x 64 = 11,264 elements a
token: 22,528 B at bf16, 11,264 B at fp8.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kvplan.cli import app

REAL = Path(__file__).parent / "data" / "blind26" / "real"
FP8 = REAL / "tinyllama-1.1b-chat-fp8-llmcompressor.json"
FP8_KV = REAL / "tinyllama-1.1b-chat-fp8-kv-llmcompressor.json"


def estimate(path: Path, *args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json", "-c", "2048", *args])
    return result.exit_code, json.loads(result.stdout) if result.exit_code == 0 else {}, \
        result.stderr


def test_compression_config_is_read_as_the_quantization_config() -> None:
    code, plan, err = estimate(FP8)
    assert code == 0, err
    assert plan["kv_dtype"] == "bf16" and plan["bytes_per_token"] == 22 * 2 * 4 * 64 * 2
    assert "compressed-tensors (fp8 per-tensor)" in err


def test_its_kv_cache_scheme_sets_vllms_auto_dtype() -> None:
    code, plan, err = estimate(FP8_KV)
    assert code == 0, err
    assert plan["kv_dtype"] == "fp8" and plan["bytes_per_token"] == 11_264
    # --kv-dtype overrides it, as vLLM's explicit --kv-cache-dtype does.
    code, plan, _ = estimate(FP8_KV, "--kv-dtype", "bf16")
    assert code == 0 and plan["bytes_per_token"] == 22_528


def test_beside_a_quantization_config_it_stays_refused(tmp_path: Path) -> None:
    # vLLM takes quantization_config then and never reads compression_config: kvplan does not
    # guess which of the two the weights were saved with.
    data = json.loads(FP8.read_text())
    data["quantization_config"] = data["compression_config"]
    file = tmp_path / "config.json"
    file.write_text(json.dumps(data))
    code, _, err = estimate(file)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "compression_config" in lines[0], err
