"""Architecture features (kvplan.sources.features): ModelSpec fields set once where the spec is
built, the same for a bundled YAML spec and for the config.json it was written from."""

from __future__ import annotations

import copy
from dataclasses import fields
from pathlib import Path

import pytest

from kvplan._util.errors import SpecError
from kvplan.model.spec import ModelSpec
from kvplan.sources.features import ARCHITECTURE_FEATURES, FEATURE_FIELDS
from kvplan.sources.hf_config import load_config
from kvplan.sources.resolve import bundled_spec_ids, load_spec
from kvplan.sources.spec_yaml import parse_spec

from .conftest import LLAMA_LIKE

CONFIGS = Path(__file__).parent / "data" / "configs"
BUNDLED_WITH_CONFIG = sorted({p.stem for p in CONFIGS.glob("*.json")} & set(bundled_spec_ids()))


def _features(spec: ModelSpec) -> dict[str, bool]:
    return {name: getattr(spec, name) for name in FEATURE_FIELDS}


def test_every_feature_is_a_spec_field_defaulting_to_false() -> None:
    defaults = {f.name: f.default for f in fields(ModelSpec)}
    assert all(defaults[name] is False for name in FEATURE_FIELDS)
    assert all(set(entry) <= set(FEATURE_FIELDS) for entry in ARCHITECTURE_FEATURES.values())


@pytest.mark.parametrize("spec_id", BUNDLED_WITH_CONFIG)
def test_yaml_and_config_json_get_the_same_features(spec_id: str) -> None:
    imported, _ = load_config(CONFIGS / f"{spec_id}.json")
    assert _features(imported) == _features(load_spec(spec_id))


@pytest.mark.parametrize(("source", "expected"), [
    # Qwen3 always normalises q and k per head; Qwen3-Next also gates its attention output and
    # its shared expert.
    ("qwen3-8b", {"per_head_qk_norm"}),
    ("qwen3-235b-a22b", {"per_head_qk_norm"}),
    ("qwen3-next-80b-a3b", {"per_head_qk_norm", "attention_output_gate", "shared_expert_gate"}),
    ("qwen1.5-moe-a2.7b.json", {"shared_expert_gate"}),
    # GLM-4.5 by its use_qk_norm: true for GLM-4.5, false for GLM-4.5-Air.
    ("glm-4.5.json", {"per_head_qk_norm", "compiled_grouped_topk", "shared_expert_in_fused_moe",
                      "mtp_own_head"}),
    ("glm-4.5-air", {"compiled_grouped_topk", "shared_expert_in_fused_moe", "mtp_own_head"}),
    ("minimax-m2", {"full_width_qk_norm"}),
    ("nemotron-nano-9b-v2", {"triton_causal_conv"}),
    # use_qk_norm: true, but not an architecture whose per-head norm the cost model reads.
    ("llama-4-scout.json", set()),
    ("deepseek-v3", {"mtp_own_head"}),
    ("llama-3-8b", set()),
])
def test_features_by_architecture(source: str, expected: set[str]) -> None:
    spec = load_config(CONFIGS / source)[0] if source.endswith(".json") else load_spec(source)
    assert {name for name, on in _features(spec).items() if on} == expected


def _spec(**top) -> ModelSpec:
    data = copy.deepcopy(LLAMA_LIKE) | top
    return parse_spec(data, path="x.yaml", spec_id="x")


def test_a_spec_file_sets_a_feature_over_the_table() -> None:
    assert _spec(model_type="qwen3").per_head_qk_norm
    assert not _spec(model_type="qwen3", per_head_qk_norm=False).per_head_qk_norm
    assert _spec(model_type="new_arch", attention_output_gate=True).attention_output_gate
    assert _spec(model_type="glm4_moe", qk_norm=True).per_head_qk_norm
    assert not _spec(model_type="glm4_moe").per_head_qk_norm


def test_a_feature_must_be_a_boolean() -> None:
    with pytest.raises(SpecError, match="shared_expert_gate: expected true or false"):
        _spec(shared_expert_gate="yes")
