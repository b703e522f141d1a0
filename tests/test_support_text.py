"""Text-only architectures made exact with kvplan.sources.hf_text's family table (issue 26).

`TEXT_GOLDEN` (merged into tests/test_support.py's GOLDEN, which holds every exact row to its
golden config) maps each new golden id to (config file, KV bytes per token at bf16 over all
layers of one rank at TP 1, the model's Hub page), each number derived by hand from the vLLM 0.32
model file named beside it: K and V are 2 x KV heads x head_dim x 2 B per attention layer
(v1/kv_cache_interface.py AttentionSpec.page_size_bytes / block_size; a sliding layer holds one
page a token too). The configs' provenance: tests/data/configs/SOURCES-text.md; the shrunk copies
in tests/data/oracle/<case> are the vLLM-oracle cases (tests/test_vllm_oracle.py replays them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.kv.cache import rank_caches
from kvplan.sources.hf_config import load_config, spec_mapping_from_config
from kvplan.sources.hf_reader import config_model_type
from kvplan.sources.hf_text import TEXT_FAMILIES
from kvplan.sources.spec_yaml import parse_spec
from kvplan.sources.support import EXACT, support_table
from tests.support_refusal import estimate_refusal

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
ORACLE = DATA / "oracle"
HF = "https://huggingface.co/"

TEXT_GOLDEN: dict[str, tuple[Path, int, str]] = {
    # models/bloom.py BloomAttention: num_attention_heads 16 query heads, one KV head each
    # (MHA), head size n_embed / heads = 1024 / 16 = 64 (BloomConfig maps n_embed to
    # hidden_size); the oracle shrink of bigscience/bloomz-560m keeps 4 of 24 layers:
    # 4 x 2 x 16 x 64 x 2 B.
    "bloomz-560m": (ORACLE / "bloomz-560m" / "config.json", 4 * 2 * 16 * 64 * 2,
                    HF + "bigscience/bloomz-560m"),
    # models/phimoe.py PhiMoEAttention: num_key_value_heads 8, head_dim = 3584 / 32 = 112 (no
    # head_dim in the config); sliding_window 4096 on every layer (CacheConfig's window: the
    # Attention takes no per-layer one), still one page a token: 32 x 2 x 8 x 112 x 2 B. A third
    # party's pruned Phi-3.5-MoE-instruct, its file published whole (no copy of Microsoft's own
    # file was found whole); Phi-3.5-MoE's shape stays held by PHIMOE_SHRINK below.
    "phi-moe-30-attn2": (CONFIGS / "phi-moe-30-attn2.json", 32 * 2 * 8 * 112 * 2,
                         HF + "Pearush/phi_moe_30_attn2"),
    # models/nemotron.py NemotronAttention: num_key_value_heads 8; the file states no head_dim
    # (its kv_channels 128 is read by neither transformers' NemotronConfig nor vLLM), so
    # head_dim = hidden_size / heads = 3072 / 24 = 128; 32 layers: 32 x 2 x 8 x 128 x 2 B.
    "nemotron-mini-4b-instruct": (CONFIGS / "nemotron-mini-4b-instruct.json",
                                  32 * 2 * 8 * 128 * 2, HF + "nvidia/Nemotron-Mini-4B-Instruct"),
    # GlmForCausalLM, Transformers backend (models/transformers/base.py: the config's
    # num_key_value_heads 2 and head_dim 128), 40 layers: 40 x 2 x 2 x 128 x 2 B.
    "glm-4-9b-chat-hf": (CONFIGS / "glm-4-9b-chat-hf.json", 40 * 2 * 2 * 128 * 2,
                         HF + "THUDM/glm-4-9b-chat-hf"),
    # ArceeForCausalLM, Transformers backend: 4 KV heads of head_dim 128, 36 layers (YaRN
    # rope_scaling changes no cache size): 36 x 2 x 4 x 128 x 2 B.
    "afm-4.5b": (CONFIGS / "afm-4.5b.json", 36 * 2 * 4 * 128 * 2,
                 HF + "arcee-ai/AFM-4.5B-Base"),
    # GemmaForCausalLM: the row's golden since the sixth verbatim pass: a published fine-tune of
    # google/gemma-7b (HF staff's alignment-handbook SFT), its config.json verbatim (Hub blame page,
    # 667 Bytes). Same geometry: models/gemma.py GemmaAttention, head_dim 256 from the config,
    # 16 KV heads = 16 heads (MHA), 28 layers: 28 x 2 x 16 x 256 x 2 B = 458,752 B a token.
    "gemma-7b-sft-deita": (CONFIGS / "gemma-7b-sft-deita.json", 28 * 2 * 16 * 256 * 2,
                           HF + "lewtun/gemma-7b-sft-full-deita-10k-v0"),
    # VaultGemmaForCausalLM, Transformers backend: 4 KV heads of head_dim 256, layer_types all
    # full_attention beside sliding_window 512 (the published file, vLLM issue 49795: vLLM 0.32's
    # EngineArgs keeps no CacheConfig window then, and base.py passes per_layer_sliding_window to
    # sliding_attention layers only, so no layer slides); 4 of 26 layers: 4 x 2 x 4 x 256 x 2 B.
    "vaultgemma-1b": (ORACLE / "vaultgemma-1b" / "config.json", 4 * 2 * 4 * 256 * 2,
                      HF + "google/vaultgemma-1b"),
    # CwmForCausalLM, Transformers backend: 8 KV heads of head_dim 128, layer_types full on
    # i % 4 == 0 and on the last layer (CWM's global_last_layer), sliding 8192 elsewhere; 8 of
    # 64 layers: 8 x 2 x 8 x 128 x 2 B (a sliding layer holds one page a token too).
    "cwm": (ORACLE / "cwm" / "config.json", 8 * 2 * 8 * 128 * 2, HF + "facebook/cwm"),
    # models/minicpm.py MiniCPMAttention: num_key_value_heads 36 (MHA) of hidden_size / heads =
    # 2304 / 36 = 64: 40 x 2 x 36 x 64 x 2 B. The published file states no model_type (remote
    # code: its auto_map's MiniCPMConfig sets "minicpm"; vLLM builds minicpm.py by the
    # architecture).
    "minicpm-2b": (CONFIGS / "minicpm-2b.json", 40 * 2 * 36 * 64 * 2,
                   HF + "openbmb/MiniCPM-2B-sft-bf16"),
    # models/orion.py OrionAttention: num_key_value_heads 40 (MHA) of 5120 / 40 = 128:
    # 40 x 2 x 40 x 128 x 2 B.
    "orion-14b": (CONFIGS / "orion-14b.json", 40 * 2 * 40 * 128 * 2,
                  HF + "OrionStarAI/Orion-14B-Chat"),
    # InternLM3ForCausalLM -> models/llama.py LlamaAttention: num_key_value_heads 2 of head_dim
    # 128: 48 x 2 x 2 x 128 x 2 B.
    "internlm3-8b": (CONFIGS / "internlm3-8b.json", 48 * 2 * 2 * 128 * 2,
                     HF + "internlm/internlm3-8b-instruct"),
    # DeepseekForCausalLM (model_type deepseek) -> models/deepseek_v2.py DeepseekAttention
    # (use_mha): num_key_value_heads 16 of hidden / heads = 2048 / 16 = 128:
    # 28 x 2 x 16 x 128 x 2 B (the experts hold no cache).
    "deepseek-moe-16b": (CONFIGS / "deepseek-moe-16b.json", 28 * 2 * 16 * 128 * 2,
                         HF + "deepseek-ai/deepseek-moe-16b-base"),
    # The DeepseekForCausalLM row's golden (issue 26's seventh verbatim pass): DeepSeek's own
    # deepseek-moe-16b-chat file, the base's KV fields: 28 x 2 x 16 x 128 x 2 B.
    "deepseek-moe-16b-chat": (CONFIGS / "deepseek-moe-16b-chat.json", 28 * 2 * 16 * 128 * 2,
                              HF + "deepseek-ai/deepseek-moe-16b-chat"),
    # MiMoForCausalLM -> models/mimo.py over models/qwen2.py Qwen2Attention: 8 KV heads of
    # 4096 / 32 = 128, no window (use_sliding_window false; MiMoConfig is a Qwen2Config); the
    # MTP layer (num_nextn_predict_layers 1) is the draft's, not the target's:
    # 36 x 2 x 8 x 128 x 2 B.
    "mimo-7b-rl": (CONFIGS / "mimo-7b-rl.json", 36 * 2 * 8 * 128 * 2,
                   HF + "XiaomiMiMo/MiMo-7B-RL"),
    # LLaMAForCausalLM (the decapoda-research name, model_type llama) -> models/llama.py:
    # 32 KV heads (no num_key_value_heads: one per query head) of 4096 / 32 = 128:
    # 32 x 2 x 32 x 128 x 2 B.
    "llama-7b-hf-decapoda": (CONFIGS / "llama-7b-hf-decapoda.json", 32 * 2 * 32 * 128 * 2,
                             HF + "decapoda-research/llama-7b-hf"),
    # The LLaMAForCausalLM row's golden (issue 26's seventh verbatim pass): chavinlo/alpaca-native,
    # a published full fine-tune of decapoda-research/llama-7b-hf whose file (revision 4381f6d)
    # still names LLaMAForCausalLM; the same attention: 32 x 2 x 32 x 128 x 2 B.
    "llama-7b-alpaca-native": (CONFIGS / "llama-7b-alpaca-native.json", 32 * 2 * 32 * 128 * 2,
                               HF + "chavinlo/alpaca-native"),
}

# microsoft/Phi-3.5-MoE-instruct's fields (rebuilt, SOURCES-text.md) shrunk to 4 layers: 8 KV heads
# of 4096 / 32 = 128, sliding_window 131072 on every layer (the oracle case phi-3.5-moe).
PHIMOE_SHRINK = ORACLE / "phi-3.5-moe" / "config.json"

# The oracle shrinks (tests/data/oracle/<name>) of the configs above that tests/data/configs
# holds whole, with the fields each shrink changes (none of them sizes the cache per layer).
_SHRUNK_FIELDS = {"num_hidden_layers", "vocab_size", "intermediate_size"}
SHRUNK = {"minicpm-2b": _SHRUNK_FIELDS | {"auto_map"}, "orion-14b": _SHRUNK_FIELDS | {"auto_map"},
          "internlm3-8b": _SHRUNK_FIELDS | {"auto_map"}, "afm-4.5b": _SHRUNK_FIELDS,
          "glm-4-9b-chat-hf": _SHRUNK_FIELDS | {"pad_token_id", "eos_token_id"},
          "llama-7b-hf-decapoda": _SHRUNK_FIELDS,
          "nemotron-mini-4b-instruct": _SHRUNK_FIELDS,
          "deepseek-moe-16b": _SHRUNK_FIELDS | {"auto_map", "moe_intermediate_size",
                                                "n_routed_experts"},
          "mimo-7b-rl": _SHRUNK_FIELDS | {"max_window_layers", "bos_token_id",
                                          "eos_token_id"},
          "phi-moe-30-attn2": _SHRUNK_FIELDS | {"auto_map", "num_local_experts"}}


def _spec(config: dict, path: str = "cfg/config.json"):
    mapping, warnings = spec_mapping_from_config(config, path=path)
    return parse_spec(mapping, path=path, spec_id="x"), warnings


@pytest.mark.parametrize("golden", sorted(TEXT_GOLDEN))
def test_text_golden_bytes(golden: str) -> None:
    path, token_bytes, _url = TEXT_GOLDEN[golden]
    spec, _ = load_config(path)
    assert spec.exact
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == token_bytes


@pytest.mark.parametrize(("golden", "layers", "token_bytes"), [
    # The published layer counts (the shrunk copies keep every other KV field): the same
    # per-layer bytes times the real depth.
    ("bloomz-560m", 24, 24 * 2 * 16 * 64 * 2),
    ("phi-moe-30-attn2", 32, 32 * 2 * 8 * 112 * 2),
    ("nemotron-mini-4b-instruct", 32, 32 * 2 * 8 * 128 * 2),
    ("glm-4-9b-chat-hf", 40, 40 * 2 * 2 * 128 * 2),
    ("afm-4.5b", 36, 36 * 2 * 4 * 128 * 2),
    ("cwm", 64, 64 * 2 * 8 * 128 * 2),
])
def test_text_published_depths(golden: str, layers: int, token_bytes: int) -> None:
    config = json.loads(TEXT_GOLDEN[golden][0].read_text())
    config["num_hidden_layers" if "num_hidden_layers" in config else "n_layer"] = layers
    if isinstance(config.get("layer_types"), list):
        # The shrink's period, and its last layer's kind (CWM keeps its last layer full).
        period, last = config["layer_types"][:4], config["layer_types"][-1]
        config["layer_types"] = (period * (layers // 4))[:-1] + [last]
    spec, _ = _spec(config)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == token_bytes


def test_text_windows_by_hand() -> None:
    # phimoe: every layer slides over 131072 (vLLM's CacheConfig window, no layer_types).
    spec, warnings = load_config(PHIMOE_SHRINK)
    assert spec.layer_windows == (131072,) * 4
    assert any("every layer" in w for w in warnings)
    # vaultgemma: layer_types all full_attention beside sliding_window 512: no layer slides
    # (vLLM 0.32 engine/arg_utils.py keeps CacheConfig's window only when every layer slides).
    spec, _ = load_config(TEXT_GOLDEN["vaultgemma-1b"][0])
    assert spec.layer_windows == (None,) * 4
    # cwm: full on i % 4 == 0 and on the last layer, sliding 8192 elsewhere.
    spec, _ = load_config(TEXT_GOLDEN["cwm"][0])
    assert spec.layer_windows == (None, 8192, 8192, 8192, None, 8192, 8192, None)
    # Without layer_types, the config classes' own patterns (CwmConfig: i % 4 == 0 only, not
    # the last layer: a cwm file without layer_types is served with one full layer fewer).
    for name, expected in (("vaultgemma-1b", (512, None, 512, None)),
                           ("cwm", (None, 8192, 8192, 8192) * 2)):
        config = json.loads(TEXT_GOLDEN[name][0].read_text())
        del config["layer_types"]
        spec, warnings = _spec(config)
        assert spec.layer_windows == expected
        assert any("layer_types absent" in w for w in warnings)


def test_text_config_class_defaults() -> None:
    # GlmConfig's defaults, not hidden / heads: num_key_value_heads 2, head_dim 128 (here the
    # same as 4096 / 32); a config leaving them out is read as transformers reads it, said.
    config = json.loads((ORACLE / "glm-4-9b-chat-hf" / "config.json").read_text())
    config.update(hidden_size=2048)
    del config["head_dim"], config["num_key_value_heads"]
    spec, warnings = _spec(config)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 4 * 2 * 2 * 128 * 2
    assert any("head_dim 128" in w and "num_key_value_heads 2" in w for w in warnings)
    # BloomConfig takes `n_embed` as hidden_size and `num_attention_heads` as n_head (the
    # published BLOOM files spell them so); the later spellings size the same cache.
    config = json.loads(TEXT_GOLDEN["bloomz-560m"][0].read_text())
    config["hidden_size"] = config.pop("n_embed")
    config["n_head"] = config.pop("num_attention_heads")
    spec, _ = _spec(config)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 4 * 2 * 16 * 64 * 2


def test_head_dim_from_hidden_families_ignore_head_dim() -> None:
    # models/orion.py and models/minicpm.py never read head_dim: a config stating another one
    # is still sized hidden / heads (with a warning that says so).
    for name, per_layer in (("orion-14b", 2 * 40 * 128 * 2), ("minicpm-2b", 2 * 36 * 64 * 2)):
        config = json.loads(TEXT_GOLDEN[name][0].read_text())
        config["head_dim"] = 96
        spec, warnings = _spec(config)
        assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 40 * per_layer
        assert any("head_dim 96 ignored" in w for w in warnings)


def test_remote_code_config_without_model_type_reads_its_class_model_type() -> None:
    # openbmb/MiniCPM-2B-sft-bf16's config.json names no model_type, only auto_map's
    # configuration_minicpm.MiniCPMConfig (model_type "minicpm"); vLLM's get_config loads that
    # class (transformers_utils/config.py) and builds models/minicpm.py by the architecture.
    # kvplan reads it as minicpm, exact: 40 x 2 x 36 x 64 x 2 B, not an unknown family.
    config = json.loads(TEXT_GOLDEN["minicpm-2b"][0].read_text())
    assert "model_type" not in config
    assert config_model_type(config) == "minicpm"
    spec, warnings = _spec(config)
    assert spec.exact and not any("unknown" in w for w in warnings)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 40 * 2 * 36 * 64 * 2
    # Only a table architecture: another one without model_type stays unknown.
    assert config_model_type({"architectures": ["LlamaForCausalLM"]}) == "unknown"


def test_bloom_ignores_kv_head_fields() -> None:
    # bloom.py builds one KV head per query head whatever the config says.
    config = json.loads(TEXT_GOLDEN["bloomz-560m"][0].read_text())
    config["num_key_value_heads"] = 4
    spec, _ = _spec(config)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 4 * 2 * 16 * 64 * 2


def test_layer_types_on_a_family_that_ignores_them_is_refused(tmp_path: Path) -> None:
    # models/phimoe.py passes no per-layer window: with layer_types mixing sliding and full,
    # vLLM's CacheConfig keeps no window, and no layer slides -- refused, one line.
    config = json.loads(PHIMOE_SHRINK.read_text())
    config["layer_types"] = ["sliding_attention", "full_attention"] * 2
    line = estimate_refusal(tmp_path, config)
    assert "layer_types" in line and "models/phimoe.py" in line


def test_text_rows_are_exact_and_shrinks_match() -> None:
    table = support_table()
    golden = {row.golden for row in table.values() if row.status == EXACT}
    # deepseek-moe-16b and llama-7b-hf-decapoda (files in content) stay for their oracle shrinks;
    # the rows' goldens are deepseek-moe-16b-chat and llama-7b-alpaca-native (tests/test_support.py
    # lists the two in EXTRA_GOLDEN).
    assert set(TEXT_GOLDEN) - {"deepseek-moe-16b", "llama-7b-hf-decapoda"} <= golden
    for name, fields in SHRUNK.items():
        whole = json.loads((CONFIGS / f"{name}.json").read_text())
        shrunk = json.loads((ORACLE / name / "config.json").read_text())
        changed = {k for k in whole if whole[k] != shrunk.get(k)}
        assert changed == fields, name
        # The shrink keeps the per-layer bytes: the whole config's over its layer count.
        per_layer = TEXT_GOLDEN[name][1] // whole["num_hidden_layers"]
        spec, _ = load_config(ORACLE / name / "config.json")
        assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 4 * per_layer
    # Families of the table without an exact row yet (no published config sourced): their
    # support rows stay refused, naming the vLLM file kvplan reads them by.
    # (Families whose golden lives in tests/test_support_newrows.py or
    # tests/test_support_layer_shapes.py count too.)
    from tests.test_support_layer_shapes import GOLDEN_SHAPES
    from tests.test_support_newrows import GOLDEN_NEW

    goldens = [*TEXT_GOLDEN.values(), *GOLDEN_NEW.values(), *GOLDEN_SHAPES.values()]
    golden_types = {config_model_type(json.loads(entry[0].read_text()))
                    for entry in goldens} - {"llama"}
    golden_types |= {"olmo2", "phi", "starcoder2"}  # golden in tests/test_support.py
    assert set(TEXT_FAMILIES) - golden_types == {"granitemoeshared"}
    for arch in ("GraniteMoeSharedForCausalLM",):
        assert table[arch].status != EXACT


def test_use_sliding_window_false_does_not_hide_the_window() -> None:
    # PhimoeConfig has no use_sliding_window: vLLM's CacheConfig takes sliding_window as it is,
    # so a config saying use_sliding_window false still slides every layer (a Qwen-style
    # reading would size full attention: 8,192 tokens more than vLLM holds per request).
    config = json.loads(PHIMOE_SHRINK.read_text())
    config.update(use_sliding_window=False, sliding_window=4096)
    spec, _ = _spec(config)
    assert spec.layer_windows == (4096,) * 4


def test_deepseek_v1_with_mla_fields_is_refused(tmp_path: Path) -> None:
    # deepseek_v2.py builds DeepseekAttention for model_type "deepseek" whatever else the config
    # says; kvplan would read a kv_lora_rank as MLA: refused, one line naming the field.
    config = json.loads(TEXT_GOLDEN["deepseek-moe-16b"][0].read_text())
    config["kv_lora_rank"] = 512
    line = estimate_refusal(tmp_path, config)
    assert "kv_lora_rank" in line and "DeepseekAttention" in line


def test_explicit_null_window_is_no_window() -> None:
    # VaultGemmaConfig keeps an explicit `"sliding_window": null` (its 4096 default is for an
    # absent field): the Transformers backend then passes no window, every layer full.
    config = json.loads(TEXT_GOLDEN["vaultgemma-1b"][0].read_text())
    del config["layer_types"]  # so the class's alternating pattern would slide, but for the null
    config["sliding_window"] = None
    spec, _ = _spec(config)
    assert spec.layer_windows == (None,) * 4


def test_qwen_windows_as_vllm_sizes_them(tmp_path: Path) -> None:
    # vLLM 0.32's Qwen models pass no per-layer window; only CacheConfig's (kept when layer_types
    # is absent or all sliding) slides a layer.
    moe = json.loads((CONFIGS / "qwen1.5-moe-a2.7b.json").read_text())
    # Qwen2MoeConfig with use_sliding_window builds layer_types sliding on even layers below
    # max_window_layers (21): sliding and full mixed, so vLLM slides no layer.
    moe.update(use_sliding_window=True, sliding_window=4096)
    spec, warnings = _spec(moe)
    assert spec.layer_windows == (None,) * 24
    assert any("no layer slides" in w for w in warnings)
    # Qwen3MoeConfig builds no layer_types: every layer slides.
    qwen3_moe = json.loads((CONFIGS / "qwen3-30b-a3b.json").read_text())
    qwen3_moe.update(use_sliding_window=True, sliding_window=4096)
    spec, _ = _spec(qwen3_moe)
    assert spec.layer_windows == (4096,) * 48
    # Qwen2 sliding on some layers only: vLLM's qwen2.py refuses to load it; so does kvplan
    # (exit 2, one line naming max_window_layers).
    dense = json.loads((CONFIGS / "qwen2.5-7b.json").read_text())
    dense.update(use_sliding_window=True, sliding_window=4096, max_window_layers=20)
    line = estimate_refusal(tmp_path, dense)
    assert "max_window_layers" in line and "qwen2.py" in line


# Exact rows served by vLLM 0.32's Transformers backend that kvplan once read as an unknown
# model_type (a Llama-style guess: SwiGLU, RMSNorm, no biases), which put phi-2 at 3.62B
# parameters and starcoder2-3b at 4.31B, and so their GPU budgets 0.8-1.2 GiB short. By hand
# from each config (kvplan.weights.params: one norm before each block, LayerNorm = weight + bias):
# - phi-2 (PhiConfig; hidden 2560, 32 layers, 32 heads, intermediate 10240, vocab 51200,
#   untied): attention 4 x 2560^2 + 4 x 2560 biases = 26,224,640; fc1 + fc2 with biases
#   2 x 2560 x 10240 + 10240 + 2560 = 52,441,600; one LayerNorm for the parallel attention and
#   MLP (transformers' PhiDecoderLayer.input_layernorm; ModelSpec.parallel_block_norm since
#   wgap26, was two: 163,840 more) 2 x 2560 = 5,120; per layer 78,671,360, x 32 =
#   2,517,483,520; embeddings and lm_head 2 x 51200 x 2560 = 262,144,000; final LayerNorm
#   5,120: 2,779,632,640 (HF's 2.78B; the checkpoint's lm_head bias, 51,200, is not built by
#   vLLM's Transformers backend, models/transformers/causal.py:48-53).
# - starcoder2-3b (Starcoder2Config; hidden 3072, 30 layers, 24 heads, 2 KV heads of 128,
#   intermediate 12288, vocab 49152, use_bias true, tied by the class default): q and o
#   2 x (3072^2 + 3072), k and v 2 x (3072 x 256 + 256) -> 20,453,888; c_fc + c_proj
#   2 x 3072 x 12288 + 12288 + 3072 = 75,512,832; norms 12,288; per layer 95,979,008, x 30 =
#   2,879,370,240; embeddings 49152 x 3072 = 150,994,944 (tied); final norm 6,144:
#   3,030,371,328 (HF's 3.03B).
# - OLMo-2-1124-7B (Olmo2Config; hidden 4096, 32 layers, MHA, intermediate 11008, vocab
#   100352, untied, RMSNorm): attention 4 x 4096^2 = 67,108,864; SwiGLU 3 x 4096 x 11008 =
#   135,266,304; norms 8,192; per layer 202,383,360, x 32 = 6,476,267,520; embeddings and
#   lm_head 2 x 100352 x 4096 = 822,083,584; final norm 4,096: 7,298,355,200; and the q_norm
#   and k_norm over all 32 heads x 128 each (transformers' Olmo2Attention, counted since
#   sizefix57: kvplan.sources.features) 32 x 8,192 = 262,144: 7,298,617,344 (HF's 7.30B).
@pytest.mark.parametrize(("golden", "params"), [
    ("phi-2", 32 * (4 * 2560 * 2560 + 4 * 2560 + 2 * 2560 * 10240 + 10240 + 2560 + 2 * 2560)
     + 2 * 51200 * 2560 + 2 * 2560),
    ("starcoder2-3b", 30 * (2 * (3072 * 3072 + 3072) + 2 * (3072 * 256 + 256)
                            + 2 * 3072 * 12288 + 12288 + 3072 + 2 * 2 * 3072)
     + 49152 * 3072 + 2 * 3072),
    ("olmo-2-1124-7b", 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096 + 2 * 4096)
     + 2 * 100352 * 4096 + 4096),
])
def test_backend_families_read_field_by_field(golden: str, params: int) -> None:
    from kvplan.weights.params import count_params

    result = CliRunner().invoke(app, ["estimate", str(CONFIGS / f"{golden}.json"), "-c", "4096",
                                      "-f", "json"])
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["exact"] is True and out["assumptions"] == []
    spec, _ = load_config(CONFIGS / f"{golden}.json")
    assert count_params(spec).total == params
