"""transformers' AutoConfig rule both vLLM and SGLang build a checkpoint's config class by.

`AutoConfig.from_pretrained(model, trust_remote_code=False)` (transformers 4.57 and 5.19,
models/auto/configuration_auto.py): `has_local_code` is config.json's model_type in
CONFIG_MAPPING (transformers' own classes and those the engine registered); `has_remote_code` is
auto_map naming an AutoConfig. With remote code and no local code,
dynamic_module_utils.py resolve_trust_remote_code raises ValueError ("... contains custom code
which must be executed to correctly load the model ... Please pass the argument
`trust_remote_code=True` to allow custom code to be run."); a config without model_type has no
local code. Each engine says which model_types it registers (kvplan.engines.<engine>.config_class)
and tells its serve command to trust remote code with the reason this returns.
"""

from __future__ import annotations

from collections.abc import Collection


def remote_config_reason(remote_config: str | None, model_type: str | None,
                         known: Collection[str], where: str) -> str | None:
    """Why `AutoConfig.from_pretrained` needs trust_remote_code for a config.json whose auto_map
    names the AutoConfig class `remote_config` (None: none) and whose model_type is `model_type`
    as stated (None: none), where `known` are the model_types with a class (`where` names those
    tables); None where it does not."""
    if remote_config is None or (model_type is not None and model_type in known):
        return None
    what = ("config.json states no model_type" if model_type is None else
            f"model_type {model_type!r} is in neither {where}")
    return (f"--trust-remote-code: {what}, so transformers' AutoConfig builds the config only "
            f"from auto_map's AutoConfig {remote_config}, the checkpoint's own code")
