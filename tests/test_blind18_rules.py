"""The three rules blind batch 18 (task sizefix60) led to, each held to a frozen file of the batch
(tests/data/blind26/real/) with the bytes worked out by hand.

1. GLM-5 / DeepSeek-V3.2 files that leave the indexer fields out still get vLLM's indexer cache:
   vLLM 0.32 builds GlmMoeDsaForCausalLM and DeepseekV32ForCausalLM from models/deepseek_v32/,
   whose attention reads config.index_topk on every layer (attention.py:65, the sparse path
   always), and transformers 5.19's config classes fill the index_* fields
   (configuration_glm_moe_dsa.py:125-127: index_topk 2048, index_head_dim 128, index_n_heads 32;
   configuration_deepseek_v32.py:120-122: 2048, 128, 64). aiconfigurator's earlier trimmed
   GLM-5-FP8 copy has none; kvplan had sized it as plain MLA (89,856 B/token on an H100).
2. Llama-4's `nope_layer_interval` (Meta's pre-release name, in ktransformers' Maverick FP8
   config) is read by neither Llama4TextConfig (its field is no_rope_layer_interval,
   configuration_llama4.py:168-183) nor models/llama4.py (no_rope_layers, :184 and :324): kvplan
   had refused the file for it; it is answered from text_config since.
3. A Llama4ForConditionalGeneration file with no text_config (ktransformers' flat Scout config)
   is refused naming text_config: Llama4Config builds Llama4TextConfig() defaults then
   (configuration_llama4.py:254-256), reading none of the top-level text fields; transformers
   5.19 does not even load this one (its top-level rope_scaling: AttributeError
   max_position_embeddings). kvplan had refused it for boi_token_index, a Llama4Config token id
   it covers since."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kvplan.cli import app

REAL = Path(__file__).parent / "data" / "blind26" / "real"
CONFIGS = Path(__file__).parent / "data" / "configs"


def _estimate(path: Path, *args: str) -> dict:
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json", "-c", "4096", *args])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_glm5_fp8_trimmed_copy_gets_the_class_default_indexer() -> None:
    plan = _estimate(REAL / "glm-5-fp8-aic-trimmed-2f6fff5.json", "--gpu", "H100")
    # 78 layers x (MLA latent: (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B (bf16: auto on an
    # H100) = 1,152 B, + indexer keys: index_head_dim 128 x 1 B (fp8) + 128 / 128 x 4 B scale =
    # 132 B) = 78 x 1,284 = 100,152 B/token; no index_topk_freq, so every layer has its indexer.
    assert plan["bytes_per_token"] == 78 * (576 * 2 + 132) == 100_152
    assert [g["kind"] for g in plan["kv_cache_groups"]] == ["mla+indexer"]
    # The same as the whole GLM-5-FP8 file of batch 3, which states the fields.
    assert _estimate(REAL / "glm-5-fp8.json", "--gpu", "H100")["bytes_per_token"] == 100_152


def test_deepseek_v32_without_index_fields_keeps_its_indexer(tmp_path: Path) -> None:
    config = json.loads((CONFIGS / "deepseek-v3.2.json").read_text())
    full = _estimate(CONFIGS / "deepseek-v3.2.json", "--gpu", "H100")["bytes_per_token"]
    for key in ("index_topk", "index_head_dim", "index_n_heads"):
        config.pop(key, None)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    # DeepseekV32Config's index_head_dim 128 is DeepSeek-V3.2's own: the same 132 B per layer.
    assert _estimate(path, "--gpu", "H100")["bytes_per_token"] == full


def test_llama4_nope_layer_interval_is_not_read() -> None:
    plan = _estimate(REAL / "llama-4-maverick-fp8-ktransformers.json")
    # text_config: 48 layers x (K + V) x 8 KV heads x head_dim 128 x 2 B (bf16: the
    # compressed-tensors scheme's kv_cache_scheme is null) = 196,608 B/token; no_rope_layers
    # from no_rope_layer_interval's default 4: 12 global layers, 36 chunked (8,192 tokens).
    assert plan["bytes_per_token"] == 48 * 2 * 8 * 128 * 2 == 196_608
    assert plan["num_chunked_layers"] == 36
    assert plan["kv_dtype"] == "bf16"


def test_llama4_wrapper_without_text_config_is_refused_in_one_line() -> None:
    result = CliRunner().invoke(
        app, ["estimate", str(REAL / "llama-4-scout-ktransformers-flat.json"), "-c", "4096"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "text_config: missing" in lines[0] and "Llama4TextConfig()" in lines[0]
