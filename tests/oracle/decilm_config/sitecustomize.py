"""The vLLM oracle's stand-in for Nemotron-NAS's remote config class (configuration_decilm.py,
which neither transformers nor vLLM 0.32 ships): registers model_type "nemotron-nas" with
transformers' AutoConfig, as `trust_remote_code` would, so that vLLM's CPU build can load a
DeciLMForCausalLM config.json. Put on the oracle's PYTHONPATH (`--env PYTHONPATH=...`); it only
turns each block_configs entry into attributes (block.attention.no_op, .n_heads_in_group,
block.ffn.ffn_mult, ...), which is what vLLM 0.32 models/nemotron_nas.py reads."""

from types import SimpleNamespace


def _register() -> None:
    from transformers import AutoConfig, PretrainedConfig

    class _Block(SimpleNamespace):
        def to_dict(self):
            return {k: (v.to_dict() if isinstance(v, _Block) else v)
                    for k, v in vars(self).items()}

    def block(entry):
        return _Block(**{k: _Block(**v) if isinstance(v, dict) else v for k, v in entry.items()})

    class DeciLMConfig(PretrainedConfig):
        model_type = "nemotron-nas"

        def __init__(self, block_configs=None, **kwargs):
            fields = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                      "num_key_value_heads", "intermediate_size", "hidden_act",
                      "max_position_embeddings", "rms_norm_eps", "rope_theta", "rope_scaling",
                      "attention_bias", "mlp_bias", "head_dim")
            for key in fields:
                setattr(self, key, kwargs.pop(key, None))
            self.rope_parameters = dict(self.rope_scaling or {}, rope_theta=self.rope_theta)
            self.rope_parameters.setdefault("rope_type", "default")
            super().__init__(**kwargs)
            self.block_configs = [block(b) if isinstance(b, dict) else b
                                  for b in (block_configs or [])]

        def to_dict(self):
            out = super().to_dict()
            out["block_configs"] = [b.to_dict() for b in self.block_configs]
            return out

    AutoConfig.register("nemotron-nas", DeciLMConfig)


try:
    _register()
except Exception:  # noqa: BLE001 - outside the vLLM venv: nothing to register
    pass
