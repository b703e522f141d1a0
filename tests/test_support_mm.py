"""Multimodal wrappers of the support table (kvplan/sources/hf_wrappers.py): each exact wrapper's
golden config against the KV bytes derived here by hand from vLLM 0.32's model code, and the
reading rules that make them exact (the sub-config's path, the text class's defaults for the
keys it leaves out, the text family vLLM builds), with refusals where kvplan does not hold what
vLLM would read.

Sources of the golden configs: tests/data/configs/mm/SOURCES.md. `GOLDEN_MM` is merged into
tests/test_support.py's GOLDEN, so the table's own checks (the hand-derived bytes, an exact row
with its oracle case, golden backs an exact row, refused rows refused) cover these rows too; the
oracle cases (tests/data/oracle/<case>) are replayed by tests/test_vllm_oracle.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.kv.cache import rank_caches
from kvplan.sources.hf_config import load_config
from tests.support_refusal import estimate_refusal

DATA = Path(__file__).parent / "data"
MM = DATA / "configs" / "mm"
HF = "https://huggingface.co/"

# id -> (file, KV bytes per token at bf16 over all layers at TP 1, the model's Hub page).
GOLDEN_MM: dict[str, tuple[Path, int, str]] = {
    # models/llava.py builds text_config's LlamaForCausalLM. The published text_config gives
    # only vocab, positions and the norm: LlavaConfig builds LlamaConfig(**text_config), whose
    # defaults are 32 layers, hidden 4096, 32 heads and num_key_value_heads = heads (MHA):
    # 32 x 2 x 32 x (4096 / 32 = 128) x 2 B.
    "llava-1.5-7b": (MM / "llava-1.5-7b.json", 32 * 2 * 32 * 128 * 2,
                     HF + "llava-hf/llava-1.5-7b-hf"),
    # models/llava_next.py over text_config's MistralForCausalLM: MistralConfig defaults 32
    # layers, hidden 4096, 32 heads; the file's 8 KV heads and sliding_window null (no window,
    # not MistralConfig's default 4096): 32 x 2 x 8 x 128 x 2 B. (A third party's re-save of
    # llava-hf/llava-v1.6-mistral-7b-hf with three more grid pinpoints: its text_config is the
    # original's, key for key.)
    "llava-v1.6-mistral-7b-3x3": (MM / "llava-v1.6-mistral-7b-3x3.json", 32 * 2 * 8 * 128 * 2,
                                  HF + "orby-yanan/llava-v1.6-mistral-7b-3x3"),
    # models/qwen2_audio.py: Qwen2ForCausalLM over text_config; Qwen2Config defaults 32 layers,
    # hidden 4096, 32 heads, KV heads = heads, use_sliding_window false (the file's
    # sliding_window 32768 unused): 32 x 2 x 32 x 128 x 2 B. (The Instruct checkpoint's file:
    # the one found verbatim; its text_config is the base checkpoint's as quoted.)
    "qwen2-audio-7b-instruct": (MM / "qwen2-audio-7b-instruct.json", 32 * 2 * 32 * 128 * 2,
                                HF + "Qwen/Qwen2-Audio-7B-Instruct"),
    # models/qwen3_vl_moe.py: Qwen3MoeLLMModel (qwen3_moe.py) over text_config, head_dim 128:
    # 48 x 2 x 4 x 128 x 2 B.
    "qwen3-vl-30b-a3b": (MM / "qwen3-vl-30b-a3b.json", 48 * 2 * 4 * 128 * 2,
                         HF + "Qwen/Qwen3-VL-30B-A3B-Instruct"),
    # models/idefics3.py: LlamaModel over text_config (model_type absent: Idefics3Config's
    # "llama"); 3 KV heads of 576 / 9 = 64: 30 x 2 x 3 x 64 x 2 B.
    "smolvlm-256m": (MM / "smolvlm-256m.json", 30 * 2 * 3 * 64 * 2,
                     HF + "HuggingFaceTB/SmolVLM-256M-Instruct"),
    # models/smolvlm.py: SmolVLMForConditionalGeneration is Idefics3's class (LlamaModel over
    # text_config). SmolVLM2-2.2B's text_config (model_type llama) states head_dim 64, hidden
    # 2048, 24 layers and neither head count: LlamaConfig's defaults, 32 heads and
    # num_key_value_heads = heads (its perceiver_config's 1 KV head is the unused resampler's).
    # 24 x 2 x 32 x 64 x 2 B. (The top-level torch_dtype float32 is downcast to 16 bits by
    # vLLM's config/model.py _resolve_auto_dtype: 2 B per element.)
    "smolvlm2-2.2b": (MM / "smolvlm2-2.2b.json", 24 * 2 * 32 * 64 * 2,
                      HF + "HuggingFaceTB/SmolVLM2-2.2B-Instruct"),
    # models/glm4_1v.py: model_type glm4v builds architectures=["Glm4ForCausalLM"] (glm4.py)
    # over text_config (glm4v_text): 40 layers x 2 x 2 KV heads x 4096 / 32 = 128 x 2 B.
    "glm-4.6v-flash": (MM / "glm-4.6v-flash.json", 40 * 2 * 2 * 128 * 2,
                       HF + "zai-org/GLM-4.6V-Flash"),
    # models/llava_onevision.py: text_config's own Qwen2ForCausalLM (qwen2.py): 28 layers x 2
    # x 4 KV heads x 3584 / 28 = 128 x 2 B; Qwen2Config's use_sliding_window false (no window).
    "llava-onevision-qwen2-7b-ov": (MM / "llava-onevision-qwen2-7b-ov.json",
                                    28 * 2 * 4 * 128 * 2,
                                    HF + "llava-hf/llava-onevision-qwen2-7b-ov-hf"),
    # models/glm4_1v.py: Glm4MoeForCausalLM (glm4_moe.py) over text_config (glm4v_moe_text):
    # 46 layers x 2 x 8 KV heads x head_dim 128 x 2 B (its 96 query heads change no cache).
    "glm-4.5v": (MM / "glm-4.5v.json", 46 * 2 * 8 * 128 * 2, HF + "zai-org/GLM-4.5V"),
    # models/qwen2_vl.py: Qwen2ForCausalLM (qwen2.py) over the text config; this file is flat
    # (transformers 5.19 Qwen2VLConfig pops its top-level text keys into Qwen2VLTextConfig):
    # 28 layers x 2 x 4 KV heads x 3584 / 28 = 128 x 2 B; use_sliding_window false (no window).
    "olmocr-7b-0225-preview": (MM / "olmocr-7b-0225-preview.json", 28 * 2 * 4 * 128 * 2,
                               HF + "allenai/olmOCR-7B-0225-preview"),
    # Issue 26, blind batch 4 / 7's wrappers (their published files, verbatim):
    # models/qwen2_5_omni_thinker.py: Qwen2_5OmniModel is the thinker, which builds
    # architectures=["Qwen2ForCausalLM"] (qwen2.py) over thinker_config.text_config; the audio
    # tower (transformers' Qwen2_5OmniAudioEncoder) and the Qwen2.5-VL vision tower hold no
    # paged cache, the talker is not built. 28 layers x 2 x 4 KV heads x 3584 / 28 = 128 x 2 B;
    # use_sliding_window false (its sliding_window 32768 unused).
    "qwen2.5-omni-7b": (MM / "qwen2.5-omni-7b.json", 28 * 2 * 4 * 128 * 2,
                        HF + "Qwen/Qwen2.5-Omni-7B"),
    # The AWQ release (Qwen2_5OmniForConditionalGeneration, the same thinker in vLLM's
    # registry): the same text_config; AWQ packs the weights only, the cache is at the model
    # dtype (bf16): 28 x 2 x 4 x 128 x 2 B.
    "qwen2.5-omni-7b-awq": (MM / "qwen2.5-omni-7b-awq.json", 28 * 2 * 4 * 128 * 2,
                            HF + "Qwen/Qwen2.5-Omni-7B-AWQ"),
    # models/lightonocr.py: LightOnOCRForConditionalGeneration (Mistral3's class, model_type
    # mistral3) builds text_config's own Qwen3ForCausalLM (qwen3.py): 28 layers x 2 x 8 KV
    # heads x head_dim 128 (not hidden 1024 / 16 heads = 64) x 2 B.
    "lightonocr-1b-1025": (MM / "lightonocr-1b-1025.json", 28 * 2 * 8 * 128 * 2,
                           HF + "lightonai/LightOnOCR-1B-1025"),
    # models/llava_next_video.py: text_config's own LlamaForCausalLM. The text_config states
    # vocab, positions, rope_scaling and the norm only: LlavaNextVideoConfig builds
    # LlamaConfig(**text_config), whose defaults are 32 layers, hidden 4096, 32 heads and
    # num_key_value_heads = heads: 32 x 2 x 32 x 128 x 2 B.
    "llava-next-video-7b": (MM / "llava-next-video-7b.json", 32 * 2 * 32 * 128 * 2,
                            HF + "llava-hf/LLaVA-NeXT-Video-7B-hf"),
    # models/granite_speech.py: text_config's own GraniteForCausalLM (granite.py); the
    # conformer encoder and Q-Former projector attend in plain torch. 40 layers x 2 x 8 KV heads
    # x 4096 / 32 = 128 x 2 B.
    "granite-speech-3.3-8b": (MM / "granite-speech-3.3-8b.json", 40 * 2 * 8 * 128 * 2,
                              HF + "ibm-granite/granite-speech-3.3-8b"),
    # models/granite_speech_plus.py: GraniteSpeechForConditionalGeneration's class with another
    # CTC encoder, the same text_config GraniteForCausalLM: 40 layers x 2 x 4 KV heads x
    # 2048 / 16 = 128 x 2 B. (text_config's dtype float32 is the 16-bit model dtype's: the
    # root's bfloat16 is vLLM's, and vLLM downcasts float32 anyway.)
    "granite-speech-4.1-2b-plus": (MM / "granite-speech-4.1-2b-plus.json",
                                   40 * 2 * 4 * 128 * 2,
                                   HF + "ibm-granite/granite-speech-4.1-2b-plus"),
    # models/glm_ocr.py: Glm4vForConditionalGeneration's class, glm4_1v.py builds
    # architectures=["Glm4ForCausalLM"] (glm4.py, head_dim = config.head_dim) for glm_ocr:
    # 16 layers x 2 x 8 KV heads x head_dim 128 (not 1536 / 16 = 96) x 2 B. Its
    # num_nextn_predict_layers 1 is the MTP draft (GlmOcrMTPModel), not built by Glm4ForCausalLM.
    "glm-ocr": (MM / "glm-ocr.json", 16 * 2 * 8 * 128 * 2, HF + "zai-org/GLM-OCR"),
    # models/ovis.py: Ovis builds get_text_config()'s own architecture; vLLM's OvisConfig makes
    # llm_config the text config (Qwen2ForCausalLM here): 28 layers x 2 x 4 KV heads x
    # 3584 / 28 = 128 x 2 B; use_sliding_window false.
    "ovis2-8b": (MM / "ovis2-8b.json", 28 * 2 * 4 * 128 * 2, HF + "AIDC-AI/Ovis2-8B"),
    # models/paddleocr_vl.py: copies text_config's fields over the top-level config and builds
    # Ernie4_5ForCausalLM (ernie45.py, models/llama.py's layers) over it. The published file is
    # flat: 18 layers x 2 x 2 KV heads x head_dim 128 (not 1024 / 16 = 64) x 2 B; no window.
    "paddleocr-vl-1.5": (MM / "paddleocr-vl-1.5.json", 18 * 2 * 2 * 128 * 2,
                         HF + "PaddlePaddle/PaddleOCR-VL-1.5"),
    # models/phi4siglip.py: Phi4ForCausalLMV builds architectures=["Phi3ForCausalLM"] over the
    # whole flat config (model_type phi4-siglip, a remote Phi3Config subclass): 40 layers x 2 x
    # 10 KV heads x 5120 / 40 = 128 x 2 B; sliding_window null.
    "phi-4-reasoning-vision-15b": (MM / "phi-4-reasoning-vision-15b.json",
                                   40 * 2 * 10 * 128 * 2,
                                   HF + "microsoft/Phi-4-reasoning-vision-15B"),
    # models/minicpmv4_6.py: Qwen3_5ForCausalLM (qwen3_5.py) over text_config (qwen3_5_text,
    # read as Qwen3.5's wrapper reads it): full attention every 4th layer, 6 of 24, x 2 x 2 KV
    # heads x head_dim 256 x 2 B of KV per token; its 18 Gated DeltaNet layers hold a state
    # per request (not per token).
    "minicpm-v-4.6": (MM / "minicpm-v-4.6.json", 6 * 2 * 2 * 256 * 2,
                      HF + "openbmb/MiniCPM-V-4_6"),
    # models/glmasr.py (vLLM 0.32, GlmAsrForConditionalGeneration.__init__):
    # init_vllm_registered_model(hf_config=config.text_config,
    # architectures=["LlamaForCausalLM"]); llama.py's LlamaAttention: head_dim from the config
    # (128), 4 KV heads. The GlmAsrEncoder (MMEncoderAttention) and projector hold no paged
    # cache. 28 layers x 2 x 4 x 128 x 2 B = 57,344 B. (Blind batch 9's frozen copy.)
    "glm-asr-nano-2512": (MM / "glm-asr-nano-2512.json", 28 * 2 * 4 * 128 * 2,
                          HF + "zai-org/GLM-ASR-Nano-2512"),
    # models/hyperclovax_vision_v2.py (vLLM 0.32, HCXVisionV2ForCausalLM.__init__, :404-444):
    # init_vllm_registered_model(hf_config=config.text_config), its architecture
    # HyperCLOVAXForCausalLM (models/hyperclovax.py: num_key_value_heads x config.head_dim, no
    # window); the Qwen2.5-VL vision tower and linear projector hold no paged cache. 72 layers
    # x 2 x 8 KV heads x 128 x 2 B = 294,912 B. (Blind batch 11's frozen copy; its shrunken
    # copy, 4 text layers, equals vLLM's CPU build: 512 blocks of 128, 65,536 tokens, 8.0x.)
    "hyperclovax-seed-think-32b": (MM / "hyperclovax-seed-think-32b.json", 72 * 2 * 8 * 128 * 2,
                                   HF + "naver-hyperclovax/HyperCLOVAX-SEED-Think-32B"),
    # models/qwen3_asr.py (vLLM 0.32, Qwen3ASRForConditionalGeneration.__init__, :440-462):
    # Qwen3ForCausalLM over thinker_config.text_config (qwen3.py: num_key_value_heads x the
    # config's head_dim, no window); the audio tower (Qwen3OmniMoeAudioEncoder) attends with
    # MMEncoderAttention, no paged cache. text_config: 28 layers, 8 KV heads, head_dim 128
    # (not hidden 1024 / 16 heads = 64): 28 x 2 x 8 x 128 x 2 B = 114,688 B. The file states no
    # dtype at the top nor in text_config (thinker_config's bfloat16 is not read): vLLM takes
    # the safetensors' dtype, or float32 downcast to bfloat16 without them.
    "qwen3-asr-0.6b": (MM / "qwen3-asr-0.6b.json", 28 * 2 * 8 * 128 * 2,
                       HF + "Qwen/Qwen3-ASR-0.6B"),
    # models/blip2.py (vLLM 0.32, Blip2ForConditionalGeneration.__init__, :514-555): the
    # text_config's own OPTForCausalLM (opt.py OPTAttention: every head its own KV head of
    # hidden / heads, no window); the BLIP vision tower (MMEncoderAttention) and the Q-Former
    # (plain-torch attention) hold no paged cache. microsoft/OmniParser's icon-caption BLIP-2
    # (a fine-tune of Salesforce/blip2-opt-2.7b): text_config 32 layers, hidden 2560, 32 heads:
    # 32 x 2 x 32 x (2560 / 32 = 80) x 2 B = 327,680 B. The wrapper's torch_dtype bfloat16 is
    # the one vLLM reads (text_config's float16 is not): 2 B per element.
    "omniparser-icon-caption-blip2": (MM / "omniparser-icon-caption-blip2.json",
                                      32 * 2 * 32 * 80 * 2,
                                      HF + "microsoft/OmniParser"),
    # models/internvl.py (vLLM 0.32, InternVLChatModel.__init__, :589-625):
    # init_vllm_registered_model(hf_config=config.text_config), llm_config aliased as
    # text_config (transformers_utils/config.py:152-154, :746-750); the checkpoint's remote
    # InternVLChatConfig builds llm_config by architectures[0], here InternLM2ForCausalLM
    # (models/internlm2.py: num_key_value_heads x hidden_size / num_attention_heads, no window);
    # InternViT and the mlp1 projector hold no paged cache. llm_config: 24 layers, 8 KV heads of
    # 2048 / 16 = 128: 24 x 2 x 8 x 128 x 2 B = 98,304 B. (Blind batch 14's frozen copy,
    # sophgo/LLM-TPU's; its shrunken copy equals vLLM's CPU build: 512 blocks of 128, 65,536
    # tokens, 64.0x at 1,024 tokens.)
    "internvl2-2b": (MM / "internvl2-2b.json", 24 * 2 * 8 * 128 * 2,
                     HF + "OpenGVLab/InternVL2-2B"),
}


def test_uncounted_towers_are_an_assumption() -> None:
    # The KV cache is exact; the weights leave the tower out, and the JSON says so.
    spec, _ = load_config(MM / "llava-1.5-7b.json")
    assert not spec.exact
    (assumed,) = spec.assumptions
    assert assumed.field == "vision_config" and "not counted" in assumed.value
    # Qwen3-VL-MoE's tower is priced (kvplan.weights.breakdown's Qwen3-VL ViT): nothing assumed.
    spec, _ = load_config(MM / "qwen3-vl-30b-a3b.json")
    assert spec.exact and spec.qwen_vit is not None and spec.qwen_vit.deepstack_layers == 3


def test_defaults_come_from_the_text_class(tmp_path: Path) -> None:
    # MistralConfig's sliding_window is 4096: a text_config that leaves the key out slides (as
    # transformers builds it and vLLM's llama.py reads it); the published null does not.
    config = json.loads((MM / "llava-v1.6-mistral-7b-3x3.json").read_text())
    del config["text_config"]["sliding_window"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, warnings = load_config(path)
    assert spec.sliding_window == 4096
    assert any("sliding_window 4096" in w for w in warnings)
    # No text_config at all: LlavaConfig builds LlamaConfig() (32 layers of 32 x 128, MHA).
    config = json.loads((MM / "llava-1.5-7b.json").read_text())
    del config["text_config"]
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 32 * 2 * 32 * 128 * 2


def test_a_text_class_kvplan_does_not_hold_is_refused(tmp_path: Path) -> None:
    # Qwen3VLMoeTextConfig's defaults (16 KV heads, head_dim 128) are not kvplan's reader's:
    # a text_config leaving a KV field to them is refused, one line naming it.
    config = json.loads((MM / "qwen3-vl-30b-a3b.json").read_text())
    del config["text_config"]["num_key_value_heads"]
    line = estimate_refusal(tmp_path, config)
    assert "text_config.num_key_value_heads" in line


def test_qwen_vl_text_models_read_as_their_family() -> None:
    # qwen2_5_vl_text and qwen3_vl_text are qwen2 / qwen3 in vLLM (Qwen2ForCausalLM,
    # Qwen3LLMModel): read field by field, not as an unknown model_type with assumptions.
    spec, _ = load_config(DATA / "configs" / "qwen3-vl-4b.json")
    assert spec.exact
    # Qwen2.5-VL's tower is priced too (kvplan.weights.breakdown._qwen2_vit), but not vLLM's
    # encoder profile of it (kvplan.engines.vllm.mm): the one assumption left, on the budget.
    spec, _ = load_config(DATA / "configs" / "qwen2.5-vl-7b.json")
    assert spec.qwen2_vit is not None and spec.kv_exact and not spec.exact
    assert [(a.field, a.value, a.affects) for a in spec.assumptions] == [
        ("vision_config", "encoder profile not in the reserve", "weights")]
    assert spec.attention.attention_bias  # qwen2's q/k/v biases, as the family reads them


def test_glm_45v_language_model_weighs_the_published_tensors() -> None:
    # The GLM-4.5V report (tests/data/configs/mm/SOURCES.md) lists 107,710,933,120 parameters
    # in the checkpoint's tensors; its vision tower's tensors, from the same list: 24 blocks of
    # qkv 4608 x 1536 + proj 1536 x 1536 + gate / up / down 3 x 4096 x 1536 + two norms of
    # 1536; the merger's proj 4096 x 4096, gate / up / down 3 x 10944 x 4096 and LayerNorm
    # 2 x 4096; downsample 4096 x 1536 x 2 x 2 + 4096; patch_embed 1536 x 3 x 2 x 14 x 14 +
    # 1536; position_embedding 576 x 1536; post_conv and post LayerNorms 2 x 1536. kvplan counts
    # the language model alone (the tower is the assumption), so it must weigh the difference.
    from kvplan.weights.params import count_params

    tower = (24 * (4608 * 1536 + 1536 * 1536 + 3 * 4096 * 1536 + 2 * 1536)
             + 4096 * 4096 + 3 * 10944 * 4096 + 2 * 4096
             + 4096 * 1536 * 2 * 2 + 4096 + 1536 * 3 * 2 * 14 * 14 + 1536
             + 576 * 1536 + 2 * 1536)
    spec, _ = load_config(MM / "glm-4.5v.json")
    language_model = 107_710_933_120 - tower
    assert abs(count_params(spec).total - language_model) / language_model < 1e-4


def test_unpriced_tower_leaves_the_kv_exact() -> None:
    # llava-1.5-7b: the CLIP tower's weights are not counted (an assumption about weights only),
    # so the JSON says exact false but kv_exact true, and the table's note says the cache sizes
    # are read from the config rather than that the model_type was guessed.
    path = Path(__file__).parent / "data" / "configs" / "mm" / "llava-1.5-7b.json"
    result = CliRunner().invoke(app, ["estimate", str(path), "-c", "4096", "-f", "json"])
    data = json.loads(result.stdout)
    assert (data["exact"], data["kv_exact"]) == (False, True)
    assert [(a["field"], a["affects"]) for a in data["assumptions"]] == [
        ("vision_config", "weights")]
    table = CliRunner().invoke(app, ["estimate", str(path), "-c", "4096"],
                               env={"COLUMNS": "200"})
    assert "every cache size is read from the config" in table.stdout
    assert "is read from its standard fields" not in table.stdout


@pytest.mark.parametrize(("golden", "text_type"), [
    ("qwen2.5-vl-7b.json", "qwen2_5_vl_text"), ("mm/olmocr-7b-0225-preview.json", "qwen2_vl_text")])
def test_qwen2_vl_flat_config_reads_as_its_nested_form(tmp_path: Path, golden: str,
                                                      text_type: str) -> None:
    # Qwen/Qwen2.5-VL-7B-Instruct's and allenai/olmOCR-7B-0225-preview's (Qwen2-VL-7B) published
    # config.json (the goldens) are flat: the decoder's fields at the top, no text_config; a
    # transformers >= 4.53 save writes them again under text_config (model_type
    # qwen2_5_vl_text / qwen2_vl_text). Both read as qwen2 (vLLM qwen2_5_vl.py / qwen2_vl.py:
    # Qwen2ForCausalLM): 28 layers x 4 KV heads x 128 x 2 x 2 B = 57,344 B per token, and the
    # tower priced (kvplan.weights.breakdown._qwen2_vit); only vLLM's encoder profile of it
    # is assumed (not modelled: exact false).
    flat = json.loads((Path(__file__).parent / "data" / "configs" / golden).read_text())
    assert "text_config" not in flat
    text = {k: v for k, v in flat.items() if k not in ("vision_config", "architectures")}
    nested = {**flat, "text_config": {**text, "model_type": text_type}}
    for name, config in (("flat", flat), ("nested", nested)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps(config))
        result = CliRunner().invoke(app, ["estimate", str(tmp_path / name), "-c", "4096",
                                          "-f", "json"])
        data = json.loads(result.stdout)
        assert data["bytes_per_token"] == 28 * 4 * 128 * 2 * 2 == 57_344, name
        assert data["kv_exact"] is True and data["exact"] is False, name
        assert [a["value"] for a in data["assumptions"]] == [
            "encoder profile not in the reserve"], name


def test_omni_towers_beside_the_thinkers_text_config_are_the_assumption() -> None:
    # Qwen2.5-Omni keeps its towers in thinker_config, beside the language model: the weights
    # leave them out (an assumption on the weights only), the cache is the text model's.
    spec, warnings = load_config(MM / "qwen2.5-omni-7b.json")
    (assumed,) = spec.assumptions
    assert assumed.field == "thinker_config.vision_config, thinker_config.audio_config"
    assert assumed.affects == "weights"
    assert any("thinker_config.text_config of a qwen2_5_omni wrapper" in w for w in warnings)


def test_ovis_without_a_text_model_type_is_refused(tmp_path: Path) -> None:
    # vLLM's OvisConfig builds llm_config with AutoConfig.for_model(llm_config["model_type"]):
    # no default, so a file without it does not load in vLLM; kvplan says so in one line.
    config = json.loads((MM / "ovis2-8b.json").read_text())
    del config["llm_config"]["model_type"]
    line = estimate_refusal(tmp_path, config)
    assert "llm_config.model_type" in line and "ovis.py" in line


@pytest.mark.parametrize(("path", "token_bytes"), [
    # tiny-random/glm-4v's published config.json (issue 26 blind batch 9, frozen at 9b7991c):
    # text_config (glm4v_text) states hidden 64, 2 heads, 1 KV head, 2 layers and no head_dim.
    # transformers 5.19's Glm4vTextConfig holds no head_dim, and vLLM 0.32's glm4.py builds
    # Glm4Attention with head_dim=getattr(config, "head_dim", None), then `head_dim or
    # hidden_size // total_num_heads`: 64 / 2 = 32, so 2 layers x 2 x 1 x 32 x 2 B = 256 B,
    # as vLLM's CPU build allocated (1 GiB / 256 B = 4,194,304 tokens,
    # tests/data/blind26/shrunk/glm-4v-tiny-random/results.json). Glm4Config's default 128,
    # which kvplan took before, gave 1,024 B.
    (DATA / "blind26" / "real" / "glm-4v-tiny-random.json", 2 * 2 * 1 * (64 // 2) * 2),
    # GLM-OCR's published text_config with its head_dim 128 removed: GlmOcrTextConfig has none
    # either, so glm4.py takes 1536 / 16 = 96: 16 layers x 2 x 8 KV heads x 96 x 2 B (its MTP
    # layer, num_nextn_predict_layers 1, is not built by the base model). Its mrope_section
    # [16, 24, 24] is cut to [12, 18, 18], half the 96-wide heads: vLLM 0.32's mrope.py:364
    # asserts that, and kvplan refuses any other section since (blind batch 15).
    (MM / "glm-ocr.json", 16 * 2 * 8 * (1536 // 16) * 2),
])
def test_glm4_text_without_head_dim_takes_hidden_over_heads(tmp_path: Path, path: Path,
                                                             token_bytes: int) -> None:
    config = json.loads(path.read_text())
    config["text_config"].pop("head_dim", None)
    if path.name == "glm-ocr.json":
        config["text_config"]["rope_parameters"]["mrope_section"] = [12, 18, 18]
    (tmp_path / "config.json").write_text(json.dumps(config))
    spec, warnings = load_config(tmp_path / "config.json")
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == token_bytes
    assert any("text_config.head_dim: not stated" in w for w in warnings)


def test_glmasr_text_defaults_are_its_config_class(tmp_path: Path) -> None:
    # GlmAsrConfig (transformers 5.19) lays _default_text_config_kwargs (28 layers, 16 heads,
    # 4 KV heads, hidden 2048) under text_config's keys, not LlamaConfig's defaults (32 layers
    # of 32 MHA heads x 128): a text_config leaving the layer and head counts out, or none at
    # all, is GLM-ASR-Nano's language model, 28 x 2 x 4 x (2048 / 16 = 128) x 2 B.
    config = json.loads((MM / "glm-asr-nano-2512.json").read_text())
    for key in ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim"):
        del config["text_config"][key]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, warnings = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 28 * 2 * 4 * 128 * 2
    assert any("num_key_value_heads 4" in w for w in warnings)
    del config["text_config"]
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 28 * 2 * 4 * 128 * 2


def test_glmasr_other_text_model_is_refused(tmp_path: Path) -> None:
    # glmasr.py builds LlamaForCausalLM over text_config whatever its model_type: a qwen2 text
    # config would be read by llama.py, not qwen2.py; kvplan refuses it in one line.
    config = json.loads((MM / "glm-asr-nano-2512.json").read_text())
    config["text_config"]["model_type"] = "qwen2"
    line = estimate_refusal(tmp_path, config)
    assert "text_config.model_type" in line and "glmasr.py" in line


def test_granite_speech_projector_type_unknown_to_transformers_is_refused(tmp_path: Path) -> None:
    # ibm-granite/granite-speech-3.2-8b (issue 26, blind batch 10: hlky/dinoml_v2's byte-exact
    # copy) names projector_config.model_type 'granite_speech_qformer', a transformers 4.50-era
    # name. GraniteSpeechConfig.__post_init__ (transformers 5.19, what vLLM 0.32 loads) builds
    # CONFIG_MAPPING[projector_config["model_type"]], which has no such key: vLLM 0.32's CPU
    # build stopped at "KeyError: 'granite_speech_qformer'" (tests/data/blind26/shrunk/
    # granite-speech-3.2-8b/results.json), where kvplan had answered exit 0.
    real = DATA / "blind26" / "real" / "granite-speech-3.2-8b.json"
    result = CliRunner().invoke(app, ["estimate", str(real), "--context", "4096"])
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "projector_config.model_type" in line and "granite_speech_qformer" in line
    # The same file with 5.19's Blip-2 Q-Former type loads: text_config's GraniteForCausalLM,
    # 40 layers x 2 (K, V) x 8 KV heads x (4096 / 32 = 128) x 2 B = 163,840 B/token.
    config = json.loads(real.read_text())
    config["projector_config"]["model_type"] = "blip_2_qformer"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 40 * 2 * 8 * 128 * 2


def test_hyperclovax_vision_without_a_text_model_type_is_refused(tmp_path: Path) -> None:
    # The remote HCXVisionConfig (model_type vlm) builds text_config from its own model_type,
    # with no default text model: left out, kvplan refuses rather than guess one.
    config = json.loads((MM / "hyperclovax-seed-think-32b.json").read_text())
    del config["text_config"]["model_type"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json"])
    assert result.exit_code == 2 and "text_config.model_type" in result.stderr


def test_hyperclovax_omni_audio_tower_is_refused() -> None:
    # naver-hyperclovax/HyperCLOVAX-SEED-Omni-8B (blind batch 11's frozen copy): the same
    # HCXVisionV2ForCausalLM over a llama text_config (36 layers x 8 KV heads x 128), plus
    # audio_config and discrete_audio_config. vLLM 0.32's class builds no audio tower and its
    # AutoWeightsLoader ignores only discrete_vision_model (hyperclovax_vision_v2.py:381-391;
    # models/utils.py raises on a weight with no module), so the checkpoint's audio weights
    # would stop the load: refused in one line.
    path = DATA / "blind26" / "real" / "hyperclovax-seed-omni-8b.json"
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "audio_config" in result.stderr and "hyperclovax_vision_v2.py" in result.stderr


def test_qwen3_asr_text_model_other_than_qwen3_is_refused(tmp_path: Path) -> None:
    # vLLM's Qwen3ASRConfig builds thinker_config.text_config as Qwen3ASRTextConfig and
    # qwen3_asr.py builds Qwen3ForCausalLM over it whatever its model_type says; kvplan reads
    # it as qwen3 only (Qwen3ASRTextConfig's cache defaults are Qwen3Config's).
    config = json.loads((MM / "qwen3-asr-0.6b.json").read_text())
    config["thinker_config"]["text_config"]["model_type"] = "llama"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json"])
    assert result.exit_code == 2 and "thinker_config.text_config.model_type" in result.stderr


def test_qwen3_asr_text_class_model_type_reads_as_qwen3(tmp_path: Path) -> None:
    # Issue 26, blind batch 14: sophgo/LLM-TPU's Qwen3-ASR copy (hidden 1024, 28 layers: the
    # 0.6B shape), saved by transformers 4.57.6, names the text class by vLLM's own
    # Qwen3ASRTextConfig model_type, qwen3_asr_text (vLLM 0.32
    # transformers_utils/configs/qwen3_asr.py:234; built whatever the type says, :360-361), and
    # qwen3_asr.py:459-461 builds Qwen3ForCausalLM over it. Refused before this case; read as
    # qwen3 since: 28 layers x 2 x 8 KV heads x head_dim 128 (stated) x 2 B = 114,688 B.
    path = DATA / "blind26" / "real" / "qwen3-asr-1.7b-sophgo.json"
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json", "-c", "4096"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["bytes_per_token"] == 28 * 2 * 8 * 128 * 2 == 114688
    # head_dim left out is refused (kvplan holds no Qwen3ASRTextConfig defaults to fill it).
    config = json.loads(path.read_text())
    del config["thinker_config"]["text_config"]["head_dim"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json"])
    assert result.exit_code == 2 and "text_config.head_dim" in result.stderr


def test_flat_glm4v_config_reads_its_top_level_decoder() -> None:
    # Issue 26, blind batch 14: GLM-4.1V-9B-Thinking as sophgo/LLM-TPU ships it (saved by
    # transformers 4.53.0dev) has no text_config, its decoder's fields at the top. Glm4vConfig
    # (transformers 5.19, vLLM 0.32's) builds text_config = Glm4vTextConfig(**kwargs) from
    # them (__post_init__), and glm4_1v.py builds Glm4ForCausalLM over it; with no head_dim,
    # glm4.py takes hidden 4096 / 32 heads = 128. Refused before this case ("left to the
    # class defaults"); since: 40 layers x 2 x 2 KV heads x 128 x 2 B = 40,960 B.
    path = DATA / "blind26" / "real" / "glm-4.1v-9b-thinking-sophgo.json"
    assert "text_config" not in json.loads(path.read_text())
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json", "-c", "4096"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["bytes_per_token"] == 40 * 2 * 2 * 128 * 2 == 40960
    assert "built from the file's top-level keys" not in result.stderr
    assert "builds it from the file's top-level keys" in result.stderr


def test_blip2_text_model_left_to_opt_defaults() -> None:
    # Blip2Config builds text_config as OPTConfig(**text_config) (transformers 5.19): the file
    # leaves out vocab_size and max_position_embeddings, so OPTConfig's 50,272 and 2,048 hold
    # (OmniParser's Hub checkpoint is the Salesforce model's 50,272-row embedding).
    spec, warnings = load_config(MM / "omniparser-icon-caption-blip2.json")
    assert spec.vocab_size == 50272 and spec.max_position_embeddings == 2048
    assert any("vocab_size 50272, max_position_embeddings 2048" in w for w in warnings)


def test_blip2_text_model_other_than_opt_is_refused(tmp_path: Path) -> None:
    # blip2-flan-t5-* wrap a T5 encoder-decoder: vLLM's blip2.py would build its T5 class,
    # which kvplan does not read; only an OPT text model is taken.
    config = json.loads((MM / "omniparser-icon-caption-blip2.json").read_text())
    config["text_config"]["model_type"] = "t5"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["estimate", str(path), "-f", "json"])
    assert result.exit_code == 2 and "text_config.model_type" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
