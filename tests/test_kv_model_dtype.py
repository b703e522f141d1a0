"""The KV dtype's name for a checkpoint that is not bfloat16: each engine's --kv-cache-dtype auto
is its model dtype (EngineRules.model_dtype), the same 2 B as bf16 but named as the engine runs
it, so that JSON, tables and launch lines say what the server says.

Read (see each engine's kv_dtype.py for the lines):
- vLLM 0.32, config/model.py _get_and_verify_dtype / _resolve_auto_dtype: config.json's dtype,
  kept where the platform supports it (CUDA SM 8.0+: bfloat16, float16, float32), float32
  downcast to the first (bfloat16); float16 falls back to bfloat16 for the model types
  _FLOAT16_NOT_SUPPORTED_MODELS lists (gemma2, gemma3, gemma3_text, glm4). The cache's auto is
  that dtype (utils/torch_utils.py kv_cache_dtype_str_to_dtype: ``model_config.dtype``).
- SGLang, configs/model_config.py _get_and_verify_dtype (0.4.5-0.5.23): float16 and bfloat16
  kept, float32 (or none) -> float16, but bfloat16 for a model_type starting with "gemma";
  server_args.py forces bfloat16 for GptOssForCausalLM in MXFP4; model_runner.py
  configure_kv_cache_dtype: auto -> ``self.dtype``.
- TensorRT-LLM, _torch/pyexecutor/_util.py: ``str_dtype_to_binding(torch_dtype_to_str(
  model_engine.dtype))`` without an fp8 / nvfp4 KV cache; _torch/model_config.py torch_dtype:
  ``pretrained_config.torch_dtype or torch.bfloat16``.

Configs (verbatim published config.json files):
- meta-llama/Llama-2-7b-hf (tests/data/configs/llama-2-7b.json): torch_dtype float16, 32 layers,
  32 KV heads, head_dim 4096 / 32 = 128: 2 (K, V) x 32 x 32 x 128 x 2 B = 524,288 B per token.
- a Gemma-3-270M fine-tune (tests/data/blind26/real/gemma3-270m-leetcode.json): gemma3_text,
  torch_dtype float16, 18 layers, 1 KV head of 256: 2 x 18 x 1 x 256 x 2 B = 18,432 B per token.
- google/gemma-2-9b (tests/data/configs/gemma-2-9b.json): gemma2, float32.
- chavinlo/alpaca-native (tests/data/configs/llama-7b-alpaca-native.json): llama, float32.
- openai/gpt-oss-20b (tests/data/configs/gpt-oss-20b.json): no torch_dtype, quant_method mxfp4.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.kv_dtype import planned_kv_dtypes, run_kv_dtype
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.resolve import load_spec

DATA = Path(__file__).parent / "data"
LLAMA2 = str(DATA / "configs" / "llama-2-7b.json")
GEMMA3_FP16 = str(DATA / "blind26" / "real" / "gemma3-270m-leetcode.json")
GEMMA2_FP32 = str(DATA / "configs" / "gemma-2-9b.json")
ALPACA_FP32 = str(DATA / "configs" / "llama-7b-alpaca-native.json")
GPT_OSS = str(DATA / "configs" / "gpt-oss-20b.json")
LLAMA2_BYTES = 2 * 32 * 32 * 128 * 2  # 524,288 (above)
GEMMA3_BYTES = 2 * 18 * 1 * 256 * 2  # 18,432 (above)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def first(out: str) -> dict:
    answer = json.loads(out)
    return answer[0] if isinstance(answer, list) else answer


@pytest.mark.parametrize(("path", "engine", "expected"), [
    (LLAMA2, "vllm", "fp16"), (LLAMA2, "sglang", "fp16"), (LLAMA2, "trtllm", "fp16"),
    # vLLM's _FLOAT16_NOT_SUPPORTED_MODELS: gemma3_text in float16 runs bfloat16; SGLang and
    # TensorRT-LLM keep float16.
    (GEMMA3_FP16, "vllm", "bf16"), (GEMMA3_FP16, "sglang", "fp16"),
    (GEMMA3_FP16, "trtllm", "fp16"),
    # float32: vLLM downcasts to bfloat16; SGLang to float16, but bfloat16 for Gemma.
    (ALPACA_FP32, "vllm", "bf16"), (ALPACA_FP32, "sglang", "fp16"),
    (GEMMA2_FP32, "vllm", "bf16"), (GEMMA2_FP32, "sglang", "bf16"),
    # No torch_dtype (float32), but SGLang's server_args.py forces bfloat16 for GPT-OSS in MXFP4.
    (GPT_OSS, "vllm", "bf16"), (GPT_OSS, "sglang", "bf16"),
])
def test_auto_is_the_model_dtype(path: str, engine: str, expected: str) -> None:
    spec = load_spec(path)
    eng = Engine(engine)
    assert eng.rules.model_dtype(spec) == expected
    assert run_kv_dtype(eng, spec) == (expected, None)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_estimate_names_fp16_bytes_unchanged(engine: str) -> None:
    for gpu in ((), ("--gpu", "H100")):
        code, out, err = run("estimate", LLAMA2, "-c", "4096", "-f", "json", "--engine",
                             engine, *gpu)
        assert code == 0, err
        plan = first(out)
        assert (plan["kv_dtype"], plan["bytes_per_token"]) == ("fp16", LLAMA2_BYTES)
    code, out, err = run("estimate", GEMMA3_FP16, "-c", "4096", "-f", "json", "--engine", engine)
    assert code == 0, err
    plan = first(out)
    assert plan["bytes_per_token"] == GEMMA3_BYTES
    assert plan["kv_dtype"] == ("bf16" if engine == "vllm" else "fp16")


def test_plan_searches_the_model_dtype_and_names_no_flag() -> None:
    spec = load_spec(LLAMA2)
    h100 = get_gpu("H100")
    assert planned_kv_dtypes(Engine("vllm"), spec, h100) == ("fp16", "fp8")
    assert planned_kv_dtypes(Engine("vllm"), load_spec(GEMMA3_FP16), h100) == ("bf16", "fp8")
    for engine in ("vllm", "sglang", "trtllm"):
        code, out, err = run("plan", LLAMA2, "--gpu", "H100", "-c", "4096", "-n", "1", "-f",
                             "json", "--engine", engine)
        assert code == 0, err
        plan = first(out)
        # The model's path left out: a checkout's folder name may hold "dtype".
        launch = (plan["command"] + json.dumps(plan["launch"].get("files", {}))).replace(
            str(Path(LLAMA2).parent), "")
        assert plan["kv_dtype"] == "fp16" and "dtype" not in launch.replace("kv_dtype", "")


def test_a_16_bit_plan_other_than_auto_names_its_dtype_or_is_refused() -> None:
    def plan(engine: str, dtype: str, *extra: str) -> tuple[int, dict | None, str]:
        code, out, err = run("plan", LLAMA2, "--gpu", "H100", "-c", "4096", "-n", "1", "-f",
                             "json", "--engine", engine, "--kv-dtype", dtype, *extra)
        return code, first(out) if code == 0 else None, err

    # vLLM: config/cache.py CacheDType has bfloat16; auto would run float16 here.
    code, p, err = plan("vllm", "bf16")
    assert code == 0 and p is not None, err
    assert "--kv-cache-dtype bfloat16 " in p["command"]
    # SGLang: bfloat16 is a --kv-cache-dtype choice from 0.5.4 (server_args.py), not before.
    code, p, err = plan("sglang", "bf16")
    assert code == 0 and p is not None, err
    assert "--kv-cache-dtype bfloat16 " in p["command"]
    code, _, err = plan("sglang", "bf16", "--engine-version", "0.5.3")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "auto runs the model dtype (fp16" in err and "give --kv-dtype fp16 or fp8" in err
    # TensorRT-LLM: kv_cache_config.dtype has no 16-bit value: refused in one line.
    code, _, err = plan("trtllm", "bf16")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "cannot run a bf16 KV cache: give --kv-dtype fp16" in err


@pytest.mark.parametrize("command", ["estimate", "plan"])
def test_trtllm_16_bit_rule_is_one_for_estimate_and_plan(command: str) -> None:
    # Issue 26: estimate answered --engine trtllm --kv-dtype bf16 on Llama-2-7B (torch_dtype
    # float16), which plan's launch refused. One rule (kvplan.engines.trtllm.kv_dtype
    # check_trtllm_kv_dtype, through trtllm_given_kv_dtype) for both: kv_cache_config.dtype takes
    # auto (here float16: _torch/model_config.py torch_dtype = pretrained_config.torch_dtype),
    # fp8 or nvfp4 (_VALID_KV_CACHE_DTYPES), so bf16 and fp32 are refused in the same line.
    extra = ("--gpu", "H100", "-n", "1") if command == "plan" else ()
    for asked in ("bf16", "fp32"):
        code, _, err = run(command, LLAMA2, "-c", "4096", "--engine", "trtllm", "--kv-dtype",
                           asked, *extra)
        assert code == 2 and err.strip().splitlines() == [
            "kvplan: error: --engine trtllm: kv_cache_config.dtype takes auto (the model dtype, "
            f"here fp16), fp8 or nvfp4, so it cannot run a {asked} KV cache: give --kv-dtype "
            "fp16"], err
    # What it runs: fp16 and fp8 (estimate: 2 x 32 x 32 x 128 x 2 B = 524,288 B per token
    # at fp16, half at fp8).
    for asked, per_token in (("fp16", 524_288), ("fp8", 262_144)):
        code, out, err = run(command, LLAMA2, "-c", "4096", "--engine", "trtllm", "--kv-dtype",
                             asked, "-f", "json", *extra)
        assert code == 0, err
        answer = first(out)
        assert answer["kv_dtype"] == asked
        assert answer.get("bytes_per_token", per_token) == per_token


def test_sglang_flag_for_a_float16_model() -> None:
    from kvplan.engines.sglang.kv_dtype import sglang_kv_dtype_flag as flag

    assert flag("fp16", None, "0.5.14", "fp16") == ()
    assert flag("bf16", None, "0.5.14", "fp16") == ("--kv-cache-dtype", "bfloat16")
    with pytest.raises(InputError, match="cannot name bf16"):
        flag("bf16", None, "0.5.3", "fp16")
    # A bf16 checkpoint: SGLang's --kv-cache-dtype has no float16 choice.
    with pytest.raises(InputError, match="cannot name fp16"):
        flag("fp16", None, "0.5.14", "bf16")


def test_vllm_launch_refuses_what_cache_dtype_cannot_name() -> None:
    code, _, err = run("plan", LLAMA2, "--gpu", "H100", "-c", "4096", "-n", "1",
                       "--kv-dtype", "fp32")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--kv-cache-dtype cannot name it" in err


def test_check_compares_a_stated_dtype_with_what_the_servers_auto_runs() -> None:
    """A vLLM server's cache_config_info says cache_dtype auto (tests/data/servers, vLLM 0.10.0
    serving GLM-4.5): for Llama-2-7B (float16) that runs fp16 (above), so a stated --kv-dtype
    fp16 agrees with it and bf16 does not; it was read as bf16 before."""
    from kvplan.analysis.check import _auto_resolved, used_settings
    from tests.test_check import VLLM, page

    live = VLLM.read(page("vllm-0.10.0-glm-4.5"))
    assert live.settings["kv_dtype"] == "auto"
    spec = load_spec(LLAMA2)
    for stated, differs in (("fp16", False), ("bf16", True)):
        resolved = _auto_resolved(spec, live, {"kv_dtype": stated}, {"gpu": "H100"})
        assert resolved.settings["kv_dtype"] == "fp16"
        _, rows = used_settings(resolved, {"kv_dtype": stated})
        (row,) = [r for r in rows if r.name == "kv_dtype"]
        assert row.differs is differs and row.server == "cache_dtype auto"
