"""SGLang serves only the architectures its release has a model class for (issue 26):
kvplan/engines/sglang/architectures.py, with kvplan/engines/sglang/arrivals.json written by
tests/benches/sglang_arrivals_dump.py from the EntryClass of python/sglang/srt/models/*.py in every
SGLang wheel 0.4.5 - 0.5.23."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

from kvplan.engines.sglang.architectures import arrival, registered, release_read
from tests.test_vllm_architectures import _one_line_refusal, _run

ROOT = Path(__file__).resolve().parents[1]

DATA = Path(__file__).parent / "data" / "configs"
GRANITE_SWA = str(DATA / "granite-swash-2b.json")
OLMO3 = str(DATA / "olmo3-190m-zh-continue.json")
FALCON = str(DATA / "falcon-7b.json")
ARRIVALS = Path(__file__).parents[1] / "kvplan" / "engines" / "sglang" / "arrivals.json"
WHEELS = Path("/tmp/sglwheels")  # pip download --no-deps sglang==X -d /tmp/sglwheels/X (not in CI)


def renamed(model: Path, tmp_path: Path, name: str) -> Path:
    """The checkpoint (a config.json or its folder) with config.json's `architectures` set to
    `name`, hf_quant_config.json copied beside it where there is one: a version rule checked on
    a release that lacks the checkpoint's own class."""
    source = model / "config.json" if model.is_dir() else model
    config = json.loads(source.read_text())
    config["architectures"] = [name]
    (tmp_path / "config.json").write_text(json.dumps(config))
    if model.is_dir() and (model / "hf_quant_config.json").is_file():
        (tmp_path / "hf_quant_config.json").write_text(
            (model / "hf_quant_config.json").read_text())
    return tmp_path if model.is_dir() else tmp_path / "config.json"


@pytest.mark.parametrize(("name", "first", "module", "line", "before"), [
    # (architecture, the first release that registers it, the srt/models module whose
    #  EntryClass lists it there and that line, the release read before it, which does not)
    # 0.5.19 granite.py:553  EntryClass = [GraniteForCausalLM, GraniteSWAForCausalLM]
    ("GraniteSWAForCausalLM", "0.5.19", "granite.py", 553, "0.5.18"),
    # 0.4.5.post2 qwen3.py:335  EntryClass = Qwen3ForCausalLM (0.4.5.post1 has no qwen3.py)
    ("Qwen3ForCausalLM", "0.4.5.post2", "qwen3.py", 335, "0.4.5.post1"),
    # 0.5.0rc0 gpt_oss.py:1134  EntryClass = GptOssForCausalLM (the pre-release wheels are read)
    ("GptOssForCausalLM", "0.5.0rc0", "gpt_oss.py", 1134, "0.4.10.post2"),
    # 0.5.17 qwen3_5_text.py:208  EntryClass = [Qwen3_5MoeForCausalLM, Qwen3_5ForCausalLM]
    ("Qwen3_5ForCausalLM", "0.5.17", "qwen3_5_text.py", 208, "0.5.16"),
    # 0.5.20 mamba2.py:262  EntryClass = Mamba2ForCausalLM
    ("Mamba2ForCausalLM", "0.5.20", "mamba2.py", 262, "0.5.19"),
    # 0.4.7 transformers.py:291  EntryClass = [TransformersForCausalLM] (the Transformers fallback)
    ("TransformersForCausalLM", "0.4.7", "transformers.py", 291, "0.4.6.post5"),
])
def test_first_release_that_registers(name: str, first: str, module: str, line: int,
                                      before: str) -> None:
    data = json.loads(ARRIVALS.read_text())
    assert data["architectures"][name]["served"] == [[first, None]]
    assert registered(name, first) and not registered(name, before)
    assert arrival(name, before) == first and arrival(name, first) is None
    wheel = next((WHEELS / first).glob("sglang-*.whl"), None) if WHEELS.is_dir() else None
    if wheel is not None:  # the line itself, where the wheels are downloaded
        with zipfile.ZipFile(wheel) as z:
            text = z.read(f"sglang/srt/models/{module}").decode()
        entry = text.splitlines()[line - 1]
        assert entry.startswith("EntryClass = ") and name in entry


def test_a_removed_name() -> None:
    # vila.py: EntryClass = [VILAForConditionalGeneration] from 0.4.7.post1 (line 305) to 0.5.4
    # (line 306); 0.5.5's wheel has no vila.py.
    data = json.loads(ARRIVALS.read_text())["architectures"]
    assert data["VILAForConditionalGeneration"]["served"] == [["0.4.7.post1", "0.5.4"]]
    assert [registered("VILAForConditionalGeneration", v) for v in ("0.4.7", "0.5", "0.5.5")] \
        == [False, True, False]


def test_releases_stand_for_versions() -> None:
    # Every release 0.4.5 - 0.5.23 read, post releases and 0.5.0rc0 - rc2 included: a version
    # takes the release of its name, else the newest read at or below it; below 0.4.5 the
    # oldest, none (SGLang's default) the newest.
    assert release_read("0.5.6.post1") == "0.5.6.post1" and release_read("0.5.6") == "0.5.6"
    assert release_read("0.5.6.post3") == "0.5.6.post2"
    assert release_read("0.5.0rc0") == "0.5.0rc0" and release_read("0.5.0rc1") == "0.5.0rc1"
    assert release_read("0.5") == release_read("0.5.0") == "0.5.0rc2"
    assert release_read("0.4.4") == "0.4.5"
    assert release_read(None) == "0.5.23" and release_read("0.6") == "0.5.23"


def test_granite_swa_refused_before_its_arrival() -> None:
    # ibm-granite's GraniteSWAForCausalLM (model_type granite_swa): first in SGLang 0.5.19's
    # models/granite.py EntryClass; 0.5.9 has no class of it, and its Transformers fallback
    # (transformers 4.57.1, the 0.5.9 wheel's pin) is not sized by kvplan.
    for verb, rest in (("estimate", ("-c", "4096")),
                       ("plan", ("--gpu", "H100", "--context", "4096", "--concurrency", "4"))):
        line = _one_line_refusal(_run(verb, GRANITE_SWA, *rest, "--engine", "sglang",
                                      "--engine-version", "0.5.9"))
        assert (f"{GRANITE_SWA}: architectures: SGLang 0.5.9 has no model class for "
                "GraniteSWAForCausalLM") in line
        assert "SGLang serves GraniteSWAForCausalLM from 0.5.19: --engine-version 0.5.19 or " \
               "newer" in line and "transformers 4.57.1" in line
    # vLLM's registry is another matter (kvplan.engines.vllm.architectures).
    assert _run("estimate", GRANITE_SWA, "-c", "4096", "--engine", "vllm").exit_code == 0


def test_granite_swa_served_but_its_hybrid_swa_pool_is_not_read() -> None:
    # From 0.5.19 SGLang serves it, and 0.5.23's configs/model_config.py is_hybrid_swa_model
    # (SWA_SINK_ARCHS: GptOss, GraniteSWA, GraniteMoeSWA, IQuestQ1) gives it the separate
    # sliding-window pool, which kvplan has read for llama4 and gpt-oss only
    # (pools.SGLANG_HYBRID_SWA): refused, not sized as full attention.
    line = _one_line_refusal(_run("estimate", GRANITE_SWA, "-c", "4096", "--gpu", "H100",
                                  "--engine", "sglang"))
    assert "hybrid sliding-window pool for GraniteSWAForCausalLM" in line


def test_no_release_serves_it() -> None:
    # FalconForCausalLM: no srt/models module of any release 0.4.5 - 0.5.23 lists it; SGLang
    # would try its Transformers fallback (transformers 5.19.0 in 0.5.23), not sized here.
    line = _one_line_refusal(_run("estimate", FALCON, "-c", "4096", "--engine", "sglang"))
    assert ("has no model class for FalconForCausalLM (srt/models/*.py EntryClass, "
            "registry.py), nor does any release read (0.4.5 to 0.5.23); its Transformers "
            "fallback (TransformersForCausalLM") in line
    assert _run("estimate", FALCON, "-c", "4096", "--engine", "vllm").exit_code == 0
    # Before 0.4.7 there is no fallback to name.
    line = _one_line_refusal(_run("estimate", FALCON, "-c", "4096", "--engine", "sglang",
                                  "--engine-version", "0.4.6"))
    assert "Transformers" not in line


def test_olmo3_served_as_olmo2_from_0_5_4() -> None:
    # configs/olmo3.py (0.5.4 on): Olmo3Config replaces Olmo3ForCausalLM by Olmo2ForCausalLM,
    # which models/olmo2.py registers; 0.5.3 has no olmo3 config class and no Olmo3 model class.
    line = _one_line_refusal(_run("estimate", OLMO3, "-c", "4096", "--engine", "sglang",
                                  "--engine-version", "0.5.3"))
    assert "SGLang serves Olmo3ForCausalLM from 0.5.4: --engine-version 0.5.4 or newer" in line
    for version in ("0.5.4", "0.5.23"):
        assert _run("estimate", OLMO3, "-c", "4096", "--engine", "sglang",
                    "--engine-version", version).exit_code == 0


def test_a_spec_without_architectures_is_not_checked(tmp_path: Path) -> None:
    # A YAML that names no architectures (ModelSpec's default (); the bundled presets name their
    # config's since presetarch68, so llama-3.1-8b's is copied without it) plans as before, at
    # any release.
    import yaml

    from kvplan.sources.resolve import load_spec

    data = yaml.safe_load((ROOT / "model_specs" / "llama-3.1-8b.yaml").read_text())
    assert data.pop("architectures") == ["LlamaForCausalLM"]
    spec = tmp_path / "llama-no-architectures.yaml"
    spec.write_text(yaml.safe_dump(data))
    assert load_spec(str(spec)).architectures == ()
    assert _run("estimate", str(spec), "-c", "4096", "--engine", "sglang",
                "--engine-version", "0.4.5").exit_code == 0


@pytest.mark.skipif(not WHEELS.is_dir(), reason="SGLang wheels not downloaded at /tmp/sglwheels")
def test_dump_is_current() -> None:
    sys.path.insert(0, str(Path(__file__).parent / "benches"))
    try:
        from sglang_arrivals_dump import arrivals
    finally:
        sys.path.pop(0)
    data = json.loads(ARRIVALS.read_text())
    fresh = arrivals(WHEELS)
    assert fresh["releases"] == data["releases"]
    assert fresh["architectures"] == data["architectures"]
