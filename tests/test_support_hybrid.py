"""Support-table rows made exact by reading more of vLLM 0.32's model code (issue 26, hybrids
and the rows beside them): each golden config here backs one *exact* row of
kvplan/sources/support.json, with its per-token KV bytes derived by hand from the vLLM file named
beside it, and a vLLM-oracle case (tests/data/oracle/<case>, replayed by test_vllm_oracle.py).
Provenance of each config: tests/data/configs/SOURCES-hybrid-rows.md.

tests/test_support.py merges GOLDEN into its own table, so the table's checks (the hand-derived
bytes, every exact row has a golden config of its architecture, no golden config idle) cover these
rows too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.kv.cache import rank_caches
from kvplan.sources.hf_config import load_config
from kvplan.sources.support import EXACT, support_table

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
ORACLE = DATA / "oracle"
HF = "https://huggingface.co/"

# id -> (config, KV bytes per token at bf16 over every layer of one rank at TP 1, Hub page).
# K and V: 2 x KV heads x head size x 2 B per attention layer (vLLM 0.32
# v1/kv_cache_interface.py AttentionSpec); MLA: one latent of kv_lora_rank + qk_rope_head_dim
# (MLAAttentionSpec); a recurrent layer holds a per-request state, nothing per token.
GOLDEN: dict[str, tuple[Path, int, str]] = {
    # Qwen3_5ForCausalLM (models/qwen3_5.py, the class the Qwen3.5 wrapper builds its language
    # model from, with the same get_mamba_state_shape_from_config and the same config handler,
    # models/config.py Qwen3_5ForCausalLMConfig): Qwen3.5-9B's text_config saved on its own;
    # 8 full_attention of 32 layer_types x 2 x 4 KV heads x 256 x 2 B.
    "qwen3.5-9b-text": (CONFIGS / "qwen3.5-9b-text.json", 8 * 2 * 4 * 256 * 2,
                        HF + "Qwen/Qwen3.5-9B"),
    # Qwen3_5MoeForCausalLM (models/qwen3_5.py): Qwen3.6-35B-A3B's text_config;
    # 10 full_attention of 40 x 2 x 2 x 256 x 2 B.
    "qwen3.6-35b-a3b-text": (CONFIGS / "qwen3.6-35b-a3b-text.json", 10 * 2 * 2 * 256 * 2,
                             HF + "Qwen/Qwen3.6-35B-A3B"),
    # models/olmo_hybrid.py: layer_types "full_attention" at i % 4 == 3 (8 of 32) build
    # OlmoHybridAttention with num_key_value_heads 30 of hidden_size / num_attention_heads =
    # 3840 / 30 = 128 (config.head_dim is never read): 8 x 2 x 30 x 128 x 2 B.
    "olmo-hybrid-7b": (CONFIGS / "olmo-hybrid-7b.json", 8 * 2 * 30 * 128 * 2,
                       HF + "allenai/Olmo-Hybrid-7B"),
    # models/dbrx.py DbrxAttention: n_layers 40, attn_config.kv_n_heads 8 KV heads of
    # d_model / n_heads = 6144 / 48 = 128: 40 x 2 x 8 x 128 x 2 B.
    "dbrx-instruct": (CONFIGS / "dbrx-instruct.json", 40 * 2 * 8 * 128 * 2,
                      HF + "databricks/dbrx-instruct"),
    # models/glm4_moe_lite.py (DeepseekV2MLAAttention; ModelConfig.is_deepseek_mla holds for
    # glm4_moe_lite): 47 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B; the MTP layer
    # (num_nextn_predict_layers 1) is not in num_hidden_layers.
    "glm-4.7-flash": (CONFIGS / "glm-4.7-flash.json", 47 * (512 + 64) * 2,
                      HF + "zai-org/GLM-4.7-Flash"),
    # Llama4ForCausalLM (models/llama4.py, the class mllama4.py builds the wrapper's language
    # model from): Scout's text_config; 48 x 2 x 8 x 128 x 2 B (chunked layers: a page a token).
    "llama-4-scout-text": (CONFIGS / "llama-4-scout-text.json", 48 * 2 * 8 * 128 * 2,
                           HF + "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
    # Gemma3nForCausalLM (models/gemma3n.py, the class gemma3n_mm.py builds with
    # architectures=["Gemma3nForCausalLM"]): E4B's text_config; the last 15 of 35 layers reuse
    # earlier layers' KV: 20 x 2 x 2 x 256 x 2 B.
    "gemma-3n-e4b-text": (CONFIGS / "gemma-3n-e4b-text.json", (35 - 15) * 2 * 2 * 256 * 2,
                          HF + "google/gemma-3n-E4B-it"),
    # Lfm2VlForConditionalGeneration (models/lfm2_vl.py over lfm2.py): LFM2-VL-1.6B's language
    # model is LFM2-1.2B: 6 full_attn_idxs of 16 layers x 2 x 8 KV heads x 64 x 2 B.
    "lfm2-vl-1.6b": (CONFIGS / "lfm2-vl-1.6b.json", 6 * 2 * 8 * 64 * 2,
                     HF + "LiquidAI/LFM2-VL-1.6B"),
    # GLM4VForCausalLM (models/glm4v.py: GLM4VModel over chatglm.py's ChatGLMModel, the same
    # GLMAttention): 40 num_layers x 2 x multi_query_group_num 2 x (4096 / 32 = 128) x 2 B.
    "glm-4v-9b": (CONFIGS / "glm-4v-9b.json", 40 * 2 * 2 * 128 * 2, HF + "zai-org/glm-4v-9b"),
}
# The exact rows these configs back, and their vLLM-oracle cases.
ROWS = {
    "Qwen3_5ForCausalLM": ("qwen3.5-9b-text", "qwen3.5-9b-text"),
    "Qwen3_5MoeForCausalLM": ("qwen3.6-35b-a3b-text", "qwen3.6-35b-a3b-text"),
    "OlmoHybridForCausalLM": ("olmo-hybrid-7b", "olmo-hybrid-7b"),
    "DbrxForCausalLM": ("dbrx-instruct", "dbrx-instruct"),
    "Glm4MoeLiteForCausalLM": ("glm-4.7-flash", "glm-4.7-flash"),
    "Llama4ForCausalLM": ("llama-4-scout-text", "llama-4-scout-text"),
    "Gemma3nForCausalLM": ("gemma-3n-e4b-text", "gemma-3n-e4b-text"),
    "Lfm2VlForConditionalGeneration": ("lfm2-vl-1.6b", "lfm2-vl-1.6b"),
    "GLM4VForCausalLM": ("glm-4v-9b", "glm-4v-9b"),
}


@pytest.mark.parametrize("architecture", sorted(ROWS))
def test_rows_are_exact_with_golden_and_oracle(architecture: str) -> None:
    golden, oracle = ROWS[architecture]
    row = support_table()[architecture]
    assert (row.status, row.golden, row.oracle) == (EXACT, golden, oracle)
    assert architecture in json.loads(GOLDEN[golden][0].read_text())["architectures"]
    oracle_config = json.loads((ORACLE / oracle / "config.json").read_text())
    assert oracle_config["architectures"] == [architecture]
    runs = json.loads((ORACLE / oracle / "results.json").read_text())
    assert runs and all(run["output"]["ok"] for run in runs)


def _layer_types(name: str) -> list[str]:
    return json.loads((CONFIGS / f"{name}.json").read_text())["layer_types"]


def test_layer_counts_are_the_configs() -> None:
    assert _layer_types("qwen3.5-9b-text").count("full_attention") == 8
    assert _layer_types("qwen3.6-35b-a3b-text").count("full_attention") == 10
    assert _layer_types("olmo-hybrid-7b").count("full_attention") == 8
    assert len(_layer_types("olmo-hybrid-7b")) == 32


def test_text_only_classes_equal_their_wrappers() -> None:
    # The text-only class and the multimodal wrapper build the same language model from the
    # same fields: the same caches, page for page, attention and state.
    for text, wrapper in (("qwen3.5-9b-text", "qwen3.5-9b"),
                          ("qwen3.6-35b-a3b-text", "qwen3.6-35b-a3b"),
                          ("llama-4-scout-text", "llama-4-scout"),
                          ("gemma-3n-e4b-text", "gemma-3n-e4b")):
        caches = [rank_caches(load_config(CONFIGS / f"{name}.json")[0], kv_dtype="bf16")
                  for name in (text, wrapper)]
        assert caches[0].bytes_per_token == caches[1].bytes_per_token, text
        assert caches[0].state_bytes == caches[1].state_bytes, text


def test_olmo_hybrid_state_by_hand() -> None:
    # models/olmo_hybrid.py get_mamba_state_shape_from_config ->
    # MambaStateShapeCalculator.gated_delta_net_state_shape (layers/mamba/mamba_utils.py):
    # conv (linear_conv_kernel_dim 4 - 1, key_head_dim 96 x 30 key heads x 2 + value_head_dim
    # 192 x 30 value heads), temporal (30 value heads, 192, 96); bf16 (2 B) for both at
    # --mamba-ssm-cache-dtype auto on a GPU (gated_delta_net_state_dtype: the model dtype), no
    # config handler taking a dtype from the config for this class. 24 linear_attention layers.
    spec, _ = load_config(CONFIGS / "olmo-hybrid-7b.json")
    per_layer = (3 * (96 * 30 * 2 + 192 * 30) + 30 * 192 * 96) * 2
    assert rank_caches(spec, kv_dtype="bf16").state_bytes == 24 * per_layer


def test_olmo_hybrid_ignores_a_qwen_ssm_dtype(tmp_path: Path) -> None:
    # mamba_ssm_dtype is read for Qwen3.5 only (models/config.py Qwen3_5ForCausalLMConfig);
    # olmo_hybrid.py's state dtype comes from the model and cache config.
    config = json.loads((CONFIGS / "olmo-hybrid-7b.json").read_text())
    config["mamba_ssm_dtype"] = "float32"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    base, _ = load_config(CONFIGS / "olmo-hybrid-7b.json")
    assert (rank_caches(spec, kv_dtype="bf16").state_bytes
            == rank_caches(base, kv_dtype="bf16").state_bytes)


def _estimate(config: dict, tmp_path: Path) -> tuple[int, str, str]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["estimate", str(path), "--context", "8192"])
    return result.exit_code, result.stdout, result.stderr


def test_olmo_hybrid_layer_type_it_does_not_know_is_refused(tmp_path: Path) -> None:
    # vLLM builds full attention for any entry but "linear_attention": a "sliding_attention"
    # entry would be sized as full attention there; kvplan refuses rather than guess which
    # was meant.
    config = json.loads((CONFIGS / "olmo-hybrid-7b.json").read_text())
    config["layer_types"][3] = "sliding_attention"
    code, out, err = _estimate(config, tmp_path)
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert "layer_types" in line and "sliding_attention" in line


def test_olmo_hybrid_defaults_follow_its_config_class(tmp_path: Path) -> None:
    # transformers' OlmoHybridConfig.__post_init__ (the config vLLM reads): layer_types full at
    # i % 4 == 3, linear heads = num_attention_heads, key head dim int(0.75 x hidden / heads),
    # value head dim twice that. Without them the published values come back.
    config = json.loads((CONFIGS / "olmo-hybrid-7b.json").read_text())
    for key in ("layer_types", "linear_num_key_heads", "linear_num_value_heads",
                "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"):
        del config[key]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    base, _ = load_config(CONFIGS / "olmo-hybrid-7b.json")
    assert rank_caches(spec, kv_dtype="bf16") == rank_caches(base, kv_dtype="bf16")


def test_dbrx_kv_heads_come_from_attn_config(tmp_path: Path) -> None:
    # A different attn_config.kv_n_heads changes the cache (models/dbrx.py reads nothing else).
    config = json.loads((CONFIGS / "dbrx-instruct.json").read_text())
    config["attn_config"]["kv_n_heads"] = 4
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 40 * 2 * 4 * 128 * 2
    # Without it: refused, the field named (never sized from a guessed head count).
    del config["attn_config"]["kv_n_heads"]
    code, out, err = _estimate(config, tmp_path)
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert "attn_config.kv_n_heads" in line


@pytest.mark.parametrize(("golden", "published_b"), [
    # DBRX: 132B total parameters (Databricks' model card); GLM-4.7-Flash: 30B-A3B class
    # (31.2B on the card, MTP layer excluded here).
    ("dbrx-instruct", 132.0), ("glm-4.7-flash", 30.0),
])
def test_weights_read_from_the_same_fields(golden: str, published_b: float) -> None:
    from kvplan.weights.params import count_params

    spec, _ = load_config(GOLDEN[golden][0])
    assert abs(count_params(spec).total / 1e9 - published_b) / published_b < 0.05


def test_nemotron_h_with_per_layer_block_configs_is_refused(tmp_path: Path) -> None:
    # A Nemotron-H "Puzzle" config (block_configs, read by vLLM's nemotron_h.py through the
    # remote config's get_nemotron_h_config_for_layer) under the plain NemotronHForCausalLM
    # name: refused, never sized from its top-level fields.
    config = json.loads((CONFIGS / "nemotron-nano-9b-v2.json").read_text())
    config["block_configs"] = [{"attention": {"num_key_value_heads": 2}}] * 56
    code, out, err = _estimate(config, tmp_path)
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert "block_configs" in line


def test_lfm2_vl_state_by_hand(tmp_path: Path) -> None:
    # models/lfm2_vl.py get_mamba_state_shape_from_config: short_conv_state_shape with
    # intermediate_size = text_config.hidden_size and conv_L_cache: 10 conv layers x (3 - 1)
    # x 2048 x 2 B, the text model's own number.
    spec, _ = load_config(CONFIGS / "lfm2-vl-1.6b.json")
    assert rank_caches(spec, kv_dtype="bf16").state_bytes == 10 * (3 - 1) * 2048 * 2
    # The wrapper takes hidden_size where Lfm2ForCausalLM alone takes conv_dim (lfm2.py): a
    # conv_dim apart from hidden_size changes the text model's state, not the wrapper's.
    config = json.loads((CONFIGS / "lfm2-vl-1.6b.json").read_text())
    config["text_config"]["conv_dim"] = 1024
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").state_bytes == 10 * (3 - 1) * 2048 * 2
    text = dict(config["text_config"], architectures=["Lfm2ForCausalLM"])
    path.write_text(json.dumps(text))
    spec, _ = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").state_bytes == 10 * (3 - 1) * 1024 * 2


def test_lfm2_mlp_width_by_hand(tmp_path: Path) -> None:
    # models/lfm2.py Lfm2MLP: block_auto_adjust_ff_dim turns the published intermediate_size
    # 12,288 (LFM2-VL-1.6B's text_config, LFM2-1.2B) into int(2 x 12,288 / 3) = 8,192, x 1.0,
    # rounded up to block_multiple_of 256: 8,192. Without the adjustment the width is as given.
    config = json.loads((CONFIGS / "lfm2-vl-1.6b.json").read_text())
    text = dict(config["text_config"], architectures=["Lfm2ForCausalLM"])
    path = tmp_path / "config.json"
    path.write_text(json.dumps(text))
    spec, _ = load_config(path)
    assert spec.mlp.intermediate_size == 8192
    # 10,000 -> int(20,000 / 3) = 6,666, x 1.5 = 9,999, up to 10,240 (a multiple of 256). The
    # width is block_ff_dim where the file states it (transformers' Lfm2Config pops it over
    # intermediate_size), so it goes too; stated beside another intermediate_size, it wins.
    no_ff = {k: v for k, v in text.items() if k != "block_ff_dim"}
    path.write_text(json.dumps(dict(no_ff, intermediate_size=10_000,
                                    block_ffn_dim_multiplier=1.5)))
    assert load_config(path)[0].mlp.intermediate_size == 10_240
    path.write_text(json.dumps(dict(text, intermediate_size=10_000)))
    assert load_config(path)[0].mlp.intermediate_size == 8192
    path.write_text(json.dumps(dict(text, block_auto_adjust_ff_dim=False)))
    assert load_config(path)[0].mlp.intermediate_size == 12_288


@settings(max_examples=40, deadline=None)
@given(kinds=st.lists(st.booleans(), min_size=2, max_size=24).filter(
    lambda k: any(k) and not all(k)))
def test_olmo_hybrid_cache_follows_any_layer_pattern(kinds: list[bool]) -> None:
    # Any mix of layer kinds (True: full_attention, False: linear_attention; vLLM's
    # OlmoHybridConfig asks for at least one of each): KV per token is the attention layers'
    # 2 x 30 x 128 x 2 B each, the state the linear layers' (3 x 11,520 + 30 x 192 x 96) x 2 B.
    import tempfile

    config = json.loads((CONFIGS / "olmo-hybrid-7b.json").read_text())
    config["num_hidden_layers"] = len(kinds)
    config["layer_types"] = ["full_attention" if k else "linear_attention" for k in kinds]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_text(json.dumps(config))
        spec, _ = load_config(path)
    caches = rank_caches(spec, kv_dtype="bf16")
    full = sum(kinds)
    assert caches.bytes_per_token == full * 2 * 30 * 128 * 2
    assert caches.state_bytes == (len(kinds) - full) * (3 * 11520 + 30 * 192 * 96) * 2
