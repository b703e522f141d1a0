"""The vLLM oracle's stand-in for the remote config classes (`configuration_*.py` of a Hub repo,
loaded with `trust_remote_code`) of families that neither transformers nor vLLM 0.32 ships a
config class for: registers each model_type below with transformers' AutoConfig so that vLLM's
CPU build can load such a config.json. Put on the oracle's PYTHONPATH (`--env PYTHONPATH=...`).

A stand-in only turns config.json's fields into attributes, as the remote class does, plus the
aliases the remote classes define (ExaoneConfig: num_layers -> num_hidden_layers), and
`rope_parameters` from rope_theta / rope_scaling as transformers 5 expects; it sizes nothing.
Nemotron-NAS (DeciLMConfig): each block_configs entry becomes attributes
(block.attention.no_op, .n_heads_in_group, block.ffn.ffn_mult, ...), what vLLM 0.32
models/nemotron_nas.py reads. MiMo and Phi-4-reasoning-vision, whose remote classes subclass a
transformers class, subclass it here too."""

from types import SimpleNamespace

_STANDARD = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
             "num_key_value_heads", "intermediate_size", "hidden_act", "max_position_embeddings",
             "rms_norm_eps", "rope_theta", "rope_scaling", "attention_bias", "mlp_bias",
             "head_dim")
_ALIASES = {"exaone": {"num_layers": "num_hidden_layers"},
            # Telechat2Config (TeleChat2's configuration_telechat2.py): GPT-2-style names.
            "telechat": {"n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
                         "ffn_hidden_size": "intermediate_size",
                         "layer_norm_epsilon": "rms_norm_eps"}}
# Remote-class defaults for fields a published config.json leaves out and vLLM reads
# (MiniCPMConfig: tie_word_embeddings=True; models/minicpm.py reads config.tie_word_embeddings).
# PanguEmbeddedConfig (configuration_openpangu_dense.py): bias=True (models/openpangu.py:853-858
# reads it for the q/k/v and o_proj biases).
# BailingMoeConfig (inclusionAI/Ling ceb3476 models/configuration_bailing_moe.py:36-37):
# num_experts=16, num_shared_experts=0; Ling-plus's MindIE configs name them n_routed_experts /
# n_shared_experts, which the class keeps as plain attributes, and vLLM 0.32
# models/bailing_moe.py:229-234 reads num_experts / num_shared_experts (blind batch 19).
_DEFAULTS = {"minicpm": {"tie_word_embeddings": True}, "PanguEmbedded": {"bias": True},
             "bailing_moe": {"num_experts": 16, "num_shared_experts": 0}}
# Standard fields a remote class never defines, left unset when config.json leaves them out
# (Phi3VConfig has no head_dim: transformers' longrope validation takes hidden / heads only when
# the attribute is absent, not when it is None).
# Step1Config (Step-Audio's configuration_step1.py) defines neither num_key_value_heads nor
# head_dim: vLLM's get_total_num_kv_heads takes the first of its names present, so a None
# num_key_value_heads would hide num_attention_groups.
_UNSET = {"phi3_v": ("head_dim",), "step1": ("num_key_value_heads", "head_dim")}


def _register() -> None:
    from transformers import AutoConfig, PretrainedConfig

    class _Block(SimpleNamespace):
        def to_dict(self):
            return {k: (v.to_dict() if isinstance(v, _Block) else v)
                    for k, v in vars(self).items()}

    def block(entry):
        return _Block(**{k: _Block(**v) if isinstance(v, dict) else v for k, v in entry.items()})

    def config_class(model_type: str):
        aliases = _ALIASES.get(model_type, {})

        class RemoteConfig(PretrainedConfig):
            def __init__(self, block_configs=None, **kwargs):
                for key, value in _DEFAULTS.get(model_type, {}).items():
                    kwargs.setdefault(key, value)
                for old, new in aliases.items():
                    if old in kwargs and new not in kwargs:
                        kwargs[new] = kwargs[old]
                for key in _STANDARD:
                    if key in _UNSET.get(model_type, ()) and key not in kwargs:
                        continue
                    setattr(self, key, kwargs.pop(key, None))
                for key in list(kwargs):
                    if key not in ("bos_token_id", "eos_token_id", "pad_token_id",
                                   "tie_word_embeddings", "torch_dtype", "dtype",
                                   "architectures", "transformers_version", "auto_map",
                                   "_name_or_path", "use_cache"):
                        setattr(self, key, kwargs.pop(key))
                scaling = dict(self.rope_scaling or {})
                rope_type = scaling.pop("rope_type", None) or scaling.pop("type", None)
                self.rope_parameters = dict(scaling, rope_theta=self.rope_theta or 10000.0,
                                            rope_type=rope_type or "default")
                super().__init__(**kwargs)
                if block_configs is not None:
                    self.block_configs = [block(b) if isinstance(b, dict) else b
                                          for b in block_configs]

            def to_dict(self):
                out = super().to_dict()
                if hasattr(self, "block_configs"):
                    out["block_configs"] = [b.to_dict() for b in self.block_configs]
                return out

        RemoteConfig.model_type = model_type
        RemoteConfig.__name__ = f"RemoteConfig_{model_type.replace('-', '_')}"
        return RemoteConfig

    # "mimo_v2": MiMo-V2.5-Pro's remote configuration_mimo_v2.MiMoV2Config (transformers 5.19
    # ships only mimo_v2_flash); vLLM 0.32 models/mimo_v2.py reads its fields as attributes.
    # "internlm": early InternLM2 repos (internlm/internlm2-math-plus-1_8b) name their remote
    # class configuration_internlm.InternLMConfig, model_type internlm, under
    # InternLM2ForCausalLM.
    for model_type in ("nemotron-nas", "internlm2", "internlm", "exaone", "orion", "minicpm",
                       "internlm3", "deepseek", "bailing_moe", "phi3_v", "solar", "step1",
                       "telechat", "iquestcoder", "TeleFLM", "mimo_v2", "PanguEmbedded"):
        AutoConfig.register(model_type, config_class(model_type))

    # MiMo (XiaomiMiMo/MiMo-7B-*): its remote configuration_mimo.py subclasses Qwen2Config
    # (adding num_nextn_predict_layers), so Qwen2Config's own rules hold: sliding_window is
    # None unless use_sliding_window.
    from transformers import Qwen2Config

    class MiMoConfig(Qwen2Config):
        model_type = "mimo"

    AutoConfig.register("mimo", MiMoConfig)

    # Phi-4-reasoning-vision (microsoft/Phi-4-reasoning-vision-15B): its remote config class
    # (Phi4VisionR, model_type phi4-siglip) subclasses Phi3Config, adding only the vision
    # fields, kept as given (vision_config stays a dict, as vLLM's phi4siglip.py expects).
    from transformers import Phi3Config

    class Phi4SiglipConfig(Phi3Config):
        model_type = "phi4-siglip"

        def __init__(self, mm_vision_tower=None, mm_projector_type="mlp2x_gelu",
                     mm_hidden_size=1152, min_num_patches=256, max_num_patches=3600,
                     vision_config=None, **kwargs):
            super().__init__(**kwargs)
            self.mm_vision_tower = mm_vision_tower
            self.mm_projector_type = mm_projector_type
            self.mm_hidden_size = mm_hidden_size
            self.min_num_patches = min_num_patches
            self.max_num_patches = max_num_patches
            self.vision_config = vision_config

    AutoConfig.register("phi4-siglip", Phi4SiglipConfig)

    # Nanbeige (Nanbeige/Nanbeige2-*): vLLM 0.32 serves NanbeigeForCausalLM with its
    # Transformers backend (AutoModel.from_config), whose KV cache takes its heads and head size
    # from the config alone (models/transformers/base.py: model_config.get_num_kv_heads,
    # arch_config.head_size). The remote configuration_nanbeige.py / modeling_nanbeige.py are
    # Llama's, so LlamaConfig / LlamaModel stand in for them; they size nothing here.
    from transformers import AutoModel, LlamaConfig, LlamaModel

    class NanbeigeConfig(LlamaConfig):
        model_type = "nanbeige"

    class NanbeigeModel(LlamaModel):
        config_class = NanbeigeConfig

    AutoConfig.register("nanbeige", NanbeigeConfig)
    AutoModel.register(NanbeigeConfig, NanbeigeModel)

    # PLaMo-3 (pfnet/plamo-3-nict-*): the remote configuration_plamo3.py (its later published
    # version, as read in public copies) keeps window_size and sliding_window_pattern and
    # derives, as properties, what vLLM 0.32 models/plamo3.py reads: interleaved_sliding_window
    # (None where (i + 1) % sliding_window_pattern == 0, else window_size), layer_types from it,
    # sliding_window = window_size, and rope_parameters per layer type. This stand-in derives
    # the same; it sizes nothing.
    class Plamo3Config(PretrainedConfig):
        model_type = "plamo3"

        def __init__(self, hidden_size=4096, num_hidden_layers=32, rms_norm_eps=1e-6,
                     tie_word_embeddings=True, num_attention_heads=32, num_key_value_heads=4,
                     head_dim=128, max_position_embeddings=2048, window_size=128,
                     sliding_window_pattern=8, rope_theta=1_000_000, rope_local_theta=10_000,
                     intermediate_size=13312, vocab_size=32000, **kwargs):
            kwargs.pop("sliding_window", None)
            self.hidden_size, self.num_hidden_layers = hidden_size, num_hidden_layers
            self.rms_norm_eps, self.num_attention_heads = rms_norm_eps, num_attention_heads
            self.num_key_value_heads, self.head_dim = num_key_value_heads, head_dim
            self.max_position_embeddings, self.window_size = max_position_embeddings, window_size
            self.sliding_window_pattern = sliding_window_pattern
            self.rope_theta, self.rope_local_theta = rope_theta, rope_local_theta
            self.intermediate_size, self.vocab_size = intermediate_size, vocab_size
            super().__init__(tie_word_embeddings=tie_word_embeddings, **kwargs)

        @property
        def sliding_window(self):
            return self.window_size

        @property
        def interleaved_sliding_window(self):
            return [None if (i + 1) % self.sliding_window_pattern == 0 else self.window_size
                    for i in range(self.num_hidden_layers)]

        @property
        def layer_types(self):
            return ["full_attention" if w is None else "sliding_attention"
                    for w in self.interleaved_sliding_window]

        @property
        def rope_parameters(self):
            every = {"full_attention": {"rope_theta": self.rope_theta, "rope_type": "default"},
                     "sliding_attention": {"rope_theta": self.rope_local_theta,
                                           "rope_type": "default"}}
            return {kind: every[kind] for kind in set(self.layer_types)}

        @rope_parameters.setter
        def rope_parameters(self, value):
            pass

    AutoConfig.register("plamo3", Plamo3Config)

    # HyperCLOVAX-SEED-Think-32B (HCXVisionV2ForCausalLM): the remote configuration_vlm.py's
    # HCXVisionConfig (model_type vlm) builds text_config from its own model_type
    # (hyperclovax: transformers 5.19's HyperCLOVAXConfig) and vision_config as the
    # qwen2_5_vl_visual alias vLLM 0.32 registers (transformers_utils/config.py:343); the rest
    # are kept as attributes. vLLM's hyperclovax_vision_v2.py reads text_config and
    # vision_config; this stand-in sizes nothing.
    from transformers import CONFIG_MAPPING, Qwen2_5_VLVisionConfig

    class HCXVisionConfig(PretrainedConfig):
        model_type = "vlm"

        def __init__(self, text_config=None, vision_config=None, **kwargs):
            if isinstance(text_config, dict):
                text_config = CONFIG_MAPPING[text_config["model_type"]](**text_config)
            if isinstance(vision_config, dict):
                vision_config = Qwen2_5_VLVisionConfig(**vision_config)
            self.text_config, self.vision_config = text_config, vision_config
            super().__init__(**kwargs)

    AutoConfig.register("vlm", HCXVisionConfig)

    # InternVL2 (InternVLChatModel): the remote configuration_internvl_chat.py's
    # InternVLChatConfig (model_type internvl_chat) builds llm_config by its architectures[0]
    # (LlamaConfig, the checkpoint's InternLM2Config -- the internlm2 stand-in above --,
    # Phi3Config or Qwen2Config; another raises) and vision_config as InternVisionConfig, whose
    # fields vLLM 0.32's intern_vit.py reads as attributes; the rest are kept as attributes,
    # tie_word_embeddings forced False as the remote class does. It sizes nothing.
    from transformers import LlamaConfig, Phi3Config, Qwen2Config

    class InternVisionConfig(PretrainedConfig):
        model_type = "intern_vit_6b"

    class InternVLChatConfig(PretrainedConfig):
        model_type = "internvl_chat"

        def __init__(self, vision_config=None, llm_config=None, **kwargs):
            builders = {"LlamaForCausalLM": LlamaConfig, "Phi3ForCausalLM": Phi3Config,
                        "Qwen2ForCausalLM": Qwen2Config,
                        "InternLM2ForCausalLM": CONFIG_MAPPING["internlm2"]}
            if isinstance(llm_config, dict):
                scaling = llm_config.get("rope_scaling")
                if isinstance(scaling, dict) and "original_max_position_embeddings" in llm_config:
                    # transformers 5.19's longrope validation wants it in the rope parameters
                    # (the checkpoint's own remote Phi3Config keeps it at the top).
                    llm_config = dict(llm_config, rope_scaling=dict(
                        scaling, original_max_position_embeddings=llm_config[
                            "original_max_position_embeddings"]))
                llm_config = builders[llm_config["architectures"][0]](**llm_config)
            if isinstance(vision_config, dict):
                vision_config = InternVisionConfig(**vision_config)
            self.llm_config, self.vision_config = llm_config, vision_config
            kwargs["tie_word_embeddings"] = False
            super().__init__(**kwargs)
            if llm_config is not None:
                self.hidden_size = llm_config.hidden_size
                llm_config.tie_word_embeddings = False

    AutoConfig.register("internvl_chat", InternVLChatConfig)


try:
    _register()
except Exception:  # noqa: BLE001 - outside the vLLM venv: nothing to register
    pass
