"""Two dtype readings (issue 26): TensorRT-LLM on a float32 checkpoint, and a multimodal
wrapper whose outer dtype differs from its text part's.

TensorRT-LLM (kvplan.engines.trtllm.kv_dtype, read in NVIDIA/TensorRT-LLM tensorrt_llm/_torch/:
model_config.py ModelConfig.torch_dtype ``pretrained_config.torch_dtype or torch.bfloat16``,
pyexecutor/model_engine.py ``self.dtype = self.model.config.torch_dtype``, _util.py KV dtype
``str_dtype_to_binding(torch_dtype_to_str(model_engine.dtype))``, resource_manager.py
get_cache_size_per_token ``mem_per_token *= 2`` vs get_cache_bytes_per_token's DataType.FLOAT):
a float32 checkpoint keeps float32 weights and a float32 KV cache, whose pool is sized by a
2-B estimate then clamped by free memory at 4 B: refused. An absent torch_dtype is bfloat16.

vLLM 0.32 (transformers_utils/model_arch_config_convertor.py get_torch_dtype): the wrapper's
``hf_config.dtype`` first, then ``get_text_config().dtype``; SGLang reads hf_text_config's.
transformers 5.19 keeps both (LlavaOnevisionConfig: dtype float16, text_config bfloat16).

Configs (verbatim published config.json files, tests/data/configs):
- chavinlo/alpaca-native (llama-7b-alpaca-native.json): torch_dtype float32, 32 layers, 32 KV
  heads (num_key_value_heads absent: = 32 heads), head_dim 4096 / 32 = 128. vLLM (bfloat16) and
  SGLang (float16) both 2 B: 2 (K, V) x 32 x 32 x 128 x 2 = 524,288 B per token; TensorRT-LLM's
  float32 row would be 1,048,576 B.
- openai/gpt-oss-20b (gpt-oss-20b.json): no torch_dtype; 24 layers, 8 KV heads of 64, every
  layer full attention in TensorRT-LLM's pool: 2 x 24 x 8 x 64 x 2 = 49,152 B per token.
- lmms-lab/llava-onevision-qwen2-7b-ov (mm/llava-onevision-qwen2-7b-ov.json): torch_dtype
  float16 outside, text_config (qwen2) bfloat16, 28 layers, 4 KV heads, head_dim 3584 / 28 =
  128: 2 x 28 x 4 x 128 x 2 = 57,344 B per token; vLLM runs it float16 (its log: dtype=
  torch.float16, tests/data/oracle/llava-onevision-qwen2-7b-ov), SGLang bfloat16.
- llava-v1.6-mistral-7b-3x3 (mm/): float32 outside, bfloat16 text: vLLM downcasts the outer
  float32 to bfloat16 (its log: dtype=torch.bfloat16); TensorRT-LLM refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.vllm.kv_dtype import vllm_model_dtype
from kvplan.sources.resolve import load_spec
from tests.test_sglang_arrivals import renamed

DATA = Path(__file__).parent / "data"
ALPACA_FP32 = str(DATA / "configs" / "llama-7b-alpaca-native.json")
GEMMA2_FP32 = str(DATA / "configs" / "gemma-2-9b.json")
GPT_OSS = str(DATA / "configs" / "gpt-oss-20b.json")
LLAVA_OV = str(DATA / "configs" / "mm" / "llava-onevision-qwen2-7b-ov.json")
LLAVA_NEXT_FP16 = str(DATA / "configs" / "mm" / "llava-v1.6-mistral-7b.json")
LLAVA_NEXT_FP32 = str(DATA / "configs" / "mm" / "llava-v1.6-mistral-7b-3x3.json")
ALPACA_BYTES = 2 * 32 * 32 * 128 * 2  # 524,288 (above)
GPT_OSS_BYTES = 2 * 24 * 8 * 64 * 2  # 49,152 (above)
LLAVA_OV_BYTES = 2 * 28 * 4 * 128 * 2  # 57,344 (above)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("path", [ALPACA_FP32, GEMMA2_FP32, LLAVA_NEXT_FP32])
@pytest.mark.parametrize("kv", [(), ("--kv-dtype", "fp8"), ("--kv-dtype", "bf16")])
def test_trtllm_refuses_a_float32_checkpoint(path: str, kv: tuple[str, ...]) -> None:
    code, out, err = run("estimate", path, "--engine", "trtllm", "-f", "json", *kv)
    assert code == 2 and out == ""
    line = err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert f"{path}: torch_dtype: float32: TensorRT-LLM" in line
    assert "expected bfloat16 or float16" in line


@pytest.mark.parametrize("command", ["plan", "sweep"])
def test_trtllm_plan_and_sweep_refuse_it_too(command: str, tmp_path: Path) -> None:
    # plan searches its dtypes without the auto / given path: the pool refuses it
    # (TrtllmRules.refuse_unmodelled). TensorRT-LLM's PyTorch registry has no LLaMAForCausalLM
    # (the checkpoint's 2023 spelling; kvplan/engines/trtllm/registry.json), which plan checks
    # first: the dtype rule is checked under LlamaForCausalLM, the same model's class.
    path = str(renamed(Path(ALPACA_FP32), tmp_path, "LlamaForCausalLM"))
    code, out, err = run(command, path, "--engine", "trtllm", "--gpu", "H100", "-f",
                         "json", *(("-c", "2048", "-n", "2") if command == "plan" else ()))
    assert code == 2 and out == ""
    assert "torch_dtype: float32: TensorRT-LLM" in err.strip()


@pytest.mark.parametrize(("engine", "kv_dtype"), [("vllm", "bf16"), ("sglang", "fp16")])
def test_vllm_and_sglang_serve_float32_at_two_bytes(engine: str, kv_dtype: str,
                                                    tmp_path: Path) -> None:
    path = ALPACA_FP32
    if engine == "sglang":
        # No SGLang release has a class named LLaMAForCausalLM (the checkpoint's 2023 spelling;
        # kvplan/engines/sglang/arrivals.json) and transformers has none for its fallback: SGLang
        # refuses it. The dtype rule is checked under LlamaForCausalLM, the same model's class.
        code, _, err = run("estimate", path, "--engine", engine, "-f", "json")
        assert code == 2 and "no model class for LLaMAForCausalLM" in err
        path = str(renamed(Path(path), tmp_path, "LlamaForCausalLM"))
    code, out, _ = run("estimate", path, "--engine", engine, "-f", "json")
    assert code == 0
    answer = json.loads(out)
    assert (answer["kv_dtype"], answer["bytes_per_token"]) == (kv_dtype, ALPACA_BYTES)


@pytest.mark.parametrize("model", [GPT_OSS, "gpt-oss-20b"])
def test_trtllm_reads_no_dtype_as_bfloat16(model: str) -> None:
    # The config.json and the bundled spec (torch_dtype_stated: false) alike.
    assert not load_spec(model).weight_dtype_stated
    code, out, _ = run("estimate", model, "--engine", "trtllm", "-f", "json")
    assert code == 0
    answer = json.loads(out)
    assert (answer["kv_dtype"], answer["bytes_per_token"]) == ("bf16", GPT_OSS_BYTES)


def test_a_stated_dtype_is_stated() -> None:
    spec = load_spec(ALPACA_FP32)
    assert (spec.weight_dtype, spec.weight_dtype_stated, spec.wrapper_dtype) == (
        "fp32", True, None)


@pytest.mark.parametrize(("engine", "kv_dtype"), [("vllm", "fp16"), ("sglang", "bf16")])
def test_wrapper_dtype_vllm_outer_sglang_text(engine: str, kv_dtype: str) -> None:
    spec = load_spec(LLAVA_OV)
    assert (spec.weight_dtype, spec.wrapper_dtype) == ("bf16", "fp16")
    if engine == "sglang":
        # No SGLang release read has a LlavaOnevisionForConditionalGeneration class
        # (kvplan/engines/sglang/arrivals.json): `estimate` refuses it; the rule itself stands.
        from kvplan.engines.sglang.kv_dtype import sglang_model_dtype

        assert sglang_model_dtype(spec) == kv_dtype  # the text model's bf16, not the wrapper's
        code, _, err = run("estimate", LLAVA_OV, "--engine", engine, "-f", "json")
        assert code == 2 and "no model class for LlavaOnevisionForConditionalGeneration" in err
        return
    code, out, _ = run("estimate", LLAVA_OV, "--engine", engine, "-f", "json")
    assert code == 0
    answer = json.loads(out)
    assert (answer["kv_dtype"], answer["bytes_per_token"]) == (kv_dtype, LLAVA_OV_BYTES)


@pytest.mark.parametrize(("path", "expected"), [(LLAVA_NEXT_FP16, "fp16"),
                                                (LLAVA_NEXT_FP32, "bf16")])
def test_vllm_wrapper_dtype_labels(path: str, expected: str) -> None:
    assert vllm_model_dtype(load_spec(path)) == expected


def test_import_writes_the_dtype_keys(tmp_path: Path) -> None:
    out = tmp_path / "llava.yaml"
    code, _, _ = run("import", LLAVA_OV, "-o", str(out))
    assert code == 0
    text = out.read_text()
    assert "wrapper_torch_dtype: float16" in text
    assert load_spec(str(out)).wrapper_dtype == "fp16"


_LOGGED = {"torch.bfloat16": "bf16", "torch.float16": "fp16"}


def _oracle_cases() -> list[Path]:
    cases = []
    for results in sorted((DATA / "oracle").glob("*/results.json")):
        if len(set(re.findall(r"dtype=(torch\.\w+), max_seq_len", results.read_text()))) == 1:
            cases.append(results.parent)
    return cases


@pytest.mark.parametrize("case", _oracle_cases(), ids=lambda p: p.name)
def test_model_dtype_is_the_dtype_vllm_logged(case: Path) -> None:
    # vLLM's engine line ("Initializing a V1 LLM engine ... dtype=torch.float16, max_seq_len")
    # in every recorded oracle run (vLLM 0.32 CPU build, --dtype auto): the dtype kvplan names.
    logged = re.findall(r"dtype=(torch\.\w+), max_seq_len", (case / "results.json").read_text())
    assert vllm_model_dtype(load_spec(str(case / "config.json"))) == _LOGGED[logged[0]]
