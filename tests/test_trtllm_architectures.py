"""TensorRT-LLM's PyTorch backend serves only the architectures its registry has a model class
for (issue 26): kvplan/engines/trtllm/architectures.py, with kvplan/engines/trtllm/registry.json
written by tests/benches/trtllm_registry_dump.py from tensorrt_llm/_torch/models/_arch_index.py
MODEL_ARCH_TO_MODULE at NVIDIA/TensorRT-LLM commit 065ff9e93780bc0bdbfdbc7156a306ca14f5850c."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvplan import load_model
from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.versions import prerelease_key, version_key
from kvplan.engines.base import Engine, PlanInputs
from kvplan.engines.trtllm.architectures import registered, registry
from kvplan.engines.trtllm.options import TrtllmOptions
from tests.benches.trtllm_registry_dump import arch_table
from tests.benches.trtllm_registry_dump import registry as dump_registry
from tests.test_sglang_arrivals import renamed
from tests.test_vllm_architectures import _one_line_refusal, _run

DATA = Path(__file__).parent / "data" / "configs"
LLAMA = DATA / "llama-3.1-8b.json"  # LlamaForCausalLM, bfloat16
COHERE = DATA / "command-r-v01.json"  # CohereForCausalLM (Command-R v01), float16
REGISTRY = Path(__file__).parents[1] / "kvplan" / "engines" / "trtllm" / "registry.json"


def _estimate(*args: str) -> dict:
    result = _run("estimate", *args, "-f", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_registry_read() -> None:
    # _arch_index.py at 065ff9e: MODEL_ARCH_TO_MODULE lists 81 names, e.g.
    # "LlamaForCausalLM": "modeling_llama", "DeepseekV3ForCausalLM": "modeling_deepseekv3",
    # "Qwen3ForCausalLM": "modeling_qwen3"; no Gemma-2, Cohere (v1) or Falcon class.
    data = registry()
    assert data["commit"] == "065ff9e93780bc0bdbfdbc7156a306ca14f5850c"
    assert data["path"] == "tensorrt_llm/_torch/models/_arch_index.py"
    assert data["release"] == "1.3.0rc24"
    assert data["count"] == len(data["architectures"]) == 81
    assert data["architectures"]["LlamaForCausalLM"] == "modeling_llama"
    assert data["architectures"]["DeepseekV3ForCausalLM"] == "modeling_deepseekv3"
    assert all(registered(n) for n in ("LlamaForCausalLM", "Qwen3ForCausalLM",
                                       "GptOssForCausalLM", "Cohere2ForCausalLM"))
    assert not any(registered(n) for n in ("Gemma2ForCausalLM", "CohereForCausalLM",
                                           "FalconForCausalLM", "GPT2LMHeadModel"))


def test_the_dump_reads_the_table_and_nothing_else(tmp_path: Path) -> None:
    source = ('_ZOO_PACKAGE = "tensorrt_llm._torch.models"\n'
              'MODEL_ARCH_TO_MODULE = {\n    "B": "modeling_b",\n    "A": "modeling_a",\n}\n'
              'MODEL_CLASS_TO_MODULE = {"C": "modeling_c"}\n')
    data = dump_registry(source, "x.py", "abc", "9.9.9rc1", "a note")
    assert data["architectures"] == {"A": "modeling_a", "B": "modeling_b"}
    assert (data["count"], data["release"], data["release_note"]) == (2, "9.9.9rc1", "a note")
    with pytest.raises(SystemExit, match="no MODEL_ARCH_TO_MODULE"):
        arch_table("X = {}\n", "x.py")
    with pytest.raises(SystemExit, match="not a dict of strings"):
        arch_table('MODEL_ARCH_TO_MODULE = {"A": 1}\n', "x.py")
    # The committed file is what the dump writes (one entry a line, sorted).
    lines = REGISTRY.read_text().splitlines()
    names = [line.split('"')[1] for line in lines[2:]]
    assert names == sorted(registry()["architectures"])


def test_an_unregistered_architecture_is_refused() -> None:
    # Command-R v01's config.json names CohereForCausalLM; the registry has Cohere2ForCausalLM
    # (modeling_cohere2) only: AutoModelForCausalLM.from_config raises "Unknown architecture".
    line = _one_line_refusal(_run("estimate", str(COHERE), "--engine", "trtllm"))
    assert (f"{COHERE}: architectures: CohereForCausalLM is not in TensorRT-LLM 1.3.0rc24's "
            "PyTorch model registry (tensorrt_llm/_torch/models/_arch_index.py at "
            "NVIDIA/TensorRT-LLM 065ff9e93") in line
    assert "architectures[0] only" in line
    # Older: refused too, saying the registry was read at 1.3.0rc24 only.
    line = _one_line_refusal(_run("estimate", str(COHERE), "--engine", "trtllm",
                                  "--engine-version", "1.2.0"))
    assert line.endswith("; read at 1.3.0rc24 only, not at 1.2.0")
    # vLLM and SGLang have their own registries: unchanged.
    assert _run("estimate", str(COHERE), "--engine", "vllm").exit_code == 0


def test_only_the_first_name_counts(tmp_path: Path) -> None:
    # _resolve_class: model_arch = pretrained_config.architectures[0]; a registered second
    # name does not help.
    config = json.loads(LLAMA.read_text())
    config["architectures"] = ["Gemma2ForCausalLM", "LlamaForCausalLM"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    line = _one_line_refusal(_run("estimate", str(tmp_path / "config.json"), "--engine", "trtllm"))
    assert "Gemma2ForCausalLM is not in TensorRT-LLM 1.3.0rc24's" in line


def test_a_registered_architecture_is_answered_as_before(tmp_path: Path) -> None:
    # Llama-3.1-8B: 32 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 131,072 B per token.
    plain = _estimate(str(LLAMA), "--engine", "trtllm", "--gpu", "H100")
    assert plain["bytes_per_token"] == 131_072
    assert plain["exact"] is True and plain["assumptions"] == []
    # The same config under a name the registry lacks is refused: the name decides.
    other = renamed(LLAMA, tmp_path, "LlamaForCausalLMUnknown")
    _one_line_refusal(_run("estimate", str(other), "--engine", "trtllm"))
    # At the release read, or no older: no assumption on the registry.
    at = _estimate(str(LLAMA), "--engine", "trtllm", "--gpu", "H100", "--engine-version",
                   "1.3.0rc24")
    assert not any(a["field"] == "architectures" for a in at["assumptions"])
    assert at["token_capacity"] == plain["token_capacity"]


def test_an_older_version_is_answered_not_exact() -> None:
    # 1.3.0rc10 (kvplan's budget reading) is older than the registry's 1.3.0rc24: the numbers
    # are the same, exact false, one assumption on architectures naming both releases.
    plain = _estimate(str(LLAMA), "--engine", "trtllm", "--gpu", "H100")
    older = _estimate(str(LLAMA), "--engine", "trtllm", "--gpu", "H100", "--engine-version",
                      "1.3.0rc10")
    assert older["token_capacity"] == plain["token_capacity"]
    assert older["exact"] is False
    [assumed] = [a for a in older["assumptions"] if a["field"] == "architectures"]
    assert assumed["value"] == "LlamaForCausalLM"
    assert assumed["why"].startswith("TensorRT-LLM's PyTorch model registry was read at "
                                     "1.3.0rc24 (")
    assert "not at 1.3.0rc10: per-release registries are not recorded" in assumed["why"]


def test_a_built_engine_is_not_held_to_the_pytorch_registry() -> None:
    # --trtllm-backend engine: the legacy TensorRT engine path, not AutoModelForCausalLM.
    spec = load_model(str(COHERE))
    inputs = PlanInputs(context=4096, kv_dtype="bf16", block_size=None, tp=1,
                        engine=Engine.trtllm)
    with pytest.raises(UnmodelledError, match="CohereForCausalLM is not in TensorRT-LLM"):
        Engine.trtllm.rules.served_spec(spec, inputs)
    engine = replace(inputs, options=TrtllmOptions(trtllm_backend="engine"))
    assert Engine.trtllm.rules.served_spec(spec, engine) == spec
    # And from the CLI, with the reserve the engine path needs.
    answer = _estimate(str(COHERE), "--engine", "trtllm", "--trtllm-backend", "engine",
                       "--gpu", "H100", "--reserve-gib", "2")
    assert answer["exact"] is True and answer["token_capacity"] > 0


def test_prerelease_key_orders_as_pep440() -> None:
    # TensorRT-LLM's releases are rc's of 1.3.0: version_key cannot tell them apart.
    assert version_key("1.3.0rc10") == version_key("1.3.0rc24") == version_key("1.3.0")
    ordered = ["0.20.1.dev3", "0.20.1a1", "0.20.1b2", "0.20.1rc1.dev16+g7a1eb8ac2", "0.20.1rc1",
               "0.20.1", "1.2.0rc6.post2", "1.3.0rc10", "1.3.0rc15.post1", "1.3.0rc24",
               "1.3.0rc24.post1", "1.3.0", "1.3.0.post1.dev2", "1.3.0.post1", "1.3.1rc0"]
    keys = [prerelease_key(v) for v in ordered]
    assert all(keys[i] < keys[i + 1] for i in range(len(keys) - 1))
    assert prerelease_key("1.3") == prerelease_key("1.3.0") == prerelease_key("v1.3.0")
    assert prerelease_key("1.3.0rc24+g065ff9e") == prerelease_key("1.3.0rc24")
    assert prerelease_key(None) > prerelease_key("98.7.6.5.post4")
    with pytest.raises(InputError, match="--engine-version"):
        prerelease_key("1.3.0-beta")
    packaging = pytest.importorskip("packaging.version")
    assert sorted(ordered, key=packaging.Version) == ordered


def test_newer_rc_than_the_budget_read_is_flagged() -> None:
    # kvplan read TensorRT-LLM's budget code at 1.3.0rc10: 1.3.0rc24 is newer (it was taken as
    # the same release while pre-releases were not ordered).
    answer = _estimate(str(LLAMA), "--engine", "trtllm", "--gpu", "H100", "--engine-version",
                       "1.3.0rc24")
    [flag] = [a for a in answer["assumptions"] if a["field"] == "engine_version"]
    assert flag["value"] == "1.3.0rc10 rules"
    rc10 = _estimate(str(LLAMA), "--engine", "trtllm", "--gpu", "H100", "--engine-version",
                     "1.3.0rc10")
    assert not any(a["field"] == "engine_version" for a in rc10["assumptions"])


# --- older releases, from TensorRT-LLM's release notes (kvplan/engines/trtllm/release_notes.json:
# docs/source/release-notes.md at NVIDIA/TensorRT-LLM 001eaecea63dd6bdbfd02aed1bf8dc7fad567bd0,
# each release's "Model Support" list) -------------------------------------------------------

NOTED = [  # (config in tests/data/configs, its architectures[0], the release whose notes add it)
    ("exaone-4.0-1.2b", "Exaone4ForCausalLM", "1.0"),  # "Add EXAONE 4.0 model support"
    ("mistral-small-3.1-24b", "Mistral3ForConditionalGeneration", "1.0"),
    ("gpt-oss-20b", "GptOssForCausalLM", "1.1"),  # "Add GPT-OSS model support."
    ("hunyuan-7b-instruct", "HunYuanDenseV1ForCausalLM", "1.1"),
    ("seed-oss-36b", "SeedOssForCausalLM", "1.1"),
    ("k-exaone-236b-a23b", "ExaoneMoEForCausalLM", "1.2"),  # "Added support for K-EXAONE, ..."
    ("qwen3-next-80b-a3b", "Qwen3NextForCausalLM", "1.2"),
    ("qwen3-vl-4b", "Qwen3VLForConditionalGeneration", "1.2"),
]
BEFORE = {"1.0": "0.21.0", "1.1": "1.0.0", "1.2": "1.1.0"}  # the last release of the one before


def test_the_release_notes_table() -> None:
    from kvplan.engines.trtllm.architectures import noted_release, release_notes

    data = release_notes()
    assert "001eaecea63dd6bdbfd02aed1bf8dc7fad567bd0" in data["source"]
    names = data["architectures"]
    assert len(names) == 9
    # Every name the notes add is in the registry read at 1.3.0rc24 (else it is refused anyway).
    assert all(registered(n) for n in names)
    assert {noted_release(n) for n in names} == {"1.0", "1.1", "1.2"}
    assert noted_release("LlamaForCausalLM") is None
    for config, arch, release in NOTED:
        assert json.loads((DATA / f"{config}.json").read_text())["architectures"][0] == arch
        assert noted_release(arch) == release


@pytest.mark.parametrize(("config", "arch", "release"), NOTED)
def test_refused_before_the_release_whose_notes_add_it(config: str, arch: str,
                                                        release: str) -> None:
    path = str(DATA / f"{config}.json")
    older = BEFORE[release]
    line = _one_line_refusal(_run("estimate", path, "--engine", "trtllm", "--engine-version",
                                  older))
    assert (f"{path}: architectures: {arch} is registered by TensorRT-LLM's PyTorch backend "
            f"from {release} (release notes, docs/source/release-notes.md, 'TensorRT-LLM "
            f"Release {release}': ") in line
    assert line.endswith(f"not at {older}: --engine-version {release} or newer")
    # At the release's own candidates: answered, exact false, with the registry's assumption
    # (which candidate first registers it is not recorded). Asked of the registry check alone:
    # Qwen3-Next's recurrent layers and K-EXAONE's per-layer windows are refused for TRT-LLM
    # further on.
    served = Engine.trtllm.rules.served_architecture(load_model(path), f"{release}.0rc1")
    [assumed] = [a for a in served.assumptions if a.field == "architectures"]
    assert assumed.value == arch


def test_gpt_oss_by_release() -> None:
    # gpt-oss-20b (GptOssForCausalLM): the 1.1 notes "Add GPT-OSS model support." (the gpt-oss
    # PR #6645 went to main while 1.0 was on release/1.0). 0.21.0 and 1.0.0: refused; 1.1.0rc3
    # (the DGX Spark log's release, tests/test_trtllm_logs.py) and no version: answered.
    gpt_oss = str(DATA / "gpt-oss-20b.json")
    for version in ("0.21.0", "1.0.0", "1.0"):
        result = _run("estimate", gpt_oss, "--engine", "trtllm", "--engine-version", version)
        assert result.exit_code == 2 and "from 1.1 (release notes" in result.stderr
    for extra in (("--engine-version", "1.1.0rc3"), ("--engine-version", "1.3.0rc24"), ()):
        assert _run("estimate", gpt_oss, "--engine", "trtllm", *extra).exit_code == 0
    # A name the notes kept do not add (LlamaForCausalLM): at 0.20.0 as before, answered with the
    # assumption.
    answer = _estimate(str(LLAMA), "--engine", "trtllm", "--engine-version", "0.20.0")
    assert any(a["field"] == "architectures" for a in answer["assumptions"])
