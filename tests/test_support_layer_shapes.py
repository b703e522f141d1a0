"""Rows made exact by reading attention shapes per layer type as vLLM's model code reads them
(kvplan.sources.hf_layer_shapes; issue 26 item 2): each golden config against the KV bytes
derived here by hand from vLLM 0.32's model code, its vLLM-oracle case worked out by hand, and
the refusals around it (an engine kvplan does not size it for, a vLLM release before the rule).

Sources of the golden configs: tests/data/configs/SOURCES-layer-shapes.md. `GOLDEN_SHAPES` is
merged into tests/test_support.py's GOLDEN (which holds each row exact with its oracle case); the
oracle cases are replayed by tests/test_vllm_oracle.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import KvplanError, SpecError
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import Engine, plan_inputs
from kvplan.sources.hf_config import load_config, spec_mapping_from_config
from tests.oracle.vllm_oracle import oracle_inputs

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
ORACLE = DATA / "oracle"
HF = "https://huggingface.co/"

# id -> (file, KV bytes per token at bf16 over all layers at TP 1, the model's Hub page).
GOLDEN_SHAPES: dict[str, tuple[Path, int, str]] = {
    # MiMoV2FlashForCausalLM: vLLM 0.32 models/mimo_v2.py MiMoV2FlashDecoderLayer (lines
    # 360-470). hybrid_layer_pattern[i] == 1 (39 layers: all but 0, 5, 11, ..., 47) builds
    # MiMoV2Attention with swa_num_key_value_heads 8, swa_head_dim 192, swa_v_head_dim 128 and
    # a window of sliding_window_size 128; the 9 others num_key_value_heads 4, head_dim 192,
    # v_head_dim 128, no window (cache_config.sliding_window = None). Attention(head_size_v=
    # v_head_dim) (lines 326-339) caches K and V of their own sizes: v1/kv_cache_interface.py
    # AttentionSpec.state_content_size_bytes = (head_size + head_size_v) x 2 B per KV head.
    # Per token: 9 x 4 x (192 + 128) x 2 + 39 x 8 x (192 + 128) x 2 = 23,040 + 199,680 =
    # 222,720 B (a sliding layer holds at most its window plus the in-flight tokens).
    "mimo-v2-flash": (CONFIGS / "mimo-v2-flash.json",
                      9 * 4 * (192 + 128) * 2 + 39 * 8 * (192 + 128) * 2,
                      HF + "XiaomiMiMo/MiMo-V2-Flash"),
    # GraniteSWAForCausalLM: vLLM 0.32 registry.py serves it with models/granite.py
    # GraniteForCausalLM. GraniteAttention (lines 160-215): num_key_value_heads 4, head_dim =
    # getattr(config, "head_dim", None) or hidden / heads = 2560 / 20 = 128;
    # granite_layer_attn_params (lines 80-110) gives config.sliding_window 128 to the 18 layers
    # layer_types marks sliding_attention, none to the 6 full ones (0, 4, ..., 20); the
    # attention sinks are a per-head logit (no cache). Per token: 24 x 2 x 4 x 128 x 2 B =
    # 49,152 B.
    "granite-swash-2b": (CONFIGS / "granite-swash-2b.json", 24 * 2 * 4 * 128 * 2,
                         HF + "ibm-granite/granite-swash-2b"),
    # GraniteMoeSWAForCausalLM: vLLM 0.32 registry.py serves it with models/granitemoeshared.py
    # GraniteMoeSharedForCausalLM, whose layers take granitemoe.py GraniteMoeAttention (lines
    # 141-224): num_key_value_heads 4, head_dim = hidden / heads = 1280 / 20 = 64 (never
    # config.head_dim); granite.py granite_layer_attn_params (lines 80-110) gives
    # config.sliding_window 128 to the 20 layers layer_types marks sliding_attention, none to
    # the 8 full ones (0, 3, 7, ..., 27); the sinks are a per-head logit (no cache). Per token:
    # 28 x 2 x 4 x 64 x 2 B = 28,672 B.
    "granite-swash-3b-a600m": (CONFIGS / "granite-swash-3b-a600m.json", 28 * 2 * 4 * 64 * 2,
                               HF + "ibm-granite/granite-swash-3b-a600m"),
    # MiMoV2ForCausalLM (MiMo-V2.5-Pro): vLLM 0.32 models/mimo_v2.py line 997, a subclass of
    # MiMoV2FlashForCausalLM (only packed_modules_mapping differs), so the same
    # MiMoV2FlashDecoderLayer (lines 360-470): hybrid_layer_pattern has 0 at layers 0, 7, 15,
    # 23, 31, 39, 47, 55, 62 and 69 (10 global layers: num_key_value_heads 8, head_dim 192,
    # v_head_dim 128, no window) and 1 at the 60 others (swa_num_key_value_heads 8,
    # swa_head_dim 192, swa_v_head_dim 128, window sliding_window_size 128). Per token:
    # 10 x 8 x (192 + 128) x 2 + 60 x 8 x (192 + 128) x 2 = 51,200 + 307,200 = 358,400 B.
    "mimo-v2.5-pro": (CONFIGS / "mimo-v2.5-pro.json",
                      10 * 8 * (192 + 128) * 2 + 60 * 8 * (192 + 128) * 2,
                      HF + "XiaomiMiMo/MiMo-V2.5-Pro"),
    # Step3p5ForCausalLM: vLLM 0.32 models/step3p5.py Step3p5DecoderLayer (lines 396-460):
    # every layer num_attention_groups 8 KV heads of head_dim 128; layer_types' sliding layers
    # (33 of the first 45: all but 0, 4, ..., 44) take attention_other_setting's 96 query
    # heads, 8 KV heads and head_dim 128 and a window of sliding_window 512 (Step3p5Attention,
    # lines 146-160, per_layer_sliding_window); `cache_config.sliding_window = None` (line 411)
    # leaves the 12 full layers without one. Attention (lines 236-246) caches K and V of
    # head_dim: AttentionSpec 2 x 128 x 2 B per KV head. Per token: 45 x 8 x 2 x 128 x 2 B =
    # 184,320 B. (Step3p5Config truncates the 48 layer_types entries to num_hidden_layers; the
    # 3 MTP layers are Step3p5MTP's.)
    "step-3.5-flash": (CONFIGS / "step-3.5-flash.json", 45 * 8 * 2 * 128 * 2,
                       HF + "stepfun-ai/Step-3.5-Flash"),
}


# Each golden's bytes and its exact read: tests/test_support.py
# (test_golden_configs_equal_the_hand_derived_bytes, over GOLDEN with these merged in).


def test_mimo_v2_flash_layer_shapes() -> None:
    spec, _ = load_config(CONFIGS / "mimo-v2-flash.json")
    full = [i for i, w in enumerate(spec.layer_windows) if w is None]
    assert full == [0, 5, 11, 17, 23, 29, 35, 41, 47]
    assert {w for w in spec.layer_windows if w is not None} == {128}
    sliding = spec.attention_at(1)
    assert (sliding.num_key_value_heads, sliding.head_dim, sliding.v_head_dim) == (8, 192, 128)
    glob = spec.attention_at(0)
    assert (glob.num_key_value_heads, glob.head_dim, glob.v_head_dim) == (4, 192, 128)
    # moe_layer_freq [0, 1, ..., 1]: layer 0 dense, 47 MoE layers (mimo_v2.py is_moe_layer).
    assert spec.moe is not None and spec.moe.first_k_dense_replace == 1


def test_mimo_v2_flash_oracle_by_hand() -> None:
    # tests/data/oracle/mimo-v2-flash: 6 layers, hybrid_layer_pattern [0, 1, 1, 1, 1, 0]. vLLM
    # 0.32 CPU, block 128, 1 GiB, max_model_len 8192, 2048 batched tokens, no async scheduling.
    # Pages: full 128 x 4 x 320 x 2 = 327,680 B, sliding 128 x 8 x 320 x 2 = 655,360 B;
    # kv_cache_utils.py unify_kv_cache_spec_page_size doubles the full layers' block to 256
    # (log: "kv cache group sizes (256, 128, 128)"). Groups of 2 layers: one full, two
    # sliding; a block = 2 x 655,360 = 1,310,720 B; 1 GiB // that = 819 blocks. Per request:
    # full cdiv(8192, 256) = 32, sliding 2 x (cdiv(min(127 + 2048, 8192), 128) + 1) = 2 x 18:
    # 68 blocks; 819 / 68 = 12.04x, int(12.044... x 8192) = 98,665 tokens.
    run = json.loads((ORACLE / "mimo-v2-flash" / "results.json").read_text())[0]
    assert (run["output"]["kv_cache_tokens"], run["output"]["max_concurrency"]) == (98665, 12.04)
    spec, _ = load_config(ORACLE / "mimo-v2-flash" / "config.json")
    plan = plan_capacity(spec, oracle_inputs(run["output"], run["argv"]))
    assert plan.reported_kv_cache_tokens == 98665 == int(819 / 68 * 8192)


def test_granite_swash_2b_oracle_by_hand() -> None:
    # tests/data/oracle/granite-swash-2b: 8 layers (full 0 and 4). vLLM 0.32 CPU, block 128,
    # 1 GiB, max_model_len 8192, 2048 batched tokens. One page: 128 x 4 x (128 + 128) x 2 =
    # 262,144 B for every layer; groups of 2 layers (2 full, 6 sliding: 6 is not under 1.5 x
    # 2): one full, three sliding; a block = 2 x 262,144 B, 1 GiB // that = 2,048 blocks. Per
    # request: full cdiv(8192, 128) = 64, sliding 3 x (cdiv(127 + 2048, 128) + 1) = 3 x 18:
    # 118 blocks; 2048 / 118 = 17.36x, int(17.355... x 8192) = 142,179 tokens.
    run = json.loads((ORACLE / "granite-swash-2b" / "results.json").read_text())[0]
    assert (run["output"]["kv_cache_tokens"], run["output"]["max_concurrency"]) == (142179,
                                                                                    17.36)
    spec, _ = load_config(ORACLE / "granite-swash-2b" / "config.json")
    plan = plan_capacity(spec, oracle_inputs(run["output"], run["argv"]))
    assert plan.reported_kv_cache_tokens == 142179 == int(2048 / 118 * 8192)


def test_granite_swa_refused_before_vllm_registered_it() -> None:
    spec, _ = load_config(CONFIGS / "granite-swash-2b.json")
    with pytest.raises(KvplanError, match="0.29"):
        plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=1 << 30,
                                         engine_version="0.28"))
    plan = plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=1 << 30,
                                           engine_version="0.29"))
    assert plan.reported_kv_cache_tokens > 0


def test_granite_swa_layer_types_default_as_its_config_class() -> None:
    # GraniteSWAConfig (transformers 5.19) without layer_types: full where i % 4 == 0.
    config = json.loads((CONFIGS / "granite-swash-2b.json").read_text())
    del config["layer_types"], config["sliding_window"]
    mapping, _ = spec_mapping_from_config(config, path="c.json")
    types = mapping["attention"]["layer_types"]
    assert [i for i, t in enumerate(types) if t == "full_attention"] == [0, 4, 8, 12, 16, 20]
    assert mapping["attention"]["sliding_window"] == 128


@pytest.mark.parametrize("field", ["hybrid_layer_pattern", "sliding_window_size",
                                   "swa_num_key_value_heads", "swa_head_dim"])
def test_mimo_v2_flash_without_a_field_vllm_reads_is_refused(field: str) -> None:
    config = json.loads((CONFIGS / "mimo-v2-flash.json").read_text())
    del config[field]
    with pytest.raises(SpecError) as err:
        spec_mapping_from_config(config, path="c.json")
    assert err.value.field == field


def test_mimo_v2_flash_unread_cache_field_is_refused() -> None:
    # kvplan.sources.hf_fields_table's row: a field named like a cache field that
    # models/mimo_v2.py does not read (here the transformers-native layer_types spelling).
    config = json.loads((CONFIGS / "mimo-v2-flash.json").read_text())
    config["layer_types"] = ["full_attention"] * 48
    with pytest.raises(SpecError) as err:
        spec_mapping_from_config(config, path="c.json")
    assert err.value.field == "layer_types"


def test_mimo_v2_flash_v_head_dims_default_to_the_k_size() -> None:
    # MiMoV2Attention: v_head_dim None -> head_dim (a cache of 2 x 192 per KV head).
    config = json.loads((CONFIGS / "mimo-v2-flash.json").read_text())
    del config["swa_v_head_dim"], config["v_head_dim"]
    mapping, _ = spec_mapping_from_config(config, path="c.json")
    assert mapping["attention"]["v_head_dim"] == 192
    assert mapping["attention"]["sliding_layers"]["v_head_dim"] == 192


@pytest.mark.parametrize(("engine", "version"), [("sglang", None), ("trtllm", None),
                                                 ("vllm", "0.31"), ("vllm", "0.19")])
def test_mimo_v2_flash_refused_where_not_sized(engine: str, version: str | None) -> None:
    # SGLang and TensorRT-LLM serve MiMo-V2-Flash, but kvplan does not read their pools for
    # shapes that differ by layer type; vLLM before 0.32 (architectures.SIZED_SINCE).
    spec, _ = load_config(CONFIGS / "mimo-v2-flash.json")
    inputs = plan_inputs(context=8192, kv_budget_bytes=1 << 30, engine=Engine(engine),
                         engine_version=version)
    with pytest.raises(KvplanError):
        plan_capacity(spec, inputs)


def test_mimo_v2_5_pro_oracle_by_hand() -> None:
    # tests/data/oracle/mimo-v2.5-pro: 8 layers, hybrid_layer_pattern [0, 1, 1, 1, 1, 1, 1, 0]
    # (the published first eight). vLLM 0.32 CPU, block 128, 1 GiB, max_model_len 8192, 2048
    # batched tokens. Global and sliding layers have one page size, 128 x 8 x (192 + 128) x 2 =
    # 655,360 B (log: "kv cache group sizes (128, 128, 128, 128)"); groups of 2 layers (2 full,
    # 6 sliding): one full, three sliding; a block = 2 x 655,360 B, 1 GiB // that = 819 blocks.
    # Per request: full cdiv(8192, 128) = 64, sliding 3 x (cdiv(127 + 2048, 128) + 1) = 3 x 18:
    # 118 blocks; 819 / 118 = 6.94x, int(6.9406... x 8192) = 56,858 tokens.
    run = json.loads((ORACLE / "mimo-v2.5-pro" / "results.json").read_text())[0]
    assert (run["output"]["kv_cache_tokens"], run["output"]["max_concurrency"]) == (56858, 6.94)
    spec, _ = load_config(ORACLE / "mimo-v2.5-pro" / "config.json")
    plan = plan_capacity(spec, oracle_inputs(run["output"], run["argv"]))
    assert plan.reported_kv_cache_tokens == 56858 == int(819 / 118 * 8192)


def test_mimo_v2_5_pro_weighs_its_published_tensors() -> None:
    # The published checkpoint's tensors (a report listing its 34 safetensors files, code index
    # id 62727537601; SOURCES-layer-shapes.md): 1,023,244,718,976 elements. vLLM's
    # MiMoV2ForCausalLM loads no MTP layer (model.mtp.layers.0-2, each eh_proj 6,144 x 12,288,
    # five norms of 6,144, a dense MLP 3 x 6,144 x 16,384, a sliding layer's attention
    # (128 x 192 + 8 x 192 + 8 x 128) x 6,144 + 128 x 128 x 6,144 and 128 sinks:
    # 644,905,088), and kvplan
    # counts no fp8 block scale (qkv 70 x 216 x 48, experts 69 x 384 x 3 x 768, dense and MTP
    # MLPs 4 x 3 x 6,144, MTP qkv 3 x 216 x 48: 61,877,376), no sink (60 x 128) and no
    # e_score_correction_bias (69 x 384): what is left is kvplan's count.
    from kvplan.weights.params import count_params

    spec, _ = load_config(CONFIGS / "mimo-v2.5-pro.json")
    scales = 70 * 216 * 48 + 69 * 384 * 3 * 768 + 4 * 3 * 6144 + 3 * 216 * 48
    assert scales == 61_877_376
    assert count_params(spec).total == (1_023_244_718_976 - 3 * 644_905_088 - scales
                                        - 60 * 128 - 69 * 384)


def test_mimo_v2_with_a_vision_config_is_refused() -> None:
    # vLLM 0.32 transformers_utils/model_arch_config_convertor.py MimoV2ModelArchConfigConvertor:
    # a vision_config turns the architectures into MiMoV2OmniForCausalLM (refused row).
    config = json.loads((CONFIGS / "mimo-v2.5-pro.json").read_text())
    config["vision_config"] = {"depth": 28}
    with pytest.raises(SpecError) as err:
        spec_mapping_from_config(config, path="c.json")
    assert err.value.field == "vision_config"


def test_granite_swash_3b_a600m_oracle_by_hand() -> None:
    # tests/data/oracle/granite-swash-3b-a600m: 8 layers (layer_types' first 8: full 0, 3, 7),
    # vocab 1024, 8 experts (2 per token). vLLM 0.32 CPU, block 128, 1 GiB, max_model_len 8192,
    # 2048 batched tokens. One page: 128 x 4 x (64 + 64) x 2 = 131,072 B for every layer;
    # groups of 3 layers (3 full, 5 sliding): one full, two sliding; a block = 3 x 131,072 B,
    # 1 GiB // that = 2,730 blocks. Per request: full cdiv(8192, 128) = 64, sliding
    # 2 x (cdiv(127 + 2048, 128) + 1) = 2 x 18: 100 blocks; 27.30x, 27.3 x 8192 = 223,641 tokens.
    run = json.loads((ORACLE / "granite-swash-3b-a600m" / "results.json").read_text())[0]
    assert (run["output"]["kv_cache_tokens"], run["output"]["max_concurrency"]) == (223641,
                                                                                    27.3)
    spec, _ = load_config(ORACLE / "granite-swash-3b-a600m" / "config.json")
    plan = plan_capacity(spec, oracle_inputs(run["output"], run["argv"]))
    assert plan.reported_kv_cache_tokens == 223641 == int(2730 / 100 * 8192)


def test_granite_swash_3b_a600m_weighs_its_name() -> None:
    # "3b-a600m": per layer q and o 1280 x 1280, k and v 1280 x 256, 48 experts of 3 x 512 x
    # 1280 (4 per token), the shared MLP 3 x 1280 x 1280, the router 48 x 1280; the embedding
    # 100,352 x 1280, tied. kvplan also counts a shared-expert gate of 1280 per layer that
    # granitemoeshared.py does not build (kvplan.weights.params: 28 x 1280 too many).
    from kvplan.weights.params import count_params

    spec, _ = load_config(CONFIGS / "granite-swash-3b-a600m.json")
    counts = count_params(spec)
    assert round(counts.total / 1e9, 1) == 3.0 and round(counts.active / 1e6, -2) == 600


def test_granitemoe_swa_layer_types_default_as_its_config_class() -> None:
    # GraniteMoeSWAConfig (transformers 5.19) without layer_types: full where i % 4 == 0;
    # sliding_window 128.
    config = json.loads((CONFIGS / "granite-swash-3b-a600m.json").read_text())
    del config["layer_types"], config["sliding_window"]
    mapping, _ = spec_mapping_from_config(config, path="c.json")
    types = mapping["attention"]["layer_types"]
    assert [i for i, t in enumerate(types) if t == "full_attention"] == [0, 4, 8, 12, 16, 20, 24]
    assert mapping["attention"]["sliding_window"] == 128


@pytest.mark.parametrize(("engine", "version"), [("vllm", "0.28"), ("sglang", None)])
def test_granitemoe_swa_refused_where_not_sized(engine: str, version: str | None) -> None:
    # vLLM before 0.29 has no registry entry (architectures.SIZED_SINCE); SGLang serves it with
    # a hybrid sliding-window pool kvplan has not read (pools.SGLANG_UNREAD_HYBRID_SWA).
    spec, _ = load_config(CONFIGS / "granite-swash-3b-a600m.json")
    with pytest.raises(KvplanError):
        plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=1 << 30,
                                         engine=Engine(engine), engine_version=version))
    plan = plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=1 << 30,
                                           engine_version="0.29"))
    assert plan.reported_kv_cache_tokens > 0
