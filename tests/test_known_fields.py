"""Known families fail closed on a cache field their reader does not read (issue 26; the A-K
families of kvplan.sources.hf_fields, audit A-K).

Each case is a real published config.json (tests/data/configs, tests/data/oracle) changed the
way a sibling checkpoint plausibly would; kvplan must refuse with one line naming the field
(SpecError -> exit 2), not size it as if the field were not there. Where the unrefused number
was measured against vLLM's CPU build the comment says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import SpecError
from kvplan.sources.hf_config import spec_mapping_from_config
from kvplan.sources.hf_fields import FAMILY_FIELDS, check_family_fields
from kvplan.sources.support import support_table

DATA = Path(__file__).parent / "data"


def config(name: str, **changes: object) -> dict:
    path = DATA / "configs" / f"{name}.json"
    if not path.exists():
        path = DATA / "oracle" / name / "config.json"
    data = json.loads(path.read_text())
    data.update(changes)
    return data


REFUSED = [
    # vLLM 0.32 models/falcon.py reads config.num_kv_heads; transformers' FalconConfig has no
    # n_head_kv (vLLM's own RWConfig maps it only for model_type RefinedWeb): with
    # new_decoder_architecture, vLLM keeps num_kv_heads = num_attention_heads (71).
    ("falcon-7b", {"new_decoder_architecture": True, "n_head_kv": 8}, "n_head_kv"),
    # falcon.py, jamba.py, granitemoehybrid.py, gpt_neox.py and gpt2.py take the head size as
    # hidden_size / num_attention_heads; kvplan's readers would have taken config.head_dim.
    ("falcon-7b", {"head_dim": 128}, "head_dim"),
    ("jamba-mini", {"head_dim": 64}, "head_dim"),
    ("granite-4.0-h-micro-base", {"head_dim": 128}, "head_dim"),
    ("pythia-410m", {"head_dim": 128}, "head_dim"),
    ("gpt2", {"head_dim": 128}, "head_dim"),
    # gemma.py and glm4_moe.py pass no per-layer window: with layer_types mixing sliding and
    # full layers vLLM's CacheConfig keeps no window, so no layer slides (kvplan would have
    # slid the sliding_attention ones). Measured on the gemma-7b oracle config (4 layers,
    # window 512 on layers 0 and 2, 8192-token requests, 1 GiB): vLLM 16,384 tokens,
    # concurrency 2.00; kvplan before the refusal 24,672 / 3.01.
    ("gemma-7b", {"sliding_window": 512,
                  "layer_types": ["sliding_attention", "full_attention"] * 14}, "layer_types"),
    ("glm-4.5-air", {"sliding_window": 512,
                     "layer_types": ["sliding_attention", "full_attention"] * 23}, "layer_types"),
    # A window on a hybrid's attention layers (jamba.py: CacheConfig's) is not modelled.
    ("jamba-mini", {"sliding_window": 4096}, "sliding_window"),
    # gemma3.py: bidirectional attention is an encoder's.
    ("gemma-3-27b", {"use_bidirectional_attention": True}, "use_bidirectional_attention"),
    # (DeepSeek-V3.2's index_topk_pattern is read since IndexCache: tests/test_index_cache.py.)
    # A field no reader of the family reads, of a cache-shaping name.
    ("gemma-2-9b", {"attention_chunk_size": 8192}, "attention_chunk_size"),
    ("falcon-h1-34b", {"sliding_window": 4096}, "sliding_window"),
    # bailing_moe.py and phi3v.py (llama.py) read num_key_value_heads only; vLLM's config layer
    # takes num_kv_heads first (model_arch_config_convertor.py): which one sizes the cache is
    # not settled, so the alias is refused. layer_types mixing sliding and full layers on
    # bailing_moe.py, which reads none: vLLM would slide no layer.
    ("ling-lite-1.5", {"num_kv_heads": 2}, "num_kv_heads"),
    ("ling-lite-1.5", {"sliding_window": 4096, "layer_types": ["sliding_attention"] * 27
                       + ["full_attention"]}, "layer_types"),
    # phi3v.py builds llama.py's LlamaForCausalLM, which never reads Qwen's switch.
    ("phi-3.5-vision", {"num_kv_heads": 8}, "num_kv_heads"),
    ("phi-3.5-vision", {"use_sliding_window": False}, "use_sliding_window"),
    # AfmoeConfig builds an absent layer_types with this period; kvplan builds it with 4 only.
    ("trinity-mini", {"global_attn_every_n_layers": 2}, "global_attn_every_n_layers"),
]


@pytest.mark.parametrize(("name", "changes", "field"), REFUSED,
                         ids=[f"{n}-{f}" for n, _, f in REFUSED])
def test_unread_cache_field_is_refused(name: str, changes: dict, field: str) -> None:
    with pytest.raises(SpecError) as refused:
        spec_mapping_from_config(config(name, **changes), path="cfg/config.json")
    assert refused.value.field == field and "\n" not in str(refused.value)


def test_harmless_fields_pass() -> None:
    # transformers' generic flags and fields vLLM's model code does not read.
    check_family_fields({"output_attentions": False, "chunk_size_feed_forward": 0,
                         "attention_bias": True, "attn_layer_indices": [1, 2]},
                        "cfg/config.json", "falcon_h1")
    with pytest.raises(SpecError):
        check_family_fields({"add_cross_attention": True}, "cfg/config.json", "gpt2")


A_TO_K = ("ApertusForCausalLM ArceeForCausalLM BailingMoeForCausalLM BloomForCausalLM ChatGLMModel "
          "Cohere2ForCausalLM "
          "CohereForCausalLM CwmForCausalLM DbrxForCausalLM DeciLMForCausalLM "
          "DeepseekForCausalLM DeepseekV2ForCausalLM DeepseekV32ForCausalLM "
          "DeepseekV3ForCausalLM Ernie4_5ForCausalLM Ernie4_5_MoeForCausalLM Exaone4ForCausalLM "
          "ExaoneForCausalLM FalconForCausalLM FalconH1ForCausalLM FalconMambaForCausalLM "
          "GLM4VForCausalLM GPT2LMHeadModel GPTBigCodeForCausalLM GPTJForCausalLM "
          "GPTNeoXForCausalLM Gemma2ForCausalLM Gemma3ForCausalLM Gemma3ForConditionalGeneration "
          "Gemma3nForCausalLM Gemma3nForConditionalGeneration Gemma4ForCausalLM "
          "GemmaForCausalLM Glm4ForCausalLM Glm4MoeForCausalLM Glm4MoeLiteForCausalLM "
          "Glm4vMoeForConditionalGeneration GlmForCausalLM GptOssForCausalLM "
          "GraniteForCausalLM GraniteMoeForCausalLM GraniteMoeHybridForCausalLM "
          "HunYuanDenseV1ForCausalLM InternLM2ForCausalLM InternLM3ForCausalLM "
          "JambaForCausalLM KimiLinearForCausalLM").split()


def test_every_a_to_k_exact_family_is_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    # The family each exact A-K architecture's golden config is read as declares its fields
    # (Idefics3's text model is read as llama, declared with the L-Z half).
    import kvplan.sources.hf_config as hf_config

    seen: set[str] = set()
    monkeypatch.setattr(hf_config, "check_family_fields",
                        lambda data, path, model_type: seen.add(model_type))
    rows = support_table()
    for arch in A_TO_K:
        seen.clear()
        spec_mapping_from_config(config(rows[arch].oracle or rows[arch].golden),
                                 path="cfg/config.json")
        assert seen and seen <= set(FAMILY_FIELDS), (arch, seen)


def spec_of(data: dict):
    from kvplan.sources.spec_yaml import parse_spec

    mapping, _ = spec_mapping_from_config(data, path="cfg/config.json")
    return parse_spec(mapping, path="cfg/config.json", spec_id="x")


def test_config_class_defaults_when_config_json_omits_a_cache_field() -> None:
    from kvplan.kv.cache import estimate

    # google/gemma-7b (tests/data/configs/gemma-7b.json): 28 layers, 16 heads = 16 KV heads,
    # hidden 3072, head_dim 256. Without head_dim vLLM loads GemmaConfig's default 256
    # (transformers 5.19), not hidden / heads = 192: per token 28 x 16 x 256 x 2 x 2 B =
    # 458,752 B (kvplan had 28 x 16 x 192 x 4 = 344,064 B).
    data = config("gemma-7b")
    del data["head_dim"]
    assert estimate(spec_of(data), context=1).bytes_per_token == 458_752
    # openai/gpt-oss-20b (tests/data/configs/gpt-oss-20b.json): 24 layers, 8 KV heads. Without
    # head_dim and sliding_window GptOssConfig holds 64 and 128, and vLLM's gpt_oss.py slides
    # the even layers: 24 x 8 x 64 x 2 x 2 B = 49,152 B per token, windows 128 / full.
    data = config("gpt-oss-20b")
    for key in ("head_dim", "sliding_window", "layer_types"):
        data.pop(key, None)
    spec = spec_of(data)
    assert estimate(spec, context=1).bytes_per_token == 49_152
    assert spec.layer_windows == (128, None) * 12
    # An explicit null stays null, as the class keeps it: hidden / heads = 2880 / 64 = 45.
    assert spec_of({**config("gpt-oss-20b"), "head_dim": None}).attention.head_dim == 45


def test_gpt_oss_windows_sit_on_even_layers_whatever_layer_types_says() -> None:
    # vLLM 0.32 models/gpt_oss.py: `sliding_window if self.layer_idx % 2 == 0`; the odd layers
    # take CacheConfig's window, kept only when layer_types is all sliding. Oracle cases
    # gpt-oss-20b-full-types (136,366 tokens; kvplan had 87,296) and gpt-oss-20b-no-types.
    data = config("gpt-oss-20b")
    full = spec_of({**data, "layer_types": ["full_attention"] * 24})
    assert full.layer_windows == (128, None) * 12
    every = spec_of({**data, "layer_types": ["sliding_attention"] * 24})
    assert every.layer_windows == (128,) * 24


def test_mla_without_kv_lora_rank_stays_mla() -> None:
    from kvplan.kv.cache import estimate

    # deepseek-ai/DeepSeek-V3 (tests/data/configs/deepseek-v3.json): 61 layers. Without
    # kv_lora_rank vLLM still builds MLA with DeepseekV3Config's 512: one latent row of
    # 512 + 64 (qk_rope_head_dim) per token and layer, 61 x 576 x 2 B = 70,272 B (kvplan had
    # read a config without it as 128-head GQA).
    data = config("deepseek-v3")
    del data["kv_lora_rank"]
    spec = spec_of(data)
    assert spec.attention.kind.value == "mla"
    assert estimate(spec, context=1).bytes_per_token == 70_272


def test_jamba_attention_layers_from_the_class_default_offset() -> None:
    # ai21labs/AI21-Jamba-1.5-Mini (tests/data/configs/jamba-mini.json): attn_layer_period 8,
    # attn_layer_offset 4. Without the offset JambaConfig holds 4 (layers 4, 12, 20, 28 are
    # attention in vLLM's jamba.py layers_block_type), not 0.
    data = config("jamba-mini")
    del data["attn_layer_offset"]
    mapping, _ = spec_mapping_from_config(data, path="cfg/config.json")
    assert [i for i, t in enumerate(mapping["layer_types"]) if t == "full_attention"] == [
        4, 12, 20, 28]


def test_every_family_with_class_defaults_has_a_row() -> None:
    # kvplan.sources.hf_defaults holds the known families' cache-field defaults (`_FIELDS`);
    # only kvplan.sources.hf_fields fills them, for a family with a row naming that class.
    from kvplan.sources import hf_defaults

    classes = {row.config_class or name for name, row in FAMILY_FIELDS.items()}
    held = {name for name in hf_defaults.CLASS_DEFAULTS
            if hf_defaults.field_defaults(name)}
    assert held and held <= classes, held - classes
