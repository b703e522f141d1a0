"""Refusals issue 26's blind check found unneeded (tests/data/blind26, notes.json), each now
answered from the real config as vLLM 0.32 reads it; the numbers are worked out by hand below
(the shrunken copies' recorded vLLM runs are compared in tests/benches/blind_configs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.cli import app
from kvplan.sources.hf_config import spec_mapping_from_config

REAL = Path(__file__).parent / "data" / "blind26" / "real"


def estimate(name: str) -> dict:
    result = CliRunner().invoke(app, ["estimate", str(REAL / f"{name}.json"), "-f", "json",
                                      "-c", "4096"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_starcoder2_7b_leftover_fields_do_not_block() -> None:
    # bigcode/starcoder2-7b carries attention_softmax_in_fp32, scale_attention_softmax_in_fp32
    # and scale_attn_weights: none is a Starcoder2Config field (transformers 5.19
    # models/starcoder2) and vLLM 0.32 reads none (served by models/transformers/base.py).
    # 32 layers x 2 (K, V) x 4 KV heads x head 4608 / 36 = 128 x 2 B = 65,536 B per token.
    plan = estimate("starcoder2-7b")
    assert plan["bytes_per_token"] == 65536 and plan["exact"] is True


def test_starcoder2_tiny_random_attention_probs_dropout_prob_does_not_block() -> None:
    # hf-internal-testing/tiny-random-Starcoder2ForCausalLM (blind batch 9) carries BERT's
    # attention_probs_dropout_prob 0.1: training-time dropout; transformers 5.19's Starcoder2
    # reads attention_dropout only, and vLLM 0.32 reads the name only in blip2.py's Q-Former.
    # 2 layers x 2 (K, V) x 2 KV heads x head 32 / 4 = 8 x 2 B = 128 B per token.
    plan = estimate("starcoder2-tiny-random-hf-internal")
    assert plan["bytes_per_token"] == 2 * 2 * 2 * (32 // 4) * 2 == 128


def test_mamba_ssm_cfg_empty_does_not_block() -> None:
    # state-spaces/mamba-1.4b-hf: ssm_cfg {} (the mamba_ssm package's options), read by neither
    # MambaConfig nor vLLM's models/mamba.py. State per request (layers/mamba/mamba_utils.py
    # mamba1_state_shape; bf16): conv (conv_kernel 4 - 1) x intermediate 4096 x 2 B = 24,576 and
    # ssm 4096 x state_size 16 x 2 B = 131,072, x 48 layers = 7,471,104 B.
    plan = estimate("mamba-1.4b")
    assert plan["bytes_per_token"] == 0 and plan["state_bytes_per_request"] == 7471104


def test_mamba_ssm_cfg_with_options_is_refused() -> None:
    config = json.loads((REAL / "mamba-1.4b.json").read_text())
    with pytest.raises(SpecError, match="ssm_cfg"):
        spec_mapping_from_config({**config, "ssm_cfg": {"layer": "Mamba2"}}, path="x.json")


def test_gpt_bigcode_pre_allocate_kv_cache_does_not_block() -> None:
    # defog/sqlcoder: pre_allocate_kv_cache is the original GPTBigCode code's switch; vLLM's
    # paged cache ignores it. GPTBigCodeConfig (configuration_gpt_bigcode.py:83): multi_query ->
    # 1 KV head; 40 layers x 2 x 1 x head 6144 / 48 = 128 x 2 B = 20,480 B per token.
    plan = estimate("gpt-bigcode-sqlcoder")
    assert plan["bytes_per_token"] == 20480


def test_nemotron_h_attention_head_dim_equal_to_head_dim() -> None:
    # nvidia/Nemotron-H-8B-Base-8K: attention_head_dim 128, no head_dim. vLLM 0.32
    # models/nemotron_h.py:453-456 takes config.head_dim (NemotronHConfig default 128) and never
    # attention_head_dim. Pattern "M-M-M-M*-..." holds 4 "*": 4 x 2 x 8 KV heads x 128 x 2 B =
    # 16,384 B per token.
    plan = estimate("nemotron-h-8b-base")
    assert plan["bytes_per_token"] == 16384
    # Another value than the head_dim vLLM sizes by is refused (the weights would not fit).
    config = json.loads((REAL / "nemotron-h-8b-base.json").read_text())
    with pytest.raises(SpecError, match="attention_head_dim"):
        spec_mapping_from_config({**config, "attention_head_dim": 64}, path="x.json")


def test_nemotron_h_mamba_d_state_equal_to_ssm_state_size(tmp_path: Path) -> None:
    # nvidia/Nemotron-H-47B-Reasoning-128K-FP8 (blind batch 3): mamba_d_state 256 beside
    # ssm_state_size 256. vLLM 0.32 models/nemotron_h.py:393 (mixer) and :809 (state shape) read
    # config.ssm_state_size only; transformers 5.19 NemotronHConfig has no mamba_d_state. Its
    # hybrid_override_pattern (98 layers) holds 5 "*": 5 x 2 x 8 KV heads x 128 x 2 B = 20,480 B
    # per token. (The real file stays refused for its quantization_config, which names no
    # quant_method: see tests/data/blind26/notes.json; the check here is on the same file
    # without it.)
    config = json.loads((REAL / "nemotron-h-47b-reasoning-fp8.json").read_text())
    config.pop("quantization_config")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json", "-c", "4096"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["bytes_per_token"] == 20480
    # Another value than the ssm_state_size vLLM sizes the states by is refused.
    with pytest.raises(SpecError, match="mamba_d_state"):
        spec_mapping_from_config({**config, "mamba_d_state": 128}, path="x.json")


def test_nemotron_h_layers_block_type_is_the_pattern() -> None:
    # transformers 5.19 configuration_nemotron_h.py: layers_block_type (attribute_map's
    # layer_types) wins; hybrid_override_pattern is read only when it is absent (line 160), the
    # layer count is its length (num_hidden_layers property, line 234), and legacy names are
    # remapped (configuration_utils._LEGACY_LAYER_TYPE_REMAP: mamba -> linear_attention,
    # attention -> full_attention). nemotron_h.py:598 builds layer i from the pattern property.
    # Nemotron-3-Ultra: 108 entries, 12 "attention": 12 x 2 x 2 KV heads x 128 x 2 B = 12,288.
    assert estimate("nemotron-3-ultra-550b-a55b")["bytes_per_token"] == 12288
    # Nemotron-3.5-Lightning: 52 entries, 6 "attention": 6 x 1,024 = 6,144 B per token.
    assert estimate("nemotron-3.5-lightning-30b-a3b-nvfp4")["bytes_per_token"] == 6144
    # layers_block_type before a stated hybrid_override_pattern, as NemotronHConfig reads them.
    config = json.loads((REAL / "nemotron-3.5-lightning-30b-a3b-nvfp4.json").read_text())
    mapping, warnings = spec_mapping_from_config(
        {**config, "hybrid_override_pattern": "*" * 52}, path="x.json")
    assert mapping["layer_types"].count("full_attention") == 6
    assert any("hybrid_override_pattern ignored" in w for w in warnings)
    with pytest.raises(SpecError, match="layers_block_type"):
        spec_mapping_from_config({**config, "layers_block_type": ["mamba", "conv"]},
                                 path="x.json")


def test_modelopt_mixed_precision_is_weights_only() -> None:
    # nvidia Qwen3.6-27B NVFP4: modelopt quant_algo MIXED_PRECISION (quantized_layers: FP8
    # attention, W4A16_NVFP4 MLP) describes the weights; kv_cache_scheme fp8 sets the cache
    # (utils/torch_utils.py get_kv_cache_quant_algo_string). 64 layers, every 4th full
    # attention: 16 x 2 x 4 KV heads x 256 x 1 B = 32,768 B per token; exact false (weights),
    # kv_exact true.
    plan = estimate("qwen3.6-27b-nvfp4")
    assert plan["bytes_per_token"] == 32768 and plan["kv_dtype"] == "fp8"
    assert plan["exact"] is False and plan["kv_exact"] is True
    assert [a["affects"] for a in plan["assumptions"]] == ["weights"]
    # Qwen3.6-35B-A3B: no KV scheme (vLLM auto: bf16); 40 layers, 10 full: 10 x 2 x 2 x 256 x
    # 2 B = 20,480 B per token.
    plan = estimate("qwen3.6-35b-a3b-nvfp4")
    assert plan["bytes_per_token"] == 20480 and plan["kv_exact"] is True


def test_attention_free_block_is_max_model_len_on_vllm_032() -> None:
    # vLLM 0.32 model_executor/models/config.py:708-709 (MambaModelConfig, prefix caching off,
    # the default for attention-free models): mamba_block_size = max_model_len; v1/engine/
    # core.py:352 sets cache_config.block_size to the smallest group block: 8192 here, as the
    # recorded run of the shrunken mamba-1.4b logs (tests/data/blind26/shrunk/mamba-1.4b).
    args = ["estimate", str(REAL / "mamba-1.4b.json"), "-f", "json", "-c", "8192",
            "--platform", "cpu", "--kv-budget-gib", "1"]
    result = CliRunner().invoke(app, [*args, "--engine-version", "0.32"])
    assert result.exit_code == 0 and json.loads(result.stdout)["block_size"] == 8192
    # core.py sets it from 0.19.1 (:273); 0.18.1 has no such line and keeps CacheConfig's,
    # the platform's block (not checked against a run of those versions).
    result = CliRunner().invoke(app, [*args, "--engine-version", "0.21"])
    assert result.exit_code == 0 and json.loads(result.stdout)["block_size"] == 8192
    result = CliRunner().invoke(app, [*args, "--engine-version", "0.18"])
    assert result.exit_code == 0 and json.loads(result.stdout)["block_size"] == 128


def test_nemotron_h_megatron_leftovers_are_unread() -> None:
    # blind batch 11's Nemotron-H micro test model: mamba_num_groups 8 (n_groups 8),
    # mamba_state_dim 128 (ssm_state_size 256), num_query_groups 8 (num_key_value_heads 4).
    # transformers 5.19 NemotronHConfig declares none (its __post_init__ renames mamba_n_groups
    # only); vLLM 0.32 models/nemotron_h.py reads n_groups, ssm_state_size and
    # num_key_value_heads (:398, :443, :806-816). Pattern M-M-M-M*-M-M: one attention layer,
    # 2 x 4 KV heads x head_dim 128 x 2 B = 2,048 B per token; six Mamba-2 layers, each a conv
    # state of (conv_kernel 4 - 1) x (80 heads x 80 + 2 x 8 groups x 256) = 31,488 bf16 values
    # (62,976 B) and an SSM state of 80 x 80 x 256 float32 values (NemotronHConfig's
    # mamba_ssm_cache_dtype; 6,553,600 B): 6 x 6,616,576 = 39,699,456 B per request (by
    # mamba_state_dim 128 it would be 6 x 3,339,776). vLLM's CPU build on the shrunken copy:
    # 157 blocks of 3,328 tokens, 61,244 tokens, 7.48x, kvplan equal (blind_configs.py).
    plan = estimate("nemotron-h-micro-test03")
    assert plan["bytes_per_token"] == 2048
    assert plan["num_recurrent_layers"] == 6 and plan["state_bytes_per_request"] == 39699456


def test_glm_5_3_index_share_for_mtp_iteration_is_not_the_refusal() -> None:
    # nvidia/GLM-5.3-NVFP4: index_share_for_mtp_iteration is read only by an MTP draft's
    # proposer (vLLM 0.32 v1/spec_decode/llm_base_proposer.py:1592-1603: step 0 computes the
    # indexer's top-k, later steps reuse it); MTP layers build their indexer either way
    # (models/deepseek_v32/attention.py:179-199), the target's layers never read it. The file
    # was refused next for index_topk_freq 4 (offset 3), now answered: vLLM skips the indexer,
    # and its cache, on 57 of the 78 layers (attention.py:166-177), as kvplan reads it since
    # (kvplan.sources.hf_index_cache; the golden bytes: tests/test_index_cache.py).
    config = json.loads((REAL / "glm-5.3-nvfp4-nvidia.json").read_text())
    mapping, _ = spec_mapping_from_config(config, path="x.json")
    assert len(mapping["attention"]["indexer"]["skipped_layers"]) == 57
    # On GLM-5.1's golden (answered), the field changes nothing, whatever its value.
    golden = json.loads((Path(__file__).parent / "data" / "configs" / "glm-5.1.json").read_text())
    base, _ = spec_mapping_from_config(golden, path="x.json")
    for value in (True, False):
        shared, _ = spec_mapping_from_config({**golden, "index_share_for_mtp_iteration": value},
                                             path="x.json")
        assert shared == base
