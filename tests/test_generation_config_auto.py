"""`kvplan simulate --generation-config auto` (issue 30, cliopts63): the generation_config.json
beside MODEL's config.json (a folder, a config.json path, a Hub repo), as vLLM's default
`--generation-config auto` reads the model's own; a MODEL without one is one line, exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.cli import app
from kvplan.sources.generation_config import read_generation_config
from kvplan.sources.resolve import generation_config_beside
from tests.test_hub import COMMIT, FakeHub, _fill_cache, hub_env  # noqa: F401 - the fixture

runner = CliRunner()
DATA = Path(__file__).parent / "data"
# Qwen3-8B's config.json (tests/data/blind26/real: the Hub file's copy, vocab 151,936) and its
# generation_config.json (tests/data/generation_configs/qwen3-8b.json: its "_source" is
# https://huggingface.co/Qwen/Qwen3-8B/blob/main/generation_config.json; temperature 0.6,
# top_p 0.95, top_k 20).
QWEN3_CONFIG = DATA / "blind26" / "real" / "qwen3-8b-unsloth-copy.json"
QWEN3_GEN = DATA / "generation_configs" / "qwen3-8b.json"
ARGS = ["--gpu", "H100-80GB", "--max-model-len", "4096", "--concurrency", "8",
        "--num-requests", "8", "--input-len", "512", "--output-len", "64",
        "--engine-version", "0.15.0", "-f", "json",
        "--no-frontend"]  # the engine alone, the sampler's step by hand (frontdef67's stage off)


def _folder(tmp_path: Path, *, gen: bool = True) -> Path:
    folder = tmp_path / "qwen3-8b"
    folder.mkdir()
    shutil.copy(QWEN3_CONFIG, folder / "config.json")
    if gen:
        shutil.copy(QWEN3_GEN, folder / "generation_config.json")
    return folder


def test_auto_reads_the_file_beside_config_json_by_hand(tmp_path: Path) -> None:
    # 8 requests decoding together, each step sampling 8 rows of Qwen3-8B's 151,936 tokens with
    # its own defaults (top-k 20, top-p 0.95: the full sort, fewer than 128 rows), the kernels
    # of tests/test_vllm_sampler.py test_cli_generation_config: E = 8 x 151,936 = 1,215,488
    # elements, 0.403147 us per byte an element at H100's 3.015e12 B/s; the 4 us floor up to
    # 9.92 bytes. Floored: the 13 kernels of 4-9 bytes (52 us). Above it: 4 one-sweep passes
    # and the postprocess (24 bytes: 9.67553 us each, 48.378), the row-bit pass, the top-p
    # softmax, the scatter and the softmax (16: 6.45035 each, 25.801), div_ (12: 4.838):
    # 131.017 us a step, the TPOT's growth.
    folder = _folder(tmp_path)
    plain = runner.invoke(app, ["simulate", str(folder), *ARGS])
    auto = runner.invoke(app, ["simulate", str(folder), *ARGS, "--generation-config", "auto"])
    given = runner.invoke(app, ["simulate", str(folder), *ARGS,
                                "--generation-config", str(QWEN3_GEN)])
    assert plain.exit_code == auto.exit_code == given.exit_code == 0, auto.output
    a, b = json.loads(plain.stdout), json.loads(auto.stdout)
    assert b["tpot_ms"]["mean"] - a["tpot_ms"]["mean"] == pytest.approx(0.131017, abs=0.0005)
    assert json.loads(given.stdout) == b  # the same file, named or found
    # A config.json given by path: its folder's file.
    by_file = runner.invoke(app, ["simulate", str(folder / "config.json"), *ARGS,
                                  "--generation-config", "auto"])
    assert by_file.exit_code == 0, by_file.output
    assert json.loads(by_file.stdout)["tpot_ms"] == b["tpot_ms"]


@pytest.mark.parametrize(("model", "message"), [
    ("folder", "--generation-config auto: no generation_config.json in "),
    ("qwen3-8b", "no generation_config.json for the bundled spec qwen3-8b"),
])
def test_auto_without_a_file_is_one_line(tmp_path: Path, model: str, message: str) -> None:
    target = str(_folder(tmp_path, gen=False)) if model == "folder" else model
    res = runner.invoke(app, ["simulate", target, *ARGS, "--generation-config", "auto"])
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output


def test_auto_on_a_hub_id_cache_then_download(hub_env: FakeHub, tmp_path: Path,  # noqa: F811
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    src = _folder(tmp_path)
    # Cached snapshot holding both files: read there, nothing asked of the Hub.
    _fill_cache(tmp_path / "hf-cache", "org/cached", src,
                ("config.json", "generation_config.json"))
    found = generation_config_beside("org/cached")
    assert found.parent.name == COMMIT
    assert not [r for r in hub_env.requests if "/org/" in r[1]]  # (huggingface_hub's own
    # /api/agent-harnesses look, made by its newer releases, is not kvplan's)
    assert read_generation_config(found) == {"temperature": 0.6, "top_p": 0.95, "top_k": 20}
    # Only config.json cached: one download of the file, pinned to that snapshot's commit.
    _fill_cache(tmp_path / "hf-cache", "org/fetch", src, ("config.json",))
    hub_env.add("org/fetch", src)
    fetched = generation_config_beside("org/fetch")
    assert read_generation_config(fetched)["top_k"] == 20
    assert any(p.endswith(f"/org/fetch/resolve/{COMMIT}/generation_config.json")
               for _, p, _ in hub_env.requests)
    # A repo without the file (the Hub answers 404), and offline without it cached: one line.
    (tmp_path / "bare").mkdir()
    bare = _folder(tmp_path / "bare", gen=False)
    _fill_cache(tmp_path / "hf-cache", "org/none", bare, ("config.json",))
    hub_env.add("org/none", bare)
    with pytest.raises(InputError, match="no generation_config.json in the Hub repo org/none"):
        generation_config_beside("org/none")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _fill_cache(tmp_path / "hf-cache", "org/fetch-offline", src, ("config.json",))
    with pytest.raises(InputError, match="in the Hub repo org/fetch-offline"):
        generation_config_beside("org/fetch-offline")


def test_auto_with_the_hub_out_of_reach_names_the_file(hub_env: FakeHub,  # noqa: F811
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from kvplan._util.errors import SpecError

    _fill_cache(tmp_path / "hf-cache", "org/away", _folder(tmp_path), ("config.json",))
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{s.getsockname()[1]}")
        with pytest.raises(SpecError, match="generation_config.json: not in its cached snapshot "
                                            "and the Hugging Face Hub"):
            generation_config_beside("org/away", hub_timeout_s=5)
