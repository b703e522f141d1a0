"""Rows of the support table made exact once a published config.json was found (issue 26: the
rows refused only for "no published config sourced"): each golden config against the KV bytes
derived here by hand from vLLM 0.32's model code, and its vLLM-oracle case.

Sources of the golden configs: tests/data/configs/SOURCES-newrows.md. `GOLDEN_NEW` is merged into
tests/test_support.py's GOLDEN, so the table's own checks (the hand-derived bytes, an exact row
with its oracle case but NO_ORACLE's, golden backs an exact row, refused rows refused) cover these
rows too; the oracle cases (tests/data/oracle/<case>) are replayed by tests/test_vllm_oracle.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import SpecError
from kvplan.kv.cache import rank_caches
from kvplan.sources.hf_config import load_config

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
HF = "https://huggingface.co/"

# id -> (file, KV bytes per token at bf16 over all layers at TP 1, the model's Hub page).
GOLDEN_NEW: dict[str, tuple[Path, int, str]] = {
    # models/kimi_k25.py builds DeepseekV2ForCausalLM (MLA) over text_config (model_type
    # kimi_k2, which Kimi_K25Config builds as DeepseekV3Config). MLA caches one latent of
    # kv_lora_rank + qk_rope_head_dim per layer (v1/kv_cache_interface.py MLAAttentionSpec):
    # 61 layers x (512 + 64) x 2 B = 70,272 B per token. The vision tower holds no KV cache.
    "kimi-k2.5": (CONFIGS / "kimi-k2.5.json", 61 * (512 + 64) * 2, HF + "moonshotai/Kimi-K2.5"),
    # models/bailing_moe.py BailingAttention: num_key_value_heads 4, head_dim = config.head_dim
    # (absent) or hidden / heads = 2048 / 16 = 128, no window: 28 layers x 2 (K, V) x 4 x 128 x
    # 2 B = 57,344 B per token.
    "ling-lite-1.5": (CONFIGS / "ling-lite-1.5.json", 28 * 2 * 4 * 128 * 2,
                      HF + "inclusionAI/Ling-lite-1.5"),
    # models/gemma4_mm.py builds Gemma4ForCausalLM (gemma4.py) over text_config: layer_types
    # 25 sliding (window 1024) of num_key_value_heads 8 x head_dim 256, and 5 full layers of
    # num_global_key_value_heads 2 x global_head_dim 512 (attention_k_eq_v: K loaded into both
    # K and V slots, both cached): 25 x 2 x 8 x 256 x 2 + 5 x 2 x 2 x 512 x 2 = 225,280 B per
    # token. The 128 experts (enable_moe_block) change weights only.
    "gemma-4-26b-a4b": (CONFIGS / "gemma-4-26b-a4b.json",
                        25 * 2 * 8 * 256 * 2 + 5 * 2 * 2 * 512 * 2, HF + "google/gemma-4-26B-A4B"),
    # models/phi3v.py builds LlamaForCausalLM over the whole flat config: 32 KV heads (MHA) of
    # 3072 / 32 = 96, sliding_window 262144 on every layer (no layer_types; longer than any
    # request of max_position_embeddings 131072): 32 x 2 x 32 x 96 x 2 B = 393,216 B per token.
    "phi-3.5-vision": (CONFIGS / "phi-3.5-vision.json", 32 * 2 * 32 * 96 * 2,
                       HF + "microsoft/Phi-3.5-vision-instruct"),
    # models/afmoe.py AfmoeAttention: num_key_value_heads 4 x head_dim 128 on all 32 layers,
    # per_layer_sliding_window = sliding_window 2048 on layer_types' 24 sliding_attention
    # layers (the 8 full ones hold the whole context): 32 x 2 x 4 x 128 x 2 B = 65,536 B per
    # token (a sliding layer keeps at most its window).
    "trinity-mini": (CONFIGS / "trinity-mini.json", 32 * 2 * 4 * 128 * 2,
                     HF + "arcee-ai/Trinity-Mini"),
    # models/hy_v3.py HYV3Attention: num_key_value_heads 8 x config.head_dim 128, no window
    # (Attention without a per-layer one, no sliding_window): 80 layers x 2 x 8 x 128 x 2 B =
    # 327,680 B per token. The MTP layer (num_nextn_predict_layers 1) is built only with
    # speculative decoding.
    "hy3-preview": (CONFIGS / "hy3-preview.json", 80 * 2 * 8 * 128 * 2,
                    HF + "tencent/Hy3-preview"),
    # InternVL -hf: interns1.py builds text_config's Qwen2ForCausalLM (qwen2.py): 2 KV heads of
    # 1536 / 12 = 128 (no head_dim), use_sliding_window false: 28 layers x 2 x 2 x 128 x 2 B =
    # 28,672 B per token. The InternViT tower holds no KV cache.
    "internvl3-2b-hf": (CONFIGS / "mm" / "internvl3-2b-hf.json", 28 * 2 * 2 * 128 * 2,
                        HF + "OpenGVLab/InternVL3-2B-hf"),
    # exaone4_5.py builds Exaone4ForCausalLM (exaone4.py) over text_config: 8 KV heads of
    # hidden / heads = 5120 / 40 = 128 (no head_dim), sliding_window 4096 on layer_types' 48
    # sliding_attention layers, 16 full: 64 x 2 x 8 x 128 x 2 B = 262,144 B per token. The MTP
    # layer is built only for speculative decoding (Exaone4_5_MTP); the vision tower holds none.
    "exaone-4.5-33b": (CONFIGS / "mm" / "exaone-4.5-33b.json", 64 * 2 * 8 * 128 * 2,
                       HF + "LGAI-EXAONE/EXAONE-4.5-33B"),
    # Jais2ForCausalLM: the Transformers backend (0.32 registry.py; models/transformers/base.py
    # _create_attention_instances: head_size from the arch config's head_dim 128, KV heads
    # from num_key_value_heads 26, MHA), no window (no sliding_window, no layer_types):
    # 32 layers x 2 x 26 x 128 x 2 B = 425,984 B per token. (The official
    # inceptionai/Jais-2-8B-Chat config is gated; this fine-tune's is published, blind batch 3.)
    "jais2-it-0.3": (CONFIGS / "jais2-it-0.3.json", 32 * 2 * 26 * 128 * 2,
                     HF + "yoriis/JAIS2-IT-0.3"),
    # Ministral3ForCausalLM: registry.py maps it to models/mistral.py MistralForCausalLM, a
    # LlamaForCausalLM whose MistralAttention (LlamaAttention) caches num_key_value_heads 8 x
    # head_dim 128 on every layer, sliding_window null (rope_parameters' yarn and
    # llama_4_scaling_beta scale queries, no cache): 88 layers x 2 x 8 x 128 x 2 B = 360,448 B
    # per token. FP8 weights (quantization_config fp8, no KV-cache scheme) leave the cache at the
    # model dtype. (Blind batch 5's devstral-2-123b-instruct, refused there.)
    "devstral-2-123b-instruct-2512": (CONFIGS / "devstral-2-123b-instruct-2512.json",
                                      88 * 2 * 8 * 128 * 2,
                                      HF + "mistralai/Devstral-2-123B-Instruct-2512"),
    # HyperCLOVAXForCausalLM: models/hyperclovax.py HyperCLOVAXAttention caches
    # num_key_value_heads 8 (decoder layer: num_kv_heads=config.num_key_value_heads) x
    # config.head_dim 128 (not hidden / heads = 6144 / 48 = 128, equal here) on every layer,
    # Attention(cache_config=...) with no per-layer window and no sliding_window in the file:
    # 38 layers x 2 x 8 x 128 x 2 B = 155,648 B per token. torch_dtype float32 runs at bf16 in
    # vLLM's auto (the oracle's log: dtype=torch.bfloat16). (Blind batch 8's copy, refused there.)
    "hyperclovax-seed-think-14b": (CONFIGS / "hyperclovax-seed-think-14b.json",
                                   38 * 2 * 8 * 128 * 2,
                                   HF + "naver-hyperclovax/HyperCLOVAX-SEED-Think-14B"),
    # SolarForCausalLM (Solar Pro): models/solar.py SolarAttention: num_kv_heads =
    # num_key_value_heads 10, head_dim = getattr(config, "head_dim", None) or hidden / heads =
    # 5120 / 40 = 128; Attention(cache_config=...) with no per-layer window, so the file's
    # sliding_window 2047 (no layer_types) is CacheConfig's window on all 64 layers (0.32
    # engine/arg_utils.py: the model is all sliding window). The bskcn_* skip connections mix
    # hidden states only: 64 x 2 x 10 x 128 x 2 B = 327,680 B per token (each layer holding at
    # most the window plus a block).
    "solar-pro-preview-instruct": (CONFIGS / "solar-pro-preview-instruct.json",
                                   64 * 2 * 10 * 128 * 2,
                                   HF + "upstage/solar-pro-preview-instruct"),
    # Step1ForCausalLM (Step-Audio-TTS-3B): models/step1.py StepAttention (lines 95-99):
    # head_dim = hidden / heads = 3072 / 48 = 64, total_num_kv_heads = getattr(config,
    # "num_attention_groups", ...) = 4; Attention with ALiBi (use_alibi_sqrt), no window:
    # 32 layers x 2 (K, V) x 4 x 64 x 2 B = 32,768 B per token.
    "step-audio-tts-3b": (CONFIGS / "step-audio-tts-3b.json", 32 * 2 * 4 * 64 * 2,
                          HF + "stepfun-ai/Step-Audio-TTS-3B"),
    # TeleChat2ForCausalLM (TeleChat2-7B-32K): models/telechat2.py TeleChat2Model (lines 49-54)
    # maps num_hidden_layers -> n_layer 30, num_attention_heads -> n_head 32 and builds
    # llama.py's LlamaDecoderLayer: num_kv_heads = getattr(config, "num_key_value_heads",
    # heads) = 32 (line 288), head_dim = getattr(config, "head_dim", None) or 4096 / 32 = 128
    # (lines 158-159), no layer_types, no window: 30 x 2 x 32 x 128 x 2 B = 491,520 B per token.
    "telechat2-7b-32k": (CONFIGS / "telechat2-7b-32k.json", 30 * 2 * 32 * 128 * 2,
                         HF + "Tele-AI/TeleChat2-7B-32K"),
    # TeleFLMForCausalLM (Tele-FLM-1T): models/teleflm.py TeleFLMForCausalLM(LlamaForCausalLM)
    # changes only the muP scales; llama.py: num_key_value_heads 160, head_dim = 20480 / 160 =
    # 128, no window: 140 layers x 2 x 160 x 128 x 2 B = 11,468,800 B per token.
    "tele-flm-1t": (CONFIGS / "tele-flm-1t.json", 140 * 2 * 160 * 128 * 2,
                    HF + "CofeAI/Tele-FLM-1T"),
    # ChatGLMForConditionalGeneration (NEUDM/PICA-V1, a ChatGLM2-6B P-tuning fine-tune): the
    # registry serves it with models/chatglm.py ChatGLMForCausalLM, as ChatGLMModel (exact):
    # GLMAttention (lines 60-75) total_num_kv_heads = multi_query_group_num 2 (multi_query_attention
    # true), head_dim = hidden / heads = 4096 / 32 = 128, no window; config.num_layers 28:
    # 28 x 2 x 2 x 128 x 2 B = 28,672 B per token (pre_seq_len's prefix encoder is not built).
    "pica-v1": (CONFIGS / "pica-v1.json", 28 * 2 * 2 * 128 * 2, HF + "NEUDM/PICA-V1"),
    # IQuestCoderForCausalLM: 0.32 registry.py maps it to llama.py's LlamaForCausalLM:
    # num_key_value_heads 8 (line 288), head_dim 128 (config.head_dim, lines 158-159),
    # sliding_window null and no layer_types: 80 x 2 x 8 x 128 x 2 B = 327,680 B per token.
    "iquest-coder-v1-40b-base": (CONFIGS / "iquest-coder-v1-40b-base.json",
                                 80 * 2 * 8 * 128 * 2,
                                 HF + "IQuestLab/IQuest-Coder-V1-40B-Base"),
    # NanbeigeForCausalLM: the Transformers backend (models/transformers/base.py lines 633-676:
    # head_size = arch_config.head_size = 4096 / 32 = 128, num_kv_heads = get_num_kv_heads() =
    # num_key_value_heads 32, no layer_types): 36 x 2 x 32 x 128 x 2 B = 589,824 B per token.
    "nanbeige2-8b-chat": (CONFIGS / "nanbeige2-8b-chat.json", 36 * 2 * 32 * 128 * 2,
                          HF + "Nanbeige/Nanbeige2-8B-Chat"),
    # PanguEmbeddedForCausalLM (openPangu-Embedded-7B-V1.1): 0.32 models/openpangu.py
    # OpenPanguDecoderLayer builds OpenPanguEmbeddedAttention (no MLA fields, no
    # param_sink_number: lines 790-880) with num_kv_heads = num_key_value_heads 8 and head_dim =
    # getattr(config, "head_dim", None) or 4096 / 32 = 128 (lines 434-436), no
    # interleaved_sliding_window, so no window (lines 463-476): 34 x 2 x 8 x 128 x 2 B =
    # 139,264 B per token. The loaded model's printout beside the config agrees: k_proj 4096 ->
    # 1024 = 8 x 128, 34 layers.
    "openpangu-embedded-7b-v1.1": (CONFIGS / "openpangu-embedded-7b-v1.1.json",
                                   34 * 2 * 8 * 128 * 2,
                                   HF + "FreedomIntelligence/openPangu-Embedded-7B-V1.1"),
}

# Goldens whose architecture vLLM 0.32's CPU build does not run (no oracle case), with the
# error it stops on.
NO_ORACLE = {
    # models/step1.py builds Attention(..., use_alibi_sqrt=True); vLLM's CPU build stops on a
    # 4-layer shrink with "ValueError: use_alibi_sqrt is not supported by backend CPU_ATTN"
    # (3 December 2026; vLLM's own tests run it with TRITON_ATTN on GPU).
    "step-audio-tts-3b": "use_alibi_sqrt is not supported by backend CPU_ATTN",
}


def test_kimi_k25_reads_its_text_config_as_mla() -> None:
    # The wrapper's language model is Kimi-K2's MLA decoder; the INT4 compressed-tensors
    # quantization of the experts is the text_config's own.
    spec, warnings = load_config(CONFIGS / "kimi-k2.5.json")
    assert spec.attention.kind == "mla" and spec.num_hidden_layers == 61
    assert any("kimi_k25.py" in w for w in warnings)


def test_ling_lite_weighs_its_published_size() -> None:
    # Ling-lite: 16.8B parameters (inclusionAI/Ling README: "Ling-Lite has 16.8 billion
    # parameters"), 64 experts of 1408 plus two shared, over 28 layers.
    from kvplan.weights.params import count_params

    spec, _ = load_config(CONFIGS / "ling-lite-1.5.json")
    assert spec.exact
    assert abs(count_params(spec).total / 1e9 - 16.8) < 0.05


def test_trinity_mini_without_layer_types_takes_the_config_class_pattern(tmp_path: Path) -> None:
    # AfmoeConfig.__post_init__: layer_types sliding unless (i + 1) % 4 == 0 (the period
    # global_attn_every_n_layers, 4 here): the same layers as the published list.
    data = json.loads((CONFIGS / "trinity-mini.json").read_text())
    published = load_config(CONFIGS / "trinity-mini.json")[0].layer_windows
    del data["layer_types"]
    (tmp_path / "config.json").write_text(json.dumps(data))
    assert load_config(tmp_path / "config.json")[0].layer_windows == published
    assert published.count(2048) == 24 and published[3] is None


@pytest.mark.parametrize(("fields", "kv_heads"), [
    ({"num_key_value_heads": 2}, 4),  # num_attention_groups 4 wins: step1.py never reads it
    ({"num_attention_groups": None}, 8),  # absent: Step1Config's default 8
])
def test_step1_kv_heads_are_num_attention_groups(tmp_path: Path, fields: dict,
                                                 kv_heads: int) -> None:
    # models/step1.py: getattr(config, "num_attention_groups", getattr(config,
    # "num_key_value_heads", 1)); the remote Step1Config sets num_attention_groups (default 8).
    data = json.loads((CONFIGS / "step-audio-tts-3b.json").read_text())
    for key, value in fields.items():
        if value is None:
            del data[key]
        else:
            data[key] = value
    (tmp_path / "config.json").write_text(json.dumps(data))
    spec, _ = load_config(tmp_path / "config.json")
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 32 * 2 * kv_heads * 64 * 2


def test_hy_v3_without_first_k_dense_replace_is_refused(tmp_path: Path) -> None:
    # hf-internal-testing/HYV3-tiny-random (blind batch 11, tests/data/blind26/real) states
    # mlp_layer_types but no first_k_dense_replace: vLLM's models/hy_v3.py HYV3DecoderLayer
    # raises "first_k_dense_replace not exist" (lines 391-392, 0.20.2 to 0.34.0) and
    # transformers 5.19's HYV3Config defines no such field, so vLLM 0.32's CPU build stopped on
    # it; kvplan had answered 8 x 2 x 4 x 64 x 2 B = 8,192 B per token with exit 0.
    real = DATA / "blind26" / "real" / "hyv3-tiny-random-hf-internal.json"
    with pytest.raises(SpecError, match="first_k_dense_replace: missing"):
        load_config(real)
    # Stated (as Hy3-preview's 1), the same file is the plain GQA cache: 8 layers x 2 (K, V) x
    # 4 KV heads x head_dim 64 x 2 B = 8,192 B per token.
    data = {**json.loads(real.read_text()), "first_k_dense_replace": 1}
    (tmp_path / "config.json").write_text(json.dumps(data))
    spec, _ = load_config(tmp_path / "config.json")
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 8 * 2 * 4 * 64 * 2 == 8192


@pytest.mark.parametrize(("fields", "field"), [
    # OpenPanguSinkAttention (a sink_len of param_sink_number keys per layer): not modelled.
    ({"param_sink_number": 128}, "param_sink_number"),
    # A window per layer index (openpangu.py lines 463-476): not read by kvplan.
    ({"interleaved_sliding_window": [4096, 4096, 4096, None]}, "interleaved_sliding_window"),
    # All four MLA fields make the layer OpenPanguMLAAttention (lines 790-812).
    ({"kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128},
     "kv_lora_rank"),
    # is_causal false builds a bidirectional encoder (AttentionType.ENCODER_ONLY).
    ({"is_causal": False}, "is_causal"),
])
def test_pangu_embedded_other_layouts_refused(tmp_path: Path, fields: dict, field: str) -> None:
    data = {**json.loads((CONFIGS / "openpangu-embedded-7b-v1.1.json").read_text()), **fields}
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(SpecError) as err:
        load_config(tmp_path / "config.json")
    assert err.value.field == field


def test_pangu_embedded_weighs_its_printed_modules() -> None:
    # The model printout beside the golden config: q/k/v/o with biases (config `bias` true,
    # openpangu.py lines 853-857), MLP 4096 -> 12800 without bias, two RMSNorms a layer, an
    # untied lm_head: 2 x 153,376 x 4,096 + 34 x (2 x (4096 x 4096 + 4096) + 2 x (4096 x 1024 +
    # 1024) + 3 x 4096 x 12800 + 2 x 4096) + 4096 = 8,030,887,936 parameters ("7B" counts no
    # embeddings: less 2 x 628,228,096, 6.77B).
    from kvplan.weights.params import count_params

    spec, _ = load_config(CONFIGS / "openpangu-embedded-7b-v1.1.json")
    per_layer = (2 * (4096 * 4096 + 4096) + 2 * (4096 * 1024 + 1024) + 3 * 4096 * 12800
                 + 2 * 4096)
    assert count_params(spec).total == 2 * 153_376 * 4096 + 34 * per_layer + 4096


# (fields over the published config, q/k/v biased, o_proj biased). vLLM 0.32 models/openpangu.py
# :853-858: o_proj's bias is `attention_bias or bias`, q/k/v's is qkv_bias where the config has
# one, else the same; the remote PanguEmbeddedConfig (configuration_openpangu_dense.py) defaults
# bias to true, so a config.json without it is biased (kvplan.sources.hf_defaults, with a
# warning). kvplan had read `bias` only where attention_bias was absent and refused qkv_bias.
PANGU_BIASES = [
    ({}, True, True),  # the published config: "bias": true
    ({"qkv_bias": False}, False, True),
    ({"attention_bias": False}, True, True),  # False or True
    ({"bias": False}, False, False),
    ({"bias": False, "qkv_bias": True}, True, False),
    ({"bias": None}, False, False),  # null: the remote class keeps None, falsy in vLLM
    (None, True, True),  # "bias" left out: the remote class's default true
]


def _pangu(tmp_path: Path, base: Path, fields: dict | None) -> Path:
    data = json.loads(base.read_text())
    if fields is None:
        del data["bias"]
    else:
        data.update(fields)
    (tmp_path / "config.json").write_text(json.dumps(data))
    return tmp_path / "config.json"


@pytest.mark.parametrize(("fields", "qkv", "o"), PANGU_BIASES)
def test_pangu_embedded_biases_read_as_vllm_builds_them(tmp_path: Path, fields: dict | None,
                                                        qkv: bool, o: bool) -> None:
    # The published openPangu-Embedded-7B-V1.1 (34 layers, hidden 4,096, 32 heads, 8 KV heads of
    # 128): q/k/v biases 4,096 + 2 x 1,024, o_proj's 4,096 a layer, on top of the unbiased
    # 8,030,887,936 - 34 x 10,240 = 8,030,539,776 parameters.
    from kvplan.weights.params import count_params

    spec, _ = load_config(_pangu(tmp_path, CONFIGS / "openpangu-embedded-7b-v1.1.json", fields))
    assert (spec.attention.attention_bias, spec.attention.o_proj_bias) == (qkv, o)
    assert count_params(spec).total == 8_030_539_776 + 34 * (6_144 * qkv + 4_096 * o)


# The oracle shrink tests/data/oracle/openpangu-embedded-7b-v1.1 (4 layers, hidden 4,096, MLP
# 512, vocabulary 4,096, untied) with the same fields, measured with
# tests/oracle/vllm_weight_bytes.py (vLLM 0.32.0 CPU, PYTHONPATH=tests/oracle/remote_configs,
# whose stand-in class takes PanguEmbeddedConfig's bias default) on 2026-12-04: the model's
# parameters at bf16. Unbiased: 2 x 4,096 x 4,096 + 4 x (2 x 4,096^2 + 2 x 4,096 x 1,024 + 3 x
# 4,096 x 512 + 2 x 4,096) + 4,096 = 226,529,280 elements = 453,058,560 B; biases 4 x 6,144 and
# 4 x 4,096 elements (49,152 B and 32,768 B).
PANGU_SHRINK_MEASURED = {True: {True: 453_140_480, False: 453_107_712},
                         False: {True: 453_091_328, False: 453_058_560}}


@pytest.mark.parametrize(("fields", "qkv", "o"), PANGU_BIASES)
def test_pangu_embedded_shrink_weights_equal_vllm(tmp_path: Path, fields: dict | None,
                                                   qkv: bool, o: bool) -> None:
    from kvplan.weights.breakdown import weight_breakdown

    spec, _ = load_config(_pangu(tmp_path, DATA / "oracle" / "openpangu-embedded-7b-v1.1"
                                 / "config.json", fields))
    b = weight_breakdown(spec, None, dtype="bf16")
    assert b.total - b.rope_cache == PANGU_SHRINK_MEASURED[qkv][o]
