"""A multimodal wrapper's towers that vLLM leaves unbuilt at --limit-mm-per-prompt 0
(kvplan.engines.vllm.towers): not counted, not assumed, and carried on plan's launch line.

vLLM 0.32 models/interfaces.py:339-380 `_mark_tower_model` turns a tower into a StageMissingLayer
when every modality it serves has prompt limit 0. Before, kvplan dropped only Gemma's towers, so
Qwen2.5-VL, Qwen3-VL / Qwen3.5, Llama-4 and Gemma-3 wrappers started text-only were planned with
the tower's weights subtracted from a budget vLLM keeps (Qwen2.5-VL-7B: 1.35 GB short, exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.capacity.weights import weights_breakdown
from kvplan.cli import app
from kvplan.engines.vllm.towers import SKIPPABLE, without_skipped_towers
from kvplan.sources.resolve import load_spec

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
UNBUILT = json.loads((DATA / "oracle" / "towers-unbuilt.json").read_text())["cases"]
TEXT_ONLY = (("image", 0), ("video", 0), ("audio", 0))
runner = CliRunner()


def _json(*args: str) -> dict:
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _text_weights(case: str, version: str = "0.32") -> int:
    spec = without_skipped_towers(load_spec(str(DATA / "oracle" / case)), TEXT_ONLY, version)
    w = weights_breakdown(spec, tp=1)
    return (w.embeddings + w.attention + w.dense_mlp + w.experts + w.lm_head + w.norms
            + w.vision)


@pytest.mark.parametrize("case", sorted(UNBUILT))
def test_text_only_weights_equal_vllms_unbuilt_towers(case: str) -> None:
    # vLLM 0.32's CPU build with dummy weights, started with image, video and audio limits 0
    # (tests/oracle/vllm_weight_bytes.py, WEIGHT_BYTES_LIMIT_MM=1): its parameters are the text
    # model's to the byte. Qwen2.5-VL-7B's shrink: embed_tokens and lm_head 152,064 (padded to a
    # multiple of 64: 152,064) x 3,584 x 2 B = 1,089,994,752 B each, plus its 2 layers'
    # attention 234,917,888 B, MLP 22,020,096 B and norms 64,512 B = 2,436,992,000 B.
    assert _text_weights(case) == UNBUILT[case]["params"]


def test_every_skippable_tower_names_a_known_field() -> None:
    for arch, towers in SKIPPABLE.items():
        for tower in towers:
            assert tower.tower in ("vision", "qwen_vit", "qwen2_vit", "vision_config",
                                   "audio_config"), arch
            assert set(tower.modalities) <= {"image", "video", "audio"}, arch


def test_qwen25_vl_text_only_plans_the_budget_vllm_keeps() -> None:
    # Qwen/Qwen2.5-VL-7B-Instruct on an H100 at 32k: with the tower built (1,353,755,672 B of
    # vision weights, tests/test_weights_qwen2_vit.py) kvplan answers 63,930 blocks and says the
    # encoder profile is not in its reserve; at image=0,video=0 vLLM builds no tower and profiles
    # no encoder, so the budget grows by the tower and the answer is exact.
    model = str(CONFIGS / "qwen2.5-vl-7b.json")
    full = _json("estimate", model, "--gpu", "H100", "-c", "32k")
    text = _json("estimate", model, "--gpu", "H100", "-c", "32k",
                 "--limit-mm-per-prompt", "image=0,video=0")
    assert (full["num_blocks"], full["exact"]) == (63_930, False)
    assert full["weights_breakdown"]["vision"] == 1_353_755_672
    assert (text["num_blocks"], text["exact"], text["assumptions"]) == (65_405, True, [])
    assert text["weights_bytes"] == full["weights_bytes"] - 1_353_755_672
    # One modality left at its default (999 videos): the tower is built and profiled.
    image_only = _json("estimate", model, "--gpu", "H100", "-c", "32k",
                       "--limit-mm-per-prompt", "image=0")
    assert (image_only["num_blocks"], image_only["exact"]) == (63_930, False)


def test_skip_mm_profiling_keeps_the_tower_and_drops_the_profile_assumption() -> None:
    model = str(CONFIGS / "qwen2.5-vl-7b.json")
    full = _json("estimate", model, "--gpu", "H100", "-c", "32k")
    skipped = _json("estimate", model, "--gpu", "H100", "-c", "32k", "--skip-mm-profiling")
    assert skipped["weights_bytes"] == full["weights_bytes"]
    assert (skipped["exact"], skipped["assumptions"]) == (True, [])


@pytest.mark.parametrize(("model", "before", "since"), [
    ("qwen2.5-vl-7b.json", "0.10.0", "0.10.1"),  # qwen2_5_vl.py: skipped from 0.10.1
    ("gemma-3-27b.json", "0.15.0", "0.15.1"),  # gemma3_mm.py: skipped from 0.15.1
])
def test_towers_are_skipped_from_the_release_that_skips_them(model: str, before: str,
                                                             since: str) -> None:
    args = ("estimate", str(CONFIGS / model), "--gpu", "H100", "-c", "8k",
            "--limit-mm-per-prompt", "image=0,video=0")
    old = _json(*args, "--engine-version", before)
    new = _json(*args, "--engine-version", since)
    assert old["weights_breakdown"]["vision"] > 0
    assert new["weights_breakdown"]["vision"] == 0
    assert new["weights_bytes"] == old["weights_bytes"] - old["weights_breakdown"]["vision"]


def test_gemma3n_towers_refused_while_built() -> None:
    # Gemma-3n's MobileNetV5 and conformer towers are not counted: a budget from the GPU is
    # refused while vLLM builds them (before 0.15.1 even at limit 0), answered once it does not.
    args = ("estimate", str(CONFIGS / "gemma-3n-e4b.json"), "--gpu", "H100", "-c", "8k",
            "--limit-mm-per-prompt", "image=0,audio=0")
    refused = runner.invoke(app, [*args, "--engine-version", "0.15.0"])
    assert refused.exit_code == 2
    assert "towers are not counted" in refused.stderr
    assert _json(*args, "--engine-version", "0.15.1")["exact"] is True


def test_plan_carries_the_mm_flags_and_their_answer() -> None:
    model = str(CONFIGS / "qwen2.5-vl-7b.json")
    plan = _json("plan", model, "-n", "12", "-c", "32k", "--gpu", "H100",
                 "--limit-mm-per-prompt", "image=0,video=0", "--skip-mm-profiling")
    command = plan["command"]
    assert "--limit-mm-per-prompt '{\"image\":0,\"video\":0}'" in command
    assert command.rstrip().endswith("--skip-mm-profiling")
    assert (plan["exact"], plan["assumptions"]) == (True, [])
    built = _json("plan", model, "-n", "12", "-c", "32k", "--gpu", "H100")
    assert built["exact"] is False and "--limit-mm-per-prompt" not in built["command"]


def test_plan_refuses_skip_mm_profiling_where_vllm_has_no_such_flag() -> None:
    result = runner.invoke(app, ["plan", str(CONFIGS / "qwen2.5-vl-7b.json"), "-n", "4",
                                 "-c", "8k", "--gpu", "H100", "--skip-mm-profiling",
                                 "--engine-version", "0.10.1"])
    assert result.exit_code == 2
    assert "--skip-mm-profiling: vLLM 0.10.1 has no such flag" in result.stderr


def test_disagg_does_not_take_the_mm_flags() -> None:
    result = runner.invoke(app, ["plan", "llama-3.1-8b", "--disagg", "--rate", "2",
                                 "--limit-mm-per-prompt", "image=0"])
    assert result.exit_code == 2
    assert "--limit-mm-per-prompt: not taken with --disagg" in result.stderr


def test_simulate_sizes_the_text_only_pool() -> None:
    model = str(CONFIGS / "qwen2.5-vl-7b.json")
    args = ("simulate", model, "--gpu", "H100", "-c", "8k", "--num-requests", "4",
            "--concurrency", "2", "--input-len", "128", "--output-len", "8")
    built = _json(*args)
    text = _json(*args, "--limit-mm-per-prompt", "image=0,video=0")
    estimate = _json("estimate", model, "--gpu", "H100", "-c", "8k",
                     "--limit-mm-per-prompt", "image=0,video=0")
    assert text["num_blocks"] == estimate["num_blocks"] > built["num_blocks"]
    assert (text["exact"], built["exact"]) == (True, False)
