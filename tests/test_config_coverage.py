"""Families kvplan was not built on (issue 26): exact, or refused with one line; never a guess.

The configs are tests/data/oracle/<name>/config.json: real config.json files of the named models
with only what the cache does not depend on shrunk (num_hidden_layers, keeping the layer pattern,
vocab_size, intermediate_size / ffn_hidden_size); their provenance is in
tests/data/oracle/SOURCES-coverage.md. Each golden test restores the published layer count and
derives the bytes by hand, following vLLM 0.32's model code (file named in each test); each
family also has recorded vLLM 0.32 oracle runs (tests/test_vllm_oracle.py replays them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.cli.app import app
from kvplan.engines.base import plan_inputs
from kvplan.engines.caches import stage_caches
from kvplan.kv.cache import estimate
from kvplan.kv.kinds import RankCaches
from kvplan.model.attention import AttentionKind
from kvplan.model.spec import ModelSpec
from kvplan.sources.hf_config import load_config, spec_mapping_from_config
from kvplan.sources.spec_yaml import parse_spec

ORACLE = Path(__file__).parent / "data" / "oracle"
runner = CliRunner()


def real(name: str, **restore: object) -> dict:
    config = json.loads((ORACLE / name / "config.json").read_text())
    config.update(restore)
    return config


def cpu_caches(spec: ModelSpec) -> RankCaches:
    """One rank's caches as vLLM 0.32's CPU build (the oracle's) holds them."""
    inputs = plan_inputs(context=8192, kv_budget_bytes=1 << 30, platform="cpu",
                         engine_version="0.32")
    return RankCaches(layers=stage_caches(spec, inputs))


def spec_of(config: dict, path: str = "cfg/config.json"):
    mapping, warnings = spec_mapping_from_config(config, path=path)
    return parse_spec(mapping, path=path, spec_id="x"), warnings


# ---------------------------------------------------------------------------------------------
# Golden numbers, by hand.


def test_command_r7b_pattern_and_window_one_wider() -> None:
    # CohereForAI/c4ai-command-r7b-12-2024 (https://huggingface.co/CohereForAI/
    # c4ai-command-r7b-12-2024/blob/main/config.json): 32 layers, "sliding_window": 4096,
    # "sliding_window_pattern": 4 (no layer_types), 32 heads, 8 KV heads, head_dim 128.
    # transformers' Cohere2Config turns the pattern into layer_types: layer i slides unless
    # (i + 1) % 4 == 0 -> 24 sliding + 8 full. vLLM 0.32 models/commandr.py CohereAttention
    # passes per_layer_sliding_window = sliding_window + 1 = 4097 ("cohere swa layer sees
    # [pos - sliding_window, pos]").
    # Per token per layer: 8 KV heads x 128 x 2 (K, V) x 2 B (bf16) = 4,096 B; 32 layers:
    # 131,072 B per token.
    # One sequence of 16,384 tokens, block 16 (steady decode): full layers
    # cdiv(16384, 16) = 1,024 pages; sliding layers cdiv(4097 - 1, 16) + 1 = 257 pages; a page
    # is 16 x 4,096 = 65,536 B: (8 x 1,024 + 24 x 257) x 65,536 = 14,360 x 65,536
    # = 941,096,960 B.
    spec, warnings = spec_of(real("command-r7b", num_hidden_layers=32))
    assert spec.exact and spec.model_type == "cohere2"
    assert spec.layer_windows == (4097, 4097, 4097, None) * 8
    est = estimate(spec, context=16384, block_size=16)
    assert est.bytes_per_token_per_layer == 4096 and est.bytes_per_token == 131_072
    assert est.num_sliding_layers == 24 and est.sliding_window == 4097
    assert est.bytes_per_sequence == 941_096_960
    assert not any("no layer_types or pattern" in w for w in warnings)
    assert any("4097" in w for w in warnings)


def test_cohere2_layer_types_win_over_the_pattern() -> None:
    # Cohere2Config builds layer_types from sliding_window_pattern only when layer_types is absent.
    config = real("command-r7b", layer_types=["sliding_attention", "full_attention"] * 4)
    spec, _ = spec_of(config)
    assert spec.layer_windows == (4097, None) * 4


def test_glm4_9b_kv_heads_from_multi_query_group_num() -> None:
    # THUDM/glm-4-9b-chat (https://huggingface.co/THUDM/glm-4-9b-chat/blob/main/config.json):
    # model_type chatglm, "num_layers": 40, "num_attention_heads": 32, "hidden_size": 4096,
    # "multi_query_attention": true, "multi_query_group_num": 2, "kv_channels": 128.
    # vLLM 0.32 models/chatglm.py GLMAttention: total_num_kv_heads = multi_query_group_num
    # (multi_query_attention on), head_dim = hidden_size / num_attention_heads = 128.
    # Per token: 40 layers x 2 KV heads x 128 x 2 (K, V) x 2 B = 40,960 B.
    spec, _ = spec_of(real("glm-4-9b", num_layers=40))
    assert spec.exact and spec.num_hidden_layers == 40
    assert spec.attention.num_key_value_heads == 2 and spec.attention.head_dim == 128
    assert estimate(spec, context=1).bytes_per_token == 40_960


def test_chatglm_without_multi_query_caches_every_head() -> None:
    # chatglm.py: num_attention_heads KV heads when multi_query_attention is off (ChatGLM-6B).
    spec, _ = spec_of(real("glm-4-9b", multi_query_attention=False))
    assert spec.attention.num_key_value_heads == 32 and spec.kind is AttentionKind.mha


def test_mamba_2_8b_pure_mamba1_state() -> None:
    # state-spaces/mamba-2.8b-hf (https://huggingface.co/state-spaces/mamba-2.8b-hf/blob/main/
    # config.json): 64 layers, hidden_size 2560, intermediate_size 5120, state_size 16,
    # conv_kernel 4, no attention. vLLM 0.32 models/mamba.py get_mamba_state_shape_from_config
    # -> MambaStateShapeCalculator.mamba1_state_shape: conv (conv_kernel - 1, intermediate) =
    # (3, 5120), ssm (intermediate, state_size) = (5120, 16). On the CPU platform (the oracle's)
    # the SSM state is float32 ("Reset SSM cache type to float32"), conv bf16 (float32
    # checkpoint served in bf16): 3 x 5120 x 2 + 5120 x 16 x 4 = 30,720 + 327,680
    # = 358,400 B per layer; 64 layers: 22,937,600 B per request, nothing per token.
    spec, _ = spec_of(real("mamba-2.8b", num_hidden_layers=64, n_layer=64))
    assert spec.exact and spec.kind is AttentionKind.none
    assert spec.num_attention_layers == 0 and spec.num_recurrent_layers == 64
    caches = cpu_caches(spec)
    assert caches.bytes_per_token == 0
    assert caches.state_bytes == 64 * 358_400 == 22_937_600


def test_mamba_codestral_pure_mamba2_state() -> None:
    # mistralai/Mamba-Codestral-7B-v0.1 (https://huggingface.co/mistralai/
    # Mamba-Codestral-7B-v0.1/blob/main/config.json): 64 layers, hidden_size 4096, expand 2,
    # num_heads 128, head_dim 64, n_groups 8, state_size 128, conv_kernel 4, bfloat16.
    # vLLM 0.32 models/mamba2.py: intermediate = expand x hidden = 8192;
    # mamba2_state_shape: conv (conv_kernel - 1, intermediate + 2 x n_groups x state) =
    # (3, 8192 + 2048 = 10240), ssm (heads, head_dim, state) = (128, 64, 128). CPU platform:
    # conv bf16, ssm float32: 3 x 10240 x 2 + 128 x 64 x 128 x 4 = 61,440 + 4,194,304
    # = 4,255,744 B per layer; 64 layers: 272,367,616 B per request.
    spec, _ = spec_of(real("mamba-codestral-7b", num_hidden_layers=64))
    caches = cpu_caches(spec)
    assert spec.exact and caches.bytes_per_token == 0
    assert caches.state_bytes == 64 * 4_255_744 == 272_367_616


def test_zamba2_each_hybrid_layer_owns_its_kv() -> None:
    # Zamba2-2.7B as transformers' Zamba2Config describes it (hidden 2560, 32 heads; see
    # SOURCES-coverage.md). vLLM 0.32 models/zamba2.py: the shared transformer blocks share
    # weights, not KV ("KV cache is unique for every attention layer"): one Attention per
    # hybrid layer, 32 KV heads (no KV-head count given to QKVParallelLinear) of
    # attention_head_dim = 2 x 2560 / 32 = 160. Per hybrid layer per token: 32 x 160 x 2 x 2 B
    # = 20,480 B; the shrunk config has 2 hybrid layers of 12: 40,960 B per token.
    spec, _ = spec_of(real("zamba2-2.7b"))
    assert spec.exact and spec.attention.num_key_value_heads == 32
    assert spec.attention.head_dim == 160
    assert spec.num_attention_layers == 2 and spec.num_recurrent_layers == 12
    assert estimate(spec, context=1).bytes_per_token == 40_960


# ---------------------------------------------------------------------------------------------
# Fail closed: an unknown model_type.

STANDARD = {"model_type": "frobnicator", "num_hidden_layers": 4, "hidden_size": 256,
            "num_attention_heads": 8, "intermediate_size": 512, "vocab_size": 1000,
            "torch_dtype": "bfloat16", "rms_norm_eps": 1e-6, "use_cache": True}


def write(tmp_path: Path, config: dict) -> Path:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_unknown_type_with_standard_fields_is_answered_not_exact(tmp_path: Path) -> None:
    result = runner.invoke(app, ["estimate", str(write(tmp_path, STANDARD)), "-c", "4096",
                                 "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["exact"] is False
    fields = {a["field"]: a for a in data["assumptions"]}
    assert {"model_type", "head_dim", "num_key_value_heads"} <= set(fields)
    assert fields["num_key_value_heads"]["value"].startswith("8 ")
    assert all(set(a) == {"field", "value", "why", "affects"} and a["why"]
               for a in data["assumptions"])
    # The KV rests on the guessed model_type and head shape; the MLP guess on weights alone.
    assert data["kv_exact"] is False
    assert fields["model_type"]["affects"] == fields["head_dim"]["affects"] == "kv"
    assert fields["mlp"]["affects"] == "weights"
    # 4 layers x 8 heads x 32 x 2 x 2 B = 4,096 B per token (MHA, head_dim 256 / 8).
    assert data["bytes_per_token"] == 4096
    table = runner.invoke(app, ["estimate", str(tmp_path / "m"), "-c", "4096"],
                          env={"COLUMNS": "80"})
    assert "Assumptions" in table.stdout and "num_key_value_heads" in table.stdout


def test_known_family_is_exact_in_json() -> None:
    result = runner.invoke(app, ["estimate", "llama-3-8b", "-f", "json"])
    data = json.loads(result.stdout)
    assert data["exact"] is True and data["assumptions"] == []


@pytest.mark.parametrize(("field", "value"), [
    ("swa_num_key_value_heads", 4), ("global_head_dim", 512), ("sliding_window_pattern", 4),
    ("no_rope_layers", [1, 1, 1, 0]), ("num_kv_shared_layers", 2), ("kv_lora_rank_v2", 8),
    ("layers_block_type", ["mamba"] * 4), ("attention_type_list", ["global"] * 4)])
def test_unknown_type_with_an_unread_cache_field_is_refused(tmp_path: Path, field: str,
                                                            value: object) -> None:
    folder = write(tmp_path, {**STANDARD, field: value})
    result = runner.invoke(app, ["estimate", str(folder)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and field in lines[0] and "config.json" in lines[0]
    assert result.stdout == ""


def test_unknown_type_window_without_layer_types_is_refused() -> None:
    # Cohere2-as-unknown: a window and nothing that says which layers slide.
    with pytest.raises(SpecError, match="sliding_window: 4096 given without layer_types"):
        spec_of({**STANDARD, "sliding_window": 4096})


def test_unknown_type_reads_layer_types_as_vllm_llama_does() -> None:
    spec, _ = spec_of({**STANDARD, "sliding_window": 128,
                       "layer_types": ["sliding_attention"] * 3 + ["full_attention"]})
    assert spec.layer_windows == (128, 128, 128, None) and not spec.exact
    assert any(a.field == "layer_types" for a in spec.assumptions)


def test_unknown_type_kv_heads_under_another_name() -> None:
    # vLLM's get_total_num_kv_heads reads n_head_kv, num_kv_heads, num_key_value_heads,
    # multi_query_group_num, num_attention_groups: any one is read; two that disagree refused.
    spec, _ = spec_of({**STANDARD, "num_kv_heads": 2})
    assert spec.attention.num_key_value_heads == 2
    with pytest.raises(SpecError, match="num_key_value_heads: 4 disagrees with num_kv_heads"):
        spec_of({**STANDARD, "num_kv_heads": 2, "num_key_value_heads": 4})


def test_weight_only_fields_never_block() -> None:
    spec, _ = spec_of({**STANDARD, "n_shared_experts": 1, "mlp_only_layers": [0],
                       "decoder_sparse_step": 1, "attention_dropout": 0.0,
                       "layer_norm_eps": 1e-5, "qk_layernorm": True})
    assert spec.num_hidden_layers == 4


def test_import_yaml_keeps_the_assumptions(tmp_path: Path) -> None:
    folder = write(tmp_path, STANDARD)
    out = tmp_path / "spec.yaml"
    result = runner.invoke(app, ["import", str(folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    from kvplan.sources.resolve import load_spec

    spec = load_spec(str(out))
    assert not spec.exact and spec.assumptions[0].field == "model_type"


def test_exaone4_layer_types_and_pattern() -> None:
    # LGAI-EXAONE/EXAONE-4.0-32B (https://huggingface.co/LGAI-EXAONE/EXAONE-4.0-32B/blob/main/
    # config.json): 64 layers, layer_types "LLLG" repeated (3 sliding of 4096 + 1 full), 8 KV
    # heads x 128. vLLM 0.32 models/exaone4.py: config.sliding_window on the layers layer_types
    # marks sliding, no widening. Per token: 64 x 8 x 128 x 2 x 2 B = 262,144 B; 48 sliding.
    config = real("exaone-4.0-32b", num_hidden_layers=64,
                  layer_types=["sliding_attention"] * 3 + ["full_attention"])
    config["layer_types"] = config["layer_types"] * 16
    spec, _ = spec_of(config)
    est = estimate(spec, context=8192)
    assert spec.exact and est.bytes_per_token == 262_144 and est.num_sliding_layers == 48
    assert est.sliding_window == 4096
    # Without layer_types, Exaone4Config's integer pattern (default 4) gives the same layers.
    del config["layer_types"]
    config["sliding_window_pattern"] = 4
    assert spec_of(config)[0].layer_windows == spec.layer_windows


def test_infinity_in_a_field_kvplan_never_reads_does_not_block(tmp_path: Path) -> None:
    # Mamba-Codestral's published config carries "time_step_limit": [0.0, Infinity] (JSON's
    # extension): a weight/compute-only field, dropped; Infinity anywhere kvplan reads is still
    # refused (tests/test_hostile.py).
    text = (ORACLE / "mamba-codestral-7b" / "config.json").read_text().rstrip().rstrip("}")
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(text + ', "time_step_limit": [0.0, Infinity]}')
    spec, _ = load_config(folder)
    assert spec.recurrent is not None and spec.recurrent.num_heads == 128
    (folder / "config.json").write_text(text + ', "state_size_max": Infinity}')
    with pytest.raises(SpecError, match="Infinity is not a JSON number"):
        load_config(folder)


def test_gemma4_global_layers_have_their_own_shape() -> None:
    # Gemma-4-31B's text model (geometry quoted from its config.json in a public test, see
    # SOURCES-coverage.md): 60 layers, layer_types full every 6th, num_key_value_heads 16 x
    # head_dim 256 on the sliding layers (window 1024); attention_k_eq_v with
    # num_global_key_value_heads 4 and global_head_dim 512 on the full ones. transformers'
    # Gemma4TextConfig puts the global shape in per_layer_config; vLLM 0.32 models/gemma4.py
    # Gemma4DecoderLayer reads it per layer.
    # Per token: 50 sliding x 16 x 256 x 2 x 2 B = 50 x 16,384 = 819,200 B (the public test's
    # "800 * 1024"); 10 global x 4 x 512 x 2 x 2 B = 10 x 8,192 = 81,920 B; 901,120 B in all.
    # Read as one shape (every layer 16 x 256), it would be 60 x 16,384 = 983,040 B.
    config = real("gemma-4-31b", num_hidden_layers=60,
                  layer_types=["full_attention" if i % 6 == 5 else "sliding_attention"
                               for i in range(60)])
    spec, _ = spec_of(config)
    est = estimate(spec, context=1)
    assert spec.exact and est.num_sliding_layers == 50
    assert est.bytes_per_token == 901_120
    assert spec.attention_at(5).head_dim == 512 and spec.attention_at(5).num_key_value_heads == 4
    assert spec.attention_at(0).head_dim == 256 and spec.attention_at(0).num_key_value_heads == 16


def test_gemma4_without_k_eq_v_keeps_the_kv_heads() -> None:
    # Gemma4TextConfig overrides the global KV heads only under attention_k_eq_v.
    spec, _ = spec_of(real("gemma-4-31b", attention_k_eq_v=False))
    assert spec.attention_at(5).num_key_value_heads == 16
    assert spec.attention_at(5).head_dim == 512


def test_per_layer_shapes_refused_where_not_modelled() -> None:
    spec, _ = spec_of(real("gemma-4-31b"))
    for engine in ("sglang", "trtllm"):
        result = runner.invoke(app, ["estimate", str(ORACLE / "gemma-4-31b"), "--engine",
                                     engine])
        assert result.exit_code == 2 and "differ by layer type" in result.stderr
    result = runner.invoke(app, ["compare", str(ORACLE / "gemma-4-31b")])
    assert result.exit_code == 2 and "differ by layer type" in result.stderr
    assert spec.layer_attention


def test_olmo3_layer_types() -> None:
    # allenai/Olmo-3-7B (https://huggingface.co/allenai/Olmo-3-1025-7B/blob/main/config.json):
    # 32 layers, 32 heads = 32 KV heads, hidden 4096 (head_dim 128), sliding_window 4096,
    # layer_types three sliding to one full. vLLM 0.32 serves Olmo3ForCausalLM with its
    # Transformers backend (models/transformers/base.py: layer_types[i] == "sliding_attention"
    # takes config.sliding_window). Per token: 32 x 32 x 128 x 2 x 2 B = 524,288 B; 24 slide.
    config = real("olmo3-7b", num_hidden_layers=32)
    config["layer_types"] = config["layer_types"][:4] * 8
    spec, _ = spec_of(config)
    est = estimate(spec, context=1)
    assert spec.exact and est.bytes_per_token == 524_288 and est.num_sliding_layers == 24
    # Without layer_types, Olmo3Config builds the same 3 : 1 pattern.
    del config["layer_types"]
    assert spec_of(config)[0].layer_windows == spec.layer_windows


def test_smollm3_nope_layers_change_no_cache() -> None:
    # HuggingFaceTB/SmolLM3-3B (https://huggingface.co/HuggingFaceTB/SmolLM3-3B/blob/main/
    # config.json): 36 layers, 16 heads, 4 KV heads, hidden 2048 (head_dim 128),
    # no_rope_layers (every 4th layer NoPE), use_sliding_window false. SmolLM3Config makes a
    # layer slide only with use_sliding_window on; NoPE changes positions, not the cache.
    # Per token: 36 x 4 x 128 x 2 x 2 B = 73,728 B, every layer full.
    config = real("smollm3-3b", num_hidden_layers=36, no_rope_layers=[1, 1, 1, 0] * 9,
                  layer_types=["full_attention"] * 36)
    spec, _ = spec_of(config)
    assert spec.exact and estimate(spec, context=1).bytes_per_token == 73_728
    assert spec.sliding_window is None
    # With use_sliding_window and no layer_types (the published file lists them, all full),
    # SmolLM3Config slides the NoPE layers.
    unlisted = {k: v for k, v in config.items() if k != "layer_types"}
    spec, _ = spec_of({**unlisted, "use_sliding_window": True, "sliding_window": 4096})
    assert spec.layer_windows == (None, None, None, 4096) * 9


def test_smollm3_published_file_is_tied() -> None:
    # The published SmolLM3-3B config.json (tests/data/configs/smollm3-3b.json,
    # SOURCES-attention.md) has no tie_word_embeddings: SmolLM3Config's default, True
    # (transformers 5.19 models/smollm3/configuration_smollm3.py, what vLLM 0.32's Transformers
    # backend loads), ties lm_head to the embedding. Parameters by hand: embedding
    # 128256 x 2048 = 262,668,288; per layer q / o 2 x 2048 x 2048 + k / v 2 x 2048 x 512
    # (4 KV heads x 128) + gate / up / down 3 x 2048 x 11008 + two norms 2 x 2048 = 78,123,008,
    # x 36 = 2,812,428,288; final norm 2048: 3,075,098,624 (no lm_head of its own).
    spec, warnings = load_config(Path(__file__).parent / "data" / "configs" / "smollm3-3b.json")
    assert spec.tie_word_embeddings
    assert "tie_word_embeddings absent: smollm3 default (true)" in warnings
    per_layer = 2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 11008 + 2 * 2048
    params = 128256 * 2048 + 36 * per_layer + 2048
    assert params == 3_075_098_624
    path = Path(__file__).parent / "data" / "configs" / "smollm3-3b.json"
    result = runner.invoke(app, ["estimate", str(path), "-c", "4096", "--gpu", "h100", "-f",
                                 "json"])
    assert json.loads(result.stdout)["params"] == params


def test_ernie45_and_glm4_0414() -> None:
    # baidu/ERNIE-4.5-0.3B-PT (https://huggingface.co/baidu/ERNIE-4.5-0.3B-PT/blob/main/
    # config.json): 18 layers, 16 heads, 2 KV heads, head_dim 128; vLLM 0.32 models/ernie45.py
    # is LlamaForCausalLM. Per token: 18 x 2 x 128 x 2 x 2 B = 18,432 B.
    spec, _ = spec_of(real("ernie-4.5-0.3b", num_hidden_layers=18))
    assert spec.exact and estimate(spec, context=1).bytes_per_token == 18_432
    # THUDM/GLM-4-9B-0414 (https://huggingface.co/THUDM/GLM-4-9B-0414/blob/main/config.json):
    # 40 layers, 32 heads, 2 KV heads, head_dim 128. Per token: 40 x 2 x 128 x 2 x 2 B =
    # 40,960 B. vLLM models/glm4.py Glm4Attention passes no per-layer window, so a config's
    # sliding_window reaches every layer through CacheConfig (issue 26; vLLM's CPU build on
    # oracle case glm-4-9b-0414-swa: 399,457 tokens, not the 131,072 of no window).
    spec, _ = spec_of(real("glm-4-9b-0414", num_hidden_layers=40, sliding_window=4096))
    assert spec.exact and estimate(spec, context=1).bytes_per_token == 40_960
    assert spec.sliding_window == 4096 and spec.layer_windows == (4096,) * 40


def test_falcon_mamba_7b() -> None:
    # tiiuae/falcon-mamba-7b (https://huggingface.co/tiiuae/falcon-mamba-7b/blob/main/
    # config.json): 64 layers, hidden 4096, intermediate_size 8192 (stated; expand 16 is not
    # what vLLM reads), state 16, conv 4. vLLM 0.32 registry: FalconMambaForCausalLM ->
    # models/mamba.py (mamba1_state_shape with hf_config.intermediate_size). CPU platform: conv
    # 3 x 8192 x 2 B + ssm 8192 x 16 x 4 B (float32) = 49,152 + 524,288 = 573,440 B per layer.
    spec, _ = spec_of(real("falcon-mamba-7b", num_hidden_layers=64))
    caches = cpu_caches(spec)
    assert spec.exact and caches.bytes_per_token == 0
    assert caches.state_bytes == 64 * 573_440


def test_plan_json_carries_exact_and_assumptions(tmp_path: Path) -> None:
    folder = write(tmp_path, {**STANDARD, "max_position_embeddings": 4096})
    result = runner.invoke(app, ["plan", str(folder), "-n", "2", "-c", "4096", "-f", "json"])
    assert result.exit_code in (0, 3), result.output
    data = json.loads(result.stdout)
    assert data["exact"] is False and data["assumptions"][0]["field"] == "model_type"
    result = runner.invoke(app, ["plan", "llama-3-8b", "-n", "2", "-c", "4096", "-f", "json"])
    data = json.loads(result.stdout)
    assert data["exact"] is True and data["assumptions"] == []


def test_unknown_type_kv_heads_as_vllm_generic_reads_them() -> None:
    # multi_query_group_num / num_attention_groups: read by vLLM's get_total_num_kv_heads too.
    spec, _ = spec_of({**STANDARD, "multi_query_group_num": 2})
    assert spec.attention.num_key_value_heads == 2 and not spec.exact
    spec, _ = spec_of({**STANDARD, "num_attention_groups": 4, "n_layer": 4})
    assert spec.attention.num_key_value_heads == 4


def test_olmo2_is_read_field_by_field() -> None:
    # allenai/OLMo-2-1124-7B: once answered through the unknown-type path (exact false, a
    # Llama-style guess); now a row of kvplan.sources.hf_text (the Transformers backend's
    # Olmo2Config), exact; the oracle run (tests/test_vllm_oracle.py) equals vLLM's.
    # 32 layers x 32 KV heads x (4096 / 32 = 128) x 2 x 2 B = 524,288 B per token.
    spec, _ = spec_of(real("olmo2-7b", num_hidden_layers=32))
    assert spec.exact and spec.assumptions == ()
    assert estimate(spec, context=1).bytes_per_token == 524_288



def test_refined_web_falcon_is_refused() -> None:
    # tiiuae/falcon-7b as first published (model_type RefinedWebModel, RWForCausalLM): vLLM
    # 0.32 refuses the architecture ("supported in vLLM until v0.28.0"); kvplan refuses the
    # unknown model_type over its multi_query field rather than size it.
    config = {"model_type": "RefinedWebModel", "architectures": ["RWForCausalLM"],
              "hidden_size": 4544, "n_head": 71, "n_layer": 32, "multi_query": True,
              "parallel_attn": True, "bias": False, "vocab_size": 65024}
    with pytest.raises(SpecError, match="multi_query: model_type 'RefinedWebModel'"):
        spec_of(config)


NEW_FAMILIES = ["command-r7b", "glm-4-9b", "exaone-4.0-32b", "mamba-2.8b", "mamba-codestral-7b",
                "zamba2-2.7b", "gemma-4-31b", "olmo3-7b", "smollm3-3b", "ernie-4.5-0.3b",
                "glm-4-9b-0414", "falcon-mamba-7b", "olmo2-7b", "command-r-v01"]


@pytest.mark.parametrize("name", NEW_FAMILIES)
def test_import_yaml_round_trip(tmp_path: Path, name: str) -> None:
    # `kvplan import` writes what the config.json reader built, and reading that YAML back gives
    # the same caches (per-layer shapes, kind none, recurrent state, assumptions).
    from kvplan.sources.hf_config import spec_yaml_text
    from kvplan.sources.resolve import load_spec

    direct = load_config(ORACLE / name)[0]
    mapping, warnings = spec_mapping_from_config(real(name), path=str(ORACLE / name))
    out = tmp_path / f"{name}.yaml"
    out.write_text(spec_yaml_text(mapping, warnings))
    again = load_spec(str(out))
    for field in ("attention", "layer_attention", "layer_windows", "layer_mixers", "recurrent",
                  "kv_sources", "assumptions", "num_hidden_layers"):
        assert getattr(again, field) == getattr(direct, field), field


def test_command_r_v01_has_no_sliding_layer() -> None:
    # CohereForAI/c4ai-command-r-v01 (https://huggingface.co/CohereForAI/c4ai-command-r-v01/
    # blob/main/config.json): model_type cohere, 40 layers, 64 heads = 64 KV heads, hidden
    # 8192 (head_dim 128). vLLM 0.32 models/commandr.py: CohereConfig is "v1", no per-layer
    # window. Per token: 40 x 64 x 128 x 2 x 2 B = 1,310,720 B.
    spec, _ = spec_of(real("command-r-v01", num_hidden_layers=40))
    assert spec.exact and spec.sliding_window is None
    assert estimate(spec, context=1).bytes_per_token == 1_310_720
    # A sliding_window in config.json reaches every layer through CacheConfig (no layer_types:
    # engine/arg_utils.py keeps it; layers/attention/attention.py hands it to each layer that
    # passes none). vLLM's CPU build, oracle case command-r-v01-swa (window 512, 4096-token
    # requests): 12,483 tokens, concurrency 3.05 -- not the 8,192 / 2.00 of no window.
    spec, _ = spec_of(real("command-r-v01", num_hidden_layers=40, sliding_window=4096))
    assert spec.layer_windows == (4096,) * 40
