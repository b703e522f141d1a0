"""Multimodal wrappers: where a wrapper's config.json keeps its language model, and what that
language model is, as vLLM 0.32 builds it.

A multimodal wrapper's KV cache is its language model's: vLLM's wrapper class builds the vision or
audio tower beside a decoder it creates from a sub-config (``init_vllm_registered_model(
hf_config=config.text_config, ...)`` in ``vllm/model_executor/models/<wrapper>.py``), and only
that decoder's attention layers hold KV pages. `WRAPPERS` says, wrapper ``model_type`` by
``model_type``, which sub-config that is and which transformers config class fills the keys it
leaves out (transformers 5.19, the version vLLM 0.32's CPU build loads: ``LlavaConfig`` builds
``CONFIG_MAPPING[text_config.get("model_type", "llama")](**text_config)``, so a field the
published file leaves out takes that class's default). `TEXT_FAMILY` names the kvplan family of
a text sub-config's own ``model_type`` when vLLM builds it with another family's model code.

The towers hold no KV cache; their weights are not counted (an assumption on the spec, see
`tower_assumption`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kvplan._util.dtypes import WEIGHT_DTYPE_ALIASES
from kvplan._util.errors import SpecError
from kvplan.sources.hf_defaults import class_defaults
from kvplan.sources.hf_reader import config_model_type

# Sub-configs that hold a multimodal checkpoint's language model, as vLLM's get_hf_text_config
# looks for them (text_config, then llm_config / language_config of some wrappers).
TEXT_KEYS = ("text_config", "llm_config", "language_config", "thinker_config")


@dataclass(frozen=True, kw_only=True)
class Wrapper:
    """One wrapper family: the path to its language model's sub-config, the text model_type its
    config class assumes when the sub-config does not say, and the vLLM file that builds it."""

    keys: tuple[str, ...]  # e.g. ("text_config",), ("thinker_config", "text_config")
    # The sub-config's model_type when it names none (the class default); None: the config
    # class has none (vLLM fails to load such a file), so kvplan refuses it.
    default_text: str | None
    vllm: str  # vLLM 0.32 models/<file>: the decoder it builds from the sub-config
    # The wrapper config class's own defaults for its text sub-config, under the file's keys
    # and over the text class's (GlmAsrConfig builds CONFIG_MAPPING[model_type](**{
    # **_default_text_config_kwargs, **text_config})); empty: none.
    text_kwargs: Mapping[str, Any] = field(default_factory=dict)
    # The text model_types the wrapper's vLLM class builds as they are; another is refused
    # (glmasr.py builds architectures=["LlamaForCausalLM"] whatever text_config's model_type
    # says). Empty: any.
    text_types: tuple[str, ...] = ()
    # Tower sub-configs the wrapper's config class builds as CONFIG_MAPPING[model_type], and the
    # model_types kvplan takes there (its class default first); another is refused, since
    # transformers 5.19 (what vLLM 0.32 loads) may not know it and the file would not load.
    tower_types: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Tower sub-configs whose weights the wrapper's vLLM class neither builds nor skips: its
    # AutoWeightsLoader raises on them (models/utils.py), so such a checkpoint does not load.
    unloaded_towers: tuple[str, ...] = ()
    # The config class builds the text sub-config by its architectures[0], not its model_type
    # ({architecture: the model_type of the class built}); another architecture, or a
    # model_type that is not that class's, is refused. Empty: by model_type.
    text_architectures: Mapping[str, str] = field(default_factory=dict)
    # The config class builds an absent text sub-config from the file's top-level keys
    # (Glm4vConfig.__post_init__, transformers 5.19: text_config = Glm4vTextConfig(**kwargs)),
    # so a flat file's decoder fields are its text model's; False: the class's defaults.
    flat_text: bool = False
    # The class vLLM builds over the sub-config (init_vllm_registered_model(architectures=[...]),
    # whatever the sub-config names); None: the sub-config's own (below, `text_class_fields`).
    text_class: str | None = None
    # False: the wrapper builds its decoder from its own code, not through vLLM's registry
    # (idefics3.py's LlamaModel, qwen3_vl_moe.py's Qwen3MoeLLMForCausalLM): no text class.
    registered: bool = True


# vLLM 0.32, vllm/model_executor/models/: each builds its decoder with
# init_vllm_registered_model(hf_config=<keys>, ...) unless said otherwise.
WRAPPERS: dict[str, Wrapper] = {
    # llava.py: the text_config's own architecture (LlamaForCausalLM, MistralForCausalLM, ...).
    "llava": Wrapper(keys=("text_config",), default_text="llama", vllm="llava.py"),
    "llava_next": Wrapper(keys=("text_config",), default_text="llama", vllm="llava_next.py"),
    # qwen2_audio.py: architectures=["Qwen2ForCausalLM"], hf_config=config.text_config.
    "qwen2_audio": Wrapper(keys=("text_config",), default_text="qwen2", vllm="qwen2_audio.py",
                           text_class="Qwen2ForCausalLM"),
    # qwen3_vl_moe.py: Qwen3MoeLLMModel (qwen3_moe.py's decoder) over text_config.
    "qwen3_vl_moe": Wrapper(keys=("text_config",), default_text="qwen3_vl_moe_text",
                            vllm="qwen3_vl_moe.py", registered=False),
    # idefics3.py: LlamaModel(vllm_config.with_hf_config(config.text_config)).
    "idefics3": Wrapper(keys=("text_config",), default_text="llama", vllm="idefics3.py",
                        registered=False),
    # llava_onevision.py: text_config's own architecture (init_vllm_registered_model over
    # config.text_config); LlavaOnevisionConfig (transformers 5.19) defaults its model_type
    # to qwen2.
    "llava_onevision": Wrapper(keys=("text_config",), default_text="qwen2",
                               vllm="llava_onevision.py"),
    # glm4_1v.py: Glm4vForConditionalGeneration builds architectures=["Glm4ForCausalLM"] over
    # text_config (glm4v_text, read as glm4: TEXT_FAMILY). A flat file (GLM-4.1V-9B-Thinking
    # as sophgo/LLM-TPU ships it, saved by transformers 4.53.0dev, blind batch 14) is read from
    # its top-level keys, as Glm4vConfig builds it (flat_text).
    "glm4v": Wrapper(keys=("text_config",), default_text="glm4v_text", vllm="glm4_1v.py",
                     flat_text=True, text_class="Glm4ForCausalLM"),
    # smolvlm.py: SmolVLMForConditionalGeneration is Idefics3ForConditionalGeneration's class
    # (the same LlamaModel over text_config); SmolVLMConfig (transformers 5.19) defaults
    # text_config's model_type to llama.
    "smolvlm": Wrapper(keys=("text_config",), default_text="llama", vllm="smolvlm.py",
                       registered=False),
    # glm4_1v.py: architectures=["Glm4MoeForCausalLM"] over text_config for glm4v_moe.
    "glm4v_moe": Wrapper(keys=("text_config",), default_text="glm4v_moe_text",
                         vllm="glm4_1v.py", text_class="Glm4MoeForCausalLM"),
    # kimi_k25.py: architectures=["DeepseekV2ForCausalLM"] (MLA) over text_config; Kimi_K25Config
    # (transformers 5.19) builds text_config as DeepseekV3Config, kimi_k2 read as deepseek_v3.
    "kimi_k25": Wrapper(keys=("text_config",), default_text="deepseek_v3", vllm="kimi_k25.py",
                        text_class="DeepseekV2ForCausalLM"),
    # InternVLForConditionalGeneration (InternVL -hf): registry.py maps it to interns1.py's
    # InternS1ForConditionalGeneration, which builds text_config's own architecture
    # (init_vllm_registered_model(hf_config=config.text_config)); InternVLConfig (transformers
    # 5.19) defaults text_config's model_type to qwen2.
    "internvl": Wrapper(keys=("text_config",), default_text="qwen2", vllm="interns1.py"),
    # internvl.py (vLLM 0.32, InternVLChatModel.__init__, :589-625): init_vllm_registered_model(
    # hf_config=config.text_config), the llm_config's own architecture (transformers_utils/
    # config.py:152-154 and :746-750 alias llm_config as text_config); InternVisionModel and
    # the mlp1 projector hold no paged cache. The config class is the checkpoint's remote
    # InternVLChatConfig (configuration_internvl_chat.py, OpenGVLab/InternVL2-*): it builds
    # llm_config by llm_config["architectures"][0] (LlamaConfig, the checkpoint's
    # InternLM2Config, Phi3Config or Qwen2Config; any other raises 'Unsupported architecture'),
    # so no default text model. Later checkpoints' remote classes add others (Qwen3): their
    # code is not read, so not taken.
    "internvl_chat": Wrapper(keys=("llm_config",), default_text=None, vllm="internvl.py",
                             text_architectures={"LlamaForCausalLM": "llama",
                                                 "InternLM2ForCausalLM": "internlm2",
                                                 "Phi3ForCausalLM": "phi3",
                                                 "Qwen2ForCausalLM": "qwen2"}),
    # qwen2_5_omni_thinker.py: Qwen2_5OmniModel and Qwen2_5OmniForConditionalGeneration are
    # Qwen2_5OmniThinkerForConditionalGeneration (registry.py), which builds
    # architectures=["Qwen2ForCausalLM"] over thinker_config.text_config; its audio tower is
    # transformers' Qwen2_5OmniAudioEncoder and its vision tower Qwen2_5_VisionTransformer (no
    # paged cache); the talker and token2wav are not built. Qwen2_5OmniThinkerConfig (transformers
    # 5.19) builds text_config as Qwen2_5OmniTextConfig (qwen2_5_omni_text, read as qwen2).
    "qwen2_5_omni": Wrapper(keys=("thinker_config", "text_config"),
                            default_text="qwen2_5_omni_text", vllm="qwen2_5_omni_thinker.py",
                            text_class="Qwen2ForCausalLM"),
    # llava_next_video.py: text_config's own architecture (init_vllm_registered_model over
    # config.text_config); LlavaNextVideoConfig (transformers 5.19) defaults its model_type to
    # llama; the video pooler and CLIP tower hold no cache.
    "llava_next_video": Wrapper(keys=("text_config",), default_text="llama",
                                vllm="llava_next_video.py"),
    # granite_speech.py: text_config's own architecture (GraniteForCausalLM in the published
    # files); GraniteSpeechConfig (transformers 5.19) defaults its model_type to granite. The
    # conformer encoder and the Blip-2 Q-Former projector attend in plain torch (no paged
    # cache).
    # GraniteSpeechConfig.__post_init__ builds projector_config as CONFIG_MAPPING[its
    # model_type] (default blip_2_qformer); the 4.50-era name granite_speech_qformer of
    # ibm-granite/granite-speech-3.2-8b's file is no 5.19 config type: a KeyError, vLLM 0.32
    # does not start (blind batch 10's CPU run). GraniteSpeechPlusConfig does the same.
    "granite_speech": Wrapper(keys=("text_config",), default_text="granite",
                              vllm="granite_speech.py",
                              tower_types={"projector_config": ("blip_2_qformer",)}),
    # granite_speech_plus.py: GraniteSpeechForConditionalGeneration's class with another CTC
    # encoder (its cat_hidden_layers concatenate encoder states, no cache); the same language
    # model over text_config, GraniteSpeechPlusConfig's default model_type granite.
    "granite_speech_plus": Wrapper(keys=("text_config",), default_text="granite",
                                   vllm="granite_speech_plus.py",
                                   tower_types={"projector_config": ("blip_2_qformer",)}),
    # glm_ocr.py: GlmOcrForConditionalGeneration is Glm4vForConditionalGeneration's class
    # (glm4_1v.py: architectures=["Glm4ForCausalLM"] for model_type glm_ocr) over text_config
    # (glm_ocr_text, read as glm4: TEXT_FAMILY); its vision attention is MMEncoderAttention.
    "glm_ocr": Wrapper(keys=("text_config",), default_text="glm_ocr_text", vllm="glm_ocr.py",
                       text_class="Glm4ForCausalLM"),
    # ovis.py: Ovis builds get_text_config()'s own architecture; vLLM's OvisConfig
    # (transformers_utils/configs/ovis.py) makes llm_config the text config, built by
    # AutoConfig.for_model(llm_config["model_type"]): no default model_type (a KeyError).
    "ovis": Wrapper(keys=("llm_config",), default_text=None, vllm="ovis.py"),
    # exaone4_5.py: architectures=["Exaone4ForCausalLM"] (exaone4.py) over get_text_config();
    # Exaone4_5_Config (transformers 5.19) builds text_config as Exaone4Config (its model_type
    # exaone4_5_text is rewritten to exaone4; absent: exaone4).
    "exaone4_5": Wrapper(keys=("text_config",), default_text="exaone4", vllm="exaone4_5.py",
                         text_class="Exaone4ForCausalLM"),
    # glmasr.py: GlmAsrForConditionalGeneration builds architectures=["LlamaForCausalLM"] over
    # config.text_config (llama.py); its audio tower (GlmAsrEncoder: MMEncoderAttention, no
    # paged cache) and projector hold no KV. GlmAsrConfig (transformers 5.19,
    # models/glmasr/configuration_glmasr.py) defaults text_config's model_type to llama and lays
    # its _default_text_config_kwargs (GLM-ASR-Nano's language model) under the file's keys.
    "glmasr": Wrapper(keys=("text_config",), default_text="llama", vllm="glmasr.py",
                      text_kwargs={"vocab_size": 59264, "hidden_size": 2048,
                                   "intermediate_size": 6144, "num_hidden_layers": 28,
                                   "num_attention_heads": 16, "num_key_value_heads": 4,
                                   "max_position_embeddings": 8192, "rms_norm_eps": 1e-05},
                      text_types=("llama",), text_class="LlamaForCausalLM"),
    # hyperclovax_vision_v2.py (HCXVisionV2ForCausalLM, :404-444): init_vllm_registered_model
    # over config.text_config, its own architecture (HyperCLOVAX-SEED-Think-32B:
    # HyperCLOVAXForCausalLM, models/hyperclovax.py); the Qwen2.5-VL vision tower and the
    # linear projector hold no paged cache. The remote HCXVisionConfig (model_type vlm;
    # transformers_utils/config.py:343) builds text_config from its own model_type: no default
    # (vLLM's vendored copy of a later release builds none when it is absent). Its class builds
    # no audio tower and its loader ignores only discrete_vision_model (:381-391), so a
    # checkpoint with an audio_config (HyperCLOVAX-SEED-Omni-8B) meets weights it cannot load.
    "vlm": Wrapper(keys=("text_config",), default_text=None, vllm="hyperclovax_vision_v2.py",
                   unloaded_towers=("audio_config", "discrete_audio_config")),
    # qwen3_asr.py (Qwen3ASRForConditionalGeneration.__init__, :440-462): Qwen3ForCausalLM
    # (qwen3.py, no window) over thinker_config.text_config with architectures=["Qwen3ForCausalLM"];
    # the audio tower (qwen3_omni_moe_thinker.py Qwen3OmniMoeAudioEncoder) attends with
    # MMEncoderAttention, no paged cache. vLLM's own Qwen3ASRConfig (transformers_utils/configs/
    # qwen3_asr.py, registered for qwen3_asr in transformers_utils/config.py) builds text_config
    # as Qwen3ASRTextConfig whatever its model_type says; that class's cache defaults (32 layers,
    # hidden 4096, 32 heads, 32 KV heads, head_dim 128, no window) are Qwen3Config's, so the
    # published files' text model_type qwen3 reads it, and so does that class's own model_type
    # qwen3_asr_text (configs/qwen3_asr.py:234; a Qwen3-ASR-0.6B copy saved by transformers
    # 4.57.6, blind batch 14); no other is taken.
    "qwen3_asr": Wrapper(keys=("thinker_config", "text_config"), default_text="qwen3",
                         vllm="qwen3_asr.py", text_types=("qwen3", "qwen3_asr_text"),
                         text_class="Qwen3ForCausalLM"),
    # blip2.py (Blip2ForConditionalGeneration.__init__, :514-555): the text_config's own
    # architecture (init_vllm_registered_model(hf_config=config.text_config)), OPTForCausalLM
    # (opt.py) in every published checkpoint; the BLIP vision tower (blip.py: MMEncoderAttention),
    # the Q-Former (plain-torch attention over the image features) and the projection hold no
    # paged cache. Blip2Config (transformers 5.19) builds text_config as
    # CONFIG_MAPPING[its model_type, default opt]; a T5 text model (blip2-flan-t5) is an
    # encoder-decoder kvplan does not read, so only opt is taken.
    "blip-2": Wrapper(keys=("text_config",), default_text="opt", vllm="blip2.py",
                      text_types=("opt",)),
}

# Text sub-config model_types vLLM builds with another family's decoder, by kvplan family (and
# flat multimodal configs whose whole file is that decoder's config).
TEXT_FAMILY: dict[str, str] = {
    # qwen2_5_vl.py: Qwen2ForCausalLM (qwen2.py) over the text config.
    "qwen2_5_vl_text": "qwen2",
    # qwen2_vl.py: Qwen2ForCausalLM (qwen2.py) over the text config (Qwen2-VL saved by
    # transformers >= 4.53 nests it under text_config, model_type qwen2_vl_text).
    "qwen2_vl_text": "qwen2",
    # qwen3_vl.py: Qwen3LLMModel (qwen3.py); qwen3_vl_moe.py: Qwen3MoeLLMModel (qwen3_moe.py).
    "qwen3_vl_text": "qwen3", "qwen3_vl_moe_text": "qwen3_moe",
    # qwen3_asr.py: Qwen3ForCausalLM (qwen3.py) over Qwen3ASRTextConfig (vLLM 0.32
    # transformers_utils/configs/qwen3_asr.py:133-286, model_type qwen3_asr_text).
    "qwen3_asr_text": "qwen3",
    # glm4_1v.py: Glm4ForCausalLM (glm4.py) over glm4v's text config.
    "glm4v_text": "glm4",
    # glm4_1v.py: Glm4MoeForCausalLM (glm4_moe.py) over glm4v_moe's text config.
    "glm4v_moe_text": "glm4_moe",
    # exaone4_5.py: Exaone4ForCausalLM (exaone4.py) over the text config.
    "exaone4_5_text": "exaone4",
    # qwen2_5_omni_thinker.py: Qwen2ForCausalLM (qwen2.py) over the thinker's text config.
    "qwen2_5_omni_text": "qwen2",
    # glm4_1v.py (GlmOcrForConditionalGeneration's base): Glm4ForCausalLM (glm4.py).
    "glm_ocr_text": "glm4",
    # paddleocr_vl.py: the text config's fields copied over the top-level ones
    # (config.update(text_config.to_dict()); model_type, architectures and the tie flag kept),
    # then Ernie4_5ForCausalLM (ernie45.py) over the whole. The published file is flat
    # (transformers 5.19 PaddleOCRVLConfig pops its text keys into PaddleOCRTextConfig,
    # paddleocr_vl_text, whose cache defaults are Ernie4_5Config's: head_dim 128, 2 KV heads).
    "paddleocr_vl": "ernie4_5", "paddleocr_vl_text": "ernie4_5",
    # phi4siglip.py: Phi3ForCausalLM (phi3.py) over the whole flat config; the checkpoint's
    # remote config class (model_type phi4-siglip) is a Phi3Config subclass adding only the
    # vision fields.
    "phi4-siglip": "phi3",
}

# transformers 5.19 models/auto/modeling_auto.py MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, the entries
# of the text model_types kvplan reads whose vLLM 0.32 class builds its embeddings or head on
# every pipeline stage (kvplan.engines.vllm.stage_weights): vLLM's VllmConfig.with_hf_config
# (config/vllm.py:934-951) names a sub-config without `architectures` by this table, then
# init_vllm_registered_model builds that class (models/utils.py:624-643). Another model_type:
# no class named (its stage split is Llama's either way).
TEXT_CAUSAL_LM: dict[str, str] = {
    "bloom": "BloomForCausalLM", "cohere": "CohereForCausalLM", "cohere2": "Cohere2ForCausalLM",
    "cohere2_moe": "Cohere2MoeForCausalLM", "dbrx": "DbrxForCausalLM",
    "falcon": "FalconForCausalLM", "falcon_mamba": "FalconMambaForCausalLM",
    "gemma": "GemmaForCausalLM", "gemma2": "Gemma2ForCausalLM", "gemma3_text": "Gemma3ForCausalLM",
    "gemma4_text": "Gemma4ForCausalLM", "gpt2": "GPT2LMHeadModel", "gpt_oss": "GptOssForCausalLM",
    "gptj": "GPTJForCausalLM", "granitemoe": "GraniteMoeForCausalLM",
    "granitemoehybrid": "GraniteMoeHybridForCausalLM",
    "granitemoeshared": "GraniteMoeSharedForCausalLM", "hy_v3": "HYV3ForCausalLM",
    "jamba": "JambaForCausalLM", "lfm2": "Lfm2ForCausalLM", "lfm2_moe": "Lfm2MoeForCausalLM",
    "mamba": "MambaForCausalLM", "minicpm3": "MiniCPM3ForCausalLM",
    "mixtral": "MixtralForCausalLM", "nemotron_h": "NemotronHForCausalLM",
    "olmo_hybrid": "OlmoHybridForCausalLM", "olmoe": "OlmoeForCausalLM", "opt": "OPTForCausalLM",
    "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3_5": "Qwen3_5ForCausalLM",
    "qwen3_5_moe": "Qwen3_5MoeForCausalLM", "qwen3_5_text": "Qwen3_5ForCausalLM",
    "qwen3_5_moe_text": "Qwen3_5MoeForCausalLM", "qwen3_moe": "Qwen3MoeForCausalLM",
    "qwen3_next": "Qwen3NextForCausalLM", "stablelm": "StableLmForCausalLM",
}

# The wrapper's own fields that hold for its language model when the sub-config leaves them out.
_OUTER = ("torch_dtype", "dtype", "tie_word_embeddings", "quantization_config", "_name_or_path")
# Fields every text sub-config must state when kvplan does not hold its class's defaults.
_KV_FIELDS = ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size")
# Qwen3VLMoeTextConfig's head_dim defaults to 128, not hidden_size / num_attention_heads.
_KV_FIELDS_MORE = {"qwen3_vl_moe_text": ("head_dim",), "qwen3_vl_text": ("head_dim",),
                   "qwen3_asr_text": ("head_dim",)}
# Text classes with no head_dim read by the glm4 family: transformers 5.19's Glm4vTextConfig and
# GlmOcrTextConfig hold none, and vLLM 0.32's glm4.py builds Glm4Attention with
# head_dim=getattr(config, "head_dim", None), then `head_dim or hidden_size // total_num_heads`.
# Left out, it is hidden / heads, not the 128 kvplan's glm4 reader would take from Glm4Config
# (kvplan.sources.hf_defaults). Issue 26, blind batch 9: tiny-random/glm-4v (hidden 64, 2 heads)
# was sized at head_dim 128 where vLLM's CPU build cached 32, 4x fewer blocks.
_HEAD_DIM_HIDDEN_OVER_HEADS = ("glm4v_text", "glm_ocr_text")


def wrapper_of(config: Mapping[str, Any]) -> Wrapper | None:
    """The wrapper family of a config.json by its model_type (None: not one of `WRAPPERS`)."""
    return WRAPPERS.get(config_model_type(config))


def wrapped_text_config(config: Mapping[str, Any], wrapper: Wrapper, path: str,
                        warnings: list[str]) -> dict:
    """The language model's settings of a wrapper's config.json, as its transformers config
    class builds them: the sub-config at `wrapper.keys` (absent: the class builds a default
    one), its model_type defaulting to `wrapper.default_text`, the keys it leaves out filled from
    that text class's defaults (kvplan.sources.hf_defaults; each reported), explicit nulls kept
    as unset; the wrapper's dtype, tie flag and quantization where the sub-config leaves them
    out."""
    for tower, known in wrapper.tower_types.items():
        sub = config.get(tower)
        kind = sub.get("model_type", known[0]) if isinstance(sub, Mapping) else known[0]
        if kind not in known:
            raise SpecError(path, f"{tower}.model_type", f"{kind!r}: the "
                            f"{config_model_type(config)} config class builds {tower} as "
                            "transformers' CONFIG_MAPPING[model_type], and transformers 5.19 "
                            "(vLLM 0.32's) registers no such type (KeyError): vLLM does not load "
                            f"this file; kvplan takes {' / '.join(known)}")
    for tower in wrapper.unloaded_towers:
        if config.get(tower) is not None:
            raise SpecError(path, tower, f"vLLM models/{wrapper.vllm} builds no such tower and "
                            "its weight loader raises on that tower's weights (it skips none); "
                            "refused")
    text: Any = config
    for key in wrapper.keys:
        text = text.get(key) if isinstance(text, Mapping) else None
    where = ".".join(wrapper.keys)
    if text is None and wrapper.flat_text:
        # The class's own keys (model_type, architectures, towers) are not the text model's.
        text = {k: v for k, v in config.items()
                if k not in ("model_type", "architectures", "vision_config", *wrapper.keys)}
        warnings.append(f"{where}: absent; the {config_model_type(config)} config class builds "
                        "it from the file's top-level keys (a flat file)")
    text = dict(text) if isinstance(text, Mapping) else {}
    if wrapper.text_architectures:
        _check_text_architecture(text, wrapper, where, path, config_model_type(config))
    text_type = text.get("model_type")
    if not isinstance(text_type, str) or not text_type.strip():
        if wrapper.default_text is None:
            raise SpecError(path, f"{where}.model_type", f"missing: the "
                            f"{config_model_type(config)} config class has no default text "
                            f"model (vLLM models/{wrapper.vllm} cannot build one)")
        text_type = wrapper.default_text
    if wrapper.text_types and text_type not in wrapper.text_types:
        raise SpecError(path, f"{where}.model_type", f"{text_type!r}: vLLM models/"
                        f"{wrapper.vllm} builds {' / '.join(wrapper.text_types)} model code over "
                        "it whatever it says; kvplan reads no other text config under a "
                        f"{config_model_type(config)} wrapper")
    if wrapper.text_kwargs:
        stated = set(text)
        text = {**wrapper.text_kwargs, **text}
        given = [f"{k} {v}" for k, v in wrapper.text_kwargs.items() if k not in stated]
        if given:
            warnings.append(f"{where} of a {config_model_type(config)} wrapper leaves out "
                            f"{len(given)} field(s), taken from its config class's text defaults "
                            "as vLLM loads them: " + ", ".join(given))
    defaults = class_defaults(text_type)
    filled = [f"{k} {v}" for k, v in defaults.items() if k not in text
              and not (k in _OUTER and config.get(k) is not None)]
    if not defaults:
        # A field left to a config class whose defaults kvplan does not hold: refused, since
        # that class's default (e.g. Qwen2VLTextConfig's 8 KV heads) is not the reader's own.
        for key in _KV_FIELDS + _KV_FIELDS_MORE.get(text_type, ()):
            if key not in text:
                raise SpecError(path, f"{where}.{key}", f"missing: left to transformers' "
                                f"{text_type} config class defaults, which kvplan does not "
                                "hold; refused rather than guessed")
    merged = {k: v for k, v in {**defaults, **text}.items() if v is not None}
    for outer in _OUTER:
        if outer not in text and config.get(outer) is not None:
            merged[outer] = config[outer]
    if text_type in _HEAD_DIM_HIDDEN_OVER_HEADS and "head_dim" not in merged:
        merged["head_dim"] = merged["hidden_size"] // merged["num_attention_heads"]
        warnings.append(f"{where}.head_dim: not stated; {text_type} has no head_dim, so vLLM "
                        f"models/glm4.py takes hidden_size / num_attention_heads = "
                        f"{merged['head_dim']}")
    merged["model_type"] = text_type
    merged["_wrapper_model_type"] = config_model_type(config)
    # Stated as null: not left to the class's default by kvplan.sources.hf_fields.
    merged["_null_keys"] = tuple(k for k, v in text.items() if v is None)
    if filled:
        warnings.append(f"{where} of a {config_model_type(config)} wrapper leaves out "
                        f"{len(filled)} field(s), taken from transformers' {text_type} config "
                        "class defaults as vLLM loads them: " + ", ".join(filled))
    warnings.append(f"{where} of a {config_model_type(config)} wrapper read as the language "
                    f"model (vLLM models/{wrapper.vllm})")
    return merged


def _check_text_architecture(text: Mapping[str, Any], wrapper: Wrapper, where: str, path: str,
                             outer: str) -> None:
    """Refuse a text sub-config the wrapper's config class does not build as its model_type
    says (`Wrapper.text_architectures`: the class is picked by architectures[0])."""
    names = text.get("architectures")
    name = names[0] if isinstance(names, list) and names else None
    known = wrapper.text_architectures
    if name not in known:
        raise SpecError(path, f"{where}.architectures", f"{name!r}: the {outer} config class "
                        f"builds {where} by its first architecture, and kvplan reads "
                        f"{' / '.join(known)} only (vLLM models/{wrapper.vllm})")
    stated = text.get("model_type")
    if stated is not None and stated != known[name]:
        raise SpecError(path, f"{where}.model_type", f"{stated!r}: the {outer} config class "
                        f"builds {name}'s {known[name]} config over it, which kvplan does not "
                        "read as this model_type; refused rather than guessed")


def dtype_fields(config: Mapping[str, Any], data: Mapping[str, Any]) -> dict:
    """The spec keys beside torch_dtype (`data`'s, the language model's) that say where it came
    from: ``torch_dtype_stated: false`` where config.json states no torch_dtype / dtype (read as
    transformers' float32 default), and ``wrapper_torch_dtype`` where a multimodal wrapper
    (`config`; `data` unwrapped from it) states its own dtype and its text part another.
    transformers 5.19 keeps both: LlavaOnevisionConfig of llava-onevision-qwen2-0.5b-ov loads
    with dtype float16 and get_text_config().dtype bfloat16. vLLM 0.32 reads the outer one first
    (transformers_utils/model_arch_config_convertor.py get_torch_dtype: ``hf_config.dtype``,
    then ``hf_config.get_text_config().dtype``), SGLang the text config's
    (kvplan.engines.sglang.kv_dtype)."""
    out: dict[str, Any] = {}
    inner = next((data[k] for k in ("torch_dtype", "dtype") if data.get(k) is not None), None)
    if inner is None:
        out["torch_dtype_stated"] = False
    if "_wrapper_model_type" in data:
        outer = next((config[k] for k in ("torch_dtype", "dtype")
                      if config.get(k) is not None), None)
        if isinstance(outer, str) and outer in WEIGHT_DTYPE_ALIASES and (
                not isinstance(inner, str)
                or WEIGHT_DTYPE_ALIASES.get(inner) != WEIGHT_DTYPE_ALIASES[outer]):
            out["wrapper_torch_dtype"] = outer
    return out


def text_class_fields(config: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """ModelSpec.text_architectures: the class a multimodal wrapper builds as its language model
    (`data`: the sub-config read by `wrapped_text_config` or hf_config.unwrap_text_config), as
    vLLM names it: the wrapper's own choice (Wrapper.text_class), else the sub-config's
    `architectures`, else transformers' causal-LM class of its model_type (TEXT_CAUSAL_LM).
    Empty: not a wrapper, a wrapper that builds its decoder from its own code, or no name."""
    if "_wrapper_model_type" not in data:
        return {}
    wrapper = wrapper_of(config)
    if wrapper is not None and not wrapper.registered:
        return {}
    if wrapper is not None and wrapper.text_class is not None:
        return {"text_architectures": [wrapper.text_class]}
    names = data.get("architectures")
    if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
        return {"text_architectures": list(names)}
    stated = TEXT_CAUSAL_LM.get(str(data.get("model_type")))
    return {"text_architectures": [stated]} if stated else {}


_TOWERS = ("vision_config", "audio_config", "audio_tower_config", "vision_tower_config",
           "perceiver_config", "img_processor", "encoder_config", "projector_config",
           "visual_tokenizer_config", "qformer_config")


def untouched_towers(config: Mapping[str, Any]) -> list[str]:
    """The sub-configs of a wrapper's towers (vision, audio, ...) present in config.json, at the
    top or beside the language model (``thinker_config.audio_config``)."""
    towers = [k for k in _TOWERS if isinstance(config.get(k), Mapping)]
    wrapper = wrapper_of(config)
    if wrapper is not None and len(wrapper.keys) > 1:
        parent: Any = config
        for key in wrapper.keys[:-1]:
            parent = parent.get(key) if isinstance(parent, Mapping) else None
        if isinstance(parent, Mapping):
            where = ".".join(wrapper.keys[:-1])
            towers += [f"{where}.{k}" for k in _TOWERS if isinstance(parent.get(k), Mapping)]
    return towers


# The values of the tower assumptions below, as kvplan.engines.vllm.towers finds them again.
PROFILE_NOT_RESERVED = "encoder profile not in the reserve"
TOWER_NOT_COUNTED = "not counted in the weights"


def tower_assumption(config: Mapping[str, Any], *, weighed: bool = False,
                     counted: bool = False) -> tuple[str, str, str] | None:
    """(field, value, why) of the weights kvplan leaves out for a wrapper's towers, or None;
    `weighed`: the vision tower's weights are counted, its encoder profile is not; `counted`:
    every tower's weights are counted (Gemma-4's, kvplan.weights.gemma4_towers), their encoder
    profile is not."""
    if weighed:
        return unprofiled_tower_assumption()
    towers = untouched_towers(config)
    if not towers:
        return None
    if counted:
        return (", ".join(towers), PROFILE_NOT_RESERVED,
                "the towers' weights are counted, but vLLM runs each encoder on its largest "
                "dummy items before sizing the KV cache; that peak is not modelled, so a GPU "
                "budget is high by it unless vLLM starts with --limit-mm-per-prompt 0 for "
                "their modalities or --skip-mm-profiling")
    # Phi-3-V builds a second token embedding (vocabulary x hidden) beside its image tower,
    # under the same _mark_tower_model("image") (vLLM 0.32 models/phi3v.py:561-572): left out
    # with the tower, and not built either with --limit-mm-per-prompt image 0.
    extra = (", and the second token embedding Phi-3-V builds with them," if
             config_model_type(config) == "phi3_v" else "")
    return (", ".join(towers), TOWER_NOT_COUNTED,
            "the wrapper's vision / audio tower and projector hold no KV cache; their weights"
            f"{extra} are left out of the weight count (a GPU budget is high by their size)")


def unprofiled_tower_assumption() -> tuple[str, str, str]:
    """(field, value, why) for a tower whose weights are counted but whose encoder-profile peak
    (kvplan.engines.vllm.mm) is not modelled: the reserve lacks it."""
    return ("vision_config", PROFILE_NOT_RESERVED,
            "vLLM runs the vision encoder on its largest dummy items before sizing the KV cache; "
            "that peak is not modelled for this tower, so a GPU budget is high by it unless vLLM "
            "starts with --limit-mm-per-prompt image=0,video=0 or --skip-mm-profiling")
