"""hf_quant_config.json beside a config.json without quantization_config (issue 26: no wrong number
with exit 0): read as vLLM 0.32 reads it (transformers_utils/config.py get_config), for folders,
`kvplan import` and (tests/test_hub.py) Hub ids. Checkpoints: tests/data/hf_quant/SOURCES.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.model.quant_config import declared_kv_cache_dtype, quant_method
from kvplan.sources.resolve import load_model

HF_QUANT = Path(__file__).parent / "data" / "hf_quant"
LLAMA_FP8 = HF_QUANT / "llama-3.1-70b-instruct-fp8"
QWEN_NVFP4 = HF_QUANT / "qwen3-235b-a22b-nvfp4"
VLLM = json.loads((HF_QUANT / "vllm.json").read_text())


def run(*args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(app, [*args, "-f", "json"])
    out = json.loads(result.stdout) if result.exit_code == 0 else {}
    return result.exit_code, (out[0] if isinstance(out, list) else out), result.stderr


def test_llama_3_1_70b_instruct_fp8_golden() -> None:
    # nvidia/Llama-3.1-70B-Instruct-FP8: config.json has no quantization_config;
    # hf_quant_config.json {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8",
    # "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}. vLLM 0.32 reads it as
    # quantization_config (transformers_utils/config.py get_config, ~line 888), names it
    # quant_method "modelopt" (model_arch_config_convertor.py _normalize_quantization_config)
    # and resolves --kv-cache-dtype auto to fp8_e4m3 (utils/torch_utils.py
    # get_kv_cache_quant_algo_string): tests/data/hf_quant/vllm.json, from vLLM's own code.
    assert VLLM["llama-3.1-70b-instruct-fp8"]["quantization"] == "modelopt"
    assert VLLM["llama-3.1-70b-instruct-fp8"]["kv_cache_dtype_auto"] == "fp8_e4m3"
    code, plan, err = run("estimate", str(LLAMA_FP8), "-c", "8192", "--gpu", "H200")
    assert code == 0, err
    # KV: 80 layers x 2 (K, V) x 8 KV heads x head size 128 (8192 / 64) x 1 B (fp8) = 163,840 B
    # per token (bf16, as read before: 327,680).
    assert plan["kv_dtype"] == "fp8" and plan["bytes_per_token"] == 163840
    # Weights at TP 1 (ModelOpt FP8, kvplan.model.quant_formats.Fp8PerTensor: 1 B per element,
    # fp32 weight_scale and input_scale per matrix; vLLM modelopt.py ModelOptFp8LinearMethod):
    #   embed_tokens and lm_head (excluded) bf16: 2 x 128,256 x 8,192 x 2 = 4,202,692,608
    #   attention fp8: 80 x (q 8192x8192 + k, v 1024x8192 each + o 8192x8192) = 12,079,595,520
    #   MLP fp8: 80 x 3 x 8,192 x 28,672 = 56,371,445,760
    #   norms bf16: (80 x 2 + 1) x 8,192 x 2 = 2,637,824
    #   scales: 80 x 4 matrices (qkv, o, gate_up, down) x 2 x 4 B = 2,560
    #   rope cache (vLLM rotary_embedding cos_sin_cache): 131,072 x 128 x 2 B = 33,554,432
    # = 72,689,928,704 B (67.70 GiB; read as bf16 before: 141.40e9), and vLLM's four float32
    # scale buffers in each attention layer (attention.py:133-139): 80 x 16 = 1,280 B more,
    # 72,689,929,984 B.
    b = plan["weights_breakdown"]
    assert (b["embeddings"], b["lm_head"]) == (2101346304, 2101346304)
    assert (b["attention"], b["dense_mlp"]) == (12079595520, 56371445760)
    assert (b["norms"], b["quantization_scales"], b["rope_cache"]) == (2637824, 2560, 33554432)
    assert plan["weights_bytes"] == 72689928704 + 80 * 16
    # Where it came from, said once among the warnings, and the KV note names the file's field.
    assert "hf_quant_config.json: modelopt fp8 (fp8 per-tensor)" in err
    assert "KV cache fp8: hf_quant_config.json quantization.kv_cache_quant_algo declares it" in err


def test_qwen3_235b_a22b_nvfp4_golden(tmp_path: Path) -> None:
    # nvidia/Qwen3-235B-A22B-NVFP4: NVFP4 group 16, kv_cache_quant_algo FP8, 94 router gates and
    # lm_head excluded. vLLM 0.32: quant_method modelopt_fp4, auto -> fp8_e4m3 (vllm.json).
    assert VLLM["qwen3-235b-a22b-nvfp4"]["quantization"] == "modelopt_fp4"
    assert VLLM["qwen3-235b-a22b-nvfp4"]["kv_cache_dtype_auto"] == "fp8_e4m3"
    code, plan, err = run("estimate", str(QWEN_NVFP4), "-c", "8192", "--gpu", "B200")
    assert code == 0, err
    # KV: 94 layers x 2 x 4 KV heads x head_dim 128 x 1 B = 96,256 B per token.
    assert plan["kv_dtype"] == "fp8" and plan["bytes_per_token"] == 96256
    # Attention at 4 bits: 94 x (q 8192x4096 + k, v 512x4096 each + o 4096x8192) = 6,702,497,792
    # elements / 2 = 3,351,248,896 B (their fp8 block scales are counted apart), plus the
    # unquantized bf16 q_norm / k_norm of head_dim each (models/qwen3_moe.py Qwen3MoeAttention):
    # 94 x 2 x 128 x 2 B = 48,128 B.
    assert plan["weights_breakdown"]["attention"] == 3351248896 + 94 * 2 * 128 * 2
    assert "hf_quant_config.json: modelopt nvfp4 (nvfp4)" in err
    # Read exactly as if config.json held the file's content as its quantization_config (what
    # vLLM does with it): the same bytes, every part.
    inline = tmp_path / "inline"
    inline.mkdir()
    config = json.loads((QWEN_NVFP4 / "config.json").read_text())
    config["quantization_config"] = json.loads((QWEN_NVFP4 / "hf_quant_config.json").read_text())
    (inline / "config.json").write_text(json.dumps(config))
    code, same, _ = run("estimate", str(inline), "-c", "8192", "--gpu", "B200")
    assert code == 0 and same["weights_breakdown"] == plan["weights_breakdown"]
    assert same["bytes_per_token"] == plan["bytes_per_token"]


def test_config_json_quantization_config_wins(tmp_path: Path) -> None:
    # vLLM reads hf_quant_config.json only when config.json's quantization_config is absent.
    folder = tmp_path / "m"
    shutil.copytree(LLAMA_FP8, folder)
    config = json.loads((folder / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "fp8", "activation_scheme": "dynamic"}
    (folder / "config.json").write_text(json.dumps(config))
    spec, warnings = load_model(str(folder))
    assert spec.quantization_config == config["quantization_config"]
    assert spec.quantization_file is None and declared_kv_cache_dtype(
        spec.quantization_config) is None
    assert not any("hf_quant_config.json" in w for w in warnings)


def test_read_beside_a_named_config_json_only(tmp_path: Path) -> None:
    # folder/config.json names the folder (vLLM's model is the folder); another .json does not.
    spec, _ = load_model(str(LLAMA_FP8 / "config.json"))
    assert spec.quantization_file == "hf_quant_config.json"
    other = tmp_path / "llama.json"
    shutil.copy(LLAMA_FP8 / "config.json", other)
    shutil.copy(LLAMA_FP8 / "hf_quant_config.json", tmp_path / "hf_quant_config.json")
    spec, _ = load_model(str(other))
    assert spec.quantization_config is None and spec.quantization_file is None


@pytest.mark.parametrize(("text", "fragment"), [
    ("{\"quantization\": ", "not valid JSON (line 1, column"),
    ("[1, 2]", "expected a JSON object at the top level"),
    ("{\"quantization\": {\"quant_algo\": NaN}}", "NaN is not a JSON number"),
    ("{\"producer\": {\"name\": \"modelopt\"}, \"quantization\": {\"quant_algo\": \"INT4_AWQ\"}}",
     "quantization.quant_algo: ModelOpt algorithm 'INT4_AWQ': vLLM 0.32 refuses it"),
])
def test_a_bad_file_is_one_line_exit_2(tmp_path: Path, text: str, fragment: str) -> None:
    folder = tmp_path / "m"
    shutil.copytree(LLAMA_FP8, folder)
    (folder / "hf_quant_config.json").write_text(text)
    for command in (("estimate", str(folder), "-c", "4096"), ("import", str(folder))):
        result = CliRunner().invoke(app, list(command))
        assert result.exit_code == 2 and result.stdout == "", result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "hf_quant_config.json" in lines[0], lines
        assert fragment in lines[0], lines


def test_engines_that_do_not_model_it_refuse_in_one_line() -> None:
    # SGLang (python/sglang/srt/configs/model_config.py _parse_quant_hf_config) reads
    # hf_quant_config.json too; whether its default auto takes the fp8 (from 0.5.3: only where the
    # model class keeps quant_config, kvplan.engines.sglang.kv_dtype) is not modelled: refused,
    # as for a dtype config.json declares, until --kv-dtype is given. TensorRT-LLM
    # (tensorrt_llm/_torch/model_config.py load_modelopt_quant_config) takes it with its default
    # dtype auto: fp8 (kvplan.engines.trtllm.kv_dtype; tests/test_kv_auto.py).
    code, _, err = run("estimate", str(LLAMA_FP8), "-c", "4096", "--engine", "sglang")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("kvplan: error: hf_quant_config.json "
                          "quantization.kv_cache_quant_algo: the checkpoint declares an fp8")
    for engine, extra in (("sglang", ("--kv-dtype", "fp8")), ("trtllm", ())):
        code, plan, err = run("estimate", str(LLAMA_FP8), "-c", "4096", "--engine", engine,
                              *extra)
        assert code == 0 and plan["kv_dtype"] == "fp8", err


def test_plan_and_simulate_see_the_same_dtype() -> None:
    code, est, _ = run("estimate", str(LLAMA_FP8), "-c", "8192", "--gpu", "H100", "--tp", "4")
    assert code == 0 and est["kv_dtype"] == "fp8"
    code, sim, err = run("simulate", str(LLAMA_FP8), "--gpu", "H100", "--tp", "4",
                         "--num-requests", "2", "--input-len", "256", "--output-len", "4",
                         "--rate", "1")
    assert code == 0 and sim["kv_dtype"] == "fp8", err
    # plan: an fp8 plan needs no flag; a 16-bit one must say so, vLLM's auto being fp8 here.
    for dtype, flag in (("fp8", "--kv-cache-dtype fp8"), ("bf16", "--kv-cache-dtype bfloat16")):
        code, plan, err = run("plan", str(LLAMA_FP8), "--gpu", "H100", "-c", "8192",
                              "--concurrency", "64", "--kv-dtype", dtype)
        assert code == 0 and plan["kv_dtype"] == dtype and flag in plan["command"], err


def test_import_writes_it_into_the_spec(tmp_path: Path) -> None:
    out = tmp_path / "spec.yaml"
    result = CliRunner().invoke(app, ["import", str(LLAMA_FP8), "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "hf_quant_config.json: modelopt fp8" in result.stderr
    assert "quantization_config:" in out.read_text()
    # The spec YAML holds the file's content as quantization_config: the same answer from it.
    code, plan, err = run("estimate", str(out), "-c", "8192", "--gpu", "H200")
    assert code == 0 and plan["kv_dtype"] == "fp8" and plan["bytes_per_token"] == 163840, err
    assert plan["weights_bytes"] == 72689928704 + 80 * 16


def test_quant_method_follows_vllm() -> None:
    # model_arch_config_convertor.py _normalize_quantization_config: producer modelopt (or a
    # legacy modelopt_quant_config) names the method from quantization.quant_algo.
    def qc(algo: object, producer: str | None = "modelopt") -> dict:
        out: dict = {"quantization": {"quant_algo": algo}}
        if producer is not None:
            out["producer"] = {"name": producer}
        return out

    assert quant_method(qc("FP8")) == "modelopt"
    assert quant_method(qc("fp8_pb_wo")) == "modelopt"
    assert quant_method(qc("NVFP4")) == "modelopt_fp4"
    assert quant_method(qc(None)) == ""  # no algorithm: no method (vLLM runs it unquantized)
    assert quant_method(qc("FP8", producer=None)) == ""  # no producer: not named either
    assert quant_method({"quantization": {"quant_algo": "FP8", "modelopt_quant_config": {}}}
                        ) == "modelopt"
    assert quant_method({"quant_method": "compressed_tensors"}) == "compressed-tensors"
    # Without a method vLLM reads no KV dtype from it (auto: the model's).
    assert declared_kv_cache_dtype(qc("FP8", producer=None) | {
        "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}) is None
