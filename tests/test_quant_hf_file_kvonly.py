"""Two hf_quant_config.json cases vLLM 0.32 answers differently from a plain ModelOpt export
(issue 26: no wrong number with exit 0). Folders under tests/data/hf_quant (SOURCES.md: both
derived from the verbatim nvidia/Llama-3.1-70B-Instruct-FP8 pair); what vLLM 0.32's own start-up
code makes of each is tests/data/hf_quant/vllm.json (tests/benches/hf_quant_kv_dtype_run.py).

- kv-only-modelopt: ``quantization.quant_algo: null`` beside ``kv_cache_quant_algo: FP8`` (a
  ModelOpt export of the KV cache alone). vLLM: quant_method "" (model_arch_config_convertor.py
  _normalize_quantization_config), no quantization, --kv-cache-dtype auto stays the model dtype
  (utils/torch_utils.py get_kv_cache_quant_algo_string reads modelopt* only); SGLang 0.5.4+
  likewise (configs/model_config.py _parse_modelopt_quant_config returns None), 0.5.3 and older
  refuse it at start-up (ModelOptFp8Config.from_config: "Cannot find 'quant_algo'");
  TensorRT-LLM reads kv_cache_quant_algo whatever quant_algo is (_torch/model_config.py
  load_modelopt_quant_config): fp8.
- text-config-and-file: Kimi-K2.5's config.json (compressed-tensors in text_config) with the
  ModelOpt FP8 file beside it: vLLM takes the file (quantization modelopt, KV fp8_e4m3), not the
  text_config the weights were saved with; kvplan refuses to guess, in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kvplan.cli import app

HF_QUANT = Path(__file__).parent / "data" / "hf_quant"
KV_ONLY = str(HF_QUANT / "kv-only-modelopt")
TEXT_AND_FILE = str(HF_QUANT / "text-config-and-file")
VLLM = json.loads((HF_QUANT / "vllm.json").read_text())
# Llama-3.1-70B: 80 layers x 2 (K, V) x 8 KV heads x 128 = 163,840 elements per token.
BF16_BYTES, FP8_BYTES = 163840 * 2, 163840


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def estimate(*args: str) -> tuple[dict, str]:
    code, out, err = run("estimate", KV_ONLY, "-c", "4096", "--gpu", "H100", "-f", "json",
                         *args)
    assert code == 0, err
    return json.loads(out), err


def test_kv_only_export_runs_unquantized_in_vllm() -> None:
    entry = VLLM["kv-only-modelopt"]
    assert (entry["quantization"], entry["quant_method"]) == (None, "")
    assert entry["kv_cache_dtype_auto"] == "auto"  # the model dtype, bfloat16
    plan, err = estimate()
    assert (plan["kv_dtype"], plan["bytes_per_token"]) == ("bf16", BF16_BYTES)
    # Weights bf16, as vLLM loads them unquantized (TP 1):
    #   embed_tokens + lm_head: 2 x 128,256 x 8,192 x 2 = 4,202,692,608
    #   attention: 80 x (2 x 8,192 x 8,192 + 2 x 1,024 x 8,192) x 2 = 24,159,191,040
    #   MLP: 80 x 3 x 8,192 x 28,672 x 2 = 112,742,891,520
    #   norms: (80 x 2 + 1) x 8,192 x 2 = 2,637,824; rope cache 131,072 x 128 x 2 = 33,554,432
    # = 141,140,967,424 B; and vLLM's four float32 scale buffers in each attention layer
    # (attention.py:133-139): 80 x 16 = 1,280 B, 141,140,968,704 B.
    assert plan["weights_bytes"] == 141140967424 + 80 * 16
    assert "quant_algo null: weights not quantized" in err
    # SGLang 0.5.4+ agrees; 0.5.3 refuses the file at start-up.
    plan, _ = estimate("--engine", "sglang")
    assert (plan["kv_dtype"], plan["bytes_per_token"]) == ("bf16", BF16_BYTES)
    code, _, err = run("estimate", KV_ONLY, "-c", "4096", "--gpu", "H100", "--engine", "sglang",
                       "--engine-version", "0.5.3")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "0.5.4 or newer" in err


def test_kv_only_export_is_fp8_in_trtllm() -> None:
    plan, err = estimate("--engine", "trtllm")
    assert (plan["kv_dtype"], plan["bytes_per_token"]) == ("fp8", FP8_BYTES)
    assert "quantization.kv_cache_quant_algo declares it" in err
    assert plan["weights_bytes"] == 141140967424  # quant_algo null: bf16 weights there too
    # Its kv_cache_config.dtype cannot name bf16 for it: the launch refuses a bf16 plan.
    code, _, err = run("plan", KV_ONLY, "--engine", "trtllm", "--gpu", "H100", "--context",
                       "4096", "--concurrency", "4", "--kv-dtype", "bf16")
    assert code == 2 and "give --kv-dtype fp8" in err


def test_text_config_quantization_beside_the_file_is_refused() -> None:
    entry = VLLM["text-config-and-file"]
    assert (entry["quantization"], entry["kv_cache_dtype_auto"]) == ("modelopt", "fp8_e4m3")
    code, _, err = run("estimate", TEXT_AND_FILE, "-c", "4096")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "text_config.quantization_config" in err and "hf_quant_config.json" in err
