"""A bundled preset and the config.json it was written from get the same engine rules
(presetarch68): each preset states its config's `architectures` (and, where the config states a
rope_scaling, its `position_fields`; where its auto_map names the checkpoint's code, its
`remote_code` / `remote_config` / `config_model_type`), so the rules gated on them (SGLang's
shared expert inside the fused MoE, kvplan.engines.sglang.shared_fusion; its ROCm MLA decode
launches, kvplan.engines.sglang.mla_decode; the engines' model registries; --trust-remote-code)
decide alike for `kvplan estimate deepseek-v3` and `kvplan estimate path/to/config.json`."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from kvplan import load_spec
from kvplan._util.errors import UnmodelledError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.engines.sglang.config_class import sglang_remote_config_reason
from kvplan.engines.vllm.architectures import needs_trust_remote_code
from kvplan.engines.vllm.config_class import vllm_remote_config_reason
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_kernel import mla_decode_extra_kernels
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import (
    engine_efficiency,
    fuses_allreduce_norm,
    graph_prefill_applies,
    shared_expert_overlap,
)
from kvplan.perf.layout import Layout
from kvplan.perf.shared_fusion import engine_folds_shared_expert
from kvplan.sources.hf_config import load_config, spec_mapping_from_config, spec_yaml_text
from kvplan.sources.resolve import bundled_spec_ids
from kvplan.sources.spec_yaml import parse_spec

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
# Every bundled id with the config.json copy it was written from (granite-4.0-h-small has only
# a partial copy, under configs/partial/).
PAIRS = [i for i in bundled_spec_ids() if (CONFIGS / f"{i}.json").is_file()]


def _rope_scaling(spec):
    return None if spec.position_fields is None else spec.position_fields.rope_scaling


def test_every_preset_with_a_config_copy_is_checked():
    assert len(PAIRS) == len(bundled_spec_ids()) - 1 == 36


@pytest.mark.parametrize("spec_id", PAIRS)
def test_preset_states_the_fields_the_rules_read(spec_id):
    preset, (config, _) = load_spec(spec_id), load_config(CONFIGS / f"{spec_id}.json")
    assert preset.architectures == config.architectures != ()
    assert preset.text_architectures == config.text_architectures
    assert preset.model_type == config.model_type
    assert _rope_scaling(preset) == _rope_scaling(config)
    # auto_map's classes and the model_type beside them: what --trust-remote-code rests on.
    assert (preset.remote_code, preset.remote_config, preset.config_model_type) == (
        config.remote_code, config.remote_config, config.config_model_type)


def _decisions(spec, gpu_name: str, tp: int) -> tuple:
    """SGLang 0.5.9's architecture-gated decisions for one decode token and a 4,096-token
    prefill on `gpu_name` at TP `tp`."""
    gpu, layout = get_gpu(gpu_name), Layout(tp=tp)
    eff = engine_efficiency("sglang", device_efficiency(gpu), version="0.5.9")
    return (engine_folds_shared_expert(eff, spec, gpu, layout, "fp8"),
            fuses_allreduce_norm(spec, gpu, layout, 1, eff),
            shared_expert_overlap(spec, gpu, layout, eff),
            graph_prefill_applies(eff, spec, gpu, layout, 4096),
            mla_decode_extra_kernels(eff, spec, gpu, tp, "decode"))


@pytest.mark.parametrize("spec_id", PAIRS)
def test_preset_and_config_get_the_same_sglang_decisions(spec_id):
    preset, config = load_spec(spec_id), load_spec(str(CONFIGS / f"{spec_id}.json"))
    for gpu, tp in (("H200", 8), ("MI300X", 8), ("MI300X", 1)):
        assert _decisions(preset, gpu, tp) == _decisions(config, gpu, tp), (gpu, tp)


def test_the_gated_rules_now_reach_deepseek_v3_preset():
    # The rules sglh200_68 / mi300x67 found a preset missed, on the preset itself: DeepSeek-V3's
    # shared expert inside fused_moe (H200, and MI300X), the fused all-reduce + RMSNorm is by
    # model_type (deepseek_v3 is not among its types at 0.5.9), and the aiter MLA decode's
    # 14 + 2 + 2 = 18 extra kernels a layer (kvplan.engines.sglang.mla_decode:49-57) at 128 / 8 =
    # 16 heads a rank on MI300X.
    spec = load_spec("deepseek-v3")
    assert _decisions(spec, "H200", 8)[0] and _decisions(spec, "MI300X", 8)[0]
    assert _decisions(spec, "MI300X", 8)[4] == 18
    assert _decisions(spec, "H200", 8)[4] == 0


def _steps_ms(spec, engine: str, version: str, gpu: str, tp: int) -> tuple[float, float]:
    """One decode step of 16 requests at 2,048 keys and one 4,096-token prefill chunk, as
    `simulate` (and estimate's inputs) price them."""
    inputs = estimate_inputs(spec, context=8192, kv_dtype="bf16", engine=Engine(engine), gpu=gpu,
                             tp=tp, engine_version=version)
    sim, _ = setup(spec, inputs)
    return (sim.cost.seconds(decode_contexts=[2048] * 16, chunks=[]) * 1e3,
            sim.cost.seconds(decode_contexts=[], chunks=[(0, 4096)]) * 1e3)


@pytest.mark.parametrize(("spec_id", "engine", "version", "gpu", "tp"), [
    ("deepseek-v3", "sglang", "0.5.9", "H200", 8),
    ("deepseek-v3", "sglang", "0.5.9", "MI300X", 8),
    ("deepseek-v2-lite", "sglang", "0.5.9", "MI300X", 1),
    ("qwen3-235b-a22b", "sglang", "0.5.9", "H200", 8),
    ("llama-3.1-8b", "vllm", "0.19.0", "H100", 1),
])
def test_preset_and_config_price_the_same_steps(spec_id, engine, version, gpu, tp):
    preset, config = load_spec(spec_id), load_spec(str(CONFIGS / f"{spec_id}.json"))
    assert _steps_ms(preset, engine, version, gpu, tp) == _steps_ms(config, engine, version,
                                                                    gpu, tp)


def test_rope_scaling_adds_the_rocm_mla_launches_by_hand():
    # DeepSeek-V2-Lite (27 layers, 16 heads: TP 1 is one of the declaration's heads_per_rank) on
    # MI300X under SGLang 0.5.9: its config's yarn rope_scaling adds 18 kernels a layer at the
    # 4 us floor (device_efficiency's kernel floor): 27 x 18 x 4 us = 1.944 ms a decode step.
    spec = load_spec("deepseek-v2-lite")
    bare = replace(spec, position_fields=None)
    with_rope = _steps_ms(spec, "sglang", "0.5.9", "MI300X", 1)[0]
    assert with_rope - _steps_ms(bare, "sglang", "0.5.9", "MI300X", 1)[0] == pytest.approx(
        27 * 18 * 4e-3, rel=1e-9)


def test_engines_refuse_a_preset_as_they_refuse_its_config():
    # TensorRT-LLM 1.1.0's PyTorch backend has no class for GPT2LMHeadModel
    # (kvplan.engines.trtllm.architectures): refused for the bundled name as for the file.
    messages = []
    for model in ("gpt2", str(CONFIGS / "gpt2.json")):
        with pytest.raises(UnmodelledError) as err:
            _steps_ms(load_spec(model), "trtllm", "1.1.0", "H100", 1)
        messages.append(str(err.value).split(": ", 1)[1])
    assert messages[0] == messages[1]


def _trust_remote_code(spec, version: str) -> tuple[bool, bool]:
    return (needs_trust_remote_code(spec.architectures, spec.remote_code, version)
            or vllm_remote_config_reason(spec.remote_config, spec.config_model_type,
                                         spec.architectures) is not None,
            sglang_remote_config_reason(spec.remote_config, spec.config_model_type) is not None)


@pytest.mark.parametrize("spec_id", ["minicpm3-4b", "kimi-k2", "minimax-m2"])
def test_launch_asks_for_remote_code_alike(spec_id):
    # MiniCPM3's config.json names no model_type beside auto_map's MiniCPM3Config (vLLM and
    # SGLang then need its code); kimi_k2 / minimax_m2 are not in SGLang's config registry.
    preset, config = load_spec(spec_id), load_spec(str(CONFIGS / f"{spec_id}.json"))
    assert _trust_remote_code(preset, "0.19.0") == _trust_remote_code(config, "0.19.0")
    assert any(_trust_remote_code(preset, "0.19.0"))


def test_import_writes_architectures_and_position_fields():
    # `kvplan import`'s YAML, read back, keeps what the rules read (DeepSeek-V3's config.json:
    # DeepseekV3ForCausalLM, yarn factor 40 over 4,096 positions).
    path = CONFIGS / "deepseek-v3.json"
    mapping, warnings = spec_mapping_from_config(json.loads(path.read_text()), path=str(path))
    text = spec_yaml_text(mapping, warnings)
    back = parse_spec(yaml.safe_load(text), path="imported.yaml", spec_id="deepseek-v3")
    assert back.architectures == ("DeepseekV3ForCausalLM",)
    assert _rope_scaling(back) == _rope_scaling(load_spec("deepseek-v3"))
    assert _rope_scaling(back).factor == 40
