"""Whether SGLang needs --trust-remote-code to build a checkpoint's *config* class.

SGLang 0.5.9's get_config (srt/utils/hf_transformers_utils.py) calls
`AutoConfig.from_pretrained(model, trust_remote_code=server_args.trust_remote_code)` after
registering each class of its `_CONFIG_REGISTRY` (srt/configs/) into AutoConfig: transformers'
rule (kvplan.engines.config_class) with SGLang's classes and the transformers SGLang pins
(4.57.1: older than vLLM 0.32's 5.19, without minicpm3 for one). The tables are
config_types.json, dumped by tests/benches/sglang_config_types_dump.py from the sglang 0.5.9 and
transformers 4.57.1 wheels; for other SGLang versions the same tables are taken.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from kvplan.engines.config_class import remote_config_reason

_HERE = Path(__file__).parent


@cache
def config_types() -> dict[str, Any]:
    """config_types.json: {"sglang_version", "transformers_version", "source",
    "sglang_config_types", "transformers_config_types"}."""
    return json.loads((_HERE / "config_types.json").read_text(encoding="utf-8"))


@cache
def _known() -> frozenset[str]:
    data = config_types()
    return frozenset(data["sglang_config_types"]) | frozenset(data["transformers_config_types"])


def sglang_remote_config_reason(remote_config: str | None,
                                model_type: str | None) -> str | None:
    """Why `sglang.launch_server` needs --trust-remote-code for the config class (auto_map's
    AutoConfig `remote_config`; `model_type` as config.json states it, None: none)."""
    data = config_types()
    reason = remote_config_reason(
        remote_config, model_type, _known(),
        f"transformers {data['transformers_version']}'s CONFIG_MAPPING nor SGLang "
        f"{data['sglang_version']}'s _CONFIG_REGISTRY")
    return reason and reason + " (srt/utils/hf_transformers_utils.py get_config)"
