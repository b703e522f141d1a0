"""Engine versions for quantization sub-schemes (issue 26): vLLM's compressed-tensors schemes
(kvplan.engines.vllm.quant_methods: VLLM_CT_SCHEMES_SINCE, VLLM_CT_MOE_SCHEMES_SINCE, the 2:4
sparse removals) and SGLang's ModelOpt algorithms other than FP8 / NVFP4
(kvplan.engines.sglang.quant_methods: SGLANG_MODELOPT_ALGOS_SINCE, SGLANG_MODELOPT_ALGOS_NEVER,
SGLANG_MIXED_LAYER_ALGOS_SINCE). Each boundary was read from the vllm==X / sglang==X wheels on
PyPI (the modules give the file and line). kvplan refuses, in one line, at a release that stops on
the checkpoint at start-up (or reads it as another format), and answers as before elsewhere.

The quantization blocks come from real published config.json files in tests/data/blind26/real
(frozen.json gives each one's repository and commit), grafted onto the config of a model kvplan
serves where the published model's own architecture is refused for other reasons (Laguna,
Kimi-K3). The W4A8, MXFP8 and 2:4 sparse blocks are written after llm-compressor's presets: no
published config.json with them was found in the search corpus."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app

DATA = Path(__file__).parent / "data"
REAL = DATA / "blind26" / "real"


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def estimate(file: str, *args: str) -> tuple[int, dict | None, str]:
    result = run("estimate", file, "-c", "8192", "-f", "json", *args)
    return (result.exit_code, json.loads(result.stdout) if result.exit_code == 0 else None,
            result.stderr)


def one_line(err: str, *parts: str) -> None:
    lines = [x for x in err.splitlines() if x.startswith("kvplan: error")]
    assert len(lines) == 1, err
    for part in parts:
        assert part in lines[0], (part, lines[0])


def real_qc(name: str) -> dict:
    config = json.loads((REAL / f"{name}.json").read_text())
    qc = config.get("quantization_config") or config["text_config"]["quantization_config"]
    return copy.deepcopy(qc)


def graft(tmp_path: Path, base: str, qc: dict) -> str:
    config = json.loads((DATA / "configs" / f"{base}.json").read_text())
    config["quantization_config"] = qc
    file = tmp_path / f"{base}.json"
    file.write_text(json.dumps(config))
    return str(file)


# meta-llama/Llama-3.1-8B: 32 layers x 2 (K, V) x 8 KV heads x 128 x 2 B (bf16) = 131,072 B.
LLAMA_8B_BYTES = 32 * 2 * 8 * 128 * 2
# Qwen/Qwen3-30B-A3B (128 experts): 48 layers x 2 x 4 KV heads x 128 x 2 B = 98,304 B.
QWEN3_MOE_BYTES = 48 * 2 * 4 * 128 * 2


def ct_group(weights: dict, acts: dict | None = None, **extra: object) -> dict:
    return {"quant_method": "compressed-tensors", "format": extra.pop("format", "pack-quantized"),
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights,
                                          "input_activations": acts}},
            "ignore": ["lm_head"], **extra}


# --- vLLM compressed-tensors -------------------------------------------------------------

@pytest.mark.parametrize(("base", "expected", "first", "last_without"), [
    # poolside Laguna-XS.2-FP8's published block: weights float 8, strategy block [128, 128],
    # dynamic fp8 activations. _is_fp8_w8a8 takes BLOCK from 0.11.0 (compressed_tensors.py:361;
    # the MoE method too, compressed_tensors_moe.py:644); 0.10.2 tensor / channel only.
    ("llama-3.1-8b", LLAMA_8B_BYTES, "0.11.0", "0.10.2"),
    ("qwen3-30b-a3b", QWEN3_MOE_BYTES, "0.11.0", "0.10.2"),
])
def test_fp8_block(tmp_path: Path, base: str, expected: int, first: str,
                   last_without: str) -> None:
    qc = real_qc("laguna-xs.2-fp8")
    assert qc["config_groups"]["group_0"]["weights"]["strategy"] == "block"
    # Its fp8 kv_cache_scheme is dropped: the weights' scheme is the subject here (bf16 KV).
    assert qc.pop("kv_cache_scheme")["num_bits"] == 8
    file = graft(tmp_path, base, qc)
    code, _, err = estimate(file, "--engine-version", last_without)
    assert code == 2
    one_line(err, f"{file}: quantization_config.config_groups.group_0: vLLM {last_without} "
                  "cannot load compressed-tensors W8A8 FP8 block", f"arrived in vLLM {first}",
             f"--engine-version {first} or newer")
    for version in (first, "0.32"):
        code, answer, err = estimate(file, "--engine-version", version)
        assert code == 0 and answer["bytes_per_token"] == expected, err


def test_mxfp4_linear_then_moe(tmp_path: Path) -> None:
    # moonshotai/Kimi-K3's published block: weights float 4, strategy group, group_size 32,
    # scale uint8, no input activations (format mxfp4-pack-quantized). Linear layers take it from
    # 0.14.0 (_is_mxfp4 -> CompressedTensorsW4A16Mxfp4, compressed_tensors.py:573), fused MoE
    # experts from 0.15.0 (CompressedTensorsW4A4Mxfp4MoEMethod, compressed_tensors_moe.py:158).
    qc = real_qc("kimi-k3")
    assert qc["format"] == "mxfp4-pack-quantized"
    dense, moe = graft(tmp_path, "llama-3.1-8b", qc), graft(tmp_path, "qwen3-30b-a3b", qc)
    code, _, err = estimate(dense, "--engine-version", "0.13.0")
    assert code == 2
    one_line(err, "vLLM 0.13.0 cannot load compressed-tensors MXFP4", "arrived in vLLM 0.14.0",
             "compressed_tensors.py:573", "No compressed-tensors compatible scheme")
    code, answer, err = estimate(dense, "--engine-version", "0.14.0")
    assert code == 0 and answer["bytes_per_token"] == LLAMA_8B_BYTES, err
    code, _, err = estimate(moe, "--engine-version", "0.14.0")
    assert code == 2
    one_line(err, "vLLM 0.14.0 cannot load compressed-tensors MXFP4", "on fused MoE experts",
             "arrived in vLLM 0.15.0", "--engine-version 0.15.0 or newer")
    code, answer, err = estimate(moe, "--engine-version", "0.15.0")
    assert code == 0 and answer["bytes_per_token"] == QWEN3_MOE_BYTES, err


def test_nvfp4_loads_in_every_modelled_release_but_weight_only_moe_from_0_14(
        tmp_path: Path) -> None:
    # CohereLabs command-a-03-2025 NVFP4 (W4A4, nvfp4-pack-quantized), as published: linear
    # W4A4 / W4A16 NVFP4 are in 0.10.0 (CompressedTensorsW4A4Fp4 / W4A16Fp4), nothing to gate.
    # Command-A: 64 layers (48 sliding of 4,096, 16 full), 8 KV heads x 128, bf16.
    published = str(REAL / "command-a-03-2025-nvfp4.json")
    answers = [estimate(published, "--engine-version", v) for v in ("0.10.0", "0.32")]
    assert all(code == 0 for code, _, _ in answers), answers
    assert answers[0][1]["bytes_per_token"] == answers[1][1]["bytes_per_token"] \
        == 64 * 2 * 8 * 128 * 2
    # The same weights without input activations (NVFP4A16) on fused experts: 0.10-0.13's
    # get_moe_method tests _is_fp4a4_nvfp4 only; 0.14.0 takes it (compressed_tensors_moe.py:188).
    qc = real_qc("command-a-03-2025-nvfp4")
    qc["config_groups"]["group_0"]["input_activations"] = None
    moe = graft(tmp_path, "qwen3-30b-a3b", qc)
    code, _, err = estimate(moe, "--engine-version", "0.13.0")
    assert code == 2
    one_line(err, "NVFP4A16", "on fused MoE experts", "arrived in vLLM 0.14.0")
    code, answer, err = estimate(moe, "--engine-version", "0.14.0")
    assert code == 0 and answer["bytes_per_token"] == QWEN3_MOE_BYTES, err
    # ... and on a dense model it loads from 0.10.0.
    code, _, err = estimate(graft(tmp_path, "llama-3.1-8b", qc), "--engine-version", "0.10.0")
    assert code == 0, err


W4 = {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True,
      "dynamic": False}


@pytest.mark.parametrize(("act_type", "label", "dense", "moe"), [
    # int 8 dynamic per-token activations: CompressedTensorsW4A8Int from 0.10.1
    # (compressed_tensors.py:476), W4A8Int8MoEMethod from 0.11.0 (compressed_tensors_moe.py:145).
    ("int", "W4A8 (weights int 4, input_activations int 8)", ("0.10.0", "0.10.1"),
     ("0.10.2", "0.11.0")),
    # fp8 activations: CompressedTensorsW4A8Fp8 from 0.10.2 (compressed_tensors.py:457),
    # W4A8Fp8MoEMethod from 0.13.0 (compressed_tensors_moe.py:213).
    ("float", "W4A8 FP8 (weights int 4, input_activations float 8)", ("0.10.1", "0.10.2"),
     ("0.12.0", "0.13.0")),
])
def test_w4a8(tmp_path: Path, act_type: str, label: str, dense: tuple[str, str],
              moe: tuple[str, str]) -> None:
    acts = {"num_bits": 8, "type": act_type, "strategy": "token", "dynamic": True,
            "symmetric": True}
    qc = ct_group(W4, acts, format="int-quantized" if act_type == "int" else "float-quantized")
    for base, (without, first), expected in (("llama-3.1-8b", dense, LLAMA_8B_BYTES),
                                             ("qwen3-30b-a3b", moe, QWEN3_MOE_BYTES)):
        file = graft(tmp_path, base, qc)
        code, _, err = estimate(file, "--engine-version", without)
        assert code == 2
        one_line(err, f"vLLM {without} cannot load compressed-tensors {label}",
                 f"arrived in vLLM {first}")
        code, answer, err = estimate(file, "--engine-version", first)
        assert code == 0 and answer["bytes_per_token"] == expected, err


def test_mxfp8_from_0_20(tmp_path: Path) -> None:
    # float 8, strategy group, group_size 32, uint8 scales: _is_mxfp8 from 0.20.0
    # (compressed_tensors.py:631, the MoE method too).
    weights = {"num_bits": 8, "type": "float", "strategy": "group", "group_size": 32,
               "symmetric": True, "dynamic": False, "scale_dtype": "torch.uint8"}
    file = graft(tmp_path, "llama-3.1-8b", ct_group(weights, None, format="float-quantized"))
    code, _, err = estimate(file, "--engine-version", "0.19.1")
    assert code == 2
    one_line(err, "cannot load compressed-tensors MXFP8", "--engine-version 0.20.0 or newer")
    assert estimate(file, "--engine-version", "0.20.0")[0] == 0


def test_2of4_sparse_removed(tmp_path: Path) -> None:
    # sparsity_config with targets (llm-compressor's 2:4 export, sparse-24-bitmask): 0.22.0's
    # compressed_tensors.py _parse_sparsity_config raises in from_config; 0.21.0 still has
    # supports_cutlass_24. The default (0.32) refuses it, naming the last release.
    fp8 = real_qc("laguna-xs.2-fp8")
    del fp8["kv_cache_scheme"]
    fp8["config_groups"]["group_0"]["weights"]["strategy"] = "channel"
    fp8["sparsity_config"] = {"format": "sparse-24-bitmask", "sparsity_structure": "2:4",
                              "targets": ["Linear"], "ignore": ["lm_head"]}
    file = graft(tmp_path, "llama-3.1-8b", fp8)
    code, _, err = estimate(file)
    assert code == 2
    one_line(err, f"{file}: quantization_config.sparsity_config: vLLM 0.32 cannot load a 2:4 "
                  "sparse compressed-tensors checkpoint", "vLLM 0.21.0 is the last release",
             "--engine-version 0.21.0 or older")
    assert estimate(file, "--engine-version", "0.21.0")[0] == 0
    # An empty sparsity_config (as command-a's and Laguna's publish it) is no sparsity.
    fp8["sparsity_config"] = {}
    assert estimate(graft(tmp_path, "llama-3.1-8b", fp8))[0] == 0
    # The marlin-24 format (int 4 weights, 2:4): CompressedTensorsW4A16Sparse24 is in 0.15.1,
    # not 0.16.0.
    marlin = graft(tmp_path, "llama-3.1-8b", ct_group(W4, None, format="marlin-24"))
    code, _, err = estimate(marlin, "--engine-version", "0.16.0")
    assert code == 2
    one_line(err, "quantization_config.format: vLLM 0.16.0 cannot load a marlin-24",
             "--engine-version 0.15.1 or older")
    assert estimate(marlin, "--engine-version", "0.15.1")[0] == 0


def test_compressed_tensors_groups_other_engines_do_not_see(tmp_path: Path) -> None:
    # The vLLM tables decide for vLLM only: SGLang answers the MXFP4 graft as before.
    file = graft(tmp_path, "llama-3.1-8b", real_qc("kimi-k3"))
    assert estimate(file, "--engine", "sglang")[0] == estimate(
        file, "--engine", "sglang", "--engine-version", "0.5.4")[0]


# --- SGLang ModelOpt algorithms -----------------------------------------------------------

QWEN36 = str(REAL / "qwen3.6-35b-a3b-nvfp4.json")
# Qwen3.6-35B-A3B: 40 layers, every 4th full attention (10), 2 KV heads x 256, bf16 (no
# kv_cache_scheme): 10 x 2 x 2 x 256 x 2 B = 20,480 B per token.
QWEN36_BYTES = 10 * 2 * 2 * 256 * 2


def test_sglang_mixed_precision_from_0_5_15() -> None:
    # The published nvidia Qwen3.6-35B-A3B NVFP4: flat quantization_config, quant_algo
    # MIXED_PRECISION, quantized_layers W4A16_NVFP4 (experts) and FP8. 0.5.15's
    # _parse_modelopt_quant_config (model_config.py:1155) sends a file with NVFP4 / W4A16_NVFP4
    # layers to modelopt_mixed, whose get_quant_method quantizes W4A16_NVFP4 layers (:815);
    # 0.5.10-0.5.14 send it to w4afp8 (not Nemotron-H), 0.5.9 and older always.
    for version in ("0.5.9", "0.5.14"):
        code, _, err = estimate(QWEN36, "--engine", "sglang", "--engine-version", version)
        assert code == 2
        one_line(err, f"{QWEN36}: quantization_config.quant_algo: SGLang {version} cannot load "
                      "a ModelOpt MIXED_PRECISION checkpoint with W4A16_NVFP4 layers",
                 "--engine-version 0.5.15 or newer")
    for pinned in (("--engine-version", "0.5.15"), ()):
        code, answer, err = estimate(QWEN36, "--engine", "sglang", *pinned)
        assert code == 0 and answer["bytes_per_token"] == QWEN36_BYTES, err


def mixed(tmp_path: Path, base: str, layers: dict[str, str]) -> str:
    qc = {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
          "quantized_layers": {name: {"quant_algo": algo, "group_size": 16}
                               for name, algo in layers.items()}}
    return graft(tmp_path, base, qc)


@pytest.mark.parametrize(("algo", "without", "first"), [
    # ModelOptMixedPrecisionConfig.get_quant_method leaves an algorithm it does not know
    # unquantized: MXFP8 from 0.5.17 (modelopt_quant.py:835), FP8_PB_WO from 0.5.18 (:949).
    ("MXFP8", "0.5.16", "0.5.17"), ("FP8_PB_WO", "0.5.17", "0.5.18")])
def test_sglang_mixed_precision_layer_algorithms(tmp_path: Path, algo: str, without: str,
                                                 first: str) -> None:
    file = mixed(tmp_path, "llama-3.1-8b", {"model.layers.0.mlp.down_proj": "NVFP4",
                                            "model.layers.0.self_attn.o_proj": algo})
    code, _, err = estimate(file, "--engine", "sglang", "--engine-version", without)
    assert code == 2
    one_line(err, f"with {algo} layers", f"--engine-version {first} or newer")
    code, answer, err = estimate(file, "--engine", "sglang", "--engine-version", first)
    assert code == 0 and answer["bytes_per_token"] == LLAMA_8B_BYTES, err


def test_sglang_mixed_precision_on_nemotron_h_from_0_5_10(tmp_path: Path) -> None:
    # 0.5.10-0.5.14 route MIXED_PRECISION to modelopt_mixed for Nemotron-H only (0.5.10
    # model_config.py:810), which quantizes its NVFP4 and FP8 layers.
    layers = {"backbone.layers.0.mixer.in_proj": "NVFP4", "backbone.layers.1.mixer.o_proj": "FP8"}
    nemotron = mixed(tmp_path, "nemotron-nano-9b-v2", layers)
    assert estimate(nemotron, "--engine", "sglang", "--engine-version", "0.5.9")[0] == 2
    code, _, err = estimate(nemotron, "--engine", "sglang", "--engine-version", "0.5.10")
    assert code == 0, err
    llama = mixed(tmp_path, "llama-3.1-8b", layers)
    assert estimate(llama, "--engine", "sglang", "--engine-version", "0.5.10")[0] == 2


def modelopt(tmp_path: Path, algo: str) -> str:
    return graft(tmp_path, "llama-3.1-8b", {"quant_method": "modelopt", "quant_algo": algo,
                                            "group_size": 16})


def test_sglang_w4a16_nvfp4_from_0_5_19(tmp_path: Path) -> None:
    # ModelOptFp4Config.from_config's list takes W4A16_NVFP4 from 0.5.19 (modelopt_quant.py:1580);
    # 0.5.18: "ModelOpt currently only supports: FP8, NVFP4, NVFP4_AWQ".
    file = modelopt(tmp_path, "W4A16_NVFP4")
    code, _, err = estimate(file, "--engine", "sglang", "--engine-version", "0.5.18")
    assert code == 2
    one_line(err, f"{file}: quantization_config.quant_algo: SGLang 0.5.18 cannot load ModelOpt "
                  "'W4A16_NVFP4'", "--engine-version 0.5.19 or newer")
    for pinned in (("--engine-version", "0.5.19"), ()):
        code, answer, err = estimate(file, "--engine", "sglang", *pinned)
        assert code == 0 and answer["bytes_per_token"] == LLAMA_8B_BYTES, err


@pytest.mark.parametrize("algo", ["FP8_PB_WO", "FP8_PER_CHANNEL_PER_TOKEN"])
@pytest.mark.parametrize("version", ["0.5.1", "0.5.17", "0.5.18", None])
def test_sglang_never_loads_fp8_variants_alone(tmp_path: Path, algo: str,
                                               version: str | None) -> None:
    # 0.5.18+: ModelOptFp8Config.from_config raises "only supports regular FP8 quantization"
    # (modelopt_quant.py:465); before, '"FP8" not in quant_method' lets them through as static
    # per-tensor FP8, which they are not. vLLM loads both from 0.14.0 (unchanged).
    file = modelopt(tmp_path, algo)
    pinned = ("--engine-version", version) if version else ()
    code, _, err = estimate(file, "--engine", "sglang", *pinned)
    assert code == 2
    one_line(err, f"cannot load ModelOpt {algo!r}", "no SGLang release loads it as written",
             "--engine vllm")
    code, answer, err = estimate(file, "--engine-version", "0.14.0")
    assert code == 0 and answer["bytes_per_token"] == LLAMA_8B_BYTES, err


# --- SGLang compressed-tensors -------------------------------------------------------------

def test_sglang_compressed_tensors_families(tmp_path: Path) -> None:
    # The published Command-A NVFP4 (W4A4): _is_fp4a4_nvfp4 from 0.5.7 (compressed_tensors.py:469);
    # 0.5.6.post2 raises "No compressed-tensors compatible scheme was found.".
    published = str(REAL / "command-a-03-2025-nvfp4.json")
    code, _, err = estimate(published, "--engine", "sglang", "--engine-version", "0.5.6.post2")
    assert code == 2
    one_line(err, f"{published}: quantization_config.config_groups.group_0: SGLang 0.5.6.post2 "
                  "cannot load compressed-tensors NVFP4", "--engine-version 0.5.7 or newer")
    code, answer, err = estimate(published, "--engine", "sglang", "--engine-version", "0.5.7")
    assert code == 0 and answer["bytes_per_token"] == 64 * 2 * 8 * 128 * 2, err
    # Without input activations (NVFP4A16): _is_fp4a16_nvfp4 from 0.5.22
    # (compressed_tensors.py:753).
    qc = real_qc("command-a-03-2025-nvfp4")
    qc["config_groups"]["group_0"]["input_activations"] = None
    file = graft(tmp_path, "llama-3.1-8b", qc)
    assert estimate(file, "--engine", "sglang", "--engine-version", "0.5.21")[0] == 2
    code, answer, err = estimate(file, "--engine", "sglang", "--engine-version", "0.5.22")
    assert code == 0 and answer["bytes_per_token"] == LLAMA_8B_BYTES, err
    # Laguna-XS.2-FP8's block FP8: _is_fp8_w8a8 takes BLOCK from 0.5.6.post1 (a post release).
    fp8 = real_qc("laguna-xs.2-fp8")
    del fp8["kv_cache_scheme"]
    file = graft(tmp_path, "llama-3.1-8b", fp8)
    code, _, err = estimate(file, "--engine", "sglang", "--engine-version", "0.5.6")
    assert code == 2
    one_line(err, "SGLang 0.5.6 cannot load compressed-tensors W8A8 FP8 block",
             "--engine-version 0.5.6.post1 or newer")
    code, answer, err = estimate(file, "--engine", "sglang", "--engine-version", "0.5.6.post1")
    assert code == 0 and answer["bytes_per_token"] == LLAMA_8B_BYTES, err
