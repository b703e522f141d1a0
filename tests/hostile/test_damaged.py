"""Hostile class 2: damaged checkpoints and caches. A checkpoint that does not hold the whole
model is refused (exit 2, naming what is missing), never planned from what is there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile.harness import clean_env, kvplan, listing, refused

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"


def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A real safetensors file (header and zero-filled data) of small tensors."""
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + b"\0" * offset)


def _llama70b(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "llama-3-70b.json").read_text())
    return folder


def test_partial_checkpoint_is_refused(tmp_path: Path) -> None:
    """The partial-checkpoint case of issue 32: a Llama-3-70B folder holding only the first of
    30 shards and no index (an interrupted download) said FITS on one H100 from 0.44 GiB of
    weights; the config alone needs 4 GPUs."""
    folder = _llama70b(tmp_path / "llama-3-70b")
    _safetensors(folder / "model-00001-of-00030.safetensors",
                 {"model.layers.0.input_layernorm.weight": ("BF16", [8192])})
    before = listing(tmp_path)
    line = refused(kvplan("plan", str(folder), "-n", "50", "--context", "8k"))
    assert "model-00002-of-00030.safetensors" in line or "missing" in line, line
    assert listing(tmp_path) == before


def test_partial_checkpoint_with_weights_from_config_plans_from_the_architecture(
        tmp_path: Path) -> None:
    folder = _llama70b(tmp_path / "llama-3-70b")
    _safetensors(folder / "model-00001-of-00030.safetensors",
                 {"model.layers.0.input_layernorm.weight": ("BF16", [8192])})
    run = kvplan("plan", str(folder), "-n", "50", "--context", "8k", "--weights-from", "config",
                 "-f", "json")
    assert run.code == 0 and "Traceback" not in run.stderr, run.stderr
    assert json.loads(run.stdout)["layout"]["tp"] >= 4  # 70B in bf16: not on one H100


@pytest.mark.parametrize("case", ["empty-file", "no-tensor", "index-without-shards"])
def test_damaged_checkpoints_are_refused(tmp_path: Path, case: str) -> None:
    folder = _llama70b(tmp_path / "m")
    if case == "empty-file":
        (folder / "model.safetensors").write_bytes(b"")
    elif case == "no-tensor":
        _safetensors(folder / "model.safetensors", {})
    else:
        (folder / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {"total_size": 1}, "weight_map": {
                "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                "lm_head.weight": "model-00002-of-00002.safetensors"}}))
    refused(kvplan("estimate", str(folder), "--gpu", "H100"))


def test_a_damaged_hub_cache_entry_is_said_as_such(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    refs = cache / "models--org--damaged" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_bytes(b"\xff\xfe not a commit")
    env = clean_env(HF_HUB_CACHE=str(cache), HF_HOME=str(tmp_path / "home"),
                    HF_ENDPOINT="http://127.0.0.1:9")  # never asked: the cache answers first
    line = refused(kvplan("estimate", "org/damaged", env=env), 2)
    assert "damaged" in line and "cannot reach" not in line
