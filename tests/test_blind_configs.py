"""Issue 26's blind check (tests/benches/blind_configs.py, examples/blind-configs.md) and the rule
it led to: a checkpoint's declared KV-cache dtype under vLLM's default --kv-cache-dtype auto."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.model.quant_config import declared_kv_cache_dtype

BLIND = Path(__file__).parent / "data" / "blind26"
KIMI_NVFP4 = BLIND / "real" / "kimi-k2.6-nvfp4.json"


def estimate(*args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(app, ["estimate", *args, "-f", "json"])
    return result.exit_code, (json.loads(result.stdout) if result.exit_code == 0 else {}), \
        result.stderr


def test_modelopt_kv_cache_scheme_sets_the_kv_dtype_vllm_runs() -> None:
    # nvidia/Kimi-K2.6-NVFP4 (ai-dynamo/aiconfigurator model_configs, verbatim): quant_method
    # modelopt, kv_cache_scheme {dynamic: false, num_bits: 8, type: float}. vLLM 0.32,
    # engine/arg_utils.py: resolve_kv_cache_dtype_string('auto') -> utils/torch_utils.py
    # get_kv_cache_quant_algo_string -> 'fp8_e4m3' (the function called on this file says so).
    # Its text_config is DeepSeek-V3's MLA: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64)
    # = 576 elements per token per layer; at 1 B (fp8): 61 x 576 = 35,136 B per token
    # (bf16: 70,272).
    code, plan, err = estimate(str(KIMI_NVFP4), "-c", "4096")
    assert code == 0 and plan["kv_dtype"] == "fp8" and plan["bytes_per_token"] == 35136
    assert "quantization_config.kv_cache_scheme declares it" in err
    # vLLM's own spelling of the default, --kv-cache-dtype auto, means the same (it was read as
    # bf16 before: a vLLM command line pasted into kvplan got half the capacity, exit 0).
    code, plan, _ = estimate(str(KIMI_NVFP4), "-c", "4096", "--kv-cache-dtype", "auto")
    assert code == 0 and plan["kv_dtype"] == "fp8" and plan["bytes_per_token"] == 35136
    # An explicit --kv-dtype wins, as in vLLM (--kv-cache-dtype bfloat16).
    code, plan, _ = estimate(str(KIMI_NVFP4), "-c", "4096", "--kv-dtype", "bf16")
    assert code == 0 and plan["kv_dtype"] == "bf16" and plan["bytes_per_token"] == 70272


def test_engines_that_do_not_model_it_refuse_in_one_line() -> None:
    code, _, err = estimate(str(KIMI_NVFP4), "-c", "4096", "--engine", "sglang")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "quantization_config.kv_cache_scheme" in err and "--kv-dtype" in err
    code, plan, _ = estimate(str(KIMI_NVFP4), "-c", "4096", "--engine", "sglang", "--kv-dtype",
                             "fp8")
    assert code == 0 and plan["kv_dtype"] == "fp8"


def test_declared_kv_cache_dtype_follows_vllm() -> None:
    # utils/torch_utils.py get_kv_cache_quant_algo_string: ModelOpt only; kv_cache_scheme before
    # kv_cache_quant_algo, under "quantization" or at the top; unknown -> auto (None here).
    assert declared_kv_cache_dtype({"quant_method": "modelopt", "quantization": {
        "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}) == (
        "quantization_config.quantization.kv_cache_quant_algo", "fp8")
    assert declared_kv_cache_dtype({"quant_method": "modelopt_fp4", "kv_cache_quant_algo": "NVFP4"}
                                   ) == ("quantization_config.kv_cache_quant_algo", "nvfp4")
    assert declared_kv_cache_dtype({"quant_method": "modelopt", "kv_cache_quant_algo": "int8"}) \
        is None
    assert declared_kv_cache_dtype({"quant_method": "modelopt", "kv_cache_scheme": {
        "dynamic": True, "num_bits": 8, "type": "float"}}) is None
    # compressed-tensors: layers/attention/attention.py, auto -> fp8 when kv_cache_scheme is set.
    assert declared_kv_cache_dtype({"quant_method": "compressed-tensors", "kv_cache_scheme": {
        "num_bits": 8, "type": "float", "strategy": "tensor"}}) == (
        "quantization_config.kv_cache_scheme", "fp8")
    assert declared_kv_cache_dtype({"quant_method": "compressed-tensors",
                                    "kv_cache_scheme": None}) is None
    assert declared_kv_cache_dtype({"quant_method": "fp8", "kv_cache_scheme": {}}) is None
    assert declared_kv_cache_dtype(None) is None


# The recorded blind check: opt-in (it needs the oracle results recorded under tests/data/blind26,
# not vLLM itself), and able to fail: kvplan's side is computed now.
RESULTS = sorted(BLIND.glob("shrunk/*/results.json"))


@pytest.mark.skipif(not RESULTS, reason="opt-in: no recorded oracle results in tests/data/blind26")
def test_no_blind_config_gets_a_wrong_number_with_exit_0() -> None:
    from tests.benches.blind_configs import main, rows

    table = rows()
    assert len(table) >= 40
    wrong = [(r.id, r.kvplan, r.vllm, r.note) for r in table
             if r.verdict.startswith("WRONG") or r.verdict.startswith("FAILED")]
    assert wrong == []
    # A refusal is one line naming what blocks the answer.
    assert all(r.refusal.startswith("kvplan: error: ") for r in table if r.verdict == "refused")
    # examples/blind-configs.md is current (python -m tests.benches.blind_configs).
    page = Path(__file__).parents[1] / "examples" / "blind-configs.md"
    assert main(table) == page.read_text()


def test_simulate_takes_the_same_kv_dtype_as_estimate() -> None:
    # nvidia/Gemma-4-31B-IT-NVFP4 declares an fp8 KV cache (ModelOpt kv_cache_scheme): with no
    # --kv-dtype, `simulate` sizes its pool as `estimate` does (fp8), and --kv-dtype bf16 halves it.
    config = str(BLIND / "real" / "gemma-4-31b-it-nvfp4.json")
    args = ["simulate", config, "--gpu", "B200", "--num-requests", "4", "--input-len", "512",
            "--output-len", "16", "--rate", "1", "-f", "json"]
    runs = {}
    for extra in ((), ("--kv-dtype", "fp8"), ("--kv-dtype", "bf16"), ("--kv-dtype", "auto")):
        result = CliRunner().invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.stderr
        runs[extra] = json.loads(result.stdout)
    default, fp8, bf16, auto = runs.values()
    assert default == auto
    assert default["kv_dtype"] == fp8["kv_dtype"] == "fp8" and bf16["kv_dtype"] == "bf16"
    assert default["num_blocks"] == fp8["num_blocks"] == 2 * bf16["num_blocks"]
    code, plan, _ = estimate(config, "-c", "4096", "--gpu", "B200")
    assert code == 0 and plan["kv_dtype"] == "fp8"


def test_a_16_bit_plan_of_a_checkpoint_declaring_fp8_kv_names_its_dtype() -> None:
    # vLLM's default --kv-cache-dtype auto takes the checkpoint's declared fp8 KV cache, so a plan
    # sized at 16 bits must say --kv-cache-dtype bfloat16 (vllm/config/cache.py CacheDType);
    # a checkpoint that declares none keeps the default, and an fp8 plan says fp8.
    def command(model: str, dtype: str) -> str:
        result = CliRunner().invoke(app, ["plan", model, "--gpu", "B200", "-c", "8192",
                                          "--concurrency", "64", "--kv-dtype", dtype,
                                          "-f", "json"])
        assert result.exit_code == 0, result.stderr
        plan = json.loads(result.stdout)
        return (plan[0] if isinstance(plan, list) else plan)["command"]

    gemma = str(BLIND / "real" / "gemma-4-31b-it-nvfp4.json")
    assert "--kv-cache-dtype bfloat16" in command(gemma, "bf16")
    assert "--kv-cache-dtype fp8" in command(gemma, "fp8")
    assert "--kv-cache-dtype" not in command("llama-3.1-8b", "bf16")
