"""The vLLM release that first registers each architecture (issue 26): a config planned at an
--engine-version older than it gets vLLM's own answer there (kvplan/engines/vllm/architectures.py,
kvplan/engines/vllm/arrivals.json, written by tests/benches/vllm_arrivals_dump.py from
vllm/model_executor/models/registry.py of every release 0.10.0 - 0.34.0)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from kvplan.engines.vllm.architectures import (
    arrival,
    registered,
    release_read,
    shown_release,
)
from tests.test_vllm_architectures import _one_line_refusal, _run

DATA = Path(__file__).parent / "data"
GLM47_FLASH = str(DATA / "configs" / "glm-4.7-flash.json")
DSV32 = str(DATA / "configs" / "deepseek-v3.2.json")
VLLM_SRC = Path("/tmp/vllm-src")  # each release's wheel unpacked (not in CI: that test skips)
ARRIVALS = Path(__file__).parents[1] / "kvplan" / "engines" / "vllm" / "arrivals.json"


@pytest.mark.parametrize(("name", "first", "line", "before"), [
    # (architecture, the first release read that lists it, its line in that release's
    #  vllm/model_executor/models/registry.py, the release read before it, which does not)
    # registry.py:115 (0.15.1) "Glm4MoeLiteForCausalLM": ("glm4_moe_lite", "Glm4MoeLiteForCausalLM")
    ("Glm4MoeLiteForCausalLM", "0.15.1", 115, "0.14.1"),
    # registry.py:73 (0.11.0)  "DeepseekV32ForCausalLM": ("deepseek_v2", "DeepseekV3ForCausalLM")
    ("DeepseekV32ForCausalLM", "0.11.0", 73, "0.10.2"),
    # registry.py:76 (0.10.1.1)  "GptOssForCausalLM": ("gpt_oss", "GptOssForCausalLM")
    ("GptOssForCausalLM", "0.10.1.1", 76, "0.10.0"),
    # registry.py:122 (0.11.2)  "KimiLinearForCausalLM": ("kimi_linear", "KimiLinearForCausalLM")
    ("KimiLinearForCausalLM", "0.11.2", 122, "0.11.0"),
    # registry.py:201 (0.27.1)  "Qwen3_5ForCausalLM": ("qwen3_5", "Qwen3_5ForCausalLM")
    ("Qwen3_5ForCausalLM", "0.27.1", 201, "0.26.0"),
    # registry.py:100 (0.33.0)  "DomynEdgeForCausalLM": ("domyn_edge", "DomynEdgeForCausalLM")
    ("DomynEdgeForCausalLM", "0.33.0", 100, "0.32.0"),
])
def test_first_release_that_registers(name: str, first: str, line: int, before: str) -> None:
    data = json.loads(ARRIVALS.read_text())
    assert data["architectures"][name]["served"][0] == [first, None]
    assert registered(name, first) and not registered(name, before)
    source = VLLM_SRC / first / "vllm" / "model_executor" / "models" / "registry.py"
    if source.is_file():  # the line itself, where the wheels are unpacked
        assert source.read_text().splitlines()[line - 1].lstrip().startswith(f'"{name}": (')


def test_releases_stand_for_versions() -> None:
    # One patch release read per minor (0.10 and 0.11: more): a version takes the first read at
    # or above it in its minor, else its minor's newest, else the newest below it.
    assert release_read("0.10") == "0.10.0" and release_read("0.10.1") == "0.10.1.1"
    assert release_read("0.11.1") == "0.11.2" and release_read("0.11.5") == "0.11.2"
    assert release_read("0.14") == release_read("0.14.0") == "0.14.1"
    assert release_read(None) == "0.32.0" and release_read("0.35") == "0.34.0"
    assert shown_release("0.15.1") == "0.15" and shown_release("0.10.1.1") == "0.10.1"
    assert shown_release("0.11.2") == "0.11.1" and shown_release("0.10.2") == "0.10.2"
    assert arrival("Glm4MoeLiteForCausalLM", "0.14") == "0.15"
    assert arrival("Glm4MoeLiteForCausalLM", "0.15") is None


def test_a_name_that_left_and_came_back() -> None:
    # registry.py: "ExaoneMoEForCausalLM" from 0.14.1 to 0.26.0; 0.27.1 renames it
    # "ExaoneMoeForCausalLM" (the same exaone_moe.ExaoneMoeForCausalLM); 0.32.0 lists both.
    data = json.loads(ARRIVALS.read_text())["architectures"]
    assert data["ExaoneMoEForCausalLM"]["served"] == [["0.14.1", "0.26.0"], ["0.32.0", None]]
    assert [registered("ExaoneMoEForCausalLM", v) for v in ("0.13", "0.20", "0.28", "0.32")] \
        == [False, True, False, True]
    assert arrival("ExaoneMoEForCausalLM", "0.28") == "0.32"


@pytest.mark.parametrize("command", [
    ("estimate", "-c", "4096"),
    ("plan", "--gpu", "H100", "--context", "4096", "--concurrency", "4"),
    ("simulate", "--gpu", "H100", "-c", "4096", "--rate", "1"),
])
def test_glm47_flash_refused_before_its_arrival(command: tuple[str, ...]) -> None:
    # zai-org/GLM-4.7-Flash: Glm4MoeLiteForCausalLM, first in vLLM 0.15.1's registry (0.14.1's
    # has no such name; transformers has no backend-compatible class of it, no auto_map): vLLM
    # 0.14 raises "Model architectures ['Glm4MoeLiteForCausalLM'] are not supported for now".
    verb, *rest = command
    line = _one_line_refusal(_run(verb, GLM47_FLASH, *rest, "--engine-version", "0.14"))
    assert (f"{GLM47_FLASH}: architectures: Glm4MoeLiteForCausalLM is served by vLLM from "
            "0.15; --engine-version 0.15 or newer") in line
    assert _run(verb, GLM47_FLASH, *rest, "--engine-version", "0.15").exit_code == 0


def test_glm47_flash_and_deepseek_v32_answered_from_their_arrival() -> None:
    # GLM-4.7-Flash (config.json: 47 layers, kv_lora_rank 512, qk_rope_head_dim 64, bf16): MLA
    # caches the latent and the rope key, 47 x (512 + 64) x 2 B = 54,144 B per token.
    glm = json.loads(_run("estimate", GLM47_FLASH, "-c", "4096", "--engine-version", "0.15",
                          "-f", "json").stdout)
    assert glm["bytes_per_token"] == 47 * (512 + 64) * 2 == 54_144 and glm["exact"] is True
    # DeepSeek-V3.2-Exp (61 layers, the same latent, index_head_dim 128): 61 x 576 x 2 B plus the
    # indexer's key cache, 128 fp8 + 4 B of scale a layer (vLLM DeepseekV32IndexerCache):
    # 70,272 + 61 x 132 = 78,324 B per token.
    line = _one_line_refusal(_run("estimate", DSV32, "-c", "4096", "--engine-version", "0.10"))
    assert ("DeepseekV32ForCausalLM is served by vLLM from 0.11; --engine-version 0.11 or "
            "newer") in line
    dsv = json.loads(_run("estimate", DSV32, "-c", "4096", "--engine-version", "0.11",
                          "-f", "json").stdout)
    assert dsv["bytes_per_token"] == 61 * 576 * 2 + 61 * 132 == 78_324


def _llama_as(tmp_path: Path, name: str, *, remote: bool = False) -> str:
    config = json.loads((DATA / "configs" / "llama-3.1-8b.json").read_text())
    config["architectures"] = [name]
    if remote:
        config["auto_map"] = {"AutoModelForCausalLM": "modeling_x.XForCausalLM"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    return str(tmp_path / "config.json")


def test_newer_than_the_support_table(tmp_path: Path) -> None:
    # DomynEdgeForCausalLM: first in vLLM 0.33.0 (registry.py:100). Its support row (read from
    # 0.34.0's registry, support.json "registered_from": "0.33.0") refuses it when the config is
    # loaded, before any version is read: at 0.33 and 0.34 vLLM builds its own class, which
    # kvplan does not size; at 0.32 (the default) the arrival rule would refuse it too, and with
    # auto_map's remote code the row still refuses rather than answer through the backend.
    config = _llama_as(tmp_path, "DomynEdgeForCausalLM")
    for extra in (("--engine-version", "0.33"), ("--engine-version", "0.34"), ()):
        line = _one_line_refusal(_run("estimate", config, "-c", "4096", *extra))
        assert "DomynEdgeForCausalLM" in line and "from 0.33.0" in line
    remote = _llama_as(tmp_path, "DomynEdgeForCausalLM", remote=True)
    line = _one_line_refusal(_run("estimate", remote, "-c", "4096"))
    assert "DomynEdgeForCausalLM" in line and "from 0.33.0" in line


@pytest.mark.skipif(not VLLM_SRC.is_dir(), reason="vLLM releases not unpacked at /tmp/vllm-src")
def test_dump_is_current() -> None:
    sys.path.insert(0, str(Path(__file__).parent / "benches"))
    try:
        from vllm_arrivals_dump import arrivals
    finally:
        sys.path.pop(0)
    data = json.loads(ARRIVALS.read_text())
    assert arrivals(VLLM_SRC)["architectures"] == data["architectures"]


def test_bundled_specs_state_their_configs_architectures() -> None:
    # A bundled spec imported from a config.json copy (its first lines name it) states that
    # file's `architectures` and remote code, so the registry rule holds for `kvplan estimate
    # deepseek-v3.2` as for the file: vLLM 0.10 has no DeepseekV32ForCausalLM.
    from kvplan.sources.resolve import load_spec
    from kvplan.sources.support import config_architectures

    root = Path(__file__).parents[1]
    checked = 0
    for path in sorted((root / "model_specs").glob("*.yaml")):
        text = path.read_text()
        head = text[:text.index("\nname:")]  # the comment block above the fields
        found = re.search(r"from (tests/data/\S+\.json)", head)
        if found is None:
            continue
        names, remote = config_architectures(json.loads((root / found.group(1)).read_text()))
        spec = load_spec(path.stem)
        assert (spec.architectures, spec.remote_code) == (names, remote), path.name
        checked += 1
    assert checked == 14
    line = _one_line_refusal(_run("estimate", "deepseek-v3.2", "-c", "4096",
                                  "--engine-version", "0.10"))
    assert "DeepseekV32ForCausalLM is served by vLLM from 0.11" in line
